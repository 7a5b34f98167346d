//! `Schema.fbs` tables from the owned data model: [`Schema`], [`Field`], [`DataType`] and
//! custom metadata, the mirror of what [`format::Schema`](crate::format::Schema) reads.
//!
//! It uses, of the crate, the flatbuffer builder, the format's slots, the data types, the schema
//! and the errors.
//!
//! Data enters as an owned [`Schema`] and leaves as tables in a [`Builder`], for a schema message
//! or a file footer to point at. Slots and union tags follow `Schema.fbs` (and
//! `format/schema.rs`, whose reader the unit tests below read every type back with). The schema is
//! always written little-endian: the writers encode native little-endian buffers, whatever byte
//! order the schema was read with.

use crate::datatype::{DataType, DateUnit, Endianness, IntType, Precision, TimeUnit};
use crate::error::{Feature, FlatbufferBound, FormatError, FormatErrorKind, FormatResult};
use crate::flatbuffer::MAX_DEPTH;
use crate::flatbuffer_builder::{Builder, Offset, Push, kind};
use crate::format::slots::*;
use crate::schema::{Field, Metadata, Schema};
use alloc::vec::Vec;

/// How deep fields may nest below a top-level field (which is level 0). Readers limit the depth
/// of flatbuffer tables (quiver's to [`MAX_DEPTH`]); the root, the schema, and a field's type or
/// dictionary tables take the rest.
pub(super) const MAX_FIELD_NESTING: usize = MAX_DEPTH as usize - 4;

/// Writes the `Schema` table of `schema`.
pub(super) fn schema_table(b: &mut Builder, schema: &Schema) -> FormatResult<Offset<kind::Table>> {
    let mut fields = Vec::with_capacity(schema.fields().len());
    for (i, field) in schema.fields().iter().enumerate() {
        fields.push(field_table(b, field, 0).map_err(|e| e.in_field(i))?);
    }
    let fields = b.create_vector_of_offsets(&fields);
    let metadata = metadata_vector(b, schema.metadata());
    b.start_table();
    b.add_scalar(SCHEMA_ENDIANNESS, Endianness::Little as i16);
    b.add_offset(SCHEMA_FIELDS, fields);
    if let Some(metadata) = metadata {
        b.add_offset(SCHEMA_CUSTOM_METADATA, metadata);
    }
    Ok(b.end_table())
}

/// Writes a vector of `KeyValue` tables, or nothing for empty metadata.
pub(super) fn metadata_vector(
    b: &mut Builder,
    metadata: &Metadata,
) -> Option<Offset<kind::Vector>> {
    if metadata.is_empty() {
        return None;
    }
    let mut entries = Vec::with_capacity(metadata.len());
    for (key, value) in metadata {
        let key = b.create_string(key);
        let value = b.create_string(value);
        b.start_table();
        b.add_offset(KEY_VALUE_KEY, key);
        b.add_offset(KEY_VALUE_VALUE, value);
        entries.push(b.end_table());
    }
    Some(b.create_vector_of_offsets(&entries))
}

fn field_table(b: &mut Builder, field: &Field, level: usize) -> FormatResult<Offset<kind::Table>> {
    if level > MAX_FIELD_NESTING {
        return Err(FormatErrorKind::FlatbufferLimit {
            what: FlatbufferBound::FieldNesting,
            limit: MAX_FIELD_NESTING as u64,
        }
        .into());
    }
    let data_type = field.data_type();
    let mut children = Vec::with_capacity(data_type.children().len());
    for (i, child) in data_type.children().iter().enumerate() {
        let table = field_table(b, child, level + 1).map_err(|e| e.in_field(i))?;
        children.push(table);
    }
    let children = b.create_vector_of_offsets(&children);
    let name = b.create_string(field.name());
    let (tag, type_table) = type_table(b, data_type)?;
    let dictionary = match field.dictionary() {
        None => None,
        Some(encoding) => {
            let index_type = int_table(b, encoding.index_type);
            b.start_table();
            b.add_scalar(DICTIONARY_ID, encoding.id);
            b.add_offset(DICTIONARY_INDEX_TYPE, index_type);
            b.add_scalar(DICTIONARY_IS_ORDERED, encoding.ordered);
            Some(b.end_table())
        }
    };
    let metadata = metadata_vector(b, field.metadata());
    b.start_table();
    b.add_offset(FIELD_NAME, name);
    b.add_scalar(FIELD_NULLABLE, field.is_nullable());
    b.add_union(FIELD_TYPE_TYPE, FIELD_TYPE, tag, type_table);
    if let Some(dictionary) = dictionary {
        b.add_offset(FIELD_DICTIONARY, dictionary);
    }
    b.add_offset(FIELD_CHILDREN, children);
    if let Some(metadata) = metadata {
        b.add_offset(FIELD_CUSTOM_METADATA, metadata);
    }
    Ok(b.end_table())
}

fn int_table(b: &mut Builder, int: IntType) -> Offset<kind::Table> {
    b.start_table();
    b.add_scalar(0, i32::from(int.bit_width));
    b.add_scalar(1, int.signed);
    b.end_table()
}

/// A table with no fields (the members of the `Type` union without parameters).
fn empty_table(b: &mut Builder) -> Offset<kind::Table> {
    b.start_table();
    b.end_table()
}

/// A table with one scalar in slot 0: an `i16` enum value (precision, unit), an `i32` (byte
/// width, list size) or a `bool` (a map's keys sorted).
fn scalar_table<T: Push>(b: &mut Builder, value: T) -> Offset<kind::Table> {
    b.start_table();
    b.add_scalar(0, value);
    b.end_table()
}

fn decimal(b: &mut Builder, precision: u8, scale: i8, bit_width: i32) -> Offset<kind::Table> {
    b.start_table();
    b.add_scalar(0, i32::from(precision));
    b.add_scalar(1, i32::from(scale));
    b.add_scalar(2, bit_width);
    b.end_table()
}

fn time(b: &mut Builder, unit: TimeUnit, bit_width: i32) -> Offset<kind::Table> {
    b.start_table();
    b.add_scalar(0, unit as i16);
    b.add_scalar(1, bit_width);
    b.end_table()
}

/// Writes the `Type` union member for `data_type`: its tag and table.
fn type_table(b: &mut Builder, data_type: &DataType) -> FormatResult<(u8, Offset<kind::Table>)> {
    use DataType::*;
    let int = |b: &mut Builder, bit_width, signed| {
        (TYPE_INT, int_table(b, IntType { bit_width, signed }))
    };
    let float = |b: &mut Builder, p: Precision| (TYPE_FLOATING_POINT, scalar_table(b, p as i16));
    Ok(match data_type {
        Null => (TYPE_NULL, empty_table(b)),
        Boolean => (TYPE_BOOL, empty_table(b)),
        Int8 => int(b, 8, true),
        Int16 => int(b, 16, true),
        Int32 => int(b, 32, true),
        Int64 => int(b, 64, true),
        UInt8 => int(b, 8, false),
        UInt16 => int(b, 16, false),
        UInt32 => int(b, 32, false),
        UInt64 => int(b, 64, false),
        Float16 => float(b, Precision::Half),
        Float32 => float(b, Precision::Single),
        Float64 => float(b, Precision::Double),
        Decimal32(p, s) => (TYPE_DECIMAL, decimal(b, *p, *s, 32)),
        Decimal64(p, s) => (TYPE_DECIMAL, decimal(b, *p, *s, 64)),
        Decimal128(p, s) => (TYPE_DECIMAL, decimal(b, *p, *s, 128)),
        Decimal256(p, s) => (TYPE_DECIMAL, decimal(b, *p, *s, 256)),
        Date32 => (TYPE_DATE, scalar_table(b, DateUnit::Day as i16)),
        Date64 => (TYPE_DATE, scalar_table(b, DateUnit::Millisecond as i16)),
        Time32(unit) => (TYPE_TIME, time(b, *unit, 32)),
        Time64(unit) => (TYPE_TIME, time(b, *unit, 64)),
        Timestamp(unit, timezone) => {
            let timezone = timezone.as_deref().map(|tz| b.create_string(tz));
            b.start_table();
            b.add_scalar(0, *unit as i16);
            if let Some(timezone) = timezone {
                b.add_offset(1, timezone);
            }
            (TYPE_TIMESTAMP, b.end_table())
        }
        Duration(unit) => (TYPE_DURATION, scalar_table(b, *unit as i16)),
        Interval(unit) => (TYPE_INTERVAL, scalar_table(b, *unit as i16)),
        Binary => (TYPE_BINARY, empty_table(b)),
        LargeBinary => (TYPE_LARGE_BINARY, empty_table(b)),
        FixedSizeBinary(width) => (TYPE_FIXED_SIZE_BINARY, scalar_table(b, *width)),
        Utf8 => (TYPE_UTF8, empty_table(b)),
        LargeUtf8 => (TYPE_LARGE_UTF8, empty_table(b)),
        BinaryView => (TYPE_BINARY_VIEW, empty_table(b)),
        Utf8View => (TYPE_UTF8_VIEW, empty_table(b)),
        List(_) => (TYPE_LIST, empty_table(b)),
        LargeList(_) => (TYPE_LARGE_LIST, empty_table(b)),
        ListView(_) => (TYPE_LIST_VIEW, empty_table(b)),
        LargeListView(_) => (TYPE_LARGE_LIST_VIEW, empty_table(b)),
        FixedSizeList(_, size) => (TYPE_FIXED_SIZE_LIST, scalar_table(b, *size)),
        Struct(_) => (TYPE_STRUCT, empty_table(b)),
        Map(_, keys_sorted) => (TYPE_MAP, scalar_table(b, *keys_sorted)),
        Union(fields, type_ids, mode) => {
            if fields.len() != type_ids.len() {
                return Err(FormatError::from(FormatErrorKind::InvalidValue {
                    what: "union type ids (one per child field)",
                    value: type_ids.len() as i64,
                }));
            }
            let ids: Vec<i32> = type_ids.iter().map(|id| i32::from(*id)).collect();
            let ids = b.create_vector(&ids);
            b.start_table();
            b.add_scalar(0, *mode as i16);
            b.add_offset(1, ids);
            (TYPE_UNION, b.end_table())
        }
        RunEndEncoded(_) => (TYPE_RUN_END_ENCODED, empty_table(b)),
        #[allow(unreachable_patterns)]
        _ => {
            return Err(FormatErrorKind::Unsupported {
                what: Feature::DataTypeLayout,
            }
            .into());
        }
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
pub(crate) mod tests {
    use super::*;
    use crate::datatype::{IntervalUnit, UnionMode};
    use crate::format;
    use crate::schema::DictionaryEncoding;
    use alloc::string::ToString;
    use alloc::sync::Arc;
    use alloc::vec;

    /// Every data type, some nested, with metadata and dictionaries here and there.
    pub(crate) fn every_type() -> Schema {
        use DataType::*;
        let f = |name: &str, dt: DataType| Field::new(name, dt, true);
        let item = Arc::new(f("item", Int32));
        let entries = Arc::new(Field::new(
            "entries",
            Struct(vec![Field::new("key", Utf8, false), f("value", Float64)].into()),
            false,
        ));
        let dict = |id| DictionaryEncoding {
            id,
            index_type: IntType {
                bit_width: 16,
                signed: false,
            },
            ordered: id % 2 == 0,
        };
        let fields = vec![
            f("null", Null),
            f("bool", Boolean),
            f("i8", Int8),
            f("i16", Int16),
            f("i32", Int32),
            f("i64", Int64),
            f("u8", UInt8),
            f("u16", UInt16),
            f("u32", UInt32),
            f("u64", UInt64),
            f("f16", Float16),
            f("f32", Float32),
            Field::new("f64", Float64, false),
            f("d32", Decimal32(9, 2)),
            f("d64", Decimal64(18, -3)),
            f("d128", Decimal128(38, 10)),
            f("d256", Decimal256(76, 0)),
            f("date32", Date32),
            f("date64", Date64),
            f("t32s", Time32(TimeUnit::Second)),
            f("t32ms", Time32(TimeUnit::Millisecond)),
            f("t64us", Time64(TimeUnit::Microsecond)),
            f("t64ns", Time64(TimeUnit::Nanosecond)),
            f("ts", Timestamp(TimeUnit::Nanosecond, None)),
            f(
                "ts_tz",
                Timestamp(TimeUnit::Second, Some("Europe/Paris".into())),
            ),
            f("dur", Duration(TimeUnit::Microsecond)),
            f("iym", Interval(IntervalUnit::YearMonth)),
            f("idt", Interval(IntervalUnit::DayTime)),
            f("imdn", Interval(IntervalUnit::MonthDayNano)),
            f("bin", Binary),
            f("lbin", LargeBinary),
            f("fsb", FixedSizeBinary(5)),
            f("utf8", Utf8),
            f("lutf8", LargeUtf8),
            f("binview", BinaryView),
            f("utf8view", Utf8View),
            f("list", List(Arc::clone(&item))),
            f("llist", LargeList(Arc::clone(&item))),
            f("listview", ListView(Arc::clone(&item))),
            f("llistview", LargeListView(Arc::clone(&item))),
            f("fsl", FixedSizeList(Arc::clone(&item), 3)),
            f(
                "struct",
                Struct(vec![f("a", Int8), f("b", Utf8).with_dictionary(dict(7))].into()),
            ),
            f("map", Map(Arc::clone(&entries), true)),
            f(
                "sparse",
                Union(
                    vec![f("x", Int32), f("y", Utf8)].into(),
                    vec![5, 9].into(),
                    UnionMode::Sparse,
                ),
            ),
            f(
                "dense",
                Union(
                    vec![f("x", Int32), f("y", Utf8)].into(),
                    vec![0, 1].into(),
                    UnionMode::Dense,
                ),
            ),
            f(
                "ree",
                RunEndEncoded(Arc::new([
                    Field::new("run_ends", Int32, false),
                    f("values", Utf8),
                ])),
            ),
            f("dict", Utf8)
                .with_dictionary(dict(8))
                .with_metadata(vec![("k".to_string(), "v".to_string())]),
        ];
        Schema::new(fields).with_metadata(vec![
            ("schema key".to_string(), "schema value".to_string()),
            ("empty".to_string(), "".to_string()),
        ])
    }

    #[test]
    fn every_type_reads_back() {
        let schema = every_type();
        let back = read_back_through_message(&schema);
        assert_eq!(back, schema);
    }

    /// Writes `schema` in a schema message and reads it back with the reader.
    pub(crate) fn read_back_through_message(schema: &Schema) -> Schema {
        let buf = super::super::message::schema_message(schema).unwrap();
        let message = format::Message::parse(&buf).unwrap();
        let format::MessageHeader::Schema(fb) = message.header().unwrap() else {
            panic!("not a schema message")
        };
        assert_eq!(message.version().unwrap(), format::MetadataVersion::V5);
        Schema::from_fb(fb, 10_000).unwrap()
    }

    #[test]
    fn nesting_past_the_readers_limit_is_an_error() {
        // A field `deep` of `levels` nested lists of Int32.
        let nested = |levels| {
            let mut dt = DataType::Int32;
            for _ in 0..levels {
                dt = DataType::List(Arc::new(Field::new("item", dt, true)));
            }
            Schema::new(vec![Field::new("deep", dt, true)])
        };
        let schema = nested(MAX_FIELD_NESTING + 1);
        let mut b = Builder::new();
        let e = schema_table(&mut b, &schema).unwrap_err();
        assert!(
            matches!(e.kind, FormatErrorKind::FlatbufferLimit { .. }),
            "{e:?}"
        );
        // The outer levels of the path that fit in the error.
        let path = e.field().unwrap();
        assert!(path.is_cut() && path.indices().eq([0; 7]), "{e:?}");
        let shown = e.display_with(&schema).to_string();
        assert!(
            shown.contains("(field `deep.item.item.item.item.item.item.…`)"),
            "{shown}"
        );

        // One level less is fine, and the reader takes it.
        let schema = nested(MAX_FIELD_NESTING);
        assert_eq!(read_back_through_message(&schema), schema);
    }

    #[test]
    fn big_endian_schemas_are_written_little_endian() {
        let schema = Schema::new(vec![Field::new("x", DataType::Int32, false)])
            .with_endianness(crate::datatype::Endianness::Big);
        let back = read_back_through_message(&schema);
        assert_eq!(back.endianness(), crate::datatype::Endianness::Little);
    }
}
