//! [`Scan`]: many batches of a file with planned, coalesced reads, a window at a time.
//!
//! For each readahead window of blocks the scan plans the byte ranges it needs, merges
//! neighbours with [`coalesce`], and hands the whole list to the source in one
//! [`RandomAccess::read_ranges`] call, so the round trips grow with `file / window`, not with
//! the number of batches. Without a projection a window is one call for whole blocks. With one
//! it is two: every block's metadata first, then only the selected fields' buffers. Dictionary
//! blocks ride along with the first window that needs them (and are copied out of it, since
//! they live as long as the reader). Decoded batches borrow from the fetched bytes, which are
//! released once the caller drops them.

use super::MAGIC;
use super::decode::{Body, buffer_ranges};
use super::file::{FileReader, MessageBytes};
use crate::array::RecordBatch;
use crate::bytes::Bytes;
use crate::error::{Error, FormatError, FormatErrorKind, FormatResult};
use crate::format::{self, Block};
use crate::plan::{DEFAULT_HOLE_SIZE_LIMIT, DEFAULT_RANGE_SIZE_LIMIT, coalesce, locate};
use crate::source::RandomAccess;
use alloc::collections::VecDeque;
use alloc::vec::Vec;
use core::ops::Range;

/// How a [`Scan`] plans its reads.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ScanOptions {
    /// Largest gap between two needed ranges that is read through rather than split.
    pub hole_size_limit: u64,
    /// Largest read that merging may produce (a single larger range stays whole).
    pub range_size_limit: u64,
    /// Bytes of blocks fetched per window (at least one block per window).
    pub readahead: u64,
}

impl Default for ScanOptions {
    fn default() -> Self {
        ScanOptions {
            hole_size_limit: DEFAULT_HOLE_SIZE_LIMIT,
            range_size_limit: DEFAULT_RANGE_SIZE_LIMIT,
            readahead: 64 * 1024 * 1024,
        }
    }
}

impl ScanOptions {
    /// Sets the largest gap read through.
    #[must_use]
    pub fn with_hole_size_limit(mut self, bytes: u64) -> Self {
        self.hole_size_limit = bytes;
        self
    }

    /// Sets the largest merged read.
    #[must_use]
    pub fn with_range_size_limit(mut self, bytes: u64) -> Self {
        self.range_size_limit = bytes;
        self
    }

    /// Sets the readahead window in bytes.
    #[must_use]
    pub fn with_readahead(mut self, bytes: u64) -> Self {
        self.readahead = bytes;
        self
    }
}

/// A block that was fetched and waits to be decoded.
struct Pending {
    index: usize,
    block: Block,
    message: MessageBytes,
    body: Body<'static>,
}

/// Iterates over a range of a file's record batches with planned reads; see the module docs.
pub struct Scan<'r, R> {
    reader: &'r mut FileReader<R>,
    options: ScanOptions,
    next: usize,
    end: usize,
    ready: VecDeque<Pending>,
    fetches: usize,
    failed: bool,
}

impl<R: RandomAccess> FileReader<R> {
    /// Reads record batches `batches` (clamped to the file) with planned, coalesced reads.
    pub fn scan(&mut self, batches: Range<usize>, options: ScanOptions) -> Scan<'_, R> {
        let end = batches.end.min(self.num_batches());
        Scan {
            next: batches.start.min(end),
            end,
            reader: self,
            options,
            ready: VecDeque::new(),
            fetches: 0,
            failed: false,
        }
    }
}

impl<R: RandomAccess> Iterator for Scan<'_, R> {
    type Item = Result<RecordBatch<'static>, Error<R::Error>>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed {
            return None;
        }
        if self.ready.is_empty()
            && self.next < self.end
            && let Err(e) = self.fetch_window()
        {
            self.failed = true;
            return Some(Err(e));
        }
        let p = self.ready.pop_front()?;
        let batch = self
            .reader
            .decode_batch(p.index, p.block, &p.message, &p.body)
            .map_err(Error::from);
        self.failed = batch.is_err();
        Some(batch)
    }
}

/// The bytes of one round trip, one buffer per coalesced read.
struct Fetched {
    reads: Vec<Range<u64>>,
    bytes: Vec<Bytes<'static>>,
}

impl Fetched {
    /// The bytes at file range `range`, which must have been asked for.
    fn get(&self, range: Range<u64>) -> FormatResult<Bytes<'static>> {
        locate(&self.reads, &range)
            .and_then(|(read, window)| self.bytes.get(read)?.slice(window))
            .ok_or_else(|| {
                FormatError::from(FormatErrorKind::LayoutMismatch {
                    what: "range outside the planned reads",
                })
                .at(range.start)
            })
    }

    /// The parts of the reads that fall inside `body`, as body chunks.
    fn chunks(&self, body: Range<u64>) -> Vec<(u64, Bytes<'static>)> {
        let first = self.reads.partition_point(|r| r.end <= body.start);
        let mut chunks = Vec::new();
        for (read, bytes) in self.reads.iter().zip(&self.bytes).skip(first) {
            if read.start >= body.end {
                break;
            }
            let from = read.start.max(body.start);
            let to = read.end.min(body.end);
            let window = (from - read.start) as usize..(to - read.start) as usize;
            if let Some(bytes) = bytes.slice(window) {
                chunks.push((from - body.start, bytes));
            }
        }
        chunks
    }
}

fn extent(block: &Block) -> Range<u64> {
    let start = block.offset as u64;
    start..start + block.meta_data_length as u64 + block.body_length as u64
}

fn metadata_extent(block: &Block) -> Range<u64> {
    let start = block.offset as u64;
    start..start + block.meta_data_length as u64
}

fn body_extent(block: &Block) -> Range<u64> {
    let end = extent(block).end;
    end - block.body_length as u64..end
}

impl<R: RandomAccess> Scan<'_, R> {
    /// Plans, fetches and splits the next window of blocks into `ready`.
    fn fetch_window(&mut self) -> Result<(), Error<R::Error>> {
        let mut blocks = Vec::new();
        let mut bytes = 0u64;
        while self.next < self.end {
            let block = self.reader.record_batch_block(self.next)?;
            let size = extent(&block).end - extent(&block).start;
            if !blocks.is_empty() && bytes.saturating_add(size) > self.options.readahead {
                break;
            }
            bytes = bytes.saturating_add(size);
            blocks.push((self.next, block));
            self.next += 1;
        }
        let dictionaries = if !self.reader.dictionaries_read && self.reader.state.needs_dictionaries
        {
            self.reader.dictionary_blocks.clone()
        } else {
            Vec::new()
        };
        let whole = self.reader.state.projection.is_all();
        let wanted: Vec<Range<u64>> = dictionaries
            .iter()
            .map(extent)
            .chain(
                blocks
                    .iter()
                    .map(|(_, b)| if whole { extent(b) } else { metadata_extent(b) }),
            )
            .collect();
        let fetched = self.fetch(&wanted)?;
        for (i, block) in dictionaries.iter().enumerate() {
            // Dictionaries outlive the window: an owned copy keeps them from pinning the
            // window's buffer for the rest of the scan.
            let bytes = fetched
                .get(extent(block))
                .map(|shared| Bytes::from_vec(shared.to_vec()))
                .map_err(|e| e.in_batch(i as u64))?;
            let message = MessageBytes::of_block(*block, &bytes)?;
            let meta = block.meta_data_length as usize;
            let body = bytes.slice(meta..bytes.len()).unwrap_or_default();
            self.reader.apply_dictionary(i, *block, &message, &body)?;
        }
        self.reader.dictionaries_read |= !dictionaries.is_empty();

        let mut pending = Vec::with_capacity(blocks.len());
        for (index, block) in blocks {
            let batch = index as u64;
            let bytes = fetched
                .get(if whole {
                    extent(&block)
                } else {
                    metadata_extent(&block)
                })
                .map_err(|e| e.in_batch(batch))?;
            let message = MessageBytes::of_block(block, &bytes).map_err(|e| e.in_batch(batch))?;
            let meta = block.meta_data_length as usize;
            let body = Body::Whole(bytes.slice(meta..bytes.len()).unwrap_or_default());
            pending.push(Pending {
                index,
                block,
                message,
                body,
            });
        }
        if !whole {
            self.fetch_projected(&mut pending)?;
        }
        self.ready.extend(pending);
        Ok(())
    }

    /// The second phase of a projected window: only the selected fields' buffers.
    fn fetch_projected(&mut self, pending: &mut [Pending]) -> Result<(), Error<R::Error>> {
        let mut wanted = Vec::new();
        for p in pending.iter() {
            let located = |e: FormatError| e.in_batch(p.index as u64);
            let message = p.message.parse(p.block).map_err(located)?;
            let format::MessageHeader::RecordBatch(header) = message.header().map_err(located)?
            else {
                return Err(located(super::unexpected("RecordBatch", message)).into());
            };
            let body = body_extent(&p.block);
            let state = &self.reader.state;
            let ranges = buffer_ranges(
                state.schema.fields(),
                &state.projection,
                header,
                body.end - body.start,
                message.version().map_err(located)?,
            )
            .map_err(|e| located(e.rebase(body.start)))?;
            wanted.extend(
                ranges
                    .into_iter()
                    .map(|r| body.start + r.start..body.start + r.end),
            );
        }
        let fetched = self.fetch(&wanted)?;
        for p in pending.iter_mut() {
            let body = body_extent(&p.block);
            p.body = Body::Chunks {
                len: body.end - body.start,
                chunks: fetched.chunks(body),
            };
        }
        Ok(())
    }

    /// One round trip: the coalesced reads of `wanted`. The first read of a scan that starts
    /// within a hole of the file's start is stretched to offset 0 to check the leading magic.
    fn fetch(&mut self, wanted: &[Range<u64>]) -> Result<Fetched, Error<R::Error>> {
        let options = &self.options;
        let mut reads = coalesce(wanted, options.hole_size_limit, options.range_size_limit);
        if self.fetches == 0
            && let Some(first) = reads.first_mut()
            && first.start <= options.hole_size_limit
        {
            first.start = 0;
        }
        self.fetches += 1;
        let bytes = super::fetch(&self.reader.source, &reads)?;
        let starts_at_zero = reads.first().is_some_and(|r| r.start == 0);
        let leading = bytes.first().and_then(|b| b.get(..MAGIC.len()));
        if starts_at_zero && leading != Some(&MAGIC[..]) {
            return Err(FormatError::from(FormatErrorKind::BadMagic).at(0).into());
        }
        Ok(Fetched { reads, bytes })
    }
}
