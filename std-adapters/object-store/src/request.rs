//! A GET that makes progress or is sent again: hedged when its answer is late, resumed when its
//! body stalls. [`get_range`] is every range an [`crate::ObjectSource`] reads; its two halves,
//! [`answered`] (the answer) and [`Resuming`] (the body), are also the whole and streaming GETs'
//! (`read.rs`) and the opening's.
//!
//! - **Hedging.** A request whose answer (its status and headers: the first byte) has not come
//!   after [`Policy::hedge_after`] (a [`Hedge::multiple`] of the usual first-byte time, at least
//!   [`Hedge::floor`]; the usual is the median measured so far) is sent again; the first answer wins and the other request is dropped
//!   (its connection closed). Both are logged as requests, and the second as a hedge.
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
use crate::source::RequestLog;
use futures::StreamExt;
use futures::future::{self, Either};
use object_store::path::Path;
use object_store::{GetOptions, GetRange, GetResult, ObjectStore};
use std::future::Future;
use std::ops::Range;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How long a request may go without a byte before it is a stall, by default.
pub const DEFAULT_STALL_TIMEOUT: Duration = Duration::from_secs(30);

/// Stalls of one range resumed before the read fails.
pub const STALL_RETRIES: u32 = 3;

/// When a late request is sent again: after `multiple` times the usual time to first byte, and
/// not before `floor`.
///
/// The floor keeps a busy server that answers in turn (tens of requests in flight, each
/// waiting for the ones before) from being sent every request twice; the multiple keeps a
/// far-away store's usual latency from counting as late.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Hedge {
    /// Times the usual time to first byte a request waits before it is sent again.
    pub multiple: u32,
    /// The shortest wait before a request is sent again.
    pub floor: Duration,
}

impl Default for Hedge {
    /// 8 times the usual first byte, at least 1 s: a store's slow tail (a few requests in a
    /// hundred taking seconds) is cut, its usual spread is not.
    fn default() -> Self {
        Hedge {
            multiple: 8,
            floor: Duration::from_secs(1),
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
    let (answered, start) = answered(store, path, Some(range.clone()), log, policy).await?;
    if answered.range != range {
        log.record(start, 0);
        let received = answered.range.end - answered.range.start;
        return Err(ObjectError::Length { range, received });
    }
    let object = (Arc::clone(store), path.clone());
    let body = Resuming::new(object, range.clone(), answered, policy, Arc::clone(log));
    let body = body.chunks(progress).await;
    let received = |chunks: &Vec<bytes::Bytes>| chunks.iter().map(|c| c.len() as u64).sum();
    log.record(start, body.as_ref().map_or(0, received));
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

/// The first answer to a GET of `range`, hedged (see the module docs), with the time its
/// request was sent; `None` when no answer came within the stall timeout. A request that lost
/// or stalled is logged with no bytes.
async fn answer(
    store: &Arc<dyn ObjectStore>,
    path: &Path,
    range: Option<&Range<u64>>,
    log: &RequestLog,
    policy: Policy,
) -> Result<Option<(GetResult, Instant)>, ObjectError> {
    let send = || {
        let options = GetOptions {
            range: range.map(|range| GetRange::Bounded(range.clone())),
            ..GetOptions::default()
        };
        store.get_opts(path, options)
    };
    let first_start = Instant::now();
    let mut first = send();
    let stall = Box::pin(tokio::time::sleep(policy.stall));
    // Wait for the answer until the hedge's time, which may move on as first bytes are
    // measured meanwhile, or until the stall.
    loop {
        let after = policy.hedge_after(log).unwrap_or(policy.stall);
        let elapsed = first_start.elapsed();
        if elapsed >= policy.stall {
            log.record(first_start, 0);
            return Ok(None);
        }
        if elapsed >= after {
            break;
        }
        let wait = Box::pin(tokio::time::sleep(after - elapsed));
        first = match future::select(first, wait).await {
            Either::Left((answer, _)) => return settled(answer, first_start, log),
            Either::Right((_, first)) => first,
        };
    }
    log.hedged();
    let second_start = Instant::now();
    let second = send();
    let (answer, other, (start, other_start)) =
        match future::select(future::select(first, second), stall).await {
            Either::Left((Either::Left((answer, second)), _)) => {
                (answer, second, (first_start, second_start))
            }
            Either::Left((Either::Right((answer, first)), _)) => {
                (answer, first, (second_start, first_start))
            }
            Either::Right(_) => {
                log.record(first_start, 0);
                log.record(second_start, 0);
                return Ok(None);
            }
        };
    if answer.is_ok() {
        drop(other);
        log.record(other_start, 0);
        return settled(answer, start, log);
    }
    // The answer that came was an error: the other request may still answer.
    log.record(start, 0);
    match tokio::time::timeout(policy.stall, other).await {
        Ok(answer) => settled(answer, other_start, log),
        Err(_) => {
            log.record(other_start, 0);
            Ok(None)
        }
    }
}

/// An answer that came: the result, or its error logged as a request with no bytes.
fn settled(
    answer: object_store::Result<GetResult>,
    start: Instant,
    log: &RequestLog,
) -> Result<Option<(GetResult, Instant)>, ObjectError> {
    match answer {
        Ok(answer) => {
            log.first_byte(start.elapsed());
            Ok(Some((answer, start)))
        }
        Err(e) => {
            log.record(start, 0);
            Err(e.into())
        }
    }
}

/// The first answer to a GET of `range` of `path` (`None`: all of it), with the time its
/// request was sent: hedged as `policy` says, and sent again when no answer comes within the
/// stall timeout, at most [`STALL_RETRIES`] times.
pub(crate) async fn answered(
    store: &Arc<dyn ObjectStore>,
    path: &Path,
    range: Option<Range<u64>>,
    log: &RequestLog,
    policy: Policy,
) -> Result<(GetResult, Instant), ObjectError> {
    for tries in 0..=STALL_RETRIES {
        if tries > 0 {
            log.retried();
        }
        if let Some(answered) = answer(store, path, range.as_ref(), log, policy).await? {
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

/// The answer of `request()`, sent again (and logged without bytes) when none comes within the
/// stall timeout, at most [`STALL_RETRIES`] times; the store's error is returned as it is, for
/// the caller to tell refusals apart (the opening suffix GET's).
pub(crate) async fn patiently<T, F>(
    path: &Path,
    log: &RequestLog,
    policy: Policy,
    mut request: impl FnMut() -> F,
) -> Result<(object_store::Result<T>, Instant), ObjectError>
where
    F: Future<Output = object_store::Result<T>>,
{
    for tries in 0..=STALL_RETRIES {
        if tries > 0 {
            log.retried();
        }
        let start = Instant::now();
        match tokio::time::timeout(policy.stall, request()).await {
            Ok(answer) => return Ok((answer, start)),
            Err(_) => log.record(start, 0),
        }
    }
    Err(ObjectError::TimedOut {
        path: path.to_string(),
        range: None,
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
            match answer(&self.store, &self.path, Some(&rest), &self.log, policy).await {
                Ok(Some((answered, start))) => {
                    self.log.record(start, 0);
                    if answered.range != rest {
                        let received = answered.range.end - answered.range.start;
                        return Some(Err(ObjectError::Length {
                            range: rest,
                            received,
                        }));
                    }
                    self.stream = answered.into_stream();
                }
                Ok(None) => self.stream = futures::stream::pending().boxed(),
                Err(e) => return Some(Err(e)),
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
            usual: ms(50),
        };
        // 8 x 50 ms is under the 1 s floor.
        assert_eq!(policy.hedge_after(&log), Some(ms(1000)));
        for time in [100, 200, 300] {
            log.first_byte(ms(time));
        }
        assert_eq!(policy.hedge_after(&log), Some(ms(1600)), "8 x the median");
        // A server answering a queue in turn is slow for every request: 8 x 5 s is past the
        // stall timeout, so nothing is sent twice.
        for _ in 0..10 {
            log.first_byte(Duration::from_secs(5));
        }
        assert_eq!(policy.hedge_after(&log), None);
        let never = Policy {
            hedge: None,
            ..policy
        };
        assert_eq!(never.hedge_after(&RequestLog::default()), None);
    }
}
