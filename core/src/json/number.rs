//! Numbers as JSON text: integers, floats (shortest round trip), Float16 and exact decimals.
//!
//! Values enter as native integers, float bits or the little-endian bytes of a decimal; text
//! leaves through a caller's fixed-size array (integers, floats) or a [`Scratch`] buffer. Nothing
//! here allocates or fails: every buffer is sized for the longest text its type can produce, and
//! the formatters write whole eight- or sixteen-byte blocks into it.
//!
//! Integers are our own: eight digits at a time with SWAR arithmetic (measured faster than
//! `itoa` in the encoder's loops). Floats take zmij's digits (about 1.5× faster than ryu on
//! uniform doubles) in ryu's notation (`1e16`, not zmij's `1e+16`); every `f32` and 5·10^8
//! random `f64` were checked to give ryu's exact text.

/// Bytes an integer formatter may touch: 20 digits of `u64::MAX`, plus a sign.
pub(crate) const INT_BUFFER: usize = 24;

/// 2^53: integers beyond ±this lose precision in an IEEE double (JavaScript's safe range).
pub(crate) const SAFE_INTEGER: u64 = 1 << 53;

/// A small text buffer that drops what does not fit (callers size it for their longest text).
pub(crate) struct Scratch<const N: usize> {
    bytes: [u8; N],
    len: usize,
}

impl<const N: usize> Scratch<N> {
    /// An empty buffer.
    #[inline(always)]
    pub(crate) fn new() -> Self {
        Scratch {
            bytes: [0; N],
            len: 0,
        }
    }

    /// The text written so far.
    #[inline(always)]
    pub(crate) fn as_bytes(&self) -> &[u8] {
        self.bytes.get(..self.len).unwrap_or_default()
    }

    /// Appends one byte.
    #[inline(always)]
    pub(crate) fn push(&mut self, byte: u8) {
        if let Some(slot) = self.bytes.get_mut(self.len) {
            *slot = byte;
            self.len += 1;
        }
    }

    /// Appends bytes.
    #[inline(always)]
    pub(crate) fn extend(&mut self, bytes: &[u8]) {
        if let Some(dst) = self.bytes.get_mut(self.len..self.len + bytes.len()) {
            dst.copy_from_slice(bytes);
            self.len += bytes.len();
        }
    }

    /// Appends `value` with exactly `width` digits (leading zeros; higher digits dropped), two
    /// at a time from the right.
    #[inline(always)]
    pub(crate) fn padded(&mut self, mut value: u64, width: usize) {
        let Some(dst) = self.bytes.get_mut(self.len..self.len + width) else {
            return;
        };
        let mut end = width;
        while end >= 2 {
            if let Some(pair) = dst.get_mut(end - 2..end) {
                pair.copy_from_slice(&two_digits((value % 100) as u32));
            }
            value /= 100;
            end -= 2;
        }
        if let (1, Some(first)) = (end, dst.first_mut()) {
            *first = b'0' + (value % 10) as u8;
        }
        self.len += width;
    }

    /// Appends an unsigned integer in decimal.
    #[inline(always)]
    pub(crate) fn unsigned(&mut self, value: u64) {
        let mut digits = [0; INT_BUFFER];
        let n = write_u64(&mut digits, value);
        self.extend(digits.get(..n).unwrap_or_default());
    }

    /// Appends a signed integer in decimal.
    #[inline(always)]
    pub(crate) fn signed(&mut self, value: i64) {
        if value < 0 {
            self.push(b'-');
        }
        self.unsigned(value.unsigned_abs());
    }
}

/// The two ASCII digits of `n` (below 100).
#[inline(always)]
pub(crate) fn two_digits(n: u32) -> [u8; 2] {
    let tens = n / 10;
    [b'0' + tens as u8, b'0' + (n - tens * 10) as u8]
}

/// The eight decimal digits of `v < 10^8` as byte values 0–9, most significant digit in the lowest
/// byte (so `to_le_bytes` reads in order). Two SWAR rounds: 4+4 digits, then 2+2 per half, then
/// 1+1 per quarter, using multiply-shift division that is exact for these ranges.
#[inline(always)]
fn eight_digits(v: u32) -> u64 {
    let v = u64::from(v);
    let x = (v / 10_000) | ((v % 10_000) << 32);
    // Per 32-bit lane (< 10_000): lane / 100 == lane * 10486 >> 20.
    let hundreds = ((x * 10_486) >> 20) & 0x0000_007F_0000_007F;
    let x = hundreds | ((x - hundreds * 100) << 16);
    // Per 16-bit lane (< 100): lane / 10 == lane * 103 >> 10.
    let tens = ((x * 103) >> 10) & 0x000F_000F_000F_000F;
    tens | ((x - tens * 10) << 8)
}

const ASCII_ZEROS: u64 = 0x3030_3030_3030_3030;

/// The last `width` (1–8) decimal digits of `v < 10^8`, leading zeros included, as ASCII in
/// the low bytes of a word, most significant digit lowest (so `to_le_bytes` reads in order).
#[inline(always)]
pub(crate) fn padded_digits(v: u32, width: u32) -> u64 {
    (eight_digits(v) + ASCII_ZEROS) >> (8 * (8 - width.clamp(1, 8)))
}

/// Writes up to eight digits of `v < 10^8` without leading zeros at `out[at..]` (touching
/// `out[at..at + 8]`); returns the number of digits.
#[inline(always)]
fn write_short(out: &mut [u8], at: usize, v: u32) -> usize {
    let digits = eight_digits(v);
    // Leading zero digits are the low zero bytes; "0" keeps one digit.
    let leading = ((digits.trailing_zeros() / 8) as usize).min(7);
    let text = (digits + ASCII_ZEROS) >> (8 * leading);
    if let Some(dst) = out.get_mut(at..at + 8) {
        dst.copy_from_slice(&text.to_le_bytes());
    }
    8 - leading
}

/// Writes exactly eight digits of `v < 10^8` (with leading zeros) at `out[at..at + 8]`.
#[inline(always)]
fn write_eight(out: &mut [u8], at: usize, v: u32) {
    let text = eight_digits(v) + ASCII_ZEROS;
    if let Some(dst) = out.get_mut(at..at + 8) {
        dst.copy_from_slice(&text.to_le_bytes());
    }
}

/// Writes `v` in decimal at the start of `out`; returns its length. Bytes after the digits may be
/// overwritten too (callers pass a whole [`INT_BUFFER`]).
#[inline(always)]
pub(crate) fn write_u64(out: &mut [u8; INT_BUFFER], v: u64) -> usize {
    digits_at(out, 0, v)
}

/// Writes `v` in decimal at `out[at..]` (`at` ≤ 1, so the 20 digits of `u64::MAX` and the
/// eight-byte stores past them stay inside the buffer); returns the number of digits.
#[inline(always)]
fn digits_at(out: &mut [u8; INT_BUFFER], at: usize, v: u64) -> usize {
    const E8: u64 = 100_000_000;
    const E16: u64 = E8 * E8;
    if v < E8 {
        write_short(out, at, v as u32)
    } else if v <= u64::from(u32::MAX) {
        // Ten digits at most: the top one or two from a pair, no second SWAR round.
        let high = (v / E8) as u32; // 1..=42
        let pair = [b'0' + (high / 10) as u8, b'0' + (high % 10) as u8];
        let short = usize::from(high < 10);
        let text = u16::from_le_bytes(pair) >> (8 * short);
        if let Some(dst) = out.get_mut(at..at + 2) {
            dst.copy_from_slice(&text.to_le_bytes());
        }
        let n = 2 - short;
        write_eight(out, at + n, (v % E8) as u32);
        n + 8
    } else if v < E16 {
        let n = write_short(out, at, (v / E8) as u32);
        write_eight(out, at + n, (v % E8) as u32);
        n + 8
    } else {
        let rest = v % E16;
        let n = write_short(out, at, (v / E16) as u32);
        write_eight(out, at + n, (rest / E8) as u32);
        write_eight(out, at + n + 8, (rest % E8) as u32);
        n + 16
    }
}

/// Writes `v` in decimal at the start of `out`; returns its length (see [`write_u64`]).
#[inline(always)]
pub(crate) fn write_i64(out: &mut [u8; INT_BUFFER], v: i64) -> usize {
    // The sign is stored unconditionally and kept only when negative: no branch to mispredict.
    out[0] = b'-';
    let sign = usize::from(v < 0);
    sign + digits_at(out, sign, v.unsigned_abs())
}

/// Bytes the `i32`/`u32` formatters may touch: a sign, two leading digits and one eight-byte
/// store.
pub(crate) const SHORT_INT: usize = 16;

/// `"00"` to `"99"`, two bytes each.
const PAIRS: &[u8; 200] = b"\
    0001020304050607080910111213141516171819\
    2021222324252627282930313233343536373839\
    4041424344454647484950515253545556575859\
    6061626364656667686970717273747576777879\
    8081828384858687888990919293949596979899";

/// Writes `u` (< 2^32) at `out[at..]`, `at` ≤ 1; returns the number of digits.
///
/// Below 10^8, the eight digits with their leading zeros shifted out; above, one or two digits
/// from [`PAIRS`] and all eight below. Each side is branch-free; the one branch, on `u < 10^8`,
/// goes the same way for most columns (measured faster than a branch-free count of leading zero
/// digits, whose longer chain delays the next value's position).
#[inline(always)]
fn digits_u32(out: &mut [u8; SHORT_INT], at: usize, u: u32) -> usize {
    const E8: u32 = 100_000_000;
    let at = at & 1;
    if u < E8 {
        return write_short(out, at, u);
    }
    let high = u / E8; // 1..=42
    let low = eight_digits(u - high * E8);
    let pair_at = high as usize * 2;
    let pair = PAIRS
        .get(pair_at..pair_at + 2)
        .and_then(|p| <[u8; 2]>::try_from(p).ok())
        .map_or(0, u16::from_le_bytes);
    // One digit below 10: drop the pair's leading '0'.
    let short = usize::from(high < 10);
    let pair = pair >> (8 * short);
    if let Some(dst) = out.get_mut(at..at + 2) {
        dst.copy_from_slice(&pair.to_le_bytes());
    }
    let low_at = at + 2 - short;
    if let Some(dst) = out.get_mut(low_at..low_at + 8) {
        dst.copy_from_slice(&(low + ASCII_ZEROS).to_le_bytes());
    }
    10 - short
}

/// Writes `v` in decimal at the start of `out`; returns its length. Bytes after the digits may be
/// overwritten too.
#[inline(always)]
pub(crate) fn write_i32(out: &mut [u8; SHORT_INT], v: i32) -> usize {
    out[0] = b'-';
    let sign = usize::from(v < 0);
    sign + digits_u32(out, sign, v.unsigned_abs())
}

/// Writes `v` in decimal at the start of `out`; returns its length (see [`write_i32`]).
#[inline(always)]
pub(crate) fn write_u32(out: &mut [u8; SHORT_INT], v: u32) -> usize {
    digits_u32(out, 0, v)
}

/// Bytes the float formatters may touch: the longest shortest-round-trip text of an `f64`
/// (`-2.2250738585072014e-308`, 24 bytes) rounded up.
pub(crate) const FLOAT_TEXT: usize = 32;

/// Copies `text` (at most [`FLOAT_TEXT`] bytes) to the start of `out` with fixed-size copies
/// (two overlapping ones), which compile to a few moves instead of a call to `memcpy`.
#[inline(always)]
fn copy_text(out: &mut [u8; FLOAT_TEXT], text: &[u8]) {
    fn two<const N: usize>(out: &mut [u8; FLOAT_TEXT], text: &[u8]) {
        let n = text.len();
        if let (Some(dst), Some(src)) = (out.first_chunk_mut::<N>(), text.first_chunk::<N>()) {
            *dst = *src;
        }
        if let (Some(dst), Some(src)) = (
            out.get_mut(n.wrapping_sub(N)..n)
                .and_then(|d| <&mut [u8; N]>::try_from(d).ok()),
            text.last_chunk::<N>(),
        ) {
            *dst = *src;
        }
    }
    match text.len() {
        16.. => two::<16>(out, text),
        8.. => two::<8>(out, text),
        _ => {
            for (d, s) in out.iter_mut().zip(text) {
                *d = *s;
            }
        }
    }
}

/// Removes the `+` of a positive exponent (`1e+16` → `1e16`, ryu's form) from
/// `out[..n]`; returns the new length.
#[inline(always)]
fn drop_exponent_plus(out: &mut [u8; FLOAT_TEXT], n: usize) -> usize {
    let Some(plus) = out.iter().take(n).rposition(|b| *b == b'+') else {
        return n;
    };
    out.copy_within(plus + 1..n, plus);
    n - 1
}

/// Writes a finite `v` as its shortest round-trip text (zmij's digits, in ryu's form: `0.1`,
/// `1e16`, `1.5e-7`) at the start of `out`; returns its length.
#[inline(always)]
pub(crate) fn write_f64(out: &mut [u8; FLOAT_TEXT], v: f64) -> usize {
    // Only an exponent of 16 or more is written with a `+`.
    write_float(out, v, v.abs() >= 1e16)
}

/// Writes a finite `v` like [`write_f64`] (the shortest text that reads back as the same `f32`).
#[inline(always)]
pub(crate) fn write_f32(out: &mut [u8; FLOAT_TEXT], v: f32) -> usize {
    write_float(out, v, v.abs() >= 1e7)
}

/// Writes zmij's text of a finite `v` at the start of `out`, without the `+` of its exponent
/// when it may have one (`plus`); returns its length.
#[inline(always)]
fn write_float<F: zmij::Float>(out: &mut [u8; FLOAT_TEXT], v: F, plus: bool) -> usize {
    let mut buffer = zmij::Buffer::new();
    let text = buffer.format_finite(v).as_bytes();
    copy_text(out, text);
    if plus {
        drop_exponent_plus(out, text.len())
    } else {
        text.len()
    }
}

/// Converts IEEE 754 half-precision bits to the `f32` of exactly the same value.
pub fn f16_to_f32(bits: u16) -> f32 {
    let sign = u32::from(bits >> 15) << 31;
    let exponent = u32::from((bits >> 10) & 0x1F);
    let mantissa = u32::from(bits & 0x3FF);
    match exponent {
        0 => {
            // Zero or subnormal: mantissa × 2^-24, exact in f32.
            let magnitude = mantissa as f32 * f32::from_bits(0x3380_0000);
            if sign != 0 { -magnitude } else { magnitude }
        }
        // Infinity or NaN (payload kept in the high mantissa bits).
        0x1F => f32::from_bits(sign | 0x7F80_0000 | (mantissa << 13)),
        _ => f32::from_bits(sign | ((exponent + 112) << 23) | (mantissa << 13)),
    }
}

/// The decimal digits of an unsigned 256-bit integer (four little-endian u64 limbs), right-aligned
/// in `out`; returns the index of the first digit.
fn digits_u256(mut limbs: [u64; 4], out: &mut [u8; 80]) -> usize {
    const E19: u64 = 10_000_000_000_000_000_000;
    let mut end = out.len();
    loop {
        // One long division of the whole number by 10^19, most significant limb first.
        let mut rem: u64 = 0;
        for limb in limbs.iter_mut().rev() {
            let cur = (u128::from(rem) << 64) | u128::from(*limb);
            *limb = (cur / u128::from(E19)) as u64;
            rem = (cur % u128::from(E19)) as u64;
        }
        let last = limbs == [0; 4];
        let mut chunk = rem;
        let mut written = 0;
        while written < 19 && (chunk != 0 || !last || written == 0) {
            end -= 1;
            if let Some(slot) = out.get_mut(end) {
                *slot = b'0' + (chunk % 10) as u8;
            }
            chunk /= 10;
            written += 1;
        }
        if last {
            return end;
        }
    }
}

/// Longest decimal text: 77 digits, a sign, "0." and up to 128 zeros of scale.
pub(crate) const DECIMAL_TEXT: usize = 216;

/// Writes a decimal from its two's-complement little-endian bytes (4, 8, 16 or 32 of them) and
/// its scale, exactly as Arrow's display does: the point `scale` digits from the right with
/// leading zeros as needed, or `-scale` zeros appended for a negative scale (never to zero).
pub(crate) fn decimal(le_bytes: &[u8], scale: i8, text: &mut Scratch<DECIMAL_TEXT>) {
    let negative = le_bytes.last().is_some_and(|b| b & 0x80 != 0);
    // Sign-extend into four limbs, then take the magnitude (two's complement negation).
    let fill = if negative { 0xFF } else { 0 };
    let mut wide = [fill; 32];
    if let Some(dst) = wide.get_mut(..le_bytes.len()) {
        dst.copy_from_slice(le_bytes);
    }
    let mut limbs = [0u64; 4];
    for (limb, chunk) in limbs.iter_mut().zip(wide.chunks_exact(8)) {
        *limb = u64::from_le_bytes(chunk.try_into().unwrap_or_default());
    }
    if negative {
        let mut carry = true;
        for limb in &mut limbs {
            let (sum, overflow) = (!*limb).overflowing_add(u64::from(carry));
            *limb = sum;
            carry = overflow;
        }
    }
    let mut buffer = [0u8; 80];
    let start = digits_u256(limbs, &mut buffer);
    let digits = buffer.get(start..).unwrap_or_default();
    write_scaled(negative, digits, scale, text);
}

fn write_scaled(negative: bool, digits: &[u8], scale: i8, text: &mut Scratch<DECIMAL_TEXT>) {
    if negative {
        text.push(b'-');
    }
    let scale_abs = usize::from(scale.unsigned_abs());
    // Runs of zeros are `padded` zeros (the buffer holds the longest run).
    if scale <= 0 {
        text.extend(digits);
        if digits != b"0" {
            text.padded(0, scale_abs);
        }
    } else if digits.len() > scale_abs {
        let (whole, fraction) = digits.split_at(digits.len() - scale_abs);
        text.extend(whole);
        text.push(b'.');
        text.extend(fraction);
    } else {
        text.extend(b"0.");
        text.padded(0, scale_abs - digits.len());
        text.extend(digits);
    }
}

#[cfg(test)]
pub(super) mod tests {
    //! The formatters against Rust's `Display` and ryu; and the test helpers of the JSON
    //! modules' text writers.

    use super::*;
    use std::string::{String, ToString};

    /// The text `write` puts at the start of an `N`-byte buffer (returning its length).
    pub(crate) fn written<const N: usize>(write: impl FnOnce(&mut [u8; N]) -> usize) -> String {
        let mut out = [0; N];
        let n = write(&mut out);
        String::from_utf8(out[..n].to_vec()).unwrap()
    }

    /// The text `write` appends to an empty [`Scratch`].
    pub(crate) fn scratch<const N: usize>(write: impl FnOnce(&mut Scratch<N>)) -> String {
        let mut text = Scratch::new();
        write(&mut text);
        String::from_utf8(text.as_bytes().to_vec()).unwrap()
    }

    /// Xorshift64 from `x`: the pseudo-random cases of the formatters' tests.
    pub(crate) fn xorshift(mut x: u64) -> impl Iterator<Item = u64> {
        core::iter::repeat_with(move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        })
    }

    #[test]
    fn integers_match_display_at_every_length() {
        let u = |v| written(|out| write_u64(out, v));
        let i = |v| written(|out| write_i64(out, v));
        let mut cases = std::vec![0, 1, 9, u64::MAX, i64::MAX as u64];
        let mut p = 1u64;
        while let Some(next) = p.checked_mul(10) {
            cases.extend([p - 1, p, p + 1, next - 1]);
            p = next;
        }
        cases.extend(
            xorshift(0x9E37_79B9_7F4A_7C15)
                .take(20_000)
                .map(|x| x >> (x % 64)),
        );
        for v in cases {
            assert_eq!(u(v), v.to_string());
            assert_eq!(i(v as i64), (v as i64).to_string());
            assert_eq!(i(v as i32 as i64), (v as i32).to_string());
        }
        assert_eq!(i(i64::MIN), i64::MIN.to_string());
    }

    #[test]
    fn short_integers_match_display() {
        let mut cases: std::vec::Vec<i64> = std::vec![0, 1, 9, 10, 99, 100];
        let mut p = 1i64;
        while p <= i64::from(u32::MAX) {
            cases.extend([p - 1, p, p + 1, -p, -p + 1, -p - 1]);
            p *= 10;
        }
        cases.extend([i64::from(i32::MIN), i32::MAX.into(), u32::MAX.into()]);
        for x in xorshift(0x9E37_79B9_7F4A_7C15).take(100_000) {
            cases.push((x >> (x % 64)) as i64);
            cases.push(x as i32 as i64);
        }
        for v in cases {
            if let Ok(v) = i32::try_from(v) {
                assert_eq!(written(|out| write_i32(out, v)), v.to_string());
            }
            if let Ok(v) = u32::try_from(v) {
                assert_eq!(written(|out| write_u32(out, v)), v.to_string());
            }
        }
    }

    #[test]
    fn floats_are_written_in_ryus_form() {
        let (max, least) = (f64::MAX, f64::MIN_POSITIVE);
        let (below_1e16, long) = (9_999_999_999_999_998.0, 123_456_789_012_345_680.0);
        let mut cases = std::vec![
            0.0, -0.0, 1.0, 0.1, 1e15, 1e16, below_1e16, 1e-5, 1e-6, 1.5e-7
        ];
        cases.extend([1e300, -1e300, max, least, 5e-324, long]);
        for x in xorshift(0x2545_F491_4F6C_DD1D).take(200_000) {
            cases.push(f64::from_bits(x));
            cases.push((x >> 11) as f64 / (1u64 << 53) as f64);
        }
        let ryu = |v: f64| ryu::Buffer::new().format_finite(v).to_string();
        for v in cases.into_iter().filter(|v| v.is_finite()) {
            assert_eq!(written(|out| write_f64(out, v)), ryu(v), "{v:e}");
            let f = v as f32;
            if f.is_finite() {
                let expected = ryu::Buffer::new().format_finite(f).to_string();
                assert_eq!(written(|out| write_f32(out, f)), expected, "{f:e}");
            }
        }
    }

    #[test]
    fn half_floats_convert_exactly() {
        assert_eq!(f16_to_f32(0x3C00), 1.0);
        assert_eq!(f16_to_f32(0xC000), -2.0);
        assert_eq!(f16_to_f32(0x7BFF), 65504.0);
        assert_eq!(f16_to_f32(0x0001), 5.960_464_5e-8);
        assert_eq!(f16_to_f32(0x03FF), 6.097_555e-5);
        assert_eq!(f16_to_f32(0x0400), 6.103_515_6e-5);
        assert!(f16_to_f32(0x8000).is_sign_negative() && f16_to_f32(0x8000) == 0.0);
        assert_eq!(f16_to_f32(0x7C00), f32::INFINITY);
        assert_eq!(f16_to_f32(0xFC00), f32::NEG_INFINITY);
        assert!(f16_to_f32(0x7E00).is_nan());
        // Every finite half against the definition: (-1)^s × 2^(e-15) × 1.m, or 2^-14 × 0.m.
        for bits in 0..=u16::MAX {
            let e = (bits >> 10) & 0x1F;
            if e == 0x1F {
                continue;
            }
            let m = f64::from(bits & 0x3FF);
            let magnitude = if e == 0 {
                m * 2f64.powi(-24)
            } else {
                (1.0 + m / 1024.0) * 2f64.powi(i32::from(e) - 15)
            };
            let f = f16_to_f32(bits);
            assert_eq!(f64::from(f).abs(), magnitude, "{bits:#06x}");
            assert_eq!(f.is_sign_negative(), bits >> 15 == 1, "{bits:#06x}");
        }
    }

    fn dec(bytes: &[u8], scale: i8) -> String {
        scratch::<DECIMAL_TEXT>(|text| decimal(bytes, scale, text))
    }

    #[test]
    fn decimals_follow_arrow_display() {
        assert_eq!(dec(&12345i32.to_le_bytes(), 2), "123.45");
        assert_eq!(dec(&(-5i64).to_le_bytes(), 3), "-0.005");
        assert_eq!(dec(&0i128.to_le_bytes(), -2), "0");
        assert_eq!(dec(&7i128.to_le_bytes(), -2), "700");
        assert_eq!(dec(&0i32.to_le_bytes(), 2), "0.00");
        assert_eq!(dec(&i32::MIN.to_le_bytes(), 9), "-2.147483648");
        assert_eq!(dec(&i64::MIN.to_le_bytes(), 18), "-9.223372036854775808");
        assert_eq!(
            dec(&i128::MIN.to_le_bytes(), 38),
            "-1.70141183460469231731687303715884105728"
        );
        assert_eq!(dec(&i128::MAX.to_le_bytes(), 0), i128::MAX.to_string());
        let mut max = [0xFFu8; 32];
        max[31] = 0x7F;
        assert_eq!(
            dec(&max, 0),
            "57896044618658097711785492504343953926634992332820282019728792003956564819967"
        );
        let mut min = [0u8; 32];
        min[31] = 0x80;
        assert_eq!(
            dec(&min, 76),
            "-5.7896044618658097711785492504343953926634992332820282019728792003956564819968"
        );
        assert_eq!(dec(&[0xFF; 32], 0), "-1");
        let long = dec(&1i32.to_le_bytes(), 127);
        assert_eq!(long.len(), 2 + 127);
        let zeros = dec(&(-1i32).to_le_bytes(), -128);
        assert_eq!(zeros.len(), 2 + 128);
    }
}
