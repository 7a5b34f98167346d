//! Typed, zero-copy views of Arrow's flatbuffer metadata: `Schema.fbs`, `Message.fbs` and
//! `File.fbs`.
//!
//! Bytes enter as the flatbuffer of one encapsulated message ([`Message::parse`]) or of a
//! file footer ([`Footer::parse`]); the framing around a message (continuation marker, length
//! prefix, end-of-stream marker) is read by `format::framing`, the one framer every reader of
//! messages uses, and the `ARROW1` magic by the file's readers. Every view is `Copy`, borrows
//! from those bytes, and reads its fields through the checked
//! [`flatbuffer`](crate::flatbuffer) reader, so nothing is allocated and nothing panics. Names follow the `.fbs` files. Offsets in errors
//! are relative to the buffer handed to `parse`; the caller rebases them
//! ([`FormatError::rebase`](crate::error::FormatError::rebase)).
//!
//! Nested fields form a tree whose depth is bounded by
//! [`flatbuffer::MAX_DEPTH`](crate::flatbuffer::MAX_DEPTH), but flatbuffer offsets may share
//! subtrees: code that walks [`Field::children`] recursively must also budget the number of
//! fields it visits.
//!
//! The values of the `Schema.fbs` enums ([`TimeUnit`], …) are defined
//! here, with the views that read them, and named in [`datatype`](crate::datatype); an array's
//! type checked from its flatbuffer `Type`, and the buffers it has in a message, are the
//! crate's `format::layout`.
//!
//! It uses the [`flatbuffer`](crate::flatbuffer) reader and builder and the errors: nothing
//! above them.

pub(crate) mod body;
pub(crate) mod cursor;
mod file;
mod foreign;
mod framing;
pub(crate) mod layout;
mod message;
pub(crate) mod schema;
pub(crate) mod slots;

pub use crate::error::vocabulary::Foreign;
pub use file::{Block, Blocks, Footer, LEADING_LEN, TRAILER_LEN, footer_range, missing_trailer};
pub use framing::CONTINUATION;
pub(crate) use framing::{MAX_PREFIX, Prefix, body_length};
pub(crate) use layout::Kind;
#[cfg(feature = "alloc")]
pub(crate) use layout::{Layout, Swap, TypeIds};
pub use message::{
    BodyCompression, BodyCompressionMethod, Buffer, Buffers, DictionaryBatch, FieldNode,
    FieldNodes, Message, MessageHeader, MetadataVersion, RecordBatch,
};
pub(crate) use schema::{
    DateUnit, EXTENSION_NAME_KEY, IntType, IntervalUnit, Precision, TimeUnit, UnionMode,
};
pub use schema::{
    DictionaryEncoding, Field, Fields, KeyValue, KeyValues, Schema, TableVector, Type,
};

use crate::error::{FormatError, FormatErrorKind, FormatResult};
use crate::flatbuffer::{Element, Table, Vector};

/// The magic bytes that open and close an IPC file.
pub const MAGIC: &[u8; 6] = b"ARROW1";

// The errors of encapsulated messages, raised alike by the stream and file readers of `ipc` and
// `no_alloc`.

/// The error for `message` when a message with an `expected` header should come.
pub(crate) fn unexpected(expected: &'static str, message: Message<'_>) -> FormatError {
    let found = message.header_type().unwrap_or(0);
    FormatErrorKind::UnexpectedMessage { expected, found }.into()
}

/// The error for `needed` bytes of `what` at `at` in a stream, of which `available` came.
pub(crate) fn truncated(
    what: &'static str,
    needed: usize,
    available: usize,
    at: u64,
) -> FormatError {
    FormatError::from(FormatErrorKind::Truncated {
        what,
        needed: needed as u64,
        available: available as u64,
    })
    .at(at)
}

/// The error for a stream whose input ended at `position`, before its schema message.
pub(crate) fn no_schema(position: u64) -> FormatErrorKind {
    if position == 0 {
        FormatErrorKind::EmptyInput
    } else {
        FormatErrorKind::Truncated {
            what: "stream (no schema message)",
            needed: 8,
            available: position,
        }
    }
}

/// A flatbuffer vector of `int` (e.g. `Union.typeIds`).
pub type Int32s<'a> = Vector<'a, i32>;

/// A flatbuffer vector of `long` (e.g. `RecordBatch.variadicBufferCounts`).
pub type Int64s<'a> = Vector<'a, i64>;

/// An `InvalidValue` error for `what`, located at `table`.
fn invalid(what: &'static str, value: impl Into<i64>, table: &Table<'_>) -> FormatError {
    FormatError::new(FormatErrorKind::InvalidValue {
        what,
        value: value.into(),
    })
    .at(table.offset() as u64)
}

/// A `MissingField` error for `what`, located at the table that lacks it.
fn missing(what: &'static str, table: &Table<'_>) -> FormatError {
    FormatError::new(FormatErrorKind::MissingField { what }).at(table.offset() as u64)
}

/// The vector in field `slot` of `table` (empty when absent).
fn vector_or_empty<'a, T: Element>(
    table: &Table<'a>,
    slot: u16,
    what: &'static str,
) -> FormatResult<Vector<'a, T>> {
    Ok(table.vector(slot, what)?.unwrap_or_else(Vector::empty))
}

/// The table in field `slot` of `table`; absent is a `MissingField` error.
fn required<'a>(table: &Table<'a>, slot: u16, what: &'static str) -> FormatResult<Table<'a>> {
    table.table(slot, what)?.ok_or_else(|| missing(what, table))
}

/// Reads an `i16` enum field and converts it with `from_fb`; unknown values are errors.
fn enum_field<T>(
    table: &Table<'_>,
    slot: u16,
    default: i16,
    what: &'static str,
    from_fb: fn(i16) -> Option<T>,
) -> crate::error::FormatResult<T> {
    let value = table.scalar(slot, default, what)?;
    from_fb(value).ok_or_else(|| invalid(what, value, table))
}

/// The `what` and `value` of an `InvalidValue` error (for the tests of the views).
#[cfg(test)]
#[allow(clippy::panic)]
fn invalid_value(e: FormatError) -> (&'static str, i64) {
    match e.kind {
        FormatErrorKind::InvalidValue { what, value } => (what, value),
        other => panic!("expected InvalidValue, got {other:?}"),
    }
}

/// A `FieldNode` (for tests).
#[cfg(test)]
pub(crate) fn node(length: i64, null_count: i64) -> FieldNode {
    FieldNode { length, null_count }
}

/// A `Buffer` (for tests).
#[cfg(test)]
pub(crate) fn buffer(offset: i64, length: i64) -> Buffer {
    Buffer { offset, length }
}

/// A `Block` (for tests).
#[cfg(test)]
pub(crate) fn block(offset: i64, meta_data_length: i32, body_length: i64) -> Block {
    Block {
        offset,
        meta_data_length,
        body_length,
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    //! Walks every Arrow IPC file in the arrow-testing integration corpus.

    use super::*;
    use crate::datatype::{CompressionCodec, Endianness, IntType, Precision};
    use crate::error::FormatResult;
    use std::path::{Path, PathBuf};
    use std::string::String;
    use std::vec::Vec;
    use std::{fs, println};

    /// The arrow-testing `data` folder: `$ARROW_TESTING_DATA`, else the shared checkout.
    fn data_dir() -> Option<PathBuf> {
        let dir = std::env::var_os("ARROW_TESTING_DATA")
            .map(PathBuf::from)
            .unwrap_or_else(|| {
                Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/arrow-testing/data")
            });
        dir.is_dir().then_some(dir)
    }

    fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                collect(&path, out);
            } else if path.extension().is_some_and(|e| e == "arrow_file") {
                out.push(path);
            }
        }
    }

    /// Every `*.arrow_file` of the integration corpus, sorted; `None` if the data is absent.
    fn arrow_files() -> Option<Vec<PathBuf>> {
        let Some(dir) = data_dir() else {
            println!("arrow-testing data not found (set ARROW_TESTING_DATA); skipping");
            return None;
        };
        let mut files = Vec::new();
        collect(&dir.join("arrow-ipc-stream/integration"), &mut files);
        files.sort();
        Some(files)
    }

    fn i32_at(buf: &[u8], pos: usize) -> i32 {
        i32::from_le_bytes(buf[pos..pos + 4].try_into().unwrap())
    }

    /// The footer flatbuffer: it precedes the `i32` footer length and the `ARROW1` magic.
    fn footer_bytes(file: &[u8]) -> &[u8] {
        assert_eq!(&file[..6], b"ARROW1");
        let end = file.len() - 10;
        assert_eq!(&file[end + 4..], b"ARROW1");
        let len = usize::try_from(i32_at(file, end)).unwrap();
        &file[end - len..end]
    }

    /// The metadata flatbuffer of the message at `offset`, with or without the continuation
    /// marker (files before 0.15 have none).
    fn message_bytes(file: &[u8], offset: i64) -> &[u8] {
        let at = usize::try_from(offset).unwrap();
        let framed = Prefix::parse(&file[at..], true, 0).unwrap();
        let Prefix::Message { len, metadata_len } = framed else {
            panic!("no message at {offset}: {framed:?}");
        };
        &file[at + len..at + len + metadata_len]
    }

    /// What a walk saw, for spot checks.
    #[derive(Default, Debug)]
    struct Seen {
        fields: usize,
        types: Vec<String>,
        dictionaries: Vec<DictionaryEncoding>,
        metadata: Vec<(String, String)>,
        nodes: usize,
        buffers: usize,
        codecs: Vec<CompressionCodec>,
        dictionary_batches: Vec<(i64, bool)>,
        /// The footer's version, then each message's.
        versions: Vec<MetadataVersion>,
    }

    fn walk_metadata(kvs: KeyValues<'_>, seen: &mut Seen) -> FormatResult<()> {
        assert_eq!(kvs.iter().count(), kvs.len());
        for kv in kvs.iter() {
            let kv = kv?;
            seen.metadata.push((kv.key.into(), kv.value.into()));
        }
        Ok(())
    }

    /// Walks fields recursively, visiting at most `budget` fields in all.
    fn walk_fields(fields: Fields<'_>, seen: &mut Seen, budget: &mut usize) -> FormatResult<()> {
        for (i, field) in fields.iter().enumerate() {
            let field = field?;
            *budget = budget.checked_sub(1).expect("field budget exhausted");
            seen.fields += 1;
            let same = fields.get(i)?;
            assert_eq!(same.name()?, field.name()?);
            let ty = field.type_()?;
            if let Type::Union {
                type_ids: Some(ids),
                ..
            } = ty
            {
                assert_eq!(ids.iter().count(), ids.len());
            }
            seen.types
                .push(std::format!("{:?} {:?}", field.name()?, ty));
            let _ = field.nullable();
            if let Some(d) = field.dictionary()? {
                seen.dictionaries.push(d);
            }
            walk_metadata(field.custom_metadata()?, seen)?;
            walk_fields(field.children()?, seen, budget)?;
        }
        Ok(())
    }

    fn walk_schema(schema: Schema<'_>, seen: &mut Seen) -> FormatResult<Endianness> {
        let endianness = schema.endianness()?;
        let _ = schema.features()?.iter().count();
        walk_metadata(schema.custom_metadata()?, seen)?;
        walk_fields(schema.fields()?, seen, &mut 10_000)?;
        Ok(endianness)
    }

    fn walk_record_batch(batch: RecordBatch<'_>, seen: &mut Seen) -> FormatResult<()> {
        let _ = batch.length();
        let nodes = batch.nodes()?;
        assert_eq!(nodes.iter().count(), nodes.len());
        seen.nodes += nodes.len();
        let buffers = batch.buffers()?;
        assert_eq!(buffers.iter().count(), buffers.len());
        seen.buffers += buffers.len();
        if let Some(c) = batch.compression()? {
            seen.codecs.push(c.codec);
        }
        if let Some(counts) = batch.variadic_buffer_counts()? {
            let _ = counts.iter().count();
        }
        Ok(())
    }

    fn walk_message(buf: &[u8], seen: &mut Seen) -> FormatResult<()> {
        let message = Message::parse(buf)?;
        seen.versions.push(message.version()?);
        let _ = message.body_length();
        walk_metadata(message.custom_metadata()?, seen)?;
        match message.header()? {
            MessageHeader::Schema(schema) => {
                walk_schema(schema, seen)?;
            }
            MessageHeader::RecordBatch(batch) => walk_record_batch(batch, seen)?,
            MessageHeader::DictionaryBatch(dict) => {
                seen.dictionary_batches.push((dict.id(), dict.is_delta()));
                walk_record_batch(dict.data()?, seen)?;
            }
            other => panic!("unexpected header {other:?}"),
        }
        Ok(())
    }

    fn walk_footer(footer: &[u8], seen: &mut Seen) -> FormatResult<Endianness> {
        let footer = Footer::parse(footer)?;
        seen.versions.push(footer.version()?);
        walk_metadata(footer.custom_metadata()?, seen)?;
        let _ = footer.dictionaries()?.len();
        let _ = footer.record_batches()?.len();
        walk_schema(footer.schema()?, seen)
    }

    /// Walks the footer, the schema and every message a file's blocks point at.
    fn walk_file(file: &[u8]) -> FormatResult<(Endianness, Seen)> {
        let mut seen = Seen::default();
        let endianness = walk_footer(footer_bytes(file), &mut seen)?;
        let footer = Footer::parse(footer_bytes(file))?;
        let dictionaries = footer.dictionaries()?;
        let batches = footer.record_batches()?;
        for block in dictionaries.iter().chain(batches.iter()) {
            assert!(block.offset > 0 && block.meta_data_length > 0 && block.body_length >= 0);
            let before = seen.dictionary_batches.len();
            walk_message(message_bytes(file, block.offset), &mut seen)?;
            let is_dictionary = seen.dictionary_batches.len() > before;
            assert_eq!(
                is_dictionary,
                dictionaries.iter().any(|d| d == block),
                "{block:?}"
            );
        }
        // The schema message at the start of the file (after the 8-byte magic and padding).
        walk_message(message_bytes(file, 8), &mut seen)?;
        Ok((endianness, seen))
    }

    fn read(files: &[PathBuf], suffix: &str) -> Vec<u8> {
        let path = files
            .iter()
            .find(|p| p.ends_with(suffix))
            .unwrap_or_else(|| panic!("{suffix} not found"));
        fs::read(path).unwrap()
    }

    #[test]
    fn walks_every_integration_file() {
        let Some(files) = arrow_files() else { return };
        assert_eq!(files.len(), 58, "expected the 58 integration files");
        for path in &files {
            let file = fs::read(path).unwrap();
            let (endianness, seen) =
                walk_file(&file).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            let big = path.to_string_lossy().contains("bigendian");
            assert_eq!(endianness == Endianness::Big, big, "{}", path.display());
            assert!(seen.fields > 0 || path.ends_with("generated_null_trivial.arrow_file"));
            // Messages are V4 or later. Some 0.14.1 writers left the footer's version out,
            // which reads as the `.fbs` default, V1.
            let old = path.to_string_lossy().contains("0.14.1");
            let (footer, messages) = seen.versions.split_first().unwrap();
            assert!(messages.iter().all(|v| *v >= MetadataVersion::V4));
            assert!(*footer >= MetadataVersion::V4 || old, "{}", path.display());
        }
    }

    #[test]
    fn spot_checks() {
        let Some(files) = arrow_files() else { return };

        let file = read(&files, "1.0.0-littleendian/generated_primitive.arrow_file");
        let footer = Footer::parse(footer_bytes(&file)).unwrap();
        assert_eq!(footer.version().unwrap(), MetadataVersion::V5);
        let schema = footer.schema().unwrap();
        assert_eq!(schema.endianness().unwrap(), Endianness::Little);
        let first = schema.fields().unwrap().get(0).unwrap();
        assert_eq!(first.name().unwrap(), Some("bool_nullable"));
        assert!(first.nullable());
        assert_eq!(first.type_().unwrap(), Type::Bool);
        assert!(first.children().unwrap().is_empty());
        assert!(first.dictionary().unwrap().is_none());
        let types: Vec<Type<'_>> = schema
            .fields()
            .unwrap()
            .iter()
            .map(|f| f.unwrap().type_().unwrap())
            .collect();
        let int = |bit_width, signed| Type::Int(IntType { bit_width, signed });
        for t in [
            int(8, true),
            int(64, false),
            Type::FloatingPoint(Precision::Double),
            Type::Utf8,
        ] {
            assert!(types.contains(&t), "{t:?}");
        }
        let batches = footer.record_batches().unwrap();
        assert!(!batches.is_empty());
        let message = Message::parse(message_bytes(&file, batches.get(0).unwrap().offset)).unwrap();
        let MessageHeader::RecordBatch(batch) = message.header().unwrap() else {
            panic!("expected a record batch");
        };
        assert_eq!(batch.nodes().unwrap().len(), schema.fields().unwrap().len());
        assert!(batch.compression().unwrap().is_none());
        assert_eq!(message.body_length(), batches.get(0).unwrap().body_length);

        for (name, codec) in [
            ("generated_lz4.arrow_file", CompressionCodec::Lz4Frame),
            ("generated_zstd.arrow_file", CompressionCodec::Zstd),
        ] {
            let (_, seen) = walk_file(&read(&files, name)).unwrap();
            assert!(!seen.codecs.is_empty());
            assert!(seen.codecs.iter().all(|c| *c == codec), "{name}");
        }

        // Files from 0.14.1 have no continuation marker and metadata version V4.
        let file = read(&files, "0.14.1/generated_primitive.arrow_file");
        assert_ne!(i32_at(&file, 8), -1);
        let footer = Footer::parse(footer_bytes(&file)).unwrap();
        assert_eq!(footer.version().unwrap(), MetadataVersion::V4);

        let walked = |name: &str| {
            let path = std::format!("1.0.0-littleendian/generated_{name}.arrow_file");
            walk_file(&read(&files, &path)).unwrap().1
        };
        let seen = walked("dictionary");
        assert!(!seen.dictionaries.is_empty());
        assert!(!seen.dictionary_batches.is_empty());
        for d in &seen.dictionaries {
            assert!(seen.dictionary_batches.iter().any(|(id, _)| *id == d.id));
        }
        assert!(!walked("custom_metadata").metadata.is_empty());
        for (name, printed) in [
            ("decimal256", "bit_width: 256"),
            ("datetime", "timezone: Some("),
            ("union", "Union { mode: Dense, type_ids: Some([10, 20]) }"),
        ] {
            let types = walked(name).types;
            assert!(types.iter().any(|t| t.contains(printed)), "{types:?}");
        }
    }

    /// Asserts that every prefix of `buf` too short for `walk` to succeed gives an error with
    /// an offset (and no panic), and that only trailing padding and string terminators may be
    /// cut before the walk succeeds.
    fn assert_truncations_fail(name: &str, buf: &[u8], walk: impl Fn(&[u8]) -> FormatResult<()>) {
        walk(buf).unwrap();
        let shortest_ok = (0..buf.len())
            .find(|&len| walk(&buf[..len]).is_ok())
            .unwrap_or(buf.len());
        assert!(shortest_ok + 8 >= buf.len(), "{name}: {shortest_ok}");
        for len in 0..shortest_ok {
            let e = walk(&buf[..len]).unwrap_err();
            assert!(e.offset().is_some(), "{name}: {e}");
        }
    }

    #[test]
    fn truncated_metadata_fails_cleanly() {
        let Some(files) = arrow_files() else { return };
        for path in &files {
            let name = std::format!("{}", path.display());
            let file = fs::read(path).unwrap();
            assert_truncations_fail(&name, footer_bytes(&file), |b| {
                walk_footer(b, &mut Seen::default()).map(|_| ())
            });
            let schema_message = message_bytes(&file, 8);
            assert_truncations_fail(&name, schema_message, |b| {
                walk_message(b, &mut Seen::default())
            });
        }
    }
}
