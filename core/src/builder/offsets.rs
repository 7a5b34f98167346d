//! The ends of variable-length slots (strings, lists), written as the format's offsets, or as
//! list-view offsets and sizes, when the builder finishes.
//!
//! It uses the bytes and the errors; nothing else of `builder` but its misuse error.

use super::misuse;
use crate::bytes::Bytes;
use crate::error::{FormatErrorKind, FormatResult, Limit};
use alloc::vec::Vec;

/// One end position per slot; the first slot starts at 0, each next one where the last ended.
#[derive(Debug, Clone, Default)]
pub(crate) struct Offsets {
    ends: Vec<usize>,
}

impl Offsets {
    /// Closes a slot that ends at `end` (not before the previous end).
    pub fn push(&mut self, end: usize) {
        self.ends.push(end);
    }

    /// Checks that the ends never decrease (a child builder finished on its own would shrink)
    /// and that the last one fits the offset width.
    fn check(ends: &[usize], large: bool) -> FormatResult<()> {
        let mut prev = 0;
        for (i, end) in ends.iter().enumerate() {
            if *end < prev {
                let what = "child builder shrank between slots (finished on its own?)";
                return Err(misuse(what, i));
            }
            prev = *end;
        }
        let last = ends.last().copied().unwrap_or(0);
        let limit = if large {
            i64::MAX as u64
        } else {
            i32::MAX as u64
        };
        if last as u64 > limit {
            return Err(FormatErrorKind::LimitExceeded {
                what: Limit::Offsets,
                requested: last as u64,
                limit,
            }
            .into());
        }
        Ok(())
    }

    /// `len() + 1` offsets (0 first), i32 or i64; leaves this empty.
    pub fn finish_offsets(&mut self, large: bool) -> FormatResult<Bytes<'static>> {
        let ends = core::mem::take(&mut self.ends);
        Self::check(&ends, large)?;
        let mut out = Vec::with_capacity((ends.len() + 1) * if large { 8 } else { 4 });
        put(&mut out, 0, large);
        for end in ends {
            put(&mut out, end, large);
        }
        Ok(Bytes::from_vec(out))
    }

    /// List-view offsets and sizes (`len()` of each), i32 or i64; leaves this empty.
    pub fn finish_views(&mut self, large: bool) -> FormatResult<(Bytes<'static>, Bytes<'static>)> {
        let ends = core::mem::take(&mut self.ends);
        Self::check(&ends, large)?;
        let width = if large { 8 } else { 4 };
        let mut offsets = Vec::with_capacity(ends.len() * width);
        let mut sizes = Vec::with_capacity(ends.len() * width);
        let mut start = 0;
        for end in ends {
            put(&mut offsets, start, large);
            put(&mut sizes, end - start, large);
            start = end;
        }
        Ok((Bytes::from_vec(offsets), Bytes::from_vec(sizes)))
    }
}

/// Appends `value` (checked to fit by the caller) as a little-endian i32 or i64.
fn put(out: &mut Vec<u8>, value: usize, large: bool) {
    if large {
        out.extend_from_slice(&(value as i64).to_le_bytes());
    } else {
        out.extend_from_slice(&(value as i32).to_le_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_views_and_limits() {
        let mut offsets = Offsets::default();
        for end in [2, 2, 5] {
            offsets.push(end);
        }
        let (starts, sizes) = offsets.clone().finish_views(false).unwrap();
        assert_eq!(&*starts, [0, 0, 0, 0, 2, 0, 0, 0, 2, 0, 0, 0]);
        assert_eq!(&*sizes, [2, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0]);
        let large = offsets.finish_offsets(true).unwrap();
        assert_eq!(large.len(), 32);
        assert!(offsets.ends.is_empty());
        offsets.push(i32::MAX as usize + 1);
        assert!(matches!(
            offsets.clone().finish_offsets(false).unwrap_err().kind,
            FormatErrorKind::LimitExceeded {
                what: Limit::Offsets,
                ..
            }
        ));
        assert!(offsets.finish_offsets(true).is_ok());
        offsets.push(3);
        offsets.push(2);
        assert!(matches!(
            offsets.finish_views(false).unwrap_err().kind,
            FormatErrorKind::InvalidArray { index: 1, .. }
        ));
    }
}
