//! [`FileBatches`]: the batches of an Arrow IPC file in an object, read front to back through
//! one streaming GET ([`SequentialFileReader`]) when the caller reads every byte of them, by
//! planned ranges ([`AsyncFileReader`]) otherwise.
//!
//! Read by ranges, a large file costs a request per planned range, and a window's ranges wait
//! in memory until it is decoded; the next window can only go out once that memory is free, so
//! every window pays the time to first byte again. When the footer lists its blocks in file
//! order (the dictionaries, then the record batches, none overlapping another), the bytes the
//! reader needs arrive in the order it needs them from a single GET of the object, at that
//! request's bandwidth. The [`FileDecoder`] still says what it needs, one block at a time;
//! the sequential reader serves each range from the body as it arrives (passing over bytes no
//! block holds: the schema message, padding, the end-of-stream marker), while the body keeps
//! arriving into the [`ObjectReader`]'s bounded buffer. Memory is the block being decoded, the
//! batches the caller holds and that buffer, whatever the file's size.

use crate::{ObjectError, ObjectReader, ObjectSource};
use quiver::array::RecordBatch;
use quiver::bytes::Bytes;
use quiver::error::Error;
use quiver::format::Block;
use quiver::ipc::{AsyncFileReader, DecodeResult, FileDecoder};
use quiver::source::AsyncRandomAccess;
use std::ops::Range;
use std::sync::Arc;

/// A file's selected batches, read in file order or by ranges; see the module docs.
#[derive(Debug)]
pub enum FileBatches<'s> {
    /// Windows of concurrent ranged GETs, the next in flight while the caller works.
    Ranges(AsyncFileReader<'s, ObjectSource>),
    /// One streaming GET in file order.
    InOrder(SequentialFileReader<'s>),
}

impl<'s> FileBatches<'s> {
    /// The batches `reader` selects: in file order when the caller reads every byte of them
    /// (`whole`: no projection, every batch) and the footer allows it, by ranges otherwise.
    pub fn new(reader: AsyncFileReader<'s, ObjectSource>, whole: bool) -> Self {
        if !whole {
            return FileBatches::Ranges(reader);
        }
        match SequentialFileReader::new(reader) {
            Ok(reader) => FileBatches::InOrder(reader),
            Err(reader) => FileBatches::Ranges(reader),
        }
    }

    /// The next selected batch, or `None` after the last one (or after an error).
    pub async fn next_batch(&mut self) -> Option<Result<RecordBatch<'static>, Error<ObjectError>>> {
        match self {
            FileBatches::Ranges(reader) => reader.next_batch().await,
            FileBatches::InOrder(reader) => reader.next_batch().await,
        }
    }
}

/// Reads an IPC file's selected batches in file order through one streaming GET; see the
/// module docs.
#[derive(Debug)]
pub struct SequentialFileReader<'s> {
    source: &'s ObjectSource,
    decoder: FileDecoder,
    /// The streaming GET and the object offset of its next byte, from the first range read.
    body: Option<(ObjectReader, u64)>,
    failed: bool,
}

impl<'s> SequentialFileReader<'s> {
    /// Reads the batches `reader` selects (every one unless [`AsyncFileReader::select`] said
    /// otherwise), with its projection (which still streams every byte up to the last block:
    /// this reader is for whole reads). Reads in flight are dropped. A footer that lists its
    /// blocks out of file order gives `reader` back.
    pub fn new(
        reader: AsyncFileReader<'s, ObjectSource>,
    ) -> Result<Self, AsyncFileReader<'s, ObjectSource>> {
        if !in_file_order(reader.dictionary_blocks(), reader.record_batch_blocks()) {
            return Err(reader);
        }
        let (source, mut decoder) = reader.into_parts();
        // One block per window: each batch is decoded as soon as its block has arrived.
        decoder.set_scan_options(decoder.scan_options().clone().with_readahead(0));
        Ok(SequentialFileReader {
            source,
            decoder,
            body: None,
            failed: false,
        })
    }

    /// The next selected batch, or `None` after the last one (or after an error).
    pub async fn next_batch(&mut self) -> Option<Result<RecordBatch<'static>, Error<ObjectError>>> {
        if self.failed {
            return None;
        }
        loop {
            let ranges = match self.decoder.try_decode() {
                Ok(DecodeResult::NeedsData(ranges)) => ranges,
                Ok(DecodeResult::Data(batch)) => return Some(Ok(batch)),
                Ok(DecodeResult::Footer) => continue,
                Ok(_) => return None,
                Err(e) => return Some(Err(self.fail(e.into()))),
            };
            let read = self.read(&ranges).await;
            let pushed = read.and_then(|data| Ok(self.decoder.push_ranges(ranges, data)?));
            if let Err(e) = pushed {
                return Some(Err(self.fail(e)));
            }
        }
    }

    fn fail(&mut self, error: Error<ObjectError>) -> Error<ObjectError> {
        self.failed = true;
        self.body = None;
        error
    }

    /// The bytes of `ranges` (sorted), from the body.
    async fn read(
        &mut self,
        ranges: &[Range<u64>],
    ) -> Result<Vec<Bytes<'static>>, Error<ObjectError>> {
        let mut out = Vec::with_capacity(ranges.len());
        for range in ranges {
            let failed = |error| Error::Source {
                error,
                offset: range.start,
                len: range.end - range.start,
            };
            let (body, at) = self
                .body
                .get_or_insert_with(|| (self.source.reader(range.start), range.start));
            if *at > range.start {
                // In file order every range the decoder asks for lies ahead of the body.
                debug_assert!(false, "{at} > {}", range.start);
                out.extend(
                    self.source
                        .read_ranges(vec![range.clone()])
                        .await
                        .map_err(failed)?,
                );
                continue;
            }
            let len = usize::try_from(range.end - range.start).unwrap_or(usize::MAX);
            *at += body.skip(range.start - *at).await.map_err(failed)?;
            let bytes = body.read_bytes(len).await.map_err(failed)?;
            *at += bytes.len() as u64;
            // A body that ends early leaves `bytes` short: the decoder's error, at `range`.
            let len = bytes.len();
            out.push(Bytes::from_owner(Arc::new(bytes), 0..len));
        }
        Ok(out)
    }
}

/// Whether the dictionary blocks and then the record batch blocks follow one another through
/// the file, none starting before the one listed before it ends.
fn in_file_order(dictionaries: &[Block], batches: &[Block]) -> bool {
    let mut end = 0i64;
    dictionaries.iter().chain(batches).all(|block| {
        let starts_after = block.offset >= end;
        end = block
            .offset
            .saturating_add(i64::from(block.meta_data_length))
            .saturating_add(block.body_length);
        starts_after
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn block(offset: i64, meta_data_length: i32, body_length: i64) -> Block {
        Block {
            offset,
            meta_data_length,
            body_length,
        }
    }

    #[test]
    fn blocks_in_file_order_follow_one_another() {
        let dictionary = block(8, 100, 50);
        let (first, second) = (block(158, 100, 100), block(400, 100, 0));
        assert!(in_file_order(&[], &[]));
        assert!(in_file_order(&[dictionary], &[first, second]));
        // A delta dictionary between the batches, a batch listed twice, an overlap.
        assert!(!in_file_order(
            &[dictionary, block(358, 10, 10)],
            &[first, second]
        ));
        assert!(!in_file_order(&[], &[first, first]));
        assert!(!in_file_order(&[], &[first, block(300, 8, 0)]));
        assert!(!in_file_order(&[], &[second, first]));
    }
}
