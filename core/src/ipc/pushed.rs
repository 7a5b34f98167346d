//! [`Pushed`]: the bytes a [`FileDecoder`](super::FileDecoder) has been handed and not yet used.
//!
//! It uses the bytes and the errors; nothing else of `ipc`.
//!
//! Bytes enter as `(range, Bytes)` pieces, in any split, overlap or order, each checked to lie in
//! the file and to be as long as its range. They leave as windows of one piece when one piece
//! holds the whole range asked for (no copy), or joined into fresh memory when a range spans
//! several pieces.

use crate::bytes::Bytes;
use crate::error::{FormatError, FormatErrorKind, FormatResult};
use alloc::vec::Vec;
use core::ops::Range;

/// Pushed pieces, sorted by start; they may overlap.
#[derive(Debug, Default)]
pub(super) struct Pushed {
    pieces: Vec<(Range<u64>, Bytes<'static>)>,
}

impl Pushed {
    /// Checks a whole push, then keeps its non-empty pieces. On error nothing is kept.
    pub fn push(
        &mut self,
        file_len: u64,
        ranges: Vec<Range<u64>>,
        data: Vec<Bytes<'static>>,
    ) -> FormatResult<()> {
        if ranges.len() != data.len() {
            return Err(FormatErrorKind::InvalidValue {
                what: "pushed buffers (not one per range)",
                value: i64::try_from(data.len()).unwrap_or(i64::MAX),
            }
            .into());
        }
        for (range, bytes) in ranges.iter().zip(&data) {
            if range.start > range.end || range.end > file_len {
                return Err(FormatError::from(FormatErrorKind::Truncated {
                    what: "pushed range (past the end of the file, or reversed)",
                    needed: range.end,
                    available: file_len,
                })
                .at(range.start));
            }
            if bytes.len() as u64 != range.end - range.start {
                return Err(FormatError::from(FormatErrorKind::InvalidValue {
                    what: "pushed bytes (length differs from their range)",
                    value: i64::try_from(bytes.len()).unwrap_or(i64::MAX),
                })
                .at(range.start));
            }
        }
        for (range, bytes) in ranges.into_iter().zip(data) {
            if !range.is_empty() {
                let at = self.pieces.partition_point(|(r, _)| r.start <= range.start);
                self.pieces.insert(at, (range, bytes));
            }
        }
        Ok(())
    }

    /// The parts of `range` no piece holds, in order.
    pub fn missing(&self, range: &Range<u64>) -> Vec<Range<u64>> {
        let mut out = Vec::new();
        let mut covered_to = range.start;
        for (piece, _) in &self.pieces {
            if piece.start >= range.end || covered_to >= range.end {
                break;
            }
            if piece.end <= covered_to {
                continue;
            }
            if piece.start > covered_to {
                out.push(covered_to..piece.start);
            }
            covered_to = piece.end;
        }
        if covered_to < range.end {
            out.push(covered_to..range.end);
        }
        out
    }

    /// Whether every byte of every range in `ranges` has been pushed.
    pub fn holds_all(&self, ranges: &[Range<u64>]) -> bool {
        ranges.iter().all(|r| self.missing(r).is_empty())
    }

    /// The bytes of `range`: a window of one piece when one holds it all, otherwise the
    /// pieces joined. `None` if a byte of it was not pushed.
    pub fn get(&self, range: Range<u64>) -> Option<Bytes<'static>> {
        if range.is_empty() {
            return Some(Bytes::default());
        }
        let holder = self
            .pieces
            .iter()
            .take_while(|(piece, _)| piece.start <= range.start)
            .find(|(piece, _)| range.end <= piece.end);
        if let Some((piece, bytes)) = holder {
            let from = usize::try_from(range.start - piece.start).ok()?;
            let to = usize::try_from(range.end - piece.start).ok()?;
            return bytes.slice(from..to);
        }
        let len = usize::try_from(range.end - range.start).ok()?;
        let mut joined = Vec::with_capacity(len);
        let mut covered_to = range.start;
        for (piece, bytes) in &self.pieces {
            if covered_to >= range.end || piece.start > covered_to {
                break;
            }
            if piece.end <= covered_to {
                continue;
            }
            let to = piece.end.min(range.end);
            let window = usize::try_from(covered_to - piece.start).ok()?
                ..usize::try_from(to - piece.start).ok()?;
            joined.extend_from_slice(bytes.get(window)?);
            covered_to = to;
        }
        (covered_to == range.end).then(|| Bytes::from_vec(joined))
    }

    /// Forgets the pieces that `keep` does not want.
    pub fn retain(&mut self, mut keep: impl FnMut(&Range<u64>) -> bool) {
        self.pieces.retain(|(range, _)| keep(range));
    }

    /// Forgets every piece.
    pub fn clear(&mut self) {
        self.pieces.clear();
    }
}

#[cfg(test)]
#[allow(clippy::single_range_in_vec_init)]
mod tests {
    use super::*;
    use alloc::vec;

    fn pushed(pieces: &[(u64, &'static [u8])]) -> Pushed {
        let mut out = Pushed::default();
        for &(start, bytes) in pieces {
            let range = start..start + bytes.len() as u64;
            out.push(100, vec![range], vec![Bytes::borrowed(bytes)])
                .unwrap();
        }
        out
    }

    #[test]
    fn ranges_are_found_whole_joined_or_missing() {
        let p = pushed(&[(10, b"abcd"), (12, b"CDEF"), (20, b"xy")]);
        assert_eq!(p.get(11..13).as_deref(), Some(&b"bc"[..]));
        assert!(p.get(11..13).unwrap().is_borrowed(), "one piece: no copy");
        assert_eq!(p.get(10..16).as_deref(), Some(&b"abcdEF"[..]));
        assert_eq!(p.get(10..17), None);
        assert_eq!(p.get(19..21), None);
        assert_eq!(p.missing(&(8..24)), vec![8..10, 16..20, 22..24]);
        assert!(p.missing(&(12..16)).is_empty());
        assert!(p.holds_all(&[10..16, 20..22]));
        assert!(!p.holds_all(&[10..17]));
    }

    #[test]
    fn bad_pushes_are_errors_and_keep_nothing() {
        let mut p = Pushed::default();
        let bytes = |b: &'static [u8]| Bytes::borrowed(b);
        let short = p.push(10, vec![0..4], vec![bytes(b"abc")]).unwrap_err();
        assert_eq!(short.offset(), Some(0));
        let past = p.push(10, vec![0..2, 8..12], vec![bytes(b"ab"), bytes(b"abcd")]);
        assert_eq!(past.unwrap_err().offset(), Some(8));
        #[allow(clippy::reversed_empty_ranges)]
        let reversed = p.push(10, vec![5..4], vec![bytes(b"")]);
        assert!(reversed.is_err());
        assert!(p.push(10, vec![0..2], vec![]).is_err());
        assert_eq!(p.missing(&(0..10)), vec![0..10]);
    }
}
