//! Object stores for quiver: Arrow IPC files and streams on S3, Google Cloud Storage, Azure,
//! HTTP servers and local disks, read through [`object_store`] with tokio.
//!
//! The crate root: it declares the modules and re-exports their public items.
//!
//! - [`ObjectSource`] (`source.rs`): one object as a [`quiver::source::AsyncRandomAccess`]
//!   source for [`quiver::ipc::AsyncFileReader`]. Opening is one suffix GET (the tail and the
//!   size at once), with a GET of the object's start beside it for a scan or the first
//!   batches ([`ObjectSource::open_for`] by the caller's [`Reading`]; `head.rs`); every range the
//!   reader plans is one ranged GET, many in flight at once, each a task of its own on the
//!   runtime, while the caller decodes. Its [`NetworkMetrics`] give the planner's cost
//!   model ([`quiver::cost`]).
//! - [`ObjectBatches`] (`file.rs`): every batch of an object, file or stream, read front to
//!   back in parallel parts handed over in order ([`ObjectSource::open_whole`]), decoded as
//!   it arrives; what `quiver json s3://…` does when it reads every column of every batch.
//! - [`BlockingBatches`] (`blocking.rs`): an object's batches (a stream's front to back, a
//!   file's by ranges) as a [`quiver_std::Batches`], each awaited on a runtime, for a caller
//!   that is not async (`quiver json`, the Python adapter).
//! - [`ObjectReader`] (`read.rs`): an object read in order through one streaming GET with a
//!   bounded buffer ([`ObjectSource::reader`]), or in parallel parts handed over in order
//!   ([`ObjectSource::parts_reader`], a whole read's), an [`embedded_io_async::Read`] for
//!   [`quiver::ipc::AsyncStreamReader`] (the IPC stream format); also a [`std::io::Read`].
//! - `head.rs`: the object's first bytes, read beside the opening request for a scan and cut
//!   once the scan has moved past them; a stream's reader takes them as they arrive.
//! - `request.rs`: one ranged GET, hedged when its answer is late ([`Hedge`]) and resumed from
//!   its first missing byte when it stalls ([`SourceOptions::with_stall_timeout`]).
//! - [`from_url`] (`url.rs`): `s3://`, `gs://`, `az://`, `http(s)://`, `file://`, `memory://`
//!   to a store and a path, configured from the usual environment variables.
//! - [`ObjectError`] (`error.rs`): the store's error said in words ([`Refusal`]: no such
//!   bucket, no such key, access denied, no credentials, …), a response of the wrong length, or
//!   a request that made no progress for the stall timeout.
//! - `transport.rs`: the HTTP client under the cloud stores: no overall timeout, the URL's
//!   query on every request, and servers that ignore `Range` read from their one whole answer.
//!
//! ```no_run
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! use quiver::ipc::AsyncFileReader;
//! use quiver_object_store::{ObjectSource, SourceOptions, from_url};
//!
//! let url = from_url("s3://bucket/trips.arrow")?;
//! let source = ObjectSource::open(url.store, url.path, SourceOptions::default()).await?;
//! let mut reader = AsyncFileReader::open(&source, Default::default()).await?;
//! reader.select(0..usize::MAX, source.scan_options());
//! while let Some(batch) = reader.next_batch().await {
//!     println!("{} rows", batch?.num_rows());
//! }
//! println!("{:?}", source.requests()); // requests, round trips, bytes
//! # Ok(())
//! # }
//! ```

mod blocking;
mod error;
mod file;
mod head;
mod log;
mod read;
mod request;
mod settings;
mod source;
#[cfg(any(feature = "aws", feature = "gcp", feature = "azure", feature = "http"))]
mod transport;
mod url;

pub use blocking::BlockingBatches;
pub use error::{ObjectError, Refusal};
pub use file::ObjectBatches;
pub use log::{RequestLog, RequestStats};
pub use read::{FIRST_READ_AHEAD, ObjectReader, READ_AHEAD};
pub use request::{DEFAULT_STALL_TIMEOUT, Hedge, STALL_RETRIES};
pub use settings::{BadSetting, STALL_TIMEOUT_VARIABLE};
pub use source::{
    DEFAULT_MAX_IN_FLIGHT, DEFAULT_TAIL, DEFAULT_WINDOW, NetworkMetrics, ObjectSource, Reading,
    SourceOptions,
};
pub use url::{MAX_RETRIES, RETRY_TIMEOUT, SCHEMES, StoreUrl, UrlError, from_url, is_url};
