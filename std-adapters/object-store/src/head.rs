//! [`Head`]: an object's first bytes, read by a GET sent beside the opening suffix GET
//! ([`crate::SourceOptions::head`]), so that a scan's first reads need no round trip of their
//! own: the leading magic and schema, the first block's metadata (where a projection's buffers
//! lie), and the first parts of a file read whole.
//!
//! It uses `request` and `log`.
//!
//! The bytes are kept as they arrive, and a read waits for the ones it needs. A scan reads a
//! file front to back: once it has read from the head and then asks for bytes past it, the
//! head's bytes after those asked for would be read for nothing, so the GET is cut (its
//! connection closed) as soon as it has brought them ([`Head::passed`]). A head that fails is
//! not an error: its bytes are asked for again by ordinary ranged GETs.

use crate::log::{RequestLog, Sent};
use crate::request::{Policy, Resuming};
use object_store::ObjectStore;
use object_store::path::Path;
use std::ops::Range;
use std::sync::{Arc, Mutex, PoisonError};
use tokio::runtime::Handle;
use tokio::sync::watch;
use tokio::task::AbortHandle;

/// The first bytes of an object, arriving; see the module docs. Dropping it cuts the GET.
#[derive(Debug)]
pub(crate) struct Head {
    /// The bytes its GET asks for: the object's first `requested`.
    requested: u64,
    state: Arc<Mutex<State>>,
    log: Arc<RequestLog>,
    /// Bytes received so far, for readers waiting for theirs.
    received: watch::Receiver<u64>,
    task: AbortHandle,
}

#[derive(Debug, Default)]
struct State {
    /// The bytes received, in the chunks they came in, each with its offset.
    chunks: Vec<(u64, bytes::Bytes)>,
    received: u64,
    /// The GET as sent, until it is logged.
    sent: Option<Sent>,
    /// Its answer came: it is counted as a streaming GET until it is logged
    /// ([`RequestLog::stream_started`]), so that `--stats` taken while it arrives count it.
    answered: bool,
    /// The GET is over: every byte came, or it was cut, or it failed.
    ended: bool,
    /// The GET is cut once this many bytes have come (`None`: it runs to its end).
    until: Option<u64>,
    /// The most bytes any read has asked of it.
    asked: u64,
}

impl State {
    /// Whether the GET should stop now.
    fn done(&self) -> bool {
        self.until.is_some_and(|until| self.received >= until)
    }

    /// Ends the GET: logged (once) with the bytes it brought, before any reader is woken,
    /// so that a reader that has its bytes finds the request counted.
    fn end(&mut self, log: &RequestLog) {
        self.ended = true;
        match self.sent.take() {
            Some(sent) if self.answered => log.record_streamed(&sent, self.received),
            Some(sent) => log.record_sent(&sent, self.received),
            None => {}
        }
    }
}

impl Head {
    /// Sends a GET of the first `bytes` bytes of `object` on `runtime`, logged in `log`.
    pub(crate) fn start(
        runtime: &Handle,
        (store, path): (Arc<dyn ObjectStore>, Path),
        bytes: u64,
        (policy, log): (Policy, Arc<RequestLog>),
    ) -> Self {
        let state = Arc::new(Mutex::new(State::default()));
        let (tell, received) = watch::channel(0u64);
        let task = runtime.spawn(receive(
            (store, path),
            0..bytes,
            (policy, Arc::clone(&log)),
            (Arc::clone(&state), tell),
        ));
        Head {
            requested: bytes,
            state,
            log,
            received,
            task: task.abort_handle(),
        }
    }

    /// The bytes of `range` once they have come; `None` if the GET ended without them
    /// (it failed, or was cut before them).
    pub(crate) async fn bytes(&self, range: Range<u64>) -> Option<bytes::Bytes> {
        let mut received = self.received.clone();
        loop {
            {
                let state = self.lock();
                if state.received >= range.end {
                    return Some(slice(&state.chunks, range));
                }
                if state.ended {
                    return None;
                }
            }
            // A closed channel: the task is gone (aborted), so nothing more will come.
            if received.changed().await.is_err() {
                let state = self.lock();
                return (state.received >= range.end).then(|| slice(&state.chunks, range));
            }
        }
    }

    /// The bytes from `at` (before `end`) of the chunk they came in, once it has come (no
    /// copy); `None` if the GET ended without the byte at `at`.
    pub(crate) async fn chunk_at(&self, at: u64, end: u64) -> Option<bytes::Bytes> {
        let mut received = self.received.clone();
        loop {
            {
                let state = self.lock();
                if state.received > at {
                    return Some(chunk_at(&state.chunks, at, end));
                }
                if state.ended {
                    return None;
                }
            }
            if received.changed().await.is_err() {
                let state = self.lock();
                return (state.received > at).then(|| chunk_at(&state.chunks, at, end));
            }
        }
    }

    /// The bytes its GET asks for.
    pub(crate) fn requested(&self) -> u64 {
        self.requested
    }

    /// The end of the bytes the head brings: all it asks for, or up to where it is cut, or,
    /// once it has ended (cut or failed), the bytes it brought.
    pub(crate) fn will_bring(&self) -> u64 {
        let state = self.lock();
        let end = state
            .until
            .map_or(self.requested, |until| until.min(self.requested));
        if state.ended {
            end.min(state.received)
        } else {
            end
        }
    }

    /// Notes that a read asks for the head's bytes up to `end`.
    pub(crate) fn asked(&self, end: u64) {
        let mut state = self.lock();
        state.asked = state.asked.max(end);
    }

    /// Notes that a read went past the head: once a read has asked for its bytes, the scan
    /// has moved on, and the GET is cut after the bytes asked for. (Before that, a read past
    /// it is the footer's, at the end.)
    pub(crate) fn passed(&self) {
        if self.lock().asked > 0 {
            self.cut();
        }
    }

    /// Cuts the GET once it has brought every byte a read has asked for (at once, if it has).
    pub(crate) fn cut(&self) {
        let asked = self.lock().asked;
        self.cut_at(asked);
    }

    /// Cuts the GET once it has brought its first `end` bytes (at once, if it has).
    pub(crate) fn cut_at(&self, end: u64) {
        let mut state = self.lock();
        state.until = Some(state.until.map_or(end, |until| until.min(end)));
        if state.done() && !state.ended {
            state.end(&self.log);
            drop(state);
            self.task.abort();
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Drop for Head {
    fn drop(&mut self) {
        self.lock().end(&self.log);
        self.task.abort();
    }
}

/// The bytes from `at` (before `end`) of the chunk of `chunks` that holds the byte at `at`.
fn chunk_at(chunks: &[(u64, bytes::Bytes)], at: u64, end: u64) -> bytes::Bytes {
    let i = chunks.partition_point(|(offset, _)| *offset <= at) - 1;
    let (offset, chunk) = &chunks[i];
    let to = (end - offset).min(chunk.len() as u64);
    chunk.slice((at - offset) as usize..to as usize)
}

/// The bytes of `range` from `chunks`: a slice of one chunk, or a copy of the pieces of several.
fn slice(chunks: &[(u64, bytes::Bytes)], range: Range<u64>) -> bytes::Bytes {
    let pieces = chunks.iter().filter_map(|(offset, chunk)| {
        let end = offset + chunk.len() as u64;
        let (from, to) = (range.start.max(*offset), range.end.min(end));
        (from < to).then(|| chunk.slice((from - offset) as usize..(to - offset) as usize))
    });
    crate::request::join(pieces.collect())
}

/// The head's GET: its answer, then its body chunk by chunk into `state`, until every byte
/// came, it is cut, or it fails; logged as one request with the bytes it brought
/// ([`State::end`]; a failed answer logged itself). Readers are woken after each chunk and
/// at the end.
async fn receive(
    (store, path): (Arc<dyn ObjectStore>, Path),
    range: Range<u64>,
    (policy, log): (Policy, Arc<RequestLog>),
    (state, tell): (Arc<Mutex<State>>, watch::Sender<u64>),
) {
    let lock = || state.lock().unwrap_or_else(PoisonError::into_inner);
    // Counted from now, in case the head is cut before its answer.
    lock().sent = Some(Sent::now());
    let answered = crate::request::answered(&store, &path, Some(range.clone()), &log, policy);
    let Ok((answer, sent)) = answered.await else {
        let mut state = lock();
        state.sent = None;
        state.end(&log);
        drop(state);
        tell.send_modify(|_| {});
        return;
    };
    {
        let mut state = lock();
        state.sent = Some(sent);
        state.answered = true;
        log.stream_started();
    }
    // An object shorter than the head answers with all of it.
    let range = answer.range.clone();
    let mut body = Resuming::new(
        (store, path),
        range.clone(),
        answer,
        policy,
        Arc::clone(&log),
    );
    loop {
        let chunk = body.next().await;
        let mut state = lock();
        let ended = match chunk {
            Some(Ok(chunk)) => {
                let offset = range.start + state.received;
                state.received += chunk.len() as u64;
                log.arrived(chunk.len() as u64);
                state.chunks.push((offset, chunk));
                state.done() || state.received >= range.end
            }
            // Its end, or a failure: what it brought is all it brings.
            _ => true,
        };
        if ended {
            state.end(&log);
        }
        let received = state.received;
        drop(state);
        tell.send_replace(received);
        if ended {
            return;
        }
    }
}
