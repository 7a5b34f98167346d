//! [`Projection`]: which columns, and which children of struct columns, a reader decodes.
//!
//! Paths such as `"a"` or `"c.x"` name fields from the top of the schema down through struct
//! children. A projection keeps the file's field order whatever the order of the paths, so the
//! projected schema is the file's schema with unselected fields left out.

use crate::datatype::DataType;
use crate::error::{FormatError, FormatErrorKind, FormatResult};
use crate::schema::{Field, Schema};
use alloc::vec::Vec;

/// The fields to read: everything, or some fields by index (each with its own projection).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Projection {
    /// Every field, and every child.
    #[default]
    All,
    /// These fields by index, in increasing order, each with the projection of its children.
    Fields(Vec<(usize, Projection)>),
}

impl Projection {
    /// Selects the fields named by dotted paths (`"a"`, `"c.x"`). A path that stops at a field
    /// selects it whole; a path continues only into struct children.
    pub fn from_paths<S: AsRef<str>>(schema: &Schema, paths: &[S]) -> FormatResult<Self> {
        let mut projection = Projection::Fields(Vec::new());
        for path in paths {
            let path = path.as_ref();
            projection.add(schema.fields(), path.split('.'), path)?;
        }
        Ok(projection)
    }

    fn add<'p>(
        &mut self,
        fields: &[Field],
        mut names: impl Iterator<Item = &'p str>,
        path: &str,
    ) -> FormatResult<()> {
        let Projection::Fields(selected) = self else {
            return Ok(()); // already everything
        };
        let Some(name) = names.next() else {
            *self = Projection::All;
            return Ok(());
        };
        let index = fields
            .iter()
            .position(|f| f.name() == name)
            .ok_or_else(|| FormatError::from(FormatErrorKind::UnknownField).in_field(path))?;
        let at = match selected.binary_search_by_key(&index, |(i, _)| *i) {
            Ok(at) => at,
            Err(at) => {
                selected.insert(at, (index, Projection::Fields(Vec::new())));
                at
            }
        };
        let field = fields.get(index).map(Field::data_type);
        if let (Some((_, child)), Some(DataType::Struct(children))) = (selected.get_mut(at), field)
        {
            child.add(children, names, path)
        } else if let Some((_, child)) = selected.get_mut(at) {
            // Below a non-struct field every child is read: select it whole.
            *child = Projection::All;
            Ok(())
        } else {
            Ok(())
        }
    }

    /// Whether this selects everything.
    pub fn is_all(&self) -> bool {
        matches!(self, Projection::All)
    }

    /// The projection of field `index`, or `None` if that field is not selected.
    pub fn child(&self, index: usize) -> Option<&Projection> {
        match self {
            Projection::All => Some(&Projection::All),
            Projection::Fields(selected) => selected
                .binary_search_by_key(&index, |(i, _)| *i)
                .ok()
                .and_then(|at| selected.get(at))
                .map(|(_, p)| p),
        }
    }

    /// The schema with only the selected fields (and struct children), in file order.
    pub fn project_schema(&self, schema: &Schema) -> Schema {
        Schema::new(self.project_fields(schema.fields()))
            .with_metadata(schema.metadata().clone())
            .with_endianness(schema.endianness())
    }

    fn project_fields(&self, fields: &[Field]) -> Vec<Field> {
        fields
            .iter()
            .enumerate()
            .filter_map(|(i, f)| self.child(i).map(|p| p.project_field(f)))
            .collect()
    }

    /// `field` with only the selected struct children.
    pub(crate) fn project_field(&self, field: &Field) -> Field {
        match (self, field.data_type()) {
            (Projection::Fields(_), DataType::Struct(children)) => {
                let data_type = DataType::Struct(self.project_fields(children).into());
                let mut projected = Field::new(field.name(), data_type, field.is_nullable())
                    .with_metadata(field.metadata().clone());
                if let Some(encoding) = field.dictionary() {
                    projected = projected.with_dictionary(*encoding);
                }
                projected
            }
            _ => field.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec;

    fn schema() -> Schema {
        let point = DataType::Struct(
            vec![
                Field::new("x", DataType::Int32, true),
                Field::new("y", DataType::Int32, true),
            ]
            .into(),
        );
        Schema::new(vec![
            Field::new("a", DataType::Int64, true),
            Field::new("b", DataType::Utf8, true),
            Field::new("c", point, true),
        ])
    }

    #[test]
    fn paths_select_fields_in_file_order() {
        let schema = schema();
        let projection = Projection::from_paths(&schema, &["c.y", "a"]).unwrap();
        let projected = projection.project_schema(&schema);
        let names: Vec<&str> = projected.fields().iter().map(Field::name).collect();
        assert_eq!(names, ["a", "c"]);
        let DataType::Struct(children) = projected.fields()[1].data_type() else {
            panic!()
        };
        assert_eq!(children.len(), 1);
        assert_eq!(children[0].name(), "y");
        assert!(projection.child(1).is_none());
        assert_eq!(projection.child(0), Some(&Projection::All));
    }

    #[test]
    fn a_whole_field_wins_over_its_children() {
        let schema = schema();
        let projection = Projection::from_paths(&schema, &["c.x", "c"]).unwrap();
        assert_eq!(projection.child(2), Some(&Projection::All));
        let projection = Projection::from_paths(&schema, &["c", "c.x"]).unwrap();
        assert_eq!(projection.child(2), Some(&Projection::All));
    }

    #[test]
    fn unknown_paths_are_errors_naming_the_path() {
        let err = Projection::from_paths(&schema(), &["c.z"]).unwrap_err();
        assert_eq!(err.kind, FormatErrorKind::UnknownField);
        assert_eq!(err.field.as_str(), "c.z");
    }
}
