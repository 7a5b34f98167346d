//! [`Bytes`]: a buffer that is either borrowed from the caller or shared and owned.
//!
//! It uses nothing of the crate.
//!
//! Arrays borrow their buffers straight from a message body when the data can be used as it lies
//! (uncompressed, little-endian). Decompressed or byte-swapped buffers, bodies the reader fetched
//! into memory of its own, and memory a source shares (a memory map) are held by reference count
//! instead: any owner of bytes can stand behind a [`Bytes`] ([`Bytes::from_owner`]).

use alloc::sync::Arc;
use alloc::vec::Vec;
use core::ops::{Deref, Range};

/// Memory that can stand behind a [`Bytes`] ([`Bytes::from_owner`]): a `Vec<u8>`, a memory map, …
pub type Owner = Arc<dyn AsRef<[u8]> + Send + Sync>;

/// A byte buffer: borrowed for `'a`, or a shared window of owned memory.
#[derive(Clone)]
pub struct Bytes<'a>(Repr<'a>);

#[derive(Clone)]
enum Repr<'a> {
    /// Borrowed from the caller (a `&[u8]` file, …).
    Borrowed(&'a [u8]),
    /// A window of reference-counted memory.
    Shared(Owner, Range<usize>),
}

impl<'a> Bytes<'a> {
    /// Borrows `bytes` (zero-copy).
    pub const fn borrowed(bytes: &'a [u8]) -> Self {
        Bytes(Repr::Borrowed(bytes))
    }

    /// Takes ownership of `data`.
    pub fn from_vec(data: Vec<u8>) -> Self {
        let len = data.len();
        Bytes(Repr::Shared(Arc::new(data), 0..len))
    }

    /// A window of shared memory (empty if `range` does not fit it).
    pub fn from_owner(owner: Owner, range: Range<usize>) -> Self {
        let fits = range.start <= range.end && range.end <= (*owner).as_ref().len();
        Bytes(Repr::Shared(owner, if fits { range } else { 0..0 }))
    }

    /// The sub-window `range` (relative to this buffer), or `None` if it does not fit.
    pub fn slice(&self, range: Range<usize>) -> Option<Self> {
        if range.start > range.end || range.end > self.len() {
            return None;
        }
        Some(Bytes(match &self.0 {
            Repr::Borrowed(b) => Repr::Borrowed(b.get(range)?),
            Repr::Shared(data, window) => Repr::Shared(
                Arc::clone(data),
                window.start + range.start..window.start + range.end,
            ),
        }))
    }

    /// Whether the bytes are borrowed (zero-copy) rather than owned.
    pub fn is_borrowed(&self) -> bool {
        matches!(self.0, Repr::Borrowed(_))
    }

    /// These bytes, kept for as long as the caller likes: borrowed bytes are copied, shared
    /// ones stay shared.
    pub fn into_static(self) -> Bytes<'static> {
        Bytes(match self.0 {
            Repr::Borrowed(b) => return Bytes::from_vec(b.to_vec()),
            Repr::Shared(data, window) => Repr::Shared(data, window),
        })
    }
}

impl Default for Bytes<'_> {
    fn default() -> Self {
        Bytes::borrowed(&[])
    }
}

impl Deref for Bytes<'_> {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        match &self.0 {
            Repr::Borrowed(b) => b,
            Repr::Shared(data, window) => (**data).as_ref().get(window.clone()).unwrap_or_default(),
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
