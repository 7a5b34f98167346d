//! [`AsyncStreamReader`]: the [`StreamDecoder`] driven from an [`embedded_io_async::Read`].
//!
//! The same loop as the [`StreamReader`](super::StreamReader)'s, with the reads awaited: the
//! decoder says how many bytes it needs, the reader reads that many (64 KiB at most per step)
//! and pushes them; a short read is the end of input. There is no executor here: the reader
//! runs on whatever polls it, and its futures are `Send` when the reader's are.

use super::stream_decoder::{StreamDecodeResult, StreamDecoder};
use super::{Projection, ReaderOptions};
use crate::array::RecordBatch;
use crate::error::{Error, FormatErrorKind};
use crate::schema::Schema;
use crate::source::fill_async;
use alloc::boxed::Box;
use alloc::sync::Arc;
use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll};

/// Reads an Arrow IPC stream from an [`embedded_io_async::Read`]; see the module docs.
///
/// Batches come from [`Self::next_batch`] or, as a [`futures_core::Stream`], from
/// [`Self::into_stream`].
#[derive(Debug)]
pub struct AsyncStreamReader<R> {
    reader: R,
    decoder: StreamDecoder,
    /// Bytes read from `reader`.
    position: u64,
    schema: Arc<Schema>,
    batch_schema: Arc<Schema>,
}

impl<R: embedded_io_async::Read> AsyncStreamReader<R> {
    /// Reads the schema message that opens the stream.
    pub async fn new(mut reader: R, options: ReaderOptions) -> Result<Self, Error<R::Error>> {
        let mut decoder = StreamDecoder::new(options);
        let mut position = 0;
        // The decoder's first result other than a request is the schema, or an error.
        let _schema = drive(&mut reader, &mut position, &mut decoder).await?;
        let schema = Arc::clone(decoder.schema().ok_or(FormatErrorKind::EmptyInput)?);
        Ok(AsyncStreamReader {
            reader,
            decoder,
            position,
            batch_schema: Arc::clone(&schema),
            schema,
        })
    }

    /// The stream's schema.
    pub fn schema(&self) -> &Arc<Schema> {
        &self.schema
    }

    /// Reads only the fields `projection` selects from now on: their buffers are the only
    /// ones decoded, and batches have [`Self::batch_schema`].
    pub fn set_projection(&mut self, projection: Projection) {
        self.decoder.set_projection(projection);
        if let Some(projected) = self.decoder.batch_schema() {
            self.batch_schema = Arc::clone(projected);
        }
    }

    /// The schema of the batches this reader returns: the stream's, projected.
    pub fn batch_schema(&self) -> &Arc<Schema> {
        &self.batch_schema
    }

    /// The next record batch, applying any dictionary batches before it; `None` at the end.
    pub async fn next_batch(&mut self) -> Result<Option<RecordBatch<'static>>, Error<R::Error>> {
        loop {
            return match drive(&mut self.reader, &mut self.position, &mut self.decoder).await? {
                StreamDecodeResult::Data(batch) => Ok(Some(batch)),
                StreamDecodeResult::Schema => continue,
                _ => Ok(None),
            };
        }
    }

    /// The batches as a [`futures_core::Stream`], ending after the last one or an error. It is
    /// `Send` when the reader and its read futures are.
    ///
    /// (The reader is not a `Stream` itself: a stream must keep the read in flight between
    /// polls, and `embedded_io_async`'s read futures have no name to keep them by.)
    pub fn into_stream(
        self,
    ) -> impl futures_core::Stream<Item = Result<RecordBatch<'static>, Error<R::Error>>> {
        Batches {
            idle: Some(Box::new(self)),
            running: None,
            step: next_of::<R>,
        }
    }

    /// The decoder this reader drives.
    pub fn decoder(&self) -> &StreamDecoder {
        &self.decoder
    }

    /// The underlying reader.
    pub fn inner(&self) -> &R {
        &self.reader
    }

    /// Unwraps the underlying reader.
    pub fn into_inner(self) -> R {
        self.reader
    }
}

/// Runs `decoder` until it has a result other than a request for bytes, reading what it asks
/// for from `reader`.
async fn drive<R: embedded_io_async::Read>(
    reader: &mut R,
    position: &mut u64,
    decoder: &mut StreamDecoder,
) -> Result<StreamDecodeResult, Error<R::Error>> {
    loop {
        match decoder.try_decode()? {
            StreamDecodeResult::NeedsData { at_least } => {
                let mut buffer = StreamDecoder::read_buffer(at_least);
                let got = fill_async(reader, position, &mut buffer).await?;
                decoder.push_read(buffer, got);
            }
            other => return Ok(other),
        }
    }
}

/// One batch, with the reader handed back for the next.
type Next<R> = (
    Option<Result<RecordBatch<'static>, Error<<R as embedded_io::ErrorType>::Error>>>,
    Box<AsyncStreamReader<R>>,
);

async fn next_of<R: embedded_io_async::Read>(mut reader: Box<AsyncStreamReader<R>>) -> Next<R> {
    let item = reader.next_batch().await.transpose();
    (item, reader)
}

/// The stream of [`AsyncStreamReader::into_stream`]: the reader, idle or inside the future of
/// its next batch.
struct Batches<R, F> {
    idle: Option<Box<AsyncStreamReader<R>>>,
    running: Option<Pin<Box<F>>>,
    step: fn(Box<AsyncStreamReader<R>>) -> F,
}

impl<R, F> futures_core::Stream for Batches<R, F>
where
    R: embedded_io_async::Read,
    F: Future<Output = Next<R>>,
{
    type Item = Result<RecordBatch<'static>, Error<R::Error>>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = self.get_mut();
        if this.running.is_none() {
            let Some(reader) = this.idle.take() else {
                return Poll::Ready(None); // ended
            };
            this.running = Some(Box::pin((this.step)(reader)));
        }
        let Some(running) = &mut this.running else {
            return Poll::Ready(None);
        };
        let Poll::Ready((item, reader)) = running.as_mut().poll(cx) else {
            return Poll::Pending;
        };
        this.running = None;
        if matches!(item, Some(Ok(_))) {
            this.idle = Some(reader);
        }
        Poll::Ready(item)
    }
}
