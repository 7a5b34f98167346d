//! [`ObjectReader`]: an object read front to back through one streaming GET with a bounded
//! buffer, for the IPC stream format (which is read in order, not by ranges).
//!
//! It uses `head`, `request`, `log` and `error`.
//!
//! It is an [`embedded_io_async::Read`], for [`quiver::ipc::AsyncStreamReader`], and a
//! [`std::io::Read`] for a thread outside the runtime. The GET's body arrives on the runtime,
//! a chunk at a time (of the HTTP client's size), and reading takes the chunks off: at most
//! [`READ_AHEAD`] bytes of them (or [`crate::SourceOptions::read_ahead`]) wait in memory
//! whatever the object's size, so the body keeps
//! arriving while the reader decodes, and waits for the reader when it is that far ahead.
//! The read-ahead starts at [`FIRST_READ_AHEAD`] and grows by as much each time the reader
//! has taken what it holds, up to its limit: after `n` bytes taken it is about
//! `sqrt(2 x n x FIRST_READ_AHEAD)` (1.3 MiB after 3 MiB, 12 MiB after 300 MiB), so a reader
//! that stops early (a schema, `--limit`) leaves little unread behind it, however large the
//! read-ahead allowed.
//!
//! Bytes the source's opening requests already brought are not asked for again: its tail (the
//! GET stops where it starts, and it follows the body), and, for a scan, its head (handed over
//! as it arrives, while the GET of what lies between head and tail is answered; bytes a failed
//! head did not bring are asked for by a GET of their own). An object the opening brought
//! whole is read with no request at all. The body must hold exactly the bytes asked for; one that
//! ends early is an [`ObjectError::Length`], never a shorter stream.

use crate::ObjectError;
use crate::head::Head;
use crate::log::{RequestLog, Sent};
use crate::request::{Policy, Resuming};
use futures::future::{self, Either};
use object_store::path::Path;
use object_store::{GetResult, ObjectStore};
use std::collections::VecDeque;
use std::io;
use std::ops::Range;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use tokio::runtime::Handle;
use tokio::sync::{Semaphore, mpsc};

/// Bytes of the body received and not yet read, at most, by default
/// ([`crate::SourceOptions::with_read_ahead`]).
pub const READ_AHEAD: usize = 32 * 1024 * 1024;

/// The read-ahead a streaming GET starts with ([`ObjectReader`]'s module docs).
pub const FIRST_READ_AHEAD: usize = 256 * 1024;

/// The room a chunk of `len` bytes takes in a read-ahead of `budget` bytes: all of it for a
/// chunk larger than the budget, which then waits until every byte before it has been read.
fn room_of(len: usize, budget: usize) -> u32 {
    u32::try_from(len.min(budget)).unwrap_or(u32::MAX)
}

/// A chunk of the body and the room it took.
type Chunk = Result<(bytes::Bytes, u32), ObjectError>;

/// The body's chunks as they arrive, and the room left for more.
#[derive(Debug)]
struct IncomingBody {
    chunks: mpsc::UnboundedReceiver<Chunk>,
    room: Arc<Semaphore>,
    /// The read-ahead granted so far (the semaphore's capacity), shared with the GET's task.
    granted: Arc<AtomicUsize>,
    /// The most it may grow to.
    budget: usize,
    /// Bytes taken since the read-ahead last grew.
    taken: usize,
}

impl IncomingBody {
    /// Gives the room of a chunk taken off back to the GET, and grows the read-ahead by
    /// [`FIRST_READ_AHEAD`] once the reader has taken as much as it holds. Returns the chunk.
    fn taken(&mut self, received: Option<Chunk>) -> Option<Result<bytes::Bytes, ObjectError>> {
        let received = received?;
        if let Ok((chunk, room)) = &received {
            self.room.add_permits(*room as usize);
            self.taken += chunk.len();
            let granted = self.granted.load(Ordering::Acquire);
            if self.taken >= granted && granted < self.budget {
                let more = FIRST_READ_AHEAD.min(self.budget - granted);
                self.granted.store(granted + more, Ordering::Release);
                self.room.add_permits(more);
                self.taken = 0;
            }
        }
        Some(received.map(|(chunk, _)| chunk))
    }
}

impl Drop for IncomingBody {
    /// Ends the GET's task, waiting for room or not.
    fn drop(&mut self) {
        self.room.close();
    }
}

/// The GET task's end of a body: chunks go to the reader within the room it leaves.
struct Feed {
    send: mpsc::UnboundedSender<Chunk>,
    room: Arc<Semaphore>,
    granted: Arc<AtomicUsize>,
}

/// A body of at most `read_ahead` bytes ahead of its reader: the task's end and the reader's.
fn channel(read_ahead: usize) -> (Feed, IncomingBody) {
    let (send, chunks) = mpsc::unbounded_channel();
    // Within the semaphore's limit, and a u32 (one chunk's room is one acquisition).
    let budget = read_ahead.clamp(1, u32::MAX as usize);
    let first = budget.min(FIRST_READ_AHEAD);
    let room = Arc::new(Semaphore::new(first));
    let granted = Arc::new(AtomicUsize::new(first));
    let feed = Feed {
        send,
        room: Arc::clone(&room),
        granted: Arc::clone(&granted),
    };
    let body = IncomingBody {
        chunks,
        room,
        granted,
        budget,
        taken: 0,
    };
    (feed, body)
}

impl Feed {
    /// Hands `chunk` to the reader once there is room for it; `false` if the reader is gone.
    async fn send(&self, chunk: bytes::Bytes) -> bool {
        let size = room_of(chunk.len(), self.granted.load(Ordering::Acquire));
        let Ok(room) = self.room.acquire_many(size).await else {
            return false; // the reader was dropped
        };
        room.forget(); // given back as the reader takes the chunk
        self.send.send(Ok((chunk, size))).is_ok()
    }

    /// Hands the reader `error`, after which it reads nothing more.
    fn fail(&self, error: ObjectError) {
        let _ = self.send.send(Err(error));
    }

    /// Hands the reader `body`, the answer to `sent`, a streaming GET counted in `log`
    /// ([`RequestLog::stream_started`]), as [`Self::pour`] does; logs the GET when the body
    /// ends. An answer no request carried (cut from an object the server sent whole before)
    /// is no streaming GET: neither counted nor logged.
    async fn pour_answer(
        &self,
        body: Resuming,
        range: Range<u64>,
        (sent, log): (&Sent, &RequestLog),
    ) -> (bool, u64) {
        let counted = sent.reached_server();
        if !counted {
            log.stream_failed();
        }
        let (going, received) = self.pour(body, range, counted.then_some(log)).await;
        if counted {
            log.record_streamed(sent, received);
        }
        (going, received)
    }

    /// Hands the reader `body`, which must hold `range`, as it arrives (resumed after stalls),
    /// counting it in `log` if there is one. Whether the reader still reads, and the bytes
    /// received.
    async fn pour(
        &self,
        mut body: Resuming,
        range: Range<u64>,
        log: Option<&RequestLog>,
    ) -> (bool, u64) {
        let mut received = 0u64;
        while let Some(chunk) = body.next().await {
            let chunk = match chunk {
                Ok(chunk) => chunk,
                Err(e) => {
                    self.fail(e);
                    return (false, received);
                }
            };
            received += chunk.len() as u64;
            if let Some(log) = log {
                log.arrived(chunk.len() as u64);
            }
            if !self.send(chunk).await {
                return (false, received);
            }
        }
        let wanted = range.end - range.start;
        if received != wanted {
            self.fail(ObjectError::Length { range, received });
            return (false, received);
        }
        (true, received)
    }

    /// Hands the reader `range` of the object from `head`, each chunk as it came; bytes the
    /// head ends without (it failed) come from a GET of their own. Whether the reader still
    /// reads.
    async fn pour_head(
        &self,
        head: &Head,
        range: Range<u64>,
        (store, path): &(Arc<dyn ObjectStore>, Path),
        (policy, log): (Policy, &Arc<RequestLog>),
    ) -> bool {
        let mut at = range.start;
        while at < range.end {
            let chunk = match head.chunk_at(at, range.end).await {
                Some(chunk) => chunk,
                None => {
                    match crate::request::get_range(store, path, at..range.end, log, policy).await {
                        Ok(bytes) => bytes,
                        Err(e) => {
                            self.fail(e);
                            return false;
                        }
                    }
                }
            };
            at += chunk.len() as u64;
            if !self.send(chunk).await {
                return false;
            }
        }
        true
    }
}

/// Bytes of an object to hand over from its head ([`Head`]): the head and their range.
pub(crate) type FromHead = Option<(Arc<Head>, Range<u64>)>;

/// What a read in parts hands over before its parts ([`ObjectReader::in_parts`]).
pub(crate) enum Leading {
    /// The answer to a GET of the object's first part, and that GET as sent.
    Answered(Box<GetResult>, Sent),
    /// Bytes of the object from its head: the head and their range.
    Head(Arc<Head>, Range<u64>),
}

/// A spawned task, aborted when dropped.
struct Aborting<T>(tokio::task::JoinHandle<T>);

impl<T> Drop for Aborting<T> {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// `head`'s output, calling `near` for each word on `nearing` that comes meanwhile.
async fn until<T>(
    head: impl Future<Output = T>,
    nearing: &mut mpsc::UnboundedReceiver<()>,
    mut near: impl FnMut(),
) -> T {
    let mut head = std::pin::pin!(head);
    loop {
        let next = std::pin::pin!(nearing.recv());
        match future::select(head.as_mut(), next).await {
            Either::Left((out, _)) => return out,
            Either::Right(_) => near(),
        }
    }
}

/// A streaming read of an object from an offset; see the module docs.
#[derive(Debug)]
pub struct ObjectReader {
    /// The GET's body, chunk by chunk; `None` once it has ended (or when none was sent).
    chunks: Option<IncomingBody>,
    /// The bytes of the chunk being read.
    current: bytes::Bytes,
    /// What follows the body: the opening request's bytes.
    rest: bytes::Bytes,
    log: Arc<RequestLog>,
}

impl ObjectReader {
    /// Starts one GET of `range` of the object `path` (of `size` bytes) on `runtime`, logged in
    /// `log`, its body to follow `from_head` (bytes of the object from its head, as they
    /// arrive) and to be followed by `rest`, receiving up to `read_ahead` bytes ahead of the
    /// reader, resumed after stalls as `policy` says; no request when `range` is empty.
    pub(crate) fn new(
        runtime: &Handle,
        (store, path): (Arc<dyn ObjectStore>, Path),
        (from_head, range, size): (FromHead, Range<u64>, u64),
        (rest, read_ahead): (bytes::Bytes, usize),
        (policy, log): (Policy, Arc<RequestLog>),
    ) -> Self {
        if from_head.is_none() && range.is_empty() {
            return ObjectReader {
                chunks: None,
                current: bytes::Bytes::new(),
                rest,
                log,
            };
        }
        let request = (!range.is_empty()).then(|| {
            let bounded = (range != (0..size)).then(|| range.clone());
            let (object, request_log) = ((Arc::clone(&store), path.clone()), Arc::clone(&log));
            async move {
                let (store, path) = object;
                crate::request::answered(&store, &path, bounded, &request_log, policy).await
            }
        });
        Self::streaming(
            runtime,
            ((store, path), from_head, request),
            range,
            (rest, read_ahead),
            (policy, log),
        )
    }

    /// Reads the body of `answered`, the answer to `sent`, a GET of the whole object `path`,
    /// on `runtime`.
    pub(crate) fn answered(
        runtime: &Handle,
        (object, answered, sent): ((Arc<dyn ObjectStore>, Path), GetResult, Sent),
        read_ahead: usize,
        (policy, log): (Policy, Arc<RequestLog>),
    ) -> Self {
        let range = 0..answered.meta.size;
        let request = std::future::ready(Ok((answered, sent)));
        Self::streaming(
            runtime,
            (object, None, Some(request)),
            range,
            (bytes::Bytes::new(), read_ahead),
            (policy, log),
        )
    }

    /// Hands the reader `from_head`'s bytes as they arrive, then the body of `request` (its
    /// answer and when it was sent), which must hold `range` of the object, resuming it
    /// after stalls ([`crate::request::Resuming`]). The request is spawned on `runtime` at
    /// once, so that it is answered while the head's bytes are handed over.
    fn streaming(
        runtime: &Handle,
        (object, from_head, request): (
            (Arc<dyn ObjectStore>, Path),
            FromHead,
            Option<impl Future<Output = Result<(GetResult, Sent), ObjectError>> + Send + 'static>,
        ),
        range: Range<u64>,
        (rest, read_ahead): (bytes::Bytes, usize),
        (policy, log): (Policy, Arc<RequestLog>),
    ) -> Self {
        let (feed, body) = channel(read_ahead);
        let task_log = Arc::clone(&log);
        let request = request.map(|request| {
            log.stream_started();
            (Aborting(runtime.spawn(request)), Sent::now())
        });
        runtime.spawn(async move {
            if let Some((head, bytes)) = from_head
                && !feed
                    .pour_head(&head, bytes, &object, (policy, &task_log))
                    .await
            {
                // The reader is gone, or the head's bytes failed: the GET is dropped.
                if let Some((_, sent)) = request {
                    task_log.record_streamed(&sent, 0);
                }
                return;
            }
            let Some((mut request, _)) = request else {
                return;
            };
            // A request that failed was logged where it failed.
            let answer = (&mut request.0).await;
            let (result, sent) = match answer.map_err(ObjectError::Task).and_then(|a| a) {
                Ok(answer) => answer,
                Err(e) => {
                    task_log.stream_failed();
                    return feed.fail(e);
                }
            };
            let resuming = Arc::clone(&task_log);
            let body = Resuming::new(object, range.clone(), result, policy, resuming);
            feed.pour_answer(body, range, (&sent, &task_log)).await;
        });
        ObjectReader {
            chunks: Some(body),
            current: bytes::Bytes::new(),
            rest,
            log,
        }
    }

    /// Reads an object in parts on `runtime`: `first` (the answer to a GET of its first part,
    /// with that GET as sent, or bytes from its head), streamed as it arrives, then
    /// `parts` (the ranges of the rest, in order) as ranged GETs of `store`, `in_flight` at
    /// once, handed to the reader in order (each as the chunks it arrived in) once the ones
    /// before it have been, and then `rest`.
    ///
    /// The request that takes a part's place is sent when that part has at most `lead` bytes
    /// still to come (the bandwidth-delay product): its first byte then comes about as the
    /// part's last does, and the bytes keep flowing instead of stopping for a first byte
    /// every `in_flight` parts. Up to three times `in_flight` parts are sent and not yet
    /// handed over: those receiving, their successors waiting for a first byte, and room for
    /// the parts behind a late one (hedged, `request.rs`) to keep arriving meanwhile. Memory:
    /// the parts in flight and the read-ahead (three times the parts at most, when the reader
    /// falls behind or a part is late), whatever the object's size.
    pub(crate) fn in_parts(
        runtime: &Handle,
        first: Option<Leading>,
        (store, path): (Arc<dyn ObjectStore>, Path),
        (parts, in_flight, lead): (Vec<Range<u64>>, usize, u64),
        (rest, read_ahead): (bytes::Bytes, usize),
        (policy, log): (Policy, Arc<RequestLog>),
    ) -> Self {
        let (feed, body) = channel(read_ahead);
        let task_log = Arc::clone(&log);
        let task_runtime = runtime.clone();
        if let Some(Leading::Answered(..)) = first {
            log.stream_started();
        }
        runtime.spawn(async move {
            let log = task_log;
            // Word from each part's GET that at most `lead` of its bytes are still to come.
            let (near, mut nearing) = mpsc::unbounded_channel::<()>();
            let fetch = |range: Range<u64>| {
                let (store, path, log) = (Arc::clone(&store), path.clone(), Arc::clone(&log));
                let length = range.end - range.start;
                let mut near = Some(near.clone());
                let progress = move |received: u64| {
                    if length - received <= lead
                        && let Some(near) = near.take()
                    {
                        let _ = near.send(());
                    }
                };
                Aborting(task_runtime.spawn(async move {
                    let read = (policy, progress);
                    crate::request::get_range_chunks(&store, &path, range, &log, read).await
                }))
            };
            let mut parts = parts.into_iter();
            let mut fetching: VecDeque<_> =
                parts.by_ref().take(in_flight.max(1)).map(fetch).collect();
            // Parts sent and not yet handed over: those in flight, their successors, and as
            // many again that arrived while a late one ahead of them was sent again.
            let most = 3 * in_flight.max(1);
            // Parts near their ends whose places are not yet taken: each is taken by the next
            // part, within `most`; with nothing in flight, the next part goes regardless.
            let mut owed = 0usize;
            let mut take_places = |fetching: &mut VecDeque<_>, owed: &mut usize, held: usize| {
                while (*owed > 0 && held + fetching.len() < most) || held + fetching.len() == 0 {
                    let Some(range) = parts.next() else { break };
                    fetching.push_back(fetch(range));
                    *owed = owed.saturating_sub(1);
                }
            };
            // The first bytes, handed over as they arrive, while the parts behind them near
            // their ends.
            let mut near_end = || {
                owed += 1;
                take_places(&mut fetching, &mut owed, 0);
            };
            let object = (Arc::clone(&store), path.clone());
            let going = match first {
                Some(Leading::Answered(first, sent)) => {
                    let range = first.range.clone();
                    let body =
                        Resuming::new(object, range.clone(), *first, policy, Arc::clone(&log));
                    let pour = feed.pour_answer(body, range, (&sent, &log));
                    until(pour, &mut nearing, &mut near_end).await.0
                }
                Some(Leading::Head(head, range)) => {
                    let pour = feed.pour_head(&head, range, &object, (policy, &log));
                    until(pour, &mut nearing, &mut near_end).await
                }
                None => true,
            };
            if !going {
                return;
            }
            loop {
                while nearing.try_recv().is_ok() {
                    owed += 1;
                }
                take_places(&mut fetching, &mut owed, 0);
                let Some(mut head) = fetching.pop_front() else {
                    break;
                };
                let body = until(&mut head.0, &mut nearing, || {
                    owed += 1;
                    take_places(&mut fetching, &mut owed, 1);
                })
                .await;
                match body.map_err(ObjectError::Task).and_then(|b| b) {
                    Ok(chunks) => {
                        for chunk in chunks {
                            if !feed.send(chunk).await {
                                return;
                            }
                        }
                    }
                    Err(e) => return feed.fail(e),
                }
            }
        });
        ObjectReader {
            chunks: Some(body),
            current: bytes::Bytes::new(),
            rest,
            log,
        }
    }

    /// The requests of the source this reader came from, this GET included once its body
    /// has been read to the end.
    pub fn requests(&self) -> crate::RequestStats {
        self.log.stats()
    }

    /// The next bytes, at most `n` of them, without reading them (fewer only at the end).
    ///
    /// # Errors
    ///
    /// The store's error, or a body shorter than asked for.
    pub async fn peek(&mut self, n: usize) -> Result<&[u8], ObjectError> {
        while self.current.len() < n {
            let received = self.receive().await;
            let Some(next) = self.next_from(received)? else {
                break;
            };
            self.current = if self.current.is_empty() {
                next
            } else {
                [&self.current[..], &next[..]].concat().into()
            };
        }
        Ok(&self.current[..n.min(self.current.len())])
    }

    /// The next `n` bytes (fewer only at the end): the current chunk's when it holds them
    /// (no copy), otherwise the chunks joined into one buffer of `n` bytes.
    ///
    /// # Errors
    ///
    /// The store's error, or a body shorter than asked for.
    pub async fn read_bytes(&mut self, n: usize) -> Result<bytes::Bytes, ObjectError> {
        if self.current.len() >= n {
            return Ok(self.current.split_to(n));
        }
        let mut joined = Vec::with_capacity(n);
        joined.extend_from_slice(&std::mem::take(&mut self.current));
        while joined.len() < n {
            let received = self.receive().await;
            let Some(mut next) = self.next_from(received)? else {
                break;
            };
            let wanted = n - joined.len();
            if next.len() > wanted {
                self.current = next.split_off(wanted);
            }
            joined.extend_from_slice(&next);
        }
        Ok(joined.into())
    }

    /// The body's next bytes as they arrived (no copy), `None` at the end.
    ///
    /// # Errors
    ///
    /// The store's error, or a body shorter than asked for.
    pub async fn next_chunk(&mut self) -> Result<Option<bytes::Bytes>, ObjectError> {
        if !self.current.is_empty() {
            return Ok(Some(std::mem::take(&mut self.current)));
        }
        let received = self.receive().await;
        self.next_from(received)
    }

    /// Reads past the next `n` bytes (fewer only at the end); returns how many it passed.
    ///
    /// # Errors
    ///
    /// The store's error, or a body shorter than asked for.
    pub async fn skip(&mut self, n: u64) -> Result<u64, ObjectError> {
        let mut skipped = 0u64;
        while skipped < n {
            if self.current.is_empty() {
                let received = self.receive().await;
                match self.next_from(received)? {
                    Some(chunk) => self.current = chunk,
                    None => break,
                }
            }
            let step = self
                .current
                .len()
                .min(usize::try_from(n - skipped).unwrap_or(usize::MAX));
            let _ = self.current.split_to(step);
            skipped += step as u64;
        }
        Ok(skipped)
    }

    /// The body's next chunk, awaited.
    async fn receive(&mut self) -> Option<Result<bytes::Bytes, ObjectError>> {
        let body = self.chunks.as_mut()?;
        let received = body.chunks.recv().await;
        body.taken(received)
    }

    /// What comes after `received` (the body's next chunk, or its end): the chunk, then the
    /// opening's bytes once the body has ended; `None` at the end. After an error nothing
    /// more is read.
    fn next_from(
        &mut self,
        received: Option<Result<bytes::Bytes, ObjectError>>,
    ) -> Result<Option<bytes::Bytes>, ObjectError> {
        match received {
            Some(Ok(chunk)) => Ok(Some(chunk)),
            Some(Err(e)) => {
                self.chunks = None;
                self.rest = bytes::Bytes::new();
                Err(e)
            }
            None => {
                self.chunks = None;
                let rest = std::mem::take(&mut self.rest);
                Ok((!rest.is_empty()).then_some(rest))
            }
        }
    }

    /// Copies the current chunk's next bytes into `buf`.
    fn copy_to(&mut self, buf: &mut [u8]) -> usize {
        let n = buf.len().min(self.current.len());
        buf[..n].copy_from_slice(&self.current.split_to(n));
        n
    }
}

impl embedded_io::ErrorType for ObjectReader {
    type Error = ObjectError;
}

impl embedded_io_async::Read for ObjectReader {
    async fn read(&mut self, buf: &mut [u8]) -> Result<usize, ObjectError> {
        while self.current.is_empty() && !buf.is_empty() {
            let received = self.receive().await;
            match self.next_from(received)? {
                Some(chunk) => self.current = chunk,
                None => return Ok(0),
            }
        }
        Ok(self.copy_to(buf))
    }
}

impl io::Read for ObjectReader {
    /// Blocks the thread on the body's next chunk: call it from outside the runtime.
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        while self.current.is_empty() && !buf.is_empty() {
            let received = self.chunks.as_mut().and_then(|body| {
                let received = body.chunks.blocking_recv();
                body.taken(received)
            });
            match self.next_from(received).map_err(io::Error::other)? {
                Some(chunk) => self.current = chunk,
                None => return Ok(0),
            }
        }
        Ok(self.copy_to(buf))
    }
}
