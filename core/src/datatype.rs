//! The logical types of Arrow data, as `Schema.fbs` names them: [`DataType`].
//!
//! The small enums of a type's parameters ([`TimeUnit`], [`IntervalUnit`], [`UnionMode`], …)
//! need no allocator: they are the values of the `Schema.fbs` enums, defined with the flatbuffer
//! views that read them ([`crate::format`]) and named here too. [`DataType`] itself holds child
//! fields, so it lives behind the `alloc` feature.
//!
//! It uses [`schema`](crate::schema) (a nested type's child fields, the one cycle of the ladder,
//! as in arrow-schema), [`format`](crate::format) (the enums, and an array's checked `Kind`,
//! which a [`DataType`] maps to) and [`error`](crate::error) (where [`CompressionCodec`] is
//! defined: the errors name it).

pub use crate::error::vocabulary::CompressionCodec;
pub use crate::format::schema::{
    DateUnit, Endianness, IntType, IntervalUnit, Precision, TimeUnit, UnionMode,
};

#[cfg(feature = "alloc")]
pub use logical::DataType;
#[cfg(feature = "alloc")]
pub(crate) use logical::FieldType;

#[cfg(feature = "alloc")]
mod logical {
    use super::{DateUnit, IntType, IntervalUnit, Precision, TimeUnit, UnionMode};
    use crate::format::{Kind, TypeIds};
    use crate::schema::Field;
    use alloc::sync::Arc;
    use core::fmt;

    /// The logical type of an array.
    ///
    /// A dictionary-encoded field has its *value* type here and its index type in
    /// [`Field::dictionary`](crate::schema::Field), as in `Schema.fbs`.
    #[derive(Debug, Clone, PartialEq, Eq, Hash)]
    #[non_exhaustive]
    pub enum DataType {
        /// All values null; no buffers.
        Null,
        /// Bit-packed booleans.
        Boolean,
        /// Signed 8-bit integer.
        Int8,
        /// Signed 16-bit integer.
        Int16,
        /// Signed 32-bit integer.
        Int32,
        /// Signed 64-bit integer.
        Int64,
        /// Unsigned 8-bit integer.
        UInt8,
        /// Unsigned 16-bit integer.
        UInt16,
        /// Unsigned 32-bit integer.
        UInt32,
        /// Unsigned 64-bit integer.
        UInt64,
        /// IEEE 754 half precision.
        Float16,
        /// IEEE 754 single precision.
        Float32,
        /// IEEE 754 double precision.
        Float64,
        /// 32-bit decimal with precision and scale.
        Decimal32(u8, i8),
        /// 64-bit decimal with precision and scale.
        Decimal64(u8, i8),
        /// 128-bit decimal with precision and scale.
        Decimal128(u8, i8),
        /// 256-bit decimal with precision and scale.
        Decimal256(u8, i8),
        /// Days since the UNIX epoch, i32.
        Date32,
        /// Milliseconds since the UNIX epoch, i64.
        Date64,
        /// Time of day, i32, in seconds or milliseconds.
        Time32(TimeUnit),
        /// Time of day, i64, in microseconds or nanoseconds.
        Time64(TimeUnit),
        /// Time since the UNIX epoch, i64, with an optional IANA or `±HH:MM` timezone.
        Timestamp(TimeUnit, Option<Arc<str>>),
        /// Elapsed time, i64.
        Duration(TimeUnit),
        /// Calendar interval.
        Interval(IntervalUnit),
        /// Variable-length bytes, i32 offsets.
        Binary,
        /// Variable-length bytes, i64 offsets.
        LargeBinary,
        /// Bytes of a fixed width.
        FixedSizeBinary(i32),
        /// UTF-8 text, i32 offsets.
        Utf8,
        /// UTF-8 text, i64 offsets.
        LargeUtf8,
        /// Bytes as 16-byte views into variadic data buffers.
        BinaryView,
        /// UTF-8 text as 16-byte views into variadic data buffers.
        Utf8View,
        /// Lists, i32 offsets.
        List(Arc<Field>),
        /// Lists, i64 offsets.
        LargeList(Arc<Field>),
        /// Lists as i32 offsets and sizes.
        ListView(Arc<Field>),
        /// Lists as i64 offsets and sizes.
        LargeListView(Arc<Field>),
        /// Lists of a fixed length.
        FixedSizeList(Arc<Field>, i32),
        /// Named children of equal length.
        Struct(Arc<[Field]>),
        /// A list of `entries: struct<key, value>`; the flag says whether keys are sorted.
        Map(Arc<Field>, bool),
        /// One of several children per slot; `type_ids[i]` selects `fields[i]`.
        Union(Arc<[Field]>, Arc<[i8]>, UnionMode),
        /// Logical values stored as runs: children `run_ends` (i16/i32/i64) and `values`.
        RunEndEncoded(Arc<[Field; 2]>),
    }

    impl DataType {
        /// The child fields of a nested type, in order; empty for flat types.
        pub fn children(&self) -> &[Field] {
            match self {
                DataType::List(f)
                | DataType::LargeList(f)
                | DataType::ListView(f)
                | DataType::LargeListView(f)
                | DataType::FixedSizeList(f, _)
                | DataType::Map(f, _) => core::slice::from_ref(f.as_ref()),
                DataType::Struct(fields) | DataType::Union(fields, _, _) => fields,
                DataType::RunEndEncoded(pair) => pair.as_slice(),
                _ => &[],
            }
        }

        /// Width in bytes of one value in the fixed-width data buffer, for fixed-width types.
        pub fn byte_width(&self) -> Option<usize> {
            match self {
                DataType::FixedSizeBinary(w) => usize::try_from(*w).ok(),
                _ => Kind::of_data_type(self).byte_width(),
            }
        }

        /// The integer type of a width and signedness (`None` for a width other than 8, 16,
        /// 32 or 64).
        pub fn int(IntType { bit_width, signed }: IntType) -> Option<Self> {
            Some(match (bit_width, signed) {
                (8, true) => DataType::Int8,
                (16, true) => DataType::Int16,
                (32, true) => DataType::Int32,
                (64, true) => DataType::Int64,
                (8, false) => DataType::UInt8,
                (16, false) => DataType::UInt16,
                (32, false) => DataType::UInt32,
                (64, false) => DataType::UInt64,
                _ => return None,
            })
        }

        /// The floating-point type of a precision.
        pub fn float(precision: Precision) -> Self {
            match precision {
                Precision::Half => DataType::Float16,
                Precision::Single => DataType::Float32,
                Precision::Double => DataType::Float64,
            }
        }

        /// The date type of a unit.
        pub fn date(unit: DateUnit) -> Self {
            match unit {
                DateUnit::Day => DataType::Date32,
                DateUnit::Millisecond => DataType::Date64,
            }
        }

        /// Whether values of this type are nested (have child fields).
        pub fn is_nested(&self) -> bool {
            !self.children().is_empty() || matches!(self, DataType::Struct(_) | DataType::Union(..))
        }

        /// Type ids of a union, in child order (empty for other types).
        pub fn union_type_ids(&self) -> &[i8] {
            match self {
                DataType::Union(_, ids, _) => ids,
                _ => &[],
            }
        }
    }

    /// Arrow's own notation (as Arrow C++ and pyarrow print types): `int32`, `string`,
    /// `timestamp[us, tz=UTC]`, `list<item: int32>`, `struct<x: double not null>`, …
    impl fmt::Display for DataType {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            use DataType::*;
            let name = match self {
                Null => "null",
                Boolean => "bool",
                Int8 => "int8",
                Int16 => "int16",
                Int32 => "int32",
                Int64 => "int64",
                UInt8 => "uint8",
                UInt16 => "uint16",
                UInt32 => "uint32",
                UInt64 => "uint64",
                Float16 => "halffloat",
                Float32 => "float",
                Float64 => "double",
                Date32 => "date32[day]",
                Date64 => "date64[ms]",
                Interval(IntervalUnit::YearMonth) => "month_interval",
                Interval(IntervalUnit::DayTime) => "day_time_interval",
                Interval(IntervalUnit::MonthDayNano) => "month_day_nano_interval",
                Binary => "binary",
                LargeBinary => "large_binary",
                Utf8 => "string",
                LargeUtf8 => "large_string",
                BinaryView => "binary_view",
                Utf8View => "string_view",
                Decimal32(p, s) => return write!(f, "decimal32({p}, {s})"),
                Decimal64(p, s) => return write!(f, "decimal64({p}, {s})"),
                Decimal128(p, s) => return write!(f, "decimal128({p}, {s})"),
                Decimal256(p, s) => return write!(f, "decimal256({p}, {s})"),
                Time32(unit) => return write!(f, "time32[{}]", unit_name(*unit)),
                Time64(unit) => return write!(f, "time64[{}]", unit_name(*unit)),
                Duration(unit) => return write!(f, "duration[{}]", unit_name(*unit)),
                Timestamp(unit, None) => return write!(f, "timestamp[{}]", unit_name(*unit)),
                Timestamp(unit, Some(tz)) => {
                    return write!(f, "timestamp[{}, tz={tz}]", unit_name(*unit));
                }
                FixedSizeBinary(width) => return write!(f, "fixed_size_binary[{width}]"),
                List(item) => return write!(f, "list<{item}>"),
                LargeList(item) => return write!(f, "large_list<{item}>"),
                ListView(item) => return write!(f, "list_view<{item}>"),
                LargeListView(item) => return write!(f, "large_list_view<{item}>"),
                FixedSizeList(item, size) => return write!(f, "fixed_size_list<{item}>[{size}]"),
                Struct(fields) => return write_fields(f, "struct<", fields, |_| None),
                Union(fields, ids, mode) => {
                    let open = match mode {
                        UnionMode::Sparse => "sparse_union<",
                        UnionMode::Dense => "dense_union<",
                    };
                    return write_fields(f, open, fields, |i| ids.get(i).copied());
                }
                Map(entries, sorted) => {
                    let [key, value] = match entries.data_type().children() {
                        [key, value] => [key, value],
                        _ => return write!(f, "map<{entries}>"),
                    };
                    write!(f, "map<{}, {}", FieldType(key), FieldType(value))?;
                    return f.write_str(if *sorted { ", keys_sorted>" } else { ">" });
                }
                RunEndEncoded(pair) => {
                    let [run_ends, values] = &**pair;
                    return write!(f, "run_end_encoded<{run_ends}, {values}>");
                }
            };
            f.write_str(name)
        }
    }

    /// A field's type as Arrow writes it: `dictionary<values=…, indices=…, ordered=0>` for a
    /// dictionary-encoded field, else its [`DataType`].
    pub(crate) struct FieldType<'f>(pub(crate) &'f Field);

    impl fmt::Display for FieldType<'_> {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            match self.0.dictionary() {
                Some(encoding) => write!(
                    f,
                    "dictionary<values={}, indices={}, ordered={}>",
                    self.0.data_type(),
                    encoding.index_type,
                    u8::from(encoding.ordered)
                ),
                None => self.0.data_type().fmt(f),
            }
        }
    }

    fn write_fields(
        f: &mut fmt::Formatter<'_>,
        open: &str,
        fields: &[Field],
        type_id: impl Fn(usize) -> Option<i8>,
    ) -> fmt::Result {
        f.write_str(open)?;
        for (i, field) in fields.iter().enumerate() {
            write!(f, "{}{field}", if i > 0 { ", " } else { "" })?;
            if let Some(id) = type_id(i) {
                write!(f, "={id}")?;
            }
        }
        f.write_str(">")
    }

    fn unit_name(unit: TimeUnit) -> &'static str {
        match unit {
            TimeUnit::Second => "s",
            TimeUnit::Millisecond => "ms",
            TimeUnit::Microsecond => "us",
            TimeUnit::Nanosecond => "ns",
        }
    }

    impl<'a> Kind<'a> {
        /// The kind of an owned type (the value type for a dictionary-encoded array).
        pub(crate) fn of_data_type(ty: &'a DataType) -> Self {
            let int = |bit_width, signed| Kind::Int(IntType { bit_width, signed });
            // Negative sizes are refused by `ArrayView`'s validation.
            let size = |n: &i32| usize::try_from(*n).unwrap_or(0);
            match ty {
                DataType::Null => Kind::Null,
                DataType::Boolean => Kind::Boolean,
                DataType::Int8 => int(8, true),
                DataType::Int16 => int(16, true),
                DataType::Int32 => int(32, true),
                DataType::Int64 => int(64, true),
                DataType::UInt8 => int(8, false),
                DataType::UInt16 => int(16, false),
                DataType::UInt32 => int(32, false),
                DataType::UInt64 => int(64, false),
                DataType::Float16 => Kind::Float16,
                DataType::Float32 => Kind::Float32,
                DataType::Float64 => Kind::Float64,
                DataType::Decimal32(_, scale) => Kind::Decimal(4, *scale),
                DataType::Decimal64(_, scale) => Kind::Decimal(8, *scale),
                DataType::Decimal128(_, scale) => Kind::Decimal(16, *scale),
                DataType::Decimal256(_, scale) => Kind::Decimal(32, *scale),
                DataType::Date32 => Kind::Date32,
                DataType::Date64 => Kind::Date64,
                DataType::Time32(unit) => Kind::Time32(*unit),
                DataType::Time64(unit) => Kind::Time64(*unit),
                DataType::Timestamp(unit, zone) => Kind::Timestamp(*unit, zone.as_deref()),
                DataType::Duration(unit) => Kind::Duration(*unit),
                DataType::Interval(unit) => Kind::Interval(*unit),
                DataType::Binary => Kind::Binary,
                DataType::LargeBinary => Kind::LargeBinary,
                DataType::FixedSizeBinary(width) => Kind::FixedSizeBinary(size(width)),
                DataType::Utf8 => Kind::Utf8,
                DataType::LargeUtf8 => Kind::LargeUtf8,
                DataType::BinaryView => Kind::BinaryView,
                DataType::Utf8View => Kind::Utf8View,
                DataType::List(_) => Kind::List,
                DataType::LargeList(_) => Kind::LargeList,
                DataType::ListView(_) => Kind::ListView,
                DataType::LargeListView(_) => Kind::LargeListView,
                DataType::FixedSizeList(_, n) => Kind::FixedSizeList(size(n)),
                DataType::Struct(_) => Kind::Struct,
                DataType::Map(..) => Kind::Map,
                DataType::Union(_, ids, mode) => Kind::Union {
                    dense: *mode == UnionMode::Dense,
                    type_ids: TypeIds::Ids(ids),
                },
                DataType::RunEndEncoded(_) => Kind::RunEndEncoded,
            }
        }
    }
}

#[cfg(all(test, feature = "alloc"))]
mod tests {
    use super::*;
    use crate::schema::{DictionaryEncoding, Field};
    use alloc::string::ToString;
    use alloc::sync::Arc;
    use alloc::vec;

    #[test]
    fn fb_enums_read_back_what_the_writer_writes() {
        /// Each value reads back from its `.fbs` value.
        macro_rules! round_trip {
            ($($t:ident as $repr:ty: [$($v:ident),*];)*) => {$(
                for v in [$($t::$v),*] {
                    assert_eq!($t::from_fb(v as $repr), Some(v));
                }
            )*};
        }
        use crate::format::MetadataVersion;
        round_trip! {
            TimeUnit as i16: [Second, Millisecond, Microsecond, Nanosecond];
            DateUnit as i16: [Day, Millisecond];
            IntervalUnit as i16: [YearMonth, DayTime, MonthDayNano];
            Precision as i16: [Half, Single, Double];
            UnionMode as i16: [Sparse, Dense];
            Endianness as i16: [Little, Big];
            CompressionCodec as i8: [Lz4Frame, Zstd];
            MetadataVersion as i16: [V1, V2, V3, V4, V5];
        }
        assert_eq!(
            (MetadataVersion::V5 as i16, MetadataVersion::from_fb(5)),
            (4, None)
        );
        assert_eq!(TimeUnit::from_fb(4), None);
        assert_eq!(IntervalUnit::from_fb(-1), None);
        assert_eq!(CompressionCodec::from_fb(2), None);
        assert_eq!(
            (
                TimeUnit::Nanosecond as i16,
                IntervalUnit::MonthDayNano as i16,
                Endianness::Big as i16
            ),
            (3, 2, 1)
        );
    }

    #[test]
    fn types_print_in_arrow_notation() {
        let item = |t| Arc::new(Field::new("item", t, true));
        let utc = Some("UTC".into());
        let point = DataType::Struct(
            vec![
                Field::new("x", DataType::Float64, false),
                Field::new("label", DataType::Utf8, true),
            ]
            .into(),
        );
        let entries = DataType::Struct(
            vec![
                Field::new("key", DataType::Utf8, false),
                Field::new("value", DataType::Int64, true),
            ]
            .into(),
        );
        let cases = [
            (DataType::Boolean, "bool"),
            (DataType::UInt16, "uint16"),
            (DataType::Float64, "double"),
            (DataType::Decimal128(10, 2), "decimal128(10, 2)"),
            (DataType::Date32, "date32[day]"),
            (DataType::Time64(TimeUnit::Nanosecond), "time64[ns]"),
            (
                DataType::Timestamp(TimeUnit::Microsecond, utc),
                "timestamp[us, tz=UTC]",
            ),
            (DataType::Timestamp(TimeUnit::Second, None), "timestamp[s]"),
            (
                DataType::Interval(IntervalUnit::MonthDayNano),
                "month_day_nano_interval",
            ),
            (DataType::FixedSizeBinary(16), "fixed_size_binary[16]"),
            (DataType::Utf8, "string"),
            (DataType::List(item(DataType::Int32)), "list<item: int32>"),
            (
                DataType::FixedSizeList(item(DataType::Float32), 3),
                "fixed_size_list<item: float>[3]",
            ),
            (point, "struct<x: double not null, label: string>"),
            (
                DataType::Struct(
                    vec![
                        Field::new("a\nb: int8, c", DataType::Int8, true),
                        Field::new("", DataType::Int8, true),
                        Field::new("say \"hi\"\0", DataType::Int8, true),
                        Field::new("caf\u{e9}, x", DataType::Int8, true),
                    ]
                    .into(),
                ),
                r#"struct<"a\nb: int8, c": int8, "": int8, "say \"hi\"\0": int8, café, x: int8>"#,
            ),
            (
                DataType::Map(Arc::new(Field::new("entries", entries, false)), false),
                "map<string, int64>",
            ),
            (
                DataType::Union(
                    vec![Field::new("a", DataType::Int8, true)].into(),
                    vec![5].into(),
                    UnionMode::Dense,
                ),
                "dense_union<a: int8=5>",
            ),
            (
                DataType::RunEndEncoded(Arc::new([
                    Field::new("run_ends", DataType::Int32, false),
                    Field::new("values", DataType::Utf8, true),
                ])),
                "run_end_encoded<run_ends: int32 not null, values: string>",
            ),
        ];
        for (data_type, text) in cases {
            assert_eq!(data_type.to_string(), text);
        }
        let encoding = DictionaryEncoding {
            id: 0,
            index_type: IntType {
                bit_width: 8,
                signed: false,
            },
            ordered: false,
        };
        let city = Field::new("city", DataType::Utf8, false).with_dictionary(encoding);
        assert_eq!(
            city.to_string(),
            "city: dictionary<values=string, indices=uint8, ordered=0> not null"
        );
    }
}
