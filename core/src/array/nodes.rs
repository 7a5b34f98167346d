//! The [`view`](crate::view) of an owned batch: a [`RecordBatch`]'s arrays as the view's
//! [`Node`]s, made when read from each validated [`ArrayView`], borrowing its buffers
//! ([`Arrays`]), and the links of their layout, made once with the batch ([`links`]).
//!
//! It uses the view, the owned arrays and types below it.

use super::{ArrayView, RecordBatch};
use crate::format::Kind;
use crate::schema::Field;
use crate::view::{Extension, Node, Table, Variadic};
use alloc::sync::Arc;
use alloc::vec::Vec;

/// Where a node of [`Arrays`] hangs: under its parent (or at the root), as which child (or
/// as its dictionary's values), and where its own subtree lies in the table.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Link {
    /// The parent's index; `ROOT` for a column.
    parent: usize,
    /// Column or child `step` of the parent; `VALUES` for the parent's dictionary values.
    step: usize,
    end: usize,
}

const ROOT: usize = usize::MAX;
const VALUES: usize = usize::MAX;

/// The links of `columns`' nodes, laid out as a view lays them out (depth first, a
/// dictionary's values after its array): the one table a batch carries so that its view
/// costs nothing to hand out.
pub(crate) fn links(columns: &[ArrayView<'_>]) -> Arc<[Link]> {
    let mut links = Vec::with_capacity(columns.iter().map(count).sum());
    for (k, column) in columns.iter().enumerate() {
        link(&mut links, column, ROOT, k);
    }
    links.into()
}

/// Appends the links of `array` (`step` of `parent`) and its subtree.
fn link(links: &mut Vec<Link>, array: &ArrayView<'_>, parent: usize, step: usize) {
    let at = links.len();
    links.push(Link {
        parent,
        step,
        end: 0,
    });
    if let Some(dictionary) = array.dictionary() {
        link(links, &dictionary.values, at, VALUES);
    } else {
        for (k, child) in array.children().iter().enumerate() {
            link(links, child, at, k);
        }
    }
    let end = links.len();
    if let Some(slot) = links.get_mut(at) {
        slot.end = end;
    }
}

/// A batch's (or one array's) arrays as a [`Table`]: each node is made from its array when
/// read, found through the links, with no table of nodes allocated.
#[derive(Debug, Clone)]
pub(crate) struct Arrays<'b> {
    columns: &'b [ArrayView<'b>],
    fields: &'b [Field],
    links: Arc<[Link]>,
    rows: usize,
}

impl<'b> Arrays<'b> {
    /// The arrays of `batch`, borrowed (its links are shared, not copied).
    pub(crate) fn of_batch(batch: &'b RecordBatch<'_>) -> Self {
        Arrays {
            columns: batch.columns(),
            fields: batch.schema().fields(),
            links: Arc::clone(batch.links()),
            rows: batch.num_rows(),
        }
    }

    /// The arrays of one array, whose values are the rows (its links are allocated once).
    pub(crate) fn of_array(array: &'b ArrayView<'_>) -> Self {
        let columns = core::slice::from_ref(array);
        Arrays {
            columns,
            fields: &[],
            links: links(columns),
            rows: array.len(),
        }
    }

    /// Number of rows.
    pub(crate) fn num_rows(&self) -> usize {
        self.rows
    }

    /// The columns' nodes are `0..columns_end()`: all of them.
    pub(crate) fn columns_end(&self) -> usize {
        self.links.len()
    }

    /// The array of node `at` and its field (none for dictionary values and the array of
    /// an array encoder).
    fn array(&self, at: usize) -> Option<(&'b ArrayView<'b>, Option<&'b Field>)> {
        let link = self.links.get(at)?;
        if link.parent == ROOT {
            return Some((self.columns.get(link.step)?, self.fields.get(link.step)));
        }
        let (parent, _) = self.array(link.parent)?;
        if link.step == VALUES {
            return Some((&parent.dictionary()?.values, None));
        }
        let field = parent.data_type().children().get(link.step);
        Some((parent.child(link.step)?, field))
    }
}

/// A node made from its array.
pub(crate) struct Made<'a>(Node<'a>);

impl<'a> core::ops::Deref for Made<'a> {
    type Target = Node<'a>;

    #[inline(always)]
    fn deref(&self) -> &Node<'a> {
        &self.0
    }
}

impl<'b> Table<'b> for Arrays<'b> {
    type Ref<'s>
        = Made<'b>
    where
        Self: 's;

    #[inline]
    fn node(&self, at: usize) -> Option<Made<'b>> {
        let end = self.links.get(at)?.end;
        let (array, field) = self.array(at)?;
        let mut node = node_of(array, field.map_or("", Field::name), end);
        let name = field.and_then(Field::extension_name);
        node.extension = Extension::of(name, node.kind, node.dictionary.is_some());
        Some(Made(node))
    }
}

/// The nodes of `array`'s subtree.
fn count(array: &ArrayView<'_>) -> usize {
    let below = match array.dictionary() {
        Some(dictionary) => count(&dictionary.values),
        None => array.children().iter().map(count).sum(),
    };
    1 + below
}

/// The node of `array` (named `name`, its subtree ending at `end`): its slots, validity
/// (when some slot is null) and buffers, the number of its children, and its dictionary's
/// index type.
#[inline]
pub(crate) fn node_of<'a>(array: &'a ArrayView<'_>, name: &'a str, end: usize) -> Node<'a> {
    let kind = Kind::of_data_type(array.data_type());
    let buffers = array.buffers();
    let dictionary = array.dictionary().map(|d| d.index_type);
    let views = dictionary.is_none() && matches!(kind, Kind::BinaryView | Kind::Utf8View);
    Node {
        name,
        kind,
        len: array.len(),
        offset: array.offset(),
        validity: array.validity().filter(|_| array.null_count() > 0),
        buffers: [array.buffer(0), array.buffer(1)],
        variadic: match buffers.get(1..) {
            Some(data) if views => Variadic::Buffers(data),
            _ => Variadic::None,
        },
        end,
        children: array.children().len() as u32,
        dictionary,
        extension: Extension::None,
    }
}
