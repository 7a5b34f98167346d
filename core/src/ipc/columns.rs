//! Decoding a `RecordBatch` message body into validated arrays.
//!
//! It uses `dictionary` and `projection` beside it and, of the crate, the format's cursor and
//! layouts, `compression`, the arrays and their bytes, the columnar rules, the data types, the
//! schema and the errors.
//!
//! The message header lists one `FieldNode` per array and the body's buffers in depth-first field
//! order. [`Layout`] says which buffers each type has; a [`Cursor`] walks nodes and buffers in
//! step with the schema. Decoding cuts selected fields' buffers from the [`FetchedBody`]
//! (decompressing and byte-swapping into owned memory when needed, borrowing otherwise) and
//! hands each array's parts to [`ArrayView::try_new`]; unselected fields are stepped over. The
//! same walk, without a body, lists the byte ranges a projection needs ([`buffer_ranges`]).

use super::dictionary::Dictionaries;
use super::projection::Projection;
use crate::array::{ArrayParts, ArrayView, Dictionary};
use crate::bytes::Bytes;
use crate::compression::{Decompressed, Decompressor};
use crate::datatype::CompressionCodec;
use crate::error::{FormatError, FormatErrorKind, FormatResult};
use crate::format::cursor::Cursor;
use crate::format::{self, MetadataVersion};
use crate::format::{Kind, Layout, Swap};
use crate::schema::Field;
use alloc::vec::Vec;
use core::ops::Range;

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

/// The buffer layout of `field`'s arrays in a message (the table is [`Kind::layout`]).
fn layout(field: &Field, version: MetadataVersion) -> Layout {
    let index = field.dictionary().map(|encoding| encoding.index_type);
    Kind::of_data_type(field.data_type()).layout(index, version)
}

/// The child fields whose arrays follow `field`'s in the message (none for dictionary indices).
fn child_fields(field: &Field) -> &[Field] {
    if field.dictionary().is_some() {
        &[]
    } else {
        field.data_type().children()
    }
}

impl Cursor<'_> {
    /// Steps over `field`'s arrays, adding the body ranges of its buffers to `out` when given.
    fn visit(
        &mut self,
        field: &Field,
        selection: Option<&Projection>,
        body_len: u64,
        out: &mut Vec<Range<u64>>,
    ) -> FormatResult<()> {
        self.node()?;
        let buffer = |range, _| {
            if selection.is_some() {
                out.push(range);
            }
            Ok(())
        };
        layout(field, self.version).walk(self, body_len, 0, buffer, drop)?;
        for (i, child) in child_fields(field).iter().enumerate() {
            let child_selection = selection.and_then(|s| s.child(i));
            self.visit(child, child_selection, body_len, out)
                .map_err(|e| e.in_field(i))?;
        }
        Ok(())
    }
}

/// A message body: whole, or only the chunks a projection fetched.
#[derive(Debug, Clone)]
pub(crate) enum FetchedBody<'a> {
    /// The whole body.
    Whole(Bytes<'a>),
    /// Chunks of a body of `len` bytes, each with its start, sorted and disjoint.
    Chunks {
        /// The body's declared length.
        len: u64,
        /// `(start within the body, bytes)`.
        chunks: Vec<(u64, Bytes<'a>)>,
    },
}

impl<'a> FetchedBody<'a> {
    fn len(&self) -> u64 {
        match self {
            FetchedBody::Whole(bytes) => bytes.len() as u64,
            FetchedBody::Chunks { len, .. } => *len,
        }
    }

    /// The bytes at `range` of the body, if they were fetched (an empty range always was).
    fn get(&self, range: Range<u64>) -> Option<Bytes<'a>> {
        if range.is_empty() {
            return Some(Bytes::default());
        }
        let (base, bytes) = match self {
            FetchedBody::Whole(bytes) => (0, bytes),
            FetchedBody::Chunks { chunks, .. } => {
                let at = chunks.partition_point(|(start, _)| *start <= range.start);
                let (start, bytes) = chunks.get(at.checked_sub(1)?)?;
                (*start, bytes)
            }
        };
        let start = usize::try_from(range.start.checked_sub(base)?).ok()?;
        let end = usize::try_from(range.end.checked_sub(base)?).ok()?;
        bytes.slice(start..end)
    }
}

/// The body ranges holding the buffers of the fields `projection` selects.
pub(crate) fn buffer_ranges(
    fields: &[Field],
    projection: &Projection,
    batch: format::RecordBatch<'_>,
    body_len: u64,
    version: MetadataVersion,
) -> FormatResult<Vec<Range<u64>>> {
    let mut cursor = Cursor::new(batch, version)?;
    let mut out = Vec::new();
    for (i, field) in fields.iter().enumerate() {
        cursor
            .visit(field, projection.child(i), body_len, &mut out)
            .map_err(|e| e.in_field(i))?;
    }
    cursor.finish()?;
    Ok(out)
}

/// The walk of one record batch message into validated [`ArrayView`]s: its buffers cut from the
/// body, decompressed and byte-swapped as needed (the no-alloc walk into view nodes is
/// [`View::decode`](crate::view::View)'s).
struct ArrayDecoder<'b, 'a> {
    body: &'b FetchedBody<'a>,
    compression: Option<CompressionCodec>,
    context: DecodeContext,
    dictionaries: &'b Dictionaries<'a>,
    decompressor: &'b mut Decompressor,
    /// Bytes of compressed buffers decoded so far: never more than the body holds, so that no
    /// compressed bytes are decoded twice (buffers pointing at the same bytes would make the work
    /// and the codec's short-lived allocations grow with the number of buffers times the body).
    compressed: u64,
}

/// Decodes the arrays of the fields `projection` selects from a record batch header and body.
///
/// Returns the columns and the batch length. Offsets in errors are relative to the body.
/// Compressed buffers go through `decompressor`, which keeps codec state for the next message.
pub(crate) fn decode_columns<'a>(
    fields: &[Field],
    projection: &Projection,
    batch: format::RecordBatch<'_>,
    body: &FetchedBody<'a>,
    dictionaries: &Dictionaries<'a>,
    context: DecodeContext,
    decompressor: &mut Decompressor,
) -> FormatResult<(Vec<ArrayView<'a>>, usize)> {
    let length = usize::try_from(batch.length()).map_err(|_| FormatErrorKind::InvalidValue {
        what: "RecordBatch.length",
        value: batch.length(),
    })?;
    let mut cursor = Cursor::new(batch, context.version)?;
    let mut decoder = ArrayDecoder {
        body,
        compression: batch.compression()?.map(|c| c.codec),
        context,
        dictionaries,
        decompressor,
        compressed: 0,
    };
    let mut columns = Vec::with_capacity(fields.len().min(cursor.nodes.len()));
    for (i, field) in fields.iter().enumerate() {
        let in_field = |e: FormatError| e.in_field(i);
        let Some(selection) = projection.child(i) else {
            decoder.skip(&mut cursor, field).map_err(in_field)?;
            continue;
        };
        let column = decoder
            .array(&mut cursor, field, selection)
            .map_err(in_field)?;
        if column.len() != length {
            let what = "column length differs from RecordBatch.length";
            return Err(in_field(crate::columnar::bad(what, column.len())));
        }
        columns.push(column);
    }
    cursor.finish()?;
    Ok((columns, length))
}

impl<'a> ArrayDecoder<'_, 'a> {
    fn skip(&mut self, cursor: &mut Cursor<'_>, field: &Field) -> FormatResult<()> {
        cursor.visit(field, None, self.body.len(), &mut Vec::new())
    }

    /// The buffer at `range`, cut from the body, decompressed and put in native byte order.
    fn buffer(&mut self, range: Range<u64>, swap: Swap) -> FormatResult<Bytes<'a>> {
        let raw = self.body.get(range.clone()).ok_or_else(|| {
            FormatError::from(FormatErrorKind::LayoutMismatch {
                what: "buffer outside the fetched byte ranges",
            })
            .at(range.start)
        })?;
        let bytes = match self.compression {
            None => raw,
            Some(codec) => {
                self.compressed = self.compressed.saturating_add(raw.len() as u64);
                if self.compressed > self.body.len() {
                    let what =
                        "compressed buffers overlap: their lengths add up to more than the body";
                    return Err(
                        FormatError::from(FormatErrorKind::LayoutMismatch { what }).at(range.start)
                    );
                }
                let max = self.context.max_decompressed;
                match self.decompressor.decompress(codec, &raw, max) {
                    Ok(Decompressed::Borrowed(data)) => {
                        let skip = raw.len() - data.len();
                        raw.slice(skip..raw.len()).unwrap_or_default()
                    }
                    Ok(Decompressed::Owned(data)) => Bytes::from_vec(data),
                    Err(e) => return Err(e.rebase(range.start)),
                }
            }
        };
        Ok(if self.context.big_endian {
            swapped(bytes, swap)
        } else {
            bytes
        })
    }

    fn array(
        &mut self,
        cursor: &mut Cursor<'_>,
        field: &Field,
        selection: &Projection,
    ) -> FormatResult<ArrayView<'a>> {
        let (len, null_count) = cursor.node()?;
        let layout = layout(field, cursor.version);
        let projected = selection.project_field(field);
        let mut parts = ArrayParts {
            data_type: Some(projected.data_type().clone()),
            len,
            null_count,
            ..ArrayParts::default()
        };
        let body_len = self.body.len();
        let bytes = |range, swap| self.buffer(range, swap);
        let keep = |bytes| parts.buffers.push(bytes);
        parts.validity = layout
            .walk(cursor, body_len, null_count, bytes, keep)?
            .validity;
        if let Some(encoding) = field.dictionary() {
            let values = self
                .dictionaries
                .get(encoding.id)
                .ok_or(FormatErrorKind::MissingDictionary { id: encoding.id })?;
            parts.dictionary = Some(Dictionary {
                index_type: encoding.index_type,
                values,
            });
        }
        for (i, child) in child_fields(field).iter().enumerate() {
            let in_child = |e: FormatError| e.in_field(i);
            match selection.child(i) {
                Some(child_selection) => {
                    let array = self.array(cursor, child, child_selection);
                    parts.children.push(array.map_err(in_child)?);
                }
                None => self.skip(cursor, child).map_err(in_child)?,
            }
        }
        ArrayView::try_new(parts)
    }
}

/// Copies `bytes` into owned memory in native (little-endian) byte order.
fn swapped<'a>(bytes: Bytes<'a>, swap: Swap) -> Bytes<'a> {
    if matches!(swap, Swap::None | Swap::Each(..=1)) {
        return bytes;
    }
    let mut data = bytes.to_vec();
    match swap {
        Swap::None => {}
        Swap::Each(width) => data.chunks_exact_mut(width).for_each(<[u8]>::reverse),
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
