//! Dictionaries on the writing side: which ones a batch uses, and what the reader must be sent so
//! that it holds each of them.
//!
//! A batch's dictionaries enter through [`collect`], which walks every column (and the values of
//! every dictionary, since dictionaries nest) and lists each dictionary after the ones its own
//! values use. [`DictionaryTracker::plan`] compares each with what was last sent for its id and
//! answers what to write: nothing, a delta with the new values (the old dictionary is a prefix of
//! the new one), or the whole dictionary (the first time, or a replacement, which only streams
//! allow). Comparisons are by value, slot by slot, null slots being equal whatever their bytes.
//!
//! The tracker keeps its own copy of every dictionary sent (borrowed buffers copied, shared ones
//! shared), so the writer does not borrow batches beyond the call that writes them.

use crate::array::{ArrayParts, ArrayView, Dictionary};
use crate::bytes::Bytes;
use crate::datatype::DataType;
use crate::error::{Feature, FormatError, FormatErrorKind, FormatResult};
use crate::schema::{Field, Schema};
use alloc::sync::Arc;
use alloc::vec::Vec;
use hashbrown::HashMap;

/// One dictionary a batch uses: its id, the field its values have, and the values.
#[derive(Debug, Clone)]
pub(super) struct UsedDictionary<'a> {
    /// The dictionary id.
    pub id: i64,
    /// The values' field: the encoded field's name, value type and nullability, not encoded.
    pub field: Field,
    /// The values.
    pub values: Arc<ArrayView<'a>>,
}

/// Lists the dictionaries `array` (of `field`) uses, each after those nested in its values.
pub(super) fn collect<'a>(
    field: &Field,
    array: &ArrayView<'a>,
    out: &mut Vec<UsedDictionary<'a>>,
) -> FormatResult<()> {
    // The children of an encoded array are those of its dictionary's values.
    let (encoded, children) = match (field.dictionary(), array.dictionary()) {
        (Some(encoding), Some(d)) => (Some((encoding.id, &d.values)), d.values.children()),
        (None, None) => (None, array.children()),
        _ => return Err(crate::columnar::bad("array type differs from its field", 0)),
    };
    let child_fields = field.data_type().children();
    for (i, (child_field, child)) in child_fields.iter().zip(children).enumerate() {
        collect(child_field, child, out).map_err(|e| e.in_field(i))?;
    }
    if let Some((id, values)) = encoded
        && !out
            .iter()
            .any(|d| d.id == id && Arc::ptr_eq(&d.values, values))
    {
        out.push(UsedDictionary {
            id,
            field: Field::new(field.name(), field.data_type().clone(), field.is_nullable()),
            values: Arc::clone(values),
        });
    }
    Ok(())
}

/// Merges the entries of each dictionary id into one: the longest of its dictionaries, placed
/// where the id first appears (so still before the dictionaries whose values use it).
///
/// Columns that share an id in one batch must agree: every dictionary must be a prefix of the
/// longest, which then serves them all; anything else is an error.
/// Errors name the field of `schema` that first uses the id.
pub(super) fn merge_shared<'a>(
    used: Vec<UsedDictionary<'a>>,
    schema: &Schema,
) -> FormatResult<Vec<UsedDictionary<'a>>> {
    let mut merged: Vec<UsedDictionary<'_>> = Vec::with_capacity(used.len());
    for d in used {
        let Some(first) = merged.iter_mut().find(|m| m.id == d.id) else {
            merged.push(d);
            continue;
        };
        if Arc::ptr_eq(&first.values, &d.values) {
            continue;
        }
        let (short, long) = if d.values.len() > first.values.len() {
            (&first.values, &d.values)
        } else {
            (&d.values, &first.values)
        };
        if !is_prefix(short, long) {
            return Err(FormatError::from(FormatErrorKind::Unsupported {
                what: Feature::SharedDictionaryMismatch,
            })
            .in_dictionary(schema.dictionary_path(d.id)));
        }
        if d.values.len() > first.values.len() {
            first.values = d.values;
        }
    }
    Ok(merged)
}

/// Whether slot `i` of `a` and slot `j` of `b` (arrays of the same type) hold the same value.
pub(crate) fn slot_eq(a: &ArrayView<'_>, i: usize, b: &ArrayView<'_>, j: usize) -> bool {
    let valid = a.is_valid(i);
    if valid != b.is_valid(j) {
        return false;
    }
    if !valid {
        return true;
    }
    match (a.dictionary(), b.dictionary()) {
        (Some(da), Some(db)) => {
            return slot_eq(
                &da.values,
                a.dictionary_index(i),
                &db.values,
                b.dictionary_index(j),
            );
        }
        (None, None) => {}
        _ => return false,
    }
    use DataType::*;
    match a.data_type() {
        Null => true,
        Boolean => a.bool_value(i) == b.bool_value(j),
        Binary | LargeBinary | Utf8 | LargeUtf8 | BinaryView | Utf8View | FixedSizeBinary(_) => {
            a.bytes_value(i) == b.bytes_value(j)
        }
        List(_) | LargeList(_) | ListView(_) | LargeListView(_) | FixedSizeList(..) | Map(..) => {
            let (ra, rb) = (a.list_range(i), b.list_range(j));
            ra.len() == rb.len()
                && (a.child(0).zip(b.child(0)))
                    .is_some_and(|(ca, cb)| ra.zip(rb).all(|(x, y)| slot_eq(ca, x, cb, y)))
        }
        Struct(_) => a
            .children()
            .iter()
            .zip(b.children())
            .all(|(ca, cb)| slot_eq(ca, a.offset() + i, cb, b.offset() + j)),
        Union(..) => {
            let ((ca, x), (cb, y)) = (a.union_value(i), b.union_value(j));
            ca == cb && (a.child(ca).zip(b.child(cb))).is_some_and(|(ca, cb)| slot_eq(ca, x, cb, y))
        }
        RunEndEncoded(_) => (a.child(1).zip(b.child(1)))
            .is_some_and(|(va, vb)| slot_eq(va, a.run_index(i), vb, b.run_index(j))),
        _ => a.fixed_bytes(i) == b.fixed_bytes(j),
    }
}

/// Whether `prefix` equals the first `prefix.len()` slots of `array`.
pub(super) fn is_prefix(prefix: &ArrayView<'_>, array: &ArrayView<'_>) -> bool {
    prefix.data_type() == array.data_type()
        && prefix.len() <= array.len()
        && (0..prefix.len()).all(|i| slot_eq(prefix, i, array, i))
}

/// A copy of `array` that borrows nothing.
pub(super) fn owned_view(array: &ArrayView<'_>) -> FormatResult<ArrayView<'static>> {
    let dictionary = match array.dictionary() {
        Some(d) => Some(Dictionary {
            index_type: d.index_type,
            values: Arc::new(owned_view(&d.values)?),
        }),
        None => None,
    };
    ArrayView::try_new(ArrayParts {
        data_type: Some(array.data_type().clone()),
        len: array.len(),
        offset: array.offset(),
        null_count: array.null_count(),
        validity: array.validity().map(|v| Bytes::from_vec(v.to_vec())),
        // Borrowed bytes copied; shared bytes stay shared.
        buffers: array
            .buffers()
            .iter()
            .map(|b| b.clone().into_static())
            .collect(),
        children: array
            .children()
            .iter()
            .map(owned_view)
            .collect::<FormatResult<_>>()?,
        dictionary,
    })
}

/// What to write so that the reader holds a dictionary.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum ToSend {
    /// The reader already holds it (or a dictionary that starts with it, which serves the same
    /// indices).
    Nothing,
    /// Its slots from this one on, as a delta batch.
    Delta(usize),
    /// All of it, as a non-delta batch (the first time, or a replacement).
    Whole,
}

/// Decides what to write so that the reader, holding `sent`, can decode indices into `values`.
///
/// `replace` says whether a replacement is allowed (streams); without it a dictionary that is
/// a prefix of what was sent needs nothing (the reader's dictionary serves its indices), and one
/// that neither equals, extends nor starts what was sent is an error.
pub(super) fn plan(
    sent: Option<&ArrayView<'_>>,
    values: &ArrayView<'_>,
    replace: bool,
) -> FormatResult<ToSend> {
    let Some(sent) = sent else {
        return Ok(ToSend::Whole);
    };
    if is_prefix(sent, values) {
        return Ok(if values.len() == sent.len() {
            ToSend::Nothing
        } else {
            ToSend::Delta(sent.len())
        });
    }
    if replace {
        return Ok(ToSend::Whole);
    }
    if is_prefix(values, sent) {
        return Ok(ToSend::Nothing);
    }
    Err(FormatErrorKind::Unsupported {
        what: Feature::ReplacedDictionaryInFile,
    }
    .into())
}

/// What the reader holds, per dictionary id.
#[derive(Debug, Default)]
pub(super) struct DictionaryTracker {
    sent: HashMap<i64, Arc<ArrayView<'static>>>,
}

impl DictionaryTracker {
    /// Records that the reader now holds `values` for `id` (after a whole or delta batch).
    pub fn sent(&mut self, id: i64, values: Arc<ArrayView<'static>>) {
        self.sent.insert(id, values);
    }

    /// What the reader holds for `id`.
    pub fn get(&self, id: i64) -> Option<&Arc<ArrayView<'static>>> {
        self.sent.get(&id)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;
    use alloc::vec;

    fn utf8(values: &[Option<&str>]) -> ArrayView<'static> {
        let mut offsets = vec![0u8; 4];
        let mut data = Vec::new();
        let mut validity = vec![0u8; values.len().div_ceil(8)];
        for (i, v) in values.iter().enumerate() {
            if let Some(v) = v {
                data.extend_from_slice(v.as_bytes());
                validity[i / 8] |= 1 << (i % 8);
            } else {
                data.extend_from_slice(b"garbage");
            }
            offsets.extend_from_slice(&(data.len() as i32).to_le_bytes());
        }
        let nulls = values.iter().filter(|v| v.is_none()).count();
        ArrayView::try_new(ArrayParts {
            data_type: Some(DataType::Utf8),
            len: values.len(),
            null_count: nulls,
            validity: Some(Bytes::from_vec(validity)),
            buffers: vec![Bytes::from_vec(offsets), Bytes::from_vec(data)],
            ..ArrayParts::default()
        })
        .unwrap()
    }

    #[test]
    fn null_slots_compare_equal_whatever_their_bytes() {
        let a = utf8(&[Some("a"), None, Some("c")]);
        let b = utf8(&[Some("a"), None, Some("c"), Some("d")]);
        assert!(is_prefix(&a, &b));
        assert!(!is_prefix(&b, &a));
        let c = utf8(&[Some("a"), Some(""), Some("c")]);
        assert!(!is_prefix(&a, &c));
        assert!(is_prefix(&a.slice(1, 2).unwrap(), &b.slice(1, 3).unwrap()));
    }

    #[test]
    fn plans_follow_the_dictionary_history() {
        let mut tracker = DictionaryTracker::default();
        let sent = |t: &DictionaryTracker| t.get(1).cloned();
        let abc = utf8(&[Some("a"), Some("b"), Some("c")]);
        assert_eq!(plan(None, &abc, false).unwrap(), ToSend::Whole);
        tracker.sent(1, Arc::new(owned_view(&abc).unwrap()));
        let held = sent(&tracker).unwrap();
        assert_eq!(plan(Some(&held), &abc, false).unwrap(), ToSend::Nothing);
        assert_eq!(plan(Some(&held), &abc, true).unwrap(), ToSend::Nothing);
        let abcd = utf8(&[Some("a"), Some("b"), Some("c"), Some("d")]);
        assert_eq!(plan(Some(&held), &abcd, false).unwrap(), ToSend::Delta(3));
        let ab = utf8(&[Some("a"), Some("b")]);
        assert_eq!(plan(Some(&held), &ab, false).unwrap(), ToSend::Nothing);
        assert_eq!(plan(Some(&held), &ab, true).unwrap(), ToSend::Whole);
        let xyz = utf8(&[Some("x")]);
        assert!(plan(Some(&held), &xyz, false).is_err());
        assert_eq!(plan(Some(&held), &xyz, true).unwrap(), ToSend::Whole);
        assert!(tracker.get(2).is_none());
    }

    #[test]
    fn owned_views_borrow_nothing_and_compare_equal() {
        let data = b"hello";
        let offsets: Vec<u8> = [0i32, 2, 5].iter().flat_map(|o| o.to_le_bytes()).collect();
        let borrowed = ArrayView::try_new(ArrayParts {
            data_type: Some(DataType::Binary),
            len: 2,
            buffers: vec![Bytes::borrowed(&offsets), Bytes::borrowed(data)],
            ..ArrayParts::default()
        })
        .unwrap();
        let owned = owned_view(&borrowed).unwrap();
        drop(offsets);
        assert!(owned.buffers().iter().all(|b| !b.is_borrowed()));
        assert_eq!(owned.bytes_value(1), b"llo");
    }
}
