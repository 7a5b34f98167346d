//! `Message.fbs` and `File.fbs` flatbuffers: the schema, record batch and dictionary batch
//! messages, and the file footer.
//!
//! It uses `schema` beside it and, of the crate, the flatbuffer builder, the format's slots and
//! structs, the data types, the schema and the errors.
//!
//! Data enters as the owned schema and the layout of an encoded body ([`BatchLayout`]); each
//! function returns one finished flatbuffer, which [`format::Message::parse`] or
//! [`format::Footer::parse`] reads back. The IPC framing around a message (continuation marker,
//! length, padding) is [`frame`]'s business.
//!
//! [`format::Message::parse`]: crate::format::Message::parse
//! [`format::Footer::parse`]: crate::format::Footer::parse

use super::schema::{metadata_vector, schema_table};
use crate::datatype::CompressionCodec;
use crate::error::{FormatErrorKind, FormatResult, Limit};
use crate::flatbuffer_builder::{Builder, Offset, kind};
use crate::format::slots::*;
use crate::format::{Block, Buffer, FieldNode};
use crate::format::{CONTINUATION, MetadataVersion};
use crate::schema::{Metadata, Schema};
use alloc::vec::Vec;

/// What a `RecordBatch` table says about an encoded body.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct BatchLayout {
    /// Number of rows.
    pub length: i64,
    /// One node per array, in pre-order.
    pub nodes: Vec<FieldNode>,
    /// Where each buffer lies in the body, in pre-order.
    pub buffers: Vec<Buffer>,
    /// The number of variadic buffers of each view array, in pre-order (empty without views).
    pub variadic_buffer_counts: Vec<i64>,
    /// The body's codec, if compressed.
    pub compression: Option<CompressionCodec>,
}

/// Writes a `RecordBatch` table.
fn record_batch_table(b: &mut Builder, layout: &BatchLayout) -> Offset<kind::Table> {
    let nodes = b.create_vector(&layout.nodes);
    let buffers = b.create_vector(&layout.buffers);
    let variadic = (!layout.variadic_buffer_counts.is_empty())
        .then(|| b.create_vector(&layout.variadic_buffer_counts));
    let compression = layout.compression.map(|codec| {
        b.start_table();
        b.add_scalar(BODY_COMPRESSION_CODEC, codec as i8);
        b.add_scalar(BODY_COMPRESSION_METHOD, METHOD_BUFFER);
        b.end_table()
    });
    b.start_table();
    b.add_scalar(RECORD_BATCH_LENGTH, layout.length);
    b.add_offset(RECORD_BATCH_NODES, nodes);
    b.add_offset(RECORD_BATCH_BUFFERS, buffers);
    if let Some(compression) = compression {
        b.add_offset(RECORD_BATCH_COMPRESSION, compression);
    }
    if let Some(variadic) = variadic {
        b.add_offset(RECORD_BATCH_VARIADIC_BUFFER_COUNTS, variadic);
    }
    b.end_table()
}

/// Writes the `Message` table around a header, and finishes the buffer.
fn message(
    mut b: Builder,
    tag: u8,
    header: Offset<kind::Table>,
    body_length: u64,
) -> FormatResult<Vec<u8>> {
    let body_length = i64::try_from(body_length).map_err(|_| FormatErrorKind::LimitExceeded {
        what: Limit::MessageBody,
        requested: body_length,
        limit: i64::MAX as u64,
    })?;
    b.start_table();
    b.add_scalar(MESSAGE_VERSION, MetadataVersion::V5 as i16);
    b.add_union(MESSAGE_HEADER_TYPE, MESSAGE_HEADER, tag, header);
    b.add_scalar(MESSAGE_BODY_LENGTH, body_length);
    let root = b.end_table();
    b.finish(root)
}

/// The flatbuffer of a schema message.
pub(super) fn schema_message(schema: &Schema) -> FormatResult<Vec<u8>> {
    let mut b = Builder::new();
    let schema = schema_table(&mut b, schema)?;
    message(b, HEADER_SCHEMA, schema, 0)
}

/// The flatbuffer of a record batch message whose body is `body_length` bytes.
pub(super) fn record_batch_message(
    layout: &BatchLayout,
    body_length: u64,
) -> FormatResult<Vec<u8>> {
    let mut b = Builder::new();
    let batch = record_batch_table(&mut b, layout);
    message(b, HEADER_RECORD_BATCH, batch, body_length)
}

/// The flatbuffer of a dictionary batch message whose body is `body_length` bytes.
pub(super) fn dictionary_batch_message(
    id: i64,
    is_delta: bool,
    layout: &BatchLayout,
    body_length: u64,
) -> FormatResult<Vec<u8>> {
    let mut b = Builder::new();
    let data = record_batch_table(&mut b, layout);
    b.start_table();
    b.add_scalar(DICTIONARY_BATCH_ID, id);
    b.add_offset(DICTIONARY_BATCH_DATA, data);
    b.add_scalar(DICTIONARY_BATCH_IS_DELTA, is_delta);
    let header = b.end_table();
    message(b, HEADER_DICTIONARY_BATCH, header, body_length)
}

/// The flatbuffer of a file footer.
pub(super) fn footer(
    schema: &Schema,
    dictionaries: &[Block],
    record_batches: &[Block],
    metadata: &Metadata,
) -> FormatResult<Vec<u8>> {
    let mut b = Builder::new();
    let schema = schema_table(&mut b, schema)?;
    let dictionaries = b.create_vector(dictionaries);
    let record_batches = b.create_vector(record_batches);
    let metadata = metadata_vector(&mut b, metadata);
    b.start_table();
    b.add_scalar(FOOTER_VERSION, MetadataVersion::V5 as i16);
    b.add_offset(FOOTER_SCHEMA, schema);
    b.add_offset(FOOTER_DICTIONARIES, dictionaries);
    b.add_offset(FOOTER_RECORD_BATCHES, record_batches);
    if let Some(metadata) = metadata {
        b.add_offset(FOOTER_CUSTOM_METADATA, metadata);
    }
    let root = b.end_table();
    b.finish(root)
}

/// Frames a message flatbuffer that starts at offset `at`: the continuation marker, the `i32`
/// length of the flatbuffer plus its padding, the flatbuffer, and zeros up to the next multiple
/// of `alignment` from the start (at least 8, so `at` must be a multiple of 8).
pub(super) fn frame(flatbuffer: &[u8], alignment: usize, at: usize) -> FormatResult<Vec<u8>> {
    let prefix = CONTINUATION.len() + 4;
    let unpadded = prefix + flatbuffer.len();
    let padded = (at + unpadded).next_multiple_of(alignment.max(8)) - at;
    // A file `Block` records the whole framed length as an `i32`.
    if i32::try_from(padded).is_err() {
        return Err(FormatErrorKind::LimitExceeded {
            what: Limit::MessageMetadata,
            requested: padded as u64,
            limit: i32::MAX as u64,
        }
        .into());
    }
    let length = (padded - prefix) as i32;
    let mut out = Vec::with_capacity(padded);
    out.extend_from_slice(&CONTINUATION);
    out.extend_from_slice(&length.to_le_bytes());
    out.extend_from_slice(flatbuffer);
    out.resize(padded, 0);
    Ok(out)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;
    use crate::format::{self, MessageHeader, MetadataVersion, block, buffer, node};

    fn layout() -> BatchLayout {
        BatchLayout {
            length: 3,
            nodes: alloc::vec![node(3, 1), node(2, 0)],
            buffers: alloc::vec![buffer(0, 1), buffer(64, 12)],
            variadic_buffer_counts: alloc::vec![2],
            compression: Some(CompressionCodec::Zstd),
        }
    }

    fn check_batch(batch: format::RecordBatch<'_>, expected: &BatchLayout) {
        assert_eq!(batch.length(), expected.length);
        assert_eq!(
            batch.nodes().unwrap().iter().collect::<Vec<_>>(),
            expected.nodes
        );
        assert_eq!(
            batch.buffers().unwrap().iter().collect::<Vec<_>>(),
            expected.buffers
        );
        // No counts are written when there are none.
        let counts = batch.variadic_buffer_counts().unwrap();
        let counts = counts.map(|c| c.iter().collect::<Vec<_>>());
        let expected_counts = &expected.variadic_buffer_counts;
        assert_eq!(
            counts.as_ref(),
            Some(expected_counts).filter(|c| !c.is_empty())
        );
        assert_eq!(
            batch.compression().unwrap().map(|c| c.codec),
            expected.compression
        );
    }

    #[test]
    fn record_batch_and_dictionary_batch_messages_read_back() {
        let layout = layout();
        let plain = BatchLayout {
            variadic_buffer_counts: Vec::new(),
            compression: None,
            ..layout.clone()
        };
        for (layout, body_length) in [(&layout, 128), (&plain, 0)] {
            let buf = record_batch_message(layout, body_length).unwrap();
            let message = format::Message::parse(&buf).unwrap();
            assert_eq!(message.version().unwrap(), MetadataVersion::V5);
            assert_eq!(u64::try_from(message.body_length()), Ok(body_length));
            let MessageHeader::RecordBatch(batch) = message.header().unwrap() else {
                panic!("not a record batch");
            };
            check_batch(batch, layout);
        }
        for is_delta in [false, true] {
            let buf = dictionary_batch_message(-4, is_delta, &layout, 64).unwrap();
            let message = format::Message::parse(&buf).unwrap();
            let MessageHeader::DictionaryBatch(dict) = message.header().unwrap() else {
                panic!("not a dictionary batch");
            };
            assert_eq!((dict.id(), dict.is_delta()), (-4, is_delta));
            check_batch(dict.data().unwrap(), &layout);
        }
    }

    #[test]
    fn footers_read_back() {
        let schema = super::super::schema::tests::every_type();
        let blocks =
            |n: i64| -> Vec<Block> { (0..n).map(|i| block(64 * i, 64, 128 * i)).collect() };
        let metadata = alloc::vec![(
            alloc::string::String::from("k"),
            alloc::string::String::from("v")
        )];
        let buf = footer(&schema, &blocks(2), &blocks(3), &metadata).unwrap();
        let footer = format::Footer::parse(&buf).unwrap();
        assert_eq!(footer.version().unwrap(), MetadataVersion::V5);
        assert_eq!(
            footer.dictionaries().unwrap().iter().collect::<Vec<_>>(),
            blocks(2)
        );
        assert_eq!(
            footer.record_batches().unwrap().iter().collect::<Vec<_>>(),
            blocks(3)
        );
        let kv = footer.custom_metadata().unwrap().get(0).unwrap();
        assert_eq!((kv.key, kv.value), ("k", "v"));
        let back = Schema::from_fb(footer.schema().unwrap(), 10_000).unwrap();
        assert_eq!(back, schema);
    }

    #[test]
    fn frames_pad_to_the_alignment() {
        for alignment in [8, 16, 32, 64] {
            for len in [0, 1, 7, 8, 55, 56, 57, 200] {
                let fb = alloc::vec![0xAB; len];
                let framed = frame(&fb, alignment, 0).unwrap();
                assert_eq!(framed.len() % alignment, 0);
                assert!(framed.len() < 8 + len + alignment);
                assert_eq!(&framed[..4], &CONTINUATION);
                let declared = i32::from_le_bytes(framed[4..8].try_into().unwrap()) as usize;
                assert_eq!(declared, framed.len() - 8);
                assert_eq!(&framed[8..8 + len], fb.as_slice());
                assert!(framed[8 + len..].iter().all(|b| *b == 0));
            }
        }
    }
}
