//! [`Projection`]: which columns, and which children of struct columns, a reader decodes.
//!
//! It uses the data types and the schema; nothing else of `ipc`.
//!
//! Paths such as `"a"` or `"c.x"` name fields from the top of the schema down through struct
//! children. A `\` escapes the character after it, so a name holding a `.` (or the `,` that
//! separates the CLI's list of paths) is written `a\.b`, and a backslash `\\`. A projection
//! keeps the file's field order whatever the order of the paths, so the projected schema is the
//! file's schema with unselected fields left out.

use crate::datatype::DataType;
use crate::schema::{Field, Schema};
use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;

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
    /// Selects the fields named by dotted paths (`"a"`, `"c.x"`, `"a\\.b"` for a field named
    /// `a.b`). A path that stops at a field selects it whole.
    ///
    /// Errors, each with the first path that fails in [`ProjectionError::path`]: a name no
    /// field has ([`UnknownField`](ProjectionErrorKind::UnknownField)), a name two fields share
    /// ([`AmbiguousField`](ProjectionErrorKind::AmbiguousField)), and a path going on below a
    /// field that is not a struct ([`NotAStruct`](ProjectionErrorKind::NotAStruct)): a list's,
    /// map's, union's or dictionary-encoded struct's children cannot be selected on their own.
    pub fn from_paths<S: AsRef<str>>(
        schema: &Schema,
        paths: &[S],
    ) -> Result<Self, ProjectionError> {
        let mut projection = Projection::Fields(Vec::new());
        for path in paths {
            let path = path.as_ref();
            projection
                .add(schema.fields(), &path_names(path))
                .map_err(|kind| ProjectionError {
                    kind,
                    path: path.into(),
                })?;
        }
        Ok(projection)
    }

    /// Adds the field that `names` lead to below `fields`.
    fn add(&mut self, fields: &[Field], names: &[String]) -> Result<(), ProjectionErrorKind> {
        let Some((name, rest)) = names.split_first() else {
            *self = Projection::All;
            return Ok(());
        };
        let mut matching = fields.iter().enumerate().filter(|(_, f)| f.name() == name);
        let (index, field) = matching.next().ok_or(ProjectionErrorKind::UnknownField)?;
        if matching.next().is_some() {
            return Err(ProjectionErrorKind::AmbiguousField);
        }
        let children = match field.data_type() {
            // A dictionary-encoded struct's children are the dictionary's: read whole.
            DataType::Struct(children) if field.dictionary().is_none() => &children[..],
            _ if rest.is_empty() => &[][..],
            _ => return Err(ProjectionErrorKind::NotAStruct),
        };
        let Projection::Fields(selected) = self else {
            return Ok(()); // already everything; the path was still checked
        };
        let found = selected.binary_search_by_key(&index, |(i, _)| *i);
        let at = found.unwrap_or_else(|at| {
            selected.insert(at, (index, Projection::Fields(Vec::new())));
            at
        });
        match selected.get_mut(at) {
            Some((_, child)) => child.add(children, rest),
            None => Ok(()),
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

/// A field path that selects nothing: what is wrong with it, and the path as given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProjectionError {
    /// What is wrong.
    pub kind: ProjectionErrorKind,
    /// The path, as given to [`Projection::from_paths`].
    pub path: String,
}

/// What is wrong with a field path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ProjectionErrorKind {
    /// A name on the path is not the name of a field (at the top, or of the struct above it).
    UnknownField,
    /// The path goes on below a field that is not a struct (or is a dictionary-encoded one):
    /// only struct children can be selected.
    NotAStruct,
    /// A name on the path is the name of more than one field (of the schema, or of the struct).
    AmbiguousField,
}

impl fmt::Display for ProjectionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self.kind {
            ProjectionErrorKind::UnknownField => "no such field",
            ProjectionErrorKind::NotAStruct => {
                "the path goes on below a field that is not a struct (only the children of \
                 struct columns that are not dictionary-encoded can be selected)"
            }
            ProjectionErrorKind::AmbiguousField => "more than one field has this name",
        })?;
        write!(f, " (field `{}`)", self.path)
    }
}

impl core::error::Error for ProjectionError {}

impl ProjectionError {
    /// The fields the path could have named where it went wrong: the schema's columns, or the
    /// children of the struct the path reached (for a message that lists what exists).
    pub fn candidates<'s>(&self, schema: &'s Schema) -> Vec<&'s Field> {
        let mut fields = schema.fields();
        for name in path_names(&self.path) {
            let mut matching = fields.iter().filter(|f| f.name() == name);
            let (Some(field), None) = (matching.next(), matching.next()) else {
                break;
            };
            match field.data_type() {
                DataType::Struct(children) if field.dictionary().is_none() => fields = children,
                _ => break,
            }
        }
        fields.iter().collect()
    }
}

/// The names along `path`: split at each `.` that no `\` escapes, with the escapes removed.
fn path_names(path: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut name = String::new();
    let mut chars = path.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => name.push(chars.next().unwrap_or('\\')),
            '.' => names.push(core::mem::take(&mut name)),
            c => name.push(c),
        }
    }
    names.push(name);
    names
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
    fn bad_paths_are_errors_naming_the_path() {
        use ProjectionErrorKind::{AmbiguousField, NotAStruct, UnknownField};
        let item = Field::new("item", DataType::Int32, true);
        let list = Schema::new(vec![
            Field::new("a", DataType::Int64, true),
            Field::new("l", DataType::List(item.into()), true),
        ]);
        let twice = Schema::new(vec![
            Field::new("a", DataType::Int64, true),
            Field::new("a", DataType::Utf8, true),
        ]);
        let cases: [(&Schema, &[&str], _, &str); 8] = [
            (&schema(), &["c.z"], UnknownField, "c.z"),
            (&list, &["a.nope"], NotAStruct, "a.nope"),
            (&list, &["l.item"], NotAStruct, "l.item"),
            (&list, &["l.item.x"], NotAStruct, "l.item.x"),
            // Also when the field is already selected whole, in either order.
            (&list, &["a", "a.x"], NotAStruct, "a.x"),
            (&list, &["a.x", "a"], NotAStruct, "a.x"),
            (&schema(), &["c", "c.z"], UnknownField, "c.z"),
            (&twice, &["a"], AmbiguousField, "a"),
        ];
        for (schema, paths, kind, path) in cases {
            let err = Projection::from_paths(schema, paths).unwrap_err();
            assert_eq!((err.kind, err.path.as_str()), (kind, path), "{paths:?}");
        }
        // What exists where an unknown name was: the struct's children, or the columns.
        let names = |path: &str, schema: &Schema| -> Vec<String> {
            let err = Projection::from_paths(schema, &[path]).unwrap_err();
            err.candidates(schema)
                .iter()
                .map(|f| f.name().into())
                .collect()
        };
        assert_eq!(names("c.z", &schema()), ["x", "y"]);
        assert_eq!(names("z", &schema()), ["a", "b", "c"]);
        assert_eq!(names("z.x", &schema()), ["a", "b", "c"]);
    }

    #[test]
    fn escapes_select_names_with_dots_commas_and_backslashes() {
        let inner = DataType::Struct(vec![Field::new("x.y", DataType::Int32, true)].into());
        let schema = Schema::new(vec![
            Field::new("a.b", DataType::Int64, true),
            Field::new("a", inner, true),
            Field::new("c,d", DataType::Int64, true),
            Field::new("e\\", DataType::Int64, true),
        ]);
        let all = Projection::from_paths(&schema, &["a\\.b", "c\\,d", "e\\\\"]).unwrap();
        let names: Vec<String> = all
            .project_schema(&schema)
            .fields()
            .iter()
            .map(|f| f.name().into())
            .collect();
        assert_eq!(names, ["a.b", "c,d", "e\\"]);
        let nested = Projection::from_paths(&schema, &["a.x\\.y"]).unwrap();
        assert_eq!(nested.child(0), None);
        assert_eq!(
            nested.child(1),
            Some(&Projection::Fields(vec![(0, Projection::All)]))
        );
        assert_eq!(
            Projection::from_paths(&schema, &["a.b"]).unwrap_err().kind,
            ProjectionErrorKind::UnknownField
        );
    }
}
