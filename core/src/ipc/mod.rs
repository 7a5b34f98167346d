//! Reading the Arrow IPC file and stream formats.
//!
//! It uses the layers below it: sources and the planner (`source`, `read_plan`, `cost`), the
//! flatbuffers and format, the data types and schema, the columnar rules, `compression`, the
//! arrays and their bytes, and the errors; nothing of `json` or `no_alloc`.
//!
//! [`FileDecoder`] plans the reads of a file with the fewest a high-latency store allows (one
//! speculative read of the tail for the footer, then coalesced windows of blocks) and decodes the
//! bytes it is handed, doing no I/O itself. [`FileReader`] drives it from a [`RandomAccess`]
//! source, and, with the `async` feature, `AsyncFileReader` from an `AsyncRandomAccess` one,
//! fetching ahead. [`StreamDecoder`] decodes a stream from bytes pushed in any chunks;
//! [`StreamReader`] drives it from an [`embedded_io::Read`], and, with `async`,
//! `AsyncStreamReader` from an `embedded_io_async::Read`. All decode bodies into validated
//! [`RecordBatch`]es.

#[cfg(feature = "async")]
mod async_reader;
#[cfg(feature = "async")]
mod async_stream;
// Only the fuzzing entry points append whole arrays (`fuzzing::concat`).
mod columns;
#[cfg(any(test, feature = "fuzzing"))]
mod concat;
mod delta;
mod dictionary;
mod file;
mod file_decoder;
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod fuzzing;
mod projection;
mod pushed;
mod scan;
mod stream;
mod stream_decoder;
mod writer;

#[cfg(feature = "async")]
pub use async_reader::{AsyncFileReader, DEFAULT_PREFETCH};
#[cfg(feature = "async")]
pub use async_stream::AsyncStreamReader;
pub use file::FileReader;
pub use file_decoder::{DecodeResult, FileDecoder, ScanOptions};
pub use projection::{Projection, ProjectionError, ProjectionErrorKind};
pub use scan::Scan;
pub use stream::StreamReader;
pub use stream_decoder::{StreamDecodeResult, StreamDecoder};
pub use writer::{
    DEFAULT_ALIGNMENT, END_OF_STREAM, EncodedMessage, FileWriter, IpcFormat, MessageEncoder,
    MessageKind, StreamWriter, WriteError, WriterOptions,
};

use crate::array::RecordBatch;
use crate::bytes::Bytes;
use crate::compression::Decompressor;
use crate::datatype::Endianness;
use crate::error::{Error, Feature, FormatError, FormatErrorKind, FormatResult, Limit};
use crate::format::unexpected;
use crate::format::{self, MetadataVersion};
use crate::schema::{Field, Schema};
use crate::source::RandomAccess;
use alloc::sync::Arc;
use alloc::vec::Vec;
use columns::{DecodeContext, FetchedBody, decode_columns};
use core::ops::Range;
use dictionary::Dictionaries;
use hashbrown::HashMap;

use crate::format::{CONTINUATION, MAGIC};

/// Options for the IPC readers.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ReaderOptions {
    /// Bytes read from the end of a file in the first read, to get the footer in one go.
    pub footer_read_size: usize,
    /// Largest declared uncompressed size of one compressed buffer; larger is an error.
    pub max_decompressed_buffer: u64,
    /// Largest message metadata (flatbuffer) accepted from a stream.
    pub max_metadata_size: u64,
}

impl Default for ReaderOptions {
    fn default() -> Self {
        ReaderOptions {
            footer_read_size: 64 * 1024,
            max_decompressed_buffer: crate::compression::DEFAULT_DECOMPRESSION_LIMIT,
            max_metadata_size: 64 * 1024 * 1024,
        }
    }
}

impl ReaderOptions {
    /// Sets [`ReaderOptions::footer_read_size`]: the bytes read from the end of a file in
    /// the first read.
    #[must_use]
    pub fn with_footer_read_size(mut self, footer_read_size: usize) -> Self {
        self.footer_read_size = footer_read_size;
        self
    }

    /// Sets [`ReaderOptions::max_decompressed_buffer`]: the largest declared uncompressed
    /// size of one compressed buffer.
    #[must_use]
    pub fn with_max_decompressed_buffer(mut self, max_decompressed_buffer: u64) -> Self {
        self.max_decompressed_buffer = max_decompressed_buffer;
        self
    }

    /// Sets [`ReaderOptions::max_metadata_size`]: the largest message metadata accepted
    /// from a stream.
    #[must_use]
    pub fn with_max_metadata_size(mut self, max_metadata_size: u64) -> Self {
        self.max_metadata_size = max_metadata_size;
        self
    }
}

/// Reads `ranges` in one round trip: windows of shared memory when the source shares it,
/// otherwise one allocation for all of them, cut into one buffer per range.
fn fetch<R: RandomAccess>(
    source: &R,
    ranges: &[Range<u64>],
) -> Result<Vec<Bytes<'static>>, Error<R::Error>> {
    let first = ranges.first().map_or(0, |r| r.start);
    let mut total = 0usize;
    let mut bounds = Vec::with_capacity(ranges.len());
    for range in ranges {
        let len = range.end.saturating_sub(range.start);
        let end = usize::try_from(len)
            .ok()
            .and_then(|len| total.checked_add(len))
            .ok_or(FormatErrorKind::LimitExceeded {
                what: Limit::PlannedRead,
                requested: len,
                limit: usize::MAX as u64,
            })?;
        bounds.push(total..end);
        total = end;
    }
    let failed = |error| Error::Source {
        error,
        offset: first,
        len: total as u64,
    };
    if let Some(shared) = source.share_ranges(ranges) {
        let shared = shared.map_err(failed)?;
        let sizes_match = shared.len() == bounds.len()
            && shared
                .iter()
                .zip(&bounds)
                .all(|(b, r)| b.len() == r.end - r.start);
        if !sizes_match {
            return Err(FormatError::from(FormatErrorKind::Truncated {
                what: "shared ranges from the source",
                needed: total as u64,
                available: shared.iter().map(|b| b.len() as u64).sum(),
            })
            .at(first)
            .into());
        }
        return Ok(shared);
    }
    let mut out = alloc::vec![0u8; total];
    source.read_ranges(ranges, &mut out).map_err(failed)?;
    let out = Bytes::from_vec(out);
    Ok(bounds
        .into_iter()
        .map(|r| out.slice(r).unwrap_or_default())
        .collect())
}

/// The smallest number of fields a schema flatbuffer of `len` bytes can hold honestly; the
/// budget that keeps a schema whose tables are shared from costing more than its bytes.
fn field_budget(len: usize) -> usize {
    len / 8 + 64
}

/// What both readers know after the schema: the schema and how to decode against it.
#[derive(Debug)]
struct ReadState {
    schema: Arc<Schema>,
    projection: Projection,
    /// The schema of the batches the reader returns: `schema` with `projection` applied.
    projected: Arc<Schema>,
    /// Whether the projected fields use any dictionary.
    needs_dictionaries: bool,
    dictionary_fields: HashMap<i64, Field>,
    dictionaries: Dictionaries<'static>,
    /// Decompresses every compressed buffer the reader meets, reusing codec state.
    decompressor: Decompressor,
    options: ReaderOptions,
}

impl ReadState {
    fn new(schema: Schema, options: ReaderOptions) -> ReadState {
        let schema = Arc::new(schema);
        let dictionary_fields = dictionary::dictionary_fields(&schema);
        ReadState {
            needs_dictionaries: !dictionary_fields.is_empty(),
            dictionary_fields,
            projected: Arc::clone(&schema),
            projection: Projection::All,
            schema,
            dictionaries: Dictionaries::default(),
            decompressor: Decompressor::new(),
            options,
        }
    }

    /// Reads only the fields `projection` selects from now on.
    fn set_projection(&mut self, projection: Projection) {
        self.projected = Arc::new(projection.project_schema(&self.schema));
        self.needs_dictionaries = !dictionary::dictionary_fields(&self.projected).is_empty();
        self.projection = projection;
    }

    /// How to decode a message of `version` (V4 or later: Arrow 0.8 and after).
    fn context(&self, version: MetadataVersion) -> FormatResult<DecodeContext> {
        if version < MetadataVersion::V4 {
            return Err(FormatErrorKind::Unsupported {
                what: Feature::MetadataVersion,
            }
            .into());
        }
        Ok(DecodeContext {
            big_endian: self.schema.endianness() == Endianness::Big,
            version,
            max_decompressed: self.options.max_decompressed_buffer,
        })
    }

    /// Decodes a record batch message with its body.
    fn record_batch(
        &mut self,
        message: format::Message<'_>,
        body: &FetchedBody<'static>,
    ) -> FormatResult<RecordBatch<'static>> {
        let format::MessageHeader::RecordBatch(header) = message.header()? else {
            return Err(unexpected("RecordBatch", message));
        };
        let context = self.context(message.version()?)?;
        let (columns, rows) = decode_columns(
            self.schema.fields(),
            &self.projection,
            header,
            body,
            &self.dictionaries,
            context,
            &mut self.decompressor,
        )?;
        RecordBatch::try_new(Arc::clone(&self.projected), columns, rows)
    }

    /// Decodes a dictionary batch message with its body into the dictionaries. In a file
    /// (`file`), a dictionary is never replaced, only extended by deltas (the format's rule:
    /// files are read in any order).
    fn dictionary_batch(
        &mut self,
        message: format::Message<'_>,
        body: &Bytes<'static>,
        file: bool,
    ) -> FormatResult<()> {
        let format::MessageHeader::DictionaryBatch(header) = message.header()? else {
            return Err(unexpected("DictionaryBatch", message));
        };
        let id = header.id();
        if file && !header.is_delta() && self.dictionaries.get(id).is_some() {
            return Err(FormatErrorKind::Unsupported {
                what: Feature::ReplacedDictionaryInFile,
            }
            .into());
        }
        let field = self
            .dictionary_fields
            .get(&id)
            .ok_or(FormatErrorKind::InvalidValue {
                what: "DictionaryBatch.id not used by the schema",
                value: id,
            })?;
        let context = self.context(message.version()?)?;
        let (mut columns, _) = decode_columns(
            core::slice::from_ref(field),
            &Projection::All,
            header.data()?,
            &FetchedBody::Whole(body.clone()),
            &self.dictionaries,
            context,
            &mut self.decompressor,
        )
        .map_err(|e| e.in_dictionary(self.schema.dictionary_path(id)))?;
        let values = columns.pop().ok_or(FormatErrorKind::LayoutMismatch {
            what: "dictionary batch without a column",
        })?;
        self.dictionaries.insert(id, values, header.is_delta())
    }
}
