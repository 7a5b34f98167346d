//! [`BooleanBuilder`]: bit-packed booleans, values and validity as two bitmaps.
//!
//! It uses `bitmap` beside it and, of the crate, the arrays, their bytes, the data types and the
//! errors.

use super::bitmap::BitmapBuilder;
use super::{AppendValue, ArrayBuilder, Slots};
use crate::array::ArrayView;
use crate::bytes::Bytes;
use crate::datatype::DataType;
use crate::error::FormatResult;
use alloc::vec;
use alloc::vec::Vec;

/// Builds a `Boolean` array.
#[derive(Debug, Clone)]
pub struct BooleanBuilder {
    slots: Slots,
    values: BitmapBuilder,
}

impl Default for BooleanBuilder {
    fn default() -> Self {
        Self::new()
    }
}

impl BooleanBuilder {
    /// An empty builder.
    pub fn new() -> Self {
        BooleanBuilder {
            slots: Slots::new(DataType::Boolean, None),
            values: BitmapBuilder::new(),
        }
    }
}

impl AppendValue<bool> for BooleanBuilder {
    fn append_value(&mut self, value: bool) {
        self.values.append(value);
        self.slots.validity.append(true);
    }
}

impl AppendValue<Option<bool>> for BooleanBuilder {
    fn append_value(&mut self, value: Option<bool>) {
        <Self as AppendValue<bool>>::append_option(self, value);
    }
}

impl ArrayBuilder for BooleanBuilder {
    fn append_null(&mut self) {
        self.append_nulls(1);
    }

    fn append_nulls(&mut self, n: usize) {
        self.values.append_n(n, false);
        self.slots.validity.append_n(n, false);
    }

    fn finish(&mut self) -> FormatResult<ArrayView<'static>> {
        let values = Bytes::from_vec(self.values.finish());
        self.slots.finish(Ok((vec![values], Vec::new())))
    }

    slots!();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn booleans_and_nulls_read_back() {
        let mut builder = BooleanBuilder::new();
        let input: alloc::vec::Vec<Option<bool>> = (0..21)
            .map(|i| (i % 5 != 4).then_some(i % 3 == 0))
            .collect();
        builder.extend_options(input.iter().copied());
        let array = builder.finish().unwrap();
        assert_eq!((array.len(), array.null_count()), (21, 4));
        for (i, expected) in input.iter().enumerate() {
            let got = array.is_valid(i).then(|| array.bool_value(i));
            assert_eq!(got, *expected, "slot {i}");
        }
        let sliced = array.slice(9, 7).unwrap();
        assert_eq!(sliced.null_count(), 2);
        assert!(sliced.is_null(0) && sliced.bool_value(3) && sliced.is_null(5));
    }
}
