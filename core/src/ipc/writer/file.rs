//! [`FileWriter`]: the Arrow IPC file format, to any [`embedded_io::Write`].
//!
//! It uses the `encoder` beside it and, of the crate, the arrays, the format, the schema and the
//! errors.
//!
//! The layout, front to back, as the format has it: the `ARROW1` magic padded with zeros to 8
//! bytes; the schema message, its metadata padded to end at a multiple of the alignment; each
//! batch's dictionary and record batch messages, whose places the writer records
//! as `Block`s; the end-of-stream marker; the footer (the schema again and the blocks); the
//! footer's `i32` length; the magic again. Every message starts at a multiple of the alignment,
//! so a reader that maps the file finds every buffer aligned.
//!
//! The file format cannot replace a dictionary: a dictionary may only grow (written as a delta)
//! or stay as it is; anything else is an error for that batch, which is then not written.

use super::encoder::{IpcFormat, MessageEncoder, MessageKind};
use super::{TrackedWriter, WriteError, WriterOptions};
use crate::array::RecordBatch;
use crate::error::{FormatErrorKind, Limit};
use crate::format::{Block, LEADING_LEN, MAGIC};
use crate::schema::{Metadata, Schema};
use alloc::sync::Arc;
use alloc::vec::Vec;

/// Writes an Arrow IPC file to an [`embedded_io::Write`].
#[derive(Debug)]
pub struct FileWriter<W: embedded_io::Write> {
    sink: TrackedWriter<W>,
    encoder: MessageEncoder,
    dictionary_blocks: Vec<Block>,
    record_batch_blocks: Vec<Block>,
    metadata: Metadata,
}

impl<W: embedded_io::Write> FileWriter<W> {
    /// Writes the leading magic and the schema message, and returns the writer for the batches.
    pub fn new(
        sink: W,
        schema: impl Into<Arc<Schema>>,
        options: WriterOptions,
    ) -> Result<Self, WriteError<W::Error>> {
        let encoder = MessageEncoder::new(schema, options, IpcFormat::File)?;
        let schema_message = encoder.schema_message()?;
        let mut sink = TrackedWriter::new(sink);
        sink.write_all(MAGIC)?;
        sink.write_all(&[0; LEADING_LEN as usize - MAGIC.len()])?;
        sink.write_message(&schema_message)?;
        Ok(FileWriter {
            sink,
            encoder,
            dictionary_blocks: Vec::new(),
            record_batch_blocks: Vec::new(),
            metadata: Metadata::new(),
        })
    }

    /// Writes one batch, after the dictionary batches it needs.
    ///
    /// A batch that cannot be written ([`WriteError::Invalid`]) leaves nothing in the file and
    /// the writer usable; after a sink error the writer refuses to write more.
    pub fn write(&mut self, batch: &RecordBatch<'_>) -> Result<(), WriteError<W::Error>> {
        self.sink.check()?;
        for message in self.encoder.encode(batch)? {
            let block = message.block(self.sink.position);
            self.sink.write_message(&message)?;
            match message.kind {
                MessageKind::DictionaryBatch => self.dictionary_blocks.push(block),
                _ => self.record_batch_blocks.push(block),
            }
        }
        Ok(())
    }

    /// Writes the end-of-stream marker, the footer, its length and the trailing magic, and
    /// flushes the sink; later calls do nothing.
    pub fn finish(&mut self) -> Result<(), WriteError<W::Error>> {
        if !self.sink.unfinished()? {
            return Ok(());
        }
        let footer = self.encoder.footer(
            &self.dictionary_blocks,
            &self.record_batch_blocks,
            &self.metadata,
        )?;
        let footer_len =
            i32::try_from(footer.len()).map_err(|_| FormatErrorKind::LimitExceeded {
                what: Limit::FileFooter,
                requested: footer.len() as u64,
                limit: i32::MAX as u64,
            })?;
        self.sink
            .finish(&[&footer, &footer_len.to_le_bytes(), MAGIC])
    }

    /// Sets the custom metadata of the footer (what [`FileReader::metadata`] returns), written
    /// by [`finish`](Self::finish).
    ///
    /// [`FileReader::metadata`]: crate::ipc::FileReader::metadata
    pub fn set_metadata(&mut self, metadata: Metadata) {
        self.metadata = metadata;
    }

    /// The blocks of the record batches written so far.
    pub fn record_batch_blocks(&self) -> &[Block] {
        &self.record_batch_blocks
    }

    /// The blocks of the dictionary batches written so far.
    pub fn dictionary_blocks(&self) -> &[Block] {
        &self.dictionary_blocks
    }

    /// The schema every batch must have.
    pub fn schema(&self) -> &Arc<Schema> {
        self.encoder.schema()
    }

    /// How many bytes have been written to the sink so far.
    pub fn bytes_written(&self) -> u64 {
        self.sink.position
    }

    /// The sink.
    pub fn inner(&self) -> &W {
        &self.sink.inner
    }

    /// Unwraps the sink (call [`finish`](Self::finish) first to complete the file).
    pub fn into_inner(self) -> W {
        self.sink.inner
    }
}
