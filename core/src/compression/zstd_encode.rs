//! Zstandard encoding (`ZSTD`), through `ruzstd`'s frame compressor (pure Rust, no_std).
//!
//! It uses nothing of the crate; `ruzstd` does the encoding.
//!
//! Uncompressed bytes enter as one slice; one frame leaves, appended to the caller's `Vec<u8>`.
//! `ruzstd` implements its fastest level only (about the reference library's level 1); its frames
//! carry no content size, and a content checksum only when `ruzstd`'s `hash` feature is on, which
//! quiver leaves off. The reference library that Arrow C++ and arrow-rs use reads them as usual.

use alloc::vec::Vec;
use ruzstd::encoding::{CompressionLevel, FrameCompressor};

/// Appends one Zstandard frame holding `data` to `out`.
pub fn compress_frame(data: &[u8], out: &mut Vec<u8>) {
    let mut compressor = FrameCompressor::new(CompressionLevel::Fastest);
    compressor.set_source(data);
    compressor.set_drain(out);
    compressor.compress();
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;
    use crate::compression::test_data::{self, text};
    use crate::datatype::CompressionCodec;

    fn ours(frame: &[u8], len: usize) -> Vec<u8> {
        test_data::decode(CompressionCodec::Zstd, len, frame).unwrap()
    }

    #[test]
    fn frames_read_back() {
        for input in &test_data::inputs(300_000) {
            let mut frame = Vec::new();
            compress_frame(input, &mut frame);
            assert_eq!(&ours(&frame, input.len()), input);
        }
    }

    #[test]
    fn text_shrinks() {
        let input = text(200_000);
        let mut frame = Vec::new();
        compress_frame(&input, &mut frame);
        assert!(frame.len() < input.len() / 4, "{}", frame.len());
    }

    #[test]
    fn appends_to_what_is_there() {
        let mut out = b"prefix".to_vec();
        compress_frame(b"hello hello hello", &mut out);
        assert_eq!(&out[..6], b"prefix");
        assert_eq!(ours(&out[6..], 17), b"hello hello hello");
    }
}
