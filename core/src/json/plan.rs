//! How each Arrow type is written ([`Form`]), and the schema compiled from it once per encoder
//! for the fast path: every array of a view as a plan [`PlanNode`] holding its buffers as slices (a
//! [`Leaf`]), its member key pre-built and its children by index.
//!
//! [`Form::of`] is the one reading of a type for JSON, with no catch-all: the plan compiles it
//! into a [`Shape`], the general walk and the construction checks (`encoder`) follow it, and
//! `value` writes each leaf form. [`Plan::compile`] walks the view's nodes once when the encoder
//! is built; the `rows` module then writes whole rows by following plan indices, with no look-up
//! by type per value, and the general walk (`encoder`) follows the same nodes where a row does
//! not fit; [`resolve`] is their one way through dictionaries, unions and run ends. Every type
//! has a shape, so every array has a node: the plan holds a view whole, inline when the encoder
//! has room (`PLAN` nodes, [`DEFAULT_PLAN`](super::DEFAULT_PLAN) by default), else on the heap
//! (a `RecordBatch`'s or an `ArrayView`'s, with `alloc`); an encoder whose plan cannot hold its
//! view (a no-alloc batch of more arrays than `PLAN`) is refused when it is built.
//!
//! It uses the view's nodes, the columnar reads, the options, the zones, the sink's [`Body`] and
//! the framing's key bytes.

use super::escape;
use super::framing::{KEY_OPEN, Syntax};
use super::options::EncoderOptions;
use super::sink::Body;
use super::temporal::{Zone, Zones};
use crate::columnar::{self, Native, bit};
use crate::datatype::{IntType, IntervalUnit, TimeUnit};
use crate::format;
use crate::view::{self, Offset, Table};
use core::cell::Cell;

/// The kinds of flat arrays the fast path writes itself; [`LeafKind::Other`] is a leaf that holds
/// no flat value (the keys of a dictionary, a list's offsets, or the buffers of another form).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LeafKind {
    Int8,
    Int16,
    Int32,
    Int64,
    UInt8,
    UInt16,
    UInt32,
    UInt64,
    Float16,
    Float32,
    Float64,
    Boolean,
    /// UTF-8 text with i32 offsets.
    Utf8,
    /// UTF-8 text with i64 offsets.
    LargeUtf8,
    /// Days since the epoch (`i32`).
    Date32,
    /// Milliseconds since the epoch (`i64`).
    Date64,
    /// A count of the unit since the epoch (`i64`), in the zone (parsed once).
    Timestamp(TimeUnit, Zone),
    /// Not a flat value (see [`Form`] for what it is).
    Other,
}

impl LeafKind {
    /// The flat kind of an integer type (`None` for a width other than 8, 16, 32 or 64, which
    /// validation rules out).
    fn int(IntType { bit_width, signed }: IntType) -> Option<Self> {
        Some(match (bit_width, signed) {
            (8, true) => LeafKind::Int8,
            (16, true) => LeafKind::Int16,
            (32, true) => LeafKind::Int32,
            (64, true) => LeafKind::Int64,
            (8, false) => LeafKind::UInt8,
            (16, false) => LeafKind::UInt16,
            (32, false) => LeafKind::UInt32,
            (64, false) => LeafKind::UInt64,
            _ => return None,
        })
    }

    /// The integer type of an integer kind (`None` for another), the inverse of [`LeafKind::int`].
    #[inline(always)]
    fn int_type(self) -> Option<IntType> {
        let int = |bit_width, signed| Some(IntType { bit_width, signed });
        match self {
            LeafKind::Int8 => int(8, true),
            LeafKind::Int16 => int(16, true),
            LeafKind::Int32 => int(32, true),
            LeafKind::Int64 => int(64, true),
            LeafKind::UInt8 => int(8, false),
            LeafKind::UInt16 => int(16, false),
            LeafKind::UInt32 => int(32, false),
            LeafKind::UInt64 => int(64, false),
            _ => None,
        }
    }
}

/// The values of at most [`SPILL`](super::sink::SPILL) bytes that are not flat, each written by
/// `value::short`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Short {
    /// A decimal of this scale.
    Decimal(i8),
    Time32(TimeUnit),
    Time64(TimeUnit),
    Duration(TimeUnit),
    Interval(IntervalUnit),
}

/// How the values of an array are written: the one reading of its Arrow type for JSON, which the
/// plan compiles ([`Shape`]) and the general walk follows, so that the two cannot disagree.
///
/// [`Form::of`] matches every type with no catch-all: a new type fails to compile until it has
/// a form here (and a writer in `value`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Form {
    /// A flat value of this kind (never [`LeafKind::Other`]): numbers, booleans, dates and
    /// timestamps by `value::fixed_text`, text quoted.
    Flat(LeafKind),
    /// A short value of another type, by `value::short`.
    Short(Short),
    /// Binary values or string views: their bytes quoted, in the given form.
    Bytes(Body),
    /// A canonical extension type written as what it means, by `value::extension`.
    Extension,
    /// Every slot is null (the Null type).
    Null,
    /// An object of the children.
    Struct,
    /// A list of any kind (List, LargeList, ListView, LargeListView, FixedSizeList).
    List,
    /// A map: an object when its keys are text, else a list of `{"key":…,"value":…}`.
    Map,
    /// Dictionary-encoded: the value is the dictionary's.
    Dictionary,
    /// A union: the value is the selected child's.
    Union,
    /// Run-end encoded: the value is the run's.
    RunEnd,
}

impl Form {
    /// The form of `node`'s values with `options`; a timestamp finds its zone in `zones`.
    #[inline]
    pub(crate) fn of(node: &view::Node<'_>, options: EncoderOptions, zones: &Zones<'_>) -> Self {
        if node.dictionary.is_some() {
            return Form::Dictionary;
        }
        if node.extension != view::Extension::None && !options.extensions_as_storage {
            return Form::Extension;
        }
        use format::Kind as K;
        match node.kind {
            K::Null => Form::Null,
            K::Boolean => Form::Flat(LeafKind::Boolean),
            K::Int(int) => match LeafKind::int(int) {
                Some(kind) => Form::Flat(kind),
                None => {
                    debug_assert!(false, "integer widths are checked when read");
                    Form::Null
                }
            },
            K::Float16 => Form::Flat(LeafKind::Float16),
            K::Float32 => Form::Flat(LeafKind::Float32),
            K::Float64 => Form::Flat(LeafKind::Float64),
            K::Utf8 => Form::Flat(LeafKind::Utf8),
            K::LargeUtf8 => Form::Flat(LeafKind::LargeUtf8),
            K::Date32 => Form::Flat(LeafKind::Date32),
            K::Date64 => Form::Flat(LeafKind::Date64),
            K::Timestamp(unit, timezone) => {
                Form::Flat(LeafKind::Timestamp(unit, zones.zone(timezone)))
            }
            K::Decimal(_, scale) => Form::Short(Short::Decimal(scale)),
            K::Time32(unit) => Form::Short(Short::Time32(unit)),
            K::Time64(unit) => Form::Short(Short::Time64(unit)),
            K::Duration(unit) => Form::Short(Short::Duration(unit)),
            K::Interval(unit) => Form::Short(Short::Interval(unit)),
            K::Binary | K::LargeBinary | K::BinaryView | K::FixedSizeBinary(_) => {
                Form::Bytes(Body::binary(options.binary))
            }
            K::Utf8View => Form::Bytes(Body::Text),
            K::Struct => Form::Struct,
            K::List | K::LargeList | K::ListView | K::LargeListView | K::FixedSizeList(_) => {
                Form::List
            }
            K::Map => Form::Map,
            K::Union { .. } => Form::Union,
            K::RunEndEncoded => Form::RunEnd,
        }
    }
}

/// A flat array's buffers as slices, copied out of its view node so that the row loops read
/// them with one load each.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Leaf<'b> {
    pub(crate) kind: LeafKind,
    values: &'b [u8],
    offsets: &'b [u8],
    validity: Option<&'b [u8]>,
    offset: usize,
}

impl<'b> Leaf<'b> {
    /// The buffers of `node`, read as values of `kind` (the kind of its [`Form::Flat`], else
    /// [`LeafKind::Other`], which keeps both buffers as they are, for `PlanNode::array`).
    #[inline(always)]
    pub(crate) fn new(node: &view::Node<'b>, kind: LeafKind) -> Self {
        let [first, second] = node.buffers;
        let (values, offsets) = match kind {
            LeafKind::Utf8 | LeafKind::LargeUtf8 => (second, first),
            _ => (first, second),
        };
        Leaf {
            kind,
            values,
            offsets,
            validity: node.validity,
            offset: node.offset,
        }
    }

    /// A List or LargeList node, its offsets prepared for [`Leaf::text_range`] (which reads the
    /// range of child slots of a list slot as it reads the bytes of a text slot).
    fn list(node: &view::Node<'b>) -> Self {
        Leaf {
            kind: LeafKind::Other,
            values: &[],
            offsets: node.buffers[0],
            validity: node.validity,
            offset: node.offset,
        }
    }

    /// The indices of a dictionary-encoded node, read as integers of its index type.
    fn keys(node: &view::Node<'b>) -> Option<Self> {
        Some(Leaf {
            kind: LeafKind::int(node.dictionary?)?,
            values: node.buffers[0],
            offsets: &[],
            validity: node.validity,
            offset: node.offset,
        })
    }

    /// The dictionary index in slot `i` of a [`Leaf::keys`] view, by [`columnar::index_at`]
    /// (`usize::MAX` when negative).
    #[inline(always)]
    pub(crate) fn index(&self, i: usize) -> usize {
        debug_assert!(self.kind.int_type().is_some(), "keys are integers");
        columnar::index_at(
            self.values,
            self.offset.wrapping_add(i),
            self.kind.int_type(),
        )
    }

    /// Slot `i` of a run ends leaf (Int16, Int32 or Int64, as validation requires) as an i64,
    /// by [`columnar::integer_at`].
    #[inline(always)]
    pub(crate) fn integer(&self, i: usize) -> i64 {
        let value = columnar::integer_at(
            self.values,
            self.offset.wrapping_add(i),
            self.kind.int_type(),
        );
        debug_assert!(value.is_some(), "run ends are Int16, Int32 or Int64");
        value.unwrap_or_default()
    }

    /// The slot offset into the buffers (struct children are indexed by their parent's).
    #[inline(always)]
    pub(crate) fn offset(&self) -> usize {
        self.offset
    }

    /// Whether slot `i` holds a value.
    #[inline(always)]
    pub(crate) fn is_valid(&self, i: usize) -> bool {
        match self.validity {
            None => true,
            Some(bitmap) => bit(bitmap, self.offset.wrapping_add(i)),
        }
    }

    /// The validity of slots `i..i + 64`, one bit each from the lowest (all set without a
    /// bitmap; slots past the bitmap read as null).
    #[inline(always)]
    pub(crate) fn validity_word(&self, i: usize) -> u64 {
        let Some(bitmap) = self.validity else {
            return u64::MAX;
        };
        let first = self.offset.wrapping_add(i);
        let (byte, shift) = (first / 8, first % 8);
        let word = match bitmap.get(byte..byte.wrapping_add(16)) {
            Some(bytes) => bytes.try_into().map_or(0, u128::from_le_bytes),
            None => {
                let mut bytes = [0; 16];
                for (b, s) in bytes.iter_mut().zip(bitmap.get(byte..).unwrap_or_default()) {
                    *b = *s;
                }
                u128::from_le_bytes(bytes)
            }
        };
        (word >> shift) as u64
    }

    /// Fixed-width value of slot `i`.
    #[inline(always)]
    pub(crate) fn value<T: Native>(&self, i: usize) -> T {
        let start = self.offset.wrapping_add(i).wrapping_mul(T::WIDTH);
        self.values
            .get(start..start.wrapping_add(T::WIDTH))
            .map_or_else(T::default, T::from_le_slice)
    }

    /// The fixed-width values of slots `range`, `W` bytes each (fewer if the buffer is short,
    /// which validation rules out).
    #[inline(always)]
    pub(crate) fn fixed<const W: usize>(&self, range: core::ops::Range<usize>) -> &'b [[u8; W]] {
        let start = self.offset.wrapping_add(range.start).wrapping_mul(W);
        let end = self.offset.wrapping_add(range.end).wrapping_mul(W);
        self.values
            .get(start..end)
            .map_or(&[][..], |bytes| bytes.as_chunks::<W>().0)
    }

    /// Boolean value of slot `i`.
    #[inline(always)]
    pub(crate) fn bool_value(&self, i: usize) -> bool {
        bit(self.values, self.offset.wrapping_add(i))
    }

    /// The values buffer (the text of a Utf8 array).
    #[inline(always)]
    pub(crate) fn values(&self) -> &'b [u8] {
        self.values
    }

    /// The text of slot `i` of a Utf8 or LargeUtf8 leaf.
    #[inline(always)]
    pub(crate) fn text(&self, i: usize) -> &'b [u8] {
        let (start, end) = match self.kind {
            LeafKind::LargeUtf8 => self.text_range::<i64>(i),
            _ => self.text_range::<i32>(i),
        };
        self.values.get(start..end).unwrap_or_default()
    }

    /// Where the text of slot `i` lies in [`Leaf::values`] (or the child slots of a list slot),
    /// for offsets of width `O` (the caller picks by [`Leaf::kind`]).
    #[inline(always)]
    pub(crate) fn text_range<O: Offset>(&self, i: usize) -> (usize, usize) {
        let at = self.offset.wrapping_add(i).wrapping_mul(O::WIDTH);
        let Some(pair) = self.offsets.get(at..at.wrapping_add(2 * O::WIDTH)) else {
            return (0, 0);
        };
        let (start, end) = pair.split_at(O::WIDTH);
        (
            O::from_le_slice(start).to_usize(),
            O::from_le_slice(end).to_usize(),
        )
    }
}

/// Bytes of a pre-built key, `,"name":`: names up to `KEY - 5` bytes are stored inline. A key is
/// copied as `KEY - 1` bytes: 24, one 16-byte and one 8-byte store (23 took four stores; 1.5%
/// of the ten-column file's time on one thread).
pub(crate) const KEY: usize = 25;

/// How the values of a node are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Shape {
    /// A flat array the fast path formats itself (see the leaf's [`LeafKind`]).
    Flat,
    /// Another type of short text (times, durations, decimals, intervals), at most
    /// `sink::SPILL` bytes, written by `value::short`.
    Short(Short),
    /// Binary values or string views: their bytes quoted, in the given form.
    Bytes(Body),
    /// A canonical extension type written as what it means (`arrow.json` text as the JSON
    /// value, a UUID, a boolean) by `value::extension`, read from the view's node.
    Extension,
    /// Every slot is null (the Null type).
    Null,
    /// An object of the nodes `first..first + len`, indexed by this node's offset plus the slot.
    Struct { first: u32, len: u32 },
    /// A list of any kind, its elements in node `child`; `offsets` says how its leaf reads the
    /// element ranges.
    List { child: u32, offsets: ListOffsets },
    /// Dictionary-encoded: the leaf reads the indices, the values are node `values`.
    Dictionary { values: u32 },
    /// A union: the leaf reads the type ids (and a dense union's offsets), its children are the
    /// nodes `first..first + len`.
    Union { first: u32, len: u32 },
    /// Run-end encoded: node `ends` holds the `runs` run ends, node `ends + 1` the values.
    RunEnd { ends: u32, runs: u32 },
    /// A map with text keys, written as an object; its entries (a struct of keys and values) are
    /// node `entries`, and the leaf reads their ranges as a list's. (A map with other keys is a
    /// [`Shape::List`] of entries named `key` and `value`.)
    Map { entries: u32 },
}

/// How a list node finds the range of elements of a slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ListOffsets {
    /// List or LargeList: offsets of this width in bytes, prepared in the leaf.
    Prepared(u8),
    /// List views and fixed-size lists: through the array.
    Array,
}

/// One array of the schema.
#[derive(Debug, Clone, Copy)]
pub(crate) struct PlanNode<'b> {
    /// The array's index in the view.
    pub(crate) at: usize,
    /// Its type, for the view node of a short value, binary or list view, and a union's ids.
    kind: format::Kind<'b>,
    pub(crate) leaf: Leaf<'b>,
    pub(crate) shape: Shape,
    /// `,"name":`, when this node is a member with a short plain name (`key_len` > 0).
    key: [u8; KEY],
    key_len: u8,
    /// The member name (for a name too long or that needs escaping).
    pub(crate) name: &'b str,
}

impl<'b> PlanNode<'b> {
    fn new<F: Syntax>(at: usize, node: &view::Node<'b>, leaf: Leaf<'b>, name: &'b str) -> Self {
        let mut plan = PlanNode {
            at,
            kind: node.kind,
            leaf,
            shape: Shape::Null,
            key: [0; KEY],
            key_len: 0,
            name: "",
        };
        plan.name::<F>(name);
        plan
    }

    /// A node that a later step fills.
    fn placeholder<F: Syntax>() -> Self {
        let null = view::Node::of_buffers(format::Kind::Null, 0, [&[], &[]]);
        PlanNode::new::<F>(0, &null, Leaf::new(&null, LeafKind::Other), "")
    }

    /// Names the node as a member, pre-building its key when the name is short and plain.
    fn name<F: Syntax>(&mut self, name: &'b str) {
        let (separator, close) = (F::SEPARATOR, F::KEY_CLOSE);
        self.name = name;
        self.key_len = 0;
        let bytes = name.as_bytes();
        let len = separator.len() + 1 + bytes.len() + close.len();
        // The key is copied as `KEY - 1` bytes (from its separator or after it): it must fit.
        if len < KEY && escape::is_plain(name) {
            let (open, rest) = self.key.split_at_mut(separator.len());
            open.copy_from_slice(separator);
            if let Some((quote, rest)) = rest.split_first_mut() {
                *quote = KEY_OPEN;
                if let Some((body, rest)) = rest.split_at_mut_checked(bytes.len()) {
                    body.copy_from_slice(bytes);
                    if let Some(rest) = rest.get_mut(..close.len()) {
                        rest.copy_from_slice(close);
                    }
                }
            }
            self.key_len = len as u8;
        }
    }

    /// For slot `i` of a union node: the plan node of the child that holds it and the slot in
    /// that child.
    #[inline(always)]
    pub(crate) fn union_value(&self, i: usize) -> Option<(usize, usize)> {
        let (Shape::Union { first, len }, format::Kind::Union { dense, type_ids }) =
            (self.shape, self.kind)
        else {
            return None;
        };
        let leaf = &self.leaf;
        let (child, slot) = columnar::union_slot(
            leaf.values,
            dense.then_some(leaf.offsets),
            leaf.offset.wrapping_add(i),
            |id| type_ids.child(id, len as usize),
        );
        Some((first as usize + child, slot))
    }

    /// The view node of a short value, binary or list view (not of string or binary views,
    /// whose data buffers the plan does not hold), made from the plan's copy of its buffers.
    #[inline(always)]
    pub(crate) fn array(&self) -> Option<view::Node<'b>> {
        let leaf = &self.leaf;
        let buffers = [leaf.values, leaf.offsets];
        (!matches!(self.kind, format::Kind::BinaryView | format::Kind::Utf8View))
            .then(|| view::Node::of_buffers(self.kind, leaf.offset, buffers))
    }

    /// The view node of a value the plan holds no buffers for as the view does (a short value,
    /// binary, a string or binary view, an extension, a list view): made from the plan's copy of
    /// its buffers where it can be, else read from `nodes`, the view the plan was compiled from.
    #[inline(always)]
    pub(crate) fn view<T: Table<'b> + ?Sized>(&self, nodes: &T) -> Option<view::Node<'b>> {
        // Made in place (an `Option` of a node passed through a combinator is copied).
        if self.shape != Shape::Extension
            && let Some(made) = self.array()
        {
            return Some(made);
        }
        let found = nodes.node(self.at).map(|n| *n);
        debug_assert!(found.is_some(), "plan nodes are nodes of the view");
        found
    }

    /// The bytes of slot `i` of a text or binary node (a flat Utf8 or LargeUtf8 leaf's text, or
    /// the view's bytes of binary values and string or binary views).
    #[inline(always)]
    pub(crate) fn bytes_value<T: Table<'b> + ?Sized>(&self, nodes: &T, i: usize) -> &'b [u8] {
        match self.shape {
            Shape::Flat => self.leaf.text(i),
            _ => self.view(nodes).map_or(&[][..], |view| view.bytes_value(i)),
        }
    }

    /// The element slots of list slot `i` (a list of any kind, or a map's entries).
    #[inline(always)]
    pub(crate) fn list_range(&self, i: usize) -> core::ops::Range<usize> {
        let (start, end) = match self.shape {
            Shape::List {
                offsets: ListOffsets::Array,
                ..
            } => return self.array().map_or(0..0, |n| n.list_range(i)),
            Shape::List {
                offsets: ListOffsets::Prepared(8),
                ..
            } => self.leaf.text_range::<i64>(i),
            _ => self.leaf.text_range::<i32>(i),
        };
        start..end
    }

    /// The pre-built key (`,"name":`, or `"name":` for the `first` member) and its length, when
    /// the name is short and plain; always [`KEY`] - 1 bytes to copy, of which the length count.
    #[inline(always)]
    pub(crate) fn key<F: Syntax>(&self, first: bool) -> Option<(&[u8; KEY - 1], usize)> {
        if self.key_len == 0 {
            return None;
        }
        let skip = F::SEPARATOR.len() * usize::from(first);
        let bytes = self.key.get(skip..skip + KEY - 1)?.try_into().ok()?;
        Some((bytes, usize::from(self.key_len) - skip))
    }
}

/// The nodes of a plan: inline in the encoder, or, with `alloc`, on the heap for a schema of
/// more arrays than the encoder holds inline: `len` of them filled, shared by the encoders split
/// from it ([`Encoder::split_rows`](super::Encoder::split_rows) allocates nothing).
#[derive(Debug, Clone)]
enum Store<'b, const N: usize> {
    Inline(heapless::Vec<PlanNode<'b>, N>),
    #[cfg(feature = "alloc")]
    Heap {
        nodes: alloc::sync::Arc<[PlanNode<'b>]>,
        len: usize,
    },
}

impl<'b, const N: usize> Store<'b, N> {
    /// Appends `node`; `None` when the store is full.
    fn push(&mut self, node: PlanNode<'b>) -> Option<()> {
        match self {
            Store::Inline(nodes) => nodes.push(node).ok(),
            #[cfg(feature = "alloc")]
            Store::Heap { nodes, len } => {
                *alloc::sync::Arc::get_mut(nodes)?.get_mut(*len)? = node;
                *len += 1;
                Some(())
            }
        }
    }

    #[inline(always)]
    fn as_slice(&self) -> &[PlanNode<'b>] {
        match self {
            Store::Inline(nodes) => nodes,
            #[cfg(feature = "alloc")]
            Store::Heap { nodes, len } => nodes.get(..*len).unwrap_or_default(),
        }
    }

    fn as_mut_slice(&mut self) -> &mut [PlanNode<'b>] {
        match self {
            Store::Inline(nodes) => nodes,
            #[cfg(feature = "alloc")]
            Store::Heap { nodes, len } => alloc::sync::Arc::get_mut(nodes)
                .and_then(|nodes| nodes.get_mut(..*len))
                .unwrap_or_default(),
        }
    }
}

/// The compiled schema of every array of a view: `N` nodes inline in the encoder
/// ([`DEFAULT_PLAN`](super::DEFAULT_PLAN) by default, on both paths), and with `alloc` the nodes
/// of a wider schema on the heap, allocated once when the encoder is built.
#[derive(Debug, Clone)]
pub(crate) struct Plan<'b, const N: usize> {
    nodes: Store<'b, N>,
    /// A batch: nodes `0..columns` are its columns. An array: node 0 is the array and this is
    /// `None`.
    columns: Option<u32>,
    options: EncoderOptions,
}

impl<'b, const N: usize> Plan<'b, N> {
    /// Compiles into `slot` the plan of a view's columns (its nodes `0..columns_end`, or its one
    /// array, when `array`): inline when `N` nodes hold it, else on the heap (with `alloc`, when
    /// `heap` allows it), else none (the encoder is refused). It is built where it stays: an
    /// inline plan is several KB, and a device's stack small.
    pub(crate) fn compile<T: Table<'b> + ?Sized, F: Syntax>(
        slot: &mut Option<Self>,
        nodes: &T,
        ((columns_end, array), heap): ((usize, bool), bool),
        options: EncoderOptions,
        zones: &Zones<'_>,
    ) {
        *slot = None;
        let columns = match array {
            true => 1,
            false => view::siblings(nodes, 0, columns_end).count(),
        };
        let Ok(batch_columns) = u32::try_from(columns) else {
            return;
        };
        let batch_columns = (!array).then_some(batch_columns);
        let inline = || Store::Inline(heapless::Vec::new());
        let plan = Self::start(slot, inline, batch_columns, options);
        if plan
            .fill_columns::<T, F>(nodes, columns, columns_end, zones)
            .is_some()
        {
            return;
        }
        *slot = None;
        // Without `alloc`, there is no heap to plan on.
        #[cfg(not(feature = "alloc"))]
        let _ = heap;
        #[cfg(feature = "alloc")]
        if heap {
            // One node per array of the view, in one allocation.
            let on_heap = core::iter::repeat_n(PlanNode::placeholder::<F>(), columns_end);
            let store = || Store::Heap {
                nodes: on_heap.collect(),
                len: 0,
            };
            let plan = Self::start(slot, store, batch_columns, options);
            if plan
                .fill_columns::<T, F>(nodes, columns, columns_end, zones)
                .is_none()
            {
                *slot = None;
            }
        }
    }

    /// Puts an empty plan of the store `store` makes into `slot`. A function of its own, so
    /// that the plan it moves (several KB) is on the stack only while it runs, not while the
    /// plan is filled.
    #[inline(never)]
    fn start(
        slot: &mut Option<Self>,
        store: impl FnOnce() -> Store<'b, N>,
        columns: Option<u32>,
        options: EncoderOptions,
    ) -> &mut Self {
        slot.insert(Plan {
            nodes: store(),
            columns,
            options,
        })
    }

    /// Appends the first `columns` of the view's columns (its nodes `0..columns_end`), each
    /// with its descendants; `None` when the store cannot hold them.
    fn fill_columns<T: Table<'b> + ?Sized, F: Syntax>(
        &mut self,
        nodes: &T,
        columns: usize,
        columns_end: usize,
        zones: &Zones<'_>,
    ) -> Option<()> {
        let first = self.reserve::<F>(columns)?;
        for (k, (at, node)) in view::siblings(nodes, 0, columns_end)
            .enumerate()
            .take(columns)
        {
            self.fill::<T, F>(first + k, nodes, at, node.name, zones)?;
        }
        Some(())
    }

    /// Whether the nodes are inline (not on the heap).
    #[cfg(all(test, feature = "alloc"))]
    pub(crate) fn is_inline(&self) -> bool {
        matches!(self.nodes, Store::Inline(_))
    }

    /// The columns of a batch (node indices), or `None` for an array plan.
    pub(crate) fn columns(&self) -> Option<core::ops::Range<usize>> {
        self.columns.map(|columns| 0..columns as usize)
    }

    /// Every node.
    #[inline(always)]
    pub(crate) fn all(&self) -> &[PlanNode<'b>] {
        self.nodes.as_slice()
    }

    /// Plan node `n` (node 0 exists in every plan).
    #[inline(always)]
    pub(crate) fn node(&self, n: usize) -> Option<&PlanNode<'b>> {
        self.nodes.as_slice().get(n)
    }

    /// Appends the children of `array` (view node `at`), named as their fields; returns the
    /// index of the first.
    fn children<T: Table<'b> + ?Sized, F: Syntax>(
        &mut self,
        nodes: &T,
        at: usize,
        array: &view::Node<'b>,
        zones: &Zones<'_>,
    ) -> Option<u32> {
        let first = self.reserve::<F>(array.children as usize)?;
        for (k, (child, child_node)) in view::siblings(nodes, at + 1, array.end).enumerate() {
            self.fill::<T, F>(first + k, nodes, child, child_node.name, zones)?;
        }
        u32::try_from(first).ok()
    }

    /// Appends `count` placeholder nodes; returns the index of the first.
    fn reserve<F: Syntax>(&mut self, count: usize) -> Option<usize> {
        let first = self.nodes.as_slice().len();
        for _ in 0..count {
            self.nodes.push(PlanNode::placeholder::<F>())?;
        }
        Some(first)
    }

    /// Sets plan node `to` to view node `at` (named `name` as a member) and appends its
    /// descendants: every [`Form`] has its shape, so the only `None` is an inline store that
    /// cannot hold them (more than `N` nodes).
    fn fill<T: Table<'b> + ?Sized, F: Syntax>(
        &mut self,
        to: usize,
        nodes: &T,
        at: usize,
        name: &'b str,
        zones: &Zones<'_>,
    ) -> Option<()> {
        let array = &*nodes.node(at)?;
        let form = Form::of(array, self.options, zones);
        let kind = match form {
            Form::Flat(kind) => kind,
            _ => LeafKind::Other,
        };
        let mut node = PlanNode::new::<F>(at, array, Leaf::new(array, kind), name);
        node.shape = match form {
            Form::Flat(_) => Shape::Flat,
            Form::Short(short) => Shape::Short(short),
            Form::Bytes(body) => Shape::Bytes(body),
            Form::Extension => Shape::Extension,
            Form::Null => Shape::Null,
            Form::Dictionary => {
                node.leaf = Leaf::keys(array)?;
                let to_values = self.reserve::<F>(1)?;
                self.fill::<T, F>(to_values, nodes, at + 1, "", zones)?;
                Shape::Dictionary {
                    values: u32::try_from(to_values).ok()?,
                }
            }
            Form::Struct => Shape::Struct {
                first: self.children::<T, F>(nodes, at, array, zones)?,
                len: array.children,
            },
            Form::Union => Shape::Union {
                first: self.children::<T, F>(nodes, at, array, zones)?,
                len: array.children,
            },
            Form::RunEnd => {
                let ends = self.children::<T, F>(nodes, at, array, zones)?;
                let runs = nodes.node(at + 1)?.len;
                Shape::RunEnd {
                    ends,
                    runs: u32::try_from(runs).ok()?,
                }
            }
            Form::Map => {
                node.leaf = Leaf::list(array);
                let entries = self.reserve::<F>(1)?;
                self.fill::<T, F>(entries, nodes, at + 1, "", zones)?;
                let Shape::Struct { first, .. } = self.nodes.as_slice().get(entries)?.shape else {
                    debug_assert!(false, "a map's entries are a struct");
                    return None;
                };
                for (k, name) in ["key", "value"].into_iter().enumerate() {
                    self.nodes
                        .as_mut_slice()
                        .get_mut(first as usize + k)?
                        .name::<F>(name);
                }
                let entries = u32::try_from(entries).ok()?;
                if nodes.node(at + 2)?.kind.is_text() {
                    Shape::Map { entries }
                } else {
                    Shape::List {
                        child: entries,
                        offsets: ListOffsets::Prepared(4),
                    }
                }
            }
            Form::List => {
                let child = self.reserve::<F>(1)?;
                self.fill::<T, F>(child, nodes, at + 1, "", zones)?;
                let offsets = match array.kind {
                    format::Kind::List => ListOffsets::Prepared(4),
                    format::Kind::LargeList => ListOffsets::Prepared(8),
                    _ => ListOffsets::Array,
                };
                if offsets != ListOffsets::Array {
                    node.leaf = Leaf::list(array);
                }
                Shape::List {
                    child: u32::try_from(child).ok()?,
                    offsets,
                }
            }
        };
        *self.nodes.as_mut_slice().get_mut(to)? = node;
        Some(())
    }
}

/// Follows dictionaries, unions and run ends from slot `i` of `node`, one of a plan's `nodes`,
/// to the node and slot that hold the value; `None` when the value is null. The one resolver of
/// both of the encoder's loops.
///
/// `hints` holds, for each run-end encoded node (by the index of its run ends), the run it read
/// last: rows are read in order, so that run, or the next, is tried before a binary search (a
/// node past the hints, or with none, searches).
#[inline(always)]
pub(crate) fn resolve<'p, 'b>(
    nodes: &'p [PlanNode<'b>],
    mut node: &'p PlanNode<'b>,
    mut i: usize,
    hints: &[Cell<u32>],
) -> Option<(&'p PlanNode<'b>, usize)> {
    loop {
        match node.shape {
            Shape::Dictionary { values } => {
                if !node.leaf.is_valid(i) {
                    return None;
                }
                i = node.leaf.index(i);
                node = nodes.get(values as usize)?;
            }
            Shape::Union { .. } => {
                let (child, slot) = node.union_value(i)?;
                node = nodes.get(child)?;
                i = slot;
            }
            Shape::RunEnd { ends, runs } => {
                let ends = ends as usize;
                let logical = node.leaf.offset().wrapping_add(i);
                i = run(nodes, hints, ends, runs as usize, logical)?;
                node = nodes.get(ends + 1)?;
            }
            Shape::Null => return None,
            _ => return node.leaf.is_valid(i).then_some((node, i)),
        }
    }
}

/// The run of run-end encoded slot `logical`, its run ends in node `ends` (`runs` of them), by
/// the hint [`resolve`] describes.
#[inline(always)]
fn run(
    nodes: &[PlanNode<'_>],
    hints: &[Cell<u32>],
    ends: usize,
    runs: usize,
    logical: usize,
) -> Option<usize> {
    let run_ends = &nodes.get(ends)?.leaf;
    let end = |k: usize| run_ends.integer(k);
    let Some(hint) = hints.get(ends) else {
        return Some(columnar::run_index(end, runs, logical));
    };
    let logical_end = logical as i64;
    let holds =
        |k: usize| k < runs && logical_end < end(k) && (k == 0 || end(k - 1) <= logical_end);
    let last = hint.get() as usize;
    let run = if holds(last) {
        last
    } else if holds(last + 1) {
        last + 1
    } else {
        columnar::run_index(end, runs, logical)
    };
    hint.set(u32::try_from(run).unwrap_or(0));
    Some(run)
}

#[cfg(all(test, feature = "alloc"))]
mod tests {
    //! The one reading of "slot `i` of an integer array", pinned for every integer type
    //! across the accessors that share it, and the resolution of a slot through dictionaries,
    //! run ends, unions and slice offsets.

    use super::{Leaf, LeafKind, Plan, PlanNode, resolve};
    use crate::array::{ArrayParts, ArrayView, Dictionary};
    use crate::array::{Arrays, RecordBatch};
    use crate::bytes::Bytes;
    use crate::columnar::{index_at, integer_at};
    use crate::datatype::{DataType, IntType};
    use crate::format;
    use crate::json::{Compact, EncoderOptions};
    use crate::view::Node;
    use alloc::sync::Arc;
    use alloc::vec;
    use alloc::vec::Vec;

    /// Each integer type with values around its limits as i128, and the bytes they are.
    fn cases() -> Vec<(IntType, Vec<i128>, Vec<u8>)> {
        let le = |values: &[i128], width: usize| -> Vec<u8> {
            values
                .iter()
                .flat_map(|v| v.to_le_bytes().into_iter().take(width))
                .collect()
        };
        let mut cases = Vec::new();
        for bit_width in [8u8, 16, 32, 64] {
            for signed in [true, false] {
                let (min, max) = match signed {
                    true => (-(1i128 << (bit_width - 1)), (1i128 << (bit_width - 1)) - 1),
                    false => (0, (1i128 << bit_width) - 1),
                };
                let mut values = vec![0, 1, 5, min, max, max / 2, max / 2 + 1];
                values.retain(|v| (min..=max).contains(v));
                let bytes = le(&values, usize::from(bit_width / 8));
                cases.push((IntType { bit_width, signed }, values, bytes));
            }
        }
        cases
    }

    #[test]
    fn every_integer_type_reads_as_its_i64_or_none_across_the_accessors() {
        for (int, values, bytes) in cases() {
            let kind = LeafKind::int(int).unwrap();
            assert_eq!(kind.int_type(), Some(int));
            let data_type = DataType::int(int).unwrap();
            let array = ArrayView::try_new(ArrayParts {
                data_type: Some(data_type.clone()),
                len: values.len(),
                buffers: vec![Bytes::from_vec(bytes.clone())],
                ..ArrayParts::default()
            })
            .unwrap();
            let mut node = Node::of_buffers(format::Kind::Int(int), 0, [&bytes, &[]]);
            let mut keys = node;
            keys.dictionary = Some(int);
            let leaf = Leaf::keys(&keys).unwrap();
            for (j, &value) in values.iter().enumerate() {
                let expected = i64::try_from(value).ok();
                // Only a UInt64 above i64::MAX has no i64.
                assert_eq!(
                    expected.is_none(),
                    value > i128::from(i64::MAX),
                    "{int} {value}"
                );
                assert_eq!(integer_at(&bytes, j, Some(int)), expected, "{int} {value}");
                assert_eq!(array.integer(j), expected.unwrap_or(0), "{int} {value}");
                if let Some(expected) = expected {
                    // Run ends, which validation keeps below i64::MAX.
                    assert_eq!(node.integer(j), expected, "{int} {value}");
                    assert_eq!(leaf.integer(j), expected, "{int} {value}");
                }
                // A key indexes through its i64: none when negative or without one.
                let index = expected.and_then(|v| usize::try_from(v).ok());
                let index = index.unwrap_or(usize::MAX);
                assert_eq!(index_at(&bytes, j, Some(int)), index, "{int} {value}");
                assert_eq!(leaf.index(j), index, "{int} {value}");
                node.dictionary = Some(int);
                assert_eq!(node.key(j), index, "{int} {value}");
                node.dictionary = None;
            }
        }
        // A dictionary-encoded array's keys, through the public accessor.
        let keys = ArrayView::try_new(ArrayParts {
            data_type: Some(DataType::Utf8),
            len: 2,
            buffers: vec![Bytes::from_vec(vec![
                0, 0, 0, 0, 0, 0, 0, 0x80, 1, 0, 0, 0, 0, 0, 0, 0,
            ])],
            validity: Some(Bytes::from_vec(vec![0b10])),
            null_count: 1,
            dictionary: Some(Dictionary {
                index_type: IntType {
                    bit_width: 64,
                    signed: false,
                },
                values: Arc::new(ArrayView::from_values(["a", "b"]).unwrap()),
            }),
            ..ArrayParts::default()
        })
        .unwrap();
        assert_eq!(keys.dictionary_index(0), usize::MAX);
        assert_eq!(keys.dictionary_index(1), 1);
    }

    #[test]
    fn a_type_that_is_not_an_integer_has_no_i64() {
        let bytes = 7i64.to_le_bytes();
        assert_eq!(integer_at(&bytes, 0, None), None);
        assert_eq!(index_at(&bytes, 0, None), usize::MAX);
        let odd = IntType {
            bit_width: 7,
            signed: true,
        };
        assert_eq!(integer_at(&bytes, 0, Some(odd)), None);
        assert_eq!(index_at(&bytes, 0, Some(odd)), usize::MAX);
        assert_eq!(LeafKind::Float64.int_type(), None);
        let floats = ArrayView::from_values([7.0f64]).unwrap();
        assert_eq!(floats.integer(0), 0);
        let text = ArrayView::from_values(["7"]).unwrap();
        assert_eq!(text.integer(0), 0);
    }

    /// The plan of `batch`, and what slot `i` of its node for view node `at` resolves to: the
    /// view node that holds the value, and the plan node and slot.
    fn planned<'b>(batch: &'b RecordBatch<'_>) -> Plan<'b, 64> {
        let nodes = Arrays::of_batch(batch);
        let options = EncoderOptions::default();
        let mut plan = None;
        let shape = ((nodes.columns_end(), false), false);
        Plan::compile::<_, Compact>(&mut plan, &nodes, shape, options, &options.zones());
        plan.unwrap()
    }

    fn resolved<'p, 'b>(
        plan: &'p Plan<'b, 64>,
        at: usize,
        i: usize,
    ) -> Option<(&'p PlanNode<'b>, usize)> {
        let node = plan.all().iter().find(|n| n.at == at).unwrap();
        resolve(plan.all(), node, i, &[])
    }

    /// The view node that holds slot `i` of view node `at` and its i32 value there.
    fn int(plan: &Plan<'_, 64>, at: usize, i: usize) -> Option<(usize, i32)> {
        resolved(plan, at, i).map(|(node, j)| (node.at, node.leaf.value::<i32>(j)))
    }

    #[test]
    fn slots_resolve_through_dictionaries_run_ends_and_unions() {
        let batch = crate::view::tests::batch();
        let plan = &planned(&batch);
        let text = |at, i| resolved(plan, at, i).map(|(n, j)| n.leaf.text(j).to_vec());
        assert_eq!((int(plan, 0, 1), int(plan, 0, 2)), (None, Some((0, 3))));
        assert_eq!((text(1, 3), text(1, 1)), (Some(b"x".to_vec()), None));
        let runs: Vec<_> = (0..4).map(|i| int(plan, 8, i)).collect();
        assert_eq!(runs, [Some((10, 7)), Some((10, 7)), None, Some((10, 9))]);
        let union: Vec<_> = (0..3).map(|i| int(plan, 11, i)).collect();
        assert_eq!(union, [Some((12, 0)), None, Some((12, 2))]);
        let list = plan.all().iter().find(|n| n.at == 3).unwrap();
        assert_eq!(list.list_range(0), 0..2);
    }

    #[test]
    fn sliced_batches_resolve_at_their_offset() {
        let batch = crate::view::tests::batch();
        let sliced = batch.slice(1, 3).unwrap();
        let plan = &planned(&sliced);
        assert_eq!((int(plan, 0, 0), int(plan, 0, 1)), (None, Some((0, 3))));
        let runs: Vec<_> = (0..3).map(|i| int(plan, 8, i)).collect();
        assert_eq!(runs, [Some((10, 7)), None, Some((10, 9))]);
        let list = plan.all().iter().find(|n| n.at == 3).unwrap();
        assert_eq!(list.list_range(2), 2..3);
        let union: Vec<_> = (0..2).map(|i| int(plan, 11, i)).collect();
        assert_eq!(union, [None, Some((12, 2))]);
    }
}
