//! Values of the `arrow.json` extension type: whether a value's text is one JSON value
//! (RFC 8259), checked once per value before the encoder writes it into the document as JSON
//! rather than as a string. No allocation: open containers are bits of a fixed stack.

/// Containers open at once that [`is_json`] follows; text nested deeper is not taken as JSON
/// (the encoder writes it as a string).
pub(crate) const DEPTH: usize = 256;

/// Whether `text` is exactly one JSON value, with optional whitespace around it: valid UTF-8,
/// strings without raw control characters and with well-formed escapes (a `\u` surrogate only
/// in a pair), numbers in JSON's grammar, and at most [`DEPTH`] containers open at once.
pub(crate) fn is_json(text: &[u8]) -> bool {
    core::str::from_utf8(text).is_ok() && Parser { text, at: 0 }.value()
}

/// A position in the text being checked.
struct Parser<'t> {
    text: &'t [u8],
    at: usize,
}

impl Parser<'_> {
    fn peek(&self) -> Option<u8> {
        self.text.get(self.at).copied()
    }

    /// Skips JSON whitespace.
    fn space(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.at += 1;
        }
    }

    /// Skips whitespace, then `byte` if it is next; returns whether it was.
    fn eat(&mut self, byte: u8) -> bool {
        self.space();
        let next = self.peek() == Some(byte);
        self.at += usize::from(next);
        next
    }

    /// The whole text as one value: containers are followed on a stack of bits (set: an
    /// object), scalars by their own readers.
    fn value(&mut self) -> bool {
        let mut objects = [0u64; DEPTH / 64];
        let mut depth = 0;
        loop {
            // A value is due.
            self.space();
            let scalar = match self.peek() {
                Some(open @ (b'{' | b'[')) => {
                    self.at += 1;
                    let Some(word) = objects.get_mut(depth / 64) else {
                        return false;
                    };
                    let object = open == b'{';
                    let bit = 1u64 << (depth % 64);
                    *word = if object { *word | bit } else { *word & !bit };
                    depth += 1;
                    if !self.eat(if object { b'}' } else { b']' }) {
                        if object && !self.key() {
                            return false;
                        }
                        continue;
                    }
                    depth -= 1;
                    true
                }
                Some(b'"') => self.string(),
                Some(b'-' | b'0'..=b'9') => self.number(),
                _ => self.literal(b"true") || self.literal(b"false") || self.literal(b"null"),
            };
            if !scalar {
                return false;
            }
            // After a value: the next member or element, or the containers it closes.
            loop {
                if depth == 0 {
                    self.space();
                    return self.at == self.text.len();
                }
                let above = depth - 1;
                let object = objects
                    .get(above / 64)
                    .is_some_and(|w| w >> (above % 64) & 1 == 1);
                if self.eat(b',') {
                    if object && !self.key() {
                        return false;
                    }
                    break;
                }
                if !self.eat(if object { b'}' } else { b']' }) {
                    return false;
                }
                depth -= 1;
            }
        }
    }

    /// A member's `"key":` (after whitespace).
    fn key(&mut self) -> bool {
        self.space();
        self.peek() == Some(b'"') && self.string() && self.eat(b':')
    }

    /// A string, from its opening quote.
    fn string(&mut self) -> bool {
        self.at += 1;
        loop {
            match self.peek() {
                Some(b'"') => {
                    self.at += 1;
                    return true;
                }
                Some(b'\\') => {
                    self.at += 1;
                    match self.peek() {
                        Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') => {
                            self.at += 1
                        }
                        Some(b'u') => {
                            let Some(unit) = self.hex() else {
                                return false;
                            };
                            // A high surrogate must be followed by a low one; a low one alone
                            // is no character.
                            let low = |u: u16| (0xDC00..0xE000).contains(&u);
                            if (0xD800..0xDC00).contains(&unit) {
                                if !(self.literal(b"\\") && self.peek() == Some(b'u')) {
                                    return false;
                                }
                                if !self.hex().is_some_and(low) {
                                    return false;
                                }
                            } else if low(unit) {
                                return false;
                            }
                        }
                        _ => return false,
                    }
                }
                Some(0..0x20) | None => return false,
                Some(_) => self.at += 1,
            }
        }
    }

    /// The four hex digits after a `u` of an escape, as a UTF-16 unit.
    fn hex(&mut self) -> Option<u16> {
        let digits = self.text.get(self.at + 1..self.at + 5)?;
        let text = core::str::from_utf8(digits).ok()?;
        if !digits.iter().all(u8::is_ascii_hexdigit) {
            return None;
        }
        self.at += 5;
        u16::from_str_radix(text, 16).ok()
    }

    /// Skips digits; returns how many.
    fn digits(&mut self) -> usize {
        let start = self.at;
        while self.peek().is_some_and(|b| b.is_ascii_digit()) {
            self.at += 1;
        }
        self.at - start
    }

    /// A number: `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`.
    fn number(&mut self) -> bool {
        self.at += usize::from(self.peek() == Some(b'-'));
        match self.peek() {
            Some(b'0') => self.at += 1,
            Some(b'1'..=b'9') => {
                self.digits();
            }
            _ => return false,
        }
        if self.peek() == Some(b'.') {
            self.at += 1;
            if self.digits() == 0 {
                return false;
            }
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            self.at += 1;
            self.at += usize::from(matches!(self.peek(), Some(b'+' | b'-')));
            if self.digits() == 0 {
                return false;
            }
        }
        true
    }

    /// `word` if it is next.
    fn literal(&mut self, word: &[u8]) -> bool {
        let next = self
            .text
            .get(self.at..)
            .is_some_and(|t| t.starts_with(word));
        if next {
            self.at += word.len();
        }
        next
    }
}

#[cfg(test)]
mod tests {
    use super::{DEPTH, is_json};
    use std::string::String;

    #[test]
    fn json_values_are_told_from_other_text() {
        for valid in [
            "0",
            "-0.5e+10",
            "1E3",
            "true",
            " null ",
            "\"\"",
            "\"a\\\"b\\\\\\/\\b\\f\\n\\r\\t\\u00e9\"",
            "\"\\ud83d\\ude00\"",
            "\"é 😀\"",
            "[]",
            "{}",
            "[1, [2, {\"a\": [null]}], {}]",
            "{\"a\":1,\"b\":{\"c\":[true,false]}}",
            "\n{\r\n\t\"k\" : \"v\"\n}\n",
        ] {
            assert!(is_json(valid.as_bytes()), "{valid:?}");
            let parsed = serde_json::from_str::<serde_json::Value>(valid);
            assert!(parsed.is_ok(), "serde_json agrees on {valid:?}");
        }
        for invalid in [
            "",
            " ",
            "01",
            "1.",
            ".5",
            "-",
            "1e",
            "+1",
            "NaN",
            "tru",
            "truex",
            "nul",
            "1 2",
            "[1,]",
            "[1 2]",
            "{\"a\"}",
            "{\"a\":}",
            "{\"a\":1,}",
            "{a:1}",
            "{1:1}",
            "[",
            "]",
            "{\"a\":1]",
            "[1}",
            "\"unterminated",
            "\"tab\there\"",
            "\"new\nline\"",
            "\"\\x\"",
            "\"\\u12\"",
            "\"\\ud83d\"",
            "\"\\ud83d\\u0041\"",
            "\"\\ude00\"",
            "'single'",
        ] {
            assert!(!is_json(invalid.as_bytes()), "{invalid:?}");
            let parsed = serde_json::from_str::<serde_json::Value>(invalid);
            assert!(parsed.is_err(), "serde_json agrees on {invalid:?}");
        }
        assert!(!is_json(b"\"\xff\""), "not UTF-8");
        // As deep as the stack goes, and one more.
        let nested = |depth: usize| "[".repeat(depth) + &"]".repeat(depth);
        assert!(is_json(nested(DEPTH).as_bytes()));
        assert!(!is_json(nested(DEPTH + 1).as_bytes()));
        let objects: String = "{\"a\":".repeat(DEPTH) + "1" + &"}".repeat(DEPTH);
        assert!(is_json(objects.as_bytes()));
    }
}
