//! The one writer of each kind of value, which the general walk (`encoder`) and the fast path
//! (`rows`) both call: [`leaf`] by the plan node's [`Shape`], [`fixed_text`] for numbers, booleans,
//! dates and timestamps (into a window; the fast path's row loops call it inlined), [`short`]
//! for decimals, times, durations and intervals, [`extension`] for canonical extension types;
//! also member keys and the options every step reads ([`Context`]), written into a [`Sink`].
//!
//! It uses the plan's nodes and flat [`Leaf`]s, the sink, the number and temporal text and the
//! view's nodes; the walk (`encoder`) and the fast path (`rows`) use it, and it uses neither.

use super::embedded;
use super::escape;
use super::framing::{NULL, Syntax};
use super::number::{self, DECIMAL_TEXT, FLOAT_TEXT, INT_BUFFER, SAFE_INTEGER, SHORT_INT, Scratch};
use super::options::EncoderOptions;
use super::plan::{Leaf, LeafKind, PlanNode, Shape, Short};
use super::sink::{Body, Sink};
use super::temporal::{self, Text};
use crate::columnar::Native;
use crate::datatype::IntervalUnit;
use crate::view::{Extension, Node, Table};

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
        (false, ..) => NULL,
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
pub(crate) fn key<'b, F: Syntax>(sink: &mut Sink<'_, '_, 'b>, name: &'b str, cx: Context) {
    if cx.plain_names {
        sink.plain_key::<F>(name);
    } else {
        sink.quoted(name.as_bytes(), Body::Text, F::KEY_CLOSE);
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

/// Copies short `text` to the start of `out`; returns its length.
#[cold]
fn copy_to(out: &mut [u8], text: &[u8]) -> usize {
    let n = text.len().min(out.len());
    if let (Some(dst), Some(src)) = (out.get_mut(..n), text.get(..n)) {
        dst.copy_from_slice(src);
    }
    n
}

/// Bytes the text of one value of a flat leaf may take: a float, an integer, or quoted
/// temporal text (the window temporal text is written into).
pub(crate) const VALUE_TEXT: usize = temporal::WINDOW;

/// Writes a float's text (finite or not) at the start of `out`; returns its length.
#[inline(always)]
pub(crate) fn f64_text(out: &mut [u8; VALUE_TEXT], v: f64, cx: Context) -> usize {
    match out.first_chunk_mut::<FLOAT_TEXT>() {
        Some(w) if v.is_finite() => number::write_f64(w, v),
        _ => copy_to(out, non_finite_text(v.is_nan(), v.is_sign_negative(), cx)),
    }
}

/// [`f64_text`] of an `f32`.
#[inline(always)]
pub(crate) fn f32_text(out: &mut [u8; VALUE_TEXT], v: f32, cx: Context) -> usize {
    match out.first_chunk_mut::<FLOAT_TEXT>() {
        Some(w) if v.is_finite() => number::write_f32(w, v),
        _ => copy_to(out, non_finite_text(v.is_nan(), v.is_sign_negative(), cx)),
    }
}

/// Writes a 64-bit integer at the start of `out`, quoted when asked to and beyond 2^53; returns
/// its length.
#[inline(always)]
pub(crate) fn long_text(out: &mut [u8; VALUE_TEXT], v: i64, unsigned: bool, cx: Context) -> usize {
    let magnitude = if unsigned { v as u64 } else { v.unsigned_abs() };
    let quote = usize::from(cx.options.large_ints_as_strings && magnitude > SAFE_INTEGER);
    out[0] = b'"';
    let Some(digits) = out
        .get_mut(quote..quote + INT_BUFFER)
        .and_then(|d| <&mut [u8; INT_BUFFER]>::try_from(d).ok())
    else {
        return 0;
    };
    let n = if unsigned {
        number::write_u64(digits, v as u64)
    } else {
        number::write_i64(digits, v)
    };
    if let Some(close) = out.get_mut(quote + n) {
        *close = b'"';
    }
    n + 2 * quote
}

/// Writes an `i32` at the start of `out`; returns its length.
#[inline(always)]
pub(crate) fn i32_text(out: &mut [u8; VALUE_TEXT], v: i32) -> usize {
    out.first_chunk_mut::<SHORT_INT>()
        .map_or(0, |w| number::write_i32(w, v))
}

/// Writes a `u32` at the start of `out`; returns its length.
#[inline(always)]
pub(crate) fn u32_text(out: &mut [u8; VALUE_TEXT], v: u32) -> usize {
    out.first_chunk_mut::<SHORT_INT>()
        .map_or(0, |w| number::write_u32(w, v))
}

/// Writes the fixed-width value of slot `i` of a flat leaf (not text) at the start of `out`;
/// returns its length.
#[inline(always)]
pub(crate) fn fixed_text(
    leaf: &Leaf<'_>,
    i: usize,
    out: &mut [u8; VALUE_TEXT],
    cx: Context,
) -> usize {
    match leaf.kind {
        LeafKind::Int32 => i32_text(out, leaf.value::<i32>(i)),
        LeafKind::Float64 => f64_text(out, leaf.value::<f64>(i), cx),
        LeafKind::Int64 => long_text(out, leaf.value::<i64>(i), false, cx),
        LeafKind::Int8 => i32_text(out, leaf.value::<i8>(i).into()),
        LeafKind::Int16 => i32_text(out, leaf.value::<i16>(i).into()),
        LeafKind::UInt8 => u32_text(out, leaf.value::<u8>(i).into()),
        LeafKind::UInt16 => u32_text(out, leaf.value::<u16>(i).into()),
        LeafKind::UInt32 => u32_text(out, leaf.value::<u32>(i)),
        LeafKind::UInt64 => long_text(out, leaf.value::<u64>(i) as i64, true, cx),
        LeafKind::Float32 => f32_text(out, leaf.value::<f32>(i), cx),
        LeafKind::Float16 => f32_text(out, number::f16_to_f32(leaf.value::<u16>(i)), cx),
        LeafKind::Boolean => {
            let text: &[u8; 8] = if leaf.bool_value(i) {
                b"true\0\0\0\0"
            } else {
                b"false\0\0\0"
            };
            if let Some(dst) = out.first_chunk_mut::<8>() {
                dst.copy_from_slice(text);
            }
            4 + usize::from(!leaf.bool_value(i))
        }
        LeafKind::Date32 => temporal::date32(leaf.value::<i32>(i), out),
        LeafKind::Date64 => temporal::date64(leaf.value::<i64>(i), out),
        LeafKind::Timestamp(unit, zone) => {
            let v = leaf.value::<i64>(i);
            if cx.options.timestamps_as_epoch {
                long_text(out, v, false, cx)
            } else {
                temporal::timestamp(v, unit, zone, out)
            }
        }
        LeafKind::Utf8 | LeafKind::LargeUtf8 | LeafKind::Other => 0,
    }
}

/// Writes the (valid, resolved) value in slot `i` of plan node `node`, of a leaf shape (not
/// nested); the values the plan holds no buffers for are read from `nodes`, the view it was
/// compiled from. The general walk's writer of every leaf, through the same writers as the fast
/// path (`rows`): numbers, booleans, dates and timestamps through [`fixed_text`], short values
/// through [`short`], extensions through [`extension`]. At most
/// [`SPILL`](super::sink::SPILL) bytes, or a quoted stream.
pub(crate) fn leaf<'b, T: Table<'b> + ?Sized>(
    node: &PlanNode<'b>,
    nodes: &T,
    i: usize,
    sink: &mut Sink<'_, '_, 'b>,
    cx: Context,
) {
    let flat = &node.leaf;
    match node.shape {
        Shape::Flat if matches!(flat.kind, LeafKind::Utf8 | LeafKind::LargeUtf8) => {
            sink.quoted(flat.text(i), Body::Text, b"\"");
        }
        Shape::Flat => {
            if let Some(window) = sink.tail() {
                let n = fixed_text(flat, i, window, cx);
                sink.advance(n);
            } else {
                // Near the end of the buffer: through a window on the stack and the spill.
                let mut window = [0; VALUE_TEXT];
                let n = fixed_text(flat, i, &mut window, cx);
                sink.put(window.get(..n).unwrap_or_default());
            }
        }
        Shape::Short(kind) => {
            if let Some(view) = node.view(nodes) {
                short(sink, kind, &view, i, cx);
            }
        }
        Shape::Bytes(body) => {
            sink.quoted(node.bytes_value(nodes, i), body, b"\"");
        }
        Shape::Extension => {
            if let Some(view) = node.view(nodes) {
                extension(&view, i, sink);
            }
        }
        Shape::Null
        | Shape::Struct { .. }
        | Shape::List { .. }
        | Shape::Map { .. }
        | Shape::Dictionary { .. }
        | Shape::Union { .. }
        | Shape::RunEnd { .. } => {
            debug_assert!(
                false,
                "nested values are opened, and slots resolved, before"
            );
            sink.put(NULL);
        }
    }
}

/// Writes the short value (at most [`SPILL`](super::sink::SPILL) bytes) in slot `i` of `node`.
pub(crate) fn short(
    sink: &mut Sink<'_, '_, '_>,
    kind: Short,
    node: &Node<'_>,
    i: usize,
    cx: Context,
) {
    match kind {
        Short::Decimal(scale) => decimal(sink, node.fixed_bytes(i), scale, cx),
        Short::Time32(unit) => {
            quoted_text(sink, |t| {
                temporal::time(node.value::<i32>(i).into(), unit, t)
            });
        }
        Short::Time64(unit) => quoted_text(sink, |t| temporal::time(node.value::<i64>(i), unit, t)),
        Short::Duration(unit) => {
            quoted_text(sink, |t| temporal::duration(node.value::<i64>(i), unit, t));
        }
        Short::Interval(unit) => interval(sink, unit, node.fixed_bytes(i)),
    }
}

/// Writes the value in slot `i` of `node`, of a canonical extension type, as what it means.
pub(crate) fn extension<'b>(node: &Node<'b>, i: usize, sink: &mut Sink<'_, '_, 'b>) {
    match node.extension {
        Extension::Uuid => uuid(sink, node.fixed_bytes(i)),
        Extension::Bool8 => sink.put(if node.value::<i8>(i) != 0 {
            b"true"
        } else {
            b"false"
        }),
        Extension::Json => json(sink, node.bytes_value(i)),
        Extension::None => {
            debug_assert!(false, "a node of the extension form has an extension");
            json(sink, node.bytes_value(i));
        }
    }
}
