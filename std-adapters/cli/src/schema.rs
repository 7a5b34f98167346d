//! `quiver schema`: the fields (types in Arrow's notation, nullability, dictionary encoding,
//! metadata), then the batch and row counts.
//!
//! A file's footer lists its blocks but not their row counts, which live in each record batch's
//! message header. The counts come from a scan with a projection of no columns: it reads every
//! block's metadata (a few hundred bytes each, coalesced into one request per window) and none
//! of the bodies. A stream has no footer, so it is read to its end.

use crate::input::{self, Input};
use crate::{Failure, SchemaArgs};
use quiver::ipc::{Projection, ScanOptions};
use quiver::schema::Metadata;
use quiver::{Field, FileReader, RandomAccess, ReaderOptions, Schema};
use std::fmt::{Display, Write as _};
use std::io::{self, Write};

/// Runs `quiver schema`.
pub fn run(args: &SchemaArgs) -> Result<(), Failure> {
    let text = match input::open(&args.input, false)? {
        Input::Positioned(source) => file(args, source)?,
        Input::Mapped(source) => file(args, source)?,
        Input::InMemory(bytes) => file(args, bytes)?,
        Input::Stream(reader) => {
            let failed = |e: quiver::Error<io::Error>| Failure::about(&args.input, e);
            let mut stream = input::stream_reader(&args.input, reader)?;
            let mut text = describe("Arrow IPC stream", stream.schema());
            stream.set_projection(Projection::Fields(Vec::new()));
            let (mut batches, mut rows) = (0u64, 0u64);
            while let Some(batch) = stream.next_batch().map_err(failed)? {
                batches += 1;
                rows += batch.num_rows() as u64;
            }
            let _ = writeln!(text, "record batches: {batches}\nrows: {rows}");
            text
        }
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

/// The description of an IPC file: schema, then counts read from block metadata only.
fn file<S>(args: &SchemaArgs, source: S) -> Result<String, Failure>
where
    S: RandomAccess,
    S::Error: Display,
{
    let failed = |e: quiver::Error<S::Error>| Failure::about(&args.input, e);
    let mut reader = FileReader::open(source, ReaderOptions::default()).map_err(failed)?;
    let mut text = describe("Arrow IPC file", reader.schema());
    let _ = writeln!(
        text,
        "dictionary batches: {}",
        reader.dictionary_blocks().len()
    );
    reader.set_projection(Projection::Fields(Vec::new()));
    let batches = reader.num_batches();
    let mut rows = 0u64;
    for batch in reader.scan(0..batches, ScanOptions::default()) {
        rows += batch.map_err(failed)?.num_rows() as u64;
    }
    let _ = writeln!(text, "record batches: {batches}\nrows: {rows}");
    Ok(text)
}

/// The format line, the fields and the schema's metadata.
fn describe(format: &str, schema: &Schema) -> String {
    let mut text = format!("format: {format}\nfields:\n");
    for field in schema.fields() {
        describe_field(&mut text, field, 1);
    }
    if !schema.metadata().is_empty() {
        text.push_str("metadata:\n");
        describe_metadata(&mut text, schema.metadata(), 1);
    }
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
        let _ = writeln!(text, "{indent}{key}: {value:?}");
    }
}
