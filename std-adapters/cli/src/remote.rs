//! Inputs named by URL (`s3://…`, `gs://…`, `az://…`, `http(s)://…`, `file://…`), read through
//! [`quiver_object_store`] on a tokio runtime of this module's own.
//!
//! It uses nothing else of the crate but the crate root's `Failure`; `quiver_object_store` does the
//! reading.
//!
//! When every column of every batch is read (no `--columns`, `--batches` or `--limit`), the
//! whole object is read front to back in parallel parts handed over in order
//! ([`ObjectSource::open_whole`]), decoded as they arrive while this thread encodes
//! ([`ObjectBatches`]): a file as the stream it holds,
//! its footer checked at the end, or a stream. Otherwise opening is one suffix GET of the
//! object's last 64 KiB: its size and, in those bytes, the footer of a file (which ends with
//! `ARROW1`); a scan of every batch (`--columns` alone), and a selection from the first batch
//! (`--limit`, `--batches 0..n`), also read the object's start beside it ([`Reading::Scan`],
//! [`Reading::First`]; not from a plain `http(s)://` server, [`Reading::on`]), cut once the
//! scan has moved past it: the first batches of a file, or a stream's first messages, cost no
//! round trip of their own. A selection of a file is read by [`AsyncFileReader`] with the
//! planner's cost model of the network ([`ObjectSource::scan_options`]; the environment may
//! set it, [`SourceOptions::with_environment`]): every window's ranges go out as concurrent
//! ranged GETs on the runtime's threads, and the next window is in flight while this thread
//! encodes the current one. A stream is read front to back by
//! [`ObjectBatches`]: what the opening requests did not bring (its end, and its start for a
//! scan are not asked for again) in parallel parts handed over in order when every batch is
//! read (`--columns` alone), else through one more GET whose body is read as it arrives, into
//! a bounded buffer that grows as it is read ([`ObjectReader`]); a stream the opening
//! requests brought whole costs no more request.
//!
//! A failure is one `error: URL: …` line that says what went wrong in words and names the
//! store, bucket, key and endpoint (`no such bucket `b` (S3 endpoint https://…)`); the store's
//! own answer (its XML body, request ids) is added only with `--verbose`.

use crate::Failure;
use quiver::ipc::{AsyncFileReader, ReaderOptions};
use quiver::schema::Schema;
use quiver::source::AsyncRandomAccess;
use quiver_object_store::Refusal;
use quiver_object_store::{
    ObjectBatches, ObjectError, ObjectReader, ObjectSource, Reading, SourceOptions, UrlError,
};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use tokio::runtime::Runtime;

/// Threads of the runtime that runs the requests (they wait on the network, not the CPU).
const RUNTIME_THREADS: usize = 2;

/// Bytes of a stream object looked at before reading it: enough to say what another format
/// is, as for a local input.
const LEADING: usize = 16;

/// `--verbose`: failures add everything the store answered.
pub static VERBOSE: AtomicBool = AtomicBool::new(false);

/// Where an object is, for messages.
#[derive(Debug, Clone)]
pub struct Place {
    /// The URL as given.
    pub url: String,
    /// The store's kind (`S3`, `HTTP`, …).
    pub kind: &'static str,
    /// The bucket, empty for stores without one.
    pub bucket: String,
    /// The object's key.
    pub key: String,
    /// Where the store is.
    pub endpoint: String,
}

impl Place {
    /// The one `error: URL: …` line for the store's `error`: what it means, and where.
    fn failure(&self, error: &ObjectError) -> Failure {
        let verbose = VERBOSE.load(Ordering::Relaxed);
        let said = if verbose {
            error.verbose()
        } else {
            error.to_string()
        };
        let (kind, endpoint) = (self.kind, &self.endpoint);
        let at = format!("{kind} endpoint {endpoint}");
        let (bucket, key) = (&self.bucket, &self.key);
        let message = match error.refusal() {
            Some(Refusal::NoSuchBucket) if !verbose => format!("no such bucket `{bucket}` ({at})"),
            Some(Refusal::NoSuchKey) if !verbose && !bucket.is_empty() => {
                format!("no such object: key `{key}` in bucket `{bucket}` ({at})")
            }
            Some(refusal) if !verbose && !bucket.is_empty() => {
                format!("{refusal} (key `{key}` in bucket `{bucket}`, {at})")
            }
            Some(refusal) if !verbose => format!("{refusal} ({at})"),
            _ if !bucket.is_empty() => format!("{said} (key `{key}` in bucket `{bucket}`, {at})"),
            _ => format!("{said} ({at})"),
        };
        Failure::Error(format!("{}: {message}", self.url))
    }
}

/// An opened object: the runtime its requests run on, and the source.
pub struct Remote {
    /// The runtime the requests run on.
    pub runtime: Runtime,
    /// The object.
    pub source: ObjectSource,
    /// The URL as given.
    pub url: String,
    /// Where the object is, for messages.
    pub place: Place,
    /// The GET of the whole object, before it is read ([`ObjectSource::open_whole`]).
    whole: Option<ObjectReader>,
    /// How the caller reads it.
    reading: Reading,
}

/// Whether the input names a URL rather than a local path.
pub fn is_url(input: &Path) -> bool {
    input.to_str().is_some_and(quiver_object_store::is_url)
}

/// Opens the object `url` names for the caller's `reading` ([`ObjectSource::open_for`]): a read
/// of all of it, or one suffix GET of its end (with, for a scan, a GET of its start). A `size`
/// known from a listing saves a scan of an object within the GET of its start the suffix GET:
/// that GET brings it whole, footer and all, in ONE request. A URL of no known scheme is a
/// usage error.
pub fn open(url: &str, reading: Reading, size: Option<u64>) -> Result<Remote, Failure> {
    let store = quiver_object_store::from_url(url).map_err(|e| match e {
        UrlError::Unsupported { .. } => Failure::Usage(e.to_string()),
        other => Failure::Error(format!("{url}: {other}")),
    })?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(RUNTIME_THREADS)
        .thread_name("quiver-io")
        .enable_all()
        .build()
        .map_err(|e| Failure::Error(format!("{url}: starting the I/O runtime: {e}")))?;
    let place = Place {
        url: url.to_owned(),
        kind: store.kind,
        bucket: store.bucket.clone(),
        key: store.path.to_string(),
        endpoint: store.endpoint.clone(),
    };
    // The network figures and limits the environment sets (`QUIVER_FIRST_BYTE_MS`, …).
    let mut options = SourceOptions::default()
        .with_environment(|name| std::env::var(name).ok())
        .map_err(|e| Failure::Usage(e.to_string()))?;
    let reading = reading.on(&store);
    let within_head = |&size: &u64| reading.reads_start() && size <= options.network.first_part();
    if let Some(size) = size.filter(within_head) {
        options = options.with_size(size);
    }
    let (source, reader) = runtime
        .block_on(ObjectSource::open_for(
            store.store,
            store.path,
            options,
            reading,
        ))
        .map_err(|e| place.failure(&e))?;
    Ok(Remote {
        runtime,
        source,
        url: url.to_owned(),
        place,
        reading,
        whole: reader,
    })
}

impl Remote {
    /// The failure for a reader's error: located as a local file's are, or the store's
    /// failure ([`Place::failure`]).
    pub fn failed(
        &self,
        error: quiver::error::Error<ObjectError>,
        schema: Option<&Schema>,
    ) -> Failure {
        match (error, schema) {
            (quiver::error::Error::Source { error, .. }, _) => self.place.failure(&error),
            (other, Some(schema)) => {
                Failure::Error(format!("{}: {}", self.url, other.display_with(schema)))
            }
            (other, None) => Failure::Error(format!("{}: {other}", self.url)),
        }
    }

    /// Opens the file's reader (no request when the footer was in the opening GET).
    pub fn file_reader(&self) -> Result<AsyncFileReader<'_, ObjectSource>, Failure> {
        self.runtime
            .block_on(AsyncFileReader::open(
                &self.source,
                ReaderOptions::default(),
            ))
            .map_err(|e| self.failed(e, None))
    }

    /// The object's batches front to back, its schema read, or `None` for a file to read by
    /// ranges ([`Self::file_reader`]).
    ///
    /// Opened whole, the object read front to back ([`ObjectBatches::of_whole`]): a file read
    /// as the stream it holds, its footer checked at the end, or a stream. A file whose
    /// stream may not be readable from its start (polars writes its schema message without a
    /// length prefix; file readers never read it) is held in memory from the whole read's
    /// parts and read by ranges from there when it is within the window, else read by ranges
    /// once its stream fails (nothing was returned from it yet, and its GET is dropped).
    /// Otherwise, a file is read by ranges, and a stream in parallel parts when every batch is
    /// read ([`ObjectSource::parts_reader`]), else through one streaming GET (no request when
    /// the opening brought it whole); an object that starts with `ARROW1` and does not end
    /// with it is a file without its end, an error saying it was cut short.
    pub fn front_to_back(&mut self) -> Result<Option<ObjectBatches>, Failure> {
        let whole = self.whole.take();
        let failed = |e: quiver::error::Error<ObjectError>| match e {
            quiver::error::Error::Source { error, .. } => self.place.failure(&error),
            e => Failure::not_a_stream(Path::new(&self.url), e),
        };
        let options = ReaderOptions::default();
        let mut reader = match whole {
            Some(reader) => {
                let batches = ObjectBatches::of_whole(&mut self.source, reader, options);
                return self.runtime.block_on(batches).map_err(failed);
            }
            // Opened by its end: a file ends with the magic.
            _ if self.source.tail().ends_with(quiver::format::MAGIC) => return Ok(None),
            // A stream: in parallel parts when every batch is read, else as it is read.
            _ if self.reading == Reading::Scan => self.source.parts_reader(0),
            _ => self.source.reader(0),
        };
        self.runtime.block_on(async {
            let leading = reader
                .peek(LEADING)
                .await
                .map_err(|e| self.place.failure(&e))?;
            if leading.starts_with(quiver::format::MAGIC) {
                let error = quiver::format::missing_trailer(leading, self.source.len());
                return Err(Failure::Error(format!("{}: {error}", self.url)));
            }
            let batches = ObjectBatches::new(reader, options).await;
            batches.map(Some).map_err(failed)
        })
    }
}
