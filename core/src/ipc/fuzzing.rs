//! Entry points for the fuzz targets in `fuzz/` (and the hostile-input tests), with the `fuzzing`
//! feature. Unstable and hidden: not part of the API.
//!
//! It uses `concat`, `columns`, `dictionary` and `projection` beside it and the layers below `ipc`.
//!
//! They reach the message decoder directly, without a file or stream around it, so a fuzzer
//! spends its time on the parts that take untrusted bytes.

use super::columns::{DecodeContext, FetchedBody, decode_columns};
pub use super::concat::concat;
use super::dictionary::Dictionaries;
use super::{Projection, field_budget};
use crate::array::RecordBatch;
use crate::bytes::Bytes;
use crate::compression::Decompressor;
use crate::datatype::{DataType, Endianness, IntType, TimeUnit, UnionMode};
use crate::error::FormatResult;
use crate::format::{self, MessageHeader};
use crate::schema::{DictionaryEncoding, Field, Schema};
use alloc::sync::Arc;
use alloc::vec;
use alloc::vec::Vec;

/// What a message decoded to.
#[derive(Debug)]
pub enum Decoded<'a> {
    /// A schema message.
    Schema(Schema),
    /// A record batch, decoded against the given schema.
    RecordBatch(RecordBatch<'a>),
    /// A dictionary batch: its id and the number of values.
    Dictionary(i64, usize),
    /// A message type the readers reject.
    Other,
}

/// Parses one message flatbuffer and decodes its body against `schema` (dictionary batches
/// against the schema's dictionary fields), as the readers would, with no dictionaries known.
pub fn decode_message<'a>(
    schema: &Arc<Schema>,
    metadata: &[u8],
    body: &'a [u8],
) -> FormatResult<Decoded<'a>> {
    let message = format::Message::parse(metadata)?;
    let context = DecodeContext {
        big_endian: schema.endianness() == Endianness::Big,
        version: message.version()?,
        max_decompressed: 1 << 24,
    };
    let body = FetchedBody::Whole(Bytes::borrowed(body));
    let dictionaries = Dictionaries::default();
    let mut decompressor = Decompressor::new();
    let mut decode = |fields: &[Field], header| {
        decode_columns(
            fields,
            &Projection::All,
            header,
            &body,
            &dictionaries,
            context,
            &mut decompressor,
        )
    };
    Ok(match message.header()? {
        MessageHeader::Schema(fb) => {
            Decoded::Schema(Schema::from_fb(fb, field_budget(metadata.len()))?)
        }
        MessageHeader::RecordBatch(header) => {
            let (columns, rows) = decode(schema.fields(), header)?;
            Decoded::RecordBatch(RecordBatch::try_new(Arc::clone(schema), columns, rows)?)
        }
        MessageHeader::DictionaryBatch(header) => {
            let fields = super::dictionary::dictionary_fields(schema);
            let Some(field) = fields.get(&header.id()) else {
                return Ok(Decoded::Other);
            };
            let (columns, _) = decode(core::slice::from_ref(field), header.data()?)?;
            Decoded::Dictionary(header.id(), columns.first().map_or(0, |c| c.len()))
        }
        _ => Decoded::Other,
    })
}

/// The schemas the `flatbuffer_message` target decodes against (its first input byte picks one),
/// covering flat, variable-length, nested, view, union, run-end, dictionary and temporal types.
pub fn schemas() -> Vec<Arc<Schema>> {
    let f = |name: &str, t: DataType| Field::new(name, t, true);
    let item = |t: DataType| Arc::new(f("item", t));
    let schema = |fields: Vec<Field>| Arc::new(Schema::new(fields));
    vec![
        schema(vec![
            f("i", DataType::Int32),
            f("s", DataType::Utf8),
            f("b", DataType::Boolean),
        ]),
        schema(vec![f("l", DataType::List(item(DataType::Int64)))]),
        schema(vec![f(
            "st",
            DataType::Struct(vec![f("x", DataType::Float64), f("y", DataType::LargeUtf8)].into()),
        )]),
        schema(vec![
            f("v", DataType::Utf8View),
            f("bv", DataType::BinaryView),
        ]),
        schema(vec![f(
            "u",
            DataType::Union(
                vec![f("a", DataType::Int8), f("b", DataType::Utf8)].into(),
                vec![3, 7].into(),
                UnionMode::Dense,
            ),
        )]),
        schema(vec![f(
            "r",
            DataType::RunEndEncoded(Arc::new([
                Field::new("run_ends", DataType::Int32, false),
                f("values", DataType::Utf8),
            ])),
        )]),
        schema(vec![
            f("d", DataType::Utf8).with_dictionary(DictionaryEncoding {
                id: 0,
                index_type: IntType {
                    bit_width: 16,
                    signed: true,
                },
                ordered: false,
            }),
            f(
                "t",
                DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
            ),
        ]),
        schema(vec![
            f("lv", DataType::ListView(item(DataType::Int16))),
            f(
                "fsl",
                DataType::FixedSizeList(item(DataType::Decimal128(10, 2)), 3),
            ),
            f(
                "m",
                DataType::Map(
                    Arc::new(Field::new(
                        "entries",
                        DataType::Struct(
                            vec![
                                Field::new("key", DataType::Utf8, false),
                                f("value", DataType::Int32),
                            ]
                            .into(),
                        ),
                        false,
                    )),
                    false,
                ),
            ),
        ]),
    ]
}
