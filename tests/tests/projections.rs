//! Projected reads equal the same column of the whole read: every top-level column and every
//! struct child (at any depth) of every integration file and of random files, selected alone,
//! through [`FileReader::batch`], [`FileReader::scan`] (default limits, and no holes merged so
//! that every buffer is fetched on its own) and [`StreamReader`].
//!
//! Zero-length buffers are the case that broke: writers place them anywhere (at the previous
//! buffer's end, after padding, at 0), and a planner that fetched only the non-empty buffers
//! must still hand them out.

use proptest::prelude::*;
use quiver::array::{ArrayView, RecordBatch};
use quiver::datatype::DataType;
use quiver::ipc::{
    FileReader, FileWriter, ReaderOptions, StreamReader, StreamWriter, WriterOptions,
};
use quiver::ipc::{Projection, ProjectionErrorKind, ScanOptions};
use quiver::schema::{Field, Schema};
use quiver::source::Counting;
use quiver_tests::arbitrary::{self, Options};
use quiver_tests::equal::arrays_equal;
use quiver_tests::paths::{is_ambiguous, selections};
use std::sync::Arc;

/// Whether the one column of a batch projected to `indexes` equals that part of `whole`:
/// each struct on the way has the same slots valid and only the selected child.
fn same_selection(
    whole: &RecordBatch<'_>,
    projected: &RecordBatch<'_>,
    indexes: &[usize],
) -> Result<(), String> {
    if projected.num_rows() != whole.num_rows() || projected.columns().len() != 1 {
        return Err(format!(
            "{} rows and {} columns, expected {} rows and 1 column",
            projected.num_rows(),
            projected.columns().len(),
            whole.num_rows()
        ));
    }
    let (first, below) = indexes.split_first().ok_or("no path")?;
    let mut expected: &ArrayView<'_> = whole.column(*first).ok_or("no such column")?;
    let mut actual: &ArrayView<'_> = &projected.columns()[0];
    for &child in below {
        let valid = |a: &ArrayView<'_>| (0..a.len()).map(|i| a.is_valid(i)).collect::<Vec<_>>();
        if (expected.len(), valid(expected)) != (actual.len(), valid(actual)) {
            return Err("struct validity differs".into());
        }
        if actual.children().len() != 1 {
            return Err(format!("{} children, expected 1", actual.children().len()));
        }
        expected = expected.child(child).ok_or("no such child")?;
        actual = &actual.children()[0];
    }
    arrays_equal(expected, actual, "column")
}

/// Reads every selection of an IPC file through `batch(i)` and two scans, and of the stream
/// with the same batches (when given) through the stream reader, comparing each with the whole
/// read. Returns how many selections were checked.
fn check_file(name: &str, file: &[u8], stream: Option<&[u8]>) -> usize {
    let mut reader =
        FileReader::open(file, ReaderOptions::default()).unwrap_or_else(|e| panic!("{name}: {e}"));
    let whole: Vec<_> = reader
        .batches()
        .collect::<Result<_, _>>()
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    let schema = Arc::clone(reader.schema());
    let stream = stream.map(|stream| {
        let reader = StreamReader::new(stream, ReaderOptions::default())
            .unwrap_or_else(|e| panic!("{name} (stream): {e}"));
        let whole: Vec<_> = reader
            .collect::<Result<_, _>>()
            .unwrap_or_else(|e| panic!("{name} (stream): {e}"));
        (stream, whole)
    });
    let selections = selections(schema.fields());
    let mut checked = 0;
    for (indexes, path) in &selections {
        let projection = match Projection::from_paths(&schema, &[path]) {
            Ok(projection) => projection,
            // A name two fields share cannot be selected (its error is checked below).
            Err(e)
                if e.kind == ProjectionErrorKind::AmbiguousField
                    && is_ambiguous(schema.fields(), indexes) =>
            {
                continue;
            }
            Err(e) => panic!("{name}: --columns {path}: {e}"),
        };
        let failed = |how: &str, e: &dyn std::fmt::Display| -> ! {
            panic!("{name}: {path} through {how}: {e}")
        };
        let mut projected = Vec::new();
        reader.set_projection(projection.clone());
        for i in 0..reader.num_batches() {
            projected.push(reader.batch(i).unwrap_or_else(|e| failed("batch(i)", &e)));
        }
        for scan in [
            ScanOptions::default(),
            ScanOptions::default().with_hole_size_limit(0),
        ] {
            let source = Counting::new(file);
            let mut scanned = FileReader::open(&source, ReaderOptions::default()).unwrap();
            scanned.set_projection(projection.clone());
            let batches: Vec<_> = scanned
                .scan(0..usize::MAX, scan.clone())
                .collect::<Result<_, _>>()
                .unwrap_or_else(|e| failed(&format!("{scan:?}"), &e));
            projected.extend(batches);
        }
        assert_eq!(projected.len(), 3 * whole.len(), "{name}: {path}");
        for (at, batch) in projected.iter().enumerate() {
            let index = at % whole.len().max(1);
            if let Err(e) = same_selection(&whole[index], batch, indexes) {
                panic!(
                    "{name}: {path}, batch {index}, reader {}: {e}",
                    at / whole.len()
                );
            }
        }
        // The stream (its schema may name a map's children otherwise) against its own read.
        if let Some((stream, whole)) = &stream {
            let mut reader = StreamReader::new(*stream, ReaderOptions::default()).unwrap();
            reader.set_projection(projection.clone());
            let batches: Vec<_> = reader
                .collect::<Result<_, _>>()
                .unwrap_or_else(|e| failed("the stream reader", &e));
            assert_eq!(batches.len(), whole.len(), "{name}: {path}");
            for (index, (batch, whole)) in batches.iter().zip(whole).enumerate() {
                if let Err(e) = same_selection(whole, batch, indexes) {
                    panic!("{name}: {path}, batch {index} of the stream: {e}");
                }
            }
        }
        checked += 1;
    }
    checked
}

#[test]
fn every_selection_of_every_integration_file_equals_the_whole_read() {
    let Some(data) = quiver_tests::arrow_testing_data() else {
        return;
    };
    let mut files = 0;
    let mut checked = 0;
    for path in quiver_tests::integration_files(&data, "arrow_file") {
        let name = path
            .strip_prefix(&data)
            .unwrap_or(&path)
            .display()
            .to_string();
        let file = std::fs::read(&path).unwrap();
        let stream = std::fs::read(path.with_extension("stream")).ok();
        checked += check_file(&name, &file, stream.as_deref());
        files += 1;
    }
    println!("projections: {checked} selections of {files} integration files equal");
    assert!(files > 0 && checked > files);
}

/// A file of every type, each in a batch of ordinary values, one where every slot is null, one
/// of empty values (`""`, `[]`, `{}` children that are empty) and one of no rows.
#[test]
fn every_selection_of_empty_and_all_null_columns_equals_the_whole_read() {
    let opts = Options {
        max_depth: 2,
        dictionaries: false,
        ..Options::default()
    };
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    let mut checked = 0;
    for round in 0..48 {
        let schema = arbitrary::schema(Options {
            max_columns: 6,
            ..opts
        })
        .new_tree(&mut runner)
        .unwrap()
        .current();
        let schema = Arc::new(schema);
        let batches: Vec<_> = [0, 1, 5]
            .into_iter()
            .map(|rows| shaped_batch(&schema, rows, round))
            .collect();
        let (file, stream) = write(&schema, &batches);
        checked += check_file(&format!("round {round}"), &file, Some(&stream));
    }
    println!("projections: {checked} selections of quiver-written files equal");
}

/// A batch of `rows` rows for `schema` where every column is all null (odd rounds) or of empty
/// values: utf8 `""`, binary `b""`, lists `[]` and so on (even rounds).
fn shaped_batch(schema: &Arc<Schema>, rows: usize, round: usize) -> RecordBatch<'static> {
    let columns = schema
        .fields()
        .iter()
        .map(|field| {
            let value = if round % 2 == 1 && field.is_nullable() {
                arbitrary::Value::Null
            } else {
                empty_value(field.data_type())
            };
            arbitrary::build(field, &vec![value; rows]).unwrap()
        })
        .collect();
    RecordBatch::try_new(Arc::clone(schema), columns, rows).unwrap()
}

/// The "emptiest" valid value of a type: `""`, `[]`, zeros, the first union child's.
fn empty_value(data_type: &DataType) -> arbitrary::Value {
    use arbitrary::Value;
    match data_type {
        DataType::Null => Value::Null,
        DataType::Boolean => Value::Bool(false),
        DataType::Binary
        | DataType::LargeBinary
        | DataType::Utf8
        | DataType::LargeUtf8
        | DataType::BinaryView
        | DataType::Utf8View => Value::Bytes(Vec::new()),
        DataType::List(_)
        | DataType::LargeList(_)
        | DataType::ListView(_)
        | DataType::LargeListView(_)
        | DataType::Map(..) => Value::List(Vec::new()),
        DataType::FixedSizeList(child, n) => {
            Value::List(vec![empty_value(child.data_type()); *n as usize])
        }
        DataType::Struct(children) => Value::Struct(
            children
                .iter()
                .map(|c| empty_value(c.data_type()))
                .collect(),
        ),
        DataType::Union(children, ids, _) => Value::Union(
            ids.first().copied().unwrap_or(0),
            Box::new(
                children
                    .first()
                    .map_or(Value::Null, |c| empty_value(c.data_type())),
            ),
        ),
        DataType::RunEndEncoded(pair) => empty_value(pair[1].data_type()),
        DataType::FixedSizeBinary(n) => Value::Fixed(vec![0; *n as usize]),
        other => Value::Fixed(vec![0; other.byte_width().unwrap_or(0)]),
    }
}

/// Whether any field, at any depth, is dictionary-encoded.
fn has_dictionaries(fields: &[Field]) -> bool {
    fields
        .iter()
        .any(|f| f.dictionary().is_some() || has_dictionaries(f.data_type().children()))
}

/// The batches as an IPC file and an IPC stream.
fn write(schema: &Arc<Schema>, batches: &[RecordBatch<'_>]) -> (Vec<u8>, Vec<u8>) {
    let mut file =
        FileWriter::new(Vec::new(), Arc::clone(schema), WriterOptions::default()).unwrap();
    let mut stream =
        StreamWriter::new(Vec::new(), Arc::clone(schema), WriterOptions::default()).unwrap();
    for batch in batches {
        file.write(batch).unwrap();
        stream.write(batch).unwrap();
    }
    file.finish().unwrap();
    stream.finish().unwrap();
    (file.into_inner(), stream.into_inner())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(quiver_tests::proptest_cases(48)))]

    /// Random schemas and batches (nulls, empty and zero-row batches, sliced columns, every
    /// type): any set of selected paths reads the same columns as the whole file.
    #[test]
    fn random_files_and_projections(
        (schema, generated) in arbitrary::schema_and_batches(
            Options::default(),
            3,
        ),
        picks in prop::collection::vec(any::<prop::sample::Index>(), 1..4),
    ) {
        // A file cannot replace a dictionary: with dictionaries, one batch.
        let n = if has_dictionaries(schema.fields()) { 1 } else { generated.len() };
        let batches: Vec<_> = generated.iter().take(n).map(|g| g.batch.clone()).collect();
        let (file, stream) = write(&schema, &batches);
        check_file("random", &file, Some(&stream));
        // A few paths together: the projected columns are those of the whole read, in order.
        let all = selections(schema.fields());
        prop_assume!(!all.is_empty());
        let paths: Vec<&str> = picks.iter().map(|i| all[i.index(all.len())].1.as_str()).collect();
        let projection = Projection::from_paths(&schema, &paths).unwrap();
        let projected_schema = projection.project_schema(&schema);
        let mut reader = FileReader::open(file.as_slice(), ReaderOptions::default()).unwrap();
        reader.set_projection(projection);
        let read: Vec<_> = reader
            .scan(0..usize::MAX, ScanOptions::default().with_hole_size_limit(0))
            .collect::<Result<_, _>>()
            .unwrap();
        prop_assert_eq!(read.len(), batches.len());
        for batch in &read {
            prop_assert_eq!(batch.schema().fields(), projected_schema.fields());
        }
    }
}
