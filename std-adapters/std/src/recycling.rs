//! [`Recycling`]: a source whose reads land in a few reused buffers, so a long scan does not
//! allocate (and fragment the heap with) a fresh buffer per window.
//!
//! The reader asks for each window's ranges in one call. `Recycling` answers it through
//! [`RandomAccess::share_ranges`]: it reads the ranges with the wrapped source's `read_ranges`
//! into one buffer and hands out windows of it. Batches decoded from the window keep the buffer
//! alive; once they are all dropped, the buffer is free for a later call. A scan that drops each
//! batch before asking for the next therefore cycles through one or two buffers of about a
//! window's size, however large the file.

use quiver::RandomAccess;
use quiver::bytes::{Bytes, Owner};
use quiver::source::SharedRanges;
use std::ops::Range;
use std::sync::{Arc, Mutex};

/// Buffers kept for reuse by default.
pub const DEFAULT_POOL: usize = 2;

/// Wraps a source so that range lists are read into recycled buffers; see the module docs.
#[derive(Debug)]
pub struct Recycling<S> {
    inner: S,
    pool: Mutex<Vec<Arc<Vec<u8>>>>,
    keep: usize,
}

impl<S> Recycling<S> {
    /// Wraps `inner`, keeping up to [`DEFAULT_POOL`] buffers.
    pub fn new(inner: S) -> Self {
        Self::with_pool(inner, DEFAULT_POOL)
    }

    /// Wraps `inner`, keeping up to `keep` buffers for reuse.
    pub fn with_pool(inner: S, keep: usize) -> Self {
        Recycling {
            inner,
            pool: Mutex::new(Vec::new()),
            keep,
        }
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

    /// A buffer of at least `len` bytes that nothing else holds: a free pooled one (the
    /// smallest that fits, else the largest, grown), or a new one.
    fn take(&self, len: usize) -> Vec<u8> {
        let mut pool = self.pool.lock().unwrap_or_else(|e| e.into_inner());
        let free = |b: &Arc<Vec<u8>>| Arc::strong_count(b) == 1 && Arc::weak_count(b) == 0;
        let best = (0..pool.len())
            .filter(|&i| pool.get(i).is_some_and(free))
            .min_by_key(|&i| {
                let size = pool.get(i).map_or(0, |b| b.len());
                (
                    size < len,
                    if size < len { usize::MAX - size } else { size },
                )
            });
        // A new buffer comes zeroed from the allocator (fresh pages, not written here), so its
        // pages are first touched by the reads that fill it, on the reading threads.
        let mut buffer = best
            .map(|i| pool.swap_remove(i))
            .and_then(|b| Arc::try_unwrap(b).ok())
            .unwrap_or_else(|| vec![0; len]);
        if buffer.len() < len {
            buffer.resize(len, 0);
        }
        buffer
    }

    /// Keeps `buffer` for later calls, dropping a free one if the pool is full.
    fn keep(&self, buffer: &Arc<Vec<u8>>) {
        let mut pool = self.pool.lock().unwrap_or_else(|e| e.into_inner());
        if pool.len() >= self.keep
            && let Some(i) = pool.iter().position(|b| Arc::strong_count(b) == 1)
        {
            pool.swap_remove(i);
        }
        if pool.len() < self.keep {
            pool.push(Arc::clone(buffer));
        }
    }
}

impl<S: RandomAccess> RandomAccess for Recycling<S> {
    type Error = S::Error;

    fn len(&self) -> u64 {
        self.inner.len()
    }

    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<(), S::Error> {
        self.inner.read_at(offset, buf)
    }

    fn read_ranges(&self, ranges: &[Range<u64>], out: &mut [u8]) -> Result<(), S::Error> {
        self.inner.read_ranges(ranges, out)
    }

    fn share_ranges(&self, ranges: &[Range<u64>]) -> Option<Result<SharedRanges, S::Error>> {
        if let Some(shared) = self.inner.share_ranges(ranges) {
            return Some(shared);
        }
        let lens: Vec<usize> = ranges
            .iter()
            .map(|r| usize::try_from(r.end.saturating_sub(r.start)).unwrap_or(usize::MAX))
            .collect();
        // A list too large to add up in memory is left to the reader's own checks.
        let total = lens.iter().try_fold(0usize, |t, l| t.checked_add(*l))?;
        let mut buffer = self.take(total);
        if let Err(e) = self
            .inner
            .read_ranges(ranges, buffer.get_mut(..total).unwrap_or_default())
        {
            return Some(Err(e));
        }
        let buffer = Arc::new(buffer);
        self.keep(&buffer);
        let owner: Owner = buffer;
        let mut at = 0;
        Some(Ok(lens
            .into_iter()
            .map(|len| {
                let window = Bytes::from_owner(Arc::clone(&owner), at..at + len);
                at += len;
                window
            })
            .collect()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_hold_the_ranges_and_buffers_come_back() {
        let file: Vec<u8> = (0..=255u8).collect();
        let source = Recycling::new(file.as_slice());
        let first = source.share_ranges(&[2..5, 10..12]).unwrap().unwrap();
        assert_eq!(
            (&*first[0], &*first[1]),
            (&[2u8, 3, 4][..], &[10u8, 11][..])
        );
        let address = first[0].as_ptr();
        // Still held: the next call gets another buffer.
        let second = source.share_ranges(&[0..4, 4..4]).unwrap().unwrap();
        assert_ne!(second[0].as_ptr(), address);
        assert_eq!(&*second[0], &[0, 1, 2, 3]);
        drop(first);
        // Released: its buffer is reused.
        let third = source.share_ranges(&[20..23, 23..23]).unwrap().unwrap();
        assert_eq!(third[0].as_ptr(), address);
        assert_eq!(&*third[0], &[20, 21, 22]);
        assert!(source.share_ranges(&[0..1, 250..260]).unwrap().is_err());
    }
}
