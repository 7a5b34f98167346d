//! The JSON encoder: a state machine that writes the rows of a record batch (or the values of one
//! array) into buffers the caller lends it, resuming at any byte.
//!
//! A batch enters through [`Encoder::new`] (a no-alloc `Batch`, a [`View`]), or, with `alloc`,
//! through [`Encoder::batch`] and [`Encoder::array`] (an [`EncoderBuilder`] builds the rest),
//! which read a `RecordBatch` or an `ArrayView` through the view's `Arrays` table (nodes made when read, nothing allocated for a
//! batch); JSON leaves through [`Encoder::encode`], one caller buffer at a time.
//!
//! Every encoder compiles the schema into a `plan` when it is built (one node per array, each
//! with its shape, buffers and key), and both of its loops follow that plan: rows are written
//! whole by the fast path (the `rows` module, a loop of its own per flat type) while they fit in
//! the buffer; a row that does not fit goes through the general walk here, which hands a row's
//! members back to the fast path one at a time while each fits: it writes only the member that
//! crosses the end of the buffer.
//!
//! The walk walks the plan's nodes by index, keeping open objects, lists and maps in a fixed
//! stack of `DEPTH` frames (so the encoder never allocates; its depth is checked when it is
//! built). Each step writes one member or element, whole values straight into the buffer while
//! it has room; near its end a short value is split through the spill and a long one becomes a
//! stream (see the `sink` module), and the step returns.
//!
//! Both loops resolve slots with the plan's one resolver and write leaves through `value`'s
//! writers, and take their punctuation from `framing`. It uses every module of `json` below it.

use super::framing::{Checked, Compact, Framing, LINE_END, NULL, Syntax};
use super::options::{EncoderOptions, JsonFormat};
use super::plan::{self, Form, Plan, PlanNode, Shape};
use super::rows;
use super::sink::{Body, Sink, Spill, Stream};
use super::temporal::Zones;
use super::value::{Context, key, leaf};
use super::{DEFAULT_DEPTH, DEFAULT_PLAN, JsonError, Progress, escape};
#[cfg(feature = "alloc")]
use crate::array::Arrays;
use crate::format::Kind;
use crate::view::{Node, Table, View, child_at, siblings};
use core::marker::PhantomData;

/// The nodes an encoder reads: a view's, borrowed, or (with `alloc`) a `RecordBatch`'s or an
/// `ArrayView`'s arrays, each node made when read.
#[derive(Debug, Clone)]
enum Nodes<'b> {
    View(&'b [Node<'b>]),
    #[cfg(feature = "alloc")]
    Arrays(Arrays<'b>),
}

/// One open value of the walk; arrays are nodes of the plan.
#[derive(Debug, Clone, Copy)]
enum Frame {
    /// An object of the members `next..end` at `slot`: a struct's, a map entry's (`key` and
    /// `value`), or a batch's `row` (its columns).
    Object {
        next: usize,
        end: usize,
        slot: usize,
        first: bool,
        value_due: bool,
        row: bool,
    },
    /// A list of any kind, its elements `next..end` in node `child` (a map's entries, of other
    /// keys than text, written as `[{"key":…,"value":…}]`).
    List {
        child: usize,
        next: usize,
        end: usize,
        first: bool,
    },
    /// A map with text keys, written as an object: its entries `next..end` in node `entries`,
    /// whose keys are node `keys` and values the next.
    Map {
        entries: usize,
        keys: usize,
        next: usize,
        end: usize,
        first: bool,
        value_due: bool,
    },
}

impl Frame {
    /// An object of the member nodes `members` at `slot` (a batch's `row` when so), opened (its
    /// `{` written).
    fn object(members: core::ops::Range<usize>, slot: usize, row: bool) -> Self {
        Frame::Object {
            next: members.start,
            end: members.end,
            slot,
            first: true,
            value_due: false,
            row,
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
/// compiled schema holds inline ([`DEFAULT_PLAN`] by default, on both paths), about 184 bytes
/// each. The plan of a wider `RecordBatch` or `ArrayView` is on the heap: building its encoder
/// allocates once; splitting it ([`Encoder::split_rows`], which shares the plan) and encoding
/// never do. A wider [`View`] (the no-alloc path's batch, which never allocates) is refused
/// ([`JsonError::TooManyArrays`]). `F` is the text format's structure, JSON's ([`Compact`])
/// unless another [`Syntax`] is named.
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
    /// The view the plan was compiled from, for the values it holds no buffers for.
    nodes: Nodes<'b>,
    cx: Context,
    /// The compiled schema, which every encoder has (an `Option` only to be compiled in place).
    plan: Option<Plan<'b, PLAN>>,
    /// The fast path writes what it can (always, but in the tests of the walk alone).
    #[cfg(test)]
    pub(super) fast: bool,
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
            cx: Context {
                options,
                plain_names,
            },
            plan: None,
            #[cfg(test)]
            fast: true,
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
        let Encoder { nodes, plan, .. } = &mut encoder;
        // A view (the no-alloc path's) is never planned on the heap.
        let shape = (columns_end, array);
        match nodes {
            Nodes::View(table) => {
                Plan::compile::<_, F>(plan, *table, (shape, false), options, &zones);
            }
            #[cfg(feature = "alloc")]
            Nodes::Arrays(table) => {
                Plan::compile::<_, F>(plan, table, (shape, true), options, &zones)
            }
        }
        if encoder.plan.is_none() {
            return Err(JsonError::TooManyArrays {
                arrays: columns_end,
                limit: PLAN,
            });
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
        #[cfg(test)]
        let fast = self.fast;
        #[cfg(not(test))]
        let fast = true;
        let Encoder {
            nodes,
            cx,
            plan,
            rows,
            spill,
            stream,
            ..
        } = self;
        let mut sink = Sink::new(out, spill, stream);
        let Some(plan) = plan.as_ref() else {
            debug_assert!(false, "every encoder is built with its plan");
            return Progress {
                written: 0,
                done: true,
            };
        };
        let done = match nodes {
            Nodes::View(nodes) => {
                rows.run(&Walk::<_, F, PLAN>::new(plan, *nodes, *cx, fast), &mut sink)
            }
            #[cfg(feature = "alloc")]
            Nodes::Arrays(nodes) => {
                rows.run(&Walk::<_, F, PLAN>::new(plan, nodes, *cx, fast), &mut sink)
            }
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
            cx: self.cx,
            plan: self.plan.clone(),
            #[cfg(test)]
            fast: self.fast,
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
/// // One JSON array of two batches, each with 64 levels of nesting.
/// let mut out = Vec::new();
/// for started in [false, true] {
///     let mut encoder: Encoder<'_, 64> = builder.continuing(started).batch(&batch)?;
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
            if walk.fast && sink.room() >= self.row_bytes {
                let compiled = rows::Compiled {
                    plan: walk.plan,
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
            if let Some(columns) = walk.plan.columns() {
                sink.put(F::OBJECT_OPEN);
                let mut row = Frame::object(columns, self.row, true);
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
            } else {
                // An array's value.
                let value = walk.node(0).and_then(|array| walk.resolve(array, self.row));
                if let Some(frame) = walk.slot(value, sink) {
                    self.in_row = true;
                    self.push(frame);
                    return;
                }
                if sink.blocked() {
                    self.in_row = true;
                    return;
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

/// The plan, the view it was compiled from and the settings a step reads.
struct Walk<'n, 'b, T: ?Sized, F, const PLAN: usize> {
    plan: &'n Plan<'b, PLAN>,
    /// The plan's nodes, read once from where they are kept (inline or on the heap).
    compiled: &'n [PlanNode<'b>],
    nodes: &'n T,
    cx: Context,
    /// The fast path writes what it can (always, but in the tests of the walk alone).
    fast: bool,
    syntax: PhantomData<F>,
}

impl<'n, 'b, T: Table<'b> + ?Sized, F: Syntax, const PLAN: usize> Walk<'n, 'b, T, F, PLAN> {
    fn new(plan: &'n Plan<'b, PLAN>, nodes: &'n T, cx: Context, fast: bool) -> Self {
        Walk {
            plan,
            compiled: plan.all(),
            nodes,
            cx,
            fast,
            syntax: PhantomData,
        }
    }

    /// Plan node `n`.
    #[inline(always)]
    fn node(&self, n: usize) -> Option<&'n PlanNode<'b>> {
        self.compiled.get(n)
    }

    /// The node and slot holding the value of slot `i` of `node`; `None` when it is null.
    #[inline(always)]
    fn resolve(&self, node: &'n PlanNode<'b>, i: usize) -> Option<(&'n PlanNode<'b>, usize)> {
        plan::resolve(self.compiled, node, i, &[])
    }

    /// Writes the members of row `slot` from plan column `*next` on through the fast path while
    /// each fits whole, and moves `*next` past them.
    #[inline(always)]
    fn planned(
        &self,
        next: &mut usize,
        slot: usize,
        first: &mut bool,
        sink: &mut Sink<'_, '_, 'b>,
    ) {
        if !self.fast {
            return;
        }
        let compiled = rows::Compiled {
            plan: self.plan,
            nodes: self.nodes,
        };
        *next = rows::members::<_, F, PLAN>(&compiled, *next, slot, first, sink, self.cx);
    }

    /// Writes `null`, or the (resolved) `value`, or opens it.
    fn slot(
        &self,
        value: Option<(&'n PlanNode<'b>, usize)>,
        sink: &mut Sink<'_, '_, 'b>,
    ) -> Option<Frame> {
        let Some((node, i)) = value else {
            sink.put(NULL);
            return None;
        };
        #[cfg(test)]
        WALK_VALUES.with(|n| n.set(n.get() + 1));
        match node.shape {
            Shape::Struct { first, len } => {
                let first = first as usize;
                sink.put(F::OBJECT_OPEN);
                let members = first..first + len as usize;
                Some(Frame::object(members, node.leaf.offset() + i, false))
            }
            Shape::List { child, .. } => {
                let range = node.list_range(i);
                sink.put(F::LIST_OPEN);
                Some(Frame::List {
                    child: child as usize,
                    next: range.start,
                    end: range.end,
                    first: true,
                })
            }
            Shape::Map { entries } => {
                let Some(Shape::Struct { first: keys, .. }) =
                    self.node(entries as usize).map(|e| e.shape)
                else {
                    debug_assert!(false, "a map's entries are a struct");
                    sink.put(NULL);
                    return None;
                };
                let range = node.list_range(i);
                sink.put(F::OBJECT_OPEN);
                Some(Frame::Map {
                    entries: entries as usize,
                    keys: keys as usize,
                    next: range.start,
                    end: range.end,
                    first: true,
                    value_due: false,
                })
            }
            _ => {
                leaf(node, self.nodes, i, sink, self.cx);
                None
            }
        }
    }

    fn step(&self, frame: &mut Frame, sink: &mut Sink<'_, '_, 'b>) -> Step {
        let cx = self.cx;
        match frame {
            Frame::Object {
                next,
                end,
                slot,
                first,
                value_due,
                row,
            } => {
                if *value_due {
                    *value_due = false;
                    let Some(member) = self.node(*next) else {
                        return Step::Pop;
                    };
                    *next += 1;
                    if let Some(frame) = self.slot(self.resolve(member, *slot), sink) {
                        return Step::Push(frame);
                    }
                    if sink.blocked() {
                        return Step::Stay;
                    }
                }
                while *next < *end {
                    // A batch's row: its members through the fast path while they fit.
                    if *row {
                        self.planned(next, *slot, first, sink);
                        if sink.blocked() {
                            return Step::Stay;
                        }
                        if *next >= *end {
                            break;
                        }
                    }
                    let Some(member) = self.node(*next) else {
                        break;
                    };
                    let value = self.resolve(member, *slot);
                    if value.is_none() && cx.options.omit_nulls {
                        *next += 1;
                        continue;
                    }
                    if !*first {
                        sink.put(F::SEPARATOR);
                    }
                    *first = false;
                    key::<F>(sink, member.name, cx);
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
                sink.put(F::OBJECT_CLOSE);
                Step::Pop
            }
            Frame::List {
                child,
                next,
                end,
                first,
            } => {
                let Some(element) = self.node(*child) else {
                    return Step::Pop;
                };
                while *next < *end {
                    let e = *next;
                    *next += 1;
                    if !*first {
                        sink.put(F::SEPARATOR);
                    }
                    *first = false;
                    if let Some(frame) = self.slot(self.resolve(element, e), sink) {
                        return Step::Push(frame);
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
                keys,
                next,
                end,
                first,
                value_due,
            } => {
                let (Some(entries), Some(key_node), Some(value_node)) =
                    (self.node(*entries), self.node(*keys), self.node(*keys + 1))
                else {
                    return Step::Pop;
                };
                // The keys and values are read at the entries' slot.
                let base = entries.leaf.offset();
                if *value_due {
                    *value_due = false;
                    let e = *next;
                    *next += 1;
                    if let Some(frame) = self.slot(self.resolve(value_node, base + e), sink) {
                        return Step::Push(frame);
                    }
                    if sink.blocked() {
                        return Step::Stay;
                    }
                }
                while *next < *end {
                    let e = *next;
                    // A map's keys are data: `"key":null` whatever `omit_nulls` says.
                    if !entries.leaf.is_valid(e) {
                        *next += 1;
                        continue;
                    }
                    if !*first {
                        sink.put(F::SEPARATOR);
                    }
                    *first = false;
                    let name = self
                        .resolve(key_node, base + e)
                        .map(|(key, k)| key.bytes_value(self.nodes, k))
                        .unwrap_or_default();
                    sink.quoted(name, Body::Text, F::KEY_CLOSE);
                    if sink.blocked() {
                        *value_due = true;
                        return Step::Stay;
                    }
                    *next += 1;
                    if let Some(frame) = self.slot(self.resolve(value_node, base + e), sink) {
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
    //! Where each encoder's plan is, and the general walk on its own (the
    //! byte-for-byte checks of both paths are in `rows`).

    use super::super::rows::tests::{encode, walk, walk_only};
    use super::{DEFAULT_PLAN, Encoder, EncoderBuilder, Frame};
    use crate::array::{ArrayView, RecordBatch};
    use crate::json::{DEFAULT_DEPTH, EncoderOptions, JsonError, JsonFormat};
    use core::mem::size_of_val;
    use std::format;
    use std::string::{String, ToString};
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
        // No inline plan at all: the same, on the heap, and a smaller encoder.
        let small: Encoder<'_, DEFAULT_DEPTH, 0> =
            EncoderBuilder::new(lines, options).batch(&narrow).unwrap();
        let plan = small.plan.as_ref().unwrap();
        assert_eq!(plan.columns(), Some(0..DEFAULT_PLAN));
        assert!(!plan.is_inline());
        assert!(size_of_val(&small) * 2 < size_of_val(&planned));
    }

    #[test]
    fn a_view_is_planned_inline_or_refused_and_never_on_the_heap() {
        // The no-alloc path's batch: planned inline when the plan holds it, else refused, as
        // without `alloc`, even in a build with it (a `no_alloc::Encoder` never allocates).
        let (options, lines) = (EncoderOptions::default(), JsonFormat::LineDelimited);
        for columns in [DEFAULT_PLAN, DEFAULT_PLAN + 1] {
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
            let view: crate::no_alloc::Batch<'_, 64> = reader.batch(0).unwrap();
            let expected = encode(&mut walk(&batch, lines, options), 64, 64);
            let refused: Result<crate::no_alloc::Encoder, _> = Encoder::new(&view, lines, options);
            if columns > DEFAULT_PLAN {
                let error = refused.unwrap_err();
                let arrays = JsonError::TooManyArrays {
                    arrays: columns,
                    limit: DEFAULT_PLAN,
                };
                assert_eq!(error, arrays);
                assert_eq!(
                    error.to_string(),
                    "the schema has 33 arrays (columns, children, dictionary values), more than \
                     the JSON encoder's plan holds (32, its PLAN)"
                );
            }
            for size in [1, 7, 64, 300, 4096] {
                let mut encoder: crate::no_alloc::Encoder<'_, DEFAULT_DEPTH, 64> =
                    Encoder::new(&view, lines, options).unwrap();
                assert!(encoder.plan.as_ref().unwrap().is_inline());
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
        let mut walked: Encoder<'_> = walk_only(builder.array(&array).unwrap());
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
