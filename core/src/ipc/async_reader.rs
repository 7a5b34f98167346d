//! [`AsyncFileReader`]: the [`FileDecoder`] driven from an [`AsyncRandomAccess`] source, with
//! the next window's reads in flight while the caller works on the current one.
//!
//! It uses the `file_decoder` beside it and, of the crate, the async sources, the arrays, the
//! format, the schema and the errors.
//!
//! Each list of ranges the decoder asks for becomes one [`AsyncRandomAccess::read_ranges`]
//! future, kept in the reader and polled whenever the reader is; finished reads are pushed into
//! the decoder. Besides the window the decoder is waiting for, the reader asks it for up to
//! `prefetch` windows ahead ([`FileDecoder::prefetch`]), so their bytes arrive while the caller
//! decodes, encodes or sends the batches it already has. There is no executor here: the reader
//! runs on whatever polls it, on one thread or many, and its futures are `Send` when the
//! source's are.

use super::file_decoder::{DecodeResult, FileDecoder, no_batch};
use super::{Projection, ReaderOptions, ScanOptions};
use crate::array::RecordBatch;
use crate::error::Error;
use crate::format::Block;
use crate::schema::{Metadata, Schema};
use crate::source::AsyncRandomAccess;
use alloc::boxed::Box;
use alloc::collections::VecDeque;
use alloc::sync::Arc;
use alloc::vec::Vec;
use core::future::Future;
use core::ops::Range;
use core::pin::Pin;
use core::task::{Context, Poll};

/// Windows read ahead by default.
pub const DEFAULT_PREFETCH: usize = 1;

/// One read in flight: the ranges asked for and the source's future.
struct InFlight<'s, S: AsyncRandomAccess + ?Sized + 's> {
    ranges: Vec<Range<u64>>,
    read: Pin<Box<S::ReadRanges<'s>>>,
}

/// Reads an Arrow IPC file from an [`AsyncRandomAccess`] source; see the module docs.
///
/// By default it reads every batch; [`Self::select`] picks a range with its [`ScanOptions`].
/// Batches come from [`Self::next_batch`] or, as a [`futures_core::Stream`], from polling it.
pub struct AsyncFileReader<'s, S: AsyncRandomAccess + ?Sized> {
    source: &'s S,
    decoder: FileDecoder,
    in_flight: VecDeque<InFlight<'s, S>>,
    prefetch: usize,
    failed: bool,
    /// A read was started since the reads in flight were last polled.
    unpolled: bool,
}

impl<S: AsyncRandomAccess + ?Sized> core::fmt::Debug for AsyncFileReader<'_, S> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("AsyncFileReader")
            .field("decoder", &self.decoder)
            .field("in_flight", &self.in_flight.len())
            .field("prefetch", &self.prefetch)
            .finish_non_exhaustive()
    }
}

impl<'s, S: AsyncRandomAccess + ?Sized> AsyncFileReader<'s, S> {
    /// Opens the file: one read of the tail, plus one more if the footer is longer than that.
    pub async fn open(source: &'s S, options: ReaderOptions) -> Result<Self, Error<S::Error>> {
        let mut reader = AsyncFileReader {
            decoder: FileDecoder::new(source.len(), options),
            source,
            in_flight: VecDeque::new(),
            prefetch: DEFAULT_PREFETCH,
            failed: false,
            unpolled: false,
        };
        while !reader.decoder.is_open() {
            let _footer = core::future::poll_fn(|cx| reader.poll_decode(cx)).await?;
        }
        Ok(reader)
    }

    /// Reads up to `windows` windows ahead of the one being decoded (0: none).
    #[must_use]
    pub fn with_prefetch(mut self, windows: usize) -> Self {
        self.prefetch = windows;
        self
    }

    /// Selects record batches `batches` (clamped to the file), read with `options`. Reads in
    /// flight for an earlier selection are dropped.
    pub fn select(&mut self, batches: Range<usize>, options: ScanOptions) {
        self.in_flight.clear();
        self.failed = false;
        self.decoder.set_scan_options(options);
        self.decoder.select(batches);
    }

    /// Reads only the fields `projection` selects from the next batch on.
    pub fn set_projection(&mut self, projection: Projection) {
        self.in_flight.clear();
        self.decoder.set_projection(projection);
    }

    /// The next selected batch, or `None` after the last one (or after an error).
    pub async fn next_batch(&mut self) -> Option<Result<RecordBatch<'static>, Error<S::Error>>> {
        core::future::poll_fn(|cx| self.poll_next_batch(cx)).await
    }

    /// Record batch `index` alone: one read of its metadata and body (with the dictionaries the
    /// first time). Ends the current selection.
    pub async fn batch(&mut self, index: usize) -> Result<RecordBatch<'static>, Error<S::Error>> {
        self.in_flight.clear();
        self.failed = false;
        self.decoder.select_batch(index);
        match self.next_batch().await {
            Some(result) => result,
            None => Err(no_batch(index).into()),
        }
    }

    /// Polls for the next selected batch; [`Self::next_batch`] as a poll function.
    pub fn poll_next_batch(
        &mut self,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<RecordBatch<'static>, Error<S::Error>>>> {
        if self.failed {
            return Poll::Ready(None);
        }
        loop {
            return match self.poll_decode(cx) {
                Poll::Pending => Poll::Pending,
                Poll::Ready(Ok(DecodeResult::Data(batch))) => Poll::Ready(Some(Ok(batch))),
                Poll::Ready(Ok(DecodeResult::Footer)) => continue,
                Poll::Ready(Ok(_)) => Poll::Ready(None),
                Poll::Ready(Err(e)) => {
                    self.failed = true;
                    Poll::Ready(Some(Err(e)))
                }
            };
        }
    }

    /// Runs the decoder until it has a result other than a request, fetching what it asks
    /// for and what it can plan ahead.
    fn poll_decode(&mut self, cx: &mut Context<'_>) -> Poll<Result<DecodeResult, Error<S::Error>>> {
        loop {
            // Every read in flight is polled (with this context) before `Pending` is returned.
            self.unpolled = false;
            let mut i = 0;
            while let Some(read) = self.in_flight.get_mut(i) {
                let Poll::Ready(result) = read.read.as_mut().poll(cx) else {
                    i += 1;
                    continue;
                };
                let Some(done) = self.in_flight.remove(i) else {
                    break;
                };
                match result {
                    Ok(data) => self.decoder.push_ranges(done.ranges, data)?,
                    Err(error) => {
                        self.in_flight.clear();
                        let offset = done.ranges.first().map_or(0, |r| r.start);
                        let len = done.ranges.iter().map(|r| r.end - r.start).sum();
                        return Poll::Ready(Err(Error::Source { error, offset, len }));
                    }
                }
            }
            while let Some(ranges) = self.decoder.prefetch(self.prefetch) {
                self.start(ranges);
            }
            match self.decoder.try_decode()? {
                DecodeResult::NeedsData(ranges) => {
                    let in_flight = |r: &Range<u64>| {
                        self.in_flight.iter().any(|f| {
                            f.ranges
                                .iter()
                                .any(|g| g.start <= r.start && r.end <= g.end)
                        })
                    };
                    let new: Vec<Range<u64>> =
                        ranges.into_iter().filter(|r| !in_flight(r)).collect();
                    if new.is_empty() {
                        if self.unpolled {
                            continue; // reads started ahead since: poll them too
                        }
                        return Poll::Pending;
                    }
                    self.start(new);
                }
                other => return Poll::Ready(Ok(other)),
            }
        }
    }

    fn start(&mut self, ranges: Vec<Range<u64>>) {
        let read = Box::pin(self.source.read_ranges(ranges.clone()));
        self.unpolled = true;
        self.in_flight.push_back(InFlight { ranges, read });
    }

    /// The file's schema, as the footer gives it.
    pub fn schema(&self) -> &Arc<Schema> {
        self.decoder.schema()
    }

    /// The schema of the batches this reader returns: the file's, projected (see
    /// [`Self::set_projection`]).
    pub fn batch_schema(&self) -> &Arc<Schema> {
        self.decoder.batch_schema()
    }

    /// The footer's custom metadata.
    pub fn metadata(&self) -> &Metadata {
        self.decoder.metadata()
    }

    /// The number of record batches in the file (the footer's record batch blocks).
    pub fn num_batches(&self) -> usize {
        self.decoder.record_batch_blocks().len()
    }

    /// The record batch blocks listed in the footer, in file order.
    pub fn record_batch_blocks(&self) -> &[Block] {
        self.decoder.record_batch_blocks()
    }

    /// The dictionary blocks listed in the footer, in file order.
    pub fn dictionary_blocks(&self) -> &[Block] {
        self.decoder.dictionary_blocks()
    }

    /// The source.
    pub fn inner(&self) -> &'s S {
        self.source
    }

    /// The source and the decoder, for a driver that fetches another way (reads in flight
    /// are dropped; the selection, projection and batches already returned stay).
    pub fn into_parts(self) -> (&'s S, FileDecoder) {
        (self.source, self.decoder)
    }
}

impl<S: AsyncRandomAccess + ?Sized> futures_core::Stream for AsyncFileReader<'_, S> {
    type Item = Result<RecordBatch<'static>, Error<S::Error>>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.get_mut().poll_next_batch(cx)
    }
}
