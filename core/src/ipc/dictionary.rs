//! Dictionaries: which fields are dictionary-encoded, and the decoded dictionaries by id.
//!
//! Dictionary batches enter as decoded arrays; record batch decoding looks them up by id and
//! shares them (`Arc`) with every batch that uses them. Delta batches append to a dictionary;
//! replacement batches (streams only) replace it. A dictionary that deltas extend is kept
//! growable ([`GrowingArray`], any value type), so each delta appends in place rather than
//! copying the whole dictionary once the caller has let go of the batches that used the earlier
//! one.

use super::delta::GrowingArray;
use crate::array::ArrayView;
use crate::error::FormatResult;
use crate::schema::{Field, Schema};
use alloc::sync::Arc;
use hashbrown::HashMap;
use hashbrown::hash_map::Entry;

/// Decoded dictionaries by id.
#[derive(Debug, Default, Clone)]
pub(crate) struct Dictionaries<'a> {
    map: HashMap<i64, Arc<ArrayView<'a>>>,
    /// The dictionaries in `map` that deltas have extended, in a form that grows in place.
    growing: HashMap<i64, GrowingArray<'a>>,
}

impl<'a> Dictionaries<'a> {
    /// The dictionary with this id, if one has been read.
    pub fn get(&self, id: i64) -> Option<Arc<ArrayView<'a>>> {
        self.map.get(&id).cloned()
    }

    /// Stores a dictionary batch's values: appended for a delta, replacing otherwise. On error
    /// the dictionary stays as it was.
    pub fn insert(&mut self, id: i64, values: ArrayView<'a>, is_delta: bool) -> FormatResult<()> {
        let Some(old) = self.map.get(&id).filter(|_| is_delta) else {
            self.growing.remove(&id);
            self.map.insert(id, Arc::new(values));
            return Ok(());
        };
        let growing = match self.growing.entry(id) {
            Entry::Occupied(entry) => entry.into_mut(),
            Entry::Vacant(entry) => entry.insert(GrowingArray::start(old)?),
        };
        // Let go of the map's share of the buffers first: unless a batch the caller still holds
        // uses the dictionary, the append then happens in place. A failed append changes
        // nothing, and the view puts the dictionary back as it was.
        self.map.remove(&id);
        let appended = growing.append(&values);
        match growing.view() {
            Ok(joined) => {
                self.map.insert(id, Arc::new(joined));
                appended
            }
            Err(e) => {
                // Cannot happen (the parts are built valid); forget the dictionary rather than
                // keep one that disagrees with its growable form.
                self.growing.remove(&id);
                Err(e)
            }
        }
    }
}

/// The value field of every dictionary-encoded field in `schema`, by dictionary id, including
/// fields nested in other types and in dictionary value types. The value field has the encoded
/// field's name and value type and no encoding of its own.
pub(crate) fn dictionary_fields(schema: &Schema) -> HashMap<i64, Field> {
    fn visit(field: &Field, out: &mut HashMap<i64, Field>) {
        if let Some(encoding) = field.dictionary() {
            out.entry(encoding.id).or_insert_with(|| {
                Field::new(field.name(), field.data_type().clone(), field.is_nullable())
            });
        }
        for child in field.data_type().children() {
            visit(child, out);
        }
    }
    let mut out = HashMap::new();
    for field in schema.fields() {
        visit(field, &mut out);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec::Vec;

    fn utf8(values: &[Option<&str>]) -> ArrayView<'static> {
        ArrayView::from_values(values.iter().copied()).unwrap()
    }

    #[test]
    fn deltas_append_and_replacements_replace() {
        let mut dictionaries = Dictionaries::default();
        dictionaries
            .insert(3, utf8(&[Some("a"), None]), false)
            .unwrap();
        dictionaries.insert(3, utf8(&[Some("bc")]), true).unwrap();
        let values = dictionaries.get(3).unwrap();
        assert_eq!(values.len(), 3);
        assert_eq!((values.str_value(0), values.str_value(2)), ("a", "bc"));
        assert!(values.is_null(1) && values.is_valid(2));
        assert_eq!(values.null_count(), 1);

        dictionaries.insert(3, utf8(&[Some("z")]), false).unwrap();
        assert_eq!(dictionaries.get(3).unwrap().str_value(0), "z");
        assert_eq!(dictionaries.get(3).unwrap().len(), 1);
    }

    #[test]
    fn fixed_width_and_boolean_deltas_append() {
        let ints = |v: &[i64]| ArrayView::from_values(v.iter().copied()).unwrap();
        let joined = super::super::concat::concat(&ints(&[1, 2]), &ints(&[3])).unwrap();
        assert_eq!((joined.value::<i64>(0), joined.value::<i64>(2)), (1, 3));

        let bools = |v: &[bool]| ArrayView::from_values(v.iter().copied()).unwrap();
        let joined =
            super::super::concat::concat(&bools(&[true; 7]), &bools(&[false, true])).unwrap();
        let got: Vec<bool> = (0..9).map(|i| joined.bool_value(i)).collect();
        assert_eq!(got, [true, true, true, true, true, true, true, false, true]);
    }
}
