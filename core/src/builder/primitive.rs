//! Fixed-width values: [`PrimitiveBuilder<T>`] for integers, floats, decimals, dates, times,
//! timestamps, durations and intervals, and the value types the format has but Rust lacks
//! ([`I256`], [`IntervalDayTime`], [`IntervalMonthDayNano`]).
//!
//! It uses, of the crate, the arrays, their bytes, the data types and the errors; nothing else of
//! `builder`.
//!
//! Values enter as Rust values and leave as one little-endian data buffer (plus a validity bitmap
//! when there are nulls). The same value types read back through [`ArrayView::value`].

use super::{AppendValue, ArrayBuilder, Slots, ValueKey, misuse};
use crate::array::{ArrayView, Native};
use crate::bytes::Bytes;
use crate::datatype::{DataType, IntervalUnit};
use crate::error::FormatResult;
use alloc::vec;
use alloc::vec::Vec;
use core::fmt::Debug;
use core::marker::PhantomData;

/// A fixed-width value a [`PrimitiveBuilder`] stores: its usual Arrow type and its bytes.
pub trait Primitive: Native + Debug + 'static {
    /// The type an array of these values has unless another is given (`i32` → `Int32`).
    const DATA_TYPE: DataType;

    /// Appends the value's `WIDTH` little-endian bytes to `out`.
    fn write_le(self, out: &mut Vec<u8>);
}

macro_rules! primitive {
    ($($t:ty => $data_type:expr),* $(,)?) => {$(
        impl Primitive for $t {
            const DATA_TYPE: DataType = $data_type;
            fn write_le(self, out: &mut Vec<u8>) {
                out.extend_from_slice(&self.to_le_bytes());
            }
        }
        value_key!($t);
    )*};
}

/// Implements [`ValueKey`] for fixed-width values: the key is the value's little-endian bytes.
macro_rules! value_key {
    ($($t:ty),*) => {$(
        impl ValueKey for $t {
            fn write_key(&self, out: &mut Vec<u8>) {
                self.write_le(out)
            }
        }
    )*};
}

primitive!(
    i8 => DataType::Int8,
    i16 => DataType::Int16,
    i32 => DataType::Int32,
    i64 => DataType::Int64,
    u8 => DataType::UInt8,
    u16 => DataType::UInt16,
    u32 => DataType::UInt32,
    u64 => DataType::UInt64,
    f32 => DataType::Float32,
    f64 => DataType::Float64,
    i128 => DataType::Decimal128(38, 0),
);

/// A 256-bit two's-complement integer as 32 little-endian bytes: a `Decimal256` value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct I256(pub [u8; 32]);

impl I256 {
    /// The 256-bit value of `value` (sign-extended).
    pub fn from_i128(value: i128) -> Self {
        let mut bytes = [if value < 0 { 0xFF } else { 0 }; 32];
        for (b, v) in bytes.iter_mut().zip(value.to_le_bytes()) {
            *b = v;
        }
        I256(bytes)
    }

    /// The value as an `i128`, if it fits.
    pub fn to_i128(self) -> Option<i128> {
        let (low, high) = self.0.split_at(16);
        let low = i128::from_le_bytes(low.try_into().ok()?);
        let fill = if low < 0 { 0xFF } else { 0 };
        high.iter().all(|b| *b == fill).then_some(low)
    }
}

/// A `DayTime` interval: days and milliseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct IntervalDayTime {
    /// Days.
    pub days: i32,
    /// Milliseconds.
    pub milliseconds: i32,
}

/// A `MonthDayNano` interval: months, days and nanoseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct IntervalMonthDayNano {
    /// Months.
    pub months: i32,
    /// Days.
    pub days: i32,
    /// Nanoseconds.
    pub nanoseconds: i64,
}

/// Reads `N` bytes at `at` of `bytes` (zeros if they are missing).
fn le<const N: usize>(bytes: &[u8], at: usize) -> [u8; N] {
    bytes
        .get(at..at + N)
        .and_then(|b| b.try_into().ok())
        .unwrap_or([0; N])
}

impl Native for I256 {
    const WIDTH: usize = 32;
    fn from_le_slice(bytes: &[u8]) -> Self {
        bytes.try_into().map(I256).unwrap_or_default()
    }
}

impl Primitive for I256 {
    const DATA_TYPE: DataType = DataType::Decimal256(76, 0);
    fn write_le(self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.0);
    }
}

impl Native for IntervalDayTime {
    const WIDTH: usize = 8;
    fn from_le_slice(bytes: &[u8]) -> Self {
        if bytes.len() != Self::WIDTH {
            return Self::default();
        }
        IntervalDayTime {
            days: i32::from_le_bytes(le(bytes, 0)),
            milliseconds: i32::from_le_bytes(le(bytes, 4)),
        }
    }
}

impl Primitive for IntervalDayTime {
    const DATA_TYPE: DataType = DataType::Interval(IntervalUnit::DayTime);
    fn write_le(self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.days.to_le_bytes());
        out.extend_from_slice(&self.milliseconds.to_le_bytes());
    }
}

impl Native for IntervalMonthDayNano {
    const WIDTH: usize = 16;
    fn from_le_slice(bytes: &[u8]) -> Self {
        if bytes.len() != Self::WIDTH {
            return Self::default();
        }
        IntervalMonthDayNano {
            months: i32::from_le_bytes(le(bytes, 0)),
            days: i32::from_le_bytes(le(bytes, 4)),
            nanoseconds: i64::from_le_bytes(le(bytes, 8)),
        }
    }
}

impl Primitive for IntervalMonthDayNano {
    const DATA_TYPE: DataType = DataType::Interval(IntervalUnit::MonthDayNano);
    fn write_le(self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.months.to_le_bytes());
        out.extend_from_slice(&self.days.to_le_bytes());
        out.extend_from_slice(&self.nanoseconds.to_le_bytes());
    }
}

value_key!(I256, IntervalDayTime, IntervalMonthDayNano);

/// Builds a fixed-width array of `T`s: `T::DATA_TYPE`, or any type of the same width
/// ([`with_data_type`](Self::with_data_type): `Date32` from `i32`, `Timestamp` from `i64`,
/// `Float16` from its `u16` bits, `Decimal128(p, s)` from `i128`, …).
#[derive(Debug, Clone)]
pub struct PrimitiveBuilder<T> {
    slots: Slots,
    values: Vec<u8>,
    value_type: PhantomData<T>,
}

impl<T: Primitive> Default for PrimitiveBuilder<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: Primitive> PrimitiveBuilder<T> {
    /// An empty builder of `T::DATA_TYPE` arrays.
    pub fn new() -> Self {
        Self::with_data_type(T::DATA_TYPE)
    }

    /// An empty builder of `data_type` arrays; a type whose values are not `T::WIDTH` bytes wide
    /// makes [`finish`](ArrayBuilder::finish) fail.
    pub fn with_data_type(data_type: DataType) -> Self {
        let fits = !matches!(data_type, DataType::FixedSizeBinary(_))
            && data_type.byte_width() == Some(T::WIDTH);
        let error = (!fits).then(|| misuse("primitive builder given a type of another width", 0));
        PrimitiveBuilder {
            slots: Slots::new(data_type, error),
            values: Vec::new(),
            value_type: PhantomData,
        }
    }

    /// An empty builder with room for `capacity` values before it reallocates.
    #[must_use]
    pub fn with_capacity(mut self, capacity: usize) -> Self {
        self.values.reserve(capacity * T::WIDTH);
        self
    }

    /// The values appended so far (nulls read as the default value).
    pub fn values(&self) -> impl Iterator<Item = T> + '_ {
        self.values.chunks_exact(T::WIDTH).map(T::from_le_slice)
    }
}

impl<T: Primitive> AppendValue<T> for PrimitiveBuilder<T> {
    fn append_value(&mut self, value: T) {
        value.write_le(&mut self.values);
        self.slots.validity.append(true);
    }
}

impl<T: Primitive> AppendValue<Option<T>> for PrimitiveBuilder<T> {
    fn append_value(&mut self, value: Option<T>) {
        <Self as AppendValue<T>>::append_option(self, value);
    }
}

impl<T: Primitive> ArrayBuilder for PrimitiveBuilder<T> {
    fn append_null(&mut self) {
        self.append_nulls(1);
    }

    fn append_nulls(&mut self, n: usize) {
        self.values.resize(self.values.len() + n * T::WIDTH, 0);
        self.slots.validity.append_n(n, false);
    }

    fn finish(&mut self) -> FormatResult<ArrayView<'static>> {
        let values = Bytes::from_vec(core::mem::take(&mut self.values));
        self.slots.finish(Ok((vec![values], Vec::new())))
    }

    slots!();
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::datatype::TimeUnit;

    #[test]
    fn values_and_nulls_read_back() {
        let mut builder = PrimitiveBuilder::<i32>::new();
        builder.extend_options([Some(1), None, Some(-3)]);
        assert_eq!(builder.values().collect::<Vec<_>>(), [1, 0, -3]);
        let array = builder.finish().unwrap();
        assert_eq!(array.data_type(), &DataType::Int32);
        assert_eq!((array.len(), array.null_count()), (3, 1));
        assert_eq!((array.value::<i32>(0), array.value::<i32>(2)), (1, -3));
        assert!(array.is_null(1));
        assert!(builder.is_empty());

        builder.extend_values([7, 8]);
        let array = builder.finish().unwrap();
        assert!(array.validity().is_none(), "no bitmap without nulls");
        assert_eq!(array.value::<i32>(1), 8);
    }

    #[test]
    fn other_types_of_the_same_width() {
        let ts = DataType::Timestamp(TimeUnit::Millisecond, Some("UTC".into()));
        let mut builder = PrimitiveBuilder::<i64>::with_data_type(ts.clone());
        builder.append_value(1_700_000_000_000);
        let array = builder.finish().unwrap();
        assert_eq!(
            (array.data_type(), array.value::<i64>(0)),
            (&ts, 1_700_000_000_000)
        );

        let mut wrong = PrimitiveBuilder::<i64>::with_data_type(DataType::Int32);
        wrong.append_value(1);
        assert!(wrong.finish().is_err());
        assert!(
            PrimitiveBuilder::<u8>::with_data_type(DataType::FixedSizeBinary(1))
                .finish()
                .is_err()
        );
    }

    #[test]
    fn wide_values_round_trip() {
        for v in [0i128, 1, -1, i128::MAX, i128::MIN] {
            assert_eq!(I256::from_i128(v).to_i128(), Some(v));
        }
        let mut big = I256::from_i128(1);
        big.0[20] = 1;
        assert_eq!(big.to_i128(), None);

        let mut decimals = PrimitiveBuilder::<I256>::with_data_type(DataType::Decimal256(40, 2));
        decimals.extend_options([Some(I256::from_i128(-12345)), None]);
        let array = decimals.finish().unwrap();
        assert_eq!(array.value::<I256>(0).to_i128(), Some(-12345));
        assert_eq!(array.fixed_bytes(0).len(), 32);

        let day_time = IntervalDayTime {
            days: -2,
            milliseconds: 500,
        };
        let mdn = IntervalMonthDayNano {
            months: 14,
            days: -1,
            nanoseconds: 1 << 40,
        };
        let mut b = PrimitiveBuilder::<IntervalDayTime>::new();
        b.append_value(day_time);
        assert_eq!(b.finish().unwrap().value::<IntervalDayTime>(0), day_time);
        let mut b = PrimitiveBuilder::<IntervalMonthDayNano>::new();
        b.append_null();
        b.append_value(mdn);
        let array = b.finish().unwrap();
        assert_eq!(array.value::<IntervalMonthDayNano>(1), mdn);
        assert!(array.is_null(0));
    }
}
