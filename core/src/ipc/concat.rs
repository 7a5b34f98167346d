//! Appending one array to another of the same type: how a delta dictionary batch grows the
//! dictionary it extends.
//!
//! Two validated arrays enter; one new array leaves, holding the first one's slots then the
//! second one's. Fixed-width values, offsets and bitmaps are copied into new buffers; variable
//! data buffers of view arrays and dictionaries of nested dictionary-encoded values are shared.

use super::dictionary::bitmap;
use crate::array::{ArrayParts, ArrayView, Dictionary};
use crate::bytes::Bytes;
use crate::datatype::{DataType, UnionMode};
use crate::error::{FormatError, FormatErrorKind, FormatResult};
use alloc::sync::Arc;
use alloc::vec;
use alloc::vec::Vec;

fn unsupported(what: &'static str) -> FormatError {
    FormatErrorKind::Unsupported { what }.into()
}

/// The bytes of slots `offset..offset + len` of buffer `i` holding `width`-byte values.
fn slots<'s>(array: &'s ArrayView<'_>, i: usize, width: usize) -> &'s [u8] {
    let start = array.offset() * width;
    array
        .buffer(i)
        .get(start..start + array.len() * width)
        .unwrap_or_default()
}

/// Signed offsets of `width` bytes: read slot `j`, write a value.
fn offset_at(buf: &[u8], j: usize, width: usize) -> i64 {
    let at = j * width;
    match width {
        4 => buf
            .get(at..at + 4)
            .and_then(|b| b.try_into().ok())
            .map_or(0, |b| i64::from(i32::from_le_bytes(b))),
        _ => buf
            .get(at..at + 8)
            .and_then(|b| b.try_into().ok())
            .map_or(0, i64::from_le_bytes),
    }
}

fn push_offset(out: &mut Vec<u8>, value: i64, width: usize) -> FormatResult<()> {
    if width == 4 {
        let value = i32::try_from(value).map_err(|_| FormatErrorKind::LimitExceeded {
            what: "appended dictionary offsets",
            requested: value as u64,
            limit: i32::MAX as u64,
        })?;
        out.extend_from_slice(&value.to_le_bytes());
    } else {
        out.extend_from_slice(&value.to_le_bytes());
    }
    Ok(())
}

/// `a`'s slots followed by `b`'s, as one new array of their common type.
pub fn concat<'a>(a: &ArrayView<'a>, b: &ArrayView<'a>) -> FormatResult<ArrayView<'a>> {
    if a.data_type() != b.data_type() {
        return Err(unsupported("delta dictionary of another type"));
    }
    let len = a.len() + b.len();
    let data_type = a.data_type().clone();
    let mut parts = ArrayParts {
        data_type: Some(data_type.clone()),
        len,
        null_count: a.null_count() + b.null_count(),
        ..ArrayParts::default()
    };
    let logical_nulls = a.dictionary().is_none()
        && matches!(
            data_type,
            DataType::Null | DataType::Union(..) | DataType::RunEndEncoded(_)
        );
    if logical_nulls {
        parts.null_count = 0; // no bitmap: nulls live in the children (Null: every slot)
    } else if parts.null_count > 0 {
        let valid = (0..a.len())
            .map(|i| a.is_valid(i))
            .chain((0..b.len()).map(|i| b.is_valid(i)));
        parts.validity = Some(bitmap(len, valid));
    }
    if let (Some(x), Some(y)) = (a.dictionary(), b.dictionary()) {
        // Nested dictionary-encoded values: the keys join, over the one dictionary they share.
        if x.index_type != y.index_type || !Arc::ptr_eq(&x.values, &y.values) {
            return Err(unsupported(
                "delta of values encoded with different dictionaries",
            ));
        }
        let width = x.index_type.byte_width();
        parts.buffers.push(Bytes::from_vec(
            [slots(a, 0, width), slots(b, 0, width)].concat(),
        ));
        parts.dictionary = Some(Dictionary {
            index_type: x.index_type,
            values: Arc::clone(&x.values),
        });
        return ArrayView::try_new(parts);
    }
    if a.dictionary().is_some() || b.dictionary().is_some() {
        return Err(unsupported(
            "delta of values encoded with different dictionaries",
        ));
    }
    use DataType::*;
    match &data_type {
        Null => {}
        Boolean => {
            let values = (0..a.len())
                .map(|i| a.bool_value(i))
                .chain((0..b.len()).map(|i| b.bool_value(i)));
            parts.buffers.push(bitmap(len, values));
        }
        Binary | Utf8 | LargeBinary | LargeUtf8 => {
            let width = if matches!(data_type, Binary | Utf8) {
                4
            } else {
                8
            };
            let mut offsets = Vec::new();
            let mut data = Vec::new();
            push_offset(&mut offsets, 0, width)?;
            for array in [a, b] {
                for i in 0..array.len() {
                    data.extend_from_slice(array.bytes_value(i));
                    push_offset(&mut offsets, data.len() as i64, width)?;
                }
            }
            parts.buffers.push(Bytes::from_vec(offsets));
            parts.buffers.push(Bytes::from_vec(data));
        }
        BinaryView | Utf8View => {
            // Views of `b` that point into its data buffers move past `a`'s data buffers.
            let shift = a.buffers().len().saturating_sub(1);
            let mut views = slots(a, 0, 16).to_vec();
            for view in slots(b, 0, 16).chunks_exact(16) {
                let mut view: [u8; 16] = view.try_into().unwrap_or_default();
                let inline = i32::from_le_bytes([view[0], view[1], view[2], view[3]]) <= 12;
                if !inline {
                    let index = i32::from_le_bytes([view[8], view[9], view[10], view[11]]);
                    let index = i32::try_from(shift)
                        .ok()
                        .and_then(|s| index.checked_add(s))
                        .ok_or_else(|| unsupported("too many view data buffers"))?;
                    view[8..12].copy_from_slice(&index.to_le_bytes());
                }
                views.extend_from_slice(&view);
            }
            parts.buffers.push(Bytes::from_vec(views));
            parts.buffers.extend(a.buffers().iter().skip(1).cloned());
            parts.buffers.extend(b.buffers().iter().skip(1).cloned());
        }
        List(_) | Map(..) | LargeList(_) => {
            let width = if matches!(data_type, LargeList(_)) {
                8
            } else {
                4
            };
            let (a_end, b_start, b_end) = (
                offset_at(a.buffer(0), a.offset() + a.len(), width),
                offset_at(b.buffer(0), b.offset(), width),
                offset_at(b.buffer(0), b.offset() + b.len(), width),
            );
            let mut offsets = Vec::new();
            if a.buffer(0).is_empty() {
                push_offset(&mut offsets, 0, width)?; // an empty array may omit its offsets
            } else {
                for j in a.offset()..=a.offset() + a.len() {
                    push_offset(&mut offsets, offset_at(a.buffer(0), j, width), width)?;
                }
            }
            for j in b.offset() + 1..=b.offset() + b.len() {
                let value = offset_at(b.buffer(0), j, width) - b_start + a_end;
                push_offset(&mut offsets, value, width)?;
            }
            parts.buffers.push(Bytes::from_vec(offsets));
            let (Some(x), Some(y)) = (a.child(0), b.child(0)) else {
                return Err(unsupported("list without values"));
            };
            let x = x.slice(0, a_end as usize)?;
            let y = y.slice(b_start as usize, (b_end - b_start) as usize)?;
            parts.children.push(concat(&x, &y)?);
        }
        ListView(_) | LargeListView(_) => {
            let width = if matches!(data_type, ListView(_)) {
                4
            } else {
                8
            };
            let (Some(x), Some(y)) = (a.child(0), b.child(0)) else {
                return Err(unsupported("list view without values"));
            };
            let shift = x.len() as i64;
            let mut offsets = slots(a, 0, width).to_vec();
            for j in b.offset()..b.offset() + b.len() {
                push_offset(
                    &mut offsets,
                    offset_at(b.buffer(0), j, width) + shift,
                    width,
                )?;
            }
            parts.buffers.push(Bytes::from_vec(offsets));
            let sizes = [slots(a, 1, width), slots(b, 1, width)].concat();
            parts.buffers.push(Bytes::from_vec(sizes));
            parts.children.push(concat(x, y)?);
        }
        FixedSizeList(_, size) => {
            let size = usize::try_from(*size).unwrap_or(0);
            let (Some(x), Some(y)) = (a.child(0), b.child(0)) else {
                return Err(unsupported("fixed-size list without values"));
            };
            let x = x.slice(a.offset() * size, a.len() * size)?;
            let y = y.slice(b.offset() * size, b.len() * size)?;
            parts.children.push(concat(&x, &y)?);
        }
        Struct(_) => {
            for (x, y) in a.children().iter().zip(b.children()) {
                let x = x.slice(a.offset(), a.len())?;
                let y = y.slice(b.offset(), b.len())?;
                parts.children.push(concat(&x, &y)?);
            }
        }
        Union(_, _, mode) => {
            parts
                .buffers
                .push(Bytes::from_vec([slots(a, 0, 1), slots(b, 0, 1)].concat()));
            if *mode == UnionMode::Dense {
                let mut offsets = slots(a, 1, 4).to_vec();
                for j in 0..b.len() {
                    let (child, slot) = b.union_value(j);
                    let shift = a.child(child).map_or(0, ArrayView::len);
                    push_offset(&mut offsets, (slot + shift) as i64, 4)?;
                }
                parts.buffers.push(Bytes::from_vec(offsets));
                for (x, y) in a.children().iter().zip(b.children()) {
                    parts.children.push(concat(x, y)?);
                }
            } else {
                for (x, y) in a.children().iter().zip(b.children()) {
                    let x = x.slice(a.offset(), a.len())?;
                    let y = y.slice(b.offset(), b.len())?;
                    parts.children.push(concat(&x, &y)?);
                }
            }
        }
        RunEndEncoded(_) => {
            let (Some(ends_type), (ends_a, values_a), (ends_b, values_b)) = (
                a.child(0).map(|e| e.data_type().clone()),
                runs(a)?,
                runs(b)?,
            ) else {
                return Err(unsupported("run-end encoded array without children"));
            };
            let width = ends_type.byte_width().unwrap_or(4);
            let shifted = ends_b.iter().map(|end| end + a.len() as i64);
            let mut ends = Vec::new();
            for end in ends_a.iter().copied().chain(shifted) {
                match width {
                    2 => ends.extend_from_slice(
                        &i16::try_from(end)
                            .map_err(|_| unsupported("run ends past Int16"))?
                            .to_le_bytes(),
                    ),
                    _ => push_offset(&mut ends, end, width)?,
                }
            }
            let run_ends = ArrayView::try_new(ArrayParts {
                data_type: Some(ends_type),
                len: ends_a.len() + ends_b.len(),
                buffers: vec![Bytes::from_vec(ends)],
                ..ArrayParts::default()
            })?;
            parts.children = vec![run_ends, concat(&values_a, &values_b)?];
        }
        other => {
            let width = other
                .byte_width()
                .ok_or_else(|| unsupported("delta dictionary of this type"))?;
            parts.buffers.push(Bytes::from_vec(
                [slots(a, 0, width), slots(b, 0, width)].concat(),
            ));
        }
    }
    ArrayView::try_new(parts)
}

/// The runs covering a run-end encoded array's slots: their ends, counted from its first slot
/// and capped at its length, and the values of those runs.
fn runs<'a>(array: &ArrayView<'a>) -> FormatResult<(Vec<i64>, ArrayView<'a>)> {
    let (Some(ends), Some(values)) = (array.child(0), array.child(1)) else {
        return Err(unsupported("run-end encoded array without children"));
    };
    if array.is_empty() {
        return Ok((Vec::new(), values.slice(0, 0)?));
    }
    let (first, last) = (array.run_index(0), array.run_index(array.len() - 1));
    let offset = array.offset() as i64;
    let capped = (first..=last).map(|r| (ends.integer(r) - offset).min(array.len() as i64));
    Ok((capped.collect(), values.slice(first, last - first + 1)?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::datatype::IntType;

    fn int32(values: &[i32]) -> ArrayView<'static> {
        ArrayView::try_new(ArrayParts {
            data_type: Some(DataType::Int32),
            len: values.len(),
            buffers: vec![Bytes::from_vec(
                values.iter().flat_map(|v| v.to_le_bytes()).collect(),
            )],
            ..ArrayParts::default()
        })
        .unwrap()
    }

    fn keys(keys: &[i8], values: &Arc<ArrayView<'static>>) -> ArrayView<'static> {
        ArrayView::try_new(ArrayParts {
            data_type: Some(DataType::Int32),
            len: keys.len(),
            buffers: vec![Bytes::from_vec(keys.iter().map(|k| *k as u8).collect())],
            dictionary: Some(Dictionary {
                index_type: IntType {
                    bit_width: 8,
                    signed: true,
                },
                values: Arc::clone(values),
            }),
            ..ArrayParts::default()
        })
        .unwrap()
    }

    #[test]
    fn nested_dictionary_keys_join_over_one_shared_dictionary() {
        let values = Arc::new(int32(&[10, 20, 30]));
        let joined = concat(&keys(&[0, 2], &values), &keys(&[1], &values)).unwrap();
        let got: Vec<usize> = (0..3).map(|i| joined.dictionary_index(i)).collect();
        assert_eq!(got, [0, 2, 1]);
        let other = Arc::new(int32(&[10, 20, 30]));
        assert!(concat(&keys(&[0], &values), &keys(&[0], &other)).is_err());
    }
}
