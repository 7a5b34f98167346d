//! One run over many inputs: what `quiver json` keeps from file to file.
//!
//! It uses the crate root's `Failure` and arguments, and quiver's schema and arrays.
//!
//! - The schema: every file's must be the first file's, except for metadata (of the schema or
//!   of fields); the first that differs is an error naming it and the first field that differs.
//! - The batches seen so far in the run, against which `--batches` is counted.
//! - The columns added to each batch after `--columns` ([`Run::extend`]): `--with-source`'s
//!   `_source`, the input's path or URL, and `--hive-partitions`' `KEY=VALUE` folders of the
//!   input's path, each a string column of one value, in the order of the path. The encoder
//!   sees ordinary batches.

use crate::{Failure, JsonArgs};
use quiver::array::{ArrayView, RecordBatch};
use quiver::datatype::DataType;
use quiver::schema::{Field, Schema};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The name of `--with-source`'s column.
pub const SOURCE: &str = "_source";

/// What a run keeps from file to file.
pub struct Run {
    /// Inputs in the run.
    pub files: usize,
    /// Batches of the inputs read so far, selected or not (`--batches` counts them).
    pub seen: usize,
    /// Bytes read from the inputs finished so far, for the progress bar.
    pub bytes_before: u64,
    with_source: bool,
    hive_partitions: bool,
    /// The first input and its schema.
    reference: Option<(PathBuf, Arc<Schema>)>,
    /// The first input's partition keys.
    keys: Option<Vec<String>>,
    /// The current input's added columns: their fields and values.
    extra: Vec<(Field, String)>,
    /// The last batch schema extended, and the extension.
    schemas: Option<(Arc<Schema>, Arc<Schema>)>,
    /// The added columns last built, for batches of that many rows.
    columns: Option<(usize, Vec<ArrayView<'static>>)>,
}

impl Run {
    /// A run over `files` inputs with `args`' options.
    pub fn new(args: &JsonArgs, files: usize) -> Self {
        Run {
            files,
            seen: 0,
            bytes_before: 0,
            with_source: args.with_source,
            hive_partitions: args.hive_partitions,
            reference: None,
            keys: None,
            extra: Vec::new(),
            schemas: None,
            columns: None,
        }
    }

    /// Whether the run has more than one input (the progress bar counts files, not batches).
    pub fn many(&self) -> bool {
        self.files > 1
    }

    /// Starts the input `name`: its added columns.
    pub fn start(&mut self, name: &Path) -> Result<(), Failure> {
        self.extra.clear();
        self.schemas = None;
        self.columns = None;
        let text = name.to_string_lossy();
        if self.hive_partitions {
            let pairs = partitions(&text);
            let keys: Vec<String> = pairs.iter().map(|(k, _)| k.clone()).collect();
            match &self.keys {
                None => self.keys = Some(keys),
                Some(first) if *first == keys => {}
                Some(first) => {
                    let first_name = self.reference.as_ref().map_or_else(
                        || "the first input".into(),
                        |(p, _)| p.display().to_string(),
                    );
                    return Err(Failure::about(
                        name,
                        format!(
                            "its partition keys [{}] are not those of {first_name} [{}] \
                             (--hive-partitions)",
                            keys.join(", "),
                            first.join(", ")
                        ),
                    ));
                }
            }
            for (key, value) in pairs {
                self.extra
                    .push((Field::new(key, DataType::Utf8, false), value));
            }
        }
        if self.with_source {
            let field = Field::new(SOURCE, DataType::Utf8, false);
            self.extra.push((field, text.into_owned()));
        }
        Ok(())
    }

    /// Checks `schema`, of the input `name`, against the first input's.
    pub fn check_schema(&mut self, name: &Path, schema: &Arc<Schema>) -> Result<(), Failure> {
        let Some((first, reference)) = &self.reference else {
            for (field, _) in &self.extra {
                if schema.fields().iter().any(|f| f.name() == field.name()) {
                    return Err(Failure::about(
                        name,
                        format!(
                            "has a column `{}`, the name of a column the options add",
                            field.name()
                        ),
                    ));
                }
            }
            self.reference = Some((name.to_path_buf(), Arc::clone(schema)));
            return Ok(());
        };
        match difference(reference, schema) {
            None => Ok(()),
            Some(how) => Err(Failure::about(
                name,
                format!(
                    "its schema is not that of {} (the run's first input): {how}",
                    first.display()
                ),
            )),
        }
    }

    /// `batch` with the input's added columns, or `None` when the options add none.
    pub fn extend<'a>(
        &mut self,
        name: &Path,
        batch: &RecordBatch<'a>,
    ) -> Result<Option<RecordBatch<'a>>, Failure> {
        if self.extra.is_empty() {
            return Ok(None);
        }
        let schema = match &self.schemas {
            Some((from, to)) if Arc::ptr_eq(from, batch.schema()) => Arc::clone(to),
            _ => {
                let mut fields = batch.schema().fields().to_vec();
                fields.extend(self.extra.iter().map(|(f, _)| f.clone()));
                let to = Arc::new(Schema::new(fields));
                self.schemas = Some((Arc::clone(batch.schema()), Arc::clone(&to)));
                to
            }
        };
        let rows = batch.num_rows();
        let added = match &self.columns {
            Some((n, columns)) if *n == rows => columns.clone(),
            _ => {
                let columns = self
                    .extra
                    .iter()
                    .map(|(_, value)| {
                        ArrayView::from_values(std::iter::repeat_n(value.as_str(), rows))
                    })
                    .collect::<Result<Vec<_>, _>>()
                    .map_err(|e| Failure::about(name, e))?;
                self.columns = Some((rows, columns.clone()));
                columns
            }
        };
        let mut columns = batch.columns().to_vec();
        columns.extend(added);
        RecordBatch::try_new(schema, columns, rows)
            .map(Some)
            .map_err(|e| Failure::about(name, e))
    }
}

/// The `KEY=VALUE` folders of a path or URL (after `scheme://host/`), in order.
pub fn partitions(name: &str) -> Vec<(String, String)> {
    let path = match name.split_once("://") {
        Some((_, rest)) => rest.split_once('/').map_or("", |(_, path)| path),
        None => name,
    };
    let mut folders: Vec<&str> = path.split(['/', std::path::MAIN_SEPARATOR]).collect();
    folders.pop();
    folders
        .into_iter()
        .filter_map(|segment| {
            let (key, value) = segment.split_once('=')?;
            (!key.is_empty()).then(|| (key.to_owned(), value.to_owned()))
        })
        .collect()
}

/// How `other` differs from `first` beyond metadata, if it does.
pub fn difference(first: &Schema, other: &Schema) -> Option<String> {
    for (i, (a, b)) in first.fields().iter().zip(other.fields()).enumerate() {
        if !same_field(a, b) {
            return Some(format!(
                "field {i} is `{}` here, `{}` there",
                show(b),
                show(a)
            ));
        }
    }
    let (n, m) = (other.fields().len(), first.fields().len());
    if n == m {
        return None;
    }
    let names = |fields: &[Field]| {
        let names: Vec<String> = fields.iter().map(|f| format!("`{}`", show(f))).collect();
        names.join(", ")
    };
    Some(if n > m {
        format!(
            "it has {n} fields, {m} there: {} more",
            names(other.fields().get(m..).unwrap_or_default())
        )
    } else {
        format!(
            "it has {n} fields, {m} there: {} missing",
            names(first.fields().get(n..).unwrap_or_default())
        )
    })
}

/// A field as messages show it: name, type, nullability, and its extension type if any.
fn show(field: &Field) -> String {
    match field.extension_name() {
        Some(extension) => format!("{field} ({extension})"),
        None => field.to_string(),
    }
}

/// Whether two fields are the same but for metadata (an extension type is not metadata: it
/// changes the JSON).
fn same_field(a: &Field, b: &Field) -> bool {
    let (x, y) = (a.data_type().children(), b.data_type().children());
    a.to_string() == b.to_string()
        && a.extension_name() == b.extension_name()
        && x.len() == y.len()
        && x.iter().zip(y).all(|(a, b)| same_field(a, b))
}

#[cfg(test)]
mod tests {
    use super::*;
    use quiver::schema::Metadata;

    #[test]
    fn partitions_are_the_key_value_folders() {
        let pairs = |name| partitions(name);
        let owned = |v: &[(&str, &str)]| -> Vec<(String, String)> {
            v.iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect()
        };
        assert_eq!(
            pairs("s3://b/t/date=2026-12-01/region=eu/part-0.arrow"),
            owned(&[("date", "2026-12-01"), ("region", "eu")])
        );
        assert_eq!(pairs("d/x=1/a=b.arrow"), owned(&[("x", "1")]));
        assert!(pairs("s3://b=c/a.arrow").is_empty());
        assert!(pairs("=1/a.arrow").is_empty());
    }

    #[test]
    fn schemas_differ_beyond_metadata() {
        let field = |name: &str, t: DataType, nullable| Field::new(name, t, nullable);
        let a = Schema::new(vec![field("a", DataType::Int64, true)]);
        let metadata: Metadata = vec![("k".into(), "v".into())];
        let with_metadata = Schema::new(vec![
            field("a", DataType::Int64, true).with_metadata(metadata.clone()),
        ])
        .with_metadata(metadata);
        assert_eq!(difference(&a, &with_metadata), None);
        let typed = Schema::new(vec![field("a", DataType::Int32, true)]);
        let how = difference(&a, &typed).unwrap();
        assert!(
            how.contains("field 0 is `a: int32` here, `a: int64` there"),
            "{how}"
        );
        let not_null = Schema::new(vec![field("a", DataType::Int64, false)]);
        assert!(difference(&a, &not_null).unwrap().contains("not null"));
        let renamed = Schema::new(vec![field("b", DataType::Int64, true)]);
        assert!(difference(&a, &renamed).is_some());
        let wider = Schema::new(vec![
            field("a", DataType::Int64, true),
            field("b", DataType::Utf8, true),
        ]);
        let how = difference(&a, &wider).unwrap();
        assert!(how.contains("2 fields, 1 there"), "{how}");
        assert!(difference(&wider, &a).unwrap().contains("missing"));
    }
}
