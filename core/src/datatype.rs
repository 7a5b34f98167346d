//! The logical types of Arrow data, as `Schema.fbs` names them.
//!
//! The small enums ([`TimeUnit`], [`IntervalUnit`], [`UnionMode`], …) need no allocator and are
//! shared with the flatbuffer accessors in [`crate::format`]. [`DataType`] itself holds child
//! fields, so it lives behind the `alloc` feature.

/// Unit of a `Time`, `Timestamp` or `Duration` value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TimeUnit {
    /// Seconds.
    Second,
    /// Milliseconds.
    Millisecond,
    /// Microseconds.
    Microsecond,
    /// Nanoseconds.
    Nanosecond,
}

impl TimeUnit {
    /// The unit as its `Schema.fbs` enum value, or `None` for an unknown value.
    pub fn from_fb(value: i16) -> Option<Self> {
        Some(match value {
            0 => TimeUnit::Second,
            1 => TimeUnit::Millisecond,
            2 => TimeUnit::Microsecond,
            3 => TimeUnit::Nanosecond,
            _ => return None,
        })
    }
}

/// Unit of a `Date` value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DateUnit {
    /// Days since the epoch, 32 bits.
    Day,
    /// Milliseconds since the epoch, 64 bits.
    Millisecond,
}

impl DateUnit {
    /// The unit as its `Schema.fbs` enum value, or `None` for an unknown value.
    pub fn from_fb(value: i16) -> Option<Self> {
        Some(match value {
            0 => DateUnit::Day,
            1 => DateUnit::Millisecond,
            _ => return None,
        })
    }
}

/// Unit of an `Interval` value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum IntervalUnit {
    /// Months, as one i32.
    YearMonth,
    /// Days and milliseconds, as two i32.
    DayTime,
    /// Months (i32), days (i32) and nanoseconds (i64).
    MonthDayNano,
}

impl IntervalUnit {
    /// The unit as its `Schema.fbs` enum value, or `None` for an unknown value.
    pub fn from_fb(value: i16) -> Option<Self> {
        Some(match value {
            0 => IntervalUnit::YearMonth,
            1 => IntervalUnit::DayTime,
            2 => IntervalUnit::MonthDayNano,
            _ => return None,
        })
    }
}

/// Precision of a floating-point value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Precision {
    /// 16-bit IEEE 754.
    Half,
    /// 32-bit IEEE 754.
    Single,
    /// 64-bit IEEE 754.
    Double,
}

impl Precision {
    /// The precision as its `Schema.fbs` enum value, or `None` for an unknown value.
    pub fn from_fb(value: i16) -> Option<Self> {
        Some(match value {
            0 => Precision::Half,
            1 => Precision::Single,
            2 => Precision::Double,
            _ => return None,
        })
    }
}

/// Layout of a union's children.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum UnionMode {
    /// Every child has the union's length; no offsets buffer.
    Sparse,
    /// Children are packed; an offsets buffer indexes into the selected child.
    Dense,
}

impl UnionMode {
    /// The mode as its `Schema.fbs` enum value, or `None` for an unknown value.
    pub fn from_fb(value: i16) -> Option<Self> {
        Some(match value {
            0 => UnionMode::Sparse,
            1 => UnionMode::Dense,
            _ => return None,
        })
    }
}

/// Byte order of a file's buffers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Endianness {
    /// Little-endian (the usual case, and what quiver's hosts are).
    #[default]
    Little,
    /// Big-endian: the reader byte-swaps buffers into owned memory.
    Big,
}

impl Endianness {
    /// The byte order as its `Schema.fbs` enum value, or `None` for an unknown value.
    pub fn from_fb(value: i16) -> Option<Self> {
        Some(match value {
            0 => Endianness::Little,
            1 => Endianness::Big,
            _ => return None,
        })
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

/// Compression codec of a record batch body (`BodyCompression.codec`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CompressionCodec {
    /// LZ4 frame format.
    Lz4Frame,
    /// Zstandard.
    Zstd,
}

impl CompressionCodec {
    /// The codec as its `Message.fbs` enum value, or `None` for an unknown value.
    pub fn from_fb(value: i8) -> Option<Self> {
        Some(match value {
            0 => CompressionCodec::Lz4Frame,
            1 => CompressionCodec::Zstd,
            _ => return None,
        })
    }

    /// The codec's name as the format spells it.
    pub fn name(self) -> &'static str {
        match self {
            CompressionCodec::Lz4Frame => "LZ4_FRAME",
            CompressionCodec::Zstd => "ZSTD",
        }
    }
}

#[cfg(feature = "alloc")]
pub use logical::DataType;

#[cfg(feature = "alloc")]
mod logical {
    use super::{DateUnit, IntervalUnit, Precision, TimeUnit, UnionMode};
    use crate::schema::Field;
    use alloc::sync::Arc;

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
            use DataType::*;
            Some(match self {
                Int8 | UInt8 => 1,
                Int16 | UInt16 | Float16 => 2,
                Int32 | UInt32 | Float32 | Date32 | Time32(_) | Decimal32(..) => 4,
                Int64 | UInt64 | Float64 | Date64 | Time64(_) | Timestamp(..) | Duration(_)
                | Decimal64(..) => 8,
                Decimal128(..) => 16,
                Decimal256(..) => 32,
                Interval(IntervalUnit::YearMonth) => 4,
                Interval(IntervalUnit::DayTime) => 8,
                Interval(IntervalUnit::MonthDayNano) => 16,
                FixedSizeBinary(w) => usize::try_from(*w).ok()?,
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
}
