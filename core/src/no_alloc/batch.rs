//! [`Batch`]: a record batch read in place from one block, its arrays in a fixed-capacity list.
//!
//! A `RecordBatch` message (its flatbuffer header and body, both in the caller's scratch) enters
//! [`Batch::decode`] with the schema's fields and the dictionaries read so far. The walk goes
//! depth-first through the fields, as the message lays them out, and records one [`Node`] per
//! array: its type (checked from the flatbuffer `Type`), length, validity and buffers as slices
//! of the body, and where its children end. A dictionary-encoded array's values are decoded from
//! their dictionary batch into the same list, after the array. Every node is checked against the
//! columnar format's rules ([`columnar`]) before the batch is handed out, so the
//! encoder reads values without further checks.

use crate::columnar::{self, Native, bad, bit, index_at, need, read};
use crate::datatype::{IntType, IntervalUnit, Precision, TimeUnit, UnionMode};
use crate::error::{Capacity, Feature, FormatError, FormatErrorKind, FormatResult};
use crate::format::cursor::Cursor;
use crate::format::{self, DictionaryEncoding, Int32s, MetadataVersion};
use core::ops::Range;

/// Arrays a [`Batch`] holds unless told otherwise: every column, every child and every
/// dictionary's values count one.
pub const DEFAULT_ARRAYS: usize = 64;

/// An array's type, checked from the flatbuffer `Type` (the value type for a dictionary-encoded
/// array).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Kind<'a> {
    Null,
    Boolean,
    Int(IntType),
    Float16,
    Float32,
    Float64,
    /// Bytes per value and scale.
    Decimal(usize, i8),
    Date32,
    Date64,
    Time32(TimeUnit),
    Time64(TimeUnit),
    Timestamp(TimeUnit, Option<&'a str>),
    Duration(TimeUnit),
    Interval(IntervalUnit),
    Binary,
    LargeBinary,
    Utf8,
    LargeUtf8,
    BinaryView,
    Utf8View,
    FixedSizeBinary(usize),
    List,
    LargeList,
    ListView,
    LargeListView,
    FixedSizeList(usize),
    Struct,
    Map,
    Union {
        dense: bool,
        type_ids: Option<Int32s<'a>>,
    },
    RunEndEncoded,
}

fn invalid(what: &'static str, value: impl Into<i64>) -> FormatError {
    FormatErrorKind::InvalidValue {
        what,
        value: value.into(),
    }
    .into()
}

impl<'a> Kind<'a> {
    /// The type of a field with `children` child fields, checked as the owned schema checks it.
    fn of(ty: format::Type<'a>, children: usize) -> FormatResult<Self> {
        use format::Type as T;
        let expect = |n: usize| {
            if children == n {
                Ok(())
            } else {
                Err(invalid("number of child fields", children as i64))
            }
        };
        let kind = match ty {
            T::Null => Kind::Null,
            T::Bool => Kind::Boolean,
            T::Int(int) => Kind::Int(int),
            T::FloatingPoint(Precision::Half) => Kind::Float16,
            T::FloatingPoint(Precision::Single) => Kind::Float32,
            T::FloatingPoint(Precision::Double) => Kind::Float64,
            T::Decimal {
                precision,
                scale,
                bit_width,
            } => {
                let max_precision = match bit_width {
                    32 => 9,
                    64 => 18,
                    128 => 38,
                    256 => 76,
                    _ => return Err(invalid("Decimal.bitWidth", bit_width)),
                };
                if !(1..=max_precision).contains(&precision) {
                    return Err(invalid("Decimal.precision", precision));
                }
                let scale = i8::try_from(scale).map_err(|_| invalid("Decimal.scale", scale))?;
                Kind::Decimal(bit_width as usize / 8, scale)
            }
            T::Date(crate::datatype::DateUnit::Day) => Kind::Date32,
            T::Date(_) => Kind::Date64,
            T::Time { unit, bit_width } => match (unit, bit_width) {
                (TimeUnit::Second | TimeUnit::Millisecond, 32) => Kind::Time32(unit),
                (TimeUnit::Microsecond | TimeUnit::Nanosecond, 64) => Kind::Time64(unit),
                _ => return Err(invalid("Time.bitWidth", bit_width)),
            },
            T::Timestamp { unit, timezone } => Kind::Timestamp(unit, timezone),
            T::Duration(unit) => Kind::Duration(unit),
            T::Interval(unit) => Kind::Interval(unit),
            T::Binary => Kind::Binary,
            T::LargeBinary => Kind::LargeBinary,
            T::Utf8 => Kind::Utf8,
            T::LargeUtf8 => Kind::LargeUtf8,
            T::BinaryView => Kind::BinaryView,
            T::Utf8View => Kind::Utf8View,
            T::FixedSizeBinary { byte_width } => Kind::FixedSizeBinary(
                usize::try_from(byte_width)
                    .map_err(|_| invalid("FixedSizeBinary.byteWidth", byte_width))?,
            ),
            T::List | T::LargeList | T::ListView | T::LargeListView | T::Map { .. } => {
                expect(1)?;
                match ty {
                    T::List => Kind::List,
                    T::LargeList => Kind::LargeList,
                    T::ListView => Kind::ListView,
                    T::LargeListView => Kind::LargeListView,
                    _ => Kind::Map,
                }
            }
            T::FixedSizeList { list_size } => {
                expect(1)?;
                Kind::FixedSizeList(
                    usize::try_from(list_size)
                        .map_err(|_| invalid("FixedSizeList.listSize", list_size))?,
                )
            }
            T::Struct => Kind::Struct,
            T::Union { mode, type_ids } => {
                if let Some(ids) = type_ids {
                    expect(ids.len())?;
                    for (i, id) in ids.iter().enumerate() {
                        let repeated = ids.iter().take(i).any(|earlier| earlier == id);
                        if !(0..=i32::from(i8::MAX)).contains(&id) || repeated {
                            return Err(invalid("Union.typeIds (negative or repeated)", 0));
                        }
                    }
                } else if children > i8::MAX as usize + 1 {
                    return Err(invalid("number of union children", children as i64));
                }
                Kind::Union {
                    dense: mode == UnionMode::Dense,
                    type_ids,
                }
            }
            T::RunEndEncoded => {
                expect(2)?;
                Kind::RunEndEncoded
            }
        };
        Ok(kind)
    }

    /// Bytes per value of a fixed-width type.
    fn byte_width(self) -> Option<usize> {
        Some(match self {
            Kind::Int(int) => int.byte_width(),
            Kind::Float16 => 2,
            Kind::Float32 | Kind::Date32 | Kind::Time32(_) => 4,
            Kind::Float64
            | Kind::Date64
            | Kind::Time64(_)
            | Kind::Timestamp(..)
            | Kind::Duration(_) => 8,
            Kind::Decimal(width, _) | Kind::FixedSizeBinary(width) => width,
            Kind::Interval(IntervalUnit::YearMonth) => 4,
            Kind::Interval(IntervalUnit::DayTime) => 8,
            Kind::Interval(IntervalUnit::MonthDayNano) => 16,
            _ => return None,
        })
    }

    /// The buffers after the validity bitmap (views: before the variadic ones).
    fn buffer_count(self) -> usize {
        match self {
            Kind::Null | Kind::RunEndEncoded | Kind::Struct | Kind::FixedSizeList(_) => 0,
            Kind::Binary
            | Kind::LargeBinary
            | Kind::Utf8
            | Kind::LargeUtf8
            | Kind::ListView
            | Kind::LargeListView
            | Kind::Union { dense: true, .. } => 2,
            _ => 1,
        }
    }

    /// Whether the text of a value is a string (map keys of these make an object).
    pub(crate) fn is_text(self) -> bool {
        matches!(self, Kind::Utf8 | Kind::LargeUtf8 | Kind::Utf8View)
    }
}

/// The data buffers of a view array: `count` buffers of the message from `first` on.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Variadic<'a> {
    specs: Option<format::Buffers<'a>>,
    body: &'a [u8],
    first: usize,
    count: usize,
}

impl<'a> Variadic<'a> {
    const NONE: Variadic<'static> = Variadic {
        specs: None,
        body: &[],
        first: 0,
        count: 0,
    };

    /// Data buffer `k`, if it exists (its range was checked against the body when read).
    fn get(&self, k: usize) -> Option<&'a [u8]> {
        if k >= self.count {
            return None;
        }
        let spec = self.specs?.get(self.first + k)?;
        let start = usize::try_from(spec.offset).ok()?;
        let end = start.checked_add(usize::try_from(spec.length).ok()?)?;
        self.body.get(start..end)
    }
}

/// One array of a batch (or of a dictionary's values).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Node<'a> {
    /// The field name.
    pub(crate) name: &'a str,
    pub(crate) kind: Kind<'a>,
    pub(crate) len: usize,
    pub(crate) null_count: usize,
    /// The validity bitmap, when some slot is null.
    validity: Option<&'a [u8]>,
    buffers: [&'a [u8]; 2],
    variadic: Variadic<'a>,
    /// Child arrays in the message (the first is the next node; each child's `end` leads to
    /// the next).
    pub(crate) children: usize,
    /// The index past this array's subtree: its children and dictionary values.
    pub(crate) end: usize,
    /// A dictionary-encoded array: the index type and the node of the values.
    pub(crate) dictionary: Option<(IntType, usize)>,
}

impl<'a> Node<'a> {
    /// Whether slot `i` holds a value.
    #[inline(always)]
    pub(crate) fn is_valid(&self, i: usize) -> bool {
        self.validity.is_none_or(|v| bit(v, i))
    }

    /// Fixed-width value of slot `i`.
    #[inline(always)]
    pub(crate) fn value<T: Native>(&self, i: usize) -> T {
        read::<T>(self.buffers[0], i)
    }

    /// The bytes of fixed-width slot `i`.
    pub(crate) fn fixed_bytes(&self, i: usize) -> &'a [u8] {
        let width = self.kind.byte_width().unwrap_or(0);
        self.buffers[0]
            .get(i * width..(i + 1) * width)
            .unwrap_or_default()
    }

    /// Boolean value of slot `i`.
    pub(crate) fn bool_value(&self, i: usize) -> bool {
        bit(self.buffers[0], i)
    }

    /// Slot `i` of an integer array widened to i64 (run ends).
    fn integer(&self, i: usize) -> i64 {
        match self.kind {
            Kind::Int(IntType { bit_width: 16, .. }) => self.value::<i16>(i).into(),
            Kind::Int(IntType { bit_width: 32, .. }) => self.value::<i32>(i).into(),
            Kind::Int(IntType { bit_width: 64, .. }) => self.value::<i64>(i),
            _ => 0,
        }
    }

    /// The dictionary index in slot `i`.
    pub(crate) fn key(&self, i: usize) -> usize {
        self.dictionary.map_or(usize::MAX, |(index_type, _)| {
            index_at(self.buffers[0], i, index_type)
        })
    }

    /// The bytes of slot `i` of a binary, text, view or fixed-size binary array.
    pub(crate) fn bytes_value(&self, i: usize) -> &'a [u8] {
        let [first, second] = self.buffers;
        match self.kind {
            Kind::Binary | Kind::Utf8 => second
                .get(columnar::offset_range::<i32>(first, i))
                .unwrap_or_default(),
            Kind::LargeBinary | Kind::LargeUtf8 => second
                .get(columnar::offset_range::<i64>(first, i))
                .unwrap_or_default(),
            Kind::BinaryView | Kind::Utf8View => {
                columnar::view_bytes(first, i, |k| self.variadic.get(k).unwrap_or_default())
            }
            Kind::FixedSizeBinary(_) => self.fixed_bytes(i),
            _ => &[],
        }
    }

    /// The child slots list slot `i` spans (any list, list view, map or fixed-size list).
    pub(crate) fn list_range(&self, i: usize) -> Range<usize> {
        let [first, second] = self.buffers;
        match self.kind {
            Kind::List | Kind::Map => columnar::offset_range::<i32>(first, i),
            Kind::LargeList => columnar::offset_range::<i64>(first, i),
            Kind::ListView => {
                let start = read::<i32>(first, i) as usize;
                start..start + read::<i32>(second, i) as usize
            }
            Kind::LargeListView => {
                let start = read::<i64>(first, i) as usize;
                start..start.saturating_add(read::<i64>(second, i) as usize)
            }
            Kind::FixedSizeList(size) => i * size..(i + 1) * size,
            _ => 0..0,
        }
    }

    /// The child that union type id `id` selects.
    fn union_child(&self, id: i8) -> Option<usize> {
        match self.kind {
            Kind::Union {
                type_ids: Some(ids),
                ..
            } => ids.iter().position(|t| t == i32::from(id)),
            Kind::Union { type_ids: None, .. } => {
                usize::try_from(id).ok().filter(|c| *c < self.children)
            }
            _ => None,
        }
    }

    /// For union slot `i`: the index of the selected child and the slot in it.
    pub(crate) fn union_value(&self, i: usize) -> (usize, usize) {
        let dense = matches!(self.kind, Kind::Union { dense: true, .. });
        columnar::union_slot(self.buffers[0], dense.then_some(self.buffers[1]), i, |id| {
            self.union_child(id)
        })
    }
}

/// A record batch read in place: `N` arrays at most (see [`DEFAULT_ARRAYS`]).
#[derive(Debug, Clone)]
pub struct Batch<'a, const N: usize = DEFAULT_ARRAYS> {
    nodes: heapless::Vec<Node<'a>, N>,
    rows: usize,
    /// Nodes `0..columns_end` are the columns' subtrees.
    columns_end: usize,
}

/// Where a batch finds the dictionary batch of an id: its header and its body.
pub(crate) trait Dictionaries<'a> {
    /// The dictionary batch with `id`.
    fn dictionary(&self, id: i64) -> FormatResult<(format::RecordBatch<'a>, &'a [u8])>;
}

/// The walk of one message and its dictionaries into a batch's nodes.
struct Decoder<'a, 'd, D, const N: usize> {
    nodes: heapless::Vec<Node<'a>, N>,
    dictionaries: &'d D,
    version: MetadataVersion,
    /// Field nodes the message declares, for the capacity error.
    declared: usize,
}

impl<'a, const N: usize> Batch<'a, N> {
    /// Decodes `batch` (with its `body`) against the schema's `fields`, checking every array.
    pub(crate) fn decode(
        fields: format::Fields<'a>,
        batch: format::RecordBatch<'a>,
        body: &'a [u8],
        version: MetadataVersion,
        dictionaries: &impl Dictionaries<'a>,
    ) -> FormatResult<Self> {
        if batch.compression()?.is_some() {
            return Err(FormatErrorKind::Unsupported {
                what: Feature::CompressionWithoutAlloc,
            }
            .into());
        }
        let rows = usize::try_from(batch.length())
            .map_err(|_| invalid("RecordBatch.length", batch.length()))?;
        let mut cursor = Cursor::new(batch, version)?;
        let mut decoder = Decoder {
            nodes: heapless::Vec::new(),
            dictionaries,
            version,
            declared: cursor.nodes.len(),
        };
        for (i, field) in fields.iter().enumerate() {
            let field = field?;
            let at = decoder
                .array(field, &mut cursor, body, false)
                .map_err(|e| e.in_field(i))?;
            let len = decoder.nodes.get(at).map_or(0, |n| n.len);
            need(len == rows, "column length differs from the batch", i)
                .map_err(|e| e.in_field(i))?;
        }
        cursor.finish()?;
        let columns_end = decoder.nodes.len();
        Ok(Batch {
            nodes: decoder.nodes,
            rows,
            columns_end,
        })
    }

    /// Number of rows.
    pub fn num_rows(&self) -> usize {
        self.rows
    }

    /// Arrays in the batch (columns, children and dictionary values).
    pub fn num_arrays(&self) -> usize {
        self.nodes.len()
    }

    /// The nodes.
    pub(crate) fn nodes(&self) -> &[Node<'a>] {
        &self.nodes
    }

    /// The columns' nodes are `0..columns_end()`.
    pub(crate) fn columns_end(&self) -> usize {
        self.columns_end
    }
}

impl<'a, D: Dictionaries<'a>, const N: usize> Decoder<'a, '_, D, N> {
    /// Decodes `field`'s array (its values, when `values` is set, ignoring its dictionary
    /// encoding) and its children; returns its node index.
    fn array(
        &mut self,
        field: format::Field<'a>,
        cursor: &mut Cursor<'a>,
        body: &'a [u8],
        values: bool,
    ) -> FormatResult<usize> {
        let name = field.name()?.unwrap_or_default();
        let (len, null_count) = cursor.node()?;
        let encoding = if values { None } else { field.dictionary()? };
        let child_fields = field.children()?;
        let kind = Kind::of(field.type_()?, child_fields.len())?;
        let buffer = |cursor: &mut Cursor<'a>| -> FormatResult<&'a [u8]> {
            let range = cursor.buffer(body.len() as u64)?;
            Ok(body
                .get(range.start as usize..range.end as usize)
                .unwrap_or_default())
        };
        let mut node = Node {
            name,
            kind,
            len,
            null_count,
            validity: None,
            buffers: [&[]; 2],
            variadic: Variadic::NONE,
            children: 0,
            end: 0,
            dictionary: None,
        };
        let validity = match kind {
            _ if encoding.is_some() => true,
            Kind::Null | Kind::RunEndEncoded => false,
            Kind::Union { .. } => self.version < MetadataVersion::V5,
            _ => true,
        };
        if validity {
            let bitmap = buffer(cursor)?;
            if null_count > 0 {
                node.validity = Some(bitmap);
            }
        }
        let count = if encoding.is_some() {
            1
        } else {
            kind.buffer_count()
        };
        for slot in node.buffers.iter_mut().take(count) {
            *slot = buffer(cursor)?;
        }
        if matches!(kind, Kind::BinaryView | Kind::Utf8View) && encoding.is_none() {
            let count = cursor.variadic_count()?;
            node.variadic = Variadic {
                specs: Some(cursor.buffers),
                body,
                first: cursor.next_buffer,
                count,
            };
            for _ in 0..count {
                buffer(cursor)?;
            }
        }
        let at = self.nodes.len();
        self.push(node)?;
        if let Some(encoding) = encoding {
            let values = self.dictionary(field, encoding)?;
            node.dictionary = Some((encoding.index_type, values));
        } else {
            for (i, child) in child_fields.iter().enumerate() {
                let child = child?;
                self.array(child, cursor, body, false)
                    .map_err(|e| e.in_field(i))?;
                node.children += 1;
            }
        }
        node.end = self.nodes.len();
        self.check(&mut node, at)?;
        if let Some(slot) = self.nodes.get_mut(at) {
            *slot = node;
        }
        Ok(at)
    }

    fn push(&mut self, node: Node<'a>) -> FormatResult<()> {
        self.nodes.push(node).map_err(|_| {
            FormatErrorKind::CapacityExceeded {
                what: Capacity::Arrays,
                needed: self.declared.max(N + 1) as u64,
                capacity: N as u64,
            }
            .into()
        })
    }

    /// Decodes the values of `field`'s dictionary from its dictionary batch; returns their node.
    fn dictionary(
        &mut self,
        field: format::Field<'a>,
        encoding: DictionaryEncoding,
    ) -> FormatResult<usize> {
        let (batch, body) = self.dictionaries.dictionary(encoding.id)?;
        if batch.compression()?.is_some() {
            return Err(FormatErrorKind::Unsupported {
                what: Feature::CompressionWithoutAlloc,
            }
            .into());
        }
        let mut cursor = Cursor::new(batch, self.version)?;
        let values = self.array(field, &mut cursor, body, true)?;
        cursor.finish()?;
        Ok(values)
    }

    /// The child nodes of the node at `at` (`count` of them, decoded already).
    fn children(&self, at: usize, count: usize) -> impl Iterator<Item = &Node<'a>> {
        children(&self.nodes, at, count).map(|(_, child)| child)
    }

    /// Checks `node` (at index `at`, its children and dictionary decoded) against the
    /// columnar format; sets the null count of types without a bitmap.
    fn check(&self, node: &mut Node<'a>, at: usize) -> FormatResult<()> {
        let end = node.len;
        let [first, second] = node.buffers;
        match node.kind {
            Kind::Null => node.null_count = end,
            Kind::Union { .. } | Kind::RunEndEncoded => {
                node.null_count = 0;
                node.validity = None;
            }
            _ => columnar::check_nulls(node.validity, 0, end, node.null_count)?,
        }
        if let Some((index_type, values)) = node.dictionary {
            let values = self.nodes.get(values).map_or(0, |v| v.len);
            return columnar::check_dictionary_keys(
                first,
                node.validity,
                0,
                end,
                index_type,
                values,
            );
        }
        let child = |k: usize| self.children(at, node.children).nth(k);
        let child_len = |k: usize| child(k).map_or(0, |c| c.len);
        match node.kind {
            Kind::Null => Ok(()),
            Kind::Boolean => columnar::check_fixed(first, 1, end.div_ceil(8)),
            Kind::Binary | Kind::Utf8 => {
                columnar::check_offsets::<i32>(first, 0, end, second.len())?;
                if node.kind == Kind::Utf8 {
                    columnar::check_utf8::<i32>(first, second, 0, end)?;
                }
                Ok(())
            }
            Kind::LargeBinary | Kind::LargeUtf8 => {
                columnar::check_offsets::<i64>(first, 0, end, second.len())?;
                if node.kind == Kind::LargeUtf8 {
                    columnar::check_utf8::<i64>(first, second, 0, end)?;
                }
                Ok(())
            }
            Kind::BinaryView | Kind::Utf8View => {
                let variadic = node.variadic;
                columnar::check_views(first, 0, end, node.kind == Kind::Utf8View, |k| {
                    variadic.get(k)
                })
            }
            Kind::List => columnar::check_offsets::<i32>(first, 0, end, child_len(0)),
            Kind::LargeList => columnar::check_offsets::<i64>(first, 0, end, child_len(0)),
            Kind::Map => {
                let entries = child(0).ok_or_else(|| bad("map without entries", 0))?;
                need(
                    entries.kind == Kind::Struct && entries.children == 2,
                    "map entries are not a struct of key and value",
                    0,
                )?;
                columnar::check_offsets::<i32>(first, 0, end, child_len(0))
            }
            Kind::ListView => {
                columnar::check_list_views::<i32>(first, second, 0, end, child_len(0))
            }
            Kind::LargeListView => {
                columnar::check_list_views::<i64>(first, second, 0, end, child_len(0))
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
            Kind::Struct => {
                for (i, child) in self.children(at, node.children).enumerate() {
                    need(child.len >= end, "struct child shorter than the struct", i)?;
                }
                Ok(())
            }
            Kind::Union { dense, .. } => {
                if !dense {
                    for (i, child) in self.children(at, node.children).enumerate() {
                        need(
                            child.len >= end,
                            "sparse union child shorter than the union",
                            i,
                        )?;
                    }
                }
                columnar::check_union(
                    first,
                    dense.then_some(second),
                    0,
                    end,
                    |id| node.union_child(id),
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
                need(run_ends.null_count == 0, "run ends contain nulls", 0)?;
                need(
                    values.len >= run_ends.len,
                    "fewer values than runs",
                    values.len,
                )?;
                columnar::check_run_ends(|k| run_ends.integer(k), run_ends.len, end, end)
            }
            kind => {
                let width = kind
                    .byte_width()
                    .ok_or_else(|| bad("type has no layout", 0))?;
                columnar::check_fixed(first, width, end)
            }
        }
    }
}

impl<'a, const N: usize> Batch<'a, N> {
    /// Follows dictionaries, run-end encoding and unions from slot `i` of node `at` to the node
    /// and slot that hold the value (node index, slot); `None` when the value is null.
    #[inline]
    pub(crate) fn resolve(&self, mut at: usize, mut i: usize) -> Option<(usize, usize)> {
        loop {
            let node = self.nodes.get(at)?;
            if let Some((_, values)) = node.dictionary {
                if !node.is_valid(i) {
                    return None;
                }
                i = node.key(i);
                at = values;
                continue;
            }
            match node.kind {
                Kind::RunEndEncoded => {
                    let run_ends = self.nodes.get(at + 1)?;
                    i = columnar::run_index(|k| run_ends.integer(k), run_ends.len, i);
                    at = run_ends.end;
                }
                Kind::Union { .. } => {
                    let (child, slot) = node.union_value(i);
                    at = self.child(at, child)?;
                    i = slot;
                }
                Kind::Null => return None,
                _ => return node.is_valid(i).then_some((at, i)),
            }
        }
    }

    /// The index of child `k` of node `at`.
    pub(crate) fn child(&self, at: usize, k: usize) -> Option<usize> {
        children(&self.nodes, at, k + 1).nth(k).map(|(i, _)| i)
    }
}

/// The first `count` children of the node at `at` in `nodes`, with their indices: the first
/// follows its parent, and each child's `end` leads to the next.
fn children<'n, 'a>(
    nodes: &'n [Node<'a>],
    at: usize,
    count: usize,
) -> impl Iterator<Item = (usize, &'n Node<'a>)> {
    let mut next = at + 1;
    (0..count).map_while(move |_| {
        let i = next;
        let child = nodes.get(i)?;
        next = child.end;
        Some((i, child))
    })
}
