//! The fast path: whole rows written straight into the caller's buffer while they fit.
//!
//! [`write`] takes the rows from the encoder's current one on, following the encoder's
//! [`Plan`]. Before each piece of a row it checks that the piece's worst case fits; when one does
//! not, the row is taken back whole (the sink rewinds to where the row began) and left to the
//! general walk, which can stop at any byte; the walk in turn hands the row's members back to
//! [`members`], which writes them while they fit and one more, crossing the end of the buffer,
//! through a window on the stack and the sink's spill. So the walk writes only members longer
//! than the spill (over the same plan nodes); nothing else here leaves output
//! waiting in the spill or a stream, and since both paths write the same bytes for a member,
//! where one hands over to the other never shows in the output.
//!
//! A batch of one column (or one array) has its row's pieces pre-built (`,{"a":`, `}`, `,{}`).
//! A flat column also has a loop of its own per type: each row is written into a fixed
//! [`WINDOW`] of the buffer with no per-value dispatch, the validity read 64 rows at a time, and
//! the loop ends where less than a window is left. The elements of a list of a flat type, and
//! the entries of a text-keyed map of flat keys and values, have a loop per type as well. Bytes
//! of the buffer past the reported output may be overwritten.
//!
//! Values are written by `value`'s writers (the walk's as well), punctuation comes from
//! `framing`. It uses the plan, the sink, the escapes and `value`; the walk (`encoder`) calls it
//! and it knows nothing of the walk.

use super::escape;
use super::framing::{Framing, NULL, PIECE, Piece, RowPieces, Syntax, TOKEN, padded};
use super::plan::{self, KEY, Plan, PlanNode, Shape};
use super::plan::{Leaf, LeafKind};
use super::sink::{Body, SPILL, Sink, Spill};
use super::value::{self, Context, VALUE_TEXT, f64_text, fixed_text, i32_text, long_text};
use crate::view::{self, Offset, Table};
use core::cell::Cell;
use core::marker::PhantomData;

/// A row did not fit: the caller rewinds the sink to the row's start.
pub(crate) struct Full;

/// Whether a piece fitted.
type Fit = Result<(), Full>;

/// The plan and what it was compiled from: the view's nodes.
pub(crate) struct Compiled<'p, 'b, T: ?Sized, const N: usize> {
    pub(crate) plan: &'p Plan<'b, N>,
    pub(crate) nodes: &'p T,
}

/// Writes rows `*row..rows` while they fit, advancing `*row` past each one written.
pub(crate) fn write<'b, T: Table<'b> + ?Sized, F: Syntax, const N: usize>(
    compiled: &Compiled<'_, 'b, T, N>,
    sink: &mut Sink<'_, '_, 'b>,
    framing: &mut Framing,
    row: &mut usize,
    rows: usize,
    cx: Context,
) {
    let Compiled { plan, nodes } = *compiled;
    let Some(writer) = Writer::<_, F, N>::new(plan, nodes, framing, cx) else {
        return;
    };
    let single = Single::new::<F, N>(plan, framing, cx);
    while *row < rows {
        if let Some(single) = &single
            && !framing.first_row
        {
            single.rows(&writer, sink, row, rows);
            if *row >= rows {
                return;
            }
        }
        // Several columns: all the rows. One: the row its loop stopped at (the first row, or
        // one its window did not hold), then back to the loop.
        let end = if single.is_some() { *row + 1 } else { rows };
        if !writer.rows(sink, framing, row, end) {
            return;
        }
    }
}

/// Writes the members of row `r` from plan column `from` on (`*first`: no member written yet),
/// up to the end of the plan's columns or the end of the buffer, and returns the plan column of
/// the first not written. Near the end of the buffer, where the fast path's windows want more
/// room than is left, a member goes through a window on the stack and may cross the end (the
/// sink's spill holds the rest, and the row goes on in the next buffer). The general walk
/// writes the first member not written (one longer than the spill) and hands back here after
/// it.
#[inline(never)]
pub(crate) fn members<'b, T: Table<'b> + ?Sized, F: Syntax, const N: usize>(
    compiled: &Compiled<'_, 'b, T, N>,
    from: usize,
    r: usize,
    first: &mut bool,
    sink: &mut Sink<'_, '_, 'b>,
    cx: Context,
) -> usize {
    let Compiled { plan, nodes } = *compiled;
    let writer = Writer::<_, F, N>::bare(plan, nodes, cx);
    let end = plan.columns().map_or(from, |columns| columns.end);
    for column in from..end {
        let Some(member) = plan.node(column) else {
            return column;
        };
        let (mark, was_first) = (sink.written(), *first);
        if writer.member(member, r, first, sink).is_err() {
            sink.rewind(mark);
            *first = was_first;
            if !writer.spilled_member(member, r, first, sink) {
                return column;
            }
            if sink.blocked() {
                return column + 1;
            }
        }
    }
    end
}

/// Writes `bytes` if they fit.
#[inline(always)]
fn put(sink: &mut Sink<'_, '_, '_>, bytes: &[u8]) -> Fit {
    if sink.room() < bytes.len() {
        return Err(Full);
    }
    sink.put(bytes);
    Ok(())
}

/// Writes text of at most `N` bytes that `write` puts at the start of a window of the buffer.
#[inline(always)]
fn windowed<const N: usize>(
    sink: &mut Sink<'_, '_, '_>,
    write: impl FnOnce(&mut [u8; N]) -> usize,
) -> Fit {
    let window = sink.tail::<N>().ok_or(Full)?;
    let n = write(window);
    sink.advance(n);
    Ok(())
}

/// Writes `bytes` between quotes, escaped as `body`, if the worst case fits (or the text needs
/// no escaping and fits as it is).
#[inline(always)]
fn quoted<'b>(sink: &mut Sink<'_, '_, 'b>, bytes: &'b [u8], body: Body) -> Fit {
    if sink.room() > body.worst(bytes).saturating_add(2) {
        sink.quoted(bytes, body, b"\"");
        return Ok(());
    }
    if body == Body::Text && sink.clean_text(bytes, b"\"") {
        return Ok(());
    }
    Err(Full)
}

/// Writes the value in (valid) slot `i` of a flat leaf.
#[inline(always)]
fn flat<'b>(leaf: &Leaf<'b>, i: usize, sink: &mut Sink<'_, '_, 'b>, cx: Context) -> Fit {
    match leaf.kind {
        LeafKind::Utf8 => text(sink, leaf.text_range::<i32>(i), leaf.values()),
        LeafKind::LargeUtf8 => text(sink, leaf.text_range::<i64>(i), leaf.values()),
        _ => windowed::<VALUE_TEXT>(sink, |w| fixed_text(leaf, i, w, cx)),
    }
}

/// Writes the text `values[start..end]` between quotes: copied as it is when it needs no
/// escaping (checked while copying), else escaped if the worst case fits.
#[inline(always)]
fn text<'b>(sink: &mut Sink<'_, '_, 'b>, (start, end): (usize, usize), values: &'b [u8]) -> Fit {
    let bytes = values.get(start..end).unwrap_or_default();
    if sink.clean_text(bytes, b"\"") {
        return Ok(());
    }
    if let Some(window) = short_window(values, start, bytes.len())
        && sink.short_escaped(window, bytes.len())
    {
        return Ok(());
    }
    quoted(sink, bytes, Body::Text)
}

/// The window [`escape::escape_short`] reads for text of `len` bytes at `values[start..]`, when
/// the text is short enough and the buffer holds the whole window.
#[inline(always)]
fn short_window(values: &[u8], start: usize, len: usize) -> Option<&[u8; escape::SHORT_WINDOW]> {
    if len > escape::SHORT_TEXT {
        return None;
    }
    values.get(start..)?.first_chunk()
}

/// Writes the elements `range` of a flat leaf, comma-separated (nulls as `null`), one loop per
/// type.
#[inline(never)]
fn flat_elements<'b, F: Syntax>(
    leaf: &Leaf<'b>,
    range: core::ops::Range<usize>,
    sink: &mut Sink<'_, '_, 'b>,
    cx: Context,
) -> Fit {
    match leaf.kind {
        LeafKind::Int32 => {
            elements::<F>(leaf, range, sink, |w, e| i32_text(w, leaf.value::<i32>(e)))
        }
        LeafKind::Int64 => elements::<F>(leaf, range, sink, |w, e| {
            long_text(w, leaf.value::<i64>(e), false, cx)
        }),
        LeafKind::Float64 => elements::<F>(leaf, range, sink, |w, e| {
            f64_text(w, leaf.value::<f64>(e), cx)
        }),
        LeafKind::Utf8 | LeafKind::LargeUtf8 | LeafKind::Other => {
            for e in range.clone() {
                if e > range.start {
                    put(sink, F::SEPARATOR)?;
                }
                if leaf.is_valid(e) {
                    match leaf.kind {
                        LeafKind::Utf8 => text(sink, leaf.text_range::<i32>(e), leaf.values())?,
                        LeafKind::LargeUtf8 => {
                            text(sink, leaf.text_range::<i64>(e), leaf.values())?
                        }
                        _ => put(sink, NULL)?,
                    }
                } else {
                    put(sink, NULL)?;
                }
            }
            Ok(())
        }
        _ => elements::<F>(leaf, range, sink, |w, e| fixed_text(leaf, e, w, cx)),
    }
}

/// The element loop of [`flat_elements`] for values of at most [`VALUE_TEXT`] bytes: each
/// element is written into a window of the buffer (a separator, then the value or `null`).
#[inline(always)]
fn elements<F: Syntax>(
    leaf: &Leaf<'_>,
    range: core::ops::Range<usize>,
    sink: &mut Sink<'_, '_, '_>,
    value: impl Fn(&mut [u8; VALUE_TEXT], usize) -> usize,
) -> Fit {
    let (out, pos) = sink.parts();
    let mut at = *pos;
    let separator = F::SEPARATOR.len();
    for e in range.clone() {
        let Some(window) = out
            .get_mut(at..at + ELEMENT_WINDOW)
            .and_then(|w| <&mut [u8; ELEMENT_WINDOW]>::try_from(w).ok())
        else {
            return Err(Full);
        };
        if let Some(head) = window.get_mut(..separator) {
            head.copy_from_slice(F::SEPARATOR);
        }
        let skip = usize::from(e == range.start);
        let value_at = separator - skip * separator;
        let Some(dst) = window
            .get_mut(value_at..value_at + VALUE_TEXT)
            .and_then(|w| <&mut [u8; VALUE_TEXT]>::try_from(w).ok())
        else {
            return Err(Full);
        };
        let n = if leaf.is_valid(e) {
            value(dst, e)
        } else {
            if let Some(null) = dst.first_chunk_mut::<4>() {
                *null = *NULL;
            }
            4
        };
        at += value_at + n.min(VALUE_TEXT);
    }
    *pos = at;
    Ok(())
}

/// Writes entries `range` of a text-keyed map whose keys and values are both flat leaves (not
/// dictionary-encoded, run-end encoded or a union), one loop per value type with no look-up by
/// shape per entry.
#[inline(never)]
fn flat_entries<'b, F: Syntax>(
    [entries, keys, values]: [&Leaf<'b>; 3],
    range: core::ops::Range<usize>,
    sink: &mut Sink<'_, '_, 'b>,
    cx: Context,
) -> Fit {
    let unread = |sink: &mut Sink<'_, '_, 'b>, _| put(sink, EMPTY_KEY);
    let keys = Some(keys);
    match values.kind {
        LeafKind::Int32 => entry_members::<F>(entries, keys, range, sink, cx, unread, |sink, j| {
            or_null(values, j, sink, |w| i32_text(w, values.value::<i32>(j)))
        }),
        LeafKind::Int64 => entry_members::<F>(entries, keys, range, sink, cx, unread, |sink, j| {
            or_null(values, j, sink, |w| {
                long_text(w, values.value::<i64>(j), false, cx)
            })
        }),
        LeafKind::Float64 => {
            entry_members::<F>(entries, keys, range, sink, cx, unread, |sink, j| {
                or_null(values, j, sink, |w| f64_text(w, values.value::<f64>(j), cx))
            })
        }
        _ => entry_members::<F>(entries, keys, range, sink, cx, unread, |sink, j| {
            flat_or(values, j, sink, cx, NULL)
        }),
    }
}

/// Writes the value in slot `j` of a flat leaf, or `null` (`""` for a key) when it is null.
#[inline(always)]
fn flat_or<'b>(
    leaf: &Leaf<'b>,
    j: usize,
    sink: &mut Sink<'_, '_, 'b>,
    cx: Context,
    null: &[u8],
) -> Fit {
    match leaf.is_valid(j) {
        true => flat(leaf, j, sink, cx),
        false => put(sink, null),
    }
}

/// Writes `null`, or the text `write` puts in a window of the buffer for valid slot `j`.
#[inline(always)]
fn or_null(
    leaf: &Leaf<'_>,
    j: usize,
    sink: &mut Sink<'_, '_, '_>,
    write: impl FnOnce(&mut [u8; VALUE_TEXT]) -> usize,
) -> Fit {
    match leaf.is_valid(j) {
        true => windowed::<VALUE_TEXT>(sink, write),
        false => put(sink, NULL),
    }
}

/// Writes entries `range` of a text-keyed map as members `"key":value` (`entries` is the struct
/// of its keys and values): a null entry is left out, a null value written (the keys are data).
/// The keys are a flat leaf's text (`flat_keys`) or written by `key`.
#[inline(always)]
fn entry_members<'b, F: Syntax>(
    entries: &Leaf<'b>,
    flat_keys: Option<&Leaf<'b>>,
    range: core::ops::Range<usize>,
    sink: &mut Sink<'_, '_, 'b>,
    cx: Context,
    key: impl Fn(&mut Sink<'_, '_, 'b>, usize) -> Fit,
    value: impl Fn(&mut Sink<'_, '_, 'b>, usize) -> Fit,
) -> Fit {
    let mut first = true;
    for e in range {
        if !entries.is_valid(e) {
            continue;
        }
        if !first {
            put(sink, F::SEPARATOR)?;
        }
        first = false;
        let j = entries.offset().wrapping_add(e);
        // Text keys are validated not null; were one null, it is written as `""`.
        match flat_keys {
            Some(keys) => flat_or(keys, j, sink, cx, EMPTY_KEY)?,
            None => key(sink, j)?,
        }
        put(sink, F::KEY_VALUE)?;
        value(sink, j)?;
    }
    Ok(())
}

/// A map key that is null (which validation rules out) or cannot be read.
const EMPTY_KEY: &[u8] = b"\"\"";

/// Bytes of the buffer one element of [`elements`] may touch: a separator and a value window.
const ELEMENT_WINDOW: usize = TOKEN + VALUE_TEXT;

/// Writes `len` bytes of a short piece (at most 8) with one fixed-size copy.
#[inline(always)]
fn short_piece(sink: &mut Sink<'_, '_, '_>, bytes: &[u8; 8], len: usize) -> Fit {
    let window = sink.tail::<8>().ok_or(Full)?;
    *window = *bytes;
    sink.advance(len);
    Ok(())
}

/// Writes rows by following the plan.
struct Writer<'p, 'b, T: ?Sized, F, const N: usize> {
    plan: &'p Plan<'b, N>,
    /// The plan's nodes, read once from where they are kept (inline or on the heap).
    compiled: &'p [PlanNode<'b>],
    /// The view the plan was compiled from.
    nodes: &'p T,
    cx: Context,
    /// Before a row: the separator and `{` (a batch) or the separator (an array), and the same
    /// without the separator for the first row.
    open: [[u8; 8]; 2],
    open_len: [usize; 2],
    /// After a row: `}` and the line end (a batch), or the line end (an array).
    close: [u8; 8],
    close_len: usize,
    /// The run each run-end encoded node (by the plan index of its run ends) read last.
    runs: [Cell<u32>; N],
    syntax: PhantomData<F>,
}

impl<'p, 'b, T: Table<'b> + ?Sized, F: Syntax, const N: usize> Writer<'p, 'b, T, F, N> {
    fn new(plan: &'p Plan<'b, N>, nodes: &'p T, framing: &Framing, cx: Context) -> Option<Self> {
        let RowPieces {
            open,
            open_first,
            close,
            ..
        } = framing.pieces::<F>(plan.columns().is_some(), b"", cx.options.omit_nulls)?;
        (open.len <= 8 && close.len <= 8).then_some(())?;
        Some(Writer {
            open: [*open.bytes.first_chunk()?, *open_first.bytes.first_chunk()?],
            open_len: [open.len, open_first.len],
            close: *close.bytes.first_chunk()?,
            close_len: close.len,
            ..Self::bare(plan, nodes, cx)
        })
    }

    /// A writer of values and members only (its row pieces empty).
    fn bare(plan: &'p Plan<'b, N>, nodes: &'p T, cx: Context) -> Self {
        Writer {
            plan,
            compiled: plan.all(),
            nodes,
            cx,
            open: [[0; 8]; 2],
            open_len: [0; 2],
            close: [0; 8],
            close_len: 0,
            runs: core::array::from_fn(|_| Cell::new(0)),
            syntax: PhantomData,
        }
    }

    /// Plan node `n`.
    #[inline(always)]
    fn plan_node(&self, n: usize) -> Option<&'p PlanNode<'b>> {
        self.compiled.get(n)
    }

    /// Plan nodes `range` (the members of an object).
    #[inline(always)]
    fn plan_nodes(&self, range: core::ops::Range<usize>) -> &'p [PlanNode<'b>] {
        self.compiled.get(range).unwrap_or_default()
    }

    /// Writes rows `*row..rows` with their framing while they fit, advancing `*row` past each
    /// one written; `false` if one did not fit (it is taken back).
    ///
    /// One call for many rows, with the row's member loop inlined: the loop's set-up (saved
    /// registers, constants of the inlined formatters) is paid once per call, not once per row
    /// (about 50 instructions a row, 2% of the ten-column file's instructions under callgrind).
    #[inline(never)]
    fn rows(
        &self,
        sink: &mut Sink<'_, '_, 'b>,
        framing: &mut Framing,
        row: &mut usize,
        rows: usize,
    ) -> bool {
        while *row < rows {
            let mark = sink.written();
            if self.row(*row, sink, framing).is_err() {
                sink.rewind(mark);
                return false;
            }
            framing.first_row = false;
            *row += 1;
        }
        true
    }

    /// Writes row `r` with its framing.
    #[inline(always)]
    fn row(&self, r: usize, sink: &mut Sink<'_, '_, 'b>, framing: &Framing) -> Fit {
        let first = usize::from(framing.first_row);
        if let (Some(open), Some(len)) = (self.open.get(first), self.open_len.get(first)) {
            short_piece(sink, open, *len)?;
        }
        match self.plan.columns() {
            Some(columns) => self.row_members(columns, r, sink)?,
            None => self.slot(0, r, sink)?,
        }
        short_piece(sink, &self.close, self.close_len)
    }

    /// The view node of plan node `node` (see [`PlanNode::view`]).
    #[inline(always)]
    fn view(&self, node: &PlanNode<'b>) -> Option<view::Node<'b>> {
        node.view(self.nodes)
    }

    /// Follows dictionaries, unions and run ends from slot `i` of node `n` to the node and slot
    /// holding the value; `None` when the value is null.
    #[inline(always)]
    fn resolve(&self, n: usize, i: usize) -> Option<(&'p PlanNode<'b>, usize)> {
        self.resolve_from(self.plan_node(n)?, i)
    }

    /// [`Writer::resolve`] from a node.
    #[inline(always)]
    fn resolve_from(&self, node: &'p PlanNode<'b>, i: usize) -> Option<(&'p PlanNode<'b>, usize)> {
        plan::resolve(self.compiled, node, i, &self.runs)
    }

    /// Writes the members `nodes` of an object at slot `i` (a struct value's; a row's are
    /// written by [`Writer::row_members`], the same loop inlined into the row loop).
    fn members(
        &self,
        nodes: core::ops::Range<usize>,
        i: usize,
        sink: &mut Sink<'_, '_, 'b>,
    ) -> Fit {
        self.row_members(nodes, i, sink)
    }

    /// [`Writer::members`], inlined.
    #[inline(always)]
    fn row_members(
        &self,
        nodes: core::ops::Range<usize>,
        i: usize,
        sink: &mut Sink<'_, '_, 'b>,
    ) -> Fit {
        let mut first = true;
        for member in self.plan_nodes(nodes) {
            self.member(member, i, &mut first, sink)?;
        }
        Ok(())
    }

    /// Writes `member` of the object at slot `i`: its key and value, or nothing for a null one
    /// when nulls are omitted (`*first`: no member written yet).
    #[inline(always)]
    fn member(
        &self,
        member: &'p PlanNode<'b>,
        i: usize,
        first: &mut bool,
        sink: &mut Sink<'_, '_, 'b>,
    ) -> Fit {
        if self.flat_member(member, i, first, sink)? {
            return Ok(());
        }
        // A null member is left out when nulls are omitted.
        let valid = member.leaf.is_valid(i);
        if !valid && self.cx.options.omit_nulls {
            return Ok(());
        }
        // A valid struct or list under a pre-built key: the key and the bracket as one copy,
        // then its members (flat ones written here rather than by a call per struct) or
        // elements.
        // The bracket padded to a fixed-size copy (a copy of a length chosen at run time would
        // be a call to `memcpy`).
        let (open, open_len) = match member.shape {
            Shape::Struct { .. } => (const { padded(F::OBJECT_OPEN) }, F::OBJECT_OPEN.len()),
            Shape::List { .. } => (const { padded(F::LIST_OPEN) }, F::LIST_OPEN.len()),
            _ => ([0; TOKEN], 0),
        };
        if open_len > 0
            && valid
            && let Some((key, key_len)) = member.key::<F>(*first)
        {
            let window = sink.tail::<{ KEY - 1 + TOKEN }>().ok_or(Full)?;
            if let Some(head) = window.first_chunk_mut::<{ KEY - 1 }>() {
                *head = *key;
            }
            if let Some(bracket) = window
                .get_mut(key_len..)
                .and_then(|w| w.first_chunk_mut::<TOKEN>())
            {
                *bracket = open;
            }
            sink.advance(key_len + open_len);
            match member.shape {
                Shape::Struct { first: child, len } => {
                    let (child, j) = (child as usize, member.leaf.offset() + i);
                    let mut inner_first = true;
                    for inner in self.plan_nodes(child..child + len as usize) {
                        if !self.flat_member(inner, j, &mut inner_first, sink)? {
                            self.other_member(inner, j, &mut inner_first, sink)?;
                        }
                    }
                    put(sink, F::OBJECT_CLOSE)?;
                }
                Shape::List { child, .. } => {
                    self.elements(member, child, i, sink)?;
                    put(sink, F::LIST_CLOSE)?;
                }
                _ => {}
            }
            *first = false;
            return Ok(());
        }
        self.other_member(member, i, first, sink)
    }

    /// Writes the common member, a valid flat value (its own or its dictionary's) under a
    /// pre-built key, at slot `i`, a fixed-width value into the same window of the buffer as
    /// the key; returns whether `member` was one (else nothing is written).
    #[inline(always)]
    fn flat_member(
        &self,
        member: &'p PlanNode<'b>,
        i: usize,
        first: &mut bool,
        sink: &mut Sink<'_, '_, 'b>,
    ) -> Result<bool, Full> {
        // The value's node and slot: the member's own, or its dictionary's.
        let (node, i) = match member.shape {
            Shape::Flat => (member, i),
            Shape::Dictionary { values } if member.leaf.is_valid(i) => {
                match self.plan_node(values as usize) {
                    Some(node) if node.shape == Shape::Flat => (node, member.leaf.index(i)),
                    _ => return Ok(false),
                }
            }
            _ => return Ok(false),
        };
        if !node.leaf.is_valid(i) {
            return Ok(false);
        }
        let Some((key, key_len)) = member.key::<F>(*first) else {
            return Ok(false);
        };
        let window = sink.tail::<{ KEY - 1 + VALUE_TEXT }>().ok_or(Full)?;
        if let Some(head) = window.first_chunk_mut::<{ KEY - 1 }>() {
            *head = *key;
        }
        if matches!(node.leaf.kind, LeafKind::Utf8 | LeafKind::LargeUtf8) {
            sink.advance(key_len);
            flat(&node.leaf, i, sink, self.cx)?;
        } else {
            let n = match window
                .get_mut(key_len..)
                .and_then(|value| value.first_chunk_mut::<VALUE_TEXT>())
            {
                Some(value) => fixed_text(&node.leaf, i, value, self.cx),
                None => 0,
            };
            sink.advance(key_len + n);
        }
        *first = false;
        Ok(true)
    }

    /// Writes `member` of the object at slot `i` where the buffer has too little room left for
    /// [`Writer::member`]: into a window on the stack (room for a short value's [`SPILL`]
    /// bytes after a key), then into the sink, split between the buffer and its spill as the
    /// general walk splits a short value; returns whether it was written (not if the window or
    /// the spill could not hold it).
    #[inline(never)]
    fn spilled_member(
        &self,
        member: &'p PlanNode<'b>,
        i: usize,
        first: &mut bool,
        sink: &mut Sink<'_, '_, 'b>,
    ) -> bool {
        let mut window = [0; 2 * SPILL];
        let (mut spill, mut stream) = (Spill::new(), None);
        let mut scratch = Sink::new(&mut window, &mut spill, &mut stream);
        let was_first = *first;
        let fitted = self.member(member, i, first, &mut scratch).is_ok() && !scratch.blocked();
        let written = scratch.written();
        // What does not fit the buffer must fit what is left of the spill (it may already
        // hold the row's opening, written past a buffer of a byte or two).
        if !fitted || written.saturating_sub(sink.room()) > sink.spill_room() {
            *first = was_first;
            return false;
        }
        sink.put(window.get(..written).unwrap_or_default());
        true
    }

    /// Writes any member at slot `i`: its key and value, or nothing for a null one when
    /// nulls are omitted.
    fn other_member(
        &self,
        member: &'p PlanNode<'b>,
        i: usize,
        first: &mut bool,
        sink: &mut Sink<'_, '_, 'b>,
    ) -> Fit {
        let slot = self.resolve_from(member, i);
        if slot.is_none() && self.cx.options.omit_nulls {
            return Ok(());
        }
        self.key(member, *first, sink)?;
        *first = false;
        match slot {
            None => put(sink, NULL),
            Some((node, j)) if node.shape == Shape::Flat => flat(&node.leaf, j, sink, self.cx),
            Some((node, j)) => self.value(node, j, sink),
        }
    }

    /// Writes the elements of list `node` at slot `i` (in node `child`), comma-separated.
    #[inline(always)]
    fn elements(
        &self,
        node: &'p PlanNode<'b>,
        child: u32,
        i: usize,
        sink: &mut Sink<'_, '_, 'b>,
    ) -> Fit {
        let core::ops::Range { start, end } = node.list_range(i);
        let child = child as usize;
        match self.plan_node(child) {
            Some(element) if element.shape == Shape::Flat => {
                flat_elements::<F>(&element.leaf, start..end, sink, self.cx)
            }
            _ => {
                for e in start..end {
                    if e > start {
                        put(sink, F::SEPARATOR)?;
                    }
                    self.slot(child, e, sink)?;
                }
                Ok(())
            }
        }
    }

    /// Writes a member's key, with a comma before it unless it is the `first`.
    #[inline(always)]
    fn key(&self, member: &'p PlanNode<'b>, first: bool, sink: &mut Sink<'_, '_, 'b>) -> Fit {
        if let Some((bytes, len)) = member.key::<F>(first) {
            let window = sink.tail::<{ KEY - 1 }>().ok_or(Full)?;
            window.copy_from_slice(bytes);
            sink.advance(len);
            return Ok(());
        }
        if !first {
            put(sink, F::SEPARATOR)?;
        }
        let name = member.name.as_bytes();
        let quoted = name.len().saturating_mul(6).saturating_add(1);
        if sink.room() < quoted.saturating_add(F::KEY_CLOSE.len()) {
            return Err(Full);
        }
        sink.quoted(name, Body::Text, F::KEY_CLOSE);
        Ok(())
    }

    /// Writes slot `i` of plan node `n`: `null`, or its value, resolved.
    #[inline(always)]
    fn slot(&self, n: usize, i: usize, sink: &mut Sink<'_, '_, 'b>) -> Fit {
        match self.resolve(n, i) {
            None => put(sink, NULL),
            Some((node, j)) => self.value(node, j, sink),
        }
    }

    /// Writes the (valid, resolved) value in slot `i` of `node`.
    fn value(&self, node: &'p PlanNode<'b>, i: usize, sink: &mut Sink<'_, '_, 'b>) -> Fit {
        let cx = self.cx;
        match node.shape {
            Shape::Flat => flat(&node.leaf, i, sink, cx),
            Shape::Short(kind) => {
                if sink.room() < SPILL {
                    return Err(Full);
                }
                if let Some(view) = self.view(node) {
                    value::short(sink, kind, &view, i, cx);
                }
                Ok(())
            }
            Shape::Bytes(body) => {
                let bytes = node.bytes_value(self.nodes, i);
                quoted(sink, bytes, body)
            }
            Shape::Extension => {
                let Some(view) = self.view(node) else {
                    return Ok(());
                };
                // Room for the value whole (JSON text as it is or escaped as a string), so that
                // the walk's writer never leaves part of it for later.
                let text = match view.extension {
                    view::Extension::Json => view.bytes_value(i).len().saturating_mul(6) + 2,
                    _ => 0,
                };
                if sink.room() < text.max(SPILL) {
                    return Err(Full);
                }
                value::extension(&view, i, sink);
                Ok(())
            }
            Shape::Struct { first, len } => {
                put(sink, F::OBJECT_OPEN)?;
                let first = first as usize;
                self.members(first..first + len as usize, node.leaf.offset() + i, sink)?;
                put(sink, F::OBJECT_CLOSE)
            }
            Shape::List { child, .. } => {
                put(sink, F::LIST_OPEN)?;
                self.elements(node, child, i, sink)?;
                put(sink, F::LIST_CLOSE)
            }
            Shape::Map { entries } => {
                put(sink, F::OBJECT_OPEN)?;
                self.entries(node, entries, i, sink)?;
                put(sink, F::OBJECT_CLOSE)
            }
            Shape::Null | Shape::Dictionary { .. } | Shape::Union { .. } | Shape::RunEnd { .. } => {
                debug_assert!(false, "slots are resolved before their value is written");
                put(sink, NULL)
            }
        }
    }

    /// Writes the entries of text-keyed map `node` at slot `i` (entries in node `entries`) as
    /// members `"key":value`; a null entry is left out, a null value written (the keys are data).
    fn entries(
        &self,
        node: &'p PlanNode<'b>,
        entries: u32,
        i: usize,
        sink: &mut Sink<'_, '_, 'b>,
    ) -> Fit {
        let Some(entries) = self.plan_node(entries as usize) else {
            return Ok(());
        };
        let Shape::Struct { first: keys, .. } = entries.shape else {
            debug_assert!(false, "a map's entries are a struct");
            return Ok(());
        };
        let (keys, values) = (keys as usize, keys as usize + 1);
        let (start, end) = node.leaf.text_range::<i32>(i);
        if let (Some(key_node), Some(value_node)) = (self.plan_node(keys), self.plan_node(values))
            && key_node.shape == Shape::Flat
            && value_node.shape == Shape::Flat
        {
            let leaves = [&entries.leaf, &key_node.leaf, &value_node.leaf];
            return flat_entries::<F>(leaves, start..end, sink, self.cx);
        }
        // Keys of another form (a dictionary's, say) through the resolver.
        let flat_keys = self.plan_node(keys).filter(|k| k.shape == Shape::Flat);
        let flat_keys = flat_keys.map(|k| &k.leaf);
        let key = |sink: &mut Sink<'_, '_, 'b>, j| match self.resolve(keys, j) {
            Some((key, k)) => self.value(key, k, sink),
            None => put(sink, EMPTY_KEY),
        };
        let value = |sink: &mut Sink<'_, '_, 'b>, j| self.slot(values, j, sink);
        entry_members::<F>(
            &entries.leaf,
            flat_keys,
            start..end,
            sink,
            self.cx,
            key,
            value,
        )
    }
}

/// Bytes of the buffer one row of a single-column loop may touch: a 32-byte piece, and a value
/// window (the closing piece's 8 bytes are written within it).
const WINDOW: usize = PIECE + VALUE_TEXT;

/// The loop for a batch of one flat column, or an array of a flat type, after its first row.
struct Single<'b> {
    leaf: Leaf<'b>,
    /// The column is flat, with a loop of its own type; else values go through the [`Writer`].
    flat: bool,
    cx: Context,
    /// Before a value: `,{"a":` (a batch) or `,` (an array).
    open: Piece,
    /// After a value: `}` and the line end (a batch), or the line end (an array).
    close: Piece,
    /// A whole null row: `,{}`, `,{"a":null}` or `,null`, and the line end.
    null: Piece,
}

impl<'b> Single<'b> {
    fn new<F: Syntax, const N: usize>(
        plan: &Plan<'b, N>,
        framing: &Framing,
        cx: Context,
    ) -> Option<Self> {
        let batch = match plan.columns() {
            Some(columns) if columns.len() == 1 => true,
            Some(_) => return None,
            None => false,
        };
        let node = plan.node(0)?;
        let flat = node.shape == Shape::Flat && node.leaf.kind != LeafKind::Other;
        let key = match batch {
            true => node.key::<F>(true).and_then(|(key, len)| key.get(..len))?,
            false => b"",
        };
        let RowPieces {
            open, close, null, ..
        } = framing.pieces::<F>(batch, key, cx.options.omit_nulls)?;
        (close.len <= 8).then_some(())?;
        Some(Single {
            leaf: node.leaf,
            flat,
            cx,
            open,
            close,
            null,
        })
    }

    /// Writes rows `*row..rows` while a window is left (while they fit, for a column that is not
    /// flat).
    fn rows<F: Syntax, const N: usize>(
        &self,
        writer: &Writer<'_, 'b, impl Table<'b> + ?Sized, F, N>,
        sink: &mut Sink<'_, '_, 'b>,
        row: &mut usize,
        rows: usize,
    ) {
        if !self.flat {
            self.nested_rows(writer, sink, row, rows);
            return;
        }
        let (out, pos) = sink.parts();
        let cx = self.cx;
        let leaf = &self.leaf;
        match self.leaf.kind {
            LeafKind::Utf8 => self.text_rows::<i32>(out, pos, row, rows),
            LeafKind::LargeUtf8 => self.text_rows::<i64>(out, pos, row, rows),
            LeafKind::Int32 => self.typed_rows::<4>(out, pos, row, rows, |w, v| {
                i32_text(w, i32::from_le_bytes(v))
            }),
            LeafKind::Float64 => self.typed_rows::<8>(out, pos, row, rows, |w, v| {
                f64_text(w, f64::from_le_bytes(v), cx)
            }),
            LeafKind::Int64 => self.typed_rows::<8>(out, pos, row, rows, |w, v| {
                long_text(w, i64::from_le_bytes(v), false, cx)
            }),
            _ => self.fixed_rows(out, pos, row, rows, |w, i| fixed_text(leaf, i, w, cx)),
        }
    }

    /// The loop for a column that is not flat: the pieces around each value pre-built, the value
    /// written by the [`Writer`]; a row that does not fit is taken back.
    #[inline(never)]
    fn nested_rows<F: Syntax, const N: usize>(
        &self,
        writer: &Writer<'_, 'b, impl Table<'b> + ?Sized, F, N>,
        sink: &mut Sink<'_, '_, 'b>,
        row: &mut usize,
        rows: usize,
    ) {
        let piece = |sink: &mut Sink<'_, '_, 'b>, piece: &Piece| -> Fit {
            let window = sink.tail::<PIECE>().ok_or(Full)?;
            *window = piece.bytes;
            sink.advance(piece.len);
            Ok(())
        };
        while *row < rows {
            let mark = sink.written();
            let written = match writer.resolve(0, *row) {
                None => piece(sink, &self.null),
                Some((node, i)) => piece(sink, &self.open)
                    .and_then(|()| writer.value(node, i, sink))
                    .and_then(|()| piece(sink, &self.close)),
            };
            if written.is_err() {
                sink.rewind(mark);
                return;
            }
            *row += 1;
        }
    }

    /// The loop for values of at most [`VALUE_TEXT`] bytes, which `value` writes into a window
    /// from the slot's index (one copy of the loop per type).
    #[inline(never)]
    fn fixed_rows(
        &self,
        out: &mut [u8],
        pos: &mut usize,
        row: &mut usize,
        rows: usize,
        value: impl Fn(&mut [u8; VALUE_TEXT], usize) -> usize,
    ) {
        let (mut at_pos, mut at_row) = (*pos, *row);
        while at_row < rows {
            let end = rows.min(at_row + 64);
            let mut valid_bits = self.leaf.validity_word(at_row);
            for i in at_row..end {
                let Some(n) = self.fixed_row(out, at_pos, valid_bits, |w| value(w, i)) else {
                    *pos = at_pos;
                    *row = i;
                    return;
                };
                at_pos += n;
                valid_bits >>= 1;
            }
            at_row = end;
        }
        *pos = at_pos;
        *row = at_row;
    }

    /// [`Single::fixed_rows`] for values of `W` little-endian bytes, read from one slice of the
    /// buffer.
    #[inline(never)]
    fn typed_rows<const W: usize>(
        &self,
        out: &mut [u8],
        pos: &mut usize,
        row: &mut usize,
        rows: usize,
        value: impl Fn(&mut [u8; VALUE_TEXT], [u8; W]) -> usize,
    ) {
        let (mut at_pos, mut at_row) = (*pos, *row);
        while at_row < rows {
            let end = rows.min(at_row + 64);
            let mut valid_bits = self.leaf.validity_word(at_row);
            for (k, bytes) in self.leaf.fixed::<W>(at_row..end).iter().enumerate() {
                let Some(n) = self.fixed_row(out, at_pos, valid_bits, |w| value(w, *bytes)) else {
                    *pos = at_pos;
                    *row = at_row + k;
                    return;
                };
                at_pos += n;
                valid_bits >>= 1;
            }
            at_row = end;
        }
        *pos = at_pos;
        *row = at_row;
    }

    /// Writes one row at `out[at..]` (valid when the low bit of `valid_bits` is set); returns its
    /// length, or `None` when less than a [`WINDOW`] is left.
    #[inline(always)]
    fn fixed_row(
        &self,
        out: &mut [u8],
        at: usize,
        valid_bits: u64,
        value: impl FnOnce(&mut [u8; VALUE_TEXT]) -> usize,
    ) -> Option<usize> {
        let open_len = self.open.len.min(PIECE);
        let window = out
            .get_mut(at..at + WINDOW)
            .and_then(|w| <&mut [u8; WINDOW]>::try_from(w).ok())?;
        let Some(head) = window.first_chunk_mut::<PIECE>() else {
            return Some(0);
        };
        if valid_bits & 1 == 0 {
            *head = self.null.bytes;
            return Some(self.null.len);
        }
        *head = self.open.bytes;
        let mut n = 0;
        if let Some(dst) = window
            .get_mut(open_len..open_len + VALUE_TEXT)
            .and_then(|w| <&mut [u8; VALUE_TEXT]>::try_from(w).ok())
        {
            n = value(dst).min(VALUE_TEXT - 8);
        }
        if let (Some(dst), Some(close)) = (
            window.get_mut(open_len + n..open_len + n + 8),
            self.close.bytes.first_chunk::<8>(),
        ) {
            dst.copy_from_slice(close);
        }
        Some(open_len + n + self.close.len)
    }

    /// Writes the opening piece, a quote and `text` escaped at `out[pos..]`, if the worst case
    /// fits; returns the length of the escaped text.
    #[cold]
    fn escaped(&self, out: &mut [u8], pos: usize, (start, end): (usize, usize)) -> Option<usize> {
        let open_len = self.open.len.min(PIECE);
        let values = self.leaf.values();
        let text = values.get(start..end).unwrap_or_default();
        let worst = PIECE + 2 + 8 + escape::SHORT_REACH + text.len().saturating_mul(6);
        let dst = out.get_mut(pos..pos.saturating_add(worst))?;
        let (_, body) = dst.get_mut(open_len..)?.split_first_mut()?;
        Some(match short_window(values, start, text.len()) {
            Some(window) => escape::escape_short(window, text.len(), body),
            None => escape::escape_into(text, body),
        })
    }

    /// The loop for text values (offsets of width `O`): each row checks its own room, and its
    /// value is checked for bytes to escape while it is copied.
    #[inline(never)]
    fn text_rows<O: Offset>(&self, out: &mut [u8], pos: &mut usize, row: &mut usize, rows: usize) {
        let (mut at_pos, mut at_row) = (*pos, *row);
        while at_row < rows {
            let end = rows.min(at_row + 64);
            let mut valid_bits = self.leaf.validity_word(at_row);
            for i in at_row..end {
                let Some(n) = self.text_row::<O>(out, at_pos, i, valid_bits & 1 != 0) else {
                    *pos = at_pos;
                    *row = i;
                    return;
                };
                at_pos += n;
                valid_bits >>= 1;
            }
            at_row = end;
        }
        *pos = at_pos;
        *row = at_row;
    }

    /// Writes text row `i` at `out[at..]`; returns its length, or `None` when it does not fit.
    #[inline(always)]
    fn text_row<O: Offset>(
        &self,
        out: &mut [u8],
        at: usize,
        i: usize,
        valid: bool,
    ) -> Option<usize> {
        if !valid {
            let dst = out
                .get_mut(at..at + PIECE)
                .and_then(|w| <&mut [u8; PIECE]>::try_from(w).ok())?;
            *dst = self.null.bytes;
            return Some(self.null.len);
        }
        let open_len = self.open.len.min(PIECE);
        let range = self.leaf.text_range::<O>(i);
        let text = self.leaf.values().get(range.0..range.1).unwrap_or_default();
        // Room for the text as it is; escaping it needs more, and is rare.
        let need = PIECE + 2 + 8 + text.len();
        let dst = out.get_mut(at..at.saturating_add(need))?;
        let head = dst.first_chunk_mut::<PIECE>()?;
        *head = self.open.bytes;
        let (quote, body) = dst.get_mut(open_len..)?.split_first_mut()?;
        *quote = b'"';
        let n = if escape::copy_if_clean(text, body) {
            text.len()
        } else {
            self.escaped(out, at, range)?
        };
        let tail_at = at + open_len + 1 + n;
        let (quote, rest) = out.get_mut(tail_at..tail_at + 9)?.split_first_mut()?;
        *quote = b'"';
        rest.copy_from_slice(self.close.bytes.first_chunk::<8>()?);
        Some(open_len + 1 + n + 1 + self.close.len)
    }
}

#[cfg(all(test, feature = "alloc"))]
pub(super) mod tests {
    //! The fast path hands over to the general walk wherever a buffer ends: these tests end the
    //! first buffer at every byte of the output, for every type, and compare with one call.

    use super::super::DEFAULT_PLAN;
    use crate::array::{ArrayView, RecordBatch};
    use crate::builder::{
        AppendValue, ArrayBuilder, BinaryBuilder, DictionaryBuilder, FixedSizeListBuilder,
        ListBuilder, MapBuilder, PrimitiveBuilder, RunEndBuilder, StringBuilder, StructBuilder,
        UnionBuilder,
    };
    use crate::datatype::{DataType, TimeUnit, UnionMode};
    use crate::json::{
        BinaryFormat, DEFAULT_DEPTH, Encoder, EncoderBuilder, EncoderOptions, JsonFormat, Syntax,
    };
    use std::string::String;
    use std::vec;
    use std::vec::Vec;

    /// Encodes with the first buffer `first` bytes long, then buffers of `rest` bytes.
    pub(crate) fn encode<const D: usize, const P: usize, F: Syntax>(
        encoder: &mut Encoder<'_, D, P, F>,
        first: usize,
        rest: usize,
    ) -> Vec<u8> {
        let mut out = Vec::new();
        let mut buffer = vec![0xEE; first.max(rest)];
        let mut size = first;
        loop {
            let progress = encoder.encode(&mut buffer[..size]);
            out.extend_from_slice(&buffer[..progress.written]);
            if progress.done {
                return out;
            }
            size = rest;
        }
    }

    /// An encoder of `batch` whose fast path is off: the general walk writes every row.
    pub(crate) fn walk<'b>(
        batch: &'b RecordBatch<'_>,
        format: JsonFormat,
        options: EncoderOptions,
    ) -> Encoder<'b> {
        walk_only(EncoderBuilder::new(format, options).batch(batch).unwrap())
    }

    /// `encoder` with its fast path off.
    pub(crate) fn walk_only<const D: usize, const P: usize, F: Syntax>(
        mut encoder: Encoder<'_, D, P, F>,
    ) -> Encoder<'_, D, P, F> {
        encoder.fast = false;
        encoder
    }

    /// `values`, the rows `nulls` null.
    fn nulls<T: Copy>(values: [T; 8], nulls: &[usize]) -> [Option<T>; 8] {
        core::array::from_fn(|k| (!nulls.contains(&k)).then_some(values[k]))
    }

    /// `values` through `f`, nulls kept.
    fn map<T, U>(values: [Option<T>; 8], f: impl Fn(T) -> U) -> [Option<U>; 8] {
        values.map(|v| v.map(&f))
    }

    /// Float16 bits: 1, NaN, -infinity, the least subnormal, -0 and the greatest finite.
    const HALVES: [u16; 8] = [0x3C00, 0, 0x7E00, 0xFC00, 1, 0, 0x8000, 0x7BFF];

    fn prim<T: crate::builder::Primitive + Copy>(
        data_type: DataType,
        values: &[Option<T>],
    ) -> ArrayView<'static> {
        let mut b = PrimitiveBuilder::<T>::with_data_type(data_type);
        b.extend_options(values.iter().copied());
        b.finish().unwrap()
    }

    type U8 = PrimitiveBuilder<u8>;
    type I32 = PrimitiveBuilder<i32>;
    type I64 = PrimitiveBuilder<i64>;
    type F64 = PrimitiveBuilder<f64>;
    type Strings = StringBuilder;

    const TEXTS: [Option<&str>; 8] = [
        Some("plain"),
        None,
        Some(""),
        Some("with \"quotes\" and \\ and \n and \u{1}"),
        Some("a longer value that goes past one block of sixty-four bytes, all of it plain"),
        Some("é😀"),
        None,
        Some("x"),
    ];

    /// One column of every type the encoder writes, eight rows each.
    fn columns() -> Vec<(&'static str, ArrayView<'static>)> {
        let ints = nulls([1i32, 0, -1, i32::MIN, 0, i32::MAX, 0, 99_999], &[1, 6]);
        let (nan, infinity) = (f64::NAN, f64::INFINITY);
        let floats = [0.1, 0.0, -0.0, nan, 1e300, -infinity, 123_456.789, 0.0];
        let floats = nulls(floats, &[1, 7]);
        let texts = |mut b: StringBuilder| {
            b.extend_options(TEXTS);
            b.finish().unwrap()
        };
        let mut binary = BinaryBuilder::new();
        binary.extend_options(TEXTS.map(|t| t.map(str::as_bytes)));
        let mut lists = ListBuilder::new(I32::new());
        lists.extend_options([
            Some(vec![Some(1), None, Some(3)]),
            None,
            Some(vec![]),
            Some(vec![Some(i32::MIN)]),
            Some(vec![None]),
            Some(vec![Some(5); 9]),
            Some(vec![Some(7)]),
            None,
        ]);
        let mut text_lists = ListBuilder::new_large(StringBuilder::new());
        text_lists.extend_options(TEXTS.map(|t| t.map(|t| vec![Some(t), None, Some("b")])));
        let mut fixed = FixedSizeListBuilder::new(F64::new(), 2);
        fixed.extend_options(floats.map(|f| f.map(|f| vec![Some(f), None])));
        let long = "long name that needs to be written from the field";
        let mut structs = StructBuilder::new()
            .with_child("x", I64::new())
            .with_child("name_of_19_bytes___", I32::new())
            .with_child("name_of_20_bytes____", I32::new())
            .with_child("name_of_21_bytes_____", I32::new())
            .with_child(long, Strings::new())
            .with_child("nested", ListBuilder::new(U8::new()));
        for (k, text) in TEXTS.iter().enumerate() {
            if k % 4 == 1 {
                structs.append_null();
                continue;
            }
            let b = &mut structs;
            let x = (k % 3 != 0).then(|| (k as i64).wrapping_mul(i64::MAX / 5));
            b.field_builder::<I64>(0).unwrap().append_value(x);
            let even = (k % 2 == 0).then_some(k as i32);
            for field in 1..4 {
                b.field_builder::<I32>(field).unwrap().append_value(even);
            }
            b.field_builder::<Strings>(4).unwrap().append_value(*text);
            let nested = vec![Some(k as u8), None];
            b.field_builder::<ListBuilder<U8>>(5)
                .unwrap()
                .append_value(nested);
            b.append();
        }
        let mut dictionary = DictionaryBuilder::new(StringBuilder::new());
        dictionary.extend_options(TEXTS);
        let mut maps = MapBuilder::new(StringBuilder::new(), I32::new());
        maps.extend_options([
            Some(vec![("a", Some(1)), ("b", None)]),
            None,
            Some(vec![]),
            Some(vec![("\"q\"", Some(3))]),
            Some(vec![("c", Some(4))]),
            None,
            Some(vec![("d", None)]),
            Some(vec![("e", Some(5))]),
        ]);
        // Text-keyed maps of other flat values (each value type has a loop of its own), keys of
        // both offset widths.
        let mut float_maps = MapBuilder::new(StringBuilder::new_large(), F64::new());
        float_maps.extend_options(floats.map(|f| Some(vec![("f", f), ("\\", Some(0.5))])));
        let mut long_maps = MapBuilder::new(StringBuilder::new(), I64::new());
        long_maps.extend_options(
            ints.map(|v| v.map(|v| vec![("big", Some(i64::from(v) << 40)), ("none", None)])),
        );
        let mut text_maps = MapBuilder::new(StringBuilder::new(), StringBuilder::new());
        text_maps.extend_options(TEXTS.map(|t| Some(vec![("t", t), ("\u{1}", Some("x"))])));
        // Text keys with values that are not flat, and keys that are not flat.
        let mut list_maps = MapBuilder::new(StringBuilder::new(), ListBuilder::new(I32::new()));
        list_maps.extend_options(ints.map(|v| Some(vec![("l", vec![v, None]), ("e", vec![])])));
        let mut dictionary_maps =
            MapBuilder::new(DictionaryBuilder::new(StringBuilder::new()), I32::new());
        dictionary_maps.extend_options(ints.map(|v| Some(vec![("k", v), ("k", Some(2))])));
        let mut union = UnionBuilder::new(UnionMode::Sparse)
            .with_child(0, "i", I32::new())
            .with_child(1, "s", StringBuilder::new());
        for (k, text) in (0i32..).zip(TEXTS) {
            if k % 2 == 0 {
                union.append::<I32>(0).unwrap().append_value(Some(k));
            } else {
                union.append::<Strings>(1).unwrap().append_value(text);
            }
        }
        let mut int_maps = MapBuilder::new(I64::new(), StringBuilder::new());
        int_maps.extend_options([
            Some(vec![(1i64, Some("one")), (-2, None)]),
            None,
            Some(vec![]),
            Some(vec![(3, Some("\"three\""))]),
            Some(vec![(4, Some("four")), (5, Some("five"))]),
            None,
            Some(vec![(6, None)]),
            Some(vec![(7, Some("é"))]),
        ]);
        // Dense, with type ids that are not the children's positions.
        let mut dense = UnionBuilder::new(UnionMode::Dense)
            .with_child(5, "f", F64::new())
            .with_child(2, "t", StringBuilder::new());
        for (k, text) in (0i32..).zip(TEXTS) {
            let float = (k != 3).then_some(f64::from(k) / 4.0);
            if k % 3 == 0 {
                dense.append::<F64>(5).unwrap().append_value(float);
            } else {
                dense.append::<Strings>(2).unwrap().append_value(text);
            }
        }
        let mut text_runs = RunEndBuilder::new(StringBuilder::new());
        text_runs.extend_options(TEXTS.map(|t| t.map(|_| "run")));
        let mut runs = RunEndBuilder::new(I32::new());
        runs.extend_options(nulls([1, 1, 0, 0, 2, 3, 3, 3], &[2, 3]));
        let (max, min) = (i64::MAX, i64::MIN);
        let extremes = [max, 0, min, -1, 253_402_300_800, -62_167_219_201, 0, 86_399];
        let extremes = nulls(extremes, &[1]);
        use DataType::*;
        use TimeUnit::*;
        let zoned = |unit, tz: &str| Timestamp(unit, Some(tz.into()));
        let booleans = [true, false, false, true, false, false, true, false];
        let booleans = nulls(booleans, &[1, 4]);
        let bytes = nulls([-128i8, 0, 127, 0, 1, 0, -1, 9], &[1, 5]);
        let shorts = nulls([65535u16, 0, 0, 1, 10, 0, 100, 9], &[1, 5]);
        let millis = map(ints, i64::from);
        let nanos = map(ints, |v| i64::from(v) * 1_000_000_007);
        let date64 = map(ints, |v| i64::from(v) * 86_400_001);
        let decimals = map(ints, |v| i128::from(v) * 1_000_000_007);
        vec![
            ("b", ArrayView::from_values(booleans).unwrap()),
            ("i8", prim(Int8, &bytes)),
            ("u16", prim(UInt16, &shorts)),
            ("i32", prim(Int32, &ints)),
            ("name_of_19_bytes___", prim(Int32, &ints)),
            ("name_of_20_bytes____", prim(Int32, &ints)),
            ("name_of_21_bytes_____", prim(Int32, &ints)),
            ("u32", prim(UInt32, &map(ints, |v| v as u32))),
            ("i64", prim(Int64, &map(ints, |v| i64::from(v) << 33))),
            ("u64", prim(UInt64, &map(ints, |v| (v as u64) << 32))),
            ("f32", prim(Float32, &map(floats, |f| f as f32))),
            ("f64", prim(Float64, &floats)),
            ("f16", prim(Float16, &nulls(HALVES, &[1, 5]))),
            ("date", prim(Date32, &ints)),
            ("ts", prim(zoned(Millisecond, "+05:30"), &millis)),
            ("ts_extremes", prim(zoned(Second, "-08:00"), &extremes)),
            ("ts_nanos", prim(Timestamp(Nanosecond, None), &nanos)),
            ("date64", prim(Date64, &date64)),
            ("dec", prim(Decimal128(38, 4), &decimals)),
            ("s", texts(StringBuilder::new())),
            ("ls", texts(StringBuilder::new_large())),
            ("sv", texts(StringBuilder::new_view())),
            ("bin", binary.finish().unwrap()),
            ("list", lists.finish().unwrap()),
            ("text_lists", text_lists.finish().unwrap()),
            ("fixed", fixed.finish().unwrap()),
            ("struct", structs.finish().unwrap()),
            ("dict", dictionary.finish().unwrap()),
            ("map", maps.finish().unwrap()),
            ("float_map", float_maps.finish().unwrap()),
            ("long_map", long_maps.finish().unwrap()),
            ("text_map", text_maps.finish().unwrap()),
            ("list_map", list_maps.finish().unwrap()),
            ("dictionary_map", dictionary_maps.finish().unwrap()),
            ("union", union.finish().unwrap()),
            ("runs", runs.finish().unwrap()),
            ("int_map", int_maps.finish().unwrap()),
            ("dense", dense.finish().unwrap()),
            ("text_runs", text_runs.finish().unwrap()),
        ]
    }

    fn options() -> [EncoderOptions; 2] {
        [
            EncoderOptions::default(),
            EncoderOptions::default()
                .with_omit_nulls(true)
                .with_large_ints_as_strings(true)
                .with_non_finite_as_strings(true)
                .with_timestamps_as_epoch(true)
                .with_binary(BinaryFormat::Base64),
        ]
    }

    /// Both formats with each of [`options`].
    fn settings() -> impl Iterator<Item = (JsonFormat, EncoderOptions)> {
        let formats = [JsonFormat::JsonArray, JsonFormat::LineDelimited];
        options()
            .into_iter()
            .flat_map(move |o| formats.map(|f| (f, o)))
    }

    /// The [`columns`] named in `names` (separated by spaces), each once.
    fn columns_named(names: &str) -> RecordBatch<'static> {
        let names: Vec<&str> = names.split(' ').collect();
        let columns: Vec<_> = columns()
            .into_iter()
            .filter(|(name, _)| names.contains(name))
            .collect();
        assert_eq!(columns.len(), names.len());
        RecordBatch::from_columns(columns).unwrap()
    }

    /// Every split of the first buffer, then whole buffers; and small buffers throughout.
    fn check_every_split<'b, const D: usize, const P: usize, F: Syntax>(
        make: impl Fn() -> Encoder<'b, D, P, F>,
        what: &str,
    ) {
        let whole = encode(&mut make(), 1 << 20, 1 << 20);
        assert!(!whole.is_empty(), "{what}");
        for first in 0..=whole.len() {
            let split = encode(&mut make(), first, 1 << 20);
            assert_eq!(split, whole, "{what}: first buffer {first}");
        }
        for size in [1, 2, 3, 5, 8, 13, 64, 95, 96, 97, 128, 200] {
            let small = encode(&mut make(), size, size);
            assert_eq!(small, whole, "{what}: buffers of {size}");
        }
    }

    #[test]
    fn every_split_of_the_buffer_gives_the_same_bytes() {
        let columns = columns();
        for (name, column) in &columns {
            let batch = RecordBatch::from_columns([(*name, column.clone())]).unwrap();
            for (format, options) in settings() {
                let what = std::format!("{name} {format:?} {options:?}");
                check_every_split(|| Encoder::batch(&batch, format, options).unwrap(), &what);
                let array = std::format!("array {what}");
                check_every_split(|| Encoder::array(column, format, options).unwrap(), &array);
            }
        }
        // All columns in one row (more arrays than the plan holds inline: its nodes on the heap),
        // and as many as the inline plan holds.
        let everything = RecordBatch::from_columns(columns).unwrap();
        let planned =
            columns_named("b i64 f64 ts dec s sv list dict map union runs int_map dense text_runs");
        assert!(count(&planned) <= DEFAULT_PLAN);
        let sliced = planned.slice(2, 5).unwrap();
        for batch in [&everything, &planned, &sliced] {
            for (format, options) in settings() {
                let what = std::format!("{} columns {format:?} {options:?}", batch.columns().len());
                check_every_split(|| Encoder::batch(batch, format, options).unwrap(), &what);
            }
        }
    }

    #[test]
    fn the_fast_path_writes_what_the_walk_writes() {
        // Every column alone, unions, run ends and maps among them, and every column in one
        // batch (its plan on the heap): the fast path writes all of it.
        use crate::json::encoder::walk_values;
        let columns = columns();
        let everything = RecordBatch::from_columns(columns.clone()).unwrap();
        assert!(count(&everything) > DEFAULT_PLAN);
        for (format, options) in settings() {
            let walk = |batch: &RecordBatch<'_>| {
                encode(&mut walk(batch, format, options), 1 << 20, 1 << 20)
            };
            let fast = |batch: &RecordBatch<'_>| {
                let mut fast = Encoder::batch(batch, format, options).unwrap();
                encode(&mut fast, 1 << 20, 1 << 20)
            };
            for (name, column) in &columns {
                let batch = RecordBatch::from_columns([(*name, column.clone())]).unwrap();
                let before = walk_values();
                let written = fast(&batch);
                assert_eq!(walk_values(), before, "{name}: the walk wrote values");
                assert_eq!(written, walk(&batch), "{name} {format:?} {options:?}");
                let sliced = batch.slice(3, 4).unwrap();
                assert_eq!(fast(&sliced), walk(&sliced), "sliced {name}");
            }
            for batch in [&everything, &everything.slice(3, 4).unwrap()] {
                let before = walk_values();
                let written = fast(batch);
                assert_eq!(walk_values(), before, "every column: the walk wrote values");
                assert_eq!(written, walk(batch), "{format:?} {options:?}");
            }
        }
    }

    /// The arrays of `batch`: columns, children and dictionary values.
    fn count(batch: &RecordBatch<'_>) -> usize {
        fn arrays(array: &ArrayView<'_>) -> usize {
            let below: usize = array.children().iter().map(arrays).sum();
            1 + below + array.dictionary().map_or(0, |d| arrays(&d.values))
        }
        batch.columns().iter().map(arrays).sum()
    }

    #[test]
    fn the_walk_writes_no_member_of_a_planned_batch_shorter_than_the_spill() {
        // The shape of the ten-column file (flat columns, temporal, text, a list, a dictionary,
        // a short value): with buffers from 97 bytes to `write_to`'s 512, every row that does
        // not fit whole goes through the walk, and the walk hands each member back to the fast
        // path, those crossing the end of a buffer through the spill.
        use crate::json::encoder::walk_values;
        let batch = columns_named("b i64 f64 ts date64 dec s list dict fixed");
        let format = JsonFormat::LineDelimited;
        for options in options() {
            let make = || Encoder::batch(&batch, format, options).unwrap();
            let whole = encode(&mut make(), 1 << 20, 1 << 20);
            for size in [97, 128, 200, 256, 300, 512] {
                let before = walk_values();
                let out = encode(&mut make(), size, size);
                assert_eq!(out, whole, "{size}-byte buffers");
                assert_eq!(walk_values(), before, "{size}");
            }
            // The count is of the walk's values: an encoder without its fast path walks them all.
            let before = walk_values();
            let mut out = vec![0; 512];
            let mut walk = walk(&batch, format, options);
            while !walk.encode(&mut out).done {}
            assert!(walk_values() > before + 8 * 5);
        }
    }

    #[test]
    fn long_single_columns_cross_the_window_at_every_byte() {
        // Enough rows to fill the single-column loops' windows many times over.
        let ints: Vec<Option<i32>> = (0..120)
            .map(|k: i32| (k % 7 != 3).then(|| k.wrapping_mul(-1_640_531_527) >> (k % 31)))
            .collect();
        let text: Vec<Option<String>> = (0..120)
            .map(|k: usize| (k % 5 != 2).then(|| "ab\"".repeat(k % 6)))
            .collect();
        let floats = ints.iter().map(|v| v.map(|v| f64::from(v) / 7.0));
        let texts = text.iter().map(|t| t.as_deref());
        let columns: [(&str, ArrayView<'static>); 3] = [
            ("a", ArrayView::from_values(ints.iter().copied()).unwrap()),
            ("name", ArrayView::from_values(texts).unwrap()),
            ("f", ArrayView::from_values(floats).unwrap()),
        ];
        for (name, column) in columns {
            let whole = RecordBatch::from_columns([(name, column)]).unwrap();
            // Sliced at an offset that is not a multiple of 8 (validity words straddle bytes).
            let sliced = whole.slice(13, 90).unwrap();
            for batch in [&whole, &sliced] {
                for options in options() {
                    let what = std::format!("{name} {} rows {options:?}", batch.num_rows());
                    let make = || Encoder::batch(batch, JsonFormat::JsonArray, options).unwrap();
                    check_every_split(make, &what);
                }
            }
        }
    }

    /// JSON as Python's `json.dumps` writes it: a space after each `,` and `:`, and separators
    /// longer than a byte in every window of the fast path.
    struct Spaced;

    impl Syntax for Spaced {
        const SEPARATOR: &'static [u8] = b", ";
        const KEY_VALUE: &'static [u8] = b": ";
        const KEY_CLOSE: &'static [u8] = b"\": ";
    }

    /// Compact JSON with a space after each `,` and `:` outside strings.
    fn spaced(compact: &[u8]) -> Vec<u8> {
        let (mut out, mut in_string, mut escaped) = (Vec::new(), false, false);
        for &byte in compact {
            out.push(byte);
            match (in_string, escaped, byte) {
                (true, true, _) => escaped = false,
                (true, false, b'\\') => escaped = true,
                (true, false, b'"') | (false, _, b'"') => in_string = !in_string,
                (false, _, b',' | b':') => out.push(b' '),
                _ => {}
            }
        }
        out
    }

    fn text(bytes: Vec<u8>) -> String {
        String::from_utf8(bytes).unwrap()
    }

    #[test]
    fn another_syntax_gets_the_whole_engine() {
        // Every column alone (as a batch and as an array) and the batches of several columns,
        // with the fast path, without it, and split at every byte of the first buffer: the
        // bytes of `Compact` with `Spaced`'s structure.
        let columns = columns();
        let everything = RecordBatch::from_columns(columns.clone()).unwrap();
        let planned =
            columns_named("b i64 f64 ts dec s sv list dict map union runs int_map dense text_runs");
        let mut batches: Vec<(String, RecordBatch<'static>)> = columns
            .iter()
            .map(|(name, column)| {
                let batch = RecordBatch::from_columns([(*name, column.clone())]).unwrap();
                ((*name).into(), batch)
            })
            .collect();
        batches.push(("everything".into(), everything));
        batches.push(("planned".into(), planned.slice(2, 5).unwrap()));
        for (name, batch) in &batches {
            for (format, options) in settings() {
                let what = std::format!("{name} {format:?} {options:?}");
                let builder = EncoderBuilder::new(format, options);
                let compact = encode(
                    &mut Encoder::batch(batch, format, options).unwrap(),
                    1 << 20,
                    1 << 20,
                );
                let fast = || -> Encoder<'_, DEFAULT_DEPTH, DEFAULT_PLAN, Spaced> {
                    builder.batch(batch).unwrap()
                };
                let walk = || -> Encoder<'_, DEFAULT_DEPTH, DEFAULT_PLAN, Spaced> {
                    walk_only(builder.batch(batch).unwrap())
                };
                let expected = text(spaced(&compact));
                assert_eq!(
                    text(encode(&mut fast(), 1 << 20, 1 << 20)),
                    expected,
                    "{what}"
                );
                assert_eq!(
                    text(encode(&mut walk(), 1 << 20, 1 << 20)),
                    expected,
                    "walk {what}"
                );
                check_every_split(fast, &what);
                if let [column] = batch.columns() {
                    let compact = Encoder::array(column, format, options).unwrap();
                    let array = || -> Encoder<'_, DEFAULT_DEPTH, DEFAULT_PLAN, Spaced> {
                        builder.array(column).unwrap()
                    };
                    let expected = text(spaced(&encode(&mut { compact }, 1 << 20, 1 << 20)));
                    let written = text(encode(&mut array(), 1 << 20, 1 << 20));
                    assert_eq!(written, expected, "array {what}");
                }
            }
        }
    }
}
