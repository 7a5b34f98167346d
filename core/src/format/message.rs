//! Views of `Message.fbs`: the encapsulated [`Message`] and its headers ([`RecordBatch`],
//! [`DictionaryBatch`], a [`Schema`]).
//!
//! [`Message::parse`] takes the message's flatbuffer bytes, after the IPC framing (the
//! `0xFFFFFFFF` continuation marker and the `i32` metadata length) has been stripped; the body
//! that follows the metadata is not read here.

use super::schema::{KeyValues, Schema};
use super::{Int64s, enum_field, invalid, missing};
use crate::datatype::CompressionCodec;
use crate::error::FormatResult;
use crate::flatbuffer::{Element, Table, Vector};

// Message slots (the `header` union takes two: its tag, then its table).
const MESSAGE_VERSION: u16 = 0;
const MESSAGE_HEADER_TYPE: u16 = 1;
const MESSAGE_HEADER: u16 = 2;
const MESSAGE_BODY_LENGTH: u16 = 3;
const MESSAGE_CUSTOM_METADATA: u16 = 4;

// RecordBatch slots.
const RECORD_BATCH_LENGTH: u16 = 0;
const RECORD_BATCH_NODES: u16 = 1;
const RECORD_BATCH_BUFFERS: u16 = 2;
const RECORD_BATCH_COMPRESSION: u16 = 3;
const RECORD_BATCH_VARIADIC_BUFFER_COUNTS: u16 = 4;

// DictionaryBatch slots.
const DICTIONARY_BATCH_ID: u16 = 0;
const DICTIONARY_BATCH_DATA: u16 = 1;
const DICTIONARY_BATCH_IS_DELTA: u16 = 2;

// BodyCompression slots.
const BODY_COMPRESSION_CODEC: u16 = 0;
const BODY_COMPRESSION_METHOD: u16 = 1;

// `MessageHeader` union tags (0 is NONE).
const HEADER_SCHEMA: u8 = 1;
const HEADER_DICTIONARY_BATCH: u8 = 2;
const HEADER_RECORD_BATCH: u8 = 3;
const HEADER_TENSOR: u8 = 4;
const HEADER_SPARSE_TENSOR: u8 = 5;

/// Version of the metadata format a message or file was written with (`MetadataVersion`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum MetadataVersion {
    /// 0.1.0 (October 2016).
    V1,
    /// 0.2.0 (February 2017).
    V2,
    /// 0.3.0 to 0.7.1 (May to December 2017).
    V3,
    /// 0.8.0 and later (December 2017).
    V4,
    /// 1.0.0 and later (July 2020); unions have no validity bitmap.
    V5,
}

impl MetadataVersion {
    /// The version as its `Schema.fbs` enum value, or `None` for an unknown value.
    pub fn from_fb(value: i16) -> Option<Self> {
        Some(match value {
            0 => MetadataVersion::V1,
            1 => MetadataVersion::V2,
            2 => MetadataVersion::V3,
            3 => MetadataVersion::V4,
            4 => MetadataVersion::V5,
            _ => return None,
        })
    }
}

/// Reads a `MetadataVersion` field (V1 when absent, as the `.fbs` default says).
pub(super) fn version(table: &Table<'_>, slot: u16, what: &'static str) -> FormatResult<MetadataVersion> {
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
        let body_length = table.i64(MESSAGE_BODY_LENGTH, 0, "Message.bodyLength")?;
        Ok(Message { table, body_length })
    }

    /// The metadata version the message was written with (`Message.version`).
    pub fn version(&self) -> FormatResult<MetadataVersion> {
        version(&self.table, MESSAGE_VERSION, "Message.version")
    }

    /// The raw `MessageHeader` union tag (`Message.header_type`; 0 when absent).
    pub fn header_type(&self) -> FormatResult<u8> {
        self.table.u8(MESSAGE_HEADER_TYPE, 0, "Message.header_type")
    }

    /// The header (`Message.header`); an absent or `NONE` header is an error.
    pub fn header(&self) -> FormatResult<MessageHeader<'a>> {
        let tag = self.header_type()?;
        if tag > HEADER_SPARSE_TENSOR {
            return Err(invalid("Message.header union tag", tag, &self.table));
        }
        let Some((tag, t)) = self
            .table
            .union(MESSAGE_HEADER_TYPE, MESSAGE_HEADER, "Message.header")?
        else {
            return Err(missing("Message.header", &self.table));
        };
        Ok(match tag {
            HEADER_SCHEMA => MessageHeader::Schema(Schema::from_table(t)),
            HEADER_DICTIONARY_BATCH => MessageHeader::DictionaryBatch(DictionaryBatch::from_table(t)?),
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
        KeyValues::read(&self.table, MESSAGE_CUSTOM_METADATA, "Message.custom_metadata")
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
        let length = table.i64(RECORD_BATCH_LENGTH, 0, "RecordBatch.length")?;
        Ok(RecordBatch { table, length })
    }

    /// Number of rows, as written (`RecordBatch.length`).
    pub fn length(&self) -> i64 {
        self.length
    }

    /// One node per field, in pre-order (`RecordBatch.nodes`; empty when absent).
    pub fn nodes(&self) -> FormatResult<FieldNodes<'a>> {
        Ok(self
            .table
            .vector(RECORD_BATCH_NODES, "RecordBatch.nodes")?
            .unwrap_or_else(Vector::empty))
    }

    /// The body's buffers, in pre-order (`RecordBatch.buffers`; empty when absent).
    pub fn buffers(&self) -> FormatResult<Buffers<'a>> {
        Ok(self
            .table
            .vector(RECORD_BATCH_BUFFERS, "RecordBatch.buffers")?
            .unwrap_or_else(Vector::empty))
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

impl Element for FieldNode {
    const SIZE: usize = 16;

    fn from_le_slice(bytes: &[u8]) -> Option<Self> {
        let (length, null_count) = bytes.split_at_checked(8)?;
        Some(FieldNode {
            length: i64::from_le_slice(length)?,
            null_count: i64::from_le_slice(null_count)?,
        })
    }
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

impl Element for Buffer {
    const SIZE: usize = 16;

    fn from_le_slice(bytes: &[u8]) -> Option<Self> {
        let (offset, length) = bytes.split_at_checked(8)?;
        Some(Buffer {
            offset: i64::from_le_slice(offset)?,
            length: i64::from_le_slice(length)?,
        })
    }
}

/// A record batch's buffers.
pub type Buffers<'a> = Vector<'a, Buffer>;

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
        let codec = t.i8(BODY_COMPRESSION_CODEC, 0, "BodyCompression.codec")?;
        let codec =
            CompressionCodec::from_fb(codec).ok_or_else(|| invalid("BodyCompression.codec", codec, t))?;
        let method = t.i8(BODY_COMPRESSION_METHOD, 0, "BodyCompression.method")?;
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
        let id = table.i64(DICTIONARY_BATCH_ID, 0, "DictionaryBatch.id")?;
        let is_delta = table.bool(DICTIONARY_BATCH_IS_DELTA, false, "DictionaryBatch.isDelta")?;
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
        match self
            .table
            .table(DICTIONARY_BATCH_DATA, "DictionaryBatch.data")?
        {
            Some(t) => RecordBatch::from_table(t),
            None => Err(missing("DictionaryBatch.data", &self.table)),
        }
    }

    /// Whether the values are appended to the dictionary rather than replacing it
    /// (`DictionaryBatch.isDelta`).
    pub fn is_delta(&self) -> bool {
        self.is_delta
    }
}
