//! [`Latency`]: a fixed delay on every call, to see what a read pattern costs remotely.
//!
//! It uses `task` and `concurrent`, and quiver's `source`.

use crate::ReadTask;
use quiver::source::{AsyncRandomAccess, RandomAccess, SharedRanges};
use std::future::Future;
use std::ops::Range;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

/// Sleeps `delay` before every call to the wrapped source and counts the calls: each
/// `read_at` and each `read_ranges` list is one request, as on object storage. Put it under a
/// [`Concurrent`](crate::Concurrent) to model requests in flight at once. As an
/// [`AsyncRandomAccess`] source the delay is a timer thread that runs beside the wrapped
/// source's read, so the caller's thread keeps working meanwhile.
#[derive(Debug)]
pub struct Latency<S> {
    inner: S,
    delay: Duration,
    calls: AtomicUsize,
}

impl<S> Latency<S> {
    /// Wraps `inner`, delaying every call by `delay`.
    pub fn new(inner: S, delay: Duration) -> Self {
        Latency {
            inner,
            delay,
            calls: AtomicUsize::new(0),
        }
    }

    /// Calls made so far (each one paid the delay).
    pub fn calls(&self) -> usize {
        self.calls.load(Ordering::Relaxed)
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

    fn wait(&self) {
        self.calls.fetch_add(1, Ordering::Relaxed);
        std::thread::sleep(self.delay);
    }
}

impl<S: RandomAccess> RandomAccess for Latency<S> {
    type Error = S::Error;

    fn len(&self) -> u64 {
        self.inner.len()
    }

    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<(), S::Error> {
        self.wait();
        self.inner.read_at(offset, buf)
    }

    fn read_ranges(&self, ranges: &[Range<u64>], out: &mut [u8]) -> Result<(), S::Error> {
        self.wait();
        self.inner.read_ranges(ranges, out)
    }

    fn share_ranges(&self, ranges: &[Range<u64>]) -> Option<Result<SharedRanges, S::Error>> {
        let shared = self.inner.share_ranges(ranges)?;
        self.wait();
        Some(shared)
    }
}

impl<S: AsyncRandomAccess> AsyncRandomAccess for Latency<S> {
    type Error = S::Error;
    type ReadRanges<'a>
        = Delayed<S::ReadRanges<'a>>
    where
        Self: 'a;

    fn len(&self) -> u64 {
        self.inner.len()
    }

    fn read_ranges(&self, ranges: Vec<Range<u64>>) -> Self::ReadRanges<'_> {
        self.calls.fetch_add(1, Ordering::Relaxed);
        let delay = self.delay;
        Delayed {
            timer: Some(ReadTask::spawn(move || std::thread::sleep(delay))),
            read: Box::pin(self.inner.read_ranges(ranges)),
        }
    }
}

/// A read that completes no sooner than its [`Latency`]'s delay.
pub struct Delayed<F> {
    timer: Option<ReadTask<()>>,
    read: Pin<Box<F>>,
}

impl<F> std::fmt::Debug for Delayed<F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Delayed")
            .field("waiting", &self.timer.is_some())
            .finish_non_exhaustive()
    }
}

impl<F: Future> Future for Delayed<F> {
    type Output = F::Output;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        if let Some(timer) = &mut self.timer {
            if Pin::new(timer).poll(cx).is_pending() {
                return Poll::Pending;
            }
            self.timer = None;
        }
        self.read.as_mut().poll(cx)
    }
}
