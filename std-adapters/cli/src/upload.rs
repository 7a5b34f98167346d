//! `--output URL`: the JSON uploaded to an object store as it is produced, in parts of
//! [`PART`] bytes (object_store's multipart upload: S3's, GCS's and Azure's block lists), up
//! to [`PARTS_IN_FLIGHT`] of them sent at once while encoding goes on. Memory stays at
//! `PART × (PARTS_IN_FLIGHT + 1)` whatever the output's size.
//!
//! It uses `signals` and the crate root's `Failure`.
//!
//! The object appears only when the run succeeds ([`Upload::complete`]). A run that fails
//! aborts the upload when its [`Upload`] is dropped, and SIGINT, SIGTERM or SIGHUP abort it
//! before the process exits (`output.rs`'s signal thread calls [`abort_on_signal`]): no object
//! and no parts are left behind. The upload is registered under one lock that the completion
//! and the signal thread both take, so a signal finds either an upload still open (aborted) or
//! one complete (kept), never one half done.

use crate::Failure;
use object_store::{MultipartUpload, ObjectStoreExt, PutPayload};
use std::collections::VecDeque;
use std::io;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use tokio::runtime::{Handle, Runtime};
use tokio::task::JoinHandle;

/// Bytes per uploaded part (S3 takes 5 MiB to 5 GiB, the last part smaller).
pub const PART: usize = 8 << 20;

/// Parts sent at once; writing waits for the oldest beyond this.
pub const PARTS_IN_FLIGHT: usize = 4;

/// The upload in progress, shared with the signal thread; `None` once completed or aborted.
type Shared = Arc<Mutex<Option<Box<dyn MultipartUpload>>>>;

/// The upload a signal must abort, and the runtime to abort it on.
static REGISTERED: Mutex<Option<(Handle, Shared)>> = Mutex::new(None);

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// An object being uploaded.
pub struct Upload {
    runtime: Runtime,
    upload: Shared,
    /// The part being filled.
    part: Vec<u8>,
    in_flight: VecDeque<JoinHandle<object_store::Result<()>>>,
    /// The URL as given.
    pub url: String,
    endpoint: String,
}

impl Upload {
    /// Starts a multipart upload to `url` (one request); a URL of no known scheme is a usage
    /// error.
    pub fn start(url: &str) -> Result<Self, Failure> {
        let store = quiver_object_store::from_url(url).map_err(|e| match e {
            quiver_object_store::UrlError::Unsupported { .. } => Failure::Usage(e.to_string()),
            other => Failure::Error(format!("{url}: {other}")),
        })?;
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("quiver-upload")
            .enable_all()
            .build()
            .map_err(|e| Failure::Error(format!("{url}: starting the I/O runtime: {e}")))?;
        #[cfg(unix)]
        crate::signals::watch(abort_on_signal)
            .map_err(|e| Failure::Error(format!("{url}: {e}")))?;
        let endpoint = store.endpoint.clone();
        // Registered under the lock the signal thread takes, as soon as it exists.
        let mut registered = lock(&REGISTERED);
        let upload = runtime
            .block_on(store.store.put_multipart(&store.path))
            .map_err(|e| failure(url, &endpoint, e))?;
        let upload: Shared = Arc::new(Mutex::new(Some(upload)));
        *registered = Some((runtime.handle().clone(), Arc::clone(&upload)));
        drop(registered);
        Ok(Upload {
            runtime,
            upload,
            part: Vec::with_capacity(PART),
            in_flight: VecDeque::new(),
            url: url.to_owned(),
            endpoint,
        })
    }

    /// Sends the part filled so far, first waiting for the oldest part when
    /// [`PARTS_IN_FLIGHT`] are on their way.
    fn send_part(&mut self) -> io::Result<()> {
        while self.in_flight.len() >= PARTS_IN_FLIGHT {
            self.wait_oldest()?;
        }
        let part = std::mem::replace(&mut self.part, Vec::with_capacity(PART));
        let sent = match lock(&self.upload).as_mut() {
            Some(upload) => upload.put_part(PutPayload::from(part)),
            None => return Err(io::Error::other("the upload was aborted")),
        };
        self.in_flight.push_back(self.runtime.spawn(sent));
        Ok(())
    }

    /// Waits for the oldest part on its way.
    fn wait_oldest(&mut self) -> io::Result<()> {
        let Some(oldest) = self.in_flight.pop_front() else {
            return Ok(());
        };
        match self.runtime.block_on(oldest) {
            Ok(Ok(())) => Ok(()),
            Ok(Err(e)) => Err(io::Error::other(one_line(&e))),
            Err(e) => Err(io::Error::other(e)),
        }
    }

    /// Sends the last part, waits for every part, and completes the upload: the object
    /// appears.
    pub fn complete(mut self) -> Result<(), Failure> {
        let (url, endpoint) = (self.url.clone(), self.endpoint.clone());
        let failed = |e: io::Error| Failure::Error(format!("{url}: {e} (endpoint {endpoint})"));
        if !self.part.is_empty() {
            self.send_part().map_err(failed)?;
        }
        while !self.in_flight.is_empty() {
            self.wait_oldest().map_err(failed)?;
        }
        // Under the signal thread's lock: a signal now waits until the object is complete.
        let registered = lock(&REGISTERED);
        let upload = lock(&self.upload).take();
        let completed = self.runtime.block_on(async {
            let Some(mut upload) = upload else {
                return Ok(());
            };
            let result = upload.complete().await.map(drop);
            if result.is_err() {
                // No parts are left behind.
                let _ = upload.abort().await;
            }
            result
        });
        drop(registered);
        completed.map_err(|e| failure(&self.url, &self.endpoint, e))
    }
}

impl io::Write for Upload {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let room = PART - self.part.len();
        let taken = buf.len().min(room);
        self.part
            .extend_from_slice(buf.get(..taken).unwrap_or_default());
        if self.part.len() >= PART {
            self.send_part()?;
        }
        Ok(taken)
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Drop for Upload {
    /// A run that did not complete the upload aborts it: the parts sent are deleted.
    fn drop(&mut self) {
        for part in self.in_flight.drain(..) {
            part.abort();
        }
        let upload = Arc::clone(&self.upload);
        let registered = lock(&REGISTERED);
        self.runtime.block_on(abort(&upload));
        drop(registered);
    }
}

/// Aborts `upload` if it is still open.
async fn abort(upload: &Shared) {
    let open = lock(upload).take();
    if let Some(mut upload) = open {
        let _ = upload.abort().await;
    }
}

/// Aborts the registered upload, if any, for a signal that ends the process (called on the
/// signal thread, which no runtime runs); the lock stays taken, so that no upload completes
/// after.
#[cfg(unix)]
fn abort_on_signal() {
    let registered = lock(&REGISTERED);
    if let Some((handle, upload)) = registered.as_ref() {
        handle.block_on(abort(upload));
    }
    std::mem::forget(registered);
}

/// The store's error on one line, with the endpoint.
fn failure(url: &str, endpoint: &str, error: object_store::Error) -> Failure {
    Failure::Error(format!("{url}: {} (endpoint {endpoint})", one_line(&error)))
}

fn one_line(error: &impl std::fmt::Display) -> String {
    let text = error.to_string();
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}
