//! Views of `Schema.fbs`: [`Schema`], [`Field`], [`Type`], [`DictionaryEncoding`] and
//! [`KeyValue`] metadata.
//!
//! It uses `slots` beside it, the flatbuffer reader and the errors.
//!
//! A [`Schema`] is reached through a [`Message`](super::Message) header or a
//! [`Footer`](super::Footer); everything here borrows from that flatbuffer.

use super::slots::*;
use super::{Int32s, Int64s, enum_field, invalid, missing, vector_or_empty};
use crate::error::FormatResult;
use crate::flatbuffer::{Table, Tables};
use core::fmt;

/// The columns of a record batch, their byte order and metadata (`Schema` table).
#[derive(Clone, Copy, Debug)]
pub struct Schema<'a> {
    table: Table<'a>,
}

impl<'a> Schema<'a> {
    pub(super) fn from_table(table: Table<'a>) -> Self {
        Schema { table }
    }

    /// Byte order of the buffers (`Schema.endianness`, little by default).
    pub fn endianness(&self) -> FormatResult<Endianness> {
        enum_field(
            &self.table,
            SCHEMA_ENDIANNESS,
            0,
            "Schema.endianness",
            Endianness::from_fb,
        )
    }

    /// The top-level fields (`Schema.fields`; empty when absent).
    pub fn fields(&self) -> FormatResult<Fields<'a>> {
        Fields::read(
            &self.table,
            SCHEMA_FIELDS,
            "Schema.fields",
            Field::from_table,
        )
    }

    /// User-defined metadata (`Schema.custom_metadata`; empty when absent).
    pub fn custom_metadata(&self) -> FormatResult<KeyValues<'a>> {
        key_values(
            &self.table,
            SCHEMA_CUSTOM_METADATA,
            "Schema.custom_metadata",
        )
    }

    /// The `Feature` enum values the stream uses (`Schema.features`; empty when absent).
    ///
    /// Known values: 0 `UNUSED`, 1 `DICTIONARY_REPLACEMENT`, 2 `COMPRESSED_BODY`.
    pub fn features(&self) -> FormatResult<Int64s<'a>> {
        vector_or_empty(&self.table, SCHEMA_FEATURES, "Schema.features")
    }
}

/// A vector of tables, each checked and read as a `T` when asked for: [`Fields`] and
/// [`KeyValues`].
#[derive(Clone, Copy)]
pub struct TableVector<'a, T> {
    tables: Tables<'a>,
    read: fn(Table<'a>) -> FormatResult<T>,
}

/// A vector of [`Field`]s: a schema's columns or a field's children.
pub type Fields<'a> = TableVector<'a, Field<'a>>;

/// A vector of [`KeyValue`] metadata entries.
pub type KeyValues<'a> = TableVector<'a, KeyValue<'a>>;

impl<'a, T> TableVector<'a, T> {
    /// The vector in field `slot` of `t` (empty when absent), whose tables `read` reads.
    pub(super) fn read(
        t: &Table<'a>,
        slot: u16,
        what: &'static str,
        read: fn(Table<'a>) -> FormatResult<T>,
    ) -> FormatResult<Self> {
        let tables = t.tables(slot, what)?.unwrap_or_else(Tables::empty);
        Ok(TableVector { tables, read })
    }

    /// Number of items.
    pub fn len(&self) -> usize {
        self.tables.len()
    }

    /// Whether there are no items.
    pub fn is_empty(&self) -> bool {
        self.tables.is_empty()
    }

    /// Item `i`, after checking its table (an index out of range is an error too).
    pub fn get(&self, i: usize) -> FormatResult<T> {
        (self.read)(self.tables.get(i)?)
    }

    /// The items in order, each checked as it is read.
    pub fn iter(&self) -> impl Iterator<Item = FormatResult<T>> + 'a
    where
        T: 'a,
    {
        let read = self.read;
        self.tables.iter().map(move |t| t.and_then(read))
    }
}

impl<T> fmt::Debug for TableVector<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TableVector")
            .field("tables", &self.tables)
            .finish_non_exhaustive()
    }
}

/// One column, or a child of a nested column (`Field` table).
#[derive(Clone, Copy, Debug)]
pub struct Field<'a> {
    table: Table<'a>,
    nullable: bool,
}

impl<'a> Field<'a> {
    fn from_table(table: Table<'a>) -> FormatResult<Self> {
        let nullable = table.scalar(FIELD_NULLABLE, false, "Field.nullable")?;
        Ok(Field { table, nullable })
    }

    /// The field's name (`Field.name`; optional, e.g. for list items).
    pub fn name(&self) -> FormatResult<Option<&'a str>> {
        self.table.str(FIELD_NAME, "Field.name")
    }

    /// Whether the field may hold nulls (`Field.nullable`).
    pub fn nullable(&self) -> bool {
        self.nullable
    }

    /// The logical type (`Field.type`), or of the values if the field is dictionary encoded.
    pub fn type_(&self) -> FormatResult<Type<'a>> {
        let tag = self.table.scalar(FIELD_TYPE_TYPE, 0u8, "Field.type_type")?;
        if tag > TYPE_LARGE_LIST_VIEW {
            return Err(invalid("Field.type union tag", tag, &self.table));
        }
        let Some((tag, t)) = self
            .table
            .union(FIELD_TYPE_TYPE, FIELD_TYPE, "Field.type")?
        else {
            return Err(missing("Field.type", &self.table));
        };
        Type::read(tag, &t)
    }

    /// How the field is dictionary encoded (`Field.dictionary`), or `None` if it is not.
    pub fn dictionary(&self) -> FormatResult<Option<DictionaryEncoding>> {
        self.table
            .table(FIELD_DICTIONARY, "Field.dictionary")?
            .map(|t| DictionaryEncoding::read(&t))
            .transpose()
    }

    /// The child fields of a nested type (`Field.children`; empty when absent).
    pub fn children(&self) -> FormatResult<Fields<'a>> {
        Fields::read(
            &self.table,
            FIELD_CHILDREN,
            "Field.children",
            Field::from_table,
        )
    }

    /// User-defined metadata (`Field.custom_metadata`; empty when absent).
    pub fn custom_metadata(&self) -> FormatResult<KeyValues<'a>> {
        key_values(&self.table, FIELD_CUSTOM_METADATA, "Field.custom_metadata")
    }
}

/// A field's logical type: the `Type` union with each member's parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Type<'a> {
    /// All values are null.
    Null,
    /// An integer.
    Int(IntType),
    /// A floating-point number.
    FloatingPoint(Precision),
    /// Variable-length bytes with 32-bit offsets.
    Binary,
    /// UTF-8 text with 32-bit offsets.
    Utf8,
    /// A bit-packed boolean.
    Bool,
    /// A decimal as a two's-complement integer of `bit_width` bits.
    Decimal {
        /// Total number of decimal digits.
        precision: i32,
        /// Digits after the decimal point.
        scale: i32,
        /// 128 or 256 as the format allows (not checked here).
        bit_width: i32,
    },
    /// A date since the epoch.
    Date(DateUnit),
    /// A time of day.
    Time {
        /// The unit.
        unit: TimeUnit,
        /// 32 or 64 as the format allows (not checked here).
        bit_width: i32,
    },
    /// A 64-bit timestamp since the epoch.
    Timestamp {
        /// The unit.
        unit: TimeUnit,
        /// The time zone name or offset, if any.
        timezone: Option<&'a str>,
    },
    /// A calendar interval.
    Interval(IntervalUnit),
    /// A list with 32-bit offsets.
    List,
    /// A struct (`Struct_` in the `.fbs`).
    Struct,
    /// A union of its children.
    Union {
        /// Sparse or dense.
        mode: UnionMode,
        /// The type id of each child, when not simply the child index.
        type_ids: Option<Int32s<'a>>,
    },
    /// Fixed-width bytes.
    FixedSizeBinary {
        /// Bytes per value.
        byte_width: i32,
    },
    /// A list of a fixed number of items.
    FixedSizeList {
        /// Items per value.
        list_size: i32,
    },
    /// A map, laid out as a list of key-value structs.
    Map {
        /// Whether the keys within each value are sorted.
        keys_sorted: bool,
    },
    /// An elapsed time as a 64-bit integer.
    Duration(TimeUnit),
    /// Variable-length bytes with 64-bit offsets.
    LargeBinary,
    /// UTF-8 text with 64-bit offsets.
    LargeUtf8,
    /// A list with 64-bit offsets.
    LargeList,
    /// Run-end encoded values (children: run ends, values).
    RunEndEncoded,
    /// Variable-length bytes as views.
    BinaryView,
    /// UTF-8 text as views.
    Utf8View,
    /// A list with 32-bit offsets and sizes.
    ListView,
    /// A list with 64-bit offsets and sizes.
    LargeListView,
}

impl<'a> Type<'a> {
    /// Reads the `Type` union member `tag` from its table `t`.
    fn read(tag: u8, t: &Table<'a>) -> FormatResult<Self> {
        // Time, Timestamp and Duration hold their unit in slot 0.
        let unit =
            |default: TimeUnit, what| enum_field(t, 0, default as i16, what, TimeUnit::from_fb);
        Ok(match tag {
            TYPE_NULL => Type::Null,
            TYPE_INT => Type::Int(int_type(t)?),
            TYPE_FLOATING_POINT => Type::FloatingPoint(enum_field(
                t,
                0,
                0,
                "FloatingPoint.precision",
                Precision::from_fb,
            )?),
            TYPE_BINARY => Type::Binary,
            TYPE_UTF8 => Type::Utf8,
            TYPE_BOOL => Type::Bool,
            TYPE_DECIMAL => Type::Decimal {
                precision: t.scalar(0, 0i32, "Decimal.precision")?,
                scale: t.scalar(1, 0i32, "Decimal.scale")?,
                bit_width: t.scalar(2, 128i32, "Decimal.bitWidth")?,
            },
            TYPE_DATE => Type::Date(enum_field(
                t,
                0,
                DateUnit::Millisecond as i16,
                "Date.unit",
                DateUnit::from_fb,
            )?),
            TYPE_TIME => Type::Time {
                unit: unit(TimeUnit::Millisecond, "Time.unit")?,
                bit_width: t.scalar(1, 32i32, "Time.bitWidth")?,
            },
            TYPE_TIMESTAMP => Type::Timestamp {
                unit: unit(TimeUnit::Second, "Timestamp.unit")?,
                timezone: t.str(1, "Timestamp.timezone")?,
            },
            TYPE_INTERVAL => {
                Type::Interval(enum_field(t, 0, 0, "Interval.unit", IntervalUnit::from_fb)?)
            }
            TYPE_LIST => Type::List,
            TYPE_STRUCT => Type::Struct,
            TYPE_UNION => Type::Union {
                mode: enum_field(t, 0, 0, "Union.mode", UnionMode::from_fb)?,
                type_ids: t.vector(1, "Union.typeIds")?,
            },
            TYPE_FIXED_SIZE_BINARY => Type::FixedSizeBinary {
                byte_width: t.scalar(0, 0i32, "FixedSizeBinary.byteWidth")?,
            },
            TYPE_FIXED_SIZE_LIST => Type::FixedSizeList {
                list_size: t.scalar(0, 0i32, "FixedSizeList.listSize")?,
            },
            TYPE_MAP => Type::Map {
                keys_sorted: t.scalar(0, false, "Map.keysSorted")?,
            },
            TYPE_DURATION => Type::Duration(unit(TimeUnit::Millisecond, "Duration.unit")?),
            TYPE_LARGE_BINARY => Type::LargeBinary,
            TYPE_LARGE_UTF8 => Type::LargeUtf8,
            TYPE_LARGE_LIST => Type::LargeList,
            TYPE_RUN_END_ENCODED => Type::RunEndEncoded,
            TYPE_BINARY_VIEW => Type::BinaryView,
            TYPE_UTF8_VIEW => Type::Utf8View,
            TYPE_LIST_VIEW => Type::ListView,
            TYPE_LARGE_LIST_VIEW => Type::LargeListView,
            _ => return Err(invalid("Field.type union tag", tag, t)),
        })
    }
}

/// Reads an `Int` table; widths other than 8, 16, 32 and 64 are errors.
fn int_type(t: &Table<'_>) -> FormatResult<IntType> {
    let bits = t.scalar(0, 0i32, "Int.bitWidth")?;
    let bit_width = match bits {
        8 => 8,
        16 => 16,
        32 => 32,
        64 => 64,
        _ => return Err(invalid("Int.bitWidth", bits, t)),
    };
    let signed = t.scalar(1, false, "Int.is_signed")?;
    Ok(IntType { bit_width, signed })
}

/// How a field is dictionary encoded (`DictionaryEncoding` table).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DictionaryEncoding {
    /// The dictionary id that `DictionaryBatch` messages refer to.
    pub id: i64,
    /// The type of the indices (signed 32-bit when absent).
    pub index_type: IntType,
    /// Whether the dictionary's order is meaningful.
    pub is_ordered: bool,
}

impl DictionaryEncoding {
    fn read(t: &Table<'_>) -> FormatResult<Self> {
        let id = t.scalar(DICTIONARY_ID, 0i64, "DictionaryEncoding.id")?;
        let index_type = match t.table(DICTIONARY_INDEX_TYPE, "DictionaryEncoding.indexType")? {
            Some(int) => int_type(&int)?,
            None => IntType {
                bit_width: 32,
                signed: true,
            },
        };
        let is_ordered = t.scalar(DICTIONARY_IS_ORDERED, false, "DictionaryEncoding.isOrdered")?;
        // DictionaryKind has one member: DenseArray (0).
        let kind = t.scalar(DICTIONARY_KIND, 0i16, "DictionaryEncoding.dictionaryKind")?;
        if kind != 0 {
            return Err(invalid("DictionaryEncoding.dictionaryKind", kind, t));
        }
        Ok(DictionaryEncoding {
            id,
            index_type,
            is_ordered,
        })
    }
}

/// The metadata key that names a field's extension type (its storage type is read as usual).
pub(crate) const EXTENSION_NAME_KEY: &str = "ARROW:extension:name";

/// One user-defined metadata entry (`KeyValue` table); an absent key or value reads as `""`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KeyValue<'a> {
    /// The key.
    pub key: &'a str,
    /// The value.
    pub value: &'a str,
}

/// The metadata entries in field `slot` of `t` (empty when absent).
pub(super) fn key_values<'a>(
    t: &Table<'a>,
    slot: u16,
    what: &'static str,
) -> FormatResult<KeyValues<'a>> {
    KeyValues::read(t, slot, what, key_value)
}

fn key_value(t: Table<'_>) -> FormatResult<KeyValue<'_>> {
    Ok(KeyValue {
        key: t.str(KEY_VALUE_KEY, "KeyValue.key")?.unwrap_or(""),
        value: t.str(KEY_VALUE_VALUE, "KeyValue.value")?.unwrap_or(""),
    })
}

/// Unit of a `Time`, `Timestamp` or `Duration` value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TimeUnit {
    /// Seconds.
    Second = 0,
    /// Milliseconds.
    Millisecond = 1,
    /// Microseconds.
    Microsecond = 2,
    /// Nanoseconds.
    Nanosecond = 3,
}

impl TimeUnit {
    /// The variant whose `.fbs` enum value is `value`, or `None` for an unknown value.
    pub fn from_fb(value: i16) -> Option<Self> {
        [
            Self::Second,
            Self::Millisecond,
            Self::Microsecond,
            Self::Nanosecond,
        ]
        .into_iter()
        .find(|variant| *variant as i16 == value)
    }
}

/// Unit of a `Date` value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DateUnit {
    /// Days since the epoch, 32 bits.
    Day = 0,
    /// Milliseconds since the epoch, 64 bits.
    Millisecond = 1,
}

impl DateUnit {
    /// The variant whose `.fbs` enum value is `value`, or `None` for an unknown value.
    pub fn from_fb(value: i16) -> Option<Self> {
        [Self::Day, Self::Millisecond]
            .into_iter()
            .find(|variant| *variant as i16 == value)
    }
}

/// Unit of an `Interval` value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum IntervalUnit {
    /// Months, as one i32.
    YearMonth = 0,
    /// Days and milliseconds, as two i32.
    DayTime = 1,
    /// Months (i32), days (i32) and nanoseconds (i64).
    MonthDayNano = 2,
}

impl IntervalUnit {
    /// The variant whose `.fbs` enum value is `value`, or `None` for an unknown value.
    pub fn from_fb(value: i16) -> Option<Self> {
        [Self::YearMonth, Self::DayTime, Self::MonthDayNano]
            .into_iter()
            .find(|variant| *variant as i16 == value)
    }
}

/// Precision of a floating-point value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Precision {
    /// 16-bit IEEE 754.
    Half = 0,
    /// 32-bit IEEE 754.
    Single = 1,
    /// 64-bit IEEE 754.
    Double = 2,
}

impl Precision {
    /// The variant whose `.fbs` enum value is `value`, or `None` for an unknown value.
    pub fn from_fb(value: i16) -> Option<Self> {
        [Self::Half, Self::Single, Self::Double]
            .into_iter()
            .find(|variant| *variant as i16 == value)
    }
}

/// Layout of a union's children.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum UnionMode {
    /// Every child has the union's length; no offsets buffer.
    Sparse = 0,
    /// Children are packed; an offsets buffer indexes into the selected child.
    Dense = 1,
}

impl UnionMode {
    /// The variant whose `.fbs` enum value is `value`, or `None` for an unknown value.
    pub fn from_fb(value: i16) -> Option<Self> {
        [Self::Sparse, Self::Dense]
            .into_iter()
            .find(|variant| *variant as i16 == value)
    }
}

/// Byte order of a file's buffers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Endianness {
    /// Little-endian (the usual case, and what quiver's hosts are).
    #[default]
    Little = 0,
    /// Big-endian: the reader byte-swaps buffers into owned memory.
    Big = 1,
}

impl Endianness {
    /// The variant whose `.fbs` enum value is `value`, or `None` for an unknown value.
    pub fn from_fb(value: i16) -> Option<Self> {
        [Self::Little, Self::Big]
            .into_iter()
            .find(|variant| *variant as i16 == value)
    }
}

/// An integer type: the index type of a dictionary, or the run-end type of run-end encoding.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct IntType {
    /// 8, 16, 32 or 64.
    pub bit_width: u8,
    /// Whether the integer is signed.
    pub signed: bool,
}

impl IntType {
    /// Size of one value in bytes.
    pub fn byte_width(self) -> usize {
        usize::from(self.bit_width / 8)
    }
}

/// Arrow's notation for an integer type: `int8` … `uint64`.
impl core::fmt::Display for IntType {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        let sign = if self.signed { "" } else { "u" };
        write!(f, "{sign}int{}", self.bit_width)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;
    use crate::error::FormatErrorKind;
    use crate::flatbuffer::builder::{Obj, Value, finish};
    use crate::format::invalid_value;
    use std::vec;
    use std::vec::Vec;

    fn schema(buf: &[u8]) -> Schema<'_> {
        Schema::from_table(Table::root(buf, "Schema").unwrap())
    }

    fn first_field(buf: &[u8]) -> Field<'_> {
        schema(buf).fields().unwrap().get(0).unwrap()
    }

    /// A one-field schema whose field has type union `tag` with table `t`.
    fn typed(tag: u8, t: Option<Obj>) -> Vec<u8> {
        let mut field = Obj::new().str(0, "f").with(2, Value::U8(tag));
        if let Some(t) = t {
            field = field.table(3, t);
        }
        finish(&Obj::new().tables(1, vec![field]))
    }

    fn type_of(tag: u8, t: Obj) -> FormatResult<Type<'static>> {
        let buf = std::boxed::Box::leak(typed(tag, Some(t)).into_boxed_slice());
        schema(buf).fields()?.get(0)?.type_()
    }

    #[test]
    fn types_without_parameters_and_defaults() {
        let cases = [
            (TYPE_NULL, Type::Null),
            (TYPE_BINARY, Type::Binary),
            (TYPE_UTF8, Type::Utf8),
            (TYPE_BOOL, Type::Bool),
            (TYPE_LIST, Type::List),
            (TYPE_STRUCT, Type::Struct),
            (TYPE_LARGE_BINARY, Type::LargeBinary),
            (TYPE_LARGE_UTF8, Type::LargeUtf8),
            (TYPE_LARGE_LIST, Type::LargeList),
            (TYPE_RUN_END_ENCODED, Type::RunEndEncoded),
            (TYPE_BINARY_VIEW, Type::BinaryView),
            (TYPE_UTF8_VIEW, Type::Utf8View),
            (TYPE_LIST_VIEW, Type::ListView),
            (TYPE_LARGE_LIST_VIEW, Type::LargeListView),
            // Absent parameters follow the `.fbs` defaults.
            (TYPE_FLOATING_POINT, Type::FloatingPoint(Precision::Half)),
            (
                TYPE_DECIMAL,
                Type::Decimal {
                    precision: 0,
                    scale: 0,
                    bit_width: 128,
                },
            ),
            (TYPE_DATE, Type::Date(DateUnit::Millisecond)),
            (
                TYPE_TIME,
                Type::Time {
                    unit: TimeUnit::Millisecond,
                    bit_width: 32,
                },
            ),
            (
                TYPE_TIMESTAMP,
                Type::Timestamp {
                    unit: TimeUnit::Second,
                    timezone: None,
                },
            ),
            (TYPE_INTERVAL, Type::Interval(IntervalUnit::YearMonth)),
            (
                TYPE_UNION,
                Type::Union {
                    mode: UnionMode::Sparse,
                    type_ids: None,
                },
            ),
            (
                TYPE_FIXED_SIZE_BINARY,
                Type::FixedSizeBinary { byte_width: 0 },
            ),
            (TYPE_FIXED_SIZE_LIST, Type::FixedSizeList { list_size: 0 }),
            (TYPE_MAP, Type::Map { keys_sorted: false }),
            (TYPE_DURATION, Type::Duration(TimeUnit::Millisecond)),
        ];
        for (tag, expected) in cases {
            assert_eq!(type_of(tag, Obj::new()).unwrap(), expected, "tag {tag}");
        }
        // Int has no usable default width.
        let e = type_of(TYPE_INT, Obj::new()).unwrap_err();
        assert_eq!(invalid_value(e), ("Int.bitWidth", 0));
    }

    #[test]
    fn type_parameters() {
        let int = |bits: i32, signed: bool| {
            Obj::new()
                .with(0, Value::I32(bits))
                .with(1, Value::Bool(signed))
        };
        for bits in [8u8, 16, 32, 64] {
            for signed in [false, true] {
                assert_eq!(
                    type_of(TYPE_INT, int(i32::from(bits), signed)).unwrap(),
                    Type::Int(IntType {
                        bit_width: bits,
                        signed
                    })
                );
            }
        }
        for bits in [-8, 1, 12, 128, 256] {
            let e = type_of(TYPE_INT, int(bits, true)).unwrap_err();
            assert_eq!(invalid_value(e), ("Int.bitWidth", i64::from(bits)));
        }
        let decimal = Obj::new()
            .with(0, Value::I32(38))
            .with(1, Value::I32(-2))
            .with(2, Value::I32(256));
        let unit = |unit: i16| Obj::new().with(0, Value::I16(unit));
        let cases = [
            (
                TYPE_DECIMAL,
                decimal,
                Type::Decimal {
                    precision: 38,
                    scale: -2,
                    bit_width: 256,
                },
            ),
            (
                TYPE_TIMESTAMP,
                unit(3).str(1, "Europe/Paris"),
                Type::Timestamp {
                    unit: TimeUnit::Nanosecond,
                    timezone: Some("Europe/Paris"),
                },
            ),
            (
                TYPE_TIME,
                unit(2).with(1, Value::I32(64)),
                Type::Time {
                    unit: TimeUnit::Microsecond,
                    bit_width: 64,
                },
            ),
            (TYPE_DATE, unit(0), Type::Date(DateUnit::Day)),
            (
                TYPE_INTERVAL,
                unit(2),
                Type::Interval(IntervalUnit::MonthDayNano),
            ),
            (
                TYPE_FLOATING_POINT,
                unit(2),
                Type::FloatingPoint(Precision::Double),
            ),
            (
                TYPE_FIXED_SIZE_BINARY,
                Obj::new().with(0, Value::I32(16)),
                Type::FixedSizeBinary { byte_width: 16 },
            ),
            (
                TYPE_FIXED_SIZE_LIST,
                Obj::new().with(0, Value::I32(3)),
                Type::FixedSizeList { list_size: 3 },
            ),
            (
                TYPE_MAP,
                Obj::new().with(0, Value::Bool(true)),
                Type::Map { keys_sorted: true },
            ),
            (TYPE_DURATION, unit(0), Type::Duration(TimeUnit::Second)),
        ];
        for (tag, t, expected) in cases {
            assert_eq!(type_of(tag, t).unwrap(), expected, "tag {tag}");
        }
        let union = unit(1).i32s(1, &[5, 7]);
        let Type::Union { mode, type_ids } = type_of(TYPE_UNION, union).unwrap() else {
            panic!("expected a union");
        };
        assert_eq!(mode, UnionMode::Dense);
        assert_eq!(type_ids.unwrap().iter().collect::<Vec<_>>(), [5, 7]);
    }

    #[test]
    fn unknown_enum_values() {
        let cases = [
            (TYPE_FLOATING_POINT, "FloatingPoint.precision"),
            (TYPE_DATE, "Date.unit"),
            (TYPE_TIME, "Time.unit"),
            (TYPE_TIMESTAMP, "Timestamp.unit"),
            (TYPE_INTERVAL, "Interval.unit"),
            (TYPE_UNION, "Union.mode"),
            (TYPE_DURATION, "Duration.unit"),
        ];
        for (tag, what) in cases {
            let e = type_of(tag, Obj::new().with(0, Value::I16(9))).unwrap_err();
            assert_eq!(invalid_value(e), (what, 9));
        }
    }

    #[test]
    fn unknown_or_absent_type() {
        for (tag, value) in [(TYPE_LARGE_LIST_VIEW + 1, 27), (255, 255)] {
            let e = type_of(tag, Obj::new()).unwrap_err();
            assert_eq!(invalid_value(e), ("Field.type union tag", value));
        }
        for buf in [
            typed(0, Some(Obj::new())),
            typed(TYPE_INT, None),
            typed(0, None),
        ] {
            let e = first_field(&buf).type_().unwrap_err();
            assert_eq!(e.kind, FormatErrorKind::MissingField { what: "Field.type" });
            assert!(e.offset().is_some());
        }
    }

    #[test]
    fn fields_and_children() {
        let leaf = |name: &str| {
            Obj::new()
                .str(0, name)
                .with(1, Value::Bool(true))
                .with(2, Value::U8(TYPE_NULL))
                .table(3, Obj::new())
        };
        let parent = Obj::new()
            .with(2, Value::U8(TYPE_STRUCT))
            .table(3, Obj::new())
            .tables(5, vec![leaf("a"), leaf("b")]);
        let buf = finish(&Obj::new().tables(1, vec![parent, leaf("c")]));
        let s = schema(&buf);
        assert_eq!(s.endianness().unwrap(), Endianness::Little);
        assert!(s.features().unwrap().is_empty());
        assert!(s.custom_metadata().unwrap().is_empty());
        let fields = s.fields().unwrap();
        assert_eq!(fields.len(), 2);
        assert!(!fields.is_empty());
        let parent = fields.get(0).unwrap();
        assert_eq!(parent.name().unwrap(), None);
        assert!(!parent.nullable());
        assert_eq!(parent.type_().unwrap(), Type::Struct);
        let names: Vec<_> = parent
            .children()
            .unwrap()
            .iter()
            .map(|f| f.unwrap().name().unwrap().unwrap())
            .collect();
        assert_eq!(names, ["a", "b"]);
        let c = fields.get(1).unwrap();
        assert!(c.nullable());
        assert!(c.children().unwrap().is_empty());
        assert!(c.custom_metadata().unwrap().is_empty());
        assert!(fields.get(2).is_err());
        assert_eq!(fields.iter().count(), 2);

        // A schema without fields.
        let buf = finish(&Obj::new());
        assert!(schema(&buf).fields().unwrap().is_empty());
    }

    #[test]
    fn schema_endianness_features_and_metadata() {
        let kv = |k: Option<&str>, v: Option<&str>| {
            let mut o = Obj::new();
            if let Some(k) = k {
                o = o.str(0, k);
            }
            if let Some(v) = v {
                o = o.str(1, v);
            }
            o
        };
        let buf = finish(
            &Obj::new()
                .with(0, Value::I16(1))
                .tables(
                    2,
                    vec![
                        kv(Some("k"), Some("v")),
                        kv(None, Some("x")),
                        kv(Some("y"), None),
                    ],
                )
                .i64s(3, &[1, 2]),
        );
        let s = schema(&buf);
        assert_eq!(s.endianness().unwrap(), Endianness::Big);
        assert_eq!(s.features().unwrap().iter().collect::<Vec<_>>(), [1, 2]);
        let md = s.custom_metadata().unwrap();
        assert_eq!(md.len(), 3);
        assert!(!md.is_empty());
        let entries: Vec<_> = md.iter().map(|kv| kv.unwrap()).collect();
        let entry = |key, value| KeyValue { key, value };
        assert_eq!(entries, [entry("k", "v"), entry("", "x"), entry("y", "")]);
        assert_eq!(md.get(0).unwrap(), entries[0]);
        assert!(md.get(3).is_err());

        let buf = finish(&Obj::new().with(0, Value::I16(2)));
        assert_eq!(
            invalid_value(schema(&buf).endianness().unwrap_err()),
            ("Schema.endianness", 2)
        );
    }

    #[test]
    fn dictionary_encoding() {
        let field = |dict: Obj| {
            finish(&Obj::new().tables(
                1,
                vec![
                        Obj::new()
                            .with(2, Value::U8(TYPE_UTF8))
                            .table(3, Obj::new())
                            .table(4, dict),
                    ],
            ))
        };
        let read = |buf: &[u8]| first_field(buf).dictionary();
        // indexType absent: signed 32-bit.
        let encoding = |id, bit_width, signed, is_ordered| {
            let index_type = IntType { bit_width, signed };
            Some(DictionaryEncoding {
                id,
                index_type,
                is_ordered,
            })
        };
        let buf = field(Obj::new().with(0, Value::I64(7)));
        assert_eq!(read(&buf).unwrap(), encoding(7, 32, true, false));
        let buf = field(
            Obj::new()
                .with(0, Value::I64(-1))
                .table(1, Obj::new().with(0, Value::I32(8)))
                .with(2, Value::Bool(true))
                .with(3, Value::I16(0)),
        );
        assert_eq!(read(&buf).unwrap(), encoding(-1, 8, false, true));
        let buf = field(Obj::new().with(3, Value::I16(1)));
        assert_eq!(
            invalid_value(read(&buf).unwrap_err()),
            ("DictionaryEncoding.dictionaryKind", 1)
        );
        let buf = field(Obj::new().table(1, Obj::new().with(0, Value::I32(7))));
        assert_eq!(invalid_value(read(&buf).unwrap_err()), ("Int.bitWidth", 7));
        // Not dictionary encoded.
        let buf = typed(TYPE_NULL, Some(Obj::new()));
        assert_eq!(read(&buf).unwrap(), None);
    }

    #[test]
    fn bad_utf8_name_names_the_field() {
        let buf =
            finish(&Obj::new().tables(1, vec![Obj::new().with(0, Value::Str(b"\xC3".into()))]));
        let e = first_field(&buf).name().unwrap_err();
        assert_eq!(e.kind, FormatErrorKind::Flatbuffer { what: "Field.name" });
    }
}
