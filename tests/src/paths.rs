//! Column paths as `Projection::from_paths` and `quiver json --columns` read them: every
//! selectable path of a schema, with names escaped.

use quiver::datatype::DataType;
use quiver::schema::Field;

/// A field name as a path component: `\`, `.` and `,` escaped with a `\`.
pub fn escape(name: &str) -> String {
    let mut out = String::new();
    for c in name.chars() {
        if matches!(c, '\\' | '.' | ',') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// Every selectable path below `fields`: each field and each struct child below it (not those
/// of a dictionary-encoded struct, which are the dictionary's), as the field indexes leading to
/// it and the escaped dotted path. Children come before their parent.
pub fn selections(fields: &[Field]) -> Vec<(Vec<usize>, String)> {
    let mut out = Vec::new();
    for (i, field) in fields.iter().enumerate() {
        let path = escape(field.name());
        if let (DataType::Struct(children), None) = (field.data_type(), field.dictionary()) {
            for (mut below, rest) in selections(children) {
                below.insert(0, i);
                out.push((below, format!("{path}.{rest}")));
            }
        }
        out.push((vec![i], path));
    }
    out
}

/// Whether a field on the way to `indexes` has a name that another field beside it has too
/// (such a path is ambiguous and cannot be selected).
pub fn is_ambiguous(fields: &[Field], indexes: &[usize]) -> bool {
    let mut fields = fields;
    for &i in indexes {
        let Some(field) = fields.get(i) else {
            return false;
        };
        if fields.iter().filter(|f| f.name() == field.name()).count() > 1 {
            return true;
        }
        fields = field.data_type().children();
    }
    false
}
