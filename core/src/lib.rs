//! quiver: Apache Arrow IPC reading and streaming JSON, for no_std, WASM and high-latency storage.
#![no_std]
#![forbid(unsafe_code)]
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
#![cfg_attr(not(test), deny(clippy::indexing_slicing))]

#[cfg(feature = "alloc")]
extern crate alloc;
#[cfg(test)]
extern crate std;

pub mod datatype;
pub mod error;

pub use error::{Error, FormatError, FormatErrorKind, FormatResult};
