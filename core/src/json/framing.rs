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

/// Bytes of a pre-built row piece.
pub(crate) const PIECE: usize = 32;

/// A row piece: the bytes (padded to [`PIECE`]) and how many count.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Piece {
    pub(crate) bytes: [u8; PIECE],
    pub(crate) len: usize,
}

impl Piece {
    /// The piece of `parts` one after another, if they fit.
    fn new(parts: &[&[u8]]) -> Option<Self> {
        let (mut bytes, mut len) = ([0; PIECE], 0);
        for part in parts {
            bytes.get_mut(len..len + part.len())?.copy_from_slice(part);
            len += part.len();
        }
        Some(Piece { bytes, len })
    }
}

/// The bytes before and after a row, pre-built for the fast path's row loops.
#[derive(Debug, Clone, Copy)]
pub(crate) struct RowPieces {
    /// Before a row after another: the separator, then `{` and the key of its one member.
    pub(crate) open: Piece,
    /// Before the first row: [`RowPieces::open`] without the separator.
    pub(crate) open_first: Piece,
    /// After a row: `}` and the line end.
    pub(crate) close: Piece,
    /// A whole null row after another: `,{}`, `,{"a":null}` or `,null`, and the line end.
    pub(crate) null: Piece,
}

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

    /// The pieces of rows that are objects (`object`), `key` the pre-built key of their one
    /// member (empty for several), or values; a null object row is `{}` when nulls are omitted.
    /// `None` if a piece is longer than [`PIECE`].
    pub(crate) fn pieces(&self, object: bool, key: &[u8], omit_nulls: bool) -> Option<RowPieces> {
        let separator = self.separator.as_slice();
        let row_end = self.row_end.as_slice();
        let (open, close): (&[u8], &[u8]) = match object {
            true => (&[OBJECT_OPEN], &[OBJECT_CLOSE]),
            false => (b"", b""),
        };
        let null = match (object, omit_nulls) {
            (false, _) => Piece::new(&[separator, NULL, row_end])?,
            (true, true) => Piece::new(&[separator, open, close, row_end])?,
            (true, false) => Piece::new(&[separator, open, key, NULL, close, row_end])?,
        };
        Some(RowPieces {
            open: Piece::new(&[separator, open, key])?,
            open_first: Piece::new(&[open, key])?,
            close: Piece::new(&[close, row_end])?,
            null,
        })
    }
}
