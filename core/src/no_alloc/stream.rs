//! [`StreamReader`]: an Arrow IPC stream read from an [`embedded_io::Read`] into one
//! caller-provided scratch buffer.
//!
//! It uses `file` and the scratch helpers of `no_alloc` beside it and, of the crate, the sources,
//! the format and the errors.
//!
//! The schema message is read first and kept at the scratch's start; each dictionary batch is
//! read after it and kept too (a replacement is read after the others and used from then on).
//! Record batch messages take the rest of the scratch, one at a time, and are decoded in place.
//! A message that does not fit is a [`BufferTooSmall`](crate::error::FormatErrorKind::BufferTooSmall)
//! error saying how many bytes it needs.

use super::Batch;
use super::file::DEFAULT_DICTIONARIES;
use super::stored;
use super::{InScratch, Stored, keep, little_endian, too_small};
use crate::error::{Error, FormatError, FormatErrorKind, FormatResult};
use crate::format::{
    self, Foreign, MAX_PREFIX, Prefix, body_length, no_schema, truncated, unexpected,
};
use crate::source::fill;
use core::ops::Range;

/// Reads an Arrow IPC stream from `R` into the caller's `scratch`, with no allocation. `D`
/// dictionaries at most (see [`DEFAULT_DICTIONARIES`]).
#[derive(Debug)]
pub struct StreamReader<'s, R, const D: usize = DEFAULT_DICTIONARIES> {
    reader: R,
    scratch: &'s mut [u8],
    /// The schema message's flatbuffer.
    schema: Range<usize>,
    dictionaries: heapless::Vec<Stored, D>,
    /// Where the kept messages end and the next message is read to.
    free: usize,
    /// Bytes of the stream read so far.
    position: u64,
    finished: bool,
}

/// A message read into the scratch: its flatbuffer and body, and where it began in the stream.
struct Read {
    message: Range<usize>,
    body: Range<usize>,
    offset: u64,
}

impl<'s, R: embedded_io::Read, const D: usize> StreamReader<'s, R, D> {
    /// Reads the schema message (which must come first).
    pub fn new(reader: R, scratch: &'s mut [u8]) -> Result<Self, Error<R::Error>> {
        let mut stream = StreamReader {
            reader,
            scratch,
            schema: 0..0,
            dictionaries: heapless::Vec::new(),
            free: 0,
            position: 0,
            finished: false,
        };
        let read = stream.read_message()?.ok_or(no_schema(stream.position))?;
        stream.schema = read.message.clone();
        little_endian(stream.schema(), read.offset)?;
        stream.free = read.body.end;
        Ok(stream)
    }

    /// The schema view.
    pub fn schema(&self) -> FormatResult<format::Schema<'_>> {
        let message =
            format::Message::parse(self.scratch.get(self.schema.clone()).unwrap_or_default())?;
        match message.header()? {
            format::MessageHeader::Schema(schema) => Ok(schema),
            _ => Err(unexpected("Schema", message)),
        }
    }

    /// Reads messages up to the next record batch (keeping dictionaries) and decodes it in
    /// place; `None` at the end of the stream. The batch borrows the reader until dropped.
    pub fn next_batch<const N: usize>(&mut self) -> Result<Option<Batch<'_, N>>, Error<R::Error>> {
        let mut batch = Batch::empty();
        match self.read_batch(&mut batch) {
            Ok(true) => Ok(Some(batch)),
            Ok(false) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Decodes the next record batch into `batch`; `false` at the end of the stream.
    fn read_batch<'r, const N: usize>(
        &'r mut self,
        batch: &mut Batch<'r, N>,
    ) -> Result<bool, Error<R::Error>> {
        let read = loop {
            if self.finished {
                return Ok(false);
            }
            let Some(read) = self.read_message()? else {
                self.finished = true;
                return Ok(false);
            };
            let located = |e: FormatError| e.rebase(read.offset);
            let message =
                format::Message::parse(self.scratch.get(read.message.clone()).unwrap_or_default())
                    .map_err(located)?;
            match message.header().map_err(located)? {
                format::MessageHeader::RecordBatch(_) => break read,
                format::MessageHeader::DictionaryBatch(_) => {
                    let kept = stored(message, (read.message.clone(), read.body.clone()))
                        .map_err(located)?;
                    if let Some(old) = self.dictionaries.iter_mut().find(|d| d.id == kept.id) {
                        *old = kept;
                    } else {
                        keep(&mut self.dictionaries, kept)?;
                    }
                    self.free = read.body.end;
                }
                _ => {
                    let expected = "RecordBatch or DictionaryBatch";
                    return Err(unexpected(expected, message).at(read.offset).into());
                }
            }
        };
        let scratch: &[u8] = self.scratch;
        let body_at = read.offset + (read.body.start - read.message.start) as u64;
        let mut decode = || -> FormatResult<()> {
            let message =
                format::Message::parse(scratch.get(read.message.clone()).unwrap_or_default())?;
            let format::MessageHeader::RecordBatch(header) = message.header()? else {
                return Err(FormatErrorKind::LayoutMismatch {
                    what: "record batch",
                }
                .into());
            };
            let schema = self.schema()?;
            let dictionaries = InScratch {
                scratch,
                stored: &self.dictionaries,
            };
            let body = scratch.get(read.body.clone()).unwrap_or_default();
            batch.decode(
                schema.fields()?,
                header,
                body,
                message.version()?,
                &dictionaries,
            )
        };
        decode()
            .map(|()| true)
            .map_err(|e| e.rebase(body_at).into())
    }

    /// Reads one message (prefix, flatbuffer, body) into the free scratch; `None` at the
    /// end-of-stream marker or a clean end of input.
    fn read_message(&mut self) -> Result<Option<Read>, Error<R::Error>> {
        let offset = self.position;
        let mut prefix = [0u8; MAX_PREFIX];
        let (mut filled, mut ended) = (0, false);
        let framed = loop {
            let bytes = prefix.get(..filled).unwrap_or_default();
            match Prefix::parse(bytes, ended, offset) {
                Ok(Prefix::Need(n)) => {
                    let more = prefix.get_mut(filled..filled + n).unwrap_or_default();
                    let got = fill(&mut self.reader, &mut self.position, more)?;
                    ended = got < n || got == 0;
                    filled += got;
                }
                framed => break framed,
            }
        };
        // At the start of the input, a length no stream begins with is refused as the format
        // its bytes look like, if they look like one.
        let foreign = (offset == 0)
            .then(|| Foreign::sniff(prefix.get(..4).filter(|_| filled >= 4)?))
            .flatten()
            .map(|looks_like| FormatError::from(FormatErrorKind::NotArrow { looks_like }));
        let len = match framed {
            Ok(Prefix::Message { metadata_len, .. }) => metadata_len,
            Ok(_) => return Ok(None),
            Err(e) => return Err(foreign.unwrap_or(e).into()),
        };
        let message = self.free..self.free.saturating_add(len);
        let available = self.scratch.len();
        let buf = self.scratch.get_mut(message.clone()).ok_or_else(|| {
            foreign.unwrap_or_else(|| too_small("a message's metadata", message.end, available))
        })?;
        let metadata_at = self.position;
        fill_exact(
            &mut self.reader,
            &mut self.position,
            buf,
            "message metadata",
        )?;
        let body_len = body_length(buf, metadata_at)?;
        let body = message.end..message.end.saturating_add(body_len);
        let buf = self
            .scratch
            .get_mut(body.clone())
            .ok_or_else(|| too_small("a message's body", body.end, available))?;
        fill_exact(&mut self.reader, &mut self.position, buf, "message body")?;
        Ok(Some(Read {
            message,
            body,
            offset,
        }))
    }

    /// The reader.
    pub fn inner(&self) -> &R {
        &self.reader
    }
}

/// Fills `buf` whole; the input ending first is an error.
fn fill_exact<R: embedded_io::Read>(
    reader: &mut R,
    position: &mut u64,
    buf: &mut [u8],
    what: &'static str,
) -> Result<(), Error<R::Error>> {
    let start = *position;
    let got = fill(reader, position, buf)?;
    if got < buf.len() {
        return Err(truncated(what, buf.len(), got, start).into());
    }
    Ok(())
}
