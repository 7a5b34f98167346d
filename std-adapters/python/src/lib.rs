//! quiver from Python (the `quiver` package's native module, `quiver._quiver`).
//!
//! It is the crate root: it uses every module below and defines the Python functions.
//!
//! Data enters as any object with `__arrow_c_stream__` or `__arrow_c_array__` (pyarrow, polars,
//! pandas, DuckDB, nanoarrow…), imported zero-copy through the Arrow PyCapsule interface
//! ([`import`]), or as the path of an Arrow IPC file or stream read by quiver's own readers
//! ([`source`]). It leaves as JSON ([`json`]: `to_json`, `write_json`, `iter_json`) or as an
//! Arrow C stream ([`export`]: `read(...)` returns a reader with `__arrow_c_stream__`).
//!
//! The core stays `no_std` and free of `unsafe`: the C Data Interface lives here ([`ffi`]),
//! with a `SAFETY` note on every `unsafe` block.

#![deny(clippy::undocumented_unsafe_blocks)]
#![allow(unsafe_code)]

mod error;
mod export;
mod ffi;
mod import;
mod json;
mod options;
mod output;
mod remote;
mod sink;
mod source;

use crate::error::{Failure, InvalidArrowError, JsonEncodeError, QuiverError};
use crate::ffi::{
    ARRAY_CAPSULE, ArrowArray, ArrowArrayStream, ArrowSchema, SCHEMA_CAPSULE, STREAM_CAPSULE,
};
use crate::json::Document;
use crate::source::{Selection, Source};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyString};
use quiver::ipc::Projection;
use quiver_object_store::RequestStats;
use quiver_std::Batches;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

/// The batches of `data`: an Arrow PyCapsule producer, a quiver `Reader`, or a path.
fn batches_of(data: &Bound<'_, PyAny>, selection: &Selection) -> PyResult<Source> {
    if let Ok(reader) = data.cast::<Reader>() {
        let batches = reader.borrow().take()?;
        if selection.columns.is_none() {
            return Ok(batches.reselected(selection.batches.clone(), selection.limit));
        }
        // Columns picked from the Reader's own: its batches pass through the C stream
        // interface (zero-copy both ways) and are imported with the projection, struct
        // children included, as any other library's stream is.
        let in_memory = batches.in_memory();
        let imported = source::ImportedStream::new(export::stream(batches))?;
        let projection = selection.projection(imported.schema())?;
        let source = Source::selected(imported, projection, selection);
        return Ok(source.with_in_memory(in_memory));
    }
    if data.hasattr("__arrow_c_stream__")? {
        let capsule = data.call_method1("__arrow_c_stream__", (data.py().None(),))?;
        let stream: ArrowArrayStream = ffi::take(&capsule, STREAM_CAPSULE)?;
        let imported = source::ImportedStream::new(stream)?;
        let projection = selection.projection(imported.schema())?;
        let source = Source::selected(imported, projection, selection);
        return Ok(source.with_in_memory(true));
    }
    if data.hasattr("__arrow_c_array__")? {
        let pair = data.call_method1("__arrow_c_array__", (data.py().None(),))?;
        let (schema, array): (Bound<'_, PyAny>, Bound<'_, PyAny>) = pair.extract()?;
        let schema: ArrowSchema = ffi::take(&schema, SCHEMA_CAPSULE)?;
        let array: ArrowArray = ffi::take(&array, ARRAY_CAPSULE)?;
        let one = source::OneBatch::new(schema, array, selection)?;
        let source = Source::selected(one, Projection::All, selection);
        return Ok(source.with_in_memory(true));
    }
    if data.is_instance_of::<PyString>() || data.hasattr("__fspath__")? {
        let path: PathBuf = data.extract()?;
        if let Some(url) = path.to_str().filter(|p| remote::is_url(p)) {
            // The object's columns and batches are chosen as it is read; the limit here.
            let remote = remote::Remote::open(url, selection)?;
            let requests = remote.requests();
            let source = Source::new(remote, Projection::All, None, selection.limit);
            return Ok(source.with_requests(Some(requests)));
        }
        return Ok(source::open(&path, selection)?);
    }
    Err(PyTypeError::new_err(format!(
        "expected Arrow data (an object with __arrow_c_stream__ or __arrow_c_array__, such as a \
         pyarrow Table or a polars DataFrame), a quiver Reader, or the path of an Arrow IPC file, \
         got {}",
        data.get_type().name()?
    )))
}

/// to_json(data, **options) -> bytes
///
/// The rows of `data` as JSON: NDJSON (one object per line) or, with `format="array"`, one
/// array. See the package docs for `data` and the options.
#[pyfunction]
#[pyo3(signature = (data, **options))]
fn to_json(
    py: Python<'_>,
    data: &Bound<'_, PyAny>,
    options: Option<&Bound<'_, PyDict>>,
) -> PyResult<Py<PyBytes>> {
    let (options, selection) = options::json_options("to_json", options)?;
    let mut batches = batches_of(data, &selection)?;
    let out = py.detach(|| -> Result<output::BytesOut, Failure> {
        // Another library's batches are views of its buffers: held all at once for free, they
        // give the rows and so the size to expect, and the document is written straight into
        // the bytes object returned (see `output`). Batches quiver reads (files, URLs) are
        // not held: the object grows as they are written.
        let gathered = match batches.in_memory() {
            true => Some(output::gather(&mut batches)?),
            false => None,
        };
        let expected = gathered
            .as_deref()
            .map_or(0, |all| output::expected_bytes(all, &options));
        let mut document = Document::new(output::BytesOut::new(expected), &options);
        match &gathered {
            Some(all) => {
                for batch in all {
                    document.write(batch)?;
                }
                document.finish()?;
            }
            None => json::write_all(&mut batches, &mut document)?,
        }
        Ok(document.into_inner())
    })?;
    out.into_bytes(py)
}

/// write_json(data, sink, **options) -> int
///
/// Writes the rows of `data` as JSON to `sink`, a path (written atomically: a hidden partial
/// file beside it, renamed over it only on success) or a binary file object (its `write`).
/// Returns the number of bytes written.
#[pyfunction]
#[pyo3(signature = (data, sink, **options))]
fn write_json(
    py: Python<'_>,
    data: &Bound<'_, PyAny>,
    sink: &Bound<'_, PyAny>,
    options: Option<&Bound<'_, PyDict>>,
) -> PyResult<u64> {
    let (options, selection) = options::json_options("write_json", options)?;
    if sink.is_instance_of::<PyString>() || sink.hasattr("__fspath__")? {
        let path: PathBuf = sink.extract()?;
        let mut batches = batches_of(data, &selection)?;
        let written = py.detach(|| -> Result<u64, Failure> {
            let file = sink::AtomicFile::create(&path)?;
            let mut document = Document::new(std::io::BufWriter::new(file), &options);
            json::write_all(&mut batches, &mut document)?;
            let written = document.bytes_written()
                + u64::from(options.format == quiver::json::JsonFormat::JsonArray);
            let file = document
                .into_inner()
                .into_inner()
                .map_err(|e| Failure::Io(e.into_error()))?;
            file.commit()?;
            Ok(written)
        })?;
        return Ok(written);
    }
    if !sink.hasattr("write")? {
        return Err(PyTypeError::new_err(format!(
            "sink: expected a path or a binary file object, got {}",
            sink.get_type().name()?
        )));
    }
    let mut batches = batches_of(data, &selection)?;
    let sink = sink.clone().unbind();
    let raised = Arc::new(Mutex::new(None));
    py.detach(|| -> Result<u64, Failure> {
        let file = sink::PyFile::new(sink, Arc::clone(&raised));
        let out = std::io::BufWriter::with_capacity(1 << 20, file);
        let mut document = Document::new(out, &options);
        let written = json::write_all(&mut batches, &mut document).and_then(|()| {
            let array = options.format == quiver::json::JsonFormat::JsonArray;
            let written = document.bytes_written() + u64::from(array);
            let out = document.into_inner();
            out.into_inner().map_err(|e| Failure::Io(e.into_error()))?;
            Ok(written)
        });
        sink::with_raised(written, &raised)
    })
    .map_err(PyErr::from)
}

/// The chunks of a JSON document as `iter_json` produces them.
#[pyclass(module = "quiver._quiver")]
struct JsonChunks {
    state: Mutex<Option<ChunkState>>,
}

struct ChunkState {
    batches: Source,
    document: Document<Vec<u8>>,
    /// The rows of the current batch not written yet.
    pending: Option<quiver::array::RecordBatch<'static>>,
    chunk_size: usize,
    finished: bool,
}

impl ChunkState {
    /// The next chunk: at least `chunk_size` bytes, except the last.
    fn next_chunk(&mut self) -> Result<Option<Vec<u8>>, Failure> {
        while !self.finished && self.document.out().len() < self.chunk_size {
            let batch = match self.pending.take() {
                Some(batch) => batch,
                None => match self.batches.next_batch()? {
                    Some(batch) => batch,
                    None => {
                        self.document.finish()?;
                        self.finished = true;
                        break;
                    }
                },
            };
            // Rows that fill about what the chunk still wants, at the bytes per row so far
            // (1,024 rows first): a batch's JSON is never held whole.
            let rows = batch.num_rows();
            let room = self.chunk_size - self.document.out().len();
            let per_row = match self.document.rows() {
                0 => None,
                rows => Some((self.document.bytes_written() / rows).max(1) as usize),
            };
            let take = per_row
                .map_or(1024, |per_row| (room / per_row).max(1))
                .min(rows);
            if take < rows {
                let head = batch.slice(0, take).map_err(Failure::invalid)?;
                let rest = batch.slice(take, rows - take).map_err(Failure::invalid)?;
                self.pending = Some(rest);
                self.document.write(&head)?;
            } else {
                self.document.write(&batch)?;
            }
        }
        let out = self.document.out();
        if out.is_empty() {
            return Ok(None);
        }
        Ok(Some(std::mem::take(out)))
    }
}

#[pymethods]
impl JsonChunks {
    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__(&self, py: Python<'_>) -> PyResult<Option<Py<PyBytes>>> {
        let chunk = py.detach(|| -> Result<Option<Vec<u8>>, Failure> {
            let mut state = self
                .state
                .lock()
                .map_err(|_| Failure::Value("iter_json: a previous call failed".into()))?;
            let Some(current) = state.as_mut() else {
                return Ok(None);
            };
            let result = current.next_chunk();
            if !matches!(result, Ok(Some(_))) {
                // Done or failed: the source is released now, not when the iterator goes.
                *state = None;
            }
            result
        })?;
        Ok(chunk.map(|c| PyBytes::new(py, &c).unbind()))
    }
}

/// iter_json(data, chunk_size=1048576, **options) -> Iterator[bytes]
///
/// The JSON of `data` in chunks of about `chunk_size` bytes (at least that, except the last,
/// and at least one row), as they are produced: for a streaming HTTP response. The document
/// is never held whole.
#[pyfunction]
#[pyo3(signature = (data, chunk_size = 1 << 20, **options))]
fn iter_json(
    data: &Bound<'_, PyAny>,
    chunk_size: usize,
    options: Option<&Bound<'_, PyDict>>,
) -> PyResult<JsonChunks> {
    if chunk_size == 0 {
        return Err(Failure::Value("chunk_size: expected a positive int, got 0".into()).into());
    }
    let (options, selection) = options::json_options("iter_json", options)?;
    let batches = batches_of(data, &selection)?;
    Ok(JsonChunks {
        state: Mutex::new(Some(ChunkState {
            batches,
            document: Document::new(Vec::new(), &options),
            pending: None,
            chunk_size,
            finished: false,
        })),
    })
}

/// An Arrow source read by quiver: `read(...)`'s result, consumed once through
/// `__arrow_c_stream__` (pyarrow, polars, …) or by `to_json` and friends.
#[pyclass(module = "quiver._quiver")]
struct Reader {
    batches: Mutex<Option<Source>>,
    requests: Option<Arc<Mutex<RequestStats>>>,
    /// Some columns read by quiver: exported, their buffers are copied out of the bodies
    /// read ([`Source::compacted`]).
    compact: bool,
}

impl Reader {
    /// The batches, once.
    fn take(&self) -> PyResult<Source> {
        self.batches
            .lock()
            .ok()
            .and_then(|mut b| b.take())
            .ok_or_else(|| Failure::Value("this Reader was already consumed".into()).into())
    }
}

#[pymethods]
impl Reader {
    /// Exports the batches as an Arrow C stream (a PyCapsule `arrow_array_stream`); the reader
    /// is consumed.
    #[pyo3(signature = (requested_schema = None))]
    fn __arrow_c_stream__<'py>(
        &self,
        py: Python<'py>,
        requested_schema: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, pyo3::types::PyCapsule>> {
        let _ = requested_schema;
        let batches = self.take()?;
        let batches = match self.compact {
            true => batches.compacted(),
            false => batches,
        };
        let stream = export::stream(batches);
        ffi::capsule(py, stream, STREAM_CAPSULE)
    }

    /// For an object read by URL, the requests sent so far: a dict of `requests`,
    /// `round_trips` (one after another) and `bytes` received, as `quiver json --stats` counts
    /// them; `None` for other sources.
    #[getter]
    fn requests(&self) -> Option<std::collections::BTreeMap<&'static str, u64>> {
        let stats = *self.requests.as_ref()?.lock().ok()?;
        Some(
            [
                ("requests", stats.requests),
                ("round_trips", stats.round_trips),
                ("bytes", stats.bytes),
            ]
            .into_iter()
            .collect(),
        )
    }

    /// The names of the columns the reader returns.
    #[getter]
    fn column_names(&self) -> PyResult<Vec<String>> {
        let batches = self
            .batches
            .lock()
            .map_err(|_| Failure::Value("poisoned".into()))?;
        let batches = batches
            .as_ref()
            .ok_or_else(|| Failure::Value("this Reader was already consumed".into()))?;
        Ok(batches
            .schema()
            .fields()
            .iter()
            .map(|f| f.name().to_owned())
            .collect())
    }
}

/// read(source, columns=None, batches=None, limit=None) -> Reader
///
/// Opens an Arrow IPC file or stream with quiver's readers (or takes any Arrow PyCapsule
/// producer), selecting columns (dotted paths for struct children), record batches and a row
/// limit. The result has `__arrow_c_stream__`: `pyarrow.table(quiver.read(path))`.
#[pyfunction]
#[pyo3(signature = (source, **options))]
fn read(source: &Bound<'_, PyAny>, options: Option<&Bound<'_, PyDict>>) -> PyResult<Reader> {
    let mut selection = Selection::default();
    for (key, value) in options.into_iter().flatten() {
        let key: String = key.extract()?;
        options::selection_option("read", &key, &value, &mut selection)?;
    }
    let batches = batches_of(source, &selection)?;
    Ok(Reader {
        requests: batches.requests(),
        compact: selection.columns.is_some() && !batches.in_memory(),
        batches: Mutex::new(Some(batches)),
    })
}

/// The native module.
#[pymodule]
fn _quiver(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add_function(wrap_pyfunction!(to_json, m)?)?;
    m.add_function(wrap_pyfunction!(write_json, m)?)?;
    m.add_function(wrap_pyfunction!(iter_json, m)?)?;
    m.add_function(wrap_pyfunction!(read, m)?)?;
    m.add_class::<Reader>()?;
    m.add_class::<JsonChunks>()?;
    m.add("QuiverError", py.get_type::<QuiverError>())?;
    m.add("InvalidArrowError", py.get_type::<InvalidArrowError>())?;
    m.add("JsonEncodeError", py.get_type::<JsonEncodeError>())?;
    Ok(())
}
