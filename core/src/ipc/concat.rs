//! Appending one array to another of the same type.
//!
//! It uses `delta` beside it, the arrays and the errors.
//!
//! Two validated arrays enter; one new array leaves, holding the first one's slots then the
//! second one's. The appending itself, type by type, is [`GrowingArray`]'s: this starts a growing
//! copy of the first array and appends the second. Dictionaries of nested dictionary-encoded
//! values are shared, and must be the same one on both sides.

use super::delta::GrowingArray;
use crate::array::ArrayView;
use crate::error::FormatResult;

/// `a`'s slots followed by `b`'s, as one new array of their common type.
pub fn concat<'a>(a: &ArrayView<'a>, b: &ArrayView<'a>) -> FormatResult<ArrayView<'a>> {
    let mut joined = GrowingArray::start(a)?;
    joined.append(b)?;
    joined.view()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::array::{ArrayParts, Dictionary};
    use crate::bytes::Bytes;
    use crate::datatype::{DataType, IntType};
    use alloc::sync::Arc;
    use alloc::vec;
    use alloc::vec::Vec;

    fn int32(values: &[i32]) -> ArrayView<'static> {
        ArrayView::from_values(values.iter().copied()).unwrap()
    }

    fn keys(keys: &[i8], values: &Arc<ArrayView<'static>>) -> ArrayView<'static> {
        ArrayView::try_new(ArrayParts {
            data_type: Some(DataType::Int32),
            len: keys.len(),
            buffers: vec![Bytes::from_vec(keys.iter().map(|k| *k as u8).collect())],
            dictionary: Some(Dictionary {
                index_type: IntType {
                    bit_width: 8,
                    signed: true,
                },
                values: Arc::clone(values),
            }),
            ..ArrayParts::default()
        })
        .unwrap()
    }

    #[test]
    fn nested_dictionary_keys_join_over_one_shared_dictionary() {
        let values = Arc::new(int32(&[10, 20, 30]));
        let joined = concat(&keys(&[0, 2], &values), &keys(&[1], &values)).unwrap();
        let got: Vec<usize> = (0..3).map(|i| joined.dictionary_index(i)).collect();
        assert_eq!(got, [0, 2, 1]);
        let other = Arc::new(int32(&[10, 20, 30]));
        assert!(concat(&keys(&[0], &values), &keys(&[0], &other)).is_err());
    }
}
