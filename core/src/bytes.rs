//! [`Bytes`]: a buffer that is either borrowed from the caller or shared and owned.
//!
//! Arrays borrow their buffers straight from a message body when the data can be used as it lies
//! (uncompressed, little-endian). Decompressed or byte-swapped buffers, and bodies the reader
//! fetched into memory of its own, are owned and shared by reference count instead.

use alloc::sync::Arc;
use alloc::vec::Vec;
use core::ops::{Deref, Range};

/// A byte buffer: borrowed for `'a`, or a shared window of owned memory.
#[derive(Clone)]
pub enum Bytes<'a> {
    /// Borrowed from the caller (a memory map, a `&[u8]` file, …).
    Borrowed(&'a [u8]),
    /// A window of a reference-counted owned buffer.
    Shared(Arc<Vec<u8>>, Range<usize>),
}

impl<'a> Bytes<'a> {
    /// Takes ownership of `data`.
    pub fn from_vec(data: Vec<u8>) -> Self {
        let len = data.len();
        Bytes::Shared(Arc::new(data), 0..len)
    }

    /// The sub-window `range` (relative to this buffer), or `None` if it does not fit.
    pub fn slice(&self, range: Range<usize>) -> Option<Self> {
        if range.start > range.end || range.end > self.len() {
            return None;
        }
        Some(match self {
            Bytes::Borrowed(b) => Bytes::Borrowed(b.get(range)?),
            Bytes::Shared(data, window) => Bytes::Shared(
                Arc::clone(data),
                window.start + range.start..window.start + range.end,
            ),
        })
    }

    /// Whether the bytes are borrowed (zero-copy) rather than owned.
    pub fn is_borrowed(&self) -> bool {
        matches!(self, Bytes::Borrowed(_))
    }
}

impl Default for Bytes<'_> {
    fn default() -> Self {
        Bytes::Borrowed(&[])
    }
}

impl Deref for Bytes<'_> {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        match self {
            Bytes::Borrowed(b) => b,
            Bytes::Shared(data, window) => data.get(window.clone()).unwrap_or_default(),
        }
    }
}

impl core::fmt::Debug for Bytes<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "Bytes({} bytes)", self.len())
    }
}

impl PartialEq for Bytes<'_> {
    fn eq(&self, other: &Self) -> bool {
        **self == **other
    }
}
