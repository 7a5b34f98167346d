//! Golden conformance: every file and stream under `arrow-ipc-stream/integration/` read with
//! quiver and compared, batch by batch and value by value, with its sibling `.json.gz` in Arrow's
//! integration-test JSON format.
//!
//! Prints one line `golden: N files, M matched, F failed`, then each failure with its first
//! mismatch, and fails if any file failed.

mod schema;
mod values;

use quiver::array::RecordBatch;
use quiver::ipc::{FileReader, ReaderOptions, StreamReader};
use quiver::schema::Schema;
use serde_json::Value;
use std::io::Read;
use std::path::Path;
use values::Dictionaries;

/// The JSON file beside an IPC file, parsed.
fn load_json(ipc: &Path) -> Result<Value, String> {
    let path = ipc.with_extension("json.gz");
    let file = std::fs::File::open(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut text = String::new();
    flate2::read::GzDecoder::new(file)
        .read_to_string(&mut text)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))
}

/// Reads the schema and every batch of an IPC file (`.arrow_file`) or stream (`.stream`).
fn read_ipc(path: &Path, bytes: &[u8]) -> Result<(Schema, Vec<RecordBatch<'static>>), String> {
    if path.extension().is_some_and(|e| e == "stream") {
        let reader =
            StreamReader::new(bytes, ReaderOptions::default()).map_err(|e| e.to_string())?;
        let schema = Schema::clone(reader.schema());
        let batches = reader
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| e.to_string())?;
        Ok((schema, batches))
    } else {
        let mut reader = FileReader::open(bytes.to_vec(), ReaderOptions::default())
            .map_err(|e| e.to_string())?;
        let schema = Schema::clone(reader.schema());
        let batches = reader
            .batches()
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| e.to_string())?;
        Ok((schema, batches))
    }
}

/// Compares one IPC file or stream with its JSON; the first mismatch is the error.
fn check(path: &Path) -> Result<(), String> {
    let json = load_json(path)?;
    let bytes = std::fs::read(path).map_err(|e| e.to_string())?;
    let (schema, batches) = read_ipc(path, &bytes)?;

    let json_schema = schema::get(&json, "schema")?;
    let fields = schema::list(json_schema, "fields")?;
    if fields.len() != schema.fields().len() {
        return Err(format!(
            "schema: expected {} fields, got {}",
            fields.len(),
            schema.fields().len()
        ));
    }
    let mut ids = schema::DictionaryIds::new();
    for (json_field, field) in fields.iter().zip(schema.fields()) {
        schema::compare_field(&schema::field(json_field)?, field, "", false, &mut ids)?;
    }
    let mut metadata = schema::metadata(json_schema)?;
    metadata.sort(); // a map: writers may reorder it
    let mut actual = schema.metadata().clone();
    actual.sort();
    if metadata != actual {
        return Err(format!(
            "schema metadata: expected {metadata:?}, got {:?}",
            schema.metadata()
        ));
    }

    let mut dictionaries = Dictionaries {
        json: Default::default(),
        ids,
    };
    for d in json
        .get("dictionaries")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let id = schema::int_at(d, "id")?;
        dictionaries
            .json
            .insert(i64::try_from(id).map_err(|e| e.to_string())?, d);
    }

    let json_batches = schema::list(&json, "batches")?;
    if json_batches.len() != batches.len() {
        return Err(format!(
            "expected {} batches, got {}",
            json_batches.len(),
            batches.len()
        ));
    }
    for (b, (json_batch, batch)) in json_batches.iter().zip(&batches).enumerate() {
        let count = schema::int_at(json_batch, "count")?;
        if count != batch.num_rows() as i128 {
            return Err(format!(
                "batch {b}: expected {count} rows, got {}",
                batch.num_rows()
            ));
        }
        let columns = schema::list(json_batch, "columns")?;
        if columns.len() != batch.columns().len() {
            return Err(format!(
                "batch {b}: expected {} columns, got {}",
                columns.len(),
                batch.columns().len()
            ));
        }
        for (c, ((json_col, array), field)) in columns
            .iter()
            .zip(batch.columns())
            .zip(schema.fields())
            .enumerate()
        {
            let path = format!("batch {b} column {c} ({})", field.name());
            values::compare_array(array, json_col, field, &dictionaries, &path)?;
        }
    }
    Ok(())
}

#[test]
fn golden() {
    let Some(data) = quiver_tests::arrow_testing_data() else {
        return;
    };
    let root = data.join("arrow-ipc-stream/integration");
    let mut files = quiver_tests::integration_files(&data, "arrow_file");
    files.extend(quiver_tests::integration_files(&data, "stream"));
    files.sort();

    let mut failures = Vec::new();
    for path in &files {
        if let Err(e) = check(path) {
            let relative = path.strip_prefix(&root).unwrap_or(path);
            failures.push(format!("  {}: {e}", relative.display()));
        }
    }
    println!(
        "golden: {} files, {} matched, {} failed",
        files.len(),
        files.len() - failures.len(),
        failures.len()
    );
    for failure in &failures {
        println!("{failure}");
    }
    assert!(
        failures.is_empty(),
        "{} golden files failed",
        failures.len()
    );
}
