//! JSON out: batches into a [`ParallelWriter`] (several threads, as the CLI), with the GIL
//! released while encoding. The caller's thread takes the GIL back briefly between batches and
//! every few MiB of output to let Python run its signal handlers, so Ctrl-C stops a long run
//! with `KeyboardInterrupt`.
//!
//! It uses `options`, `source` and `error`.

use crate::error::{Failure, Result};
use crate::options::JsonOptions;
use crate::source::Source;
use pyo3::prelude::*;
use quiver::array::RecordBatch;
use quiver::json::JsonError;
use quiver_std::{JsonWriteError, ParallelWriter};
use std::io::{self, Write};

/// Bytes written between two looks at Python's signals.
const SIGNAL_BYTES: u64 = 4 << 20;

/// A writer that looks at Python's signals every [`SIGNAL_BYTES`]: a raised exception (Ctrl-C's
/// `KeyboardInterrupt`) stops the writing and is kept for the caller.
pub struct Interruptible<W> {
    inner: W,
    since_check: u64,
    /// The exception that stopped the writing.
    pub raised: Option<PyErr>,
}

impl<W> Interruptible<W> {
    /// Wraps `inner`.
    pub fn new(inner: W) -> Self {
        Interruptible {
            inner,
            since_check: 0,
            raised: None,
        }
    }

    /// The writer.
    pub fn inner_mut(&mut self) -> &mut W {
        &mut self.inner
    }

    /// Unwraps the writer.
    pub fn into_inner(self) -> W {
        self.inner
    }

    /// Runs Python's signal handlers (with the GIL, taken briefly); an exception they raise
    /// becomes an error.
    pub fn check(&mut self) -> io::Result<()> {
        self.since_check = 0;
        if let Err(e) = Python::attach(|py| py.check_signals()) {
            self.raised = Some(e);
            return Err(io::Error::new(io::ErrorKind::Interrupted, "interrupted"));
        }
        Ok(())
    }
}

impl<W: Write> Write for Interruptible<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.since_check >= SIGNAL_BYTES {
            self.check()?;
        }
        let n = self.inner.write(buf)?;
        self.since_check += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

/// A JSON document being written to `W` from batches.
pub struct Document<W: Write> {
    writer: ParallelWriter<Interruptible<W>>,
    format_array: bool,
}

impl<W: Write> Document<W> {
    /// A document with `options`, written to `out`.
    pub fn new(out: W, options: &JsonOptions) -> Self {
        let writer = ParallelWriter::new(Interruptible::new(out), options.format, options.encoder)
            .with_threads(options.threads);
        Document {
            writer,
            format_array: options.format == quiver::json::JsonFormat::JsonArray,
        }
    }

    /// Writes `batch`.
    pub fn write(&mut self, batch: &RecordBatch<'_>) -> Result<()> {
        let result = self.writer.write(batch);
        result.map_err(|e| self.failure(e, batch))?;
        self.writer
            .inner_mut()
            .check()
            .map_err(|e| self.io_failure(e))
    }

    /// Ends the document (`]` and a newline for an array, as the CLI writes it) and flushes.
    pub fn finish(&mut self) -> Result<()> {
        self.writer.finish().map_err(|e| self.io_failure(e))?;
        if self.format_array {
            let out = self.writer.inner_mut();
            out.write_all(b"\n")
                .and_then(|()| out.flush())
                .map_err(|e| self.io_failure(e))?;
        }
        Ok(())
    }

    /// Rows written so far.
    pub fn rows(&self) -> u64 {
        self.writer.rows()
    }

    /// Bytes written so far.
    pub fn bytes_written(&self) -> u64 {
        self.writer.bytes_written()
    }

    /// The output.
    pub fn out(&mut self) -> &mut W {
        self.writer.inner_mut().inner_mut()
    }

    /// Unwraps the output.
    pub fn into_inner(self) -> W {
        self.writer.into_inner().into_inner()
    }

    /// The failure of a write: the exception that stopped it, else the error.
    fn io_failure(&mut self, e: io::Error) -> Failure {
        match self.writer.inner_mut().raised.take() {
            Some(raised) => Failure::Python(raised),
            None => Failure::Io(e),
        }
    }

    /// The failure of a batch's write, naming the field an encoder's refusal concerns.
    fn failure(&mut self, e: JsonWriteError, batch: &RecordBatch<'_>) -> Failure {
        match e {
            JsonWriteError::Io(e) => self.io_failure(e),
            JsonWriteError::Json(e) => {
                let column = match &e {
                    JsonError::TooDeep { column, .. }
                    | JsonError::NullMapKey { column }
                    | JsonError::InvalidTimeZone { column }
                    | JsonError::UnknownTimeZone { column }
                    | JsonError::TooManyTimeZones { column, .. } => Some(*column),
                    _ => None,
                };
                let field = column
                    .and_then(|c| batch.field(c))
                    .map(|f| format!(" (field `{}`)", f.name()))
                    .unwrap_or_default();
                Failure::Json(format!("{e}{field}"))
            }
            other => Failure::invalid(other),
        }
    }
}

/// Writes every batch of `batches` into `document` and ends it.
pub fn write_all<W: Write>(batches: &mut Source, document: &mut Document<W>) -> Result<()> {
    while let Some(batch) = batches.next_batch()? {
        document.write(&batch)?;
    }
    document.finish()
}
