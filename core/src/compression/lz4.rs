//! LZ4 frame decoding (`LZ4_FRAME`), written against the LZ4 frame format specification.
//!
//! It uses the shared output and errors of `compression` and, of the crate, the codec and the
//! errors; `lz4_flex` and `twox-hash` do the block decoding and checksums.
//!
//! Compressed bytes enter as one slice holding one or more frames (skippable frames are passed
//! over); decompressed bytes leave through the caller's [`Output`], which refuses to grow past
//! the buffer's declared size. The frame container (header, block sizes, checksums) is parsed
//! here; each block's LZ4 sequences are decoded by `lz4_flex`'s block decoder, with the previous
//! 64 KiB of the frame's output as dictionary when blocks are linked.
//!
//! Every header flag, size and checksum in the frame is checked; error offsets are relative to
//! the start of the compressed bytes.

use crate::datatype::CompressionCodec;
use twox_hash::XxHash32;

use super::Output;
use crate::error::{FormatError, FormatResult};

/// The codec's name in errors, as `Message.fbs` spells it.
const CODEC: CompressionCodec = CompressionCodec::Lz4Frame;

/// How this codec words input that ends inside a magic number, and inside a skippable frame's
/// size.
const TRUNCATED: [&str; 2] = [
    "truncated frame magic number",
    "truncated skippable frame size",
];

/// Magic number opening an LZ4 frame.
pub(super) const FRAME_MAGIC: u32 = 0x184D_2204;

/// FLG bits 7-6: format version, which must be `01`.
const FLG_VERSION_MASK: u8 = 0b1100_0000;
/// The only version this decoder (and the specification) knows.
pub(super) const FLG_VERSION_01: u8 = 0b0100_0000;
/// FLG bit 5: blocks are independent (no matches into earlier blocks).
pub(super) const FLG_BLOCK_INDEPENDENCE: u8 = 1 << 5;
/// FLG bit 4: each block is followed by its xxHash32.
const FLG_BLOCK_CHECKSUM: u8 = 1 << 4;
/// FLG bit 3: the header holds the 8-byte content size.
pub(super) const FLG_CONTENT_SIZE: u8 = 1 << 3;
/// FLG bit 2: the frame ends with the xxHash32 of its content.
pub(super) const FLG_CONTENT_CHECKSUM: u8 = 1 << 2;
/// FLG bit 1: reserved, must be zero.
const FLG_RESERVED: u8 = 1 << 1;
/// FLG bit 0: the header holds a 4-byte dictionary id.
const FLG_DICT_ID: u8 = 1;

/// BD bits 6-4: block maximum size code.
pub(super) const BD_BLOCK_MAX_SHIFT: u8 = 4;
/// BD bits 7 and 3-0: reserved, must be zero.
const BD_RESERVED: u8 = 0b1000_1111;

/// High bit of a block size: the block is stored uncompressed.
pub(super) const BLOCK_UNCOMPRESSED: u32 = 1 << 31;

/// How far back an LZ4 match can reach, so how much earlier output a linked block can use.
const WINDOW: usize = 64 * 1024;

/// The block maximum size that a BD block maximum size code of 4 to 7 stands for: 64 KiB,
/// 256 KiB, 1 MiB or 4 MiB.
pub(super) fn block_max(code: u8) -> usize {
    1 << (8 + 2 * code)
}

/// The header checksum over a frame `descriptor` (FLG up to the last optional field): the
/// second byte of its xxHash32.
pub(super) fn header_checksum(descriptor: &[u8]) -> u8 {
    ((XxHash32::oneshot(0, descriptor) >> 8) & 0xFF) as u8
}

/// A `Decompression` error for this codec at `offset` in the compressed bytes.
fn corrupt(what: &'static str, offset: usize) -> FormatError {
    super::corrupt(CODEC, what, offset)
}

/// Decodes every frame in `input` into `out`.
pub(super) fn decompress(input: &[u8], out: &mut Output) -> FormatResult<()> {
    super::decode_frames(CODEC, input, FRAME_MAGIC, TRUNCATED, |at| {
        let pos = at.saturating_add(4); // after the magic number
        let mut cursor = FrameReader { input, pos };
        decode_frame(&mut cursor, out)?;
        Ok(cursor.pos)
    })
}

/// Decodes one frame whose magic number has just been read.
fn decode_frame(cursor: &mut FrameReader<'_>, out: &mut Output) -> FormatResult<()> {
    let descriptor_at = cursor.pos;
    let flg = cursor.u8("truncated frame descriptor")?;
    let bd = cursor.u8("truncated frame descriptor")?;
    if flg & FLG_VERSION_MASK != FLG_VERSION_01 {
        return Err(corrupt("unknown frame version", descriptor_at));
    }
    if flg & FLG_RESERVED != 0 || bd & BD_RESERVED != 0 {
        return Err(corrupt("reserved frame descriptor bit set", descriptor_at));
    }
    let block_max = match bd >> BD_BLOCK_MAX_SHIFT {
        code @ 4..=7 => block_max(code),
        _ => return Err(corrupt("invalid block maximum size", descriptor_at)),
    };
    let content_size = if flg & FLG_CONTENT_SIZE != 0 {
        Some(cursor.u64("truncated frame descriptor")?)
    } else {
        None
    };
    let has_dict_id = flg & FLG_DICT_ID != 0;
    if has_dict_id {
        cursor.u32("truncated frame descriptor")?;
    }
    let descriptor = cursor.since(descriptor_at);
    let checksum_at = cursor.pos;
    if cursor.u8("truncated frame descriptor")? != header_checksum(descriptor) {
        return Err(corrupt("frame header checksum mismatch", checksum_at));
    }
    if has_dict_id {
        return Err(super::dictionary_unsupported(CODEC, descriptor_at));
    }
    if content_size.is_some_and(|size| size > out.remaining() as u64) {
        return Err(corrupt(
            "frame content size exceeds the declared buffer size",
            descriptor_at,
        ));
    }

    let frame_start = out.written();
    let linked = flg & FLG_BLOCK_INDEPENDENCE == 0;
    loop {
        let block_at = cursor.pos;
        let size = cursor.u32("truncated block size")?;
        if size == 0 {
            break;
        }
        let stored = size & BLOCK_UNCOMPRESSED != 0;
        let len = usize::try_from(size & !BLOCK_UNCOMPRESSED).unwrap_or(usize::MAX);
        if len > block_max {
            return Err(corrupt(
                "block larger than the frame's block maximum size",
                block_at,
            ));
        }
        let data_at = cursor.pos;
        let data = cursor.take(len, "truncated block")?;
        if flg & FLG_BLOCK_CHECKSUM != 0 {
            let checksum = cursor.u32("truncated block checksum")?;
            if XxHash32::oneshot(0, data) != checksum {
                return Err(corrupt("block checksum mismatch", data_at));
            }
        }
        if stored {
            if !out.push(data) {
                return Err(corrupt(
                    "decompressed data is longer than the declared size",
                    data_at,
                ));
            }
        } else {
            decode_block(data, out, block_max, linked.then_some(frame_start))
                .map_err(|what| corrupt(what, data_at))?;
        }
    }

    let content = out.as_slice().get(frame_start..).unwrap_or_default();
    if flg & FLG_CONTENT_CHECKSUM != 0 {
        let checksum_at = cursor.pos;
        let checksum = cursor.u32("truncated content checksum")?;
        if XxHash32::oneshot(0, content) != checksum {
            return Err(corrupt("content checksum mismatch", checksum_at));
        }
    }
    if content_size.is_some_and(|size| size != content.len() as u64) {
        return Err(corrupt(
            "frame content size does not match its data",
            descriptor_at,
        ));
    }
    Ok(())
}

/// Decodes one compressed block into `out`, at most `block_max` bytes. `linked_from` is where
/// this frame's output starts when blocks may match into earlier blocks.
fn decode_block(
    data: &[u8],
    out: &mut Output,
    block_max: usize,
    linked_from: Option<usize>,
) -> Result<(), &'static str> {
    let (earlier, room) = out.room(block_max);
    let declared_ends_here = room.len() < block_max;
    let decoded = match linked_from {
        None => lz4_flex::block::decompress_into(data, room),
        Some(frame_start) => {
            let dict_start = frame_start.max(earlier.len().saturating_sub(WINDOW));
            let dict = earlier.get(dict_start..).unwrap_or_default();
            lz4_flex::block::decompress_into_with_dict(data, room, dict)
        }
    };
    match decoded {
        Ok(n) => {
            out.advance(n);
            Ok(())
        }
        Err(lz4_flex::block::DecompressError::OutputTooSmall { .. }) if declared_ends_here => {
            Err("decompressed data is longer than the declared size")
        }
        Err(lz4_flex::block::DecompressError::OutputTooSmall { .. }) => {
            Err("block decompresses to more than the block maximum size")
        }
        Err(_) => Err("invalid compressed block"),
    }
}

/// Reads the frame's fields front to back, refusing to read past the end.
struct FrameReader<'a> {
    /// The whole compressed input.
    input: &'a [u8],
    /// Offset of the next unread byte.
    pos: usize,
}

impl<'a> FrameReader<'a> {
    /// The next `len` bytes, or a `what` error at the current offset if fewer remain.
    fn take(&mut self, len: usize, what: &'static str) -> FormatResult<&'a [u8]> {
        let bytes = self
            .pos
            .checked_add(len)
            .and_then(|end| self.input.get(self.pos..end))
            .ok_or_else(|| corrupt(what, self.pos))?;
        self.pos = self.pos.saturating_add(len);
        Ok(bytes)
    }

    /// The next `N` bytes as an array.
    fn array<const N: usize>(&mut self, what: &'static str) -> FormatResult<[u8; N]> {
        let bytes = self.take(N, what)?;
        bytes.try_into().map_err(|_| corrupt(what, self.pos))
    }

    /// The next byte.
    fn u8(&mut self, what: &'static str) -> FormatResult<u8> {
        self.array::<1>(what).map(|[b]| b)
    }

    /// The next little-endian `u32`.
    fn u32(&mut self, what: &'static str) -> FormatResult<u32> {
        self.array(what).map(u32::from_le_bytes)
    }

    /// The next little-endian `u64`.
    fn u64(&mut self, what: &'static str) -> FormatResult<u64> {
        self.array(what).map(u64::from_le_bytes)
    }

    /// The bytes read since offset `start`.
    fn since(&self, start: usize) -> &'a [u8] {
        self.input.get(start..self.pos).unwrap_or_default()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;
    use crate::compression::test_data::{self, noise, phrases, text};
    use crate::error::FormatErrorKind;
    use alloc::vec;
    use alloc::vec::Vec;
    use lz4_flex::frame::{BlockMode, BlockSize, FrameEncoder, FrameInfo};
    use std::io::Write;

    fn encode(info: &FrameInfo, data: &[u8]) -> Vec<u8> {
        let mut encoder = FrameEncoder::with_frame_info(info.clone(), Vec::new());
        encoder.write_all(data).unwrap();
        encoder.finish().unwrap()
    }

    fn decode(declared: usize, frame: &[u8]) -> FormatResult<Vec<u8>> {
        test_data::decode(CODEC, declared, frame)
    }

    fn corrupt_as(declared: usize, frame: &[u8], what: &str) -> FormatError {
        test_data::corrupt_as(CODEC, declared, frame, what)
    }

    fn infos() -> Vec<FrameInfo> {
        let mut infos = Vec::new();
        for block_size in [
            BlockSize::Max64KB,
            BlockSize::Max256KB,
            BlockSize::Max1MB,
            BlockSize::Max4MB,
        ] {
            for block_mode in [BlockMode::Independent, BlockMode::Linked] {
                for (block_checksums, content_checksum) in
                    [(false, false), (true, false), (false, true), (true, true)]
                {
                    infos.push(
                        FrameInfo::new()
                            .block_size(block_size)
                            .block_mode(block_mode)
                            .block_checksums(block_checksums)
                            .content_checksum(content_checksum),
                    );
                }
            }
        }
        infos
    }

    #[test]
    fn round_trips_frames_from_lz4_flex() {
        let inputs = test_data::inputs(usize::MAX);
        for info in infos() {
            for input in &inputs {
                for with_size in [false, true] {
                    let info = info
                        .clone()
                        .content_size(with_size.then_some(input.len() as u64));
                    let frame = encode(&info, input);
                    let decoded = decode(input.len(), &frame)
                        .unwrap_or_else(|e| panic!("{info:?}, {} bytes: {e}", input.len()));
                    assert!(decoded == *input, "{info:?}, {} bytes", input.len());
                }
            }
        }
    }

    #[test]
    fn linked_blocks_match_into_earlier_blocks() {
        // 48 KiB of noise, three times over, in 64 KiB blocks: the later blocks are mostly
        // matches into earlier ones, which only a decoder that keeps the earlier output as
        // dictionary can resolve.
        let once = noise(48 * 1024, 3);
        let input = [once.as_slice(), &once, &once].concat();
        let info = FrameInfo::new().block_size(BlockSize::Max64KB);
        let linked = encode(&info.clone().block_mode(BlockMode::Linked), &input);
        let independent = encode(&info.block_mode(BlockMode::Independent), &input);
        assert!(
            linked.len() < independent.len() * 3 / 4,
            "blocks were not linked"
        );
        assert_eq!(decode(input.len(), &linked).unwrap(), input);
        assert_eq!(decode(input.len(), &independent).unwrap(), input);
    }

    /// Frames written by the reference `lz4` command-line tool (v1.9.4).
    mod reference {
        /// `lz4 -BD -BX --content-size hello.txt` on `hello hello hello hello hello hello\n`:
        /// block checksums, content size, content checksum, one block.
        pub const HELLO: &[u8] = &[
            0x04, 0x22, 0x4d, 0x18, 0x7c, 0x40, 0x24, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
            0x21, 0x10, 0x00, 0x00, 0x00, 0x6f, 0x68, 0x65, 0x6c, 0x6c, 0x6f, 0x20, 0x06, 0x00,
            0x06, 0x50, 0x65, 0x6c, 0x6c, 0x6f, 0x0a, 0x1f, 0x7a, 0xf8, 0x92, 0x00, 0x00, 0x00,
            0x00, 0x53, 0xce, 0x99, 0x36,
        ];

        /// `lz4 -B4 -BD -BX --content-size` on `phrases(70_000, 500)`: two linked 64 KiB blocks,
        /// the second opening with a match into the first; block and content checksums.
        pub const REPEATS_70000: &[u8] = &[
            0x04, 0x22, 0x4d, 0x18, 0x5c, 0x40, 0x70, 0x11, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00,
            0xe3, 0x4b, 0x01, 0x00, 0x00, 0xff, 0x08, 0x71, 0x75, 0x69, 0x76, 0x65, 0x72, 0x20,
            0x72, 0x65, 0x61, 0x64, 0x73, 0x20, 0x61, 0x72, 0x72, 0x6f, 0x77, 0x20, 0x00, 0x00,
            0x00, 0x00, 0x17, 0x00, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
            0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
            0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
            0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02, 0x1f, 0x01, 0xec, 0x2c, 0x03, 0x0f,
            0x17, 0x00, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
            0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
            0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
            0xff, 0xff, 0xff, 0xff, 0xee, 0x1f, 0x02, 0xec, 0x2c, 0x03, 0x0f, 0x17, 0x00, 0xff,
            0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
            0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
            0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
            0xff, 0xee, 0x1f, 0x03, 0xec, 0x2c, 0x03, 0x0f, 0x17, 0x00, 0xff, 0xff, 0xff, 0xff,
            0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
            0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
            0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xee, 0x1f,
            0x04, 0xec, 0x2c, 0x03, 0x0f, 0x17, 0x00, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
            0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
            0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
            0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xee, 0x1f, 0x05, 0xec, 0x2c,
            0x03, 0x0f, 0x17, 0x00, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
            0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
            0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x41, 0x50, 0x65, 0x72, 0x20, 0x72, 0x65,
            0xe7, 0xf5, 0x79, 0x2d, 0x26, 0x00, 0x00, 0x00, 0x06, 0xf7, 0xff, 0x0f, 0x44, 0x1f,
            0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x8b,
            0x1f, 0x06, 0xec, 0x2c, 0x03, 0x0f, 0x17, 0x00, 0xff, 0xff, 0xff, 0xa9, 0x50, 0x20,
            0x72, 0x65, 0x61, 0x64, 0x0b, 0xb3, 0x71, 0xa8, 0x00, 0x00, 0x00, 0x00, 0x4d, 0x2f,
            0x12, 0xcb,
        ];
    }

    #[test]
    fn decodes_reference_frame() {
        for (frame, expected) in [
            (
                reference::HELLO,
                b"hello hello hello hello hello hello\n".to_vec(),
            ),
            (reference::REPEATS_70000, phrases(70_000, 500)),
        ] {
            assert_eq!(decode(expected.len(), frame).unwrap(), expected);
        }
    }

    fn checked_frame(input: &[u8]) -> Vec<u8> {
        let info = FrameInfo::new()
            .block_size(BlockSize::Max64KB)
            .block_checksums(true)
            .content_checksum(true)
            .content_size(Some(input.len() as u64));
        encode(&info, input)
    }

    #[test]
    fn bad_checksums_are_corrupt() {
        let input = text(1000);
        let frame = checked_frame(&input);
        let last = frame.len() - 1;
        // Header: magic, FLG, BD, 8-byte content size (at 6, changed under the checksum),
        // checksum at 14. One block: its size at 15..19, data (a flip there fails the block
        // checksum, checked first), the block checksum, the end mark, the content checksum.
        for (at, flip, what, reported_at) in [
            (14, 0xff, "frame header checksum mismatch", 14),
            (6, 1, "frame header checksum mismatch", 14),
            (20, 0x10, "block checksum mismatch", 19),
            (last - 4 - 4 - 3, 1, "block checksum mismatch", 19),
            (last, 1, "content checksum mismatch", last - 3),
        ] {
            let mut bad = frame.clone();
            bad[at] ^= flip;
            let err = corrupt_as(input.len(), &bad, what);
            assert_eq!(err.offset(), Some(8 + reported_at as u64), "{what}");
        }
    }

    /// Rewrites a frame's descriptor byte and fixes the header checksum, so the decoder gets as
    /// far as checking what the byte means.
    fn with_descriptor(frame: &[u8], index: usize, value: u8) -> Vec<u8> {
        let mut frame = frame.to_vec();
        frame[index] = value;
        let flg = frame[4];
        let end = 6
            + if flg & FLG_CONTENT_SIZE != 0 { 8 } else { 0 }
            + if flg & FLG_DICT_ID != 0 { 4 } else { 0 };
        frame[end] = header_checksum(&frame[4..end]);
        frame
    }

    #[test]
    fn bad_descriptor_bits_are_corrupt() {
        let input = text(1000);
        let frame = checked_frame(&input);
        let (flg, bd) = (frame[4], frame[5]);
        for (index, value, what) in [
            (4, flg & !FLG_VERSION_MASK, "unknown frame version"),
            (4, flg | FLG_VERSION_MASK, "unknown frame version"),
            (4, flg | FLG_RESERVED, "reserved frame descriptor bit set"),
            (5, bd | 0x80, "reserved frame descriptor bit set"),
            (5, bd | 0x01, "reserved frame descriptor bit set"),
            (5, 0x30, "invalid block maximum size"),
            (5, 0x00, "invalid block maximum size"),
        ] {
            corrupt_as(input.len(), &with_descriptor(&frame, index, value), what);
        }
    }

    /// A frame header with descriptor bytes `flg`, `bd`, optional `fields`, and its checksum.
    fn header(flg: u8, bd: u8, fields: &[u8]) -> Vec<u8> {
        let mut frame = FRAME_MAGIC.to_le_bytes().to_vec();
        frame.extend_from_slice(&[flg, bd]);
        frame.extend_from_slice(fields);
        frame.push(header_checksum(&frame[4..]));
        frame
    }

    /// A frame of independent blocks with block maximum size code `bd` holding one block: its
    /// `size` field, then `data`.
    fn one_block(bd: u8, size: u32, data: &[u8]) -> Vec<u8> {
        let header = header(FLG_VERSION_01 | FLG_BLOCK_INDEPENDENCE, bd, &[]);
        [&header[..], &size.to_le_bytes(), data, &[0; 4]].concat()
    }

    #[test]
    fn dictionary_id_is_unsupported() {
        // An empty frame whose header carries a dictionary id.
        let mut frame = header(FLG_VERSION_01 | FLG_DICT_ID, 0x40, &[1, 2, 3, 4]);
        frame.extend_from_slice(&[0, 0, 0, 0]);
        let err = decode(0, &frame).unwrap_err();
        assert!(
            matches!(err.kind, FormatErrorKind::Unsupported { .. }),
            "{err:?}"
        );
    }

    #[test]
    fn truncation_at_every_position_is_an_error() {
        let input = text(5000);
        for info in [
            FrameInfo::new()
                .block_checksums(true)
                .content_checksum(true)
                .content_size(Some(5000)),
            FrameInfo::new().block_mode(BlockMode::Linked),
        ] {
            test_data::every_cut_is_an_error(CODEC, input.len(), &encode(&info, &input));
        }
    }

    #[test]
    fn every_corrupted_byte_is_an_error_or_harmless() {
        // Flipping any byte of a fully checksummed frame must be caught.
        let input = text(3000);
        let frame = checked_frame(&input);
        for i in 0..frame.len() {
            for flip in [0x01, 0x80, 0xff] {
                let mut bad = frame.clone();
                bad[i] ^= flip;
                assert!(decode(input.len(), &bad).is_err(), "byte {i} ^ {flip:#x}");
            }
        }
        // Without checksums a flip may decode to other bytes, but must never panic.
        let plain = encode(&FrameInfo::new().block_mode(BlockMode::Linked), &input);
        for i in 0..plain.len() {
            let mut bad = plain.clone();
            bad[i] ^= 0x5a;
            let _ = decode(input.len(), &bad);
        }
    }

    #[test]
    fn block_above_maximum_size_is_corrupt() {
        // Independent blocks of at most 64 KiB; one stored block of 64 KiB + 1 bytes.
        let frame = one_block(
            0x40,
            BLOCK_UNCOMPRESSED | (64 * 1024 + 1),
            &[0; 64 * 1024 + 1],
        );
        let what = "block larger than the frame's block maximum size";
        corrupt_as(64 * 1024 + 1, &frame, what);
        // Exactly 64 KiB is fine.
        let ok = one_block(0x40, BLOCK_UNCOMPRESSED | (64 * 1024), &[7; 64 * 1024]);
        assert_eq!(decode(64 * 1024, &ok).unwrap(), [7; 64 * 1024]);
    }

    #[test]
    fn compressed_block_decoding_past_the_block_maximum_is_corrupt() {
        // One compressed block: literal "a", then a match of 70 000 bytes at offset 1, more than
        // the 64 KiB block maximum (token 0x1F, extra match length in 255-steps).
        let mut block = vec![0x1f, b'a', 1, 0];
        let mut extra = 70_000 - 4 - 15;
        while extra >= 255 {
            block.push(255);
            extra -= 255;
        }
        block.push(extra as u8);
        block.extend_from_slice(&[0x50, b'b', b'b', b'b', b'b', b'b']);
        let frame = one_block(0x40, block.len() as u32, &block);
        let what = "block decompresses to more than the block maximum size";
        corrupt_as(70_006, &frame, what);
        // The same block in a frame with 256 KiB blocks decodes.
        let out = decode(70_006, &one_block(0x50, block.len() as u32, &block)).unwrap();
        assert!(out[..70_001].iter().all(|&b| b == b'a') && out.ends_with(b"bbbbb"));
    }

    #[test]
    fn declared_size_must_match_the_data() {
        for input in [text(100), text(200_000), noise(1000, 9)] {
            for (content_size, longer) in [
                (None, "decompressed data is longer than the declared size"),
                (
                    Some(input.len() as u64),
                    "frame content size exceeds the declared buffer size",
                ),
            ] {
                let frame = encode(&FrameInfo::new().content_size(content_size), &input);
                test_data::declared_size_must_match(CODEC, input.len(), &frame, Some(longer));
            }
        }
    }

    #[test]
    fn content_size_field_must_match_the_frame() {
        let input = text(1000);
        let frame = checked_frame(&input);
        // Claim 999 bytes in the header (checksum fixed): the data says 1000. Claim more than
        // the declared buffer size: refused before decoding.
        for (claim, what) in [
            (999, "frame content size does not match its data"),
            (
                u64::MAX,
                "frame content size exceeds the declared buffer size",
            ),
        ] {
            let mut bad = frame.clone();
            bad[6..14].copy_from_slice(&claim.to_le_bytes());
            corrupt_as(input.len(), &with_descriptor(&bad, 4, bad[4]), what);
        }
    }

    #[test]
    fn concatenated_skippable_and_bad_frames() {
        let (a, b) = (text(1000), noise(500, 5));
        let frame_a = encode(&FrameInfo::new(), &a);
        let frame_b = encode(&FrameInfo::new().content_checksum(true), &b);
        test_data::frame_walk(CODEC, (&a, &frame_a), (&b, &frame_b), TRUNCATED);
    }
}
