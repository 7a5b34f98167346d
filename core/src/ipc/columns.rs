//! Decoding a `RecordBatch` message body into validated arrays.
//!
//! It uses `dictionary` and `projection` beside it and, of the crate, the format's cursor,
//! layouts and body walk, `compression`, the arrays and their bytes, the columnar rules, the
//! data types, the schema and the errors.
//!
//! The message header lists one `FieldNode` per array and the body's buffers in depth-first field
//! order; the format's one walk of them ([`body::array`]) goes in step with the schema's owned
//! fields, and this module plugs into it. Decoding ([`ArrayDecoder`]) cuts selected fields'
//! buffers from the [`FetchedBody`] (decompressing and byte-swapping into owned memory when
//! needed, borrowing otherwise) and hands each array's parts to [`ArrayView::try_new`];
//! unselected fields are stepped over. The same walk, without a body, lists the byte ranges a
//! projection needs ([`buffer_ranges`]).

use super::dictionary::Dictionaries;
use super::projection::Projection;
use crate::array::{ArrayParts, ArrayView, Dictionary};
use crate::bytes::Bytes;
use crate::compression::{Decompressed, Decompressor};
use crate::datatype::CompressionCodec;
use crate::error::{FormatError, FormatErrorKind, FormatResult};
use crate::format::body::{self, ArraySink};
use crate::format::cursor::Cursor;
use crate::format::layout::Walked;
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

/// A field and what of it a projection selects (`None`: the field is stepped over).
type Selected<'f> = (&'f Field, Option<&'f Projection>);

/// Child `i` of `field` in a message (dictionary indices have none), and what of it is selected.
fn child<'f>((field, selection): Selected<'f>, i: usize) -> Option<Selected<'f>> {
    let children = if field.dictionary().is_some() {
        &[]
    } else {
        field.data_type().children()
    };
    let child = children.get(i)?;
    Some((child, selection.and_then(|s| s.child(i))))
}

/// The walk that lists the body ranges of the selected fields' buffers.
struct Ranges {
    body_len: u64,
    version: MetadataVersion,
    /// The array whose buffers come next is selected.
    selected: bool,
    out: Vec<Range<u64>>,
}

impl<'m> ArraySink<'m> for Ranges {
    type Field = Selected<'m>;
    type Buffer = ();
    type Buffers = ();
    type Parts = Selected<'m>;
    type Array = ();

    fn body_len(&self) -> u64 {
        self.body_len
    }

    fn start(
        &mut self,
        field: Selected<'m>,
        _: usize,
        _: usize,
    ) -> FormatResult<(Selected<'m>, (), Layout)> {
        self.selected = field.1.is_some();
        Ok((field, (), layout(field.0, self.version)))
    }

    fn buffer(&mut self, range: Range<u64>, _: Swap) -> FormatResult<()> {
        if self.selected {
            self.out.push(range);
        }
        Ok(())
    }

    fn keep((): &mut (), _: usize, (): ()) {}

    fn walked(
        &mut self,
        _: &mut Selected<'m>,
        (): (),
        _: Walked<()>,
        _: &Cursor<'m>,
    ) -> FormatResult<()> {
        Ok(())
    }

    fn child(&self, parts: &Selected<'m>, i: usize) -> FormatResult<Option<Selected<'m>>> {
        Ok(child(*parts, i))
    }

    fn add_child(_: &mut Selected<'m>, (): ()) {}

    fn finish(&mut self, _: Selected<'m>) -> FormatResult<()> {
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
    let mut cursor = Cursor::new(batch)?;
    let mut ranges = Ranges {
        body_len,
        version,
        selected: false,
        out: Vec::new(),
    };
    for (i, field) in fields.iter().enumerate() {
        body::array(&mut cursor, &mut ranges, (field, projection.child(i)))
            .map_err(|e| e.in_field(i))?;
    }
    cursor.finish()?;
    Ok(ranges.out)
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
    /// The array whose buffers come next is selected (else they are stepped over, not cut).
    selected: bool,
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
    let mut cursor = Cursor::new(batch)?;
    let mut decoder = ArrayDecoder {
        body,
        compression: batch.compression()?.map(|c| c.codec),
        context,
        dictionaries,
        decompressor,
        compressed: 0,
        selected: false,
    };
    let mut columns = Vec::with_capacity(fields.len().min(cursor.nodes.len()));
    for (i, field) in fields.iter().enumerate() {
        let in_field = |e: FormatError| e.in_field(i);
        let column = body::array(&mut cursor, &mut decoder, (field, projection.child(i)));
        let Some(column) = column.map_err(in_field)? else {
            continue;
        };
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
    /// The buffer at `range`, cut from the body, decompressed and put in native byte order.
    fn cut(&mut self, range: Range<u64>, swap: Swap) -> FormatResult<Bytes<'a>> {
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
}

/// An array being decoded: its field, what of it is selected and, if it is, its parts.
struct Decoding<'f, 'a> {
    field: Selected<'f>,
    parts: Option<ArrayParts<'a>>,
}

impl<'m, 'a> ArraySink<'m> for ArrayDecoder<'_, 'a> {
    type Field = Selected<'m>;
    type Buffer = Bytes<'a>;
    type Buffers = Option<ArrayParts<'a>>;
    type Parts = Decoding<'m, 'a>;
    type Array = Option<ArrayView<'a>>;

    fn body_len(&self) -> u64 {
        self.body.len()
    }

    fn start(
        &mut self,
        field: Selected<'m>,
        len: usize,
        null_count: usize,
    ) -> FormatResult<(Decoding<'m, 'a>, Option<ArrayParts<'a>>, Layout)> {
        self.selected = field.1.is_some();
        let parts = field.1.map(|selection| ArrayParts {
            data_type: Some(selection.project_field(field.0).data_type().clone()),
            len,
            null_count,
            ..ArrayParts::default()
        });
        let layout = layout(field.0, self.context.version);
        Ok((Decoding { field, parts: None }, parts, layout))
    }

    fn buffer(&mut self, range: Range<u64>, swap: Swap) -> FormatResult<Bytes<'a>> {
        if self.selected {
            self.cut(range, swap)
        } else {
            Ok(Bytes::default())
        }
    }

    fn keep(parts: &mut Option<ArrayParts<'a>>, _: usize, bytes: Bytes<'a>) {
        if let Some(parts) = parts {
            parts.buffers.push(bytes);
        }
    }

    fn walked(
        &mut self,
        decoding: &mut Decoding<'m, 'a>,
        mut parts: Option<ArrayParts<'a>>,
        walked: Walked<Bytes<'a>>,
        _: &Cursor<'m>,
    ) -> FormatResult<()> {
        if let Some(parts) = &mut parts {
            parts.validity = walked.validity;
        }
        decoding.parts = parts;
        Ok(())
    }

    fn child(&self, decoding: &Decoding<'m, 'a>, i: usize) -> FormatResult<Option<Selected<'m>>> {
        Ok(child(decoding.field, i))
    }

    fn add_child(decoding: &mut Decoding<'m, 'a>, array: Option<ArrayView<'a>>) {
        if let (Some(parts), Some(array)) = (&mut decoding.parts, array) {
            parts.children.push(array);
        }
    }

    fn finish(&mut self, decoding: Decoding<'m, 'a>) -> FormatResult<Option<ArrayView<'a>>> {
        let Some(mut parts) = decoding.parts else {
            return Ok(None);
        };
        if let Some(encoding) = decoding.field.0.dictionary() {
            let values = self
                .dictionaries
                .get(encoding.id)
                .ok_or(FormatErrorKind::MissingDictionary { id: encoding.id })?;
            parts.dictionary = Some(Dictionary {
                index_type: encoding.index_type,
                values,
            });
        }
        ArrayView::try_new(parts).map(Some)
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
