//! LZ4 frame encoding (`LZ4_FRAME`), written against the LZ4 frame format specification.
//!
//! Uncompressed bytes enter as one slice; one frame leaves, appended to the caller's `Vec<u8>`.
//! The frame container (header, block sizes, end mark, optional checksum) is written here; each
//! block's LZ4 sequences come from `lz4_flex`'s block compressor. Blocks are independent (no
//! matches into earlier blocks), which every LZ4 frame decoder reads, and a block that does not
//! shrink is stored as it is, flagged by the high bit of its size.
//!
//! The frame reads back with quiver's own decoder ([`decompress_buffer`](super::decompress_buffer)),
//! with the reference `lz4` library that Arrow C++ uses, and with `lz4_flex`'s frame decoder that
//! arrow-rs uses.

use super::lz4::{
    BD_BLOCK_MAX_SHIFT, BLOCK_UNCOMPRESSED, FLG_BLOCK_INDEPENDENCE, FLG_CONTENT_CHECKSUM,
    FLG_CONTENT_SIZE, FLG_VERSION_01, FRAME_MAGIC, block_max, header_checksum,
};
use alloc::vec::Vec;
use twox_hash::XxHash32;

/// The largest uncompressed block of a frame (the frame descriptor's block maximum size); each
/// variant's value is the descriptor's code for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum Lz4BlockSize {
    /// 64 KiB, the reference library's default.
    #[default]
    Max64KiB = 4,
    /// 256 KiB.
    Max256KiB = 5,
    /// 1 MiB.
    Max1MiB = 6,
    /// 4 MiB.
    Max4MiB = 7,
}

impl Lz4BlockSize {
    /// The size in bytes.
    pub fn bytes(self) -> usize {
        block_max(self.code())
    }

    /// The block maximum size code of the frame descriptor (4 to 7).
    fn code(self) -> u8 {
        self as u8
    }
}

/// How LZ4 frames are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct Lz4FrameOptions {
    /// The largest uncompressed block (64 KiB by default).
    pub block_size: Lz4BlockSize,
    /// Whether the header records the content size (yes by default: decoders can check it).
    pub content_size: bool,
    /// Whether the frame ends with an xxHash32 of the content (no by default).
    pub content_checksum: bool,
}

impl Default for Lz4FrameOptions {
    fn default() -> Self {
        Lz4FrameOptions {
            block_size: Lz4BlockSize::default(),
            content_size: true,
            content_checksum: false,
        }
    }
}

impl Lz4FrameOptions {
    /// Sets [`Lz4FrameOptions::block_size`]: the largest uncompressed block.
    #[must_use]
    pub fn with_block_size(mut self, block_size: Lz4BlockSize) -> Self {
        self.block_size = block_size;
        self
    }

    /// Sets [`Lz4FrameOptions::content_size`]: whether the header records the content size.
    #[must_use]
    pub fn with_content_size(mut self, content_size: bool) -> Self {
        self.content_size = content_size;
        self
    }

    /// Sets [`Lz4FrameOptions::content_checksum`]: whether the frame ends with an xxHash32
    /// of the content.
    #[must_use]
    pub fn with_content_checksum(mut self, content_checksum: bool) -> Self {
        self.content_checksum = content_checksum;
        self
    }
}

/// Appends one LZ4 frame holding `data` to `out`.
pub fn compress_frame(data: &[u8], options: Lz4FrameOptions, out: &mut Vec<u8>) {
    out.extend_from_slice(&FRAME_MAGIC.to_le_bytes());
    let descriptor_at = out.len();
    let mut flg = FLG_VERSION_01 | FLG_BLOCK_INDEPENDENCE;
    if options.content_size {
        flg |= FLG_CONTENT_SIZE;
    }
    if options.content_checksum {
        flg |= FLG_CONTENT_CHECKSUM;
    }
    out.push(flg);
    out.push(options.block_size.code() << BD_BLOCK_MAX_SHIFT);
    if options.content_size {
        out.extend_from_slice(&(data.len() as u64).to_le_bytes());
    }
    let descriptor = out.get(descriptor_at..).unwrap_or_default();
    out.push(header_checksum(descriptor));

    let mut scratch = Vec::new();
    for block in data.chunks(options.block_size.bytes()) {
        scratch.resize(lz4_flex::block::get_maximum_output_size(block.len()), 0);
        match lz4_flex::block::compress_into(block, &mut scratch) {
            Ok(n) if n < block.len() => {
                // n < block_max <= 4 MiB, so the size fits and leaves the high bit clear.
                out.extend_from_slice(&(n as u32).to_le_bytes());
                out.extend_from_slice(scratch.get(..n).unwrap_or_default());
            }
            _ => {
                out.extend_from_slice(&(block.len() as u32 | BLOCK_UNCOMPRESSED).to_le_bytes());
                out.extend_from_slice(block);
            }
        }
    }
    out.extend_from_slice(&0u32.to_le_bytes()); // end mark
    if options.content_checksum {
        out.extend_from_slice(&XxHash32::oneshot(0, data).to_le_bytes());
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;
    use crate::compression::test_data::{self, noise, text};
    use crate::datatype::CompressionCodec;
    use std::io::Read;

    const BLOCK_SIZES: [Lz4BlockSize; 4] = [
        Lz4BlockSize::Max64KiB,
        Lz4BlockSize::Max256KiB,
        Lz4BlockSize::Max1MiB,
        Lz4BlockSize::Max4MiB,
    ];

    fn options() -> Vec<Lz4FrameOptions> {
        let mut all = Vec::new();
        for block_size in BLOCK_SIZES {
            for content_size in [false, true] {
                for content_checksum in [false, true] {
                    all.push(
                        Lz4FrameOptions::default()
                            .with_block_size(block_size)
                            .with_content_size(content_size)
                            .with_content_checksum(content_checksum),
                    );
                }
            }
        }
        all
    }

    fn lz4_flex_frame(frame: &[u8]) -> Vec<u8> {
        let mut decoded = Vec::new();
        lz4_flex::frame::FrameDecoder::new(frame)
            .read_to_end(&mut decoded)
            .unwrap();
        decoded
    }

    #[test]
    fn frames_read_back_with_both_decoders() {
        let inputs = test_data::inputs(300_000);
        for options in options() {
            for input in &inputs {
                let mut frame = Vec::new();
                compress_frame(input, options, &mut frame);
                let ours = test_data::decode(CompressionCodec::Lz4Frame, input.len(), &frame);
                assert_eq!(&ours.unwrap(), input, "{options:?}");
                assert_eq!(&lz4_flex_frame(&frame), input, "{options:?}");
            }
        }
    }

    #[test]
    fn text_shrinks_and_noise_is_stored() {
        let input = text(200_000);
        let mut frame = Vec::new();
        compress_frame(&input, Lz4FrameOptions::default(), &mut frame);
        assert!(frame.len() < input.len() / 4, "{}", frame.len());

        let input = noise(1000, 1);
        let mut frame = Vec::new();
        compress_frame(&input, Lz4FrameOptions::default(), &mut frame);
        // magic, FLG, BD, content size, HC, one stored block's size, data, end mark
        assert_eq!(frame.len(), 4 + 2 + 8 + 1 + 4 + 1000 + 4);
        let size = u32::from_le_bytes(frame[15..19].try_into().unwrap());
        assert_eq!(size, 1000 | BLOCK_UNCOMPRESSED);
    }

    #[test]
    fn header_matches_the_specification() {
        let mut frame = Vec::new();
        compress_frame(
            b"abc",
            Lz4FrameOptions::default().with_content_size(false),
            &mut frame,
        );
        assert_eq!(&frame[..4], &[0x04, 0x22, 0x4D, 0x18]);
        assert_eq!(frame[4], 0b0110_0000, "version 01, independent blocks");
        assert_eq!(frame[5], 0b0100_0000, "64 KiB blocks");
        let bytes = BLOCK_SIZES.map(Lz4BlockSize::bytes);
        assert_eq!(bytes, [64 << 10, 256 << 10, 1 << 20, 4 << 20]);
        // The reference header checksum of FLG 0x60, BD 0x40.
        assert_eq!(
            frame[6],
            ((XxHash32::oneshot(0, &[0x60, 0x40]) >> 8) & 0xFF) as u8
        );
    }
}
