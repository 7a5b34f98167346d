//! [`Encoder`]: the JSON state machine over a [`Batch`] read in place.
//!
//! The same contract as [`json::Encoder`](crate::json::Encoder) and the same bytes for the same
//! data and options: [`Encoder::encode`] writes as much as fits into the caller's buffer and
//! resumes at any byte. It walks the batch's nodes by index, keeping open objects, lists and maps
//! in a fixed stack of `DEPTH` frames, and writes every value through the text functions the
//! alloc encoder uses (`json::value`, `json::sink`). It has no fast path: each step writes one
//! member or element.

use super::batch::{Batch, DEFAULT_ARRAYS, Kind, Node};
use crate::datatype::IntType;
use crate::json::framing::Framing;
use crate::json::sink::{Body, Sink, Spill, Stream};
use crate::json::temporal::{self, Zones};
use crate::json::value::{
    self, Context, decimal, float32, float64, int, int64, interval, key, quoted_text, uint, uint64,
    windowed,
};
use crate::json::{
    BinaryFormat, DEFAULT_DEPTH, EncoderOptions, JsonError, JsonFormat, Progress, escape, number,
};

/// One open value of the walk; arrays are node indices of the batch.
#[derive(Debug, Clone, Copy)]
enum Frame {
    /// An object: a struct slot, a batch row, or a map entry (`entry`: keys `key` and `value`).
    Object {
        next: usize,
        end: usize,
        first_member: usize,
        slot: usize,
        first: bool,
        value_due: bool,
        entry: bool,
    },
    /// A list of any kind, or a map's entries written as `[{"key":…,"value":…}]`.
    List {
        child: usize,
        next: usize,
        end: usize,
        first: bool,
        entries: bool,
    },
    /// A map with text keys, written as an object.
    Map {
        entries: usize,
        keys: usize,
        values: usize,
        next: usize,
        end: usize,
        first: bool,
        value_due: bool,
    },
}

/// What a frame's step asks of the stack.
enum Step {
    Stay,
    Push(Frame),
    Pop,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Open,
    Rows,
    Close,
    Done,
}

/// Encodes a [`Batch`] as JSON into caller-provided buffers, with no allocation.
///
/// Call [`Encoder::encode`] with a buffer until it reports `done`; the output is byte-for-byte
/// the same for any sequence of buffer sizes, and the same as
/// [`json::Encoder`](crate::json::Encoder) writes for the same batch and options. `DEPTH` bounds
/// the nesting as there (see [`DEFAULT_DEPTH`]).
pub struct Encoder<'b, 'a, const N: usize = DEFAULT_ARRAYS, const DEPTH: usize = DEFAULT_DEPTH> {
    batch: &'b Batch<'a, N>,
    cx: Context,
    /// The named zones of the batch's timestamps, resolved when the encoder is built.
    zones: Zones<'a>,
    rows: Rows<DEPTH>,
    spill: Spill,
    stream: Option<Stream<'b>>,
}

/// Where the walk over rows stands.
struct Rows<const DEPTH: usize> {
    framing: Framing,
    phase: Phase,
    row: usize,
    rows: usize,
    /// A row is open (its object is on the stack, or its end is due).
    in_row: bool,
    stack: heapless::Vec<Frame, DEPTH>,
}

impl<'b, 'a, const N: usize, const DEPTH: usize> Encoder<'b, 'a, N, DEPTH> {
    /// An encoder for a whole document of `batch`'s rows, one JSON object per row.
    pub fn new(
        batch: &'b Batch<'a, N>,
        format: JsonFormat,
        options: EncoderOptions,
    ) -> Result<Self, JsonError> {
        Self::with_framing(batch, Framing::document(format), options)
    }

    /// An encoder for `batch`'s rows continuing a document of several batches: with `started`
    /// false the rows open it (in the array format, `[` before the first row), and later batches
    /// pass `true`. The caller ends the document: `]` in the array format, or `[]` if no batch
    /// had rows.
    pub fn continuing(
        batch: &'b Batch<'a, N>,
        format: JsonFormat,
        options: EncoderOptions,
        started: bool,
    ) -> Result<Self, JsonError> {
        Self::with_framing(
            batch,
            Framing::continuing(format, started, batch.num_rows()),
            options,
        )
    }

    fn with_framing(
        batch: &'b Batch<'a, N>,
        framing: Framing,
        options: EncoderOptions,
    ) -> Result<Self, JsonError> {
        let mut check = Check {
            batch,
            column: 0,
            limit: DEPTH,
            plain_names: true,
            zones: Zones::new(&options),
        };
        let mut at = 0;
        while let Some(node) = batch.nodes().get(at).filter(|_| at < batch.columns_end()) {
            check.plain_names &= escape::is_plain(node.name);
            check.frames(at, 1, 0)?;
            check.column += 1;
            at = node.end;
        }
        Ok(Encoder {
            batch,
            cx: Context {
                options,
                plain_names: check.plain_names,
            },
            zones: check.zones,
            rows: Rows {
                framing,
                phase: Phase::Open,
                row: 0,
                rows: batch.num_rows(),
                in_row: false,
                stack: heapless::Vec::new(),
            },
            spill: Spill::new(),
            stream: None,
        })
    }

    /// Writes the next bytes of JSON into `out`; see [`Progress`]. Call again with a fresh
    /// buffer until `done`.
    pub fn encode(&mut self, out: &mut [u8]) -> Progress {
        let mut sink = Sink::new(out, &mut self.spill, &mut self.stream);
        let walk = Walk {
            batch: self.batch,
            cx: self.cx,
            zones: &self.zones,
        };
        let state = &mut self.rows;
        let done = loop {
            if !sink.flush() {
                break false;
            }
            if let Some(frame) = state.stack.last_mut() {
                match walk.step(frame, &mut sink) {
                    Step::Stay => {}
                    Step::Push(frame) => state.push(frame),
                    Step::Pop => {
                        state.stack.pop();
                    }
                }
                continue;
            }
            match state.phase {
                Phase::Open => {
                    sink.put(state.framing.open);
                    state.phase = Phase::Rows;
                }
                Phase::Rows => state.rows(&walk, &mut sink),
                Phase::Close => {
                    sink.put(state.framing.close);
                    state.phase = Phase::Done;
                }
                Phase::Done => break true,
            }
        };
        Progress {
            written: sink.written(),
            done,
        }
    }

    /// Writes all remaining output to `writer` through a `BUFFER`-byte buffer on the stack.
    pub fn write_to<const BUFFER: usize, W: embedded_io::Write>(
        &mut self,
        writer: &mut W,
    ) -> Result<(), W::Error> {
        let mut buffer = [0u8; BUFFER];
        loop {
            let progress = self.encode(&mut buffer);
            writer.write_all(buffer.get(..progress.written).unwrap_or_default())?;
            if progress.done {
                return Ok(());
            }
        }
    }
}

impl<const DEPTH: usize> Rows<DEPTH> {
    /// Opens rows until one needs the stack or output must wait.
    fn rows<'b, const N: usize>(
        &mut self,
        walk: &Walk<'_, 'b, '_, N>,
        sink: &mut Sink<'_, '_, 'b>,
    ) {
        if self.in_row {
            sink.put_opt(self.framing.row_end);
            self.in_row = false;
            self.row += 1;
        }
        while self.row < self.rows {
            if sink.blocked() {
                return;
            }
            if self.framing.first_row {
                self.framing.first_row = false;
            } else {
                sink.put_opt(self.framing.separator);
            }
            sink.put(b"{");
            let mut row = Frame::Object {
                next: 0,
                end: walk.batch.columns_end(),
                first_member: 0,
                slot: self.row,
                first: true,
                value_due: false,
                entry: false,
            };
            match walk.step(&mut row, sink) {
                Step::Pop => {}
                Step::Stay => {
                    self.in_row = true;
                    self.push(row);
                    return;
                }
                Step::Push(frame) => {
                    self.in_row = true;
                    self.push(row);
                    self.push(frame);
                    return;
                }
            }
            sink.put_opt(self.framing.row_end);
            self.row += 1;
        }
        self.phase = Phase::Close;
    }

    /// Pushes a frame; the depth was checked when the encoder was built, so there is room
    /// (were there not, the encoder stops rather than write wrong JSON).
    fn push(&mut self, frame: Frame) {
        if self.stack.push(frame).is_err() {
            self.stack.clear();
            self.phase = Phase::Done;
        }
    }
}

impl<const N: usize, const DEPTH: usize> core::fmt::Debug for Encoder<'_, '_, N, DEPTH> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Encoder")
            .field("row", &self.rows.row)
            .field("rows", &self.rows.rows)
            .field("depth", &self.rows.stack.len())
            .finish_non_exhaustive()
    }
}

/// The batch and settings a step reads.
struct Walk<'z, 'b, 'a, const N: usize> {
    batch: &'b Batch<'a, N>,
    cx: Context,
    zones: &'z Zones<'a>,
}

impl<'b, 'a, const N: usize> Walk<'_, 'b, 'a, N> {
    fn node(&self, at: usize) -> Option<&'b Node<'a>> {
        self.batch.nodes().get(at)
    }

    /// Writes the (valid, resolved) value in slot `i` of node `at`, or opens it.
    fn value(&self, at: usize, i: usize, sink: &mut Sink<'_, '_, 'b>) -> Option<Frame> {
        let node = self.node(at)?;
        match node.kind {
            Kind::Struct => {
                sink.put(b"{");
                Some(Frame::Object {
                    next: at + 1,
                    end: node.end,
                    first_member: at + 1,
                    slot: i,
                    first: true,
                    value_due: false,
                    entry: false,
                })
            }
            Kind::List
            | Kind::LargeList
            | Kind::ListView
            | Kind::LargeListView
            | Kind::FixedSizeList(_) => {
                let range = node.list_range(i);
                sink.put(b"[");
                Some(Frame::List {
                    child: at + 1,
                    next: range.start,
                    end: range.end,
                    first: true,
                    entries: false,
                })
            }
            Kind::Map => {
                let entries = at + 1;
                let keys = entries + 1;
                let values = self.node(keys).map_or(0, |k| k.end);
                let range = node.list_range(i);
                if self.node(keys).is_some_and(|k| k.kind.is_text()) {
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
            _ => {
                leaf(node, i, sink, self.cx, self.zones);
                None
            }
        }
    }

    /// Writes `null` or the value of slot `i` of node `at` (or opens it).
    fn slot(&self, slot: Option<(usize, usize)>, sink: &mut Sink<'_, '_, 'b>) -> Option<Frame> {
        match slot {
            None => {
                sink.put(b"null");
                None
            }
            Some((at, i)) => self.value(at, i, sink),
        }
    }

    fn step(&self, frame: &mut Frame, sink: &mut Sink<'_, '_, 'b>) -> Step {
        let cx = self.cx;
        match frame {
            Frame::Object {
                next,
                end,
                first_member,
                slot,
                first,
                value_due,
                entry,
            } => {
                if *value_due {
                    *value_due = false;
                    let Some(member) = self.node(*next) else {
                        return Step::Pop;
                    };
                    let at = *next;
                    *next = member.end;
                    if let Some(frame) = self.slot(self.batch.resolve(at, *slot), sink) {
                        return Step::Push(frame);
                    }
                    if sink.blocked() {
                        return Step::Stay;
                    }
                }
                while *next < *end {
                    let at = *next;
                    let Some(member) = self.node(at) else {
                        break;
                    };
                    let value = self.batch.resolve(at, *slot);
                    if value.is_none() && !cx.options.explicit_nulls {
                        *next = member.end;
                        continue;
                    }
                    if !*first {
                        sink.put(b",");
                    }
                    *first = false;
                    let name = match (*entry, at == *first_member) {
                        (false, _) => member.name,
                        (true, true) => "key",
                        (true, false) => "value",
                    };
                    key(sink, name, cx);
                    if sink.blocked() {
                        *value_due = true;
                        return Step::Stay;
                    }
                    *next = member.end;
                    if let Some(frame) = self.slot(value, sink) {
                        return Step::Push(frame);
                    }
                    if sink.blocked() {
                        return Step::Stay;
                    }
                }
                sink.put(b"}");
                Step::Pop
            }
            Frame::List {
                child,
                next,
                end,
                first,
                entries,
            } => {
                while *next < *end {
                    let e = *next;
                    *next += 1;
                    if !*first {
                        sink.put(b",");
                    }
                    *first = false;
                    match self.batch.resolve(*child, e) {
                        Some((at, i)) if *entries => {
                            sink.put(b"{");
                            return Step::Push(Frame::Object {
                                next: at + 1,
                                end: self.node(at).map_or(0, |n| n.end),
                                first_member: at + 1,
                                slot: i,
                                first: true,
                                value_due: false,
                                entry: true,
                            });
                        }
                        value => {
                            if let Some(frame) = self.slot(value, sink) {
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
                if *value_due {
                    *value_due = false;
                    let e = *next;
                    *next += 1;
                    if let Some(frame) = self.slot(self.batch.resolve(*values, e), sink) {
                        return Step::Push(frame);
                    }
                    if sink.blocked() {
                        return Step::Stay;
                    }
                }
                let entries_valid = |e| self.node(*entries).is_some_and(|n| n.is_valid(e));
                while *next < *end {
                    let e = *next;
                    let value = self.batch.resolve(*values, e);
                    // A map's keys are data: `"key":null` whatever `explicit_nulls` says.
                    if !entries_valid(e) {
                        *next += 1;
                        continue;
                    }
                    if !*first {
                        sink.put(b",");
                    }
                    *first = false;
                    let name = self
                        .batch
                        .resolve(*keys, e)
                        .and_then(|(k, i)| Some(self.node(k)?.bytes_value(i)))
                        .unwrap_or_default();
                    sink.quoted(name, Body::Text, b"\":");
                    if sink.blocked() {
                        *value_due = true;
                        return Step::Stay;
                    }
                    *next += 1;
                    if let Some(frame) = self.slot(value, sink) {
                        return Step::Push(frame);
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

/// Writes a flat value (the alloc encoder's `leaf`, over a node).
fn leaf<'b>(
    node: &'b Node<'_>,
    i: usize,
    sink: &mut Sink<'_, '_, 'b>,
    cx: Context,
    zones: &Zones<'_>,
) {
    match node.kind {
        Kind::Utf8 | Kind::LargeUtf8 | Kind::Utf8View => {
            sink.quoted(node.bytes_value(i), Body::Text, b"\"");
        }
        Kind::Int(IntType { bit_width, signed }) => match (bit_width, signed) {
            (8, true) => int(sink, node.value::<i8>(i).into()),
            (16, true) => int(sink, node.value::<i16>(i).into()),
            (32, true) => int(sink, node.value::<i32>(i).into()),
            (64, true) => int64(sink, node.value::<i64>(i), cx),
            (8, false) => uint(sink, node.value::<u8>(i).into()),
            (16, false) => uint(sink, node.value::<u16>(i).into()),
            (32, false) => uint(sink, node.value::<u32>(i).into()),
            _ => uint64(sink, node.value::<u64>(i), cx),
        },
        Kind::Float64 => float64(sink, node.value::<f64>(i), cx),
        Kind::Float32 => float32(sink, node.value::<f32>(i), cx),
        Kind::Float16 => float32(sink, number::f16_to_f32(node.value::<u16>(i)), cx),
        Kind::Boolean => sink.put(if node.bool_value(i) {
            b"true"
        } else {
            b"false"
        }),
        Kind::Decimal(_, scale) => decimal(sink, node.fixed_bytes(i), scale, cx),
        Kind::Date32 => windowed(sink, |w| temporal::date32(node.value::<i32>(i), w)),
        Kind::Date64 => windowed(sink, |w| temporal::date64(node.value::<i64>(i), w)),
        Kind::Time32(unit) => {
            quoted_text(sink, |t| {
                temporal::time(node.value::<i32>(i).into(), unit, t)
            });
        }
        Kind::Time64(unit) => quoted_text(sink, |t| temporal::time(node.value::<i64>(i), unit, t)),
        Kind::Timestamp(unit, timezone) => {
            let zone = zones.zone(timezone);
            value::timestamp(sink, node.value::<i64>(i), unit, zone, cx);
        }
        Kind::Duration(unit) => {
            quoted_text(sink, |t| temporal::duration(node.value::<i64>(i), unit, t));
        }
        Kind::Interval(unit) => interval(sink, unit, node.fixed_bytes(i)),
        Kind::Binary | Kind::LargeBinary | Kind::BinaryView | Kind::FixedSizeBinary(_) => {
            let body = match cx.options.binary {
                BinaryFormat::Base64 => Body::Base64,
                _ => Body::Hex,
            };
            sink.quoted(node.bytes_value(i), body, b"\"");
        }
        _ => sink.put(b"null"),
    }
}

/// The construction-time checks: nesting depth, null map keys, names that need escaping,
/// timezones (named ones resolved here, once).
struct Check<'b, 'a, const N: usize> {
    batch: &'b Batch<'a, N>,
    column: usize,
    limit: usize,
    plain_names: bool,
    zones: Zones<'a>,
}

impl<const N: usize> Check<'_, '_, N> {
    /// The most frames node `at`'s values open, given `depth` frames already open above them
    /// (`hops` counts unions, run-end encodings and dictionaries, as the alloc encoder does).
    fn frames(&mut self, at: usize, depth: usize, hops: usize) -> Result<usize, JsonError> {
        let too_deep = JsonError::TooDeep {
            column: self.column,
            limit: self.limit,
        };
        if depth > self.limit || hops > 4 * self.limit + 8 {
            return Err(too_deep);
        }
        let Some(node) = self.batch.nodes().get(at) else {
            return Ok(depth);
        };
        if let Some((_, values)) = node.dictionary {
            return self.frames(values, depth, hops + 1);
        }
        let children = |k: usize| self.batch.child(at, k);
        let most = match node.kind {
            Kind::Struct
            | Kind::List
            | Kind::LargeList
            | Kind::ListView
            | Kind::LargeListView
            | Kind::FixedSizeList(_) => {
                let mut most = depth + 1;
                for k in 0..node.children {
                    let Some(child) = children(k) else { break };
                    if node.kind == Kind::Struct {
                        let name = self.batch.nodes().get(child).map_or("", |c| c.name);
                        self.plain_names &= escape::is_plain(name);
                    }
                    most = most.max(self.frames(child, depth + 1, hops)?);
                }
                most
            }
            Kind::Map => {
                let keys = at + 2;
                let Some(key_node) = self.batch.nodes().get(keys) else {
                    return Ok(depth + 1);
                };
                let dictionary_nulls = key_node
                    .dictionary
                    .and_then(|(_, v)| self.batch.nodes().get(v))
                    .is_some_and(|v| v.null_count > 0);
                if key_node.null_count > 0 || dictionary_nulls {
                    return Err(JsonError::NullMapKey {
                        column: self.column,
                    });
                }
                let opened = if key_node.kind.is_text() { 1 } else { 2 };
                let values = key_node.end;
                let most = self.frames(keys, depth + opened, hops)?;
                most.max(self.frames(values, depth + opened, hops)?)
            }
            Kind::Union { .. } => {
                let mut most = depth;
                for k in 0..node.children {
                    let Some(child) = children(k) else { break };
                    most = most.max(self.frames(child, depth, hops + 1)?);
                }
                most
            }
            Kind::RunEndEncoded => match children(1) {
                Some(values) => self.frames(values, depth, hops + 1)?,
                None => depth,
            },
            Kind::Timestamp(_, timezone) => {
                self.zones
                    .add(timezone)
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
