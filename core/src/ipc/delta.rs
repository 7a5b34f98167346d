//! Growing an array in place: how delta dictionary batches extend the dictionary they follow.
//!
//! It uses, of the crate, the arrays and their bytes, the columnar rules, the data types and the
//! errors; nothing else of `ipc`.
//!
//! A delta batch appends values to the dictionary it extends. Copying the whole dictionary at
//! every delta allocates in proportion to the square of the number of deltas. A
//! [`GrowingArray`] keeps the dictionary's buffers instead as owned vectors with room to spare,
//! and appends each delta's values to them where they lie; vectors grow by doubling, so the bytes
//! allocated stay linear (amortized) in the dictionary's final size.
//!
//! Every type grows, each by its own layout, and nested types node by node: a node is a
//! validity bitmap, the type's buffers and one node per child. Appending slots of a delta
//! appends their validity and values; offsets (lists, maps, variable-size binary, list views),
//! dense union offsets and run ends are rebased onto what the node already holds, and the
//! children take the child slots those slots use (for list views and dense unions, the delta's
//! whole children). Views are rebased onto the node's own data buffers, into which the bytes the
//! delta's views use are copied: sharing the delta's data buffers instead would add one buffer
//! per delta, and every dictionary handed out would list them all, which costs the square of the
//! number of deltas again. Dictionary-encoded values append their indices and share the one
//! dictionary they index (deltas encoded with another dictionary are refused).
//!
//! Values enter as a validated [`ArrayView`] (sliced or not); the grown array leaves as a new
//! [`ArrayView`] whose buffers share the vectors. A vector that an array the caller still holds
//! (an earlier batch's dictionary) shares is copied once before the append, so arrays handed out
//! never change; only when the caller has let them go does the append happen in place. An append
//! checks everything that can fail (types, dictionaries, offsets past their integer type) before
//! it writes anything, so a failed append changes nothing.
//!
//! The array handed out after each append is not checked again as a whole (each delta was
//! checked when it was read, and appending keeps the format's rules), so the time a delta costs
//! follows its own size, not the dictionary's; debug builds check it all anyway.
//!
//! [`concat`](super::concat::concat) is this module's one use outside dictionaries: a growing
//! copy of one array with the other appended.

use crate::array::{ArrayParts, ArrayView, Dictionary};
use crate::bytes::{Bytes, Owner};
use crate::columnar::read;
use crate::datatype::{DataType, UnionMode};
use crate::error::{Feature, FormatError, FormatErrorKind, FormatResult, Limit};
use alloc::sync::Arc;
use alloc::vec;
use alloc::vec::Vec;
use core::ops::Range;

/// One buffer of a growing array: owned bytes, with spare capacity, that arrays share.
#[derive(Debug, Default)]
struct Grown(Vec<u8>);

impl AsRef<[u8]> for Grown {
    fn as_ref(&self) -> &[u8] {
        &self.0
    }
}

/// The size of one binary view.
pub(super) const VIEW_SIZE: usize = 16;

/// Views of up to this many bytes hold them inline.
const MAX_INLINE: usize = 12;

/// How a type's slots lie in its buffers and children.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Storage {
    /// No buffers; every slot is null (`Null`).
    Null,
    /// One buffer of values `width` bytes each (also dictionary indices and run ends).
    Fixed(usize),
    /// One bitmap, a bit per value (`Boolean`).
    Bits,
    /// Offsets of `width` bytes (`i32` or `i64`), then the values' bytes.
    Variable(usize),
    /// 16-byte views, then the data buffers long values lie in (`BinaryView`, `Utf8View`).
    Views,
    /// Offsets of `width` bytes into one child (`List`, `Map`, `LargeList`).
    List(usize),
    /// Offsets and sizes of `width` bytes into one child (`ListView`, `LargeListView`).
    ListView(usize),
    /// This many child slots per slot (`FixedSizeList`).
    FixedSizeList(usize),
    /// One child per field, slot for slot.
    Struct,
    /// Type ids, offsets into the children when dense, and one child per field.
    Union(UnionMode),
    /// A run ends child (integers of `width` bytes) and a values child with one value per run.
    RunEnd(usize),
}

impl Storage {
    /// How arrays of `data_type` (or their indices, when `encoded`) are stored.
    fn of(data_type: &DataType, encoded: Option<&Dictionary<'_>>) -> FormatResult<Storage> {
        use DataType::*;
        if let Some(dictionary) = encoded {
            return Ok(Storage::Fixed(dictionary.index_type.byte_width()));
        }
        Ok(match data_type {
            Null => Storage::Null,
            Boolean => Storage::Bits,
            Binary | Utf8 => Storage::Variable(4),
            LargeBinary | LargeUtf8 => Storage::Variable(8),
            BinaryView | Utf8View => Storage::Views,
            List(_) | Map(..) => Storage::List(4),
            LargeList(_) => Storage::List(8),
            ListView(_) => Storage::ListView(4),
            LargeListView(_) => Storage::ListView(8),
            FixedSizeList(_, size) => Storage::FixedSizeList(usize::try_from(*size).unwrap_or(0)),
            Struct(_) => Storage::Struct,
            Union(_, _, mode) => Storage::Union(*mode),
            RunEndEncoded(pair) => {
                let [run_ends, _] = &**pair;
                let width = run_ends.data_type().byte_width();
                Storage::RunEnd(width.ok_or_else(|| unsupported(Feature::DataTypeLayout))?)
            }
            other => Storage::Fixed(
                other
                    .byte_width()
                    .ok_or_else(|| unsupported(Feature::DeltaDictionary))?,
            ),
        })
    }

    /// Whether the array has a validity bitmap (nulls of unions and run-end encoded arrays live
    /// in their children; a `Null` array's slots are all null).
    fn has_validity(self) -> bool {
        !matches!(self, Storage::Null | Storage::Union(_) | Storage::RunEnd(_))
    }
}

/// An array that grows in place; see the module docs.
#[derive(Debug, Clone)]
pub(crate) struct GrowingArray<'a> {
    data_type: DataType,
    storage: Storage,
    len: usize,
    null_count: usize,
    /// The validity bitmap (`len` bits), once any slot has been null.
    validity: Option<Arc<Grown>>,
    /// The layout's buffers in format order; for views, the views then the data buffers.
    buffers: Vec<Arc<Grown>>,
    /// One growing array per child, in field order.
    children: Vec<GrowingArray<'a>>,
    /// The dictionary that dictionary-encoded values index.
    dictionary: Option<Dictionary<'a>>,
}

impl<'a> GrowingArray<'a> {
    /// A growable copy of `array`.
    pub fn start(array: &ArrayView<'a>) -> FormatResult<GrowingArray<'a>> {
        let mut growing = GrowingArray::empty_like(array)?;
        growing.append(array)?;
        Ok(growing)
    }

    /// An empty array of `array`'s type (and dictionary, for dictionary-encoded values).
    fn empty_like(array: &ArrayView<'a>) -> FormatResult<GrowingArray<'a>> {
        let storage = Storage::of(array.data_type(), array.dictionary())?;
        let empty = || Arc::new(Grown::default());
        let zero = |width: usize| Arc::new(Grown(vec![0; width]));
        let buffers = match storage {
            Storage::Null | Storage::FixedSizeList(_) | Storage::Struct | Storage::RunEnd(_) => {
                Vec::new()
            }
            Storage::Fixed(_)
            | Storage::Bits
            | Storage::Views
            | Storage::Union(UnionMode::Sparse) => {
                vec![empty()]
            }
            Storage::Variable(width) => vec![zero(width), empty()],
            Storage::List(width) => vec![zero(width)],
            Storage::ListView(_) | Storage::Union(UnionMode::Dense) => vec![empty(), empty()],
        };
        Ok(GrowingArray {
            data_type: array.data_type().clone(),
            storage,
            len: 0,
            null_count: 0,
            validity: None,
            buffers,
            children: array
                .children()
                .iter()
                .map(GrowingArray::empty_like)
                .collect::<FormatResult<_>>()?,
            dictionary: array.dictionary().cloned(),
        })
    }

    /// Appends the slots of `delta`, which must have this array's type (and dictionary, for
    /// dictionary-encoded values). Nothing changes when it fails.
    pub fn append(&mut self, delta: &ArrayView<'a>) -> FormatResult<()> {
        self.check(delta, 0..delta.len())?;
        self.push(delta, 0..delta.len());
        Ok(())
    }

    /// Whether slots `slots` of `array` can be appended: everything that can fail, checked
    /// before anything is written.
    fn check(&self, array: &ArrayView<'a>, slots: Range<usize>) -> FormatResult<()> {
        if *array.data_type() != self.data_type {
            return Err(unsupported(Feature::DeltaDictionary));
        }
        let same_dictionary = match (&self.dictionary, array.dictionary()) {
            (Some(x), Some(y)) => x.index_type == y.index_type && Arc::ptr_eq(&x.values, &y.values),
            (None, None) => true,
            _ => false,
        };
        if !same_dictionary {
            return Err(unsupported(Feature::DeltaDictionary));
        }
        let len = fits(self.len, slots.len(), 8)?;
        if self.storage.has_validity() && (array.null_count() > 0 || self.validity.is_some()) {
            // A bitmap has a bit for every slot, and some slots hold no bytes at all (structs of
            // nulls, fixed-size lists of size 0): their count costs the input nothing. The
            // bitmap may not outgrow the bytes the array's slots do hold.
            let backed = self.held().saturating_add(held(array));
            let limit = backed.saturating_add(UNBACKED_BITMAP);
            if len.div_ceil(8) > limit {
                return Err(FormatErrorKind::LimitExceeded {
                    what: Limit::DictionaryValidity,
                    requested: len.div_ceil(8) as u64,
                    limit: limit as u64,
                }
                .into());
            }
        }
        let (start, end) = (array.offset() + slots.start, array.offset() + slots.end);
        let child_len = |i: usize| self.children.get(i).map_or(0, |c| c.len);
        match self.storage {
            Storage::Variable(width) => {
                let (first, last) = (offset(array, start, width), offset(array, end, width));
                let data = self.buffers.get(1).map_or(0, |d| d.0.len());
                fits(data, last.saturating_sub(first), width)?;
            }
            Storage::List(width) => {
                let (first, last) = (offset(array, start, width), offset(array, end, width));
                fits(child_len(0), last.saturating_sub(first), width)?;
            }
            Storage::ListView(width) => {
                let added = array.child(0).map_or(0, ArrayView::len);
                fits(child_len(0), added, width)?;
            }
            Storage::Union(UnionMode::Dense) => {
                for (i, child) in array.children().iter().enumerate() {
                    fits(child_len(i), child.len(), 4)?;
                }
            }
            Storage::RunEnd(width) => {
                fits(len, 0, width)?;
            }
            _ => {}
        }
        for (i, child, range) in child_slots(self.storage, array, &slots) {
            if let Some(growing) = self.children.get(i) {
                growing.check(child, range)?;
            }
        }
        Ok(())
    }

    /// Appends slots `slots` of `array`, which `check` has accepted.
    fn push(&mut self, array: &ArrayView<'a>, slots: Range<usize>) {
        let (start, end) = (array.offset() + slots.start, array.offset() + slots.end);
        let nulls = self.push_validity(array, &slots);
        let child_len = |this: &Self, i: usize| this.children.get(i).map_or(0, |c| c.len);
        match self.storage {
            Storage::Null | Storage::FixedSizeList(_) | Storage::Struct => {}
            Storage::Fixed(width) => {
                let values = window(array.buffer(0), start * width, end * width);
                self.extend(0, values.len(), |out| out.extend_from_slice(values));
            }
            Storage::Bits => {
                let (len, bits) = (self.len, slots.clone().map(|i| array.bool_value(i)));
                self.extend(0, slots.len().div_ceil(8), |out| push_bits(out, len, bits));
            }
            Storage::Variable(width) => {
                let (first, last) = (offset(array, start, width), offset(array, end, width));
                let values = window(array.buffer(1), first, last);
                let base = self.buffers.get(1).map_or(0, |d| d.0.len());
                self.extend(1, values.len(), |out| out.extend_from_slice(values));
                self.push_offsets(array, start + 1..end + 1, width, base, first);
            }
            Storage::Views => self.push_views(array, start, end),
            Storage::List(width) => {
                let first = offset(array, start, width);
                let base = child_len(self, 0);
                self.push_offsets(array, start + 1..end + 1, width, base, first);
            }
            Storage::ListView(width) => {
                let base = child_len(self, 0);
                self.push_offsets(array, start..end, width, base, 0);
                let sizes = window(array.buffer(1), start * width, end * width);
                self.extend(1, sizes.len(), |out| out.extend_from_slice(sizes));
            }
            Storage::Union(mode) => {
                let type_ids = window(array.buffer(0), start, end);
                self.extend(0, type_ids.len(), |out| out.extend_from_slice(type_ids));
                if let (UnionMode::Dense, Some(offsets)) = (mode, self.buffers.get_mut(1)) {
                    let children = &self.children;
                    append_to(offsets, slots.len() * 4, |out| {
                        for i in slots.clone() {
                            let (child, slot) = array.union_value(i);
                            let base = children.get(child).map_or(0, |c| c.len);
                            push_int(out, (base + slot) as i64, 4);
                        }
                    });
                }
            }
            Storage::RunEnd(width) => self.push_run_ends(array, &slots, width),
        }
        for (i, child, range) in child_slots(self.storage, array, &slots) {
            if let Some(growing) = self.children.get_mut(i) {
                growing.push(child, range);
            }
        }
        self.len += slots.len();
        self.null_count += nulls;
    }

    /// Appends the validity of slots `slots` of `array` (once any slot has been null) and
    /// returns how many of them are null.
    fn push_validity(&mut self, array: &ArrayView<'a>, slots: &Range<usize>) -> usize {
        if self.storage == Storage::Null {
            return slots.len();
        }
        if !self.storage.has_validity() {
            return 0;
        }
        let nulls = if array.null_count() == 0 {
            0
        } else {
            slots.clone().filter(|i| array.is_null(*i)).count()
        };
        if nulls > 0 || self.validity.is_some() {
            let len = self.len;
            let validity = self.validity.get_or_insert_with(|| {
                let mut bits = Vec::new();
                push_bits(&mut bits, 0, core::iter::repeat_n(true, len));
                Arc::new(Grown(bits))
            });
            let valid = slots.clone().map(|i| array.is_valid(i));
            append_to(validity, slots.len().div_ceil(8), |bits| {
                push_bits(bits, len, valid);
            });
        }
        nulls
    }

    /// Appends offsets `at` of `array` (`width` bytes each), each moved from `from` to `base`.
    fn push_offsets(
        &mut self,
        array: &ArrayView<'a>,
        at: Range<usize>,
        width: usize,
        base: usize,
        from: usize,
    ) {
        self.extend(0, at.len() * width, |out| {
            for j in at {
                let moved = offset(array, j, width).saturating_sub(from) + base;
                push_int(out, moved as i64, width);
            }
        });
    }

    /// Appends views `start..end` of `array`: inline views as they are, the bytes the others
    /// use copied into this array's data buffers and the views pointed there.
    fn push_views(&mut self, array: &ArrayView<'a>, start: usize, end: usize) {
        let views = window(array.buffer(0), start * VIEW_SIZE, end * VIEW_SIZE);
        // Per data buffer of `array`: the bytes its views use, then where they land here
        // (data buffer, and how far each byte moves).
        let mut used: Vec<Option<(Range<usize>, usize, isize)>> =
            vec![None; array.buffers().len().saturating_sub(1)];
        for (buffer, bytes) in views.chunks_exact(VIEW_SIZE).filter_map(long_view) {
            if let Some(used) = used.get_mut(buffer) {
                let range = used.get_or_insert((bytes.clone(), 0, 0));
                range.0 = range.0.start.min(bytes.start)..range.0.end.max(bytes.end);
            }
        }
        for (buffer, used) in used.iter_mut().enumerate() {
            let Some((range, at, moved)) = used else {
                continue;
            };
            let bytes = window(array.buffer(buffer + 1), range.start, range.end);
            // A view's offset is an i32: start a new buffer rather than pass i32::MAX bytes.
            let room = self.buffers.last().filter(|_| self.buffers.len() > 1);
            if room.is_none_or(|b| b.0.len() + bytes.len() > i32::MAX as usize) {
                self.buffers.push(Arc::default());
            }
            *at = self.buffers.len() - 2;
            let base = self.buffers.last().map_or(0, |b| b.0.len());
            *moved = base as isize - range.start as isize;
            self.extend(*at + 1, bytes.len(), |out| out.extend_from_slice(bytes));
        }
        self.extend(0, views.len(), |out| {
            for view in views.chunks_exact(VIEW_SIZE) {
                let mut view: [u8; VIEW_SIZE] = view.try_into().unwrap_or_default();
                let placed = long_view(&view).and_then(|(b, bytes)| {
                    let (_, at, moved) = used.get(b)?.as_ref()?;
                    Some((*at, bytes.start as isize + moved))
                });
                if let Some((at, offset)) = placed {
                    if let Some(index) = view.get_mut(8..12) {
                        index.copy_from_slice(&(at as i32).to_le_bytes());
                    }
                    if let Some(start) = view.get_mut(12..16) {
                        start.copy_from_slice(&(offset as i32).to_le_bytes());
                    }
                }
                out.extend_from_slice(&view);
            }
        });
    }

    /// Appends the run ends of the runs that cover slots `slots` of `array`, counted from its
    /// first slot, capped at its length and moved past this array's slots.
    fn push_run_ends(&mut self, array: &ArrayView<'a>, slots: &Range<usize>, width: usize) {
        let (Some(ends), Some(growing), false) =
            (array.child(0), self.children.first_mut(), slots.is_empty())
        else {
            return;
        };
        let (first, last) = (array.run_index(slots.start), array.run_index(slots.end - 1));
        let start = (array.offset() + slots.start) as i64;
        let (len, base) = (slots.len() as i64, self.len as i64);
        growing.extend(0, (last + 1 - first) * width, |out| {
            for run in first..=last {
                let end = (ends.integer(run) - start).min(len);
                push_int(out, base + end, width);
            }
        });
        growing.len += last + 1 - first;
    }

    /// Runs `write`, which appends about `more` bytes, on buffer `i`.
    fn extend(&mut self, i: usize, more: usize, write: impl FnOnce(&mut Vec<u8>)) {
        if let Some(buffer) = self.buffers.get_mut(i) {
            append_to(buffer, more, write);
        }
    }

    /// Bytes of this array's buffers and its children's, validity bitmaps left out.
    fn held(&self) -> usize {
        let own: usize = self.buffers.iter().map(|b| b.0.len()).sum();
        self.children
            .iter()
            .map(GrowingArray::held)
            .fold(own, usize::saturating_add)
    }

    /// The array as it stands, sharing this array's buffers.
    pub fn view(&self) -> FormatResult<ArrayView<'a>> {
        let children = self
            .children
            .iter()
            .map(GrowingArray::view)
            .collect::<FormatResult<_>>()?;
        ArrayView::from_valid_parts(ArrayParts {
            data_type: Some(self.data_type.clone()),
            len: self.len,
            null_count: self.null_count,
            validity: self
                .validity
                .as_ref()
                .filter(|_| self.null_count > 0)
                .map(shared),
            buffers: self.buffers.iter().map(shared).collect(),
            children,
            dictionary: self.dictionary.clone(),
            ..ArrayParts::default()
        })
    }
}

/// For each child of `array` that grows with it, the child slots that slots `slots` of `array`
/// use, by child index. Run ends are not listed: the run-end encoded array writes them itself.
fn child_slots<'s, 'a>(
    storage: Storage,
    array: &'s ArrayView<'a>,
    slots: &Range<usize>,
) -> impl Iterator<Item = (usize, &'s ArrayView<'a>, Range<usize>)> + use<'s, 'a> {
    let same = array.offset() + slots.start..array.offset() + slots.end;
    let spanned = match storage {
        Storage::List(width) => offset(array, same.start, width)..offset(array, same.end, width),
        Storage::FixedSizeList(size) => same.start * size..same.end * size,
        Storage::RunEnd(_) if !slots.is_empty() => {
            array.run_index(slots.start)..array.run_index(slots.end - 1) + 1
        }
        _ => 0..0,
    };
    array
        .children()
        .iter()
        .enumerate()
        .filter_map(move |(i, child)| {
            let range = match storage {
                Storage::Struct | Storage::Union(UnionMode::Sparse) => same.clone(),
                Storage::ListView(_) | Storage::Union(UnionMode::Dense) => 0..child.len(),
                Storage::List(_) | Storage::FixedSizeList(_) => spanned.clone(),
                Storage::RunEnd(_) if i == 1 => spanned.clone(),
                _ => return None,
            };
            Some((i, child, range))
        })
}

/// Offset `j` of `array`'s first buffer, `width` bytes each (0 past its end: an empty array may
/// omit its offsets). Offsets of a validated array are not negative.
fn offset(array: &ArrayView<'_>, j: usize, width: usize) -> usize {
    let value = match width {
        4 => i64::from(read::<i32>(array.buffer(0), j)),
        _ => read::<i64>(array.buffer(0), j),
    };
    usize::try_from(value).unwrap_or(0)
}

/// Bytes a dictionary's validity bitmap may take beyond the bytes its slots hold.
const UNBACKED_BITMAP: usize = 64 * 1024;

/// Bytes of `array`'s buffers and its children's (whole buffers), validity bitmaps left out.
fn held(array: &ArrayView<'_>) -> usize {
    let own: usize = array.buffers().iter().map(|b| b.len()).sum();
    array
        .children()
        .iter()
        .map(held)
        .fold(own, usize::saturating_add)
}

/// `base + added`, if it fits a signed integer of `width` bytes.
fn fits(base: usize, added: usize, width: usize) -> FormatResult<usize> {
    let limit = match width {
        2 => i16::MAX as u64,
        4 => i32::MAX as u64,
        _ => i64::MAX as u64,
    };
    match base.checked_add(added) {
        Some(total) if total as u64 <= limit => Ok(total),
        _ => Err(FormatErrorKind::LimitExceeded {
            what: Limit::AppendedDictionary,
            requested: (base as u64).saturating_add(added as u64),
            limit,
        }
        .into()),
    }
}

/// Appends the low `width` bytes of `value` (checked beforehand to fit them).
fn push_int(out: &mut Vec<u8>, value: i64, width: usize) {
    out.extend_from_slice(value.to_le_bytes().get(..width).unwrap_or_default());
}

/// Bytes `start..end` of `buffer` (empty if they are not all there; validated arrays have them).
fn window(buffer: &[u8], start: usize, end: usize) -> &[u8] {
    buffer.get(start..end).unwrap_or_default()
}

/// The data buffer and byte range of a view whose value is not inline.
pub(super) fn long_view(view: &[u8]) -> Option<(usize, Range<usize>)> {
    let len = usize::try_from(read::<i32>(view, 0)).ok()?;
    if len <= MAX_INLINE {
        return None;
    }
    let buffer = usize::try_from(read::<i32>(view, 2)).ok()?;
    let start = usize::try_from(read::<i32>(view, 3)).ok()?;
    Some((buffer, start..start + len))
}

fn unsupported(what: Feature) -> FormatError {
    FormatErrorKind::Unsupported { what }.into()
}

/// A window over all of `buffer`'s bytes, sharing it.
fn shared<'a>(buffer: &Arc<Grown>) -> Bytes<'a> {
    let len = buffer.0.len();
    let owner: Owner = Arc::clone(buffer) as Owner;
    Bytes::from_owner(owner, 0..len)
}

/// Runs `write`, which appends about `more` bytes, on `buffer`'s vector: in place when nothing
/// else shares it (room for them reserved first, doubling), else on a copy with room for the
/// append and as much again as it holds.
fn append_to(buffer: &mut Arc<Grown>, more: usize, write: impl FnOnce(&mut Vec<u8>)) {
    if let Some(grown) = Arc::get_mut(buffer) {
        grown.0.reserve(more);
        write(&mut grown.0);
        return;
    }
    let old = &buffer.0;
    let room = old
        .len()
        .saturating_mul(2)
        .max(old.len().saturating_add(more));
    let mut copy = Vec::with_capacity(room);
    copy.extend_from_slice(old);
    write(&mut copy);
    *buffer = Arc::new(Grown(copy));
}

/// Writes `bits` LSB-first into `bitmap` from bit `start` on; `bitmap` holds exactly the bytes
/// of its first `start` bits, with any unused high bits of the last byte clear.
fn push_bits(bitmap: &mut Vec<u8>, start: usize, bits: impl Iterator<Item = bool>) {
    for (at, set) in (start..).zip(bits) {
        if at % 8 == 0 {
            bitmap.push(0);
        }
        if let (true, Some(byte)) = (set, bitmap.get_mut(at / 8)) {
            *byte |= 1 << (at % 8);
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;
    use crate::builder::{
        AppendValue, ArrayBuilder, BinaryBuilder, BooleanBuilder, DictionaryBuilder,
        FixedSizeBinaryBuilder, FixedSizeListBuilder, ListBuilder, MapBuilder, NullBuilder,
        PrimitiveBuilder, RunEndBuilder, StringBuilder, StructBuilder, UnionBuilder,
    };
    use crate::ipc::writer::slot_eq;
    use alloc::format;
    use alloc::string::String;

    fn assert_same(got: &ArrayView<'_>, want: &ArrayView<'_>) {
        assert_eq!(got.data_type(), want.data_type());
        assert_eq!(got.len(), want.len(), "{}", want.data_type());
        assert_eq!(got.null_count(), want.null_count(), "{}", want.data_type());
        for i in 0..want.len() {
            assert!(slot_eq(got, i, want, i), "{}: slot {i}", want.data_type());
        }
    }

    /// Words of 1 to 20 bytes: views hold some inline and some in data buffers.
    fn word(i: usize) -> String {
        format!("{}{i}", "w".repeat(i % 19))
    }

    const SLOTS: usize = 40;

    /// Slot `i` of a builder's array for each `i` in `slots`: null when `i % 7 == 3`, else
    /// value `i`.
    fn fill<B: ArrayBuilder>(
        mut builder: B,
        slots: &Range<usize>,
        value: impl Fn(&mut B, usize),
    ) -> ArrayView<'static> {
        for i in slots.clone() {
            if i % 7 == 3 {
                builder.append_null();
            } else {
                value(&mut builder, i);
            }
        }
        builder.finish().unwrap()
    }

    type Int = PrimitiveBuilder<i32>;

    /// Arrays of every layout, nested ones included, each with nulls, holding values `s`.
    fn arrays(s: Range<usize>) -> Vec<ArrayView<'static>> {
        let int = |b: &mut Int, i: usize| b.append_value(i as i32);
        let text = |b: &mut StringBuilder, i: usize| b.append_value(word(i));
        let bytes = |b: &mut BinaryBuilder, i: usize| b.append_value(word(i).as_bytes());
        let mut all = vec![
            fill(NullBuilder::new(), &s, |b, _| b.append_null()),
            fill(Int::new(), &s, int),
            fill(BooleanBuilder::new(), &s, |b, i| b.append_value(i % 3 == 0)),
            fill(StringBuilder::new(), &s, text),
            fill(BinaryBuilder::new_large(), &s, bytes),
            fill(FixedSizeBinaryBuilder::new(3), &s, |b, i| {
                b.append_value(&[i as u8, 1, 2]);
            }),
            fill(StringBuilder::new_view().with_block_size(40), &s, text),
            fill(BinaryBuilder::new_view(), &s, bytes),
            fill(ListBuilder::new(Int::new()), &s, |b, i| {
                b.append_value((0..i % 4).map(|k| k as i32));
            }),
            fill(ListBuilder::new_large(StringBuilder::new()), &s, |b, i| {
                b.append_value((0..i % 3).map(word));
            }),
            fill(ListBuilder::new_view(Int::new()), &s, |b, i| {
                b.append_value((0..i % 4).map(|k| (i + k) as i32));
            }),
            fill(
                ListBuilder::new_large_view(StringBuilder::new_view()),
                &s,
                |b, i| {
                    b.append_value((i..i + i % 3).map(word));
                },
            ),
            fill(
                FixedSizeListBuilder::new(PrimitiveBuilder::<i16>::new(), 3),
                &s,
                |b, i| b.append_value([i as i16, 0, -(i as i16)]),
            ),
            fill(
                MapBuilder::new(StringBuilder::new(), Int::new()),
                &s,
                |b, i| {
                    for k in 0..i % 3 {
                        let (keys, values) = b.entries();
                        keys.append_value(word(k));
                        values.append_value(i as i32);
                    }
                    b.append();
                },
            ),
            fill(
                StructBuilder::new()
                    .with_child("n", Int::new())
                    .with_child("s", StringBuilder::new_view()),
                &s,
                |b, i| {
                    b.field_builder::<Int>(0).unwrap().append_value(i as i32);
                    b.field_builder::<StringBuilder>(1)
                        .unwrap()
                        .append_value(word(i));
                    b.append();
                },
            ),
            fill(RunEndBuilder::new(StringBuilder::new()), &s, |b, i| {
                b.append_value(word(i / 4))
            }),
            fill(
                RunEndBuilder::new(Int::new()).with_run_end_type(DataType::Int16),
                &s,
                |b, i| b.append_value((i / 3) as i32),
            ),
            fill(DictionaryBuilder::new(StringBuilder::new()), &s, |b, i| {
                b.append_value(word(i % 5));
            }),
            fill(
                ListBuilder::new(
                    StructBuilder::new()
                        .with_child("l", ListBuilder::new(StringBuilder::new_view()))
                        .with_child("b", BooleanBuilder::new()),
                ),
                &s,
                |b, i| {
                    for k in 0..i % 3 {
                        let s = b.values();
                        let l = s.field_builder::<ListBuilder<StringBuilder>>(0).unwrap();
                        l.append_value((k..k + i % 4).map(word));
                        let flag = s.field_builder::<BooleanBuilder>(1).unwrap();
                        flag.append_value(k % 2 == 0);
                        s.append();
                    }
                    b.append();
                },
            ),
        ];
        for mode in [UnionMode::Sparse, UnionMode::Dense] {
            // Unions have no nulls of their own: a null slot is a null in a child.
            let mut union = UnionBuilder::new(mode)
                .with_child(2, "n", Int::new())
                .with_child(7, "s", StringBuilder::new_view());
            for i in s.clone() {
                if i % 3 == 0 {
                    union.append::<Int>(2).unwrap().append_value(i as i32);
                } else if i % 7 == 3 {
                    union.append_child(7).unwrap().append_null();
                } else {
                    union
                        .append::<StringBuilder>(7)
                        .unwrap()
                        .append_value(word(i));
                }
            }
            all.push(union.finish().unwrap());
        }
        all
    }

    #[test]
    fn every_type_grows_like_the_whole_array() {
        for whole in arrays(0..SLOTS) {
            // Sliced pieces (offsets other than 0), an empty one among them.
            let cuts = [0, 1, 9, 9, 17, 33, SLOTS - 1, SLOTS];
            let piece = |w: &[usize]| whole.slice(w[0], w[1] - w[0]).unwrap();
            let mut pieces = cuts.windows(2).map(piece);
            let mut growing = GrowingArray::start(&pieces.next().unwrap()).unwrap();
            let mut held = vec![growing.view().unwrap()];
            for piece in pieces {
                growing.append(&piece).unwrap();
                held.push(growing.view().unwrap());
            }
            assert_same(held.last().unwrap(), &whole);
            // Every array handed out still holds what it held.
            for (view, end) in held.iter().zip(&cuts[1..]) {
                assert_same(view, &whole.slice(0, *end).unwrap());
            }
        }
    }

    #[test]
    fn deltas_built_apart_grow_like_the_whole_array() {
        // Each delta its own array, with its own children and values (dense unions and list
        // views append their whole children, so offsets must move past the earlier ones).
        let wholes = arrays(0..3 * SLOTS);
        let parts = [
            arrays(0..SLOTS),
            arrays(SLOTS..2 * SLOTS),
            arrays(2 * SLOTS..3 * SLOTS),
        ];
        for (t, whole) in wholes.iter().enumerate() {
            if whole.dictionary().is_some() {
                continue; // deltas built apart have dictionaries of their own: refused
            }
            let mut growing = GrowingArray::start(&parts[0][t]).unwrap();
            let first = growing.view().unwrap();
            // The second delta sliced: an offset other than 0, its first slot left out.
            let second = &parts[1][t];
            growing
                .append(&second.slice(1, SLOTS - 1).unwrap())
                .unwrap();
            growing.append(&parts[2][t]).unwrap();
            let grown = growing.view().unwrap();
            assert_eq!(grown.len(), 3 * SLOTS - 1, "{}", whole.data_type());
            let slice = |a: &ArrayView<'static>, at, n| a.slice(at, n).unwrap();
            assert_same(&slice(&grown, 0, SLOTS), &slice(whole, 0, SLOTS));
            // Past the first delta, the whole array's slot `SLOTS` was left out.
            let n = 2 * SLOTS - 1;
            assert_same(&slice(&grown, SLOTS, n), &slice(whole, SLOTS + 1, n));
            assert_same(&first, &parts[0][t]);
        }
    }

    #[test]
    fn deltas_grow_the_array_they_were_sliced_from() {
        // Growing an array by a slice of itself: the delta shares the array's buffers.
        for whole in arrays(0..SLOTS) {
            let mut growing = GrowingArray::start(&whole).unwrap();
            let view = growing.view().unwrap();
            growing.append(&view.slice(5, 20).unwrap()).unwrap();
            let grown = growing.view().unwrap();
            assert_eq!(grown.len(), SLOTS + 20);
            assert_same(
                &grown.slice(SLOTS, 20).unwrap(),
                &whole.slice(5, 20).unwrap(),
            );
            assert_same(&view, &whole);
        }
    }

    fn strings(values: &[Option<&str>]) -> ArrayView<'static> {
        let mut builder = StringBuilder::new();
        builder.extend_options(values.iter().copied());
        builder.finish().unwrap()
    }

    #[test]
    fn unshared_buffers_grow_in_place() {
        let mut growing = GrowingArray::start(&strings(&[Some("a")])).unwrap();
        let held = growing.view().unwrap();
        growing.append(&strings(&[Some("b")])).unwrap();
        // `held` shared the buffers: the append copied them, and `held` is as it was.
        assert_eq!((held.len(), held.str_value(0)), (1, "a"));
        assert_eq!(growing.view().unwrap().str_value(1), "b");
        drop(held);

        // Nothing shares them now: appends write into the same allocation while it has room.
        Arc::get_mut(&mut growing.buffers[1]).unwrap().0.reserve(64);
        let before = growing.buffers[1].0.as_ptr();
        for _ in 0..10 {
            growing.append(&strings(&[Some("d")])).unwrap();
        }
        assert_eq!(growing.buffers[1].0.as_ptr(), before, "grew in place");
        assert_eq!(growing.view().unwrap().str_value(11), "d");
    }

    #[test]
    fn appends_that_fail_change_nothing() {
        // Another type.
        let mut growing = GrowingArray::start(&strings(&[Some("a")])).unwrap();
        let ints = ArrayView::from_values([1i8]).unwrap();
        assert!(growing.append(&ints).is_err());
        assert_same(&growing.view().unwrap(), &strings(&[Some("a")]));

        // Run ends past Int16 (32,767 slots).
        let runs = |n: usize| {
            let mut runs = RunEndBuilder::new(PrimitiveBuilder::<i8>::new())
                .with_run_end_type(DataType::Int16);
            for _ in 0..n {
                runs.append_value(1i8);
            }
            runs.finish().unwrap()
        };
        let mut growing = GrowingArray::start(&runs(30_000)).unwrap();
        let err = growing.append(&runs(5_000)).unwrap_err();
        assert!(
            matches!(err.kind, FormatErrorKind::LimitExceeded { .. }),
            "{err:?}"
        );
        assert_same(&growing.view().unwrap(), &runs(30_000));
        growing.append(&runs(2_767)).unwrap();
        assert_eq!(growing.view().unwrap().len(), 32_767);

        // List offsets past i32::MAX in the second child of a struct: the first child, which
        // comes first, does not grow either. (Null items take no memory.)
        let structs = |items: usize| {
            let mut structs = StructBuilder::new()
                .with_child("n", PrimitiveBuilder::<i32>::new())
                .with_child("l", ListBuilder::new(NullBuilder::new()));
            structs
                .field_builder::<PrimitiveBuilder<i32>>(0)
                .unwrap()
                .append_value(7);
            let l = structs
                .field_builder::<ListBuilder<NullBuilder>>(1)
                .unwrap();
            l.values().append_nulls(items);
            l.append();
            structs.append();
            structs.finish().unwrap()
        };
        let big = i32::MAX as usize - 10;
        let mut growing = GrowingArray::start(&structs(big)).unwrap();
        let err = growing.append(&structs(20)).unwrap_err();
        assert!(
            matches!(err.kind, FormatErrorKind::LimitExceeded { .. }),
            "{err:?}"
        );
        let view = growing.view().unwrap();
        assert_eq!((view.len(), view.child(0).unwrap().len()), (1, 1));
        assert_eq!(view.child(1).unwrap().child(0).unwrap().len(), big);
        growing.append(&structs(10)).unwrap();
        assert_eq!(growing.view().unwrap().len(), 2);

        // Values encoded with another dictionary.
        let encoded = |values: &[&str]| {
            let mut builder = DictionaryBuilder::new(StringBuilder::new());
            builder.extend_values(values.iter().copied());
            builder.finish().unwrap()
        };
        let first = encoded(&["x", "y", "x"]);
        let mut growing = GrowingArray::start(&first).unwrap();
        assert!(growing.append(&encoded(&["x"])).is_err());
        assert_same(&growing.view().unwrap(), &first);
        growing.append(&first.slice(1, 2).unwrap()).unwrap();
        assert_eq!(growing.view().unwrap().len(), 5);
    }

    #[test]
    fn layouts_follow_the_type() {
        let list = DataType::List(Arc::new(crate::schema::Field::new(
            "item",
            DataType::Int8,
            true,
        )));
        assert_eq!(Storage::of(&list, None).unwrap(), Storage::List(4));
        assert_eq!(Storage::of(&DataType::Null, None).unwrap(), Storage::Null);
        assert_eq!(
            Storage::of(&DataType::Int64, None).unwrap(),
            Storage::Fixed(8)
        );
        assert!(!Storage::Union(UnionMode::Dense).has_validity());
    }
}
