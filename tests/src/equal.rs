//! Structural equality of quiver data, slot by slot: the judge of the round-trip tests.
//!
//! Two batches are equal when their schemas have the same fields and metadata (byte order aside:
//! readers hand out native little-endian data whatever the file said) and every column has the
//! same type, length, null count and, slot by slot, the same value. Values are compared through
//! the [`ArrayView`] accessors, so offsets, slicing and buffer layout do not matter: a null slot
//! equals a null slot whatever bytes lie under it, dictionary-encoded slots compare by the values
//! they point at, floats compare by their bits. Every mismatch names the column, the path into
//! nested values and the slot.

use quiver::array::{ArrayView, RecordBatch};
use quiver::datatype::DataType;
use quiver::schema::Schema;

/// Whether two schemas have the same fields (names, types, nullability, metadata, dictionary
/// encodings) and the same metadata.
pub fn schemas_equal(expected: &Schema, actual: &Schema) -> Result<(), String> {
    if expected.fields().len() != actual.fields().len() {
        return Err(format!(
            "schema: {} fields expected, {} found",
            expected.fields().len(),
            actual.fields().len()
        ));
    }
    for (e, a) in expected.fields().iter().zip(actual.fields()) {
        if e != a {
            return Err(format!(
                "schema field `{}`: expected {e:?}, found {a:?}",
                e.name()
            ));
        }
    }
    if expected.metadata() != actual.metadata() {
        return Err(format!(
            "schema metadata: expected {:?}, found {:?}",
            expected.metadata(),
            actual.metadata()
        ));
    }
    Ok(())
}

/// Whether two batches have equal schemas, row counts and columns.
pub fn batches_equal(expected: &RecordBatch<'_>, actual: &RecordBatch<'_>) -> Result<(), String> {
    schemas_equal(expected.schema(), actual.schema())?;
    if expected.num_rows() != actual.num_rows() {
        return Err(format!(
            "{} rows expected, {} found",
            expected.num_rows(),
            actual.num_rows()
        ));
    }
    for (field, (e, a)) in expected
        .schema()
        .fields()
        .iter()
        .zip(expected.columns().iter().zip(actual.columns()))
    {
        arrays_equal(e, a, field.name())?;
    }
    Ok(())
}

/// Panics with the first difference unless the two lists of batches are equal.
pub fn assert_batches_equal(expected: &[RecordBatch<'_>], actual: &[RecordBatch<'_>]) {
    assert_eq!(
        expected.len(),
        actual.len(),
        "{} batches expected, {} found",
        expected.len(),
        actual.len()
    );
    for (i, (e, a)) in expected.iter().zip(actual).enumerate() {
        if let Err(message) = batches_equal(e, a) {
            panic!("batch {i}: {message}");
        }
    }
}

/// Whether two arrays have the same type, length, null count and values; `path` names the
/// array in the message.
pub fn arrays_equal(
    expected: &ArrayView<'_>,
    actual: &ArrayView<'_>,
    path: &str,
) -> Result<(), String> {
    if expected.data_type() != actual.data_type() {
        return Err(format!(
            "{path}: type {:?} expected, {:?} found",
            expected.data_type(),
            actual.data_type()
        ));
    }
    if expected.dictionary().map(|d| d.index_type) != actual.dictionary().map(|d| d.index_type) {
        return Err(format!("{path}: dictionary encoding differs"));
    }
    if expected.len() != actual.len() {
        return Err(format!(
            "{path}: length {} expected, {} found",
            expected.len(),
            actual.len()
        ));
    }
    if expected.null_count() != actual.null_count() {
        return Err(format!(
            "{path}: null count {} expected, {} found",
            expected.null_count(),
            actual.null_count()
        ));
    }
    let root = Path::Root(path);
    for i in 0..expected.len() {
        slots_equal(expected, i, actual, i, &Path::Index(&root, i))?;
    }
    Ok(())
}

/// Where a slot lies: built on the way down, rendered only when a mismatch is reported.
enum Path<'p> {
    Root(&'p str),
    Index(&'p Path<'p>, usize),
    Field(&'p Path<'p>, &'p str),
    Dictionary(&'p Path<'p>, usize),
}

impl std::fmt::Display for Path<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Path::Root(name) => f.write_str(name),
            Path::Index(parent, i) => write!(f, "{parent}[{i}]"),
            Path::Field(parent, name) => write!(f, "{parent}.{name}"),
            Path::Dictionary(parent, i) => write!(f, "{parent}→dict[{i}]"),
        }
    }
}

/// Whether slot `i` of `a` and slot `j` of `b` hold the same value.
fn slots_equal(
    a: &ArrayView<'_>,
    i: usize,
    b: &ArrayView<'_>,
    j: usize,
    path: &Path<'_>,
) -> Result<(), String> {
    let differ = |what: &str| Err(format!("{path}: {what}"));
    if a.data_type() != b.data_type() {
        return differ(&format!("type {:?} vs {:?}", a.data_type(), b.data_type()));
    }
    if a.is_valid(i) != b.is_valid(j) {
        return differ(&format!("valid {} vs {}", a.is_valid(i), b.is_valid(j)));
    }
    if a.is_null(i) {
        return Ok(());
    }
    match (a.dictionary(), b.dictionary()) {
        (Some(da), Some(db)) => {
            let (x, y) = (a.dictionary_index(i), b.dictionary_index(j));
            return slots_equal(&da.values, x, &db.values, y, &Path::Dictionary(path, x));
        }
        (None, None) => {}
        _ => return differ("one side is dictionary-encoded, the other not"),
    }
    use DataType::*;
    match a.data_type() {
        Null => Ok(()),
        Boolean => {
            if a.bool_value(i) == b.bool_value(j) {
                Ok(())
            } else {
                differ(&format!("{} vs {}", a.bool_value(i), b.bool_value(j)))
            }
        }
        Binary | LargeBinary | Utf8 | LargeUtf8 | BinaryView | Utf8View | FixedSizeBinary(_) => {
            if a.bytes_value(i) == b.bytes_value(j) {
                Ok(())
            } else {
                differ(&format!(
                    "{:?} vs {:?}",
                    String::from_utf8_lossy(a.bytes_value(i)),
                    String::from_utf8_lossy(b.bytes_value(j))
                ))
            }
        }
        List(_) | LargeList(_) | ListView(_) | LargeListView(_) | FixedSizeList(..) | Map(..) => {
            let (ra, rb) = (a.list_range(i), b.list_range(j));
            if ra.len() != rb.len() {
                return differ(&format!("list of {} vs {} items", ra.len(), rb.len()));
            }
            let (Some(ca), Some(cb)) = (a.child(0), b.child(0)) else {
                return differ("list without its child");
            };
            for (k, (x, y)) in ra.zip(rb).enumerate() {
                slots_equal(ca, x, cb, y, &Path::Index(path, k))?;
            }
            Ok(())
        }
        Struct(fields) => {
            for (f, (ca, cb)) in fields.iter().zip(a.children().iter().zip(b.children())) {
                slots_equal(
                    ca,
                    a.offset() + i,
                    cb,
                    b.offset() + j,
                    &Path::Field(path, f.name()),
                )?;
            }
            Ok(())
        }
        Union(fields, ..) => {
            let ((ka, x), (kb, y)) = (a.union_value(i), b.union_value(j));
            if ka != kb {
                return differ(&format!("union child {ka} vs {kb}"));
            }
            let (Some(ca), Some(cb)) = (a.child(ka), b.child(kb)) else {
                return differ("union without its child");
            };
            let name = fields.get(ka).map_or("?", |f| f.name());
            slots_equal(ca, x, cb, y, &Path::Field(path, name))
        }
        RunEndEncoded(_) => {
            let (Some(va), Some(vb)) = (a.child(1), b.child(1)) else {
                return differ("run-end encoded array without values");
            };
            slots_equal(
                va,
                a.run_index(i),
                vb,
                b.run_index(j),
                &Path::Field(path, "values"),
            )
        }
        _ => {
            if a.fixed_bytes(i) == b.fixed_bytes(j) {
                Ok(())
            } else {
                differ(&format!(
                    "bytes {:?} vs {:?}",
                    a.fixed_bytes(i),
                    b.fixed_bytes(j)
                ))
            }
        }
    }
}
