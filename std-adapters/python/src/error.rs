//! [`Failure`]: what goes wrong in the adapter, and the Python exception each kind becomes.
//!
//! It uses nothing else of the crate: the bottom of it, with `ffi`.
//!
//! `QuiverError` is the base of quiver's own exceptions; `InvalidArrowError` is Arrow data that
//! breaks a rule of the format, from a file or from another library; `JsonEncodeError` is a value
//! the JSON encoder refuses. A bad argument is a plain `ValueError` or `TypeError`, a failed read
//! or write an `OSError` (`FileNotFoundError`, … by its kind).

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use std::fmt::Display;

pyo3::create_exception!(
    _quiver,
    QuiverError,
    pyo3::exceptions::PyException,
    "Base class of quiver's errors."
);
pyo3::create_exception!(
    _quiver,
    InvalidArrowError,
    QuiverError,
    "Arrow data that breaks a rule of the format (from a file, or from another library)."
);
pyo3::create_exception!(
    _quiver,
    JsonEncodeError,
    QuiverError,
    "A value the JSON encoder refuses (an unknown time zone, a map with a null key, …)."
);

/// A failure, by the exception it becomes.
#[derive(Debug)]
pub enum Failure {
    /// Arrow data that breaks the format's rules.
    Invalid(String),
    /// The encoder refused a value.
    Json(String),
    /// A bad argument.
    Value(String),
    /// A read or write failed.
    Io(std::io::Error),
    /// An exception raised by Python code (a file object's `write`, Ctrl-C).
    Python(PyErr),
}

impl Failure {
    /// Arrow data that breaks the format's rules, described by `what`.
    pub fn invalid(what: impl Display) -> Self {
        Failure::Invalid(what.to_string())
    }
}

impl From<PyErr> for Failure {
    fn from(e: PyErr) -> Self {
        Failure::Python(e)
    }
}

impl From<Failure> for PyErr {
    fn from(f: Failure) -> PyErr {
        match f {
            Failure::Invalid(m) => InvalidArrowError::new_err(m),
            Failure::Json(m) => JsonEncodeError::new_err(m),
            Failure::Value(m) => PyValueError::new_err(m),
            Failure::Io(e) => PyErr::from(e),
            Failure::Python(e) => e,
        }
    }
}

/// Results of the adapter.
pub type Result<T, E = Failure> = std::result::Result<T, E>;
