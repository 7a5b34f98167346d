//! The encapsulation of an IPC message, read in two steps that do no I/O: [`Prefix::parse`]
//! says what the bytes at a message's start are (a message's prefix, the end-of-stream marker,
//! the end of input, or how many more bytes it needs), and [`body_length`] reads from the
//! message's metadata how many body bytes follow it.
//!
//! A message is the `0xFFFFFFFF` continuation marker and an `i32` metadata length (or, in
//! streams before Arrow 0.15, the bare length), the `Message` flatbuffer of that many bytes
//! (padded to 8), then its body. A zero length is the end-of-stream marker. Every reader of
//! messages (the stream decoder, the no-alloc stream reader, a file's blocks) frames them here,
//! so they agree on every length and every error.
//!
//! It uses the format's [`Message`] view and the errors: nothing above them.

use super::message::Message;
use super::truncated;
use crate::error::{FormatError, FormatErrorKind, FormatResult};

/// The marker that precedes a message's metadata length since format 0.15.
pub const CONTINUATION: [u8; 4] = [0xFF; 4];

/// The longest prefix: the continuation marker and the metadata length.
pub(crate) const MAX_PREFIX: usize = 8;

/// What the bytes at the start of a message say ([`Prefix::parse`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[must_use]
pub(crate) enum Prefix {
    /// The bytes so far do not say: at least this many more (never 0) are needed.
    Need(usize),
    /// The input ended cleanly, before any byte of a prefix.
    EndOfInput,
    /// The end-of-stream marker (a zero metadata length), `len` bytes long: 8, or 4 without
    /// the continuation marker.
    EndOfStream { len: usize },
    /// A message: its prefix is `len` bytes (8, or 4 without the continuation marker), and its
    /// metadata flatbuffer of `metadata_len` bytes follows.
    Message { len: usize, metadata_len: usize },
}

impl Prefix {
    /// Reads the prefix at the start of `bytes`, the bytes available at offset `at` of the
    /// input (any number; bytes past the prefix are not looked at). `ended` says no more bytes
    /// will come: a prefix cut short is then an error, and no bytes at all the end of input.
    /// Errors are located at `at`: a truncated prefix, or a negative metadata length.
    pub(crate) fn parse(bytes: &[u8], ended: bool, at: u64) -> FormatResult<Prefix> {
        let (length_at, len) = match bytes.get(..4) {
            Some(marker) if marker == CONTINUATION => (4, MAX_PREFIX),
            Some(_) => (0, 4),
            None if bytes.is_empty() && ended => return Ok(Prefix::EndOfInput),
            None => (0, 4),
        };
        let word = bytes
            .get(length_at..len)
            .and_then(|w| <[u8; 4]>::try_from(w).ok());
        let Some(word) = word else {
            if ended {
                let available = bytes.len().saturating_sub(length_at);
                return Err(truncated("message length prefix", 4, available, at));
            }
            return Ok(Prefix::Need(len.saturating_sub(bytes.len()).max(1)));
        };
        let metadata_len = i32::from_le_bytes(word);
        if metadata_len == 0 {
            return Ok(Prefix::EndOfStream { len });
        }
        let metadata_len = usize::try_from(metadata_len).map_err(|_| {
            FormatError::from(FormatErrorKind::InvalidValue {
                what: "message metadata length",
                value: i64::from(metadata_len),
            })
            .at(at)
        })?;
        Ok(Prefix::Message { len, metadata_len })
    }
}

/// The body length a message's `metadata` (at `at` in the input) declares, checked to be
/// non-negative and to fit in memory.
pub(crate) fn body_length(metadata: &[u8], at: u64) -> FormatResult<usize> {
    let len = Message::parse(metadata)
        .map_err(|e| e.rebase(at))?
        .body_length();
    usize::try_from(len).map_err(|_| {
        FormatError::from(FormatErrorKind::InvalidValue {
            what: "Message.bodyLength",
            value: len,
        })
        .at(at)
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    fn parse(bytes: &[u8], ended: bool) -> FormatResult<Prefix> {
        Prefix::parse(bytes, ended, 100)
    }

    #[test]
    fn a_prefix_is_read_from_any_number_of_bytes() {
        let framed = [0xFF, 0xFF, 0xFF, 0xFF, 24, 0, 0, 0, 0xAA];
        let whole = Prefix::Message {
            len: 8,
            metadata_len: 24,
        };
        for n in 0..framed.len() {
            let expected = match n {
                0..4 => Prefix::Need(4 - n),
                4..8 => Prefix::Need(8 - n),
                _ => whole,
            };
            assert_eq!(parse(&framed[..n], false), Ok(expected), "{n} bytes");
        }
        let legacy = Prefix::Message {
            len: 4,
            metadata_len: 24,
        };
        assert_eq!(parse(&[24, 0, 0, 0], false), Ok(legacy));
        assert_eq!(parse(&[24, 0, 0, 0], true), Ok(legacy));
    }

    #[test]
    fn ends_and_cuts() {
        assert_eq!(parse(&[], true), Ok(Prefix::EndOfInput));
        assert_eq!(parse(&[], false), Ok(Prefix::Need(4)));
        let marker = [0xFF, 0xFF, 0xFF, 0xFF, 0, 0, 0, 0];
        assert_eq!(parse(&marker, false), Ok(Prefix::EndOfStream { len: 8 }));
        assert_eq!(parse(&[0; 4], true), Ok(Prefix::EndOfStream { len: 4 }));
        for (bytes, available) in [(&[1, 2][..], 2), (&[0xFF, 0xFF, 0xFF, 0xFF, 1][..], 1)] {
            let e = parse(bytes, true).unwrap_err();
            assert_eq!(e.offset(), Some(100));
            assert_eq!(
                e.kind,
                FormatErrorKind::Truncated {
                    what: "message length prefix",
                    needed: 4,
                    available,
                }
            );
        }
        let e = parse(&(-8i32).to_le_bytes(), false).unwrap_err();
        assert_eq!(e.offset(), Some(100));
        assert!(matches!(
            e.kind,
            FormatErrorKind::InvalidValue { value: -8, .. }
        ));
    }
}
