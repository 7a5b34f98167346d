//! Errors: what was wrong with the bytes, and where.
//!
//! Parsing and validation return [`FormatError`]: a [`FormatErrorKind`] saying what was wrong,
//! plus the place it was found (byte offset, batch, field path). Readers that call a
//! [`RandomAccess`](crate::RandomAccess) source return [`Error<E>`], which carries the source's
//! own error unchanged next to the format errors.

use core::fmt;

/// The longest field path an error keeps, in bytes; a longer path is cut at a `.` boundary.
pub const FIELD_PATH_CAPACITY: usize = 96;

/// What a reader or decoder can fail with: the source's own error, or bad bytes.
#[derive(Debug)]
#[non_exhaustive]
pub enum Error<E = core::convert::Infallible> {
    /// The source failed while reading `len` bytes at `offset`; its error is returned unchanged.
    Source {
        /// The source's own error.
        error: E,
        /// Where the failed read started.
        offset: u64,
        /// How many bytes were asked for.
        len: u64,
    },
    /// The bytes are not valid Arrow, or exceed a configured limit.
    Format(FormatError),
}

impl<E> From<FormatError> for Error<E> {
    fn from(error: FormatError) -> Self {
        Error::Format(error)
    }
}

impl<E> From<FormatErrorKind> for Error<E> {
    fn from(kind: FormatErrorKind) -> Self {
        Error::Format(kind.into())
    }
}

impl<E> Error<E> {
    /// The format error, if this is one.
    pub fn format(&self) -> Option<&FormatError> {
        match self {
            Error::Format(e) => Some(e),
            Error::Source { .. } => None,
        }
    }

    /// Records the batch in which the error happened, unless one is already recorded.
    #[must_use]
    pub fn in_batch(self, batch: u64) -> Self {
        match self {
            Error::Format(e) => Error::Format(e.in_batch(batch)),
            other => other,
        }
    }
}

impl<E: fmt::Display> fmt::Display for Error<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Source { error, offset, len } => {
                write!(f, "reading {len} bytes at offset {offset}: {error}")
            }
            Error::Format(e) => e.fmt(f),
        }
    }
}

impl<E: fmt::Debug + fmt::Display> core::error::Error for Error<E> {}

/// Bad bytes: what was wrong ([`FormatErrorKind`]) and where it was found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FormatError {
    /// What was wrong.
    pub kind: FormatErrorKind,
    /// Absolute byte offset in the file or stream, when known.
    pub offset: Option<u64>,
    /// Index of the record batch (or dictionary batch, per `kind`), when known.
    pub batch: Option<u64>,
    /// Dotted path of the field being read, innermost last; empty when not about a field.
    pub field: heapless::String<FIELD_PATH_CAPACITY>,
}

impl FormatError {
    /// An error of this kind with no location yet.
    pub fn new(kind: FormatErrorKind) -> Self {
        FormatError {
            kind,
            offset: None,
            batch: None,
            field: heapless::String::new(),
        }
    }

    /// Records the absolute byte offset, unless one is already recorded.
    #[must_use]
    pub fn at(mut self, offset: u64) -> Self {
        self.offset.get_or_insert(offset);
        self
    }

    /// Adds `base` to a recorded offset that was relative to `base`, or records `base`.
    #[must_use]
    pub fn rebase(mut self, base: u64) -> Self {
        self.offset = Some(self.offset.map_or(base, |o| o.saturating_add(base)));
        self
    }

    /// Records the batch index, unless one is already recorded.
    #[must_use]
    pub fn in_batch(mut self, batch: u64) -> Self {
        self.batch.get_or_insert(batch);
        self
    }

    /// Prepends an enclosing field's name to the field path (errors bubble up from the leaf).
    #[must_use]
    pub fn in_field(mut self, name: &str) -> Self {
        let mut path = heapless::String::<FIELD_PATH_CAPACITY>::new();
        let fits = path.push_str(name).is_ok()
            && (self.field.is_empty()
                || (path.push('.').is_ok() && path.push_str(&self.field).is_ok()));
        if fits {
            self.field = path;
        } else if self.field.is_empty() {
            // Keep as much of the name as fits, on a char boundary.
            for c in name.chars() {
                if self.field.push(c).is_err() {
                    break;
                }
            }
        }
        self
    }
}

impl From<FormatErrorKind> for FormatError {
    fn from(kind: FormatErrorKind) -> Self {
        FormatError::new(kind)
    }
}

impl fmt::Display for FormatError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.kind.fmt(f)?;
        let unplaced = self.field.is_empty() && self.batch.is_none() && self.offset.is_none();
        // An error about the whole input (empty, another format, cut short) has no place in it.
        if unplaced
            && matches!(
                self.kind,
                FormatErrorKind::EmptyInput
                    | FormatErrorKind::NotArrow { .. }
                    | FormatErrorKind::TruncatedFile { .. }
            )
        {
            return Ok(());
        }
        if !self.field.is_empty() {
            write!(f, " (field `{}`", self.field)?;
        } else {
            f.write_str(" (")?;
        }
        let mut sep = !self.field.is_empty();
        if let Some(batch) = self.batch {
            write!(f, "{}batch {batch}", if sep { ", " } else { "" })?;
            sep = true;
        }
        if let Some(offset) = self.offset {
            write!(f, "{}byte offset {offset}", if sep { ", " } else { "" })?;
            sep = true;
        }
        if !sep {
            f.write_str("location unknown")?;
        }
        f.write_str(")")
    }
}

impl core::error::Error for FormatError {}

/// What was wrong with the bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum FormatErrorKind {
    /// Fewer bytes exist than the structure being read needs.
    Truncated {
        /// What was being read.
        what: &'static str,
        /// Bytes needed.
        needed: u64,
        /// Bytes available.
        available: u64,
    },
    /// A caller-provided buffer is too small; call again with at least `needed` bytes.
    BufferTooSmall {
        /// What the buffer was for.
        what: &'static str,
        /// Bytes needed.
        needed: u64,
        /// Bytes provided.
        available: u64,
    },
    /// The file does not start or end with `ARROW1`.
    BadMagic,
    /// The input has no bytes at all.
    EmptyInput,
    /// The input is another format, recognised by its first or last bytes
    /// ([`Foreign::sniff`](crate::format::Foreign::sniff)).
    NotArrow {
        /// What it looks like.
        looks_like: crate::format::Foreign,
    },
    /// The file starts with `ARROW1` but does not end with the footer length and `ARROW1`, as a
    /// file cut short does.
    TruncatedFile {
        /// The file's length in bytes.
        len: u64,
    },
    /// A UTF-8 (string) array holds a value that is not UTF-8.
    InvalidUtf8 {
        /// The array slot of the value: in a top-level column, the row within its batch.
        index: u64,
        /// Where in the value the invalid bytes begin.
        byte: u64,
    },
    /// A flatbuffer offset, vtable or vector points outside its buffer or is malformed.
    Flatbuffer {
        /// What was being read (a table, field or vector name).
        what: &'static str,
    },
    /// The flatbuffer nests deeper, or holds more tables, than the configured limits.
    FlatbufferLimit {
        /// Which limit.
        what: &'static str,
        /// The limit.
        limit: u64,
    },
    /// A required flatbuffer field is absent.
    MissingField {
        /// The table and field, e.g. `Field.type`.
        what: &'static str,
    },
    /// A value is out of its allowed range (a negative length, an unknown enum value, …).
    InvalidValue {
        /// What the value is.
        what: &'static str,
        /// The value as found.
        value: i64,
    },
    /// A message of another type was expected here.
    UnexpectedMessage {
        /// The message type expected.
        expected: &'static str,
        /// The header type found (its `MessageHeader` union tag).
        found: u8,
    },
    /// A type, feature or codec that quiver cannot read (in this build).
    Unsupported {
        /// What it is.
        what: &'static str,
    },
    /// A buffer's declared range does not lie inside the message body.
    BufferOutOfBounds {
        /// Index of the buffer in the message.
        index: u64,
        /// Declared offset in the body.
        offset: i64,
        /// Declared length.
        length: i64,
        /// Body length.
        body: u64,
    },
    /// An array's data contradicts its type or length (short buffer, bad offsets, bad UTF-8, …).
    InvalidArray {
        /// What rule was broken.
        what: &'static str,
        /// The array slot (or buffer element) where it was broken.
        index: u64,
    },
    /// The message uses more field nodes or buffers than it declares, or fewer.
    LayoutMismatch {
        /// What ran out or was left over.
        what: &'static str,
    },
    /// A record batch refers to a dictionary id that no dictionary batch has defined.
    MissingDictionary {
        /// The dictionary id.
        id: i64,
    },
    /// A size declared in the file exceeds a configured limit.
    LimitExceeded {
        /// What was declared.
        what: &'static str,
        /// The declared size.
        requested: u64,
        /// The limit in force.
        limit: u64,
    },
    /// A projection names a field the schema does not have (the path is in `field`).
    UnknownField,
    /// A projection's path goes on below a field that is not a struct (or is a dictionary-encoded
    /// one): only struct children can be selected (the path is in `field`).
    NotAStruct,
    /// A projection names a field that more than one field of the schema (or of the struct)
    /// is called (the path is in `field`).
    AmbiguousField,
    /// A fixed capacity the caller chose (a const generic of the [`no_alloc`](crate::no_alloc)
    /// readers) is too small for the data.
    CapacityExceeded {
        /// What the capacity counts.
        what: &'static str,
        /// How many are needed at least.
        needed: u64,
        /// The capacity.
        capacity: u64,
    },
    /// Compressed data is corrupt.
    Decompression {
        /// Which codec.
        codec: &'static str,
        /// What was wrong.
        what: &'static str,
    },
}

impl fmt::Display for FormatErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use FormatErrorKind::*;
        match self {
            Truncated {
                what,
                needed,
                available,
            } => write!(
                f,
                "truncated {what}: needs {needed} bytes, {available} available"
            ),
            BufferTooSmall {
                what,
                needed,
                available,
            } => write!(
                f,
                "buffer too small for {what}: needs {needed} bytes, {available} provided"
            ),
            BadMagic => f.write_str("not an Arrow IPC file: missing ARROW1 magic"),
            EmptyInput => f.write_str("empty input"),
            NotArrow { looks_like } => write!(
                f,
                "this looks like {looks_like}; quiver reads Arrow IPC files and streams"
            ),
            TruncatedFile { len } => write!(
                f,
                "truncated Arrow IPC file: it starts with ARROW1, but its {len} bytes do not end \
                 with the footer length and ARROW1 magic ({} bytes)",
                crate::format::TRAILER_LEN
            ),
            InvalidUtf8 { index, byte } => {
                write!(
                    f,
                    "invalid UTF-8 in row {index}, at byte {byte} of the value"
                )
            }
            Flatbuffer { what } => write!(f, "malformed flatbuffer reading {what}"),
            FlatbufferLimit { what, limit } => {
                write!(f, "flatbuffer exceeds the {what} limit of {limit}")
            }
            MissingField { what } => write!(f, "required flatbuffer field {what} is absent"),
            InvalidValue { what, value } => write!(f, "invalid {what}: {value}"),
            UnexpectedMessage { expected, found } => write!(
                f,
                "expected a {expected} message, found message header type {found}"
            ),
            Unsupported { what } => write!(f, "unsupported: {what}"),
            BufferOutOfBounds {
                index,
                offset,
                length,
                body,
            } => write!(
                f,
                "buffer {index} (offset {offset}, length {length}) lies outside the {body}-byte body"
            ),
            InvalidArray { what, index } => write!(f, "invalid array: {what} at index {index}"),
            LayoutMismatch { what } => write!(f, "message layout does not match schema: {what}"),
            MissingDictionary { id } => write!(f, "no dictionary batch defines dictionary id {id}"),
            LimitExceeded {
                what,
                requested,
                limit,
            } => write!(
                f,
                "{what} of {requested} bytes exceeds the limit of {limit}"
            ),
            UnknownField => f.write_str("no such field"),
            NotAStruct => f.write_str(
                "the path goes on below a field that is not a struct (only the children of struct \
                 columns that are not dictionary-encoded can be selected)",
            ),
            AmbiguousField => f.write_str("more than one field has this name"),
            CapacityExceeded {
                what,
                needed,
                capacity,
            } => write!(
                f,
                "{what}: at least {needed} needed, the capacity is {capacity}"
            ),
            Decompression { codec, what } => write!(f, "corrupt {codec} data: {what}"),
        }
    }
}

/// Shorthand for results of parsing and validation.
pub type FormatResult<T> = Result<T, FormatError>;

#[cfg(test)]
mod tests {
    use super::*;
    use std::string::ToString;

    #[test]
    fn display_names_kind_field_batch_and_offset() {
        let e = FormatError::new(FormatErrorKind::InvalidArray {
            what: "offsets decrease",
            index: 3,
        })
        .at(120)
        .in_batch(2)
        .in_field("b")
        .in_field("a");
        assert_eq!(
            e.to_string(),
            "invalid array: offsets decrease at index 3 (field `a.b`, batch 2, byte offset 120)"
        );
    }
}
