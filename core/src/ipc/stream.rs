//! [`StreamReader`]: the record batches of an Arrow IPC stream, in order, from any
//! [`embedded_io::Read`]; [`OpenStream`], what it shares with the async reader.
//!
//! It uses `stream_decoder` beside it and, of the crate, the sources, the arrays, the schema and
//! the errors.
//!
//! A loop around the [`StreamDecoder`]: it says how many bytes it needs, the reader reads that
//! many (64 KiB at most per step, so a length in the stream cannot make it allocate more than
//! it has received) and pushes them; a short read is the end of input.

use super::stream_decoder::{StreamDecodeResult, StreamDecoder};
use super::{Projection, ReaderOptions};
use crate::array::RecordBatch;
use crate::error::{Error, FormatErrorKind, FormatResult};
use crate::schema::Schema;
use crate::source::fill;
use alloc::sync::Arc;
use core::future::Future;
use core::pin::pin;
use core::task::{Context, Poll, Waker};

/// What both stream readers hold: a stream whose schema has been read, the reader it comes from
/// and the [`StreamDecoder`] fed from it. [`StreamReader`] reads it with blocking calls of an
/// [`embedded_io::Read`] and, with the `async` feature, `AsyncStreamReader` with awaited ones of
/// an `embedded_io_async::Read` ([`Reads`]); the loop is the same.
#[derive(Debug)]
pub(super) struct OpenStream<R> {
    pub(super) reader: R,
    pub(super) decoder: StreamDecoder,
    /// Bytes read from `reader`.
    position: u64,
    pub(super) schema: Arc<Schema>,
}

impl<R> OpenStream<R> {
    /// The schema of the batches: the stream's, projected.
    pub(super) fn batch_schema(&self) -> &Arc<Schema> {
        let projected = self.decoder.batch_schema();
        debug_assert!(projected.is_some(), "the decoder has read the schema");
        projected.unwrap_or(&self.schema)
    }
}

/// The reads of an [`OpenStream`]: blocking ([`StreamReader`]) or awaited (`AsyncStreamReader`).
/// The reading loop is written once, as an `async fn` over this; the blocking reader runs it to
/// completion at once.
pub(super) trait Reads<R: embedded_io::ErrorType> {
    /// Reads from `reader` until `buf` is full or the input ends, advancing `position`.
    async fn fill(
        reader: &mut R,
        position: &mut u64,
        buf: &mut [u8],
    ) -> Result<usize, Error<R::Error>>;
}

/// The reads of a [`StreamReader`]: blocking calls to an [`embedded_io::Read`].
enum BlockingIo {}

impl<R: embedded_io::Read> Reads<R> for BlockingIo {
    async fn fill(
        reader: &mut R,
        position: &mut u64,
        buf: &mut [u8],
    ) -> Result<usize, Error<R::Error>> {
        fill(reader, position, buf)
    }
}

/// Reads the schema message with `decoder`, which has been handed nothing yet, and returns the
/// opened stream: the opening both stream readers share, whose reads are `Io`'s.
pub(super) async fn open<R: embedded_io::ErrorType, Io: Reads<R>>(
    mut reader: R,
    mut decoder: StreamDecoder,
) -> Result<OpenStream<R>, Error<R::Error>> {
    let mut position = 0;
    // The decoder's first result other than a request is the schema, or an error.
    let _schema = drive::<R, Io>(&mut reader, &mut position, &mut decoder).await?;
    let schema = opened_schema(&decoder)?;
    Ok(OpenStream {
        reader,
        decoder,
        position,
        schema,
    })
}

/// The schema `decoder` has decoded (its first result other than a request).
fn opened_schema(decoder: &StreamDecoder) -> FormatResult<Arc<Schema>> {
    Ok(Arc::clone(
        decoder.schema().ok_or(FormatErrorKind::EmptyInput)?,
    ))
}

/// The next record batch of `stream`, applying any dictionary batches before it; `None` at the
/// end: the loop both stream readers share.
pub(super) async fn read_batch<R: embedded_io::ErrorType, Io: Reads<R>>(
    stream: &mut OpenStream<R>,
) -> Result<Option<RecordBatch<'static>>, Error<R::Error>> {
    loop {
        let (reader, decoder) = (&mut stream.reader, &mut stream.decoder);
        match drive::<R, Io>(reader, &mut stream.position, decoder).await? {
            StreamDecodeResult::Data(batch) => return Ok(Some(batch)),
            StreamDecodeResult::Schema => {} // a stream that starts again
            _ => return Ok(None),
        }
    }
}

/// Runs `decoder` until it has a result other than a request for bytes, reading what it asks
/// for from `reader`.
async fn drive<R: embedded_io::ErrorType, Io: Reads<R>>(
    reader: &mut R,
    position: &mut u64,
    decoder: &mut StreamDecoder,
) -> Result<StreamDecodeResult, Error<R::Error>> {
    loop {
        match decoder.try_decode()? {
            StreamDecodeResult::NeedsData { at_least } => {
                let mut buffer = StreamDecoder::read_buffer(at_least);
                let got = Io::fill(reader, position, &mut buffer).await?;
                decoder.push_read(buffer, got);
            }
            other => return Ok(other),
        }
    }
}

/// Runs `future` to its end on this thread, polling it with a waker that does nothing: the
/// futures of the blocking reader make no request they wait for, so the first poll ends them.
fn run_now<T>(future: impl Future<Output = T>) -> T {
    let mut future = pin!(future);
    let mut context = Context::from_waker(Waker::noop());
    loop {
        if let Poll::Ready(out) = future.as_mut().poll(&mut context) {
            return out;
        }
    }
}

/// Reads an Arrow IPC stream from an [`embedded_io::Read`]: each batch with
/// [`Self::next_batch`], or as an [`Iterator`].
#[derive(Debug)]
pub struct StreamReader<R> {
    stream: OpenStream<R>,
    /// The iterator has returned an error.
    failed: bool,
}

impl<R: embedded_io::Read> StreamReader<R> {
    /// Reads the schema message that opens the stream.
    pub fn new(reader: R, options: ReaderOptions) -> Result<Self, Error<R::Error>> {
        Self::with_decoder(reader, StreamDecoder::new(options))
    }

    /// Reads the schema message with `decoder`, which has been handed nothing yet: a
    /// [`StreamDecoder::for_file`] reads a file front to back.
    pub fn with_decoder(reader: R, decoder: StreamDecoder) -> Result<Self, Error<R::Error>> {
        let stream = run_now(open::<R, BlockingIo>(reader, decoder))?;
        Ok(StreamReader {
            stream,
            failed: false,
        })
    }

    /// The next record batch, applying any dictionary batches before it; `None` at the end.
    pub fn next_batch(&mut self) -> Result<Option<RecordBatch<'static>>, Error<R::Error>> {
        run_now(read_batch::<R, BlockingIo>(&mut self.stream))
    }
}

impl<R> StreamReader<R> {
    /// The stream's schema.
    pub fn schema(&self) -> &Arc<Schema> {
        &self.stream.schema
    }

    /// Reads only the fields `projection` selects from now on: their buffers are the only
    /// ones decoded, and batches have [`Self::batch_schema`].
    pub fn set_projection(&mut self, projection: Projection) {
        self.stream.decoder.set_projection(projection);
    }

    /// The schema of the batches this reader returns: the stream's, projected.
    pub fn batch_schema(&self) -> &Arc<Schema> {
        self.stream.batch_schema()
    }

    /// The decoder this reader drives.
    pub fn decoder(&self) -> &StreamDecoder {
        &self.stream.decoder
    }

    /// The underlying reader.
    pub fn inner(&self) -> &R {
        &self.stream.reader
    }

    /// Unwraps the underlying reader.
    pub fn into_inner(self) -> R {
        self.stream.reader
    }
}

impl<R: embedded_io::Read> Iterator for StreamReader<R> {
    type Item = Result<RecordBatch<'static>, Error<R::Error>>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed {
            return None;
        }
        let item = self.next_batch().transpose();
        if matches!(item, Some(Err(_))) {
            self.failed = true;
        }
        item
    }
}
