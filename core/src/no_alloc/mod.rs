//! Reading Arrow IPC and writing JSON with no allocator: for microcontrollers, WASM modules and
//! real-time loops, with `default-features = false`.
//!
//! It uses the view, the format, the data types, the sources, the errors and the JSON
//! encoder; it is the top of the ladder without `alloc`.
//!
//! Bytes enter from a [`RandomAccess`](crate::source::RandomAccess) source ([`FileReader`]) or an
//! [`embedded_io::Read`] ([`StreamReader`]) into one scratch buffer the caller lends; the
//! metadata, the dictionaries and one record batch at a time are read into it and never copied
//! again. A [`Batch`] is decoded in place: the [flatbuffer views](crate::format), and a
//! [`View`](crate::view::View) whose fixed-capacity list of arrays has buffers that are slices
//! of the scratch, each checked against the columnar format. JSON leaves through the
//! [`Encoder`] (the alloc path's [`json::Encoder`](crate::json::Encoder), the same type) into a
//! buffer as small as the caller likes.
//!
//! Every capacity is a const generic with a documented default: `N` arrays per batch
//! ([`DEFAULT_ARRAYS`]), `D` dictionaries ([`DEFAULT_DICTIONARIES`]), `DEPTH` open JSON values
//! ([`DEFAULT_DEPTH`](crate::json::DEFAULT_DEPTH)) and `PLAN` arrays in the encoder's plan
//! ([`DEFAULT_PLAN`](crate::json::DEFAULT_PLAN), as many as a default batch holds). A scratch too small for the footer, a
//! dictionary or a block is a [`BufferTooSmall`](crate::error::FormatErrorKind::BufferTooSmall)
//! error saying how many bytes are needed; a capacity too small is a
//! [`CapacityExceeded`](crate::error::FormatErrorKind::CapacityExceeded) error (an encoder's
//! plan too small, [`TooManyArrays`](crate::json::JsonError::TooManyArrays)).
//!
//! What needs the `alloc` feature instead: compressed bodies, big-endian files, and delta
//! dictionaries (each an `Unsupported` error here). Dictionary replacement in a stream is
//! read, the new values taking more scratch.
//!
//! ```
//! use quiver::json::{EncoderOptions, JsonFormat};
//! use quiver::no_alloc::{Batch, Encoder, FileReader};
//! # use quiver::{array::ArrayView, ipc::FileWriter, array::RecordBatch, ipc::WriterOptions};
//! # let column = ArrayView::from_values([Some(1i32), None, Some(3)])?;
//! # let batch = RecordBatch::from_columns([("a", column)])?;
//! # let mut writer = FileWriter::new(Vec::new(), batch.schema().clone(), WriterOptions::default())?;
//! # writer.write(&batch)?;
//! # writer.finish()?;
//! # let file: Vec<u8> = writer.into_inner();
//! // `file` holds an Arrow IPC file (a `&[u8]` is a source, so is flash or a driver).
//! let mut scratch = [0u8; 4096];
//! let mut reader: FileReader<_> = FileReader::open(&file[..], &mut scratch)?;
//! let mut json = Vec::new(); // any `embedded_io::Write`
//! for i in 0..reader.num_batches() {
//!     let batch: Batch = reader.batch(i)?;
//!     let options = EncoderOptions::default();
//!     let mut encoder: Encoder = Encoder::new(&batch, JsonFormat::LineDelimited, options)?;
//!     encoder.write_through(&mut json, &mut [0u8; 256])?;
//! }
//! assert_eq!(json, b"{\"a\":1}\n{\"a\":null}\n{\"a\":3}\n");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod file;
mod stream;

/// Arrays a [`Batch`] holds unless told otherwise: every column, every child and every
/// dictionary's values count one. As many as a default [`Encoder`]'s plan holds: a wider
/// schema names both, `Batch<'_, N>` and `Encoder<'_, DEPTH, N>`.
pub const DEFAULT_ARRAYS: usize = crate::json::DEFAULT_PLAN;

/// A record batch read in place: a [`View`](crate::view::View) of `N` arrays at most (see
/// [`DEFAULT_ARRAYS`]), its buffers slices of the scratch.
pub type Batch<'a, const N: usize = DEFAULT_ARRAYS> = crate::view::View<'a, N>;
/// The JSON encoder of a [`Batch`]: [`json::Encoder`](crate::json::Encoder), with its plan of
/// `PLAN` arrays inline ([`DEFAULT_ARRAYS`] by default, about 184 bytes each). A batch of more
/// arrays is refused ([`TooManyArrays`](crate::json::JsonError::TooManyArrays)), as there is no
/// heap to plan it on.
pub type Encoder<
    'b,
    const DEPTH: usize = { crate::json::DEFAULT_DEPTH },
    const PLAN: usize = DEFAULT_ARRAYS,
> = crate::json::Encoder<'b, DEPTH, PLAN>;
pub use file::{DEFAULT_DICTIONARIES, FOOTER_READ, FileReader};
pub use stream::StreamReader;

use crate::datatype::Endianness;
use crate::error::{Capacity, Feature, FormatError, FormatErrorKind, FormatResult};
use crate::format::{self, Block, unexpected};
use crate::view::DictionaryBatches;
use core::ops::Range;

/// A dictionary batch kept in the scratch: its id, its message flatbuffer and its body.
#[derive(Debug, Clone)]
struct Stored {
    id: i64,
    message: Range<usize>,
    body: Range<usize>,
}

/// Refuses a big-endian schema, which only the `alloc` path reads; errors reading the schema
/// are rebased onto `at`, where its flatbuffer starts.
fn little_endian(schema: FormatResult<format::Schema<'_>>, at: u64) -> FormatResult<()> {
    if schema
        .and_then(|s| s.endianness())
        .map_err(|e| e.rebase(at))?
        == Endianness::Big
    {
        return Err(FormatErrorKind::Unsupported {
            what: Feature::BigEndianWithoutAlloc,
        }
        .into());
    }
    Ok(())
}

/// Keeps another dictionary among a reader's `D`.
fn keep<const D: usize>(kept: &mut heapless::Vec<Stored, D>, stored: Stored) -> FormatResult<()> {
    kept.push(stored).map_err(|_| {
        FormatError::from(FormatErrorKind::CapacityExceeded {
            what: Capacity::Dictionaries,
            needed: D as u64 + 1,
            capacity: D as u64,
        })
    })
}

/// A scratch buffer too small for `what`.
fn too_small(what: &'static str, needed: usize, available: usize) -> FormatError {
    FormatErrorKind::BufferTooSmall {
        what,
        needed: needed as u64,
        available: available as u64,
    }
    .into()
}

/// The message of a block's bytes (`bytes` is exactly the block), checked against the block,
/// with where its flatbuffer lies in the block, and the body; errors are located in the file.
fn block_message(
    bytes: &[u8],
    block: Block,
) -> FormatResult<(format::Message<'_>, Range<usize>, &[u8])> {
    let flatbuffer = block.flatbuffer(bytes)?;
    let at = block.offset as u64 + flatbuffer.start as u64;
    let message = block.message(bytes.get(flatbuffer.clone()).unwrap_or_default(), at)?;
    let body = bytes.get(block.meta_data_length as usize..);
    Ok((message, flatbuffer, body.unwrap_or_default()))
}

/// The dictionary batch a message holds, as kept at `message` and `body` of the scratch.
fn stored(
    message: format::Message<'_>,
    ranges: (Range<usize>, Range<usize>),
) -> FormatResult<Stored> {
    let format::MessageHeader::DictionaryBatch(header) = message.header()? else {
        return Err(unexpected("DictionaryBatch", message));
    };
    if header.is_delta() {
        return Err(FormatErrorKind::Unsupported {
            what: Feature::DeltaDictionaryWithoutAlloc,
        }
        .into());
    }
    Ok(Stored {
        id: header.id(),
        message: ranges.0,
        body: ranges.1,
    })
}

/// A dictionary block read to `base` of the scratch (`bytes` is the block), to keep.
fn stored_dictionary(bytes: &[u8], block: Block, base: usize) -> FormatResult<Stored> {
    let (message, flatbuffer, body) = block_message(bytes, block)?;
    let body_at = base + bytes.len() - body.len();
    stored(
        message,
        (
            base + flatbuffer.start..base + flatbuffer.end,
            body_at..base + bytes.len(),
        ),
    )
    .map_err(|e| e.at(block.offset as u64))
}

/// The dictionaries kept in a reader's scratch.
struct InScratch<'a, 'd> {
    scratch: &'a [u8],
    stored: &'d [Stored],
}

impl<'a> DictionaryBatches<'a> for InScratch<'a, '_> {
    /// The record batch and body of dictionary `id`: the last one kept with that id.
    fn dictionary(&self, id: i64) -> FormatResult<(format::RecordBatch<'a>, &'a [u8])> {
        let kept = self
            .stored
            .iter()
            .rev()
            .find(|d| d.id == id)
            .ok_or(FormatErrorKind::MissingDictionary { id })?;
        let scratch = self.scratch;
        let message =
            format::Message::parse(scratch.get(kept.message.clone()).unwrap_or_default())?;
        let format::MessageHeader::DictionaryBatch(header) = message.header()? else {
            return Err(FormatErrorKind::MissingDictionary { id }.into());
        };
        let body = scratch.get(kept.body.clone()).unwrap_or_default();
        Ok((header.data()?, body))
    }
}
