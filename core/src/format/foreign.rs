//! What bytes that are not Arrow IPC look like: [`Foreign::sniff`] names the format of an
//! input's first bytes (Parquet, Feather v1, JSON, other text), so that a file passed by
//! mistake is refused as what it is instead of with a length or magic error.
//!
//! It uses the format's magic and continuation marker; the [`Foreign`] it returns is defined
//! with the errors that carry it ([`FormatErrorKind::NotArrow`](crate::error::FormatErrorKind)).
//!
//! Readers call it only once their own checks have failed, so a valid Arrow input is never
//! second-guessed.

use super::{CONTINUATION, MAGIC};
use crate::error::Foreign;

impl Foreign {
    /// What `leading`, the first bytes of an input (any number; four tell most formats apart),
    /// looks like, or `None` when it may be Arrow IPC (it starts with `ARROW1` or a message's
    /// continuation marker, or is binary that names no known format).
    pub fn sniff(leading: &[u8]) -> Option<Foreign> {
        if leading.is_empty() || leading.starts_with(MAGIC) || leading.starts_with(&CONTINUATION) {
            return None;
        }
        if leading.starts_with(b"PAR1") {
            return Some(Foreign::Parquet);
        }
        if leading.starts_with(b"FEA1") {
            return Some(Foreign::FeatherV1);
        }
        // Text: valid UTF-8 (a character cut at the end of the prefix is fine) without
        // control characters other than tab, line feed and carriage return.
        let text = match core::str::from_utf8(leading) {
            Ok(text) => text,
            Err(e) if e.error_len().is_none() => {
                core::str::from_utf8(leading.get(..e.valid_up_to())?).ok()?
            }
            Err(_) => return None,
        };
        if text.is_empty()
            || text
                .chars()
                .any(|c| c.is_control() && !matches!(c, '\t' | '\n' | '\r'))
        {
            return None;
        }
        match text.trim_start().chars().next() {
            Some('{' | '[') => Some(Foreign::Json),
            _ => Some(Foreign::Text),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_by_their_first_bytes() {
        let cases: &[(&[u8], Option<Foreign>)] = &[
            (b"PAR1\x15\x04", Some(Foreign::Parquet)),
            (b"FEA1\0\0\0\0", Some(Foreign::FeatherV1)),
            (b"{\"a\": 1}\n", Some(Foreign::Json)),
            (b"  \n[1, 2]", Some(Foreign::Json)),
            (b"id,name\n1,x\n", Some(Foreign::Text)),
            ("caf\u{e9}".as_bytes(), Some(Foreign::Text)),
            // A multi-byte character cut by the end of the prefix is still text.
            (&"ab\u{e9}".as_bytes()[..3], Some(Foreign::Text)),
            // Arrow, or binary that names nothing.
            (b"ARROW1\0\0", None),
            (b"\xff\xff\xff\xff\x10\0\0\0", None),
            (b"\x10\x01\0\0", None), // a legacy stream's length prefix
            (b"a\0b,", None),
            (b"\xc3(", None),
            (b"", None),
        ];
        for (leading, expected) in cases {
            assert_eq!(Foreign::sniff(leading), *expected, "{leading:?}");
        }
    }
}
