//! What reading an input cost, as `--stats` prints it: [`ReadStats`], from a
//! [`Counting`] source, a [`CountingRead`] stream or an object store's requests; [`Cost`]: what
//! a source of batches has cost so far.
//!
//! It uses nothing of the crate; the inputs (`input`, `remote`) and the conversion fill it in.

use quiver::source::Counting;
use quiver_object_store::RequestStats;
use std::io::{self, Read};

/// The reads a run made of its input, as `--stats` prints them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ReadStats {
    /// Byte ranges requested (a stream: read calls).
    pub reads: u64,
    /// Calls to the source, each a round trip on remote storage (a stream: read calls).
    pub round_trips: u64,
    /// Bytes requested.
    pub bytes_read: u64,
    /// Of a URL: the requests sent again because their answer was late (hedges), and for the
    /// rest of a response that stalled (retries).
    pub again: Option<(u64, u64)>,
}

impl ReadStats {
    /// What a [`Counting`] source recorded.
    pub fn of<S>(source: &Counting<S>) -> Self {
        ReadStats {
            reads: source.read_count() as u64,
            round_trips: source.round_trips() as u64,
            bytes_read: source.bytes_read(),
            ..ReadStats::default()
        }
    }

    /// An object store's requests: each range (or streaming GET) a read and a round trip, and
    /// the requests sent again.
    pub fn of_requests(requests: &RequestStats) -> Self {
        ReadStats {
            reads: requests.requests,
            round_trips: requests.round_trips,
            bytes_read: requests.bytes,
            again: Some((requests.hedges, requests.retries)),
        }
    }

    /// Adds another input's counts (the hedges and retries of URLs among them).
    pub fn add(&mut self, other: &ReadStats) {
        self.reads += other.reads;
        self.round_trips += other.round_trips;
        self.bytes_read += other.bytes_read;
        if let Some((hedges, retries)) = other.again {
            let (h, r) = self.again.get_or_insert((0, 0));
            (*h, *r) = (*h + hedges, *r + retries);
        }
    }
}

/// What reading a source of batches has cost so far.
pub trait Cost {
    /// Bytes fetched so far, for an object's progress bar; `None` for a local input.
    fn fetched(&self) -> Option<u64> {
        None
    }

    /// What reading cost so far, as `--stats` prints it.
    fn stats(&self) -> ReadStats;
}

/// A `Read` that counts its calls and bytes: for a stream, each read is a round trip.
pub struct CountingRead<R> {
    inner: R,
    stats: ReadStats,
}

impl<R> CountingRead<R> {
    /// Wraps `inner` with zero counts.
    pub fn new(inner: R) -> Self {
        CountingRead {
            inner,
            stats: ReadStats::default(),
        }
    }

    /// The counts so far.
    pub fn stats(&self) -> ReadStats {
        self.stats
    }
}

impl<R: Read> Read for CountingRead<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.stats.reads += 1;
        self.stats.round_trips += 1;
        self.stats.bytes_read += n as u64;
        Ok(n)
    }
}
