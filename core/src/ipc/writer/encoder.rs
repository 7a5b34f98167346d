//! [`MessageEncoder`]: the writers' core, a state machine that turns a schema and record batches
//! into encapsulated IPC messages, and does no I/O.
//!
//! It uses `body`, `dictionary`, `flatten` and `message` beside it and, of the crate, the arrays
//! and their bytes, the format, the schema and the errors.
//!
//! A schema enters [`MessageEncoder::new`]; each [`RecordBatch`] enters
//! [`MessageEncoder::encode`], and leaves as the messages to write in order: the dictionary
//! batches the reader needs first (whole dictionaries the first time, deltas when one grows,
//! replacements in streams), then the record batch. Each [`EncodedMessage`] holds its framed
//! metadata and its body's pieces, borrowed from the batch where no copy was needed. The
//! encoder's dictionary state changes only when `encode` succeeds, so a batch that cannot be
//! written leaves the encoder as it was.

use super::WriterOptions;
use super::body::lay_out;
use super::dictionary::{self, DictionaryTracker, ToSend, UsedDictionary};
use super::flatten::encode_columns;
use super::message::{self, BatchLayout};
use crate::array::{ArrayView, RecordBatch};
use crate::bytes::Bytes;
use crate::error::{FormatError, FormatErrorKind, FormatResult};
use crate::format::Block;
use crate::schema::{Field, Metadata, Schema};
use alloc::sync::Arc;
use alloc::vec::Vec;

/// Which IPC format messages are encoded for: streams may replace a dictionary, files may not.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum IpcFormat {
    /// The stream format.
    Stream,
    /// The file format.
    File,
}

/// What an encoded message carries (its `MessageHeader`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum MessageKind {
    /// The schema.
    Schema,
    /// A dictionary batch (whole or delta).
    DictionaryBatch,
    /// A record batch.
    RecordBatch,
}

/// One encapsulated message, ready to write: `metadata`, then every piece of `body` in order.
#[derive(Debug, Clone)]
pub struct EncodedMessage<'a> {
    /// What the message carries.
    pub kind: MessageKind,
    /// The continuation marker, the metadata length, the `Message` flatbuffer and its padding;
    /// a multiple of the alignment long (a file `Block`'s `metaDataLength`).
    pub metadata: Vec<u8>,
    /// The body: buffers (borrowed from the batch or compressed), prefixes and padding.
    pub body: Vec<Bytes<'a>>,
    /// Total length of `body`, a multiple of the alignment.
    pub body_len: u64,
}

impl EncodedMessage<'_> {
    /// Bytes the message takes: metadata plus body.
    pub fn len(&self) -> u64 {
        self.metadata.len() as u64 + self.body_len
    }

    /// Whether the message takes no bytes (never: metadata is at least 8 bytes).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The file `Block` of this message when it starts at `offset`.
    pub fn block(&self, offset: u64) -> Block {
        Block {
            offset: offset as i64,
            meta_data_length: self.metadata.len() as i32,
            body_length: self.body_len as i64,
        }
    }
}

/// Encodes a schema and record batches into IPC messages, remembering which dictionaries the
/// reader holds; does no I/O.
///
/// ```
/// use quiver::ipc::{IpcFormat, MessageEncoder, MessageKind, WriterOptions};
/// use quiver::{datatype::DataType, schema::Field, schema::Schema};
///
/// let schema = Schema::new(vec![Field::new("x", DataType::Int32, true)]);
/// let encoder = MessageEncoder::new(schema, WriterOptions::default(), IpcFormat::Stream)?;
/// let message = encoder.schema_message()?;
/// assert_eq!(message.kind, MessageKind::Schema);
/// assert_eq!(&message.metadata[..4], &[0xFF; 4]); // the continuation marker
/// assert_eq!(message.metadata.len() % 64, 0);
/// # Ok::<(), quiver::error::FormatError>(())
/// ```
#[derive(Debug)]
pub struct MessageEncoder {
    schema: Arc<Schema>,
    options: WriterOptions,
    format: IpcFormat,
    dictionaries: DictionaryTracker,
    batches: u64,
}

impl MessageEncoder {
    /// An encoder for `schema`; fails if the options are invalid or the schema cannot be written.
    pub fn new(
        schema: impl Into<Arc<Schema>>,
        options: WriterOptions,
        format: IpcFormat,
    ) -> FormatResult<Self> {
        options.validate()?;
        let encoder = MessageEncoder {
            schema: schema.into(),
            options,
            format,
            dictionaries: DictionaryTracker::default(),
            batches: 0,
        };
        // Fail now, not at the first message, if the schema cannot be written.
        message::schema_message(&encoder.schema)?;
        Ok(encoder)
    }

    /// The schema every batch must have.
    pub fn schema(&self) -> &Arc<Schema> {
        &self.schema
    }

    /// The options messages are encoded with.
    pub fn options(&self) -> &WriterOptions {
        &self.options
    }

    /// How many record batches have been encoded.
    pub fn num_batches(&self) -> u64 {
        self.batches
    }

    /// The schema message that opens a stream or file. In a file it follows the leading magic
    /// and its padding to 8 bytes, and is padded so that the next message starts at a multiple
    /// of the alignment.
    pub fn schema_message(&self) -> FormatResult<EncodedMessage<'static>> {
        let flatbuffer = message::schema_message(&self.schema)?;
        let at = match self.format {
            IpcFormat::File => crate::format::LEADING_LEN as usize,
            _ => 0,
        };
        Ok(EncodedMessage {
            kind: MessageKind::Schema,
            metadata: message::frame(&flatbuffer, self.options.alignment, at)?,
            body: Vec::new(),
            body_len: 0,
        })
    }

    /// The messages that write `batch`: the dictionary batches it needs, then the record batch.
    ///
    /// Fails, changing nothing, if the batch's fields differ from the schema's, if an array
    /// cannot be encoded, if columns that share a dictionary id hold dictionaries of which
    /// neither starts the other, or (files only) if a dictionary was replaced rather than
    /// extended.
    pub fn encode<'a>(&mut self, batch: &RecordBatch<'a>) -> FormatResult<Vec<EncodedMessage<'a>>> {
        let index = self.batches;
        let messages = self.encode_batch(batch).map_err(|e| e.in_batch(index))?;
        self.batches += 1;
        Ok(messages)
    }

    fn encode_batch<'a>(
        &mut self,
        batch: &RecordBatch<'a>,
    ) -> FormatResult<Vec<EncodedMessage<'a>>> {
        let fields = self.schema.fields();
        if !Arc::ptr_eq(batch.schema(), &self.schema) && batch.schema().fields() != fields {
            let theirs = batch.schema().fields();
            let differs = fields
                .iter()
                .zip(theirs)
                .position(|(ours, theirs)| ours != theirs)
                .unwrap_or(fields.len().min(theirs.len()));
            return Err(FormatError::from(FormatErrorKind::InvalidValue {
                what: "record batch field (index) that differs from the writer's schema",
                value: differs as i64,
            })
            .in_field(differs));
        }
        let mut used = Vec::new();
        for (i, (field, column)) in fields.iter().zip(batch.columns()).enumerate() {
            dictionary::collect(field, column, &mut used).map_err(|e| e.in_field(i))?;
        }
        let used = dictionary::merge_shared(used, &self.schema)?;
        let mut messages = Vec::with_capacity(used.len() + 1);
        // What the reader will hold once this batch's dictionary batches are read, applied to
        // the tracker only when the whole batch encodes.
        let mut staged: Vec<(i64, Arc<ArrayView<'static>>)> = Vec::new();
        let replace = self.format == IpcFormat::Stream;
        for UsedDictionary { id, field, values } in &used {
            let in_field = |e: FormatError| e.in_dictionary(self.schema.dictionary_path(*id));
            let sent = self.dictionaries.get(*id).map(|s| &**s);
            let (is_delta, slots) =
                match dictionary::plan(sent, values, replace).map_err(in_field)? {
                    ToSend::Nothing => continue,
                    ToSend::Whole => (false, values.as_ref().clone()),
                    ToSend::Delta(from) => (
                        true,
                        values.slice(from, values.len() - from).map_err(in_field)?,
                    ),
                };
            let header = |layout: &BatchLayout, body_len| {
                message::dictionary_batch_message(*id, is_delta, layout, body_len)
            };
            let (one_field, one_column) =
                (core::slice::from_ref(field), core::slice::from_ref(&slots));
            let kind = MessageKind::DictionaryBatch;
            let encoded = self.message(kind, one_field, one_column, slots.len(), header);
            messages.push(encoded.map_err(in_field)?);
            staged.push((
                *id,
                Arc::new(dictionary::owned_view(values).map_err(in_field)?),
            ));
        }
        let (columns, rows) = (batch.columns(), batch.num_rows());
        let header = message::record_batch_message;
        messages.push(self.message(MessageKind::RecordBatch, fields, columns, rows, header)?);
        for (id, values) in staged {
            self.dictionaries.sent(id, values);
        }
        Ok(messages)
    }

    /// Encodes the arrays of `fields`, lays the body out and frames the message `header` makes.
    fn message<'a>(
        &self,
        kind: MessageKind,
        fields: &[Field],
        columns: &[ArrayView<'a>],
        length: usize,
        header: impl FnOnce(&BatchLayout, u64) -> FormatResult<Vec<u8>>,
    ) -> FormatResult<EncodedMessage<'a>> {
        let encoded = encode_columns(fields, columns)?;
        let options = &self.options;
        let body = lay_out(
            encoded.buffers,
            options.alignment,
            options.compression,
            &options.codec_options,
        )?;
        let layout = BatchLayout {
            length: length as i64,
            nodes: encoded.nodes,
            buffers: body.buffers,
            variadic_buffer_counts: encoded.variadic_buffer_counts,
            compression: options.compression,
        };
        let flatbuffer = header(&layout, body.len)?;
        Ok(EncodedMessage {
            kind,
            metadata: message::frame(&flatbuffer, options.alignment, 0)?,
            body: body.pieces,
            body_len: body.len,
        })
    }

    /// The footer flatbuffer of a file whose dictionary and record batch messages lie at these
    /// blocks, with the footer's custom `metadata` (to be followed by its `i32` length and the
    /// `ARROW1` magic).
    pub fn footer(
        &self,
        dictionaries: &[Block],
        record_batches: &[Block],
        metadata: &Metadata,
    ) -> FormatResult<Vec<u8>> {
        message::footer(&self.schema, dictionaries, record_batches, metadata)
    }
}
