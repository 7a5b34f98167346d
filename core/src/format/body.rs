//! The one walk of a `RecordBatch` message body: array by array, depth-first in step with the
//! schema's fields, each array's field node, then its buffers in its layout's order
//! ([`Layout::walk`]), then its children's arrays (a dictionary-encoded array has none in the
//! message: its values are a dictionary batch's).
//!
//! What differs between the decoders is plugged in as an [`ArraySink`]: the schema's form (the
//! flatbuffer `format::Field` or the owned `schema::Field`), how a buffer is made from its body
//! range (borrowed; decompressed and byte-swapped; only its range noted) and what an array
//! becomes (a view's node, an `ArrayView`, nothing). The no-alloc decoder (`view`), the alloc
//! decoder and the read planner (`ipc::columns`) are its sinks.
//!
//! It uses the [`Cursor`], the buffer [`Layout`] and the errors.

use super::cursor::Cursor;
use super::layout::{Layout, Swap, Walked};
use crate::error::FormatResult;
use core::ops::Range;

/// What a walk of a message body (`'m`) makes of the arrays it reads. The calls for one array
/// come in this order: `start`; `buffer` for each of its buffers and `keep` for each after the
/// validity bitmap; `walked`; then `child` and `add_child` for each child (the child's own calls
/// between them); `finish`.
pub(crate) trait ArraySink<'m> {
    /// A schema field, in the sink's form.
    type Field: Copy;
    /// A buffer, made from its body range.
    type Buffer;
    /// An array being read, from `start` to `walked`: what its buffers go to.
    type Buffers;
    /// An array being made, from `walked` to `finish` (kept while its children are read: every
    /// level of nesting repeats it on the stack).
    type Parts;
    /// A finished array.
    type Array;

    /// The body's length (every buffer lies within it).
    fn body_len(&self) -> u64;

    /// Starts `field`'s array of `len` slots, `null_count` of them null (its field node): its
    /// parts, what its buffers go to and their layout.
    fn start(
        &mut self,
        field: Self::Field,
        len: usize,
        null_count: usize,
    ) -> FormatResult<(Self::Parts, Self::Buffers, Layout)>;

    /// The buffer at `range` of the body (`swap`: how its values are byte-swapped).
    fn buffer(&mut self, range: Range<u64>, swap: Swap) -> FormatResult<Self::Buffer>;

    /// Keeps buffer `k` after the validity bitmap (the fixed ones, then the variadic ones).
    fn keep(buffers: &mut Self::Buffers, k: usize, buffer: Self::Buffer);

    /// The array's buffers are read: `walked` is what their walk found besides them (`cursor` is
    /// past them).
    fn walked(
        &mut self,
        parts: &mut Self::Parts,
        buffers: Self::Buffers,
        walked: Walked<Self::Buffer>,
        cursor: &Cursor<'m>,
    ) -> FormatResult<()>;

    /// Child `i`'s field, `None` past the last child in the message.
    fn child(&self, parts: &Self::Parts, i: usize) -> FormatResult<Option<Self::Field>>;

    /// Adds the array of the next child.
    fn add_child(parts: &mut Self::Parts, child: Self::Array);

    /// Finishes the array (its dictionary, its checks).
    fn finish(&mut self, parts: Self::Parts) -> FormatResult<Self::Array>;
}

/// Reads `field`'s array, and its children's, from the nodes and buffers at `cursor` into `sink`.
/// An error in a child's subtree carries the child's index.
pub(crate) fn array<'m, S: ArraySink<'m>>(
    cursor: &mut Cursor<'m>,
    sink: &mut S,
    field: S::Field,
) -> FormatResult<S::Array> {
    let mut parts = start(cursor, sink, field)?;
    let mut i = 0;
    while let Some(child) = sink.child(&parts, i).map_err(|e| e.in_field(i))? {
        let child = array(cursor, sink, child).map_err(|e| e.in_field(i))?;
        S::add_child(&mut parts, child);
        i += 1;
    }
    sink.finish(parts)
}

/// Starts `field`'s array: its field node, then its buffers. It is a function of its own so
/// that what it holds stays out of [`array()`]'s frame, which every level of nesting repeats on
/// the stack. (The no-alloc example, `no_alloc_stack`, needed 56 KiB, 48 once the view was
/// decoded in place: with the buffers' walk inlined in the recursive frame it needed 60, and so
/// it did while a sink's `Parts` held a whole view node; the no-alloc decoder's recursive frame
/// is 680 bytes, its own walk's was 856.)
#[inline(never)]
fn start<'m, S: ArraySink<'m>>(
    cursor: &mut Cursor<'m>,
    sink: &mut S,
    field: S::Field,
) -> FormatResult<S::Parts> {
    let (len, null_count) = cursor.node()?;
    let (mut parts, mut buffers, layout) = sink.start(field, len, null_count)?;
    let body_len = sink.body_len();
    let buffer = |range, swap| sink.buffer(range, swap);
    let mut k = 0;
    let keep = |bytes| {
        S::keep(&mut buffers, k, bytes);
        k += 1;
    };
    let walked = layout.walk(cursor, body_len, null_count, buffer, keep)?;
    sink.walked(&mut parts, buffers, walked, cursor)?;
    Ok(parts)
}
