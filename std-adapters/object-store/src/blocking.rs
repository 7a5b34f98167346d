//! [`BlockingBatches`]: an object's batches for a caller that is not async, as a
//! [`quiver_std::Batches`]: each batch awaited on a tokio runtime, whose threads keep the
//! requests going (the next window in flight, a streaming GET's body arriving) while the
//! caller converts the batch before.
//!
//! A stream is read front to back ([`ObjectBatches`]); a file by planned ranged reads
//! ([`AsyncFileReader`]) with the planner's limits from the source. Under a row limit a file
//! can be read in selections of the batches the rows still wanted need, at the rows per batch
//! seen so far (one batch first): a peek fetches the footer and the blocks it uses, not a
//! window of read-ahead.
//!
//! It uses the object ([`ObjectSource`]) and its batches ([`ObjectBatches`]).

use crate::{ObjectBatches, ObjectError, ObjectSource};
use quiver::array::RecordBatch;
use quiver::error::Error;
use quiver::ipc::{AsyncFileReader, Projection, ScanOptions};
use quiver::schema::Schema;
use quiver_std::Batches;
use std::ops::Range;
use std::sync::Arc;
use tokio::runtime::Runtime;

/// An object's batches, each awaited on a runtime; see the module docs.
pub struct BlockingBatches<'r> {
    runtime: &'r Runtime,
    source: &'r ObjectSource,
    object: Object<'r>,
}

/// A stream front to back, or a file by ranges.
enum Object<'r> {
    Stream(ObjectBatches),
    File(RangedFile<'r>),
}

/// A file read by ranges, in selections of batches.
struct RangedFile<'r> {
    reader: AsyncFileReader<'r, ObjectSource>,
    /// Whether rows are limited: the batches are then selected a few at a time.
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

impl<'r> BlockingBatches<'r> {
    /// The batches of the object `source` read front to back by `batches`, awaited on
    /// `runtime`.
    pub fn stream(runtime: &'r Runtime, source: &'r ObjectSource, batches: ObjectBatches) -> Self {
        BlockingBatches {
            runtime,
            source,
            object: Object::Stream(batches),
        }
    }

    /// The batches of the file `reader` opened over `source`, read by ranges awaited on
    /// `runtime`; `limited`: rows are limited (the batches are then selected a few at a time,
    /// as many as the rows still wanted need).
    pub fn file(
        runtime: &'r Runtime,
        source: &'r ObjectSource,
        reader: AsyncFileReader<'r, ObjectSource>,
        limited: bool,
    ) -> Self {
        let file = RangedFile {
            reader,
            limited,
            options: source.scan_options(),
            index: 0,
            end: 0,
            rows_per_batch: None,
            selection: None,
        };
        BlockingBatches {
            runtime,
            source,
            object: Object::File(file),
        }
    }

    /// The object.
    pub fn source(&self) -> &'r ObjectSource {
        self.source
    }
}

impl Batches for BlockingBatches<'_> {
    type Error = Error<ObjectError>;

    fn schema(&self) -> &Arc<Schema> {
        match &self.object {
            Object::Stream(batches) => batches.schema(),
            Object::File(file) => file.reader.schema(),
        }
    }

    fn count(&self) -> Option<usize> {
        match &self.object {
            Object::Stream(_) => None,
            Object::File(file) => Some(file.reader.num_batches()),
        }
    }

    fn project(&mut self, projection: Projection) {
        match &mut self.object {
            Object::Stream(batches) => batches.set_projection(projection),
            Object::File(file) => file.reader.set_projection(projection),
        }
    }

    fn start(&mut self, range: Range<usize>) {
        if let Object::File(file) = &mut self.object {
            (file.index, file.end) = (range.start, range.end);
        }
    }

    fn next_batch(&mut self, rows_left: u64) -> Result<Option<RecordBatch<'static>>, Self::Error> {
        match &mut self.object {
            Object::Stream(batches) => self.runtime.block_on(batches.next_batch()),
            Object::File(file) => file.next_batch(self.runtime, rows_left),
        }
    }
}

impl RangedFile<'_> {
    /// The next batch of the range: a new selection when the last one is done.
    fn next_batch(
        &mut self,
        runtime: &Runtime,
        rows_left: u64,
    ) -> Result<Option<RecordBatch<'static>>, Error<ObjectError>> {
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
            match runtime.block_on(self.reader.next_batch()) {
                Some(batch) => {
                    let batch = batch?;
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
