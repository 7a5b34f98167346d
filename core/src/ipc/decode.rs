//! Decoding a `RecordBatch` message body into validated arrays.
//!
//! The message header lists one `FieldNode` per array and the body's buffers in depth-first field
//! order. The decoder walks the schema's fields, takes nodes and buffers as each type's layout
//! says, cuts them from the body (decompressing and byte-swapping into owned memory when needed,
//! borrowing otherwise), and hands each array's parts to [`ArrayView::try_new`].

use super::dictionary::Dictionaries;
use crate::array::{ArrayParts, ArrayView, Dictionary};
use crate::bytes::Bytes;
use crate::compression::{Decompressed, decompress_buffer};
use crate::datatype::{CompressionCodec, DataType, IntervalUnit, UnionMode};
use crate::error::{FormatError, FormatErrorKind, FormatResult};
use crate::format::{self, MetadataVersion};
use crate::schema::Field;
use alloc::vec::Vec;

/// What the decoder needs besides the message: limits and the file's properties.
#[derive(Debug, Clone, Copy)]
pub(crate) struct DecodeContext {
    /// The buffers are big-endian and must be swapped.
    pub big_endian: bool,
    /// The message's metadata version (V4 unions still carry a validity buffer).
    pub version: MetadataVersion,
    /// Largest declared uncompressed buffer size accepted.
    pub max_decompressed: u64,
}

/// How a buffer's bytes are swapped when the file is big-endian.
#[derive(Clone, Copy)]
enum Swap {
    /// Bytes or bits: nothing to swap.
    None,
    /// Values of this many bytes, each reversed.
    Each(usize),
    /// Interval month-day-nano: i32, i32, i64.
    MonthDayNano,
    /// 16-byte binary views: i32 length, then inline bytes or prefix, i32 buffer, i32 offset.
    Views,
}

struct Decoder<'m, 'b, 'a> {
    nodes: format::FieldNodes<'m>,
    next_node: usize,
    buffers: format::Buffers<'m>,
    next_buffer: usize,
    variadic: Option<format::Int64s<'m>>,
    next_variadic: usize,
    body: &'b Bytes<'a>,
    compression: Option<CompressionCodec>,
    context: DecodeContext,
    dictionaries: &'b Dictionaries<'a>,
}

/// Decodes the arrays of `fields` from a record batch header and its body.
///
/// Returns the columns and the batch length. Offsets in errors are relative to the body.
pub(crate) fn decode_columns<'a>(
    fields: &[Field],
    batch: format::RecordBatch<'_>,
    body: &Bytes<'a>,
    dictionaries: &Dictionaries<'a>,
    context: DecodeContext,
) -> FormatResult<(Vec<ArrayView<'a>>, usize)> {
    let length = usize::try_from(batch.length()).map_err(|_| FormatErrorKind::InvalidValue {
        what: "RecordBatch.length",
        value: batch.length(),
    })?;
    let mut decoder = Decoder {
        nodes: batch.nodes()?,
        next_node: 0,
        buffers: batch.buffers()?,
        next_buffer: 0,
        variadic: batch.variadic_buffer_counts()?,
        next_variadic: 0,
        body,
        compression: batch.compression()?.map(|c| c.codec),
        context,
        dictionaries,
    };
    let mut columns = Vec::with_capacity(fields.len().min(decoder.nodes.len()));
    for field in fields {
        let column = decoder.array(field).map_err(|e| e.in_field(field.name()))?;
        if column.len() != length {
            return Err(FormatError::from(FormatErrorKind::InvalidArray {
                what: "column length differs from RecordBatch.length",
                index: column.len() as u64,
            })
            .in_field(field.name()));
        }
        columns.push(column);
    }
    if decoder.next_node != decoder.nodes.len() {
        return Err(FormatErrorKind::LayoutMismatch {
            what: "field nodes left over",
        }
        .into());
    }
    if decoder.next_buffer != decoder.buffers.len() {
        return Err(FormatErrorKind::LayoutMismatch {
            what: "buffers left over",
        }
        .into());
    }
    Ok((columns, length))
}

impl<'a> Decoder<'_, '_, 'a> {
    fn node(&mut self) -> FormatResult<(usize, usize)> {
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

    /// The next buffer, cut from the body, decompressed and put in native byte order.
    fn buffer(&mut self, swap: Swap) -> FormatResult<Bytes<'a>> {
        let index = self.next_buffer;
        let spec = self
            .buffers
            .get(index)
            .ok_or(FormatErrorKind::LayoutMismatch {
                what: "more buffers than the message declares",
            })?;
        self.next_buffer += 1;
        let out_of_bounds = || -> FormatError {
            FormatErrorKind::BufferOutOfBounds {
                index: index as u64,
                offset: spec.offset,
                length: spec.length,
                body: self.body.len() as u64,
            }
            .into()
        };
        let start = usize::try_from(spec.offset).map_err(|_| out_of_bounds())?;
        let len = usize::try_from(spec.length).map_err(|_| out_of_bounds())?;
        let end = start.checked_add(len).ok_or_else(out_of_bounds)?;
        let raw = self.body.slice(start..end).ok_or_else(out_of_bounds)?;
        let bytes = match self.compression {
            None => raw,
            Some(codec) => match decompress_buffer(codec, &raw, self.context.max_decompressed)
                .map_err(|e| e.rebase(start as u64))?
            {
                Decompressed::Borrowed(data) => {
                    let skip = raw.len() - data.len();
                    raw.slice(skip..raw.len()).unwrap_or_default()
                }
                Decompressed::Owned(data) => Bytes::from_vec(data),
            },
        };
        Ok(if self.context.big_endian {
            swapped(bytes, swap)
        } else {
            bytes
        })
    }

    fn validity(&mut self, null_count: usize) -> FormatResult<Option<Bytes<'a>>> {
        let bitmap = self.buffer(Swap::None)?;
        Ok((null_count > 0).then_some(bitmap))
    }

    fn array(&mut self, field: &Field) -> FormatResult<ArrayView<'a>> {
        let (len, null_count) = self.node()?;
        let data_type = field.data_type();
        let mut parts = ArrayParts {
            data_type: Some(data_type.clone()),
            len,
            null_count,
            ..ArrayParts::default()
        };
        if let Some(encoding) = field.dictionary() {
            parts.validity = self.validity(null_count)?;
            let width = encoding.index_type.byte_width();
            parts.buffers.push(self.buffer(Swap::Each(width))?);
            let values = self
                .dictionaries
                .get(encoding.id)
                .ok_or(FormatErrorKind::MissingDictionary { id: encoding.id })?;
            parts.dictionary = Some(Dictionary {
                index_type: encoding.index_type,
                values,
            });
            return ArrayView::try_new(parts);
        }
        let has_validity = match data_type {
            DataType::Null | DataType::RunEndEncoded(_) => false,
            DataType::Union(..) => self.context.version < MetadataVersion::V5,
            _ => true,
        };
        if has_validity {
            parts.validity = self.validity(null_count)?;
            if matches!(data_type, DataType::Union(..)) {
                // Pre-V5 unions: the bitmap is not part of the union's logical nulls.
                parts.validity = None;
                parts.null_count = 0;
            }
        }
        use DataType::*;
        match data_type {
            Null | Struct(_) | FixedSizeList(..) | RunEndEncoded(_) => {}
            Boolean | FixedSizeBinary(_) | Int8 | UInt8 => {
                parts.buffers.push(self.buffer(Swap::None)?)
            }
            Interval(IntervalUnit::DayTime) => parts.buffers.push(self.buffer(Swap::Each(4))?),
            Interval(IntervalUnit::MonthDayNano) => {
                parts.buffers.push(self.buffer(Swap::MonthDayNano)?)
            }
            Binary | Utf8 => {
                parts.buffers.push(self.buffer(Swap::Each(4))?);
                parts.buffers.push(self.buffer(Swap::None)?);
            }
            LargeBinary | LargeUtf8 => {
                parts.buffers.push(self.buffer(Swap::Each(8))?);
                parts.buffers.push(self.buffer(Swap::None)?);
            }
            BinaryView | Utf8View => {
                parts.buffers.push(self.buffer(Swap::Views)?);
                let count = self
                    .variadic
                    .and_then(|v| v.get(self.next_variadic))
                    .ok_or(FormatErrorKind::LayoutMismatch {
                        what: "view array without a variadic buffer count",
                    })?;
                self.next_variadic += 1;
                let count = usize::try_from(count)
                    .ok()
                    .filter(|c| *c <= self.buffers.len().saturating_sub(self.next_buffer))
                    .ok_or(FormatErrorKind::InvalidValue {
                        what: "RecordBatch.variadicBufferCounts",
                        value: count,
                    })?;
                for _ in 0..count {
                    parts.buffers.push(self.buffer(Swap::None)?);
                }
            }
            List(_) | Map(..) => parts.buffers.push(self.buffer(Swap::Each(4))?),
            LargeList(_) => parts.buffers.push(self.buffer(Swap::Each(8))?),
            ListView(_) => {
                parts.buffers.push(self.buffer(Swap::Each(4))?);
                parts.buffers.push(self.buffer(Swap::Each(4))?);
            }
            LargeListView(_) => {
                parts.buffers.push(self.buffer(Swap::Each(8))?);
                parts.buffers.push(self.buffer(Swap::Each(8))?);
            }
            Union(_, _, mode) => {
                parts.buffers.push(self.buffer(Swap::None)?);
                if *mode == UnionMode::Dense {
                    parts.buffers.push(self.buffer(Swap::Each(4))?);
                }
            }
            other => {
                let width = other.byte_width().ok_or(FormatErrorKind::Unsupported {
                    what: "data type without a buffer layout",
                })?;
                parts.buffers.push(self.buffer(Swap::Each(width))?);
            }
        }
        for child in data_type.children() {
            let array = self.array(child).map_err(|e| e.in_field(child.name()))?;
            parts.children.push(array);
        }
        ArrayView::try_new(parts)
    }
}

/// Copies `bytes` into owned memory in native (little-endian) byte order.
fn swapped<'a>(bytes: Bytes<'a>, swap: Swap) -> Bytes<'a> {
    let mut data = match swap {
        Swap::None => return bytes,
        _ => bytes.to_vec(),
    };
    match swap {
        Swap::None => {}
        Swap::Each(width) if width > 1 => data.chunks_exact_mut(width).for_each(<[u8]>::reverse),
        Swap::Each(_) => {}
        Swap::MonthDayNano => {
            for value in data.chunks_exact_mut(16) {
                let (months_days, nanos) = value.split_at_mut(8);
                months_days.chunks_exact_mut(4).for_each(<[u8]>::reverse);
                nanos.reverse();
            }
        }
        Swap::Views => {
            for view in data.chunks_exact_mut(16) {
                let (len, rest) = view.split_at_mut(4);
                len.reverse();
                let inline =
                    <[u8; 4]>::try_from(&*len).map_or(true, |l| i32::from_le_bytes(l) <= 12);
                if !inline {
                    // prefix (raw bytes), buffer index, offset
                    let (_, index_offset) = rest.split_at_mut(4);
                    index_offset.chunks_exact_mut(4).for_each(<[u8]>::reverse);
                }
            }
        }
    }
    Bytes::from_vec(data)
}
