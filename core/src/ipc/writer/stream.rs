//! [`StreamWriter`]: the Arrow IPC stream format, to any [`embedded_io::Write`].
//!
//! It uses the `encoder` beside it, the arrays and the schema.
//!
//! The schema message is written when the writer is made, then the messages of each batch
//! ([`MessageEncoder::encode`]), then the end-of-stream marker on [`StreamWriter::finish`]. A
//! dictionary that changes between batches is sent as a delta when it grows, or whole (a
//! replacement) otherwise.

use super::encoder::{IpcFormat, MessageEncoder};
use super::{TrackedWriter, WriteError, WriterOptions};
use crate::array::RecordBatch;
use crate::schema::Schema;
use alloc::sync::Arc;

/// Writes an Arrow IPC stream to an [`embedded_io::Write`].
#[derive(Debug)]
pub struct StreamWriter<W: embedded_io::Write> {
    sink: TrackedWriter<W>,
    encoder: MessageEncoder,
}

impl<W: embedded_io::Write> StreamWriter<W> {
    /// Writes the schema message and returns the writer for the batches.
    pub fn new(
        sink: W,
        schema: impl Into<Arc<Schema>>,
        options: WriterOptions,
    ) -> Result<Self, WriteError<W::Error>> {
        let encoder = MessageEncoder::new(schema, options, IpcFormat::Stream)?;
        let mut sink = TrackedWriter::new(sink);
        sink.write_message(&encoder.schema_message()?)?;
        Ok(StreamWriter { sink, encoder })
    }

    /// Writes one batch, after the dictionary batches it needs.
    ///
    /// A batch that cannot be written ([`WriteError::Invalid`]) leaves nothing in the stream and
    /// the writer usable; after a sink error the writer refuses to write more.
    pub fn write(&mut self, batch: &RecordBatch<'_>) -> Result<(), WriteError<W::Error>> {
        self.sink.check()?;
        for message in self.encoder.encode(batch)? {
            self.sink.write_message(&message)?;
        }
        Ok(())
    }

    /// Writes the end-of-stream marker and flushes the sink; later calls do nothing.
    pub fn finish(&mut self) -> Result<(), WriteError<W::Error>> {
        if self.sink.unfinished()? {
            self.sink.finish(&[])?;
        }
        Ok(())
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

    /// Unwraps the sink (call [`finish`](Self::finish) first to end the stream).
    pub fn into_inner(self) -> W {
        self.sink.inner
    }
}
