//! The seam between the engines and the text format: [`Syntax`], the structural bytes of a
//! format with JSON's shape ([`Compact`] is JSON's), and [`Framing`], the bytes around and
//! between rows (`[`, `,`, `]` or line ends).
//!
//! The general walk (`encoder`), the fast path (`rows`, with its pre-built row pieces) and the
//! plan's pre-built member keys take every object, list, member and key byte from the
//! encoder's `Syntax` (a type parameter: each syntax gets its own compiled engine, and JSON's
//! tokens are constants in it); the text of values is `value`'s, and strings are quoted and
//! escaped by the `sink` and `escape`. It uses the options only.

use super::options::JsonFormat;

/// The structure of a text format: the bytes that open and close objects and lists and that
/// separate members, elements, keys and values, each JSON's unless the format says otherwise
/// ([`Compact`] is JSON's). Another format with JSON's shape (objects of named members, lists)
/// implements it beside JSON and gets the whole engine, its fast path included, by naming it in
/// the encoder's type (`Encoder<'_, DEPTH, PLAN, MyFormat>`, built by an
/// [`EncoderBuilder`](super::EncoderBuilder)).
///
/// Values are written as JSON writes them (numbers, `true`, `null`, quoted and escaped text,
/// dates), and so are member names (quoted, escaped). Each token is at most [`TOKEN`] bytes and
/// [`Syntax::KEY_CLOSE`] is `"` followed by [`Syntax::KEY_VALUE`]; an encoder of a syntax that
/// breaks either fails to compile.
///
/// ```
/// use quiver::array::{ArrayView, RecordBatch};
/// use quiver::json::{Encoder, EncoderBuilder, EncoderOptions, JsonFormat, Syntax, DEFAULT_DEPTH};
///
/// /// JSON as Python's `json.dumps` writes it by default: a space after `,` and `:`.
/// struct Spaced;
/// impl Syntax for Spaced {
///     const SEPARATOR: &'static [u8] = b", ";
///     const KEY_CLOSE: &'static [u8] = b"\": ";
///     const KEY_VALUE: &'static [u8] = b": ";
/// }
///
/// let batch = RecordBatch::from_columns([("id", ArrayView::from_values([1i32, 2])?)])?;
/// let builder = EncoderBuilder::new(JsonFormat::JsonArray, EncoderOptions::default());
/// let mut encoder: Encoder<'_, DEFAULT_DEPTH, 128, Spaced> = builder.batch(&batch)?;
/// let mut out = Vec::new();
/// encoder.append_to(&mut out);
/// assert_eq!(out, br#"[{"id": 1}, {"id": 2}]"#);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub trait Syntax {
    /// Opens an object (a row of a batch, a struct value, a map with text keys, a map entry).
    const OBJECT_OPEN: &'static [u8] = b"{";
    /// Closes an object.
    const OBJECT_CLOSE: &'static [u8] = b"}";
    /// Opens a list (any list type, a map with other keys, a document of rows as one array).
    const LIST_OPEN: &'static [u8] = b"[";
    /// Closes a list.
    const LIST_CLOSE: &'static [u8] = b"]";
    /// Between the members of an object, the elements of a list and the rows of an array.
    const SEPARATOR: &'static [u8] = b",";
    /// Between a key (a member's name, a map's text key) and its value.
    const KEY_VALUE: &'static [u8] = b":";
    /// The end of a member's name up to its value: the closing `"`, then [`Syntax::KEY_VALUE`].
    const KEY_CLOSE: &'static [u8] = b"\":";
}

/// JSON with no whitespace: `{"a":1,"b":[1,2]}`.
#[derive(Debug, Clone, Copy, Default)]
pub struct Compact;

impl Syntax for Compact {}

/// The most bytes of one [`Syntax`] token.
pub const TOKEN: usize = 4;

/// `token` padded with zeros to [`TOKEN`] bytes, for one fixed-size copy of which the token's
/// length counts.
pub(crate) const fn padded(token: &[u8]) -> [u8; TOKEN] {
    match *token {
        [a] => [a, 0, 0, 0],
        [a, b] => [a, b, 0, 0],
        [a, b, c] => [a, b, c, 0],
        [a, b, c, d] => [a, b, c, d],
        _ => [0; TOKEN],
    }
}

/// Opens a member's name (a JSON string's quote).
pub(crate) const KEY_OPEN: u8 = b'"';

/// The checks of a [`Syntax`], evaluated where an encoder of it is built: a syntax that breaks
/// them fails to compile.
pub(crate) struct Checked<F>(core::marker::PhantomData<F>);

impl<F: Syntax> Checked<F> {
    pub(crate) const TOKENS: () = {
        let mut tokens: &[&[u8]] = &[
            F::OBJECT_OPEN,
            F::OBJECT_CLOSE,
            F::LIST_OPEN,
            F::LIST_CLOSE,
            F::SEPARATOR,
            F::KEY_VALUE,
            F::KEY_CLOSE,
        ];
        while let Some((token, rest)) = tokens.split_first() {
            assert!(
                token.len() <= TOKEN,
                "a Syntax token is longer than TOKEN bytes"
            );
            tokens = rest;
        }
        let (mut close, mut value) = (F::KEY_CLOSE, F::KEY_VALUE);
        let quoted = matches!(close.split_first(), Some((&KEY_OPEN, _)));
        assert!(quoted, "Syntax::KEY_CLOSE does not start with `\"`");
        if let Some((_, rest)) = close.split_first() {
            close = rest;
        }
        while let (Some((a, close_rest)), Some((b, value_rest))) =
            (close.split_first(), value.split_first())
        {
            assert!(*a == *b, "Syntax::KEY_CLOSE is not `\"` and KEY_VALUE");
            (close, value) = (close_rest, value_rest);
        }
        assert!(
            close.is_empty() && value.is_empty(),
            "Syntax::KEY_CLOSE is not `\"` and KEY_VALUE"
        );
    };
}

/// Ends each row of a line-delimited document.
pub(crate) const LINE_END: &[u8] = b"\n";

/// A null value (a value text, JSON's in every syntax).
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
    #[inline(always)]
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
    /// Rows are separated (by the syntax's separator, in an array).
    pub(crate) separated: bool,
    /// Each row ends a line.
    pub(crate) lines: bool,
    pub(crate) close: &'static [u8],
    /// No row written yet (no separator before the next).
    pub(crate) first_row: bool,
}

impl Framing {
    /// A whole document: `[` rows `]`, or lines.
    pub(crate) fn document<F: Syntax>(format: JsonFormat) -> Self {
        let array = format == JsonFormat::JsonArray;
        Framing {
            close: if array { F::LIST_CLOSE } else { b"" },
            ..Self::continuing::<F>(format, false, 1)
        }
    }

    /// Rows continuing a document that a writer has (`started`) or has not opened yet; the
    /// writer closes it.
    pub(crate) fn continuing<F: Syntax>(format: JsonFormat, started: bool, rows: usize) -> Self {
        match format {
            JsonFormat::JsonArray => Framing {
                open: if started || rows == 0 {
                    b""
                } else {
                    F::LIST_OPEN
                },
                separated: true,
                lines: false,
                close: b"",
                first_row: !started,
            },
            _ => Framing {
                open: b"",
                separated: false,
                lines: true,
                close: b"",
                first_row: true,
            },
        }
    }

    /// The pieces of rows that are objects (`object`), `key` the pre-built key of their one
    /// member (empty for several), or values; a null object row is `{}` when nulls are omitted.
    /// `None` if a piece is longer than [`PIECE`].
    pub(crate) fn pieces<F: Syntax>(
        &self,
        object: bool,
        key: &[u8],
        omit_nulls: bool,
    ) -> Option<RowPieces> {
        let separator: &[u8] = if self.separated { F::SEPARATOR } else { b"" };
        let row_end: &[u8] = if self.lines { LINE_END } else { b"" };
        let (open, close): (&[u8], &[u8]) = match object {
            true => (F::OBJECT_OPEN, F::OBJECT_CLOSE),
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
