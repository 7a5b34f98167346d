//! A small flatbuffer builder: the mirror of the safe [`flatbuffer`](crate::flatbuffer) reader.
//!
//! It uses the errors and nothing else of the crate.
//!
//! Values enter one at a time (strings, vectors, then the tables that point at them) and leave as
//! one `Vec<u8>` holding a finished flatbuffer, which [`Table::root`](crate::flatbuffer::Table::root)
//! reads back. Like every flatbuffer builder, this one lays the buffer out back to front: an
//! object is written before the objects that refer to it, so each reference is a forward `uoffset`
//! that is known when it is written. Positions are counted from the end of the buffer until
//! [`Builder::finish`] puts the root offset in front.
//!
//! What it writes, in the reader's terms:
//! - little-endian scalars, aligned to their size; the finished buffer's length is a multiple of
//!   the largest alignment used, so alignment counted from the end holds from the start too;
//! - tables: an `soffset` to a vtable (`u16` vtable size, `u16` inline size, one `u16` per slot),
//!   then the fields; identical vtables are written once and shared (the tests can turn
//!   this off);
//! - vectors of scalars or fixed-size structs ([`Push`]), of tables and of strings: a `u32` count,
//!   then the elements, aligned to the element's alignment;
//! - strings: a `u32` length, the UTF-8 bytes and a terminating zero;
//! - unions: a `u8` tag slot and a table slot ([`Builder::add_union`]).
//!
//! Nothing panics. Misuse (a string started while a table is open, a field outside a table) or a
//! buffer past the format's 2 GiB limit is remembered, every later call does nothing, and
//! [`Builder::finish`] returns the first such error.

use crate::error::{Feature, FlatbufferBound, FormatError, FormatErrorKind, FormatResult};
use alloc::vec;
use alloc::vec::Vec;
use core::marker::PhantomData;

/// Largest buffer the builder makes: offsets are 32-bit and `soffset`s signed.
const MAX_SIZE: usize = i32::MAX as usize;

/// Size of a `uoffset`, a vector length or an `soffset`.
const OFFSET_SIZE: usize = 4;

/// Bytes at the start of a vtable: its own size and the table's inline size, both `u16`.
const VTABLE_HEADER: usize = 4;

/// What an [`Offset`] points at.
pub mod kind {
    /// A string.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum Str {}
    /// A table.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum Table {}
    /// A vector (of scalars, structs, tables or strings).
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum Vector {}
}

/// A finished string, vector or table in the buffer being built, counted from the buffer's end.
///
/// Only valid for the [`Builder`] that returned it.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Offset<K> {
    from_end: u32,
    _kind: PhantomData<fn() -> K>,
}

impl<K> Offset<K> {
    fn new(from_end: usize) -> Self {
        Offset {
            from_end: u32::try_from(from_end).unwrap_or(u32::MAX),
            _kind: PhantomData,
        }
    }

    /// Distance of the object's start from the end of the buffer being built.
    #[cfg(test)]
    pub fn end_distance(self) -> u32 {
        self.from_end
    }
}

impl<K> core::fmt::Debug for Offset<K> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "Offset({})", self.from_end)
    }
}

/// A value written inline: a scalar field of a table, or an element of a scalar or struct vector.
///
/// The mirror of the reader's [`Element`](crate::flatbuffer::Element).
pub trait Push: Copy {
    /// Alignment of the value in the buffer (its size for scalars, its largest member's for
    /// structs).
    const ALIGN: usize;
    /// The value's little-endian bytes; their length is a multiple of [`Self::ALIGN`].
    type Bytes: AsRef<[u8]>;
    /// Encodes the value.
    fn to_le(&self) -> Self::Bytes;
}

macro_rules! push_scalar {
    ($($t:ty),*) => {$(
        impl Push for $t {
            const ALIGN: usize = core::mem::size_of::<$t>();
            type Bytes = [u8; core::mem::size_of::<$t>()];
            fn to_le(&self) -> Self::Bytes {
                <$t>::to_le_bytes(*self)
            }
        }
    )*};
}

push_scalar!(u8, i8, u16, i16, u32, i32, u64, i64, f32, f64);

impl Push for bool {
    const ALIGN: usize = 1;
    type Bytes = [u8; 1];
    fn to_le(&self) -> [u8; 1] {
        [u8::from(*self)]
    }
}

/// The table being built: where it started and where its fields are.
#[derive(Debug)]
struct OpenTable {
    /// Bytes used when the table was started: its inline bytes end here.
    start: usize,
    /// Each field's slot and the position (from the end) of its inline value.
    fields: Vec<(u16, usize)>,
}

/// Builds one flatbuffer back to front; see the [module docs](self).
#[derive(Debug)]
pub struct Builder {
    /// Storage; the flatbuffer so far is `buf[head..]`.
    buf: Vec<u8>,
    head: usize,
    /// The largest alignment any value asked for.
    min_align: usize,
    table: Option<OpenTable>,
    /// Where (from the end) each vtable written so far starts, for sharing.
    vtables: Vec<usize>,
    dedup: bool,
    error: Option<FormatError>,
}

impl Default for Builder {
    fn default() -> Self {
        Builder::new()
    }
}

impl Builder {
    /// An empty builder that shares identical vtables.
    pub fn new() -> Self {
        Builder::with_capacity(256)
    }

    /// An empty builder with room for `bytes` before it grows.
    pub fn with_capacity(bytes: usize) -> Self {
        let bytes = bytes.min(MAX_SIZE);
        Builder {
            buf: vec![0; bytes],
            head: bytes,
            min_align: 1,
            table: None,
            vtables: Vec::new(),
            dedup: true,
            error: None,
        }
    }

    /// Whether a table whose vtable equals an earlier one points at that one instead of writing
    /// its own copy (on by default; off writes one vtable per table).
    #[cfg(test)]
    #[must_use]
    pub fn with_vtable_dedup(mut self, dedup: bool) -> Self {
        self.dedup = dedup;
        self
    }

    /// Bytes written so far.
    pub fn len(&self) -> usize {
        self.buf.len().saturating_sub(self.head)
    }

    /// The first error (misuse or size limit), if any; [`finish`](Self::finish) returns it.
    #[cfg(test)]
    pub fn error(&self) -> Option<&FormatError> {
        self.error.as_ref()
    }

    fn fail(&mut self, kind: FormatErrorKind) {
        if self.error.is_none() {
            self.error = Some(FormatError::new(kind).at(self.len() as u64));
        }
    }

    /// Remembers a call out of order; `what` says which (for a debugger).
    fn misuse(&mut self, what: &'static str) {
        let _ = what;
        self.fail(FormatErrorKind::Unsupported {
            what: Feature::FlatbufferBuilderMisuse,
        });
    }

    fn too_big(&mut self, what: FlatbufferBound, limit: usize) {
        self.fail(FormatErrorKind::FlatbufferLimit {
            what,
            limit: limit as u64,
        });
    }

    /// Makes room for `n` more bytes in front, growing the storage; false on error.
    fn reserve(&mut self, n: usize) -> bool {
        if self.error.is_some() {
            return false;
        }
        let used = self.len();
        let Some(needed) = used.checked_add(n).filter(|&total| total <= MAX_SIZE) else {
            self.too_big(FlatbufferBound::BufferSize, MAX_SIZE);
            return false;
        };
        if self.head < n {
            let grown = needed.max(self.buf.len().saturating_mul(2)).min(MAX_SIZE);
            let mut buf = vec![0u8; grown];
            let start = grown - used;
            if let (Some(to), Some(from)) = (buf.get_mut(start..), self.buf.get(self.head..)) {
                to.copy_from_slice(from);
            }
            self.buf = buf;
            self.head = start;
        }
        true
    }

    /// Prepends `n` zero bytes; returns the new head, or `None` on error.
    fn prepend_zeroed(&mut self, n: usize) -> Option<usize> {
        if !self.reserve(n) {
            return None;
        }
        self.head -= n;
        if let Some(room) = self.buf.get_mut(self.head..self.head + n) {
            room.fill(0);
        }
        Some(self.head)
    }

    fn prepend(&mut self, bytes: &[u8]) {
        if let Some(at) = self.prepend_zeroed(bytes.len())
            && let Some(room) = self.buf.get_mut(at..at + bytes.len())
        {
            room.copy_from_slice(bytes);
        }
    }

    /// Pads so that after `additional` more bytes the position is a multiple of `align` (a power
    /// of two), and records `align` for the finished buffer.
    fn align(&mut self, align: usize, additional: usize) {
        self.min_align = self.min_align.max(align);
        let end = self.len().wrapping_add(additional);
        let padding = end.wrapping_neg() & (align - 1);
        self.prepend_zeroed(padding);
    }

    /// Overwrites the bytes at `from_end` (a position counted from the end).
    fn patch(&mut self, from_end: usize, bytes: &[u8]) {
        let at = self.buf.len().saturating_sub(from_end);
        if let Some(place) = self.buf.get_mut(at..at + bytes.len()) {
            place.copy_from_slice(bytes);
        }
    }

    /// The bytes at `from_end`.
    fn bytes_at(&self, from_end: usize, len: usize) -> &[u8] {
        let at = self.buf.len().saturating_sub(from_end);
        self.buf.get(at..at + len).unwrap_or_default()
    }

    /// Checks that no table is open (strings, vectors and tables cannot nest in one).
    fn not_in_table(&mut self, what: &'static str) -> bool {
        if self.table.is_some() {
            self.misuse(what);
            return false;
        }
        true
    }

    /// Writes a string; call before the table that refers to it.
    pub fn create_string(&mut self, s: &str) -> Offset<kind::Str> {
        if !self.not_in_table("flatbuffer builder: string created inside a table") {
            return Offset::new(0);
        }
        let bytes = s.as_bytes();
        self.align(OFFSET_SIZE, bytes.len().saturating_add(1));
        self.prepend(&[0]);
        self.prepend(bytes);
        self.push_length(bytes.len())
    }

    /// Prepends a vector's `u32` length and returns the vector's offset.
    fn push_length<K>(&mut self, len: usize) -> Offset<K> {
        let Ok(len) = u32::try_from(len) else {
            self.too_big(FlatbufferBound::VectorLength, u32::MAX as usize);
            return Offset::new(0);
        };
        self.prepend(&len.to_le_bytes());
        Offset::new(self.len())
    }

    /// Writes a vector of scalars or structs; call before the table that refers to it.
    pub fn create_vector<T: Push>(&mut self, values: &[T]) -> Offset<kind::Vector> {
        if !self.not_in_table("flatbuffer builder: vector created inside a table") {
            return Offset::new(0);
        }
        let size = values.first().map_or(0, |v| v.to_le().as_ref().len());
        let Some(total) = size.checked_mul(values.len()) else {
            self.too_big(FlatbufferBound::BufferSize, MAX_SIZE);
            return Offset::new(0);
        };
        self.align(T::ALIGN.max(OFFSET_SIZE), total);
        let Some(at) = self.prepend_zeroed(total) else {
            return Offset::new(0);
        };
        if let Some(room) = self.buf.get_mut(at..at + total) {
            for (slot, value) in room.chunks_exact_mut(size.max(1)).zip(values) {
                slot.copy_from_slice(value.to_le().as_ref());
            }
        }
        self.push_length(values.len())
    }

    /// Writes a vector of tables or strings; call before the table that refers to it.
    pub fn create_vector_of_offsets<K>(&mut self, targets: &[Offset<K>]) -> Offset<kind::Vector> {
        if !self.not_in_table("flatbuffer builder: vector created inside a table") {
            return Offset::new(0);
        }
        let Some(total) = targets.len().checked_mul(OFFSET_SIZE) else {
            self.too_big(FlatbufferBound::BufferSize, MAX_SIZE);
            return Offset::new(0);
        };
        self.align(OFFSET_SIZE, total);
        for target in targets.iter().rev() {
            self.push_uoffset(target.from_end);
        }
        self.push_length(targets.len())
    }

    /// Writes strings, then the vector of them.
    #[cfg(test)]
    pub fn create_vector_of_strings(&mut self, strings: &[&str]) -> Offset<kind::Vector> {
        let offsets: Vec<Offset<kind::Str>> =
            strings.iter().map(|s| self.create_string(s)).collect();
        self.create_vector_of_offsets(&offsets)
    }

    /// Prepends a `uoffset` to `target` (the position must already be 4-aligned).
    fn push_uoffset(&mut self, target: u32) {
        // The offset is relative to its own position: (used after it) - target, both from the end.
        let here = self.len().saturating_add(OFFSET_SIZE);
        match here
            .checked_sub(target as usize)
            .filter(|d| *d >= OFFSET_SIZE)
            .and_then(|d| u32::try_from(d).ok())
        {
            Some(delta) => self.prepend(&delta.to_le_bytes()),
            None => self.misuse("flatbuffer builder: offset to an object not yet written"),
        }
    }

    /// Starts a table; add its fields, then [`end_table`](Self::end_table).
    pub fn start_table(&mut self) {
        if !self.not_in_table("flatbuffer builder: table started inside a table") {
            return;
        }
        self.table = Some(OpenTable {
            start: self.len(),
            fields: Vec::new(),
        });
    }

    /// Records that the value just prepended is field `slot` of the open table.
    fn field_written(&mut self, slot: u16) {
        let at = self.len();
        match &mut self.table {
            Some(table) => table.fields.push((slot, at)),
            None => self.misuse("flatbuffer builder: field added outside a table"),
        }
    }

    /// Adds scalar field `slot` to the open table.
    pub fn add_scalar<T: Push>(&mut self, slot: u16, value: T) {
        if self.table.is_none() {
            self.misuse("flatbuffer builder: field added outside a table");
            return;
        }
        let bytes = value.to_le();
        self.align(T::ALIGN, 0);
        self.prepend(bytes.as_ref());
        self.field_written(slot);
    }

    /// Adds scalar field `slot` unless it equals `default` (which readers return when absent).
    #[cfg(test)]
    pub fn add_scalar_default<T: Push + PartialEq>(&mut self, slot: u16, value: T, default: T) {
        if value != default {
            self.add_scalar(slot, value);
        }
    }

    /// Adds field `slot` of the open table: an offset to a string, vector or table written before.
    pub fn add_offset<K>(&mut self, slot: u16, target: Offset<K>) {
        if self.table.is_none() {
            self.misuse("flatbuffer builder: field added outside a table");
            return;
        }
        self.align(OFFSET_SIZE, 0);
        self.push_uoffset(target.from_end);
        self.field_written(slot);
    }

    /// Adds a union: its `u8` tag in `type_slot` and its table in `value_slot`.
    pub fn add_union(
        &mut self,
        type_slot: u16,
        value_slot: u16,
        tag: u8,
        value: Offset<kind::Table>,
    ) {
        self.add_scalar(type_slot, tag);
        self.add_offset(value_slot, value);
    }

    /// Ends the open table: writes its `soffset` and its vtable (or points at an equal one).
    pub fn end_table(&mut self) -> Offset<kind::Table> {
        let Some(table) = self.table.take() else {
            self.misuse("flatbuffer builder: end_table without start_table");
            return Offset::new(0);
        };
        // The soffset, patched once the vtable's position is known.
        self.align(OFFSET_SIZE, 0);
        self.prepend(&[0; OFFSET_SIZE]);
        let table_at = self.len();
        let slots = table
            .fields
            .iter()
            .map(|(slot, _)| usize::from(*slot) + 1)
            .max()
            .unwrap_or(0);
        let vtable_len = VTABLE_HEADER + 2 * slots;
        let inline_len = table_at.saturating_sub(table.start);
        let (Ok(vtable_len16), Ok(inline_len16)) =
            (u16::try_from(vtable_len), u16::try_from(inline_len))
        else {
            self.too_big(FlatbufferBound::TableSize, u16::MAX as usize);
            return Offset::new(0);
        };
        let mut vtable = vec![0u8; vtable_len];
        for (i, v) in [vtable_len16, inline_len16].into_iter().enumerate() {
            if let Some(place) = vtable.get_mut(2 * i..2 * i + 2) {
                place.copy_from_slice(&v.to_le_bytes());
            }
        }
        for (slot, at) in &table.fields {
            // A field's offset is counted from the table's start (its soffset).
            let offset = u16::try_from(table_at.saturating_sub(*at)).unwrap_or(0);
            let entry = VTABLE_HEADER + 2 * usize::from(*slot);
            if let Some(place) = vtable.get_mut(entry..entry + 2) {
                place.copy_from_slice(&offset.to_le_bytes());
            }
        }
        let same = |&&at: &&usize| self.bytes_at(at, vtable_len) == vtable;
        let shared = self.vtables.iter().filter(|_| self.dedup).find(same);
        let vtable_at = match shared {
            Some(&at) => at,
            None => {
                // The table's soffset is 4-aligned and vtables have an even size: no padding.
                self.prepend(&vtable);
                let at = self.len();
                self.vtables.push(at);
                at
            }
        };
        // The reader finds the vtable at `table - soffset`; from the end that is this difference.
        let soffset = i32::try_from(vtable_at as i64 - table_at as i64).unwrap_or(0);
        self.patch(table_at, &soffset.to_le_bytes());
        Offset::new(table_at)
    }

    /// Finishes the buffer with `root` as its root table; returns the flatbuffer, or the first
    /// error the builder met.
    pub fn finish(mut self, root: Offset<kind::Table>) -> FormatResult<Vec<u8>> {
        if self.table.is_some() {
            self.misuse("flatbuffer builder: finished with a table still open");
        }
        if root.from_end == 0 {
            self.misuse("flatbuffer builder: finished without a root table");
        }
        let align = self.min_align.max(OFFSET_SIZE);
        self.align(align, OFFSET_SIZE);
        self.push_uoffset(root.from_end);
        if let Some(error) = self.error {
            return Err(error);
        }
        self.buf.drain(..self.head);
        Ok(self.buf)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;
    use crate::flatbuffer::tests::{field_pos, follow_at};
    use crate::flatbuffer::{Element, Table};
    use crate::format::{Block, Buffer, FieldNode, block, buffer, node};
    use proptest::prelude::*;
    use std::string::String;
    use std::vec::Vec;

    #[test]
    fn every_kind_of_field_reads_back() {
        let mut b = Builder::new();
        let name = b.create_string("héllo");
        let ints = b.create_vector(&[1i32, -2, 3]);
        let longs = b.create_vector(&[i64::MIN, 0, i64::MAX]);
        let bytes = b.create_vector::<u8>(&[7, 8, 9, 10, 11]);
        let nodes = b.create_vector(&[node(5, 1), node(6, 0)]);
        // A table holding `x` in slot 0.
        let child = |b: &mut Builder, x: i64| {
            b.start_table();
            b.add_scalar(0, x);
            b.end_table()
        };
        let children: Vec<_> = [1, 2, 3].map(|x| child(&mut b, x)).into();
        let children = b.create_vector_of_offsets(&children);
        let strings = b.create_vector_of_strings(&["a", "", "bcd"]);
        let union_value = child(&mut b, 99);
        let sub = child(&mut b, 11);

        b.start_table();
        b.add_scalar(0, 200u8);
        b.add_scalar(1, -5i8);
        b.add_scalar(2, true);
        b.add_scalar(3, -300i16);
        b.add_scalar(4, 60000u16);
        b.add_scalar(5, -70000i32);
        b.add_scalar(6, -5_000_000_000i64);
        b.add_offset(7, name);
        b.add_offset(8, sub);
        b.add_offset(9, ints);
        b.add_offset(10, longs);
        b.add_offset(11, children);
        b.add_union(12, 13, 2, union_value);
        b.add_offset(14, nodes);
        b.add_offset(15, strings);
        b.add_offset(16, bytes);
        b.add_scalar_default(17, 0i32, 0);
        let root = b.end_table();
        let buf = b.finish(root).unwrap();
        assert_eq!(buf.len() % 8, 0);

        let t = Table::root(&buf, "Root").unwrap();
        crate::flatbuffer::tests::assert_reads_every_kind_of_field(&t);
        let v = t.vector::<FieldNode>(14, "m").unwrap().unwrap();
        assert_eq!(v.get(1), Some(node(6, 0)));
        let strings = t.tables(15, "n").unwrap().unwrap();
        assert_eq!(strings.len(), 3);
        let v = t.vector::<u8>(16, "o").unwrap().unwrap();
        assert_eq!(v.as_bytes(), &[7, 8, 9, 10, 11]);
        // A default value is left out, so it reads back as the default.
        assert_eq!(t.scalar(17, 42i32, "p").unwrap(), 42);
    }

    #[test]
    fn scalars_and_structs_are_aligned() {
        let mut b = Builder::new();
        let written = block(8, 100, 64);
        let blocks = b.create_vector(&[written]);
        let odd = b.create_string("odd");
        b.start_table();
        b.add_scalar(0, 1u8);
        b.add_scalar(1, 2i64);
        b.add_scalar(2, 3u8);
        b.add_scalar(3, 4i32);
        b.add_offset(4, blocks);
        b.add_offset(5, odd);
        let root = b.end_table();
        let buf = b.finish(root).unwrap();
        let t = Table::root(&buf, "Root").unwrap();
        assert_eq!(t.offset() % 4, 0);
        assert_eq!(t.scalar(1, 0i64, "x").unwrap(), 2);
        // Find the i64 field's position through the vtable: it must be 8-aligned.
        assert_eq!(field_pos(&buf, &t, 1) % 8, 0);
        assert_eq!(field_pos(&buf, &t, 3) % 4, 0);
        let blocks_at = follow_at(&buf, field_pos(&buf, &t, 4));
        assert_eq!((blocks_at + 4) % 8, 0, "struct elements are 8-aligned");
        let block = t.vector::<Block>(4, "b").unwrap().unwrap().get(0).unwrap();
        assert_eq!(block, written);
        // The padding inside a block is zero.
        assert_eq!(&buf[blocks_at + 4 + 12..blocks_at + 4 + 16], &[0; 4]);
    }

    fn two_similar_tables(dedup: bool) -> Vec<u8> {
        let mut b = Builder::new().with_vtable_dedup(dedup);
        let mut tables = Vec::new();
        for i in 0..2i32 {
            b.start_table();
            b.add_scalar(0, i);
            b.add_scalar(1, true);
            tables.push(b.end_table());
        }
        let v = b.create_vector_of_offsets(&tables);
        finish_with_vector(b, v)
    }

    /// Finishes `b` with a root table holding vector `v` in slot 0.
    fn finish_with_vector(mut b: Builder, v: Offset<kind::Vector>) -> Vec<u8> {
        b.start_table();
        b.add_offset(0, v);
        let root = b.end_table();
        b.finish(root).unwrap()
    }

    #[test]
    fn equal_vtables_are_shared() {
        let shared = two_similar_tables(true);
        let separate = two_similar_tables(false);
        assert!(shared.len() < separate.len());
        for buf in [&shared, &separate] {
            let t = Table::root(buf, "Root").unwrap();
            let ts = t.tables(0, "t").unwrap().unwrap();
            for (i, table) in ts.iter().enumerate() {
                let table = table.unwrap();
                assert_eq!(table.scalar(0, -1i32, "x").unwrap(), i as i32);
                assert!(table.scalar(1, false, "y").unwrap());
            }
        }
    }

    #[test]
    fn empty_table_and_empty_vectors() {
        let mut b = Builder::new();
        let empty = b.create_vector::<i64>(&[]);
        let no_tables = b.create_vector_of_offsets::<kind::Table>(&[]);
        let blank = b.create_string("");
        b.start_table();
        let inner = b.end_table();
        b.start_table();
        b.add_offset(0, empty);
        b.add_offset(1, no_tables);
        b.add_offset(2, blank);
        b.add_offset(3, inner);
        let root = b.end_table();
        let buf = b.finish(root).unwrap();
        let t = Table::root(&buf, "Root").unwrap();
        assert!(t.vector::<i64>(0, "a").unwrap().unwrap().is_empty());
        assert!(t.tables(1, "b").unwrap().unwrap().is_empty());
        assert_eq!(t.str(2, "c").unwrap(), Some(""));
        assert!(t.table(3, "d").unwrap().is_some());
    }

    #[test]
    fn misuse_is_reported_by_finish() {
        let mut b = Builder::new();
        b.start_table();
        b.create_string("no strings inside a table");
        let root = b.end_table();
        assert!(b.error().is_some());
        let e = b.finish(root).unwrap_err();
        assert!(
            matches!(e.kind, FormatErrorKind::Unsupported { .. }),
            "{e:?}"
        );

        let mut b = Builder::new();
        b.add_scalar(0, 1u8);
        b.start_table();
        let root = b.end_table();
        assert!(b.finish(root).is_err());

        let mut b = Builder::new();
        b.start_table();
        b.start_table();
        let root = b.end_table();
        assert!(b.finish(root).is_err());

        let mut b = Builder::new();
        b.start_table();
        let root = b.end_table();
        b.start_table();
        assert!(b.finish(root).is_err(), "a table left open");

        let b = Builder::new();
        assert!(b.finish(Offset::new(0)).is_err(), "no root written");
    }

    #[test]
    fn growing_keeps_earlier_objects() {
        let mut b = Builder::with_capacity(0);
        let mut strings = Vec::new();
        for i in 0..500 {
            strings.push(b.create_string(&std::format!("string number {i}")));
        }
        let v = b.create_vector_of_offsets(&strings);
        let buf = finish_with_vector(b, v);
        let t = Table::root(&buf, "Root").unwrap();
        let ts = t.tables(0, "s").unwrap().unwrap();
        assert_eq!(ts.len(), 500);
        // A vector of strings reads as a vector of offsets; follow them by hand.
        assert_eq!(read_strings(&buf, 0).len(), 500);
        assert_eq!(read_strings(&buf, 0)[499], "string number 499");
    }

    /// The strings of vector field `slot` of the root table.
    fn read_strings(buf: &[u8], slot: usize) -> Vec<String> {
        let t = Table::root(buf, "Root").unwrap();
        let vector = follow_at(buf, field_pos(buf, &t, slot));
        let n = u32::from_le_bytes(buf[vector..vector + 4].try_into().unwrap()) as usize;
        (0..n)
            .map(|i| {
                let s = follow_at(buf, vector + 4 + 4 * i);
                let len = u32::from_le_bytes(buf[s..s + 4].try_into().unwrap()) as usize;
                assert_eq!(buf[s + 4 + len], 0, "terminating zero");
                String::from_utf8(buf[s + 4..s + 4 + len].to_vec()).unwrap()
            })
            .collect()
    }

    #[derive(Debug, Clone)]
    enum Field {
        U8(u8),
        I16(i16),
        I32(i32),
        I64(i64),
        Str(String),
        I64s(Vec<i64>),
    }

    fn field() -> impl Strategy<Value = Field> {
        prop_oneof![
            any::<u8>().prop_map(Field::U8),
            any::<i16>().prop_map(Field::I16),
            any::<i32>().prop_map(Field::I32),
            any::<i64>().prop_map(Field::I64),
            ".{0,12}".prop_map(Field::Str),
            proptest::collection::vec(any::<i64>(), 0..5).prop_map(Field::I64s),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(128))]

        /// Tables of random fields, in random slots, each a child of the root: all read back.
        #[test]
        fn random_tables_read_back(
            tables in proptest::collection::vec(
                proptest::collection::btree_map(0u16..12, field(), 0..8), 1..6),
            dedup in any::<bool>(),
        ) {
            let mut b = Builder::with_capacity(16).with_vtable_dedup(dedup);
            let mut offsets = Vec::new();
            for fields in &tables {
                let targets: Vec<_> = fields.values().map(|f| match f {
                    Field::Str(s) => Some(b.create_string(s).end_distance()),
                    Field::I64s(v) => Some(b.create_vector(v).end_distance()),
                    _ => None,
                }).collect();
                b.start_table();
                for ((slot, f), target) in fields.iter().zip(&targets) {
                    match f {
                        Field::U8(v) => b.add_scalar(*slot, *v),
                        Field::I16(v) => b.add_scalar(*slot, *v),
                        Field::I32(v) => b.add_scalar(*slot, *v),
                        Field::I64(v) => b.add_scalar(*slot, *v),
                        Field::Str(_) | Field::I64s(_) => {
                            b.add_offset(*slot, Offset::<kind::Str>::new(target.unwrap() as usize))
                        }
                    }
                }
                offsets.push(b.end_table());
            }
            let v = b.create_vector_of_offsets(&offsets);
            let buf = finish_with_vector(b, v);
            let t = Table::root(&buf, "Root").unwrap();
            let ts = t.tables(0, "t").unwrap().unwrap();
            prop_assert_eq!(ts.len(), tables.len());
            for (fields, table) in tables.iter().zip(ts.iter()) {
                let table = table.unwrap();
                for slot in 0..12u16 {
                    match fields.get(&slot) {
                        None => prop_assert_eq!(table.scalar(slot, -7i8, "x").unwrap(), -7),
                        Some(Field::U8(v)) => prop_assert_eq!(table.scalar(slot, 0u8, "x").unwrap(), *v),
                        Some(Field::I16(v)) => prop_assert_eq!(table.scalar(slot, 0i16, "x").unwrap(), *v),
                        Some(Field::I32(v)) => prop_assert_eq!(table.scalar(slot, 0i32, "x").unwrap(), *v),
                        Some(Field::I64(v)) => prop_assert_eq!(table.scalar(slot, 0i64, "x").unwrap(), *v),
                        Some(Field::Str(s)) => {
                            prop_assert_eq!(table.str(slot, "x").unwrap(), Some(s.as_str()))
                        }
                        Some(Field::I64s(v)) => {
                            let read = table.vector::<i64>(slot, "x").unwrap().unwrap();
                            prop_assert_eq!(&read.iter().collect::<Vec<_>>(), v)
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn struct_elements_round_trip_through_element() {
        for value in [buffer(0, 10), buffer(64, 0)] {
            assert_eq!(Buffer::from_le_slice(&value.to_le()), Some(value));
        }
        let block = block(-1, i32::MIN, i64::MAX);
        assert_eq!(Block::from_le_slice(&block.to_le()), Some(block));
    }
}
