//! [`Cursor`]: the walk through a `RecordBatch` message's field nodes and buffer specs, in step
//! with a depth-first walk of the schema's fields (`format::body`'s). Every length and range it hands out is
//! checked (non-negative, inside the body); running out or having some left over is an error.
//!
//! It uses the `Message.fbs` views of `message` and the errors.

use super::{Buffers, FieldNodes, Int64s, RecordBatch};
use crate::error::{FormatErrorKind, FormatResult};
use core::ops::Range;

/// The walk through a message's field nodes and buffer specs.
pub(crate) struct Cursor<'m> {
    pub(crate) nodes: FieldNodes<'m>,
    next_node: usize,
    pub(crate) buffers: Buffers<'m>,
    pub(crate) next_buffer: usize,
    variadic: Option<Int64s<'m>>,
    next_variadic: usize,
}

impl<'m> Cursor<'m> {
    pub(crate) fn new(batch: RecordBatch<'m>) -> FormatResult<Self> {
        Ok(Cursor {
            nodes: batch.nodes()?,
            next_node: 0,
            buffers: batch.buffers()?,
            next_buffer: 0,
            variadic: batch.variadic_buffer_counts()?,
            next_variadic: 0,
        })
    }

    /// The next field node: its length and null count.
    pub(crate) fn node(&mut self) -> FormatResult<(usize, usize)> {
        let node = self
            .nodes
            .get(self.next_node)
            .ok_or(FormatErrorKind::LayoutMismatch {
                what: "more arrays than field nodes",
            })?;
        self.next_node += 1;
        let length = usize::try_from(node.length).map_err(|_| FormatErrorKind::InvalidValue {
            what: "FieldNode.length",
            value: node.length,
        })?;
        let null_count = usize::try_from(node.null_count)
            .ok()
            .filter(|n| *n <= length)
            .ok_or(FormatErrorKind::InvalidValue {
                what: "FieldNode.null_count",
                value: node.null_count,
            })?;
        Ok((length, null_count))
    }

    /// The next buffer's range in the body, checked to lie within `body_len`.
    ///
    /// A zero-length buffer needs no bytes, wherever its offset points (writers leave it at the
    /// previous buffer's end, at 0, or past the body): it comes back as the empty range `0..0`,
    /// so that no reader looks for it among the bytes it fetched (as Arrow C++ does).
    pub(crate) fn buffer(&mut self, body_len: u64) -> FormatResult<Range<u64>> {
        let index = self.next_buffer;
        let spec = self
            .buffers
            .get(index)
            .ok_or(FormatErrorKind::LayoutMismatch {
                what: "more buffers than the message declares",
            })?;
        self.next_buffer += 1;
        if spec.length == 0 {
            return Ok(0..0);
        }
        let range = u64::try_from(spec.offset)
            .ok()
            .zip(u64::try_from(spec.length).ok())
            .and_then(|(start, len)| Some(start..start.checked_add(len)?))
            .filter(|r| r.end <= body_len)
            .ok_or(FormatErrorKind::BufferOutOfBounds {
                index: index as u64,
                offset: spec.offset,
                length: spec.length,
                body: body_len,
            })?;
        Ok(range)
    }

    /// How many variadic buffers the next view array has.
    pub(crate) fn variadic_count(&mut self) -> FormatResult<usize> {
        let count = self
            .variadic
            .and_then(|v| v.get(self.next_variadic))
            .ok_or(FormatErrorKind::LayoutMismatch {
                what: "view array without a variadic buffer count",
            })?;
        self.next_variadic += 1;
        usize::try_from(count)
            .ok()
            .filter(|c| *c <= self.buffers.len().saturating_sub(self.next_buffer))
            .ok_or_else(|| {
                FormatErrorKind::InvalidValue {
                    what: "RecordBatch.variadicBufferCounts",
                    value: count,
                }
                .into()
            })
    }

    /// Every field node and buffer was used.
    pub(crate) fn finish(&self) -> FormatResult<()> {
        let what = if self.next_node != self.nodes.len() {
            "field nodes left over"
        } else if self.next_buffer != self.buffers.len() {
            "buffers left over"
        } else {
            return Ok(());
        };
        Err(FormatErrorKind::LayoutMismatch { what }.into())
    }
}
