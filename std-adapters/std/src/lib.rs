//! std adapters for quiver: the I/O the `no_std` core leaves to its host.
//!
//! - [`FileSource`]: a local file as a [`RandomAccess`](quiver::RandomAccess) source, one
//!   positioned read (`pread`) per range, no seeking.
//! - [`Concurrent`]: runs any source's range lists with several requests in flight on threads.
//! - [`Latency`]: adds a fixed delay to every call and counts calls, to see or predict what a
//!   read pattern costs on remote storage.
//! - [`stream_reader`]: a [`StreamReader`](quiver::StreamReader) over any `std::io::Read`.
//!
//! Each is a thin wrapper: the planning, parsing and decoding stay in the core.

mod concurrent;
mod file;
mod latency;

pub use concurrent::{Concurrent, DEFAULT_IN_FLIGHT};
pub use file::FileSource;
pub use latency::Latency;

/// The adapter that lets a `std::io::Read` serve as an `embedded_io::Read`.
pub use embedded_io_adapters::std::FromStd;

/// A stream reader over any `std::io::Read` (stdin, a socket, a decompressor…).
pub fn stream_reader<R: std::io::Read>(
    reader: R,
    options: quiver::ReaderOptions,
) -> Result<quiver::StreamReader<FromStd<R>>, quiver::Error<std::io::Error>> {
    quiver::StreamReader::new(FromStd::new(reader), options)
}
