//! Zstandard decoding (`ZSTD`), through `ruzstd`'s frame decoder (pure Rust, no_std).
//!
//! Compressed bytes enter as one slice holding one or more frames (skippable frames are passed
//! over); decompressed bytes leave through the caller's [`Output`], which refuses to grow past
//! the buffer's declared size. Blocks are decoded one at a time and drained into the output at
//! once, so the decoder holds at most its window plus one block, and data beyond the declared size
//! is caught as soon as it appears.
//!
//! The decoder accepts windows up to `ruzstd`'s default maximum of 128 MiB (the same default as
//! the reference library), and allocates the window a frame asks for when the frame starts.
//! Content checksums are read but not verified (`ruzstd` computes them only with its `hash`
//! feature). Error offsets are relative to the start of the compressed bytes, and point at the
//! frame or block being decoded.

use ruzstd::decoding::errors::{FrameDecoderError, ReadFrameHeaderError};
use ruzstd::decoding::{BlockDecodingStrategy, FrameDecoder};
use ruzstd::io::Read;

use super::Output;
use crate::error::{FormatError, FormatErrorKind, FormatResult};

/// The codec's name in errors, as `Message.fbs` spells it.
const CODEC: &str = "ZSTD";

/// A `Decompression` error for this codec at `offset` in the compressed bytes.
fn corrupt(what: &'static str, offset: usize) -> FormatError {
    FormatError::new(FormatErrorKind::Decompression { codec: CODEC, what }).at(offset as u64)
}

/// Decodes every frame in `input` into `out`.
pub(super) fn decompress(input: &[u8], out: &mut Output) -> FormatResult<()> {
    if input.is_empty() {
        return Err(corrupt("no frame in compressed buffer", 0));
    }
    let mut decoder = FrameDecoder::new();
    let mut rest = input;
    while !rest.is_empty() {
        let frame_at = input.len().saturating_sub(rest.len());
        match decoder.reset(&mut rest) {
            Ok(()) => {}
            Err(FrameDecoderError::ReadFrameHeaderError(ReadFrameHeaderError::SkipFrame {
                length,
                ..
            })) => {
                let length = usize::try_from(length).unwrap_or(usize::MAX);
                rest = rest
                    .get(length..)
                    .ok_or_else(|| corrupt("truncated skippable frame", frame_at))?;
                continue;
            }
            Err(e) => return Err(from_ruzstd(&e, frame_at)),
        }
        // Zero means "not recorded" as well as "empty"; only a recorded size can be checked.
        let content_size = decoder.content_size();
        if content_size > out.remaining() as u64 {
            return Err(corrupt(
                "frame content size exceeds the declared buffer size",
                frame_at,
            ));
        }
        let frame_start = out.written();
        loop {
            let block_at = input.len().saturating_sub(rest.len());
            let finished = decoder
                .decode_blocks(&mut rest, BlockDecodingStrategy::UptoBlocks(1))
                .map_err(|e| from_ruzstd(&e, block_at))?;
            drain(&mut decoder, out, block_at)?;
            if finished {
                break;
            }
        }
        let produced = out.written().saturating_sub(frame_start) as u64;
        if content_size != 0 && produced != content_size {
            return Err(corrupt(
                "frame content size does not match its data",
                frame_at,
            ));
        }
    }
    Ok(())
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
            return FormatError::new(FormatErrorKind::LimitExceeded {
                what: "ZSTD frame window size",
                requested: *requested,
                limit: *max,
            })
            .at(offset as u64);
        }
        E::DictNotProvided { .. } | E::DictionaryDecodeError(_) => {
            return FormatError::new(FormatErrorKind::Unsupported {
                what: "ZSTD dictionary (dictionary id in frame header)",
            })
            .at(offset as u64);
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
    use crate::compression::test_data::{noise, phrases, text};
    use crate::compression::{Decompressed, decompress_buffer};
    use crate::datatype::CompressionCodec;
    use alloc::vec::Vec;
    use ruzstd::encoding::{CompressionLevel, compress_to_vec};

    const LIMIT: u64 = 1 << 30;

    fn decode(declared: usize, frame: &[u8]) -> FormatResult<Vec<u8>> {
        let mut buf = (declared as i64).to_le_bytes().to_vec();
        buf.extend_from_slice(frame);
        match decompress_buffer(CompressionCodec::Zstd, &buf, LIMIT)? {
            Decompressed::Owned(v) => Ok(v),
            Decompressed::Borrowed(_) => panic!("compressed buffer came back borrowed"),
        }
    }

    fn decode_err(declared: usize, frame: &[u8]) -> FormatError {
        decode(declared, frame).expect_err("corrupt frame decoded")
    }

    fn assert_corrupt(err: &FormatError, what: &str) {
        match &err.kind {
            FormatErrorKind::Decompression { codec, what: w } => {
                assert_eq!(*codec, CODEC);
                assert_eq!(*w, what, "{err}");
            }
            other => panic!("expected Decompression({what}), got {other:?}"),
        }
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
        let inputs = [
            Vec::new(),
            b"a".to_vec(),
            text(100),
            text(70_000),
            text(300_000),
            text(1_500_000),
            noise(200_000, 7),
        ];
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
        let expected = b"hello hello hello hello hello hello\n";
        assert_eq!(decode(expected.len(), reference::HELLO).unwrap(), expected);
        let expected = phrases(5000, 7);
        assert_eq!(decode(5000, reference::TEXT_5000).unwrap(), expected);
        let expected = phrases(140_000, 500);
        assert_eq!(
            decode(140_000, reference::REPEATS_140000).unwrap(),
            expected
        );
        assert_eq!(
            decode(140_000, reference::REPEATS_140000_STREAMED).unwrap(),
            expected
        );
    }

    #[test]
    fn reference_frames_cut_or_declared_wrong_are_errors() {
        for (frame, n) in [
            (reference::TEXT_5000, 5000),
            (reference::REPEATS_140000, 140_000),
            (reference::REPEATS_140000_STREAMED, 140_000),
        ] {
            assert_corrupt(
                &decode_err(n + 1, frame),
                "decompressed data is shorter than the declared size",
            );
            for len in 0..frame.len() {
                assert!(decode(n, &frame[..len]).is_err(), "cut at {len}");
            }
        }
        let err = decode_err(139_999, reference::REPEATS_140000);
        assert_corrupt(&err, "frame content size exceeds the declared buffer size");
        let err = decode_err(139_999, reference::REPEATS_140000_STREAMED);
        assert_corrupt(&err, "decompressed data is longer than the declared size");
    }

    #[test]
    fn truncation_at_every_position_is_an_error() {
        for input in [text(5000), noise(3000, 1)] {
            let frame = compress_to_vec(input.as_slice(), CompressionLevel::Fastest);
            for len in 0..frame.len() {
                let err = decode_err(input.len(), &frame[..len]);
                assert!(
                    matches!(err.kind, FormatErrorKind::Decompression { .. }),
                    "cut at {len}: {err:?}"
                );
            }
        }
    }

    #[test]
    fn corrupted_bytes_never_panic() {
        let input = text(3000);
        let frame = compress_to_vec(input.as_slice(), CompressionLevel::Fastest);
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
    fn bad_magic_is_corrupt() {
        let input = text(1000);
        let mut frame = compress_to_vec(input.as_slice(), CompressionLevel::Fastest);
        frame[0] ^= 1;
        let err = decode_err(input.len(), &frame);
        assert_corrupt(&err, "bad frame magic number");
        assert_eq!(err.offset, Some(8));
    }

    #[test]
    fn declared_size_must_match_the_data() {
        for input in [text(100), text(300_000), noise(1000, 9)] {
            let frame = compress_to_vec(input.as_slice(), CompressionLevel::Fastest);
            let n = input.len();
            for declared in [0, 1, n - 1] {
                let err = decode_err(declared, &frame);
                assert!(
                    matches!(err.kind, FormatErrorKind::Decompression { .. }),
                    "{err:?}"
                );
            }
            for declared in [n + 1, 2 * n] {
                assert_corrupt(
                    &decode_err(declared, &frame),
                    "decompressed data is shorter than the declared size",
                );
            }
        }
    }

    #[test]
    fn more_data_than_declared_stops_at_the_declared_size() {
        // 1 MiB of zeros packs into a few bytes; declaring 10 must fail without producing it all.
        let zeros = alloc::vec![0u8; 1 << 20];
        let frame = compress_to_vec(zeros.as_slice(), CompressionLevel::Fastest);
        let err = decode_err(10, &frame);
        assert!(
            matches!(err.kind, FormatErrorKind::Decompression { .. }),
            "{err:?}"
        );
    }

    #[test]
    fn concatenated_and_skippable_frames() {
        let a = text(1000);
        let b = noise(500, 5);
        let mut frames = compress_to_vec(a.as_slice(), CompressionLevel::Fastest);
        frames.extend_from_slice(&0x184D_2A5Fu32.to_le_bytes());
        frames.extend_from_slice(&3u32.to_le_bytes());
        frames.extend_from_slice(b"xyz");
        frames.extend_from_slice(&compress_to_vec(
            b.as_slice(),
            CompressionLevel::Uncompressed,
        ));
        let mut both = a.clone();
        both.extend_from_slice(&b);
        assert_eq!(decode(both.len(), &frames).unwrap(), both);

        let mut trailing = frames.clone();
        trailing.extend_from_slice(&[0, 0]);
        assert!(decode(both.len(), &trailing).is_err());

        let mut skip = compress_to_vec(a.as_slice(), CompressionLevel::Fastest);
        skip.extend_from_slice(&0x184D_2A50u32.to_le_bytes());
        skip.extend_from_slice(&100u32.to_le_bytes());
        skip.extend_from_slice(b"short");
        assert_corrupt(&decode_err(a.len(), &skip), "truncated skippable frame");
    }

    #[test]
    fn window_above_the_maximum_is_a_limit() {
        // Frame header: magic, descriptor 0 (no single segment, no checksum, no content size),
        // window descriptor with exponent 31 (2 GiB window), then a last empty raw block.
        let frame = [0x28, 0xb5, 0x2f, 0xfd, 0x00, 0xa8, 0x01, 0x00, 0x00];
        let err = decode_err(0, &frame);
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

    #[test]
    fn empty_input_after_prefix_is_corrupt() {
        assert_corrupt(&decode_err(0, &[]), "no frame in compressed buffer");
    }
}
