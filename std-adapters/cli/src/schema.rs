//! `quiver schema`: the fields (types in Arrow's notation, nullability, dictionary encoding,
//! metadata), then the batch and row counts; as text, or as one JSON document (`--format json`).
//!
//! It uses `input`, `inputs`, `many` and `remote`: the top of the crate, with `convert`.
//!
//! A file's footer lists its blocks but not their row counts, which live in each record batch's
//! message header. The counts come from a scan with a projection of no columns: it reads every
//! block's metadata (a few hundred bytes each, coalesced into one request per window) and none
//! of the bodies. A stream has no footer, so it is read to its end.
//!
//! Over several inputs (folders, prefixes, globs as `quiver json` reads them), the schema they
//! share (an input whose schema differs beyond metadata is an error naming it), the number of
//! inputs and the totals, then each input's path and counts.
//!
//! Text quotes a field name or metadata key that would break its line ([`DisplayName`]);
//! metadata values are always quoted.

use crate::input::{self, Input};
use crate::remote::Remote;
use crate::{Failure, SchemaArgs, SchemaFormat, inputs, many};
use quiver::ipc::{FileReader, Projection, ReaderOptions, ScanOptions};
use quiver::schema::{DisplayName, Field, Metadata, Schema};
use quiver::source::RandomAccess;
use quiver_object_store::Reading;
use serde_json::{Map, Value, json};
use std::fmt::{Display, Write as _};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// What `quiver schema` reports about an input.
struct Description {
    /// `file` or `stream`.
    format: &'static str,
    schema: Schema,
    /// A file's dictionary blocks (a stream's are not counted).
    dictionary_batches: Option<usize>,
    /// Counted, except for a stream named by URL (counting would fetch it whole).
    record_batches: Option<u64>,
    /// Counted from every block's metadata, except for an input named by URL (one request
    /// reads the footer; counting rows would read every block's metadata too).
    rows: Option<u64>,
}

/// Runs `quiver schema`: one input's description, or over several, the schema they share
/// (an error naming the first input whose schema differs beyond metadata) and each one's
/// counts.
pub fn run(args: &SchemaArgs) -> Result<(), Failure> {
    let names = inputs::expand(&args.inputs, args.skip_empty)?;
    let mut described = Vec::with_capacity(names.len());
    let mut ahead = inputs::Ahead::new(names, false, Reading::Peek);
    while let Some((name, input)) = ahead.next_input() {
        let description = describe(&name, input?)?;
        let first = described.first();
        if let Some((first, reference)) = first.map(|(n, d): &(PathBuf, Description)| (n, d))
            && let Some(how) = many::difference(&reference.schema, &description.schema)
        {
            return Err(Failure::about(
                &name,
                format!(
                    "its schema is not that of {} (the first input): {how}",
                    first.display()
                ),
            ));
        }
        described.push((name, description));
    }
    let text = match described.as_slice() {
        [(_, one)] => render(args.format, one),
        all => render_many(args.format, all),
    };
    let mut stdout = io::stdout().lock();
    stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
        .map_err(|e| match e.kind() {
            io::ErrorKind::BrokenPipe => Failure::ClosedPipe,
            _ => Failure::Error(format!("writing to stdout: {e}")),
        })
}

/// The description of the opened `input`, named `name`.
fn describe(name: &Path, input: Input) -> Result<Description, Failure> {
    match input {
        Input::Positioned(source) => file(name, source),
        Input::Mapped(source) => file(name, source),
        Input::InMemory(bytes) => file(name, bytes),
        Input::Remote(mut remote) => remote_schema(&mut remote),
        Input::Stream(reader) => {
            let mut stream = input::stream_reader(name, reader)?;
            let schema = stream.schema().clone();
            let failed =
                |e: quiver::error::Error<io::Error>| Failure::about(name, e.display_with(&schema));
            stream.set_projection(Projection::Fields(Vec::new()));
            let (mut batches, mut rows) = (0u64, 0u64);
            while let Some(batch) = stream.next_batch().map_err(failed)? {
                batches += 1;
                rows += batch.num_rows() as u64;
            }
            Ok(Description {
                format: "stream",
                schema: Schema::clone(&schema),
                dictionary_batches: None,
                record_batches: Some(batches),
                rows: Some(rows),
            })
        }
    }
}

/// The description of an object named by URL, from as few requests as its schema needs: a
/// file's footer came with the opening request; a stream's schema is its first message.
fn remote_schema(remote: &mut Remote) -> Result<Description, Failure> {
    let Some(stream) = remote.front_to_back()? else {
        let reader = remote.file_reader()?;
        return Ok(Description {
            format: "file",
            schema: Schema::clone(reader.schema()),
            dictionary_batches: Some(reader.dictionary_blocks().len()),
            record_batches: Some(reader.num_batches() as u64),
            rows: None,
        });
    };
    Ok(Description {
        format: "stream",
        schema: stream.schema().as_ref().clone(),
        dictionary_batches: None,
        record_batches: None,
        rows: None,
    })
}

/// The description of an IPC file: schema, then counts read from block metadata only.
fn file<S>(name: &Path, source: S) -> Result<Description, Failure>
where
    S: RandomAccess,
    S::Error: Display,
{
    let mut reader =
        FileReader::open(source, ReaderOptions::default()).map_err(|e| Failure::about(name, e))?;
    let schema = reader.schema().clone();
    let failed = |e: quiver::error::Error<S::Error>| Failure::about(name, e.display_with(&schema));
    let dictionary_batches = reader.dictionary_blocks().len();
    reader.set_projection(Projection::Fields(Vec::new()));
    let batches = reader.num_batches();
    let mut rows = 0u64;
    for batch in reader.scan(0..batches, ScanOptions::default()) {
        rows += batch.map_err(failed)?.num_rows() as u64;
    }
    Ok(Description {
        format: "file",
        schema: Schema::clone(&schema),
        dictionary_batches: Some(dictionary_batches),
        record_batches: Some(batches as u64),
        rows: Some(rows),
    })
}

/// Several inputs: the first one's schema (which every other shares but for metadata), the
/// number of inputs, then each one's path and counts.
fn render_many(format: SchemaFormat, all: &[(PathBuf, Description)]) -> String {
    let Some((_, first)) = all.first() else {
        return String::new();
    };
    let total = |f: fn(&Description) -> Option<u64>| {
        all.iter().try_fold(0u64, |sum, (_, d)| Some(sum + f(d)?))
    };
    match format {
        SchemaFormat::Text => {
            let mut text = String::from("fields:\n");
            for field in first.schema.fields() {
                describe_field(&mut text, field, 1);
            }
            if !first.schema.metadata().is_empty() {
                text.push_str("metadata (of the first input):\n");
                describe_metadata(&mut text, first.schema.metadata(), 1);
            }
            let count = |n: Option<u64>| n.map_or_else(|| "not counted".into(), |n| n.to_string());
            let _ = writeln!(
                text,
                "inputs: {}\nrecord batches: {}\nrows: {}",
                all.len(),
                count(total(|d| d.record_batches)),
                count(total(|d| d.rows))
            );
            for (name, d) in all {
                let _ = writeln!(
                    text,
                    "  {}: {}, {} record batches, {} rows",
                    name.display(),
                    d.format,
                    count(d.record_batches),
                    count(d.rows)
                );
            }
            text
        }
        SchemaFormat::Json => {
            let mut document = Map::new();
            let fields = first.schema.fields().iter().map(json_field).collect();
            document.insert("fields".into(), Value::Array(fields));
            document.insert("metadata".into(), json_metadata(first.schema.metadata()));
            document.insert("inputs".into(), json!(all.len()));
            document.insert("record_batches".into(), json!(total(|d| d.record_batches)));
            document.insert("rows".into(), json!(total(|d| d.rows)));
            let files = all
                .iter()
                .map(|(name, d)| {
                    json!({
                        "input": name.to_string_lossy(),
                        "format": d.format,
                        "dictionary_batches": d.dictionary_batches,
                        "record_batches": d.record_batches,
                        "rows": d.rows,
                    })
                })
                .collect();
            document.insert("files".into(), Value::Array(files));
            let mut text = Value::Object(document).to_string();
            text.push('\n');
            text
        }
    }
}

fn render(format: SchemaFormat, description: &Description) -> String {
    match format {
        SchemaFormat::Text => text(description),
        SchemaFormat::Json => {
            let mut document = json_document(description).to_string();
            document.push('\n');
            document
        }
    }
}

/// The format line, the fields, the schema's metadata, then the counts.
fn text(description: &Description) -> String {
    let schema = &description.schema;
    let mut text = format!("format: Arrow IPC {}\nfields:\n", description.format);
    for field in schema.fields() {
        describe_field(&mut text, field, 1);
    }
    if !schema.metadata().is_empty() {
        text.push_str("metadata:\n");
        describe_metadata(&mut text, schema.metadata(), 1);
    }
    if let Some(count) = description.dictionary_batches {
        let _ = writeln!(text, "dictionary batches: {count}");
    }
    let count =
        |n: Option<u64>| n.map_or_else(|| "not counted (remote input)".into(), |n| n.to_string());
    let _ = writeln!(
        text,
        "record batches: {}\nrows: {}",
        count(description.record_batches),
        count(description.rows)
    );
    text
}

/// `name: type` (with ` not null` and the dictionary id), its metadata, and the same for the
/// children of nested types, one level deeper.
fn describe_field(text: &mut String, field: &Field, depth: usize) {
    let indent = "  ".repeat(depth);
    let _ = write!(text, "{indent}{field}");
    if let Some(encoding) = field.dictionary() {
        let _ = write!(text, " (dictionary id {})", encoding.id);
    }
    text.push('\n');
    if !field.metadata().is_empty() {
        let _ = writeln!(text, "{indent}  metadata:");
        describe_metadata(text, field.metadata(), depth + 2);
    }
    // Children matter only when they carry what the type line leaves out.
    let children = field.data_type().children();
    if children.iter().any(carries_more) {
        for child in children {
            describe_field(text, child, depth + 1);
        }
    }
}

/// Whether a field has something its parent's type line does not show: metadata, a
/// dictionary id, or such a child.
fn carries_more(field: &Field) -> bool {
    !field.metadata().is_empty()
        || field.dictionary().is_some()
        || field.data_type().children().iter().any(carries_more)
}

fn describe_metadata(text: &mut String, metadata: &Metadata, depth: usize) {
    let indent = "  ".repeat(depth);
    for (key, value) in metadata {
        let _ = writeln!(text, "{indent}{}: {value:?}", DisplayName(key));
    }
}

/// The JSON document of `--format json`.
fn json_document(description: &Description) -> Value {
    let schema = &description.schema;
    let mut document = Map::new();
    document.insert("format".into(), json!(description.format));
    let fields = schema.fields().iter().map(json_field).collect();
    document.insert("fields".into(), Value::Array(fields));
    document.insert("metadata".into(), json_metadata(schema.metadata()));
    if let Some(count) = description.dictionary_batches {
        document.insert("dictionary_batches".into(), json!(count));
    }
    document.insert("record_batches".into(), json!(description.record_batches));
    document.insert("rows".into(), json!(description.rows));
    Value::Object(document)
}

/// A field: `name`, `type` (the value type in Arrow's notation), `nullable`, `metadata`,
/// `dictionary` (`null`, or its `id`, `index_type` and `ordered`) and `children`.
fn json_field(field: &Field) -> Value {
    let dictionary = field.dictionary().map_or(Value::Null, |encoding| {
        json!({
            "id": encoding.id,
            "index_type": encoding.index_type.to_string(),
            "ordered": encoding.ordered,
        })
    });
    let children: Vec<Value> = field
        .data_type()
        .children()
        .iter()
        .map(json_field)
        .collect();
    json!({
        "name": field.name(),
        "type": field.data_type().to_string(),
        "nullable": field.is_nullable(),
        "metadata": json_metadata(field.metadata()),
        "dictionary": dictionary,
        "children": children,
    })
}

fn json_metadata(metadata: &Metadata) -> Value {
    let pairs = metadata
        .iter()
        .map(|(key, value)| (key.clone(), Value::String(value.clone())));
    Value::Object(pairs.collect())
}
