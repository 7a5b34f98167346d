//! quiver: Apache Arrow IPC reading and streaming JSON, for no_std, WASM and high-latency storage.
#![no_std]
#![forbid(unsafe_code)]
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
#![cfg_attr(not(test), deny(clippy::indexing_slicing))]

#[cfg(feature = "alloc")]
extern crate alloc;
#[cfg(test)]
extern crate std;

#[cfg(feature = "alloc")]
pub mod array;
#[cfg(feature = "alloc")]
pub mod bytes;
#[cfg(feature = "alloc")]
pub mod compression;
pub mod datatype;
pub mod error;
pub mod flatbuffer;
pub mod format;
#[cfg(feature = "alloc")]
pub mod ipc;
#[cfg(feature = "alloc")]
pub mod schema;
pub mod source;

#[cfg(feature = "alloc")]
pub use array::{ArrayView, RecordBatch};
#[cfg(feature = "alloc")]
pub use datatype::DataType;
pub use error::{Error, FormatError, FormatErrorKind, FormatResult};
#[cfg(feature = "alloc")]
pub use ipc::{FileReader, ReaderOptions, StreamReader};
#[cfg(feature = "alloc")]
pub use schema::{Field, Schema};
pub use source::RandomAccess;
