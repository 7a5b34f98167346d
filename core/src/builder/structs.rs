//! [`StructBuilder`]: named children of equal length, with the struct's own validity.
//!
//! It uses, of the crate, the arrays, the data types, the schema and the errors; nothing else of
//! `builder`.
//!
//! Each slot takes one value in every child builder, then [`StructBuilder::append`]; a null slot
//! ([`ArrayBuilder::append_null`]) appends a null to every child itself.

use super::{ArrayBuilder, Slots, finish_children, misuse};
use crate::array::ArrayView;
use crate::datatype::DataType;
use crate::error::FormatResult;
use crate::schema::Field;
use alloc::boxed::Box;
use alloc::vec::Vec;

/// Builds a `Struct` array from one builder per field.
///
/// ```
/// use quiver::builder::{AppendValue, ArrayBuilder, PrimitiveBuilder, StringBuilder, StructBuilder};
///
/// let mut people = StructBuilder::new()
///     .with_child("name", StringBuilder::new())
///     .with_child("age", PrimitiveBuilder::<u8>::new());
/// people.field_builder::<StringBuilder>(0).unwrap().append_value("Ada");
/// people.field_builder::<PrimitiveBuilder<u8>>(1).unwrap().append_value(36);
/// people.append();
/// people.append_null();
/// let array = people.finish()?;
/// assert_eq!(array.child(0).unwrap().str_value(0), "Ada");
/// assert!(array.is_null(1));
/// # Ok::<(), quiver::error::FormatError>(())
/// ```
#[derive(Debug)]
pub struct StructBuilder {
    slots: Slots,
    children: Vec<Box<dyn ArrayBuilder>>,
}

impl Default for StructBuilder {
    fn default() -> Self {
        Self::new()
    }
}

impl StructBuilder {
    /// A builder of structs with no fields yet.
    pub fn new() -> Self {
        Self::with_data_type(DataType::Struct(Vec::new().into()), Vec::new())
    }

    /// A builder of `data_type`, a `Struct` whose fields describe `children` in order (or
    /// `finish` fails).
    pub fn with_data_type(data_type: DataType, children: Vec<Box<dyn ArrayBuilder>>) -> Self {
        let is_struct = matches!(data_type, DataType::Struct(_));
        let error = (!is_struct).then(|| misuse("struct builder given a non-struct type", 0));
        StructBuilder {
            slots: Slots::new(data_type, error),
            children,
        }
    }

    /// This builder with one more field, nullable and named `name`, built by `builder`.
    #[must_use]
    pub fn with_child<B: ArrayBuilder>(self, name: &str, builder: B) -> Self {
        let field = builder.field(name);
        self.with_field(field, builder)
    }

    /// This builder with one more field, described by `field` (its name, nullability, metadata).
    #[must_use]
    pub fn with_field<B: ArrayBuilder>(mut self, field: Field, builder: B) -> Self {
        if let DataType::Struct(fields) = &self.slots.data_type {
            let mut fields = fields.to_vec();
            fields.push(field);
            self.slots.data_type = DataType::Struct(fields.into());
        }
        self.children.push(Box::new(builder));
        self
    }

    /// Number of child builders.
    pub fn num_fields(&self) -> usize {
        self.children.len()
    }

    /// Child builder `i` as the concrete builder `B`, if it is one.
    pub fn field_builder<B: ArrayBuilder>(&mut self, i: usize) -> Option<&mut B> {
        self.children.get_mut(i)?.as_any_mut().downcast_mut()
    }

    /// Child builder `i`.
    pub fn child(&mut self, i: usize) -> Option<&mut dyn ArrayBuilder> {
        Some(&mut **self.children.get_mut(i)?)
    }

    /// Closes one valid slot; every child must have had one value appended for it.
    pub fn append(&mut self) {
        self.slots.validity.append(true);
    }
}

impl ArrayBuilder for StructBuilder {
    /// A null slot, with a null appended to every child.
    fn append_null(&mut self) {
        for child in &mut self.children {
            child.append_null();
        }
        self.slots.validity.append(false);
    }

    fn finish(&mut self) -> FormatResult<ArrayView<'static>> {
        let children = finish_children(
            &mut self.children,
            Some(self.slots.validity.len()),
            "struct child length differs from the struct",
            self.slots.error.take(),
        );
        self.slots
            .finish(children.map(|children| (Vec::new(), children)))
    }

    slots!();
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builder::{AppendValue, BooleanBuilder, PrimitiveBuilder, StringBuilder};

    #[test]
    fn struct_slots_and_nulls_read_back() {
        let mut builder = StructBuilder::new()
            .with_child("flag", BooleanBuilder::new())
            .with_field(
                Field::new("n", DataType::Int64, false),
                PrimitiveBuilder::<i64>::new(),
            );
        for i in 0..5i64 {
            if i == 2 {
                builder.append_null();
                continue;
            }
            builder
                .field_builder::<BooleanBuilder>(0)
                .unwrap()
                .append_value(i % 2 == 0);
            builder
                .child(1)
                .unwrap()
                .downcast_mut::<PrimitiveBuilder<i64>>()
                .unwrap()
                .append_value(i);
            builder.append();
        }
        assert!(builder.field_builder::<StringBuilder>(0).is_none());
        let array = builder.finish().unwrap();
        assert_eq!((array.len(), array.null_count()), (5, 1));
        let DataType::Struct(fields) = array.data_type() else {
            panic!()
        };
        assert!(!fields[1].is_nullable());
        let sliced = array.slice(1, 4).unwrap();
        let n = sliced.child(1).unwrap();
        // Children are indexed by the struct's offset plus the slot.
        assert_eq!(n.value::<i64>(sliced.offset() + 3), 4);
        assert!(sliced.is_null(1) && n.is_null(sliced.offset() + 1));
    }

    #[test]
    fn children_must_keep_up() {
        let mut builder = StructBuilder::new().with_child("a", PrimitiveBuilder::<i32>::new());
        builder.append();
        assert!(builder.finish().is_err());
        assert!(builder.finish().unwrap().is_empty(), "reset after an error");

        let mut empty = StructBuilder::new();
        empty.append();
        empty.append_null();
        let array = empty.finish().unwrap();
        assert_eq!((array.len(), array.null_count()), (2, 1));
    }
}
