//! [`View`]: one record batch (or one array) as a flat, index-linked table of borrowed arrays.
//!
//! Every path reads a batch through this one form. A `Node` per array holds its type
//! (its `Kind`, checked), length, slot offset, validity and buffers as slices, and where its
//! children end; a dictionary-encoded array's values are the node after it. Walks read nodes by
//! index through a `Table`.
//!
//! Nodes enter in two ways. `View::decode` reads a `RecordBatch` message (its flatbuffer
//! header and body, borrowed) through the format's one walk of a message body
//! (`format::body`, depth-first through the schema's fields, as the message lays them out),
//! borrowing each buffer, checks every node against the columnar format's rules (the crate's
//! `columnar` module) and keeps them in a `heapless::Vec` of `N` (the
//! [`no_alloc`](crate::no_alloc) readers' `Batch`). With `alloc`, a [`RecordBatch`](crate::array::RecordBatch) carries the links of the
//! same layout (made once, when the batch is), and its `Arrays` table makes each node from its
//! validated [`ArrayView`](crate::array::ArrayView) when read, borrowing the buffers: an encoder
//! of a batch allocates nothing, has no limit on arrays, and a dictionary shared by many batches
//! is borrowed, not copied (that table lives with the arrays, in `array`, which uses this
//! module). The JSON encoder reads values from either without further checks.
//!
//! It uses the flatbuffer views and checked types of [`format`] (an array's
//! `Kind` and buffer `Layout`, the walk of a message body), the columnar rules of `columnar`, the
//! data types and the errors; nothing of the owned arrays, the decoders or the encoders.

use crate::columnar::{self, Native, bad, need, read};
use crate::datatype::IntType;
use crate::error::{Capacity, Feature, FormatError, FormatErrorKind, FormatResult};
use crate::format::body::{self, ArraySink};
use crate::format::cursor::Cursor;
use crate::format::layout::{Layout, Swap, Walked, invalid};
use crate::format::{self, DictionaryEncoding, Kind, MetadataVersion};
use core::ops::Range;

/// A canonical extension type whose values the JSON encoder writes as what they mean rather than
/// as their storage (the Arrow format's "Canonical Extension Types"). Any other extension, and
/// one whose storage is not the type the specification gives it, is its storage.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Extension {
    /// No extension the encoder knows.
    None,
    /// `arrow.uuid` over FixedSizeBinary(16).
    Uuid,
    /// `arrow.json` over Utf8, LargeUtf8 or Utf8View.
    Json,
    /// `arrow.bool8` over Int8.
    Bool8,
}

impl Extension {
    /// The extension named `name` on storage of `kind` (not dictionary-encoded).
    pub(crate) fn of(name: Option<&str>, kind: Kind<'_>, dictionary: bool) -> Self {
        let signed_byte = IntType {
            bit_width: 8,
            signed: true,
        };
        match (name, kind) {
            _ if dictionary => Extension::None,
            (Some("arrow.uuid"), Kind::FixedSizeBinary(16)) => Extension::Uuid,
            (Some("arrow.json"), kind) if kind.is_text() => Extension::Json,
            (Some("arrow.bool8"), Kind::Int(int)) if int == signed_byte => Extension::Bool8,
            _ => Extension::None,
        }
    }
}

/// The data buffers of a view array (after its views buffer).
#[derive(Debug, Clone, Copy)]
pub(crate) enum Variadic<'a> {
    /// None (not a view array).
    None,
    /// `count` buffers of a message from `first` on (their ranges checked against the body
    /// when read).
    Message {
        specs: format::Buffers<'a>,
        body: &'a [u8],
        first: u32,
        count: u32,
    },
    /// An [`ArrayView`](crate::array::ArrayView)'s buffers.
    #[cfg(feature = "alloc")]
    Buffers(&'a [crate::bytes::Bytes<'a>]),
}

impl<'a> Variadic<'a> {
    /// Data buffer `k`, if it exists.
    fn get(&self, k: usize) -> Option<&'a [u8]> {
        match *self {
            Variadic::None => None,
            Variadic::Message {
                specs,
                body,
                first,
                count,
            } => {
                if k >= count as usize {
                    return None;
                }
                let spec = specs.get(first as usize + k)?;
                let start = usize::try_from(spec.offset).ok()?;
                let end = start.checked_add(usize::try_from(spec.length).ok()?)?;
                body.get(start..end)
            }
            #[cfg(feature = "alloc")]
            Variadic::Buffers(buffers) => buffers.get(k).map(|b| &**b),
        }
    }
}

/// One array of a view: its type, length, slot offset, validity and buffers as slices, and
/// where its children and dictionary values are in the table.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Node<'a> {
    /// The field name.
    pub(crate) name: &'a str,
    pub(crate) kind: Kind<'a>,
    pub(crate) len: usize,
    /// Slot offset into the buffers (non-zero for sliced arrays): slot `i` is at `offset + i`.
    pub(crate) offset: usize,
    /// The validity bitmap, when some slot is null (`None` when none is).
    pub(crate) validity: Option<&'a [u8]>,
    /// The buffers after the validity bitmap: values, or offsets then data (list views: offsets
    /// then sizes; dense unions: type ids then offsets).
    pub(crate) buffers: [&'a [u8]; 2],
    pub(crate) variadic: Variadic<'a>,
    /// The index past this array's subtree: its children and dictionary values.
    pub(crate) end: usize,
    /// Child arrays (the first is the next node; each child's `end` leads to the next).
    pub(crate) children: u32,
    /// A dictionary-encoded array: the index type (its values are the next node).
    pub(crate) dictionary: Option<IntType>,
    /// The field's canonical extension type, if the encoder knows it.
    pub(crate) extension: Extension,
}

impl<'a> Node<'a> {
    /// An array of `kind` with nothing in it yet.
    const fn new(name: &'a str, kind: Kind<'a>, len: usize) -> Self {
        Node {
            name,
            kind,
            len,
            offset: 0,
            validity: None,
            buffers: [&[]; 2],
            variadic: Variadic::None,
            children: 0,
            end: 0,
            dictionary: None,
            extension: Extension::None,
        }
    }

    /// An array of `kind` with these buffers from slot `offset` on (no validity, children or
    /// data buffers).
    #[inline(always)]
    pub(crate) fn of_buffers(kind: Kind<'a>, offset: usize, buffers: [&'a [u8]; 2]) -> Self {
        let mut node = Node::new("", kind, 0);
        node.offset = offset;
        node.buffers = buffers;
        node
    }

    /// Whether some slot is null (logical nulls of unions and run-end encoding not included).
    pub(crate) fn has_nulls(&self) -> bool {
        self.validity.is_some()
            || (self.kind == Kind::Null && self.dictionary.is_none() && self.len > 0)
    }

    /// Fixed-width value of slot `i`.
    #[inline(always)]
    pub(crate) fn value<T: Native>(&self, i: usize) -> T {
        read::<T>(self.buffers[0], self.offset.wrapping_add(i))
    }

    /// The bytes of fixed-width slot `i`.
    pub(crate) fn fixed_bytes(&self, i: usize) -> &'a [u8] {
        let width = self.kind.byte_width().unwrap_or(0);
        let start = self.offset.wrapping_add(i).wrapping_mul(width);
        self.buffers[0]
            .get(start..start.wrapping_add(width))
            .unwrap_or_default()
    }

    /// Slot `i` of a run ends array (Int16, Int32 or Int64, checked before it is read), by
    /// [`columnar::integer_at`].
    #[inline(always)]
    pub(crate) fn integer(&self, i: usize) -> i64 {
        let int = match self.kind {
            Kind::Int(int) => Some(int),
            _ => None,
        };
        let value = columnar::integer_at(self.buffers[0], self.offset.wrapping_add(i), int);
        debug_assert!(value.is_some(), "run ends are Int16, Int32 or Int64");
        value.unwrap_or_default()
    }

    /// The dictionary index in slot `i` (for `ArrayView`).
    #[cfg(feature = "alloc")]
    #[inline(always)]
    pub(crate) fn key(&self, i: usize) -> usize {
        self.dictionary.map_or(usize::MAX, |index_type| {
            columnar::index_at(
                self.buffers[0],
                self.offset.wrapping_add(i),
                Some(index_type),
            )
        })
    }

    /// The pair of offsets of width `O` at slot `i` (of text, binary or a list), as a range of
    /// indices (`0..0` past the buffer, which validation rules out).
    #[inline(always)]
    pub(crate) fn offsets<O: Offset>(&self, i: usize) -> Range<usize> {
        let at = self.offset.wrapping_add(i).wrapping_mul(O::WIDTH);
        let Some(pair) = self.buffers[0].get(at..at.wrapping_add(2 * O::WIDTH)) else {
            return 0..0;
        };
        let (start, end) = pair.split_at(O::WIDTH);
        O::from_le_slice(start).to_usize()..O::from_le_slice(end).to_usize()
    }

    /// The bytes of slot `i` of a binary, text, view or fixed-size binary array.
    pub(crate) fn bytes_value(&self, i: usize) -> &'a [u8] {
        let range = match self.kind {
            Kind::Binary | Kind::Utf8 => self.offsets::<i32>(i),
            Kind::LargeBinary | Kind::LargeUtf8 => self.offsets::<i64>(i),
            Kind::BinaryView | Kind::Utf8View => {
                let views = self.buffers[0];
                let j = self.offset.wrapping_add(i);
                return columnar::view_bytes(views, j, |k| {
                    self.variadic.get(k).unwrap_or_default()
                });
            }
            Kind::FixedSizeBinary(_) => return self.fixed_bytes(i),
            _ => return &[],
        };
        self.buffers[1].get(range).unwrap_or_default()
    }

    /// The child slots list slot `i` spans (any list, list view, map or fixed-size list).
    pub(crate) fn list_range(&self, i: usize) -> Range<usize> {
        let [first, second] = self.buffers;
        let j = self.offset.wrapping_add(i);
        match self.kind {
            Kind::List | Kind::Map => self.offsets::<i32>(i),
            Kind::LargeList => self.offsets::<i64>(i),
            Kind::ListView => {
                let start = read::<i32>(first, j) as usize;
                start..start.saturating_add(read::<i32>(second, j) as usize)
            }
            Kind::LargeListView => {
                let start = read::<i64>(first, j) as usize;
                start..start.saturating_add(read::<i64>(second, j) as usize)
            }
            Kind::FixedSizeList(size) => j.saturating_mul(size)..(j + 1).saturating_mul(size),
            _ => 0..0,
        }
    }

    /// For union slot `i`: the index of the selected child and the slot in it (`(0, 0)` for
    /// another type).
    #[cfg(feature = "alloc")]
    pub(crate) fn union_value(&self, i: usize) -> (usize, usize) {
        let Kind::Union { dense, type_ids } = self.kind else {
            return (0, 0);
        };
        let j = self.offset.wrapping_add(i);
        columnar::union_slot(self.buffers[0], dense.then_some(self.buffers[1]), j, |id| {
            type_ids.child(id, self.children as usize)
        })
    }
}

/// A text, binary or list offset type: `i32` or `i64`.
pub(crate) trait Offset: Native + Into<i64> {
    /// The offset as an index (a negative one, which validation rules out, becomes one past
    /// any buffer).
    #[inline(always)]
    fn to_usize(self) -> usize {
        self.into() as usize
    }
}

impl Offset for i32 {}
impl Offset for i64 {}

/// A record batch as a flat table of borrowed, validated arrays: `N` at most.
///
/// The nodes are the columns' subtrees, in order; each column's `end` leads to the next.
#[derive(Debug, Clone)]
pub struct View<'a, const N: usize> {
    nodes: heapless::Vec<Node<'a>, N>,
    rows: usize,
}

/// Where a batch finds the dictionary batch of an id: its header and its body.
pub(crate) trait DictionaryBatches<'a> {
    /// The dictionary batch with `id`.
    fn dictionary(&self, id: i64) -> FormatResult<(format::RecordBatch<'a>, &'a [u8])>;
}

/// Refuses a compressed `batch`: decompressing needs `alloc`.
fn uncompressed(batch: format::RecordBatch<'_>) -> FormatResult<()> {
    match batch.compression()? {
        Some(_) => Err(FormatErrorKind::Unsupported {
            what: Feature::CompressionWithoutAlloc,
        }
        .into()),
        None => Ok(()),
    }
}

/// The walk of one message and its dictionaries into a view's nodes (a sink of the format's one
/// walk of a message body, [`body::array`]).
struct NodeDecoder<'a, 'd, D, const N: usize> {
    /// The view's nodes, decoded in place.
    nodes: &'d mut heapless::Vec<Node<'a>, N>,
    /// The body of the message being read (a dictionary batch's while its values are).
    body: &'a [u8],
    dictionaries: &'d D,
    version: MetadataVersion,
    /// Field nodes the message declares, for the capacity error.
    declared: usize,
}

impl<'a, const N: usize> View<'a, N> {
    /// A view of no rows and no arrays, for [`View::decode`] to fill.
    pub(crate) const fn empty() -> Self {
        View {
            nodes: heapless::Vec::new(),
            rows: 0,
        }
    }

    /// Decodes `batch` (with its `body`) against the schema's `fields` into this view, checking
    /// every array. It fills the view in place rather than returning one: a view is large
    /// (about 176 bytes an array), and a device's stack small, so the no-alloc readers decode
    /// into the one they return.
    pub(crate) fn decode(
        &mut self,
        fields: format::Fields<'a>,
        batch: format::RecordBatch<'a>,
        body: &'a [u8],
        version: MetadataVersion,
        dictionaries: &impl DictionaryBatches<'a>,
    ) -> FormatResult<()> {
        self.nodes.clear();
        uncompressed(batch)?;
        self.rows = usize::try_from(batch.length())
            .map_err(|_| invalid("RecordBatch.length", batch.length()))?;
        let mut cursor = Cursor::new(batch)?;
        let mut decoder = NodeDecoder {
            nodes: &mut self.nodes,
            body,
            dictionaries,
            version,
            declared: cursor.nodes.len(),
        };
        for (i, field) in fields.iter().enumerate() {
            let field = field.map(|field| MessageField {
                field,
                values: false,
            });
            let at = field.and_then(|field| body::array(&mut cursor, &mut decoder, field));
            let len = at.map(|at| decoder.nodes.get(at).map_or(0, |n| n.len));
            len.and_then(|len| need(len == self.rows, "column length differs from the batch", i))
                .map_err(|e| e.in_field(i))?;
        }
        cursor.finish()
    }

    /// Number of rows.
    pub fn num_rows(&self) -> usize {
        self.rows
    }

    /// Arrays in the view (columns, children and dictionary values).
    pub fn num_arrays(&self) -> usize {
        self.nodes.len()
    }

    /// The nodes.
    #[inline(always)]
    pub(crate) fn nodes(&self) -> &[Node<'a>] {
        &self.nodes
    }

    /// The columns' nodes are `0..columns_end()`: all of them.
    pub(crate) fn columns_end(&self) -> usize {
        self.nodes.len()
    }
}

/// The canonical extension of `field`'s array of `kind` (kept out of the frames of the walk of
/// a message body, which every level of nesting repeats on the stack).
#[inline(never)]
fn extension(
    field: format::Field<'_>,
    kind: Kind<'_>,
    dictionary: bool,
) -> FormatResult<Extension> {
    for entry in field.custom_metadata()?.iter() {
        let entry = entry?;
        if entry.key == format::EXTENSION_NAME_KEY {
            return Ok(Extension::of(Some(entry.value), kind, dictionary));
        }
    }
    Ok(Extension::None)
}

/// A field as the no-alloc decoder reads it: for its array, or (in a dictionary batch) for its
/// dictionary's values.
#[derive(Clone, Copy)]
struct MessageField<'a> {
    field: format::Field<'a>,
    /// The values of the field's dictionary: its dictionary encoding is ignored.
    values: bool,
}

/// The buffers of a node being read (it is in the nodes already, unless they are full).
struct Unread<'a> {
    /// The fixed buffers after the validity bitmap, `fixed` of them.
    buffers: [&'a [u8]; 2],
    fixed: usize,
    /// The nodes were full: the node is not in them (an error once its buffers are read, as
    /// they are checked first).
    full: bool,
}

/// A node being decoded (in the nodes once its buffers are read): what the walk of its children
/// and dictionary needs. It is kept small, as every level of nesting repeats it on the stack.
struct Decoding<'a> {
    field: format::Field<'a>,
    /// Its index in the nodes.
    at: usize,
    null_count: usize,
    /// Its dictionary encoding (its values come from the dictionary batch, as the next node).
    encoding: Option<DictionaryEncoding>,
    /// Child arrays decoded so far.
    children: u32,
}

impl<'a, D: DictionaryBatches<'a>, const N: usize> ArraySink<'a> for NodeDecoder<'a, '_, D, N> {
    type Field = MessageField<'a>;
    type Buffer = &'a [u8];
    type Buffers = Unread<'a>;
    type Parts = Decoding<'a>;
    type Array = usize;

    fn body_len(&self) -> u64 {
        self.body.len() as u64
    }

    #[inline(always)]
    fn start(
        &mut self,
        MessageField { field, values }: MessageField<'a>,
        len: usize,
        null_count: usize,
    ) -> FormatResult<(Decoding<'a>, Unread<'a>, Layout)> {
        let name = field.name()?.unwrap_or_default();
        let encoding = if values { None } else { field.dictionary()? };
        let children = field.children()?.len();
        let kind = Kind::of(field.type_()?, children)?;
        let mut node = Node::new(name, kind, len);
        node.extension = extension(field, kind, encoding.is_some())?;
        let layout = kind.layout(encoding.map(|e| e.index_type), self.version);
        let decoding = Decoding {
            field,
            at: self.nodes.len(),
            null_count,
            encoding,
            children: 0,
        };
        let unread = Unread {
            buffers: [&[]; 2],
            fixed: layout.buffers().len(),
            full: self.nodes.push(node).is_err(),
        };
        Ok((decoding, unread, layout))
    }

    fn buffer(&mut self, range: Range<u64>, _: Swap) -> FormatResult<&'a [u8]> {
        Ok(self
            .body
            .get(range.start as usize..range.end as usize)
            .unwrap_or_default())
    }

    fn keep(unread: &mut Unread<'a>, k: usize, bytes: &'a [u8]) {
        if k < unread.fixed
            && let Some(slot) = unread.buffers.get_mut(k)
        {
            *slot = bytes;
        }
    }

    /// Gives the node its buffers (its children and dictionary values follow it).
    #[inline(always)]
    fn walked(
        &mut self,
        decoding: &mut Decoding<'a>,
        unread: Unread<'a>,
        walked: Walked<&'a [u8]>,
        cursor: &Cursor<'a>,
    ) -> FormatResult<()> {
        let body = self.body;
        let node = self.nodes.get_mut(decoding.at).filter(|_| !unread.full);
        let Some(node) = node else {
            return Err(self.full());
        };
        node.validity = walked.validity;
        node.buffers = unread.buffers;
        if let Some(variadic) = walked.variadic {
            let count = variadic.len();
            let too_many = || invalid("variadicBufferCounts", count as i64);
            node.variadic = Variadic::Message {
                specs: cursor.buffers,
                body,
                first: u32::try_from(variadic.start).map_err(|_| too_many())?,
                count: u32::try_from(count).map_err(|_| too_many())?,
            };
        }
        Ok(())
    }

    #[inline(never)]
    fn child(&self, decoding: &Decoding<'a>, i: usize) -> FormatResult<Option<MessageField<'a>>> {
        let children = decoding.field.children()?;
        if decoding.encoding.is_some() || i >= children.len() {
            return Ok(None);
        }
        Ok(Some(MessageField {
            field: children.get(i)?,
            values: false,
        }))
    }

    fn add_child(decoding: &mut Decoding<'a>, _: usize) {
        decoding.children += 1;
    }

    /// Decodes the dictionary's values, completes the node and checks it.
    #[inline(always)]
    fn finish(&mut self, decoding: Decoding<'a>) -> FormatResult<usize> {
        let at = decoding.at;
        if let Some(encoding) = decoding.encoding {
            self.dictionary(decoding.field, encoding)?;
        }
        let end = self.nodes.len();
        if let Some(node) = self.nodes.get_mut(at) {
            node.dictionary = decoding.encoding.map(|e| e.index_type);
            node.children = decoding.children;
            node.end = end;
        }
        self.check(at, decoding.null_count)?;
        Ok(at)
    }
}

impl<'a, D: DictionaryBatches<'a>, const N: usize> NodeDecoder<'a, '_, D, N> {
    /// The error of a batch with more arrays than the view holds.
    fn full(&self) -> FormatError {
        FormatErrorKind::CapacityExceeded {
            what: Capacity::Arrays,
            needed: self.declared.max(N + 1) as u64,
            capacity: N as u64,
        }
        .into()
    }

    /// Decodes the values of `field`'s dictionary from its dictionary batch (the next node).
    #[inline(never)]
    fn dictionary(
        &mut self,
        field: format::Field<'a>,
        encoding: DictionaryEncoding,
    ) -> FormatResult<()> {
        let (batch, body) = self.dictionaries.dictionary(encoding.id)?;
        uncompressed(batch)?;
        let mut cursor = Cursor::new(batch)?;
        let outer = core::mem::replace(&mut self.body, body);
        let values = MessageField {
            field,
            values: true,
        };
        body::array(&mut cursor, self, values)?;
        self.body = outer;
        cursor.finish()
    }

    /// Checks node `at` (with `null_count` nulls declared, its children and dictionary decoded)
    /// against the columnar format.
    #[inline(never)]
    fn check(&self, at: usize, null_count: usize) -> FormatResult<()> {
        let nodes: &[Node<'a>] = self.nodes;
        let Some(node) = nodes.get(at) else {
            debug_assert!(false, "a node is checked once it is added");
            return Ok(());
        };
        let values = node
            .dictionary
            .and_then(|_| nodes.get(at + 1))
            .map_or(0, |v| v.len);
        // `check` asks for children `k < node.children` only (`Kind::of` checked their count).
        let children = |k| siblings(nodes, at + 1, usize::MAX).nth(k).map(|(_, c)| *c);
        check(node, null_count, children, values).map(drop)
    }
}

/// Checks `node` against the columnar format, the one validator of both forms (decoded views and
/// [`ArrayView`](crate::array::ArrayView)s): its slots `offset..offset + len`, with `child(k)` its
/// children (checked already) and `dictionary_len` the length of its dictionary, if it is
/// dictionary-encoded. Returns the null count: `null_count` as declared, checked against the
/// bitmap, or that of a type without one.
pub(crate) fn check<'a>(
    node: &Node<'a>,
    null_count: usize,
    child: impl Fn(usize) -> Option<Node<'a>>,
    dictionary_len: usize,
) -> FormatResult<usize> {
    let start = node.offset;
    let end = start
        .checked_add(node.len)
        .ok_or_else(|| bad("offset + length overflows", start))?;
    let [first, second] = node.buffers;
    let logical_nulls_only = node.dictionary.is_none()
        && matches!(
            node.kind,
            Kind::Null | Kind::Union { .. } | Kind::RunEndEncoded
        );
    let null_count = if logical_nulls_only {
        // These types have no validity bitmap; nulls come from their children.
        let what = "validity bitmap on a type without one";
        need(node.validity.is_none(), what, 0)?;
        if node.kind == Kind::Null { node.len } else { 0 }
    } else {
        columnar::check_nulls(node.validity, start, end, null_count)?;
        null_count
    };
    if let Some(index_type) = node.dictionary {
        let validity = node.validity.filter(|_| null_count > 0);
        columnar::check_dictionary_keys(first, validity, start, end, index_type, dictionary_len)?;
        return Ok(null_count);
    }
    let child_len = |k: usize| child(k).map_or(0, |c| c.len);
    let children_cover = |what| {
        let mut children = (0..node.children as usize).map_while(&child).enumerate();
        children.try_for_each(|(i, child)| need(child.len >= end, what, i))
    };
    let checked = match node.kind {
        Kind::Null => Ok(()),
        Kind::Boolean => columnar::check_fixed(first, 1, end.div_ceil(8)),
        Kind::Binary | Kind::Utf8 => {
            columnar::check_offsets::<i32>(first, start, end, second.len())?;
            if node.kind == Kind::Utf8 {
                columnar::check_utf8::<i32>(first, second, start, end)?;
            }
            Ok(())
        }
        Kind::LargeBinary | Kind::LargeUtf8 => {
            columnar::check_offsets::<i64>(first, start, end, second.len())?;
            if node.kind == Kind::LargeUtf8 {
                columnar::check_utf8::<i64>(first, second, start, end)?;
            }
            Ok(())
        }
        Kind::BinaryView | Kind::Utf8View => {
            let variadic = node.variadic;
            columnar::check_views(first, start, end, node.kind == Kind::Utf8View, |k| {
                variadic.get(k)
            })
        }
        Kind::List => columnar::check_offsets::<i32>(first, start, end, child_len(0)),
        Kind::LargeList => columnar::check_offsets::<i64>(first, start, end, child_len(0)),
        Kind::Map => {
            let entries = child(0).ok_or_else(|| bad("map without entries", 0))?;
            need(
                entries.kind == Kind::Struct && entries.children == 2,
                "map entries are not a struct of key and value",
                0,
            )?;
            columnar::check_offsets::<i32>(first, start, end, entries.len)
        }
        Kind::ListView => {
            columnar::check_list_views::<i32>(first, second, start, end, child_len(0))
        }
        Kind::LargeListView => {
            columnar::check_list_views::<i64>(first, second, start, end, child_len(0))
        }
        Kind::FixedSizeList(size) => {
            let needed = end
                .checked_mul(size)
                .ok_or_else(|| bad("list size overflows", end))?;
            need(
                child_len(0) >= needed,
                "child too short for fixed-size lists",
                end,
            )
        }
        Kind::Struct => children_cover("struct child shorter than the struct"),
        Kind::Union { dense, type_ids } => {
            if !dense {
                children_cover("sparse union child shorter than the union")?;
            }
            let child_of = |id| type_ids.child(id, node.children as usize);
            columnar::check_union(
                first,
                dense.then_some(second),
                start,
                end,
                child_of,
                child_len,
            )
        }
        Kind::RunEndEncoded => {
            let (Some(run_ends), Some(values)) = (child(0), child(1)) else {
                return Err(bad("run-end encoded array needs two children", 0));
            };
            need(
                matches!(
                    run_ends.kind,
                    Kind::Int(IntType {
                        bit_width: 16 | 32 | 64,
                        signed: true
                    })
                ),
                "run ends are not Int16, Int32 or Int64",
                0,
            )?;
            need(run_ends.validity.is_none(), "run ends contain nulls", 0)?;
            need(
                values.len >= run_ends.len,
                "fewer values than runs",
                values.len,
            )?;
            columnar::check_run_ends(|k| run_ends.integer(k), run_ends.len, node.len, end)
        }
        kind => {
            let width = kind
                .byte_width()
                .ok_or_else(|| bad("type has no layout", 0))?;
            columnar::check_fixed(first, width, end)
        }
    };
    checked.map(|()| null_count)
}

/// A table of nodes read by index: a view's slice of them, or (with `alloc`) a
/// [`RecordBatch`](crate::array::RecordBatch)'s arrays, whose nodes are made when read (so that
/// an encoder of a batch allocates nothing).
pub(crate) trait Table<'a> {
    /// A node read from the table: borrowed from a slice, or made.
    type Ref<'s>: core::ops::Deref<Target = Node<'a>>
    where
        Self: 's;
    /// Node `at`, if it exists.
    fn node(&self, at: usize) -> Option<Self::Ref<'_>>;
}

impl<'a> Table<'a> for [Node<'a>] {
    type Ref<'s>
        = &'s Node<'a>
    where
        Self: 's;

    #[inline(always)]
    fn node(&self, at: usize) -> Option<&Node<'a>> {
        self.get(at)
    }
}

/// The nodes from `at` on, each the next's predecessor by its `end`, until `end`: the columns of
/// a view (from 0 to its columns' end) or the children of a node (from its index + 1 to its
/// `end`, dictionary values excluded as they follow the children).
pub(crate) fn siblings<'n, 'a, T: Table<'a> + ?Sized>(
    nodes: &'n T,
    at: usize,
    end: usize,
) -> impl Iterator<Item = (usize, T::Ref<'n>)> {
    let mut next = at;
    core::iter::from_fn(move || {
        if next >= end {
            return None;
        }
        let i = next;
        let node = nodes.node(i)?;
        next = node.end.max(i + 1);
        Some((i, node))
    })
}

/// The index of child `k` of node `at` (the first child follows its parent).
pub(crate) fn child_at<'a, T: Table<'a> + ?Sized>(nodes: &T, at: usize, k: usize) -> Option<usize> {
    siblings(nodes, at + 1, usize::MAX).nth(k).map(|(i, _)| i)
}

#[cfg(all(test, feature = "alloc"))]
pub(crate) mod tests {
    //! The table's shape (order, children, ends, dictionary values) and the buffer walk.

    use super::{Kind, Table, child_at, siblings};
    use crate::array::Arrays;
    use crate::array::{ArrayView, RecordBatch};
    use crate::builder::{
        AppendValue, ArrayBuilder, DictionaryBuilder, ListBuilder, PrimitiveBuilder, RunEndBuilder,
        StringBuilder, StructBuilder, UnionBuilder,
    };
    use crate::datatype::IntType;
    use crate::datatype::UnionMode;
    use crate::format::{self, MetadataVersion, cursor::Cursor};
    use crate::format::{Swap, TypeIds};
    use core::ops::Range;
    use std::vec;
    use std::vec::Vec;

    pub(crate) fn batch() -> RecordBatch<'static> {
        let mut dictionary = DictionaryBuilder::new(StringBuilder::new());
        dictionary.extend_options([Some("x"), None, Some("y"), Some("x")]);
        let mut lists = ListBuilder::new(PrimitiveBuilder::<i32>::new());
        lists.extend_options([
            Some(vec![Some(1), None]),
            None,
            Some(vec![]),
            Some(vec![Some(4)]),
        ]);
        let (mut a, mut b) = (PrimitiveBuilder::<i64>::new(), StringBuilder::new());
        a.extend_options((0..4).map(Some));
        b.extend_options([Some("s"); 4]);
        let mut structs = StructBuilder::new().with_child("a", a).with_child("b", b);
        (0..4).for_each(|_| structs.append());
        let mut runs = RunEndBuilder::new(PrimitiveBuilder::<i32>::new());
        runs.extend_options([Some(7), Some(7), None, Some(9)]);
        let mut union = UnionBuilder::new(UnionMode::Dense)
            .with_child(3, "i", PrimitiveBuilder::<i32>::new())
            .with_child(5, "s", StringBuilder::new());
        for k in 0..4 {
            if k % 2 == 0 {
                union
                    .append::<PrimitiveBuilder<i32>>(3)
                    .unwrap()
                    .append_value(Some(k));
            } else {
                union.append_child(5).unwrap().append_null();
            }
        }
        RecordBatch::from_columns([
            (
                "ints",
                ArrayView::from_values([Some(1i32), None, Some(3), Some(4)]).unwrap(),
            ),
            ("dict", dictionary.finish().unwrap()),
            ("list", lists.finish().unwrap()),
            ("struct", structs.finish().unwrap()),
            ("runs", runs.finish().unwrap()),
            ("union", union.finish().unwrap()),
        ])
        .unwrap()
    }

    #[test]
    fn a_batch_flattens_depth_first_with_dictionary_values_after_their_array() {
        let batch = batch();
        let nodes = &Arrays::of_batch(&batch);
        let columns: Vec<(usize, &str)> = siblings(nodes, 0, nodes.columns_end())
            .map(|(at, n)| (at, n.name))
            .collect();
        // ints; dict + its values; list + item; struct + a + b; runs + run_ends + values;
        // union + i + s.
        assert_eq!(
            columns,
            [
                (0, "ints"),
                (1, "dict"),
                (3, "list"),
                (5, "struct"),
                (8, "runs"),
                (11, "union")
            ]
        );
        assert_eq!(nodes.columns_end(), 14);
        assert_eq!(nodes.num_rows(), 4);
        let node = |at| nodes.node(at).unwrap();
        assert!(node(1).dictionary.is_some());
        assert_eq!(node(2).kind, Kind::Utf8);
        assert_eq!((node(5).children, node(5).end), (2, 8));
        assert_eq!(child_at(nodes, 5, 1), Some(7));
        assert_eq!(node(7).name, "b");
        assert_eq!(child_at(nodes, 11, 1), Some(13));
        // One array is one column, its values the rows.
        let array = ArrayView::from_values([Some(1i64), None]).unwrap();
        let nodes = Arrays::of_array(&array);
        assert_eq!((nodes.columns_end(), nodes.num_rows()), (1, 2));
    }

    /// What `Layout::walk` made of the next array of `kind` with `null_count` nulls: the buffers
    /// it read (range and swap), the validity it kept, the buffers it kept and the indices of
    /// the variadic ones.
    type Walked = (
        Vec<(Range<u64>, Swap)>,
        Option<Range<u64>>,
        Vec<Range<u64>>,
        Option<Range<usize>>,
    );

    fn walk(
        cursor: &mut Cursor<'_>,
        version: MetadataVersion,
        kind: Kind<'_>,
        null_count: usize,
    ) -> Walked {
        let (mut read, mut kept) = (Vec::new(), Vec::new());
        let buffer = |range: Range<u64>, swap| {
            read.push((range.clone(), swap));
            Ok(range)
        };
        let layout = kind.layout(None, version);
        let walked = layout.walk(cursor, 80, null_count, buffer, |r| kept.push(r));
        let walked = walked.unwrap();
        (read, walked.validity, kept, walked.variadic)
    }

    #[test]
    fn the_buffer_walk_keeps_validity_that_counts_and_reads_variadic_buffers_last() {
        use crate::flatbuffer::builder::{Obj, Value, finish};
        use crate::format::slots::*;
        let specs = [
            (0, 8),
            (8, 16),
            (24, 8),
            (32, 4),
            (40, 16),
            (0, 0),
            (56, 16),
            (0, 8),
        ];
        let bytes = specs.iter().flat_map(|&(o, l): &(i64, i64)| [o, l]);
        let bytes = bytes.flat_map(i64::to_le_bytes).collect();
        let batch = Obj::new()
            .with(
                RECORD_BATCH_BUFFERS,
                Value::Vector {
                    elem_size: 16,
                    bytes,
                },
            )
            .i64s(RECORD_BATCH_VARIADIC_BUFFER_COUNTS, &[1]);
        let message = Obj::new()
            .with(MESSAGE_VERSION, Value::I16(4))
            .with(MESSAGE_HEADER_TYPE, Value::U8(HEADER_RECORD_BATCH))
            .table(MESSAGE_HEADER, batch);
        let message = finish(&message);
        let header = format::Message::parse(&message).unwrap().header().unwrap();
        let format::MessageHeader::RecordBatch(batch) = header else {
            panic!("not a record batch");
        };
        let mut cursor = Cursor::new(batch).unwrap();
        // Int32 with a null: its bitmap kept, its values swapped as 4-byte words.
        let int = Kind::Int(IntType {
            bit_width: 32,
            signed: true,
        });
        let (read, validity, kept, variadic) = walk(&mut cursor, MetadataVersion::V4, int, 1);
        assert_eq!(variadic, None);
        assert_eq!(read, [(0..8, Swap::None), (8..24, Swap::Each(4))]);
        assert_eq!(
            (validity, kept.len(), kept.first()),
            (Some(0..8), 1, Some(&(8..24)))
        );
        // A V4 dense union with nulls declared: its bitmap is read but is not the union's nulls.
        let dense = Kind::Union {
            dense: true,
            type_ids: TypeIds::Positions,
        };
        let (read, validity, kept, _) = walk(&mut cursor, MetadataVersion::V4, dense, 2);
        assert_eq!(
            (read.len(), validity, kept),
            (3, None, vec![32..36, 40..56])
        );
        // Utf8View without nulls: an empty bitmap dropped, the views, then its data buffer.
        let (read, validity, kept, variadic) =
            walk(&mut cursor, MetadataVersion::V4, Kind::Utf8View, 0);
        assert_eq!(variadic, Some(7..8));
        assert_eq!(
            read.get(1..),
            Some(&[(56..72, Swap::Views), (0..8, Swap::None)][..])
        );
        assert_eq!((validity, kept), (None, vec![56..72, 0..8]));
        cursor.finish().unwrap();
        // V5: the same buffers as one view array (bitmap, views, data), then none for a second.
        let mut cursor = Cursor::new(batch).unwrap();
        let (_, _, kept, variadic) = walk(&mut cursor, MetadataVersion::V5, Kind::Utf8View, 0);
        assert_eq!((kept, variadic), (vec![8..24, 24..32], Some(2..3)));
        let layout = Kind::Utf8View.layout(None, MetadataVersion::V5);
        let e = layout
            .walk(&mut cursor, 80, 0, |_, _| Ok(()), drop)
            .unwrap_err();
        let what = "view array without a variadic buffer count";
        assert_eq!(
            e.kind,
            crate::error::FormatErrorKind::LayoutMismatch { what }
        );
    }
}
