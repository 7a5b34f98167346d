//! quiver: Apache Arrow IPC reading for `no_std`, WASM and high-latency storage.
//!
//! # A tour
//!
//! Bytes flow one way through the crate, one idea per module:
//!
//! - [`source`]: [`RandomAccess`](source::RandomAccess), the positioned reads a file reader asks of
//!   its source (with a whole list of ranges per call, so a remote source can fetch them
//!   concurrently), and [`source::Counting`], which records every read.
//! - [`flatbuffer`] and [`format`]: zero-copy, bounds-checked views of the Arrow flatbuffers
//!   (`Footer`, `Message`, `Schema`, `RecordBatch`, …). No allocation; usable without `alloc`.
//! - [`datatype`] and [`schema`]: the owned data model, [`DataType`](datatype::DataType),
//!   [`Field`](schema::Field), [`Schema`](schema::Schema).
//! - [`ipc`]: the [`ipc::FileDecoder`], which plans every read of a file and decodes the bytes it
//!   is handed, doing no I/O; the [`FileReader`](ipc::FileReader) (one read for the footer, one per
//!   block, or planned windows) and, with `async`, the `AsyncFileReader`, loops around it; the
//!   [`ipc::StreamDecoder`], which decodes a stream from bytes pushed in any chunks, and the
//!   [`StreamReader`](ipc::StreamReader) (any [`embedded_io::Read`]) and, with `async`, the
//!   `AsyncStreamReader` around it; the [`FileWriter`](ipc::FileWriter) and
//!   [`StreamWriter`](ipc::StreamWriter) (any [`embedded_io::Write`]), which build their
//!   flatbuffers with a builder of their own; [`compression`] decodes and encodes LZ4_FRAME and
//!   ZSTD.
//! - [`builder`]: owned arrays for every type, built from values (`ArrayView::from_values`,
//!   `RecordBatch::from_columns`) or with one builder per type.
//! - [`view`]: [`View`](view::View), one record batch as a flat table of borrowed, validated
//!   arrays, `N` at most (no allocator): what the no-alloc readers decode a message into and what
//!   the JSON encoder reads. The crate's `columnar` module (private) holds the columnar format's
//!   rules it and the owned arrays check and read buffers by.
//! - [`array`](mod@array) and [`bytes`](mod@bytes): [`ArrayView`](array::ArrayView) and
//!   [`RecordBatch`](array::RecordBatch), validated once on construction; their buffers are
//!   borrowed from the block that was read, or owned when decompressed or byte-swapped. A
//!   [`RecordBatch`](array::RecordBatch) hands the JSON encoder the same view's nodes, made from
//!   its arrays as they are read.
//! - [`json`]: the JSON serializer, a state machine that writes record batches as NDJSON or one
//!   JSON array into buffers the caller lends, resuming at any byte, allocating nothing.
//! - [`no_alloc`]: the readers that need no allocator, for `default-features = false`: a
//!   [`FileReader`](no_alloc::FileReader) (any [`RandomAccess`](source::RandomAccess)) and a
//!   [`StreamReader`](no_alloc::StreamReader) (any [`embedded_io::Read`]) that read each message
//!   into one scratch buffer the caller lends and decode it in place into a
//!   [`Batch`](no_alloc::Batch) (a [`View`](view::View) of `N` arrays), and the
//!   [`Encoder`](no_alloc::Encoder) that writes it as JSON.
//! - [`read_plan`]: the read planner's policy, [`read_plan::coalesce`], which merges byte ranges
//!   into the fewest reads within hole and size limits (a pure function, no I/O); [`cost`]: the
//!   model of a remote store (first byte, bandwidth, requests in flight, request cost) by which the
//!   planner compares the plans it could make.
//! - [`error`]: [`Error`](error::Error) (the source's own error, or a
//!   [`FormatError`](error::FormatError) saying what was wrong and where: byte offset, batch, field
//!   path).
//!
//! The modules form a ladder: each uses only those on the rungs below it, and its first doc
//! lines say which (`.ci/module_cycles.py` checks it in CI and prints it). From the bottom:
//! `error`, `bytes` and `cost`; `flatbuffer`, `flatbuffer_builder`, `source` and `read_plan`;
//! `format`; `datatype` and `schema` (which use each other, as in arrow-schema); `columnar` and
//! `compression`; `view`; `array`; `builder`, `ipc` and `json`; `no_alloc`.
//!
//! ```
//! use quiver::error::FormatErrorKind;
//! use quiver::ipc::{FileReader, ReaderOptions};
//! use quiver::source::Counting;
//!
//! // Not an Arrow file: an error saying what it looks like, after exactly one read of the tail.
//! let bytes = b"id,name\n1,definitely not an arrow file\n".to_vec();
//! let source = Counting::new(bytes.as_slice());
//! let err = FileReader::open(&source, ReaderOptions::default()).unwrap_err();
//! assert_eq!(
//!     err.to_string(),
//!     "this looks like text (CSV or similar); quiver reads Arrow IPC files and streams"
//! );
//! assert!(matches!(
//!     err.format().map(|e| &e.kind),
//!     Some(FormatErrorKind::NotArrow { .. })
//! ));
//! assert_eq!(source.read_count(), 1);
//! ```
#![no_std]
#![forbid(unsafe_code)]
#![cfg_attr(
    not(test),
    deny(clippy::unwrap_used, clippy::expect_used, clippy::panic)
)]
#![warn(clippy::std_instead_of_core, clippy::alloc_instead_of_core)]
#![cfg_attr(not(test), deny(clippy::indexing_slicing))]

#[cfg(feature = "alloc")]
extern crate alloc;
#[cfg(test)]
extern crate std;

#[cfg(feature = "alloc")]
pub mod array;
#[cfg(feature = "alloc")]
pub mod builder;
#[cfg(feature = "alloc")]
pub mod bytes;
mod columnar;
#[cfg(feature = "alloc")]
pub mod compression;
pub mod cost;
pub mod datatype;
pub mod error;
pub mod flatbuffer;
#[cfg(feature = "alloc")]
mod flatbuffer_builder;
pub mod format;
#[cfg(feature = "alloc")]
pub mod ipc;
pub mod json;
pub mod no_alloc;
#[cfg(feature = "alloc")]
pub mod read_plan;
#[cfg(feature = "alloc")]
pub mod schema;
pub mod source;
pub mod view;
