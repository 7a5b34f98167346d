//! [`MmapSource`]: a memory-mapped file as a zero-copy [`RandomAccess`] source.
//!
//! It uses quiver's `source` and `bytes`, and `memmap2` for the map.
//!
//! The reader still plans and requests byte ranges as for any source (so counting wrappers see
//! the same requests), but [`RandomAccess::share_ranges`] answers them with windows of the map:
//! decoded arrays point straight into the mapped file.
#![deny(clippy::undocumented_unsafe_blocks)]

use memmap2::Mmap;
use quiver::bytes::{Bytes, Owner};
use quiver::source::{OutOfBounds, RandomAccess, SharedRanges};
use std::fs::File;
use std::io;
use std::ops::Range;
use std::path::Path;
use std::sync::Arc;

/// A read-only memory map of a whole file.
#[derive(Debug, Clone)]
pub struct MmapSource {
    map: Arc<Mmap>,
}

impl MmapSource {
    /// Maps the file at `path`.
    pub fn open(path: impl AsRef<Path>) -> io::Result<Self> {
        Self::new(&File::open(path)?)
    }

    /// Maps an open file.
    #[allow(unsafe_code)]
    pub fn new(file: &File) -> io::Result<Self> {
        // SAFETY: `Mmap::map` is unsafe because the mapped bytes can change under us if another
        // process writes to or truncates the file while it is mapped; a truncation makes later
        // reads of the lost pages fault (SIGBUS). quiver validates bytes when it decodes them,
        // so concurrent *writes* can at worst yield wrong values or a clean error, but a
        // truncation cannot be guarded against from safe code. Callers map files that are not
        // modified while mapped, as the README states.
        let map = unsafe { Mmap::map(file)? };
        Ok(MmapSource { map: Arc::new(map) })
    }

    /// The mapped bytes.
    pub fn as_slice(&self) -> &[u8] {
        &self.map
    }
}

impl RandomAccess for MmapSource {
    type Error = OutOfBounds;

    fn len(&self) -> u64 {
        self.map.len() as u64
    }

    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<(), OutOfBounds> {
        self.as_slice().read_at(offset, buf)
    }

    fn share_ranges(&self, ranges: &[Range<u64>]) -> Option<Result<SharedRanges, OutOfBounds>> {
        let owner: Owner = self.map.clone();
        let len = self.map.len();
        Some(
            ranges
                .iter()
                .map(|r| {
                    let window = usize::try_from(r.start)
                        .ok()
                        .zip(usize::try_from(r.end).ok())
                        .filter(|(s, e)| s <= e && *e <= len);
                    window
                        .map(|(s, e)| Bytes::from_owner(owner.clone(), s..e))
                        .ok_or(OutOfBounds {
                            offset: r.start,
                            len: r.end.saturating_sub(r.start),
                            available: len as u64,
                        })
                })
                .collect(),
        )
    }
}
