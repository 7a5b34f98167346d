//! The Arrow columnar format's rules over plain byte slices: reading values, and checking that
//! buffers agree with an array's length and type.
//!
//! It uses the data types' integer types and the errors.
//!
//! Both kinds of array view stand on these: [`ArrayView`](crate::array::ArrayView) (with `alloc`), whose
//! buffers may be shared memory, and the fixed-capacity views of [`no_alloc`](crate::no_alloc),
//! which borrow everything from one block. Each function takes the buffers it needs and the slot
//! range `offset..end` it covers; the checks return the same located errors whichever view
//! calls them. Reading never fails: a value past the end of a buffer reads as 0 (the checks
//! rule that out first).

use crate::datatype::IntType;
use crate::error::{FormatError, FormatErrorKind, FormatResult};
use core::ops::Range;

/// A fixed-width little-endian value that can be read from array bytes.
pub trait Native: Copy + Default {
    /// Size in bytes.
    const WIDTH: usize;
    /// Reads the value from exactly `WIDTH` little-endian bytes (default if the length differs).
    fn from_le_slice(bytes: &[u8]) -> Self;
}

macro_rules! native {
    ($($t:ty),*) => {$(
        impl Native for $t {
            const WIDTH: usize = core::mem::size_of::<$t>();
            #[inline(always)]
            fn from_le_slice(bytes: &[u8]) -> Self {
                bytes.try_into().map(<$t>::from_le_bytes).unwrap_or_default()
            }
        }
    )*};
}
native!(i8, i16, i32, i64, i128, u8, u16, u32, u64, f32, f64);

/// An array rule broken at slot (or element) `index`.
pub(crate) fn bad(what: &'static str, index: usize) -> FormatError {
    FormatErrorKind::InvalidArray {
        what,
        index: index as u64,
    }
    .into()
}

/// Value `index` is not UTF-8 from its byte `byte` on.
fn invalid_utf8(index: usize, byte: usize) -> FormatError {
    FormatErrorKind::InvalidUtf8 {
        index: index as u64,
        byte: byte as u64,
    }
    .into()
}

/// `Ok` when `ok`, else [`bad`].
pub(crate) fn need(ok: bool, what: &'static str, index: usize) -> FormatResult<()> {
    if ok { Ok(()) } else { Err(bad(what, index)) }
}

/// Reads element `i` of a buffer of `T`s; 0 past the end (validation rules that out).
#[inline(always)]
pub(crate) fn read<T: Native>(buf: &[u8], i: usize) -> T {
    let start = i.wrapping_mul(T::WIDTH);
    buf.get(start..start.wrapping_add(T::WIDTH))
        .map_or_else(T::default, T::from_le_slice)
}

/// Whether bit `i` of an LSB-first bitmap is set.
#[inline(always)]
pub(crate) fn bit(bitmap: &[u8], i: usize) -> bool {
    bitmap.get(i / 8).is_some_and(|b| b & (1 << (i % 8)) != 0)
}

/// Number of set bits in `bitmap` in `range`.
pub fn count_set_bits(bitmap: &[u8], range: Range<usize>) -> usize {
    let (start, end) = (range.start, range.end);
    // Bit by bit up to the first whole byte and after the last; whole bytes eight at a time.
    let head = start.checked_next_multiple_of(8).unwrap_or(end).min(end);
    let tail = (end - end % 8).max(head);
    let bits = |slots: Range<usize>| slots.filter(|i| bit(bitmap, *i)).count();
    let mut chunks = bitmap
        .get(head / 8..tail / 8)
        .unwrap_or_default()
        .chunks_exact(8);
    let words = (&mut chunks).map(|c| u64::from_le_bytes(c.try_into().unwrap_or_default()));
    let whole = words.map(|w| w.count_ones() as usize).sum::<usize>();
    let rest = chunks.remainder().iter().map(|b| b.count_ones() as usize);
    bits(start..head) + whole + rest.sum::<usize>() + bits(tail..end)
}

/// Element `j` of a buffer of `int`s as an i64: the one reading of an integer whose type is
/// known only when read, which run ends, dictionary keys, [`ArrayView::integer`] and the JSON
/// plan's leaves all call.
///
/// `None` when no i64 holds the value: a UInt64 above `i64::MAX`, or `int` not an integer of 8,
/// 16, 32 or 64 bits (`None`, or a width no schema holds). Checked rather than wrapped or
/// saturated, as any number given instead would read as a different key or run end. Run ends
/// are Int16, Int32 or Int64 (the columnar format), so validated ones are always `Some`; a
/// dictionary key without an i64 indexes nothing ([`index_at`]); [`ArrayView::integer`], public,
/// reads it as 0.
///
/// [`ArrayView::integer`]: crate::array::ArrayView::integer
#[inline(always)]
pub(crate) fn integer_at(buf: &[u8], j: usize, int: Option<IntType>) -> Option<i64> {
    let IntType { bit_width, signed } = int?;
    Some(match (bit_width, signed) {
        (8, true) => read::<i8>(buf, j).into(),
        (16, true) => read::<i16>(buf, j).into(),
        (32, true) => read::<i32>(buf, j).into(),
        (64, true) => read::<i64>(buf, j),
        (8, false) => read::<u8>(buf, j).into(),
        (16, false) => read::<u16>(buf, j).into(),
        (32, false) => read::<u32>(buf, j).into(),
        (64, false) => return i64::try_from(read::<u64>(buf, j)).ok(),
        _ => return None,
    })
}

/// Dictionary index `j` of a keys buffer of `index_type`, by [`integer_at`]: `usize::MAX`, past
/// every dictionary, when the key is negative or has no index (validation refuses such a key
/// in a valid slot).
#[inline(always)]
pub(crate) fn index_at(keys: &[u8], j: usize, index_type: Option<IntType>) -> usize {
    integer_at(keys, j, index_type)
        .and_then(|key| usize::try_from(key).ok())
        .unwrap_or(usize::MAX)
}

/// The bytes of view `j` of a binary or string view array; `data(k)` is variadic buffer `k`.
#[inline(always)]
pub(crate) fn view_bytes<'d>(
    views: &'d [u8],
    j: usize,
    data: impl Fn(usize) -> &'d [u8],
) -> &'d [u8] {
    let view = views.get(j * 16..j * 16 + 16).unwrap_or_default();
    let len = read::<i32>(view, 0) as usize;
    if len <= 12 {
        view.get(4..4 + len).unwrap_or_default()
    } else {
        let start = read::<i32>(view, 3) as usize;
        data(read::<i32>(view, 2) as usize)
            .get(start..start + len)
            .unwrap_or_default()
    }
}

/// For union slot `j`: the index of the child its type id selects (0 if undeclared) and its
/// slot in that child (`offsets` for a dense union, else `j`).
#[inline(always)]
pub(crate) fn union_slot(
    type_ids: &[u8],
    offsets: Option<&[u8]>,
    j: usize,
    child_of: impl Fn(i8) -> Option<usize>,
) -> (usize, usize) {
    let child = child_of(read::<i8>(type_ids, j)).unwrap_or(0);
    let slot = offsets.map_or(j, |o| read::<i32>(o, j) as usize);
    (child, slot)
}

/// The index of the run holding logical slot `logical`: the first of `runs` run ends
/// (`run_end(k)`) greater than it.
pub(crate) fn run_index(run_end: impl Fn(usize) -> i64, runs: usize, logical: usize) -> usize {
    let logical = logical as i64;
    let (mut lo, mut hi) = (0, runs);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if run_end(mid) <= logical {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    lo
}

/// The validity bitmap covers `offset..end` and has exactly `null_count` clear bits there; no
/// bitmap means no nulls.
pub(crate) fn check_nulls(
    validity: Option<&[u8]>,
    offset: usize,
    end: usize,
    null_count: usize,
) -> FormatResult<()> {
    match validity {
        Some(bitmap) => {
            need(
                bitmap.len() >= end.div_ceil(8),
                "validity bitmap too short",
                end,
            )?;
            let valid = count_set_bits(bitmap, offset..end);
            need(
                end - offset - valid == null_count,
                "null count disagrees with validity bitmap",
                null_count,
            )
        }
        None => need(
            null_count == 0,
            "nulls declared without a validity bitmap",
            0,
        ),
    }
}

/// `buffer` holds at least `end` values of `width` bytes.
pub(crate) fn check_fixed(buffer: &[u8], width: usize, end: usize) -> FormatResult<()> {
    let needed = end
        .checked_mul(width)
        .ok_or_else(|| bad("buffer size overflows", end))?;
    need(
        buffer.len() >= needed,
        "buffer too short for the array length",
        end,
    )
}

/// Offsets `offset..=end` are non-decreasing, start ≥ 0 and end ≤ `limit` (an empty array may
/// omit its offsets).
///
/// One branch-free pass over neighbouring pairs answers whether any pair decreases (it
/// vectorizes); only a broken buffer is walked again to name the first offending slot.
pub(crate) fn check_offsets<O: Native + Into<i64>>(
    offsets: &[u8],
    offset: usize,
    end: usize,
    limit: usize,
) -> FormatResult<()> {
    if offset == end && offsets.is_empty() {
        return Ok(());
    }
    check_fixed(offsets, O::WIDTH, end + 1)?;
    let first: i64 = read::<O>(offsets, offset).into();
    need(first >= 0, "negative offset", offset)?;
    let slots = offsets
        .get(offset * O::WIDTH..(end + 1) * O::WIDTH)
        .unwrap_or_default();
    let value = |c: &[u8]| -> i64 { O::from_le_slice(c).into() };
    let next = slots.get(O::WIDTH..).unwrap_or_default();
    let pairs = core::iter::zip(slots.chunks_exact(O::WIDTH), next.chunks_exact(O::WIDTH));
    let decrease = |found: bool, (p, c)| found | (value(c) < value(p));
    if pairs.clone().fold(false, decrease) {
        for (i, (p, c)) in (offset + 1..).zip(pairs) {
            need(value(c) >= value(p), "offsets decrease", i)?;
        }
    }
    let last: i64 = read::<O>(offsets, end).into();
    need(
        usize::try_from(last).is_ok_and(|p| p <= limit),
        "offset past the end of the values",
        end,
    )
}

/// The values of slots `offset..end` (checked offsets into `data`) are UTF-8, and no value
/// boundary splits a character. ASCII text (the common case) is settled by one pass over its
/// bytes: it has no multi-byte characters to split.
pub(crate) fn check_utf8<O: Native + Into<i64>>(
    offsets: &[u8],
    data: &[u8],
    offset: usize,
    end: usize,
) -> FormatResult<()> {
    if offset == end {
        return Ok(());
    }
    let first = read::<O>(offsets, offset).into() as usize;
    let last = read::<O>(offsets, end).into() as usize;
    let text = data.get(first..last).unwrap_or_default();
    if text.is_ascii() {
        return Ok(());
    }
    core::str::from_utf8(text).map_err(|e| {
        let at = first + e.valid_up_to();
        // The value holding that byte: the first slot (offsets do not decrease) ending past it,
        // found as a run is among its run ends.
        let slot_end = |k: usize| read::<O>(offsets, offset + k + 1).into();
        let slot = offset + run_index(slot_end, end - offset - 1, at);
        let start = read::<O>(offsets, slot).into() as usize;
        invalid_utf8(slot, at.saturating_sub(start))
    })?;
    for i in offset..end {
        let at = read::<O>(offsets, i).into() as usize - first;
        // A boundary may not fall on a UTF-8 continuation byte (0b10xx_xxxx).
        let boundary = text.get(at).is_none_or(|b| (*b as i8) >= -0x40);
        need(boundary, "value boundary splits a UTF-8 character", i)?;
    }
    Ok(())
}

/// Views `offset..end` lie in their variadic buffers (`data(k)`, `None` past the last), agree
/// with their prefixes, and are UTF-8 when `utf8`.
pub(crate) fn check_views<'d>(
    views: &[u8],
    offset: usize,
    end: usize,
    utf8: bool,
    data: impl Fn(usize) -> Option<&'d [u8]>,
) -> FormatResult<()> {
    check_fixed(views, 16, end)?;
    for i in offset..end {
        let view = views.get(i * 16..i * 16 + 16).unwrap_or_default();
        let len = read::<i32>(view, 0);
        let len = usize::try_from(len).map_err(|_| bad("negative view length", i))?;
        let value = if len <= 12 {
            view.get(4..4 + len).unwrap_or_default()
        } else {
            let buffer = usize::try_from(read::<i32>(view, 2))
                .map_err(|_| bad("negative view buffer index", i))?;
            let start = usize::try_from(read::<i32>(view, 3))
                .map_err(|_| bad("negative view offset", i))?;
            let data = data(buffer).ok_or_else(|| bad("view buffer index out of range", i))?;
            let value = start
                .checked_add(len)
                .and_then(|e| data.get(start..e))
                .ok_or_else(|| bad("view past the end of its buffer", i))?;
            need(
                view.get(4..8) == value.get(..4),
                "view prefix differs from its data",
                i,
            )?;
            value
        };
        if utf8 {
            core::str::from_utf8(value).map_err(|e| invalid_utf8(i, e.valid_up_to()))?;
        }
    }
    Ok(())
}

/// List views `offset..end` (offsets and sizes of `O`) lie within a child of `child_len` slots.
pub(crate) fn check_list_views<O: Native + Into<i64>>(
    offsets: &[u8],
    sizes: &[u8],
    offset: usize,
    end: usize,
    child_len: usize,
) -> FormatResult<()> {
    check_fixed(offsets, O::WIDTH, end)?;
    check_fixed(sizes, O::WIDTH, end)?;
    let child_len = child_len as i64;
    for i in offset..end {
        let start: i64 = read::<O>(offsets, i).into();
        let size: i64 = read::<O>(sizes, i).into();
        need(
            start >= 0 && size >= 0,
            "negative list view offset or size",
            i,
        )?;
        need(
            start.checked_add(size).is_some_and(|e| e <= child_len),
            "list view past the end of its child",
            i,
        )?;
    }
    Ok(())
}

/// Union slots `offset..end`: every type id is declared (`child_of`), and a dense union's
/// offsets (`offsets`) lie within the selected child (`child_len`).
pub(crate) fn check_union(
    type_ids: &[u8],
    offsets: Option<&[u8]>,
    offset: usize,
    end: usize,
    child_of: impl Fn(i8) -> Option<usize>,
    child_len: impl Fn(usize) -> usize,
) -> FormatResult<()> {
    check_fixed(type_ids, 1, end)?;
    if let Some(offsets) = offsets {
        check_fixed(offsets, 4, end)?;
    }
    for i in offset..end {
        let child = child_of(read::<i8>(type_ids, i))
            .ok_or_else(|| bad("union type id not declared by the type", i))?;
        if let Some(offsets) = offsets {
            let slot = read::<i32>(offsets, i);
            need(
                usize::try_from(slot).is_ok_and(|o| o < child_len(child)),
                "dense union offset out of range",
                i,
            )?;
        }
    }
    Ok(())
}

/// Run ends (`run_end(k)` for `k < runs`) increase strictly and reach `end` (unless the array
/// is empty).
pub(crate) fn check_run_ends(
    run_end: impl Fn(usize) -> i64,
    runs: usize,
    len: usize,
    end: usize,
) -> FormatResult<()> {
    let mut prev = 0i64;
    for i in 0..runs {
        let cur = run_end(i);
        need(cur > prev, "run ends not strictly increasing", i)?;
        prev = cur;
    }
    need(
        len == 0 || usize::try_from(prev).is_ok_and(|p| p >= end),
        "run ends stop before the array ends",
        end,
    )
}

/// The valid slots `offset..end` of a dictionary-encoded array index a dictionary of `values`
/// entries.
///
/// When every slot's key, null or not, is below `values` (writers leave 0 under a null), one
/// branch-free pass for the largest key settles it (it vectorizes); otherwise each valid slot
/// is checked to name the first bad one.
pub(crate) fn check_dictionary_keys(
    keys: &[u8],
    validity: Option<&[u8]>,
    offset: usize,
    end: usize,
    index_type: IntType,
    values: usize,
) -> FormatResult<()> {
    check_fixed(keys, index_type.byte_width(), end)?;
    // The largest key read as unsigned: a negative key becomes at least 2^(width - 1), so the
    // bound is kept below that for signed keys.
    let largest = match index_type.bit_width {
        8 => largest::<u8>(keys, offset, end, u64::from),
        16 => largest::<u16>(keys, offset, end, u64::from),
        32 => largest::<u32>(keys, offset, end, u64::from),
        64 => largest::<u64>(keys, offset, end, |k| k),
        _ => u64::MAX,
    };
    let bound = match index_type.signed {
        true => 1u64 << (index_type.bit_width.clamp(1, 64) - 1),
        false => u64::MAX,
    };
    if offset == end || largest < (values as u64).min(bound) {
        return Ok(());
    }
    for j in offset..end {
        if validity.is_none_or(|v| bit(v, j)) {
            let key = index_at(keys, j, Some(index_type));
            need(key < values, "dictionary index out of range", j - offset)?;
        }
    }
    Ok(())
}

/// The largest of values `offset..end` of a buffer of `K`s, widened by `wide` (0 when empty).
#[inline(always)]
fn largest<K: Native>(keys: &[u8], offset: usize, end: usize, wide: impl Fn(K) -> u64) -> u64 {
    keys.get(offset * K::WIDTH..end * K::WIDTH)
        .unwrap_or_default()
        .chunks_exact(K::WIDTH)
        .fold(0, |m, c| m.max(wide(K::from_le_slice(c))))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::FormatErrorKind;
    use std::vec::Vec;

    /// The rule and slot of a refusal, `None` for `Ok`.
    fn refusal(result: FormatResult<()>) -> Option<(&'static str, u64)> {
        match result.err()?.kind {
            FormatErrorKind::InvalidArray { what, index } => Some((what, index)),
            FormatErrorKind::InvalidUtf8 { index, .. } => Some(("invalid UTF-8", index)),
            other => panic!("unexpected {other:?}"),
        }
    }

    fn le<T: Copy>(values: &[T], bytes: impl Fn(T) -> Vec<u8>) -> Vec<u8> {
        values.iter().flat_map(|v| bytes(*v)).collect()
    }

    #[test]
    fn the_first_decreasing_offset_is_named_after_the_fast_pass() {
        let mut offsets: Vec<i32> = (0..1000).collect();
        let bytes = le(&offsets, |v| v.to_le_bytes().to_vec());
        assert_eq!(refusal(check_offsets::<i32>(&bytes, 0, 999, 999)), None);
        assert_eq!(refusal(check_offsets::<i32>(&bytes, 10, 999, 999)), None);
        offsets[700] = 698;
        offsets[900] = 0;
        let bytes = le(&offsets, |v| v.to_le_bytes().to_vec());
        let decrease = Some(("offsets decrease", 700));
        assert_eq!(refusal(check_offsets::<i32>(&bytes, 0, 999, 999)), decrease);
        // A slice that ends before the bad pair, or starts after it up to the next one.
        assert_eq!(refusal(check_offsets::<i32>(&bytes, 0, 699, 999)), None);
        assert_eq!(
            refusal(check_offsets::<i32>(&bytes, 700, 999, 999)),
            Some(("offsets decrease", 900))
        );
        let large = le(&[0i64, 5, 4], |v| v.to_le_bytes().to_vec());
        assert_eq!(
            refusal(check_offsets::<i64>(&large, 0, 2, 5)),
            Some(("offsets decrease", 2))
        );
    }

    #[test]
    fn utf8_boundaries_are_checked_unless_the_text_is_ascii() {
        let offsets = |o: &[i32]| le(o, |v| v.to_le_bytes().to_vec());
        let text = "ab\u{e9}cd".as_bytes();
        assert_eq!(
            refusal(check_utf8::<i32>(&offsets(&[0, 2, 4, 6]), text, 0, 3)),
            None
        );
        assert_eq!(
            refusal(check_utf8::<i32>(&offsets(&[0, 3, 6]), text, 0, 2)),
            Some(("value boundary splits a UTF-8 character", 1))
        );
        assert_eq!(
            refusal(check_utf8::<i32>(&offsets(&[0, 2, 3]), b"ab\xff", 0, 2)),
            Some(("invalid UTF-8", 1))
        );
        // The value and the byte within it, past empty values and across a slice's offset.
        let text = "ab\u{e9}\u{e9}x".as_bytes();
        let mut bad = text.to_vec();
        bad[5] = 0xFF; // the second byte of the second é
        let bounds = offsets(&[0, 1, 1, 2, 2, 7, 7]);
        let err = check_utf8::<i32>(&bounds, &bad, 1, 6).unwrap_err();
        assert_eq!(err.kind, FormatErrorKind::InvalidUtf8 { index: 4, byte: 2 });
        assert_eq!(
            std::string::ToString::to_string(&err.kind),
            "invalid UTF-8 in row 4, at byte 2 of the value"
        );
        assert!(check_utf8::<i32>(&bounds, text, 1, 6).is_ok());
        assert_eq!(
            refusal(check_utf8::<i32>(&offsets(&[0, 1, 3]), b"abc", 0, 2)),
            None
        );
    }

    #[test]
    fn keys_under_nulls_may_be_anything_and_negative_keys_are_refused() {
        let int = |bit_width, signed| IntType { bit_width, signed };
        // Valid slots 0, 1, 3: slot 2 (null) holds 200, past the dictionary of 4.
        let validity = [0b1011u8];
        for (width, signed) in [(8, false), (16, true), (32, true), (64, false)] {
            let keys: Vec<u8> = [3u64, 0, 200, 1]
                .iter()
                .flat_map(|k| k.to_le_bytes()[..width / 8].to_vec())
                .collect();
            let check = |validity, values| {
                refusal(check_dictionary_keys(
                    &keys,
                    validity,
                    0,
                    4,
                    int(width as u8, signed),
                    values,
                ))
            };
            assert_eq!(check(Some(&validity[..]), 4), None, "{width}");
            assert_eq!(
                check(None, 4),
                Some(("dictionary index out of range", 2)),
                "{width}"
            );
            assert_eq!(
                check(Some(&validity[..]), 3),
                Some(("dictionary index out of range", 0)),
                "{width}"
            );
        }
        // -1 as an i8 key is 255 unsigned: refused even by a dictionary of 300 entries.
        let keys = [0u8, 0xFF];
        assert_eq!(
            refusal(check_dictionary_keys(&keys, None, 0, 2, int(8, true), 300)),
            Some(("dictionary index out of range", 1))
        );
        assert_eq!(
            refusal(check_dictionary_keys(&keys, None, 0, 2, int(8, false), 300)),
            None
        );
        // A slice reports the slot within it.
        assert_eq!(
            refusal(check_dictionary_keys(&keys, None, 1, 2, int(8, true), 2)),
            Some(("dictionary index out of range", 0))
        );
    }
}
