//! [`Batches`]: where record batches come from (another library's Arrow stream or array, or an
//! IPC file or stream read by quiver) and [`Selection`]: the columns, batch range and row limit
//! applied on the way, as the CLI's `--columns`, `--batches` and `--limit` do.

use crate::error::{Failure, Result};
use crate::ffi::{ArrowArray, ArrowArrayStream, ArrowSchema, Empty};
use crate::import;
use quiver::array::{ArrayParts, ArrayView, RecordBatch};
use quiver::bytes::Bytes;
use quiver::format::MAGIC;
use quiver::ipc::{FileReader, Projection, ReaderOptions, StreamReader};
use quiver::schema::Schema;
use quiver_object_store::RequestStats;
use quiver_std::{FileSource, FromStd};
use std::ffi::CStr;
use std::fs::File;
use std::io::{BufReader, Read};
use std::ops::Range;
use std::path::Path;
use std::sync::{Arc, Mutex};

/// A source of record batches of one schema.
pub trait Batches: Send {
    /// The schema of the batches returned (the selected columns).
    fn schema(&self) -> &Arc<Schema>;

    /// The next batch, or `None` at the end.
    fn next_batch(&mut self) -> Result<Option<RecordBatch<'static>>>;

    /// The requests sent to an object store, kept up to date as batches are read (`None` for
    /// other sources).
    fn requests(&self) -> Option<Arc<Mutex<RequestStats>>> {
        None
    }

    /// Whether the batches are views of buffers already in memory (another library's arrays),
    /// so that holding all of them at once costs nothing.
    fn in_memory(&self) -> bool {
        false
    }
}

/// The columns, batches and rows to read: the CLI's `--columns`, `--batches` and `--limit`.
#[derive(Debug, Clone, Default)]
pub struct Selection {
    /// Dotted column paths (`a`, `c.x`, `a\.b`), or `None` for every column.
    pub columns: Option<Vec<String>>,
    /// The record batches to read (from 0).
    pub batches: Option<Range<usize>>,
    /// At most this many rows.
    pub limit: Option<u64>,
}

impl Selection {
    /// The projection of `columns` over `schema`; an unknown or ambiguous path is a
    /// `ValueError` naming it.
    pub fn projection(&self, schema: &Schema) -> Result<Projection> {
        match &self.columns {
            None => Ok(Projection::All),
            Some(paths) => {
                if let Some(empty) = paths.iter().find(|p| p.is_empty()) {
                    return Err(Failure::Value(format!(
                        "columns: empty column path {empty:?}"
                    )));
                }
                Projection::from_paths(schema, paths)
                    .map_err(|e| Failure::Value(format!("columns: {e}")))
            }
        }
    }
}

/// Batches from an Arrow C stream (`__arrow_c_stream__`), imported zero-copy.
pub struct ImportedStream {
    stream: ArrowArrayStream,
    /// The stream's schema.
    full: Arc<Schema>,
    /// The selected columns'.
    schema: Arc<Schema>,
    projection: Projection,
    /// Whether the batches are views of memory already held (another library's; not a
    /// quiver `Reader`'s re-exported).
    pub in_memory: bool,
}

impl ImportedStream {
    /// Takes `stream` and reads its schema.
    pub fn new(mut stream: ArrowArrayStream, selection: &Selection) -> Result<Self> {
        let mut schema = ArrowSchema::empty();
        let get_schema = stream
            .get_schema
            .ok_or_else(|| Failure::invalid("stream without get_schema"))?;
        if stream.release.is_none() {
            return Err(Failure::invalid("the stream was already released"));
        }
        // SAFETY: a live stream (`release` set) held by value here; `get_schema` writes a
        // schema this code then owns (released by its drop).
        let status = unsafe { get_schema(&mut stream, &mut schema) };
        if status != 0 {
            return Err(stream_error(&mut stream, status, "get_schema"));
        }
        let schema = Arc::new(import::schema(&schema)?);
        let projection = selection.projection(&schema)?;
        let projected = Arc::new(projection.project_schema(&schema));
        Ok(ImportedStream {
            stream,
            full: schema,
            schema: projected,
            projection,
            in_memory: true,
        })
    }
}

/// The error of a failed stream call: its last error message, else the errno value.
fn stream_error(stream: &mut ArrowArrayStream, status: i32, call: &str) -> Failure {
    let message = stream.get_last_error.and_then(|last| {
        // SAFETY: a live stream's `get_last_error` returns null or a NUL-terminated string
        // valid until the next call on the stream; it is copied at once.
        let text = unsafe { last(stream) };
        (!text.is_null()).then(|| {
            // SAFETY: non-null, NUL-terminated (as above).
            unsafe { CStr::from_ptr(text) }
                .to_string_lossy()
                .into_owned()
        })
    });
    let message = message.unwrap_or_else(|| std::io::Error::from_raw_os_error(status).to_string());
    Failure::Invalid(format!("the Arrow stream's {call} failed: {message}"))
}

impl Batches for ImportedStream {
    fn schema(&self) -> &Arc<Schema> {
        &self.schema
    }

    fn in_memory(&self) -> bool {
        self.in_memory
    }

    fn next_batch(&mut self) -> Result<Option<RecordBatch<'static>>> {
        let get_next = self
            .stream
            .get_next
            .ok_or_else(|| Failure::invalid("stream without get_next"))?;
        let mut array = ArrowArray::empty();
        // SAFETY: the stream is live and owned here; `get_next` writes an array this code then
        // owns (released by its drop, or through the batch's buffers), or a released one at the
        // end of the stream.
        let status = unsafe { get_next(&mut self.stream, &mut array) };
        if status != 0 {
            return Err(stream_error(&mut self.stream, status, "get_next"));
        }
        if array.release.is_none() {
            return Ok(None);
        }
        import::record_batch(array, &self.full, &self.projection).map(Some)
    }
}

/// One record batch from an Arrow array (`__arrow_c_array__`), imported zero-copy.
pub struct OneBatch {
    schema: Arc<Schema>,
    batch: Option<RecordBatch<'static>>,
}

impl OneBatch {
    /// Takes `array` of `schema` (a struct array: the batch's columns).
    pub fn new(schema: ArrowSchema, array: ArrowArray, selection: &Selection) -> Result<Self> {
        let full = Arc::new(import::schema(&schema)?);
        let projection = selection.projection(&full)?;
        let batch = import::record_batch(array, &full, &projection)?;
        Ok(OneBatch {
            schema: Arc::clone(batch.schema()),
            batch: Some(batch),
        })
    }
}

impl Batches for OneBatch {
    fn schema(&self) -> &Arc<Schema> {
        &self.schema
    }

    fn in_memory(&self) -> bool {
        true
    }

    fn next_batch(&mut self) -> Result<Option<RecordBatch<'static>>> {
        Ok(self.batch.take())
    }
}

/// An Arrow IPC file read by quiver's [`FileReader`], with positioned reads.
pub struct IpcFile {
    reader: FileReader<FileSource>,
    schema: Arc<Schema>,
    next: usize,
    end: usize,
    path: String,
}

/// An Arrow IPC stream read by quiver's [`StreamReader`].
pub struct IpcStream {
    reader: StreamReader<FromStd<BufReader<Box<dyn Read + Send>>>>,
    schema: Arc<Schema>,
    next: usize,
    path: String,
}

/// Opens the IPC file or stream at the local `path`, told apart by the file's leading
/// `ARROW1` (a URL is [`crate::remote::Remote`]'s).
pub fn open(path: &Path, selection: &Selection) -> Result<Box<dyn Batches>> {
    let name = path.display().to_string();
    let io = |e: std::io::Error| Failure::Io(std::io::Error::new(e.kind(), format!("{name}: {e}")));
    let mut file = File::open(path).map_err(io)?;
    let mut magic = [0u8; MAGIC.len()];
    let mut filled = 0;
    while filled < magic.len() {
        match file.read(&mut magic[filled..]).map_err(io)? {
            0 => break,
            n => filled += n,
        }
    }
    let invalid = |e: &dyn std::fmt::Display| Failure::Invalid(format!("{name}: {e}"));
    if filled == magic.len() && magic == *MAGIC {
        let reader = FileReader::open(FileSource::new(file).map_err(io)?, ReaderOptions::default())
            .map_err(|e| invalid(&e))?;
        let mut reader = reader;
        let projection = selection.projection(reader.schema())?;
        let count = reader.num_batches();
        let range = selection.batches.clone().unwrap_or(0..count);
        if selection.batches.is_some() && range.start >= count {
            return Err(Failure::Value(past_the_end(&range, "file", count)));
        }
        let schema = Arc::new(projection.project_schema(reader.schema()));
        if !projection.is_all() {
            reader.set_projection(projection);
        }
        return Ok(limited(
            IpcFile {
                reader,
                schema,
                next: range.start,
                end: range.end.min(count),
                path: name,
            },
            selection,
        ));
    }
    let leading = std::io::Cursor::new(magic[..filled].to_vec());
    let rest: Box<dyn Read + Send> = Box::new(leading.chain(file));
    let mut reader = quiver_std::stream_reader(BufReader::new(rest), ReaderOptions::default())
        .map_err(|e| invalid(&e))?;
    let projection = selection.projection(reader.schema())?;
    let schema = Arc::new(projection.project_schema(reader.schema()));
    if !projection.is_all() {
        reader.set_projection(projection);
    }
    let stream = IpcStream {
        reader,
        schema,
        next: 0,
        path: name,
    };
    Ok(selected(stream, selection))
}

impl Batches for IpcFile {
    fn schema(&self) -> &Arc<Schema> {
        &self.schema
    }

    fn next_batch(&mut self) -> Result<Option<RecordBatch<'static>>> {
        if self.next >= self.end {
            return Ok(None);
        }
        let batch = self.reader.batch(self.next).map_err(|e| {
            Failure::Invalid(format!(
                "{}: {}",
                self.path,
                e.display_with(self.reader.schema())
            ))
        })?;
        self.next += 1;
        Ok(Some(batch))
    }
}

impl Batches for IpcStream {
    fn schema(&self) -> &Arc<Schema> {
        &self.schema
    }

    fn next_batch(&mut self) -> Result<Option<RecordBatch<'static>>> {
        let batch = self.reader.next_batch().map_err(|e| match e {
            quiver::error::Error::Source { .. } => {
                Failure::Io(std::io::Error::other(format!("{}: {e}", self.path)))
            }
            e => Failure::Invalid(format!(
                "{}: {}",
                self.path,
                e.display_with(self.reader.schema())
            )),
        })?;
        self.next += 1;
        Ok(batch)
    }
}

/// The methods of [`Batches`] a wrapper that only changes which batches come (its field
/// `inner`) takes from the batches it wraps: their schema, requests and whereabouts.
macro_rules! through_inner {
    () => {
        fn schema(&self) -> &Arc<Schema> {
            self.inner.schema()
        }

        fn requests(&self) -> Option<Arc<Mutex<RequestStats>>> {
            self.inner.requests()
        }

        fn in_memory(&self) -> bool {
            self.inner.in_memory()
        }
    };
}

/// A stream's batches from `batches.start` on, up to `batches.end`.
struct Skip<B> {
    inner: B,
    batches: Range<usize>,
    seen: usize,
}

impl<B: Batches> Batches for Skip<B> {
    through_inner!();

    fn next_batch(&mut self) -> Result<Option<RecordBatch<'static>>> {
        while self.seen < self.batches.end {
            let Some(batch) = self.inner.next_batch()? else {
                if self.seen <= self.batches.start {
                    return Err(Failure::Value(past_the_end(
                        &self.batches,
                        "stream",
                        self.seen,
                    )));
                }
                return Ok(None);
            };
            self.seen += 1;
            if self.seen > self.batches.start {
                return Ok(Some(batch));
            }
        }
        Ok(None)
    }
}

/// The error for a `batches` range that starts past the last of `count` batches (the CLI's).
pub fn past_the_end(batches: &Range<usize>, input: &str, count: usize) -> String {
    let range = match batches.end {
        usize::MAX => format!("{}..", batches.start),
        end => format!("{}..{end}", batches.start),
    };
    let plural = if count == 1 { "" } else { "es" };
    format!(
        "batches {range} starts past the last batch: the {input} has {count} record batch{plural}"
    )
}

/// `inner`'s batches in the selection's batch range, cut to its row limit (the columns are the
/// source's business).
pub fn selected<B: Batches + 'static>(inner: B, selection: &Selection) -> Box<dyn Batches> {
    match &selection.batches {
        None => limited(inner, selection),
        Some(batches) => {
            let skip = Skip {
                inner,
                batches: batches.clone(),
                seen: 0,
            };
            limited(skip, selection)
        }
    }
}

/// `inner` cut to the selection's row limit, if any.
pub fn limited<B: Batches + 'static>(inner: B, selection: &Selection) -> Box<dyn Batches> {
    match selection.limit {
        None => Box::new(inner),
        Some(limit) => Box::new(Limit {
            inner,
            rows_left: limit,
        }),
    }
}

/// Batches cut to a number of rows.
struct Limit<B> {
    inner: B,
    rows_left: u64,
}

impl Batches for Box<dyn Batches> {
    fn schema(&self) -> &Arc<Schema> {
        (**self).schema()
    }

    fn next_batch(&mut self) -> Result<Option<RecordBatch<'static>>> {
        (**self).next_batch()
    }

    fn requests(&self) -> Option<Arc<Mutex<RequestStats>>> {
        (**self).requests()
    }

    fn in_memory(&self) -> bool {
        (**self).in_memory()
    }
}

impl<B: Batches> Batches for Limit<B> {
    through_inner!();

    fn next_batch(&mut self) -> Result<Option<RecordBatch<'static>>> {
        if self.rows_left == 0 {
            return Ok(None);
        }
        let Some(batch) = self.inner.next_batch()? else {
            return Ok(None);
        };
        let rows = batch.num_rows() as u64;
        if rows <= self.rows_left {
            self.rows_left -= rows;
            return Ok(Some(batch));
        }
        let kept = self.rows_left as usize;
        self.rows_left = 0;
        batch.slice(0, kept).map(Some).map_err(Failure::invalid)
    }
}

/// Batches whose column buffers are copied into memory of their own as they pass: for a
/// `Reader` of some columns of a file, handed to another library that keeps them. quiver's
/// readers slice a column's buffers out of the body they read, which also holds the columns
/// not selected (a file's whole record batch); kept by pyarrow, each column's slices would
/// keep every batch's whole body alive (one `int64` column of the 297 MB bench file held 330
/// MiB). Copied, they hold only their own bytes. Dictionaries stay shared.
pub struct Compacted<B> {
    /// The batches.
    pub inner: B,
}

impl<B: Batches> Batches for Compacted<B> {
    through_inner!();

    fn next_batch(&mut self) -> Result<Option<RecordBatch<'static>>> {
        let Some(batch) = self.inner.next_batch()? else {
            return Ok(None);
        };
        let columns = batch
            .columns()
            .iter()
            .map(compacted)
            .collect::<Result<Vec<_>>>()?;
        RecordBatch::try_new(Arc::clone(batch.schema()), columns, batch.num_rows())
            .map(Some)
            .map_err(Failure::invalid)
    }
}

/// `array` with its buffers (and its children's) copied into memory of their own.
fn compacted(array: &ArrayView<'static>) -> Result<ArrayView<'static>> {
    let copy = |bytes: &[u8]| Bytes::from_vec(bytes.to_vec());
    let children = array
        .children()
        .iter()
        .map(compacted)
        .collect::<Result<Vec<_>>>()?;
    ArrayView::try_new(ArrayParts {
        data_type: Some(array.data_type().clone()),
        len: array.len(),
        offset: array.offset(),
        null_count: array.null_count(),
        validity: array.validity().map(copy),
        buffers: array.buffers().iter().map(|b| copy(b)).collect(),
        children,
        dictionary: array.dictionary().cloned(),
    })
    .map_err(Failure::invalid)
}
