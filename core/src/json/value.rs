//! The text of the values the general walk writes besides the fast path's (decimals, times,
//! durations, intervals), member keys, and the options every step reads ([`Context`]), written
//! into a [`Sink`]. Numbers, booleans, dates and timestamps have one writer for both paths,
//! the fast path's `rows::fixed_text`, which the walk's `leaf` calls too.

use super::embedded;
use super::escape;
use super::number::{self, DECIMAL_TEXT, Scratch};
use super::options::EncoderOptions;
use super::sink::{Body, Sink};
use super::temporal::{self, Text};
use crate::columnar::Native;
use crate::datatype::IntervalUnit;

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

/// Writes an `arrow.json` value: the JSON value its text holds (without the whitespace around
/// it), or the text as a string when it is not one JSON value.
pub(crate) fn json<'b>(sink: &mut Sink<'_, '_, 'b>, text: &'b [u8]) {
    if embedded::is_json(text) {
        sink.json(text.trim_ascii());
    } else {
        sink.quoted(text, Body::Text, b"\"");
    }
}

/// Writes an `arrow.uuid` value (16 bytes) as `"xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx"`.
pub(crate) fn uuid(sink: &mut Sink<'_, '_, '_>, bytes: &[u8]) {
    let mut text = *b"\"________-____-____-____-____________\"";
    // The five groups of 4, 2, 2, 2 and 6 bytes, each after the quote or a dash.
    let mut at = 1;
    let mut from = 0;
    for len in [4, 2, 2, 2, 6] {
        if let (Some(src), Some(dst)) = (bytes.get(from..from + len), text.get_mut(at..)) {
            escape::hex_into(src, dst);
        }
        at += 2 * len + 1;
        from += len;
    }
    sink.put(&text);
}

/// Writes temporal text between quotes.
#[inline(always)]
pub(crate) fn quoted_text(sink: &mut Sink<'_, '_, '_>, write: impl FnOnce(&mut Text)) {
    sink.put(temporal::quote(write).as_bytes());
}

/// The little-endian value at `bytes[at..]` (0 past the end).
fn le<T: Native>(bytes: &[u8], at: usize) -> T {
    bytes
        .get(at..at + T::WIDTH)
        .map_or_else(T::default, T::from_le_slice)
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
        IntervalUnit::YearMonth => temporal::interval_year_month(le(bytes, 0), t),
        IntervalUnit::DayTime => temporal::interval_day_time(le(bytes, 0), le(bytes, 4), t),
        IntervalUnit::MonthDayNano => {
            temporal::interval_month_day_nano(le(bytes, 0), le(bytes, 4), le(bytes, 8), t);
        }
    });
}
