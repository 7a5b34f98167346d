//! The JSON encoder: a state machine that writes a record batch (or one array) into buffers the
//! caller lends it, resuming at any byte.
//!
//! Validated [`ArrayView`]s enter through [`Encoder::batch`] or [`Encoder::array`]; JSON leaves
//! through [`Encoder::encode`], one caller buffer at a time. The walk over nested values keeps
//! its place in a fixed-capacity stack of frames (one per open object, list or map), so the
//! encoder never allocates; its depth is checked when the encoder is built.
//!
//! Rows are written whole by the fast path (the `rows` module, following the schema compiled into a
//! `plan`) while they fit in the buffer. A row that does not fit, or a schema the plan cannot
//! hold, goes through the general walk here: each step writes one member or element, whole
//! values straight into the buffer while it has room; near its end a short value is split through
//! the spill and a long one becomes a stream (see the `sink` module), and the step returns. Flat
//! arrays in the walk are read through prepared slices (the `leaf` module).

use super::framing::Framing;
use super::leaf::{Kind, Leaf, Leaves};
use super::number;
use super::options::{BinaryFormat, EncoderOptions, JsonFormat};
use super::plan::Plan;
use super::rows;
use super::sink::{Body, Sink, Spill, Stream};
use super::temporal::{self, Zones};
use super::value::{
    self, Context, decimal, float32, float64, int, int64, interval, key, quoted_text, uint, uint64,
    windowed,
};
use super::{DEFAULT_DEPTH, JsonError, Progress};
use crate::array::{ArrayView, RecordBatch};
use crate::datatype::DataType;
use crate::schema::Field;

/// What is being encoded: a batch (rows are objects of its columns) or one array (rows are its
/// values).
#[derive(Debug, Clone, Copy)]
enum Source<'b, 'a> {
    Batch {
        columns: &'b [ArrayView<'a>],
        fields: &'b [Field],
    },
    Array(&'b ArrayView<'a>),
}

/// The member names of an object.
#[derive(Debug, Clone, Copy)]
enum Names<'b> {
    /// Struct fields or batch columns.
    Fields(&'b [Field]),
    /// `key` and `value`, for the entries of a map with non-string keys.
    Entry,
}

impl<'b> Names<'b> {
    #[inline(always)]
    fn get(self, i: usize) -> &'b str {
        match self {
            Names::Fields(fields) => fields.get(i).map_or("", Field::name),
            Names::Entry => ["key", "value"].get(i).copied().unwrap_or(""),
        }
    }
}

/// An object being written: its member arrays, their names and the slot they share.
#[derive(Debug)]
struct Members<'b, 'a> {
    arrays: &'b [ArrayView<'a>],
    names: Names<'b>,
    /// The slot in each member array.
    index: usize,
    /// The next member to consider.
    next: usize,
    /// No member written yet (no comma before the next one).
    first: bool,
    /// The key of member `next` is written; its value is not.
    value_due: bool,
}

/// One open value of the walk.
#[derive(Debug)]
enum Frame<'b, 'a> {
    /// An object: a struct slot or a batch row.
    Object(Members<'b, 'a>),
    /// A list (of any kind) or the entries of a map with non-string keys (`entries`).
    List {
        child: &'b ArrayView<'a>,
        next: usize,
        end: usize,
        first: bool,
        entries: bool,
    },
    /// A map with string keys, written as an object.
    Map {
        entries: &'b ArrayView<'a>,
        keys: &'b ArrayView<'a>,
        values: &'b ArrayView<'a>,
        next: usize,
        end: usize,
        first: bool,
        value_due: bool,
    },
}

/// What a frame's step asks of the stack.
enum Step<'b, 'a> {
    /// Output is waiting: return to flush it, then step the same frame again.
    Stay,
    /// A nested value was opened: push its frame.
    Push(Frame<'b, 'a>),
    /// The frame's value is closed: pop it.
    Pop,
}

/// Follows dictionaries, run-end encoding and unions from slot `i` of `array` to the array and
/// slot that hold the value; `None` when the value is null.
#[inline(always)]
fn resolve<'b, 'a>(
    mut array: &'b ArrayView<'a>,
    mut i: usize,
) -> Option<(&'b ArrayView<'a>, usize)> {
    loop {
        if let Some(dictionary) = array.dictionary() {
            if !array.is_valid(i) {
                return None;
            }
            i = array.dictionary_index(i);
            array = &dictionary.values;
            continue;
        }
        match array.data_type() {
            DataType::RunEndEncoded(_) => {
                i = array.run_index(i);
                array = array.child(1)?;
            }
            DataType::Union(..) => {
                let (child, slot) = array.union_value(i);
                array = array.child(child)?;
                i = slot;
            }
            DataType::Null => return None,
            _ => {
                return if array.is_valid(i) {
                    Some((array, i))
                } else {
                    None
                };
            }
        }
    }
}

/// Writes the value in slot `i` of `array` (not null, already resolved), or opens it and returns
/// the frame that continues it.
#[inline(always)]
fn value<'b, 'a>(
    array: &'b ArrayView<'a>,
    i: usize,
    sink: &mut Sink<'_, '_, 'b>,
    cx: Context,
    leaves: &mut Leaves<'b, 'a>,
) -> Option<Frame<'b, 'a>> {
    match array.data_type() {
        DataType::Struct(fields) => {
            sink.put(b"{");
            Some(Frame::Object(Members::new(
                array.children(),
                Names::Fields(fields),
                array.offset() + i,
            )))
        }
        DataType::List(_)
        | DataType::LargeList(_)
        | DataType::ListView(_)
        | DataType::LargeListView(_)
        | DataType::FixedSizeList(..) => {
            let Some(child) = array.child(0) else {
                sink.put(b"null");
                return None;
            };
            let range = array.list_range(i);
            sink.put(b"[");
            Some(Frame::List {
                child,
                next: range.start,
                end: range.end,
                first: true,
                entries: false,
            })
        }
        DataType::Map(..) => {
            let entries = array.child(0);
            let (Some(entries), Some(keys), Some(values)) = (
                entries,
                entries.and_then(|e| e.child(0)),
                entries.and_then(|e| e.child(1)),
            ) else {
                sink.put(b"null");
                return None;
            };
            let range = array.list_range(i);
            if has_string_keys(keys) {
                sink.put(b"{");
                Some(Frame::Map {
                    entries,
                    keys,
                    values,
                    next: range.start,
                    end: range.end,
                    first: true,
                    value_due: false,
                })
            } else {
                sink.put(b"[");
                Some(Frame::List {
                    child: entries,
                    next: range.start,
                    end: range.end,
                    first: true,
                    entries: true,
                })
            }
        }
        // In the zone resolved when the encoder was built.
        DataType::Timestamp(..) => {
            fast(leaves.get(array), i, sink, cx);
            None
        }
        _ => {
            leaf(array, i, sink, cx);
            None
        }
    }
}

/// Whether a map's keys are text, so the map is written as an object.
fn has_string_keys(keys: &ArrayView<'_>) -> bool {
    matches!(
        keys.data_type(),
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View
    )
}

/// Writes a flat value (at most [`SPILL`](super::sink::SPILL) bytes, or a quoted stream).
#[inline(always)]
pub(crate) fn leaf<'b>(
    array: &'b ArrayView<'_>,
    i: usize,
    sink: &mut Sink<'_, '_, 'b>,
    cx: Context,
) {
    match array.data_type() {
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => {
            sink.quoted(array.bytes_value(i), Body::Text, b"\"");
        }
        DataType::Int32 => int(sink, array.value::<i32>(i).into()),
        DataType::Int64 => int64(sink, array.value::<i64>(i), cx),
        DataType::Float64 => float64(sink, array.value::<f64>(i), cx),
        DataType::Boolean => sink.put(if array.bool_value(i) {
            b"true"
        } else {
            b"false"
        }),
        DataType::Int8 => int(sink, array.value::<i8>(i).into()),
        DataType::Int16 => int(sink, array.value::<i16>(i).into()),
        DataType::UInt8 => uint(sink, array.value::<u8>(i).into()),
        DataType::UInt16 => uint(sink, array.value::<u16>(i).into()),
        DataType::UInt32 => uint(sink, array.value::<u32>(i).into()),
        DataType::UInt64 => uint64(sink, array.value::<u64>(i), cx),
        DataType::Float16 => float32(sink, number::f16_to_f32(array.value::<u16>(i)), cx),
        DataType::Float32 => float32(sink, array.value::<f32>(i), cx),
        DataType::Decimal32(_, scale)
        | DataType::Decimal64(_, scale)
        | DataType::Decimal128(_, scale)
        | DataType::Decimal256(_, scale) => decimal(sink, array.fixed_bytes(i), *scale, cx),
        DataType::Date32 => windowed(sink, |w| temporal::date32(array.value::<i32>(i), w)),
        DataType::Date64 => windowed(sink, |w| temporal::date64(array.value::<i64>(i), w)),
        DataType::Time32(unit) => quoted_text(sink, |t| {
            temporal::time(array.value::<i32>(i).into(), *unit, t);
        }),
        DataType::Time64(unit) => {
            quoted_text(sink, |t| temporal::time(array.value::<i64>(i), *unit, t));
        }
        // Only through `value`, which writes timestamps from their prepared leaf (in the zone
        // resolved when the encoder was built); named zones here would be UTC.
        DataType::Timestamp(unit, timezone) => {
            let zone = Zones::new(&cx.options).zone(timezone.as_deref());
            value::timestamp(sink, array.value::<i64>(i), *unit, zone, cx);
        }
        DataType::Duration(unit) => {
            quoted_text(sink, |t| {
                temporal::duration(array.value::<i64>(i), *unit, t)
            });
        }
        DataType::Interval(unit) => interval(sink, *unit, array.fixed_bytes(i)),
        DataType::Binary
        | DataType::LargeBinary
        | DataType::BinaryView
        | DataType::FixedSizeBinary(_) => {
            let body = match cx.options.binary {
                BinaryFormat::Base64 => Body::Base64,
                _ => Body::Hex,
            };
            sink.quoted(array.bytes_value(i), body, b"\"");
        }
        _ => sink.put(b"null"),
    }
}

/// Writes a valid slot of a prepared flat array (any kind but [`Kind::Other`]).
#[inline(always)]
fn fast<'b>(leaf: Leaf<'b>, i: usize, sink: &mut Sink<'_, '_, 'b>, cx: Context) {
    match leaf.kind {
        Kind::Utf8 | Kind::LargeUtf8 => sink.quoted(leaf.text(i), Body::Text, b"\""),
        Kind::Int32 => int(sink, leaf.value::<i32>(i).into()),
        Kind::Int64 => int64(sink, leaf.value::<i64>(i), cx),
        Kind::Float64 => float64(sink, leaf.value::<f64>(i), cx),
        Kind::Int8 => int(sink, leaf.value::<i8>(i).into()),
        Kind::Int16 => int(sink, leaf.value::<i16>(i).into()),
        Kind::UInt8 => uint(sink, leaf.value::<u8>(i).into()),
        Kind::UInt16 => uint(sink, leaf.value::<u16>(i).into()),
        Kind::UInt32 => uint(sink, leaf.value::<u32>(i).into()),
        Kind::UInt64 => uint64(sink, leaf.value::<u64>(i), cx),
        Kind::Float32 => float32(sink, leaf.value::<f32>(i), cx),
        Kind::Boolean => sink.put(if leaf.bool_value(i) {
            b"true"
        } else {
            b"false"
        }),
        Kind::Date32 => windowed(sink, |w| temporal::date32(leaf.value::<i32>(i), w)),
        Kind::Date64 => windowed(sink, |w| temporal::date64(leaf.value::<i64>(i), w)),
        Kind::Timestamp(unit, zone) => {
            value::timestamp(sink, leaf.value::<i64>(i), unit, zone, cx);
        }
        Kind::Other => sink.put(b"null"),
    }
}

impl<'b, 'a> Members<'b, 'a> {
    fn new(arrays: &'b [ArrayView<'a>], names: Names<'b>, index: usize) -> Self {
        Members {
            arrays,
            names,
            index,
            next: 0,
            first: true,
            value_due: false,
        }
    }

    /// Writes members until the object closes, a nested value opens, or output must wait.
    #[inline(always)]
    fn step(
        &mut self,
        sink: &mut Sink<'_, '_, 'b>,
        cx: Context,
        leaves: &mut Leaves<'b, 'a>,
    ) -> Step<'b, 'a> {
        if self.value_due {
            self.value_due = false;
            let Some(array) = self.arrays.get(self.next) else {
                return Step::Pop;
            };
            self.next += 1;
            match resolve(array, self.index) {
                None => sink.put(b"null"),
                Some((array, i)) => {
                    if let Some(frame) = value(array, i, sink, cx, leaves) {
                        return Step::Push(frame);
                    }
                }
            }
            if sink.blocked() {
                return Step::Stay;
            }
        }
        while let Some(array) = self.arrays.get(self.next) {
            let leaf = leaves.get(array);
            if leaf.kind != Kind::Other {
                // The fast path: a prepared flat array.
                let valid = leaf.is_valid(self.index);
                if !valid && !cx.options.explicit_nulls {
                    self.next += 1;
                    continue;
                }
                if !self.first {
                    sink.put(b",");
                }
                self.first = false;
                key(sink, self.names.get(self.next), cx);
                if sink.blocked() {
                    self.value_due = true;
                    return Step::Stay;
                }
                self.next += 1;
                if valid {
                    fast(leaf, self.index, sink, cx);
                } else {
                    sink.put(b"null");
                }
                if sink.blocked() {
                    return Step::Stay;
                }
                continue;
            }
            let slot = resolve(array, self.index);
            if slot.is_none() && !cx.options.explicit_nulls {
                self.next += 1;
                continue;
            }
            if !self.first {
                sink.put(b",");
            }
            self.first = false;
            key(sink, self.names.get(self.next), cx);
            if sink.blocked() {
                self.value_due = true;
                return Step::Stay;
            }
            self.next += 1;
            match slot {
                None => sink.put(b"null"),
                Some((array, i)) => {
                    if let Some(frame) = value(array, i, sink, cx, leaves) {
                        return Step::Push(frame);
                    }
                }
            }
            if sink.blocked() {
                return Step::Stay;
            }
        }
        sink.put(b"}");
        Step::Pop
    }
}

impl<'b, 'a> Frame<'b, 'a> {
    fn step(
        &mut self,
        sink: &mut Sink<'_, '_, 'b>,
        cx: Context,
        leaves: &mut Leaves<'b, 'a>,
    ) -> Step<'b, 'a> {
        match self {
            Frame::Object(members) => members.step(sink, cx, leaves),
            Frame::List {
                child,
                next,
                end,
                first,
                entries,
            } => {
                let leaf = leaves.get(child);
                if leaf.kind != Kind::Other {
                    while *next < *end {
                        let e = *next;
                        *next += 1;
                        if !*first {
                            sink.put(b",");
                        }
                        *first = false;
                        if leaf.is_valid(e) {
                            fast(leaf, e, sink, cx);
                        } else {
                            sink.put(b"null");
                        }
                        if sink.blocked() {
                            return Step::Stay;
                        }
                    }
                }
                while *next < *end {
                    let e = *next;
                    *next += 1;
                    if !*first {
                        sink.put(b",");
                    }
                    *first = false;
                    match resolve(child, e) {
                        None => sink.put(b"null"),
                        Some((array, i)) if *entries => {
                            sink.put(b"{");
                            return Step::Push(Frame::Object(Members::new(
                                array.children(),
                                Names::Entry,
                                array.offset() + i,
                            )));
                        }
                        Some((array, i)) => {
                            if let Some(frame) = value(array, i, sink, cx, leaves) {
                                return Step::Push(frame);
                            }
                        }
                    }
                    if sink.blocked() {
                        return Step::Stay;
                    }
                }
                sink.put(b"]");
                Step::Pop
            }
            Frame::Map {
                entries,
                keys,
                values,
                next,
                end,
                first,
                value_due,
            } => {
                let base = entries.offset();
                if *value_due {
                    *value_due = false;
                    let e = *next;
                    *next += 1;
                    match resolve(values, base + e) {
                        None => sink.put(b"null"),
                        Some((array, i)) => {
                            if let Some(frame) = value(array, i, sink, cx, leaves) {
                                return Step::Push(frame);
                            }
                        }
                    }
                    if sink.blocked() {
                        return Step::Stay;
                    }
                }
                while *next < *end {
                    let e = *next;
                    let slot = resolve(values, base + e);
                    // A map's keys are data: an entry with a null value is written
                    // `"key":null` whatever `explicit_nulls` says.
                    if !entries.is_valid(e) {
                        *next += 1;
                        continue;
                    }
                    if !*first {
                        sink.put(b",");
                    }
                    *first = false;
                    let name = resolve(keys, base + e).map_or(&[][..], |(k, i)| k.bytes_value(i));
                    sink.quoted(name, Body::Text, b"\":");
                    if sink.blocked() {
                        *value_due = true;
                        return Step::Stay;
                    }
                    *next += 1;
                    match slot {
                        None => sink.put(b"null"),
                        Some((array, i)) => {
                            if let Some(frame) = value(array, i, sink, cx, leaves) {
                                return Step::Push(frame);
                            }
                        }
                    }
                    if sink.blocked() {
                        return Step::Stay;
                    }
                }
                sink.put(b"}");
                Step::Pop
            }
        }
    }
}

/// Where the walk over rows stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Open,
    Rows,
    Close,
    Done,
}

/// Everything of the encoder but its pending output.
struct Walk<'b, 'a, const DEPTH: usize> {
    source: Source<'b, 'a>,
    cx: Context,
    framing: Framing,
    phase: Phase,
    /// The encoder's rows are `first..rows`; `row` is the next.
    first: usize,
    row: usize,
    rows: usize,
    /// A row is open (its value or object is on the stack, or its end is due).
    in_row: bool,
    stack: heapless::Vec<Frame<'b, 'a>, DEPTH>,
    leaves: Leaves<'b, 'a>,
    /// The compiled schema for the fast path, when it can hold the schema.
    plan: Option<Plan<'b, 'a>>,
}

impl<'b, 'a, const DEPTH: usize> Walk<'b, 'a, DEPTH> {
    /// Takes one step; `false` once everything is written.
    #[inline]
    fn step(&mut self, sink: &mut Sink<'_, '_, 'b>) -> bool {
        if let Some(frame) = self.stack.last_mut() {
            match frame.step(sink, self.cx, &mut self.leaves) {
                Step::Stay => {}
                Step::Push(frame) => self.push(frame),
                Step::Pop => {
                    self.stack.pop();
                }
            }
            return true;
        }
        match self.phase {
            Phase::Open => {
                sink.put(self.framing.open);
                self.phase = Phase::Rows;
            }
            Phase::Rows => self.rows(sink),
            Phase::Close => {
                sink.put(self.framing.close);
                self.phase = Phase::Done;
            }
            Phase::Done => return false,
        }
        true
    }

    /// Pushes a frame. The depth was checked against the schema when the encoder was built, so
    /// the stack always has room; were it ever full, the encoder stops rather than write wrong
    /// JSON silently.
    fn push(&mut self, frame: Frame<'b, 'a>) {
        if self.stack.push(frame).is_err() {
            self.stack.clear();
            self.phase = Phase::Done;
        }
    }

    /// Writes whole rows through the fast path while they fit, and a row that does not through
    /// the stack (returning once it is opened).
    fn rows(&mut self, sink: &mut Sink<'_, '_, 'b>) {
        if self.in_row {
            sink.put_opt(self.framing.row_end);
            self.in_row = false;
            self.row += 1;
        }
        while self.row < self.rows {
            if sink.blocked() {
                return;
            }
            if let Some(plan) = &self.plan {
                rows::write(
                    plan,
                    sink,
                    &mut self.framing,
                    &mut self.row,
                    self.rows,
                    self.cx,
                );
                if self.row >= self.rows {
                    break;
                }
            }
            if self.framing.first_row {
                self.framing.first_row = false;
            } else {
                sink.put_opt(self.framing.separator);
            }
            match self.source {
                Source::Batch { columns, fields } => {
                    sink.put(b"{");
                    let mut members = Members::new(columns, Names::Fields(fields), self.row);
                    match members.step(sink, self.cx, &mut self.leaves) {
                        Step::Pop => {}
                        Step::Stay => {
                            self.in_row = true;
                            self.push(Frame::Object(members));
                            return;
                        }
                        Step::Push(frame) => {
                            self.in_row = true;
                            self.push(Frame::Object(members));
                            self.push(frame);
                            return;
                        }
                    }
                }
                Source::Array(array) => {
                    let leaf = self.leaves.get(array);
                    if leaf.kind != Kind::Other {
                        if leaf.is_valid(self.row) {
                            fast(leaf, self.row, sink, self.cx);
                        } else {
                            sink.put(b"null");
                        }
                        if sink.blocked() {
                            self.in_row = true;
                            return;
                        }
                        sink.put_opt(self.framing.row_end);
                        self.row += 1;
                        continue;
                    }
                    match resolve(array, self.row) {
                        None => sink.put(b"null"),
                        Some((array, i)) => {
                            if let Some(frame) = value(array, i, sink, self.cx, &mut self.leaves) {
                                self.in_row = true;
                                self.push(frame);
                                return;
                            }
                        }
                    }
                    if sink.blocked() {
                        self.in_row = true;
                        return;
                    }
                }
            }
            sink.put_opt(self.framing.row_end);
            self.row += 1;
        }
        self.phase = Phase::Close;
    }
}

/// Encodes a record batch or an array as JSON into caller-provided buffers.
///
/// Call [`Encoder::encode`] with a buffer until it reports `done`; each call writes as many bytes
/// as fit and resumes exactly where the last stopped, inside a string, key or number if need
/// be. The output is byte-for-byte the same for any sequence of buffer sizes, down to one byte.
/// Encoding never allocates and never fails: every check happens in the constructors.
///
/// `DEPTH` bounds the nesting (see [`DEFAULT_DEPTH`]); the encoder's size grows with it, by
/// about 56 bytes a level. At the default depth an encoder is about 7.5 KiB: half of it the
/// schema compiled for the fast path, most of the rest the frames, a cache of prepared columns
/// for the general walk and the schema's named timezones, resolved once.
///
/// ```
/// use quiver::array::{ArrayParts, ArrayView};
/// use quiver::bytes::Bytes;
/// use quiver::datatype::DataType;
/// use quiver::json::{Encoder, EncoderOptions, JsonFormat};
///
/// let values: Vec<u8> = [1i32, -2, 3].iter().flat_map(|v| v.to_le_bytes()).collect();
/// let array = ArrayView::try_new(ArrayParts {
///     data_type: Some(DataType::Int32),
///     len: 3,
///     buffers: vec![Bytes::from_vec(values)],
///     ..ArrayParts::default()
/// })?;
/// let mut encoder = Encoder::array(&array, JsonFormat::JsonArray, EncoderOptions::default())?;
/// let mut out = Vec::new();
/// let mut buffer = [0u8; 4]; // any size works, even 1
/// loop {
///     let progress = encoder.encode(&mut buffer);
///     out.extend_from_slice(&buffer[..progress.written]);
///     if progress.done {
///         break;
///     }
/// }
/// assert_eq!(out, b"[1,-2,3]");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct Encoder<'b, 'a, const DEPTH: usize = DEFAULT_DEPTH> {
    walk: Walk<'b, 'a, DEPTH>,
    spill: Spill,
    stream: Option<Stream<'b>>,
}

impl<'b, 'a> Encoder<'b, 'a> {
    /// An encoder for a whole document of `batch`'s rows, one JSON object per row.
    pub fn batch(
        batch: &'b RecordBatch<'a>,
        format: JsonFormat,
        options: EncoderOptions,
    ) -> Result<Self, JsonError> {
        Self::batch_with_depth(batch, format, options)
    }

    /// An encoder for a whole document of `array`'s values, one JSON value per row (nulls as
    /// `null`).
    pub fn array(
        array: &'b ArrayView<'a>,
        format: JsonFormat,
        options: EncoderOptions,
    ) -> Result<Self, JsonError> {
        Self::array_with_depth(array, format, options)
    }
}

impl<'b, 'a, const DEPTH: usize> Encoder<'b, 'a, DEPTH> {
    /// [`Encoder::batch`] with a nesting limit of `DEPTH`.
    pub fn batch_with_depth(
        batch: &'b RecordBatch<'a>,
        format: JsonFormat,
        options: EncoderOptions,
    ) -> Result<Self, JsonError> {
        Self::with_framing(
            Source::Batch {
                columns: batch.columns(),
                fields: batch.schema().fields(),
            },
            batch.num_rows(),
            Framing::document(format),
            options,
        )
    }

    /// [`Encoder::array`] with a nesting limit of `DEPTH`.
    pub fn array_with_depth(
        array: &'b ArrayView<'a>,
        format: JsonFormat,
        options: EncoderOptions,
    ) -> Result<Self, JsonError> {
        Self::with_framing(
            Source::Array(array),
            array.len(),
            Framing::document(format),
            options,
        )
    }

    /// The rows of `batch` continuing a writer's document.
    pub(crate) fn continuing(
        batch: &'b RecordBatch<'a>,
        framing: Framing,
        options: EncoderOptions,
    ) -> Result<Self, JsonError> {
        Self::with_framing(
            Source::Batch {
                columns: batch.columns(),
                fields: batch.schema().fields(),
            },
            batch.num_rows(),
            framing,
            options,
        )
    }

    fn with_framing(
        source: Source<'b, 'a>,
        rows: usize,
        framing: Framing,
        options: EncoderOptions,
    ) -> Result<Self, JsonError> {
        let mut check = Check {
            column: 0,
            limit: DEPTH,
            plain_names: true,
            zones: Zones::new(&options),
        };
        match source {
            Source::Batch { columns, fields } => {
                for (column, (array, field)) in columns.iter().zip(fields).enumerate() {
                    check.plain_names &= super::escape::is_plain(field.name());
                    check.column = column;
                    check.frames(array, 1, 0)?;
                }
            }
            Source::Array(array) => {
                check.frames(array, 0, 0)?;
            }
        }
        let Check {
            plain_names, zones, ..
        } = check;
        let plan = match source {
            Source::Batch { columns, fields } => Plan::batch(columns, fields, options, &zones),
            Source::Array(array) => Plan::array(array, options, &zones),
        };
        Ok(Encoder {
            walk: Walk {
                source,
                cx: Context {
                    options,
                    plain_names,
                },
                framing,
                phase: Phase::Open,
                first: 0,
                row: 0,
                rows,
                in_row: false,
                stack: heapless::Vec::new(),
                leaves: Leaves::new(zones),
                plan,
            },
            spill: Spill::new(),
            stream: None,
        })
    }

    /// Writes the next bytes of JSON into `out`; see [`Progress`].
    ///
    /// Call again with a fresh buffer until `done`; the output is identical for any sequence of
    /// buffer sizes. An empty buffer makes no progress (except to report `done`). Bytes of `out`
    /// past `written` may have been overwritten (the fast path writes in fixed-size blocks).
    pub fn encode(&mut self, out: &mut [u8]) -> Progress {
        let mut sink = Sink::new(out, &mut self.spill, &mut self.stream);
        let done = loop {
            if !sink.flush() {
                break false;
            }
            if !self.walk.step(&mut sink) {
                break true;
            }
        };
        Progress {
            written: sink.written(),
            done,
        }
    }

    /// Splits off the next `rows` rows (all that are left, if fewer) as an encoder of their own
    /// and goes on after them: the split-off encoder's output followed by this one's is what
    /// this one would have written alone. The pieces can be encoded on different threads, as
    /// quiver-std's `ParallelWriter` does, without slicing the batch or planning it again.
    /// `None` once this encoder has written anything.
    pub fn split_rows(&mut self, rows: usize) -> Option<Self> {
        let walk = &mut self.walk;
        let fresh = walk.phase == Phase::Open && walk.stack.is_empty() && !walk.in_row;
        if !fresh || self.stream.is_some() || !self.spill.is_empty() {
            return None;
        }
        let end = walk.row.saturating_add(rows).min(walk.rows);
        let front = Walk {
            framing: Framing {
                close: b"",
                ..walk.framing
            },
            rows: end,
            stack: heapless::Vec::new(),
            leaves: walk.leaves.fresh(),
            plan: walk.plan.clone(),
            ..*walk
        };
        walk.framing.open = b"";
        walk.framing.first_row &= end == walk.row;
        walk.first = end;
        walk.row = end;
        Some(Encoder {
            walk: front,
            spill: Spill::new(),
            stream: None,
        })
    }

    /// Rows started so far, and rows in all.
    pub(crate) fn rows_progress(&self) -> (usize, usize) {
        let walk = &self.walk;
        (
            walk.row.saturating_sub(walk.first),
            walk.rows.saturating_sub(walk.first),
        )
    }

    /// Whether everything has been written.
    pub fn is_done(&self) -> bool {
        self.walk.phase == Phase::Done && self.stream.is_none() && self.spill.is_empty()
    }
}

impl<const DEPTH: usize> core::fmt::Debug for Encoder<'_, '_, DEPTH> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Encoder")
            .field("row", &self.walk.row)
            .field("rows", &self.walk.rows)
            .field("depth", &self.walk.stack.len())
            .field("phase", &self.walk.phase)
            .finish_non_exhaustive()
    }
}

/// The construction-time checks: nesting depth, null map keys, names that need escaping,
/// timezones (named ones resolved here, once).
struct Check<'b> {
    column: usize,
    limit: usize,
    plain_names: bool,
    zones: Zones<'b>,
}

impl<'b> Check<'b> {
    /// The most frames `array`'s values open, given `depth` frames already open above them.
    /// `hops` counts unions, run-end encodings and dictionaries, which open no frame, so the
    /// recursion is bounded by the limit either way.
    fn frames(
        &mut self,
        array: &'b ArrayView<'_>,
        depth: usize,
        hops: usize,
    ) -> Result<usize, JsonError> {
        let too_deep = JsonError::TooDeep {
            column: self.column,
            limit: self.limit,
        };
        if depth > self.limit || hops > 4 * self.limit + 8 {
            return Err(too_deep);
        }
        if let Some(dictionary) = array.dictionary() {
            return self.frames(&dictionary.values, depth, hops + 1);
        }
        let nested = |check: &mut Self, children: &'b [ArrayView<'_>], opened: usize| {
            let mut most = depth + opened;
            for child in children {
                most = most.max(check.frames(child, depth + opened, hops)?);
            }
            Ok::<usize, JsonError>(most)
        };
        let most = match array.data_type() {
            DataType::Struct(fields) => {
                self.plain_names &= fields.iter().all(|f| super::escape::is_plain(f.name()));
                nested(self, array.children(), 1)?
            }
            DataType::List(_)
            | DataType::LargeList(_)
            | DataType::ListView(_)
            | DataType::LargeListView(_)
            | DataType::FixedSizeList(..) => nested(self, array.children(), 1)?,
            DataType::Map(..) => {
                let entries = array.child(0);
                let kv = entries.map_or(&[][..], |e| e.children());
                let Some(keys) = kv.first() else {
                    return Ok(depth + 1);
                };
                if keys.null_count() > 0
                    || keys.dictionary().is_some_and(|d| d.values.null_count() > 0)
                {
                    return Err(JsonError::NullMapKey {
                        column: self.column,
                    });
                }
                // Object form: one frame. Entries form: the list and each entry's object.
                nested(self, kv, if has_string_keys(keys) { 1 } else { 2 })?
            }
            DataType::Union(..) => {
                let mut most = depth;
                for child in array.children() {
                    most = most.max(self.frames(child, depth, hops + 1)?);
                }
                most
            }
            DataType::RunEndEncoded(_) => match array.child(1) {
                Some(values) => self.frames(values, depth, hops + 1)?,
                None => depth,
            },
            DataType::Timestamp(_, timezone) => {
                self.zones
                    .add(timezone.as_deref())
                    .map_err(|e| JsonError::zone(self.column, e))?;
                depth
            }
            _ => depth,
        };
        if most > self.limit {
            return Err(too_deep);
        }
        Ok(most)
    }
}
