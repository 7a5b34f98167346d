//! The sources of record batches `quiver json`'s one loop ([`crate::convert`]) reads, one
//! input at a time, whatever the input is: each a [`Batches`] (quiver-std's, shared with the
//! Python adapter) whose errors are the command's [`Failure`], and a [`Cost`] (`--stats`).
//!
//! Each source names its own errors (a local input by its path, with the field by the schema;
//! an object by its URL and store). Three sources: a local file ([`LocalFile`], planned
//! windows of positioned reads or a map), a local stream ([`Stream`]), and an object
//! ([`object`]: quiver-object-store's [`BlockingBatches`], read by ranges or front to back).
//!
//! It uses the inputs (`input`, `remote`) and the read counts of `stats`.

use crate::Failure;
use crate::input::StreamInput;
use crate::remote::Remote;
use crate::stats::{Cost, ReadStats};
use quiver::array::RecordBatch;
use quiver::error::Error;
use quiver::format::Block;
use quiver::ipc::Scan;
use quiver::ipc::{FileReader, Projection, ScanOptions};
use quiver::schema::Schema;
use quiver::source::{Counting, RandomAccess};
use quiver_object_store::{BlockingBatches, ObjectError};
use quiver_std::{Batches, MapErr};
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

/// An object's batches (quiver-object-store's, a stream's front to back or a file's by ranges),
/// their errors said as the command says a store's or an object's ([`Remote::failed`]).
pub(crate) fn object<'r>(
    remote: &'r Remote,
    batches: BlockingBatches<'r>,
) -> MapErr<BlockingBatches<'r>, impl Fn(Error<ObjectError>, &Schema) -> Failure + 'r> {
    // Errors name their field by the object's schema.
    MapErr::new(batches, move |e, schema: &Schema| {
        remote.failed(e, Some(schema))
    })
}

impl<F> Cost for MapErr<BlockingBatches<'_>, F> {
    fn fetched(&self) -> Option<u64> {
        Some(self.inner().source().bytes_received())
    }

    /// The requests sent so far: a streaming GET the reading stopped before its end counts
    /// with the bytes it brought.
    fn stats(&self) -> ReadStats {
        ReadStats::of_requests(&self.inner().source().requests_so_far())
    }
}

/// A local input's IPC stream, read in order from its first batch, message by message.
pub(crate) struct Stream<'r> {
    input: &'r Path,
    stream: StreamInput,
}

impl<'r> Stream<'r> {
    /// The batches of `stream`, of the input `input`.
    pub fn new(input: &'r Path, stream: StreamInput) -> Self {
        Stream { input, stream }
    }
}

impl Batches for Stream<'_> {
    type Error = Failure;

    fn schema(&self) -> &Arc<Schema> {
        self.stream.schema()
    }

    fn project(&mut self, projection: Projection) {
        self.stream.set_projection(projection);
    }

    fn next_batch(&mut self, _: u64) -> Result<Option<RecordBatch<'static>>, Failure> {
        // Errors name their field by the stream's schema.
        let stream = &mut self.stream;
        let batch = stream.next_batch();
        batch.map_err(|e| Failure::about(self.input, e.display_with(stream.schema())))
    }
}

impl Cost for Stream<'_> {
    fn stats(&self) -> ReadStats {
        self.stream.inner().inner().stats()
    }
}
