//! Entry points for the fuzz targets in `fuzz/`. Unstable and hidden: not part of the API.
//!
//! They reach the message decoder directly, without a file or stream around it, so a fuzzer
//! spends its time on the parts that take untrusted bytes.

use super::decode::{Body, DecodeContext, decode_columns};
use super::dictionary::Dictionaries;
use super::{Projection, field_budget};
use crate::array::RecordBatch;
use crate::bytes::Bytes;
use crate::datatype::Endianness;
use crate::error::FormatResult;
use crate::format::{self, MessageHeader};
use crate::schema::Schema;
use alloc::sync::Arc;

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
    let body = Body::Whole(Bytes::Borrowed(body));
    let dictionaries = Dictionaries::default();
    Ok(match message.header()? {
        MessageHeader::Schema(fb) => {
            Decoded::Schema(Schema::from_fb(fb, field_budget(metadata.len()))?)
        }
        MessageHeader::RecordBatch(header) => {
            let (columns, rows) = decode_columns(
                schema.fields(),
                &Projection::All,
                header,
                &body,
                &dictionaries,
                context,
            )?;
            Decoded::RecordBatch(RecordBatch::try_new(Arc::clone(schema), columns, rows)?)
        }
        MessageHeader::DictionaryBatch(header) => {
            let fields = super::dictionary::dictionary_fields(schema);
            let Some(field) = fields.get(&header.id()) else {
                return Ok(Decoded::Other);
            };
            let (columns, _) = decode_columns(
                core::slice::from_ref(field),
                &Projection::All,
                header.data()?,
                &body,
                &dictionaries,
                context,
            )?;
            Decoded::Dictionary(header.id(), columns.first().map_or(0, |c| c.len()))
        }
        _ => Decoded::Other,
    })
}
