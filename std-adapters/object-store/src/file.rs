//! [`front_to_back`]: every batch of an object, file or stream, from one streaming GET.
//!
//! Read by ranges, a file costs its opening request (the footer), then a request per planned
//! range, and a window's ranges wait in memory until it is decoded. A caller that reads every
//! byte of the batches needs none of that: one GET of the whole object
//! ([`ObjectSource::open_whole`](crate::ObjectSource::open_whole)) brings the bytes in the
//! order they are decoded, at that request's bandwidth, and the first batch is decoded as soon
//! as its message has arrived. A file is read as the stream it holds, its footer checked last
//! against the messages ([`StreamDecoder::for_file`]); memory is one message, the batches the
//! caller holds and the [`ObjectReader`]'s bounded read-ahead, whatever the object's size.

use crate::{ObjectError, ObjectReader};
use quiver::error::Error;
use quiver::ipc::{AsyncStreamReader, ReaderOptions, StreamDecoder};

/// The batches of the object `reader` reads from its first byte, its schema read: a file
/// (it starts with `ARROW1`) front to back, its footer checked once the body has ended (an
/// error after the batches if the footer does not describe them), or a stream.
///
/// # Errors
///
/// The store's error, or the object's first messages' (a file's or a stream's).
pub async fn front_to_back(
    mut reader: ObjectReader,
    options: ReaderOptions,
) -> Result<AsyncStreamReader<ObjectReader>, Error<ObjectError>> {
    let leading = reader.peek(quiver::format::MAGIC.len()).await;
    let leading = leading.map_err(|error| Error::Source {
        error,
        offset: 0,
        len: quiver::format::MAGIC.len() as u64,
    })?;
    let decoder = if leading == quiver::format::MAGIC {
        StreamDecoder::for_file(options)
    } else {
        StreamDecoder::new(options)
    };
    AsyncStreamReader::with_decoder(reader, decoder).await
}
