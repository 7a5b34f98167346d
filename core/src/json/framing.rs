//! [`Framing`]: the bytes around and between rows (`[`, `,`, `]` or line ends).

use super::options::JsonFormat;

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
            close: if array { b"]" } else { b"" },
            ..Self::continuing(format, false, 1)
        }
    }

    /// Rows continuing a document that a writer has (`started`) or has not opened yet; the
    /// writer closes it.
    pub(crate) fn continuing(format: JsonFormat, started: bool, rows: usize) -> Self {
        match format {
            JsonFormat::JsonArray => Framing {
                open: if started || rows == 0 { b"" } else { b"[" },
                separator: Some(b','),
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
