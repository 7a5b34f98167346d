//! JSON string bodies: RFC 8259 escaping, lowercase hex and base64 for binary.
//!
//! Bytes enter as a slice of the value; escaped text leaves into a slice with room for the worst
//! case (six bytes per input byte for text, two for hex, four per three for base64). The scan for
//! bytes that need escaping reads eight bytes at a time; clean runs are copied whole.
//!
//! Escapes are the ones serde_json writes: `\"`, `\\`, `\b`, `\t`, `\n`, `\f`, `\r`, and
//! `\u00xx` (lowercase hex) for the other control characters. Everything else, DEL and non-ASCII
//! UTF-8 included, is copied as it is.

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGH: u64 = 0x8080_8080_8080_8080;

/// Whether any of the eight bytes of `word` is a control character, `"` or `\`.
///
/// Each test is the classic "has a byte less than n" trick: subtracting n from every byte sets
/// the byte's high bit only where the byte was below n (bytes ≥ 0x80 are masked out by `!word`).
#[inline(always)]
fn word_needs_escape(word: u64) -> bool {
    let quote = word ^ (ONES * u64::from(b'"'));
    let backslash = word ^ (ONES * u64::from(b'\\'));
    let control = word.wrapping_sub(ONES * 0x20) & !word;
    let quote = quote.wrapping_sub(ONES) & !quote;
    let backslash = backslash.wrapping_sub(ONES) & !backslash;
    (control | quote | backslash) & HIGH != 0
}

/// Whether `byte` must be escaped inside a JSON string.
#[inline(always)]
pub(crate) fn needs_escape(byte: u8) -> bool {
    byte < 0x20 || byte == b'"' || byte == b'\\'
}

/// The index of the first byte of `bytes` that needs escaping, or `bytes.len()`.
#[inline]
pub(crate) fn first_escape(bytes: &[u8]) -> usize {
    let mut words = bytes.chunks_exact(8);
    let mut at = 0;
    for word in &mut words {
        if word_needs_escape(u64::from_le_bytes(word.try_into().unwrap_or_default())) {
            return at + word.iter().position(|b| needs_escape(*b)).unwrap_or(8);
        }
        at += 8;
    }
    at + words
        .remainder()
        .iter()
        .position(|b| needs_escape(*b))
        .unwrap_or(words.remainder().len())
}

/// Whether a name can be written between quotes as it is.
pub(crate) fn is_plain(text: &str) -> bool {
    first_escape(text.as_bytes()) == text.len()
}

#[inline(always)]
fn hex_digit(nibble: u8) -> u8 {
    // '0'..'9' then 'a'..'f' without a branch: 39 = 'a' - '0' - 10.
    nibble + b'0' + u8::from(nibble > 9) * 39
}

/// The escape sequence of a byte that [`needs_escape`], and its length (2 or 6).
#[inline]
pub(crate) fn escape_sequence(byte: u8) -> ([u8; 6], usize) {
    let short = match byte {
        b'"' => b'"',
        b'\\' => b'\\',
        0x08 => b'b',
        0x09 => b't',
        0x0A => b'n',
        0x0C => b'f',
        0x0D => b'r',
        _ => {
            let long = [
                b'\\',
                b'u',
                b'0',
                b'0',
                hex_digit(byte >> 4),
                hex_digit(byte & 0xF),
            ];
            return (long, 6);
        }
    };
    ([b'\\', short, 0, 0, 0, 0], 2)
}

/// Copies `src` into `out` with escapes; returns the bytes written. `out` must hold
/// `6 * src.len()` bytes (the worst case); with less, the output stops early.
#[inline]
pub(crate) fn escape_into(src: &[u8], out: &mut [u8]) -> usize {
    let mut written = 0;
    let mut rest = src;
    loop {
        let clean = first_escape(rest);
        let Some((run, tail)) = rest.split_at_checked(clean) else {
            return written;
        };
        let Some(dst) = out.get_mut(written..written + run.len()) else {
            return written;
        };
        dst.copy_from_slice(run);
        written += run.len();
        let Some((byte, tail)) = tail.split_first() else {
            return written;
        };
        let (sequence, len) = escape_sequence(*byte);
        let (Some(dst), Some(src)) = (out.get_mut(written..written + len), sequence.get(..len))
        else {
            return written;
        };
        dst.copy_from_slice(src);
        written += len;
        rest = tail;
    }
}

/// Writes `src` as lowercase hex into `out` (which must hold `2 * src.len()` bytes); returns the
/// bytes written.
#[inline]
pub(crate) fn hex_into(src: &[u8], out: &mut [u8]) -> usize {
    let mut written = 0;
    for (byte, pair) in src.iter().zip(out.chunks_exact_mut(2)) {
        pair.copy_from_slice(&hex_pair(*byte));
        written += 2;
    }
    written
}

/// The two lowercase hex digits of a byte.
#[inline(always)]
pub(crate) fn hex_pair(byte: u8) -> [u8; 2] {
    [hex_digit(byte >> 4), hex_digit(byte & 0xF)]
}

/// The standard base64 alphabet (RFC 4648 §4).
const BASE64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

#[inline(always)]
fn base64_digit(sextet: u32) -> u8 {
    BASE64
        .get((sextet & 0x3F) as usize)
        .copied()
        .unwrap_or(b'=')
}

/// The four base64 characters of up to three bytes (`=`-padded when fewer).
#[inline(always)]
pub(crate) fn base64_group(group: &[u8]) -> [u8; 4] {
    let byte = |i: usize| u32::from(group.get(i).copied().unwrap_or(0));
    let n = (byte(0) << 16) | (byte(1) << 8) | byte(2);
    let mut out = [
        base64_digit(n >> 18),
        base64_digit(n >> 12),
        base64_digit(n >> 6),
        base64_digit(n),
    ];
    if group.len() < 3 {
        out[3] = b'=';
    }
    if group.len() < 2 {
        out[2] = b'=';
    }
    out
}

/// Bytes of base64 text for `len` input bytes.
#[inline(always)]
pub(crate) fn base64_len(len: usize) -> usize {
    len.div_ceil(3) * 4
}

/// Writes `src` as padded base64 into `out` (which must hold [`base64_len`] bytes); returns the
/// bytes written.
#[inline]
pub(crate) fn base64_into(src: &[u8], out: &mut [u8]) -> usize {
    let mut written = 0;
    for (group, quad) in src.chunks(3).zip(out.chunks_exact_mut(4)) {
        quad.copy_from_slice(&base64_group(group));
        written += 4;
    }
    written
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::string::String;
    use std::vec::Vec;

    fn escape(s: &str) -> String {
        let mut out = std::vec![0; 6 * s.len()];
        let n = escape_into(s.as_bytes(), &mut out);
        String::from_utf8(out[..n].to_vec()).unwrap()
    }

    #[test]
    fn escapes_match_serde_json() {
        let mut all = String::new();
        for c in (0u8..0x80)
            .map(char::from)
            .chain(['é', '€', '😀', '\u{7f}'])
        {
            all.push(c);
            let one = String::from(c);
            assert_eq!(
                std::format!("\"{}\"", escape(&one)),
                serde_json::to_string(&one).unwrap()
            );
        }
        assert_eq!(
            std::format!("\"{}\"", escape(&all)),
            serde_json::to_string(&all).unwrap()
        );
    }

    #[test]
    fn the_word_scan_finds_the_first_escape_anywhere() {
        for len in 0..40 {
            for at in 0..=len {
                for bad in [0u8, 0x1F, b'"', b'\\'] {
                    let mut bytes: Vec<u8> = (0..len).map(|i| b'a' + (i % 26) as u8).collect();
                    // Bytes just outside the escaped ranges must not be flagged.
                    for (i, b) in bytes.iter_mut().enumerate() {
                        *b = [b' ', b'!', b'#', b'[', b']', 0x7F, 0x80, 0xFF][i % 8];
                    }
                    if at < len {
                        bytes[at] = bad;
                    }
                    assert_eq!(first_escape(&bytes), at, "len {len} at {at} byte {bad}");
                }
            }
        }
    }

    #[test]
    fn hex_and_base64() {
        let mut out = [0u8; 64];
        let n = hex_into(&[0x00, 0x0F, 0xA0, 0xFF], &mut out);
        assert_eq!(&out[..n], b"000fa0ff");
        for (input, expected) in [
            (&b""[..], ""),
            (b"f", "Zg=="),
            (b"fo", "Zm8="),
            (b"foo", "Zm9v"),
            (b"foob", "Zm9vYg=="),
            (b"fooba", "Zm9vYmE="),
            (b"foobar", "Zm9vYmFy"),
            (&[0xFB, 0xFF], "+/8="),
        ] {
            let n = base64_into(input, &mut out);
            assert_eq!(&out[..n], expected.as_bytes());
            assert_eq!(n, base64_len(input.len()));
        }
    }
}
