//! Builders: owned arrays made in memory, seen through the same validated [`ArrayView`] the
//! reader yields.
//!
//! It uses the arrays it builds, their [`Bytes`], the data types and
//! schema, and the errors.
//!
//! Values enter a builder one slot at a time ([`AppendValue::append_value`],
//! [`ArrayBuilder::append_null`]); [`ArrayBuilder::finish`] packs them into buffers, hands those
//! to [`ArrayView::try_new`] (which validates them like bytes read from a file) and leaves the
//! builder empty for the next batch. The result is an `ArrayView<'static>` whose buffers are
//! owned and shared ([`Bytes::from_vec`](crate::bytes::Bytes::from_vec)), so the IPC writer and the JSON
//! encoder take one input type whatever the data's origin.
//!
//! One file per family of types:
//!
//! | type | builder | file |
//! | --- | --- | --- |
//! | `Null` | [`NullBuilder`] | `null.rs` |
//! | `Boolean` | [`BooleanBuilder`] | `boolean.rs` |
//! | integers, floats, decimals, dates, times, timestamps, durations, intervals | [`PrimitiveBuilder<T>`] | `primitive.rs` |
//! | `Binary`, `LargeBinary`, `BinaryView` / `Utf8`, `LargeUtf8`, `Utf8View` / `FixedSizeBinary` | [`BinaryBuilder`] / [`StringBuilder`] / [`FixedSizeBinaryBuilder`] | `binary.rs` |
//! | `List`, `LargeList`, `ListView`, `LargeListView` / `FixedSizeList` / `Map` | [`ListBuilder`] / [`FixedSizeListBuilder`] / [`MapBuilder`] | `list.rs` |
//! | `Struct` | [`StructBuilder`] | `structs.rs` |
//! | `Union` (sparse and dense) | [`UnionBuilder`] | `union.rs` |
//! | `RunEndEncoded` | [`RunEndBuilder`] | `run_end.rs` |
//! | a dictionary-encoded field | [`DictionaryBuilder`] | `dictionary.rs` |
//!
//! [`for_field`] makes the right builder for any [`Field`], children included (as
//! `Box<dyn ArrayBuilder>`, reached again with `downcast_mut` on `dyn ArrayBuilder`).
//! `batch.rs` holds the everyday shortcuts: [`ArrayView::from_values`] and
//! [`RecordBatch::from_columns`](crate::array::RecordBatch::from_columns).
//!
//! Appending a value does not fail (only [`UnionBuilder::append`] can, for a type id the union
//! does not declare). A value a builder cannot store (a fixed-size binary of the wrong width,
//! offsets past `i32::MAX`, more dictionary values than the index type counts, a struct child left
//! behind) is remembered, and `finish` returns that error and leaves the builder empty.
//!
//! ```
//! use quiver::builder::{AppendValue, ArrayBuilder, ListBuilder, PrimitiveBuilder};
//! use quiver::{array::ArrayView, array::RecordBatch};
//!
//! let ids = ArrayView::from_values([Some(1i32), None, Some(3)])?;
//! let names = ArrayView::from_values(["ant", "bee", "cat"])?;
//! let mut lists = ListBuilder::new(PrimitiveBuilder::<i64>::new());
//! lists.extend_options([Some(vec![1, 2]), None, Some(vec![])]);
//! let batch = RecordBatch::from_columns([("id", ids), ("name", names), ("l", lists.finish()?)])?;
//! assert_eq!(batch.num_rows(), 3);
//! assert_eq!(batch.column(1).map(|c| c.str_value(2)), Some("cat"));
//! # Ok::<(), quiver::error::FormatError>(())
//! ```

/// Implements `AppendValue<T>` and `AppendValue<Option<T>>` for each listed `T` (generic over
/// `const N: usize` where written `const N => T`), through the builder's inherent
/// `$method(&Target)` (the values are passed by `as_ref`).
macro_rules! append_by_ref {
    ($builder:ty, $method:ident, [$($(const $n:ident =>)? $t:ty),* $(,)?]) => {$(
        impl<$(const $n: usize)?> $crate::builder::AppendValue<$t> for $builder {
            fn append_value(&mut self, value: $t) {
                self.$method(value.as_ref());
            }
        }

        impl<$(const $n: usize)?> $crate::builder::AppendValue<Option<$t>> for $builder {
            fn append_value(&mut self, value: Option<$t>) {
                match value {
                    Some(value) => self.$method(value.as_ref()),
                    None => $crate::builder::ArrayBuilder::append_null(self),
                }
            }
        }
    )*};
}

/// Implements [`ArrayBuilder::as_any`] and [`ArrayBuilder::as_any_mut`] (inside the impl).
macro_rules! as_any {
    () => {
        fn as_any(&self) -> &dyn core::any::Any {
            self
        }

        fn as_any_mut(&mut self) -> &mut dyn core::any::Any {
            self
        }
    };
}

/// Implements [`ArrayBuilder::data_type`] and [`ArrayBuilder::len`] from the builder's [`Slots`]
/// (at `self.slots` unless another path is given), and `as_any` / `as_any_mut` (inside the impl).
macro_rules! slots {
    () => {
        slots!(slots);
    };
    ($($path:tt)+) => {
        fn data_type(&self) -> &DataType {
            &self.$($path)+.data_type
        }

        fn len(&self) -> usize {
            self.$($path)+.validity.len()
        }

        as_any!();
    };
}

/// Implements `AppendValue<T>` and `AppendValue<Option<T>>` for a builder of `V` values that
/// deduplicates by [`ValueKey`] through its `append_with(key, append)`.
macro_rules! append_by_key {
    ($builder:ident) => {
        impl<T: ValueKey, V: AppendValue<T>> AppendValue<T> for $builder<V> {
            fn append_value(&mut self, value: T) {
                let mut key = core::mem::take(&mut self.key);
                key.clear();
                value.write_key(&mut key);
                self.append_with(&key, |values| values.append_value(value));
                self.key = key;
            }
        }

        impl<T: ValueKey, V: AppendValue<T>> AppendValue<Option<T>> for $builder<V> {
            fn append_value(&mut self, value: Option<T>) {
                <Self as AppendValue<T>>::append_option(self, value);
            }
        }
    };
}

mod batch;
mod binary;
mod bitmap;
mod boolean;
mod dictionary;
mod list;
mod null;
mod offsets;
mod primitive;
mod run_end;
mod structs;
mod union;

pub use batch::ArrowValue;
pub use binary::{
    BinaryBuilder, BinaryKind, ByteArrayBuilder, ByteKind, FixedSizeBinaryBuilder, StringBuilder,
    TextKind, VIEW_BLOCK_SIZE,
};
pub use bitmap::BitmapBuilder;
pub use boolean::BooleanBuilder;
pub use dictionary::DictionaryBuilder;
pub use list::{FixedSizeListBuilder, ListBuilder, MapBuilder};
pub use null::NullBuilder;
pub use primitive::{I256, IntervalDayTime, IntervalMonthDayNano, Primitive, PrimitiveBuilder};
pub use run_end::RunEndBuilder;
pub use structs::StructBuilder;
pub use union::UnionBuilder;

use bitmap::Validity;

use crate::array::{ArrayParts, ArrayView};
use crate::bytes::Bytes;
use crate::datatype::{DataType, IntervalUnit};
use crate::error::{FormatError, FormatErrorKind, FormatResult};
use crate::schema::{DictionaryEncoding, Field};
use alloc::boxed::Box;
use alloc::string::String;
use alloc::vec::Vec;
use core::any::Any;
use core::fmt::Debug;

/// A builder of one array of a fixed type; object safe, so nested builders hold any child.
pub trait ArrayBuilder: Any + Debug {
    /// The type of the array being built (the value type, for a dictionary builder).
    fn data_type(&self) -> &DataType;

    /// The dictionary encoding, for a dictionary builder.
    fn dictionary_encoding(&self) -> Option<DictionaryEncoding> {
        None
    }

    /// Number of slots appended since the last `finish`.
    fn len(&self) -> usize;

    /// Whether no slot has been appended since the last `finish`.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Appends one null slot. Nested builders fill their children as the layout needs (a null
    /// struct appends a null to each child); do not append to the children for it.
    fn append_null(&mut self);

    /// Appends `n` null slots.
    fn append_nulls(&mut self, n: usize) {
        for _ in 0..n {
            self.append_null();
        }
    }

    /// Validates and returns the array built so far, leaving the builder empty (same type).
    fn finish(&mut self) -> FormatResult<ArrayView<'static>>;

    /// A nullable field named `name` for this builder's arrays, with its dictionary encoding.
    fn field(&self, name: &str) -> Field {
        child_field(self, name, true)
    }

    /// The builder as [`Any`], to reach the concrete builder behind a `dyn ArrayBuilder`.
    fn as_any(&self) -> &dyn Any;

    /// The builder as mutable [`Any`].
    fn as_any_mut(&mut self) -> &mut dyn Any;
}

impl dyn ArrayBuilder {
    /// The concrete builder behind this trait object, if it is a `B`.
    pub fn downcast_ref<B: ArrayBuilder>(&self) -> Option<&B> {
        self.as_any().downcast_ref()
    }

    /// The concrete builder behind this trait object, mutably, if it is a `B`.
    pub fn downcast_mut<B: ArrayBuilder>(&mut self) -> Option<&mut B> {
        self.as_any_mut().downcast_mut()
    }
}

impl<B: ArrayBuilder + ?Sized> ArrayBuilder for Box<B> {
    fn data_type(&self) -> &DataType {
        (**self).data_type()
    }
    fn dictionary_encoding(&self) -> Option<DictionaryEncoding> {
        (**self).dictionary_encoding()
    }
    fn len(&self) -> usize {
        (**self).len()
    }
    fn append_null(&mut self) {
        (**self).append_null()
    }
    fn append_nulls(&mut self, n: usize) {
        (**self).append_nulls(n)
    }
    fn finish(&mut self) -> FormatResult<ArrayView<'static>> {
        (**self).finish()
    }
    fn field(&self, name: &str) -> Field {
        (**self).field(name)
    }
    fn as_any(&self) -> &dyn Any {
        (**self).as_any()
    }
    fn as_any_mut(&mut self) -> &mut dyn Any {
        (**self).as_any_mut()
    }
}

/// A builder that takes values of type `T`: `i32` for `PrimitiveBuilder<i32>`, `&str` or `String`
/// for [`StringBuilder`], an iterator of values for a [`ListBuilder`], and so on.
///
/// Flat builders (primitive, boolean, binary, string, dictionary, run-end) also take
/// `Option<T>` as a value (null for `None`), so a list's items may be `Option`s.
pub trait AppendValue<T>: ArrayBuilder {
    /// Appends one valid slot holding `value`.
    fn append_value(&mut self, value: T);

    /// Appends `value`, or a null slot for `None`.
    fn append_option(&mut self, value: Option<T>) {
        match value {
            Some(value) => self.append_value(value),
            None => self.append_null(),
        }
    }

    /// Appends one valid slot per value.
    fn extend_values<I: IntoIterator<Item = T>>(&mut self, values: I)
    where
        Self: Sized,
    {
        for value in values {
            self.append_value(value);
        }
    }

    /// Appends one slot per item, null for `None`.
    fn extend_options<I: IntoIterator<Item = Option<T>>>(&mut self, values: I)
    where
        Self: Sized,
    {
        for value in values {
            self.append_option(value);
        }
    }
}

/// A value's identity for dictionary deduplication and run merging: values with equal keys are
/// stored once (floats compare by bits).
pub trait ValueKey {
    /// Appends the key bytes of this value to `out`.
    fn write_key(&self, out: &mut Vec<u8>);
}

impl<T: ValueKey + ?Sized> ValueKey for &T {
    fn write_key(&self, out: &mut Vec<u8>) {
        (**self).write_key(out)
    }
}

/// Implements [`ValueKey`] for text and bytes: the key is the bytes.
macro_rules! key_by_bytes {
    ($($(const $n:ident =>)? $t:ty),*) => {$(
        impl<$(const $n: usize)?> ValueKey for $t {
            fn write_key(&self, out: &mut Vec<u8>) {
                out.extend_from_slice(AsRef::<[u8]>::as_ref(self))
            }
        }
    )*};
}

key_by_bytes!(str, String, [u8], const N => [u8; N], Vec<u8>);

impl ValueKey for bool {
    fn write_key(&self, out: &mut Vec<u8>) {
        out.push(u8::from(*self))
    }
}

/// A field named `name` for `builder`'s arrays, with its dictionary encoding.
fn child_field<B: ArrayBuilder + ?Sized>(builder: &B, name: &str, nullable: bool) -> Field {
    let field = Field::new(name, builder.data_type().clone(), nullable);
    match builder.dictionary_encoding() {
        Some(encoding) => field.with_dictionary(encoding),
        None => field,
    }
}

/// The error for a builder used against its layout (wrong type, wrong child count, …).
fn misuse(what: &'static str, index: usize) -> FormatError {
    FormatErrorKind::InvalidArray {
        what,
        index: index as u64,
    }
    .into()
}

/// Remembers the first error a builder meets; `finish` returns it.
fn remember(slot: &mut Option<FormatError>, error: FormatError) {
    if slot.is_none() {
        *slot = Some(error);
    }
}

/// The error a builder remembered (see [`remember`]) as an `Err`, or `Ok` without one.
fn remembered(error: Option<FormatError>) -> FormatResult<()> {
    error.map_or(Ok(()), Err)
}

/// What most builders keep besides their buffers: the array's type, the slots' validity, and
/// the first error met, which `finish` returns.
#[derive(Debug, Clone)]
struct Slots {
    data_type: DataType,
    validity: Validity,
    error: Option<FormatError>,
}

impl Slots {
    /// No slots of `data_type` yet, with the error of a type the builder cannot build (if any).
    fn new(data_type: DataType, error: Option<FormatError>) -> Self {
        Slots {
            data_type,
            validity: Validity::default(),
            error,
        }
    }

    /// Remembers `error` unless one came before (see [`remember`]).
    fn remember(&mut self, error: FormatError) {
        remember(&mut self.error, error);
    }

    /// The array of these slots with the builder's buffers and children (or the error met making
    /// them), leaving the slots empty; the remembered error comes first.
    fn finish(
        &mut self,
        contents: FormatResult<(Vec<Bytes<'static>>, Vec<ArrayView<'static>>)>,
    ) -> FormatResult<ArrayView<'static>> {
        let parts = self.validity.finish_parts(self.data_type.clone());
        remembered(self.error.take())?;
        let (buffers, children) = contents?;
        ArrayView::try_new(ArrayParts {
            buffers,
            children,
            ..parts
        })
    }
}

/// Finishes every child builder (each is left empty) and returns the arrays, unless `error` was
/// remembered or a child's length differs from `len` (when given): then the first of those.
fn finish_children(
    children: &mut [Box<dyn ArrayBuilder>],
    len: Option<usize>,
    differs: &'static str,
    mut error: Option<FormatError>,
) -> FormatResult<Vec<ArrayView<'static>>> {
    for (i, child) in children.iter().enumerate() {
        if len.is_some_and(|len| child.len() != len) {
            remember(&mut error, misuse(differs, i));
        }
    }
    let finished: Vec<_> = children.iter_mut().map(|c| c.finish()).collect();
    remembered(error)?;
    finished.into_iter().collect()
}

/// The builder for arrays of `field`: a [`DictionaryBuilder`] when the field is
/// dictionary-encoded, otherwise [`for_data_type`] of its type.
pub fn for_field(field: &Field) -> Box<dyn ArrayBuilder> {
    match field.dictionary() {
        Some(encoding) => Box::new(DictionaryBuilder::with_encoding(
            *encoding,
            for_data_type(field.data_type()),
        )),
        None => for_data_type(field.data_type()),
    }
}

/// The builder for arrays of `data_type`, children included.
///
/// | type | builder behind the box |
/// | --- | --- |
/// | `Int8`…`UInt64`, `Float32`, `Float64` | `PrimitiveBuilder` of `i8`…`u64`, `f32`, `f64` |
/// | `Float16` | `PrimitiveBuilder<u16>` (the bits) |
/// | `Decimal32`, `Decimal64`, `Decimal128`, `Decimal256` | `PrimitiveBuilder` of `i32`, `i64`, `i128`, [`I256`] |
/// | `Date32`, `Time32`, `Interval(YearMonth)` | `PrimitiveBuilder<i32>` |
/// | `Date64`, `Time64`, `Timestamp`, `Duration` | `PrimitiveBuilder<i64>` |
/// | `Interval(DayTime)`, `Interval(MonthDayNano)` | `PrimitiveBuilder` of [`IntervalDayTime`], [`IntervalMonthDayNano`] |
/// | binary and string types | [`BinaryBuilder`], [`StringBuilder`], [`FixedSizeBinaryBuilder`] |
/// | nested types | their builder over `Box<dyn ArrayBuilder>` children |
pub fn for_data_type(data_type: &DataType) -> Box<dyn ArrayBuilder> {
    use DataType::*;
    fn primitive<T: Primitive>(data_type: &DataType) -> Box<dyn ArrayBuilder> {
        Box::new(PrimitiveBuilder::<T>::with_data_type(data_type.clone()))
    }
    match data_type {
        Null => Box::new(NullBuilder::new()),
        Boolean => Box::new(BooleanBuilder::new()),
        Int8 => primitive::<i8>(data_type),
        Int16 => primitive::<i16>(data_type),
        Int32 | Date32 | Time32(_) | Decimal32(..) | Interval(IntervalUnit::YearMonth) => {
            primitive::<i32>(data_type)
        }
        Int64 | Date64 | Time64(_) | Timestamp(..) | Duration(_) | Decimal64(..) => {
            primitive::<i64>(data_type)
        }
        UInt8 => primitive::<u8>(data_type),
        UInt16 | Float16 => primitive::<u16>(data_type),
        UInt32 => primitive::<u32>(data_type),
        UInt64 => primitive::<u64>(data_type),
        Float32 => primitive::<f32>(data_type),
        Float64 => primitive::<f64>(data_type),
        Decimal128(..) => primitive::<i128>(data_type),
        Decimal256(..) => primitive::<I256>(data_type),
        Interval(IntervalUnit::DayTime) => primitive::<IntervalDayTime>(data_type),
        Interval(IntervalUnit::MonthDayNano) => primitive::<IntervalMonthDayNano>(data_type),
        Binary | LargeBinary | BinaryView => {
            Box::new(BinaryBuilder::with_data_type(data_type.clone()))
        }
        Utf8 | LargeUtf8 | Utf8View => Box::new(StringBuilder::with_data_type(data_type.clone())),
        FixedSizeBinary(_) => Box::new(FixedSizeBinaryBuilder::with_data_type(data_type.clone())),
        List(child) | LargeList(child) | ListView(child) | LargeListView(child) => Box::new(
            ListBuilder::with_data_type(data_type.clone(), for_field(child)),
        ),
        FixedSizeList(child, _) => Box::new(FixedSizeListBuilder::with_data_type(
            data_type.clone(),
            for_field(child),
        )),
        Map(entries, _) => {
            let (keys, values) = match entries.data_type().children() {
                [key, value] => (for_field(key), for_field(value)),
                _ => (for_data_type(&Null), for_data_type(&Null)),
            };
            Box::new(MapBuilder::with_data_type(data_type.clone(), keys, values))
        }
        Struct(fields) => Box::new(StructBuilder::with_data_type(
            data_type.clone(),
            fields.iter().map(for_field).collect(),
        )),
        Union(fields, _, _) => Box::new(UnionBuilder::with_data_type(
            data_type.clone(),
            fields.iter().map(for_field).collect(),
        )),
        RunEndEncoded(pair) => {
            let [_, values] = &**pair;
            Box::new(RunEndBuilder::with_data_type(
                data_type.clone(),
                for_field(values),
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::datatype::{TimeUnit, UnionMode};
    use crate::schema::Field;
    use alloc::sync::Arc;
    use alloc::vec;

    /// Every data type: each builder from `for_data_type` finishes an empty and an all-null array
    /// of exactly that type.
    #[test]
    fn every_type_has_a_builder_that_finishes() {
        let item = |t: DataType| Arc::new(Field::new("item", t, true));
        let types = vec![
            DataType::Null,
            DataType::Boolean,
            DataType::Int8,
            DataType::UInt64,
            DataType::Float16,
            DataType::Float64,
            DataType::Decimal32(9, 2),
            DataType::Decimal64(18, 2),
            DataType::Decimal128(38, 2),
            DataType::Decimal256(76, 2),
            DataType::Date32,
            DataType::Date64,
            DataType::Time32(TimeUnit::Millisecond),
            DataType::Time64(TimeUnit::Nanosecond),
            DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
            DataType::Duration(TimeUnit::Second),
            DataType::Interval(IntervalUnit::YearMonth),
            DataType::Interval(IntervalUnit::DayTime),
            DataType::Interval(IntervalUnit::MonthDayNano),
            DataType::Binary,
            DataType::LargeBinary,
            DataType::BinaryView,
            DataType::Utf8,
            DataType::LargeUtf8,
            DataType::Utf8View,
            DataType::FixedSizeBinary(3),
            DataType::List(item(DataType::Int32)),
            DataType::LargeList(item(DataType::Utf8)),
            DataType::ListView(item(DataType::Int32)),
            DataType::LargeListView(item(DataType::Int32)),
            DataType::FixedSizeList(item(DataType::Int16), 2),
            DataType::Struct(vec![Field::new("a", DataType::Int32, true)].into()),
            DataType::Map(
                Arc::new(Field::new(
                    "entries",
                    DataType::Struct(
                        vec![
                            Field::new("key", DataType::Utf8, false),
                            Field::new("value", DataType::Int32, true),
                        ]
                        .into(),
                    ),
                    false,
                )),
                false,
            ),
            DataType::Union(
                vec![
                    Field::new("a", DataType::Int32, true),
                    Field::new("b", DataType::Utf8, true),
                ]
                .into(),
                vec![3, 7].into(),
                UnionMode::Dense,
            ),
            DataType::Union(
                vec![Field::new("a", DataType::Int32, true)].into(),
                vec![0].into(),
                UnionMode::Sparse,
            ),
            DataType::RunEndEncoded(Arc::new([
                Field::new("run_ends", DataType::Int16, false),
                Field::new("values", DataType::Utf8, true),
            ])),
        ];
        for data_type in types {
            let mut builder = for_data_type(&data_type);
            let empty = builder.finish().unwrap();
            assert_eq!((empty.data_type(), empty.len()), (&data_type, 0));
            builder.append_nulls(3);
            let nulls = builder.finish().unwrap();
            assert_eq!((nulls.data_type(), nulls.len()), (&data_type, 3));
            let logical_nulls =
                matches!(data_type, DataType::Union(..) | DataType::RunEndEncoded(_));
            for i in 0..3 {
                assert_eq!(nulls.is_null(i), !logical_nulls, "{data_type:?}");
            }
        }
    }

    #[test]
    fn dictionary_fields_get_dictionary_builders() {
        let encoding = DictionaryEncoding {
            id: 4,
            index_type: crate::datatype::IntType {
                bit_width: 16,
                signed: false,
            },
            ordered: true,
        };
        let field = Field::new("d", DataType::Utf8, true).with_dictionary(encoding);
        let mut builder = for_field(&field);
        assert_eq!(builder.dictionary_encoding(), Some(encoding));
        assert_eq!(builder.field("d"), field);
        builder
            .downcast_mut::<DictionaryBuilder<Box<dyn ArrayBuilder>>>()
            .unwrap()
            .append_with(b"x", |values| {
                values
                    .downcast_mut::<StringBuilder>()
                    .unwrap()
                    .append_value("x")
            });
        let array = builder.finish().unwrap();
        assert_eq!(array.dictionary().unwrap().values.str_value(0), "x");
        assert!(builder.downcast_ref::<PrimitiveBuilder<i32>>().is_none());
    }
}
