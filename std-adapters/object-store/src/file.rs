//! [`SequentialFileReader`]: the batches of an Arrow IPC file read front to back through one
//! streaming GET, for a caller that reads every byte of them.
//!
//! Read by ranges ([`AsyncFileReader`] alone), a large file costs a request per planned range,
//! and a window's ranges wait in memory until it is decoded; the next window can only go out
//! once that memory is free, so every window pays the time to first byte again. When the
//! footer lists its blocks in file order (the dictionaries, then the record batches, none
//! overlapping another), the bytes the reader needs arrive in the order it needs them from a
//! single GET of the object, at that request's bandwidth. The [`FileDecoder`] still says what
//! it needs, one block at a time; this reader serves each range from the body as it arrives
//! (passing over bytes no block holds: the schema message, padding, the end-of-stream
//! marker), while the body keeps arriving into the [`ObjectReader`]'s bounded buffer. Memory
//! is the block being decoded, the batches the caller holds and that buffer, whatever the
//! file's size.
//!
//! A file whose footer lists its blocks out of order is read by ranges, a window at a time.

use crate::{ObjectError, ObjectReader, ObjectSource};
use quiver::array::RecordBatch;
use quiver::bytes::Bytes;
use quiver::error::Error;
use quiver::format::Block;
use quiver::ipc::{AsyncFileReader, DecodeResult, FileDecoder};
use quiver::schema::Schema;
use quiver::source::AsyncRandomAccess;
use std::ops::Range;
use std::sync::Arc;

/// Reads an IPC file's selected batches in file order; see the module docs.
#[derive(Debug)]
pub struct SequentialFileReader<'s> {
    source: &'s ObjectSource,
    decoder: FileDecoder,
    /// The streaming GET and the object offset of its next byte, once a range was read from
    /// it; never for a file whose footer lists blocks out of order.
    body: Option<(ObjectReader, u64)>,
    in_order: bool,
    failed: bool,
}

impl<'s> SequentialFileReader<'s> {
    /// Reads the batches `reader` selects (every one unless [`AsyncFileReader::select`] said
    /// otherwise), with its projection: a projection still streams every byte up to the last
    /// selected block, so use it for whole reads. Reads in flight are dropped.
    pub fn new(reader: AsyncFileReader<'s, ObjectSource>) -> Self {
        let (source, mut decoder) = reader.into_parts();
        let in_order = in_file_order(decoder.dictionary_blocks(), decoder.record_batch_blocks());
        if in_order {
            // One block per window: each batch is decoded as soon as its block has arrived.
            decoder.set_scan_options(decoder.scan_options().clone().with_readahead(0));
        }
        SequentialFileReader {
            source,
            decoder,
            body: None,
            in_order,
            failed: false,
        }
    }

    /// The file's schema.
    pub fn schema(&self) -> &Arc<Schema> {
        self.decoder.schema()
    }

    /// Whether the footer lists its blocks in file order, so that batches come from one
    /// streaming GET (otherwise every window is read by ranges).
    pub fn is_in_order(&self) -> bool {
        self.in_order
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

    /// The bytes of `ranges` (sorted): from the body, or by ranged GETs when the footer is out
    /// of order.
    async fn read(
        &mut self,
        ranges: &[Range<u64>],
    ) -> Result<Vec<Bytes<'static>>, Error<ObjectError>> {
        let failed = |error, ranges: &[Range<u64>]| Error::Source {
            error,
            offset: ranges.first().map_or(0, |r| r.start),
            len: ranges.iter().map(|r| r.end - r.start).sum(),
        };
        if !self.in_order {
            let read = self.source.read_ranges(ranges.to_vec()).await;
            return read.map_err(|e| failed(e, ranges));
        }
        let mut out = Vec::with_capacity(ranges.len());
        for range in ranges {
            let (body, at) = self
                .body
                .get_or_insert_with(|| (self.source.reader(range.start), range.start));
            if *at > range.start {
                // In file order every range the decoder asks for lies ahead of the body.
                debug_assert!(false, "{at} > {}", range.start);
                let read = self.source.read_ranges(vec![range.clone()]).await;
                out.extend(read.map_err(|e| failed(e, std::slice::from_ref(range)))?);
                continue;
            }
            let skipped = body.skip(range.start.saturating_sub(*at)).await;
            let len = usize::try_from(range.end - range.start).unwrap_or(usize::MAX);
            let bytes = match skipped {
                Ok(skipped) => {
                    *at += skipped;
                    body.read_bytes(len).await
                }
                Err(e) => Err(e),
            };
            let bytes = bytes.map_err(|e| failed(e, std::slice::from_ref(range)))?;
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
