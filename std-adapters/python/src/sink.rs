//! Where `write_json` writes: [`AtomicFile`], a path replaced only when the document is complete
//! (as the CLI's `-o`), or [`PyFile`], a Python binary file object's `write`.
//!
//! It uses `error`.

use crate::error::{Failure, Result};
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// A file written as a hidden `.NAME.*.partial` beside `NAME`, renamed over it by
/// [`AtomicFile::commit`]; dropped before that (an error, an exception), the partial file is
/// removed and `NAME` stays as it was. A new file keeps the permissions of the one it replaces.
pub struct AtomicFile {
    partial: tempfile::NamedTempFile,
    path: PathBuf,
}

impl AtomicFile {
    /// Starts the partial file for `path` (a symbolic link is followed: its target is replaced).
    pub fn create(path: &Path) -> Result<Self> {
        let io = |e: io::Error| {
            Failure::Io(io::Error::new(e.kind(), format!("{}: {e}", path.display())))
        };
        let target = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
        let dir = match target.parent() {
            Some(dir) if !dir.as_os_str().is_empty() => dir.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let name = target
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let partial = tempfile::Builder::new()
            .prefix(&format!(".{name}."))
            .suffix(".partial")
            .tempfile_in(&dir)
            .map_err(io)?;
        if let Ok(metadata) = std::fs::metadata(&target) {
            if metadata.is_dir() {
                return Err(io(io::Error::new(
                    io::ErrorKind::IsADirectory,
                    "is a directory",
                )));
            }
            std::fs::set_permissions(partial.path(), metadata.permissions()).map_err(io)?;
        }
        Ok(AtomicFile {
            partial,
            path: target,
        })
    }

    /// Flushes the partial file and renames it over the target.
    pub fn commit(mut self) -> Result<()> {
        let io = |e: io::Error| {
            Failure::Io(io::Error::new(
                e.kind(),
                format!("{}: {e}", self.path.display()),
            ))
        };
        self.partial.flush().map_err(io)?;
        self.partial.as_file().sync_data().map_err(io)?;
        let path = self.path.clone();
        self.partial.persist(&path).map_err(|e| {
            Failure::Io(io::Error::new(
                e.error.kind(),
                format!("{}: {}", path.display(), e.error),
            ))
        })?;
        Ok(())
    }
}

impl Write for AtomicFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.partial.write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.partial.flush()
    }
}

/// A Python binary file object, written through its `write` method with the GIL taken for
/// each call; an exception it raises stops the writing and is kept for the caller.
pub struct PyFile {
    file: Py<PyAny>,
    raised: Arc<Mutex<Option<PyErr>>>,
}

impl PyFile {
    /// Wraps `file`; an exception its `write` raises is kept in `raised`.
    pub fn new(file: Py<PyAny>, raised: Arc<Mutex<Option<PyErr>>>) -> Self {
        PyFile { file, raised }
    }
}

/// `result`, or the exception a Python `write` raised during it (Ctrl-C's `KeyboardInterrupt`
/// lands there when Python code runs), which is what failed.
pub fn with_raised<T>(result: Result<T>, raised: &Mutex<Option<PyErr>>) -> Result<T> {
    let raised = raised.lock().ok().and_then(|mut r| r.take());
    match (result, raised) {
        (_, Some(e)) => Err(Failure::Python(e)),
        (result, None) => result,
    }
}

impl Write for PyFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let result = Python::attach(|py| {
            let bytes = PyBytes::new(py, buf);
            let written = self.file.bind(py).call_method1("write", (bytes,))?;
            // A raw file may write less than it was given; None means all of it (buffered).
            match written.is_none() {
                true => Ok(buf.len()),
                false => written.extract::<usize>(),
            }
        });
        result.map_err(|e| {
            let message = e.to_string();
            if let Ok(mut raised) = self.raised.lock() {
                *raised = Some(e);
            }
            io::Error::other(message)
        })
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}
