//! [`FileReader`]: random access to the record batches of an Arrow IPC file.
//!
//! Opening costs one read of the file's tail (`footer_read_size` bytes), which yields the
//! trailing magic, the footer length, the footer and the schema; a footer larger than that read
//! costs exactly one more read, of the missing part only. Each block (a dictionary or a record
//! batch) is then one read of its metadata and body together. Dictionaries are read the first
//! time a batch that needs them is decoded.

use super::decode::Body;
use super::{Projection, ReadState, ReaderOptions, field_budget, message_prefix};
use crate::array::RecordBatch;
use crate::bytes::Bytes;
use crate::error::{Error, FormatError, FormatErrorKind, FormatResult};
use crate::format::{self, Block, LEADING_LEN, TRAILER_LEN};
use crate::schema::{Metadata, Schema};
use crate::source::RandomAccess;
use alloc::string::ToString;
use alloc::sync::Arc;
use alloc::vec;
use alloc::vec::Vec;

/// Reads an Arrow IPC file from a [`RandomAccess`] source.
#[derive(Debug)]
pub struct FileReader<R> {
    pub(super) source: R,
    pub(super) state: super::ReadState,
    metadata: Metadata,
    pub(super) dictionary_blocks: Vec<Block>,
    record_batch_blocks: Vec<Block>,
    pub(super) dictionaries_read: bool,
}

impl<R: RandomAccess> FileReader<R> {
    /// Opens the file: one read of the tail, plus one more if the footer is longer than that.
    pub fn open(source: R, options: ReaderOptions) -> Result<Self, Error<R::Error>> {
        let file_len = source.len();
        if file_len == 0 {
            return Err(FormatError::from(FormatErrorKind::EmptyInput).into());
        }
        let least = TRAILER_LEN + LEADING_LEN as usize;
        let tail_len = (options.footer_read_size.max(least) as u64).min(file_len);
        let tail_start = file_len - tail_len;
        let mut tail = vec![0u8; tail_len as usize];
        read(&source, tail_start, &mut tail)?;

        let trailer_at = tail.len().saturating_sub(TRAILER_LEN);
        let footer = match format::footer_range(&tail, tail_start, file_len) {
            Ok(footer) => footer,
            // Without the trailing magic, the file's first bytes tell what it is (one more read,
            // on this failure only).
            Err(e) if e.kind == FormatErrorKind::BadMagic && tail_start > 0 => {
                let mut leading = [0u8; 16];
                let leading = leading
                    .get_mut(..file_len.min(16) as usize)
                    .unwrap_or_default();
                read(&source, 0, leading)?;
                return Err(format::missing_trailer(leading, file_len).into());
            }
            Err(e) => return Err(e.into()),
        };
        let (footer_start, footer_len) = (footer.start, footer.end - footer.start);

        // The footer, from the tail when it fits, else with exactly the missing prefix read.
        let footer_bytes = if footer_start >= tail_start {
            let from = (footer_start - tail_start) as usize;
            tail.truncate(trailer_at);
            tail.drain(..from);
            tail
        } else {
            let missing = (tail_start - footer_start) as usize;
            let mut footer = vec![0u8; footer_len as usize];
            let (head, rest) = footer.split_at_mut(missing);
            read(&source, footer_start, head)?;
            rest.copy_from_slice(tail.get(..trailer_at).unwrap_or_default());
            footer
        };
        let located = |e: FormatError| e.rebase(footer_start);
        let footer = format::Footer::parse(&footer_bytes).map_err(located)?;
        let schema = Schema::from_fb(
            footer.schema().map_err(located)?,
            field_budget(footer_bytes.len()),
        )
        .map_err(located)?;
        let metadata = footer
            .custom_metadata()
            .and_then(|kvs| {
                kvs.iter()
                    .map(|kv| kv.map(|kv| (kv.key.to_string(), kv.value.to_string())))
                    .collect::<FormatResult<Metadata>>()
            })
            .map_err(located)?;
        let blocks = |list: FormatResult<format::Blocks<'_>>| -> FormatResult<Vec<Block>> {
            let list = list?;
            let mut out = Vec::with_capacity(list.len());
            for (i, block) in list.iter().enumerate() {
                block
                    .check(footer_start)
                    .map_err(|e| e.in_batch(i as u64))?;
                out.push(block);
            }
            Ok(out)
        };
        let dictionary_blocks = blocks(footer.dictionaries()).map_err(located)?;
        let record_batch_blocks = blocks(footer.record_batches()).map_err(located)?;
        Ok(FileReader {
            source,
            state: ReadState::new(schema, options),
            metadata,
            dictionary_blocks,
            record_batch_blocks,
            dictionaries_read: false,
        })
    }

    /// The file's schema.
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

    /// The footer's custom metadata.
    pub fn metadata(&self) -> &Metadata {
        &self.metadata
    }

    /// Number of record batches in the file.
    pub fn num_batches(&self) -> usize {
        self.record_batch_blocks.len()
    }

    /// The record batch blocks listed in the footer.
    pub fn record_batch_blocks(&self) -> &[Block] {
        &self.record_batch_blocks
    }

    /// The dictionary blocks listed in the footer.
    pub fn dictionary_blocks(&self) -> &[Block] {
        &self.dictionary_blocks
    }

    /// Reads and decodes record batch `index`: one read of its metadata and body (plus one read
    /// per dictionary block, the first time a batch needs dictionaries).
    pub fn batch(&mut self, index: usize) -> Result<RecordBatch<'static>, Error<R::Error>> {
        let block = self.record_batch_block(index)?;
        if !self.dictionaries_read && self.state.needs_dictionaries {
            self.read_dictionaries()?;
        }
        let (message, body) = self
            .read_block(block)
            .map_err(|e| e.in_batch(index as u64))?;
        Ok(self.decode_batch(index, block, &message, &Body::Whole(body))?)
    }

    /// The footer's block for record batch `index`.
    pub(super) fn record_batch_block(&self, index: usize) -> FormatResult<Block> {
        self.record_batch_blocks.get(index).copied().ok_or_else(|| {
            FormatErrorKind::InvalidValue {
                what: "record batch index",
                value: index as i64,
            }
            .into()
        })
    }

    /// Iterates over all record batches in order.
    pub fn batches(
        &mut self,
    ) -> impl Iterator<Item = Result<RecordBatch<'static>, Error<R::Error>>> + '_ {
        (0..self.num_batches()).map(move |i| self.batch(i))
    }

    /// The source.
    pub fn inner(&self) -> &R {
        &self.source
    }

    /// Unwraps the source.
    pub fn into_inner(self) -> R {
        self.source
    }

    fn read_dictionaries(&mut self) -> Result<(), Error<R::Error>> {
        for (i, block) in self.dictionary_blocks.clone().into_iter().enumerate() {
            let (message, body) = self.read_block(block).map_err(|e| e.in_batch(i as u64))?;
            self.apply_dictionary(i, block, &message, &body)?;
        }
        self.dictionaries_read = true;
        Ok(())
    }

    /// One read of a block: its metadata flatbuffer and its body.
    fn read_block(&self, block: Block) -> Result<(MessageBytes, Bytes<'static>), Error<R::Error>> {
        let start = block.offset as u64;
        let extent = start..start + block.meta_data_length as u64 + block.body_length as u64;
        let bytes = super::fetch(&self.source, core::slice::from_ref(&extent))?
            .pop()
            .unwrap_or_default();
        let message = MessageBytes::of_block(block, &bytes)?;
        let meta = block.meta_data_length as usize;
        Ok((message, bytes.slice(meta..bytes.len()).unwrap_or_default()))
    }

    /// Decodes dictionary block `index` from its message and body into the dictionaries.
    pub(super) fn apply_dictionary(
        &mut self,
        index: usize,
        block: Block,
        message: &MessageBytes,
        body: &Bytes<'static>,
    ) -> FormatResult<()> {
        let batch = index as u64;
        let parsed = message.parse(block).map_err(|e| e.in_batch(batch))?;
        self.state.dictionary_batch(parsed, body).map_err(|e| {
            e.rebase(block.offset as u64 + block.meta_data_length as u64)
                .in_batch(batch)
        })
    }

    /// Decodes record batch `index` from its message and body.
    pub(super) fn decode_batch(
        &mut self,
        index: usize,
        block: Block,
        message: &MessageBytes,
        body: &Body<'static>,
    ) -> FormatResult<RecordBatch<'static>> {
        let batch = index as u64;
        let parsed = message.parse(block).map_err(|e| e.in_batch(batch))?;
        self.state.record_batch(parsed, body).map_err(|e| {
            e.rebase(block.offset as u64 + block.meta_data_length as u64)
                .in_batch(batch)
        })
    }
}

/// A message's flatbuffer and where it starts in the file.
pub(super) struct MessageBytes {
    bytes: Bytes<'static>,
    offset: u64,
}

impl MessageBytes {
    /// The flatbuffer inside a block's first `metaDataLength` bytes (`bytes` may hold more).
    pub(super) fn of_block(block: Block, bytes: &Bytes<'static>) -> FormatResult<Self> {
        let at = block.offset as u64;
        let (prefix, fb_len) = message_prefix(bytes).map_err(|e| e.at(at))?;
        if prefix + fb_len > block.meta_data_length as usize {
            return Err(FormatError::from(FormatErrorKind::InvalidValue {
                what: "message metadata length (past Block.metaDataLength)",
                value: fb_len as i64,
            })
            .at(at));
        }
        Ok(MessageBytes {
            bytes: bytes.slice(prefix..prefix + fb_len).unwrap_or_default(),
            offset: at + prefix as u64,
        })
    }

    /// The message view, checked to declare the body length its block does.
    pub(super) fn parse(&self, block: Block) -> FormatResult<format::Message<'_>> {
        let message = format::Message::parse(&self.bytes).map_err(|e| e.rebase(self.offset))?;
        if message.body_length() != block.body_length {
            return Err(FormatError::from(FormatErrorKind::InvalidValue {
                what: "Message.bodyLength (differs from Block.bodyLength)",
                value: message.body_length(),
            })
            .at(self.offset));
        }
        Ok(message)
    }
}

/// One positioned read, with the source's error kept unchanged.
fn read<R: RandomAccess>(source: &R, offset: u64, buf: &mut [u8]) -> Result<(), Error<R::Error>> {
    source.read_at(offset, buf).map_err(|error| Error::Source {
        error,
        offset,
        len: buf.len() as u64,
    })
}
