//! Array views to the field nodes and buffers of a record batch body.
//!
//! Data enters as validated [`ArrayView`]s with the [`Field`]s they belong to, and leaves as
//! [`Columns`]: one `FieldNode` per array and each type's buffers in the format's order
//! (pre-order, validity first), uncompressed and unpadded; [`body`](super::body) lays them out.
//!
//! The IPC format has no slice offset: every array in a body starts at slot 0. So an array with an
//! offset (a slice, or a child of a sliced struct) is written as the equivalent array starting at
//! 0: fixed-width values and views are cut from their buffers without a copy; bit ranges that do
//! not start on a byte are shifted into new bitmaps; offsets that do not start at 0 are rebased
//! into new buffers; children are sliced to the range their parent uses (list offsets, list view
//! extents, dense union offsets, run ends), so nothing outside the slice is written. Buffers that
//! need no change are borrowed (a cheap [`Bytes`] clone), so the body shares the batch's memory.

use crate::array::{ArrayParts, ArrayView};
use crate::bytes::Bytes;
use crate::columnar::{Native, bad, read};
use crate::datatype::{DataType, UnionMode};
use crate::error::{FormatErrorKind, FormatResult};
use crate::flatbuffer_builder::Push;
use crate::format::FieldNode;
use crate::ipc::delta::{VIEW_SIZE, long_view};
use crate::schema::Field;
use alloc::vec;
use alloc::vec::Vec;
use core::ops::Range;

/// The nodes and raw buffers of a record batch body.
#[derive(Debug, Default)]
pub(super) struct Columns<'a> {
    /// One node per array, in pre-order.
    pub nodes: Vec<FieldNode>,
    /// Every buffer, in pre-order, uncompressed.
    pub buffers: Vec<Bytes<'a>>,
    /// The number of variadic buffers of each view array, in pre-order.
    pub variadic_buffer_counts: Vec<i64>,
}

/// Encodes `columns`, each the array of the field at the same index.
pub(super) fn encode_columns<'a>(
    fields: &[Field],
    columns: &[ArrayView<'a>],
) -> FormatResult<Columns<'a>> {
    if fields.len() != columns.len() {
        return Err(bad(
            "number of columns differs from the schema",
            columns.len(),
        ));
    }
    let mut encoder = Columns::default();
    for (i, (field, column)) in fields.iter().zip(columns).enumerate() {
        encoder.array(field, column).map_err(|e| e.in_field(i))?;
    }
    Ok(encoder)
}

/// `a * b`, or an error naming what overflowed.
fn mul(a: usize, b: usize) -> FormatResult<usize> {
    a.checked_mul(b)
        .ok_or_else(|| bad("buffer size overflows", a))
}

/// The window `range` of `bytes`, borrowed or shared (no copy).
fn window<'a>(bytes: &Bytes<'a>, range: Range<usize>) -> FormatResult<Bytes<'a>> {
    let end = range.end;
    bytes
        .slice(range)
        .ok_or_else(|| bad("buffer shorter than the array", end))
}

/// The bits `offset..offset + len` of an LSB-first bitmap, moved to start at bit 0, with the
/// bits past `len` in the last byte cleared.
pub(super) fn copy_bits(bitmap: &[u8], offset: usize, len: usize) -> Vec<u8> {
    let mut out = vec![0u8; len.div_ceil(8)];
    let base = offset / 8;
    let shift = offset % 8;
    for (i, byte) in out.iter_mut().enumerate() {
        let low = bitmap.get(base + i).copied().unwrap_or(0);
        *byte = if shift == 0 {
            low
        } else {
            let high = bitmap.get(base + i + 1).copied().unwrap_or(0);
            (low >> shift) | (high << (8 - shift))
        };
    }
    if let Some(last) = out.last_mut()
        && !len.is_multiple_of(8)
    {
        *last &= (1u8 << (len % 8)) - 1;
    }
    out
}

/// An offset type: `i32` for Binary, Utf8, List and Map, `i64` for their large forms.
trait OffsetType: Native + Push + TryFrom<i64> + Into<i64> {
    /// Offset `i` of `buf`, widened (0 past the end; validation rules that out).
    fn read(buf: &[u8], i: usize) -> i64 {
        read::<Self>(buf, i).into()
    }

    /// Appends `value` in this width, or fails if it does not fit (only an `i32` can fail).
    fn push(value: i64, out: &mut Vec<u8>) -> FormatResult<()> {
        let value = Self::try_from(value).map_err(|_| FormatErrorKind::InvalidValue {
            what: "offset past the 32-bit range",
            value,
        })?;
        out.extend_from_slice(value.to_le().as_ref());
        Ok(())
    }
}

impl OffsetType for i32 {}

impl OffsetType for i64 {}

/// A validated (so non-negative) offset or length as `usize`.
fn index(value: i64) -> FormatResult<usize> {
    usize::try_from(value).map_err(|_| {
        FormatErrorKind::InvalidValue {
            what: "negative offset",
            value,
        }
        .into()
    })
}

impl<'a> Columns<'a> {
    fn node(&mut self, len: usize, null_count: usize) {
        self.nodes.push(FieldNode {
            length: len as i64,
            null_count: null_count as i64,
        });
    }

    /// Buffer `b` of `array`.
    fn buffer<'v>(array: &'v ArrayView<'a>, b: usize) -> FormatResult<&'v Bytes<'a>> {
        array
            .buffers()
            .get(b)
            .ok_or_else(|| bad("wrong number of buffers", b))
    }

    /// The node of an array with a validity buffer, and that buffer: empty without nulls, else
    /// the array's bits from slot 0.
    fn node_and_validity(&mut self, array: &ArrayView<'a>) {
        self.node(array.len(), array.null_count());
        let bitmap = match array.validity() {
            Some(bitmap) if array.null_count() > 0 => {
                Bytes::from_vec(copy_bits(bitmap, array.offset(), array.len()))
            }
            _ => Bytes::default(),
        };
        self.buffers.push(bitmap);
    }

    /// Buffer `b` of `array`, which holds `width` bytes per slot, from slot 0.
    fn fixed(&mut self, array: &ArrayView<'a>, b: usize, width: usize) -> FormatResult<()> {
        let buffer = Self::buffer(array, b)?;
        let start = mul(array.offset(), width)?;
        let len = mul(array.len(), width)?;
        self.buffers.push(window(buffer, start..start + len)?);
        Ok(())
    }

    /// Buffer `b` of `array`, a bitmap with one bit per slot, from slot 0.
    fn bits(&mut self, array: &ArrayView<'a>, b: usize) -> FormatResult<()> {
        let buffer = Self::buffer(array, b)?;
        let (offset, len) = (array.offset(), array.len());
        self.buffers.push(if offset.is_multiple_of(8) {
            let start = offset / 8;
            window(buffer, start..start + len.div_ceil(8))?
        } else {
            Bytes::from_vec(copy_bits(buffer, offset, len))
        });
        Ok(())
    }

    /// The offsets of `array` rebased to start at 0; returns the range of values they span.
    fn offsets<O: OffsetType>(&mut self, array: &ArrayView<'a>) -> FormatResult<Range<usize>> {
        let (offset, len) = (array.offset(), array.len());
        if len == 0 {
            self.buffers.push(Bytes::from_vec(vec![0; O::WIDTH]));
            return Ok(0..0);
        }
        let buffer = Self::buffer(array, 0)?;
        let first = O::read(buffer, offset);
        let last = O::read(buffer, offset + len);
        if first == 0 {
            let start = mul(offset, O::WIDTH)?;
            let end = mul(offset + len + 1, O::WIDTH)?;
            self.buffers.push(window(buffer, start..end)?);
        } else {
            let mut rebased = Vec::with_capacity(mul(len + 1, O::WIDTH)?);
            for i in offset..=offset + len {
                O::push(O::read(buffer, i) - first, &mut rebased)?;
            }
            self.buffers.push(Bytes::from_vec(rebased));
        }
        Ok(index(first)?..index(last)?)
    }

    /// Child `i` of `array`, sliced to `range` of its slots.
    fn child(array: &ArrayView<'a>, i: usize, range: Range<usize>) -> FormatResult<ArrayView<'a>> {
        let child = array
            .child(i)
            .ok_or_else(|| bad("number of children differs from the type", i))?;
        child.slice(range.start, range.end.saturating_sub(range.start))
    }

    /// The children of a struct or sparse union, each sliced to the array's slots.
    fn children(&mut self, fields: &[Field], array: &ArrayView<'a>) -> FormatResult<()> {
        let slots = array.offset()..array.offset() + array.len();
        for (i, child_field) in fields.iter().enumerate() {
            let child = Self::child(array, i, slots.clone())?;
            self.array(child_field, &child).map_err(|e| e.in_field(i))?;
        }
        Ok(())
    }

    fn array(&mut self, field: &Field, array: &ArrayView<'a>) -> FormatResult<()> {
        if array.data_type() != field.data_type()
            || array.dictionary().is_some() != field.dictionary().is_some()
        {
            return Err(bad("array type differs from its field", 0));
        }
        let (offset, len) = (array.offset(), array.len());
        if let Some(dictionary) = array.dictionary() {
            self.node_and_validity(array);
            return self.fixed(array, 0, dictionary.index_type.byte_width());
        }
        use DataType::*;
        match array.data_type() {
            Null => self.node(len, len),
            Boolean => {
                self.node_and_validity(array);
                self.bits(array, 0)?;
            }
            Binary | Utf8 => self.var_binary::<i32>(array)?,
            LargeBinary | LargeUtf8 => self.var_binary::<i64>(array)?,
            BinaryView | Utf8View => self.views(array)?,
            List(item) | Map(item, _) => self.list::<i32>(item, array)?,
            LargeList(item) => self.list::<i64>(item, array)?,
            ListView(item) => self.list_view::<i32>(item, array)?,
            LargeListView(item) => self.list_view::<i64>(item, array)?,
            FixedSizeList(item, size) => {
                self.node_and_validity(array);
                let size = usize::try_from(*size).map_err(|_| bad("negative list size", 0))?;
                let start = mul(offset, size)?;
                let child = Self::child(array, 0, start..start + mul(len, size)?)?;
                self.array(item, &child).map_err(|e| e.in_field(0))?;
            }
            Struct(fields) => {
                self.node_and_validity(array);
                self.children(fields, array)?;
            }
            Union(fields, _, mode) => {
                // V5: unions have no validity buffer; their nulls are their children's.
                self.node(len, 0);
                self.fixed(array, 0, 1)?;
                match mode {
                    UnionMode::Sparse => self.children(fields, array)?,
                    UnionMode::Dense => self.dense_union(fields, array)?,
                }
            }
            RunEndEncoded(pair) => self.run_end_encoded(pair.as_slice(), array)?,
            other => {
                let width = other
                    .byte_width()
                    .ok_or_else(|| bad("type has no layout", 0))?;
                self.node_and_validity(array);
                self.fixed(array, 0, width)?;
            }
        }
        Ok(())
    }

    /// Views: the slice's views, and of the data buffers only those its views point into (none
    /// for an empty slice). When some are left out, the views are copied with their buffer
    /// indices renumbered; otherwise views and buffers are shared as they are.
    fn views(&mut self, array: &ArrayView<'a>) -> FormatResult<()> {
        self.node_and_validity(array);
        let data = array.buffers().get(1..).unwrap_or_default();
        let start = mul(array.offset(), VIEW_SIZE)?;
        let end = start + mul(array.len(), VIEW_SIZE)?;
        let views = window(Self::buffer(array, 0)?, start..end)?;
        let mut used = vec![false; data.len()];
        for view in views.chunks_exact(VIEW_SIZE) {
            if let Some((buffer, _)) = long_view(view)
                && let Some(used) = used.get_mut(buffer)
            {
                *used = true;
            }
        }
        if used.iter().all(|u| *u) {
            self.buffers.push(views);
            self.buffers.extend(data.iter().cloned());
            self.variadic_buffer_counts.push(data.len() as i64);
            return Ok(());
        }
        // New index of each kept buffer.
        let mut renumbered = vec![0i32; data.len()];
        let mut kept = 0i32;
        for (new, used) in renumbered.iter_mut().zip(&used) {
            *new = kept;
            kept += i32::from(*used);
        }
        let mut copied = views.to_vec();
        for view in copied.chunks_exact_mut(VIEW_SIZE) {
            if let Some((buffer, _)) = long_view(view)
                && let (Some(new), Some(index)) = (renumbered.get(buffer), view.get_mut(8..12))
            {
                index.copy_from_slice(&new.to_le_bytes());
            }
        }
        self.buffers.push(Bytes::from_vec(copied));
        self.buffers.extend(
            data.iter()
                .zip(&used)
                .filter(|(_, used)| **used)
                .map(|(b, _)| b.clone()),
        );
        self.variadic_buffer_counts.push(i64::from(kept));
        Ok(())
    }

    fn var_binary<O: OffsetType>(&mut self, array: &ArrayView<'a>) -> FormatResult<()> {
        self.node_and_validity(array);
        let values = self.offsets::<O>(array)?;
        self.buffers.push(window(Self::buffer(array, 1)?, values)?);
        Ok(())
    }

    fn list<O: OffsetType>(&mut self, item: &Field, array: &ArrayView<'a>) -> FormatResult<()> {
        self.node_and_validity(array);
        let values = self.offsets::<O>(array)?;
        let child = Self::child(array, 0, values)?;
        self.array(item, &child).map_err(|e| e.in_field(0))
    }

    /// List views: offsets rebased onto the extent of the child the views use, sizes as they
    /// are, the child sliced to that extent. Empty views get offset 0.
    fn list_view<O: OffsetType>(
        &mut self,
        item: &Field,
        array: &ArrayView<'a>,
    ) -> FormatResult<()> {
        self.node_and_validity(array);
        let (offset, len) = (array.offset(), array.len());
        let (starts, sizes) = (array.buffer(0), array.buffer(1));
        let mut extent: Option<(i64, i64)> = None;
        for j in offset..offset + len {
            let size = O::read(sizes, j);
            if size > 0 {
                let start = O::read(starts, j);
                let (lo, hi) = extent.get_or_insert((start, start + size));
                *lo = (*lo).min(start);
                *hi = (*hi).max(start + size);
            }
        }
        let (lo, hi) = extent.unwrap_or((0, 0));
        let mut rebased = Vec::with_capacity(mul(len, O::WIDTH)?);
        for j in offset..offset + len {
            let start = if O::read(sizes, j) > 0 {
                O::read(starts, j) - lo
            } else {
                0
            };
            O::push(start, &mut rebased)?;
        }
        self.buffers.push(Bytes::from_vec(rebased));
        self.fixed(array, 1, O::WIDTH)?;
        let child = Self::child(array, 0, index(lo)?..index(hi)?)?;
        self.array(item, &child).map_err(|e| e.in_field(0))
    }

    /// Dense unions: type ids as they are; each child sliced to the slots the union uses, and
    /// the offsets rebased onto those slices.
    fn dense_union(&mut self, fields: &[Field], array: &ArrayView<'a>) -> FormatResult<()> {
        let len = array.len();
        // Per child: the first slot used and one past the last.
        let mut used: Vec<Option<(usize, usize)>> = vec![None; fields.len()];
        for i in 0..len {
            let (child, slot) = array.union_value(i);
            if let Some(range) = used.get_mut(child) {
                let (lo, hi) = range.get_or_insert((slot, slot + 1));
                *lo = (*lo).min(slot);
                *hi = (*hi).max(slot + 1);
            }
        }
        let mut offsets = Vec::with_capacity(mul(len, 4)?);
        for i in 0..len {
            let (child, slot) = array.union_value(i);
            let lo = used.get(child).copied().flatten().map_or(0, |(lo, _)| lo);
            i32::push((slot - lo) as i64, &mut offsets)?;
        }
        self.buffers.push(Bytes::from_vec(offsets));
        for (i, (child_field, range)) in fields.iter().zip(&used).enumerate() {
            let (lo, hi) = range.unwrap_or((0, 0));
            let child = Self::child(array, i, lo..hi)?;
            self.array(child_field, &child).map_err(|e| e.in_field(i))?;
        }
        Ok(())
    }

    /// Run-end encoding: the runs that cover the slice, their ends rebased onto it (and the last
    /// one cut at its length), and the values of those runs.
    fn run_end_encoded(&mut self, pair: &[Field], array: &ArrayView<'a>) -> FormatResult<()> {
        let [run_ends_field, values_field] = pair else {
            return Err(bad("run-end encoded array needs two children", 0));
        };
        let (offset, len) = (array.offset(), array.len());
        self.node(len, 0);
        let run_ends = array
            .child(0)
            .ok_or_else(|| bad("run-end encoded array needs two children", 0))?;
        let (first, last) = if len == 0 {
            (0, 0)
        } else {
            (array.run_index(0), array.run_index(len - 1) + 1)
        };
        let whole = offset == 0
            && first == 0
            && last == run_ends.len()
            && (len == 0 || run_ends.integer(last - 1) == len as i64);
        let run_ends = if whole {
            run_ends.clone()
        } else {
            let width = run_ends_field
                .data_type()
                .byte_width()
                .ok_or_else(|| bad("run ends are not integers", 0))?;
            let mut ends = Vec::with_capacity(mul(last - first, width)?);
            for r in first..last {
                let end = (run_ends.integer(r) - offset as i64).min(len as i64);
                match width {
                    2 => ends.extend_from_slice(
                        &i16::try_from(end)
                            .map_err(|_| bad("run end out of range", r))?
                            .to_le_bytes(),
                    ),
                    4 => i32::push(end, &mut ends)?,
                    _ => i64::push(end, &mut ends)?,
                }
            }
            ArrayView::try_new(ArrayParts {
                data_type: Some(run_ends_field.data_type().clone()),
                len: last - first,
                buffers: vec![Bytes::from_vec(ends)],
                ..ArrayParts::default()
            })?
        };
        let values = Self::child(array, 1, first..last)?;
        self.array(run_ends_field, &run_ends)
            .map_err(|e| e.in_field(0))?;
        self.array(values_field, &values).map_err(|e| e.in_field(1))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    fn view(s: &str, buffer: i32, offset: i32) -> Vec<u8> {
        let mut v = (s.len() as i32).to_le_bytes().to_vec();
        if s.len() <= 12 {
            v.extend_from_slice(s.as_bytes());
            v.resize(16, 0);
        } else {
            v.extend_from_slice(&s.as_bytes()[..4]);
            v.extend_from_slice(&buffer.to_le_bytes());
            v.extend_from_slice(&offset.to_le_bytes());
        }
        v
    }

    #[test]
    fn view_slices_keep_only_the_buffers_they_use() {
        let (a, b) = ("a".repeat(16), "b".repeat(20));
        let views = [
            view("short", 0, 0),
            view(&a, 0, 0),
            view(&b, 1, 0),
            view("x", 0, 0),
        ]
        .concat();
        let array = ArrayView::try_new(ArrayParts {
            data_type: Some(DataType::Utf8View),
            len: 4,
            buffers: vec![
                Bytes::from_vec(views),
                Bytes::from_vec(a.clone().into_bytes()),
                Bytes::from_vec(b.clone().into_bytes()),
            ],
            ..ArrayParts::default()
        })
        .unwrap();
        let field = Field::new("v", DataType::Utf8View, false);
        let cases: [(usize, usize, &[&str], i64); 4] = [
            (0, 4, &["short", &a, &b, "x"], 2),
            (2, 2, &[&b, "x"], 1),
            (3, 1, &["x"], 0),
            (1, 0, &[], 0),
        ];
        for (offset, len, expected, buffers) in cases {
            let sliced = array.slice(offset, len).unwrap();
            let columns = encode_columns(core::slice::from_ref(&field), &[sliced]).unwrap();
            assert_eq!(columns.variadic_buffer_counts, [buffers]);
            // validity, views, then the data buffers kept
            assert_eq!(columns.buffers.len(), 2 + buffers as usize);
            let back = ArrayView::try_new(ArrayParts {
                data_type: Some(DataType::Utf8View),
                len,
                buffers: columns.buffers[1..].to_vec(),
                ..ArrayParts::default()
            })
            .unwrap();
            let got: Vec<&str> = (0..len).map(|i| back.str_value(i)).collect();
            assert_eq!(got, expected);
        }
    }

    #[test]
    fn copy_bits_matches_a_naive_copy() {
        let bitmap: Vec<u8> = (0..9u8).map(|i| i.wrapping_mul(73) ^ 0x5A).collect();
        let bit = |b: &[u8], i: usize| b[i / 8] & (1 << (i % 8)) != 0;
        for offset in 0..20 {
            for len in 0..bitmap.len() * 8 - offset {
                let out = copy_bits(&bitmap, offset, len);
                assert_eq!(out.len(), len.div_ceil(8));
                for i in 0..len {
                    assert_eq!(bit(&out, i), bit(&bitmap, offset + i), "{offset} {len} {i}");
                }
                for i in len..out.len() * 8 {
                    assert!(!bit(&out, i), "padding bit {i} set");
                }
            }
        }
    }
}
