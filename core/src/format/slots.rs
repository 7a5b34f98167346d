//! The layout of Arrow's flatbuffers: vtable slots of every table field, the enum and union
//! values of `Schema.fbs`, `Message.fbs` and `File.fbs` in declaration order, and the byte layout
//! of the `FieldNode`, `Buffer` and `Block` structs (each written beside its struct with
//! `fb_struct!`).
//!
//! One list shared by the readers in this module and the IPC writer, so the two cannot disagree.
//! It uses the flatbuffer reader's `Element` and, with `alloc`, the builder's `Push`; the views
//! of this module use it.

/// Reads ([`Element`](crate::flatbuffer::Element)) and, with `alloc`, writes (`Push`) a
/// flatbuffer struct of `SIZE` bytes whose integer fields lie at the given byte offsets,
/// 8-aligned, with zero padding between.
macro_rules! fb_struct {
    ($name:ident: $size:literal { $($field:ident: $t:ty = $at:literal),* }) => {
        impl crate::flatbuffer::Element for $name {
            const SIZE: usize = $size;

            fn from_le_slice(bytes: &[u8]) -> Option<Self> {
                if bytes.len() != $size {
                    return None;
                }
                let field = |at: usize, len: usize| bytes.get(at..at + len);
                Some($name { $($field: <$t>::from_le_slice(field($at, size_of::<$t>())?)?),* })
            }
        }

        #[cfg(feature = "alloc")]
        impl crate::flatbuffer_builder::Push for $name {
            const ALIGN: usize = 8;
            type Bytes = [u8; $size];

            fn to_le(&self) -> [u8; $size] {
                let mut out = [0u8; $size];
                $(if let Some(place) = out.get_mut($at..$at + size_of::<$t>()) {
                    place.copy_from_slice(&self.$field.to_le_bytes());
                })*
                out
            }
        }
    };
}

pub(crate) use fb_struct;

// Footer slots.
pub(crate) const FOOTER_VERSION: u16 = 0;
pub(crate) const FOOTER_SCHEMA: u16 = 1;
pub(crate) const FOOTER_DICTIONARIES: u16 = 2;
pub(crate) const FOOTER_RECORD_BATCHES: u16 = 3;
pub(crate) const FOOTER_CUSTOM_METADATA: u16 = 4;

// Message slots (the `header` union takes two: its tag, then its table).
pub(crate) const MESSAGE_VERSION: u16 = 0;
pub(crate) const MESSAGE_HEADER_TYPE: u16 = 1;
pub(crate) const MESSAGE_HEADER: u16 = 2;
pub(crate) const MESSAGE_BODY_LENGTH: u16 = 3;
pub(crate) const MESSAGE_CUSTOM_METADATA: u16 = 4;

// RecordBatch slots.
pub(crate) const RECORD_BATCH_LENGTH: u16 = 0;
pub(crate) const RECORD_BATCH_NODES: u16 = 1;
pub(crate) const RECORD_BATCH_BUFFERS: u16 = 2;
pub(crate) const RECORD_BATCH_COMPRESSION: u16 = 3;
pub(crate) const RECORD_BATCH_VARIADIC_BUFFER_COUNTS: u16 = 4;

// DictionaryBatch slots.
pub(crate) const DICTIONARY_BATCH_ID: u16 = 0;
pub(crate) const DICTIONARY_BATCH_DATA: u16 = 1;
pub(crate) const DICTIONARY_BATCH_IS_DELTA: u16 = 2;

// BodyCompression slots.
pub(crate) const BODY_COMPRESSION_CODEC: u16 = 0;
pub(crate) const BODY_COMPRESSION_METHOD: u16 = 1;

// `MessageHeader` union tags (0 is NONE).
pub(crate) const HEADER_SCHEMA: u8 = 1;
pub(crate) const HEADER_DICTIONARY_BATCH: u8 = 2;
pub(crate) const HEADER_RECORD_BATCH: u8 = 3;
pub(crate) const HEADER_TENSOR: u8 = 4;
pub(crate) const HEADER_SPARSE_TENSOR: u8 = 5;

// Schema slots.
pub(crate) const SCHEMA_ENDIANNESS: u16 = 0;
pub(crate) const SCHEMA_FIELDS: u16 = 1;
pub(crate) const SCHEMA_CUSTOM_METADATA: u16 = 2;
pub(crate) const SCHEMA_FEATURES: u16 = 3;

// Field slots (the `type` union takes two: its tag, then its table).
pub(crate) const FIELD_NAME: u16 = 0;
pub(crate) const FIELD_NULLABLE: u16 = 1;
pub(crate) const FIELD_TYPE_TYPE: u16 = 2;
pub(crate) const FIELD_TYPE: u16 = 3;
pub(crate) const FIELD_DICTIONARY: u16 = 4;
pub(crate) const FIELD_CHILDREN: u16 = 5;
pub(crate) const FIELD_CUSTOM_METADATA: u16 = 6;

// DictionaryEncoding slots.
pub(crate) const DICTIONARY_ID: u16 = 0;
pub(crate) const DICTIONARY_INDEX_TYPE: u16 = 1;
pub(crate) const DICTIONARY_IS_ORDERED: u16 = 2;
pub(crate) const DICTIONARY_KIND: u16 = 3;

// KeyValue slots.
pub(crate) const KEY_VALUE_KEY: u16 = 0;
pub(crate) const KEY_VALUE_VALUE: u16 = 1;

// `Type` union tags, in `Schema.fbs` order (0 is NONE).
pub(crate) const TYPE_NULL: u8 = 1;
pub(crate) const TYPE_INT: u8 = 2;
pub(crate) const TYPE_FLOATING_POINT: u8 = 3;
pub(crate) const TYPE_BINARY: u8 = 4;
pub(crate) const TYPE_UTF8: u8 = 5;
pub(crate) const TYPE_BOOL: u8 = 6;
pub(crate) const TYPE_DECIMAL: u8 = 7;
pub(crate) const TYPE_DATE: u8 = 8;
pub(crate) const TYPE_TIME: u8 = 9;
pub(crate) const TYPE_TIMESTAMP: u8 = 10;
pub(crate) const TYPE_INTERVAL: u8 = 11;
pub(crate) const TYPE_LIST: u8 = 12;
pub(crate) const TYPE_STRUCT: u8 = 13;
pub(crate) const TYPE_UNION: u8 = 14;
pub(crate) const TYPE_FIXED_SIZE_BINARY: u8 = 15;
pub(crate) const TYPE_FIXED_SIZE_LIST: u8 = 16;
pub(crate) const TYPE_MAP: u8 = 17;
pub(crate) const TYPE_DURATION: u8 = 18;
pub(crate) const TYPE_LARGE_BINARY: u8 = 19;
pub(crate) const TYPE_LARGE_UTF8: u8 = 20;
pub(crate) const TYPE_LARGE_LIST: u8 = 21;
pub(crate) const TYPE_RUN_END_ENCODED: u8 = 22;
pub(crate) const TYPE_BINARY_VIEW: u8 = 23;
pub(crate) const TYPE_UTF8_VIEW: u8 = 24;
pub(crate) const TYPE_LIST_VIEW: u8 = 25;
pub(crate) const TYPE_LARGE_LIST_VIEW: u8 = 26;

// Values only the IPC writer writes.
/// `BodyCompressionMethod.BUFFER`.
#[cfg(feature = "alloc")]
pub(crate) const METHOD_BUFFER: i8 = 0;
