//! [`Concurrent`]: several requests in flight for one list of ranges.
//!
//! It uses the crate root's worker pool and quiver's `source`.

use quiver::bytes::Bytes;
use quiver::source::{AsyncRandomAccess, RandomAccess, SharedRanges};
use rayon_core::ThreadPool;
use std::future::Future;
use std::ops::Range;
use std::pin::Pin;
use std::sync::{Mutex, OnceLock};
use std::task::{Context, Poll};

/// Requests in flight by default, as a store such as S3 serves well.
pub const DEFAULT_IN_FLIGHT: usize = 8;

/// Runs each `read_ranges` list on up to `in_flight` threads (the caller's and `in_flight - 1`
/// pooled ones, started at the first list that needs them and kept until the wrapper is
/// dropped), one `read_at` per range, or per part of a range longer than the part size when one
/// is set (as clients of object stores fetch a large object in parallel parts; for a local file,
/// it spreads the copy out of the page cache over several cores). Single reads pass straight
/// through.
///
/// As an [`AsyncRandomAccess`] source it turns one list into one request per range to the
/// wrapped async source, `in_flight` of them at a time (the part size does not apply).
#[derive(Debug)]
pub struct Concurrent<S> {
    inner: S,
    in_flight: usize,
    part: Option<usize>,
    /// `None` inside if the threads could not be started: the caller's thread reads alone.
    workers: OnceLock<Option<ThreadPool>>,
}

impl<S> Concurrent<S> {
    /// Wraps `inner` with [`DEFAULT_IN_FLIGHT`] requests in flight.
    pub fn new(inner: S) -> Self {
        Self::with_in_flight(inner, DEFAULT_IN_FLIGHT)
    }

    /// Wraps `inner` with `in_flight` requests in flight (at least one).
    pub fn with_in_flight(inner: S, in_flight: usize) -> Self {
        Concurrent {
            inner,
            in_flight: in_flight.max(1),
            part: None,
            workers: OnceLock::new(),
        }
    }

    /// Reads ranges longer than `bytes` (at least 1) as parts of `bytes`, in flight together.
    #[must_use]
    pub fn with_part_size(mut self, bytes: usize) -> Self {
        self.part = Some(bytes.max(1));
        self
    }

    /// The `in_flight - 1` threads that read beside the caller's, started at the first call.
    fn workers(&self) -> Option<&ThreadPool> {
        let start = || crate::start_workers(self.in_flight - 1, "quiver-read");
        self.workers.get_or_init(start).as_ref()
    }

    /// The wrapped source.
    pub fn inner(&self) -> &S {
        &self.inner
    }

    /// The wrapped source, mutably.
    pub fn inner_mut(&mut self) -> &mut S {
        &mut self.inner
    }

    /// Unwraps the source.
    pub fn into_inner(self) -> S {
        self.inner
    }
}

impl<S> RandomAccess for Concurrent<S>
where
    S: RandomAccess + Sync,
    S::Error: Send,
{
    type Error = S::Error;

    fn len(&self) -> u64 {
        self.inner.len()
    }

    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<(), S::Error> {
        self.inner.read_at(offset, buf)
    }

    fn read_ranges(&self, ranges: &[Range<u64>], out: &mut [u8]) -> Result<(), S::Error> {
        let part = self.part.unwrap_or(usize::MAX);
        let len =
            |range: &Range<u64>| usize::try_from(range.end - range.start).unwrap_or(usize::MAX);
        let parts: usize = ranges.iter().map(|r| len(r).div_ceil(part).max(1)).sum();
        let lanes = self.in_flight.min(parts);
        let Some(workers) = (lanes > 1).then(|| self.workers()).flatten() else {
            return self.inner.read_ranges(ranges, out);
        };
        // Cut `out` into one slice per range or part, then let the workers take them in order.
        let mut jobs = Vec::with_capacity(parts);
        let mut rest = out;
        for range in ranges {
            let n = len(range).min(rest.len());
            let (mut head, tail) = std::mem::take(&mut rest).split_at_mut(n);
            rest = tail;
            let mut offset = range.start;
            while head.len() > part {
                let (piece, more) = std::mem::take(&mut head).split_at_mut(part);
                jobs.push((offset, piece));
                offset += part as u64;
                head = more;
            }
            jobs.push((offset, head));
        }
        let queue = Mutex::new(jobs.into_iter());
        let first_error = Mutex::new(None);
        let work = || {
            loop {
                let job = queue.lock().map(|mut q| q.next()).ok().flatten();
                let Some((offset, buf)) = job else { break };
                if let Err(e) = self.inner.read_at(offset, buf) {
                    if let Ok(mut slot) = first_error.lock() {
                        slot.get_or_insert(e);
                    }
                    break;
                }
            }
        };
        workers.in_place_scope(|scope| {
            for _ in 1..lanes {
                scope.spawn(|_| work());
            }
            work();
        });
        match first_error.into_inner().ok().flatten() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    fn share_ranges(&self, ranges: &[Range<u64>]) -> Option<Result<SharedRanges, S::Error>> {
        self.inner.share_ranges(ranges)
    }
}

impl<S: AsyncRandomAccess> AsyncRandomAccess for Concurrent<S> {
    type Error = S::Error;
    type ReadRanges<'a>
        = JoinRanges<'a, S>
    where
        Self: 'a;

    fn len(&self) -> u64 {
        self.inner.len()
    }

    fn read_ranges(&self, ranges: Vec<Range<u64>>) -> JoinRanges<'_, S> {
        JoinRanges {
            source: &self.inner,
            in_flight: self.in_flight,
            results: vec![None; ranges.len()],
            queue: ranges
                .into_iter()
                .enumerate()
                .collect::<Vec<_>>()
                .into_iter(),
            running: Vec::new(),
        }
    }
}

/// One request per range, up to `in_flight` at once, gathered back in order.
pub struct JoinRanges<'a, S: AsyncRandomAccess + 'a> {
    source: &'a S,
    in_flight: usize,
    queue: std::vec::IntoIter<(usize, Range<u64>)>,
    running: Vec<(usize, Pin<Box<S::ReadRanges<'a>>>)>,
    results: Vec<Option<Bytes<'static>>>,
}

impl<S: AsyncRandomAccess> std::fmt::Debug for JoinRanges<'_, S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JoinRanges")
            .field("running", &self.running.len())
            .field("queued", &self.queue.len())
            .finish_non_exhaustive()
    }
}

impl<'a, S: AsyncRandomAccess> Future for JoinRanges<'a, S> {
    type Output = Result<SharedRanges, S::Error>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = &mut *self;
        loop {
            while this.running.len() < this.in_flight {
                let Some((index, range)) = this.queue.next() else {
                    break;
                };
                let read = Box::pin(this.source.read_ranges(vec![range]));
                this.running.push((index, read));
            }
            let mut progressed = false;
            let mut i = 0;
            while let Some((index, read)) = this.running.get_mut(i) {
                let index = *index;
                match read.as_mut().poll(cx) {
                    Poll::Pending => i += 1,
                    Poll::Ready(result) => {
                        drop(this.running.swap_remove(i));
                        let bytes = result?.pop().unwrap_or_default();
                        if let Some(slot) = this.results.get_mut(index) {
                            *slot = Some(bytes);
                        }
                        progressed = true;
                    }
                }
            }
            if this.running.is_empty() && this.queue.len() == 0 {
                let results = std::mem::take(&mut this.results);
                return Poll::Ready(Ok(results
                    .into_iter()
                    .map(Option::unwrap_or_default)
                    .collect()));
            }
            if !progressed {
                return Poll::Pending;
            }
        }
    }
}
