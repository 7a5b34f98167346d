//! Objects named by URL (`s3://…`, `gs://…`, `az://…`, `http(s)://…`, `file://…`), read
//! through [`quiver_object_store`] as the `quiver` command reads them.
//!
//! It uses `source` and `error`; `quiver_object_store` does the reading.
//!
//! Reading every column of every batch reads the whole object front to back in parallel parts
//! (ONE GET for a small object), decoded as it arrives ([`ObjectBatches`]); a file whose
//! stream cannot be read from its start is read by ranges instead, from those parts held in
//! memory when it is within the window ([`ObjectBatches::of_whole`]). Under a selection,
//! opening is one suffix GET (the footer and the size; for some columns of every batch, or
//! the first batches or rows, with a GET of the object's start beside it: `Reading::Scan` and
//! `Reading::First`), and a file is read by [`AsyncFileReader`] with the planner's limits
//! from the network: each window's ranges are concurrent ranged GETs, the next window in
//! flight while the current one is converted. A stream is read front to back: in parallel
//! parts when every batch is read, else through one GET that receives little ahead of what
//! is read.
//!
//! The reading runs on a thread of its own with a small tokio runtime, which owns the source
//! and its reader and hands each batch over a channel of one: a batch is read ahead while the
//! caller converts the one before. Dropping the [`Remote`] ends the thread at its next batch.

use crate::error::{Failure, Result};
use crate::source::{Selection, chosen_when_made, starts_past_the_end};
use quiver::array::RecordBatch;
use quiver::error::Error;
use quiver::ipc::{AsyncFileReader, Projection, ReaderOptions};
use quiver::schema::Schema;
use quiver_object_store::{
    BlockingBatches, ObjectBatches, ObjectError, ObjectSource, RequestStats, SourceOptions,
    UrlError,
};
use quiver_std::{Batches, MapErr, Selected};
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::sync::{Arc, Mutex};
use tokio::runtime::Runtime;

/// Threads of the runtime that runs the requests (they wait on the network, not the CPU).
const RUNTIME_THREADS: usize = 2;

/// Whether `text` names an object by URL rather than a local path.
pub fn is_url(text: &str) -> bool {
    quiver_object_store::is_url(text)
}

/// What the reading thread says.
enum Message {
    Schema(Arc<Schema>),
    Batch(RecordBatch<'static>),
    Failed(Failure),
    End,
}

/// An object's batches, read on a thread of their own.
pub struct Remote {
    schema: Arc<Schema>,
    batches: Receiver<Message>,
    requests: Arc<Mutex<RequestStats>>,
    done: bool,
}

impl Remote {
    /// Opens the object `url` names and reads its schema (batches follow as they are asked
    /// for).
    pub fn open(url: &str, selection: &Selection) -> Result<Self> {
        let store = quiver_object_store::from_url(url).map_err(|e| match e {
            UrlError::Unsupported { .. } => Failure::Value(e.to_string()),
            other => Failure::Io(std::io::Error::other(format!("{url}: {other}"))),
        })?;
        let (send, batches) = sync_channel(1);
        let requests = Arc::new(Mutex::new(RequestStats::default()));
        let reading = Reading {
            url: url.to_owned(),
            endpoint: store.endpoint.clone(),
            selection: selection.clone(),
            send,
            requests: Arc::clone(&requests),
        };
        std::thread::Builder::new()
            .name("quiver-remote".into())
            .spawn(move || reading.run(store))
            .map_err(Failure::Io)?;
        let schema = match batches.recv() {
            Ok(Message::Schema(schema)) => schema,
            Ok(Message::Failed(failure)) => return Err(failure),
            _ => {
                return Err(Failure::Io(std::io::Error::other(format!(
                    "{url}: the reading thread stopped"
                ))));
            }
        };
        Ok(Remote {
            schema,
            batches,
            requests,
            done: false,
        })
    }

    /// The requests sent to the store, kept up to date as batches are read.
    pub fn requests(&self) -> Arc<Mutex<RequestStats>> {
        Arc::clone(&self.requests)
    }
}

/// The selected columns and batches of the object, as the reading thread sends them: its
/// columns were chosen when it was opened ([`chosen_when_made`]).
impl Batches for Remote {
    type Error = Failure;

    fn schema(&self) -> &Arc<Schema> {
        &self.schema
    }

    fn project(&mut self, projection: Projection) {
        chosen_when_made(&projection);
    }

    fn next_batch(&mut self, _: u64) -> Result<Option<RecordBatch<'static>>> {
        if self.done {
            return Ok(None);
        }
        match self.batches.recv() {
            Ok(Message::Batch(batch)) => Ok(Some(batch)),
            Ok(Message::Failed(failure)) => {
                self.done = true;
                Err(failure)
            }
            // The thread ended: every batch was sent.
            Ok(Message::Schema(_) | Message::End) | Err(_) => {
                self.done = true;
                Ok(None)
            }
        }
    }
}

/// The reading thread's state.
struct Reading {
    url: String,
    endpoint: String,
    selection: Selection,
    send: SyncSender<Message>,
    requests: Arc<Mutex<RequestStats>>,
}

impl Reading {
    /// Reads the object and sends its schema, then its batches, until the receiver goes.
    fn run(self, store: quiver_object_store::StoreUrl) {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(RUNTIME_THREADS)
            .thread_name("quiver-io")
            .enable_all()
            .build();
        let runtime = match runtime {
            Ok(runtime) => runtime,
            Err(e) => {
                let failure =
                    std::io::Error::other(format!("{}: starting the I/O runtime: {e}", self.url));
                let _ = self.send.send(Message::Failed(Failure::Io(failure)));
                return;
            }
        };
        if let Err(failure) = self.read(&runtime, store) {
            let _ = self.send.send(Message::Failed(failure));
        }
    }

    /// How the caller reads the object: every column of every batch is ONE GET of it (or its
    /// parts), some columns of every batch or its first batches or rows a scan that reads the
    /// object's start with its end.
    fn reading(&self) -> quiver_object_store::Reading {
        let s = &self.selection;
        quiver_object_store::Reading::of(s.columns.is_none(), s.batches.as_ref(), s.limit)
    }

    /// The failure of a store request, naming the endpoint (as the CLI's one line does).
    fn store_failure(&self, error: impl std::fmt::Display) -> Failure {
        let message = error.to_string();
        let message: Vec<&str> = message.split_whitespace().collect();
        Failure::Io(std::io::Error::other(format!(
            "{}: {} (endpoint {})",
            self.url,
            message.join(" "),
            self.endpoint
        )))
    }

    /// The failure of a reader's error: the store's, or the object's located by `schema`.
    fn failed(&self, error: Error<ObjectError>, schema: Option<&Schema>) -> Failure {
        match (error, schema) {
            (error @ Error::Source { .. }, _) => self.store_failure(error),
            (other, Some(schema)) => {
                Failure::Invalid(format!("{}: {}", self.url, other.display_with(schema)))
            }
            (other, None) => Failure::Invalid(format!("{}: {other}", self.url)),
        }
    }

    /// Sends `message`, the requests so far noted (a streaming GET still arriving counted,
    /// as `quiver json --stats` counts it); false once the receiver is gone.
    fn send(&self, message: Message, source: &ObjectSource) -> bool {
        if let Ok(mut requests) = self.requests.lock() {
            *requests = source.requests_so_far();
        }
        self.send.send(message).is_ok()
    }

    /// Opens the object, then sends the selected columns of the selected batches, in order
    /// (the row limit is applied by the receiver); reading stops at the range's end.
    fn read(&self, runtime: &Runtime, store: quiver_object_store::StoreUrl) -> Result<()> {
        let (source, front_to_back) = runtime.block_on(self.open(store))?;
        let object = match front_to_back {
            Some(batches) => BlockingBatches::stream(runtime, &source, batches),
            None => {
                let reader = AsyncFileReader::open(&source, ReaderOptions::default());
                let reader = runtime.block_on(reader).map_err(|e| self.failed(e, None))?;
                BlockingBatches::file(runtime, &source, reader, false)
            }
        };
        // Errors name their field by the object's schema.
        let object = MapErr::new(object, |e, schema: &Schema| self.failed(e, Some(schema)));
        let projection = self.selection.projection(object.schema())?;
        let range = self.selection.batches.clone();
        let all = range.clone().unwrap_or(0..usize::MAX);
        let mut batches = Selected::new(object, projection, all, u64::MAX);
        if let Some(failure) = starts_past_the_end(&batches, range.as_ref()) {
            return Err(failure);
        }
        if !self.send(Message::Schema(Arc::clone(batches.schema())), &source) {
            return Ok(());
        }
        while let Some((_, batch)) = batches.next_batch()? {
            if !self.send(Message::Batch(batch), &source) {
                return Ok(());
            }
        }
        if let Some(failure) = starts_past_the_end(&batches, range.as_ref()) {
            return Err(failure);
        }
        self.send(Message::End, &source);
        Ok(())
    }

    /// Opens the object: its batches front to back, or `None` for a file to read by ranges.
    async fn open(
        &self,
        store: quiver_object_store::StoreUrl,
    ) -> Result<(ObjectSource, Option<ObjectBatches>)> {
        // The network figures and limits `quiver json` reads from the environment.
        let options = SourceOptions::default()
            .with_environment(|name| std::env::var(name).ok())
            .map_err(|e| Failure::Value(e.to_string()))?;
        let reading = self.reading().on(&store);
        let (mut source, whole) = ObjectSource::open_for(store.store, store.path, options, reading)
            .await
            .map_err(|e| self.store_failure(e))?;
        let front_to_back = match whole {
            // A file whose stream does not start as one (polars'): by ranges, from memory.
            Some(reader) => {
                match ObjectBatches::of_whole(&mut source, reader, ReaderOptions::default()).await {
                    Ok(batches) => batches,
                    Err(e @ Error::Source { .. }) => return Err(self.store_failure(e)),
                    Err(e) => return Err(self.failed(e, None)),
                }
            }
            None if source.tail().ends_with(quiver::format::MAGIC) => None,
            // A stream: in parallel parts when every batch is read, else as it is read.
            None => {
                let reader = match reading {
                    quiver_object_store::Reading::Scan => source.parts_reader(0),
                    _ => source.reader(0),
                };
                let batches = ObjectBatches::new(reader, ReaderOptions::default()).await;
                Some(batches.map_err(|e| self.failed(e, None))?)
            }
        };
        Ok((source, front_to_back))
    }
}
