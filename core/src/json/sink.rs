//! The caller's output buffer as the encoder sees it: a write position, a small spill for the
//! tail of a short piece that did not fit, and at most one long value in progress.
//!
//! Short pieces (punctuation, numbers, dates) are written whole when they fit and otherwise split:
//! the part that fits goes out now, the rest waits in the [`Spill`]. Long pieces (strings, keys,
//! binary) are [`Stream`]s that resume at any byte. The encoder drains both before taking its next
//! step, so the bytes leave in order whatever the buffer sizes.
//!
//! Invariant: the spill holds bytes only while the output buffer is full, so a piece that fits
//! never needs to look at the spill.

use super::escape;
use super::framing::{KEY_OPEN, Syntax};
use super::options::BinaryFormat;

/// Capacity of the spill: the longest run of short pieces one step can write (a separator, a
/// decimal of up to [`DECIMAL_TEXT`](super::number::DECIMAL_TEXT) bytes, a bracket).
pub(crate) const SPILL: usize = 256;

/// Bytes that were written but did not fit in the caller's buffer yet.
#[derive(Clone)]
pub(crate) struct Spill {
    bytes: [u8; SPILL],
    start: u16,
    end: u16,
}

impl Spill {
    /// An empty spill.
    pub(crate) const fn new() -> Self {
        Spill {
            bytes: [0; SPILL],
            start: 0,
            end: 0,
        }
    }

    /// Whether no bytes are waiting.
    #[inline(always)]
    pub(crate) fn is_empty(&self) -> bool {
        self.start == self.end
    }
}

/// How the body of a [`Stream`] is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Body {
    /// UTF-8 text, escaped per RFC 8259.
    Text,
    /// Bytes as lowercase hex.
    Hex,
    /// Bytes as padded base64.
    Base64,
    /// Checked JSON text (an `arrow.json` value) as it is, unquoted, without its tabs and line
    /// breaks: in valid JSON they lie between tokens, never inside a string, so the value stays
    /// on one line of NDJSON.
    Json,
}

impl Body {
    /// The body of binary values written as `format`.
    pub(crate) fn binary(format: BinaryFormat) -> Self {
        match format {
            BinaryFormat::Base64 => Body::Base64,
            _ => Body::Hex,
        }
    }

    /// Writes `src` in this form into `out`, which holds its worst case; returns the bytes
    /// written.
    #[inline(always)]
    fn write(self, src: &[u8], out: &mut [u8]) -> usize {
        match self {
            Body::Text => escape::escape_into(src, out),
            Body::Hex => escape::hex_into(src, out),
            Body::Base64 => escape::base64_into(src, out),
            Body::Json => json_into(src, out),
        }
    }

    /// Bytes the body of `src` takes at most.
    #[inline(always)]
    pub(crate) fn worst(self, src: &[u8]) -> usize {
        match self {
            Body::Text => src.len().saturating_mul(6),
            Body::Hex => src.len().saturating_mul(2),
            Body::Base64 => escape::base64_len(src.len()),
            Body::Json => src.len(),
        }
    }
}

/// Copies JSON text without its tabs and line breaks into `out` (as long as `src` at least);
/// returns the bytes written.
fn json_into(src: &[u8], out: &mut [u8]) -> usize {
    let mut n = 0;
    for &byte in src {
        if !matches!(byte, b'\t' | b'\n' | b'\r')
            && let Some(slot) = out.get_mut(n)
        {
            *slot = byte;
            n += 1;
        }
    }
    n
}

/// A quoted value or key being written: the rest of its source bytes, then a closing suffix.
#[derive(Debug, Clone)]
pub(crate) struct Stream<'b> {
    rest: &'b [u8],
    body: Body,
    suffix: &'static [u8],
}

/// The output of one `encode` call.
pub(crate) struct Sink<'o, 's, 'b> {
    out: &'o mut [u8],
    pos: usize,
    spill: &'s mut Spill,
    stream: &'s mut Option<Stream<'b>>,
}

impl<'o, 's, 'b> Sink<'o, 's, 'b> {
    /// Wraps the caller's buffer and the encoder's pending output.
    pub(crate) fn new(
        out: &'o mut [u8],
        spill: &'s mut Spill,
        stream: &'s mut Option<Stream<'b>>,
    ) -> Self {
        Sink {
            out,
            pos: 0,
            spill,
            stream,
        }
    }

    /// Bytes written to the caller's buffer so far.
    pub(crate) fn written(&self) -> usize {
        self.pos
    }

    /// Takes back everything written since [`Sink::written`] returned `mark` (the fast path's
    /// unfinished row; nothing of it is in the spill or a stream).
    pub(crate) fn rewind(&mut self, mark: usize) {
        self.pos = mark.min(self.pos);
    }

    /// The whole buffer and the write position, for the fast path's own loops (which keep
    /// `pos` within the buffer).
    pub(crate) fn parts(&mut self) -> (&mut [u8], &mut usize) {
        (self.out, &mut self.pos)
    }

    /// Whether output is waiting (spilled bytes or an unfinished stream): the encoder must stop
    /// stepping and return.
    #[inline(always)]
    pub(crate) fn blocked(&self) -> bool {
        !self.spill.is_empty() || self.stream.is_some()
    }

    /// Free bytes in the caller's buffer.
    #[inline(always)]
    pub(crate) fn room(&self) -> usize {
        self.out.len() - self.pos
    }

    /// Free bytes in the spill: what [`Sink::put`] can hold past the end of the buffer.
    pub(crate) fn spill_room(&self) -> usize {
        SPILL - usize::from(self.spill.end)
    }

    /// Writes `bytes`: straight into the buffer when they fit, else what fits and the rest to
    /// the spill (`bytes` must be at most [`SPILL`] long, which every caller's pieces are).
    #[inline(always)]
    pub(crate) fn put(&mut self, bytes: &[u8]) {
        if let Some(dst) = self.out.get_mut(self.pos..self.pos + bytes.len()) {
            dst.copy_from_slice(bytes);
            self.pos += bytes.len();
        } else {
            self.put_split(bytes);
        }
    }

    #[cold]
    #[inline(never)]
    fn put_split(&mut self, bytes: &[u8]) {
        let later = bytes
            .get(fill(self.out, &mut self.pos, bytes)..)
            .unwrap_or_default();
        let end = usize::from(self.spill.end);
        if let Some(dst) = self.spill.bytes.get_mut(end..end + later.len()) {
            dst.copy_from_slice(later);
            self.spill.end += later.len() as u16;
        } else {
            // Cannot happen: every writer checks the spill's room first (bytes lost here were
            // a row's value missing from the output).
            debug_assert!(false, "{} bytes past a full spill", later.len());
        }
    }

    /// The free part of the buffer as an array, when at least `N` bytes are free.
    #[inline(always)]
    pub(crate) fn tail<const N: usize>(&mut self) -> Option<&mut [u8; N]> {
        self.out.get_mut(self.pos..)?.first_chunk_mut()
    }

    /// Marks `n` bytes of [`Sink::tail`] as written.
    #[inline(always)]
    pub(crate) fn advance(&mut self, n: usize) {
        self.pos = (self.pos + n).min(self.out.len());
    }

    /// Writes `"`, then `bytes` in the given body form, then `suffix` (`"` or `":`): at once when
    /// the worst case fits (or text needs no escaping and fits as it is), else as a stream that
    /// the next [`Sink::flush`] continues.
    #[inline(always)]
    pub(crate) fn quoted(&mut self, bytes: &'b [u8], body: Body, suffix: &'static [u8]) {
        let worst = body.worst(bytes) + suffix.len();
        if self.room() > worst {
            self.put(b"\"");
            self.pos += body.write(bytes, self.out.get_mut(self.pos..).unwrap_or_default());
            self.put(suffix);
        } else if !(body == Body::Text && self.clean_text(bytes, suffix)) {
            self.put(b"\"");
            *self.stream = Some(Stream {
                rest: bytes,
                body,
                suffix,
            });
        }
    }

    /// Writes checked JSON text ([`Body::Json`]): at once when it fits, else as a stream that
    /// the next [`Sink::flush`] continues.
    pub(crate) fn json(&mut self, text: &'b [u8]) {
        if self.room() >= text.len() {
            self.pos += json_into(text, self.out.get_mut(self.pos..).unwrap_or_default());
        } else {
            *self.stream = Some(Stream {
                rest: text,
                body: Body::Json,
                suffix: b"",
            });
        }
    }

    /// Writes `"`, `bytes` and `suffix` when the text needs no escaping and all of it fits;
    /// otherwise writes nothing. Returns whether it wrote.
    #[inline(always)]
    pub(crate) fn clean_text(&mut self, bytes: &[u8], suffix: &[u8]) -> bool {
        let end = self.pos + 1 + bytes.len();
        let Some(dst) = self.out.get_mut(self.pos..end + suffix.len()) else {
            return false;
        };
        let Some((quote, rest)) = dst.split_first_mut() else {
            return false;
        };
        *quote = b'"';
        if !escape::copy_if_clean(bytes, rest) {
            return false;
        }
        if let Some(tail) = rest.get_mut(bytes.len()..) {
            tail.copy_from_slice(suffix);
        }
        self.pos = end + suffix.len();
        true
    }

    /// Writes `"`, the `len` bytes of text at the start of `window` escaped
    /// ([`escape::escape_short`]), and `"`, if the worst case fits; returns whether it wrote.
    #[inline(always)]
    pub(crate) fn short_escaped(
        &mut self,
        window: &[u8; escape::SHORT_WINDOW],
        len: usize,
    ) -> bool {
        let reach = len * 6 + escape::SHORT_REACH + 2;
        let Some((quote, body)) = self
            .out
            .get_mut(self.pos..self.pos + reach)
            .and_then(|dst| dst.split_first_mut())
        else {
            return false;
        };
        *quote = b'"';
        let n = escape::escape_short(window, len, body);
        if let Some(close) = body.get_mut(n) {
            *close = b'"';
        }
        self.pos += n + 2;
        true
    }

    /// Writes `"name":` for a name known to need no escaping.
    #[inline(always)]
    pub(crate) fn plain_key<F: Syntax>(&mut self, name: &'b str) {
        let name = name.as_bytes();
        let (at, len) = (self.pos, name.len() + 1 + F::KEY_CLOSE.len());
        if let Some(dst) = self.out.get_mut(at..at + len) {
            if let Some((open, rest)) = dst.split_first_mut() {
                *open = KEY_OPEN;
                if let Some((body, close)) = rest.split_at_mut_checked(name.len()) {
                    copy_short(body, name);
                    close.copy_from_slice(F::KEY_CLOSE);
                }
            }
            self.pos = at + len;
        } else {
            self.quoted(name, Body::Text, F::KEY_CLOSE);
        }
    }

    /// Drains the spill and the stream into the buffer; `true` when nothing is left waiting.
    pub(crate) fn flush(&mut self) -> bool {
        loop {
            if !self.spill.is_empty() {
                let (start, end) = (usize::from(self.spill.start), usize::from(self.spill.end));
                let waiting = self.spill.bytes.get(start..end).unwrap_or_default();
                let n = fill(self.out, &mut self.pos, waiting);
                if start + n < end {
                    self.spill.start += n as u16;
                    return false;
                }
                self.spill.start = 0;
                self.spill.end = 0;
            }
            let Some(mut stream) = self.stream.take() else {
                return true;
            };
            self.advance_stream(&mut stream);
            if stream.rest.is_empty() {
                self.put(stream.suffix);
            } else {
                *self.stream = Some(stream);
                return false;
            }
        }
    }

    /// Writes as much of the stream's body as fits (an escape sequence, hex pair or base64 group
    /// cut by the end of the buffer goes to the spill whole).
    fn advance_stream(&mut self, stream: &mut Stream<'b>) {
        match stream.body {
            Body::Text => {
                while !stream.rest.is_empty() && self.room() > 0 && self.spill.is_empty() {
                    let clean = escape::first_escape(stream.rest).min(self.room());
                    let (run, tail) = stream.rest.split_at(clean);
                    self.put(run);
                    stream.rest = tail;
                    if self.room() == 0 {
                        break;
                    }
                    if let Some((byte, tail)) = stream.rest.split_first() {
                        let (sequence, len) = escape::escape_sequence(*byte);
                        self.put(sequence.get(..len).unwrap_or_default());
                        stream.rest = tail;
                    }
                }
            }
            Body::Json => {
                let n = self.room().min(stream.rest.len());
                let (now, tail) = stream.rest.split_at(n);
                self.pos += json_into(now, self.out.get_mut(self.pos..).unwrap_or_default());
                stream.rest = tail;
            }
            // Whole groups of `unit` bytes (`unit + 1` characters each) that fit, then one more.
            Body::Hex | Body::Base64 => {
                let unit = if stream.body == Body::Hex { 1 } else { 3 };
                let whole = (self.room() / (unit + 1)).min(stream.rest.len() / unit) * unit;
                let (now, tail) = stream.rest.split_at(whole);
                let dst = self.out.get_mut(self.pos..).unwrap_or_default();
                self.pos += stream.body.write(now, dst);
                stream.rest = tail;
                if !stream.rest.is_empty() && self.room() > 0 {
                    let (group, tail) = stream.rest.split_at(stream.rest.len().min(unit));
                    let mut chars = [0; 4];
                    let n = stream.body.write(group, &mut chars);
                    self.put(chars.get(..n).unwrap_or_default());
                    stream.rest = tail;
                }
            }
        }
    }
}

/// Copies what fits of `bytes` into `out` at `*pos` and moves `pos` past it; returns how much.
fn fill(out: &mut [u8], pos: &mut usize, bytes: &[u8]) -> usize {
    let n = out.len().saturating_sub(*pos).min(bytes.len());
    if let (Some(dst), Some(src)) = (out.get_mut(*pos..*pos + n), bytes.get(..n)) {
        dst.copy_from_slice(src);
        *pos += n;
    }
    n
}

/// Copies `src` into `dst`, of the same length, without a call to `memcpy` when it is at most
/// 16 bytes (a member name, as a rule): two fixed-size copies that overlap, as `memcpy` itself
/// does for short lengths (the call was 1.5-2% of the walk's time).
#[inline(always)]
fn copy_short(dst: &mut [u8], src: &[u8]) {
    fn halves<const W: usize>(dst: &mut [u8], src: &[u8]) {
        if let (Some(d), Some(s)) = (dst.first_chunk_mut::<W>(), src.first_chunk::<W>()) {
            *d = *s;
        }
        if let (Some(d), Some(s)) = (dst.last_chunk_mut::<W>(), src.last_chunk::<W>()) {
            *d = *s;
        }
    }
    debug_assert_eq!(dst.len(), src.len());
    match src.len() {
        0 => {}
        n @ 1..4 => {
            // The first, middle and last bytes: every byte of 1 to 3.
            for k in [0, n / 2, n - 1] {
                if let (Some(d), Some(s)) = (dst.get_mut(k), src.get(k)) {
                    *d = *s;
                }
            }
        }
        4..8 => halves::<4>(dst, src),
        8..=16 => halves::<8>(dst, src),
        _ => dst.copy_from_slice(src),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn short_copies_copy_every_length_and_nothing_more() {
        let src: [u8; 20] = core::array::from_fn(|k| k as u8 + 1);
        for n in 0..=20 {
            let mut dst = [0u8; 21];
            super::copy_short(&mut dst[..n], &src[..n]);
            assert_eq!(dst[..n], src[..n], "{n} bytes");
            assert!(dst[n..].iter().all(|&b| b == 0), "{n} bytes");
        }
    }
}
