//! [`ObjectError`]: what reading an object can fail with, the store's own error unchanged.

use std::fmt;
use std::ops::Range;

/// Why a read from an object store failed.
#[derive(Debug)]
#[non_exhaustive]
pub enum ObjectError {
    /// The store's error, after its retries: a missing object, denied access, an endpoint
    /// that cannot be reached.
    Store(object_store::Error),
    /// A response held another number of bytes than the range asked for (a server that ignored
    /// `Range`, a truncated body).
    Length {
        /// The range asked for.
        range: Range<u64>,
        /// The bytes the response held (or said it held).
        received: u64,
    },
    /// The task running the requests failed (the runtime is shutting down).
    Task(tokio::task::JoinError),
    /// The source was opened outside a tokio runtime.
    NoRuntime,
}

impl From<object_store::Error> for ObjectError {
    fn from(error: object_store::Error) -> Self {
        ObjectError::Store(error)
    }
}

impl fmt::Display for ObjectError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ObjectError::Store(e) => e.fmt(f),
            ObjectError::Length { range, received } => write!(
                f,
                "asked for bytes {}..{} ({} bytes), the response held {received}",
                range.start,
                range.end,
                range.end - range.start
            ),
            ObjectError::Task(e) => write!(f, "the request task failed: {e}"),
            ObjectError::NoRuntime => f.write_str("an object source needs a tokio runtime"),
        }
    }
}

impl std::error::Error for ObjectError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ObjectError::Store(e) => Some(e),
            ObjectError::Task(e) => Some(e),
            _ => None,
        }
    }
}

impl embedded_io::Error for ObjectError {
    fn kind(&self) -> embedded_io::ErrorKind {
        match self {
            ObjectError::Length { .. } => embedded_io::ErrorKind::InvalidData,
            _ => embedded_io::ErrorKind::Other,
        }
    }
}
