//! The JSON encoder: a state machine that writes the rows of a record batch (or the values of one
//! array) into buffers the caller lends it, resuming at any byte.
//!
//! A batch enters through [`Encoder::new`] (a no-alloc `Batch`, a [`View`]), or, with `alloc`,
//! through [`Encoder::batch`] and [`Encoder::array`] (an [`EncoderBuilder`] builds the rest),
//! which read a `RecordBatch` or an `ArrayView` through the view's `Arrays` table (nodes made when read, nothing allocated for a
//! batch); JSON leaves through [`Encoder::encode`], one caller buffer at a time.
//!
//! Rows are written whole by the fast path (the `rows` module, following the schema compiled into
//! a `plan`) while they fit in the buffer. A row that does not fit goes through the general walk
//! here, which hands a row's members back to the fast path one at a time while each fits: it
//! writes only the member that crosses the end of the buffer. Every row of an encoder without a
//! plan goes through the walk: a no-alloc batch of more arrays than the inline plan holds, or an
//! encoder of `PLAN` 0.
//!
//! The walk walks the view's nodes by index, keeping open objects, lists and maps in a fixed stack
//! of `DEPTH` frames (so the encoder never allocates; its depth is checked when it is built). Each
//! step writes one member or element, whole values straight into the buffer while it has room;
//! near its end a short value is split through the spill and a long one becomes a stream (see the
//! `sink` module), and the step returns.
//!
//! The walk reads each node's [`Form`] (the plan's reading of its type, so both paths open and
//! write the same things), writes leaves through `value`'s writers, which the fast path calls
//! too, and takes its punctuation from `framing`. It uses every module of `json` below it.

use super::framing::{Checked, Compact, Framing, LINE_END, NULL, Syntax};
use super::options::{EncoderOptions, JsonFormat};
use super::plan::{Form, Plan};
use super::rows;
use super::sink::{Body, Sink, Spill, Stream};
use super::temporal::Zones;
use super::value::{Context, key, leaf};
use super::{DEFAULT_DEPTH, DEFAULT_PLAN, JsonError, Progress, escape};
#[cfg(feature = "alloc")]
use crate::array::Arrays;
use crate::format::Kind;
use crate::view::{Node, Table, View, child_at, resolve, resolve_from, siblings};
use core::marker::PhantomData;

/// The nodes an encoder reads: a view's, borrowed, or (with `alloc`) a `RecordBatch`'s or an
/// `ArrayView`'s arrays, each node made when read.
#[derive(Debug, Clone)]
enum Nodes<'b> {
    View(&'b [Node<'b>]),
    #[cfg(feature = "alloc")]
    Arrays(Arrays<'b>),
}

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
        /// The entries' node (its keys are the next; its values follow them).
        entries: usize,
        /// The entries' slot offset (keys and values are read at `base + e`).
        base: usize,
        next: usize,
        end: usize,
        first: bool,
        value_due: bool,
    },
}

impl Frame {
    /// An object of the member nodes `members` (siblings linked by their ends) at `slot`, opened
    /// (its `{` written).
    fn object(members: core::ops::Range<usize>, slot: usize, entry: bool) -> Self {
        Frame::Object {
            next: members.start,
            end: members.end,
            first_member: members.start,
            slot,
            first: true,
            value_due: false,
            entry,
        }
    }
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

/// Encodes a [`View`] (a record batch or one array) as JSON into caller-provided buffers.
///
/// Call [`Encoder::encode`] with a buffer until it reports `done`; each call writes as many bytes
/// as fit and resumes exactly where the last stopped, inside a string, key or number if need
/// be. The output is byte-for-byte the same for any sequence of buffer sizes, down to one byte.
/// Encoding never allocates and never fails: every check happens in the constructors.
///
/// `DEPTH` bounds the nesting (see [`DEFAULT_DEPTH`]); the encoder's size grows with it, by
/// about 64 bytes a level. `PLAN` is how many arrays (columns, children, dictionary values) the
/// fast path's compiled schema holds inline ([`DEFAULT_PLAN`] by default, on both paths), about
/// 184 bytes each. The plan of a wider `RecordBatch` or `ArrayView` is on the heap: building its
/// encoder allocates once; splitting it ([`Encoder::split_rows`], which shares the plan) and
/// encoding never do. A wider [`View`] (the no-alloc path's batch, which never allocates) has
/// no plan, and the general walk writes it value by value; 0 leaves every row to the walk. `F`
/// is the text format's structure, JSON's ([`Compact`]) unless another [`Syntax`] is named.
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
pub struct Encoder<
    'b,
    const DEPTH: usize = DEFAULT_DEPTH,
    const PLAN: usize = DEFAULT_PLAN,
    F: Syntax = Compact,
> {
    nodes: Nodes<'b>,
    /// Nodes `0..columns_end` are the columns' subtrees.
    columns_end: usize,
    /// The rows are the values of node 0 (not objects of columns).
    array: bool,
    cx: Context,
    /// The named zones of the view's timestamps, resolved when the encoder is built.
    zones: Zones<'b>,
    /// The compiled schema for the fast path, when `PLAN` nodes hold the schema.
    plan: Option<Plan<'b, PLAN>>,
    rows: Rows<DEPTH>,
    spill: Spill,
    stream: Option<Stream<'b>>,
    syntax: PhantomData<F>,
}

/// Where the walk over rows stands.
struct Rows<const DEPTH: usize> {
    framing: Framing,
    phase: Phase,
    /// The encoder's rows are `first..rows`; `row` is the next.
    first: usize,
    row: usize,
    rows: usize,
    /// A row is open (its value or object is on the stack, or its end is due).
    in_row: bool,
    /// Bytes a row took through the fast path, on average, the last time it wrote rows (0
    /// before): with less room left the fast path does not try one.
    row_bytes: usize,
    stack: heapless::Vec<Frame, DEPTH>,
}

impl<'b, const DEPTH: usize, const PLAN: usize, F: Syntax> Encoder<'b, DEPTH, PLAN, F> {
    /// An encoder for a whole document of `view`'s rows, one JSON object per row. Its nesting
    /// limit `DEPTH` and plan size `PLAN` are its type's, which the caller names
    /// (`let encoder: no_alloc::Encoder = Encoder::new(…)?`). Rows continuing a document are an
    /// [`EncoderBuilder`]'s.
    pub fn new<const N: usize>(
        view: &'b View<'b, N>,
        format: JsonFormat,
        options: EncoderOptions,
    ) -> Result<Self, JsonError> {
        EncoderBuilder::new(format, options).view(view)
    }

    fn with_framing<const N: usize>(
        view: &'b View<'b, N>,
        framing: Framing,
        options: EncoderOptions,
    ) -> Result<Self, JsonError> {
        let shape = (view.columns_end(), false, view.num_rows());
        Self::build(Nodes::View(view.nodes()), shape, framing, options)
    }

    /// An encoder of `nodes` (the columns `0..columns_end`, or the `array` at node 0) and its
    /// `rows`, after the construction-time checks (see [`Check`]) and with its plan, compiled
    /// in place (an inline plan is several KB, and a device's stack small).
    fn build(
        nodes: Nodes<'b>,
        (columns_end, array, rows): (usize, bool, usize),
        framing: Framing,
        options: EncoderOptions,
    ) -> Result<Self, JsonError> {
        let () = Checked::<F>::TOKENS;
        let (zones, plain_names) = match &nodes {
            Nodes::View(table) => Self::check(*table, columns_end, array, options)?,
            #[cfg(feature = "alloc")]
            Nodes::Arrays(table) => Self::check(table, columns_end, array, options)?,
        };
        let mut encoder = Encoder {
            nodes,
            columns_end,
            array,
            cx: Context {
                options,
                plain_names,
            },
            zones,
            plan: None,
            rows: Rows {
                framing,
                phase: Phase::Open,
                first: 0,
                row: 0,
                rows,
                in_row: false,
                row_bytes: 0,
                stack: heapless::Vec::new(),
            },
            spill: Spill::new(),
            stream: None,
            syntax: PhantomData,
        };
        let Encoder {
            nodes, zones, plan, ..
        } = &mut encoder;
        // A view (the no-alloc path's) is never planned on the heap.
        match nodes {
            Nodes::View(table) => {
                Plan::compile::<_, F>(plan, *table, (columns_end, array, false), options, zones);
            }
            #[cfg(feature = "alloc")]
            Nodes::Arrays(table) => {
                Plan::compile::<_, F>(plan, table, (columns_end, array, true), options, zones);
            }
        }
        Ok(encoder)
    }

    /// The construction-time checks of `nodes` (see [`Check`]): the zones and whether every
    /// name is plain.
    fn check<T: Table<'b> + ?Sized>(
        nodes: &T,
        columns_end: usize,
        array: bool,
        options: EncoderOptions,
    ) -> Result<(Zones<'b>, bool), JsonError> {
        let mut check = Check {
            nodes,
            options,
            column: 0,
            limit: DEPTH,
            plain_names: true,
            zones: options.zones(),
        };
        for (at, node) in siblings(nodes, 0, columns_end) {
            check.plain_names &= escape::is_plain(node.name);
            check.frames(at, usize::from(!array), 0)?;
            check.column += 1;
        }
        Ok((check.zones, check.plain_names))
    }

    /// Writes the next bytes of JSON into `out`; see [`Progress`].
    ///
    /// Call again with a fresh buffer until `done`; the output is identical for any sequence of
    /// buffer sizes. An empty buffer makes no progress (except to report `done`). Bytes of `out`
    /// past `written` may have been overwritten (the fast path writes in fixed-size blocks).
    pub fn encode(&mut self, out: &mut [u8]) -> Progress {
        let Encoder {
            nodes,
            columns_end,
            array,
            cx,
            zones,
            plan,
            rows,
            spill,
            stream,
            syntax: _,
        } = self;
        let mut sink = Sink::new(out, spill, stream);
        let (cx, columns_end, array, plan) = (*cx, *columns_end, *array, plan.as_ref());
        let done = match nodes {
            Nodes::View(nodes) => rows.run(
                &Walk {
                    nodes: *nodes,
                    cx,
                    zones,
                    columns_end,
                    array,
                    plan,
                    syntax: PhantomData::<F>,
                },
                &mut sink,
            ),
            #[cfg(feature = "alloc")]
            Nodes::Arrays(nodes) => rows.run(
                &Walk {
                    nodes,
                    cx,
                    zones,
                    columns_end,
                    array,
                    plan,
                    syntax: PhantomData::<F>,
                },
                &mut sink,
            ),
        };
        Progress {
            written: sink.written(),
            done,
        }
    }

    /// Whether everything has been written.
    pub fn is_done(&self) -> bool {
        self.rows.phase == Phase::Done && self.stream.is_none() && self.spill.is_empty()
    }

    /// Rows started so far, and rows in all.
    #[cfg_attr(not(feature = "alloc"), allow(dead_code))]
    pub(crate) fn rows_progress(&self) -> (usize, usize) {
        let rows = &self.rows;
        (
            rows.row.saturating_sub(rows.first),
            rows.rows.saturating_sub(rows.first),
        )
    }

    /// Splits off the next `rows` rows (all that are left, if fewer) as an encoder of their own
    /// and goes on after them: the split-off encoder's output followed by this one's is what
    /// this one would have written alone. The pieces can be encoded on different threads, as
    /// quiver-std's `ParallelWriter` does, without slicing the batch or planning it again.
    /// `None` once this encoder has written anything.
    pub fn split_rows(&mut self, rows: usize) -> Option<Self> {
        let state = &mut self.rows;
        let fresh = state.phase == Phase::Open && state.stack.is_empty() && !state.in_row;
        if !fresh || self.stream.is_some() || !self.spill.is_empty() {
            return None;
        }
        let end = state.row.saturating_add(rows).min(state.rows);
        let front = Rows {
            framing: Framing {
                close: b"",
                ..state.framing
            },
            phase: Phase::Open,
            first: state.first,
            row: state.row,
            rows: end,
            in_row: false,
            row_bytes: state.row_bytes,
            stack: heapless::Vec::new(),
        };
        state.framing.open = b"";
        state.framing.first_row &= end == state.row;
        state.first = end;
        state.row = end;
        Some(Encoder {
            nodes: self.nodes.clone(),
            columns_end: self.columns_end,
            array: self.array,
            cx: self.cx,
            zones: self.zones.clone(),
            plan: self.plan.clone(),
            rows: front,
            spill: Spill::new(),
            stream: None,
            syntax: PhantomData,
        })
    }

    /// Writes all remaining output to `writer` through `buffer` (one `write_all` per buffer
    /// filled); returns the number of bytes written. The one driver loop "encode into a chunk,
    /// write it": the std adapters call it through `embedded-io-adapters`.
    pub fn write_through<W: embedded_io::Write>(
        &mut self,
        writer: &mut W,
        buffer: &mut [u8],
    ) -> Result<u64, W::Error> {
        let mut written = 0u64;
        loop {
            let progress = self.encode(buffer);
            writer.write_all(buffer.get(..progress.written).unwrap_or_default())?;
            written += progress.written as u64;
            if progress.done {
                return Ok(written);
            }
        }
    }
}

#[cfg(feature = "alloc")]
impl<'b> Encoder<'b> {
    /// An encoder for a whole document of `batch`'s rows, one JSON object per row, with the
    /// default nesting limit and plan (an [`EncoderBuilder`] builds others).
    pub fn batch(
        batch: &'b crate::array::RecordBatch<'_>,
        format: JsonFormat,
        options: EncoderOptions,
    ) -> Result<Self, JsonError> {
        EncoderBuilder::new(format, options).batch(batch)
    }

    /// An encoder for a whole document of `array`'s values, one JSON value per row (nulls as
    /// `null`), with the default nesting limit and plan (an [`EncoderBuilder`] builds others).
    /// Unlike a batch's, building it allocates once: the links of the array's nodes, which a
    /// `RecordBatch` carries already.
    pub fn array(
        array: &'b crate::array::ArrayView<'_>,
        format: JsonFormat,
        options: EncoderOptions,
    ) -> Result<Self, JsonError> {
        EncoderBuilder::new(format, options).array(array)
    }
}

#[cfg(feature = "alloc")]
impl<'b, const DEPTH: usize, const PLAN: usize, F: Syntax> Encoder<'b, DEPTH, PLAN, F> {
    fn of(
        arrays: Arrays<'b>,
        array: bool,
        framing: Framing,
        options: EncoderOptions,
    ) -> Result<Self, JsonError> {
        let shape = (arrays.columns_end(), array, arrays.num_rows());
        Self::build(Nodes::Arrays(arrays), shape, framing, options)
    }
}

/// Builds the [`Encoder`]s that [`Encoder::new`], [`Encoder::batch`] and [`Encoder::array`] do
/// not: rows continuing a document, or a nesting limit `DEPTH` and plan size `PLAN` other than
/// the defaults, which are the type's that the caller names.
///
/// ```
/// use quiver::array::{ArrayView, RecordBatch};
/// use quiver::json::{Encoder, EncoderBuilder, EncoderOptions, JsonFormat};
///
/// let batch = RecordBatch::from_columns([("id", ArrayView::from_values([1i32, 2])?)])?;
/// let builder = EncoderBuilder::new(JsonFormat::JsonArray, EncoderOptions::default());
/// // One JSON array of two batches, each with 64 levels of nesting and no plan.
/// let mut out = Vec::new();
/// for started in [false, true] {
///     let mut encoder: Encoder<'_, 64, 0> = builder.continuing(started).batch(&batch)?;
///     encoder.append_to(&mut out);
/// }
/// out.push(b']'); // the caller ends a document of continuing rows
/// assert_eq!(out, br#"[{"id":1},{"id":2},{"id":1},{"id":2}]"#);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Copy)]
pub struct EncoderBuilder {
    format: JsonFormat,
    options: EncoderOptions,
    /// The rows continue a document, which has (`true`) or has not been started yet.
    started: Option<bool>,
}

impl EncoderBuilder {
    /// Builds encoders of whole documents in `format`, with `options`.
    pub fn new(format: JsonFormat, options: EncoderOptions) -> Self {
        EncoderBuilder {
            format,
            options,
            started: None,
        }
    }

    /// Builds encoders of rows continuing a document of several batches: with `started` false
    /// the rows open it (in the array format, `[` before the first row), and later batches pass
    /// `true`. The caller ends the document: `]` in the array format, or `[]` if no batch had
    /// rows ([`JsonWriter`](crate::json::JsonWriter) does all this with `alloc`).
    #[must_use]
    pub fn continuing(mut self, started: bool) -> Self {
        self.started = Some(started);
        self
    }

    /// The bytes around and between `rows` rows.
    fn framing<F: Syntax>(&self, rows: usize) -> Framing {
        match self.started {
            None => Framing::document::<F>(self.format),
            Some(started) => Framing::continuing::<F>(self.format, started, rows),
        }
    }

    /// An encoder of `view`'s rows, one JSON object per row.
    pub fn view<'b, const N: usize, const DEPTH: usize, const PLAN: usize, F: Syntax>(
        self,
        view: &'b View<'b, N>,
    ) -> Result<Encoder<'b, DEPTH, PLAN, F>, JsonError> {
        Encoder::with_framing(view, self.framing::<F>(view.num_rows()), self.options)
    }

    /// An encoder of `batch`'s rows, one JSON object per row.
    #[cfg(feature = "alloc")]
    pub fn batch<'b, const DEPTH: usize, const PLAN: usize, F: Syntax>(
        self,
        batch: &'b crate::array::RecordBatch<'_>,
    ) -> Result<Encoder<'b, DEPTH, PLAN, F>, JsonError> {
        let framing = self.framing::<F>(batch.num_rows());
        Encoder::of(Arrays::of_batch(batch), false, framing, self.options)
    }

    /// An encoder of `array`'s values, one JSON value per row (nulls as `null`); building it
    /// allocates once (see [`Encoder::array`]).
    #[cfg(feature = "alloc")]
    pub fn array<'b, const DEPTH: usize, const PLAN: usize, F: Syntax>(
        self,
        array: &'b crate::array::ArrayView<'_>,
    ) -> Result<Encoder<'b, DEPTH, PLAN, F>, JsonError> {
        let framing = self.framing::<F>(array.len());
        Encoder::of(Arrays::of_array(array), true, framing, self.options)
    }
}

impl<const DEPTH: usize, const PLAN: usize, F: Syntax> core::fmt::Debug
    for Encoder<'_, DEPTH, PLAN, F>
{
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Encoder")
            .field("row", &self.rows.row)
            .field("rows", &self.rows.rows)
            .field("depth", &self.rows.stack.len())
            .field("phase", &self.rows.phase)
            .finish_non_exhaustive()
    }
}

impl<const DEPTH: usize> Rows<DEPTH> {
    /// Writes into `sink` until it is full or all is written (then `true`).
    fn run<'b, T: Table<'b> + ?Sized, F: Syntax, const PLAN: usize>(
        &mut self,
        walk: &Walk<'_, 'b, T, F, PLAN>,
        sink: &mut Sink<'_, '_, 'b>,
    ) -> bool {
        loop {
            if !sink.flush() {
                return false;
            }
            if let Some(frame) = self.stack.last_mut() {
                match walk.step(frame, sink) {
                    Step::Stay => {}
                    Step::Push(frame) => self.push(frame),
                    Step::Pop => {
                        self.stack.pop();
                    }
                }
                continue;
            }
            match self.phase {
                Phase::Open => {
                    sink.put(self.framing.open);
                    self.phase = Phase::Rows;
                }
                Phase::Rows => self.rows(walk, sink),
                Phase::Close => {
                    sink.put(self.framing.close);
                    self.phase = Phase::Done;
                }
                Phase::Done => return true,
            }
        }
    }

    /// Writes whole rows through the fast path while they fit, and a row that does not through
    /// the stack (returning once it is opened).
    fn rows<'b, T: Table<'b> + ?Sized, F: Syntax, const PLAN: usize>(
        &mut self,
        walk: &Walk<'_, 'b, T, F, PLAN>,
        sink: &mut Sink<'_, '_, 'b>,
    ) {
        if self.in_row {
            if self.framing.lines {
                sink.put(LINE_END);
            }
            self.in_row = false;
            self.row += 1;
        }
        while self.row < self.rows {
            if sink.blocked() {
                return;
            }
            // With less room left than a row took, the next would likely not fit: the fast path
            // would write part of it, take it back and leave it to the walk anyway. A buffer
            // that a row of the walk ended in still has the fast path for the rows after it
            // (with 512-byte buffers, the row crossing each end is the walk's, not every row).
            let room = sink.room() >= self.row_bytes;
            if let Some(plan) = walk.plan.filter(|_| room) {
                let compiled = rows::Compiled {
                    plan,
                    nodes: walk.nodes,
                };
                let (mark, from) = (sink.written(), self.row);
                rows::write::<_, F, PLAN>(
                    &compiled,
                    sink,
                    &mut self.framing,
                    &mut self.row,
                    self.rows,
                    walk.cx,
                );
                if let Some(bytes) = (sink.written() - mark).checked_div(self.row - from) {
                    self.row_bytes = bytes;
                }
                if self.row >= self.rows {
                    break;
                }
            }
            // The row through the walk, which hands its members to the fast path while each
            // fits (see `Walk::planned`).
            if !self.framing.first_row && self.framing.separated {
                sink.put(F::SEPARATOR);
            }
            self.framing.first_row = false;
            if walk.array {
                if let Some(frame) = walk.slot(resolve(walk.nodes, 0, self.row), sink) {
                    self.in_row = true;
                    self.push(frame);
                    return;
                }
                if sink.blocked() {
                    self.in_row = true;
                    return;
                }
            } else {
                sink.put(F::OBJECT_OPEN);
                let mut row = Frame::object(0..walk.columns_end, self.row, false);
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
            }
            if self.framing.lines {
                sink.put(LINE_END);
            }
            self.row += 1;
        }
        self.phase = Phase::Close;
    }

    /// Pushes a frame. The depth was checked against the schema when the encoder was built, so
    /// the stack always has room; were it ever full, the encoder stops rather than write wrong
    /// JSON silently.
    fn push(&mut self, frame: Frame) {
        if self.stack.push(frame).is_err() {
            self.stack.clear();
            self.phase = Phase::Done;
        }
    }
}

#[cfg(test)]
std::thread_local! {
    /// Values the walk has written or opened on this thread, for tests to count.
    static WALK_VALUES: core::cell::Cell<usize> = const { core::cell::Cell::new(0) };
}

/// Values the walk has written or opened on this thread so far.
#[cfg(all(test, feature = "alloc"))]
pub(crate) fn walk_values() -> usize {
    WALK_VALUES.with(core::cell::Cell::get)
}

/// The view and settings a step reads.
struct Walk<'n, 'b, T: ?Sized, F, const PLAN: usize> {
    nodes: &'n T,
    cx: Context,
    zones: &'n Zones<'b>,
    columns_end: usize,
    array: bool,
    plan: Option<&'n Plan<'b, PLAN>>,
    syntax: PhantomData<F>,
}

impl<'n, 'b, T: Table<'b> + ?Sized, F: Syntax, const PLAN: usize> Walk<'n, 'b, T, F, PLAN> {
    #[inline(always)]
    fn node(&self, at: usize) -> Option<T::Ref<'n>> {
        self.nodes.node(at)
    }

    /// Writes the members of row `slot` from column `*next` (a view node) on through the fast
    /// path while each fits whole, and moves `*next` past them (to `end` past the last column).
    #[inline(always)]
    fn planned(
        &self,
        next: &mut usize,
        end: usize,
        slot: usize,
        first: &mut bool,
        sink: &mut Sink<'_, '_, 'b>,
    ) {
        let Some(plan) = self.plan else { return };
        let Some(from) = plan.column(*next) else {
            return;
        };
        let compiled = rows::Compiled {
            plan,
            nodes: self.nodes,
        };
        let to = rows::members::<_, F, PLAN>(&compiled, from, slot, first, sink, self.cx);
        if to > from {
            *next = plan.column_at(to).unwrap_or(end);
        }
    }

    /// Writes the (valid, resolved) value in slot `i` of `node` (node `at`), or opens it.
    fn value(
        &self,
        at: usize,
        node: &Node<'b>,
        i: usize,
        sink: &mut Sink<'_, '_, 'b>,
    ) -> Option<Frame> {
        #[cfg(test)]
        WALK_VALUES.with(|n| n.set(n.get() + 1));
        match Form::of(node, self.cx.options, self.zones) {
            Form::Struct => {
                sink.put(F::OBJECT_OPEN);
                Some(Frame::object(at + 1..node.end, node.offset + i, false))
            }
            Form::List => {
                let range = node.list_range(i);
                sink.put(F::LIST_OPEN);
                Some(Frame::List {
                    child: at + 1,
                    next: range.start,
                    end: range.end,
                    first: true,
                    entries: false,
                })
            }
            Form::Map => {
                let entries = at + 1;
                let keys = entries + 1;
                let range = node.list_range(i);
                if self.node(keys).is_some_and(|k| k.kind.is_text()) {
                    sink.put(F::OBJECT_OPEN);
                    Some(Frame::Map {
                        entries,
                        base: self.node(entries).map_or(0, |n| n.offset),
                        next: range.start,
                        end: range.end,
                        first: true,
                        value_due: false,
                    })
                } else {
                    sink.put(F::LIST_OPEN);
                    Some(Frame::List {
                        child: entries,
                        next: range.start,
                        end: range.end,
                        first: true,
                        entries: true,
                    })
                }
            }
            form => {
                leaf(form, node, i, sink, self.cx);
                None
            }
        }
    }

    /// Writes `null` or the value of slot `i` of node `at` (or opens it).
    fn slot(
        &self,
        slot: Option<(usize, T::Ref<'n>, usize)>,
        sink: &mut Sink<'_, '_, 'b>,
    ) -> Option<Frame> {
        match slot {
            None => {
                sink.put(NULL);
                None
            }
            Some((at, node, i)) => self.value(at, &node, i, sink),
        }
    }

    /// [`Walk::slot`] of slot `i` of `member` (node `at`), resolved.
    fn slot_from(
        &self,
        member: &Node<'b>,
        at: usize,
        i: usize,
        sink: &mut Sink<'_, '_, 'b>,
    ) -> Option<Frame> {
        let mut moved = None;
        let value = resolve_from(self.nodes, member, at, i, &mut moved);
        self.resolved(value, moved.as_deref().unwrap_or(member), sink)
    }

    /// Writes `null` or the `value` (node index, slot) in `node`, or opens it.
    fn resolved(
        &self,
        value: Option<(usize, usize)>,
        node: &Node<'b>,
        sink: &mut Sink<'_, '_, 'b>,
    ) -> Option<Frame> {
        match value {
            None => {
                sink.put(NULL);
                None
            }
            Some((at, i)) => self.value(at, node, i, sink),
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
                    // Borrowed where it lies: a node made when read is not copied.
                    let found = self.node(*next);
                    let Some(member) = found.as_deref() else {
                        return Step::Pop;
                    };
                    let at = *next;
                    *next = member.end;
                    if let Some(frame) = self.slot_from(member, at, *slot, sink) {
                        return Step::Push(frame);
                    }
                    if sink.blocked() {
                        return Step::Stay;
                    }
                }
                while *next < *end {
                    // A batch's row (its first member is column 0): its members through the
                    // fast path while they fit.
                    if *first_member == 0 && !*entry {
                        self.planned(next, *end, *slot, first, sink);
                        if sink.blocked() {
                            return Step::Stay;
                        }
                        if *next >= *end {
                            break;
                        }
                    }
                    let at = *next;
                    let found = self.node(at);
                    let Some(member) = found.as_deref() else {
                        break;
                    };
                    let mut moved = None;
                    let value = resolve_from(self.nodes, member, at, *slot, &mut moved);
                    if value.is_none() && cx.options.omit_nulls {
                        *next = member.end;
                        continue;
                    }
                    if !*first {
                        sink.put(F::SEPARATOR);
                    }
                    *first = false;
                    let name = match (*entry, at == *first_member) {
                        (false, _) => member.name,
                        (true, true) => "key",
                        (true, false) => "value",
                    };
                    key::<F>(sink, name, cx);
                    if sink.blocked() {
                        *value_due = true;
                        return Step::Stay;
                    }
                    *next = member.end;
                    let node = moved.as_deref().unwrap_or(member);
                    if let Some(frame) = self.resolved(value, node, sink) {
                        return Step::Push(frame);
                    }
                    if sink.blocked() {
                        return Step::Stay;
                    }
                }
                sink.put(F::OBJECT_CLOSE);
                Step::Pop
            }
            Frame::List {
                child,
                next,
                end,
                first,
                entries,
            } => {
                let found = self.node(*child);
                let Some(element) = found.as_deref() else {
                    return Step::Pop;
                };
                while *next < *end {
                    let e = *next;
                    *next += 1;
                    if !*first {
                        sink.put(F::SEPARATOR);
                    }
                    *first = false;
                    let mut moved = None;
                    let value = resolve_from(self.nodes, element, *child, e, &mut moved);
                    let node = moved.as_deref().unwrap_or(element);
                    match value {
                        Some((at, i)) if *entries => {
                            sink.put(F::OBJECT_OPEN);
                            let entry = Frame::object(at + 1..node.end, node.offset + i, true);
                            return Step::Push(entry);
                        }
                        value => {
                            if let Some(frame) = self.resolved(value, node, sink) {
                                return Step::Push(frame);
                            }
                        }
                    }
                    if sink.blocked() {
                        return Step::Stay;
                    }
                }
                sink.put(F::LIST_CLOSE);
                Step::Pop
            }
            Frame::Map {
                entries,
                base,
                next,
                end,
                first,
                value_due,
            } => {
                // The entries, keys and values nodes, read once a step and borrowed where they lie.
                let keys = *entries + 1;
                let (found_entries, found_keys) = (self.node(*entries), self.node(keys));
                let (Some(entries_node), Some(key_node)) =
                    (found_entries.as_deref(), found_keys.as_deref())
                else {
                    return Step::Pop;
                };
                let values = key_node.end;
                let found_values = self.node(values);
                let Some(value_node) = found_values.as_deref() else {
                    return Step::Pop;
                };
                if *value_due {
                    *value_due = false;
                    let e = *next;
                    *next += 1;
                    if let Some(frame) = self.slot_from(value_node, values, *base + e, sink) {
                        return Step::Push(frame);
                    }
                    if sink.blocked() {
                        return Step::Stay;
                    }
                }
                while *next < *end {
                    let e = *next;
                    // A map's keys are data: `"key":null` whatever `omit_nulls` says.
                    if !entries_node.is_valid(e) {
                        *next += 1;
                        continue;
                    }
                    if !*first {
                        sink.put(F::SEPARATOR);
                    }
                    *first = false;
                    let mut moved = None;
                    let name = resolve_from(self.nodes, key_node, keys, *base + e, &mut moved)
                        .map(|(_, i)| moved.as_deref().unwrap_or(key_node).bytes_value(i))
                        .unwrap_or_default();
                    sink.quoted(name, Body::Text, F::KEY_CLOSE);
                    if sink.blocked() {
                        *value_due = true;
                        return Step::Stay;
                    }
                    *next += 1;
                    if let Some(frame) = self.slot_from(value_node, values, *base + e, sink) {
                        return Step::Push(frame);
                    }
                    if sink.blocked() {
                        return Step::Stay;
                    }
                }
                sink.put(F::OBJECT_CLOSE);
                Step::Pop
            }
        }
    }
}

/// The construction-time checks: nesting depth, null map keys, names that need escaping,
/// timezones (named ones resolved here, once).
struct Check<'n, 'b, T: ?Sized> {
    nodes: &'n T,
    options: EncoderOptions,
    column: usize,
    limit: usize,
    plain_names: bool,
    zones: Zones<'b>,
}

impl<'b, T: Table<'b> + ?Sized> Check<'_, 'b, T> {
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
        let nodes = self.nodes;
        let Some(node) = nodes.node(at) else {
            return Ok(depth);
        };
        if let Kind::Timestamp(_, timezone) = node.kind {
            self.zones
                .add(timezone)
                .map_err(|e| JsonError::zone(self.column, e))?;
        }
        let children = |k: usize| child_at(self.nodes, at, k);
        let form = Form::of(&node, self.options, &self.zones);
        let most = match form {
            Form::Dictionary => return self.frames(at + 1, depth, hops + 1),
            Form::Struct | Form::List | Form::Union => {
                // A union opens no frame of its own: its children are its values.
                let (depth, hops) = match form {
                    Form::Union => (depth, hops + 1),
                    _ => (depth + 1, hops),
                };
                let mut most = depth;
                for k in 0..node.children as usize {
                    let Some(child) = children(k) else { break };
                    if form == Form::Struct {
                        let name = nodes.node(child).map_or("", |c| c.name);
                        self.plain_names &= escape::is_plain(name);
                    }
                    most = most.max(self.frames(child, depth, hops)?);
                }
                most
            }
            Form::Map => {
                let keys = at + 2;
                let Some(key_node) = nodes.node(keys) else {
                    return Ok(depth + 1);
                };
                let dictionary_nulls = key_node
                    .dictionary
                    .and_then(|_| nodes.node(keys + 1))
                    .is_some_and(|v| v.has_nulls());
                if key_node.has_nulls() || dictionary_nulls {
                    return Err(JsonError::NullMapKey {
                        column: self.column,
                    });
                }
                let opened = if key_node.kind.is_text() { 1 } else { 2 };
                let values = key_node.end;
                let most = self.frames(keys, depth + opened, hops)?;
                most.max(self.frames(values, depth + opened, hops)?)
            }
            Form::RunEnd => match children(1) {
                Some(values) => self.frames(values, depth, hops + 1)?,
                None => depth,
            },
            Form::Flat(_) | Form::Short(_) | Form::Bytes(_) | Form::Extension | Form::Null => depth,
        };
        if most > self.limit {
            return Err(too_deep);
        }
        Ok(most)
    }
}

#[cfg(all(test, feature = "alloc"))]
mod tests {
    //! Which encoders get the fast path, and the general walk over a view on its own (the
    //! byte-for-byte checks of both paths are in `rows`).

    use super::super::rows::tests::{encode, walk};
    use super::{DEFAULT_PLAN, Encoder, EncoderBuilder, Frame};
    use crate::array::{ArrayView, RecordBatch};
    use crate::json::{DEFAULT_DEPTH, EncoderOptions, JsonFormat};
    use core::mem::size_of_val;
    use std::format;
    use std::string::String;
    use std::vec;
    use std::vec::Vec;

    fn wide(columns: usize) -> RecordBatch<'static> {
        let names: Vec<String> = (0..columns).map(|k| format!("c{k}")).collect();
        let column = ArrayView::from_values([Some(1i32), None]).unwrap();
        RecordBatch::from_columns(names.iter().map(|name| (name.as_str(), column.clone()))).unwrap()
    }

    #[test]
    fn a_batch_is_planned_whole_inline_or_on_the_heap_and_never_without_a_plan() {
        let (options, lines) = (EncoderOptions::default(), JsonFormat::LineDelimited);
        let narrow = wide(DEFAULT_PLAN);
        let planned = Encoder::batch(&narrow, lines, options).unwrap();
        let plan = planned.plan.as_ref().unwrap();
        assert_eq!(
            plan.columns(),
            Some(0..DEFAULT_PLAN),
            "DEFAULT_PLAN arrays fit the inline plan"
        );
        assert!(plan.is_inline());
        // One more column: every column, on the heap.
        let batch = wide(DEFAULT_PLAN + 1);
        let heap = Encoder::batch(&batch, lines, options).unwrap();
        let plan = heap.plan.as_ref().unwrap();
        assert_eq!(plan.columns(), Some(0..DEFAULT_PLAN + 1));
        assert!(!plan.is_inline());
        // A larger inline plan holds them all inline.
        let wide_plan: Result<Encoder<'_, DEFAULT_DEPTH, 128>, _> =
            EncoderBuilder::new(lines, options).batch(&batch);
        let wide_plan = wide_plan.unwrap();
        let plan = wide_plan.plan.as_ref().unwrap();
        assert_eq!(plan.columns(), Some(0..DEFAULT_PLAN + 1));
        assert!(plan.is_inline());
        let small = walk(&narrow, lines, options);
        assert!(
            small.plan.is_none(),
            "an encoder of no plan nodes carries no plan"
        );
        assert!(size_of_val(&small) * 2 < size_of_val(&planned));
    }

    #[test]
    fn a_view_is_planned_inline_or_walked_and_never_on_the_heap() {
        // The no-alloc path's batch: planned inline when the plan holds it, else walked, as
        // without `alloc`, even in a build with it (a `no_alloc::Encoder` never allocates).
        let (options, lines) = (EncoderOptions::default(), JsonFormat::LineDelimited);
        for (columns, planned) in [(DEFAULT_PLAN, true), (DEFAULT_PLAN + 1, false)] {
            let batch = wide(columns);
            let mut writer = crate::ipc::FileWriter::new(
                Vec::new(),
                batch.schema().clone(),
                crate::ipc::WriterOptions::default(),
            )
            .unwrap();
            writer.write(&batch).unwrap();
            writer.finish().unwrap();
            let file = writer.into_inner();
            let mut scratch = vec![0u8; file.len()];
            let mut reader: crate::no_alloc::FileReader<_> =
                crate::no_alloc::FileReader::open(&file[..], &mut scratch).unwrap();
            let view: crate::no_alloc::Batch = reader.batch(0).unwrap();
            let expected = encode(&mut walk(&batch, lines, options), 64, 64);
            for size in [1, 7, 64, 300, 4096] {
                let mut encoder: crate::no_alloc::Encoder =
                    Encoder::new(&view, lines, options).unwrap();
                let plan = encoder.plan.as_ref();
                assert_eq!(plan.is_some(), planned, "{columns} columns");
                assert!(plan.is_none_or(|plan| plan.is_inline()));
                assert_eq!(
                    encode(&mut encoder, size, size),
                    expected,
                    "{columns} columns"
                );
            }
        }
    }

    #[test]
    fn an_array_wider_than_the_inline_plan_is_planned_on_the_heap() {
        use crate::builder::{AppendValue, ArrayBuilder, PrimitiveBuilder, StructBuilder};
        // A struct of 40 children (41 arrays): its array encoder's plan on the heap.
        let mut structs = StructBuilder::new();
        for k in 0..40 {
            structs = structs.with_child(&format!("f{k}"), PrimitiveBuilder::<i32>::new());
        }
        for row in 0..5i32 {
            if row == 2 {
                structs.append_null();
                continue;
            }
            for k in 0..40 {
                let value = ((row + k) % 3 != 0).then_some(row * 100 + k);
                let child = structs.field_builder::<PrimitiveBuilder<i32>>(k as usize);
                child.unwrap().append_value(value);
            }
            structs.append();
        }
        let array = structs.finish().unwrap();
        let (options, lines) = (EncoderOptions::default(), JsonFormat::LineDelimited);
        let builder = EncoderBuilder::new(lines, options);
        let mut walked: Encoder<'_, DEFAULT_DEPTH, 0> = builder.array(&array).unwrap();
        let whole = encode(&mut walked, 1 << 16, 1 << 16);
        assert!(whole.starts_with(b"{\"f0\":null,\"f1\":1,"));
        let planned = || Encoder::array(&array, lines, options).unwrap();
        assert!(!planned().plan.as_ref().unwrap().is_inline());
        for size in [1 << 16, 1, 7, 100, 600] {
            assert_eq!(
                encode(&mut planned(), size, size),
                whole,
                "{size}-byte buffers"
            );
        }
    }

    #[test]
    fn the_walk_alone_writes_what_the_fast_path_writes() {
        let formats = [JsonFormat::LineDelimited, JsonFormat::JsonArray];
        for columns in [DEFAULT_PLAN, DEFAULT_PLAN + 1, 40, 70] {
            let batch = wide(columns);
            for (format, omit) in formats.into_iter().flat_map(|f| [(f, false), (f, true)]) {
                let options = EncoderOptions::default().with_omit_nulls(omit);
                let walked = |size| encode(&mut walk(&batch, format, options), size, size);
                let planned = |size| {
                    let mut planned = Encoder::batch(&batch, format, options).unwrap();
                    encode(&mut planned, size, size)
                };
                let whole = walked(1 << 16);
                assert_eq!(planned(1 << 16), whole, "{columns} columns");
                if format == JsonFormat::LineDelimited {
                    assert!(whole.starts_with(b"{\"c0\":1,\"c1\":1,"));
                }
                for size in [1, 7, 64] {
                    assert_eq!(walked(size), whole, "{size}-byte buffers");
                }
                // Buffers that end within the rows the fast path writes, leading members or
                // whole.
                for size in [512, 600, 700, 1000] {
                    assert_eq!(planned(size), whole, "{size}-byte buffers");
                }
            }
        }
        assert!(core::mem::size_of::<Frame>() <= 64);
    }
}
