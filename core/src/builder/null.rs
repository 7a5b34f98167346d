//! [`NullBuilder`]: the `Null` type, a length and no buffers.
//!
//! It uses the builder traits of `builder` and, of the crate, the arrays, the data types and the
//! errors.

use super::ArrayBuilder;
use crate::array::{ArrayParts, ArrayView};
use crate::datatype::DataType;
use crate::error::FormatResult;

/// Builds a `Null` array (every slot null, no buffers).
#[derive(Debug, Clone, Default)]
pub struct NullBuilder {
    len: usize,
}

impl NullBuilder {
    /// An empty builder.
    pub fn new() -> Self {
        Self::default()
    }
}

impl ArrayBuilder for NullBuilder {
    fn data_type(&self) -> &DataType {
        &DataType::Null
    }

    fn len(&self) -> usize {
        self.len
    }

    fn append_null(&mut self) {
        self.len += 1;
    }

    fn append_nulls(&mut self, n: usize) {
        self.len += n;
    }

    fn finish(&mut self) -> FormatResult<ArrayView<'static>> {
        let len = core::mem::take(&mut self.len);
        ArrayView::try_new(ArrayParts {
            data_type: Some(DataType::Null),
            len,
            null_count: len,
            ..ArrayParts::default()
        })
    }

    as_any!();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nulls_have_a_length_and_nothing_else() {
        let mut builder = NullBuilder::new();
        builder.append_nulls(4);
        builder.append_null();
        let array = builder.finish().unwrap();
        assert_eq!((array.len(), array.null_count()), (5, 5));
        assert!(array.buffers().is_empty() && array.validity().is_none());
        assert_eq!(array.slice(1, 2).unwrap().null_count(), 2);
    }
}
