//! The everyday shortcuts: [`ArrayView::from_values`] (an array from Rust values, its type
//! inferred) and [`RecordBatch::from_columns`] (a batch from named arrays, its schema inferred).
//!
//! It uses the typed builders beside it (`binary`, `boolean`, `primitive`, `dictionary`) and, of
//! the crate, the arrays, the data types, the schema and the errors.

use super::{
    AppendValue, ArrayBuilder, BinaryBuilder, BooleanBuilder, I256, IntervalDayTime,
    IntervalMonthDayNano, PrimitiveBuilder, StringBuilder,
};
use crate::array::{ArrayView, RecordBatch};
use crate::datatype::DataType;
use crate::error::FormatResult;
use crate::schema::{DictionaryEncoding, Field, Schema};
use alloc::collections::BTreeSet;
use alloc::string::String;
use alloc::sync::Arc;
use alloc::vec::Vec;

/// A Rust value with a natural Arrow type, for [`ArrayView::from_values`]: integers and floats
/// (`i32` → `Int32`, …), `i128` (`Decimal128(38, 0)`), [`I256`], the interval structs, `bool`,
/// `&str`/`String` (`Utf8`), `&[u8]`/`Vec<u8>`/`&[u8; N]` (`Binary`), and `Option` of any of
/// them (null for `None`).
pub trait ArrowValue {
    /// The builder that takes this value.
    type Builder: ArrayBuilder + Default;

    /// Appends this value to `builder`.
    fn append_to(self, builder: &mut Self::Builder);
}

impl<T: ArrowValue> ArrowValue for Option<T> {
    type Builder = T::Builder;

    fn append_to(self, builder: &mut Self::Builder) {
        match self {
            Some(value) => value.append_to(builder),
            None => builder.append_null(),
        }
    }
}

macro_rules! arrow_value {
    ($builder:ty => $($(const $n:ident =>)? $t:ty),*) => {$(
        impl<$(const $n: usize)?> ArrowValue for $t {
            type Builder = $builder;

            fn append_to(self, builder: &mut Self::Builder) {
                builder.append_value(self);
            }
        }
    )*};
}

macro_rules! primitive_value {
    ($($t:ty),*) => {$( arrow_value!(PrimitiveBuilder<$t> => $t); )*};
}

primitive_value!(
    i8,
    i16,
    i32,
    i64,
    u8,
    u16,
    u32,
    u64,
    f32,
    f64,
    i128,
    I256,
    IntervalDayTime,
    IntervalMonthDayNano
);
arrow_value!(BooleanBuilder => bool);
arrow_value!(StringBuilder => &str, String, &String);
arrow_value!(BinaryBuilder => &[u8], Vec<u8>, const N => &[u8; N]);

impl ArrayView<'static> {
    /// An array of `values`, its type inferred from the value type ([`ArrowValue`]):
    /// `[Some(1i32), None]` makes a nullable `Int32` array, `["a", "b"]` a `Utf8` array.
    ///
    /// Other types of the same values (`Date32`, `LargeUtf8`, `Timestamp`, …) come from the
    /// builders: `PrimitiveBuilder::<i64>::with_data_type(..)` then
    /// [`extend_options`](AppendValue::extend_options).
    pub fn from_values<T: ArrowValue>(values: impl IntoIterator<Item = T>) -> FormatResult<Self> {
        let mut builder = T::Builder::default();
        for value in values {
            value.append_to(&mut builder);
        }
        builder.finish()
    }
}

impl<'a> RecordBatch<'a> {
    /// A batch of named columns with an inferred schema, for example
    /// `RecordBatch::from_columns([("id", ids), ("name", names)])`.
    ///
    /// Every inferred field is **nullable**, whether or not the column holds nulls, so that
    /// batches built separately share one schema; state non-nullable fields with
    /// [`from_fields`](Self::from_fields). A dictionary-encoded column gets an unordered
    /// encoding with the smallest dictionary id not used by any dictionary nested in the
    /// columns' types (top-level columns count up from there). The row count is the first
    /// column's length (0 without columns); columns of other lengths are an error.
    pub fn from_columns<N: Into<String>>(
        columns: impl IntoIterator<Item = (N, ArrayView<'a>)>,
    ) -> FormatResult<Self> {
        let columns: Vec<(String, ArrayView<'a>)> =
            columns.into_iter().map(|(n, c)| (n.into(), c)).collect();
        let mut used = BTreeSet::new();
        for (_, column) in &columns {
            nested_dictionary_ids(column.data_type(), &mut used);
        }
        let mut next = 0i64;
        let fields = columns
            .into_iter()
            .map(|(name, column)| {
                let field = Field::new(name, column.data_type().clone(), true);
                let field = match column.dictionary() {
                    Some(dictionary) => {
                        while used.contains(&next) {
                            next += 1;
                        }
                        used.insert(next);
                        field.with_dictionary(DictionaryEncoding {
                            id: next,
                            index_type: dictionary.index_type,
                            ordered: false,
                        })
                    }
                    None => field,
                };
                (field, column)
            })
            .collect::<Vec<_>>();
        Self::from_fields(fields)
    }

    /// A batch of columns with explicit fields (nullability, metadata, dictionary ids and
    /// ordering), for example a [`DictionaryBuilder`](super::DictionaryBuilder)'s
    /// [`field`](ArrayBuilder::field). Schema-level metadata needs [`RecordBatch::try_new`].
    pub fn from_fields(
        columns: impl IntoIterator<Item = (Field, ArrayView<'a>)>,
    ) -> FormatResult<Self> {
        let (fields, columns): (Vec<Field>, Vec<ArrayView<'a>>) = columns.into_iter().unzip();
        let num_rows = columns.first().map_or(0, ArrayView::len);
        RecordBatch::try_new(Arc::new(Schema::new(fields)), columns, num_rows)
    }
}

/// Collects the dictionary ids of every field nested in `data_type`.
fn nested_dictionary_ids(data_type: &DataType, out: &mut BTreeSet<i64>) {
    for child in data_type.children() {
        if let Some(encoding) = child.dictionary() {
            out.insert(encoding.id);
        }
        nested_dictionary_ids(child.data_type(), out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builder::{DictionaryBuilder, ListBuilder};
    use crate::datatype::IntType;
    use alloc::vec;

    #[test]
    fn inferred_types() {
        let ints = ArrayView::from_values([Some(1u16), None]).unwrap();
        assert_eq!(
            (ints.data_type(), ints.null_count()),
            (&DataType::UInt16, 1)
        );
        let text = ArrayView::from_values([String::from("x"), String::new()]).unwrap();
        assert_eq!(
            (text.data_type(), text.str_value(0)),
            (&DataType::Utf8, "x")
        );
        let bytes = ArrayView::from_values([Some(b"ab"), None]).unwrap();
        assert_eq!(
            (bytes.data_type(), bytes.bytes_value(0)),
            (&DataType::Binary, &b"ab"[..])
        );
        let flags = ArrayView::from_values([true, false]).unwrap();
        assert!(flags.bool_value(0) && !flags.bool_value(1));
        let empty = ArrayView::from_values(Vec::<f64>::new()).unwrap();
        assert_eq!((empty.data_type(), empty.len()), (&DataType::Float64, 0));
        let wide = ArrayView::from_values([I256::from_i128(-5)]).unwrap();
        assert_eq!(wide.data_type(), &DataType::Decimal256(76, 0));
    }

    #[test]
    fn dictionary_ids_avoid_nested_ones() {
        let nested = ListBuilder::new(DictionaryBuilder::new(StringBuilder::new()).with_id(0));
        let mut nested = nested;
        nested.append_value(["a"]);
        let mut top = DictionaryBuilder::new(StringBuilder::new()).with_index_type(IntType {
            bit_width: 16,
            signed: true,
        });
        top.append_value("z");
        let batch = RecordBatch::from_columns([
            ("l", nested.finish().unwrap()),
            ("d", top.finish().unwrap()),
            ("d2", ArrayView::from_values([1i8]).unwrap()),
        ])
        .unwrap();
        let encoding = batch.field(1).unwrap().dictionary().unwrap();
        assert_eq!((encoding.id, encoding.index_type.bit_width), (1, 16));
        assert!(batch.schema().fields().iter().all(Field::is_nullable));
        assert!(RecordBatch::from_columns::<&str>([]).unwrap().num_rows() == 0);
        let mismatched = RecordBatch::from_columns([
            ("a", ArrayView::from_values([1i8]).unwrap()),
            ("b", ArrayView::from_values([1i8, 2]).unwrap()),
        ]);
        assert!(mismatched.is_err());
        let explicit = RecordBatch::from_fields(vec![(
            Field::new("a", DataType::Int8, false),
            ArrayView::from_values([1i8]).unwrap(),
        )])
        .unwrap();
        assert!(!explicit.field(0).unwrap().is_nullable());
    }
}
