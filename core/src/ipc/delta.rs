//! Growing a dictionary in place as delta dictionary batches arrive.
//!
//! A delta batch appends values to the dictionary it extends. Copying the whole dictionary at
//! every delta (what [`concat`](super::concat::concat) does) allocates in proportion to the
//! square of the number of deltas. A [`GrowingDictionary`] keeps the dictionary's buffers instead
//! as owned vectors with room to spare, and appends each delta's values to them where they lie;
//! vectors grow by doubling, so the bytes allocated stay linear (amortized) in the dictionary's
//! final size.
//!
//! Delta values enter as a validated [`ArrayView`]; the dictionary leaves as a new [`ArrayView`]
//! whose buffers share the vectors. A vector that an array the caller still holds (an earlier
//! batch's dictionary) shares is copied once before the append, so arrays handed out never
//! change; only when the caller has let them go does the append happen in place.
//!
//! Fixed-width values, booleans and variable-size binary and strings (`Binary`, `Utf8`,
//! `LargeBinary`, `LargeUtf8`) grow in place, with or without nulls. Other types (nested types,
//! views, unions, run-end encoded and dictionary-encoded values) are left to `concat`.

use crate::array::{ArrayParts, ArrayView};
use crate::bytes::{Bytes, Owner};
use crate::datatype::DataType;
use crate::error::{FormatError, FormatErrorKind, FormatResult};
use alloc::sync::Arc;
use alloc::vec::Vec;

/// One buffer of a growing dictionary: owned bytes, with spare capacity, that arrays share.
#[derive(Debug, Default)]
struct Grown(Vec<u8>);

impl AsRef<[u8]> for Grown {
    fn as_ref(&self) -> &[u8] {
        &self.0
    }
}

/// How a type's values lie in its buffers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Values {
    /// One buffer of values `width` bytes each.
    Fixed(usize),
    /// One bitmap, a bit per value (`Boolean`).
    Bits,
    /// Offsets of `width` bytes (`i32` or `i64`), then the values' bytes.
    Variable(usize),
}

impl Values {
    /// The layout of `data_type`, if it is one that grows in place.
    fn of(data_type: &DataType) -> Option<Values> {
        use DataType::*;
        match data_type {
            Boolean => Some(Values::Bits),
            Binary | Utf8 => Some(Values::Variable(4)),
            LargeBinary | LargeUtf8 => Some(Values::Variable(8)),
            Null | BinaryView | Utf8View | List(_) | LargeList(_) | ListView(_)
            | LargeListView(_) | FixedSizeList(..) | Map(..) | Struct(_) | Union(..)
            | RunEndEncoded(_) => None,
            other => other.byte_width().map(Values::Fixed),
        }
    }
}

/// A dictionary that delta batches extend in place; see the module docs.
#[derive(Debug, Clone)]
pub(crate) struct GrowingDictionary {
    data_type: DataType,
    values: Values,
    len: usize,
    null_count: usize,
    /// The validity bitmap (`len` bits), once any value has been null.
    validity: Option<Arc<Grown>>,
    /// Fixed-width values, the boolean bitmap, or the offsets (starting at 0).
    first: Arc<Grown>,
    /// The values' bytes of variable-size types; empty otherwise.
    data: Arc<Grown>,
}

impl GrowingDictionary {
    /// A growable copy of `dictionary`, or `None` when its type does not grow in place.
    pub fn start(dictionary: &ArrayView<'_>) -> FormatResult<Option<GrowingDictionary>> {
        let Some(values) = Values::of(dictionary.data_type()) else {
            return Ok(None);
        };
        if dictionary.dictionary().is_some() {
            return Ok(None);
        }
        let first = match values {
            Values::Variable(width) => alloc::vec![0; width],
            Values::Fixed(_) | Values::Bits => Vec::new(),
        };
        let mut growing = GrowingDictionary {
            data_type: dictionary.data_type().clone(),
            values,
            len: 0,
            null_count: 0,
            validity: None,
            first: Arc::new(Grown(first)),
            data: Arc::default(),
        };
        growing.append(dictionary)?;
        Ok(Some(growing))
    }

    /// Appends the slots of `delta`, which must have the dictionary's type. Nothing changes
    /// when it fails.
    pub fn append(&mut self, delta: &ArrayView<'_>) -> FormatResult<()> {
        let data_bytes = self.check(delta)?;
        if delta.null_count() > 0 || self.validity.is_some() {
            let len = self.len;
            let validity = self.validity.get_or_insert_with(|| {
                let mut bits = Vec::new();
                push_bits(&mut bits, 0, core::iter::repeat_n(true, len));
                Arc::new(Grown(bits))
            });
            let valid = (0..delta.len()).map(|i| delta.is_valid(i));
            append_to(validity, delta.len().div_ceil(8), |bits| {
                push_bits(bits, len, valid);
            });
        }
        let (start, end) = (delta.offset(), delta.offset() + delta.len());
        match self.values {
            Values::Fixed(width) => {
                let bytes = delta.buffer(0).get(start * width..end * width);
                let bytes = bytes.unwrap_or_default();
                append_to(&mut self.first, bytes.len(), |out| {
                    out.extend_from_slice(bytes);
                });
            }
            Values::Bits => {
                let len = self.len;
                let bits = (0..delta.len()).map(|i| delta.bool_value(i));
                append_to(&mut self.first, delta.len().div_ceil(8), |out| {
                    push_bits(out, len, bits);
                });
            }
            Values::Variable(width) => {
                let mut end_offset = self.data.0.len();
                append_to(&mut self.data, data_bytes, |out| {
                    for i in 0..delta.len() {
                        out.extend_from_slice(delta.bytes_value(i));
                    }
                });
                append_to(&mut self.first, delta.len() * width, |out| {
                    for i in 0..delta.len() {
                        end_offset += delta.bytes_value(i).len();
                        // Checked in `check`: every offset fits the width.
                        let bytes = (end_offset as u64).to_le_bytes();
                        out.extend_from_slice(bytes.get(..width).unwrap_or_default());
                    }
                });
            }
        }
        self.len += delta.len();
        self.null_count += delta.null_count();
        Ok(())
    }

    /// Whether `delta` can be appended; returns how many bytes of values it adds to a
    /// variable-size type.
    fn check(&self, delta: &ArrayView<'_>) -> FormatResult<usize> {
        if *delta.data_type() != self.data_type {
            return Err(unsupported("delta dictionary of another type"));
        }
        if delta.dictionary().is_some() {
            return Err(unsupported(
                "delta of values encoded with different dictionaries",
            ));
        }
        let Values::Variable(width) = self.values else {
            return Ok(0);
        };
        let added: usize = (0..delta.len()).map(|i| delta.bytes_value(i).len()).sum();
        let limit = if width == 4 {
            i32::MAX as u64
        } else {
            i64::MAX as u64
        };
        let total = (self.data.0.len() as u64).saturating_add(added as u64);
        if total > limit {
            return Err(FormatErrorKind::LimitExceeded {
                what: "appended dictionary offsets",
                requested: total,
                limit,
            }
            .into());
        }
        Ok(added)
    }

    /// The dictionary as it stands, sharing this dictionary's buffers.
    pub fn view<'a>(&self) -> FormatResult<ArrayView<'a>> {
        let mut buffers = alloc::vec![shared(&self.first)];
        if let Values::Variable(_) = self.values {
            buffers.push(shared(&self.data));
        }
        ArrayView::try_new(ArrayParts {
            data_type: Some(self.data_type.clone()),
            len: self.len,
            null_count: self.null_count,
            validity: self
                .validity
                .as_ref()
                .filter(|_| self.null_count > 0)
                .map(shared),
            buffers,
            ..ArrayParts::default()
        })
    }
}

fn unsupported(what: &'static str) -> FormatError {
    FormatErrorKind::Unsupported { what }.into()
}

/// A window over all of `buffer`'s bytes, sharing it.
fn shared<'a>(buffer: &Arc<Grown>) -> Bytes<'a> {
    let len = buffer.0.len();
    let owner: Owner = Arc::clone(buffer) as Owner;
    Bytes::from_owner(owner, 0..len)
}

/// Runs `write`, which appends about `more` bytes, on `buffer`'s vector: in place when nothing
/// else shares it, else on a copy with room for the append and as much again as it holds.
fn append_to(buffer: &mut Arc<Grown>, more: usize, write: impl FnOnce(&mut Vec<u8>)) {
    if let Some(grown) = Arc::get_mut(buffer) {
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
    use crate::ipc::concat::concat;
    use crate::ipc::dictionary::bitmap;
    use alloc::vec;

    fn strings(values: &[Option<&str>]) -> ArrayView<'static> {
        let mut offsets = 0i32.to_le_bytes().to_vec();
        let mut data = Vec::new();
        for v in values {
            data.extend_from_slice(v.unwrap_or_default().as_bytes());
            offsets.extend_from_slice(&(data.len() as i32).to_le_bytes());
        }
        let nulls = values.iter().filter(|v| v.is_none()).count();
        ArrayView::try_new(ArrayParts {
            data_type: Some(DataType::Utf8),
            len: values.len(),
            null_count: nulls,
            validity: (nulls > 0).then(|| bitmap(values.len(), values.iter().map(Option::is_some))),
            buffers: vec![Bytes::from_vec(offsets), Bytes::from_vec(data)],
            ..ArrayParts::default()
        })
        .unwrap()
    }

    fn assert_same(a: &ArrayView<'_>, b: &ArrayView<'_>) {
        assert_eq!(a.len(), b.len());
        assert_eq!(a.null_count(), b.null_count());
        for i in 0..a.len() {
            assert_eq!(a.is_valid(i), b.is_valid(i), "slot {i}");
            assert_eq!(a.bytes_value(i), b.bytes_value(i), "slot {i}");
        }
    }

    #[test]
    fn appends_match_concat_with_and_without_nulls() {
        let parts = [
            strings(&[Some("a"), Some("bc")]),
            strings(&[Some("d")]),
            strings(&[None, Some(""), Some("efg")]),
            strings(&[Some("h"); 9]),
            strings(&[]),
        ];
        let mut growing = GrowingDictionary::start(&parts[0]).unwrap().unwrap();
        let mut expected = parts[0].clone();
        for part in &parts[1..] {
            growing.append(part).unwrap();
            expected = concat(&expected, part).unwrap();
            assert_same(&growing.view().unwrap(), &expected);
        }
    }

    #[test]
    fn sliced_deltas_and_fixed_width_values() {
        let ints = |v: &[i16]| {
            ArrayView::try_new(ArrayParts {
                data_type: Some(DataType::Int16),
                len: v.len(),
                buffers: vec![Bytes::from_vec(
                    v.iter().flat_map(|x| x.to_le_bytes()).collect(),
                )],
                ..ArrayParts::default()
            })
            .unwrap()
        };
        let mut growing = GrowingDictionary::start(&ints(&[1, 2])).unwrap().unwrap();
        growing
            .append(&ints(&[7, 3, 4, 8]).slice(1, 2).unwrap())
            .unwrap();
        let view = growing.view().unwrap();
        let got: Vec<i16> = (0..view.len()).map(|i| view.value::<i16>(i)).collect();
        assert_eq!(got, [1, 2, 3, 4]);

        let words = strings(&[Some("x"), Some("yy"), Some("zzz")]);
        let mut growing = GrowingDictionary::start(&words.slice(1, 2).unwrap())
            .unwrap()
            .unwrap();
        growing.append(&words.slice(0, 1).unwrap()).unwrap();
        let view = growing.view().unwrap();
        assert_eq!(
            (view.str_value(0), view.str_value(1), view.str_value(2)),
            ("yy", "zzz", "x")
        );
    }

    #[test]
    fn booleans_grow_across_byte_boundaries() {
        let bools = |v: &[bool]| {
            ArrayView::try_new(ArrayParts {
                data_type: Some(DataType::Boolean),
                len: v.len(),
                buffers: vec![bitmap(v.len(), v.iter().copied())],
                ..ArrayParts::default()
            })
            .unwrap()
        };
        let mut growing = GrowingDictionary::start(&bools(&[true; 7]))
            .unwrap()
            .unwrap();
        growing.append(&bools(&[false, true])).unwrap();
        growing.append(&bools(&[true, false, true])).unwrap();
        let view = growing.view().unwrap();
        let got: Vec<bool> = (0..view.len()).map(|i| view.bool_value(i)).collect();
        let mut expected = vec![true; 7];
        expected.extend([false, true, true, false, true]);
        assert_eq!(got, expected);
    }

    #[test]
    fn arrays_handed_out_never_change_and_unshared_buffers_grow_in_place() {
        let mut growing = GrowingDictionary::start(&strings(&[Some("a")]))
            .unwrap()
            .unwrap();
        let held = growing.view().unwrap();
        growing.append(&strings(&[Some("b")])).unwrap();
        // `held` shared the buffers: the append copied them, and `held` is as it was.
        assert_eq!((held.len(), held.str_value(0)), (1, "a"));
        assert_eq!(growing.view().unwrap().str_value(1), "b");
        drop(held);

        // Nothing shares them now: appends write into the same allocation while it has room.
        Arc::get_mut(&mut growing.data).unwrap().0.reserve(64);
        let before = growing.data.0.as_ptr();
        for _ in 0..10 {
            growing.append(&strings(&[Some("d")])).unwrap();
        }
        assert_eq!(growing.data.0.as_ptr(), before, "grew in place");
        assert_eq!(growing.view().unwrap().str_value(11), "d");
    }

    #[test]
    fn a_delta_of_another_type_fails_and_changes_nothing() {
        let mut growing = GrowingDictionary::start(&strings(&[Some("a")]))
            .unwrap()
            .unwrap();
        let ints = ArrayView::try_new(ArrayParts {
            data_type: Some(DataType::Int8),
            len: 1,
            buffers: vec![Bytes::from_vec(vec![1])],
            ..ArrayParts::default()
        })
        .unwrap();
        assert!(growing.append(&ints).is_err());
        assert_eq!(growing.view().unwrap().len(), 1);
    }

    #[test]
    fn nested_types_are_left_to_concat() {
        let list = DataType::List(Arc::new(crate::schema::Field::new(
            "item",
            DataType::Int8,
            true,
        )));
        assert_eq!(Values::of(&list), None);
        assert_eq!(Values::of(&DataType::Null), None);
        assert_eq!(Values::of(&DataType::Int64), Some(Values::Fixed(8)));
    }
}
