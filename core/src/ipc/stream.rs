//! [`StreamReader`]: the record batches of an Arrow IPC stream, in order, from any
//! [`embedded_io::Read`].
//!
//! A stream is a schema message, then dictionary and record batch messages, then an optional
//! end-of-stream marker. Each message is an encapsulation prefix (the 0xFFFFFFFF continuation
//! marker and an i32 length, or the legacy bare i32 length), the metadata flatbuffer and the body.
//! Buffers grow only as bytes arrive, so a length in the stream cannot make the reader allocate
//! more than it has received (and the metadata length has a limit of its own).

use super::decode::Body;
use super::{CONTINUATION, Projection, ReadState, ReaderOptions, field_budget};
use crate::array::RecordBatch;
use crate::bytes::Bytes;
use crate::error::{Error, FormatError, FormatErrorKind};
use crate::format::{self, Foreign, MessageHeader};
use crate::schema::Schema;
use crate::source::fill;
use alloc::sync::Arc;
use alloc::vec::Vec;

/// Bytes read at most per step while a message body arrives.
const CHUNK: usize = 64 * 1024;

/// Reads an Arrow IPC stream from an [`embedded_io::Read`].
#[derive(Debug)]
pub struct StreamReader<R> {
    reader: R,
    state: ReadState,
    position: u64,
    batches: u64,
    dictionary_batches: u64,
    finished: bool,
}

/// One message as read from the stream: its flatbuffer, its body, and where it began.
struct RawMessage {
    metadata: Vec<u8>,
    body: Bytes<'static>,
    offset: u64,
    metadata_offset: u64,
}

impl<R: embedded_io::Read> StreamReader<R> {
    /// Reads the schema message that opens the stream.
    pub fn new(mut reader: R, options: ReaderOptions) -> Result<Self, Error<R::Error>> {
        let mut position = 0;
        let raw = read_message(&mut reader, &mut position, &options)?.ok_or_else(|| {
            FormatError::from(if position == 0 {
                FormatErrorKind::EmptyInput
            } else {
                FormatErrorKind::Truncated {
                    what: "stream (no schema message)",
                    needed: 8,
                    available: position,
                }
            })
        })?;
        let located = |e: FormatError| e.rebase(raw.metadata_offset);
        let message = format::Message::parse(&raw.metadata).map_err(located)?;
        let MessageHeader::Schema(fb) = message.header().map_err(located)? else {
            return Err(super::unexpected("Schema", message).at(raw.offset).into());
        };
        let schema = Schema::from_fb(fb, field_budget(raw.metadata.len())).map_err(located)?;
        Ok(StreamReader {
            reader,
            state: ReadState::new(schema, options),
            position,
            batches: 0,
            dictionary_batches: 0,
            finished: false,
        })
    }

    /// The stream's schema.
    pub fn schema(&self) -> &Arc<Schema> {
        &self.state.schema
    }

    /// Reads only the fields `projection` selects from now on: their buffers are the only
    /// ones decoded, and batches have [`Self::batch_schema`].
    pub fn set_projection(&mut self, projection: Projection) {
        self.state.set_projection(projection);
    }

    /// The schema of the batches this reader returns: the file's, projected.
    pub fn batch_schema(&self) -> &Arc<Schema> {
        &self.state.projected
    }

    /// The next record batch, applying any dictionary batches before it; `None` at the end.
    pub fn next_batch(&mut self) -> Result<Option<RecordBatch<'static>>, Error<R::Error>> {
        while !self.finished {
            let Some(raw) =
                read_message(&mut self.reader, &mut self.position, &self.state.options)?
            else {
                self.finished = true;
                break;
            };
            let located = |e: FormatError| e.rebase(raw.metadata_offset);
            let message = format::Message::parse(&raw.metadata).map_err(located)?;
            let body_at = raw.metadata_offset + raw.metadata.len() as u64;
            match message.header().map_err(located)? {
                MessageHeader::RecordBatch(_) => {
                    let batch = self.batches;
                    self.batches += 1;
                    return self
                        .state
                        .record_batch(message, &Body::Whole(raw.body))
                        .map(Some)
                        .map_err(|e| e.rebase(body_at).in_batch(batch).into());
                }
                MessageHeader::DictionaryBatch(_) => {
                    let batch = self.dictionary_batches;
                    self.dictionary_batches += 1;
                    self.state
                        .dictionary_batch(message, &raw.body)
                        .map_err(|e| e.rebase(body_at).in_batch(batch))?;
                }
                _ => {
                    return Err(super::unexpected("RecordBatch or DictionaryBatch", message)
                        .at(raw.offset)
                        .into());
                }
            }
        }
        Ok(None)
    }

    /// The underlying reader.
    pub fn inner(&self) -> &R {
        &self.reader
    }

    /// Unwraps the underlying reader.
    pub fn into_inner(self) -> R {
        self.reader
    }
}

impl<R: embedded_io::Read> Iterator for StreamReader<R> {
    type Item = Result<RecordBatch<'static>, Error<R::Error>>;

    fn next(&mut self) -> Option<Self::Item> {
        let item = self.next_batch().transpose();
        if matches!(item, Some(Err(_))) {
            self.finished = true;
        }
        item
    }
}

/// Reads one message; `None` at the end-of-stream marker or a clean end of input.
fn read_message<R: embedded_io::Read>(
    reader: &mut R,
    position: &mut u64,
    options: &ReaderOptions,
) -> Result<Option<RawMessage>, Error<R::Error>> {
    let offset = *position;
    let mut word = [0u8; 4];
    let got = fill(reader, position, &mut word)?;
    if got == 0 {
        return Ok(None); // end of input between messages
    }
    // At the start of the input, a prefix no stream can begin with is refused as the format its
    // bytes look like, if they look like one.
    let first_word = (offset == 0).then_some(word);
    let refuse = |e: FormatError| -> Error<R::Error> {
        let foreign = first_word.and_then(|w| Foreign::sniff(w.get(..got).unwrap_or_default()));
        match foreign {
            Some(looks_like) => FormatErrorKind::NotArrow { looks_like }.into(),
            None => e.into(),
        }
    };
    expect_full(&word, got, offset).map_err(refuse)?;
    if word == CONTINUATION {
        let got = fill(reader, position, &mut word)?;
        expect_full(&word, got, offset)?;
    }
    let len = i32::from_le_bytes(word);
    if len == 0 {
        return Ok(None);
    }
    let len = u64::try_from(len).map_err(|_| {
        refuse(
            FormatError::from(FormatErrorKind::InvalidValue {
                what: "message metadata length",
                value: i64::from(len),
            })
            .at(offset),
        )
    })?;
    if len > options.max_metadata_size {
        return Err(refuse(
            FormatError::from(FormatErrorKind::LimitExceeded {
                what: "message metadata",
                requested: len,
                limit: options.max_metadata_size,
            })
            .at(offset),
        ));
    }
    let metadata_offset = *position;
    let metadata = read_growing(reader, position, len, "message metadata")?;
    let body_len = format::Message::parse(&metadata)
        .map_err(|e| e.rebase(metadata_offset))?
        .body_length();
    let body_len = u64::try_from(body_len).map_err(|_| {
        FormatError::from(FormatErrorKind::InvalidValue {
            what: "Message.bodyLength",
            value: body_len,
        })
        .at(metadata_offset)
    })?;
    let body = read_growing(reader, position, body_len, "message body")?;
    Ok(Some(RawMessage {
        metadata,
        body: Bytes::from_vec(body),
        offset,
        metadata_offset,
    }))
}

/// Reads exactly `len` bytes, growing the buffer only as data arrives.
fn read_growing<R: embedded_io::Read>(
    reader: &mut R,
    position: &mut u64,
    len: u64,
    what: &'static str,
) -> Result<Vec<u8>, Error<R::Error>> {
    let start = *position;
    let mut out = Vec::new();
    while (out.len() as u64) < len {
        let step = (len - out.len() as u64).min(CHUNK as u64) as usize;
        let filled = out.len();
        out.resize(filled + step, 0);
        let got = fill(reader, position, out.get_mut(filled..).unwrap_or_default())?;
        if got < step {
            return Err(FormatError::from(FormatErrorKind::Truncated {
                what,
                needed: len,
                available: (filled + got) as u64,
            })
            .at(start)
            .into());
        }
    }
    Ok(out)
}

/// A length prefix cut short by the end of input is an error.
fn expect_full(buf: &[u8], got: usize, offset: u64) -> Result<(), FormatError> {
    if got < buf.len() {
        return Err(FormatError::from(FormatErrorKind::Truncated {
            what: "message length prefix",
            needed: buf.len() as u64,
            available: got as u64,
        })
        .at(offset));
    }
    Ok(())
}
