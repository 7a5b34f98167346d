//! [`Scan`]: many batches of a file with planned, coalesced reads, a window at a time.
//!
//! The [`FileDecoder`](super::FileDecoder) plans each readahead window of blocks as one list of
//! byte ranges, merged with [`coalesce`](crate::plan::coalesce); the scan hands each list to the
//! source in one [`RandomAccess::read_ranges`] call, so the round trips grow with
//! `file / window`, not with the number of batches. Without a projection a window is one call
//! for whole blocks. With one it is two: every block's metadata first, then only the selected
//! fields' buffers. Dictionary blocks ride along with the first window that needs them.
//! Decoded batches borrow from the fetched bytes, which are released once the caller drops
//! them.

use super::decoder::DecodeResult;
use super::file::FileReader;
use crate::array::RecordBatch;
use crate::cost::Network;
use crate::error::Error;
use crate::plan::{DEFAULT_HOLE_SIZE_LIMIT, DEFAULT_RANGE_SIZE_LIMIT};
use crate::source::RandomAccess;
use core::ops::Range;

/// How a [`Scan`] plans its reads.
///
/// Without a [`Network`] the limits are fixed: ranges are merged within `hole_size_limit` and
/// `range_size_limit`, and a projected window reads every block's metadata, then the selected
/// buffers. With one, the planner compares the plans it can make for each window by the model
/// ([`crate::cost`]) and takes the cheapest: whole blocks in parallel parts, metadata then
/// buffers, or (once one block's buffers are known) each block's metadata and its
/// predicted buffers together, merged with the gap the model prefers.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ScanOptions {
    /// Largest gap between two needed ranges that is read through rather than split.
    pub hole_size_limit: u64,
    /// Largest read that merging may produce (a single larger range stays whole).
    pub range_size_limit: u64,
    /// Bytes of blocks fetched per window (at least one block per window); under a network
    /// model, the bytes a window's plan reads.
    pub readahead: u64,
    /// The network the planner decides by, if any.
    pub network: Option<Network>,
}

impl Default for ScanOptions {
    fn default() -> Self {
        ScanOptions {
            hole_size_limit: DEFAULT_HOLE_SIZE_LIMIT,
            range_size_limit: DEFAULT_RANGE_SIZE_LIMIT,
            readahead: 64 * 1024 * 1024,
            network: None,
        }
    }
}

with_setters! {
    ScanOptions;
    with_hole_size_limit: hole_size_limit: u64,
    with_range_size_limit: range_size_limit: u64,
    with_readahead: readahead: u64,
    with_network: network: Option<Network>,
}

/// Iterates over a range of a file's record batches with planned reads; see the module docs.
pub struct Scan<'r, R> {
    reader: &'r mut FileReader<R>,
    failed: bool,
}

impl<R: RandomAccess> FileReader<R> {
    /// Reads record batches `batches` (clamped to the file) with planned, coalesced reads.
    pub fn scan(&mut self, batches: Range<usize>, options: ScanOptions) -> Scan<'_, R> {
        self.decoder.set_scan_options(options);
        self.decoder.select(batches);
        Scan {
            reader: self,
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
        match self.reader.drive() {
            Ok(DecodeResult::Data(batch)) => Some(Ok(batch)),
            Ok(_) => None,
            Err(e) => {
                self.failed = true;
                Some(Err(e))
            }
        }
    }
}
