//! [`ObjectReader`]: a whole object as one streaming GET, read through [`std::io::Read`] with a
//! bounded buffer, for the IPC stream format (which is read front to back, not by ranges).
//!
//! The GET's body arrives on the runtime, a chunk at a time, into a channel of
//! [`CHUNKS_BUFFERED`] chunks; reading takes them off on the calling thread, so at most that
//! many chunks (of the HTTP client's size, some KiB each) wait in memory whatever the object's
//! size. Read it from a thread outside the runtime (`block_on`'s caller, not a task).

use crate::ObjectError;
use crate::source::RequestLog;
use futures::StreamExt;
use object_store::path::Path;
use object_store::{GetOptions, GetRange, ObjectStore};
use std::io;
use std::sync::Arc;
use std::time::Instant;
use tokio::runtime::Handle;
use tokio::sync::mpsc;

/// Body chunks waiting to be read, at most.
pub const CHUNKS_BUFFERED: usize = 16;

/// A streaming GET of a whole object (or of its bytes from an offset); see the module docs.
#[derive(Debug)]
pub struct ObjectReader {
    chunks: mpsc::Receiver<Result<bytes::Bytes, ObjectError>>,
    current: bytes::Bytes,
    log: Arc<RequestLog>,
}

impl ObjectReader {
    /// Starts one GET of `path` from byte `offset` on `runtime`, logged in `log`.
    pub(crate) fn new(
        runtime: &Handle,
        store: Arc<dyn ObjectStore>,
        path: Path,
        offset: u64,
        log: Arc<RequestLog>,
    ) -> Self {
        let (send, chunks) = mpsc::channel(CHUNKS_BUFFERED);
        let task_log = Arc::clone(&log);
        runtime.spawn(async move {
            let start = Instant::now();
            let options = GetOptions {
                range: (offset > 0).then_some(GetRange::Offset(offset)),
                ..GetOptions::default()
            };
            let mut received = 0u64;
            match store.get_opts(&path, options).await {
                Ok(result) => {
                    let mut body = result.into_stream();
                    while let Some(chunk) = body.next().await {
                        let chunk = chunk.map_err(ObjectError::Store);
                        received += chunk.as_ref().map_or(0, |c| c.len() as u64);
                        if send.send(chunk).await.is_err() {
                            break; // the reader was dropped
                        }
                    }
                }
                Err(e) => {
                    let _ = send.send(Err(e.into())).await;
                }
            }
            task_log.record(start, received);
        });
        ObjectReader {
            chunks,
            current: bytes::Bytes::new(),
            log,
        }
    }

    /// The requests of the source this reader came from, this GET included once its body
    /// has been read to the end.
    pub fn requests(&self) -> crate::RequestStats {
        self.log.stats()
    }
}

impl io::Read for ObjectReader {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        while self.current.is_empty() {
            match self.chunks.blocking_recv() {
                Some(Ok(chunk)) => self.current = chunk,
                Some(Err(e)) => return Err(io::Error::other(e)),
                None => return Ok(0),
            }
        }
        let n = buf.len().min(self.current.len());
        buf[..n].copy_from_slice(&self.current.split_to(n));
        Ok(n)
    }
}
