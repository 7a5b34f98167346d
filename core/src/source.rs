//! [`RandomAccess`]: where the readers get bytes from, and [`Counting`], which shows every read.
//!
//! It uses [`Bytes`](crate::bytes::Bytes) and the errors.
//!
//! A source answers positioned reads. The reader hands it whole lists of ranges at once
//! ([`RandomAccess::read_ranges`]), so a remote source can fetch them concurrently and one call
//! costs one round trip. Sources own their I/O; the core only says which bytes it needs.

use crate::error::Error;
use core::ops::Range;

/// A source of bytes with a known length that can be read at any offset.
///
/// Errors are the source's own ([`RandomAccess::Error`]); readers return them unchanged inside
/// [`Error::Source`].
pub trait RandomAccess {
    /// The source's error type.
    type Error: core::fmt::Debug;

    /// Total length in bytes.
    fn len(&self) -> u64;

    /// Whether the source holds no bytes.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Fills `buf` with the bytes at `offset..offset + buf.len()`; a short source is an error.
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<(), Self::Error>;

    /// Reads every range in `ranges`, in order, into `out`, which is exactly as long as the
    /// ranges together. The whole list comes in one call so that a source can fetch the ranges
    /// concurrently; callers count one call as one round trip. The default reads them one by one.
    fn read_ranges(&self, ranges: &[Range<u64>], out: &mut [u8]) -> Result<(), Self::Error> {
        let mut rest = out;
        for range in ranges {
            let len = usize::try_from(range.end.saturating_sub(range.start)).unwrap_or(usize::MAX);
            let len = len.min(rest.len());
            let (head, tail) = core::mem::take(&mut rest).split_at_mut(len);
            self.read_at(range.start, head)?;
            rest = tail;
        }
        Ok(())
    }

    /// The bytes of every range in `ranges`, in order, as windows of memory the source already
    /// holds (a memory map), so the reader decodes them without copying. `None`, the default,
    /// makes the reader copy with [`RandomAccess::read_ranges`] instead. One call is one round
    /// trip, like `read_ranges`.
    #[cfg(feature = "alloc")]
    fn share_ranges(&self, ranges: &[Range<u64>]) -> Option<Result<SharedRanges, Self::Error>> {
        let _ = ranges;
        None
    }
}

/// The bytes of several ranges, each a window of memory a source shares.
#[cfg(feature = "alloc")]
pub type SharedRanges = alloc::vec::Vec<crate::bytes::Bytes<'static>>;

/// The loop of [`fill`] and `fill_async`, which differ only in awaiting each read.
macro_rules! fill {
    ($reader:ident, $position:ident, $buf:ident $(, $dot_await:tt)*) => {{
        let mut filled = 0;
        while let Some(rest) = $buf.get_mut(filled..).filter(|r| !r.is_empty()) {
            let len = rest.len() as u64;
            let n = $reader.read(rest)$(.$dot_await)*.map_err(|error| Error::Source {
                error,
                offset: *$position,
                len,
            })?;
            if n == 0 {
                break;
            }
            filled += n;
            *$position += n as u64;
        }
        Ok(filled)
    }};
}

/// Reads from a stream until `buf` is full or the input ends, advancing `position`; returns the
/// bytes read. A read error comes back unchanged, located at `position`.
pub(crate) fn fill<R: embedded_io::Read>(
    reader: &mut R,
    position: &mut u64,
    buf: &mut [u8],
) -> Result<usize, Error<R::Error>> {
    fill!(reader, position, buf)
}

/// [`fill`] from an async stream.
#[cfg(all(feature = "async", feature = "alloc"))]
pub(crate) async fn fill_async<R: embedded_io_async::Read>(
    reader: &mut R,
    position: &mut u64,
    buf: &mut [u8],
) -> Result<usize, Error<R::Error>> {
    fill!(reader, position, buf, await)
}

/// A read past the end of an in-memory source.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OutOfBounds {
    /// Requested start.
    pub offset: u64,
    /// Requested length.
    pub len: u64,
    /// Bytes the source holds.
    pub available: u64,
}

impl core::fmt::Display for OutOfBounds {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(
            f,
            "read of {} bytes at offset {} past the end of a {}-byte source",
            self.len, self.offset, self.available
        )
    }
}

impl core::error::Error for OutOfBounds {}

impl RandomAccess for [u8] {
    type Error = OutOfBounds;

    fn len(&self) -> u64 {
        <[u8]>::len(self) as u64
    }

    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<(), OutOfBounds> {
        let err = OutOfBounds {
            offset,
            len: buf.len() as u64,
            available: <[u8]>::len(self) as u64,
        };
        let start = usize::try_from(offset).map_err(|_| err)?;
        let src = start
            .checked_add(buf.len())
            .and_then(|end| self.get(start..end))
            .ok_or(err)?;
        buf.copy_from_slice(src);
        Ok(())
    }
}

impl<T: RandomAccess + ?Sized> RandomAccess for &T {
    type Error = T::Error;

    fn len(&self) -> u64 {
        (**self).len()
    }

    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<(), Self::Error> {
        (**self).read_at(offset, buf)
    }

    fn read_ranges(&self, ranges: &[Range<u64>], out: &mut [u8]) -> Result<(), Self::Error> {
        (**self).read_ranges(ranges, out)
    }

    #[cfg(feature = "alloc")]
    fn share_ranges(&self, ranges: &[Range<u64>]) -> Option<Result<SharedRanges, Self::Error>> {
        (**self).share_ranges(ranges)
    }
}

#[cfg(feature = "alloc")]
impl RandomAccess for alloc::vec::Vec<u8> {
    type Error = OutOfBounds;

    fn len(&self) -> u64 {
        self.as_slice().len() as u64
    }

    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<(), OutOfBounds> {
        self.as_slice().read_at(offset, buf)
    }
}

#[cfg(feature = "alloc")]
pub use counting::{Counting, ReadCall};

#[cfg(all(feature = "async", feature = "alloc"))]
pub use asynchronous::{AsyncRandomAccess, Blocking};

#[cfg(all(feature = "async", feature = "alloc"))]
mod asynchronous {
    use super::{RandomAccess, SharedRanges};
    use crate::bytes::Bytes;
    use alloc::vec::Vec;
    use core::future::Future;
    use core::ops::Range;

    /// A source of bytes with a known length whose reads are futures: an object store client,
    /// a browser's `fetch`, an async file.
    ///
    /// Like [`RandomAccess`], a whole list of ranges is one call (one round trip), so the
    /// source can fetch them concurrently. The future is named ([`Self::ReadRanges`]) so a
    /// reader can keep it in flight between calls; it is `Send` when the source makes it so,
    /// and nothing here requires that.
    pub trait AsyncRandomAccess {
        /// The source's error type.
        type Error: core::fmt::Debug;

        /// The future of one [`Self::read_ranges`] call.
        type ReadRanges<'a>: Future<Output = Result<SharedRanges, Self::Error>> + 'a
        where
            Self: 'a;

        /// Total length in bytes.
        fn len(&self) -> u64;

        /// Whether the source holds no bytes.
        fn is_empty(&self) -> bool {
            self.len() == 0
        }

        /// The bytes of every range in `ranges`, one buffer per range, in order; a short
        /// source is an error (a buffer of the wrong length is caught by the reader).
        fn read_ranges(&self, ranges: Vec<Range<u64>>) -> Self::ReadRanges<'_>;
    }

    impl<T: AsyncRandomAccess + ?Sized> AsyncRandomAccess for &T {
        type Error = T::Error;
        type ReadRanges<'a>
            = T::ReadRanges<'a>
        where
            Self: 'a;

        fn len(&self) -> u64 {
            (**self).len()
        }

        fn read_ranges(&self, ranges: Vec<Range<u64>>) -> Self::ReadRanges<'_> {
            (**self).read_ranges(ranges)
        }
    }

    /// A [`RandomAccess`] source used as an [`AsyncRandomAccess`] one: each call reads at once,
    /// on the polling thread, and its future is ready. Shared memory (a memory map) stays
    /// shared.
    #[derive(Debug, Default)]
    pub struct Blocking<S>(pub S);

    impl<S> Blocking<S> {
        /// The wrapped source.
        pub fn inner(&self) -> &S {
            &self.0
        }

        /// Unwraps the source.
        pub fn into_inner(self) -> S {
            self.0
        }
    }

    impl<S: RandomAccess> AsyncRandomAccess for Blocking<S> {
        type Error = S::Error;
        type ReadRanges<'a>
            = core::future::Ready<Result<SharedRanges, S::Error>>
        where
            Self: 'a;

        fn len(&self) -> u64 {
            self.0.len()
        }

        fn read_ranges(&self, ranges: Vec<Range<u64>>) -> Self::ReadRanges<'_> {
            core::future::ready(read_now(&self.0, &ranges))
        }
    }

    /// Reads `ranges` from a blocking source into one allocation cut into one buffer per
    /// range (a range too large for memory comes back empty, which the reader rejects).
    fn read_now<S: RandomAccess>(
        source: &S,
        ranges: &[Range<u64>],
    ) -> Result<SharedRanges, S::Error> {
        if let Some(shared) = source.share_ranges(ranges) {
            return shared;
        }
        let lens: Vec<usize> = ranges
            .iter()
            .map(|r| usize::try_from(r.end.saturating_sub(r.start)).unwrap_or(0))
            .collect();
        let total = lens
            .iter()
            .fold(0usize, |sum, len| sum.saturating_add(*len));
        let mut out = alloc::vec![0u8; total];
        source.read_ranges(ranges, &mut out)?;
        let out = Bytes::from_vec(out);
        let mut at = 0usize;
        Ok(lens
            .into_iter()
            .map(|len| {
                let end = at.saturating_add(len);
                let bytes = out.slice(at..end).unwrap_or_default();
                at = end;
                bytes
            })
            .collect())
    }
}

#[cfg(feature = "alloc")]
mod counting {
    use super::RandomAccess;
    use alloc::vec::Vec;
    use core::cell::RefCell;
    use core::ops::Range;

    /// One range read through a [`Counting`] source.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct ReadCall {
        /// Start offset.
        pub offset: u64,
        /// Length in bytes.
        pub len: u64,
        /// Which round trip (source call) the read belonged to, from 0.
        pub round_trip: usize,
    }

    /// Wraps a source and records every read: offset, length and round trip.
    ///
    /// A `read_at` is one read and one round trip; a `read_ranges` call is one round trip with
    /// one read per range. Not `Sync`: put it outside any concurrency wrapper.
    #[derive(Debug, Default)]
    pub struct Counting<S> {
        inner: S,
        log: RefCell<Vec<ReadCall>>,
        round_trips: core::cell::Cell<usize>,
    }

    impl<S> Counting<S> {
        /// Wraps `inner` with an empty log.
        pub fn new(inner: S) -> Self {
            Counting {
                inner,
                log: RefCell::new(Vec::new()),
                round_trips: core::cell::Cell::new(0),
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

        /// Every read so far, in order.
        pub fn reads(&self) -> Vec<ReadCall> {
            self.log.borrow().clone()
        }

        /// Number of reads (ranges) so far.
        pub fn read_count(&self) -> usize {
            self.log.borrow().len()
        }

        /// Number of calls to the source (round trips) so far.
        pub fn round_trips(&self) -> usize {
            self.round_trips.get()
        }

        /// Total bytes read so far.
        pub fn bytes_read(&self) -> u64 {
            self.log.borrow().iter().map(|r| r.len).sum()
        }

        /// Forgets the reads so far.
        pub fn reset(&self) {
            self.log.borrow_mut().clear();
            self.round_trips.set(0);
        }

        fn record(&self, ranges: impl Iterator<Item = Range<u64>>) {
            let round_trip = self.round_trips.get();
            self.round_trips.set(round_trip + 1);
            self.log.borrow_mut().extend(ranges.map(|r| ReadCall {
                offset: r.start,
                len: r.end.saturating_sub(r.start),
                round_trip,
            }));
        }
    }

    impl<S: RandomAccess> RandomAccess for Counting<S> {
        type Error = S::Error;

        fn len(&self) -> u64 {
            self.inner.len()
        }

        fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<(), S::Error> {
            self.record(core::iter::once(offset..offset + buf.len() as u64));
            self.inner.read_at(offset, buf)
        }

        fn read_ranges(&self, ranges: &[Range<u64>], out: &mut [u8]) -> Result<(), S::Error> {
            self.record(ranges.iter().cloned());
            self.inner.read_ranges(ranges, out)
        }

        fn share_ranges(
            &self,
            ranges: &[Range<u64>],
        ) -> Option<Result<super::SharedRanges, S::Error>> {
            let shared = self.inner.share_ranges(ranges)?;
            self.record(ranges.iter().cloned());
            Some(shared)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn read_ranges_fills_each_range_in_order() {
        let file: &[u8] = b"0123456789";
        let mut out = [0u8; 5];
        file.read_ranges(&[1..3, 6..9], &mut out).unwrap();
        assert_eq!(&out, b"12678");
        assert!(file.read_at(8, &mut [0u8; 4]).is_err());
        assert!(file.read_ranges(&[2..4, 8..12], &mut [0u8; 6]).is_err());
    }
}
