//! Where record batches come from: another library's Arrow stream or array, or an IPC file or
//! stream read by quiver, each a [`Batches`] (quiver-std's, shared with the CLI) whose errors
//! are the adapter's [`Failure`]; and [`Selection`]: the columns, batch range and row limit
//! applied on the way, as the CLI's `--columns`, `--batches` and `--limit` do, by the same
//! [`Selected`]. A call reads a [`Source`]: the selected batches and what it needs to know of
//! them.
//!
//! It uses `import`, `ffi` and `error`.

use crate::error::{Failure, Result};
use crate::ffi::{ArrowArray, ArrowArrayStream, ArrowSchema, Empty};
use crate::import;
use quiver::array::{ArrayParts, ArrayView, RecordBatch};
use quiver::bytes::Bytes;
use quiver::format::MAGIC;
use quiver::ipc::{FileReader, Projection, ReaderOptions, StreamReader};
use quiver::schema::Schema;
use quiver_object_store::RequestStats;
use quiver_std::{Batches, FileSource, FromStd, Selected};
use std::ffi::CStr;
use std::fs::File;
use std::io::{BufReader, Read};
use std::ops::Range;
use std::path::Path;
use std::sync::{Arc, Mutex};

/// The batches a call reads: a source's, with a selection applied ([`Selected`]), and what the
/// call needs to know of them.
pub struct Source {
    selected: Selected<Box<dyn Batches<Error = Failure> + Send>>,
    /// The batch range asked for, if any: one that starts past a stream's end is an error,
    /// found at its end.
    range: Option<Range<usize>>,
    requests: Option<Arc<Mutex<RequestStats>>>,
    in_memory: bool,
    /// Whether the batches' column buffers are copied as they pass ([`Source::compacted`]).
    compact: bool,
}

impl Source {
    /// The batches `range` of `inner` (all of them: `None`), of the fields of `projection`, at
    /// most `limit` rows.
    pub fn new(
        inner: impl Batches<Error = Failure> + Send + 'static,
        projection: Projection,
        range: Option<Range<usize>>,
        limit: Option<u64>,
    ) -> Self {
        let all = range.clone().unwrap_or(0..usize::MAX);
        let inner: Box<dyn Batches<Error = Failure> + Send> = Box::new(inner);
        Source {
            selected: Selected::new(inner, projection, all, limit.unwrap_or(u64::MAX)),
            range,
            requests: None,
            in_memory: false,
            compact: false,
        }
    }

    /// The batches of `inner` the selection's range and limit select (its columns are
    /// `projection`, made of the selection over `inner`'s schema).
    pub fn selected(
        inner: impl Batches<Error = Failure> + Send + 'static,
        projection: Projection,
        selection: &Selection,
    ) -> Self {
        Source::new(
            inner,
            projection,
            selection.batches.clone(),
            selection.limit,
        )
    }

    /// The source with the requests an object store is sent, kept up to date as batches are
    /// read.
    pub fn with_requests(mut self, requests: Option<Arc<Mutex<RequestStats>>>) -> Self {
        self.requests = requests;
        self
    }

    /// The source, said to be views of buffers already in memory (or not).
    pub fn with_in_memory(mut self, in_memory: bool) -> Self {
        self.in_memory = in_memory;
        self
    }

    /// The schema of the batches returned (the selected columns).
    pub fn schema(&self) -> &Arc<Schema> {
        self.selected.schema()
    }

    /// The next batch, or `None` at the end.
    pub fn next_batch(&mut self) -> Result<Option<RecordBatch<'static>>> {
        if let Some((_, batch)) = self.selected.next_batch()? {
            return match self.compact {
                true => compacted_batch(&batch).map(Some),
                false => Ok(Some(batch)),
            };
        }
        match starts_past_the_end(&self.selected, self.range.as_ref()) {
            Some(failure) => Err(failure),
            None => Ok(None),
        }
    }

    /// The requests sent to an object store, kept up to date as batches are read (`None` for
    /// other sources).
    pub fn requests(&self) -> Option<Arc<Mutex<RequestStats>>> {
        self.requests.clone()
    }

    /// Whether the batches are views of buffers already in memory (another library's arrays),
    /// so that holding all of them at once costs nothing.
    pub fn in_memory(&self) -> bool {
        self.in_memory
    }

    /// Its batches selected again (a `Reader`'s, read with batches and a limit of their own):
    /// the batches `range` of them, at most `limit` rows; its requests and whereabouts kept.
    pub fn reselected(self, range: Option<Range<usize>>, limit: Option<u64>) -> Self {
        let (requests, in_memory) = (self.requests(), self.in_memory);
        Source::new(SourceBatches(self), Projection::All, range, limit)
            .with_requests(requests)
            .with_in_memory(in_memory)
    }

    /// Its batches with their column buffers copied into memory of their own as they pass:
    /// for a `Reader` of some columns of a file, handed to another library that keeps them.
    /// quiver's readers slice a column's buffers out of the body they read, which also holds
    /// the columns not selected (a file's whole record batch); kept by pyarrow, each column's
    /// slices would keep every batch's whole body alive (one `int64` column of the 297 MB bench
    /// file held 330 MiB). Copied, they hold only their own bytes. Dictionaries stay shared.
    pub fn compacted(mut self) -> Self {
        self.compact = true;
        self
    }
}

/// A [`Source`]'s batches as a [`Batches`] of their own: its columns were chosen when it was
/// made ([`chosen_when_made`]).
struct SourceBatches(Source);

impl Batches for SourceBatches {
    type Error = Failure;

    fn schema(&self) -> &Arc<Schema> {
        self.0.schema()
    }

    fn project(&mut self, projection: Projection) {
        chosen_when_made(&projection);
    }

    fn next_batch(&mut self, _: u64) -> Result<Option<RecordBatch<'static>>> {
        self.0.next_batch()
    }
}

/// For a source whose columns are chosen when it is made (an imported array, an object read
/// on a thread of its own, a selection): a [`Selected`] over it is made with every column, so
/// no other projection reaches it.
pub fn chosen_when_made(projection: &Projection) {
    debug_assert!(
        projection.is_all(),
        "the columns of this source were chosen when it was made"
    );
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
    projection: Projection,
}

impl ImportedStream {
    /// Takes `stream` and reads its schema.
    pub fn new(mut stream: ArrowArrayStream) -> Result<Self> {
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
        Ok(ImportedStream {
            stream,
            full: schema,
            projection: Projection::All,
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
    type Error = Failure;

    fn schema(&self) -> &Arc<Schema> {
        &self.full
    }

    fn project(&mut self, projection: Projection) {
        self.projection = projection;
    }

    fn next_batch(&mut self, _: u64) -> Result<Option<RecordBatch<'static>>> {
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
    /// Takes `array` of `schema` (a struct array: the batch's columns), the fields of the
    /// selection's columns (its projection is chosen now: [`chosen_when_made`]).
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
    type Error = Failure;

    fn schema(&self) -> &Arc<Schema> {
        &self.schema
    }

    fn project(&mut self, projection: Projection) {
        chosen_when_made(&projection);
    }

    fn next_batch(&mut self, _: u64) -> Result<Option<RecordBatch<'static>>> {
        Ok(self.batch.take())
    }
}

/// An Arrow IPC file read by quiver's [`FileReader`], with positioned reads.
pub struct IpcFile {
    reader: FileReader<FileSource>,
    /// The batches still to read.
    batches: Range<usize>,
    path: String,
}

/// An Arrow IPC stream read by quiver's [`StreamReader`].
pub struct IpcStream {
    reader: StreamReader<FromStd<BufReader<Box<dyn Read + Send>>>>,
    path: String,
}

/// Opens the IPC file or stream at the local `path`, told apart by the file's leading
/// `ARROW1` (a URL is [`crate::remote::Remote`]'s).
pub fn open(path: &Path, selection: &Selection) -> Result<Source> {
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
        let projection = selection.projection(reader.schema())?;
        let file = IpcFile {
            reader,
            batches: 0..0,
            path: name,
        };
        let source = Source::selected(file, projection, selection);
        return match starts_past_the_end(&source.selected, source.range.as_ref()) {
            Some(failure) => Err(failure),
            None => Ok(source),
        };
    }
    let leading = std::io::Cursor::new(magic[..filled].to_vec());
    let rest: Box<dyn Read + Send> = Box::new(leading.chain(file));
    let reader = quiver_std::stream_reader(BufReader::new(rest), ReaderOptions::default())
        .map_err(|e| invalid(&e))?;
    let projection = selection.projection(reader.schema())?;
    let stream = IpcStream { reader, path: name };
    Ok(Source::selected(stream, projection, selection))
}

impl Batches for IpcFile {
    type Error = Failure;

    fn schema(&self) -> &Arc<Schema> {
        self.reader.schema()
    }

    fn count(&self) -> Option<usize> {
        Some(self.reader.num_batches())
    }

    fn project(&mut self, projection: Projection) {
        self.reader.set_projection(projection);
    }

    fn start(&mut self, batches: Range<usize>) {
        self.batches = batches;
    }

    fn next_batch(&mut self, _: u64) -> Result<Option<RecordBatch<'static>>> {
        let Some(index) = self.batches.next() else {
            return Ok(None);
        };
        let batch = self.reader.batch(index).map_err(|e| {
            Failure::Invalid(format!(
                "{}: {}",
                self.path,
                e.display_with(self.reader.schema())
            ))
        })?;
        Ok(Some(batch))
    }
}

impl Batches for IpcStream {
    type Error = Failure;

    fn schema(&self) -> &Arc<Schema> {
        self.reader.schema()
    }

    fn project(&mut self, projection: Projection) {
        self.reader.set_projection(projection);
    }

    fn next_batch(&mut self, _: u64) -> Result<Option<RecordBatch<'static>>> {
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
        Ok(batch)
    }
}

/// The error for a `batches` range asked for (`range`) that starts past the last batch of
/// `selected`'s source: a file's, known when it is opened, or a stream's, once it ended.
pub fn starts_past_the_end<B: Batches>(
    selected: &Selected<B>,
    range: Option<&Range<usize>>,
) -> Option<Failure> {
    let (range, count) = (range?, selected.past_the_end()?);
    let input = match selected.selected_count() {
        Some(_) => "file",
        None => "stream",
    };
    Some(Failure::Value(past_the_end(range, input, count)))
}

/// The error for a `batches` range that starts past the last of `count` batches (the CLI's).
fn past_the_end(batches: &Range<usize>, input: &str, count: usize) -> String {
    let range = match batches.end {
        usize::MAX => format!("{}..", batches.start),
        end => format!("{}..{end}", batches.start),
    };
    let plural = if count == 1 { "" } else { "es" };
    format!(
        "batches {range} starts past the last batch: the {input} has {count} record batch{plural}"
    )
}

/// `batch` with its columns' buffers copied into memory of their own ([`Source::compacted`]).
fn compacted_batch(batch: &RecordBatch<'static>) -> Result<RecordBatch<'static>> {
    let columns = batch
        .columns()
        .iter()
        .map(compacted)
        .collect::<Result<Vec<_>>>()?;
    RecordBatch::try_new(Arc::clone(batch.schema()), columns, batch.num_rows())
        .map_err(Failure::invalid)
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
