//! Views of `Message.fbs`: the encapsulated [`Message`] and its headers ([`RecordBatch`],
//! [`DictionaryBatch`], a [`Schema`]).
//!
//! It uses `schema` and `slots` beside it, the flatbuffer reader and the errors.
//!
//! [`Message::parse`] takes the message's flatbuffer bytes, after the IPC framing (the
//! `0xFFFFFFFF` continuation marker and the `i32` metadata length, read by `format::framing`)
//! has been stripped; the body that follows the metadata is not read here.

use super::schema::{KeyValues, Schema, key_values};
use super::slots::*;
use super::{Int64s, enum_field, invalid, missing, required, vector_or_empty};
use crate::error::CompressionCodec;
use crate::error::FormatResult;
use crate::flatbuffer::{Table, Vector};

/// Version of the metadata format a message or file was written with (`MetadataVersion`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum MetadataVersion {
    /// 0.1.0 (October 2016).
    V1 = 0,
    /// 0.2.0 (February 2017).
    V2 = 1,
    /// 0.3.0 to 0.7.1 (May to December 2017).
    V3 = 2,
    /// 0.8.0 and later (December 2017).
    V4 = 3,
    /// 1.0.0 and later (July 2020); unions have no validity bitmap.
    V5 = 4,
}

impl MetadataVersion {
    /// The variant whose `.fbs` enum value is `value`, or `None` for an unknown value.
    pub fn from_fb(value: i16) -> Option<Self> {
        [Self::V1, Self::V2, Self::V3, Self::V4, Self::V5]
            .into_iter()
            .find(|variant| *variant as i16 == value)
    }
}

/// Reads a `MetadataVersion` field (V1 when absent, as the `.fbs` default says).
pub(super) fn version(
    table: &Table<'_>,
    slot: u16,
    what: &'static str,
) -> FormatResult<MetadataVersion> {
    enum_field(table, slot, 0, what, MetadataVersion::from_fb)
}

/// One encapsulated IPC message: a header plus the length of the body that follows it.
#[derive(Clone, Copy, Debug)]
pub struct Message<'a> {
    table: Table<'a>,
    body_length: i64,
}

impl<'a> Message<'a> {
    /// Checks the root `Message` table of the flatbuffer `buf`.
    pub fn parse(buf: &'a [u8]) -> FormatResult<Self> {
        let table = Table::root(buf, "Message")?;
        let body_length = table.scalar(MESSAGE_BODY_LENGTH, 0i64, "Message.bodyLength")?;
        Ok(Message { table, body_length })
    }

    /// The metadata version the message was written with (`Message.version`).
    pub fn version(&self) -> FormatResult<MetadataVersion> {
        version(&self.table, MESSAGE_VERSION, "Message.version")
    }

    /// The raw `MessageHeader` union tag (`Message.header_type`; 0 when absent).
    pub fn header_type(&self) -> FormatResult<u8> {
        self.table
            .scalar(MESSAGE_HEADER_TYPE, 0u8, "Message.header_type")
    }

    /// The header (`Message.header`); an absent or `NONE` header is an error.
    pub fn header(&self) -> FormatResult<MessageHeader<'a>> {
        let tag = self.header_type()?;
        if tag > HEADER_SPARSE_TENSOR {
            return Err(invalid("Message.header union tag", tag, &self.table));
        }
        let Some((tag, t)) =
            self.table
                .union(MESSAGE_HEADER_TYPE, MESSAGE_HEADER, "Message.header")?
        else {
            return Err(missing("Message.header", &self.table));
        };
        Ok(match tag {
            HEADER_SCHEMA => MessageHeader::Schema(Schema::from_table(t)),
            HEADER_DICTIONARY_BATCH => {
                MessageHeader::DictionaryBatch(DictionaryBatch::from_table(t)?)
            }
            HEADER_RECORD_BATCH => MessageHeader::RecordBatch(RecordBatch::from_table(t)?),
            HEADER_TENSOR => MessageHeader::Tensor,
            HEADER_SPARSE_TENSOR => MessageHeader::SparseTensor,
            _ => return Err(invalid("Message.header union tag", tag, &self.table)),
        })
    }

    /// Length of the body that follows the metadata, as written (`Message.bodyLength`).
    pub fn body_length(&self) -> i64 {
        self.body_length
    }

    /// User-defined metadata (`Message.custom_metadata`; empty when absent).
    pub fn custom_metadata(&self) -> FormatResult<KeyValues<'a>> {
        key_values(
            &self.table,
            MESSAGE_CUSTOM_METADATA,
            "Message.custom_metadata",
        )
    }
}

/// What a message carries (the `MessageHeader` union).
#[derive(Clone, Copy, Debug)]
#[non_exhaustive]
pub enum MessageHeader<'a> {
    /// The schema of the stream.
    Schema(Schema<'a>),
    /// The values of one dictionary.
    DictionaryBatch(DictionaryBatch<'a>),
    /// One batch of rows.
    RecordBatch(RecordBatch<'a>),
    /// A tensor (not read by quiver).
    Tensor,
    /// A sparse tensor (not read by quiver).
    SparseTensor,
}

/// The layout of one batch of rows in the message body (`RecordBatch` table).
#[derive(Clone, Copy, Debug)]
pub struct RecordBatch<'a> {
    table: Table<'a>,
    length: i64,
}

impl<'a> RecordBatch<'a> {
    fn from_table(table: Table<'a>) -> FormatResult<Self> {
        let length = table.scalar(RECORD_BATCH_LENGTH, 0i64, "RecordBatch.length")?;
        Ok(RecordBatch { table, length })
    }

    /// Number of rows, as written (`RecordBatch.length`).
    pub fn length(&self) -> i64 {
        self.length
    }

    /// One node per field, in pre-order (`RecordBatch.nodes`; empty when absent).
    pub fn nodes(&self) -> FormatResult<FieldNodes<'a>> {
        vector_or_empty(&self.table, RECORD_BATCH_NODES, "RecordBatch.nodes")
    }

    /// The body's buffers, in pre-order (`RecordBatch.buffers`; empty when absent).
    pub fn buffers(&self) -> FormatResult<Buffers<'a>> {
        vector_or_empty(&self.table, RECORD_BATCH_BUFFERS, "RecordBatch.buffers")
    }

    /// How the body's buffers are compressed (`RecordBatch.compression`), if they are.
    pub fn compression(&self) -> FormatResult<Option<BodyCompression>> {
        self.table
            .table(RECORD_BATCH_COMPRESSION, "RecordBatch.compression")?
            .map(|t| BodyCompression::read(&t))
            .transpose()
    }

    /// The number of variadic buffers of each view-typed field, in pre-order
    /// (`RecordBatch.variadicBufferCounts`), if present.
    pub fn variadic_buffer_counts(&self) -> FormatResult<Option<Int64s<'a>>> {
        self.table.vector(
            RECORD_BATCH_VARIADIC_BUFFER_COUNTS,
            "RecordBatch.variadicBufferCounts",
        )
    }
}

/// The length and null count of one field in a record batch (`FieldNode` struct).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FieldNode {
    /// Number of value slots, as written.
    pub length: i64,
    /// Number of nulls, as written.
    pub null_count: i64,
}

/// A record batch's field nodes.
pub type FieldNodes<'a> = Vector<'a, FieldNode>;

/// Where one buffer lies in the message body (`Buffer` struct).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Buffer {
    /// Offset from the start of the body, as written.
    pub offset: i64,
    /// Length in bytes, as written (padding excluded).
    pub length: i64,
}

/// A record batch's buffers.
pub type Buffers<'a> = Vector<'a, Buffer>;

// The byte layouts of the two structs above.
fb_struct!(FieldNode: 16 { length: i64 = 0, null_count: i64 = 8 });
fb_struct!(Buffer: 16 { offset: i64 = 0, length: i64 = 8 });

/// How a message body's buffers are compressed (`BodyCompression` table).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BodyCompression {
    /// The codec (`BodyCompression.codec`, LZ4 frame by default).
    pub codec: CompressionCodec,
    /// How the codec is applied (`BodyCompression.method`).
    pub method: BodyCompressionMethod,
}

impl BodyCompression {
    fn read(t: &Table<'_>) -> FormatResult<Self> {
        let codec = t.scalar(BODY_COMPRESSION_CODEC, 0i8, "BodyCompression.codec")?;
        let codec = CompressionCodec::from_fb(codec)
            .ok_or_else(|| invalid("BodyCompression.codec", codec, t))?;
        let method = t.scalar(BODY_COMPRESSION_METHOD, 0i8, "BodyCompression.method")?;
        let method = BodyCompressionMethod::from_fb(method)
            .ok_or_else(|| invalid("BodyCompression.method", method, t))?;
        Ok(BodyCompression { codec, method })
    }
}

/// How a codec is applied to a message body (`BodyCompressionMethod`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum BodyCompressionMethod {
    /// Each buffer is compressed on its own, prefixed by its uncompressed length as an `i64`
    /// (-1: stored uncompressed).
    Buffer,
}

impl BodyCompressionMethod {
    /// The method as its `Message.fbs` enum value, or `None` for an unknown value.
    pub fn from_fb(value: i8) -> Option<Self> {
        match value {
            0 => Some(BodyCompressionMethod::Buffer),
            _ => None,
        }
    }
}

/// The values of one dictionary, or values to append to it (`DictionaryBatch` table).
#[derive(Clone, Copy, Debug)]
pub struct DictionaryBatch<'a> {
    table: Table<'a>,
    id: i64,
    is_delta: bool,
}

impl<'a> DictionaryBatch<'a> {
    fn from_table(table: Table<'a>) -> FormatResult<Self> {
        let id = table.scalar(DICTIONARY_BATCH_ID, 0i64, "DictionaryBatch.id")?;
        let is_delta = table.scalar(DICTIONARY_BATCH_IS_DELTA, false, "DictionaryBatch.isDelta")?;
        Ok(DictionaryBatch {
            table,
            id,
            is_delta,
        })
    }

    /// The dictionary id that fields refer to (`DictionaryBatch.id`).
    pub fn id(&self) -> i64 {
        self.id
    }

    /// The dictionary's values as a one-column record batch (`DictionaryBatch.data`).
    pub fn data(&self) -> FormatResult<RecordBatch<'a>> {
        RecordBatch::from_table(required(
            &self.table,
            DICTIONARY_BATCH_DATA,
            "DictionaryBatch.data",
        )?)
    }

    /// Whether the values are appended to the dictionary rather than replacing it
    /// (`DictionaryBatch.isDelta`).
    pub fn is_delta(&self) -> bool {
        self.is_delta
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;
    use crate::error::FormatErrorKind;
    use crate::flatbuffer::Element;
    use crate::flatbuffer::builder::{Obj, Value, finish};
    use crate::format::{buffer, invalid_value, node};
    use std::vec::Vec;

    fn structs(pairs: &[(i64, i64)]) -> Value {
        Value::Vector {
            elem_size: 16,
            bytes: pairs
                .iter()
                .flat_map(|(a, b)| a.to_le_bytes().into_iter().chain(b.to_le_bytes()))
                .collect(),
        }
    }

    fn message(tag: u8, header: Option<Obj>) -> Obj {
        let mut m = Obj::new()
            .with(MESSAGE_VERSION, Value::I16(4))
            .with(MESSAGE_HEADER_TYPE, Value::U8(tag))
            .with(MESSAGE_BODY_LENGTH, Value::I64(1234));
        if let Some(h) = header {
            m = m.table(MESSAGE_HEADER, h);
        }
        m
    }

    /// The record batch a message's flatbuffer `buf` carries.
    fn header_batch(buf: &[u8]) -> RecordBatch<'_> {
        let MessageHeader::RecordBatch(b) = Message::parse(buf).unwrap().header().unwrap() else {
            panic!("expected a record batch");
        };
        b
    }

    #[test]
    fn record_batch() {
        let batch = Obj::new()
            .with(RECORD_BATCH_LENGTH, Value::I64(10))
            .with(RECORD_BATCH_NODES, structs(&[(10, 1), (3, 0)]))
            .with(RECORD_BATCH_BUFFERS, structs(&[(0, 8), (8, 40), (48, 0)]))
            .table(
                RECORD_BATCH_COMPRESSION,
                Obj::new().with(BODY_COMPRESSION_CODEC, Value::I8(1)),
            )
            .i64s(RECORD_BATCH_VARIADIC_BUFFER_COUNTS, &[2]);
        let buf = finish(&message(HEADER_RECORD_BATCH, Some(batch)));
        let m = Message::parse(&buf).unwrap();
        assert_eq!(m.version().unwrap(), MetadataVersion::V5);
        assert_eq!(m.header_type().unwrap(), HEADER_RECORD_BATCH);
        assert_eq!(m.body_length(), 1234);
        assert!(m.custom_metadata().unwrap().is_empty());
        let b = header_batch(&buf);
        assert_eq!(b.length(), 10);
        let nodes = b.nodes().unwrap();
        assert_eq!(nodes.iter().collect::<Vec<_>>(), [node(10, 1), node(3, 0)]);
        let buffers = b.buffers().unwrap();
        assert_eq!(buffers.len(), 3);
        assert_eq!(buffers.get(1), Some(buffer(8, 40)));
        assert_eq!(buffers.get(3), None);
        assert_eq!(
            b.compression().unwrap(),
            Some(BodyCompression {
                codec: CompressionCodec::Zstd,
                method: BodyCompressionMethod::Buffer
            })
        );
        assert_eq!(
            b.variadic_buffer_counts()
                .unwrap()
                .unwrap()
                .iter()
                .collect::<Vec<_>>(),
            [2]
        );
    }

    #[test]
    fn record_batch_defaults() {
        let buf = finish(&message(HEADER_RECORD_BATCH, Some(Obj::new())));
        let b = header_batch(&buf);
        assert_eq!(b.length(), 0);
        assert!(b.nodes().unwrap().is_empty());
        assert!(b.buffers().unwrap().is_empty());
        assert_eq!(b.compression().unwrap(), None);
        assert_eq!(b.variadic_buffer_counts().unwrap(), None);

        // An empty BodyCompression table: LZ4 frame, per buffer.
        let batch = Obj::new().table(RECORD_BATCH_COMPRESSION, Obj::new());
        let buf = finish(&message(HEADER_RECORD_BATCH, Some(batch)));
        let b = header_batch(&buf);
        assert_eq!(
            b.compression().unwrap(),
            Some(BodyCompression {
                codec: CompressionCodec::Lz4Frame,
                method: BodyCompressionMethod::Buffer
            })
        );
    }

    #[test]
    fn bad_compression() {
        for (slot, what) in [
            (BODY_COMPRESSION_CODEC, "BodyCompression.codec"),
            (BODY_COMPRESSION_METHOD, "BodyCompression.method"),
        ] {
            let batch = Obj::new().table(
                RECORD_BATCH_COMPRESSION,
                Obj::new().with(slot, Value::I8(-1)),
            );
            let buf = finish(&message(HEADER_RECORD_BATCH, Some(batch)));
            let e = header_batch(&buf).compression().unwrap_err();
            assert_eq!(invalid_value(e), (what, -1));
        }
    }

    #[test]
    fn dictionary_batch() {
        let full = Obj::new()
            .with(DICTIONARY_BATCH_ID, Value::I64(42))
            .table(
                DICTIONARY_BATCH_DATA,
                Obj::new().with(RECORD_BATCH_LENGTH, Value::I64(3)),
            )
            .with(DICTIONARY_BATCH_IS_DELTA, Value::Bool(true));
        let missing = FormatErrorKind::MissingField {
            what: "DictionaryBatch.data",
        };
        // Absent fields: id 0, not a delta, and no data.
        for (dict, expected) in [
            (full, (42, true, Ok(3))),
            (Obj::new(), (0, false, Err(missing))),
        ] {
            let buf = finish(&message(HEADER_DICTIONARY_BATCH, Some(dict)));
            let MessageHeader::DictionaryBatch(d) = Message::parse(&buf).unwrap().header().unwrap()
            else {
                panic!("expected a dictionary batch");
            };
            let data = d.data().map(|b| b.length()).map_err(|e| e.kind);
            assert_eq!((d.id(), d.is_delta(), data), expected);
        }
    }

    #[test]
    fn other_headers() {
        let buf = finish(&message(HEADER_SCHEMA, Some(Obj::new())));
        let header = Message::parse(&buf).unwrap().header().unwrap();
        let MessageHeader::Schema(s) = header else {
            panic!("expected a schema");
        };
        assert!(s.fields().unwrap().is_empty());
        for (tag, tensor) in [(HEADER_TENSOR, true), (HEADER_SPARSE_TENSOR, false)] {
            let buf = finish(&message(tag, Some(Obj::new())));
            let header = Message::parse(&buf).unwrap().header().unwrap();
            assert_eq!(
                (
                    matches!(header, MessageHeader::Tensor),
                    matches!(header, MessageHeader::SparseTensor)
                ),
                (tensor, !tensor)
            );
        }
    }

    #[test]
    fn missing_or_unknown_header() {
        for buf in [
            finish(&message(0, None)),
            finish(&message(0, Some(Obj::new()))),
            finish(&message(HEADER_RECORD_BATCH, None)),
        ] {
            let e = Message::parse(&buf).unwrap().header().unwrap_err();
            assert_eq!(
                e.kind,
                FormatErrorKind::MissingField {
                    what: "Message.header"
                }
            );
        }
        let buf = finish(&message(6, Some(Obj::new())));
        let e = Message::parse(&buf).unwrap().header().unwrap_err();
        assert_eq!(invalid_value(e), ("Message.header union tag", 6));
    }

    #[test]
    fn versions() {
        for (value, version) in [
            (0, MetadataVersion::V1),
            (1, MetadataVersion::V2),
            (2, MetadataVersion::V3),
            (3, MetadataVersion::V4),
            (4, MetadataVersion::V5),
        ] {
            assert_eq!(MetadataVersion::from_fb(value), Some(version));
        }
        let buf = finish(&Obj::new().with(MESSAGE_VERSION, Value::I16(5)));
        let m = Message::parse(&buf).unwrap();
        assert_eq!(
            invalid_value(m.version().unwrap_err()),
            ("Message.version", 5)
        );
        // Absent: V1, as the .fbs default says; absent body length: 0.
        let buf = finish(&Obj::new());
        let m = Message::parse(&buf).unwrap();
        assert_eq!(m.version().unwrap(), MetadataVersion::V1);
        assert_eq!(m.body_length(), 0);
    }

    #[test]
    fn garbage_is_a_flatbuffer_error() {
        for buf in [&[][..], &[1, 2, 3], &[0xFF; 64]] {
            let e = Message::parse(buf).unwrap_err();
            assert_eq!(e.kind, FormatErrorKind::Flatbuffer { what: "Message" });
        }
    }

    #[test]
    fn struct_elements_need_exact_sizes() {
        assert_eq!(FieldNode::from_le_slice(&[0; 15]), None);
        assert_eq!(Buffer::from_le_slice(&[0; 17]), None);
        assert_eq!(crate::format::Block::from_le_slice(&[0; 23]), None);
        assert_eq!(
            Buffer::from_le_slice(&[1, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0]),
            Some(buffer(1, 2))
        );
    }
}
