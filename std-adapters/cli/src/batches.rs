//! The sources of record batches `quiver json`'s one loop ([`crate::convert`]) reads, one
//! input at a time, whatever the input is: each a [`Batches`] (quiver-std's, shared with the
//! Python adapter) whose errors are the command's [`Failure`], and a [`Cost`] (`--stats`).
//!
//! Each source names its own errors (a local input by its path, with the field by the schema;
//! an object by its URL and store). Three sources: a local file
//! ([`LocalFile`], planned windows of positioned reads or a map), an object read by ranges
//! ([`RemoteFile`]), and a stream ([`Stream`]), local or an object read front to back.
//!
//! It uses the inputs (`input`, `remote`) and the read counts of `stats`.

use crate::Failure;
use crate::input::StreamInput;
use crate::remote::Remote;
use crate::stats::{Cost, ReadStats};
use quiver::array::RecordBatch;
use quiver::format::Block;
use quiver::ipc::Scan;
use quiver::ipc::{AsyncFileReader, FileReader, Projection, ScanOptions};
use quiver::schema::Schema;
use quiver::source::{Counting, RandomAccess};
use quiver_object_store::{ObjectBatches, ObjectSource};
use quiver_std::Batches;
use std::fmt::Display;
use std::ops::Range;
use std::path::Path;
use std::sync::Arc;

/// The readahead window for local files: the largest record batch block, so that each window
/// holds about one batch (at least one, and several only when they are small).
pub fn one_batch(blocks: &[Block]) -> u64 {
    blocks
        .iter()
        .map(|b| (b.meta_data_length as u64).saturating_add(b.body_length as u64))
        .max()
        .unwrap_or(0)
}

/// An IPC file from a local [`RandomAccess`] source, read with [`FileReader::scan`] and a
/// readahead window of about one batch ([`one_batch`]).
pub(crate) struct LocalFile<'r, S: RandomAccess> {
    input: &'r Path,
    source: &'r Counting<S>,
    schema: Arc<Schema>,
    count: usize,
    state: FileState<'r, S>,
}

/// Where a [`LocalFile`] is: opened, scanning, or with nothing selected.
enum FileState<'r, S: RandomAccess> {
    Open(&'r mut FileReader<&'r Counting<S>>),
    Scanning(Scan<'r, &'r Counting<S>>),
    Done,
}

impl<'r, S: RandomAccess> LocalFile<'r, S> {
    /// The batches of `reader`, opened over `source`, of the file `input`.
    pub fn new(
        input: &'r Path,
        source: &'r Counting<S>,
        reader: &'r mut FileReader<&'r Counting<S>>,
    ) -> Self {
        LocalFile {
            input,
            source,
            schema: Arc::clone(reader.schema()),
            count: reader.num_batches(),
            state: FileState::Open(reader),
        }
    }
}

impl<S: RandomAccess> Batches for LocalFile<'_, S>
where
    S::Error: Display,
{
    type Error = Failure;

    fn schema(&self) -> &Arc<Schema> {
        &self.schema
    }

    fn count(&self) -> Option<usize> {
        Some(self.count)
    }

    fn project(&mut self, projection: Projection) {
        if let FileState::Open(reader) = &mut self.state {
            reader.set_projection(projection);
        }
    }

    fn start(&mut self, range: Range<usize>) {
        let FileState::Open(reader) = std::mem::replace(&mut self.state, FileState::Done) else {
            return;
        };
        if !range.is_empty() {
            let window = one_batch(reader.record_batch_blocks());
            let options = ScanOptions::default().with_readahead(window);
            self.state = FileState::Scanning(reader.scan(range, options));
        }
    }

    fn next_batch(&mut self, _: u64) -> Result<Option<RecordBatch<'static>>, Failure> {
        let FileState::Scanning(scan) = &mut self.state else {
            return Ok(None);
        };
        // Errors name their field by the file's schema.
        scan.next()
            .transpose()
            .map_err(|e| Failure::about(self.input, e.display_with(&self.schema)))
    }
}

impl<S: RandomAccess> Cost for LocalFile<'_, S> {
    fn stats(&self) -> ReadStats {
        ReadStats::of(self.source)
    }
}

/// An IPC file named by URL, read by ranges: the reader's windows arrive on the runtime's
/// threads, the next one in flight while this thread encodes the batches of the current one.
///
/// Under `--limit` the file is read in selections of the batches the rows still wanted
/// need, at the rows per batch seen so far (one batch first): a peek fetches the footer and
/// the blocks it uses, not a window of read-ahead.
pub(crate) struct RemoteFile<'r> {
    remote: &'r Remote,
    reader: AsyncFileReader<'r, ObjectSource>,
    schema: Arc<Schema>,
    /// Whether `--limit` is given.
    limited: bool,
    /// The planner's options, as the source gives them once the file is open.
    options: ScanOptions,
    /// The next batch and the end of the batches to read.
    index: usize,
    end: usize,
    /// Rows per batch seen so far, at least 1; none seen yet: `None`.
    rows_per_batch: Option<u64>,
    /// The rows and batches read in the current selection; no selection: `None`.
    selection: Option<(u64, u64)>,
}

impl<'r> RemoteFile<'r> {
    /// Opens the file of `remote` (no request when the footer was in the opening GET);
    /// `limited`: `--limit` is given.
    pub fn open(remote: &'r Remote, limited: bool) -> Result<Self, Failure> {
        let reader = remote.file_reader()?;
        Ok(RemoteFile {
            remote,
            schema: Arc::clone(reader.schema()),
            options: remote.source.scan_options(),
            reader,
            limited,
            index: 0,
            end: 0,
            rows_per_batch: None,
            selection: None,
        })
    }
}

impl Batches for RemoteFile<'_> {
    type Error = Failure;

    fn schema(&self) -> &Arc<Schema> {
        &self.schema
    }

    fn count(&self) -> Option<usize> {
        Some(self.reader.num_batches())
    }

    fn project(&mut self, projection: Projection) {
        self.reader.set_projection(projection);
    }

    fn start(&mut self, range: Range<usize>) {
        (self.index, self.end) = (range.start, range.end);
    }

    fn next_batch(&mut self, rows_left: u64) -> Result<Option<RecordBatch<'static>>, Failure> {
        loop {
            let (rows, read) = match self.selection {
                Some(counts) => counts,
                None if self.index >= self.end => return Ok(None),
                None => {
                    let (index, end) = (self.index, self.end);
                    let selected = match (self.limited, self.rows_per_batch) {
                        (false, _) => index..end,
                        (true, None) => index..index + 1,
                        (true, Some(rows)) => {
                            let wanted = rows_left.div_ceil(rows.max(1));
                            let wanted = usize::try_from(wanted).unwrap_or(usize::MAX).max(1);
                            index..end.min(index.saturating_add(wanted))
                        }
                    };
                    self.reader.select(selected, self.options.clone());
                    (0, 0)
                }
            };
            let batch = self.remote.runtime.block_on(self.reader.next_batch());
            match batch {
                Some(batch) => {
                    let batch = batch.map_err(|e| self.remote.failed(e, Some(&self.schema)))?;
                    self.selection = Some((rows + batch.num_rows() as u64, read + 1));
                    self.index += 1;
                    return Ok(Some(batch));
                }
                None if read == 0 => {
                    self.index = self.end;
                    return Ok(None);
                }
                None => {
                    self.rows_per_batch = Some((rows / read).max(1));
                    self.selection = None;
                }
            }
        }
    }
}

impl Cost for RemoteFile<'_> {
    fn fetched(&self) -> Option<u64> {
        Some(self.remote.source.bytes_received())
    }

    fn stats(&self) -> ReadStats {
        self.remote.stats()
    }
}

/// An IPC stream, read in order from its first batch: a local input's, message by message, or
/// an object's front to back ([`ObjectBatches`] over one streaming GET, whose body keeps
/// arriving on the runtime's threads while this thread encodes).
pub(crate) enum Stream<'r> {
    /// A local input's stream, and the input, for messages.
    Local(&'r Path, StreamInput),
    /// An object's batches, and the object.
    Remote(&'r Remote, ObjectBatches),
}

impl Batches for Stream<'_> {
    type Error = Failure;

    fn schema(&self) -> &Arc<Schema> {
        match self {
            Stream::Local(_, stream) => stream.schema(),
            Stream::Remote(_, stream) => stream.schema(),
        }
    }

    fn project(&mut self, projection: Projection) {
        match self {
            Stream::Local(_, stream) => stream.set_projection(projection),
            Stream::Remote(_, stream) => stream.set_projection(projection),
        }
    }

    fn next_batch(&mut self, _: u64) -> Result<Option<RecordBatch<'static>>, Failure> {
        // Errors name their field by the stream's schema.
        match self {
            Stream::Local(input, stream) => stream
                .next_batch()
                .map_err(|e| Failure::about(input, e.display_with(stream.schema()))),
            Stream::Remote(remote, stream) => {
                let batch = remote.runtime.block_on(stream.next_batch());
                batch.map_err(|e| remote.failed(e, Some(stream.schema())))
            }
        }
    }
}

impl Cost for Stream<'_> {
    fn fetched(&self) -> Option<u64> {
        match self {
            Stream::Local(..) => None,
            Stream::Remote(remote, _) => Some(remote.source.bytes_received()),
        }
    }

    fn stats(&self) -> ReadStats {
        match self {
            Stream::Local(_, stream) => stream.inner().inner().stats(),
            Stream::Remote(remote, _) => remote.stats(),
        }
    }
}
