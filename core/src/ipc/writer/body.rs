//! Laying out a message body: each buffer compressed (or not), placed at an aligned offset, and
//! padded.
//!
//! It uses, of the crate, `compression`, the bytes, the format's `Buffer` and the errors; nothing
//! else of the writer.
//!
//! Data enters as the raw buffers of one record batch or dictionary batch and leaves as an
//! [`EncodedBody`]: the `Buffer` entries (offset and length of each buffer in the body) for the
//! message metadata, and the pieces to write in order. Uncompressed buffers and padding are not
//! copied: a piece is the batch's own [`Bytes`] or a window of a static run of zeros. Every buffer
//! starts at a multiple of the alignment, and the body's length is one too.

use crate::bytes::Bytes;
use crate::compression::{CodecOptions, EncodedBuffer, UNCOMPRESSED_PREFIX, compress_buffer};
use crate::datatype::CompressionCodec;
use crate::error::FormatResult;
use crate::format::Buffer;
use alloc::vec::Vec;

/// Zeros to pad with; as long as the largest alignment.
static ZEROS: [u8; 64] = [0; 64];

/// A laid-out body.
#[derive(Debug, Default)]
pub(super) struct EncodedBody<'a> {
    /// Where each buffer lies, for the message metadata.
    pub buffers: Vec<Buffer>,
    /// The bytes to write, in order.
    pub pieces: Vec<Bytes<'a>>,
    /// Total length of the pieces: a multiple of the alignment.
    pub len: u64,
}

impl<'a> EncodedBody<'a> {
    fn push(&mut self, piece: Bytes<'a>) {
        if !piece.is_empty() {
            self.len += piece.len() as u64;
            self.pieces.push(piece);
        }
    }

    fn pad(&mut self, alignment: usize) {
        let padding = (self.len.next_multiple_of(alignment as u64) - self.len) as usize;
        self.push(Bytes::borrowed(ZEROS.get(..padding).unwrap_or_default()));
    }
}

/// Lays out `buffers`, compressing each with `compression` if set; `alignment` is a power of two
/// from 8 to 64.
pub(super) fn lay_out<'a>(
    buffers: Vec<Bytes<'a>>,
    alignment: usize,
    compression: Option<CompressionCodec>,
    codec_options: &CodecOptions,
) -> FormatResult<EncodedBody<'a>> {
    let mut body = EncodedBody {
        buffers: Vec::with_capacity(buffers.len()),
        pieces: Vec::with_capacity(buffers.len() * 2),
        len: 0,
    };
    for buffer in buffers {
        let start = body.len;
        match compression {
            None => body.push(buffer),
            Some(codec) => match compress_buffer(codec, &buffer, codec_options)? {
                EncodedBuffer::Uncompressed => {
                    // The prefix of a buffer kept uncompressed in a compressed body.
                    body.push(Bytes::borrowed(&UNCOMPRESSED_PREFIX));
                    body.push(buffer);
                }
                EncodedBuffer::Compressed(bytes) => body.push(Bytes::from_vec(bytes)),
                _ => {}
            },
        }
        body.buffers.push(Buffer {
            offset: start as i64,
            length: (body.len - start) as i64,
        });
        body.pad(alignment);
    }
    Ok(body)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;
    use crate::compression::{DEFAULT_DECOMPRESSION_LIMIT, decompress_buffer};
    use alloc::vec;

    fn concat(body: &EncodedBody<'_>) -> Vec<u8> {
        body.pieces.iter().flat_map(|p| p.iter().copied()).collect()
    }

    fn buffers() -> Vec<Bytes<'static>> {
        vec![
            Bytes::borrowed(b"abc"),
            Bytes::default(),
            Bytes::from_vec(vec![7; 100]),
            Bytes::borrowed(&[1; 64]),
        ]
    }

    #[test]
    fn buffers_are_aligned_and_padded() {
        for alignment in [8, 16, 32, 64] {
            let body = lay_out(buffers(), alignment, None, &CodecOptions::default()).unwrap();
            let bytes = concat(&body);
            assert_eq!(bytes.len() as u64, body.len);
            assert_eq!(body.len % alignment as u64, 0);
            for (buffer, raw) in body.buffers.iter().zip(buffers()) {
                assert_eq!(buffer.offset % alignment as i64, 0);
                let (start, len) = (buffer.offset as usize, buffer.length as usize);
                assert_eq!(&bytes[start..start + len], &raw[..]);
            }
            // Borrowed buffers stay borrowed: no copy.
            assert!(
                body.pieces
                    .iter()
                    .all(|p| p.is_borrowed() || p.len() == 100)
            );
        }
    }

    #[test]
    fn compressed_buffers_read_back() {
        let codecs = [
            #[cfg(feature = "lz4")]
            CompressionCodec::Lz4Frame,
            #[cfg(feature = "zstd")]
            CompressionCodec::Zstd,
        ];
        for codec in codecs {
            let body = lay_out(buffers(), 8, Some(codec), &CodecOptions::default()).unwrap();
            let bytes = concat(&body);
            for (buffer, raw) in body.buffers.iter().zip(buffers()) {
                let (start, len) = (buffer.offset as usize, buffer.length as usize);
                let stored = &bytes[start..start + len];
                let back = decompress_buffer(codec, stored, DEFAULT_DECOMPRESSION_LIMIT).unwrap();
                assert_eq!(back.as_slice(), &raw[..]);
            }
            // "abc" does not shrink: kept with the -1 prefix; 100 sevens do.
            assert_eq!(body.buffers[0].length, 8 + 3);
            assert_eq!(body.buffers[1].length, 0);
            assert!(body.buffers[2].length < 100);
        }
    }
}
