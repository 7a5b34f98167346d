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
