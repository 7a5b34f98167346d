//! Bit-packed buffers: [`BitmapBuilder`] (LSB-first bits, for validity and boolean values) and
//! the validity bitmap a builder allocates only once a null is appended.
//!
//! It uses the arrays' parts, their bytes and the data types; nothing else of `builder`.

use crate::array::ArrayParts;
use crate::bytes::Bytes;
use crate::datatype::DataType;
use alloc::vec::Vec;

/// Builds an LSB-first bitmap one bit (or one run of equal bits) at a time.
#[derive(Debug, Clone, Default)]
pub struct BitmapBuilder {
    bytes: Vec<u8>,
    len: usize,
}

impl BitmapBuilder {
    /// An empty bitmap.
    pub fn new() -> Self {
        Self::default()
    }

    /// Number of bits appended.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether no bit has been appended.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Appends one bit.
    pub fn append(&mut self, bit: bool) {
        if self.len.is_multiple_of(8) {
            self.bytes.push(0);
        }
        if bit && let Some(last) = self.bytes.last_mut() {
            *last |= 1 << (self.len % 8);
        }
        self.len += 1;
    }

    /// Appends `n` copies of `bit`, whole bytes at a time where it can.
    pub fn append_n(&mut self, mut n: usize, bit: bool) {
        while n > 0 && !self.len.is_multiple_of(8) {
            self.append(bit);
            n -= 1;
        }
        let whole = n / 8;
        self.bytes
            .resize(self.bytes.len() + whole, if bit { 0xFF } else { 0 });
        self.len += whole * 8;
        for _ in 0..n % 8 {
            self.append(bit);
        }
    }

    /// The bytes so far (`len().div_ceil(8)` of them; unused high bits are zero).
    pub fn as_slice(&self) -> &[u8] {
        &self.bytes
    }

    /// Takes the bytes, leaving the builder empty.
    pub fn finish(&mut self) -> Vec<u8> {
        self.len = 0;
        core::mem::take(&mut self.bytes)
    }
}

/// Validity of a builder's slots: a count until the first null, a bitmap from then on.
#[derive(Debug, Clone, Default)]
pub(crate) struct Validity {
    len: usize,
    null_count: usize,
    bitmap: Option<BitmapBuilder>,
}

impl Validity {
    /// Appends one slot.
    pub fn append(&mut self, valid: bool) {
        self.append_n(1, valid);
    }

    /// Appends `n` slots of the same validity.
    pub fn append_n(&mut self, n: usize, valid: bool) {
        if n == 0 {
            return;
        }
        if !valid && self.bitmap.is_none() {
            let mut bitmap = BitmapBuilder::new();
            bitmap.append_n(self.len, true);
            self.bitmap = Some(bitmap);
        }
        if let Some(bitmap) = &mut self.bitmap {
            bitmap.append_n(n, valid);
        }
        self.len += n;
        if !valid {
            self.null_count += n;
        }
    }

    /// Number of slots.
    pub fn len(&self) -> usize {
        self.len
    }

    /// The null count and the bitmap (absent without nulls); leaves this empty.
    pub fn finish(&mut self) -> (usize, Option<Bytes<'static>>) {
        let Validity {
            null_count, bitmap, ..
        } = core::mem::take(self);
        (null_count, bitmap.map(|mut b| Bytes::from_vec(b.finish())))
    }

    /// The parts of an array of `data_type` with these slots (length, null count, bitmap), to
    /// which the builder adds its buffers and children; leaves this empty.
    pub fn finish_parts(&mut self, data_type: DataType) -> ArrayParts<'static> {
        let len = self.len;
        let (null_count, validity) = self.finish();
        ArrayParts {
            data_type: Some(data_type),
            len,
            null_count,
            validity,
            ..ArrayParts::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::columnar::bit;

    #[test]
    fn runs_and_single_bits_pack_the_same() {
        for (first, run) in [(0usize, 0usize), (3, 1), (5, 17), (8, 8), (1, 64)] {
            let mut fast = BitmapBuilder::new();
            let mut slow = BitmapBuilder::new();
            for i in 0..first {
                fast.append(i.is_multiple_of(3));
                slow.append(i.is_multiple_of(3));
            }
            for (n, value) in [(run, true), (run / 2, false)] {
                fast.append_n(n, value);
                (0..n).for_each(|_| slow.append(value));
            }
            assert_eq!(fast.as_slice(), slow.as_slice());
            assert_eq!(fast.len(), first + run + run / 2);
            assert_eq!(fast.as_slice().len(), fast.len().div_ceil(8));
        }
    }

    #[test]
    fn validity_bitmap_appears_at_the_first_null() {
        let mut validity = Validity::default();
        validity.append_n(10, true);
        let (nulls, bitmap) = validity.finish();
        assert_eq!((nulls, bitmap.is_none()), (0, true));
        validity.append_n(9, true);
        validity.append(false);
        validity.append(true);
        assert_eq!(validity.len(), 11);
        let (nulls, bitmap) = validity.finish();
        let bitmap = bitmap.unwrap();
        assert_eq!(nulls, 1);
        assert!((0..11).all(|i| bit(&bitmap, i) == (i != 9)));
        assert_eq!(validity.len(), 0);
    }
}
