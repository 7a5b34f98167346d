//! The seam between the engines and the text format: JSON's structural bytes, named once, and
//! [`Framing`], the bytes around and between rows (`[`, `,`, `]` or line ends).
//!
//! The general walk (`encoder`), the fast path (`rows`, with its pre-built row pieces) and the
//! plan's pre-built member keys take every object, list, member, key and `null` byte from here;
//! the text of values is `value`'s, and strings are quoted and escaped by the `sink` and
//! `escape`. It uses the options only.

use super::options::JsonFormat;

/// Opens an object (a row of a batch, a struct value, a map with text keys, a map entry).
pub(crate) const OBJECT_OPEN: u8 = b'{';
/// Closes an object.
pub(crate) const OBJECT_CLOSE: u8 = b'}';
/// Opens a list (any list type, a map with other keys).
pub(crate) const LIST_OPEN: u8 = b'[';
/// Closes a list.
pub(crate) const LIST_CLOSE: u8 = b']';
/// Between the members of an object and the elements of a list.
pub(crate) const SEPARATOR: u8 = b',';
/// Between a member's key and its value.
pub(crate) const KEY_VALUE: u8 = b':';
/// Opens a member's key (a name, or a map's text key written as a text value is).
pub(crate) const KEY_OPEN: u8 = b'"';
/// Closes a member's name and separates it from the value.
pub(crate) const KEY_CLOSE: &[u8; 2] = b"\":";
/// A null value.
pub(crate) const NULL: &[u8; 4] = b"null";

/// The bytes around and between rows.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Framing {
    pub(crate) open: &'static [u8],
    /// Written between rows (`,` in an array).
    pub(crate) separator: Option<u8>,
    /// Written after each row (`\n` in lines).
    pub(crate) row_end: Option<u8>,
    pub(crate) close: &'static [u8],
    /// No row written yet (no separator before the next).
    pub(crate) first_row: bool,
}

impl Framing {
    /// A whole document: `[` rows `]`, or lines.
    pub(crate) fn document(format: JsonFormat) -> Self {
        let array = format == JsonFormat::JsonArray;
        Framing {
            close: if array { &[LIST_CLOSE] } else { b"" },
            ..Self::continuing(format, false, 1)
        }
    }

    /// Rows continuing a document that a writer has (`started`) or has not opened yet; the
    /// writer closes it.
    pub(crate) fn continuing(format: JsonFormat, started: bool, rows: usize) -> Self {
        match format {
            JsonFormat::JsonArray => Framing {
                open: if started || rows == 0 {
                    b""
                } else {
                    &[LIST_OPEN]
                },
                separator: Some(SEPARATOR),
                row_end: None,
                close: b"",
                first_row: !started,
            },
            _ => Framing {
                open: b"",
                separator: None,
                row_end: Some(b'\n'),
                close: b"",
                first_row: true,
            },
        }
    }
}
