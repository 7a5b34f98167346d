//! The schema compiled once per encoder for the fast path: every array of a batch (or of one
//! array) as a [`Node`] holding its buffers as slices, its member key pre-built and its children
//! by index.
//!
//! [`Plan::batch`] and [`Plan::array`] walk the arrays once when the encoder is built; the `rows`
//! module then writes whole rows by following node indices, with no look-up by type or address
//! per value. A schema the plan cannot hold (more than [`NODES`] arrays, or unions, run-end
//! encoding or maps anywhere in it) gets no plan, and every row goes through the general walk.

use super::escape;
use super::leaf::{Kind, Leaf};
use super::options::{BinaryFormat, EncoderOptions};
use super::sink::Body;
use super::temporal::Zones;
use crate::array::ArrayView;
use crate::datatype::DataType;
use crate::schema::Field;

/// Arrays a plan holds at most (an encoder carries its plan inline).
pub(crate) const NODES: usize = 24;

/// Bytes of a pre-built key, `,"name":`: names up to `KEY - 5` bytes are stored inline. A key is
/// copied as `KEY - 1` bytes: 24, one 16-byte and one 8-byte store (23 took four stores; 1.5%
/// of the ten-column file's time on one thread).
pub(crate) const KEY: usize = 25;

/// How the values of a node are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Shape {
    /// A flat array the fast path formats itself (see the leaf's [`Kind`]).
    Flat,
    /// Another type of short text (times, durations, decimals, …), at most `sink::SPILL` bytes,
    /// written by the encoder's general `leaf` function.
    Short,
    /// Binary values or string views: their bytes quoted, in the given form.
    Bytes(Body),
    /// Every slot is null (the Null type).
    Null,
    /// An object of the nodes `first..first + len`, indexed by this node's offset plus the slot.
    Struct { first: u8, len: u8 },
    /// A list of any kind, its elements in node `child`; `offsets` says how its leaf reads the
    /// element ranges.
    List { child: u8, offsets: ListOffsets },
    /// Dictionary-encoded: the leaf reads the indices, the values are node `values`.
    Dictionary { values: u8 },
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
pub(crate) struct Node<'b, 'a> {
    pub(crate) array: &'b ArrayView<'a>,
    pub(crate) leaf: Leaf<'b>,
    pub(crate) shape: Shape,
    /// `,"name":`, when this node is a member with a short plain name (`key_len` > 0).
    key: [u8; KEY],
    key_len: u8,
    /// The member name (for a name too long or that needs escaping).
    pub(crate) name: &'b str,
}

impl<'b, 'a> Node<'b, 'a> {
    fn new(array: &'b ArrayView<'a>, name: &'b str, zones: &Zones<'_>) -> Self {
        let mut node = Node {
            array,
            leaf: Leaf::new(array, zones),
            shape: Shape::Null,
            key: [0; KEY],
            key_len: 0,
            name,
        };
        let bytes = name.as_bytes();
        // The key is copied as `KEY - 1` bytes (from its comma or after it): it must fit them.
        if bytes.len() + 4 < KEY && escape::is_plain(name) {
            let (open, rest) = node.key.split_at_mut(2);
            open.copy_from_slice(b",\"");
            if let Some((body, close)) = rest.split_at_mut_checked(bytes.len()) {
                body.copy_from_slice(bytes);
                if let Some(close) = close.get_mut(..2) {
                    close.copy_from_slice(b"\":");
                }
            }
            node.key_len = (bytes.len() + 4) as u8;
        }
        node
    }

    /// The pre-built key (`,"name":`, or `"name":` for the `first` member) and its length, when
    /// the name is short and plain; always [`KEY`] - 1 bytes to copy, of which the length count.
    #[inline(always)]
    pub(crate) fn key(&self, first: bool) -> Option<(&[u8; KEY - 1], usize)> {
        if self.key_len == 0 {
            return None;
        }
        let skip = usize::from(first);
        let bytes = self.key.get(skip..skip + KEY - 1)?.try_into().ok()?;
        Some((bytes, usize::from(self.key_len) - skip))
    }
}

/// The compiled schema.
#[derive(Debug, Clone)]
pub(crate) struct Plan<'b, 'a> {
    nodes: heapless::Vec<Node<'b, 'a>, NODES>,
    /// A batch: nodes `0..columns` are its columns. An array: node 0 is the array and this is 0.
    columns: usize,
    options: EncoderOptions,
}

impl<'b, 'a> Plan<'b, 'a> {
    /// The plan of a batch's columns, if it can hold them.
    pub(crate) fn batch(
        columns: &'b [ArrayView<'a>],
        fields: &'b [Field],
        options: EncoderOptions,
        zones: &Zones<'_>,
    ) -> Option<Self> {
        let mut plan = Plan {
            nodes: heapless::Vec::new(),
            columns: columns.len(),
            options,
        };
        let first = plan.reserve(columns.len(), columns.first()?, zones)?;
        for (k, (array, field)) in columns.iter().zip(fields).enumerate() {
            plan.fill(first + k, array, field.name(), zones)?;
        }
        Some(plan)
    }

    /// The plan of one array (its values are the rows), if it can hold it.
    pub(crate) fn array(
        array: &'b ArrayView<'a>,
        options: EncoderOptions,
        zones: &Zones<'_>,
    ) -> Option<Self> {
        let mut plan = Plan {
            nodes: heapless::Vec::new(),
            columns: 0,
            options,
        };
        let root = plan.reserve(1, array, zones)?;
        plan.fill(root, array, "", zones)?;
        Some(plan)
    }

    /// The columns of a batch (node indices), or `None` for an array plan.
    pub(crate) fn columns(&self) -> Option<core::ops::Range<usize>> {
        (self.columns > 0).then_some(0..self.columns)
    }

    /// Node `n` (node 0 exists in every plan).
    #[inline(always)]
    pub(crate) fn node(&self, n: usize) -> Option<&Node<'b, 'a>> {
        self.nodes.get(n)
    }

    /// Nodes `range` (the members of an object).
    #[inline(always)]
    pub(crate) fn nodes(&self, range: core::ops::Range<usize>) -> &[Node<'b, 'a>] {
        self.nodes.get(range).unwrap_or_default()
    }

    /// Appends `count` placeholder nodes; returns the index of the first.
    fn reserve(
        &mut self,
        count: usize,
        placeholder: &'b ArrayView<'a>,
        zones: &Zones<'_>,
    ) -> Option<usize> {
        let first = self.nodes.len();
        for _ in 0..count {
            self.nodes.push(Node::new(placeholder, "", zones)).ok()?;
        }
        Some(first)
    }

    /// Sets node `at` to `array` (named `name` as a member) and appends its descendants.
    fn fill(
        &mut self,
        at: usize,
        array: &'b ArrayView<'a>,
        name: &'b str,
        zones: &Zones<'_>,
    ) -> Option<()> {
        let mut node = Node::new(array, name, zones);
        node.shape = if let Some(dictionary) = array.dictionary() {
            node.leaf = Leaf::keys(array)?;
            let values = self.reserve(1, array, zones)?;
            self.fill(values, &dictionary.values, "", zones)?;
            Shape::Dictionary {
                values: u8::try_from(values).ok()?,
            }
        } else if node.leaf.kind != Kind::Other {
            Shape::Flat
        } else {
            match array.data_type() {
                DataType::Null => Shape::Null,
                DataType::Struct(fields) => {
                    let children = array.children();
                    let first = self.reserve(children.len(), array, zones)?;
                    for (k, (child, field)) in children.iter().zip(fields.iter()).enumerate() {
                        self.fill(first + k, child, field.name(), zones)?;
                    }
                    Shape::Struct {
                        first: u8::try_from(first).ok()?,
                        len: u8::try_from(children.len()).ok()?,
                    }
                }
                DataType::List(_)
                | DataType::LargeList(_)
                | DataType::ListView(_)
                | DataType::LargeListView(_)
                | DataType::FixedSizeList(..) => {
                    let child = self.reserve(1, array, zones)?;
                    self.fill(child, array.child(0)?, "", zones)?;
                    let offsets = match array.data_type() {
                        DataType::List(_) => {
                            node.leaf = Leaf::list(array);
                            ListOffsets::Prepared(4)
                        }
                        DataType::LargeList(_) => {
                            node.leaf = Leaf::list(array);
                            ListOffsets::Prepared(8)
                        }
                        _ => ListOffsets::Array,
                    };
                    Shape::List {
                        child: u8::try_from(child).ok()?,
                        offsets,
                    }
                }
                DataType::Binary
                | DataType::LargeBinary
                | DataType::BinaryView
                | DataType::FixedSizeBinary(_) => Shape::Bytes(match self.options.binary {
                    BinaryFormat::Base64 => Body::Base64,
                    _ => Body::Hex,
                }),
                DataType::Utf8View => Shape::Bytes(Body::Text),
                DataType::Float16
                | DataType::Decimal32(..)
                | DataType::Decimal64(..)
                | DataType::Decimal128(..)
                | DataType::Decimal256(..)
                | DataType::Time32(_)
                | DataType::Time64(_)
                | DataType::Duration(_)
                | DataType::Interval(_) => Shape::Short,
                // Unions, run-end encoding and maps: the general walk writes them.
                _ => return None,
            }
        };
        *self.nodes.get_mut(at)? = node;
        Some(())
    }
}
