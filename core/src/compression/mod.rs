//! Body compression: turns one compressed IPC body buffer back into its bytes.
//!
//! It uses the errors (and their [`CompressionCodec`]).
//!
//! A record batch whose `BodyCompression` method is `BUFFER` stores every body buffer on its own:
//! an 8-byte little-endian `i64` holding the uncompressed length, then the bytes compressed with
//! the batch's codec (`LZ4_FRAME` or `ZSTD`). A prefix of `-1` means the bytes after it are stored
//! uncompressed, and a buffer of zero bytes stays empty, with no prefix at all.
//!
//! Data enters as the buffer's bytes, exactly as the message body holds them, borrowed from the
//! caller. It leaves as a [`Decompressed`]: the caller's own bytes when nothing was compressed (no
//! copy), or a `Vec<u8>` holding exactly the declared number of bytes. A declared size above the
//! caller's limit is refused before anything is allocated; below it, the output grows with the
//! data actually decoded (never past the declared size), so a short hostile buffer cannot make the
//! decoder reserve the whole declared size up front. A [`Decompressor`] decompresses a run of
//! buffers (a reader's) and keeps codec state between them, so many small buffers do not each pay
//! for setting up a decoder.
//!
//! Error offsets are relative to the start of the buffer; rebase them onto the body's position
//! with [`FormatError::rebase`].
//!
//! Each codec sits behind a cargo feature (`lz4`, `zstd`); without it, a compressed buffer is an
//! [`Unsupported`](FormatErrorKind::Unsupported) error, while uncompressed ones still read.

mod compress;
#[cfg(feature = "lz4")]
mod lz4;
#[cfg(feature = "lz4")]
mod lz4_encode;
#[cfg(feature = "zstd")]
mod zstd;
#[cfg(feature = "zstd")]
mod zstd_encode;

pub use compress::{CodecOptions, EncodedBuffer, UNCOMPRESSED_PREFIX, compress_buffer};
#[cfg(feature = "lz4")]
pub use lz4_encode::{Lz4BlockSize, Lz4FrameOptions};

use alloc::vec::Vec;
use core::ops::{Deref, RangeInclusive};

use crate::datatype::CompressionCodec;
use crate::error::{Feature, FormatError, FormatErrorKind, FormatResult, Limit};

/// Default cap on one buffer's declared uncompressed size: 1 GiB.
///
/// Large enough for any single column buffer a reader would sensibly hold in memory at once, small
/// enough that one hostile length prefix cannot ask for more. Pass a different limit to
/// [`decompress_buffer`] to change it.
pub const DEFAULT_DECOMPRESSION_LIMIT: u64 = 1 << 30;

/// Size of the uncompressed-length prefix in front of every non-empty buffer.
const PREFIX_LEN: usize = 8;

/// Prefix value marking a buffer whose bytes are stored uncompressed.
const UNCOMPRESSED: i64 = -1;

/// One body buffer split at its length prefix, before any decompression.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum CompressedBuffer<'a> {
    /// Zero bytes in the body: the buffer is empty and has no prefix.
    Empty,
    /// Prefix `-1`: these bytes are the buffer itself.
    Uncompressed(&'a [u8]),
    /// These bytes decompress to `uncompressed_len` bytes.
    Compressed {
        /// The uncompressed length the prefix declares.
        uncompressed_len: u64,
        /// The compressed bytes after the prefix.
        data: &'a [u8],
    },
}

impl<'a> CompressedBuffer<'a> {
    /// Reads the length prefix of `buf`, a body buffer exactly as the message body holds it.
    ///
    /// Fails with `Truncated` when a non-empty buffer is shorter than the 8-byte prefix, and with
    /// `InvalidValue` when the prefix is negative but not `-1`.
    pub fn parse(buf: &'a [u8]) -> FormatResult<Self> {
        if buf.is_empty() {
            return Ok(CompressedBuffer::Empty);
        }
        let Some((prefix, data)) = buf.split_first_chunk::<PREFIX_LEN>() else {
            return Err(FormatError::new(FormatErrorKind::Truncated {
                what: "compressed buffer length prefix",
                needed: PREFIX_LEN as u64,
                available: buf.len() as u64,
            })
            .at(0));
        };
        let declared = i64::from_le_bytes(*prefix);
        match u64::try_from(declared) {
            Ok(uncompressed_len) => Ok(CompressedBuffer::Compressed {
                uncompressed_len,
                data,
            }),
            Err(_) if declared == UNCOMPRESSED => Ok(CompressedBuffer::Uncompressed(data)),
            Err(_) => Err(FormatError::new(FormatErrorKind::InvalidValue {
                what: "compressed buffer uncompressed length",
                value: declared,
            })
            .at(0)),
        }
    }
}

/// The bytes of one body buffer after decompression.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Decompressed<'a> {
    /// The buffer was empty or stored uncompressed: the caller's own bytes, not copied.
    Borrowed(&'a [u8]),
    /// The buffer was compressed: exactly the declared number of decompressed bytes.
    Owned(Vec<u8>),
}

impl Decompressed<'_> {
    /// The buffer's bytes.
    pub fn as_slice(&self) -> &[u8] {
        match self {
            Decompressed::Borrowed(bytes) => bytes,
            Decompressed::Owned(bytes) => bytes,
        }
    }

    /// The buffer's bytes as an owned vector, copying them only if they were borrowed.
    pub fn into_vec(self) -> Vec<u8> {
        match self {
            Decompressed::Borrowed(bytes) => bytes.to_vec(),
            Decompressed::Owned(bytes) => bytes,
        }
    }
}

impl Deref for Decompressed<'_> {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        self.as_slice()
    }
}

impl AsRef<[u8]> for Decompressed<'_> {
    fn as_ref(&self) -> &[u8] {
        self.as_slice()
    }
}

/// Decompresses one IPC body buffer `buf` (prefix included) written with `codec`.
///
/// Returns [`Decompressed::Borrowed`] for an empty buffer or one stored uncompressed (prefix
/// `-1`), so the caller can use the body's bytes without a copy, and [`Decompressed::Owned`] with
/// exactly the declared number of bytes otherwise.
///
/// Errors, with offsets relative to `buf`:
/// - `Truncated` or `InvalidValue` for a bad length prefix (see [`CompressedBuffer::parse`]);
/// - `Unsupported` when this build lacks the codec's feature;
/// - `LimitExceeded` when the declared size is above `limit` (or above what `usize` holds),
///   checked before anything is allocated;
/// - `Decompression` for corrupt data, including data that decodes to more or fewer bytes than
///   declared (decoding stops as soon as the output would pass the declared size).
///
/// Each call sets up its codec afresh; to decompress many buffers, use one [`Decompressor`].
pub fn decompress_buffer(
    codec: CompressionCodec,
    buf: &[u8],
    limit: u64,
) -> FormatResult<Decompressed<'_>> {
    Decompressor::new().decompress(codec, buf, limit)
}

/// Decompresses body buffers one after another, keeping the codec state that can be reused
/// between them.
///
/// ZSTD's decoding tables and scratch are allocated at the first compressed frame and reused for
/// every later buffer (unless a frame needed a window larger than 256 KiB, whose scratch is let
/// go), so reading many small compressed buffers costs memory in proportion to their bytes, not
/// a fresh decoder per buffer. The readers hold one for their lifetime.
#[derive(Debug, Default)]
pub struct Decompressor {
    /// The ZSTD decoder, reused across buffers.
    #[cfg(feature = "zstd")]
    zstd: zstd::ZstdDecoder,
}

impl Decompressor {
    /// A decompressor that has allocated nothing yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Decompresses one IPC body buffer `buf` (prefix included) written with `codec`, exactly as
    /// [`decompress_buffer`] does (same results, same errors).
    pub fn decompress<'b>(
        &mut self,
        codec: CompressionCodec,
        buf: &'b [u8],
        limit: u64,
    ) -> FormatResult<Decompressed<'b>> {
        let (declared, data) = match CompressedBuffer::parse(buf)? {
            CompressedBuffer::Empty => return Ok(Decompressed::Borrowed(buf)),
            CompressedBuffer::Uncompressed(data) => return Ok(Decompressed::Borrowed(data)),
            CompressedBuffer::Compressed {
                uncompressed_len,
                data,
            } => (uncompressed_len, data),
        };
        supported(codec)?;
        let limit = limit.min(u64::try_from(usize::MAX).unwrap_or(u64::MAX));
        let declared = usize::try_from(declared)
            .ok()
            .filter(|&d| d as u64 <= limit)
            .ok_or_else(|| {
                FormatError::new(FormatErrorKind::LimitExceeded {
                    what: Limit::DecompressedBuffer,
                    requested: declared,
                    limit,
                })
                .at(0)
            })?;
        let mut out = Output::new(declared);
        let decoded = match codec {
            #[cfg(feature = "lz4")]
            CompressionCodec::Lz4Frame => lz4::decompress(data, &mut out),
            #[cfg(feature = "zstd")]
            CompressionCodec::Zstd => self.zstd.decompress(data, &mut out),
            #[allow(unreachable_patterns)]
            _ => {
                let _ = (data, &mut out); // used only by the codecs this build has
                supported(codec)
            }
        };
        decoded.map_err(|e| e.rebase(PREFIX_LEN as u64))?;
        if out.remaining() != 0 {
            let what = "decompressed data is shorter than the declared size";
            return Err(corrupt(codec, what, buf.len()));
        }
        Ok(Decompressed::Owned(out.into_vec()))
    }
}

/// Fails with `Unsupported` when this build lacks `codec`'s feature.
fn supported(codec: CompressionCodec) -> FormatResult<()> {
    let built = match codec {
        CompressionCodec::Lz4Frame => cfg!(feature = "lz4"),
        CompressionCodec::Zstd => cfg!(feature = "zstd"),
    };
    if built {
        return Ok(());
    }
    Err(FormatErrorKind::Unsupported {
        what: Feature::Codec(codec),
    }
    .into())
}

/// A `Decompression` error of `codec` at `offset` in the bytes being decoded.
fn corrupt(codec: CompressionCodec, what: &'static str, offset: usize) -> FormatError {
    FormatError::new(FormatErrorKind::Decompression { codec, what }).at(offset as u64)
}

/// An `Unsupported` error at `offset`: the frame there needs a dictionary, which `codec`'s
/// decoder is never given.
#[cfg_attr(not(any(feature = "lz4", feature = "zstd")), allow(dead_code))]
fn dictionary_unsupported(codec: CompressionCodec, offset: usize) -> FormatError {
    let what = Feature::CodecDictionary(codec);
    FormatError::new(FormatErrorKind::Unsupported { what }).at(offset as u64)
}

/// Magic numbers of skippable frames, the same in LZ4 and Zstandard: a little-endian `u32` size
/// follows, then that many bytes to pass over.
#[cfg_attr(not(any(feature = "lz4", feature = "zstd")), allow(dead_code))]
const SKIPPABLE_MAGIC: RangeInclusive<u32> = 0x184D_2A50..=0x184D_2A5F;

/// Walks the frames of `input`, compressed bytes of `codec` (LZ4 and Zstandard frames follow one
/// another alike): passes over skippable frames, and hands the offset of each frame opening with
/// the codec's `magic` number to `frame`, which decodes it and returns where it ends.
///
/// `truncated` words, as the codec does, the errors for input that ends inside a magic number
/// and inside a skippable frame's size. Input without any frame, an unknown magic number and a
/// skippable frame shorter than its size are `Decompression` errors too.
#[cfg_attr(not(any(feature = "lz4", feature = "zstd")), allow(dead_code))]
fn decode_frames(
    codec: CompressionCodec,
    input: &[u8],
    magic: u32,
    truncated: [&'static str; 2],
    mut frame: impl FnMut(usize) -> FormatResult<usize>,
) -> FormatResult<()> {
    let [truncated_magic, truncated_size] = truncated;
    if input.is_empty() {
        return Err(corrupt(codec, "no frame in compressed buffer", 0));
    }
    let u32_at = |at: usize, what| {
        let bytes = input.get(at..).and_then(<[u8]>::first_chunk::<4>);
        bytes
            .map(|bytes| u32::from_le_bytes(*bytes))
            .ok_or_else(|| corrupt(codec, what, at))
    };
    let mut at = 0;
    while at < input.len() {
        at = match u32_at(at, truncated_magic)? {
            found if found == magic => frame(at)?,
            found if SKIPPABLE_MAGIC.contains(&found) => {
                let len = u32_at(at.saturating_add(4), truncated_size)?;
                let data_at = at.saturating_add(8);
                usize::try_from(len)
                    .ok()
                    .and_then(|len| data_at.checked_add(len))
                    .filter(|&end| end <= input.len())
                    .ok_or_else(|| corrupt(codec, "truncated skippable frame", data_at))?
            }
            _ => return Err(corrupt(codec, "bad frame magic number", at)),
        };
    }
    Ok(())
}

/// The output of one buffer's decompression: exactly `declared` bytes once complete.
///
/// Grows by doubling as decoders ask for room, and never past `declared`: memory follows the data
/// actually produced, not what the prefix claims.
struct Output {
    /// Zero-initialised storage; the first `written` bytes are output.
    bytes: Vec<u8>,
    /// How many bytes have been produced.
    written: usize,
    /// The declared uncompressed size.
    declared: usize,
}

// Unused only when no codec feature is enabled.
#[cfg_attr(not(any(feature = "lz4", feature = "zstd")), allow(dead_code))]
impl Output {
    /// An empty output for `declared` bytes; allocates nothing yet.
    fn new(declared: usize) -> Self {
        Output {
            bytes: Vec::new(),
            written: 0,
            declared,
        }
    }

    /// How many bytes have been produced so far.
    fn written(&self) -> usize {
        self.written
    }

    /// How many more bytes fit before the declared size is reached.
    fn remaining(&self) -> usize {
        self.declared.saturating_sub(self.written)
    }

    /// The bytes produced so far.
    #[cfg_attr(not(feature = "lz4"), allow(dead_code))]
    fn as_slice(&self) -> &[u8] {
        self.bytes.get(..self.written).unwrap_or_default()
    }

    /// The bytes produced so far, and room after them for `want` more bytes, or fewer where the
    /// declared size ends. Write into the room, then [`advance`](Self::advance).
    fn room(&mut self, want: usize) -> (&[u8], &mut [u8]) {
        let end = self.written.saturating_add(want.min(self.remaining()));
        if self.bytes.len() < end {
            let grown = end
                .max(self.bytes.len().saturating_mul(2))
                .min(self.declared);
            self.bytes
                .reserve_exact(grown.saturating_sub(self.bytes.len()));
            self.bytes.resize(grown, 0);
        }
        let (done, rest) = self
            .bytes
            .split_at_mut_checked(self.written)
            .unwrap_or_default();
        let room = rest
            .get_mut(..end.saturating_sub(self.written))
            .unwrap_or_default();
        (done, room)
    }

    /// Counts `n` more bytes, just written into the last [`room`](Self::room), as output.
    fn advance(&mut self, n: usize) {
        self.written = self.written.saturating_add(n).min(self.bytes.len());
    }

    /// Appends `data`, or returns `false` (appending nothing) if it would pass the declared size.
    #[cfg_attr(not(feature = "lz4"), allow(dead_code))]
    fn push(&mut self, data: &[u8]) -> bool {
        if data.len() > self.remaining() {
            return false;
        }
        let (_, room) = self.room(data.len());
        match room.get_mut(..data.len()) {
            Some(room) => room.copy_from_slice(data),
            None => return false,
        }
        self.advance(data.len());
        true
    }

    /// The output, exactly the bytes produced.
    fn into_vec(mut self) -> Vec<u8> {
        self.bytes.truncate(self.written);
        self.bytes
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::test_data::{self, prefixed};
    use super::*;
    use alloc::vec;

    #[test]
    fn minus_one_borrows_the_bytes_after_the_prefix() {
        let buf = prefixed(-1, b"plain bytes");
        for codec in [CompressionCodec::Lz4Frame, CompressionCodec::Zstd] {
            let out = decompress_buffer(codec, &buf, DEFAULT_DECOMPRESSION_LIMIT).unwrap();
            assert_eq!(out, Decompressed::Borrowed(b"plain bytes"));
            let Decompressed::Borrowed(bytes) = out else {
                unreachable!()
            };
            assert!(core::ptr::eq(bytes, &buf[8..]), "not a copy");
        }
        let only_prefix = prefixed(-1, b"");
        let out = decompress_buffer(CompressionCodec::Zstd, &only_prefix, 0).unwrap();
        assert_eq!(out.as_slice(), b"");
    }

    #[test]
    fn empty_buffer_stays_empty() {
        for codec in [CompressionCodec::Lz4Frame, CompressionCodec::Zstd] {
            let out = decompress_buffer(codec, &[], 0).unwrap();
            assert_eq!(out, Decompressed::Borrowed(&[]));
        }
        assert_eq!(
            CompressedBuffer::parse(&[]).unwrap(),
            CompressedBuffer::Empty
        );
    }

    #[test]
    fn parse_splits_the_prefix() {
        let buf = prefixed(5, b"xyz");
        assert_eq!(
            CompressedBuffer::parse(&buf).unwrap(),
            CompressedBuffer::Compressed {
                uncompressed_len: 5,
                data: b"xyz"
            }
        );
    }

    #[test]
    fn short_prefix_is_truncated() {
        for len in 1..8 {
            let buf = vec![0u8; len];
            let err = decompress_buffer(CompressionCodec::Lz4Frame, &buf, 100).unwrap_err();
            assert_eq!(
                err.kind,
                FormatErrorKind::Truncated {
                    what: "compressed buffer length prefix",
                    needed: 8,
                    available: len as u64,
                }
            );
            assert_eq!(err.offset(), Some(0));
        }
    }

    #[test]
    fn negative_prefix_other_than_minus_one_is_invalid() {
        for declared in [-2, -100, i64::MIN] {
            let buf = prefixed(declared, b"abc");
            let err = decompress_buffer(CompressionCodec::Zstd, &buf, 100).unwrap_err();
            assert_eq!(
                err.kind,
                FormatErrorKind::InvalidValue {
                    what: "compressed buffer uncompressed length",
                    value: declared,
                }
            );
        }
    }

    #[test]
    #[cfg(all(feature = "lz4", feature = "zstd"))]
    fn declared_size_above_limit_fails_before_decoding() {
        // A huge claim with four bytes of "data": refused on the prefix alone.
        for declared in [i64::MAX, 1 << 40, 1001] {
            let buf = prefixed(declared, b"junk");
            for codec in [CompressionCodec::Lz4Frame, CompressionCodec::Zstd] {
                let err = decompress_buffer(codec, &buf, 1000).unwrap_err();
                assert_eq!(
                    err.kind,
                    FormatErrorKind::LimitExceeded {
                        what: Limit::DecompressedBuffer,
                        requested: declared as u64,
                        limit: 1000,
                    }
                );
            }
        }
        let err = decompress_buffer(
            CompressionCodec::Zstd,
            &prefixed(i64::MAX, b"junk"),
            DEFAULT_DECOMPRESSION_LIMIT,
        )
        .unwrap_err();
        assert!(matches!(err.kind, FormatErrorKind::LimitExceeded { .. }));
    }

    #[test]
    #[cfg(all(feature = "lz4", feature = "zstd"))]
    fn declared_size_within_limit_but_tiny_input_does_not_reserve_it() {
        // 1 GiB declared, a few bytes of garbage: fails as corrupt without touching the declared
        // size (this would take seconds and a gigabyte if it were reserved up front).
        let buf = prefixed(1 << 30, b"\x04\x22\x4d\x18garbage");
        for codec in [CompressionCodec::Lz4Frame, CompressionCodec::Zstd] {
            let err = decompress_buffer(codec, &buf, DEFAULT_DECOMPRESSION_LIMIT).unwrap_err();
            test_data::assert_any_corrupt(&err);
        }
    }

    #[test]
    #[cfg(not(all(feature = "lz4", feature = "zstd")))]
    fn codec_without_its_feature_is_unsupported() {
        let buf = prefixed(4, b"data");
        for codec in [CompressionCodec::Lz4Frame, CompressionCodec::Zstd] {
            let enabled = match codec {
                CompressionCodec::Lz4Frame => cfg!(feature = "lz4"),
                CompressionCodec::Zstd => cfg!(feature = "zstd"),
            };
            let err = decompress_buffer(codec, &buf, 100).unwrap_err();
            assert_eq!(
                matches!(err.kind, FormatErrorKind::Unsupported { .. }),
                !enabled,
                "{err:?}"
            );
        }
    }

    #[test]
    fn output_never_grows_past_declared() {
        let mut out = Output::new(10);
        let (_, room) = out.room(1000);
        assert_eq!(room.len(), 10);
        room[..4].copy_from_slice(b"abcd");
        out.advance(4);
        assert!(!out.push(b"0123456789"));
        assert!(out.push(b"efghij"));
        assert_eq!(out.remaining(), 0);
        assert_eq!(out.room(5).1.len(), 0);
        assert!(out.bytes.capacity() <= 10);
        assert_eq!(out.into_vec(), b"abcdefghij");
    }

    #[test]
    fn decompressed_derefs_to_its_bytes() {
        let owned = Decompressed::Owned(vec![1, 2, 3]);
        assert_eq!(&*owned, &[1, 2, 3]);
        assert_eq!(owned.into_vec(), vec![1, 2, 3]);
        assert_eq!(Decompressed::Borrowed(b"ab").into_vec(), b"ab".to_vec());
    }
}

/// Inputs and checks shared by the codecs' tests.
#[cfg(test)]
#[allow(clippy::panic)]
pub(crate) mod test_data {
    use super::{Decompressed, decompress_buffer};
    use crate::datatype::CompressionCodec;
    use crate::error::{FormatError, FormatErrorKind, FormatResult};
    use alloc::vec::Vec;

    /// `data` behind the length prefix `declared`, as a body buffer holds them.
    pub fn prefixed(declared: i64, data: &[u8]) -> Vec<u8> {
        [&declared.to_le_bytes()[..], data].concat()
    }

    /// `frame` decoded by `codec` as an IPC body buffer declaring `declared` bytes.
    pub fn decode(codec: CompressionCodec, declared: usize, frame: &[u8]) -> FormatResult<Vec<u8>> {
        match decompress_buffer(codec, &prefixed(declared as i64, frame), 1 << 30)? {
            Decompressed::Owned(v) => Ok(v),
            Decompressed::Borrowed(_) => panic!("compressed buffer came back borrowed"),
        }
    }

    /// Checks that `err` is `codec`'s corrupt-data error `what`.
    pub fn assert_corrupt(codec: CompressionCodec, err: &FormatError, what: &str) {
        match &err.kind {
            FormatErrorKind::Decompression { codec: c, what: w } => {
                assert_eq!(*c, codec);
                assert_eq!(*w, what, "{err}");
            }
            other => panic!("expected Decompression({what}), got {other:?}"),
        }
    }

    /// Checks that `frame`, declaring `declared` bytes, is `codec`'s corrupt-data error `what`;
    /// returns the error.
    pub fn corrupt_as(
        codec: CompressionCodec,
        declared: usize,
        frame: &[u8],
        what: &str,
    ) -> FormatError {
        let err = decode(codec, declared, frame).expect_err("a corrupt frame decoded");
        assert_corrupt(codec, &err, what);
        err
    }

    /// Checks that `err` is a `Decompression` error of any wording.
    pub fn assert_any_corrupt(err: &FormatError) {
        let corrupt = matches!(err.kind, FormatErrorKind::Decompression { .. });
        assert!(corrupt, "{err:?}");
    }

    /// Checks that `frame` (of `len` bytes) cut at every position is a decompression error.
    pub fn every_cut_is_an_error(codec: CompressionCodec, len: usize, frame: &[u8]) {
        for cut in 0..frame.len() {
            let err = decode(codec, len, &frame[..cut]).expect_err("a cut frame decoded");
            let corrupt = matches!(err.kind, FormatErrorKind::Decompression { .. });
            assert!(corrupt, "cut at {cut}: {err:?}");
        }
    }

    /// Checks that `frame`, which decodes to `n` bytes, is corrupt in a buffer declaring fewer
    /// bytes (with the error `longer` where the codec words it one way for this frame) or more.
    pub fn declared_size_must_match(
        codec: CompressionCodec,
        n: usize,
        frame: &[u8],
        longer: Option<&str>,
    ) {
        for declared in [0, 1, n - 1] {
            let err = decode(codec, declared, frame).expect_err("too much data decoded");
            match longer {
                Some(what) => assert_corrupt(codec, &err, what),
                None => assert_any_corrupt(&err),
            }
        }
        for declared in [n + 1, 2 * n] {
            let what = "decompressed data is shorter than the declared size";
            corrupt_as(codec, declared, frame, what);
        }
    }

    /// Checks the frame walk both codecs share: frame `a` (of bytes `a_data`), a skippable frame
    /// and frame `b` (of `b_data`) decode to both; trailing bytes, a cut skippable frame, a bad
    /// magic number and no frame at all are errors. `truncated` is the codec's wording for input
    /// that ends inside a magic number and inside a skippable frame's size.
    pub fn frame_walk(
        codec: CompressionCodec,
        (a_data, a): (&[u8], &[u8]),
        (b_data, b): (&[u8], &[u8]),
        [cut_magic, cut_size]: [&str; 2],
    ) {
        let both = [a_data, b_data].concat();
        for magic in [0x184D_2A50u32, 0x184D_2A53, 0x184D_2A5F] {
            let frames = [a, &magic.to_le_bytes(), &3u32.to_le_bytes(), b"xyz", b].concat();
            assert_eq!(decode(codec, both.len(), &frames).unwrap(), both);
            let trailing = [&frames[..], &[0, 0]].concat();
            let err = corrupt_as(codec, both.len(), &trailing, cut_magic);
            assert_eq!(err.offset(), Some(8 + frames.len() as u64));
            let cut = [a, &magic.to_le_bytes(), &[3, 0]].concat();
            let err = corrupt_as(codec, a_data.len(), &cut, cut_size);
            assert_eq!(err.offset(), Some(8 + a.len() as u64 + 4));
            let cut = [a, &magic.to_le_bytes(), &100u32.to_le_bytes(), b"short"].concat();
            let err = corrupt_as(codec, a_data.len(), &cut, "truncated skippable frame");
            assert_eq!(err.offset(), Some(8 + a.len() as u64 + 8));
        }
        let bad_magic = [&[a[0] ^ 1], &a[1..]].concat();
        let err = corrupt_as(codec, a_data.len(), &bad_magic, "bad frame magic number");
        assert_eq!(err.offset(), Some(8));
        corrupt_as(codec, 0, &[], "no frame in compressed buffer");
    }

    /// Inputs for round trips, none longer than `max` bytes: none, one byte, text filling one
    /// or many blocks, noise, and text then noise.
    pub fn inputs(max: usize) -> Vec<Vec<u8>> {
        let mut inputs = [100, 70_000, 300_000, 1_500_000].map(text).to_vec();
        inputs.extend([Vec::new(), b"a".to_vec(), noise(200_000, 7)]);
        inputs.push([text(100_000), noise(200_000, 3)].concat());
        inputs.retain(|input| input.len() <= max);
        inputs
    }

    /// Bytes that compress: a phrase followed by a counter that steps every `every` phrases.
    pub fn phrases(len: usize, every: u32) -> Vec<u8> {
        let mut out = Vec::with_capacity(len);
        let mut i = 0u32;
        while out.len() < len {
            out.extend_from_slice(b"quiver reads arrow ");
            out.extend_from_slice(&(i / every).to_le_bytes());
            i += 1;
        }
        out.truncate(len);
        out
    }

    /// Bytes that compress well.
    pub fn text(len: usize) -> Vec<u8> {
        phrases(len, 7)
    }

    /// Bytes that do not compress (xorshift).
    pub fn noise(len: usize, mut seed: u64) -> Vec<u8> {
        (0..len)
            .map(|_| {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                seed as u8
            })
            .collect()
    }
}
