//! [`RequestLog`]: every request a source sent, shared with its spawned reads: how many, the
//! bytes they brought, the round trips they took one after another, the usual time to first
//! byte (for hedging) and the bandwidth large requests measured (for the cost model).
//!
//! The bottom of the crate: it uses nothing else here. It also says where an answer came from
//! ([`Origin`], [`ORIGIN`]): the server, or an object the server sent whole before.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

/// Where the answer to a GET came from (the transport finds out, `transport.rs`; without a
/// cloud store's feature there is no transport, and every answer is the server's).
#[derive(Debug, Clone, Default)]
#[cfg_attr(
    not(any(feature = "aws", feature = "gcp", feature = "azure", feature = "http")),
    allow(dead_code)
)]
pub(crate) enum Origin {
    /// The server, as asked.
    #[default]
    Server,
    /// The server, with the whole object for a ranged GET (it does not serve ranges): the
    /// answer was cut from it, and the object's bytes are counted here as they arrive.
    Whole(Arc<AtomicU64>),
    /// An object the server had sent whole before: no request reached it.
    Kept,
}

tokio::task_local! {
    /// Where the answer to the GET sent in this scope came from: set by the transport that
    /// finds out (`transport.rs`), read by the caller that logs the request (`request.rs`).
    pub(crate) static ORIGIN: RefCell<Origin>;
}

/// Tells the GET being sent where its answer comes from (outside an [`ORIGIN`] scope, no one
/// asks).
#[cfg_attr(
    not(any(feature = "aws", feature = "gcp", feature = "azure", feature = "http")),
    allow(dead_code)
)]
pub(crate) fn answered_from(origin: Origin) {
    let _ = ORIGIN.try_with(|o| *o.borrow_mut() = origin);
}

/// A GET as sent: when, and where its answer came from.
#[derive(Debug, Clone)]
pub(crate) struct Sent {
    pub(crate) at: Instant,
    pub(crate) origin: Origin,
}

impl Sent {
    /// A GET sent now, to the server.
    pub(crate) fn now() -> Self {
        Sent {
            at: Instant::now(),
            origin: Origin::Server,
        }
    }

    /// Whether the GET reached the server.
    pub(crate) fn reached_server(&self) -> bool {
        !matches!(self.origin, Origin::Kept)
    }
}

/// One request sent: when it started and ended, and the bytes its body held.
#[derive(Debug, Clone, Copy)]
struct Request {
    start: Instant,
    end: Instant,
    bytes: u64,
}

/// Every request a source sent, shared with its spawned reads.
#[derive(Debug, Default)]
pub struct RequestLog {
    requests: Mutex<Vec<Request>>,
    /// Bytes of streaming GETs that have not ended yet, counted as their chunks arrive.
    arriving: AtomicU64,
    /// Streaming GETs sent that have not ended yet.
    streaming: AtomicU64,
    /// Requests sent again because their answer was late.
    hedges: AtomicU64,
    /// Requests sent again for the rest of a body that stalled.
    retries: AtomicU64,
    /// The last [`FIRST_BYTES`] times to first byte (an answer's status and headers).
    first_bytes: Mutex<VecDeque<Duration>>,
    /// When the latest-sent request that has answered was sent, and when the last answer came.
    latest_answered: Mutex<Option<(Instant, Instant)>>,
    /// GETs waiting for their answers (each with its copies counting once).
    awaiting: AtomicU64,
    /// The bytes of objects a server sent whole for a ranged GET, as they arrive.
    whole: Mutex<Vec<Arc<AtomicU64>>>,
}

/// A GET waiting for its answer, counted in its [`RequestLog`] until dropped.
pub(crate) struct Awaiting<'l>(&'l RequestLog);

impl Drop for Awaiting<'_> {
    fn drop(&mut self) {
        self.0.awaiting.fetch_sub(1, Ordering::Relaxed);
    }
}

/// Times to first byte a [`RequestLog`] keeps, for the usual one.
const FIRST_BYTES: usize = 64;

/// What a [`RequestLog`] adds up to.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct RequestStats {
    /// Requests sent (a request `object_store` retried counts once).
    pub requests: u64,
    /// The longest chain of requests each sent after the one before had ended: the round
    /// trips the reading took one after another.
    pub round_trips: u64,
    /// Bytes of the bodies received.
    pub bytes: u64,
    /// Requests sent again because their answer was late (each also counts as a request).
    pub hedges: u64,
    /// Requests sent again for the rest of a response that stalled (each also a request).
    pub retries: u64,
}

impl RequestLog {
    /// Logs a request that started at `start`, ended now and brought `bytes`.
    pub fn record(&self, start: Instant, bytes: u64) {
        let request = Request {
            start,
            end: Instant::now(),
            bytes,
        };
        self.requests
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(request);
    }

    /// Logs the GET `sent` as its answer's origin says, its body having brought `bytes`: a
    /// request to the server with them; one whose server sent the whole object with that
    /// object's bytes instead, as they arrive; an answer cut from such an object as nothing
    /// (no request reached the server).
    pub(crate) fn record_sent(&self, sent: &Sent, bytes: u64) {
        match &sent.origin {
            Origin::Server => self.record(sent.at, bytes),
            Origin::Whole(arrived) => {
                self.record(sent.at, 0);
                self.whole
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .push(Arc::clone(arrived));
            }
            Origin::Kept => {}
        }
    }

    /// Counts a request sent again because its answer was late.
    pub fn hedged(&self) {
        self.hedges.fetch_add(1, Ordering::Relaxed);
    }

    /// Notes a request's time to first byte (its answer).
    pub fn first_byte(&self, time: Duration) {
        let mut times = self
            .first_bytes
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if times.len() == FIRST_BYTES {
            times.pop_front();
        }
        times.push_back(time);
    }

    /// Notes that the request sent at `sent` has answered.
    pub(crate) fn answered(&self, sent: Instant) {
        let mut latest = self
            .latest_answered
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let sent = latest.map_or(sent, |(l, _)| l.max(sent));
        *latest = Some((sent, Instant::now()));
    }

    /// Whether a request sent after `sent` has answered: one sent at `sent` and not answered
    /// yet was overtaken (a server answering in turn answers in the order it was asked).
    pub(crate) fn overtaken(&self, sent: Instant) -> bool {
        self.latest_answered
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .is_some_and(|(latest, _)| latest > sent)
    }

    /// Whether no answer has come for `wait` (or none yet).
    pub(crate) fn quiet_for(&self, wait: Duration) -> bool {
        self.latest_answered
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .is_none_or(|(_, at)| at.elapsed() >= wait)
    }

    /// Counts a GET waiting for its answer until the guard is dropped.
    pub(crate) fn awaiting(&self) -> Awaiting<'_> {
        self.awaiting.fetch_add(1, Ordering::Relaxed);
        Awaiting(self)
    }

    /// GETs waiting for their answers now: one alone, once no answer has come for a while,
    /// has no queue of this source's to wait behind.
    pub(crate) fn awaiting_answers(&self) -> u64 {
        self.awaiting.load(Ordering::Relaxed)
    }

    /// The median of the last times to first byte noted, if any.
    pub fn usual_first_byte(&self) -> Option<Duration> {
        let mut times: Vec<Duration> = self
            .first_bytes
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .copied()
            .collect();
        times.sort_unstable();
        times.get(times.len() / 2).copied()
    }

    /// Counts a request sent again for the rest of a response that stalled.
    pub fn retried(&self) {
        self.retries.fetch_add(1, Ordering::Relaxed);
    }

    /// Counts `bytes` of a streaming GET's body as they arrive, before the GET is logged.
    pub(crate) fn arrived(&self, bytes: u64) {
        self.arriving.fetch_add(bytes, Ordering::Relaxed);
    }

    /// Counts a streaming GET sent, until [`Self::record_streamed`] logs it.
    pub(crate) fn stream_started(&self) {
        self.streaming.fetch_add(1, Ordering::Relaxed);
    }

    /// Stops counting a streaming GET ([`Self::stream_started`]) whose request failed (it was
    /// logged where it failed), or whose answer no request carried ([`Origin::Kept`]).
    pub(crate) fn stream_failed(&self) {
        self.streaming.fetch_sub(1, Ordering::Relaxed);
    }

    /// Logs a streaming GET whose `bytes` were counted by [`Self::arrived`] as they came.
    pub(crate) fn record_streamed(&self, sent: &Sent, bytes: u64) {
        self.arriving.fetch_sub(bytes, Ordering::Relaxed);
        self.streaming.fetch_sub(1, Ordering::Relaxed);
        self.record_sent(sent, bytes);
    }

    /// The requests so far with the streaming GETs still arriving counted as sent, with the
    /// bytes they have brought, and as one more round trip (what the server has seen, for
    /// `--stats` of a read that stops before a stream's end).
    pub fn stats_so_far(&self) -> RequestStats {
        let mut stats = self.stats();
        let streaming = self.streaming.load(Ordering::Relaxed);
        stats.requests += streaming;
        stats.round_trips += u64::from(streaming > 0);
        stats.bytes += self.arriving.load(Ordering::Relaxed);
        stats
    }

    /// Bytes received so far: those of the requests logged, and those of streaming GETs still
    /// arriving (for a progress display; [`Self::stats`] counts requests once they end).
    pub fn bytes_received(&self) -> u64 {
        self.stats().bytes + self.arriving.load(Ordering::Relaxed)
    }

    /// The fastest body rate, in bytes per second, of the requests of at least `least` bytes,
    /// taking `first_byte` of each request's time as its wait for the first byte.
    pub fn bandwidth(&self, least: u64, first_byte: Duration) -> Option<u64> {
        let requests = self.requests.lock().unwrap_or_else(PoisonError::into_inner);
        requests
            .iter()
            .filter(|r| r.bytes >= least)
            .filter_map(|r| {
                let body = (r.end - r.start).checked_sub(first_byte)?;
                let rate = r.bytes as f64 / body.as_secs_f64().max(1e-6);
                Some(rate as u64)
            })
            .max()
    }

    /// The requests so far, added up.
    pub fn stats(&self) -> RequestStats {
        let requests = self
            .requests
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        let whole: u64 = self
            .whole
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .map(|arrived| arrived.load(Ordering::Relaxed))
            .sum();
        RequestStats {
            requests: requests.len() as u64,
            round_trips: longest_chain(&requests),
            bytes: requests.iter().map(|r| r.bytes).sum::<u64>() + whole,
            hedges: self.hedges.load(Ordering::Relaxed),
            retries: self.retries.load(Ordering::Relaxed),
        }
    }
}

/// The most requests that ran one after another: each starting once the one before had ended.
fn longest_chain(requests: &[Request]) -> u64 {
    let mut by_start: Vec<&Request> = requests.iter().collect();
    by_start.sort_by_key(|r| (r.start, r.end));
    // Indexes into `by_start` in order of end. A request that ended before another started
    // also started before it, so its chain is known by then.
    let mut by_end: Vec<usize> = (0..by_start.len()).collect();
    by_end.sort_by_key(|&i| by_start[i].end);
    let mut chains = vec![0u64; by_start.len()];
    let (mut ended, mut longest_ended) = (0, 0);
    for (i, request) in by_start.iter().enumerate() {
        while let Some(&j) = by_end.get(ended) {
            if by_start[j].end > request.start {
                break;
            }
            longest_ended = longest_ended.max(chains[j]);
            ended += 1;
        }
        chains[i] = longest_ended + 1;
    }
    chains.into_iter().max().unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(base: Instant, start: u64, end: u64) -> Request {
        Request {
            start: base + Duration::from_millis(start),
            end: base + Duration::from_millis(end),
            bytes: 1,
        }
    }

    #[test]
    fn round_trips_are_the_longest_chain_of_requests_one_after_another() {
        let t = Instant::now();
        assert_eq!(longest_chain(&[]), 0);
        // Three at once, then two at once after them, then one overlapping the second wave.
        let requests = [
            request(t, 0, 10),
            request(t, 1, 12),
            request(t, 2, 11),
            request(t, 12, 20),
            request(t, 13, 25),
            request(t, 21, 30),
            request(t, 15, 40),
        ];
        assert_eq!(longest_chain(&requests), 3);
        // A prefetch in flight alongside a chain does not add a round trip.
        let requests = [request(t, 0, 10), request(t, 10, 20), request(t, 5, 19)];
        assert_eq!(longest_chain(&requests), 2);
    }

    #[test]
    fn bandwidth_is_measured_on_large_requests() {
        let t = Instant::now();
        let log = RequestLog::default();
        let ms = |n| Duration::from_millis(n);
        let record = |start: u64, end: u64, bytes: u64| {
            log.requests.lock().unwrap().push(Request {
                start: t + ms(start),
                end: t + ms(end),
                bytes,
            })
        };
        // Small requests say nothing of the bandwidth.
        record(0, 60, 64 * 1024);
        assert_eq!(log.bandwidth(1 << 20, ms(50)), None);
        // 4 MiB in 150 ms, 50 of them waiting: 40 MiB/s; 2 MiB in 100 ms: 40 MiB/s; the
        // fastest, 8 MiB in 150 ms: 80 MiB/s.
        record(0, 150, 4 << 20);
        record(10, 110, 2 << 20);
        assert_eq!(log.bandwidth(1 << 20, ms(50)), Some(40 << 20));
        record(100, 250, 8 << 20);
        assert_eq!(log.bandwidth(1 << 20, ms(50)), Some(80 << 20));
        // A request shorter than its first byte tells nothing.
        assert_eq!(log.bandwidth(1 << 20, ms(500)), None);
    }
}
