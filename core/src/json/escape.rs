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

/// Bytes the wide scan checks and copies at once.
const WIDE: usize = 64;

/// Bytes [`copy_if_clean`] checks and copies at once.
const BLOCK: usize = 64;

/// Bytes the narrow scan checks and copies at once (also the overlapping tail of a value).
const NARROW: usize = 16;

/// Whether no byte of `block` needs escaping.
///
/// One pass over a fixed-size array with no early exit, written so that the compiler checks
/// sixteen bytes per vector instruction on any x86-64 (no `unsafe`, no intrinsics): a byte needs
/// escaping exactly when the smallest of `b ^ '"'`, `b ^ '\\'` and `b - 0x1F` (saturating) is 0.
#[inline(always)]
fn is_clean<const N: usize>(block: &[u8; N]) -> bool {
    let mut dirty = false;
    for &byte in block {
        let least = (byte ^ b'"')
            .min(byte ^ b'\\')
            .min(byte.saturating_sub(0x1F));
        dirty |= least == 0;
    }
    !dirty
}

/// Copies `block` to `out[at..]` if it is clean and fits; whether it did.
#[inline(always)]
fn copy_clean<const N: usize>(block: &[u8], out: &mut [u8], at: usize) -> bool {
    match (
        <&[u8; N]>::try_from(block),
        out.get_mut(at..at.wrapping_add(N)),
    ) {
        (Ok(block), Some(dst)) if is_clean(block) => {
            dst.copy_from_slice(block);
            true
        }
        _ => false,
    }
}

/// Copies a short clean `rest` (fewer than [`NARROW`] bytes) to `out[at..]` as two overlapping
/// words; whether it did (`false`: too short, not clean, or no room).
#[inline(always)]
fn copy_short(rest: &[u8], out: &mut [u8], at: usize) -> bool {
    let n = rest.len();
    let tail = n.wrapping_sub(8);
    if n >= 8 {
        let (Some(head), Some(last)) = (rest.get(..8), rest.get(tail..)) else {
            return false;
        };
        let (Ok(head), Ok(last)) = (<&[u8; 8]>::try_from(head), <&[u8; 8]>::try_from(last)) else {
            return false;
        };
        if !(is_clean(head) & is_clean(last)) {
            return false;
        }
        let Some(dst) = out.get_mut(at..at.wrapping_add(n)) else {
            return false;
        };
        if let Some(d) = dst.get_mut(..8) {
            d.copy_from_slice(head);
        }
        if let Some(d) = dst.get_mut(tail..) {
            d.copy_from_slice(last);
        }
        return true;
    }
    let Some(dst) = out.get_mut(at..at.wrapping_add(n)) else {
        return false;
    };
    if rest.iter().any(|b| needs_escape(*b)) {
        return false;
    }
    dst.copy_from_slice(rest);
    true
}

/// Copies `src` to the start of `out` when no byte of it needs escaping; returns whether it did
/// (when not, `out` may hold part of a copy). `out` must be at least as long as `src`.
///
/// The fast path of text: [`BLOCK`] bytes at a time, checked and copied with no branch until the
/// end of the value, whose last bytes are one more overlapping block (measured faster than
/// smaller blocks for the rest).
#[inline(always)]
pub(crate) fn copy_if_clean(src: &[u8], out: &mut [u8]) -> bool {
    let n = src.len();
    if n < NARROW {
        return copy_short(src, out, 0);
    }
    let Some(out) = out.get_mut(..n) else {
        return false;
    };
    let mut clean = true;
    let (blocks, _) = src.as_chunks::<BLOCK>();
    let (targets, _) = out.as_chunks_mut::<BLOCK>();
    for (block, target) in blocks.iter().zip(targets) {
        clean &= is_clean(block);
        *target = *block;
    }
    // The last bytes, overlapping ones already copied: a whole block, or two of 32 or 16 bytes
    // for a value shorter than a block.
    if n >= BLOCK {
        if !n.is_multiple_of(BLOCK) {
            clean &= copy_block::<BLOCK>(src, out, n - BLOCK);
        }
    } else if n >= 32 {
        clean &= copy_block::<32>(src, out, 0) & copy_block::<32>(src, out, n - 32);
    } else {
        clean &= copy_block::<NARROW>(src, out, 0) & copy_block::<NARROW>(src, out, n - NARROW);
    }
    clean
}

/// Checks `src[at..at + N]` and copies it to `out[at..]`; whether it is clean (`false` when out
/// of range, which callers rule out).
#[inline(always)]
fn copy_block<const N: usize>(src: &[u8], out: &mut [u8], at: usize) -> bool {
    let (Some(block), Some(target)) = (
        src.get(at..at.wrapping_add(N))
            .and_then(|b| <&[u8; N]>::try_from(b).ok()),
        out.get_mut(at..at.wrapping_add(N))
            .and_then(|b| <&mut [u8; N]>::try_from(b).ok()),
    ) else {
        return false;
    };
    *target = *block;
    is_clean(block)
}

/// Copies `src` into `out` with escapes; returns the bytes written. `out` must hold
/// `6 * src.len()` bytes (the worst case); with less, the output stops early.
///
/// Clean stretches go [`WIDE`] then [`NARROW`] bytes at a time, checked and copied in one pass;
/// the end of a value is one more overlapping block when the bytes before it were copied as they
/// are. Only a block with an escape in it is taken apart byte by byte.
#[inline]
pub(crate) fn escape_into(src: &[u8], out: &mut [u8]) -> usize {
    let mut read = 0;
    let mut written = 0;
    // Since `run`, bytes were copied as they are: `src[run..read]` ends `out[..written]`.
    let mut run = 0;
    loop {
        while let Some(block) = src.get(read..read + WIDE)
            && copy_clean::<WIDE>(block, out, written)
        {
            read += WIDE;
            written += WIDE;
        }
        while let Some(block) = src.get(read..read + NARROW)
            && copy_clean::<NARROW>(block, out, written)
        {
            read += NARROW;
            written += NARROW;
        }
        let rest = src.get(read..).unwrap_or_default();
        if rest.is_empty() {
            return written;
        }
        if rest.len() < NARROW {
            // The last NARROW bytes, overlapping bytes already copied as they are.
            let start = src.len().wrapping_sub(NARROW);
            if src.len() >= NARROW
                && start >= run
                && let Some(block) = src.get(start..)
                && copy_clean::<NARROW>(block, out, written - (read - start))
            {
                return written + rest.len();
            }
            if copy_short(rest, out, written) {
                return written + rest.len();
            }
        }
        let clean = first_escape(rest);
        let (Some(dst), Some(run_bytes)) =
            (out.get_mut(written..written + clean), rest.get(..clean))
        else {
            return written;
        };
        dst.copy_from_slice(run_bytes);
        written += clean;
        read += clean;
        let Some(byte) = src.get(read) else {
            return written;
        };
        let (sequence, len) = escape_sequence(*byte);
        let (Some(dst), Some(sequence)) =
            (out.get_mut(written..written + len), sequence.get(..len))
        else {
            return written;
        };
        dst.copy_from_slice(sequence);
        written += len;
        read += 1;
        run = read;
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
    fn block_copies_match_byte_by_byte_escaping() {
        // Every length up to past two wide blocks, with zero, one or two escapes anywhere.
        let reference = |s: &[u8]| {
            let mut out = Vec::new();
            for b in s {
                let (seq, len) = if needs_escape(*b) {
                    escape_sequence(*b)
                } else {
                    ([*b, 0, 0, 0, 0, 0], 1)
                };
                out.extend_from_slice(&seq[..len]);
            }
            out
        };
        for len in 0..150 {
            let base: Vec<u8> = (0..len)
                .map(|i| b"abcdefgh\xc3\xa9XYZ 0123"[i % 16])
                .collect();
            let mut cases = std::vec![base.clone()];
            for at in 0..len {
                for bad in [0u8, 0x1F, b'"', b'\\'] {
                    let mut one = base.clone();
                    one[at] = bad;
                    cases.push(one.clone());
                    if at + 17 < len {
                        one[at + 17] = b'\n';
                        cases.push(one);
                    }
                }
            }
            for case in cases {
                let mut out = std::vec![0xEEu8; 6 * case.len() + 8];
                let n = escape_into(&case, &mut out);
                assert_eq!(&out[..n], &reference(&case)[..], "{case:?}");
                assert!(out[6 * case.len()..].iter().all(|b| *b == 0xEE));
                // The copy for clean text: says whether it was clean, copies exactly the text.
                let mut out = std::vec![0xEEu8; case.len() + 8];
                let clean = !case.iter().any(|b| needs_escape(*b));
                assert_eq!(copy_if_clean(&case, &mut out), clean, "{case:?}");
                if clean {
                    assert_eq!(&out[..case.len()], &case[..]);
                }
                assert!(out[case.len()..].iter().all(|b| *b == 0xEE));
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
