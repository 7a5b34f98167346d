//! [`BytesOut`]: `to_json`'s document written straight into the `bytes` object it returns.
//!
//! It uses `options`, `source` and `error`.
//!
//! A `bytes` object cannot grow, and the document's size is known only once it is written, so
//! the object is made with room for the size expected ([`expected_bytes`]: the rows times the
//! bytes per row of a sample, plus a margin) and its length is set to the bytes written at the
//! end. The room never written stays untouched memory (a large allocation is an anonymous
//! mapping whose pages exist only once written), and the document is written once, into its
//! final place: before, it was copied into pieces of its own, then into the object, which
//! touched twice its size of fresh pages (the page faults, not the encoding, were most of
//! `to_json`'s time over `iter_json`'s). The object is advised to use huge pages (Linux), as
//! the pieces were: fewer page faults for the same bytes.
//!
//! When the document outgrows the room (a sample that was not typical, or a source whose rows
//! are not known up front), it moves to an object of twice the room, once per doubling.

use crate::error::{Failure, Result};
use crate::options::JsonOptions;
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use quiver::array::RecordBatch;
use quiver::json::JsonFormat;
use std::io::{self, Write};

/// The least room of the object (never 0 or 1 byte: CPython shares those objects).
const MIN_ROOM: usize = 1 << 20;

/// Slices of rows encoded to estimate the bytes per row, spread over the batches.
const SAMPLES: usize = 16;

/// Rows in each sampled slice.
const SAMPLE_ROWS: usize = 64;

/// A `bytes` object written in place: see the module docs.
pub struct BytesOut {
    /// The object (one reference, held here only: no Python code sees it until
    /// [`BytesOut::into_bytes`]), `None` before the first write.
    object: Option<Py<PyBytes>>,
    /// Its bytes.
    data: *mut u8,
    room: usize,
    len: usize,
    /// Bytes expected in all: the first object's room.
    expected: usize,
}

// SAFETY: `data` points into the object held by `object`, which no other thread or Python code
// can reach (it is made here and handed to Python only by `into_bytes`), so moving the writer
// to another thread moves the only access to those bytes with it.
unsafe impl Send for BytesOut {}

impl BytesOut {
    /// An empty document expected to take about `expected` bytes.
    pub fn new(expected: usize) -> Self {
        BytesOut {
            object: None,
            data: std::ptr::null_mut(),
            room: 0,
            len: 0,
            expected,
        }
    }

    /// Moves the document into an object with room for at least `needed` bytes: the bytes
    /// expected or twice the room it had, whichever is more (only `needed` and twice the room
    /// when the expectation cannot be had).
    fn grow(&mut self, needed: usize) -> io::Result<()> {
        let least = needed.max(self.room.saturating_mul(2)).max(MIN_ROOM);
        let hoped = least.max(self.expected);
        let result = self.move_to(hoped);
        match result {
            Err(_) if hoped > least => self.move_to(least),
            result => result,
        }
    }

    /// Moves the document into a new object of `room` bytes.
    fn move_to(&mut self, room: usize) -> io::Result<()> {
        let too_large = || {
            io::Error::new(
                io::ErrorKind::OutOfMemory,
                format!("to_json: no memory for a document of {room} bytes"),
            )
        };
        let size = isize::try_from(room).map_err(|_| too_large())?;
        Python::attach(|py| -> io::Result<()> {
            // SAFETY: a null source asks CPython for an uninitialised bytes object of `size`
            // bytes (more than one: never a shared object); the thread is attached (`py`). A
            // null result is turned into the error below.
            let object = unsafe { pyo3::ffi::PyBytes_FromStringAndSize(std::ptr::null(), size) };
            // SAFETY: a new reference or null (the exception is then taken and dropped).
            let object = unsafe { Bound::from_owned_ptr_or_err(py, object) }
                .map_err(|_| too_large())?
                .cast_into::<PyBytes>()
                .map_err(|_| too_large())?;
            // SAFETY: a bytes object's buffer of `size` bytes (and its NUL).
            let data = unsafe { pyo3::ffi::PyBytes_AsString(object.as_ptr()) }.cast::<u8>();
            if data.is_null() {
                return Err(too_large());
            }
            if std::env::var_os("QUIVER_NO_HUGE").is_none() {
                advise_huge_pages(data, room);
            }
            if self.len > 0 {
                // SAFETY: both buffers hold at least `len` bytes (the old one wrote them, the
                // new one has `room > len`: grown for more), and they are different objects.
                unsafe { std::ptr::copy_nonoverlapping(self.data, data, self.len) };
            }
            self.object = Some(object.unbind());
            self.data = data;
            self.room = room;
            Ok(())
        })
    }

    /// The document as a `bytes` object: this one cut to the bytes written (its length set,
    /// its NUL written), or a copy when the room left over is more than half the document
    /// (memory that may have been used before, kept for as long as the object lives).
    pub fn into_bytes(self, py: Python<'_>) -> PyResult<Py<PyBytes>> {
        let Some(object) = self.object else {
            return Ok(PyBytes::new(py, b"").unbind());
        };
        let written = |len| {
            // SAFETY: `data` holds `len` written bytes of this writer's object.
            unsafe { std::slice::from_raw_parts(self.data, len) }
        };
        if self.room - self.len > self.len / 2 + MIN_ROOM {
            return Ok(PyBytes::new(py, written(self.len)).unbind());
        }
        let len = isize::try_from(self.len).unwrap_or(isize::MAX);
        // SAFETY: the object is a bytes object of `room >= len` bytes held only here; setting
        // its size (a member of `PyVarObject` in the stable ABI) and the NUL after the last
        // byte leaves a bytes object of `len` bytes, as CPython's `_PyBytes_Resize` does before
        // it reallocates. It has never been hashed (the hash is still unset).
        unsafe {
            (*object.as_ptr().cast::<pyo3::ffi::PyVarObject>()).ob_size = len;
            *self.data.add(self.len) = 0;
        }
        // A Python whose bytes objects do not keep their size there (not CPython) gets a copy.
        // SAFETY: a bytes object, the thread attached.
        if unsafe { pyo3::ffi::PyBytes_Size(object.as_ptr()) } != len {
            return Ok(PyBytes::new(py, written(self.len)).unbind());
        }
        Ok(object)
    }
}

impl Write for BytesOut {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if buf.is_empty() {
            // Nothing to copy (and no object to copy into before the first bytes).
            return Ok(0);
        }
        let needed = self
            .len
            .checked_add(buf.len())
            .ok_or(io::ErrorKind::OutOfMemory)?;
        if needed > self.room {
            self.grow(needed)?;
        }
        // SAFETY: `len + buf.len() <= room` bytes of the object's buffer (grown above), which
        // Rust's `buf` cannot overlap.
        unsafe { std::ptr::copy_nonoverlapping(buf.as_ptr(), self.data.add(self.len), buf.len()) };
        self.len = needed;
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Advises the kernel to back the whole 2 MiB pages of `len` bytes at `data` with huge pages
/// (fewer page faults as they are first written). Only advice: nothing else changes.
#[cfg(target_os = "linux")]
fn advise_huge_pages(data: *mut u8, len: usize) {
    const HUGE: usize = 2 << 20;
    /// `MADV_HUGEPAGE` on every Linux architecture.
    const MADV_HUGEPAGE: std::ffi::c_int = 14;
    unsafe extern "C" {
        fn madvise(
            addr: *mut std::ffi::c_void,
            len: usize,
            advice: std::ffi::c_int,
        ) -> std::ffi::c_int;
    }
    let start = (data as usize).next_multiple_of(HUGE);
    let end = (data as usize + len) / HUGE * HUGE;
    if end > start {
        // SAFETY: `start..end` lies within the `len` bytes at `data`, memory this process
        // owns; the advice changes how its pages are backed, not their contents. Its result
        // is ignored (the kernel may decline).
        let _ = unsafe { madvise(start as *mut std::ffi::c_void, end - start, MADV_HUGEPAGE) };
    }
}

#[cfg(not(target_os = "linux"))]
fn advise_huge_pages(_data: *mut u8, _len: usize) {}

/// The bytes the JSON of `batches` is expected to take with `options`: their rows times the
/// bytes per row of [`SAMPLES`] slices of [`SAMPLE_ROWS`] rows spread evenly over them, plus
/// a quarter and 1 MiB (room never written costs no memory). 0 when nothing can be sampled.
pub fn expected_bytes(batches: &[RecordBatch<'_>], options: &JsonOptions) -> usize {
    let rows: usize = batches.iter().map(RecordBatch::num_rows).sum();
    if rows == 0 {
        return 0;
    }
    let (mut sampled_rows, mut sampled_bytes) = (0usize, 0usize);
    let mut batch = batches.iter();
    let mut current = batch.next();
    let mut start = 0; // the first row of `current`
    for k in 0..SAMPLES.min(rows) {
        let at = k * rows / SAMPLES.min(rows);
        while let Some(b) = current.filter(|b| start + b.num_rows() <= at) {
            start += b.num_rows();
            current = batch.next();
        }
        let Some(b) = current else {
            break;
        };
        let offset = at - start;
        let take = SAMPLE_ROWS.min(b.num_rows() - offset);
        let encoded = b.slice(offset, take).ok().and_then(|slice| {
            quiver::json::to_vec(&slice, JsonFormat::LineDelimited, options.encoder).ok()
        });
        if let Some(encoded) = encoded {
            sampled_rows += take;
            sampled_bytes += encoded.len();
        }
    }
    if sampled_rows == 0 {
        return 0;
    }
    let per_row = sampled_bytes as f64 / sampled_rows as f64;
    let expected = per_row * rows as f64 * 1.25 + MIN_ROOM as f64;
    // As many as a `usize` holds (`as` saturates); the first object is cut to what fits.
    expected as usize
}

/// Reads every batch of `batches` (record batches imported from another library: views of its
/// buffers, held at no cost), looking at Python's signals every few batches.
pub fn gather(batches: &mut crate::source::Source) -> Result<Vec<RecordBatch<'static>>> {
    let mut all = Vec::new();
    while let Some(batch) = batches.next_batch()? {
        all.push(batch);
        if all.len() % 64 == 0 {
            Python::attach(|py| py.check_signals()).map_err(Failure::Python)?;
        }
    }
    Ok(all)
}
