//! Object stores for quiver: Arrow IPC files and streams on S3, Google Cloud Storage, Azure,
//! HTTP servers and local disks, read through [`object_store`] with tokio.
//!
//! - [`ObjectSource`] (`source.rs`): one object as a [`quiver::source::AsyncRandomAccess`]
//!   source for [`quiver::ipc::AsyncFileReader`]. Opening is one suffix GET (the tail and the
//!   size at once); every range the reader plans is one ranged GET, many in flight at once, on
//!   the runtime, while the caller decodes. Its [`NetworkMetrics`] give the planner's cost
//!   model ([`quiver::cost`]).
//! - [`ObjectBatches`] (`file.rs`): every batch of an object, file or stream, read front to
//!   back in parallel parts handed over in order ([`ObjectSource::open_whole`]), decoded as
//!   it arrives; what `quiver json s3://…` does when it reads every column of every batch.
//! - [`ObjectReader`] (`read.rs`): an object read in order through one streaming GET with a
//!   bounded buffer, an [`embedded_io_async::Read`] for [`quiver::ipc::AsyncStreamReader`] (the
//!   IPC stream format); also a [`std::io::Read`].
//! - [`from_url`] (`url.rs`): `s3://`, `gs://`, `az://`, `http(s)://`, `file://`, `memory://`
//!   to a store and a path, configured from the usual environment variables.
//! - [`ObjectError`] (`error.rs`): the store's error unchanged, or a response of the wrong
//!   length.
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

mod error;
mod file;
mod read;
mod source;
mod url;

pub use error::ObjectError;
pub use file::ObjectBatches;
pub use read::{FIRST_READ_AHEAD, ObjectReader, READ_AHEAD};
pub use source::{
    DEFAULT_MAX_IN_FLIGHT, DEFAULT_TAIL, DEFAULT_WINDOW, NetworkMetrics, ObjectSource, RequestLog,
    RequestStats, SourceOptions,
};
pub use url::{MAX_RETRIES, RETRY_TIMEOUT, SCHEMES, StoreUrl, UrlError, from_url, is_url};
