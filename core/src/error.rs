//! Errors: what was wrong with the bytes, and where.
//!
//! Parsing and validation return [`FormatError`]: a [`FormatErrorKind`] saying what was wrong,
//! plus the place it was found (byte offset, batch, and the field as a [`FieldPath`] of indices
//! into the schema). Readers that call a [`RandomAccess`](crate::source::RandomAccess) source return
//! [`Error<E>`], which carries the source's own error unchanged next to the format errors.
//!
//! An error is a small value (a `Result` carries it on every call): it names the field by its
//! indices, and the field's dotted name is rebuilt when the error is shown with the schema it is
//! about ([`FormatError::display_with`], [`Error::display_with`], in [`schema`](crate::schema)).
//!
//! This is the bottom of the crate's ladder: it uses nothing of the crate, and every other
//! module may use it. The small vocabularies its errors name are defined here too, and reached
//! where their code reads them: the [`CompressionCodec`] of a body as
//! [`datatype::CompressionCodec`](crate::datatype::CompressionCodec), and what a [`Foreign`]
//! input looks like as [`format::Foreign`](crate::format::Foreign).

use core::fmt;
pub(crate) use vocabulary::{CompressionCodec, Foreign};

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

impl<E> core::error::Error for Error<E>
where
    E: core::error::Error + 'static,
{
    /// The source's own error, or the [`FormatError`].
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        match self {
            Error::Source { error, .. } => Some(error),
            Error::Format(e) => Some(e),
        }
    }
}

/// Bad bytes: what was wrong ([`FormatErrorKind`]) and where it was found.
///
/// At most 64 bytes: the place is a byte offset, a batch index and a [`FieldPath`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FormatError {
    /// What was wrong.
    pub kind: FormatErrorKind,
    /// The absolute byte offset, or [`UNKNOWN`] (read through [`FormatError::offset`]).
    offset: u64,
    /// The batch index, or [`UNKNOWN`] (read through [`FormatError::batch`]).
    batch: u64,
    /// The field, innermost level last; empty when not about a field.
    field: FieldPath,
}

/// The stored offset or batch index that means "not known".
const UNKNOWN: u64 = u64::MAX;

fn known(value: u64) -> Option<u64> {
    (value != UNKNOWN).then_some(value)
}

impl FormatError {
    /// An error of this kind with no location yet.
    pub fn new(kind: FormatErrorKind) -> Self {
        FormatError {
            kind,
            offset: UNKNOWN,
            batch: UNKNOWN,
            field: FieldPath::EMPTY,
        }
    }

    /// The absolute byte offset in the file or stream, when known.
    pub fn offset(&self) -> Option<u64> {
        known(self.offset)
    }

    /// The index of the record batch (or dictionary batch, per [`kind`](Self::kind)), when known.
    pub fn batch(&self) -> Option<u64> {
        known(self.batch)
    }

    /// The field being read, when the error is about one: its indices in the schema (the
    /// file's schema for a reader's errors; the batch's for a writer's).
    pub fn field(&self) -> Option<FieldPath> {
        (!self.field.is_empty()).then_some(self.field)
    }

    /// Records the absolute byte offset, unless one is already recorded.
    #[must_use]
    pub fn at(mut self, offset: u64) -> Self {
        self.offset = known(self.offset).unwrap_or(offset);
        self
    }

    /// Adds `base` to a recorded offset that was relative to `base`, or records `base`.
    #[must_use]
    pub fn rebase(mut self, base: u64) -> Self {
        self.offset = match known(self.offset) {
            Some(offset) => offset.saturating_add(base).min(UNKNOWN - 1),
            None => base,
        };
        self
    }

    /// Records the batch index, unless one is already recorded.
    #[must_use]
    pub fn in_batch(mut self, batch: u64) -> Self {
        self.batch = known(self.batch).unwrap_or(batch);
        self
    }

    /// Records that the error is inside child `index` of the enclosing field (or top-level
    /// field `index`): errors bubble up from the leaf, each level adding its index in front.
    #[must_use]
    pub fn in_field(mut self, index: usize) -> Self {
        self.field = self.field.under(index);
        self
    }

    /// Places an error from a dictionary's own column (its outermost level, if any) at `root`,
    /// the path of the schema field whose dictionary it is.
    #[cfg(feature = "alloc")]
    #[must_use]
    pub(crate) fn in_dictionary(mut self, root: Option<FieldPath>) -> Self {
        self.field = match root {
            Some(root) => self.field.below(root, 1),
            None => FieldPath::EMPTY,
        };
        self
    }

    /// Writes the kind and the place, the field written by `write_field` (its indices, `#0.1`,
    /// or a schema's names for them).
    pub(crate) fn write(
        &self,
        f: &mut fmt::Formatter<'_>,
        write_field: impl FnOnce(&mut fmt::Formatter<'_>, FieldPath) -> fmt::Result,
    ) -> fmt::Result {
        fmt::Display::fmt(&self.kind, f)?;
        let (field, batch, offset) = (self.field(), self.batch(), self.offset());
        let unplaced = field.is_none() && batch.is_none() && offset.is_none();
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
        let mut sep = " (";
        if let Some(field) = field {
            write!(f, "{sep}field ")?;
            write_field(f, field)?;
            sep = ", ";
        }
        if let Some(batch) = batch {
            write!(f, "{sep}batch {batch}")?;
            sep = ", ";
        }
        match offset {
            Some(offset) => write!(f, "{sep}byte offset {offset})"),
            None if unplaced => f.write_str(" (location unknown)"),
            None => f.write_str(")"),
        }
    }
}

impl From<FormatErrorKind> for FormatError {
    fn from(kind: FormatErrorKind) -> Self {
        FormatError::new(kind)
    }
}

impl fmt::Display for FormatError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.write(f, |f, path| write!(f, "#{path}"))
    }
}

impl core::error::Error for FormatError {}

/// Where a field is in a schema: the index of each field on the way down, from the top-level
/// field (its index in the schema's fields) through the children of each type (a list's item,
/// a struct's or union's members, a map's entries, a run-end encoded array's run ends and
/// values).
///
/// It takes 8 bytes: seven small indices, or fewer larger ones; the deepest levels of a path that
/// does not fit are cut off ([`is_cut`](Self::is_cut)). Shown alone it is the indices, `0.1`; a
/// schema names the fields (`Schema::fields_on_path`).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct FieldPath {
    /// The indices, outermost first, each in LEB128 (7 bits a byte, the high bit set when more
    /// bytes of the same index follow).
    bytes: [u8; FieldPath::CAPACITY],
    /// The number of bytes used, plus [`FieldPath::CUT`] when deeper levels were cut off.
    meta: u8,
}

impl FieldPath {
    const CAPACITY: usize = 7;
    const CUT: u8 = 0x80;
    const EMPTY: FieldPath = FieldPath {
        bytes: [0; FieldPath::CAPACITY],
        meta: 0,
    };

    /// The path of top-level field `index`.
    pub fn top(index: usize) -> Self {
        FieldPath::EMPTY.under(index)
    }

    /// The path of child `index` of this path's field.
    #[must_use]
    pub fn child(self, index: usize) -> Self {
        if self.is_cut() {
            return self;
        }
        let (mut out, mut used, mut value) = (self, self.used(), index as u64);
        loop {
            // LEB128: the low 7 bits, with the high bit set when more bytes follow.
            let low = (value & 0x7F) as u8;
            value >>= 7;
            let Some(slot) = out.bytes.get_mut(used) else {
                // Keep the levels above; this one does not fit.
                return FieldPath {
                    meta: self.meta | FieldPath::CUT,
                    ..self
                };
            };
            *slot = if value == 0 { low } else { low | 0x80 };
            used += 1;
            if value == 0 {
                out.meta = used as u8;
                return out;
            }
        }
    }

    /// This path below field `index`: `index` becomes the outermost level. Levels that no
    /// longer fit are cut from the inner end.
    fn under(self, index: usize) -> Self {
        self.below(FieldPath::EMPTY.child(index), 0)
    }

    /// This path's levels after the first `skip` as children of `base`, cut if this path is.
    fn below(self, base: FieldPath, skip: usize) -> Self {
        // A cut path takes no more children.
        let mut out = self.indices().skip(skip).fold(base, FieldPath::child);
        if self.is_cut() {
            out.meta |= FieldPath::CUT;
        }
        out
    }

    fn used(self) -> usize {
        usize::from(self.meta & !FieldPath::CUT)
    }

    /// The indices, outermost first.
    pub fn indices(self) -> impl Iterator<Item = usize> {
        let mut bytes = self.bytes.into_iter().take(self.used());
        core::iter::from_fn(move || {
            let mut value: u64 = 0;
            let mut shift = 0;
            loop {
                let byte = bytes.next()?;
                value |= u64::from(byte & 0x7F).checked_shl(shift).unwrap_or(0);
                shift += 7;
                if byte & 0x80 == 0 {
                    return Some(usize::try_from(value).unwrap_or(usize::MAX));
                }
            }
        })
    }

    /// The number of levels kept.
    pub fn len(self) -> usize {
        self.indices().count()
    }

    /// Whether the path has no levels.
    pub fn is_empty(self) -> bool {
        self.used() == 0
    }

    /// Whether deeper levels were cut off because they did not fit.
    pub fn is_cut(self) -> bool {
        self.meta & FieldPath::CUT != 0
    }
}

impl fmt::Display for FieldPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_dotted(f, self.indices(), self.is_cut())
    }
}

/// Writes the levels of a path joined by dots, then `.…` when deeper levels were cut off.
pub(crate) fn write_dotted<T: fmt::Display>(
    f: &mut fmt::Formatter<'_>,
    levels: impl Iterator<Item = T>,
    cut: bool,
) -> fmt::Result {
    for (i, level) in levels.enumerate() {
        write!(f, "{}{level}", if i > 0 { "." } else { "" })?;
    }
    f.write_str(if cut { ".…" } else { "" })
}

impl fmt::Debug for FieldPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "FieldPath({self})")
    }
}

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
    /// ([`Foreign::sniff`]).
    NotArrow {
        /// What it looks like.
        looks_like: Foreign,
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
        what: FlatbufferBound,
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
        what: Feature,
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
        what: Limit,
        /// The declared size.
        requested: u64,
        /// The limit in force.
        limit: u64,
    },
    /// A fixed capacity the caller chose (a const generic of the [`no_alloc`](crate::no_alloc)
    /// readers) is too small for the data.
    CapacityExceeded {
        /// What the capacity counts.
        what: Capacity,
        /// How many are needed at least.
        needed: u64,
        /// The capacity.
        capacity: u64,
    },
    /// A file's footer does not describe the messages the file holds, as found reading it
    /// front to back ([`StreamDecoder::for_file`](crate::ipc::StreamDecoder::for_file)).
    FooterMismatch {
        /// What differs: the schema, or the blocks of the dictionary or record batches (the
        /// error's batch is the first that differs).
        what: &'static str,
    },
    /// Compressed data is corrupt.
    Decompression {
        /// Which codec.
        codec: CompressionCodec,
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
                 with the footer length and ARROW1 magic (10 bytes)" // `format::TRAILER_LEN`
            ),
            InvalidUtf8 { index, byte } => write!(
                f,
                "invalid UTF-8 in row {index}, at byte {byte} of the value"
            ),
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
            CapacityExceeded {
                what,
                needed,
                capacity,
            } => write!(
                f,
                "{what}: at least {needed} needed, the capacity is {capacity}"
            ),
            FooterMismatch { what } => write!(
                f,
                "the footer's {what} is not the one the file holds before it"
            ),
            Decompression { codec, what } => write!(f, "corrupt {} data: {what}", codec.name()),
        }
    }
}

/// Which flatbuffer limit was exceeded ([`FormatErrorKind::FlatbufferLimit`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum FlatbufferBound {
    /// How deep tables nest (`ReaderOptions`' depth limit when reading).
    NestingDepth,
    /// How many fields a schema holds, nested ones included (`ReaderOptions::max_fields`).
    FieldCount,
    /// How deep fields may nest for readers to take the schema (when writing).
    FieldNesting,
    /// The size of a flatbuffer being built.
    BufferSize,
    /// The length of a vector being built.
    VectorLength,
    /// The size of a table being built (its vtable holds 16-bit offsets).
    TableSize,
}

impl fmt::Display for FlatbufferBound {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            FlatbufferBound::NestingDepth => "nesting depth",
            FlatbufferBound::FieldCount => "field count",
            FlatbufferBound::FieldNesting => "field nesting depth",
            FlatbufferBound::BufferSize => "builder buffer size",
            FlatbufferBound::VectorLength => "vector length",
            FlatbufferBound::TableSize => "table size",
        })
    }
}

/// What a size that exceeds a limit is the size of ([`FormatErrorKind::LimitExceeded`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Limit {
    /// A message's metadata (its flatbuffer), read or written.
    MessageMetadata,
    /// A message's body, written.
    MessageBody,
    /// A file's footer, written, or read front to back.
    FileFooter,
    /// The uncompressed size a compressed buffer declares (`ReaderOptions`' limit).
    DecompressedBuffer,
    /// A ZSTD frame's window.
    ZstdWindow,
    /// A read the reader planned (beyond what the platform can address).
    PlannedRead,
    /// An offset of a variable-length, list or map array, beyond its offset type (a large or
    /// view type holds more).
    Offsets,
    /// A run end beyond the run-end type (a wider one holds more).
    RunEnd,
    /// A dense union child's length beyond its 32-bit offsets.
    DenseUnionChild,
    /// A dictionary index beyond the index type (a wider one holds more).
    DictionaryIndex,
    /// A view value's length beyond 32 bits.
    ViewValue,
    /// A delta dictionary's length, or its offsets or run ends, beyond their type once
    /// appended to the dictionary before it.
    AppendedDictionary,
    /// A dictionary validity bitmap beyond the bytes its slots hold.
    DictionaryValidity,
}

impl fmt::Display for Limit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Limit::MessageMetadata => "message metadata",
            Limit::MessageBody => "message body",
            Limit::FileFooter => "file footer",
            Limit::DecompressedBuffer => "declared uncompressed buffer size",
            Limit::ZstdWindow => "ZSTD frame window size",
            Limit::PlannedRead => "planned read",
            Limit::Offsets => "offsets (a large or view type holds more)",
            Limit::RunEnd => "run end (use a wider run-end type)",
            Limit::DenseUnionChild => "dense union child length",
            Limit::DictionaryIndex => "dictionary index (use a wider index type)",
            Limit::ViewValue => "view value length",
            Limit::AppendedDictionary => "appended dictionary length or offsets",
            Limit::DictionaryValidity => {
                "a dictionary validity bitmap beyond the bytes its slots hold"
            }
        })
    }
}

/// The small vocabularies the errors name but other layers own: their one public path is
/// there ([`datatype::CompressionCodec`](crate::datatype::CompressionCodec),
/// [`format::Foreign`](crate::format::Foreign)), so this module is not public.
pub(crate) mod vocabulary {
    use core::fmt;

    /// Compression codec of a record batch body (`BodyCompression.codec`); defined with the
    /// errors, which name it ([`Feature::Codec`](super::Feature::Codec),
    /// [`FormatErrorKind::Decompression`](super::FormatErrorKind::Decompression)).
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
    pub enum CompressionCodec {
        /// LZ4 frame format.
        Lz4Frame = 0,
        /// Zstandard.
        Zstd = 1,
    }

    impl CompressionCodec {
        /// The variant whose `.fbs` enum value is `value`, or `None` for an unknown value.
        pub fn from_fb(value: i8) -> Option<Self> {
            [Self::Lz4Frame, Self::Zstd]
                .into_iter()
                .find(|variant| *variant as i8 == value)
        }

        /// The codec's name as the format spells it.
        pub fn name(self) -> &'static str {
            match self {
                CompressionCodec::Lz4Frame => "LZ4_FRAME",
                CompressionCodec::Zstd => "ZSTD",
            }
        }
    }

    /// A format that is not Arrow IPC, recognised by an input's first bytes.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    #[non_exhaustive]
    pub enum Foreign {
        /// An Apache Parquet file (`PAR1` at both ends).
        Parquet,
        /// A Feather version 1 file (`FEA1`); Feather version 2 is the Arrow IPC file format.
        FeatherV1,
        /// JSON text: printable text whose first non-blank character is `{` or `[`.
        Json,
        /// Other text, such as CSV: printable UTF-8 with no control characters but blanks.
        Text,
    }

    impl fmt::Display for Foreign {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str(match self {
                Foreign::Parquet => "a Parquet file",
                Foreign::FeatherV1 => "a Feather version 1 file",
                Foreign::Json => "JSON text",
                Foreign::Text => "text (CSV or similar)",
            })
        }
    }
}

/// What quiver cannot read or write, in this build or at all ([`FormatErrorKind::Unsupported`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Feature {
    /// Bodies compressed with a codec this build lacks (the `lz4` and `zstd` features).
    Codec(CompressionCodec),
    /// A compressed frame that needs a preset dictionary (a dictionary id in its header).
    CodecDictionary(CompressionCodec),
    /// Compressed record or dictionary batches without the `alloc` feature.
    CompressionWithoutAlloc,
    /// Big-endian data without the `alloc` feature (byte-swapping needs owned memory).
    BigEndianWithoutAlloc,
    /// Delta dictionaries without the `alloc` feature.
    DeltaDictionaryWithoutAlloc,
    /// Message metadata versions before V4 (Arrow 0.8).
    MetadataVersion,
    /// A dictionary id that a file defines twice, or a writer's file dictionary that neither
    /// equals, extends nor starts the one already written: the file format cannot replace a
    /// dictionary.
    ReplacedDictionaryInFile,
    /// A delta dictionary of a type that cannot be appended to, of another type than the
    /// dictionary before it, or whose values use other dictionaries.
    DeltaDictionary,
    /// Columns that share a dictionary id hold different dictionaries in one batch.
    SharedDictionaryMismatch,
    /// A data type with no buffer layout to read or write.
    DataTypeLayout,
    /// Writing a batch after `finish`.
    WriteAfterFinish,
    /// Writing after an earlier write failed (the output would be corrupt).
    WriteAfterError,
    /// A flatbuffer built out of order (a bug in quiver's writer).
    FlatbufferBuilderMisuse,
}

impl fmt::Display for Feature {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Feature::Codec(codec) => {
                let feature = match codec {
                    CompressionCodec::Lz4Frame => "lz4",
                    CompressionCodec::Zstd => "zstd",
                };
                let codec = codec.name();
                return write!(
                    f,
                    "{codec} compression (build with the `{feature}` feature)"
                );
            }
            Feature::CodecDictionary(codec) => {
                let codec = codec.name();
                return write!(
                    f,
                    "{codec} preset dictionary (dictionary id in frame header)"
                );
            }
            Feature::CompressionWithoutAlloc => "compressed batches without the alloc feature",
            Feature::BigEndianWithoutAlloc => "big-endian data without the alloc feature",
            Feature::DeltaDictionaryWithoutAlloc => "delta dictionaries without the alloc feature",
            Feature::MetadataVersion => "message metadata versions before V4 (Arrow 0.8)",
            Feature::ReplacedDictionaryInFile => {
                "replaced dictionaries in a file (a file holds one dictionary per id, extended \
                 only by deltas)"
            }
            Feature::DeltaDictionary => {
                "a delta dictionary of this type, of another type, or with values encoded with \
                 other dictionaries"
            }
            Feature::SharedDictionaryMismatch => {
                "columns that share a dictionary id hold different dictionaries in one batch"
            }
            Feature::DataTypeLayout => "a data type without a buffer layout",
            Feature::WriteAfterFinish => "writing a batch after finish",
            Feature::WriteAfterError => "writing after an earlier write failed",
            Feature::FlatbufferBuilderMisuse => {
                "a flatbuffer built out of order (a bug in quiver's writer)"
            }
        })
    }
}

/// What a fixed capacity counts ([`FormatErrorKind::CapacityExceeded`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Capacity {
    /// Arrays in one batch (a [`no_alloc`](crate::no_alloc) `Batch`'s `N`).
    Arrays,
    /// Dictionaries (a [`no_alloc`](crate::no_alloc) reader's `D`).
    Dictionaries,
}

impl fmt::Display for Capacity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Capacity::Arrays => "arrays in one batch (the Batch's N)",
            Capacity::Dictionaries => "dictionaries (the reader's D)",
        })
    }
}

/// Shorthand for results of parsing and validation.
pub type FormatResult<T> = Result<T, FormatError>;

#[cfg(test)]
mod tests {
    use super::*;
    use std::string::ToString;
    use std::vec::Vec;

    #[test]
    fn display_names_kind_field_batch_and_offset() {
        let e = FormatError::new(FormatErrorKind::InvalidArray {
            what: "offsets decrease",
            index: 3,
        })
        .at(120)
        .in_batch(2)
        .in_field(1)
        .in_field(0);
        assert_eq!(e.field(), Some(FieldPath::top(0).child(1)));
        assert_eq!(
            e.to_string(),
            "invalid array: offsets decrease at index 3 (field #0.1, batch 2, byte offset 120)"
        );
    }

    #[cfg(feature = "alloc")]
    #[test]
    fn display_with_a_schema_names_the_field() {
        use crate::datatype::DataType;
        use crate::schema::{Field, Schema};
        let point = DataType::Struct(
            std::vec![
                Field::new("x", DataType::Int32, true),
                Field::new("y", DataType::Utf8, true),
            ]
            .into(),
        );
        let schema = Schema::new(std::vec![
            Field::new("a", DataType::Int32, true),
            Field::new("p", point, true),
        ]);
        let e = FormatError::new(FormatErrorKind::InvalidUtf8 { index: 2, byte: 4 })
            .in_field(1)
            .in_field(1)
            .in_batch(0);
        assert_eq!(
            e.display_with(&schema).to_string(),
            "invalid UTF-8 in row 2, at byte 4 of the value (field `p.y`, batch 0)"
        );
        let wrapped: Error<core::convert::Infallible> = e.clone().into();
        assert_eq!(
            wrapped.display_with(&schema).to_string(),
            e.display_with(&schema).to_string()
        );
        // A path the schema does not have falls back to the indices.
        let stray = FormatError::new(FormatErrorKind::EmptyInput).in_field(5);
        assert_eq!(
            stray.display_with(&schema).to_string(),
            "empty input (field #5)"
        );
    }

    #[test]
    fn errors_are_small() {
        use core::mem::size_of;
        assert!(
            size_of::<FormatError>() <= 64,
            "{}",
            size_of::<FormatError>()
        );
        assert!(size_of::<FieldPath>() == 8);
        // A reader's error with an I/O error of one pointer is no bigger than the format error.
        assert!(size_of::<Error<std::boxed::Box<u8>>>() <= 64);
    }

    #[test]
    fn field_paths_keep_the_outer_levels_that_fit() {
        let indices = |p: FieldPath| p.indices().collect::<Vec<_>>();
        let deep = (0..10).rev().fold(FieldPath::EMPTY, |p, i| p.under(i));
        assert_eq!(indices(deep), [0, 1, 2, 3, 4, 5, 6]);
        assert!(deep.is_cut());
        assert_eq!(deep.to_string(), "0.1.2.3.4.5.6.…");
        let wide = FieldPath::top(300).child(70_000).child(1);
        assert_eq!(indices(wide), [300, 70_000, 1]);
        assert!(!wide.is_cut());
        let over = wide.child(20_000);
        assert_eq!(indices(over), [300, 70_000, 1]);
        assert!(over.is_cut());
        let huge = FieldPath::top(usize::MAX);
        assert!(huge.is_empty() && huge.is_cut());
        assert_eq!(FormatError::new(FormatErrorKind::EmptyInput).field(), None);
    }

    #[test]
    fn source_is_the_source_error_or_the_format_error() {
        use core::error::Error as _;
        #[derive(Debug)]
        struct Io;
        impl fmt::Display for Io {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("io")
            }
        }
        impl core::error::Error for Io {}
        let source: Error<Io> = Error::Source {
            error: Io,
            offset: 0,
            len: 1,
        };
        assert!(source.source().is_some_and(|e| e.is::<Io>()));
        let format: Error<Io> = FormatErrorKind::EmptyInput.into();
        assert!(format.source().is_some_and(|e| e.is::<FormatError>()));
    }
}
