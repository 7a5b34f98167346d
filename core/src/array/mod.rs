//! Validated array views: [`ArrayView`] and [`RecordBatch`].
//!
//! It uses the [`view`] (and holds its table of an owned batch), the `columnar`
//! rules, the data types and schema, the [`format`](crate::format) and the errors.
//!
//! Unvalidated [`ArrayParts`] (buffers cut from a message body by the IPC decoder, or built in
//! memory) enter [`ArrayView::try_new`], which checks every rule of the Arrow columnar format once.
//! Afterwards the accessors cannot fail or panic: they read little-endian values straight from the
//! borrowed or shared [`Bytes`].

mod nodes;

pub(crate) use nodes::{Arrays, Link, links, node_of};

use crate::bytes::Bytes;
use crate::columnar::{self, bad, bit, need, read};
pub use crate::columnar::{Native, count_set_bits};
use crate::datatype::{DataType, IntType};
use crate::error::{FormatErrorKind, FormatResult};
use crate::format::Kind;
use crate::format::MetadataVersion;
use crate::schema::{Field, Schema};
use crate::view;
use alloc::sync::Arc;
use alloc::vec::Vec;
use core::ops::Range;

/// The values of a dictionary-encoded array: its index type and the dictionary itself.
#[derive(Debug, Clone)]
pub struct Dictionary<'a> {
    /// Integer type of the indices in the array's first buffer.
    pub index_type: IntType,
    /// The dictionary's values, shared by every batch that uses it.
    pub values: Arc<ArrayView<'a>>,
}

/// The unvalidated parts of an array, as laid out in an IPC message (validity first, apart).
#[derive(Debug, Clone, Default)]
pub struct ArrayParts<'a> {
    /// Logical type (the value type when `dictionary` is set).
    pub data_type: Option<DataType>,
    /// Number of slots.
    pub len: usize,
    /// Slot offset into the buffers (non-zero for sliced arrays).
    pub offset: usize,
    /// Declared number of null slots.
    pub null_count: usize,
    /// Validity bitmap, absent when no slot is null.
    pub validity: Option<Bytes<'a>>,
    /// The type's other buffers in format order (offsets, data, sizes, type ids, views, …).
    pub buffers: Vec<Bytes<'a>>,
    /// Child arrays in field order.
    pub children: Vec<ArrayView<'a>>,
    /// The dictionary, for a dictionary-encoded array.
    pub dictionary: Option<Dictionary<'a>>,
}

/// A validated array whose buffers are borrowed (`'a`) or shared.
#[derive(Debug, Clone)]
pub struct ArrayView<'a> {
    data_type: DataType,
    len: usize,
    offset: usize,
    null_count: usize,
    validity: Option<Bytes<'a>>,
    buffers: Vec<Bytes<'a>>,
    children: Vec<ArrayView<'a>>,
    dictionary: Option<Dictionary<'a>>,
}

impl<'a> ArrayView<'a> {
    /// Validates `parts` against every rule of the columnar format for its type.
    pub fn try_new(parts: ArrayParts<'a>) -> FormatResult<Self> {
        let mut array = ArrayView::unchecked(parts)?;
        array.validate()?;
        Ok(array)
    }

    /// The array of `parts` as they are (only the type is required).
    fn unchecked(parts: ArrayParts<'a>) -> FormatResult<Self> {
        let data_type = parts
            .data_type
            .ok_or(FormatErrorKind::MissingField { what: "array type" })?;
        Ok(ArrayView {
            data_type,
            len: parts.len,
            offset: parts.offset,
            null_count: parts.null_count,
            validity: parts.validity,
            buffers: parts.buffers,
            children: parts.children,
            dictionary: parts.dictionary,
        })
    }

    /// An array from parts that are valid by construction, without checking them again: for
    /// the dictionaries that delta batches grow (`ipc::delta`), whose every part was checked when
    /// it was read and whose appends keep the format's rules, so that a delta costs time in
    /// proportion to its own size, not the whole dictionary's. Accessors stay bounds-checked, so
    /// a mistake here shows as wrong values, never as a panic. Debug builds check anyway.
    pub(crate) fn from_valid_parts(parts: ArrayParts<'a>) -> FormatResult<Self> {
        let array = ArrayView::unchecked(parts)?;
        #[cfg(debug_assertions)]
        array.clone().validate()?;
        Ok(array)
    }

    /// Checks the parts against the type: the children's types and the number of buffers
    /// here, everything else by the one validator of the columnar format
    /// ([`view::check`](crate::view)), through the array's view node.
    fn validate(&mut self) -> FormatResult<()> {
        self.validate_children_types()?;
        let index = self.dictionary.as_ref().map(|d| d.index_type);
        let layout = Kind::of_data_type(&self.data_type).layout(index, MetadataVersion::V5);
        let fixed = layout.buffers().len();
        need(
            self.buffers.len() == fixed || (layout.variadic && self.buffers.len() > fixed),
            "wrong number of buffers",
            self.buffers.len(),
        )?;
        let negative = match (&self.data_type, index) {
            (DataType::FixedSizeList(_, size), None) if *size < 0 => Some("negative list size"),
            (DataType::FixedSizeBinary(width), None) if *width < 0 => Some("type has no layout"),
            _ => None,
        };
        negative.map_or(Ok(()), |what| Err(bad(what, 0)))?;
        let dictionary_len = self.dictionary.as_ref().map_or(0, |d| d.values.len());
        let mut node = node_of(self, "", 0);
        node.validity = self.validity();
        let children = |k| self.children.get(k).map(|c| node_of(c, "", 0));
        self.null_count = view::check(&node, self.null_count, children, dictionary_len)?;
        Ok(())
    }

    fn validate_children_types(&self) -> FormatResult<()> {
        let fields = if self.dictionary.is_some() {
            &[][..]
        } else {
            self.data_type.children()
        };
        need(
            fields.len() == self.children.len(),
            "number of children differs from the type",
            self.children.len(),
        )?;
        for (i, (field, child)) in fields.iter().zip(&self.children).enumerate() {
            let same = match (field.dictionary(), &child.dictionary) {
                (Some(enc), Some(dict)) => enc.index_type == dict.index_type,
                (None, None) => true,
                _ => false,
            };
            need(
                same && child.data_type == *field.data_type(),
                "child array type differs from its field",
                i,
            )?;
        }
        Ok(())
    }
}

impl<'a> ArrayView<'a> {
    /// The logical type (the value type for a dictionary-encoded array).
    pub fn data_type(&self) -> &DataType {
        &self.data_type
    }

    /// Number of slots.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the array has no slots.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Slot offset into the buffers (children of structs and sparse unions share it).
    pub fn offset(&self) -> usize {
        self.offset
    }

    /// Number of null slots (logical nulls of unions and run-end encoding not included).
    pub fn null_count(&self) -> usize {
        self.null_count
    }

    /// Whether slot `i` holds a value (unions and run-end encoded arrays: always true here).
    #[inline(always)]
    pub fn is_valid(&self, i: usize) -> bool {
        match &self.validity {
            Some(bitmap) if self.null_count > 0 => bit(bitmap, self.offset + i),
            _ => self.null_count == 0,
        }
    }

    /// Whether slot `i` is null.
    #[inline(always)]
    pub fn is_null(&self, i: usize) -> bool {
        !self.is_valid(i)
    }

    /// The validity bitmap's bytes (indexed by `offset() + i`), if the array has one.
    pub fn validity(&self) -> Option<&[u8]> {
        self.validity.as_deref()
    }

    /// Buffer `i` in format order, validity excluded (empty if the type has fewer).
    #[inline(always)]
    pub fn buffer(&self, i: usize) -> &[u8] {
        self.buffers.get(i).map_or(&[], |b| b)
    }

    /// The raw buffers in format order, validity excluded.
    pub fn buffers(&self) -> &[Bytes<'a>] {
        &self.buffers
    }

    /// The child arrays in field order.
    pub fn children(&self) -> &[ArrayView<'a>] {
        &self.children
    }

    /// Child array `i`.
    pub fn child(&self, i: usize) -> Option<&ArrayView<'a>> {
        self.children.get(i)
    }

    /// The dictionary, for a dictionary-encoded array.
    pub fn dictionary(&self) -> Option<&Dictionary<'a>> {
        self.dictionary.as_ref()
    }

    /// Fixed-width value of slot `i` (Int*, UInt*, Float*, dates, times, …).
    #[inline(always)]
    pub fn value<T: Native>(&self, i: usize) -> T {
        read::<T>(self.buffer(0), self.offset + i)
    }

    /// The bytes of fixed-width slot `i` (decimals, intervals, fixed-size binary).
    pub fn fixed_bytes(&self, i: usize) -> &[u8] {
        self.node().fixed_bytes(i)
    }

    /// Boolean value of slot `i`.
    #[inline(always)]
    pub fn bool_value(&self, i: usize) -> bool {
        bit(self.buffer(0), self.offset + i)
    }

    /// Slot `i` of an integer array (Int8 to Int64, UInt8 to UInt64) as an i64 (run ends,
    /// indices); 0 where no i64 holds it: a UInt64 above `i64::MAX`, or an array of another type.
    pub fn integer(&self, i: usize) -> i64 {
        let int = match Kind::of_data_type(&self.data_type) {
            Kind::Int(int) => Some(int),
            _ => None,
        };
        columnar::integer_at(self.buffer(0), self.offset + i, int).unwrap_or_default()
    }

    /// This array as a view node, whose accessors read the values of both forms.
    #[inline(always)]
    fn node(&self) -> view::Node<'_> {
        node_of(self, "", 0)
    }

    /// The dictionary index stored in slot `i` of a dictionary-encoded array.
    pub fn dictionary_index(&self, i: usize) -> usize {
        self.node().key(i)
    }

    /// The bytes of slot `i` of a Binary, Utf8 (any offset width), view or fixed-size binary array.
    pub fn bytes_value(&self, i: usize) -> &[u8] {
        self.node().bytes_value(i)
    }

    /// The text of slot `i` of a Utf8, LargeUtf8 or Utf8View array (validated on construction).
    pub fn str_value(&self, i: usize) -> &str {
        core::str::from_utf8(self.bytes_value(i)).unwrap_or_default()
    }

    /// The range of child slots that list slot `i` spans (any list, list view, map or
    /// fixed-size list).
    pub fn list_range(&self, i: usize) -> Range<usize> {
        self.node().list_range(i)
    }

    /// For union slot `i`: the index of the selected child and the slot within that child.
    pub fn union_value(&self, i: usize) -> (usize, usize) {
        self.node().union_value(i)
    }

    /// For run-end encoded slot `i`: the index of its run in the `values` child.
    pub fn run_index(&self, i: usize) -> usize {
        let Some(run_ends) = self.child(0) else {
            return 0;
        };
        columnar::run_index(|k| run_ends.integer(k), run_ends.len, self.offset + i)
    }

    /// The slot range `offset..offset + len` of this array as a new view (no copy).
    pub fn slice(&self, offset: usize, len: usize) -> FormatResult<Self> {
        need(
            offset.checked_add(len).is_some_and(|e| e <= self.len),
            "slice past the end of the array",
            offset,
        )?;
        let mut sliced = self.clone();
        sliced.offset += offset;
        sliced.len = len;
        sliced.null_count = match &self.validity {
            Some(bitmap) if self.null_count > 0 => {
                len - count_set_bits(bitmap, sliced.offset..sliced.offset + len)
            }
            _ if self.data_type == DataType::Null => len,
            _ => 0,
        };
        Ok(sliced)
    }
}

/// A schema and equal-length columns: one record batch.
#[derive(Debug, Clone)]
pub struct RecordBatch<'a> {
    schema: Arc<Schema>,
    columns: Vec<ArrayView<'a>>,
    num_rows: usize,
    /// How the columns' arrays lie in the batch's view (see `view::Arrays`), laid out once.
    links: Arc<[Link]>,
}

impl<'a> RecordBatch<'a> {
    /// Checks that the columns match the schema's fields and all have `num_rows` slots.
    pub fn try_new(
        schema: Arc<Schema>,
        columns: Vec<ArrayView<'a>>,
        num_rows: usize,
    ) -> FormatResult<Self> {
        need(
            schema.fields().len() == columns.len(),
            "number of columns differs from the schema",
            columns.len(),
        )?;
        for (i, (field, column)) in schema.fields().iter().zip(&columns).enumerate() {
            let same_type = column.data_type == *field.data_type()
                && column.dictionary.is_some() == field.dictionary().is_some();
            let rows = column.len == num_rows;
            need(rows, "column length differs from the batch", i)
                .and_then(|()| need(same_type, "column type differs from its field", i))
                .map_err(|e| e.in_field(i))?;
        }
        Ok(RecordBatch {
            links: links(&columns),
            schema,
            columns,
            num_rows,
        })
    }

    /// The batch's schema.
    pub fn schema(&self) -> &Arc<Schema> {
        &self.schema
    }

    /// The columns in schema order.
    pub fn columns(&self) -> &[ArrayView<'a>] {
        &self.columns
    }

    /// Column `i`.
    pub fn column(&self, i: usize) -> Option<&ArrayView<'a>> {
        self.columns.get(i)
    }

    /// Number of rows.
    pub fn num_rows(&self) -> usize {
        self.num_rows
    }

    /// The links of the batch's view.
    pub(crate) fn links(&self) -> &Arc<[Link]> {
        &self.links
    }

    /// The field for column `i`.
    pub fn field(&self, i: usize) -> Option<&Field> {
        self.schema.fields().get(i)
    }

    /// Rows `offset..offset + len` as a new batch: every column sliced, nothing copied.
    pub fn slice(&self, offset: usize, len: usize) -> FormatResult<Self> {
        need(
            offset.checked_add(len).is_some_and(|e| e <= self.num_rows),
            "slice past the end of the batch",
            offset,
        )?;
        let columns = self
            .columns
            .iter()
            .map(|c| c.slice(offset, len))
            .collect::<FormatResult<Vec<_>>>()?;
        Ok(RecordBatch {
            schema: Arc::clone(&self.schema),
            columns,
            num_rows: len,
            links: Arc::clone(&self.links),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builder::{AppendValue, ArrayBuilder, StringBuilder};
    use crate::datatype::UnionMode;
    use crate::error::FormatError;
    use alloc::vec;

    fn i32s(values: &[i32]) -> Bytes<'static> {
        Bytes::from_vec(values.iter().flat_map(|v| v.to_le_bytes()).collect())
    }

    fn int32(values: &[i32]) -> ArrayView<'static> {
        ArrayView::from_values(values.iter().copied()).unwrap()
    }

    fn what(e: FormatError) -> &'static str {
        match e.kind {
            FormatErrorKind::InvalidArray { what, .. } => what,
            other => panic!("unexpected {other:?}"),
        }
    }

    #[test]
    fn bit_counts_match_a_naive_count() {
        let bitmap: Vec<u8> = (0..40u8).map(|i| i.wrapping_mul(37)).collect();
        for start in 0..70 {
            for end in start..bitmap.len() * 8 {
                let naive = (start..end).filter(|i| bit(&bitmap, *i)).count();
                assert_eq!(count_set_bits(&bitmap, start..end), naive, "{start}..{end}");
            }
        }
    }

    #[test]
    fn validity_and_null_count_must_agree() {
        let parts = |null_count| ArrayParts {
            data_type: Some(DataType::Int32),
            len: 3,
            null_count,
            validity: Some(Bytes::from_vec(vec![0b101])),
            buffers: vec![i32s(&[1, 2, 3])],
            ..ArrayParts::default()
        };
        let array = ArrayView::try_new(parts(1)).unwrap();
        assert!(array.is_valid(0) && array.is_null(1) && array.is_valid(2));
        assert_eq!(
            what(ArrayView::try_new(parts(0)).unwrap_err()),
            "null count disagrees with validity bitmap"
        );
        let sliced = array.slice(1, 2).unwrap();
        assert_eq!((sliced.null_count(), sliced.value::<i32>(1)), (1, 3));
        assert!(array.slice(2, 2).is_err());
    }

    #[test]
    fn batches_slice_every_column() {
        let columns = [("a", int32(&[1, 2, 3])), ("b", int32(&[4, 5, 6]))];
        let batch = RecordBatch::from_columns(columns).unwrap();
        let sliced = batch.slice(1, 2).unwrap();
        assert_eq!(sliced.num_rows(), 2);
        let firsts: Vec<i32> = sliced.columns().iter().map(|c| c.value(0)).collect();
        assert_eq!(firsts, [2, 5]);
        assert_eq!(batch.slice(3, 0).unwrap().num_rows(), 0);
        assert_eq!(
            what(batch.slice(2, 2).unwrap_err()),
            "slice past the end of the batch"
        );
    }

    /// A view array of `strings` (long ones at their offsets in one data buffer, as the
    /// builder lays them out) over the data buffer `data`.
    fn views(strings: &[&str], data: &[u8], utf8: bool) -> FormatResult<ArrayView<'static>> {
        let mut builder = StringBuilder::new_view();
        builder.extend_options(strings.iter().map(|s| Some(*s)));
        let built = builder.finish().unwrap();
        ArrayView::try_new(ArrayParts {
            data_type: Some([DataType::BinaryView, DataType::Utf8View][usize::from(utf8)].clone()),
            len: strings.len(),
            buffers: vec![built.buffers()[0].clone(), Bytes::from_vec(data.to_vec())],
            ..ArrayParts::default()
        })
    }

    #[test]
    fn views_are_checked_and_read() {
        let long = "a string longer than twelve";
        let array = views(&["short", long], long.as_bytes(), true).unwrap();
        assert_eq!((array.str_value(0), array.str_value(1)), ("short", long));
        assert_eq!(
            what(views(&["short", long], &long.as_bytes()[..20], true).unwrap_err()),
            "view past the end of its buffer"
        );
        let mut wrong_prefix = long.as_bytes().to_vec();
        wrong_prefix[0] = b'A';
        assert_eq!(
            what(views(&[long], &wrong_prefix, true).unwrap_err()),
            "view prefix differs from its data"
        );
        let bad = "\u{e9}\u{e9}\u{e9}\u{e9}\u{e9}\u{e9}\u{e9}";
        let mut bad_bytes = bad.as_bytes().to_vec();
        bad_bytes[13] = 0xFF;
        let err = views(&["ok", bad], &bad_bytes, true).unwrap_err();
        assert_eq!(
            err.kind,
            FormatErrorKind::InvalidUtf8 { index: 1, byte: 12 }
        );
        assert!(
            views(&[bad], &bad_bytes, false).is_ok(),
            "binary views need no UTF-8"
        );
    }

    #[test]
    fn list_views_stay_inside_their_child() {
        let child = Field::new("item", DataType::Int32, true);
        let list = |offsets: &[i32], sizes: &[i32]| {
            ArrayView::try_new(ArrayParts {
                data_type: Some(DataType::ListView(Arc::new(child.clone()))),
                len: offsets.len(),
                buffers: vec![i32s(offsets), i32s(sizes)],
                children: vec![int32(&[1, 2, 3, 4])],
                ..ArrayParts::default()
            })
        };
        let array = list(&[2, 0], &[2, 3]).unwrap();
        assert_eq!((array.list_range(0), array.list_range(1)), (2..4, 0..3));
        assert_eq!(
            what(list(&[3], &[2]).unwrap_err()),
            "list view past the end of its child"
        );
        assert_eq!(
            what(list(&[0], &[-1]).unwrap_err()),
            "negative list view offset or size"
        );
    }

    #[test]
    fn union_type_ids_and_offsets_are_checked() {
        let fields: Arc<[Field]> = vec![
            Field::new("a", DataType::Int32, true),
            Field::new("b", DataType::Int32, true),
        ]
        .into();
        let dense = |ids: &[u8], offsets: &[i32]| {
            ArrayView::try_new(ArrayParts {
                data_type: Some(DataType::Union(
                    Arc::clone(&fields),
                    vec![5, 7].into(),
                    UnionMode::Dense,
                )),
                len: ids.len(),
                buffers: vec![Bytes::from_vec(ids.to_vec()), i32s(offsets)],
                children: vec![int32(&[10]), int32(&[20, 21])],
                ..ArrayParts::default()
            })
        };
        let array = dense(&[7, 5, 7], &[1, 0, 0]).unwrap();
        assert_eq!(array.union_value(0), (1, 1));
        assert_eq!(array.union_value(1), (0, 0));
        assert_eq!(
            what(dense(&[6], &[0]).unwrap_err()),
            "union type id not declared by the type"
        );
        assert_eq!(
            what(dense(&[5], &[1]).unwrap_err()),
            "dense union offset out of range"
        );
    }

    #[test]
    fn run_ends_must_increase_and_cover_the_array() {
        let ty = DataType::RunEndEncoded(Arc::new([
            Field::new("run_ends", DataType::Int32, false),
            Field::new("values", DataType::Int32, true),
        ]));
        let ree = |run_ends: &[i32], len| {
            ArrayView::try_new(ArrayParts {
                data_type: Some(ty.clone()),
                len,
                children: vec![int32(run_ends), int32(&[7, 8, 9])],
                ..ArrayParts::default()
            })
        };
        let array = ree(&[2, 3, 6], 6).unwrap();
        let runs: Vec<usize> = (0..6).map(|i| array.run_index(i)).collect();
        assert_eq!(runs, [0, 0, 1, 2, 2, 2]);
        assert_eq!(array.slice(3, 2).unwrap().run_index(0), 2);
        assert_eq!(
            what(ree(&[2, 2, 6], 6).unwrap_err()),
            "run ends not strictly increasing"
        );
        assert_eq!(
            what(ree(&[2, 3, 5], 6).unwrap_err()),
            "run ends stop before the array ends"
        );
    }

    #[test]
    fn children_must_match_their_fields() {
        let ty = DataType::Struct(vec![Field::new("a", DataType::Int64, true)].into());
        let err = ArrayView::try_new(ArrayParts {
            data_type: Some(ty),
            len: 1,
            children: vec![int32(&[1])],
            ..ArrayParts::default()
        })
        .unwrap_err();
        assert_eq!(what(err), "child array type differs from its field");
    }
}
