//! Zstandard decoding (`ZSTD`), through `ruzstd`'s frame decoder (pure Rust, no_std).
//!
//! It uses the shared output and errors of `compression` and, of the crate, the codec and the
//! errors; `ruzstd` does the decoding.
//!
//! Compressed bytes enter as one slice holding one or more frames (skippable frames are passed
//! over); decompressed bytes leave through the caller's [`Output`], which refuses to grow past
//! the buffer's declared size. Blocks are decoded one at a time and drained into the output at
//! once, so data beyond the declared size is caught as soon as it appears.
//!
//! `ruzstd` sizes its memory from headers before it reads the data they describe: the window a
//! frame header names, the literals and sequences a block header counts. So every header is
//! read here first, and memory stays proportional to the input and the declared size:
//! - The frame header is parsed here, and `ruzstd` is handed a rewritten one (no content size,
//!   no dictionary id) whose window is the frame's own, cut down to the bytes the buffer still
//!   expects. A frame can never refer further back than it has produced, so the smaller window
//!   decodes every valid frame alike. A window above 128 MiB (the reference library's default
//!   maximum) is refused as a limit; a recorded content size larger than the rest of the buffer
//!   is refused before decoding.
//! - Each block's header is checked before `ruzstd` reads the block: its bytes must be there,
//!   and a compressed block may not announce more literals than a block holds, nor more
//!   sequences than its bytes could produce (each sequence produces at least three).
//!
//! A [`ZstdDecoder`] keeps `ruzstd`'s tables and scratch from one buffer to the next (readers hold
//! one for their lifetime), so a file of many small buffers allocates them once rather than per
//! buffer; it lets them go after a frame whose window was larger than [`KEEP_WINDOW`].
//!
//! Content checksums are read but not verified (`ruzstd` computes them only with its `hash`
//! feature). Error offsets are relative to the start of the compressed bytes, and point at the
//! frame or block being decoded.

use crate::datatype::CompressionCodec;
use core::fmt;

use ruzstd::decoding::errors::{FrameDecoderError, ReadFrameHeaderError};
use ruzstd::decoding::{BlockDecodingStrategy, DEFAULT_MAX_WINDOW_SIZE, FrameDecoder};
use ruzstd::io::Read;

use super::Output;
use crate::error::{FormatError, FormatErrorKind, FormatResult, Limit};

/// The codec's name in errors, as `Message.fbs` spells it.
const CODEC: CompressionCodec = CompressionCodec::Zstd;

/// How this codec words input that ends inside a magic number, and inside a skippable frame's
/// size.
const TRUNCATED: [&str; 2] = [
    "truncated or invalid frame header",
    "truncated skippable frame",
];

/// `Magic_Number` of a Zstandard frame.
const MAGIC: u32 = 0xFD2F_B528;

/// `Block_Maximum_Size` when the window is larger.
const MAX_BLOCK: u64 = 128 * 1024;

/// Size of a block header.
const BLOCK_HEADER_LEN: usize = 3;

/// The shortest match a sequence can copy: every sequence produces at least this many bytes.
const MIN_MATCH: u64 = 3;

/// Largest window whose scratch a [`ZstdDecoder`] keeps for the next buffer.
const KEEP_WINDOW: u64 = 256 * 1024;

/// A `Decompression` error for this codec at `offset` in the compressed bytes.
fn corrupt(what: &'static str, offset: usize) -> FormatError {
    super::corrupt(CODEC, what, offset)
}

/// A `LimitExceeded` error at `offset`: a frame asks for a window of `requested` bytes.
fn window_too_large(requested: u64, limit: u64, offset: usize) -> FormatError {
    let what = Limit::ZstdWindow;
    let kind = FormatErrorKind::LimitExceeded {
        what,
        requested,
        limit,
    };
    FormatError::new(kind).at(offset as u64)
}

/// Decodes the frames of one buffer after another, reusing `ruzstd`'s tables and scratch.
#[derive(Default)]
pub(super) struct ZstdDecoder {
    /// `ruzstd`'s decoder; allocates its tables at the first frame, then reuses them.
    frames: FrameDecoder,
    /// The largest window `frames` has been sized for since it was made.
    window: u64,
}

impl fmt::Debug for ZstdDecoder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("zstd::ZstdDecoder")
            .field("window", &self.window)
            .finish_non_exhaustive()
    }
}

impl ZstdDecoder {
    /// Decodes every frame in `input` into `out`.
    pub(super) fn decompress(&mut self, input: &[u8], out: &mut Output) -> FormatResult<()> {
        let result = super::decode_frames(CODEC, input, MAGIC, TRUNCATED, |at| {
            self.frame(input, at, out)
        });
        if self.window > KEEP_WINDOW {
            *self = ZstdDecoder::default();
        }
        result
    }

    /// Decodes the frame at `frame_at` in `input`, whose magic number has been read, and returns
    /// where the frame ends.
    fn frame(&mut self, input: &[u8], frame_at: usize, out: &mut Output) -> FormatResult<usize> {
        let after_magic = input.get(frame_at.saturating_add(4)..).unwrap_or_default();
        let (header, mut rest) = FrameHeader::parse(after_magic, frame_at)?;
        let limit = DEFAULT_MAX_WINDOW_SIZE;
        if header.window > limit {
            return Err(window_too_large(header.window, limit, frame_at));
        }
        if header.dictionary_id != 0 {
            return Err(super::dictionary_unsupported(CODEC, frame_at));
        }
        let remaining = out.remaining() as u64;
        if header.content_size.is_some_and(|size| size > remaining) {
            return Err(corrupt(
                "frame content size exceeds the declared buffer size",
                frame_at,
            ));
        }
        let (descriptor, window) = window_descriptor(header.window.min(remaining));
        let flags = if header.checksum { CHECKSUM_FLAG } else { 0 };
        let [m0, m1, m2, m3] = MAGIC.to_le_bytes();
        let rewritten = [m0, m1, m2, m3, flags, descriptor];
        self.frames
            .reset(&mut &rewritten[..])
            .map_err(|e| from_ruzstd(&e, frame_at))?;
        self.window = self.window.max(window);
        let max_block = window.min(MAX_BLOCK);

        let frame_start = out.written();
        loop {
            let block_at = input.len().saturating_sub(rest.len());
            check_block(rest, max_block, block_at)?;
            let finished = self
                .frames
                .decode_blocks(&mut rest, BlockDecodingStrategy::UptoBlocks(1))
                .map_err(|e| from_ruzstd(&e, block_at))?;
            drain(&mut self.frames, out, block_at)?;
            if finished {
                break;
            }
        }
        let produced = out.written().saturating_sub(frame_start) as u64;
        if header.content_size.is_some_and(|size| size != produced) {
            return Err(corrupt(
                "frame content size does not match its data",
                frame_at,
            ));
        }
        Ok(input.len().saturating_sub(rest.len()))
    }
}

/// `Content_Checksum_flag` in a frame header descriptor.
const CHECKSUM_FLAG: u8 = 1 << 2;

/// A Zstandard frame header (RFC 8878, section 3.1.1.1).
struct FrameHeader {
    /// `Window_Size`: the frame's content size for a single-segment frame.
    window: u64,
    /// `Frame_Content_Size`, when recorded.
    content_size: Option<u64>,
    /// Whether a 4-byte content checksum follows the last block.
    checksum: bool,
    /// `Dictionary_ID`; 0 when absent.
    dictionary_id: u32,
}

impl FrameHeader {
    /// Reads the frame header after the magic number at the start of `bytes`, of the frame at
    /// `at` in the compressed bytes; returns it with the bytes after it.
    fn parse(bytes: &[u8], at: usize) -> FormatResult<(FrameHeader, &[u8])> {
        let truncated = || corrupt("truncated or invalid frame header", at);
        let (&descriptor, mut rest) = bytes.split_first().ok_or_else(truncated)?;
        if descriptor & RESERVED_FLAG != 0 {
            return Err(corrupt("reserved bit set in frame header", at));
        }
        let single_segment = descriptor & SINGLE_SEGMENT_FLAG != 0;
        let mut take = |n: usize| -> FormatResult<u64> {
            let (field, after) = rest.split_at_checked(n).ok_or_else(truncated)?;
            rest = after;
            Ok(field
                .iter()
                .rev()
                .fold(0u64, |value, byte| value << 8 | u64::from(*byte)))
        };
        let window = if single_segment {
            None
        } else {
            Some(window_size(take(1)?))
        };
        let dictionary_id = match descriptor & 3 {
            0 => 0,
            1 => take(1)?,
            2 => take(2)?,
            _ => take(4)?,
        };
        let content_size = match (descriptor >> 6, single_segment) {
            (0, false) => None,
            (0, true) => Some(take(1)?),
            (1, _) => Some(take(2)? + 256),
            (2, _) => Some(take(4)?),
            _ => Some(take(8)?),
        };
        let header = FrameHeader {
            window: window.or(content_size).unwrap_or(0),
            content_size,
            checksum: descriptor & CHECKSUM_FLAG != 0,
            dictionary_id: u32::try_from(dictionary_id).unwrap_or(u32::MAX),
        };
        Ok((header, rest))
    }
}

/// `Single_Segment_flag` in a frame header descriptor.
const SINGLE_SEGMENT_FLAG: u8 = 1 << 5;

/// The reserved bit of a frame header descriptor, which must be zero.
const RESERVED_FLAG: u8 = 1 << 3;

/// The window a `Window_Descriptor` (a byte) gives: `Exponent` in bits 7-3, `Mantissa` in 2-0.
fn window_size(descriptor: u64) -> u64 {
    let base = 1u64 << (10 + (descriptor >> 3));
    base + base / 8 * (descriptor & 7)
}

/// The smallest `Window_Descriptor` whose window holds `size` bytes, with that window (at
/// least 1 KiB, the smallest there is). `size` is at most 128 MiB here.
fn window_descriptor(size: u64) -> (u8, u64) {
    // Windows grow with their descriptors.
    let fits = (0..=u8::MAX).find(|&descriptor| window_size(descriptor.into()) >= size);
    debug_assert!(fits.is_some(), "a window of {size} bytes");
    let descriptor = fits.unwrap_or(u8::MAX);
    (descriptor, window_size(descriptor.into()))
}

/// Checks the block at the start of `rest` (at `at` in the compressed bytes) before `ruzstd`
/// reads it, so that what it allocates for the block stays within the block's own bytes and
/// `max_block`, the most a block of this frame may produce.
fn check_block(rest: &[u8], max_block: u64, at: usize) -> FormatResult<()> {
    let Some((&[b0, b1, b2], body)) = rest.split_first_chunk::<BLOCK_HEADER_LEN>() else {
        return Err(corrupt("truncated or invalid block header", at));
    };
    let header = u32::from_le_bytes([b0, b1, b2, 0]);
    let size = (header >> 3) as usize;
    let block_type = (header >> 1) & 3;
    let stored = if block_type == RLE_BLOCK { 1 } else { size };
    let Some(content) = body.get(..stored) else {
        return Err(corrupt("truncated or invalid block", at));
    };
    if block_type != COMPRESSED_BLOCK {
        return Ok(());
    }
    let (literals, sequences) = announced(content);
    if literals.is_some_and(|n| n > max_block) {
        return Err(corrupt("literals section is larger than a block", at));
    }
    if sequences.is_some_and(|n| n.saturating_mul(MIN_MATCH) > max_block) {
        return Err(corrupt("more sequences than a block can hold", at));
    }
    Ok(())
}

/// `Block_Type` of an RLE block.
const RLE_BLOCK: u32 = 1;

/// `Block_Type` of a compressed block.
const COMPRESSED_BLOCK: u32 = 2;

/// The literal count (`Regenerated_Size`) and `Number_of_Sequences` a compressed block's
/// `content` announces in its section headers (RFC 8878, sections 3.1.1.3.1.1 and
/// 3.1.1.3.2.1), each `None` where the content is too short to say; `ruzstd` reports those.
fn announced(content: &[u8]) -> (Option<u64>, Option<u64>) {
    let byte = |i: usize| content.get(i).map(|b| u64::from(*b));
    // The header's first five bytes, zero past the end (the length is checked below).
    let [b0, b1, b2, b3, b4] = core::array::from_fn(|i| byte(i).unwrap_or(0));
    let literals_type = b0 & 3;
    // (header length, Regenerated_Size, Compressed_Size for Huffman-coded literals)
    let (header_len, regenerated, compressed) = match (literals_type, (b0 >> 2) & 3) {
        // Raw or RLE literals.
        (0 | 1, 0 | 2) => (1, b0 >> 3, None),
        (0 | 1, 1) => (2, (b0 >> 4) + (b1 << 4), None),
        (0 | 1, _) => (3, (b0 >> 4) + (b1 << 4) + (b2 << 12), None),
        // Compressed or treeless literals.
        (_, 0 | 1) => (
            3,
            (b0 >> 4) + ((b1 & 0x3F) << 4),
            Some((b1 >> 6) + (b2 << 2)),
        ),
        (_, 2) => {
            let regenerated = (b0 >> 4) + (b1 << 4) + ((b2 & 0x3) << 12);
            (4, regenerated, Some((b2 >> 2) + (b3 << 6)))
        }
        (_, _) => {
            let regenerated = (b0 >> 4) + (b1 << 4) + ((b2 & 0x3F) << 12);
            (5, regenerated, Some((b2 >> 6) + (b3 << 2) + (b4 << 10)))
        }
    };
    if (content.len() as u64) < header_len {
        return (None, None);
    }
    let stored = match (literals_type, compressed) {
        (_, Some(compressed)) => compressed,
        (1, None) => 1,
        (_, None) => regenerated,
    };
    let sequences = usize::try_from(header_len + stored).ok().and_then(|at| {
        let s0 = byte(at)?;
        match s0 {
            0..128 => Some(s0),
            128..255 => byte(at + 1).map(|s1| ((s0 - 128) << 8) + s1),
            _ => byte(at + 1)
                .zip(byte(at + 2))
                .map(|(s1, s2)| s1 + (s2 << 8) + 0x7F00),
        }
    });
    (Some(regenerated), sequences)
}

/// Moves everything the decoder can release into `out`, failing if it would pass the declared
/// size.
fn drain(decoder: &mut FrameDecoder, out: &mut Output, block_at: usize) -> FormatResult<()> {
    loop {
        let pending = decoder.can_collect();
        if pending == 0 {
            return Ok(());
        }
        let (_, room) = out.room(pending);
        if room.is_empty() {
            return Err(corrupt(
                "decompressed data is longer than the declared size",
                block_at,
            ));
        }
        let n = decoder
            .read(room)
            .map_err(|_| corrupt("internal decoder buffer error", block_at))?;
        if n == 0 {
            return Ok(());
        }
        out.advance(n);
    }
}

/// Maps a `ruzstd` error at `offset` to a format error.
fn from_ruzstd(e: &FrameDecoderError, offset: usize) -> FormatError {
    use FrameDecoderError as E;
    let what = match e {
        E::ReadFrameHeaderError(ReadFrameHeaderError::BadMagicNumber(_)) => {
            "bad frame magic number"
        }
        E::ReadFrameHeaderError(_) | E::FrameHeaderError(_) | E::FailedToInitialize(_) => {
            "truncated or invalid frame header"
        }
        E::WindowSizeTooBig { requested, max } => {
            return window_too_large(*requested, *max, offset);
        }
        E::DictNotProvided { .. } | E::DictionaryDecodeError(_) => {
            return super::dictionary_unsupported(CODEC, offset);
        }
        E::FailedToReadBlockHeader(_) => "truncated or invalid block header",
        E::FailedToReadBlockBody(_) => "truncated or invalid block",
        E::FailedToReadChecksum(_) => "truncated content checksum",
        _ => "invalid frame",
    };
    corrupt(what, offset)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;
    use crate::compression::test_data::{self, noise, phrases, prefixed, text};
    use crate::compression::{DEFAULT_DECOMPRESSION_LIMIT, Decompressor, decompress_buffer};
    use alloc::vec::Vec;
    use ruzstd::encoding::{CompressionLevel, compress_to_vec};

    fn decode(declared: usize, frame: &[u8]) -> FormatResult<Vec<u8>> {
        test_data::decode(CODEC, declared, frame)
    }

    fn corrupt_as(declared: usize, frame: &[u8], what: &str) -> FormatError {
        test_data::corrupt_as(CODEC, declared, frame, what)
    }

    fn fastest(input: &[u8]) -> Vec<u8> {
        compress_to_vec(input, CompressionLevel::Fastest)
    }

    /// Frames written by the reference `zstd` command-line tool (v1.5.4).
    mod reference {
        /// `zstd -19 --check` on `hello hello hello hello hello hello\n`: content size, checksum.
        pub const HELLO: &[u8] = &[
            0x28, 0xb5, 0x2f, 0xfd, 0x24, 0x24, 0x6d, 0x00, 0x00, 0x38, 0x68, 0x65, 0x6c, 0x6c,
            0x6f, 0x20, 0x0a, 0x01, 0x00, 0xb9, 0x4b, 0x11, 0x6b, 0x1f, 0x08, 0x67,
        ];
        /// `zstd -19 --check` on `phrases(5000, 7)`: one compressed block.
        pub const TEXT_5000: &[u8] = &[
            0x28, 0xb5, 0x2f, 0xfd, 0x64, 0x88, 0x12, 0x25, 0x03, 0x00, 0x24, 0x03, 0x71, 0x75,
            0x69, 0x76, 0x65, 0x72, 0x20, 0x72, 0x65, 0x61, 0x64, 0x73, 0x20, 0x61, 0x72, 0x72,
            0x6f, 0x77, 0x20, 0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a,
            0x0b, 0x0c, 0x0d, 0x0e, 0x0f, 0x10, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18,
            0x19, 0x1a, 0x1b, 0x1c, 0x1d, 0x1e, 0x20, 0xa8, 0x31, 0xf4, 0xfd, 0xcf, 0xe0, 0xe7,
            0x31, 0x04, 0xff, 0xff, 0xff, 0xfb, 0x03, 0x93, 0x4e, 0xa7, 0xd3, 0xe9, 0x74, 0x3a,
            0x9d, 0x8e, 0x4e, 0xa7, 0xd3, 0xe9, 0x74, 0x3a, 0x9d, 0x8e, 0x0e, 0x9d, 0x4e, 0xa7,
            0xd3, 0xe9, 0x74, 0x3a, 0x9d, 0x8e, 0xc2, 0x1a, 0x15, 0xcb, 0xba, 0xd4, 0x69, 0x94,
            0x46, 0x74,
        ];
        /// `zstd -19 --check` on `phrases(140_000, 500)`: two blocks, content size recorded.
        pub const REPEATS_140000: &[u8] = &[
            0x28, 0xb5, 0x2f, 0xfd, 0xa4, 0xe0, 0x22, 0x02, 0x00, 0x6c, 0x02, 0x00, 0x24, 0x02,
            0x71, 0x75, 0x69, 0x76, 0x65, 0x72, 0x20, 0x72, 0x65, 0x61, 0x64, 0x73, 0x20, 0x61,
            0x72, 0x72, 0x6f, 0x77, 0x20, 0x00, 0x00, 0x00, 0x00, 0x01, 0x02, 0x03, 0x04, 0x05,
            0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b, 0x0c, 0xa8, 0x10, 0xf0, 0xfa, 0xbf, 0x03, 0xe0,
            0xe5, 0x01, 0x10, 0xfe, 0xff, 0xff, 0x7f, 0xc9, 0x07, 0xc5, 0x81, 0xce, 0xd0, 0x19,
            0x3a, 0x43, 0x67, 0xe8, 0x0c, 0x9d, 0x41, 0x67, 0xa0, 0x33, 0x74, 0x86, 0xce, 0x80,
            0xe5, 0x4c, 0xe9, 0xde, 0x01, 0x65, 0x00, 0x00, 0x08, 0x0c, 0x02, 0x30, 0xb9, 0xe3,
            0x17, 0x90, 0xd5, 0x5e, 0x02, 0x01, 0x7e, 0x54, 0x9b, 0x43,
        ];
        /// `zstd -3 --check` streaming from stdin on `phrases(140_000, 500)`: no content size,
        /// a 2 MiB window (what a streaming encoder such as arrow-rs's writes).
        pub const REPEATS_140000_STREAMED: &[u8] = &[
            0x28, 0xb5, 0x2f, 0xfd, 0x04, 0x58, 0x94, 0x02, 0x00, 0x24, 0x02, 0x71, 0x75, 0x69,
            0x76, 0x65, 0x72, 0x20, 0x72, 0x65, 0x61, 0x64, 0x73, 0x20, 0x61, 0x72, 0x72, 0x6f,
            0x77, 0x20, 0x00, 0x00, 0x00, 0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08,
            0x09, 0x0a, 0x0b, 0x0c, 0x00, 0xc5, 0x01, 0x7a, 0x41, 0x67, 0x80, 0x3f, 0x74, 0x06,
            0x78, 0x86, 0xce, 0x00, 0x2f, 0xe8, 0x0c, 0xf0, 0x87, 0xce, 0x00, 0xcf, 0xd0, 0x19,
            0xe0, 0x05, 0x9d, 0x01, 0xfe, 0xd0, 0x19, 0xe0, 0x19, 0x3a, 0x03, 0xbc, 0xa0, 0x33,
            0xc0, 0xdf, 0xe5, 0x4c, 0xf9, 0xd9, 0x04, 0x65, 0x00, 0x00, 0x10, 0x20, 0x0c, 0x02,
            0x00, 0xb9, 0x83, 0x5f, 0x3e, 0xb6, 0x07, 0x57, 0x7e, 0x54, 0x9b, 0x43,
        ];
    }

    #[test]
    fn round_trips_frames_from_ruzstd() {
        let inputs = test_data::inputs(usize::MAX);
        for level in [CompressionLevel::Uncompressed, CompressionLevel::Fastest] {
            for input in &inputs {
                let frame = compress_to_vec(input.as_slice(), level);
                let decoded = decode(input.len(), &frame)
                    .unwrap_or_else(|e| panic!("{level:?}, {} bytes: {e}", input.len()));
                assert!(decoded == *input, "{level:?}, {} bytes", input.len());
            }
        }
    }

    #[test]
    fn decodes_reference_frame() {
        for (frame, expected) in [
            (
                reference::HELLO,
                b"hello hello hello hello hello hello\n".to_vec(),
            ),
            (reference::TEXT_5000, phrases(5000, 7)),
            (reference::REPEATS_140000, phrases(140_000, 500)),
            (reference::REPEATS_140000_STREAMED, phrases(140_000, 500)),
        ] {
            assert_eq!(decode(expected.len(), frame).unwrap(), expected);
        }
    }

    #[test]
    fn reference_frames_cut_or_declared_wrong_are_errors() {
        for (frame, n) in [
            (reference::TEXT_5000, 5000),
            (reference::REPEATS_140000, 140_000),
            (reference::REPEATS_140000_STREAMED, 140_000),
        ] {
            test_data::declared_size_must_match(CODEC, n, frame, None);
            test_data::every_cut_is_an_error(CODEC, n, frame);
        }
        let what = "frame content size exceeds the declared buffer size";
        corrupt_as(139_999, reference::REPEATS_140000, what);
        let what = "decompressed data is longer than the declared size";
        corrupt_as(139_999, reference::REPEATS_140000_STREAMED, what);
    }

    #[test]
    fn truncation_at_every_position_is_an_error() {
        for input in [text(5000), noise(3000, 1)] {
            test_data::every_cut_is_an_error(CODEC, input.len(), &fastest(&input));
        }
    }

    #[test]
    fn corrupted_bytes_never_panic() {
        let input = text(3000);
        let frame = fastest(&input);
        for i in 0..frame.len() {
            for flip in [0x01, 0x80, 0xff] {
                let mut bad = frame.clone();
                bad[i] ^= flip;
                if let Ok(out) = decode(input.len(), &bad) {
                    assert_eq!(out.len(), input.len());
                }
            }
        }
    }

    #[test]
    fn declared_size_must_match_the_data() {
        for input in [text(100), text(300_000), noise(1000, 9)] {
            test_data::declared_size_must_match(CODEC, input.len(), &fastest(&input), None);
        }
        // 1 MiB of zeros packs into a few bytes; declaring 10 must fail without producing it all.
        let zeros = fastest(&alloc::vec![0; 1 << 20]);
        test_data::assert_any_corrupt(&decode(10, &zeros).unwrap_err());
    }

    #[test]
    fn concatenated_skippable_and_bad_frames() {
        let (a, b) = (text(1000), noise(500, 5));
        let frame_b = compress_to_vec(b.as_slice(), CompressionLevel::Uncompressed);
        test_data::frame_walk(CODEC, (&a, &fastest(&a)), (&b, &frame_b), TRUNCATED);
    }

    #[test]
    fn window_above_the_maximum_is_a_limit() {
        // Frame header: magic, descriptor 0 (no single segment, no checksum, no content size),
        // window descriptor with exponent 31 (2 GiB window), then a last empty raw block.
        let frame = [0x28, 0xb5, 0x2f, 0xfd, 0x00, 0xa8, 0x01, 0x00, 0x00];
        let err = decode(0, &frame).unwrap_err();
        assert!(
            matches!(
                err.kind,
                FormatErrorKind::LimitExceeded {
                    limit: ruzstd::decoding::DEFAULT_MAX_WINDOW_SIZE,
                    ..
                }
            ),
            "{err:?}"
        );
    }

    /// A frame with a 128 MiB window, no content size and no checksum, then `block`.
    fn greedy(block: &[u8]) -> Vec<u8> {
        [&[0x28, 0xb5, 0x2f, 0xfd, 0x00, 0x88][..], block].concat()
    }

    #[test]
    fn headers_asking_for_more_than_the_buffer_are_refused_before_decoding() {
        // The window is cut to the declared size: the frame decodes (to too few bytes).
        let what = "decompressed data is shorter than the declared size";
        corrupt_as(1000, &greedy(&[0x01, 0x00, 0x00]), what);
        let cases: [(&[u8], &str); 3] = [
            // RLE literals of 0xFFFFF bytes.
            (
                &[0x2D, 0x00, 0x00, 0xFD, 0xFF, 0xFF, b'a', 0x00],
                "literals section is larger than a block",
            ),
            // 98,047 sequences of RLE codes.
            (
                &[
                    0x4D, 0x00, 0x00, 0x00, 0xFF, 0xFF, 0xFF, 0x54, 0x00, 0x00, 0x00, 0x01,
                ],
                "more sequences than a block can hold",
            ),
            // A compressed block of 131,071 bytes, 3 of them present.
            (
                &[0xFD, 0xFF, 0x0F, 0x00, 0x00, 0x00],
                "truncated or invalid block",
            ),
        ];
        for (block, what) in cases {
            let err = corrupt_as(1000, &greedy(block), what);
            assert_eq!(err.offset(), Some(8 + 6), "{what}");
        }
    }

    #[test]
    fn window_descriptors_round_up() {
        for (size, expected) in [
            (0, (0x00, 1024)),
            (1024, (0x00, 1024)),
            (1025, (0x01, 1152)),
            (2048, (0x08, 2048)),
            (140_000, (0x39, 147_456)),
            (128 << 20, (0x88, 128 << 20)),
        ] {
            assert_eq!(window_descriptor(size), expected, "{size}");
        }
    }

    #[test]
    fn announced_section_sizes() {
        // Raw literals, 5-bit size 3, then 2 sequences.
        assert_eq!(
            announced(&[0x18, b'a', b'b', b'c', 0x02, 0x00]),
            (Some(3), Some(2))
        );
        // Compressed literals, 10-bit sizes (regenerated 33, compressed 1), 300 sequences.
        assert_eq!(
            announced(&[0x12, 0x42, 0x00, 0xAA, 0x81, 0x2C, 0x00]),
            (Some(33), Some(300))
        );
        assert_eq!(announced(&[]), (None, None));
        assert_eq!(announced(&[0x18, b'a']), (Some(3), None));
    }

    #[test]
    fn recorded_content_size_must_match_even_when_zero() {
        // Single segment, 1-byte content size 0, then a last raw block holding one byte.
        let frame = [0x28, 0xb5, 0x2f, 0xfd, 0x20, 0x00, 0x09, 0x00, 0x00, b'x'];
        corrupt_as(1, &frame, "frame content size does not match its data");
        let mut reserved = reference::HELLO.to_vec();
        reserved[4] |= 1 << 3;
        corrupt_as(36, &reserved, "reserved bit set in frame header");
    }

    #[test]
    fn one_decompressor_decodes_buffers_as_fresh_ones_do() {
        let mut buffers: Vec<(usize, Vec<u8>)> = alloc::vec![
            (36, reference::HELLO.to_vec()),
            (140_000, reference::REPEATS_140000_STREAMED.to_vec()),
            (1000, greedy(&[0x01, 0x00, 0x00])),
            (5000, reference::TEXT_5000.to_vec()),
            (140_000, reference::REPEATS_140000.to_vec()),
        ];
        for input in [text(300_000), noise(1000, 3), text(50)] {
            buffers.push((input.len(), fastest(&input)));
        }
        let mut reused = Decompressor::new();
        for (declared, frame) in &buffers {
            let buf = prefixed(*declared as i64, frame);
            let fresh = decompress_buffer(CODEC, &buf, DEFAULT_DECOMPRESSION_LIMIT);
            let again = reused.decompress(CODEC, &buf, DEFAULT_DECOMPRESSION_LIMIT);
            assert_eq!(fresh, again, "{declared} bytes");
        }
    }
}
