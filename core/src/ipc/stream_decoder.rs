//! [`StreamDecoder`]: the Arrow IPC stream reader as a state machine fed bytes in any chunks; it
//! does no I/O of its own.
//!
//! It uses `columns` and `file_decoder` beside it and, of the crate, the format's framing and
//! views, the arrays and their bytes, the schema and the errors.
//!
//! Bytes enter through [`StreamDecoder::push`], in chunks of any size, and the end of input
//! through [`StreamDecoder::finish`]; the schema and batches leave through
//! [`StreamDecoder::try_decode`], which says [`StreamDecodeResult::NeedsData`] with how many
//! more bytes it needs at least whenever it cannot go on. Every decision about a stream lives
//! here, and only here:
//!
//! - A stream is a schema message, then dictionary and record batch messages, then an optional
//!   end-of-stream marker. Each message is an encapsulation prefix (the 0xFFFFFFFF continuation
//!   marker and an i32 length, or the legacy bare i32 length of streams before Arrow 0.15), the
//!   metadata flatbuffer and the body.
//! - A metadata length is checked against [`ReaderOptions::max_metadata_size`] before anything
//!   waits for it; nothing is allocated from a length in the input: a message whose bytes lie
//!   in one chunk is a window of that chunk (no copy), and one that straddles chunks is joined
//!   only once every byte of it has been pushed. Memory stays bounded by one message.
//! - Errors say where: the byte offset in the stream, and the batch and field.
//!
//! The [`StreamReader`](super::StreamReader) (any [`embedded_io::Read`]) and, with the `async`
//! feature, the `AsyncStreamReader` are loops around it: ask, read, push.

use super::columns::FetchedBody;
use super::file_decoder::read_footer;
use super::{CONTINUATION, MAGIC, Projection, ReadState, ReaderOptions, field_budget, unexpected};
use crate::array::RecordBatch;
use crate::bytes::Bytes;
use crate::error::{FormatError, FormatErrorKind, FormatResult, Limit};
use crate::format::{self, Block, Foreign, LEADING_LEN, MessageHeader, TRAILER_LEN};
use crate::format::{MAX_PREFIX, Prefix, body_length, no_schema, truncated};
use crate::schema::Schema;
use alloc::collections::VecDeque;
use alloc::sync::Arc;
use alloc::vec::Vec;

/// Bytes a driver reads at most per step ([`read_buffer`]) while a message arrives.
const CHUNK: usize = 64 * 1024;

/// What [`StreamDecoder::try_decode`] has for the caller.
#[derive(Debug)]
#[non_exhaustive]
#[must_use]
pub enum StreamDecodeResult {
    /// Push at least this many more bytes ([`StreamDecoder::push`]), or say the input ended
    /// ([`StreamDecoder::finish`]), then call again. Pushing more is fine.
    NeedsData {
        /// Bytes the decoder lacks before it can go on.
        at_least: usize,
    },
    /// The schema message has been read ([`StreamDecoder::schema`]). Set a projection now,
    /// before the first batch, and call again.
    Schema,
    /// The next record batch, with every dictionary batch before it applied.
    Data(RecordBatch<'static>),
    /// The end-of-stream marker, or the end of input between messages, has been reached.
    Finished,
}

/// What the decoder expects next: where it is within a message.
#[derive(Debug)]
enum Expecting {
    /// A file read front to back: its leading magic and padding come first.
    Magic,
    /// Between messages: the next bytes are an encapsulation prefix.
    Prefix,
    /// The prefix has been read; the metadata of `len` bytes comes next.
    Metadata { offset: u64, len: usize },
    /// The metadata has been read (it ends where the body starts); the body of `len` bytes
    /// comes next.
    Body {
        offset: u64,
        metadata: Bytes<'static>,
        len: usize,
    },
    /// A file's stream has ended at `at`; the footer and the trailer follow, to the end of
    /// input.
    Trailer { at: u64 },
    /// The end-of-stream marker, or the end of input, has been read.
    End,
}

/// The blocks of a file's messages as read front to back, for its footer to be checked
/// against.
#[derive(Debug, Default)]
struct FileBlocks {
    dictionaries: Vec<Block>,
    record_batches: Vec<Block>,
    /// The messages so far were framed with the continuation marker.
    continued: bool,
}

/// One whole message: its flatbuffer, its body, and where it and its metadata begin.
struct RawMessage {
    metadata: Bytes<'static>,
    body: Bytes<'static>,
    offset: u64,
    metadata_offset: u64,
}

/// What the framing step has.
enum Framed {
    NeedsData(usize),
    End,
    Message(RawMessage),
}

/// The pushed bytes not yet used, in order.
#[derive(Debug, Default)]
struct Input {
    chunks: VecDeque<Bytes<'static>>,
    /// Bytes in `chunks`.
    len: usize,
    /// Offset in the stream of the first byte in `chunks`.
    position: u64,
    /// No more bytes will come.
    ended: bool,
}

impl Input {
    /// Copies the first bytes into `out`, as many as are here; returns how many.
    fn copy_front(&self, out: &mut [u8]) -> usize {
        let mut filled = 0;
        for chunk in &self.chunks {
            let Some(rest) = out.get_mut(filled..).filter(|r| !r.is_empty()) else {
                break;
            };
            let n = rest.len().min(chunk.len());
            if let (Some(to), Some(from)) = (rest.get_mut(..n), chunk.get(..n)) {
                to.copy_from_slice(from);
            }
            filled += n;
        }
        filled
    }

    /// The first `N` bytes, copied, if they are here.
    fn peek<const N: usize>(&self) -> Option<[u8; N]> {
        let mut out = [0u8; N];
        (self.copy_front(&mut out) == N).then_some(out)
    }

    /// The first `n` bytes, taken: a window of one chunk when it holds them all, otherwise the
    /// chunks joined. `None` (and nothing taken) if they are not all here.
    fn take(&mut self, n: usize) -> Option<Bytes<'static>> {
        if n > self.len {
            return None;
        }
        let out = match self.chunks.front() {
            Some(front) if front.len() >= n => front.slice(0..n)?,
            _ => {
                let mut joined = Vec::with_capacity(n);
                for chunk in &self.chunks {
                    let want = (n - joined.len()).min(chunk.len());
                    joined.extend_from_slice(chunk.get(..want)?);
                    if joined.len() == n {
                        break;
                    }
                }
                Bytes::from_vec(joined)
            }
        };
        self.skip(n);
        Some(out)
    }

    /// Drops the first `n` bytes (at most all of them).
    fn skip(&mut self, mut n: usize) {
        while n > 0 {
            let Some(front) = self.chunks.pop_front() else {
                break;
            };
            let used = n.min(front.len());
            if used < front.len() {
                let rest = front.slice(used..front.len()).unwrap_or_default();
                debug_assert_eq!(rest.len(), front.len() - used);
                self.chunks.push_front(rest);
            }
            self.len -= used;
            self.position += used as u64;
            n -= used;
        }
    }

    /// `Err` if the input ended, else how many more bytes make `n`.
    fn lacking(&self, n: usize, truncated: impl FnOnce() -> FormatError) -> FormatResult<Framed> {
        if self.ended {
            return Err(truncated());
        }
        Ok(Framed::NeedsData(n.saturating_sub(self.len).max(1)))
    }
}

/// Reads an Arrow IPC stream from bytes pushed in any chunks; see the module docs.
///
/// ```
/// # use quiver::ipc::{StreamDecodeResult, StreamDecoder};
/// # use quiver::{ipc::ReaderOptions, bytes::Bytes};
/// # fn rows(stream: &'static [u8]) -> Result<usize, quiver::error::FormatError> {
/// let mut decoder = StreamDecoder::new(ReaderOptions::default());
/// // Bytes as they arrive, in chunks of any size: here, 1000 at a time.
/// let mut chunks = stream.chunks(1000);
/// let mut rows = 0;
/// loop {
///     match decoder.try_decode()? {
///         StreamDecodeResult::NeedsData { .. } => match chunks.next() {
///             Some(chunk) => decoder.push(Bytes::borrowed(chunk)),
///             None => decoder.finish(),
///         },
///         StreamDecodeResult::Data(batch) => rows += batch.num_rows(),
///         StreamDecodeResult::Finished => return Ok(rows),
///         _ => {}
///     }
/// }
/// # }
/// ```
#[derive(Debug)]
pub struct StreamDecoder {
    options: ReaderOptions,
    input: Input,
    expecting: Expecting,
    /// Known once the schema message has been read.
    state: Option<ReadState>,
    /// A projection set before the schema was known.
    projection: Option<Projection>,
    batches: u64,
    dictionary_batches: u64,
    /// Reading a file front to back ([`Self::for_file`]).
    file: Option<FileBlocks>,
    /// The first error, returned again by every later call.
    failed: Option<FormatError>,
}

impl StreamDecoder {
    /// A decoder at the start of a stream.
    pub fn new(options: ReaderOptions) -> Self {
        StreamDecoder {
            options,
            input: Input::default(),
            expecting: Expecting::Prefix,
            state: None,
            projection: None,
            batches: 0,
            dictionary_batches: 0,
            file: None,
            failed: None,
        }
    }

    /// A decoder at the start of an Arrow IPC *file*, read front to back as the stream it
    /// holds: the leading magic, then the schema, dictionary and record batch messages, each
    /// batch returned as it arrives, then, after the end-of-stream marker, the footer. Offsets
    /// in errors are the file's.
    ///
    /// The footer comes last, so it is checked last: once the input has ended
    /// ([`Self::finish`]), the trailer is read as a file reader reads it, and the footer must
    /// hold the stream's schema and list exactly the dictionary and record batches the file
    /// holds, in the order it holds them. Otherwise [`Self::try_decode`] returns an error
    /// after the batches ([`FormatErrorKind::FooterMismatch`]); a caller that must not act on
    /// the batches of such a file waits for [`StreamDecodeResult::Finished`]. Of the bytes after
    /// the end-of-stream marker, only the last [`ReaderOptions::max_metadata_size`] and the
    /// footer length and magic after them are held; a longer footer is refused
    /// ([`Limit::FileFooter`](crate::error::Limit::FileFooter)) once the input has ended. A
    /// file whose stream has no end-of-stream marker before its footer is read as well when its
    /// messages carry the continuation marker (a word without it is then the footer's start);
    /// zeros between the magic and the schema message are padding.
    pub fn for_file(options: ReaderOptions) -> Self {
        StreamDecoder {
            expecting: Expecting::Magic,
            file: Some(FileBlocks::default()),
            ..Self::new(options)
        }
    }

    /// Hands the decoder the next bytes of the stream. They are kept without copying; a
    /// message that lies within one chunk is decoded from a window of it. Bytes pushed after
    /// [`Self::finish`] or after the end-of-stream marker are ignored (a file's footer, after
    /// the marker, is read).
    pub fn push(&mut self, chunk: Bytes<'static>) {
        if chunk.is_empty() || self.input.ended || matches!(self.expecting, Expecting::End) {
            return;
        }
        self.input.len += chunk.len();
        self.input.chunks.push_back(chunk);
    }

    /// Says the input has ended: a stream cut inside a message is then an error, and one cut
    /// between messages is finished.
    pub fn finish(&mut self) {
        self.input.ended = true;
    }

    /// Decodes what the pushed bytes allow: the schema, the next batch, the end, or how many
    /// more bytes it needs. After an error, every call returns that error.
    pub fn try_decode(&mut self) -> FormatResult<StreamDecodeResult> {
        if let Some(e) = &self.failed {
            return Err(e.clone());
        }
        self.decode().inspect_err(|e| self.failed = Some(e.clone()))
    }

    /// Reads only the fields `projection` selects from the next batch on: their buffers are
    /// the only ones decoded, and batches have [`Self::batch_schema`].
    pub fn set_projection(&mut self, projection: Projection) {
        match &mut self.state {
            Some(state) => state.set_projection(projection),
            None => self.projection = Some(projection),
        }
    }

    /// The stream's schema, once [`StreamDecodeResult::Schema`] has been returned.
    pub fn schema(&self) -> Option<&Arc<Schema>> {
        self.state.as_ref().map(|s| &s.schema)
    }

    /// The schema of the batches the decoder returns: the stream's, projected.
    pub fn batch_schema(&self) -> Option<&Arc<Schema>> {
        self.state.as_ref().map(|s| &s.projected)
    }

    /// Offset in the stream of the first byte pushed and not yet used.
    pub fn position(&self) -> u64 {
        self.input.position
    }

    /// Bytes pushed and not yet used.
    pub fn buffered(&self) -> usize {
        self.input.len
    }

    fn decode(&mut self) -> FormatResult<StreamDecodeResult> {
        loop {
            let raw = match self.frame()? {
                Framed::NeedsData(at_least) => {
                    return Ok(StreamDecodeResult::NeedsData { at_least });
                }
                Framed::Message(raw) => raw,
                Framed::End if self.state.is_some() => return Ok(StreamDecodeResult::Finished),
                Framed::End => return Err(no_schema(self.input.position).into()),
            };
            let located = |e: FormatError| e.rebase(raw.metadata_offset);
            let message = format::Message::parse(&raw.metadata).map_err(located)?;
            let header = message.header().map_err(located)?;
            let Some(state) = &mut self.state else {
                let MessageHeader::Schema(fb) = header else {
                    return Err(unexpected("Schema", message).at(raw.offset));
                };
                let schema = Schema::from_fb(fb, field_budget(raw.metadata.len()));
                let mut state = ReadState::new(schema.map_err(located)?, self.options.clone());
                if let Some(projection) = self.projection.take() {
                    state.set_projection(projection);
                }
                self.state = Some(state);
                return Ok(StreamDecodeResult::Schema);
            };
            let body_at = raw.metadata_offset + raw.metadata.len() as u64;
            let block = Block {
                offset: i64::try_from(raw.offset).unwrap_or(i64::MAX),
                meta_data_length: i32::try_from(body_at - raw.offset).unwrap_or(i32::MAX),
                body_length: i64::try_from(raw.body.len()).unwrap_or(i64::MAX),
            };
            let file = self.file.as_mut();
            let (count, blocks) = match header {
                MessageHeader::RecordBatch(_) => {
                    (&mut self.batches, file.map(|f| &mut f.record_batches))
                }
                MessageHeader::DictionaryBatch(_) => (
                    &mut self.dictionary_batches,
                    file.map(|f| &mut f.dictionaries),
                ),
                _ => {
                    let expected = "RecordBatch or DictionaryBatch";
                    return Err(unexpected(expected, message).at(raw.offset));
                }
            };
            let batch = *count;
            *count += 1;
            let is_file = blocks.map(|blocks| blocks.push(block)).is_some();
            let located = |e: FormatError| e.rebase(body_at).in_batch(batch);
            if let MessageHeader::RecordBatch(_) = header {
                let batch = state.record_batch(message, &FetchedBody::Whole(raw.body));
                return batch.map(StreamDecodeResult::Data).map_err(located);
            }
            state
                .dictionary_batch(message, &raw.body, is_file)
                .map_err(located)?;
        }
    }

    /// Takes the next whole message from the input, if it is all here.
    fn frame(&mut self) -> FormatResult<Framed> {
        loop {
            match &self.expecting {
                Expecting::End => return Ok(Framed::End),
                Expecting::Magic => {
                    let Some(leading) = self.input.peek::<{ LEADING_LEN as usize }>() else {
                        if !self.input.ended {
                            return Ok(Framed::NeedsData(LEADING_LEN as usize - self.input.len));
                        }
                        let mut leading = [0u8; LEADING_LEN as usize];
                        let got = self.input.copy_front(&mut leading);
                        return Err(not_a_file(leading.get(..got).unwrap_or_default()));
                    };
                    if !leading.starts_with(MAGIC) {
                        return Err(not_a_file(&leading));
                    }
                    self.input.skip(leading.len());
                    self.expecting = Expecting::Prefix;
                }
                &Expecting::Trailer { at } => {
                    // Only the last bytes can be a footer the limit allows, its length and the
                    // magic: those before them are let go as they come, so that what is held
                    // stays within the limit however long the trailer (and what is found does
                    // not depend on how the bytes came in).
                    let keep = self
                        .options
                        .max_metadata_size
                        .saturating_add(TRAILER_LEN as u64)
                        .max(TRAILER_LEN as u64 + LEADING_LEN);
                    let keep = usize::try_from(keep).unwrap_or(usize::MAX);
                    if self.input.len > keep {
                        self.input.skip(self.input.len - keep);
                    }
                    if !self.input.ended {
                        return Ok(Framed::NeedsData(CHUNK));
                    }
                    let start = self.input.position;
                    let trailer = self.input.take(self.input.len).unwrap_or_default();
                    self.check_trailer(&trailer, at, start)?;
                    self.expecting = Expecting::End;
                }
                Expecting::Prefix => {
                    if let Some(framed) = self.prefix()? {
                        return Ok(framed);
                    }
                }
                &Expecting::Metadata { offset, len } => {
                    let metadata_offset = self.input.position;
                    let Some(metadata) = self.input.take(len) else {
                        return self.input.lacking(len, || {
                            truncated("message metadata", len, self.input.len, metadata_offset)
                        });
                    };
                    let len = body_length(&metadata, metadata_offset)?;
                    self.expecting = Expecting::Body {
                        offset,
                        metadata,
                        len,
                    };
                }
                &Expecting::Body { len, .. } => {
                    let body_at = self.input.position;
                    let Some(body) = self.input.take(len) else {
                        return self.input.lacking(len, || {
                            truncated("message body", len, self.input.len, body_at)
                        });
                    };
                    let Expecting::Body {
                        offset, metadata, ..
                    } = core::mem::replace(&mut self.expecting, Expecting::Prefix)
                    else {
                        debug_assert!(false, "the decoder was expecting a body");
                        return Ok(Framed::End);
                    };
                    return Ok(Framed::Message(RawMessage {
                        metadata_offset: body_at - metadata.len() as u64,
                        metadata,
                        body,
                        offset,
                    }));
                }
            }
        }
    }

    /// Reads an encapsulation prefix: `None` when it was a message's (the decoder now expects
    /// `Metadata`), otherwise what the caller gets.
    fn prefix(&mut self) -> FormatResult<Option<Framed>> {
        let offset = self.input.position;
        // At the start of the input, a prefix no stream can begin with is refused as the
        // format its bytes look like, if they look like one.
        let sniffed = (offset == 0)
            .then(|| {
                let mut head = [0u8; 4];
                let got = self.input.copy_front(&mut head);
                Foreign::sniff(head.get(..got).unwrap_or_default())
            })
            .flatten();
        let refuse = |e: FormatError| -> FormatError {
            match sniffed {
                Some(looks_like) => FormatErrorKind::NotArrow { looks_like }.into(),
                None => e,
            }
        };
        if let (Some(file), Some(word)) = (&mut self.file, self.input.peek::<4>()) {
            if file.continued && word != CONTINUATION {
                // A writer that frames its messages with the marker frames them all: a word
                // without it after them is the footer of a file with no end-of-stream marker.
                self.expecting = Expecting::Trailer { at: offset };
                return Ok(None);
            }
            file.continued = word == CONTINUATION;
        }
        let mut bytes = [0u8; MAX_PREFIX];
        let got = self.input.copy_front(&mut bytes);
        let bytes = bytes.get(..got).unwrap_or_default();
        let len = match Prefix::parse(bytes, self.input.ended, offset).map_err(refuse)? {
            Prefix::Need(n) => return Ok(Some(Framed::NeedsData(n))),
            Prefix::EndOfInput if self.file.is_some() => {
                return Err(FormatErrorKind::TruncatedFile { len: offset }.into());
            }
            Prefix::EndOfInput => {
                self.expecting = Expecting::End; // end of input between messages
                return Ok(Some(Framed::End));
            }
            Prefix::EndOfStream { len } => {
                self.input.skip(len);
                let at = self.input.position;
                match (&self.file, &self.state) {
                    (None, _) => self.expecting = Expecting::End,
                    (Some(_), Some(_)) => self.expecting = Expecting::Trailer { at },
                    // Zeros between a file's magic and its schema message pad the magic
                    // further (to 64 bytes, as arrow-rs writes it), which file readers never
                    // read.
                    (Some(_), None) => {}
                }
                return Ok(None);
            }
            Prefix::Message { len, metadata_len } => {
                self.input.skip(len);
                metadata_len
            }
        };
        let limit = self.options.max_metadata_size;
        if len as u64 > limit {
            return Err(refuse(
                FormatError::from(FormatErrorKind::LimitExceeded {
                    what: Limit::MessageMetadata,
                    requested: len as u64,
                    limit,
                })
                .at(offset),
            ));
        }
        self.expecting = Expecting::Metadata { offset, len };
        Ok(None)
    }

    /// Checks a file's end read front to back: the bytes after the end-of-stream marker (at
    /// `at`) are the footer, its length and the magic, as a file reader reads them, and the
    /// footer is within the metadata limit; it holds the stream's schema and lists the blocks the
    /// file holds, in order. `trailer` is the last of those bytes, from `start` to the end.
    fn check_trailer(&self, trailer: &[u8], at: u64, start: u64) -> FormatResult<()> {
        let file_len = start + trailer.len() as u64;
        let footer = format::footer_range(trailer, start, file_len).map_err(|e| match e.kind {
            // No footer length and magic after the stream: the file was cut.
            FormatErrorKind::BadMagic | FormatErrorKind::Truncated { .. } => {
                FormatErrorKind::TruncatedFile { len: file_len }.into()
            }
            _ => e,
        })?;
        let len = footer.end - footer.start;
        if footer.start < at {
            // The footer length reaches back into the stream.
            return Err(FormatError::from(FormatErrorKind::InvalidValue {
                what: "footer length",
                value: i64::try_from(len).unwrap_or(i64::MAX),
            })
            .at(footer.end));
        }
        let limit = self.options.max_metadata_size;
        let within = footer
            .start
            .checked_sub(start)
            .and_then(|s| usize::try_from(s).ok())
            .filter(|_| len <= limit);
        let Some(bytes) = within.and_then(|s| trailer.get(s..trailer.len() - TRAILER_LEN)) else {
            return Err(FormatError::from(FormatErrorKind::LimitExceeded {
                what: Limit::FileFooter,
                requested: len,
                limit,
            })
            .at(footer.start));
        };
        let index = read_footer(bytes, footer.start)?;
        let mismatch = |what| FormatError::from(FormatErrorKind::FooterMismatch { what });
        let held = self.file.as_ref().zip(self.state.as_ref());
        let Some((file, state)) = held else {
            return Err(mismatch("schema").at(footer.start));
        };
        if *state.schema != index.schema {
            return Err(mismatch("schema").at(footer.start));
        }
        for (what, listed, held) in [
            ("dictionary batch", &index.dictionaries, &file.dictionaries),
            ("record batch", &index.record_batches, &file.record_batches),
        ] {
            let same = listed.iter().zip(held.iter()).take_while(|(l, h)| l == h);
            let equal = same.count();
            if equal < listed.len().max(held.len()) {
                return Err(mismatch(what).at(footer.start).in_batch(equal as u64));
            }
        }
        Ok(())
    }

    /// A buffer for a driver's next read when the decoder needs `at_least` bytes: no more than
    /// 64 KiB, so a length in the stream never makes a driver allocate ahead of its input.
    pub(super) fn read_buffer(at_least: usize) -> Vec<u8> {
        alloc::vec![0u8; at_least.clamp(1, CHUNK)]
    }

    /// Pushes the `got` bytes a driver read into `buffer` (from [`Self::read_buffer`]); a short
    /// read means the input ended.
    pub(super) fn push_read(&mut self, mut buffer: Vec<u8>, got: usize) {
        let short = got < buffer.len();
        buffer.truncate(got);
        self.push(Bytes::from_vec(buffer));
        if short {
            self.finish();
        }
    }
}

/// The error for a file read front to back that does not start with the magic: its
/// `leading` bytes, all of it when fewer than the magic and padding.
fn not_a_file(leading: &[u8]) -> FormatError {
    if leading.is_empty() {
        FormatErrorKind::EmptyInput.into()
    } else if MAGIC.starts_with(leading) || leading.starts_with(MAGIC) {
        FormatErrorKind::TruncatedFile {
            len: leading.len() as u64,
        }
        .into()
    } else if let Some(looks_like) = Foreign::sniff(leading) {
        FormatErrorKind::NotArrow { looks_like }.into()
    } else {
        FormatError::from(FormatErrorKind::BadMagic).at(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn needs(decoder: &mut StreamDecoder) -> usize {
        match decoder.try_decode() {
            Ok(StreamDecodeResult::NeedsData { at_least }) => at_least,
            other => panic!("expected NeedsData, got {other:?}"),
        }
    }

    #[test]
    fn asks_for_the_prefix_then_the_metadata_then_fails_where_it_was_cut() {
        let mut decoder = StreamDecoder::new(ReaderOptions::default());
        assert_eq!(needs(&mut decoder), 4);
        decoder.push(Bytes::borrowed(&[0xFF, 0xFF]));
        assert_eq!(needs(&mut decoder), 2);
        decoder.push(Bytes::borrowed(&[0xFF, 0xFF]));
        assert_eq!(
            needs(&mut decoder),
            4,
            "the length after the continuation marker"
        );
        decoder.push(Bytes::borrowed(&[100, 0, 0, 0]));
        assert_eq!(needs(&mut decoder), 100);
        decoder.push(Bytes::borrowed(&[0; 10]));
        assert_eq!(needs(&mut decoder), 90);
        assert_eq!(decoder.position(), 8);
        assert_eq!(decoder.buffered(), 10);
        decoder.finish();
        let e = decoder.try_decode().unwrap_err();
        assert_eq!(e.offset(), Some(8));
        assert!(matches!(
            e.kind,
            FormatErrorKind::Truncated {
                what: "message metadata",
                needed: 100,
                available: 10
            }
        ));
        assert_eq!(decoder.try_decode().unwrap_err(), e, "errors stay");
    }

    #[test]
    fn input_hands_out_windows_and_joins_only_across_chunks() {
        let mut input = Input::default();
        for chunk in [&b"abcd"[..], b"ef", b"ghij"] {
            input.len += chunk.len();
            input.chunks.push_back(Bytes::borrowed(chunk));
        }
        assert_eq!(input.peek::<5>(), Some(*b"abcde"));
        let window = input.take(3).unwrap();
        assert_eq!(&*window, b"abc");
        assert!(window.is_borrowed(), "one chunk: no copy");
        let joined = input.take(4).unwrap();
        assert_eq!(&*joined, b"defg");
        assert!(!joined.is_borrowed());
        assert_eq!(input.position, 7);
        assert_eq!(input.take(4), None, "only 3 left");
        assert_eq!(input.peek::<4>(), None);
        assert_eq!(input.take(3).as_deref(), Some(&b"hij"[..]));
        assert_eq!((input.len, input.chunks.len()), (0, 0));
    }
}
