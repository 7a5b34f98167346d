//! Body compression, the writing side: turns one IPC body buffer into the bytes a compressed
//! message body holds for it.
//!
//! It uses `lz4_encode` and `zstd_encode` beside it and the buffer framing of `compression`, the
//! data types' codec and the errors.
//!
//! Data enters as the buffer's bytes; it leaves as a [`EncodedBuffer`] telling the caller
//! what to write, following the `BUFFER` method of `Message.fbs`:
//! - an empty buffer stays empty, with no prefix;
//! - otherwise the buffer is compressed with the codec and written as an 8-byte little-endian
//!   `i64` holding the uncompressed length, then the compressed bytes;
//! - unless compression does not shrink it: then the prefix is `-1` and the bytes follow
//!   uncompressed, so the caller can write its own bytes without a copy.
//!
//! [`decompress_buffer`](super::decompress_buffer) reads every one of these forms back.

#[cfg(feature = "lz4")]
use super::lz4_encode::{self, Lz4FrameOptions};
#[cfg(feature = "zstd")]
use super::zstd_encode;
use super::{PREFIX_LEN, UNCOMPRESSED, supported};
use crate::datatype::CompressionCodec;
use crate::error::FormatResult;
use alloc::vec::Vec;

/// The prefix of a buffer stored uncompressed in a compressed body: `-1` as a little-endian `i64`.
pub const UNCOMPRESSED_PREFIX: [u8; PREFIX_LEN] = UNCOMPRESSED.to_le_bytes();

/// How one body buffer is stored in a compressed body.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum EncodedBuffer {
    /// The buffer is empty: write nothing at all.
    Empty,
    /// Compression would not shrink the buffer: write [`UNCOMPRESSED_PREFIX`], then the buffer's
    /// own bytes.
    Uncompressed,
    /// Write these bytes: the uncompressed length prefix, then the compressed data.
    Compressed(Vec<u8>),
}

impl EncodedBuffer {
    /// How many bytes the body holds for this buffer, whose uncompressed length is `len`.
    pub fn stored_len(&self, len: usize) -> usize {
        match self {
            EncodedBuffer::Empty => 0,
            EncodedBuffer::Uncompressed => PREFIX_LEN + len,
            EncodedBuffer::Compressed(bytes) => bytes.len(),
        }
    }
}

/// Settings of the codecs that have any.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub struct CodecOptions {
    /// How LZ4 frames are written.
    #[cfg(feature = "lz4")]
    pub lz4: Lz4FrameOptions,
}

/// Compresses one body buffer with `codec`: [`EncodedBuffer::Empty`] for an empty buffer,
/// [`EncodedBuffer::Uncompressed`] when the codec does not shrink it, else the prefixed
/// compressed bytes.
///
/// Fails with `Unsupported` only when this build lacks the codec's feature.
pub fn compress_buffer(
    codec: CompressionCodec,
    data: &[u8],
    options: &CodecOptions,
) -> FormatResult<EncodedBuffer> {
    if data.is_empty() {
        return Ok(EncodedBuffer::Empty);
    }
    let mut out = Vec::with_capacity(PREFIX_LEN + data.len() / 2);
    out.extend_from_slice(&(data.len() as u64).to_le_bytes());
    match codec {
        #[cfg(feature = "lz4")]
        CompressionCodec::Lz4Frame => lz4_encode::compress_frame(data, options.lz4, &mut out),
        #[cfg(feature = "zstd")]
        CompressionCodec::Zstd => zstd_encode::compress_frame(data, &mut out),
        #[allow(unreachable_patterns)]
        _ => {
            let _ = options; // used only by the codecs this build has
            supported(codec)?; // an error: the codec's arm is missing
        }
    }
    Ok(if out.len() - PREFIX_LEN >= data.len() {
        EncodedBuffer::Uncompressed
    } else {
        EncodedBuffer::Compressed(out)
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;
    use crate::compression::test_data::{noise, text};
    use crate::compression::{DEFAULT_DECOMPRESSION_LIMIT, decompress_buffer};

    /// The codecs this build has.
    fn codecs() -> impl Iterator<Item = CompressionCodec> {
        let all = [CompressionCodec::Lz4Frame, CompressionCodec::Zstd];
        all.into_iter().filter(|&codec| supported(codec).is_ok())
    }

    /// The body bytes for `data`, as a writer following `compressed` lays them out.
    fn stored(data: &[u8], compressed: &EncodedBuffer) -> Vec<u8> {
        match compressed {
            EncodedBuffer::Empty => Vec::new(),
            EncodedBuffer::Uncompressed => [&UNCOMPRESSED_PREFIX[..], data].concat(),
            EncodedBuffer::Compressed(bytes) => bytes.clone(),
        }
    }

    #[test]
    fn every_form_reads_back() {
        let inputs = [Vec::new(), b"a".to_vec(), text(10_000), noise(10_000, 5)];
        for codec in codecs() {
            for input in &inputs {
                let compressed = compress_buffer(codec, input, &CodecOptions::default()).unwrap();
                let body = stored(input, &compressed);
                assert_eq!(body.len(), compressed.stored_len(input.len()));
                let back = decompress_buffer(codec, &body, DEFAULT_DECOMPRESSION_LIMIT).unwrap();
                assert_eq!(back.as_slice(), input.as_slice(), "{codec:?}");
            }
        }
    }

    #[test]
    fn the_spec_rule_keeps_what_does_not_shrink() {
        for codec in codecs() {
            let options = CodecOptions::default();
            assert_eq!(
                compress_buffer(codec, &[], &options).unwrap(),
                EncodedBuffer::Empty
            );
            assert_eq!(
                compress_buffer(codec, &noise(4096, 9), &options).unwrap(),
                EncodedBuffer::Uncompressed
            );
            assert_eq!(
                compress_buffer(codec, b"tiny", &options).unwrap(),
                EncodedBuffer::Uncompressed
            );
            let text = text(4096);
            let EncodedBuffer::Compressed(bytes) = compress_buffer(codec, &text, &options).unwrap()
            else {
                panic!("text should compress with {codec:?}");
            };
            assert_eq!(&bytes[..8], &4096i64.to_le_bytes());
            assert!(bytes.len() < text.len());
        }
    }
}
