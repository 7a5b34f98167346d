//! Lists: [`ListBuilder`] (`List`, `LargeList`, `ListView`, `LargeListView`),
//! [`FixedSizeListBuilder`] and [`MapBuilder`].
//!
//! It uses `offsets` beside it and, of the crate, the arrays, the data types, the schema and the
//! errors.
//!
//! Values go to the child builder first ([`ListBuilder::values`]); [`ListBuilder::append`] then
//! closes one list slot over everything appended since the previous slot. Offsets (or list-view
//! offsets and sizes) are written when the builder finishes.

use super::offsets::Offsets;
use super::{AppendValue, ArrayBuilder, Slots, child_field, misuse};
use crate::array::{ArrayParts, ArrayView};
use crate::datatype::DataType;
use crate::error::FormatResult;
use crate::schema::Field;
use alloc::sync::Arc;
use alloc::vec;
use alloc::vec::Vec;

/// Implements `AppendValue<I>` for a list builder over `B`: the items of `I` go to the child,
/// then `append` closes the slot.
macro_rules! append_items {
    ($builder:ident) => {
        impl<B, I, T> AppendValue<I> for $builder<B>
        where
            B: AppendValue<T>,
            I: IntoIterator<Item = T>,
        {
            fn append_value(&mut self, value: I) {
                self.values.extend_values(value);
                self.append();
            }
        }
    };
}

/// The four layouts of variable-size lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ListType {
    List,
    LargeList,
    ListView,
    LargeListView,
}

/// Builds a `List`, `LargeList`, `ListView` or `LargeListView` array over a child builder `B`.
///
/// ```
/// use quiver::builder::{AppendValue, ArrayBuilder, ListBuilder, StringBuilder};
///
/// let mut lists = ListBuilder::new(StringBuilder::new());
/// lists.values().append_value("a");
/// lists.append(); // ["a"]
/// lists.append_value(["b", "c"]); // ["b", "c"]
/// lists.append_null();
/// let array = lists.finish()?;
/// assert_eq!(array.list_range(1), 1..3);
/// # Ok::<(), quiver::error::FormatError>(())
/// ```
#[derive(Debug, Clone)]
pub struct ListBuilder<B> {
    slots: Slots,
    layout: ListType,
    values: B,
    offsets: Offsets,
}

impl<B: ArrayBuilder + Default> Default for ListBuilder<B> {
    fn default() -> Self {
        Self::new(B::default())
    }
}

impl<B: ArrayBuilder> ListBuilder<B> {
    /// A `List` builder whose child field is a nullable `item` of the values' type.
    pub fn new(values: B) -> Self {
        Self::with_item(DataType::List, values)
    }

    /// A `LargeList` builder (i64 offsets) with a nullable `item` child.
    pub fn new_large(values: B) -> Self {
        Self::with_item(DataType::LargeList, values)
    }

    /// A `ListView` builder (i32 offsets and sizes) with a nullable `item` child.
    pub fn new_view(values: B) -> Self {
        Self::with_item(DataType::ListView, values)
    }

    /// A `LargeListView` builder (i64 offsets and sizes) with a nullable `item` child.
    pub fn new_large_view(values: B) -> Self {
        Self::with_item(DataType::LargeListView, values)
    }

    /// A builder of `list(item)`, its `item` field nullable and of the values' type.
    fn with_item(list: fn(Arc<Field>) -> DataType, values: B) -> Self {
        let item = Arc::new(values.field("item"));
        Self::with_data_type(list(item), values)
    }

    /// A builder of `data_type`, one of the four list types, whose child field (name,
    /// nullability, metadata, dictionary encoding) must describe `values` (or `finish` fails).
    pub fn with_data_type(data_type: DataType, values: B) -> Self {
        let (layout, error) = match data_type {
            DataType::List(_) => (ListType::List, None),
            DataType::LargeList(_) => (ListType::LargeList, None),
            DataType::ListView(_) => (ListType::ListView, None),
            DataType::LargeListView(_) => (ListType::LargeListView, None),
            _ => (
                ListType::List,
                Some(misuse("list builder given a non-list type", 0)),
            ),
        };
        ListBuilder {
            slots: Slots::new(data_type, error),
            layout,
            values,
            offsets: Offsets::default(),
        }
    }

    /// The child builder: append a list's values here, then call [`append`](Self::append).
    pub fn values(&mut self) -> &mut B {
        &mut self.values
    }

    /// Closes one valid list slot holding the values appended to the child since the last slot.
    pub fn append(&mut self) {
        self.offsets.push(self.values.len());
        self.slots.validity.append(true);
    }
}

append_items!(ListBuilder);

impl<B: ArrayBuilder> ArrayBuilder for ListBuilder<B> {
    /// A null slot; it spans the values appended since the last slot (usually none).
    fn append_null(&mut self) {
        self.offsets.push(self.values.len());
        self.slots.validity.append(false);
    }

    fn finish(&mut self) -> FormatResult<ArrayView<'static>> {
        let child = self.values.finish();
        let large = matches!(self.layout, ListType::LargeList | ListType::LargeListView);
        let buffers = match self.layout {
            ListType::List | ListType::LargeList => {
                self.offsets.finish_offsets(large).map(|o| vec![o])
            }
            ListType::ListView | ListType::LargeListView => self
                .offsets
                .finish_views(large)
                .map(|(offsets, sizes)| vec![offsets, sizes]),
        };
        self.slots
            .finish(buffers.and_then(|buffers| Ok((buffers, vec![child?]))))
    }

    slots!();
}

/// Builds a `FixedSizeList(item, size)` array: each slot holds exactly `size` child values.
#[derive(Debug, Clone)]
pub struct FixedSizeListBuilder<B> {
    slots: Slots,
    size: usize,
    values: B,
}

impl<B: ArrayBuilder> FixedSizeListBuilder<B> {
    /// A builder of lists of `size` values, with a nullable `item` child.
    pub fn new(values: B, size: i32) -> Self {
        let item = Arc::new(values.field("item"));
        Self::with_data_type(DataType::FixedSizeList(item, size), values)
    }

    /// A builder of `data_type`, which must be `FixedSizeList` with a child field describing
    /// `values` (or `finish` fails).
    pub fn with_data_type(data_type: DataType, values: B) -> Self {
        let size = match data_type {
            DataType::FixedSizeList(_, size) => usize::try_from(size).ok(),
            _ => None,
        };
        let error = size
            .is_none()
            .then(|| misuse("fixed-size list builder given another type", 0));
        FixedSizeListBuilder {
            slots: Slots::new(data_type, error),
            size: size.unwrap_or(0),
            values,
        }
    }

    /// The number of values in every list.
    pub fn size(&self) -> usize {
        self.size
    }

    /// The child builder: append `size` values here, then call [`append`](Self::append).
    pub fn values(&mut self) -> &mut B {
        &mut self.values
    }

    /// Closes one valid slot over the last `size` child values (another count makes `finish` fail).
    pub fn append(&mut self) {
        let index = self.slots.validity.len();
        if self.values.len() != index.saturating_add(1).saturating_mul(self.size) {
            self.slots.remember(misuse(
                "fixed-size list slot with another number of values",
                index,
            ));
        }
        self.slots.validity.append(true);
    }
}

append_items!(FixedSizeListBuilder);

impl<B: ArrayBuilder> ArrayBuilder for FixedSizeListBuilder<B> {
    /// A null slot over `size` null child values.
    fn append_null(&mut self) {
        self.values.append_nulls(self.size);
        self.slots.validity.append(false);
    }

    fn finish(&mut self) -> FormatResult<ArrayView<'static>> {
        let child = self.values.finish();
        self.slots
            .finish(child.map(|child| (Vec::new(), vec![child])))
    }

    slots!();
}

/// Builds a `Map` array: lists of `entries: struct<key, value>`, keys from `K`, values from `V`.
#[derive(Debug, Clone)]
pub struct MapBuilder<K, V> {
    slots: Slots,
    keys: K,
    values: V,
    offsets: Offsets,
}

impl<K: ArrayBuilder, V: ArrayBuilder> MapBuilder<K, V> {
    /// A builder of maps with unsorted keys: `entries` (not null) of `key` (not null) and
    /// `value` (nullable).
    pub fn new(keys: K, values: V) -> Self {
        let entries = DataType::Struct(
            vec![
                child_field(&keys, "key", false),
                child_field(&values, "value", true),
            ]
            .into(),
        );
        let entries = Field::new("entries", entries, false);
        Self::with_data_type(DataType::Map(Arc::new(entries), false), keys, values)
    }

    /// A builder of `data_type`, a `Map` whose entries' two fields describe `keys` and `values`
    /// (or `finish` fails).
    pub fn with_data_type(data_type: DataType, keys: K, values: V) -> Self {
        let is_map = matches!(&data_type, DataType::Map(entries, _)
            if matches!(entries.data_type(), DataType::Struct(kv) if kv.len() == 2));
        let error = (!is_map).then(|| misuse("map builder given a non-map type", 0));
        MapBuilder {
            slots: Slots::new(data_type, error),
            keys,
            values,
            offsets: Offsets::default(),
        }
    }

    /// This builder with the type's `keys_sorted` flag set to `sorted` (the builder does not sort).
    #[must_use]
    pub fn with_keys_sorted(mut self, sorted: bool) -> Self {
        if let DataType::Map(_, flag) = &mut self.slots.data_type {
            *flag = sorted;
        }
        self
    }

    /// The keys' builder.
    pub fn keys(&mut self) -> &mut K {
        &mut self.keys
    }

    /// The values' builder.
    pub fn values(&mut self) -> &mut V {
        &mut self.values
    }

    /// Both builders, to append one entry's key and value together.
    pub fn entries(&mut self) -> (&mut K, &mut V) {
        (&mut self.keys, &mut self.values)
    }

    /// Closes one valid map slot over the entries appended since the last slot.
    pub fn append(&mut self) {
        self.close(true);
    }

    /// Closes one slot, valid or null, over the entries appended since the last slot.
    fn close(&mut self, valid: bool) {
        if self.keys.len() != self.values.len() {
            let index = self.slots.validity.len();
            self.slots
                .remember(misuse("map keys and values differ in number", index));
        }
        self.offsets.push(self.keys.len());
        self.slots.validity.append(valid);
    }
}

impl<K, V, I, KT, VT> AppendValue<I> for MapBuilder<K, V>
where
    K: AppendValue<KT>,
    V: AppendValue<VT>,
    I: IntoIterator<Item = (KT, VT)>,
{
    fn append_value(&mut self, value: I) {
        for (key, value) in value {
            self.keys.append_value(key);
            self.values.append_value(value);
        }
        self.append();
    }
}

impl<K: ArrayBuilder, V: ArrayBuilder> ArrayBuilder for MapBuilder<K, V> {
    fn append_null(&mut self) {
        self.close(false);
    }

    fn finish(&mut self) -> FormatResult<ArrayView<'static>> {
        let offsets = self.offsets.finish_offsets(false);
        let keys = self.keys.finish();
        let values = self.values.finish();
        let entries_type = match &self.slots.data_type {
            DataType::Map(entries, _) => entries.data_type().clone(),
            _ => DataType::Null,
        };
        let entries = keys.and_then(|keys| {
            let values = values?;
            if keys.len() != values.len() {
                return Err(misuse("map keys and values differ in number", keys.len()));
            }
            ArrayView::try_new(ArrayParts {
                data_type: Some(entries_type),
                len: keys.len(),
                children: vec![keys, values],
                ..ArrayParts::default()
            })
        });
        self.slots
            .finish(entries.and_then(|entries| Ok((vec![offsets?], vec![entries]))))
    }

    slots!();
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builder::{PrimitiveBuilder, StringBuilder};
    use alloc::vec::Vec;

    fn lists() -> Vec<Option<Vec<Option<i32>>>> {
        vec![
            Some(vec![Some(1), None]),
            None,
            Some(vec![]),
            Some(vec![Some(4), Some(5), Some(6)]),
            None,
        ]
    }

    fn read(array: &ArrayView<'_>, i: usize) -> Option<Vec<Option<i32>>> {
        let child = array.child(0).unwrap();
        array.is_valid(i).then(|| {
            array
                .list_range(i)
                .map(|j| child.is_valid(j).then(|| child.value::<i32>(j)))
                .collect()
        })
    }

    #[test]
    fn every_list_layout_reads_back() {
        let input = lists();
        let values = || PrimitiveBuilder::<i32>::new();
        for mut builder in [
            ListBuilder::new(values()),
            ListBuilder::new_large(values()),
            ListBuilder::new_view(values()),
            ListBuilder::new_large_view(values()),
        ] {
            builder.extend_options(input.clone());
            let array = builder.finish().unwrap();
            assert_eq!((array.len(), array.null_count()), (5, 2));
            for (i, expected) in input.iter().enumerate() {
                assert_eq!(read(&array, i), *expected, "{:?}", array.data_type());
            }
            let sliced = array.slice(2, 2).unwrap();
            assert_eq!(read(&sliced, 1), input[3]);
        }
    }

    #[test]
    fn fixed_size_lists_pad_nulls_and_check_counts() {
        let mut builder = FixedSizeListBuilder::new(StringBuilder::new(), 2);
        builder.append_value(["a", "b"]);
        builder.append_null();
        builder.append_value(["c", "d"]);
        let array = builder.finish().unwrap();
        assert_eq!(array.child(0).unwrap().len(), 6);
        assert_eq!(array.list_range(2), 4..6);
        assert_eq!(array.child(0).unwrap().str_value(5), "d");
        assert!(array.is_null(1));

        builder.append_value(["only one"]);
        assert!(builder.finish().is_err());
        let mut empty = FixedSizeListBuilder::new(PrimitiveBuilder::<u8>::new(), 0);
        empty.append_value([0u8; 0]);
        empty.append_null();
        assert_eq!(empty.finish().unwrap().len(), 2);
    }

    #[test]
    fn maps_hold_key_value_entries() {
        let mut builder = MapBuilder::new(StringBuilder::new(), PrimitiveBuilder::<i64>::new())
            .with_keys_sorted(true);
        builder.append_value([("a", 1), ("b", 2)]);
        builder.append_null();
        let (keys, values) = builder.entries();
        keys.append_value("c");
        values.append_null();
        builder.append();
        let array = builder.finish().unwrap();
        assert!(matches!(array.data_type(), DataType::Map(_, true)));
        let entries = array.child(0).unwrap();
        assert_eq!((array.list_range(2), entries.len()), (2..3, 3));
        let (keys, values) = (entries.child(0).unwrap(), entries.child(1).unwrap());
        assert_eq!((keys.str_value(1), values.value::<i64>(1)), ("b", 2));
        assert!(values.is_null(2) && array.is_null(1));

        builder.keys().append_value("dangling");
        builder.append();
        assert!(builder.finish().is_err());
    }

    #[test]
    fn lists_of_lists() {
        let mut builder = ListBuilder::new(ListBuilder::new(StringBuilder::new_view()));
        builder.append_value([vec!["a long string, not inline"], vec![]]);
        builder.append_null();
        builder.append_value([vec!["x", "y"]]);
        let array = builder.finish().unwrap();
        let inner = array.child(0).unwrap();
        let strings = inner.child(0).unwrap();
        assert_eq!(array.list_range(2), 2..3);
        assert_eq!(inner.list_range(2), 1..3);
        assert_eq!(strings.str_value(0), "a long string, not inline");
    }
}
