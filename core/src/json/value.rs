//! The text of one value, written into a [`Sink`]: integers, floats, quoted temporal text and
//! member keys, with the options every step reads ([`Context`]).
//!
//! Both walks write values through these: the encoder over [`ArrayView`](crate::array::ArrayView)s
//! and the one over the fixed-capacity views of [`no_alloc`](crate::no_alloc), so their bytes
//! agree.

use super::number::{self, DECIMAL_TEXT, FLOAT_TEXT, INT_BUFFER, SAFE_INTEGER, Scratch};
use super::options::EncoderOptions;
use super::sink::{Body, Sink};
use super::temporal::{self, Text};
use crate::datatype::{IntervalUnit, TimeUnit};

/// Settings every step reads.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Context {
    pub(crate) options: EncoderOptions,
    /// Every field name in the schema can be written between quotes as it is.
    pub(crate) plain_names: bool,
}

/// The text of NaN or ±infinity: `null`, or a string when asked to.
#[inline]
pub(crate) fn non_finite_text(nan: bool, negative: bool, cx: Context) -> &'static [u8] {
    match (cx.options.non_finite_as_strings, nan, negative) {
        (false, ..) => b"null",
        (true, true, _) => b"\"NaN\"",
        (true, false, false) => b"\"Infinity\"",
        (true, false, true) => b"\"-Infinity\"",
    }
}

/// Writes an integer: straight into the buffer when 24 bytes are free.
#[inline(always)]
pub(crate) fn int(sink: &mut Sink<'_, '_, '_>, v: i64) {
    if let Some(dst) = sink.tail::<INT_BUFFER>() {
        let n = number::write_i64(dst, v);
        sink.advance(n);
    } else {
        let mut text = [0; INT_BUFFER];
        let n = number::write_i64(&mut text, v);
        sink.put(text.get(..n).unwrap_or_default());
    }
}

#[inline(always)]
pub(crate) fn uint(sink: &mut Sink<'_, '_, '_>, v: u64) {
    if let Some(dst) = sink.tail::<INT_BUFFER>() {
        let n = number::write_u64(dst, v);
        sink.advance(n);
    } else {
        let mut text = [0; INT_BUFFER];
        let n = number::write_u64(&mut text, v);
        sink.put(text.get(..n).unwrap_or_default());
    }
}

/// An Int64, quoted when asked to and beyond 2^53.
#[inline(always)]
pub(crate) fn int64(sink: &mut Sink<'_, '_, '_>, v: i64, cx: Context) {
    if cx.options.large_ints_as_strings && v.unsigned_abs() > SAFE_INTEGER {
        sink.put(b"\"");
        int(sink, v);
        sink.put(b"\"");
    } else {
        int(sink, v);
    }
}

#[inline(always)]
pub(crate) fn uint64(sink: &mut Sink<'_, '_, '_>, v: u64, cx: Context) {
    if cx.options.large_ints_as_strings && v > SAFE_INTEGER {
        sink.put(b"\"");
        uint(sink, v);
        sink.put(b"\"");
    } else {
        uint(sink, v);
    }
}

/// NaN or ±infinity: `null`, or a string when asked to.
#[cold]
pub(crate) fn non_finite(sink: &mut Sink<'_, '_, '_>, nan: bool, negative: bool, cx: Context) {
    sink.put(non_finite_text(nan, negative, cx));
}

#[inline(always)]
pub(crate) fn float64(sink: &mut Sink<'_, '_, '_>, v: f64, cx: Context) {
    if v.is_finite() {
        let mut text = [0; FLOAT_TEXT];
        let n = number::write_f64(&mut text, v);
        sink.put(text.get(..n).unwrap_or_default());
    } else {
        non_finite(sink, v.is_nan(), v.is_sign_negative(), cx);
    }
}

#[inline(always)]
pub(crate) fn float32(sink: &mut Sink<'_, '_, '_>, v: f32, cx: Context) {
    if v.is_finite() {
        let mut text = [0; FLOAT_TEXT];
        let n = number::write_f32(&mut text, v);
        sink.put(text.get(..n).unwrap_or_default());
    } else {
        non_finite(sink, v.is_nan(), v.is_sign_negative(), cx);
    }
}

/// A timestamp: its text in the zone, or the stored count when asked to.
#[inline(always)]
pub(crate) fn timestamp(
    sink: &mut Sink<'_, '_, '_>,
    v: i64,
    unit: TimeUnit,
    zone: temporal::Zone,
    cx: Context,
) {
    if cx.options.timestamps_as_epoch {
        int64(sink, v, cx);
    } else {
        windowed(sink, |w| temporal::timestamp(v, unit, zone, w));
    }
}

/// Writes text that `write` puts at the start of a window (quoted dates and timestamps).
#[inline(always)]
pub(crate) fn windowed(
    sink: &mut Sink<'_, '_, '_>,
    write: impl FnOnce(&mut [u8; temporal::WINDOW]) -> usize,
) {
    let mut window = [0; temporal::WINDOW];
    let n = write(&mut window);
    sink.put(window.get(..n).unwrap_or_default());
}

/// Writes temporal text between quotes.
#[inline(always)]
pub(crate) fn quoted_text(sink: &mut Sink<'_, '_, '_>, write: impl FnOnce(&mut Text)) {
    let mut text = Text::new();
    text.push(b'"');
    write(&mut text);
    text.push(b'"');
    sink.put(text.as_bytes());
}

pub(crate) fn le_i32(bytes: &[u8], at: usize) -> i32 {
    bytes
        .get(at..at + 4)
        .and_then(|b| b.try_into().ok())
        .map_or(0, i32::from_le_bytes)
}

pub(crate) fn le_i64(bytes: &[u8], at: usize) -> i64 {
    bytes
        .get(at..at + 8)
        .and_then(|b| b.try_into().ok())
        .map_or(0, i64::from_le_bytes)
}

/// Writes `"name":`.
#[inline(always)]
pub(crate) fn key<'b>(sink: &mut Sink<'_, '_, 'b>, name: &'b str, cx: Context) {
    if cx.plain_names {
        sink.plain_key(name);
    } else {
        sink.quoted(name.as_bytes(), Body::Text, b"\":");
    }
}

/// A decimal of `scale` from its little-endian two's-complement bytes, as an exact number (a
/// string of it when asked to).
pub(crate) fn decimal(sink: &mut Sink<'_, '_, '_>, bytes: &[u8], scale: i8, cx: Context) {
    let mut text = Scratch::<DECIMAL_TEXT>::new();
    let quote = cx.options.decimals_as_strings;
    if quote {
        text.push(b'"');
    }
    number::decimal(bytes, scale, &mut text);
    if quote {
        text.push(b'"');
    }
    sink.put(text.as_bytes());
}

/// An interval of `unit` from its bytes, as quoted text.
pub(crate) fn interval(sink: &mut Sink<'_, '_, '_>, unit: IntervalUnit, bytes: &[u8]) {
    quoted_text(sink, |t| match unit {
        IntervalUnit::YearMonth => temporal::interval_year_month(le_i32(bytes, 0), t),
        IntervalUnit::DayTime => {
            temporal::interval_day_time(le_i32(bytes, 0), le_i32(bytes, 4), t);
        }
        IntervalUnit::MonthDayNano => temporal::interval_month_day_nano(
            le_i32(bytes, 0),
            le_i32(bytes, 4),
            le_i64(bytes, 8),
            t,
        ),
    });
}
