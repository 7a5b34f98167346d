//! [`ObjectBatches`]: every batch of an object, file or stream, from one streaming GET.
//!
//! It uses `read`, `source` and `error`.
//!
//! Read by ranges, a file costs its opening request (the footer), then a request per planned
//! range, and a window's ranges wait in memory until it is decoded. A caller that reads every
//! byte of the batches needs none of that: a read of the whole object front to back
//! ([`ObjectSource::open_whole`](crate::ObjectSource::open_whole): its first part, then the
//! rest in parallel parts, handed over in order) brings the bytes in the order they are
//! decoded, and each batch is decoded as soon as its message has arrived. A file is read as the stream it holds, its footer checked last
//! against the messages ([`StreamDecoder::for_file`]).
//!
//! The body's chunks go to the [`StreamDecoder`] as they arrived, without a copy; a message
//! that spans chunks is joined once, when all of it is in. Memory is one message, the batches
//! the caller holds and the [`ObjectReader`]'s bounded read-ahead, whatever the object's size.

use crate::{ObjectError, ObjectReader, ObjectSource};
use quiver::array::RecordBatch;
use quiver::bytes::Bytes;
use quiver::error::{Error, FormatErrorKind};
use quiver::format::{CONTINUATION, LEADING_LEN, MAGIC};
use quiver::ipc::{Projection, ReaderOptions, StreamDecodeResult, StreamDecoder};
use quiver::schema::Schema;
use quiver::source::AsyncRandomAccess;
use std::sync::Arc;

/// The batches of an object read front to back from one streaming GET; see the module docs.
#[derive(Debug)]
pub struct ObjectBatches {
    reader: ObjectReader,
    decoder: StreamDecoder,
    /// Bytes of the body handed to the decoder.
    position: u64,
    schema: Arc<Schema>,
}

impl ObjectBatches {
    /// The batches of the object `reader` reads from its first byte, its schema read: a file
    /// (it starts with `ARROW1`) front to back, its footer checked once the body has ended
    /// (an error after the batches if the footer does not describe them), or a stream.
    ///
    /// # Errors
    ///
    /// The store's error, or the error of the object's first messages. Some writers leave the
    /// stream in a file unreadable from its start (polars writes the schema message without
    /// its length prefix; file readers take the schema from the footer): such a file is an
    /// error here before any batch, and reads by ranges ([`quiver::ipc::AsyncFileReader`]),
    /// as `quiver json` then does.
    pub async fn new(
        mut reader: ObjectReader,
        options: ReaderOptions,
    ) -> Result<Self, Error<ObjectError>> {
        let magic = quiver::format::MAGIC;
        let leading = reader.peek(magic.len()).await;
        let leading = leading.map_err(|error| Error::Source {
            error,
            offset: 0,
            len: magic.len() as u64,
        })?;
        let mut decoder = if leading == magic {
            StreamDecoder::for_file(options)
        } else {
            StreamDecoder::new(options)
        };
        let mut position = 0;
        // The decoder's first result other than a request is the schema, or an error.
        let _schema = drive(&mut reader, &mut decoder, &mut position).await?;
        let schema = decoder
            .schema()
            .cloned()
            .ok_or(FormatErrorKind::EmptyInput)?;
        Ok(ObjectBatches {
            reader,
            decoder,
            position,
            schema,
        })
    }

    /// The batches of an object opened for a read of all of it ([`ObjectSource::open_whole`]),
    /// read front to back by its `reader` as [`Self::new`] reads them; `None` for a file to
    /// read by ranges from `source` ([`quiver::ipc::AsyncFileReader`]).
    ///
    /// A file whose first message lacks the continuation marker may not be readable from its
    /// start (polars writes its schema message without any length prefix; files before Arrow
    /// 0.15 frame messages without the marker). Within the source's window, such a file is
    /// held whole by `source` ([`ObjectSource::hold`]) from the reader's parts, all in flight
    /// already, and its reads by ranges are served from memory: no request or round trip
    /// more than the whole read's (two waits for a first byte, where reading the footer, then
    /// the blocks, would take three). A larger one is read front to back, and by ranges if
    /// its stream fails before its first batch (the whole GET dropped).
    ///
    /// # Errors
    ///
    /// The store's error, or the error of a stream's first messages (a file whose stream
    /// fails is read by ranges instead).
    pub async fn of_whole(
        source: &mut ObjectSource,
        mut reader: ObjectReader,
        options: ReaderOptions,
    ) -> Result<Option<Self>, Error<ObjectError>> {
        // The padded magic, then the first message's continuation marker.
        const MARKER_AT: usize = LEADING_LEN as usize;
        const LEADING: usize = MARKER_AT + CONTINUATION.len();
        let leading = reader.peek(LEADING).await;
        let leading = leading.map_err(|error| Error::Source {
            error,
            offset: 0,
            len: LEADING as u64,
        })?;
        let file = leading.starts_with(MAGIC);
        if file
            && leading.get(MARKER_AT..) != Some(&CONTINUATION[..])
            && source.len() <= source.window()
        {
            let len = source.len();
            source.hold(reader).await.map_err(|error| Error::Source {
                error,
                offset: 0,
                len,
            })?;
            return Ok(None);
        }
        match Self::new(reader, options).await {
            Ok(batches) => Ok(Some(batches)),
            Err(e @ Error::Source { .. }) => Err(e),
            Err(_) if file => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// The object's schema.
    pub fn schema(&self) -> &Arc<Schema> {
        &self.schema
    }

    /// Bytes of the object handed to the decoder so far.
    pub fn position(&self) -> u64 {
        self.position
    }

    /// Reads only the fields `projection` selects from the next batch on.
    pub fn set_projection(&mut self, projection: Projection) {
        self.decoder.set_projection(projection);
    }

    /// The next record batch, with every dictionary batch before it applied; `None` at the
    /// end (for a file, once its footer has been checked).
    ///
    /// # Errors
    ///
    /// The store's error, or the object's, located as a local reader's.
    pub async fn next_batch(&mut self) -> Result<Option<RecordBatch<'static>>, Error<ObjectError>> {
        loop {
            let step = drive(&mut self.reader, &mut self.decoder, &mut self.position);
            match step.await? {
                StreamDecodeResult::Data(batch) => return Ok(Some(batch)),
                StreamDecodeResult::Schema => {}
                _ => return Ok(None),
            }
        }
    }
}

/// Runs `decoder` until it has a result other than a request for bytes, handing it the body's
/// chunks from `reader` as they arrive (`position`: the bytes handed so far).
async fn drive(
    reader: &mut ObjectReader,
    decoder: &mut StreamDecoder,
    position: &mut u64,
) -> Result<StreamDecodeResult, Error<ObjectError>> {
    loop {
        match decoder.try_decode()? {
            StreamDecodeResult::NeedsData { .. } => {
                let chunk = reader.next_chunk().await.map_err(|error| Error::Source {
                    error,
                    offset: *position,
                    len: 0,
                })?;
                match chunk {
                    Some(chunk) => {
                        let len = chunk.len();
                        *position += len as u64;
                        decoder.push(Bytes::from_owner(Arc::new(chunk), 0..len));
                    }
                    None => decoder.finish(),
                }
            }
            other => return Ok(other),
        }
    }
}
