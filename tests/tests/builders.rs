//! Builders: every builder's array validates and reads back through the `ArrayView` accessors
//! with the values put in, whole and sliced, nested up to depth 4, and for random schemas and
//! data (the shared strategy in `quiver_tests::arbitrary`).

use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use quiver::array::{ArrayView, RecordBatch};
use quiver::builder::{
    AppendValue, ArrayBuilder, BinaryBuilder, BooleanBuilder, DictionaryBuilder,
    FixedSizeBinaryBuilder, FixedSizeListBuilder, I256, IntervalDayTime, IntervalMonthDayNano,
    ListBuilder, MapBuilder, NullBuilder, PrimitiveBuilder, RunEndBuilder, StringBuilder,
    StructBuilder, UnionBuilder, for_field,
};
use quiver::datatype::{DataType, IntType, IntervalUnit, TimeUnit, UnionMode};
use quiver::schema::{DictionaryEncoding, Field, Schema};
use quiver_tests::arbitrary::{self, Options, Value, column_values, value_at};
use std::collections::BTreeSet;

fn fixed(bytes: &[u8]) -> Value {
    Value::Fixed(bytes.to_vec())
}

fn text(s: &str) -> Value {
    Value::Bytes(s.as_bytes().to_vec())
}

/// Checks `array` against `expected`, whole and for every slice.
fn check(array: &ArrayView<'_>, expected: &[Value]) {
    assert_eq!(column_values(array), expected, "{:?}", array.data_type());
    for start in 0..=expected.len() {
        for len in 0..=expected.len() - start {
            let sliced = array.slice(start, len).unwrap();
            assert_eq!(
                column_values(&sliced),
                &expected[start..start + len],
                "{:?} slice {start}+{len}",
                array.data_type()
            );
        }
    }
}

#[test]
fn primitive_types_read_back_with_their_accessors() {
    let mut ints = PrimitiveBuilder::<i64>::new();
    ints.extend_options([Some(i64::MIN), None, Some(0), Some(i64::MAX)]);
    let array = ints.finish().unwrap();
    assert_eq!(array.value::<i64>(0), i64::MIN);
    assert_eq!(array.value::<i64>(3), i64::MAX);
    check(
        &array,
        &[
            fixed(&i64::MIN.to_le_bytes()),
            Value::Null,
            fixed(&[0; 8]),
            fixed(&i64::MAX.to_le_bytes()),
        ],
    );

    macro_rules! each {
        ($($t:ty => $v:expr),*) => {$(
            let array = ArrayView::from_values([Some($v), None::<$t>]).unwrap();
            assert_eq!(array.data_type(), &<$t as quiver::builder::Primitive>::DATA_TYPE);
            assert_eq!(array.value::<$t>(0), $v);
            assert!(array.is_null(1) && array.validity().is_some());
            let array = ArrayView::from_values([$v]).unwrap();
            assert!(array.validity().is_none(), "no bitmap without nulls");
        )*};
    }
    each!(
        i8 => -8i8, i16 => -16i16, i32 => -32i32, i64 => -64i64,
        u8 => 8u8, u16 => 16u16, u32 => 32u32, u64 => 64u64,
        f32 => 1.5f32, f64 => -2.25f64, i128 => -(1i128 << 100),
        I256 => I256::from_i128(-7),
        IntervalDayTime => IntervalDayTime { days: 1, milliseconds: -2 },
        IntervalMonthDayNano => IntervalMonthDayNano { months: 1, days: 2, nanoseconds: -3 }
    );

    // Other types of the same widths.
    let types = [
        (DataType::Date32, 4),
        (DataType::Time32(TimeUnit::Second), 4),
        (DataType::Decimal32(9, 2), 4),
        (DataType::Interval(IntervalUnit::YearMonth), 4),
        (DataType::Date64, 8),
        (DataType::Time64(TimeUnit::Nanosecond), 8),
        (
            DataType::Timestamp(TimeUnit::Microsecond, Some("Europe/Paris".into())),
            8,
        ),
        (DataType::Duration(TimeUnit::Millisecond), 8),
        (DataType::Decimal64(18, -3), 8),
        (DataType::Float16, 2),
        (DataType::Decimal128(20, 5), 16),
        (DataType::Decimal256(50, 5), 32),
    ];
    for (data_type, width) in types {
        let field = Field::new("t", data_type.clone(), true);
        let values: Vec<Value> = (0..5u8)
            .map(|i| match i {
                2 => Value::Null,
                _ => fixed(&vec![i.wrapping_mul(51); width]),
            })
            .collect();
        let array = arbitrary::build(&field, &values).unwrap();
        assert_eq!(array.data_type(), &data_type);
        check(&array, &values);
    }
}

#[test]
fn booleans_strings_and_binaries_read_back() {
    let flags = ArrayView::from_values([Some(true), None, Some(false), Some(true)]).unwrap();
    check(
        &flags,
        &[
            Value::Bool(true),
            Value::Null,
            Value::Bool(false),
            Value::Bool(true),
        ],
    );

    let strings = [
        Some("inline"),
        None,
        Some(""),
        Some("longer than twelve bytes é"),
    ];
    let expected: Vec<Value> = strings
        .iter()
        .map(|s| s.map_or(Value::Null, text))
        .collect();
    for mut builder in [
        StringBuilder::new(),
        StringBuilder::new_large(),
        StringBuilder::new_view().with_block_size(16),
    ] {
        builder.extend_options(strings);
        let array = builder.finish().unwrap();
        check(&array, &expected);
        assert_eq!(array.str_value(3), "longer than twelve bytes é");
    }
    let utf8 = ArrayView::from_values(strings).unwrap();
    assert_eq!(utf8.data_type(), &DataType::Utf8);

    let blobs: [Option<&[u8]>; 3] = [Some(&[0, 1, 2]), None, Some(&[0xFF; 20])];
    let expected: Vec<Value> = blobs
        .iter()
        .map(|b| b.map_or(Value::Null, |b| Value::Bytes(b.to_vec())))
        .collect();
    for mut builder in [
        BinaryBuilder::new(),
        BinaryBuilder::new_large(),
        BinaryBuilder::new_view(),
    ] {
        builder.extend_options(blobs);
        check(&builder.finish().unwrap(), &expected);
    }
    let mut fixed_size = FixedSizeBinaryBuilder::new(3);
    fixed_size.extend_options([Some(b"abc"), None]);
    check(&fixed_size.finish().unwrap(), &[fixed(b"abc"), Value::Null]);

    let mut nulls = NullBuilder::new();
    nulls.append_nulls(3);
    check(
        &nulls.finish().unwrap(),
        &[Value::Null, Value::Null, Value::Null],
    );
}

#[test]
fn dictionaries_dedup_with_every_index_type() {
    for bit_width in [8, 16, 32, 64] {
        for signed in [false, true] {
            let index_type = IntType { bit_width, signed };
            let mut builder = DictionaryBuilder::new(StringBuilder::new_view())
                .with_index_type(index_type)
                .with_ordered(true)
                .with_id(3);
            let input = [
                Some("x"),
                Some("y"),
                None,
                Some("x"),
                Some("a longer value here"),
            ];
            builder.extend_options(input);
            let field = builder.field("d");
            let array = builder.finish().unwrap();
            assert_eq!(array.dictionary().unwrap().values.len(), 3);
            let expected: Vec<Value> = input.iter().map(|s| s.map_or(Value::Null, text)).collect();
            check(&array, &expected);
            let batch = RecordBatch::from_fields([(field, array)]).unwrap();
            let encoding = batch.field(0).unwrap().dictionary().unwrap();
            assert_eq!(
                *encoding,
                DictionaryEncoding {
                    id: 3,
                    index_type,
                    ordered: true
                }
            );
        }
    }
}

#[test]
fn unions_and_run_ends_read_back() {
    for mode in [UnionMode::Sparse, UnionMode::Dense] {
        let mut union = UnionBuilder::new(mode)
            .with_child(2, "n", PrimitiveBuilder::<i16>::new())
            .with_child(9, "s", StringBuilder::new());
        union
            .append::<StringBuilder>(9)
            .unwrap()
            .append_value("nine");
        union.append_null();
        union
            .append::<PrimitiveBuilder<i16>>(2)
            .unwrap()
            .append_value(2);
        let array = union.finish().unwrap();
        check(
            &array,
            &[
                Value::Union(9, Box::new(text("nine"))),
                Value::Union(2, Box::new(Value::Null)),
                Value::Union(2, Box::new(fixed(&2i16.to_le_bytes()))),
            ],
        );
    }

    let mut runs = RunEndBuilder::new(StringBuilder::new()).with_run_end_type(DataType::Int16);
    let input = [
        Some("a"),
        Some("a"),
        None,
        None,
        Some("a"),
        Some("b"),
        Some("b"),
    ];
    runs.extend_options(input);
    assert_eq!(runs.num_runs(), 4);
    let array = runs.finish().unwrap();
    let expected: Vec<Value> = input.iter().map(|s| s.map_or(Value::Null, text)).collect();
    check(&array, &expected);
}

/// Depth 4: list<struct<map<utf8, list_view<dictionary<int8, utf8>>>, union<..>>>.
#[test]
fn nested_four_deep() {
    let words = DictionaryBuilder::new(StringBuilder::new())
        .with_index_type(IntType {
            bit_width: 8,
            signed: true,
        })
        .with_id(1);
    let inner = ListBuilder::new_view(words);
    let map = MapBuilder::new(StringBuilder::new(), inner);
    let union = UnionBuilder::new(UnionMode::Dense)
        .with_child(0, "i", PrimitiveBuilder::<i32>::new())
        .with_child(
            1,
            "fsl",
            FixedSizeListBuilder::new(BooleanBuilder::new(), 2),
        );
    let structs = StructBuilder::new()
        .with_child("m", map)
        .with_child("u", union);
    let mut lists = ListBuilder::new_large(structs);

    type Inner = ListBuilder<DictionaryBuilder<StringBuilder>>;
    type M = MapBuilder<StringBuilder, Inner>;
    let mut expected = Vec::new();
    for row in 0..6usize {
        if row == 2 {
            lists.append_null();
            expected.push(Value::Null);
            continue;
        }
        let mut items = Vec::new();
        for item in 0..row % 3 {
            let s = lists.values();
            let m = s.field_builder::<M>(0).unwrap();
            let mut entries = Vec::new();
            for e in 0..(row + item) % 3 {
                let key = format!("k{e}");
                m.keys().append_value(&key);
                let words: Vec<Option<&str>> = vec![Some("w"), None, Some("w2")][..e + 1].to_vec();
                m.values().append_value(words.clone());
                let words =
                    Value::List(words.iter().map(|w| w.map_or(Value::Null, text)).collect());
                entries.push(Value::Struct(vec![text(&key), words]));
            }
            m.append();
            let u = s.field_builder::<UnionBuilder>(1).unwrap();
            let union = if item.is_multiple_of(2) {
                u.append::<PrimitiveBuilder<i32>>(0)
                    .unwrap()
                    .append_value(item as i32);
                Value::Union(0, Box::new(fixed(&(item as i32).to_le_bytes())))
            } else {
                let fsl = u.append::<FixedSizeListBuilder<BooleanBuilder>>(1).unwrap();
                fsl.append_value([Some(true), None]);
                Value::Union(
                    1,
                    Box::new(Value::List(vec![Value::Bool(true), Value::Null])),
                )
            };
            s.append();
            items.push(Value::Struct(vec![Value::List(entries), union]));
        }
        lists.append();
        expected.push(Value::List(items));
    }
    let array = lists.finish().unwrap();
    check(&array, &expected);

    // The same data through the dynamic builders `for_field` makes.
    let field = Field::new("deep", array.data_type().clone(), true);
    let rebuilt = arbitrary::build(&field, &expected).unwrap();
    assert_eq!(rebuilt.data_type(), array.data_type());
    check(&rebuilt, &expected);
}

#[test]
fn record_batches_from_columns_and_fields() {
    let ids = ArrayView::from_values([Some(1i32), None, Some(3)]).unwrap();
    let names = ArrayView::from_values(["a", "b", "c"]).unwrap();
    let mut tags = DictionaryBuilder::new(StringBuilder::new());
    tags.extend_values(["t", "t", "u"]);
    let batch = RecordBatch::from_columns([
        ("id", ids.clone()),
        ("name", names.clone()),
        ("tag", tags.finish().unwrap()),
    ])
    .unwrap();
    assert_eq!(batch.num_rows(), 3);
    let schema = batch.schema();
    assert!(schema.fields().iter().all(Field::is_nullable));
    assert_eq!(schema.fields()[2].dictionary().map(|d| d.id), Some(0));
    assert_eq!(value_at(&batch.columns()[2], 2), text("u"));

    let metadata = vec![("unit".to_string(), "m".to_string())];
    let explicit = RecordBatch::from_fields([
        (
            Field::new("id", DataType::Int32, true).with_metadata(metadata.clone()),
            ids,
        ),
        (Field::new("name", DataType::Utf8, false), names),
    ])
    .unwrap();
    assert_eq!(explicit.field(0).unwrap().metadata(), &metadata);
    assert!(!explicit.field(1).unwrap().is_nullable());
    let empty =
        RecordBatch::from_columns([("e", ArrayView::from_values(Vec::<u8>::new()).unwrap())])
            .unwrap();
    assert_eq!(empty.num_rows(), 0);
    assert!(
        RecordBatch::from_fields([(
            Field::new("wrong", DataType::Int64, true),
            ArrayView::from_values([1i32]).unwrap()
        )])
        .is_err()
    );
    let _: Schema = (**explicit.schema()).clone();
}

/// The variant name of a type, for coverage counting.
fn kind(data_type: &DataType) -> String {
    let debug = format!("{data_type:?}");
    debug
        .split(['(', ' '])
        .next()
        .unwrap_or_default()
        .to_string()
}

fn collect_kinds(field: &Field, out: &mut BTreeSet<String>) {
    out.insert(kind(field.data_type()));
    if let DataType::Interval(unit) = field.data_type() {
        out.insert(format!("Interval{unit:?}"));
    }
    if field.dictionary().is_some() {
        out.insert("Dictionary".into());
    }
    if let DataType::Union(_, _, mode) = field.data_type() {
        out.insert(format!("Union{mode:?}"));
    }
    for child in field.data_type().children() {
        collect_kinds(child, out);
    }
}

#[test]
fn the_strategy_reaches_every_type() {
    let mut runner = TestRunner::deterministic();
    let strategy = arbitrary::schema(Options::default());
    let mut seen = BTreeSet::new();
    let mut deepest = 0;
    /// Levels of nesting; a map's entries struct is part of the map's level.
    fn depth(t: &DataType) -> usize {
        let children = match t {
            DataType::Map(entries, _) => entries.data_type().children(),
            _ => t.children(),
        };
        children
            .iter()
            .map(|c| 1 + depth(c.data_type()))
            .max()
            .unwrap_or(0)
    }
    for _ in 0..400 {
        let schema = strategy.new_tree(&mut runner).unwrap().current();
        let mut ids = BTreeSet::new();
        for field in schema.fields() {
            collect_kinds(field, &mut seen);
            deepest = deepest.max(depth(field.data_type()));
            let mut stack = vec![field.clone()];
            while let Some(f) = stack.pop() {
                if let Some(d) = f.dictionary() {
                    assert!(ids.insert(d.id), "dictionary ids are unique");
                }
                stack.extend(f.data_type().children().iter().cloned());
            }
        }
    }
    let all = [
        "Null",
        "Boolean",
        "Int8",
        "Int16",
        "Int32",
        "Int64",
        "UInt8",
        "UInt16",
        "UInt32",
        "UInt64",
        "Float16",
        "Float32",
        "Float64",
        "Decimal32",
        "Decimal64",
        "Decimal128",
        "Decimal256",
        "Date32",
        "Date64",
        "Time32",
        "Time64",
        "Timestamp",
        "Duration",
        "IntervalYearMonth",
        "IntervalDayTime",
        "IntervalMonthDayNano",
        "Binary",
        "LargeBinary",
        "FixedSizeBinary",
        "Utf8",
        "LargeUtf8",
        "BinaryView",
        "Utf8View",
        "List",
        "LargeList",
        "ListView",
        "LargeListView",
        "FixedSizeList",
        "Struct",
        "Map",
        "UnionSparse",
        "UnionDense",
        "RunEndEncoded",
        "Dictionary",
    ];
    let missing: Vec<_> = all.iter().filter(|k| !seen.contains(**k)).collect();
    assert!(missing.is_empty(), "never generated: {missing:?}");
    assert_eq!(deepest, 4, "deepest nesting");
}

proptest! {
    #![proptest_config(Config::with_cases(quiver_tests::proptest_cases(48)))]

    /// Random schemas and data: each column validates (it is in a batch) and reads back, sliced
    /// again at random, with the values it was built from.
    #[test]
    fn random_batches_read_back(
        generated in arbitrary::schema_and_batch(Options::default()),
        cut in (any::<prop::sample::Index>(), any::<prop::sample::Index>()),
    ) {
        let batch = &generated.batch;
        prop_assert_eq!(batch.columns().len(), generated.columns.len());
        for (column, expected) in batch.columns().iter().zip(&generated.columns) {
            prop_assert_eq!(column.len(), batch.num_rows());
            prop_assert_eq!(&column_values(column), expected);
            let rows = batch.num_rows();
            let start = cut.0.index(rows + 1);
            let len = cut.1.index(rows - start + 1);
            let sliced = column.slice(start, len).unwrap();
            prop_assert_eq!(&column_values(&sliced), &expected[start..start + len]);
        }
    }

    /// Every built array can be rebuilt from what it reads back (builders accept their own output).
    #[test]
    fn rebuilding_from_read_values_is_identity(generated in arbitrary::schema_and_batch(Options {
        max_depth: 2,
        ..Options::default()
    })) {
        for (field, column) in generated.batch.schema().fields().iter().zip(generated.batch.columns()) {
            let values = column_values(column);
            let rebuilt = arbitrary::build(field, &values).unwrap();
            prop_assert_eq!(column_values(&rebuilt), values);
            let mut fresh = for_field(field);
            prop_assert!(fresh.finish().unwrap().is_empty());
        }
    }
}
