//! Random schemas and record batches for property tests, shared by the builder, writer, JSON and
//! fuzz tests.
//!
//! - [`schema`] and [`field`]: every [`DataType`] variant is reachable (nested up to
//!   [`Options::max_depth`]), nullable and not, dictionary-encoded fields with unique ids, custom
//!   metadata.
//! - [`batch`]: a [`RecordBatch`] of random data for a schema, built with `quiver::builder`, with
//!   nulls, empty batches, zero-length and sliced columns; it comes with the logical [`Value`]s
//!   every column was built from.
//! - [`value_at`]: reads a slot back through the `ArrayView` accessors as a [`Value`], so any
//!   array (built, read from a file, decoded from JSON) compares with what was put in.

use proptest::prelude::*;
use proptest::sample::subsequence;
use quiver::array::{ArrayView, RecordBatch};
use quiver::builder::{
    AppendValue, ArrayBuilder, BinaryBuilder, BooleanBuilder, DictionaryBuilder,
    FixedSizeBinaryBuilder, FixedSizeListBuilder, I256, IntervalDayTime, IntervalMonthDayNano,
    ListBuilder, MapBuilder, PrimitiveBuilder, RunEndBuilder, StringBuilder, StructBuilder,
    UnionBuilder, for_field,
};
use quiver::datatype::{DataType, IntType, IntervalUnit, TimeUnit, UnionMode};
use quiver::error::FormatResult;
use quiver::schema::{DictionaryEncoding, Field, Metadata, Schema};
use std::sync::Arc;

/// What the strategies generate; `Options::default()` reaches every type.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// Deepest nesting of nested types (a flat type is depth 0).
    pub max_depth: u32,
    /// Most fields of a struct and children of a union.
    pub max_children: usize,
    /// Most columns of a schema (a schema may have none).
    pub max_columns: usize,
    /// Most rows of a batch (a batch may have none).
    pub max_rows: usize,
    /// Most values in one list or map slot.
    pub max_list_len: usize,
    /// Most slots cut off either end of a built column before it enters the batch (slicing).
    pub max_slice_pad: usize,
    /// Whether fields may be dictionary-encoded.
    pub dictionaries: bool,
    /// Whether fields and schemas get custom metadata.
    pub metadata: bool,
    /// Types to leave out, e.g. ones another implementation cannot read (checked on every type
    /// generated, nested or not).
    pub skip: fn(&DataType) -> bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            max_depth: 4,
            max_children: 3,
            max_columns: 4,
            max_rows: 8,
            max_list_len: 3,
            max_slice_pad: 2,
            dictionaries: true,
            metadata: true,
            skip: |_| false,
        }
    }
}

/// One logical slot, whatever the array's layout (dictionary and run-end encoded arrays hold the
/// decoded value).
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// A null slot (a union's null is a `Union` holding `Null`).
    Null,
    /// A boolean.
    Bool(bool),
    /// The little-endian bytes of a fixed-width value: integers, floats (by bits), decimals,
    /// dates, times, timestamps, durations, intervals and fixed-size binary.
    Fixed(Vec<u8>),
    /// The bytes of a binary or string value (UTF-8 for the string types).
    Bytes(Vec<u8>),
    /// The items of any list type, or a map's entries as `Struct([key, value])`.
    List(Vec<Value>),
    /// The fields of a struct, in order.
    Struct(Vec<Value>),
    /// A union slot: the type id and the selected child's value.
    Union(i8, Box<Value>),
}

impl Value {
    /// Bytes that identify the value (for dictionary deduplication and run merging).
    fn key(&self) -> Vec<u8> {
        format!("{self:?}").into_bytes()
    }
}

// ---------------------------------------------------------------------------------------------
// Types and schemas

fn time_unit() -> impl Strategy<Value = TimeUnit> {
    prop_oneof![
        Just(TimeUnit::Second),
        Just(TimeUnit::Millisecond),
        Just(TimeUnit::Microsecond),
        Just(TimeUnit::Nanosecond),
    ]
}

fn decimal(max_precision: u8) -> impl Strategy<Value = (u8, i8)> {
    (1..=max_precision).prop_flat_map(|p| (Just(p), -2..=(p.min(4) as i8)))
}

/// Every type without children.
pub fn flat_type() -> BoxedStrategy<DataType> {
    use DataType::*;
    prop_oneof![
        Just(Null),
        Just(Boolean),
        prop_oneof![
            Just(Int8),
            Just(Int16),
            Just(Int32),
            Just(Int64),
            Just(UInt8),
            Just(UInt16),
            Just(UInt32),
            Just(UInt64),
        ],
        prop_oneof![Just(Float16), Just(Float32), Just(Float64)],
        prop_oneof![
            decimal(9).prop_map(|(p, s)| Decimal32(p, s)),
            decimal(18).prop_map(|(p, s)| Decimal64(p, s)),
            decimal(38).prop_map(|(p, s)| Decimal128(p, s)),
            decimal(76).prop_map(|(p, s)| Decimal256(p, s)),
        ],
        prop_oneof![
            Just(Date32),
            Just(Date64),
            prop_oneof![Just(TimeUnit::Second), Just(TimeUnit::Millisecond)].prop_map(Time32),
            prop_oneof![Just(TimeUnit::Microsecond), Just(TimeUnit::Nanosecond)].prop_map(Time64),
            (
                time_unit(),
                prop_oneof![Just(None), Just(Some("UTC")), Just(Some("+05:30"))]
            )
                .prop_map(|(u, tz)| Timestamp(u, tz.map(Arc::from))),
            time_unit().prop_map(Duration),
            prop_oneof![
                Just(IntervalUnit::YearMonth),
                Just(IntervalUnit::DayTime),
                Just(IntervalUnit::MonthDayNano),
            ]
            .prop_map(Interval),
        ],
        prop_oneof![
            Just(Binary),
            Just(LargeBinary),
            Just(BinaryView),
            (0..=6i32).prop_map(FixedSizeBinary),
        ],
        prop_oneof![Just(Utf8), Just(LargeUtf8), Just(Utf8View)],
    ]
    .boxed()
}

/// Whether fields of this type may be dictionary-encoded here (flat types other
/// implementations commonly accept as dictionary values).
fn dictionary_value_type(data_type: &DataType) -> bool {
    use DataType::*;
    matches!(
        data_type,
        Int8 | Int16
            | Int32
            | Int64
            | UInt8
            | UInt16
            | UInt32
            | UInt64
            | Float32
            | Float64
            | Decimal128(..)
            | Date32
            | Date64
            | Timestamp(..)
            | Binary
            | LargeBinary
            | FixedSizeBinary(_)
            | Utf8
            | LargeUtf8
    )
}

fn index_type() -> impl Strategy<Value = IntType> {
    (
        prop_oneof![Just(8u8), Just(16), Just(32), Just(64)],
        any::<bool>(),
    )
        .prop_map(|(bit_width, signed)| IntType { bit_width, signed })
}

fn metadata(opts: Options) -> BoxedStrategy<Metadata> {
    if !opts.metadata {
        return Just(Metadata::new()).boxed();
    }
    prop::collection::vec(("[a-z]{1,6}", "\\PC{0,8}"), 0..=2)
        .prop_map(|pairs| {
            let mut seen = std::collections::BTreeSet::new();
            pairs
                .into_iter()
                .filter(|(k, _)| seen.insert(k.clone()))
                .collect()
        })
        .boxed()
}

/// A field of `data_type` named `name`: random nullability (unless `nullable` is given),
/// metadata, and a dictionary encoding (id 0; [`schema`] renumbers) for eligible types.
fn field_of(
    name: String,
    data_type: DataType,
    nullable: Option<bool>,
    opts: Options,
) -> BoxedStrategy<Field> {
    let dictionary = if opts.dictionaries && dictionary_value_type(&data_type) {
        prop::option::weighted(0.25, (index_type(), any::<bool>())).boxed()
    } else {
        Just(None).boxed()
    };
    // Null arrays are all nulls: their fields are nullable.
    let nullable = if data_type == DataType::Null {
        Some(true)
    } else {
        nullable
    };
    let nullable = match nullable {
        Some(n) => Just(n).boxed(),
        None => any::<bool>().boxed(),
    };
    (nullable, metadata(opts), dictionary)
        .prop_map(move |(nullable, metadata, dictionary)| {
            let field =
                Field::new(name.clone(), data_type.clone(), nullable).with_metadata(metadata);
            match dictionary {
                Some((index_type, ordered)) => field.with_dictionary(DictionaryEncoding {
                    id: 0,
                    index_type,
                    ordered,
                }),
                None => field,
            }
        })
        .boxed()
}

/// Names for sibling fields: unique, some with spaces, quotes or non-ASCII letters.
fn names(n: usize) -> impl Strategy<Value = Vec<String>> {
    prop::collection::vec(
        prop_oneof![Just("f"), Just("a b"), Just("ünï"), Just("q\"")],
        n,
    )
    .prop_map(|bases| {
        bases
            .into_iter()
            .enumerate()
            .map(|(i, b)| format!("{b}{i}"))
            .collect()
    })
}

/// A random type: flat, or nested up to `opts.max_depth` levels.
pub fn data_type(opts: Options) -> BoxedStrategy<DataType> {
    let skip = opts.skip;
    let leaf = flat_type().prop_filter("skipped type", move |t| !skip(t));
    leaf.prop_recursive(
        opts.max_depth,
        48,
        opts.max_children as u32 + 1,
        move |inner| {
            let child = move |name: &'static str, nullable: Option<bool>| {
                inner
                    .clone()
                    .prop_flat_map(move |t| field_of(name.into(), t, nullable, opts))
            };
            let fields = {
                let inner = child("", None);
                (0..=opts.max_children).prop_flat_map(move |n| {
                    let inner = inner.clone();
                    (names(n), prop::collection::vec(inner, n)).prop_map(|(names, fields)| {
                        fields
                            .into_iter()
                            .zip(names)
                            .map(|(f, name)| rename(&f, &name))
                            .collect::<Vec<_>>()
                    })
                })
            };
            let union_fields = {
                let inner = child("", Some(true));
                (1..=opts.max_children.max(1)).prop_flat_map(move |n| {
                    let inner = inner.clone();
                    (
                        names(n),
                        prop::collection::vec(inner, n),
                        subsequence((0..=127i8).collect::<Vec<_>>(), n).prop_shuffle(),
                        prop_oneof![Just(UnionMode::Sparse), Just(UnionMode::Dense)],
                    )
                        .prop_map(|(names, fields, ids, mode)| {
                            let fields: Vec<Field> = fields
                                .into_iter()
                                .zip(names)
                                .map(|(f, name)| rename(&f, &name))
                                .collect();
                            DataType::Union(fields.into(), ids.into(), mode)
                        })
                })
            };
            let map_key = flat_type()
                .prop_filter("map keys are not null", move |t| {
                    *t != DataType::Null && !skip(t)
                })
                .prop_map(|t| Field::new("key", t, false));
            let run_ends = prop_oneof![
                Just(DataType::Int16),
                Just(DataType::Int32),
                Just(DataType::Int64)
            ];
            prop_oneof![
                child("item", None).prop_map(|f| DataType::List(Arc::new(f))),
                child("item", None).prop_map(|f| DataType::LargeList(Arc::new(f))),
                child("item", None).prop_map(|f| DataType::ListView(Arc::new(f))),
                child("item", None).prop_map(|f| DataType::LargeListView(Arc::new(f))),
                (child("item", None), 0..=3i32)
                    .prop_map(|(f, n)| DataType::FixedSizeList(Arc::new(f), n)),
                fields.prop_map(|f| DataType::Struct(f.into())),
                (map_key, child("value", None), any::<bool>()).prop_map(|(k, v, sorted)| {
                    let entries = DataType::Struct(vec![k, v].into());
                    DataType::Map(Arc::new(Field::new("entries", entries, false)), sorted)
                }),
                union_fields,
                (run_ends, child("values", Some(true))).prop_map(|(r, v)| {
                    DataType::RunEndEncoded(Arc::new([Field::new("run_ends", r, false), v]))
                }),
            ]
            .prop_filter("skipped type", move |t| !skip(t))
        },
    )
    .boxed()
}

/// A random top-level field named `name` (dictionary ids are all 0 until [`schema`] renumbers).
pub fn field(name: String, opts: Options) -> BoxedStrategy<Field> {
    data_type(opts)
        .prop_flat_map(move |t| field_of(name.clone(), t, None, opts))
        .boxed()
}

/// A random schema: up to `opts.max_columns` fields, unique dictionary ids, maybe metadata.
pub fn schema(opts: Options) -> BoxedStrategy<Schema> {
    (0..=opts.max_columns)
        .prop_flat_map(move |n| {
            let fields: Vec<_> = (0..n).map(|i| field(format!("c{i}"), opts)).collect();
            (fields, metadata(opts))
        })
        .prop_map(|(fields, metadata)| {
            let mut next = 0;
            let fields = fields.iter().map(|f| renumber(f, &mut next)).collect();
            Schema::new(fields).with_metadata(metadata)
        })
        .boxed()
}

/// `field` with another name.
fn rename(field: &Field, name: &str) -> Field {
    rebuild(
        field,
        name,
        field.data_type().clone(),
        field.dictionary().copied(),
    )
}

fn rebuild(
    field: &Field,
    name: &str,
    data_type: DataType,
    dictionary: Option<DictionaryEncoding>,
) -> Field {
    let out =
        Field::new(name, data_type, field.is_nullable()).with_metadata(field.metadata().clone());
    match dictionary {
        Some(d) => out.with_dictionary(d),
        None => out,
    }
}

/// `field` with its dictionaries (its own and nested ones) numbered from `next`, depth first.
pub fn renumber(field: &Field, next: &mut i64) -> Field {
    let dictionary = field.dictionary().map(|d| {
        let id = *next;
        *next += 1;
        DictionaryEncoding { id, ..*d }
    });
    let data_type = map_children(field.data_type(), |child| renumber(child, next));
    rebuild(field, field.name(), data_type, dictionary)
}

/// `data_type` with each child field replaced by `f(child)`.
pub fn map_children(data_type: &DataType, mut f: impl FnMut(&Field) -> Field) -> DataType {
    use DataType::*;
    match data_type {
        List(c) => List(Arc::new(f(c))),
        LargeList(c) => LargeList(Arc::new(f(c))),
        ListView(c) => ListView(Arc::new(f(c))),
        LargeListView(c) => LargeListView(Arc::new(f(c))),
        FixedSizeList(c, n) => FixedSizeList(Arc::new(f(c)), *n),
        Map(c, sorted) => Map(Arc::new(f(c)), *sorted),
        Struct(fields) => Struct(fields.iter().map(f).collect()),
        Union(fields, ids, mode) => Union(fields.iter().map(f).collect(), ids.clone(), *mode),
        RunEndEncoded(pair) => {
            let [a, b] = &**pair;
            RunEndEncoded(Arc::new([f(a), f(b)]))
        }
        other => other.clone(),
    }
}

// ---------------------------------------------------------------------------------------------
// Values

fn fixed(bytes: impl Strategy<Value = Vec<u8>> + 'static) -> BoxedStrategy<Value> {
    bytes.prop_map(Value::Fixed).boxed()
}

fn int_in(range: std::ops::RangeInclusive<i64>, width: usize) -> BoxedStrategy<Value> {
    range
        .prop_map(move |v| Value::Fixed(v.to_le_bytes()[..width].to_vec()))
        .boxed()
}

/// Multiplier from seconds to `unit`.
fn per_second(unit: TimeUnit) -> i64 {
    match unit {
        TimeUnit::Second => 1,
        TimeUnit::Millisecond => 1_000,
        TimeUnit::Microsecond => 1_000_000,
        TimeUnit::Nanosecond => 1_000_000_000,
    }
}

/// A non-null value of a flat type (decimals within their precision, dates and timestamps
/// within years 1–9999 where the unit allows, times within a day).
fn flat_value(data_type: &DataType) -> BoxedStrategy<Value> {
    use DataType::*;
    const MIN_DAY: i64 = -719_162; // 0001-01-01
    const MAX_DAY: i64 = 2_932_896; // 9999-12-31
    let decimal = |p: u8, width: usize| {
        let max = 10i128.pow(u32::from(p.min(38))) - 1;
        (-max..=max)
            .prop_map(move |v| {
                let fill = if v < 0 { 0xFF } else { 0 };
                let mut bytes = v.to_le_bytes().to_vec();
                bytes.resize(32, fill);
                bytes.truncate(width);
                Value::Fixed(bytes)
            })
            .boxed()
    };
    match data_type {
        Null => Just(Value::Null).boxed(),
        Boolean => any::<bool>().prop_map(Value::Bool).boxed(),
        Binary | LargeBinary | BinaryView => prop::collection::vec(any::<u8>(), 0..=20)
            .prop_map(Value::Bytes)
            .boxed(),
        Utf8 | LargeUtf8 | Utf8View => "\\PC{0,16}"
            .prop_map(|s: String| Value::Bytes(s.into_bytes()))
            .boxed(),
        FixedSizeBinary(w) => fixed(prop::collection::vec(any::<u8>(), *w as usize)),
        Decimal32(p, _) => decimal(*p, 4),
        Decimal64(p, _) => decimal(*p, 8),
        Decimal128(p, _) => decimal(*p, 16),
        Decimal256(p, _) => decimal(*p, 32),
        Date32 => int_in(MIN_DAY..=MAX_DAY, 4),
        Date64 => (MIN_DAY..=MAX_DAY)
            .prop_map(|d| Value::Fixed((d * 86_400_000).to_le_bytes().to_vec()))
            .boxed(),
        Time32(unit) | Time64(unit) => {
            let width = if matches!(data_type, Time32(_)) { 4 } else { 8 };
            int_in(0..=86_400 * per_second(*unit) - 1, width)
        }
        Timestamp(unit, _) => {
            let limit = (MAX_DAY * 86_400).saturating_mul(per_second(*unit));
            let low = (MIN_DAY * 86_400).saturating_mul(per_second(*unit));
            int_in(low..=limit, 8)
        }
        other => {
            let width = other.byte_width().unwrap_or(0);
            fixed(prop::collection::vec(any::<u8>(), width))
        }
    }
}

/// `len` random logical values for `field` (nulls only where the field is nullable, or where
/// the type has only nulls).
pub fn values(field: &Field, len: usize, opts: Options) -> BoxedStrategy<Vec<Value>> {
    if field.dictionary().is_some() {
        let value_field = Field::new(field.name(), field.data_type().clone(), false);
        let nullable = field.is_nullable();
        return (1..=4usize)
            .prop_flat_map(move |k| {
                (
                    values(&value_field, k, opts),
                    prop::collection::vec(maybe(nullable, 0..k), len),
                )
            })
            .prop_map(|(dictionary, indices)| {
                indices
                    .into_iter()
                    .map(|i| i.map_or(Value::Null, |i| dictionary[i].clone()))
                    .collect()
            })
            .boxed();
    }
    let nullable = field.is_nullable();
    use DataType::*;
    match field.data_type().clone() {
        List(child) | LargeList(child) | ListView(child) | LargeListView(child) => {
            lists(child.as_ref().clone(), nullable, len, opts)
        }
        Map(entries, _) => lists(entries.as_ref().clone(), nullable, len, opts),
        FixedSizeList(child, n) => {
            let n = n as usize;
            prop::collection::vec(maybe(nullable, Just(())), len)
                .prop_flat_map(move |valid| {
                    let count = valid.iter().flatten().count();
                    (Just(valid), values(&child, count * n, opts))
                })
                .prop_map(move |(valid, items)| {
                    let mut items = items.into_iter();
                    valid
                        .into_iter()
                        .map(|v| match v {
                            Some(()) => Value::List(items.by_ref().take(n).collect()),
                            None => Value::Null,
                        })
                        .collect()
                })
                .boxed()
        }
        Struct(fields) => {
            let children: Vec<_> = fields.iter().map(|f| values(f, len, opts)).collect();
            (
                prop::collection::vec(maybe(nullable, Just(())), len),
                children,
            )
                .prop_map(move |(valid, children)| {
                    (0..len)
                        .map(|i| match valid[i] {
                            Some(()) => {
                                Value::Struct(children.iter().map(|c| c[i].clone()).collect())
                            }
                            None => Value::Null,
                        })
                        .collect()
                })
                .boxed()
        }
        Union(fields, ids, _) => {
            let n = fields.len();
            prop::collection::vec(0..n, len)
                .prop_flat_map(move |choice| {
                    let children: Vec<_> = fields
                        .iter()
                        .enumerate()
                        .map(|(k, f)| values(f, choice.iter().filter(|c| **c == k).count(), opts))
                        .collect();
                    (Just(choice), children)
                })
                .prop_map(move |(choice, children)| {
                    let mut children: Vec<_> =
                        children.into_iter().map(|c| c.into_iter()).collect();
                    choice
                        .into_iter()
                        .map(|k| {
                            let value = children[k].next().unwrap_or(Value::Null);
                            Value::Union(ids[k], Box::new(value))
                        })
                        .collect()
                })
                .boxed()
        }
        RunEndEncoded(pair) => {
            let [_, value_field] = &*pair;
            (
                prop::collection::vec(any::<bool>(), len),
                values(value_field, len, opts),
            )
                .prop_map(|(repeat, fresh)| {
                    let mut out: Vec<Value> = Vec::with_capacity(fresh.len());
                    for (again, value) in repeat.into_iter().zip(fresh) {
                        let value = match out.last() {
                            Some(last) if again => last.clone(),
                            _ => value,
                        };
                        out.push(value);
                    }
                    out
                })
                .boxed()
        }
        Null => Just(vec![Value::Null; len]).boxed(),
        flat => prop::collection::vec(maybe(nullable, flat_value(&flat)), len)
            .prop_map(|v| v.into_iter().map(|v| v.unwrap_or(Value::Null)).collect())
            .boxed(),
    }
}

/// `Some(value)`, or sometimes `None` when `nullable`.
fn maybe<S: Strategy + 'static>(nullable: bool, s: S) -> BoxedStrategy<Option<S::Value>>
where
    S::Value: Clone,
{
    if nullable {
        prop::option::weighted(0.8, s).boxed()
    } else {
        s.prop_map(Some).boxed()
    }
}

/// `len` list slots of values of `child`.
fn lists(child: Field, nullable: bool, len: usize, opts: Options) -> BoxedStrategy<Vec<Value>> {
    prop::collection::vec(maybe(nullable, 0..=opts.max_list_len), len)
        .prop_flat_map(move |sizes| {
            let total = sizes.iter().flatten().sum();
            (Just(sizes), values(&child, total, opts))
        })
        .prop_map(|(sizes, items)| {
            let mut items = items.into_iter();
            sizes
                .into_iter()
                .map(|size| match size {
                    Some(n) => Value::List(items.by_ref().take(n).collect()),
                    None => Value::Null,
                })
                .collect()
        })
        .boxed()
}

// ---------------------------------------------------------------------------------------------
// Building and reading back

/// Builds an array of `field` holding `values`, through the builder [`for_field`] makes.
pub fn build(field: &Field, values: &[Value]) -> FormatResult<ArrayView<'static>> {
    let mut builder = for_field(field);
    for value in values {
        append(&mut *builder, field, value);
    }
    builder.finish()
}

/// The builder behind `b`, as `B` (the mapping of `quiver::builder::for_data_type`).
fn cast<B: ArrayBuilder>(b: &mut dyn ArrayBuilder) -> &mut B {
    let name = format!("{:?}", b.data_type());
    b.downcast_mut::<B>()
        .unwrap_or_else(|| panic!("unexpected builder for {name}"))
}

fn bytes(value: &Value) -> &[u8] {
    match value {
        Value::Fixed(b) | Value::Bytes(b) => b,
        other => panic!("expected bytes, got {other:?}"),
    }
}

fn primitive<T: quiver::builder::Primitive>(b: &mut dyn ArrayBuilder, value: &Value) {
    cast::<PrimitiveBuilder<T>>(b).append_value(T::from_le_slice(bytes(value)));
}

/// Appends one logical `value` of `field` to `b`, a builder from [`for_field`].
pub fn append(b: &mut dyn ArrayBuilder, field: &Field, value: &Value) {
    type Dyn = Box<dyn ArrayBuilder>;
    let data_type = field.data_type();
    if *value == Value::Null {
        b.append_null();
        return;
    }
    if field.dictionary().is_some() {
        let value_field = Field::new(field.name(), data_type.clone(), false);
        cast::<DictionaryBuilder<Dyn>>(b).append_with(&value.key(), |values| {
            append(&mut **values, &value_field, value)
        });
        return;
    }
    use DataType::*;
    match (data_type, value) {
        (Boolean, Value::Bool(v)) => cast::<BooleanBuilder>(b).append_value(*v),
        (Int8, _) => primitive::<i8>(b, value),
        (Int16, _) => primitive::<i16>(b, value),
        (Int32 | Date32 | Time32(_) | Decimal32(..) | Interval(IntervalUnit::YearMonth), _) => {
            primitive::<i32>(b, value)
        }
        (Int64 | Date64 | Time64(_) | Timestamp(..) | Duration(_) | Decimal64(..), _) => {
            primitive::<i64>(b, value)
        }
        (UInt8, _) => primitive::<u8>(b, value),
        (UInt16 | Float16, _) => primitive::<u16>(b, value),
        (UInt32, _) => primitive::<u32>(b, value),
        (UInt64, _) => primitive::<u64>(b, value),
        (Float32, _) => primitive::<f32>(b, value),
        (Float64, _) => primitive::<f64>(b, value),
        (Decimal128(..), _) => primitive::<i128>(b, value),
        (Decimal256(..), _) => primitive::<I256>(b, value),
        (Interval(IntervalUnit::DayTime), _) => primitive::<IntervalDayTime>(b, value),
        (Interval(IntervalUnit::MonthDayNano), _) => primitive::<IntervalMonthDayNano>(b, value),
        (Binary | LargeBinary | BinaryView, _) => {
            cast::<BinaryBuilder>(b).append_value(bytes(value))
        }
        (Utf8 | LargeUtf8 | Utf8View, _) => {
            let text = std::str::from_utf8(bytes(value)).expect("generated strings are UTF-8");
            cast::<StringBuilder>(b).append_value(text)
        }
        (FixedSizeBinary(_), _) => cast::<FixedSizeBinaryBuilder>(b).append_value(bytes(value)),
        (
            List(child) | LargeList(child) | ListView(child) | LargeListView(child),
            Value::List(items),
        ) => {
            let list = cast::<ListBuilder<Dyn>>(b);
            for item in items {
                append(&mut **list.values(), child, item);
            }
            list.append();
        }
        (FixedSizeList(child, _), Value::List(items)) => {
            let list = cast::<FixedSizeListBuilder<Dyn>>(b);
            for item in items {
                append(&mut **list.values(), child, item);
            }
            list.append();
        }
        (Map(entries, _), Value::List(items)) => {
            let [key_field, value_field] = entries.data_type().children() else {
                panic!("map entries without two fields");
            };
            let map = cast::<MapBuilder<Dyn, Dyn>>(b);
            for item in items {
                let Value::Struct(pair) = item else {
                    panic!("map entry {item:?}")
                };
                let (keys, values) = map.entries();
                append(&mut **keys, key_field, &pair[0]);
                append(&mut **values, value_field, &pair[1]);
            }
            map.append();
        }
        (Struct(fields), Value::Struct(children)) => {
            let builder = cast::<StructBuilder>(b);
            for (i, (field, child)) in fields.iter().zip(children).enumerate() {
                append(builder.child(i).expect("struct child"), field, child);
            }
            builder.append();
        }
        (Union(fields, ids, _), Value::Union(id, inner)) => {
            let k = ids.iter().position(|i| i == id).expect("declared type id");
            let child = cast::<UnionBuilder>(b)
                .append_child(*id)
                .expect("declared type id");
            append(child, &fields[k], inner);
        }
        (RunEndEncoded(pair), _) => {
            let value_field = &pair[1];
            cast::<RunEndBuilder<Dyn>>(b).append_with(&value.key(), |values| {
                append(&mut **values, value_field, value)
            });
        }
        (other, value) => panic!("no way to append {value:?} to {other:?}"),
    }
}

/// Slot `i` of `array`, read through the `ArrayView` accessors.
pub fn value_at(array: &ArrayView<'_>, i: usize) -> Value {
    use DataType::*;
    if let Some(dictionary) = array.dictionary() {
        return match array.is_null(i) {
            true => Value::Null,
            false => value_at(&dictionary.values, array.dictionary_index(i)),
        };
    }
    let child = |k: usize| array.child(k).expect("child array");
    match array.data_type() {
        Union(_, ids, _) => {
            let (k, slot) = array.union_value(i);
            return Value::Union(ids[k], Box::new(value_at(child(k), slot)));
        }
        RunEndEncoded(_) => return value_at(child(1), array.run_index(i)),
        _ if array.is_null(i) => return Value::Null,
        _ => {}
    }
    let le = |bytes: &[u8]| Value::Fixed(bytes.to_vec());
    match array.data_type() {
        Null => Value::Null,
        Boolean => Value::Bool(array.bool_value(i)),
        Int8 => le(&array.value::<i8>(i).to_le_bytes()),
        Int16 => le(&array.value::<i16>(i).to_le_bytes()),
        Int32 | Date32 | Time32(_) | Decimal32(..) => le(&array.value::<i32>(i).to_le_bytes()),
        Int64 | Date64 | Time64(_) | Timestamp(..) | Duration(_) | Decimal64(..) => {
            le(&array.value::<i64>(i).to_le_bytes())
        }
        UInt8 => le(&array.value::<u8>(i).to_le_bytes()),
        UInt16 | Float16 => le(&array.value::<u16>(i).to_le_bytes()),
        UInt32 => le(&array.value::<u32>(i).to_le_bytes()),
        UInt64 => le(&array.value::<u64>(i).to_le_bytes()),
        Float32 => le(&array.value::<f32>(i).to_bits().to_le_bytes()),
        Float64 => le(&array.value::<f64>(i).to_bits().to_le_bytes()),
        Decimal128(..) => le(&array.value::<i128>(i).to_le_bytes()),
        Decimal256(..) => le(&array.value::<I256>(i).0),
        Binary | LargeBinary | BinaryView => Value::Bytes(array.bytes_value(i).to_vec()),
        Utf8 | LargeUtf8 | Utf8View => Value::Bytes(array.str_value(i).as_bytes().to_vec()),
        List(_) | LargeList(_) | ListView(_) | LargeListView(_) | FixedSizeList(..) | Map(..) => {
            Value::List(array.list_range(i).map(|j| value_at(child(0), j)).collect())
        }
        Struct(_) => Value::Struct(
            array
                .children()
                .iter()
                .map(|c| value_at(c, array.offset() + i))
                .collect(),
        ),
        _ => le(array.fixed_bytes(i)),
    }
}

/// Every slot of `array`, read back.
pub fn column_values(array: &ArrayView<'_>) -> Vec<Value> {
    (0..array.len()).map(|i| value_at(array, i)).collect()
}

/// A record batch and the values each column was built from.
#[derive(Debug, Clone)]
pub struct Generated {
    /// The batch (columns may be slices of longer built arrays).
    pub batch: RecordBatch<'static>,
    /// The logical values of each column, in schema order.
    pub columns: Vec<Vec<Value>>,
}

/// A batch of random data for `schema`: up to `opts.max_rows` rows (possibly none), each column
/// built from random values and then sliced (up to `opts.max_slice_pad` slots cut off each end).
pub fn batch(schema: Arc<Schema>, opts: Options) -> BoxedStrategy<Generated> {
    let fields: Vec<Field> = schema.fields().to_vec();
    (0..=opts.max_rows)
        .prop_flat_map(move |rows| {
            let columns: Vec<_> = fields
                .iter()
                .map(|field| {
                    let field = field.clone();
                    (0..=opts.max_slice_pad, 0..=opts.max_slice_pad).prop_flat_map(
                        move |(before, after)| {
                            (Just(before), values(&field, before + rows + after, opts))
                        },
                    )
                })
                .collect();
            (Just(rows), columns)
        })
        .prop_map(move |(rows, columns)| {
            let mut arrays = Vec::new();
            let mut expected = Vec::new();
            for (field, (before, values)) in schema.fields().iter().zip(columns) {
                let built = build(field, &values)
                    .unwrap_or_else(|e| panic!("building {field:?} from {values:?}: {e}"));
                arrays.push(built.slice(before, rows).expect("slice inside the array"));
                expected.push(values[before..before + rows].to_vec());
            }
            let batch = RecordBatch::try_new(Arc::clone(&schema), arrays, rows)
                .unwrap_or_else(|e| panic!("batch for {schema:?}: {e}"));
            Generated {
                batch,
                columns: expected,
            }
        })
        .boxed()
}

/// A random schema and one batch of data for it.
pub fn schema_and_batch(opts: Options) -> BoxedStrategy<Generated> {
    schema(opts)
        .prop_flat_map(move |schema| batch(Arc::new(schema), opts))
        .boxed()
}

/// A random schema and up to `max_batches` batches for it (each with its own dictionaries).
pub fn schema_and_batches(
    opts: Options,
    max_batches: usize,
) -> BoxedStrategy<(Arc<Schema>, Vec<Generated>)> {
    schema(opts)
        .prop_flat_map(move |schema| {
            let schema = Arc::new(schema);
            (
                Just(Arc::clone(&schema)),
                prop::collection::vec(batch(schema, opts), 0..=max_batches),
            )
        })
        .boxed()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renumbering_gives_unique_ids_depth_first() {
        let enc = DictionaryEncoding {
            id: 0,
            index_type: IntType {
                bit_width: 8,
                signed: true,
            },
            ordered: false,
        };
        let inner = Field::new("item", DataType::Utf8, true).with_dictionary(enc);
        let outer = Field::new("l", DataType::List(Arc::new(inner)), true);
        let mut next = 5;
        let renumbered = renumber(&outer, &mut next);
        assert_eq!(next, 6);
        assert_eq!(
            renumbered.data_type().children()[0]
                .dictionary()
                .unwrap()
                .id,
            5
        );
    }
}
