//! An array's checked type ([`Kind`]) and the buffers it has in a message ([`Layout`]): the
//! columnar format's buffer layout table, read once for every decoder.
//!
//! A [`Kind`] enters as a flatbuffer [`Type`](super::Type) with its child count, checked by
//! [`Kind::of`] (the owned schema, the no-alloc view and the read planner all check types
//! here), or from an owned [`DataType`](crate::datatype::DataType). [`Layout::walk`] steps a
//! message's [`Cursor`] over an array's buffers in that order, the one
//! reading of them (for `format::body`'s walk of a message body). It uses the flatbuffer views
//! and the cursor of this module and the errors; nothing above the format.

use super::cursor::Cursor;
use super::{
    DateUnit, Int32s, IntType, IntervalUnit, MetadataVersion, Precision, TimeUnit, Type, UnionMode,
};
use crate::error::{FormatError, FormatErrorKind, FormatResult};
use core::ops::Range;

/// An array's type, checked from the flatbuffer `Type` (the value type for a dictionary-encoded
/// array).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Kind<'a> {
    Null,
    Boolean,
    Int(IntType),
    Float16,
    Float32,
    Float64,
    /// Bytes per value and scale.
    Decimal(usize, i8),
    Date32,
    Date64,
    Time32(TimeUnit),
    Time64(TimeUnit),
    Timestamp(TimeUnit, Option<&'a str>),
    Duration(TimeUnit),
    Interval(IntervalUnit),
    Binary,
    LargeBinary,
    Utf8,
    LargeUtf8,
    BinaryView,
    Utf8View,
    FixedSizeBinary(usize),
    List,
    LargeList,
    ListView,
    LargeListView,
    FixedSizeList(usize),
    Struct,
    Map,
    Union {
        dense: bool,
        type_ids: TypeIds<'a>,
    },
    RunEndEncoded,
}

/// How a buffer's bytes are swapped when the file is big-endian.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Swap {
    /// Bytes or bits: nothing to swap.
    None,
    /// Values of this many bytes, each reversed.
    Each(usize),
    /// Interval month-day-nano: i32, i32, i64.
    MonthDayNano,
    /// 16-byte binary views: i32 length, then inline bytes or prefix, i32 buffer, i32 offset.
    Views,
}

/// The buffers an array has in a message, in order (see [`Kind::layout`]).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Layout {
    /// A validity bitmap comes first.
    pub(crate) validity: bool,
    /// The bitmap is part of the array's nulls (pre-V5 unions carry one that is not).
    pub(crate) keep_validity: bool,
    /// The other fixed buffers' swaps (`count` of them).
    swaps: [Swap; 2],
    count: usize,
    /// Variadic data buffers follow (views), counted by `variadicBufferCounts`.
    pub(crate) variadic: bool,
}

impl Layout {
    /// The fixed buffers after the validity bitmap, with how each is byte-swapped.
    pub(crate) fn buffers(&self) -> &[Swap] {
        self.swaps.get(..self.count).unwrap_or_default()
    }

    /// Steps `cursor` over an array's buffers in the message's order: the one reading of them,
    /// for the one walk of a message body (`format::body`, under both decoders and the read
    /// planner). `buffer` makes each from its body range and swap; the fixed then variadic
    /// ones go to `keep`. Returns the validity bitmap if it counts (in the nulls, `null_count` >
    /// 0) and where the variadic buffers are among the message's.
    pub(crate) fn walk<B>(
        &self,
        cursor: &mut Cursor<'_>,
        body_len: u64,
        null_count: usize,
        mut buffer: impl FnMut(Range<u64>, Swap) -> FormatResult<B>,
        mut keep: impl FnMut(B),
    ) -> FormatResult<Walked<B>> {
        let mut validity = None;
        if self.validity {
            let bitmap = buffer(cursor.buffer(body_len)?, Swap::None)?;
            validity = Some(bitmap).filter(|_| self.keep_validity && null_count > 0);
        }
        for swap in self.buffers() {
            keep(buffer(cursor.buffer(body_len)?, *swap)?);
        }
        let mut variadic = None;
        if self.variadic {
            let first = cursor.next_buffer;
            for _ in 0..cursor.variadic_count()? {
                keep(buffer(cursor.buffer(body_len)?, Swap::None)?);
            }
            variadic = Some(first..cursor.next_buffer);
        }
        Ok(Walked { validity, variadic })
    }
}

/// What [`Layout::walk`] found besides the buffers it handed to `keep`.
#[derive(Debug)]
pub(crate) struct Walked<B> {
    /// The validity bitmap, if it counts.
    pub(crate) validity: Option<B>,
    /// The variadic data buffers' indices among the message's buffer specs (`None`: the array
    /// has none in its layout).
    pub(crate) variadic: Option<Range<usize>>,
}

/// The type ids of a union's children, in child order.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum TypeIds<'a> {
    /// Child `k` has id `k`.
    Positions,
    /// As the flatbuffer `Union.typeIds` lists them.
    Message(Int32s<'a>),
    /// As an owned schema lists them.
    #[cfg(feature = "alloc")]
    Ids(&'a [i8]),
}

impl TypeIds<'_> {
    /// The child (of `children`) that type id `id` selects.
    pub(crate) fn child(self, id: i8, children: usize) -> Option<usize> {
        match self {
            TypeIds::Message(ids) => ids.iter().position(|t| t == i32::from(id)),
            #[cfg(feature = "alloc")]
            TypeIds::Ids(ids) => ids.iter().position(|t| *t == id),
            TypeIds::Positions => usize::try_from(id).ok().filter(|c| *c < children),
        }
    }
}

/// A value out of its allowed range.
pub(crate) fn invalid(what: &'static str, value: impl Into<i64>) -> FormatError {
    FormatErrorKind::InvalidValue {
        what,
        value: value.into(),
    }
    .into()
}

impl<'a> Kind<'a> {
    /// The type of a field with `children` child fields, its parameters and child count checked:
    /// the one check of a flatbuffer type, for the no-alloc decoder and the owned schema.
    pub(crate) fn of(ty: Type<'a>, children: usize) -> FormatResult<Self> {
        use Type as T;
        let expect = |n: usize| {
            if children == n {
                Ok(())
            } else {
                Err(invalid("number of child fields", children as i64))
            }
        };
        let size = |n: i32, what| usize::try_from(n).map_err(|_| invalid(what, n));
        let kind = match ty {
            T::Null => Kind::Null,
            T::Bool => Kind::Boolean,
            T::Int(int) => Kind::Int(int),
            T::FloatingPoint(Precision::Half) => Kind::Float16,
            T::FloatingPoint(Precision::Single) => Kind::Float32,
            T::FloatingPoint(Precision::Double) => Kind::Float64,
            T::Decimal {
                precision,
                scale,
                bit_width,
            } => {
                let max_precision = match bit_width {
                    32 => 9,
                    64 => 18,
                    128 => 38,
                    256 => 76,
                    _ => return Err(invalid("Decimal.bitWidth", bit_width)),
                };
                if !(1..=max_precision).contains(&precision) {
                    return Err(invalid("Decimal.precision", precision));
                }
                let scale = i8::try_from(scale).map_err(|_| invalid("Decimal.scale", scale))?;
                Kind::Decimal(bit_width as usize / 8, scale)
            }
            T::Date(DateUnit::Day) => Kind::Date32,
            T::Date(_) => Kind::Date64,
            T::Time { unit, bit_width } => match (unit, bit_width) {
                (TimeUnit::Second | TimeUnit::Millisecond, 32) => Kind::Time32(unit),
                (TimeUnit::Microsecond | TimeUnit::Nanosecond, 64) => Kind::Time64(unit),
                _ => return Err(invalid("Time.bitWidth", bit_width)),
            },
            T::Timestamp { unit, timezone } => Kind::Timestamp(unit, timezone),
            T::Duration(unit) => Kind::Duration(unit),
            T::Interval(unit) => Kind::Interval(unit),
            T::Binary => Kind::Binary,
            T::LargeBinary => Kind::LargeBinary,
            T::Utf8 => Kind::Utf8,
            T::LargeUtf8 => Kind::LargeUtf8,
            T::BinaryView => Kind::BinaryView,
            T::Utf8View => Kind::Utf8View,
            T::FixedSizeBinary { byte_width: n } => {
                Kind::FixedSizeBinary(size(n, "FixedSizeBinary.byteWidth")?)
            }
            T::List => expect(1).map(|()| Kind::List)?,
            T::LargeList => expect(1).map(|()| Kind::LargeList)?,
            T::ListView => expect(1).map(|()| Kind::ListView)?,
            T::LargeListView => expect(1).map(|()| Kind::LargeListView)?,
            T::Map { .. } => expect(1).map(|()| Kind::Map)?,
            T::FixedSizeList { list_size: n } => {
                expect(1)?;
                Kind::FixedSizeList(size(n, "FixedSizeList.listSize")?)
            }
            T::Struct => Kind::Struct,
            T::Union { mode, type_ids } => {
                if let Some(ids) = type_ids {
                    expect(ids.len())?;
                    for (i, id) in ids.iter().enumerate() {
                        let repeated = ids.iter().take(i).any(|earlier| earlier == id);
                        if !(0..=i32::from(i8::MAX)).contains(&id) || repeated {
                            return Err(invalid("Union.typeIds (negative or repeated)", 0));
                        }
                    }
                } else if children > i8::MAX as usize + 1 {
                    return Err(invalid("number of union children", children as i64));
                }
                Kind::Union {
                    dense: mode == UnionMode::Dense,
                    type_ids: type_ids.map_or(TypeIds::Positions, TypeIds::Message),
                }
            }
            T::RunEndEncoded => expect(2).map(|()| Kind::RunEndEncoded)?,
        };
        Ok(kind)
    }

    /// Bytes per value of a fixed-width type.
    pub(crate) fn byte_width(self) -> Option<usize> {
        Some(match self {
            Kind::Int(int) => int.byte_width(),
            Kind::Float16 => 2,
            Kind::Float32 | Kind::Date32 | Kind::Time32(_) => 4,
            Kind::Float64
            | Kind::Date64
            | Kind::Time64(_)
            | Kind::Timestamp(..)
            | Kind::Duration(_) => 8,
            Kind::Decimal(width, _) | Kind::FixedSizeBinary(width) => width,
            Kind::Interval(IntervalUnit::YearMonth) => 4,
            Kind::Interval(IntervalUnit::DayTime) => 8,
            Kind::Interval(IntervalUnit::MonthDayNano) => 16,
            _ => return None,
        })
    }

    /// The buffers an array of this kind has in a message (`index`: the index type of a
    /// dictionary-encoded one), in order, with how each is byte-swapped: the one buffer-layout
    /// table of the IPC decoders (`view`'s and, with `alloc`, `ipc::columns`'s).
    pub(crate) fn layout(self, index: Option<IntType>, version: MetadataVersion) -> Layout {
        let mut layout = Layout {
            validity: true,
            keep_validity: true,
            swaps: [Swap::None; 2],
            count: 1,
            variadic: false,
        };
        let (first, second) = match (index, self) {
            (Some(index), _) => (Swap::Each(index.byte_width()), None),
            (None, Kind::Null | Kind::RunEndEncoded) => {
                layout.validity = false;
                layout.count = 0;
                return layout;
            }
            (None, Kind::Struct | Kind::FixedSizeList(_)) => {
                layout.count = 0;
                return layout;
            }
            (None, Kind::Union { dense, .. }) => {
                layout.validity = version < MetadataVersion::V5;
                layout.keep_validity = false;
                (Swap::None, dense.then_some(Swap::Each(4)))
            }
            (None, Kind::Boolean | Kind::FixedSizeBinary(_)) => (Swap::None, None),
            (None, Kind::Interval(IntervalUnit::DayTime)) => (Swap::Each(4), None),
            (None, Kind::Interval(IntervalUnit::MonthDayNano)) => (Swap::MonthDayNano, None),
            (None, Kind::Binary | Kind::Utf8) => (Swap::Each(4), Some(Swap::None)),
            (None, Kind::LargeBinary | Kind::LargeUtf8) => (Swap::Each(8), Some(Swap::None)),
            (None, Kind::BinaryView | Kind::Utf8View) => {
                layout.variadic = true;
                (Swap::Views, None)
            }
            (None, Kind::List | Kind::Map) => (Swap::Each(4), None),
            (None, Kind::LargeList) => (Swap::Each(8), None),
            (None, Kind::ListView) => (Swap::Each(4), Some(Swap::Each(4))),
            (None, Kind::LargeListView) => (Swap::Each(8), Some(Swap::Each(8))),
            (None, kind) => match kind.byte_width() {
                Some(1) | None => (Swap::None, None),
                Some(width) => (Swap::Each(width), None),
            },
        };
        layout.swaps = [first, second.unwrap_or(Swap::None)];
        layout.count = 1 + usize::from(second.is_some());
        layout
    }

    /// Whether the text of a value is a string (map keys of these make an object).
    pub(crate) fn is_text(self) -> bool {
        matches!(self, Kind::Utf8 | Kind::LargeUtf8 | Kind::Utf8View)
    }
}
