//! A small, safe, zero-copy flatbuffer reader.
//!
//! It uses the errors and nothing else of the crate.
//!
//! Bytes enter as a `&[u8]` holding one flatbuffer (for Arrow: a `Message` or a `Footer`);
//! [`Table::root`] checks the root table and its vtable, and the field accessors hand out
//! scalars, strings, sub-tables and vectors borrowed from those bytes. Nothing is copied or
//! allocated, and nothing panics: every offset read from the buffer is checked before it is
//! followed, and every failure is a [`FormatError`] of kind
//! [`Flatbuffer { what }`](FormatErrorKind::Flatbuffer) (with `what` naming the table and field
//! being read, e.g. `"Field.children"`), located at a byte offset relative to the buffer.
//!
//! Checks, in the order they happen:
//! - a table's `soffset` and the vtable it points to lie inside the buffer; the vtable's size is
//!   even and at least 4; the table's inline size is at least 4 and lies inside the buffer;
//! - a field's inline bytes lie inside the table's inline size (so inside the buffer);
//! - a vector's `length * element size` (checked arithmetic) lies inside the buffer, so reading
//!   a scalar or struct element afterwards cannot fail; table elements follow an offset and are
//!   checked when read;
//! - a string's bytes lie inside the buffer and are valid UTF-8;
//! - tables nest at most [`MAX_DEPTH`] deep.
//!
//! Alignment is not checked: values are read with `from_le_bytes`, which does not care.
//!
//! The depth limit bounds recursion in callers that walk nested tables (e.g. `Field.children`),
//! but a flatbuffer is a DAG: many offsets may point at the same table, so a walk of a small
//! buffer can still visit exponentially many tables. Callers that walk recursively must also
//! budget the number of tables they visit.

use crate::error::{FlatbufferBound, FormatError, FormatErrorKind, FormatResult};
use core::fmt;
use core::marker::PhantomData;

/// How deep tables may nest below the root (the root has depth 0).
pub const MAX_DEPTH: u32 = 64;

/// Size of a `uoffset` (offset to a table, vector or string), a vector length or an `soffset`.
const OFFSET_SIZE: usize = 4;

/// Bytes at the start of a vtable: its own size and the table's inline size, both `u16`.
const VTABLE_HEADER: usize = 4;

fn error(what: &'static str, offset: usize) -> FormatError {
    FormatError::new(FormatErrorKind::Flatbuffer { what }).at(offset as u64)
}

/// The `len` bytes at `pos`, or `None` if they are not all inside `buf`.
fn bytes_at(buf: &[u8], pos: usize, len: usize) -> Option<&[u8]> {
    buf.get(pos..pos.checked_add(len)?)
}

/// The `N` bytes at `pos`, or an error at `pos` if they are not all inside `buf`.
fn array_at<const N: usize>(buf: &[u8], pos: usize, what: &'static str) -> FormatResult<[u8; N]> {
    bytes_at(buf, pos, N)
        .and_then(|bytes| bytes.try_into().ok())
        .ok_or_else(|| error(what, pos))
}

fn u16_at(buf: &[u8], pos: usize, what: &'static str) -> FormatResult<u16> {
    array_at(buf, pos, what).map(u16::from_le_bytes)
}

fn u32_at(buf: &[u8], pos: usize, what: &'static str) -> FormatResult<u32> {
    array_at(buf, pos, what).map(u32::from_le_bytes)
}

/// The `u32` count at `pos`, the position after it, and the `count * elem_size` bytes there (a
/// vector's elements or a string's bytes); an error at `pos` if they are not inside `buf`.
fn counted<'a>(
    buf: &'a [u8],
    pos: usize,
    elem_size: usize,
    what: &'static str,
) -> FormatResult<(usize, usize, &'a [u8])> {
    let len = usize::try_from(u32_at(buf, pos, what)?).map_err(|_| error(what, pos))?;
    let start = pos.saturating_add(OFFSET_SIZE);
    let bytes = len
        .checked_mul(elem_size)
        .and_then(|size| bytes_at(buf, start, size))
        .ok_or_else(|| error(what, pos))?;
    Ok((len, start, bytes))
}

/// Follows the `uoffset` stored at `pos` to the position it points at.
fn follow(buf: &[u8], pos: usize, what: &'static str) -> FormatResult<usize> {
    let offset = u32_at(buf, pos, what)?;
    usize::try_from(offset)
        .ok()
        .and_then(|offset| pos.checked_add(offset))
        .filter(|&target| target < buf.len())
        .ok_or_else(|| error(what, pos))
}

/// A value stored inline in a flatbuffer vector: a little-endian scalar or a fixed-size struct.
pub trait Element: Sized {
    /// Size of one element in bytes; must not be zero.
    const SIZE: usize;

    /// Decodes one element from exactly [`Self::SIZE`] bytes (`None` for any other length).
    fn from_le_slice(bytes: &[u8]) -> Option<Self>;
}

macro_rules! scalar_element {
    ($($t:ty),*) => {$(
        impl Element for $t {
            const SIZE: usize = core::mem::size_of::<$t>();

            fn from_le_slice(bytes: &[u8]) -> Option<Self> {
                bytes.try_into().ok().map(<$t>::from_le_bytes)
            }
        }
    )*};
}

scalar_element!(u8, i8, u16, i16, u32, i32, u64, i64);

impl Element for bool {
    const SIZE: usize = 1;

    fn from_le_slice(bytes: &[u8]) -> Option<Self> {
        u8::from_le_slice(bytes).map(|b| b != 0)
    }
}

/// A checked view of one flatbuffer table: its position, its vtable and its nesting depth.
///
/// Constructed only through [`Table::root`] and the accessors of another table, which check
/// that the table's `soffset`, vtable and inline bytes lie inside the buffer.
#[derive(Clone, Copy)]
pub struct Table<'a> {
    buf: &'a [u8],
    pos: usize,
    vtable: usize,
    vtable_len: usize,
    inline_len: usize,
    depth: u32,
}

impl<'a> Table<'a> {
    /// The root table of `buf`, found through the `uoffset` in its first four bytes.
    ///
    /// `what` names the root table (e.g. `"Message"`) in errors.
    pub fn root(buf: &'a [u8], what: &'static str) -> FormatResult<Self> {
        let pos = follow(buf, 0, what)?;
        Table::at(buf, pos, 0, what)
    }

    /// The table at `pos`, after checking its `soffset`, vtable and inline size.
    fn at(buf: &'a [u8], pos: usize, depth: u32, what: &'static str) -> FormatResult<Self> {
        if depth > MAX_DEPTH {
            return Err(FormatError::new(FormatErrorKind::FlatbufferLimit {
                what: FlatbufferBound::NestingDepth,
                limit: u64::from(MAX_DEPTH),
            })
            .at(pos as u64));
        }
        let soffset = i32::from_le_bytes(array_at(buf, pos, what)?);
        // The vtable lives at `pos - soffset`; a negative soffset puts it after the table.
        let vtable = i64::try_from(pos)
            .ok()
            .and_then(|p| p.checked_sub(i64::from(soffset)))
            .and_then(|v| usize::try_from(v).ok())
            .ok_or_else(|| error(what, pos))?;
        let vtable_len = usize::from(u16_at(buf, vtable, what)?);
        let inline_len = usize::from(u16_at(buf, vtable.saturating_add(2), what)?);
        let vtable_fits = bytes_at(buf, vtable, vtable_len).is_some();
        if vtable_len < VTABLE_HEADER || !vtable_len.is_multiple_of(2) || !vtable_fits {
            return Err(error(what, vtable));
        }
        if inline_len < OFFSET_SIZE || bytes_at(buf, pos, inline_len).is_none() {
            return Err(error(what, pos));
        }
        Ok(Table {
            buf,
            pos,
            vtable,
            vtable_len,
            inline_len,
            depth,
        })
    }

    /// The table's byte offset in the buffer.
    pub fn offset(&self) -> usize {
        self.pos
    }

    /// How deep this table is nested below the root (the root is 0).
    pub fn depth(&self) -> u32 {
        self.depth
    }

    /// The buffer this table was read from.
    pub fn buffer(&self) -> &'a [u8] {
        self.buf
    }

    /// The position of field `slot`'s `size` inline bytes, or `None` if the field is absent.
    ///
    /// Slot `n` is the `n`-th field in the `.fbs` declaration, counting a union as two fields
    /// (its type, then its value).
    fn field(&self, slot: u16, size: usize, what: &'static str) -> FormatResult<Option<usize>> {
        let entry = VTABLE_HEADER.saturating_add(usize::from(slot).saturating_mul(2));
        if entry.saturating_add(2) > self.vtable_len {
            // A vtable written by an older schema stops before this field: it is absent.
            return Ok(None);
        }
        let entry_pos = self.vtable.saturating_add(entry);
        let offset = usize::from(u16_at(self.buf, entry_pos, what)?);
        if offset == 0 {
            return Ok(None);
        }
        // Fields never overlap the table's own soffset, and end inside its inline bytes
        // (which `Table::at` checked are inside the buffer).
        if offset < OFFSET_SIZE || offset.saturating_add(size) > self.inline_len {
            return Err(error(what, entry_pos));
        }
        Ok(Some(self.pos.saturating_add(offset)))
    }

    /// The scalar in field `slot` (a `u8`, `i16`, `bool`, ...; a `bool` is true for any non-zero
    /// byte), or `default` if the field is absent.
    pub fn scalar<T: Element>(&self, slot: u16, default: T, what: &'static str) -> FormatResult<T> {
        match self.field(slot, T::SIZE, what)? {
            None => Ok(default),
            Some(pos) => bytes_at(self.buf, pos, T::SIZE)
                .and_then(T::from_le_slice)
                .ok_or_else(|| error(what, pos)),
        }
    }

    /// Where the `uoffset` in field `slot` points, or `None` if the field is absent.
    fn follow_field(&self, slot: u16, what: &'static str) -> FormatResult<Option<usize>> {
        let field = self.field(slot, OFFSET_SIZE, what)?;
        field.map(|pos| follow(self.buf, pos, what)).transpose()
    }

    /// The table in field `slot`, one level deeper than this one, or `None` if absent.
    pub fn table(&self, slot: u16, what: &'static str) -> FormatResult<Option<Table<'a>>> {
        let depth = self.depth.saturating_add(1);
        let target = self.follow_field(slot, what)?;
        target
            .map(|pos| Table::at(self.buf, pos, depth, what))
            .transpose()
    }

    /// The string in field `slot`, checked to be UTF-8, or `None` if absent.
    pub fn str(&self, slot: u16, what: &'static str) -> FormatResult<Option<&'a str>> {
        let Some(pos) = self.follow_field(slot, what)? else {
            return Ok(None);
        };
        let (_, start, bytes) = counted(self.buf, pos, 1, what)?;
        let utf8 = core::str::from_utf8(bytes);
        utf8.map(Some)
            .map_err(|e| error(what, start.saturating_add(e.valid_up_to())))
    }

    /// The union in fields `type_slot` (its `u8` tag) and `value_slot` (its table).
    ///
    /// Returns `None` when the tag is 0 (`NONE`) or the value table is absent; otherwise the
    /// tag and the table, one level deeper than this one.
    pub fn union(
        &self,
        type_slot: u16,
        value_slot: u16,
        what: &'static str,
    ) -> FormatResult<Option<(u8, Table<'a>)>> {
        let tag = self.scalar(type_slot, 0u8, what)?;
        if tag == 0 {
            return Ok(None);
        }
        Ok(self.table(value_slot, what)?.map(|table| (tag, table)))
    }

    /// The length, first element position and element bytes of the vector in field `slot`.
    fn vector_at(
        &self,
        slot: u16,
        elem_size: usize,
        what: &'static str,
    ) -> FormatResult<Option<(usize, usize, &'a [u8])>> {
        let target = self.follow_field(slot, what)?;
        target
            .map(|pos| counted(self.buf, pos, elem_size, what))
            .transpose()
    }

    /// The vector of scalars or structs in field `slot`, or `None` if absent.
    ///
    /// Its `length * T::SIZE` bytes are checked to lie inside the buffer, so reading elements
    /// afterwards cannot fail.
    pub fn vector<T: Element>(
        &self,
        slot: u16,
        what: &'static str,
    ) -> FormatResult<Option<Vector<'a, T>>> {
        if T::SIZE == 0 {
            return Err(error(what, self.pos));
        }
        Ok(self
            .vector_at(slot, T::SIZE, what)?
            .map(|(_, _, bytes)| Vector::new(bytes)))
    }

    /// The vector of tables in field `slot`, or `None` if absent.
    ///
    /// Its offsets are checked to lie inside the buffer; each table is checked when read, and
    /// is one level deeper than this one.
    pub fn tables(&self, slot: u16, what: &'static str) -> FormatResult<Option<Tables<'a>>> {
        let depth = self.depth.saturating_add(1);
        Ok(self
            .vector_at(slot, OFFSET_SIZE, what)?
            .map(|(len, start, _)| Tables {
                buf: self.buf,
                start,
                len,
                depth,
                what,
            }))
    }
}

impl fmt::Debug for Table<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Table")
            .field("offset", &self.pos)
            .field("depth", &self.depth)
            .finish_non_exhaustive()
    }
}

/// A checked vector of scalars or fixed-size structs; reading its elements cannot fail.
pub struct Vector<'a, T> {
    bytes: &'a [u8],
    _element: PhantomData<fn() -> T>,
}

impl<T> Clone for Vector<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for Vector<'_, T> {}

impl<T> PartialEq for Vector<'_, T> {
    /// Vectors are equal when their elements' bytes are.
    fn eq(&self, other: &Self) -> bool {
        self.bytes == other.bytes
    }
}

impl<T> Eq for Vector<'_, T> {}

impl<T: Element + fmt::Debug> fmt::Debug for Vector<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl<'a, T: Element> Vector<'a, T> {
    fn new(bytes: &'a [u8]) -> Self {
        Vector {
            bytes,
            _element: PhantomData,
        }
    }

    /// A vector with no elements (what an absent vector field reads as).
    pub fn empty() -> Self {
        Vector::new(&[])
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.bytes.len().checked_div(T::SIZE).unwrap_or(0)
    }

    /// Whether the vector has no elements.
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// Element `i`, or `None` if `i` is out of range.
    pub fn get(&self, i: usize) -> Option<T> {
        T::from_le_slice(bytes_at(self.bytes, i.checked_mul(T::SIZE)?, T::SIZE)?)
    }

    /// The elements in order.
    pub fn iter(&self) -> impl Iterator<Item = T> + 'a
    where
        T: 'a,
    {
        self.bytes
            .chunks_exact(T::SIZE.max(1))
            .map_while(T::from_le_slice)
    }

    /// The raw little-endian bytes of all elements.
    pub fn as_bytes(&self) -> &'a [u8] {
        self.bytes
    }
}

/// A checked vector of tables; each table is checked when it is read.
#[derive(Clone, Copy)]
pub struct Tables<'a> {
    buf: &'a [u8],
    start: usize,
    len: usize,
    depth: u32,
    what: &'static str,
}

impl fmt::Debug for Tables<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Tables")
            .field("what", &self.what)
            .field("offset", &self.start)
            .field("len", &self.len)
            .finish_non_exhaustive()
    }
}

impl<'a> Tables<'a> {
    /// A vector with no tables (what an absent vector field reads as).
    pub fn empty() -> Self {
        Tables {
            buf: &[],
            start: 0,
            len: 0,
            depth: 0,
            what: "",
        }
    }

    /// Number of tables.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the vector has no tables.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Table `i`, after checking it; an index out of range is an error too.
    pub fn get(&self, i: usize) -> FormatResult<Table<'a>> {
        // The offsets were checked to lie inside the buffer when the vector was read.
        let pos = i
            .checked_mul(OFFSET_SIZE)
            .and_then(|rel| self.start.checked_add(rel))
            .filter(|_| i < self.len)
            .ok_or_else(|| {
                FormatError::new(FormatErrorKind::InvalidValue {
                    what: self.what,
                    value: i64::try_from(i).unwrap_or(i64::MAX),
                })
                .at(self.start as u64)
            })?;
        let target = follow(self.buf, pos, self.what)?;
        Table::at(self.buf, target, self.depth, self.what)
    }

    /// The tables in order, each checked as it is read.
    pub fn iter(&self) -> impl Iterator<Item = FormatResult<Table<'a>>> + 'a {
        let tables = *self;
        (0..tables.len).map(move |i| tables.get(i))
    }
}

/// A test-only flatbuffer builder: lays out a tree of tables front to back.
#[cfg(test)]
pub(crate) mod builder {
    use std::vec::Vec;

    /// A field value.
    pub(crate) enum Value {
        U8(u8),
        I8(i8),
        Bool(bool),
        I16(i16),
        U16(u16),
        I32(i32),
        I64(i64),
        Table(Obj),
        /// A string; the bytes need not be UTF-8.
        Str(Vec<u8>),
        Tables(Vec<Obj>),
        /// A vector of `elem_size`-byte elements, given as their raw bytes.
        Vector {
            elem_size: usize,
            bytes: Vec<u8>,
        },
    }

    /// A table: its fields by vtable slot.
    pub(crate) struct Obj(pub(crate) Vec<(u16, Value)>);

    impl Obj {
        pub(crate) fn new() -> Self {
            Obj(Vec::new())
        }

        pub(crate) fn with(mut self, slot: u16, value: Value) -> Self {
            self.0.push((slot, value));
            self
        }

        pub(crate) fn str(self, slot: u16, s: &str) -> Self {
            self.with(slot, Value::Str(s.as_bytes().into()))
        }

        pub(crate) fn table(self, slot: u16, t: Obj) -> Self {
            self.with(slot, Value::Table(t))
        }

        pub(crate) fn tables(self, slot: u16, ts: Vec<Obj>) -> Self {
            self.with(slot, Value::Tables(ts))
        }

        /// A vector of `elem_size`-byte elements, given as their raw bytes.
        pub(crate) fn vector(self, slot: u16, elem_size: usize, bytes: Vec<u8>) -> Self {
            self.with(slot, Value::Vector { elem_size, bytes })
        }

        pub(crate) fn i32s(self, slot: u16, values: &[i32]) -> Self {
            let bytes = values.iter().flat_map(|v| v.to_le_bytes());
            self.vector(slot, 4, bytes.collect())
        }

        pub(crate) fn i64s(self, slot: u16, values: &[i64]) -> Self {
            let bytes = values.iter().flat_map(|v| v.to_le_bytes());
            self.vector(slot, 8, bytes.collect())
        }
    }

    fn pad(out: &mut Vec<u8>, align: usize) {
        while !out.len().is_multiple_of(align) {
            out.push(0);
        }
    }

    fn put_u16(out: &mut [u8], pos: usize, v: u16) {
        out[pos..pos + 2].copy_from_slice(&v.to_le_bytes());
    }

    fn put_u32(out: &mut [u8], pos: usize, v: u32) {
        out[pos..pos + 4].copy_from_slice(&v.to_le_bytes());
    }

    fn write_table(out: &mut Vec<u8>, obj: &Obj) -> usize {
        let slots = obj.0.iter().map(|(s, _)| usize::from(*s) + 1).max();
        pad(out, 2);
        let vtable = out.len();
        let vtable_len = 4 + 2 * slots.unwrap_or(0);
        out.resize(vtable + vtable_len, 0);
        pad(out, 8);
        let table = out.len();
        out.extend_from_slice(&((table - vtable) as i32).to_le_bytes());
        let mut patches = Vec::new();
        for (slot, value) in &obj.0 {
            let bytes: Vec<u8> = match value {
                Value::U8(v) => v.to_le_bytes().into(),
                Value::I8(v) => v.to_le_bytes().into(),
                Value::Bool(v) => [u8::from(*v)].into(),
                Value::I16(v) => v.to_le_bytes().into(),
                Value::U16(v) => v.to_le_bytes().into(),
                Value::I32(v) => v.to_le_bytes().into(),
                Value::I64(v) => v.to_le_bytes().into(),
                _ => [0; 4].into(),
            };
            pad(out, bytes.len());
            let pos = out.len();
            put_u16(
                out,
                vtable + 4 + 2 * usize::from(*slot),
                (pos - table) as u16,
            );
            out.extend_from_slice(&bytes);
            patches.push((pos, value));
        }
        let inline_len = out.len() - table;
        put_u16(out, vtable, vtable_len as u16);
        put_u16(out, vtable + 2, inline_len as u16);
        for (pos, value) in patches {
            if let Some(target) = write_child(out, value) {
                put_u32(out, pos, (target - pos) as u32);
            }
        }
        table
    }

    fn write_child(out: &mut Vec<u8>, value: &Value) -> Option<usize> {
        Some(match value {
            Value::Table(obj) => write_table(out, obj),
            Value::Str(bytes) => {
                pad(out, 4);
                let pos = out.len();
                out.extend_from_slice(&(bytes.len() as u32).to_le_bytes());
                out.extend_from_slice(bytes);
                out.push(0);
                pos
            }
            Value::Tables(objs) => {
                pad(out, 4);
                let pos = out.len();
                out.extend_from_slice(&(objs.len() as u32).to_le_bytes());
                out.resize(pos + 4 + 4 * objs.len(), 0);
                for (i, obj) in objs.iter().enumerate() {
                    let target = write_table(out, obj);
                    let at = pos + 4 + 4 * i;
                    put_u32(out, at, (target - at) as u32);
                }
                pos
            }
            Value::Vector { elem_size, bytes } => {
                pad(out, 8);
                out.extend_from_slice(&[0; 4]);
                let pos = out.len();
                out.extend_from_slice(&((bytes.len() / elem_size) as u32).to_le_bytes());
                out.extend_from_slice(bytes);
                pos
            }
            _ => return None,
        })
    }

    /// The flatbuffer whose root table is `root`.
    pub(crate) fn finish(root: &Obj) -> Vec<u8> {
        let mut out = std::vec![0; 4];
        let table = write_table(&mut out, root);
        put_u32(&mut out, 0, table as u32);
        pad(&mut out, 8);
        out
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
pub(crate) mod tests {
    use super::builder::{Obj, Value, finish};
    use super::*;
    use std::vec;
    use std::vec::Vec;

    fn assert_fb_error<T: core::fmt::Debug>(r: FormatResult<T>, what: &str) -> FormatError {
        let e = r.expect_err("expected an error");
        match &e.kind {
            FormatErrorKind::Flatbuffer { what: w } => assert_eq!(*w, what, "{e:?}"),
            other => panic!("expected a Flatbuffer error, got {other:?}"),
        }
        assert!(e.offset().is_some(), "error has no offset: {e:?}");
        e
    }

    /// Root offset 12; vtable at 4 (size 8, inline 8, slot 0 at +4, slot 1 absent);
    /// table at 12 (soffset 8) holding i32 42 at 16.
    const MINIMAL: [u8; 20] = [
        12, 0, 0, 0, // root uoffset
        8, 0, 8, 0, 4, 0, 0, 0, // vtable
        8, 0, 0, 0, // soffset: vtable = 12 - 8
        42, 0, 0, 0, // slot 0
    ];

    #[test]
    fn hand_assembled_table() {
        let t = Table::root(&MINIMAL, "Root").unwrap();
        assert_eq!(t.offset(), 12);
        assert_eq!(t.depth(), 0);
        assert_eq!(t.scalar(0, 7i32, "Root.a").unwrap(), 42);
        // Slot 1 is in the vtable but absent; slot 5 is past the vtable's end.
        assert_eq!(t.scalar(1, 7i32, "Root.b").unwrap(), 7);
        assert_eq!(t.scalar(5, -3i64, "Root.f").unwrap(), -3);
        assert_eq!(t.table(1, "Root.b").unwrap().map(|t| t.offset()), None);
        assert_eq!(t.str(5, "Root.f").unwrap(), None);
        assert!(t.vector::<i32>(1, "Root.b").unwrap().is_none());
        assert!(t.tables(5, "Root.f").unwrap().is_none());
        assert!(t.union(1, 5, "Root.u").unwrap().is_none());
    }

    #[test]
    fn vtable_after_table() {
        // Root offset 4; table at 4 with soffset -8 (vtable at 12); i16 field at +4.
        let buf = [
            4, 0, 0, 0, // root
            0xF8, 0xFF, 0xFF, 0xFF, // soffset -8
            0x34, 0x12, 0, 0, // slot 0: i16 0x1234, then padding
            6, 0, 8, 0, 4, 0, // vtable: size 6, inline 8, slot 0 at +4
        ];
        let t = Table::root(&buf, "Root").unwrap();
        assert_eq!(t.scalar(0, 0i16, "Root.a").unwrap(), 0x1234);
        assert_eq!(t.scalar(0, 0u16, "Root.a").unwrap(), 0x1234);
    }

    /// Checks slots 0 to 13 of a root table written by both builders' tests: every scalar type,
    /// a string, a table, `i32` and `i64` vectors, a vector of tables and a union.
    pub(crate) fn assert_reads_every_kind_of_field(t: &Table<'_>) {
        assert_eq!(t.scalar(0, 0u8, "a").unwrap(), 200);
        assert_eq!(t.scalar(1, 0i8, "b").unwrap(), -5);
        assert!(t.scalar(2, false, "c").unwrap());
        assert_eq!(t.scalar(3, 0i16, "d").unwrap(), -300);
        assert_eq!(t.scalar(4, 0u16, "e").unwrap(), 60000);
        assert_eq!(t.scalar(5, 0i32, "f").unwrap(), -70000);
        assert_eq!(t.scalar(6, 0i64, "g").unwrap(), -5_000_000_000);
        assert_eq!(t.str(7, "h").unwrap(), Some("héllo"));
        let sub = t.table(8, "i").unwrap().unwrap();
        assert_eq!(sub.depth(), 1);
        assert_eq!(sub.scalar(0, 0i64, "i.x").unwrap(), 11);

        let v = t.vector::<i32>(9, "j").unwrap().unwrap();
        assert_eq!(v.len(), 3);
        assert!(!v.is_empty());
        assert_eq!(v.get(1), Some(-2));
        assert_eq!(v.get(3), None);
        assert_eq!(v.iter().collect::<Vec<_>>(), [1, -2, 3]);
        let v = t.vector::<i64>(10, "k").unwrap().unwrap();
        assert_eq!(v.iter().collect::<Vec<_>>(), [i64::MIN, 0, i64::MAX]);

        let ts = t.tables(11, "l").unwrap().unwrap();
        assert_eq!(ts.len(), 3);
        let xs: Vec<i64> = ts
            .iter()
            .map(|t| {
                let t = t.unwrap();
                assert_eq!(t.depth(), 1);
                t.scalar(0, 0i64, "l.x").unwrap()
            })
            .collect();
        assert_eq!(xs, [1, 2, 3]);
        assert!(matches!(
            ts.get(3).unwrap_err().kind,
            FormatErrorKind::InvalidValue {
                what: "l",
                value: 3
            }
        ));

        let (tag, value) = t.union(12, 13, "u").unwrap().unwrap();
        assert_eq!(tag, 2);
        assert_eq!(value.scalar(0, 0i64, "u.x").unwrap(), 99);
    }

    #[test]
    fn built_table_reads_every_kind_of_field() {
        let child = |n: i64| Obj::new().with(0, Value::I64(n));
        let root = Obj::new()
            .with(0, Value::U8(200))
            .with(1, Value::I8(-5))
            .with(2, Value::Bool(true))
            .with(3, Value::I16(-300))
            .with(4, Value::U16(60000))
            .with(5, Value::I32(-70000))
            .with(6, Value::I64(-5_000_000_000))
            .str(7, "héllo")
            .table(8, child(11))
            .i32s(9, &[1, -2, 3])
            .i64s(10, &[i64::MIN, 0, i64::MAX])
            .tables(11, vec![child(1), child(2), child(3)])
            .with(12, Value::U8(2))
            .table(13, child(99))
            .vector(14, 16, (0u8..32).collect());
        let buf = finish(&root);
        let t = Table::root(&buf, "Root").unwrap();
        assert_reads_every_kind_of_field(&t);

        // A struct vector: two 16-byte elements.
        #[derive(Debug, PartialEq)]
        struct Pair(u64, u64);
        impl Element for Pair {
            const SIZE: usize = 16;
            fn from_le_slice(bytes: &[u8]) -> Option<Self> {
                let (a, b) = bytes.split_at_checked(8)?;
                Some(Pair(u64::from_le_slice(a)?, u64::from_le_slice(b)?))
            }
        }
        let v = t.vector::<Pair>(14, "m").unwrap().unwrap();
        assert_eq!(v.len(), 2);
        let le = |first: u8| u64::from_le_bytes(core::array::from_fn(|i| first + i as u8));
        assert_eq!(v.get(1), Some(Pair(le(16), le(24))));
        assert_eq!(v.iter().count(), 2);
    }

    #[test]
    fn empty_vectors() {
        let v = Vector::<i64>::empty();
        assert_eq!(v.len(), 0);
        assert!(v.is_empty());
        assert_eq!(v.get(0), None);
        assert_eq!(v.iter().count(), 0);
        let ts = Tables::empty();
        assert!(ts.is_empty());
        assert!(ts.get(0).is_err());
        assert_eq!(ts.iter().count(), 0);

        let buf = finish(&Obj::new().i32s(0, &[]).tables(1, vec![]));
        let t = Table::root(&buf, "Root").unwrap();
        assert!(t.vector::<i32>(0, "a").unwrap().unwrap().is_empty());
        assert!(t.tables(1, "b").unwrap().unwrap().is_empty());
    }

    #[test]
    fn short_or_out_of_bounds_root() {
        for len in 0..MINIMAL.len() {
            assert_fb_error(Table::root(&MINIMAL[..len], "Root"), "Root");
        }
        let mut buf = MINIMAL;
        buf[0] = 200; // root offset past the end
        let e = assert_fb_error(Table::root(&buf, "Root"), "Root");
        assert_eq!(e.offset(), Some(0));
        buf[..4].copy_from_slice(&u32::MAX.to_le_bytes());
        assert_fb_error(Table::root(&buf, "Root"), "Root");
    }

    #[test]
    fn bad_soffset() {
        let mut buf = MINIMAL;
        // A vtable before the start of the buffer, past its end, and extreme values.
        for s in [100, -100, i32::MIN, i32::MAX, -18, -17] {
            buf[12..16].copy_from_slice(&s.to_le_bytes());
            assert_fb_error(Table::root(&buf, "Root"), "Root");
        }
    }

    #[test]
    fn bad_vtable() {
        let cases: [(usize, u16); 6] = [
            (4, 0),    // vtable size 0
            (4, 2),    // vtable size too short for its header
            (4, 7),    // odd size
            (4, 100),  // vtable past the end of the buffer
            (6, 2),    // inline size smaller than the soffset
            (6, 1000), // inline size past the end of the buffer
        ];
        for (pos, value) in cases {
            let mut buf = MINIMAL;
            buf[pos..pos + 2].copy_from_slice(&value.to_le_bytes());
            let e = assert_fb_error(Table::root(&buf, "Root"), "Root");
            assert!(e.offset() == Some(4) || e.offset() == Some(12), "{e:?}");
        }
    }

    #[test]
    fn field_outside_inline_bytes() {
        let mut buf = MINIMAL;
        // slot 0 at +6: an i32 would end at +10, past the 8 inline bytes
        buf[8] = 6;
        let e = assert_fb_error(
            Table::root(&buf, "Root").unwrap().scalar(0, 0i32, "Root.a"),
            "Root.a",
        );
        assert_eq!(e.offset(), Some(8));
        // ... but a u8 or i16 at +6 is fine
        let t = Table::root(&buf, "Root").unwrap();
        assert_eq!(t.scalar(0, 0i16, "Root.a").unwrap(), 0);
        // an i64 at +4 does not fit either
        buf[8] = 4;
        let t = Table::root(&buf, "Root").unwrap();
        assert_fb_error(t.scalar(0, 0i64, "Root.a"), "Root.a");
        // a field overlapping the soffset
        buf[8] = 2;
        let t = Table::root(&buf, "Root").unwrap();
        assert_fb_error(t.scalar(0, 0u8, "Root.a"), "Root.a");
    }

    /// The position of field `slot` of table `t` in `buf`, found by hand through its vtable.
    pub(crate) fn field_pos(buf: &[u8], t: &Table<'_>, slot: usize) -> usize {
        let table = t.offset();
        let vt = table - i32::from_le_bytes(buf[table..table + 4].try_into().unwrap()) as usize;
        let entry = vt + 4 + 2 * slot;
        table
            + usize::from(u16::from_le_bytes(
                buf[entry..entry + 2].try_into().unwrap(),
            ))
    }

    /// Where the `uoffset` at `pos` in `buf` points.
    pub(crate) fn follow_at(buf: &[u8], pos: usize) -> usize {
        pos + u32::from_le_bytes(buf[pos..pos + 4].try_into().unwrap()) as usize
    }

    /// Finds the only position of `needle` in `haystack`.
    fn find(haystack: &[u8], needle: &[u8]) -> usize {
        let mut hits = haystack
            .windows(needle.len())
            .enumerate()
            .filter(|(_, w)| *w == needle)
            .map(|(i, _)| i);
        let first = hits.next().expect("needle not found");
        assert_eq!(hits.next(), None, "needle found twice");
        first
    }

    #[test]
    fn bad_offset_fields() {
        // Slot 0: a table; slot 1: a string; slot 2: vector of i64; slot 3: vector of tables.
        let root = Obj::new()
            .table(0, Obj::new().with(0, Value::I32(0x5A5A_5A5A)))
            .str(1, "needle-string")
            .i64s(2, &[0x0102_0304_0506_0708])
            .tables(3, vec![Obj::new()]);
        let good = finish(&root);
        let t = Table::root(&good, "Root").unwrap();
        assert!(t.table(0, "a").unwrap().is_some());

        // Each offset field lives at table + vtable slot offset; overwrite the uoffset.
        for slot in 0..4u16 {
            for bad in [u32::MAX, good.len() as u32, 0x8000_0000] {
                let mut buf = good.clone();
                let p = field_pos(&good, &t, usize::from(slot));
                buf[p..p + 4].copy_from_slice(&bad.to_le_bytes());
                let t = Table::root(&buf, "Root").unwrap();
                let e = match slot {
                    0 => assert_fb_error(t.table(0, "a"), "a"),
                    1 => assert_fb_error(t.str(1, "b"), "b"),
                    2 => assert_fb_error(t.vector::<i64>(2, "c"), "c"),
                    _ => assert_fb_error(t.tables(3, "d"), "d"),
                };
                assert_eq!(e.offset(), Some(p as u64));
            }
        }

        // A string whose length runs past the end.
        let s = find(&good, b"needle-string") - 4;
        for bad in [14, u32::MAX, 0x7FFF_FFFF] {
            let mut buf = good.clone();
            buf[s..s + 4].copy_from_slice(&u32::to_le_bytes(bad));
            let t = Table::root(&buf, "Root").unwrap();
            if bad == 14 {
                // 14 bytes: the 13 characters and the terminating zero, which is fine.
                assert_eq!(t.str(1, "b").unwrap(), Some("needle-string\0"));
            } else {
                assert_fb_error(t.str(1, "b"), "b");
            }
        }

        // A vector whose length times 8 runs past the end, or overflows.
        let v = find(&good, &0x0102_0304_0506_0708i64.to_le_bytes()) - 4;
        for bad in [(good.len() / 8) as u32, u32::MAX, 0x2000_0000] {
            let mut buf = good.clone();
            buf[v..v + 4].copy_from_slice(&u32::to_le_bytes(bad));
            let t = Table::root(&buf, "Root").unwrap();
            let e = assert_fb_error(t.vector::<i64>(2, "c"), "c");
            assert_eq!(e.offset(), Some(v as u64));
        }
        // A vector of tables is fine as long as its offsets fit; a table element is
        // checked only when read.
        let mut buf = good.clone();
        // The vector's one element slot sits right after its length.
        let tv = follow_at(&good, field_pos(&good, &t, 3)) + 4;
        buf[tv..tv + 4].copy_from_slice(&u32::MAX.to_le_bytes());
        let t = Table::root(&buf, "Root").unwrap();
        let tables = t.tables(3, "d").unwrap().unwrap();
        assert_eq!(tables.len(), 1);
        let e = assert_fb_error(tables.get(0), "d");
        assert_eq!(e.offset(), Some(tv as u64));
        assert!(tables.iter().next().unwrap().is_err());
    }

    #[test]
    fn invalid_utf8() {
        let buf = finish(&Obj::new().with(0, Value::Str(b"ok\xFFno".into())));
        let t = Table::root(&buf, "Root").unwrap();
        let e = assert_fb_error(t.str(0, "Root.s"), "Root.s");
        // The offset points at the first bad byte.
        assert_eq!(buf[e.offset().unwrap() as usize], 0xFF);
    }

    #[test]
    fn depth_limit() {
        // A chain of MAX_DEPTH + 2 tables, each holding the next in slot 0.
        let mut obj = Obj::new().with(1, Value::I32(-1));
        for i in 0..=MAX_DEPTH {
            obj = Obj::new().table(0, obj).with(1, Value::I32(i as i32));
        }
        let buf = finish(&obj);
        let mut t = Table::root(&buf, "Root").unwrap();
        for depth in 1..=MAX_DEPTH {
            t = t.table(0, "Root.next").unwrap().unwrap();
            assert_eq!(t.depth(), depth);
        }
        let e = t.table(0, "Root.next").unwrap_err();
        assert_eq!(
            e.kind,
            FormatErrorKind::FlatbufferLimit {
                what: FlatbufferBound::NestingDepth,
                limit: u64::from(MAX_DEPTH)
            }
        );
        assert!(e.offset().is_some());
        // The deepest table that is allowed still reads.
        assert_eq!(t.scalar(1, 0i32, "Root.n").unwrap(), 0);
    }

    #[test]
    fn depth_limit_applies_to_vectors_and_unions() {
        let mut obj = Obj::new();
        for _ in 0..=MAX_DEPTH {
            obj = Obj::new().tables(0, vec![obj]).with(1, Value::U8(1));
        }
        let buf = finish(&obj);
        let mut t = Table::root(&buf, "Root").unwrap();
        fn first_child(t: Table<'_>) -> FormatResult<Table<'_>> {
            t.tables(0, "Root.children").unwrap().unwrap().get(0)
        }
        for _ in 1..=MAX_DEPTH {
            t = first_child(t).unwrap();
        }
        let e = first_child(t).unwrap_err();
        assert!(matches!(e.kind, FormatErrorKind::FlatbufferLimit { .. }));
        // A union value is a nested table as well; build a chain through slots 2/3.
        let mut obj = Obj::new();
        for _ in 0..=MAX_DEPTH {
            obj = Obj::new().with(2, Value::U8(1)).table(3, obj);
        }
        let buf = finish(&obj);
        let mut t = Table::root(&buf, "Root").unwrap();
        for _ in 1..=MAX_DEPTH {
            t = t.union(2, 3, "Root.u").unwrap().unwrap().1;
        }
        assert!(matches!(
            t.union(2, 3, "Root.u").unwrap_err().kind,
            FormatErrorKind::FlatbufferLimit { .. }
        ));
    }

    #[test]
    fn union_without_value_reads_as_none() {
        // A tag without a value, and a value without a tag.
        for root in [
            Obj::new().with(0, Value::U8(3)),
            Obj::new().table(1, Obj::new()),
        ] {
            let buf = finish(&root);
            let t = Table::root(&buf, "Root").unwrap();
            assert!(t.union(0, 1, "Root.u").unwrap().is_none());
        }
    }

    #[test]
    fn truncation_never_panics() {
        let root = Obj::new()
            .str(0, "name")
            .tables(1, vec![Obj::new().str(0, "x"), Obj::new().i32s(1, &[1, 2])])
            .i64s(2, &[5, 6]);
        let buf = finish(&root);
        let walk = |buf: &[u8]| {
            let Ok(t) = Table::root(buf, "Root") else {
                return;
            };
            let _ = t.str(0, "a");
            if let Ok(Some(ts)) = t.tables(1, "b") {
                for c in ts.iter().flatten() {
                    let _ = c.str(0, "c");
                    let _ = c.vector::<i32>(1, "d");
                }
            }
            let _ = t.vector::<i64>(2, "e");
        };
        for len in 0..buf.len() {
            walk(&buf[..len]);
        }
        // Every single-byte corruption as well.
        for pos in 0..buf.len() {
            for byte in [0x00, 0x7F, 0x80, 0xFF] {
                let mut bad = buf.clone();
                bad[pos] = byte;
                walk(&bad);
            }
        }
    }
}
