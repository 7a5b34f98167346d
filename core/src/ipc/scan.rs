//! [`Scan`]: many batches of a file with planned, coalesced reads, a window at a time.
//!
//! It uses `file_decoder` and `file` beside it and, of the crate, the sources, the planner, the
//! arrays and the errors.
//!
//! The [`FileDecoder`](super::FileDecoder) plans each readahead window of blocks as one list of
//! byte ranges, merged with [`coalesce`](crate::read_plan::coalesce); the scan hands each list to
//! the source in one [`RandomAccess::read_ranges`] call, so the round trips grow with `file /
//! window`, not with the number of batches. Without a projection a window is one call for whole
//! blocks. With one it is two: every block's metadata first, then only the selected fields'
//! buffers. Dictionary blocks ride along with the first window that needs them. Decoded batches
//! borrow from the fetched bytes, which are released once the caller drops them.

use super::file::FileReader;
use super::file_decoder::{DecodeResult, ScanOptions};
use crate::array::RecordBatch;
use crate::error::Error;
use crate::source::RandomAccess;
use core::ops::Range;

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
