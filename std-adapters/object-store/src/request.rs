//! A GET that makes progress or is sent again: hedged when its answer is late, resumed when its
//! body stalls. [`get_range`] is every range an [`crate::ObjectSource`] reads; its two halves,
//! [`answered`] (the answer) and [`Resuming`] (the body), are also the whole and streaming GETs'
//! (`read.rs`) and the opening's.
//!
//! It uses `log` and `error`.
//!
//! - **Hedging.** A request whose answer (its status and headers: the first byte) has not come
//!   after [`Policy::hedge_after`] (a [`Hedge::multiple`] of the usual first-byte time, at least
//!   [`Hedge::floor`]; the usual is the median measured so far) is sent again if it is in the
//!   store's slow tail: a request sent after it has answered, or it is the source's only one
//!   waiting for an answer and no other has answered for as long (the opening, the last
//!   part: no queue to wait behind, the server's last answer long gone); or else once
//!   it is four times as late (a server answering a queue in turn answers in order: waiting
//!   longer there is not lateness). The first time, two copies go at once (a tail that strikes
//!   a run of requests, or requests by their order, rarely strikes two sent together), then
//!   one more each time as late, up to [`Hedge::copies`]. The first answer wins and the others
//!   are dropped (their connections closed). All are logged as requests, and each copy as a
//!   hedge.
//! - **Timeouts by progress, not by size.** A body that keeps arriving is never cut, whatever its
//!   size (the stores' HTTP client has no overall timeout, `transport.rs`). A request with no
//!   answer, or a body with no byte, for [`Policy::stall`] is a stall: the rest of the range
//!   (from the first byte not yet received) is asked for again, at most [`STALL_RETRIES`] times
//!   (each a retry in the log), then the read fails with [`ObjectError::TimedOut`], which names
//!   the object, the range and the wait.
//!
//! Everything here is counted in the source's [`RequestLog`]: requests with their bytes,
//! hedges and retries. The functions take the store and path and do the I/O; the decisions
//! (when to hedge, when a wait is a stall) are the [`Policy`]'s few numbers.

use crate::ObjectError;
use crate::log::{ORIGIN, RequestLog, Sent};
use futures::StreamExt;
use futures::future::{self, Either};
use futures::stream::FuturesUnordered;
use object_store::path::Path;
use object_store::{GetOptions, GetRange, GetResult, ObjectStore};
use std::cell::RefCell;
use std::future::Future;
use std::ops::Range;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How long a request may go without a byte before it is a stall, by default.
pub const DEFAULT_STALL_TIMEOUT: Duration = Duration::from_secs(30);

/// Stalls of one range resumed before the read fails.
pub const STALL_RETRIES: u32 = 3;

/// When a late request is sent again: after `multiple` times the usual time to first byte, and
/// not before `floor`; and again, as late, up to `copies` times.
///
/// The usual is the median first byte measured on this source, so a busy server that answers
/// in turn (tens of requests in flight, each waiting for the ones before) is slow for all of
/// them, not late for one; the floor keeps a near store's spread of a few milliseconds from
/// counting as late. A copy may land in the slow tail too (a few requests in a hundred), so
/// one copy is not always enough.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Hedge {
    /// Times the usual time to first byte a request waits before it is sent again.
    pub multiple: u32,
    /// The shortest wait before a request is sent again.
    pub floor: Duration,
    /// Copies of one request sent at most.
    pub copies: u32,
}

impl Default for Hedge {
    /// Twice the usual first byte, at least 100 ms, three copies at most: on S3 (30-50 ms to
    /// the first byte, a few requests in a hundred taking seconds) a request is sent again
    /// once it is later than nearly all (the usual spread stays within twice the median),
    /// and a slow tail costs a few more requests, not seconds (`benches/README.md`, "Slow
    /// tail": 3x and 150 ms, one copy, left the 297 MB whole read there at 1.2-3.6 s).
    fn default() -> Self {
        Hedge {
            multiple: 2,
            floor: Duration::from_millis(100),
            copies: 3,
        }
    }
}

impl Hedge {
    /// Sets the multiple of the usual time to first byte (at least 1).
    #[must_use]
    pub fn with_multiple(mut self, multiple: u32) -> Self {
        self.multiple = multiple.max(1);
        self
    }

    /// Sets the shortest wait before a request is sent again.
    #[must_use]
    pub fn with_floor(mut self, floor: Duration) -> Self {
        self.floor = floor;
        self
    }

    /// Sets the most copies of one request sent (0: never sent again).
    #[must_use]
    pub fn with_copies(mut self, copies: u32) -> Self {
        self.copies = copies;
        self
    }

    /// The wait before a request is sent again, when the usual first byte takes `usual`.
    pub fn after(&self, usual: Duration) -> Duration {
        usual.saturating_mul(self.multiple).max(self.floor)
    }
}

/// What [`get_range`] waits for: see the module docs.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Policy {
    /// No answer or byte for this long: a stall.
    pub stall: Duration,
    /// When a late request is sent again (`None`: never).
    pub hedge: Option<Hedge>,
    /// The usual time to first byte before any was measured here (the opening's, or given).
    pub usual: Duration,
}

impl Policy {
    /// How long a request may wait for its answer before it is sent again: the [`Hedge`]'s
    /// multiple of the usual first byte (the median of those `log` measured, or
    /// [`Self::usual`], whichever is longer: a server answering a queue of requests in turn
    /// is slow for all of them, not late for one), if shorter than the stall timeout.
    fn hedge_after(&self, log: &RequestLog) -> Option<Duration> {
        let hedge = self.hedge?;
        let usual = log
            .usual_first_byte()
            .map_or(self.usual, |m| m.max(self.usual));
        Some(hedge.after(usual)).filter(|after| *after < self.stall)
    }
}

/// One ranged GET of `range` of `path`: hedged, resumed after stalls, logged, and checked to
/// hold exactly `range`; see the module docs. The body in one buffer (no copy when it came in
/// one chunk).
pub(crate) async fn get_range(
    store: &Arc<dyn ObjectStore>,
    path: &Path,
    range: Range<u64>,
    log: &Arc<RequestLog>,
    policy: Policy,
) -> Result<bytes::Bytes, ObjectError> {
    get_range_chunks(store, path, range, log, (policy, |_| {}))
        .await
        .map(join)
}

/// [`get_range`]'s body as the chunks it arrived in, for a reader that takes them one after
/// another (a whole read in parts): no copy into one buffer. `progress` is told the bytes
/// received so far after each chunk.
pub(crate) async fn get_range_chunks(
    store: &Arc<dyn ObjectStore>,
    path: &Path,
    range: Range<u64>,
    log: &Arc<RequestLog>,
    (policy, progress): (Policy, impl FnMut(u64)),
) -> Result<Vec<bytes::Bytes>, ObjectError> {
    let (answered, sent) = answered(store, path, Some(range.clone()), log, policy).await?;
    if answered.range != range {
        log.record_sent(&sent, 0);
        let received = answered.range.end - answered.range.start;
        return Err(ObjectError::Length { range, received });
    }
    let object = (Arc::clone(store), path.clone());
    let body = Resuming::new(object, range.clone(), answered, policy, Arc::clone(log));
    let body = body.chunks(progress).await;
    let received = |chunks: &Vec<bytes::Bytes>| chunks.iter().map(|c| c.len() as u64).sum();
    log.record_sent(&sent, body.as_ref().map_or(0, received));
    let body = body?;
    if received(&body) != range.end - range.start {
        let received = received(&body);
        return Err(ObjectError::Length { range, received });
    }
    Ok(body)
}

/// `chunks` in one buffer: the chunk itself when there is one.
pub(crate) fn join(chunks: Vec<bytes::Bytes>) -> bytes::Bytes {
    match <[bytes::Bytes; 1]>::try_from(chunks) {
        Ok([one]) => one,
        Err(chunks) => chunks.concat().into(),
    }
}

/// The first answer to `request()` (a GET), hedged (see the module docs), with its request as
/// sent (when, and where the answer came from): the first success, or the last error once
/// every request sent has failed; `None` when no answer came within the stall timeout. A
/// request that lost, failed or stalled is logged with no bytes.
async fn answer<F>(
    log: &RequestLog,
    policy: Policy,
    request: &mut impl FnMut() -> F,
) -> Option<(object_store::Result<GetResult>, Sent)>
where
    F: Future<Output = object_store::Result<GetResult>>,
{
    let _awaiting = log.awaiting();
    let began = Instant::now();
    // When each request was sent, while it waits for its answer.
    let mut waiting = vec![Some(began)];
    let mut sent = FuturesUnordered::new();
    let mut send = |copy: usize| {
        let get = request();
        let answered = async move { (get.await, ORIGIN.with(RefCell::take)) };
        async move { (copy, ORIGIN.scope(RefCell::default(), answered).await) }
    };
    sent.push(send(0));
    let copies = policy.hedge.map_or(0, |h| h.copies as usize);
    let lost = |waiting: &[Option<Instant>]| {
        for start in waiting.iter().flatten() {
            log.record(*start, 0);
        }
    };
    loop {
        // Wait until the next copy is due (the hedge's time after the last request sent,
        // which may move on as first bytes are measured meanwhile: looked at again every
        // quarter wait), or until the stall.
        let stall = began + policy.stall;
        let last = waiting
            .iter()
            .rev()
            .flatten()
            .next()
            .copied()
            .unwrap_or(began);
        let now = Instant::now();
        let (due, ready) = match policy.hedge_after(log) {
            Some(after) if waiting.len() <= copies => {
                let (late, very_late) = (last + after, last + after.saturating_mul(4));
                let alone = log.awaiting_answers() <= 1 && log.quiet_for(after);
                let tail = log.overtaken(began) || alone;
                let ready = now >= late && (now >= very_late || tail);
                let next = if now < late { late } else { very_late };
                let due = next.min(now + after / 4).min(stall);
                (if ready { now } else { due }, ready)
            }
            _ => (stall, false),
        };
        if ready {
            // The first time, two copies at once (a tail that strikes a run of requests, or
            // requests by their order, rarely strikes two sent together); then one at a time.
            let pair = waiting.len() == 1 && copies >= 2;
            for _ in 0..if pair { 2 } else { 1 } {
                log.hedged();
                waiting.push(Some(now));
                sent.push(send(waiting.len() - 1));
            }
            continue;
        }
        let wait = Box::pin(tokio::time::sleep_until(due.into()));
        match future::select(sent.next(), wait).await {
            Either::Left((Some((copy, (Ok(answer), origin))), _)) => {
                let at = waiting[copy].take().unwrap_or(began);
                lost(&waiting);
                let this = Sent { at, origin };
                // An answer cut from an object the server sent before took no time of its own.
                if this.reached_server() {
                    log.first_byte(at.elapsed());
                    log.answered(at);
                }
                return Some((Ok(answer), this));
            }
            Either::Left((Some((copy, (Err(e), origin))), _)) => {
                let at = waiting[copy].take().unwrap_or(began);
                let this = Sent { at, origin };
                // A request the client refused to send (`NotSupported`) was no request.
                if !matches!(e, object_store::Error::NotSupported { .. }) {
                    log.record_sent(&this, 0);
                }
                // Another request may still answer.
                if sent.is_empty() {
                    return Some((Err(e), this));
                }
            }
            Either::Left((None, _)) => return None,
            Either::Right(_) if Instant::now() >= stall => {
                lost(&waiting);
                return None;
            }
            Either::Right(_) => {}
        }
    }
}

/// The first answer to a GET of `range` of `path` (`None`: all of it), with its request as
/// sent: hedged as `policy` says, and sent again when no answer comes within the
/// stall timeout, at most [`STALL_RETRIES`] times. A failed request was logged.
pub(crate) async fn answered(
    store: &Arc<dyn ObjectStore>,
    path: &Path,
    range: Option<Range<u64>>,
    log: &RequestLog,
    policy: Policy,
) -> Result<(GetResult, Sent), ObjectError> {
    let options = GetOptions {
        range: range.clone().map(GetRange::Bounded),
        ..GetOptions::default()
    };
    let get = || store.get_opts(path, options.clone());
    let (answer, start) = patiently((path, range), log, policy, get).await?;
    Ok((answer?, start))
}

/// The answer of `request()` (a GET), hedged as `policy` says, and sent again when none comes
/// within the stall timeout, at most [`STALL_RETRIES`] times; the store's error is returned as
/// it is (a failed request was logged), for a caller to tell refusals apart (the opening's).
pub(crate) async fn patiently<F>(
    (path, range): (&Path, Option<Range<u64>>),
    log: &RequestLog,
    policy: Policy,
    mut request: impl FnMut() -> F,
) -> Result<(object_store::Result<GetResult>, Sent), ObjectError>
where
    F: Future<Output = object_store::Result<GetResult>>,
{
    for tries in 0..=STALL_RETRIES {
        if tries > 0 {
            log.retried();
        }
        if let Some(answered) = answer(log, policy, &mut request).await {
            return Ok(answered);
        }
    }
    Err(ObjectError::TimedOut {
        path: path.to_string(),
        range,
        waited: policy.stall,
        tries: STALL_RETRIES + 1,
    })
}

/// The body of a GET of `range` of an object, read as it arrives: a stall (no byte for the
/// stall timeout) asks for the rest again, from the first byte not received, at most
/// [`STALL_RETRIES`] times. The requests it sends are logged without bytes: the caller counts
/// the body's bytes on the first request.
pub(crate) struct Resuming {
    store: Arc<dyn ObjectStore>,
    path: Path,
    range: Range<u64>,
    received: u64,
    stream: futures::stream::BoxStream<'static, object_store::Result<bytes::Bytes>>,
    policy: Policy,
    resumed: u32,
    log: Arc<RequestLog>,
}

impl Resuming {
    /// The body of `answered`, the answer to a GET of `range` of `path` in `store`.
    pub(crate) fn new(
        (store, path): (Arc<dyn ObjectStore>, Path),
        range: Range<u64>,
        answered: GetResult,
        policy: Policy,
        log: Arc<RequestLog>,
    ) -> Self {
        Resuming {
            store,
            path,
            range,
            received: 0,
            stream: answered.into_stream(),
            policy,
            resumed: 0,
            log,
        }
    }

    /// Every byte of the body, in one buffer (no copy when it came in one chunk).
    pub(crate) async fn collect(self) -> Result<bytes::Bytes, ObjectError> {
        self.chunks(|_| {}).await.map(join)
    }

    /// Every byte of the body, in the chunks it arrived in; `progress` is told the bytes
    /// received so far after each.
    async fn chunks(
        mut self,
        mut progress: impl FnMut(u64),
    ) -> Result<Vec<bytes::Bytes>, ObjectError> {
        let mut chunks = Vec::new();
        while let Some(chunk) = self.next().await {
            chunks.push(chunk?);
            progress(self.received);
        }
        Ok(chunks)
    }

    /// The body's next bytes; `None` at its end.
    pub(crate) async fn next(&mut self) -> Option<Result<bytes::Bytes, ObjectError>> {
        loop {
            match tokio::time::timeout(self.policy.stall, self.stream.next()).await {
                Ok(Some(Ok(chunk))) if chunk.is_empty() => continue,
                Ok(Some(Ok(chunk))) => {
                    self.received += chunk.len() as u64;
                    return Some(Ok(chunk));
                }
                Ok(Some(Err(e))) => return Some(Err(e.into())),
                Ok(None) => return None,
                Err(_) => {}
            }
            // Stalled: the rest, from the first byte not received.
            let rest = self.range.start + self.received..self.range.end;
            if self.resumed == STALL_RETRIES || rest.is_empty() {
                return Some(Err(ObjectError::TimedOut {
                    path: self.path.to_string(),
                    range: Some(self.range.clone()),
                    waited: self.policy.stall,
                    tries: self.resumed + 1,
                }));
            }
            self.resumed += 1;
            self.log.retried();
            let policy = Policy {
                hedge: None,
                ..self.policy
            };
            let options = GetOptions {
                range: Some(GetRange::Bounded(rest.clone())),
                ..GetOptions::default()
            };
            let mut get = || self.store.get_opts(&self.path, options.clone());
            match answer(&self.log, policy, &mut get).await {
                Some((Ok(answered), sent)) => {
                    self.log.record_sent(&sent, 0);
                    if answered.range != rest {
                        let received = answered.range.end - answered.range.start;
                        return Some(Err(ObjectError::Length {
                            range: rest,
                            received,
                        }));
                    }
                    self.stream = answered.into_stream();
                }
                None => self.stream = futures::stream::pending().boxed(),
                Some((Err(e), _)) => return Some(Err(e.into())),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_is_hedged_after_a_multiple_of_the_usual_first_byte() {
        let log = RequestLog::default();
        let ms = Duration::from_millis;
        let policy = Policy {
            stall: Duration::from_secs(30),
            hedge: Some(Hedge::default()),
            usual: ms(40),
        };
        // 2 x 40 ms is under the 100 ms floor.
        assert_eq!(policy.hedge_after(&log), Some(ms(100)));
        for time in [100, 200, 300] {
            log.first_byte(ms(time));
        }
        assert_eq!(policy.hedge_after(&log), Some(ms(400)), "2 x the median");
        // A server answering a queue in turn is slow for every request: 2 x 15 s is past the
        // stall timeout, so nothing is sent twice.
        for _ in 0..10 {
            log.first_byte(Duration::from_secs(15));
        }
        assert_eq!(policy.hedge_after(&log), None);
        let never = Policy {
            hedge: None,
            ..policy
        };
        assert_eq!(never.hedge_after(&RequestLog::default()), None);
    }
}
