//! std adapters for quiver: the I/O the `no_std` core leaves to its host.
//!
//! The crate root: it declares the modules, re-exports their public items and holds the worker pool
//! `concurrent` and `parallel` share.
//!
//! - [`FileSource`]: a local file as a [`RandomAccess`](quiver::source::RandomAccess) source, one
//!   positioned read (`pread`) per range, no seeking.
//! - [`Batches`]: a source of record batches (a file's, a stream's, an object's, another
//!   library's), whatever the input; [`Selected`]: its batches in a range, of some columns, cut
//!   to a number of rows, as every adapter selects them; [`MapErr`]: a shared source's errors
//!   made an adapter's.
//! - [`Concurrent`]: runs any source's range lists with several requests in flight on threads.
//! - [`Recycling`]: reads each list of ranges into one of a few reused buffers and shares
//!   windows of it, so a long scan's memory is a window or two, without a fresh allocation per
//!   window.
//! - [`Latency`]: adds a fixed delay to every call and counts calls, to see or predict what a
//!   read pattern costs on remote storage.
//! - [`stream_reader`]: a [`StreamReader`](quiver::ipc::StreamReader) over any `std::io::Read`.
//! - [`write_json`]: an [`Encoder`](quiver::json::Encoder)'s output into any `std::io::Write`;
//!   [`ParallelWriter`]: a JSON document from many batches, each batch's rows encoded on
//!   several threads and written in order, in bounded memory; [`JsonWriteError`] bridges both
//!   kinds of failure into one `std::error::Error`.
//! - [`time_zones`]: a [`ZoneResolver`](quiver::json::ZoneResolver) over the tz database
//!   bundled into the binary (jiff's), so timestamps in named zones are written in local time.
//!
//! `FileSource`, `Latency` and `Concurrent` are also
//! [`AsyncRandomAccess`](quiver::source::AsyncRandomAccess) sources for the
//! [`AsyncFileReader`](quiver::ipc::AsyncFileReader), with no async runtime: a read runs on a
//! thread of its own ([`ReadTask`]) and its future wakes the poller when it is done.
//!
//! Each is a thin wrapper: the planning, parsing and decoding stay in the core. The threads of
//! `Concurrent` and `ParallelWriter` are pooled (rayon's), started once and kept by the wrapper.

mod batches;
mod concurrent;
mod file;
mod json;
mod latency;
mod parallel;
mod recycling;
mod task;
mod tz;

pub use batches::{Batches, MapErr, Selected};
pub use concurrent::{Concurrent, DEFAULT_IN_FLIGHT, JoinRanges};
pub use file::FileSource;
pub use json::{IO_BUFFER, JsonWriteError, write_json, write_json_through};
pub use latency::{Delayed, Latency};
pub use parallel::{DEFAULT_CHUNK_BYTES, ParallelWriter};
pub use recycling::{DEFAULT_POOL, Recycling};
pub use task::ReadTask;
pub use tz::time_zones;

/// The adapter that lets a `std::io::Read` serve as an `embedded_io::Read`.
pub use embedded_io_adapters::std::FromStd;

/// `threads` pooled threads named `name-0`, `name-1`…, or `None` if they cannot be started
/// (the caller's thread then does all the work).
fn start_workers(threads: usize, name: &'static str) -> Option<rayon_core::ThreadPool> {
    rayon_core::ThreadPoolBuilder::new()
        .num_threads(threads)
        .thread_name(move |i| format!("{name}-{i}"))
        .build()
        .ok()
}

/// A stream reader over any `std::io::Read` (stdin, a socket, a decompressor…).
pub fn stream_reader<R: std::io::Read>(
    reader: R,
    options: quiver::ipc::ReaderOptions,
) -> Result<quiver::ipc::StreamReader<FromStd<R>>, quiver::error::Error<std::io::Error>> {
    quiver::ipc::StreamReader::new(FromStd::new(reader), options)
}
