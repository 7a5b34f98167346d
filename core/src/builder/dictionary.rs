//! [`DictionaryBuilder`]: dictionary-encoded arrays, each distinct value stored once.
//!
//! It uses `bitmap` beside it and, of the crate, the arrays, their bytes, the data types, the
//! schema and the errors.
//!
//! A value enters as its [`ValueKey`]; a key seen before appends only its index. A new key
//! appends the value to the values builder and gets the next index. `finish` writes the indices
//! in the chosen integer type and shares the finished values as the array's [`Dictionary`].

use super::bitmap::Validity;
use super::{AppendValue, ArrayBuilder, ValueKey, misuse, remember, remembered};
use crate::array::{ArrayParts, ArrayView, Dictionary};
use crate::bytes::Bytes;
use crate::datatype::{DataType, IntType};
use crate::error::{FormatError, FormatErrorKind, FormatResult, Limit};
use crate::schema::DictionaryEncoding;
use alloc::sync::Arc;
use alloc::vec;
use alloc::vec::Vec;
use hashbrown::HashMap;

/// Builds a dictionary-encoded array: indices of any integer type into values built by `V`.
///
/// The encoding (index type, dictionary id, ordered flag) is reported by
/// [`ArrayBuilder::dictionary_encoding`] and [`ArrayBuilder::field`]; give dictionaries nested in
/// other types distinct ids with [`with_id`](Self::with_id).
///
/// ```
/// use quiver::builder::{AppendValue, ArrayBuilder, DictionaryBuilder, StringBuilder};
/// use quiver::datatype::IntType;
///
/// let mut colors = DictionaryBuilder::new(StringBuilder::new())
///     .with_index_type(IntType { bit_width: 8, signed: false });
/// colors.extend_options([Some("red"), Some("blue"), None, Some("red")]);
/// let array = colors.finish()?;
/// let values = &array.dictionary().unwrap().values;
/// assert_eq!(values.len(), 2);
/// assert_eq!(values.str_value(array.dictionary_index(3)), "red");
/// # Ok::<(), quiver::error::FormatError>(())
/// ```
#[derive(Debug, Clone)]
pub struct DictionaryBuilder<V> {
    encoding: DictionaryEncoding,
    values: V,
    indices: Vec<u8>,
    validity: Validity,
    seen: HashMap<Vec<u8>, usize>,
    key: Vec<u8>,
    error: Option<FormatError>,
}

impl<V: ArrayBuilder> DictionaryBuilder<V> {
    /// A builder with `Int32` indices, dictionary id 0, unordered.
    pub fn new(values: V) -> Self {
        Self::with_encoding(
            DictionaryEncoding {
                id: 0,
                index_type: IntType {
                    bit_width: 32,
                    signed: true,
                },
                ordered: false,
            },
            values,
        )
    }

    /// A builder with this encoding.
    pub fn with_encoding(encoding: DictionaryEncoding, values: V) -> Self {
        let mut builder = DictionaryBuilder {
            encoding,
            values,
            indices: Vec::new(),
            validity: Validity::default(),
            seen: HashMap::new(),
            key: Vec::new(),
            error: None,
        };
        builder.check_index_type();
        builder
    }

    fn check_index_type(&mut self) {
        if !matches!(self.encoding.index_type.bit_width, 8 | 16 | 32 | 64) {
            remember(
                &mut self.error,
                misuse("dictionary index bit width not 8, 16, 32 or 64", 0),
            );
        }
    }

    /// This builder with indices of `index_type` (any signed or unsigned 8–64 bit integer).
    #[must_use]
    pub fn with_index_type(mut self, index_type: IntType) -> Self {
        self.encoding.index_type = index_type;
        self.check_index_type();
        self
    }

    /// This builder with dictionary id `id` (unique within a schema).
    #[must_use]
    pub fn with_id(mut self, id: i64) -> Self {
        self.encoding.id = id;
        self
    }

    /// This builder with the `ordered` flag (the order of the values is meaningful).
    #[must_use]
    pub fn with_ordered(mut self, ordered: bool) -> Self {
        self.encoding.ordered = ordered;
        self
    }

    /// The values builder. Values appended here directly are not deduplicated; refer to them
    /// with [`append_index`](Self::append_index).
    pub fn values(&mut self) -> &mut V {
        &mut self.values
    }

    /// Appends a slot holding dictionary index `index` (checked against the values by `finish`).
    pub fn append_index(&mut self, index: usize) {
        let max = match self.encoding.index_type {
            IntType {
                bit_width: 64,
                signed: false,
            } => u64::MAX,
            IntType { bit_width, signed } => {
                (1u64
                    << u32::from(bit_width)
                        .saturating_sub(u32::from(signed))
                        .min(63))
                    - 1
            }
        };
        let width = self.encoding.index_type.byte_width();
        if index as u64 > max {
            remember(
                &mut self.error,
                FormatErrorKind::LimitExceeded {
                    what: Limit::DictionaryIndex,
                    requested: index as u64,
                    limit: max,
                }
                .into(),
            );
        }
        let bytes = (index as u64).to_le_bytes();
        self.indices
            .extend_from_slice(bytes.get(..width).unwrap_or_default());
        self.validity.append(true);
    }

    /// Appends the value whose identity is `key`: its existing index, or, for a new key, the next
    /// index after `append` adds the value to the values builder (exactly one slot).
    pub fn append_with(&mut self, key: &[u8], append: impl FnOnce(&mut V)) {
        let index = match self.seen.get(key) {
            Some(index) => *index,
            None => {
                let index = self.values.len();
                append(&mut self.values);
                if self.values.len() != index + 1 {
                    remember(
                        &mut self.error,
                        misuse("dictionary value not exactly one slot", index),
                    );
                }
                self.seen.insert(key.to_vec(), index);
                index
            }
        };
        self.append_index(index);
    }

    /// Number of distinct values so far.
    pub fn dictionary_len(&self) -> usize {
        self.values.len()
    }
}

append_by_key!(DictionaryBuilder);

impl<V: ArrayBuilder> ArrayBuilder for DictionaryBuilder<V> {
    fn data_type(&self) -> &DataType {
        self.values.data_type()
    }

    fn dictionary_encoding(&self) -> Option<DictionaryEncoding> {
        Some(self.encoding)
    }

    fn len(&self) -> usize {
        self.validity.len()
    }

    fn append_null(&mut self) {
        let width = self.encoding.index_type.byte_width();
        self.indices.resize(self.indices.len() + width, 0);
        self.validity.append(false);
    }

    /// The array, with the values finished as its dictionary; the next batch starts a new one.
    fn finish(&mut self) -> FormatResult<ArrayView<'static>> {
        let parts = self.validity.finish_parts(self.values.data_type().clone());
        let indices = core::mem::take(&mut self.indices);
        self.seen.clear();
        let error = self.error.take();
        let values = self.values.finish();
        remembered(error)?;
        let values = values?;
        ArrayView::try_new(ArrayParts {
            data_type: Some(values.data_type().clone()),
            buffers: vec![Bytes::from_vec(indices)],
            dictionary: Some(Dictionary {
                index_type: self.encoding.index_type,
                values: Arc::new(values),
            }),
            ..parts
        })
    }

    as_any!();
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builder::{PrimitiveBuilder, StringBuilder};

    #[test]
    fn every_index_type_dedups() {
        for bit_width in [8, 16, 32, 64] {
            for signed in [true, false] {
                let index_type = IntType { bit_width, signed };
                let mut builder = DictionaryBuilder::new(StringBuilder::new())
                    .with_index_type(index_type)
                    .with_id(7)
                    .with_ordered(true);
                let input = [Some("b"), Some("a"), None, Some("b"), Some("c"), Some("a")];
                builder.extend_options(input);
                assert_eq!(builder.dictionary_len(), 3);
                let field = builder.field("f");
                assert_eq!(
                    field.dictionary(),
                    Some(&DictionaryEncoding {
                        id: 7,
                        index_type,
                        ordered: true
                    })
                );
                let array = builder.finish().unwrap();
                assert_eq!(array.data_type(), &DataType::Utf8);
                let dict = array.dictionary().unwrap();
                assert_eq!(dict.index_type, index_type);
                assert_eq!(array.buffer(0).len(), 6 * index_type.byte_width());
                for (i, expected) in input.iter().enumerate() {
                    let got = array
                        .is_valid(i)
                        .then(|| dict.values.str_value(array.dictionary_index(i)));
                    assert_eq!(got, *expected);
                }
                let sliced = array.slice(3, 3).unwrap();
                assert_eq!(sliced.dictionary_index(0), 0);
            }
        }
    }

    #[test]
    fn indices_that_do_not_fit_are_errors() {
        let indexed_by = |bit_width, signed| {
            DictionaryBuilder::new(PrimitiveBuilder::<u16>::new())
                .with_index_type(IntType { bit_width, signed })
        };
        let mut builder = indexed_by(8, true);
        builder.extend_values(0..128u16);
        assert!(builder.finish().is_ok());
        builder.extend_values(0..129u16);
        assert!(matches!(
            builder.finish().unwrap_err().kind,
            FormatErrorKind::LimitExceeded { limit: 127, .. }
        ));
        let mut unsigned = indexed_by(8, false);
        unsigned.extend_values(0..256u16);
        assert!(unsigned.finish().is_ok());
        assert!(indexed_by(12, false).finish().is_err());
    }

    #[test]
    fn explicit_indices_and_float_keys() {
        let mut builder = DictionaryBuilder::new(PrimitiveBuilder::<f64>::new());
        builder.extend_values([0.0, -0.0, f64::NAN, f64::NAN, 0.0]);
        assert_eq!(builder.dictionary_len(), 3, "by bits: 0.0, -0.0, NaN");
        builder.values().append_value(9.5);
        builder.append_index(3);
        let array = builder.finish().unwrap();
        assert_eq!(
            array
                .dictionary()
                .unwrap()
                .values
                .value::<f64>(array.dictionary_index(5)),
            9.5
        );
        builder.append_index(0);
        assert!(builder.finish().is_err(), "index past the dictionary");
    }
}
