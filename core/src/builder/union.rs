//! [`UnionBuilder`]: sparse and dense unions, one child builder per type id.
//!
//! It uses, of the crate, the arrays, their bytes, the data types, the schema and the errors;
//! nothing else of `builder`.
//!
//! [`UnionBuilder::append`] records a slot's type id and returns the child that must then take
//! exactly one value. Sparse unions append a null to every other child at the same time; dense
//! unions record the child's next index in the offsets buffer. Unions have no validity bitmap: a
//! null slot is a null in a child.

use super::{ArrayBuilder, finish_children, misuse, remember};
use crate::array::{ArrayParts, ArrayView};
use crate::bytes::Bytes;
use crate::datatype::{DataType, UnionMode};
use crate::error::{FormatError, FormatErrorKind, FormatResult, Limit};
use crate::schema::Field;
use alloc::boxed::Box;
use alloc::vec;
use alloc::vec::Vec;

/// Builds a sparse or dense `Union` array.
///
/// ```
/// use quiver::builder::{AppendValue, ArrayBuilder, PrimitiveBuilder, StringBuilder, UnionBuilder};
/// use quiver::datatype::UnionMode;
///
/// let mut union = UnionBuilder::new(UnionMode::Dense)
///     .with_child(0, "int", PrimitiveBuilder::<i32>::new())
///     .with_child(5, "text", StringBuilder::new());
/// union.append::<StringBuilder>(5)?.append_value("five");
/// union.append::<PrimitiveBuilder<i32>>(0)?.append_value(0);
/// let array = union.finish()?;
/// assert_eq!(array.union_value(0), (1, 0)); // child 1 ("text"), its slot 0
/// # Ok::<(), quiver::error::FormatError>(())
/// ```
#[derive(Debug)]
pub struct UnionBuilder {
    data_type: DataType,
    mode: UnionMode,
    children: Vec<Box<dyn ArrayBuilder>>,
    type_ids: Vec<u8>,
    offsets: Vec<u8>,
    error: Option<FormatError>,
}

impl UnionBuilder {
    /// A builder of unions in `mode` with no children yet.
    pub fn new(mode: UnionMode) -> Self {
        Self::with_data_type(
            DataType::Union(Vec::new().into(), Vec::new().into(), mode),
            Vec::new(),
        )
    }

    /// A builder of `data_type`, a `Union` whose fields describe `children` in order (or
    /// `finish` fails).
    pub fn with_data_type(data_type: DataType, children: Vec<Box<dyn ArrayBuilder>>) -> Self {
        let (mode, error) = match &data_type {
            DataType::Union(_, _, mode) => (*mode, None),
            _ => (
                UnionMode::Sparse,
                Some(misuse("union builder given a non-union type", 0)),
            ),
        };
        UnionBuilder {
            data_type,
            mode,
            children,
            type_ids: Vec::new(),
            offsets: Vec::new(),
            error,
        }
    }

    /// This builder with one more child, nullable and named `name`, selected by `type_id`.
    #[must_use]
    pub fn with_child<B: ArrayBuilder>(self, type_id: i8, name: &str, builder: B) -> Self {
        let field = builder.field(name);
        self.with_field(type_id, field, builder)
    }

    /// This builder with one more child described by `field`, selected by `type_id`.
    #[must_use]
    pub fn with_field<B: ArrayBuilder>(mut self, type_id: i8, field: Field, builder: B) -> Self {
        if let DataType::Union(fields, ids, mode) = &self.data_type {
            if type_id < 0 || ids.contains(&type_id) {
                remember(
                    &mut self.error,
                    misuse("union type id negative or repeated", ids.len()),
                );
            }
            let mut fields = fields.to_vec();
            fields.push(field);
            let mut ids = ids.to_vec();
            ids.push(type_id);
            self.data_type = DataType::Union(fields.into(), ids.into(), *mode);
        }
        self.children.push(Box::new(builder));
        self
    }

    /// Sparse or dense.
    pub fn mode(&self) -> UnionMode {
        self.mode
    }

    /// Child builder `i` (in field order, not by type id).
    pub fn child(&mut self, i: usize) -> Option<&mut dyn ArrayBuilder> {
        Some(&mut **self.children.get_mut(i)?)
    }

    /// Starts a slot of type `type_id` and returns its child, which must then take exactly one
    /// value (or null). An undeclared type id is an error and appends nothing.
    pub fn append_child(&mut self, type_id: i8) -> FormatResult<&mut dyn ArrayBuilder> {
        let index = self
            .child_index(type_id)
            .ok_or(FormatErrorKind::InvalidValue {
                what: "union type id not declared by the type",
                value: i64::from(type_id),
            })?;
        self.start_slot(index, type_id)?;
        self.child(index)
            .ok_or_else(|| misuse("union child missing", index))
    }

    /// Starts a slot of type `type_id` and returns its child as the concrete builder `B`, which
    /// must then take exactly one value. A wrong id or builder type appends nothing.
    pub fn append<B: ArrayBuilder>(&mut self, type_id: i8) -> FormatResult<&mut B> {
        let is_b = self
            .child_index(type_id)
            .and_then(|i| self.children.get(i))
            .is_some_and(|c| c.as_any().is::<B>());
        if !is_b {
            return Err(FormatErrorKind::InvalidValue {
                what: "union type id undeclared or of another builder type",
                value: i64::from(type_id),
            }
            .into());
        }
        self.append_child(type_id)?
            .downcast_mut::<B>()
            .ok_or_else(|| misuse("union child of another builder type", 0))
    }

    /// The position of the child `type_id` selects, if the type declares the id and the child exists.
    fn child_index(&self, type_id: i8) -> Option<usize> {
        let ids = self.data_type.union_type_ids();
        let index = ids.iter().position(|id| *id == type_id)?;
        (index < self.children.len()).then_some(index)
    }

    fn start_slot(&mut self, index: usize, type_id: i8) -> FormatResult<()> {
        if self.mode == UnionMode::Dense {
            let next = self.children.get(index).map_or(0, |c| c.len());
            let offset = i32::try_from(next).map_err(|_| FormatErrorKind::LimitExceeded {
                what: Limit::DenseUnionChild,
                requested: next as u64,
                limit: i32::MAX as u64,
            })?;
            self.offsets.extend_from_slice(&offset.to_le_bytes());
        } else {
            for (i, child) in self.children.iter_mut().enumerate() {
                if i != index {
                    child.append_null();
                }
            }
        }
        self.type_ids.push(type_id as u8);
        Ok(())
    }
}

impl ArrayBuilder for UnionBuilder {
    fn data_type(&self) -> &DataType {
        &self.data_type
    }

    fn len(&self) -> usize {
        self.type_ids.len()
    }

    /// A slot of the first child holding a null (a union with no children remembers an error).
    fn append_null(&mut self) {
        let first = self.data_type.union_type_ids().first().copied();
        match first.map(|id| self.append_child(id)) {
            Some(Ok(child)) => child.append_null(),
            Some(Err(error)) => remember(&mut self.error, error),
            None => remember(
                &mut self.error,
                misuse("null in a union without children", 0),
            ),
        }
    }

    fn finish(&mut self) -> FormatResult<ArrayView<'static>> {
        let len = self.type_ids.len();
        let type_ids = core::mem::take(&mut self.type_ids);
        let offsets = core::mem::take(&mut self.offsets);
        let children = finish_children(
            &mut self.children,
            Some(len).filter(|_| self.mode == UnionMode::Sparse),
            "sparse union child length differs from the union",
            self.error.take(),
        )?;
        let mut buffers = vec![Bytes::from_vec(type_ids)];
        if self.mode == UnionMode::Dense {
            buffers.push(Bytes::from_vec(offsets));
        }
        ArrayView::try_new(ArrayParts {
            data_type: Some(self.data_type.clone()),
            len,
            buffers,
            children,
            ..ArrayParts::default()
        })
    }

    as_any!();
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builder::{AppendValue, PrimitiveBuilder, StringBuilder};

    fn build(mode: UnionMode) -> ArrayView<'static> {
        let mut union = UnionBuilder::new(mode)
            .with_child(3, "i", PrimitiveBuilder::<i32>::new())
            .with_child(1, "s", StringBuilder::new());
        union
            .append::<PrimitiveBuilder<i32>>(3)
            .unwrap()
            .append_value(10);
        union
            .append::<StringBuilder>(1)
            .unwrap()
            .append_value("one");
        union.append_null();
        union.append_child(1).unwrap().append_null();
        union
            .append::<StringBuilder>(1)
            .unwrap()
            .append_value("two");
        assert!(union.append_child(2).is_err());
        assert!(union.append::<StringBuilder>(3).is_err());
        assert_eq!(union.len(), 5);
        union.finish().unwrap()
    }

    #[test]
    fn sparse_and_dense_read_back() {
        for (mode, child_lens) in [(UnionMode::Sparse, [5, 5]), (UnionMode::Dense, [2, 3])] {
            let array = build(mode);
            let read = |array: &ArrayView<'_>, i| {
                let (child, slot) = array.union_value(i);
                let c = array.child(child).unwrap();
                let value = match child {
                    0 => c
                        .is_valid(slot)
                        .then(|| alloc::format!("{}", c.value::<i32>(slot))),
                    _ => c.is_valid(slot).then(|| c.str_value(slot).into()),
                };
                (child, value)
            };
            let expected = [
                (0, Some("10".into())),
                (1, Some("one".into())),
                (0, None),
                (1, None),
                (1, Some("two".into())),
            ];
            for (i, e) in expected.iter().enumerate() {
                assert_eq!(read(&array, i), *e, "{mode:?} slot {i}");
            }
            let sliced = array.slice(3, 2).unwrap();
            assert_eq!(read(&sliced, 1), expected[4]);
            let lens: Vec<usize> = array.children().iter().map(|c| c.len()).collect();
            assert_eq!(lens, child_lens, "{mode:?}");
        }
    }

    #[test]
    fn misuse_is_reported() {
        let mut empty = UnionBuilder::new(UnionMode::Sparse);
        empty.append_null();
        assert!(empty.finish().is_err());
        let repeated = UnionBuilder::new(UnionMode::Dense)
            .with_child(1, "a", PrimitiveBuilder::<i8>::new())
            .with_child(1, "b", PrimitiveBuilder::<i8>::new());
        assert!(UnionBuilder::finish(&mut { repeated }).is_err());
        let mut sparse =
            UnionBuilder::new(UnionMode::Sparse).with_child(0, "a", PrimitiveBuilder::<i8>::new());
        sparse.append_child(0).unwrap();
        assert!(sparse.finish().is_err(), "child never got its value");
    }
}
