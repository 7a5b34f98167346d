//! [`FileReader`]: an Arrow IPC file read into one caller-provided scratch buffer.
//!
//! It uses the scratch helpers of `no_alloc` and, of the crate, the sources, the format and the
//! errors.
//!
//! Opening reads the file's tail into the scratch (at most [`FOOTER_READ`] bytes; a longer
//! footer costs one more read, of exactly the missing part) and keeps the footer at the
//! scratch's start. Each dictionary block is then read once, whole, after the footer, and stays
//! there. Record batch blocks take the rest of the scratch, one at a time: one read of a block's
//! metadata and body, decoded in place into a [`Batch`]. A footer, dictionary or block that does
//! not fit is a [`BufferTooSmall`](crate::error::FormatErrorKind::BufferTooSmall) error saying how many
//! bytes it needs.

use super::Batch;
use super::too_small;
use super::{InScratch, Stored, block_message, keep, little_endian, stored_dictionary};
use crate::error::{Error, Feature, FormatError, FormatErrorKind, FormatResult};
use crate::format::{self, Block, LEADING_LEN, TRAILER_LEN, unexpected};
use crate::source::RandomAccess;
use core::ops::Range;

/// Bytes of the file's tail read when opening: the footer of a file with a few hundred
/// batches fits (a bigger one costs one more read).
pub const FOOTER_READ: usize = 16 * 1024;

/// Dictionaries a [`FileReader`] holds unless told otherwise.
pub const DEFAULT_DICTIONARIES: usize = 8;

/// Reads an Arrow IPC file from a [`RandomAccess`] source into the caller's `scratch`, with no
/// allocation. `D` dictionaries at most (see [`DEFAULT_DICTIONARIES`]).
///
/// The scratch must hold the footer, every dictionary block and the largest record batch block
/// together; [`FileReader::scratch_needed`] says how much that is once the footer is read.
#[derive(Debug)]
pub struct FileReader<'s, S, const D: usize = DEFAULT_DICTIONARIES> {
    source: S,
    scratch: &'s mut [u8],
    /// The footer flatbuffer, at the start of the scratch.
    footer_len: usize,
    /// Where the dictionaries end and batches are read to.
    blocks_at: usize,
    dictionaries: heapless::Vec<Stored, D>,
    footer_start: u64,
}

impl<'s, S: RandomAccess, const D: usize> FileReader<'s, S, D> {
    /// Opens the file: one read of the tail (a second for a footer longer than [`FOOTER_READ`]),
    /// then one read per dictionary block.
    pub fn open(source: S, scratch: &'s mut [u8]) -> Result<Self, Error<S::Error>> {
        let file_len = source.len();
        if file_len == 0 {
            return Err(FormatError::from(FormatErrorKind::EmptyInput).into());
        }
        let tail_len = (FOOTER_READ.min(scratch.len()) as u64).min(file_len) as usize;
        let tail_start = file_len - tail_len as u64;
        if (tail_len as u64) < TRAILER_LEN as u64 + LEADING_LEN {
            return Err(if file_len < TRAILER_LEN as u64 + LEADING_LEN {
                FormatErrorKind::Truncated {
                    what: "IPC file",
                    needed: TRAILER_LEN as u64 + LEADING_LEN,
                    available: file_len,
                }
                .into()
            } else {
                too_small(
                    "the file's trailer",
                    TRAILER_LEN + LEADING_LEN as usize,
                    scratch.len(),
                )
                .into()
            });
        }
        let tail = scratch.get_mut(..tail_len).unwrap_or_default();
        read(&source, tail_start, tail)?;
        let footer = format::footer_range(tail, tail_start, file_len)?;
        let footer_len = (footer.end - footer.start) as usize;
        if footer_len > scratch.len() {
            return Err(too_small("the footer", footer_len, scratch.len()).into());
        }
        // Move the footer's part of the tail to where it belongs, then read what is missing.
        let in_tail = footer.start.max(tail_start);
        let from = (in_tail - tail_start) as usize;
        let to = (in_tail - footer.start) as usize;
        scratch.copy_within(from..tail_len - TRAILER_LEN, to);
        if footer.start < tail_start {
            let missing = scratch.get_mut(..to).unwrap_or_default();
            read(&source, footer.start, missing)?;
        }
        let mut reader = FileReader {
            source,
            scratch,
            footer_len,
            blocks_at: footer_len,
            dictionaries: heapless::Vec::new(),
            footer_start: footer.start,
        };
        let located = |e: FormatError| e.rebase(footer.start);
        let footer = reader.footer().map_err(located)?;
        little_endian(footer.schema(), reader.footer_start)?;
        let count = footer.dictionaries().map_err(located)?.len();
        for i in 0..count {
            let block = reader
                .footer()
                .and_then(|f| f.dictionaries())
                .map_err(located)?
                .get(i);
            if let Some(block) = block {
                reader
                    .read_dictionary(block)
                    .map_err(|e| e.in_batch(i as u64))?;
            }
        }
        Ok(reader)
    }

    /// The footer view (schema, blocks).
    pub fn footer(&self) -> FormatResult<format::Footer<'_>> {
        format::Footer::parse(self.scratch.get(..self.footer_len).unwrap_or_default())
    }

    /// The schema view.
    pub fn schema(&self) -> FormatResult<format::Schema<'_>> {
        self.footer()?.schema()
    }

    /// Number of record batches.
    pub fn num_batches(&self) -> usize {
        self.footer()
            .and_then(|f| f.record_batches())
            .map_or(0, |b| b.len())
    }

    /// Scratch bytes this file needs: footer, dictionaries and its largest record batch block.
    pub fn scratch_needed(&self) -> usize {
        let largest = self
            .footer()
            .and_then(|f| f.record_batches())
            .map_or(0, |blocks| {
                blocks
                    .iter()
                    .map(|b| (b.meta_data_length as usize).saturating_add(b.body_length as usize))
                    .max()
                    .unwrap_or(0)
            });
        self.blocks_at.saturating_add(largest)
    }

    /// Reads record batch `index` (one read of its block) and decodes it in place; it borrows
    /// the reader until dropped.
    pub fn batch<const N: usize>(&mut self, index: usize) -> Result<Batch<'_, N>, Error<S::Error>> {
        let mut batch = Batch::empty();
        match self.read_batch(index, &mut batch) {
            Ok(()) => Ok(batch),
            Err(e) => Err(e.in_batch(index as u64)),
        }
    }

    /// Decodes record batch `index` into `batch`.
    fn read_batch<'r, const N: usize>(
        &'r mut self,
        index: usize,
        batch: &mut Batch<'r, N>,
    ) -> Result<(), Error<S::Error>> {
        let block = self
            .footer()
            .and_then(|f| f.record_batches())
            .map_err(|e| e.rebase(self.footer_start))?
            .get(index)
            .ok_or(FormatErrorKind::InvalidValue {
                what: "record batch index",
                value: index as i64,
            })?;
        let range = self.read_block(block, self.blocks_at, "a record batch block")?;
        let scratch: &[u8] = self.scratch;
        let (footer, bytes) = (
            format::Footer::parse(scratch.get(..self.footer_len).unwrap_or_default())?,
            scratch.get(range).unwrap_or_default(),
        );
        let (message, _, body) = block_message(bytes, block)?;
        let header = message.header()?;
        let format::MessageHeader::RecordBatch(header) = header else {
            return Err(unexpected("RecordBatch", message)
                .at(block.offset as u64)
                .into());
        };
        let dictionaries = InScratch {
            scratch,
            stored: &self.dictionaries,
        };
        let fields = footer.schema()?.fields()?;
        batch
            .decode(fields, header, body, message.version()?, &dictionaries)
            .map_err(|e| {
                e.rebase(block.offset as u64 + block.meta_data_length as u64)
                    .into()
            })
    }

    /// Reads the next dictionary block after the dictionaries before it, and keeps it.
    fn read_dictionary(&mut self, block: Block) -> Result<(), Error<S::Error>> {
        let range = self.read_block(block, self.blocks_at, "a dictionary block")?;
        let bytes = self.scratch.get(range.clone()).unwrap_or_default();
        let stored = stored_dictionary(bytes, block, range.start)?;
        if self.dictionaries.iter().any(|d| d.id == stored.id) {
            return Err(FormatError::from(FormatErrorKind::Unsupported {
                what: Feature::ReplacedDictionaryInFile,
            })
            .into());
        }
        // Every block before this one is kept: with no room left, this is block `D`.
        keep(&mut self.dictionaries, stored)?;
        self.blocks_at = range.end;
        Ok(())
    }

    /// One read of `block` (metadata and body) into the scratch at `at`; returns where it lies.
    fn read_block(
        &mut self,
        block: Block,
        at: usize,
        what: &'static str,
    ) -> Result<Range<usize>, Error<S::Error>> {
        block
            .check(self.footer_start)
            .map_err(|e| e.at(self.footer_start))?;
        let len = block.meta_data_length as usize + block.body_length as usize;
        let available = self.scratch.len();
        let dst = at
            .checked_add(len)
            .and_then(|end| self.scratch.get_mut(at..end))
            .ok_or_else(|| too_small(what, at.saturating_add(len), available))?;
        read(&self.source, block.offset as u64, dst)?;
        Ok(at..at + len)
    }

    /// The source.
    pub fn inner(&self) -> &S {
        &self.source
    }
}

/// One positioned read, with the source's error kept unchanged.
fn read<S: RandomAccess>(source: &S, offset: u64, buf: &mut [u8]) -> Result<(), Error<S::Error>> {
    source.read_at(offset, buf).map_err(|error| Error::Source {
        error,
        offset,
        len: buf.len() as u64,
    })
}
