//! [`FileReader`]: random access to the record batches of an Arrow IPC file from a
//! [`RandomAccess`] source.
//!
//! It uses the `file_decoder` beside it and, of the crate, the sources, the arrays, the format, the
//! schema and the errors.
//!
//! A loop around the [`FileDecoder`]: it asks for ranges, the reader fetches each list in one
//! call to the source (one round trip) and pushes the bytes back. Opening costs one read of the
//! file's tail (`footer_read_size` bytes), plus one read of the footer's missing start when the
//! footer is longer. [`FileReader::batch`] is one read of a block's metadata and body (the
//! dictionary blocks ride along the first time a batch needs them); [`FileReader::scan`] reads
//! many batches in planned windows.

use super::file_decoder::{DecodeResult, FileDecoder, no_batch};
use super::{Projection, ReaderOptions};
use crate::array::RecordBatch;
use crate::error::Error;
use crate::format::Block;
use crate::schema::{Metadata, Schema};
use crate::source::RandomAccess;
use alloc::sync::Arc;

/// Reads an Arrow IPC file from a [`RandomAccess`] source.
#[derive(Debug)]
pub struct FileReader<R> {
    source: R,
    pub(super) decoder: FileDecoder,
}

impl<R: RandomAccess> FileReader<R> {
    /// Opens the file: one read of the tail, plus one more if the footer is longer than that.
    pub fn open(source: R, options: ReaderOptions) -> Result<Self, Error<R::Error>> {
        let mut reader = FileReader {
            decoder: FileDecoder::new(source.len(), options),
            source,
        };
        while !reader.decoder.is_open() {
            let _footer = reader.drive()?;
        }
        Ok(reader)
    }

    /// Runs the decoder, fetching what it asks for, until it has something else to say.
    pub(super) fn drive(&mut self) -> Result<DecodeResult, Error<R::Error>> {
        loop {
            match self.decoder.try_decode()? {
                DecodeResult::NeedsData(ranges) => {
                    let data = super::fetch(&self.source, &ranges)?;
                    self.decoder.push_ranges(ranges, data)?;
                }
                other => return Ok(other),
            }
        }
    }

    /// The file's schema, as the footer gives it.
    pub fn schema(&self) -> &Arc<Schema> {
        self.decoder.schema()
    }

    /// The schema of the batches this reader returns: the file's, projected (see
    /// [`Self::set_projection`]).
    pub fn batch_schema(&self) -> &Arc<Schema> {
        self.decoder.batch_schema()
    }

    /// The footer's custom metadata.
    pub fn metadata(&self) -> &Metadata {
        self.decoder.metadata()
    }

    /// The number of record batches in the file (the footer's record batch blocks).
    pub fn num_batches(&self) -> usize {
        self.decoder.record_batch_blocks().len()
    }

    /// The record batch blocks listed in the footer, in file order.
    pub fn record_batch_blocks(&self) -> &[Block] {
        self.decoder.record_batch_blocks()
    }

    /// The dictionary blocks listed in the footer, in file order.
    pub fn dictionary_blocks(&self) -> &[Block] {
        self.decoder.dictionary_blocks()
    }

    /// Reads only the fields `projection` selects from now on: their buffers are the only
    /// ones decoded, and batches have [`Self::batch_schema`].
    pub fn set_projection(&mut self, projection: Projection) {
        self.decoder.set_projection(projection);
    }

    /// Reads and decodes record batch `index`: one read of its metadata and body (plus one read
    /// per dictionary block, in the same call, the first time a batch needs dictionaries).
    pub fn batch(&mut self, index: usize) -> Result<RecordBatch<'static>, Error<R::Error>> {
        self.decoder.select_batch(index);
        match self.drive()? {
            DecodeResult::Data(batch) => Ok(batch),
            _ => Err(no_batch(index).into()),
        }
    }

    /// Iterates over all record batches in order.
    pub fn batches(
        &mut self,
    ) -> impl Iterator<Item = Result<RecordBatch<'static>, Error<R::Error>>> + '_ {
        (0..self.num_batches()).map(move |i| self.batch(i))
    }

    /// The decoder that plans this reader's reads.
    pub fn decoder(&self) -> &FileDecoder {
        &self.decoder
    }

    /// The source.
    pub fn inner(&self) -> &R {
        &self.source
    }

    /// Unwraps the source.
    pub fn into_inner(self) -> R {
        self.source
    }
}
