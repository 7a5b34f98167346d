//! Dictionaries: which fields are dictionary-encoded, and the decoded dictionaries by id.
//!
//! Dictionary batches enter as decoded arrays; record batch decoding looks them up by id and
//! shares them (`Arc`) with every batch that uses them. Delta batches append to a dictionary;
//! replacement batches (streams only) replace it.

use crate::array::{ArrayParts, ArrayView};
use crate::bytes::Bytes;
use crate::datatype::DataType;
use crate::error::{FormatErrorKind, FormatResult};
use crate::schema::{Field, Schema};
use alloc::sync::Arc;
use alloc::vec::Vec;
use hashbrown::HashMap;

/// Decoded dictionaries by id.
#[derive(Debug, Default, Clone)]
pub(crate) struct Dictionaries<'a> {
    map: HashMap<i64, Arc<ArrayView<'a>>>,
}

impl<'a> Dictionaries<'a> {
    /// The dictionary with this id, if one has been read.
    pub fn get(&self, id: i64) -> Option<Arc<ArrayView<'a>>> {
        self.map.get(&id).cloned()
    }

    /// Stores a dictionary batch's values: appended for a delta, replacing otherwise.
    pub fn insert(&mut self, id: i64, values: ArrayView<'a>, is_delta: bool) -> FormatResult<()> {
        let values = match self.map.get(&id) {
            Some(old) if is_delta => concat(old, &values)?,
            _ => values,
        };
        self.map.insert(id, Arc::new(values));
        Ok(())
    }
}

/// The value field of every dictionary-encoded field in `schema`, by dictionary id, including
/// fields nested in other types and in dictionary value types. The value field has the encoded
/// field's name and value type and no encoding of its own.
pub(crate) fn dictionary_fields(schema: &Schema) -> HashMap<i64, Field> {
    fn visit(field: &Field, out: &mut HashMap<i64, Field>) {
        if let Some(encoding) = field.dictionary() {
            out.entry(encoding.id).or_insert_with(|| {
                Field::new(field.name(), field.data_type().clone(), field.is_nullable())
            });
        }
        for child in field.data_type().children() {
            visit(child, out);
        }
    }
    let mut out = HashMap::new();
    for field in schema.fields() {
        visit(field, &mut out);
    }
    out
}

/// Appends `delta` to `base`, for the flat types a dictionary usually holds.
fn concat<'a>(base: &ArrayView<'a>, delta: &ArrayView<'a>) -> FormatResult<ArrayView<'a>> {
    let unsupported = FormatErrorKind::Unsupported {
        what: "delta dictionary of a nested or view type",
    };
    if base.data_type() != delta.data_type() || base.dictionary().is_some() {
        return Err(unsupported.into());
    }
    let len = base.len() + delta.len();
    let validity = if base.null_count() + delta.null_count() > 0 {
        let mut bits = alloc::vec![0u8; len.div_ceil(8)];
        for (i, valid) in (0..base.len())
            .map(|i| base.is_valid(i))
            .chain((0..delta.len()).map(|i| delta.is_valid(i)))
            .enumerate()
        {
            if let (true, Some(byte)) = (valid, bits.get_mut(i / 8)) {
                *byte |= 1 << (i % 8);
            }
        }
        Some(Bytes::from_vec(bits))
    } else {
        None
    };
    let mut buffers = Vec::new();
    let data_type = base.data_type().clone();
    match &data_type {
        DataType::Boolean => {
            let mut bits = alloc::vec![0u8; len.div_ceil(8)];
            let values = (0..base.len())
                .map(|i| base.bool_value(i))
                .chain((0..delta.len()).map(|i| delta.bool_value(i)));
            for (i, value) in values.enumerate() {
                if let (true, Some(byte)) = (value, bits.get_mut(i / 8)) {
                    *byte |= 1 << (i % 8);
                }
            }
            buffers.push(Bytes::from_vec(bits));
        }
        DataType::Binary | DataType::Utf8 | DataType::LargeBinary | DataType::LargeUtf8 => {
            let large = matches!(data_type, DataType::LargeBinary | DataType::LargeUtf8);
            let mut offsets = Vec::new();
            let mut data = Vec::new();
            let push_offset = |offsets: &mut Vec<u8>, at: usize| -> FormatResult<()> {
                if large {
                    offsets.extend_from_slice(&(at as i64).to_le_bytes());
                } else {
                    let at = i32::try_from(at).map_err(|_| FormatErrorKind::LimitExceeded {
                        what: "delta dictionary data",
                        requested: at as u64,
                        limit: i32::MAX as u64,
                    })?;
                    offsets.extend_from_slice(&at.to_le_bytes());
                }
                Ok(())
            };
            push_offset(&mut offsets, 0)?;
            for array in [base, delta] {
                for i in 0..array.len() {
                    data.extend_from_slice(array.bytes_value(i));
                    push_offset(&mut offsets, data.len())?;
                }
            }
            buffers.push(Bytes::from_vec(offsets));
            buffers.push(Bytes::from_vec(data));
        }
        other if other.byte_width().is_some() && !other.is_nested() => {
            let mut data = Vec::new();
            for array in [base, delta] {
                for i in 0..array.len() {
                    data.extend_from_slice(array.fixed_bytes(i));
                }
            }
            buffers.push(Bytes::from_vec(data));
        }
        _ => return Err(unsupported.into()),
    }
    ArrayView::try_new(ArrayParts {
        data_type: Some(data_type),
        len,
        offset: 0,
        null_count: base.null_count() + delta.null_count(),
        validity,
        buffers,
        children: Vec::new(),
        dictionary: None,
    })
}
