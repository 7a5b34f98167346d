//! Interop with arrow-rs (arrow-ipc 60), the other Rust implementation, in both directions.
//!
//! - quiver writes, arrow-rs reads: every integration file read with quiver and written with
//!   quiver (file and stream, each compression, both alignments, whole and sliced) is read by
//!   arrow-rs and equals arrow-rs's own reading of the original, compared by arrow-rs itself
//!   (`RecordBatch` equality is logical: nulls, offsets and dictionaries are looked through).
//!   arrow-rs cannot read big-endian files, so their little-endian twins are the reference.
//! - arrow-rs writes, quiver reads: arrow-rs's reading of each integration file, written by
//!   arrow-rs (file and stream, uncompressed, LZ4_FRAME and ZSTD, both alignments, dictionary
//!   deltas on), is read by quiver and equals quiver's reading of the original.
//! - dictionary deltas both ways, built by hand.
//! - random schemas and batches (every type quiver has, nested, sliced, with dictionaries):
//!   quiver writes them, arrow-rs reads and writes them back, quiver reads them again with the
//!   values it started from.

use arrow_array::{
    Array, ArrayRef, DictionaryArray, Int8Array, RecordBatch as ArrowBatch, StringArray,
    types::Int8Type,
};
use arrow_ipc::CompressionType;
use arrow_ipc::writer::{DictionaryHandling, IpcWriteOptions};
use arrow_schema::{DataType as ArrowType, Field as ArrowField, Schema as ArrowSchema};
use quiver::array::{ArrayParts, ArrayView, Dictionary, RecordBatch};
use quiver::bytes::Bytes;
use quiver::datatype::{CompressionCodec, IntType};
use quiver::format::{self, MessageHeader};
use quiver::ipc::{
    FileReader, FileWriter, ReaderOptions, StreamReader, StreamWriter, WriterOptions,
};
use quiver::schema::{DictionaryEncoding, Field, Schema};
use quiver_tests::arbitrary::map_children;
use quiver_tests::equal::arrays_equal;
use std::io::Cursor;
use std::path::{Path, PathBuf};
use std::sync::Arc;

type Batches = Vec<RecordBatch<'static>>;

// ---- quiver ----------------------------------------------------------------------------------

fn quiver_read(bytes: Vec<u8>, stream: bool) -> Result<(Schema, Batches), String> {
    if stream {
        let reader = StreamReader::new(bytes.as_slice(), ReaderOptions::default())
            .map_err(|e| e.to_string())?;
        let schema = Schema::clone(reader.schema());
        let batches = reader
            .collect::<Result<_, _>>()
            .map_err(|e| e.to_string())?;
        Ok((schema, batches))
    } else {
        let mut reader =
            FileReader::open(bytes, ReaderOptions::default()).map_err(|e| e.to_string())?;
        let schema = Schema::clone(reader.schema());
        let batches = reader
            .batches()
            .collect::<Result<_, _>>()
            .map_err(|e| e.to_string())?;
        Ok((schema, batches))
    }
}

fn quiver_write(
    schema: &Arc<Schema>,
    batches: &[RecordBatch<'_>],
    options: &WriterOptions,
    stream: bool,
) -> Result<Vec<u8>, String> {
    let e = |e: quiver::ipc::WriteError| e.to_string();
    if stream {
        let mut w =
            StreamWriter::new(Vec::new(), Arc::clone(schema), options.clone()).map_err(e)?;
        for b in batches {
            w.write(b).map_err(e)?;
        }
        w.finish().map_err(e)?;
        Ok(w.into_inner())
    } else {
        let mut w = FileWriter::new(Vec::new(), Arc::clone(schema), options.clone()).map_err(e)?;
        for b in batches {
            w.write(b).map_err(e)?;
        }
        w.finish().map_err(e)?;
        Ok(w.into_inner())
    }
}

fn quiver_configurations() -> Vec<(String, WriterOptions)> {
    let mut out = Vec::new();
    for compression in [
        None,
        Some(CompressionCodec::Lz4Frame),
        Some(CompressionCodec::Zstd),
    ] {
        for alignment in [8, 64] {
            out.push((
                format!(
                    "{} align {alignment}",
                    compression.map_or("uncompressed", CompressionCodec::name)
                ),
                WriterOptions::default()
                    .with_compression(compression)
                    .with_alignment(alignment),
            ));
        }
    }
    out
}

// ---- arrow-rs --------------------------------------------------------------------------------

fn arrow_read(bytes: Vec<u8>, stream: bool) -> Result<Vec<ArrowBatch>, String> {
    if stream {
        arrow_ipc::reader::StreamReader::try_new(Cursor::new(bytes), None)
            .map_err(|e| e.to_string())?
            .collect::<Result<_, _>>()
            .map_err(|e| e.to_string())
    } else {
        arrow_ipc::reader::FileReader::try_new(Cursor::new(bytes), None)
            .map_err(|e| e.to_string())?
            .collect::<Result<_, _>>()
            .map_err(|e| e.to_string())
    }
}

fn arrow_write(
    schema: &ArrowSchema,
    batches: &[ArrowBatch],
    options: IpcWriteOptions,
    stream: bool,
) -> Result<Vec<u8>, String> {
    let e = |e: arrow_schema::ArrowError| e.to_string();
    if stream {
        let mut w =
            arrow_ipc::writer::StreamWriter::try_new_with_options(Vec::new(), schema, options)
                .map_err(e)?;
        for b in batches {
            w.write(b).map_err(e)?;
        }
        w.finish().map_err(e)?;
        w.into_inner().map_err(e)
    } else {
        let mut w =
            arrow_ipc::writer::FileWriter::try_new_with_options(Vec::new(), schema, options)
                .map_err(e)?;
        for b in batches {
            w.write(b).map_err(e)?;
        }
        w.finish().map_err(e)?;
        w.into_inner().map_err(e)
    }
}

fn arrow_configurations() -> Vec<(String, IpcWriteOptions)> {
    let mut out = Vec::new();
    for compression in [
        None,
        Some(CompressionType::LZ4_FRAME),
        Some(CompressionType::ZSTD),
    ] {
        for alignment in [8, 64] {
            let options =
                IpcWriteOptions::try_new(alignment, false, arrow_ipc::MetadataVersion::V5)
                    .and_then(|o| o.try_with_compression(compression))
                    .unwrap()
                    .with_dictionary_handling(DictionaryHandling::Delta);
            let name = compression.map_or("uncompressed", |c| c.variant_name().unwrap_or("?"));
            out.push((format!("arrow-rs {name} align {alignment}"), options));
        }
    }
    out
}

/// The first difference between two lists of arrow-rs batches, by arrow-rs's equality.
fn arrow_batches_equal(expected: &[ArrowBatch], actual: &[ArrowBatch]) -> Result<(), String> {
    if expected.len() != actual.len() {
        return Err(format!(
            "{} batches expected, {} found",
            expected.len(),
            actual.len()
        ));
    }
    for (b, (e, a)) in expected.iter().zip(actual).enumerate() {
        if e.schema() != a.schema() {
            return Err(format!(
                "batch {b}: schema {:?} expected, {:?} found",
                e.schema(),
                a.schema()
            ));
        }
        if e.num_rows() != a.num_rows() {
            return Err(format!(
                "batch {b}: {} rows expected, {} found",
                e.num_rows(),
                a.num_rows()
            ));
        }
        for (c, (x, y)) in e.columns().iter().zip(a.columns()).enumerate() {
            if x.to_data() != y.to_data() {
                let show = |a: &ArrayRef| {
                    let s = format!("{a:?}");
                    s.chars().take(600).collect::<String>()
                };
                return Err(format!(
                    "batch {b} column {c} ({}): expected {}, found {}",
                    e.schema().field(c).name(),
                    show(x),
                    show(y)
                ));
            }
        }
    }
    Ok(())
}

// ---- the integration corpus ------------------------------------------------------------------

/// The integration files, relative to the corpus root; empty when the data is absent.
fn golden_files() -> Vec<(String, PathBuf)> {
    let Some(data) = quiver_tests::arrow_testing_data() else {
        return Vec::new();
    };
    let root = data.join("arrow-ipc-stream/integration");
    quiver_tests::integration_files(&data, "arrow_file")
        .into_iter()
        .map(|p| (p.strip_prefix(&root).unwrap_or(&p).display().to_string(), p))
        .collect()
}

/// The file arrow-rs's reading of which is the reference: big-endian files' little-endian twins.
fn reference_for(path: &Path) -> PathBuf {
    let s = path.display().to_string();
    PathBuf::from(s.replace("1.0.0-bigendian", "1.0.0-littleendian"))
}

fn slice_quiver(batch: &RecordBatch<'static>, offset: usize, len: usize) -> RecordBatch<'static> {
    let columns = batch
        .columns()
        .iter()
        .map(|c| c.slice(offset, len).unwrap())
        .collect();
    RecordBatch::try_new(Arc::clone(batch.schema()), columns, len).unwrap()
}

/// Slices of every batch, as (offset, length) pairs; odd offsets make bitmaps shift.
fn slices(rows: usize) -> Vec<(usize, usize)> {
    [1, 3, 8]
        .into_iter()
        .filter(|o| *o < rows)
        .map(|o| (o, rows - o - usize::from(rows - o > 1)))
        .collect()
}

#[test]
fn arrow_rs_reads_what_quiver_writes() {
    let mut failures = Vec::new();
    let mut unreadable = Vec::new();
    let mut runs = 0;
    let files = golden_files();
    for (name, path) in &files {
        let expected = match arrow_read(std::fs::read(reference_for(path)).unwrap(), false) {
            Ok(batches) => batches,
            Err(e) => {
                unreadable.push(format!("  {name}: {e}"));
                continue;
            }
        };
        let (schema, batches) = quiver_read(std::fs::read(path).unwrap(), false).unwrap();
        let schema = Arc::new(schema);
        let mut sliced = Vec::new();
        let mut expected_sliced = Vec::new();
        for (b, e) in batches.iter().zip(&expected) {
            for (offset, len) in slices(b.num_rows()) {
                sliced.push(slice_quiver(b, offset, len));
                expected_sliced.push(e.slice(offset, len));
            }
        }
        for (config, options) in quiver_configurations() {
            for stream in [false, true] {
                let format = if stream { "stream" } else { "file" };
                // Slices in half the combinations: slicing does not depend on the codec, and
                // the debug build's ZSTD encoder is slow.
                let slices_too = (options.alignment == 64) == stream;
                for (what, input, reference) in [
                    ("whole", &batches, &expected),
                    ("sliced", &sliced, &expected_sliced),
                ] {
                    if what == "sliced" && !slices_too {
                        continue;
                    }
                    runs += 1;
                    let result = quiver_write(&schema, input, &options, stream)
                        .and_then(|bytes| arrow_read(bytes, stream))
                        .and_then(|actual| arrow_batches_equal(reference, &actual));
                    if let Err(e) = result {
                        failures.push(format!("  {name} ({config}, {format}, {what}): {e}"));
                    }
                }
            }
        }
    }
    println!(
        "arrow-rs reads quiver: {} files, {runs} writes, {} passed, {} failed; arrow-rs cannot read {} originals",
        files.len(),
        runs - failures.len(),
        failures.len(),
        unreadable.len()
    );
    for line in unreadable.iter().chain(&failures) {
        println!("{line}");
    }
    assert!(failures.is_empty(), "{} failures", failures.len());
}

/// `field` with every dictionary id set to 0 (arrow-rs numbers dictionaries itself) and its
/// metadata sorted (arrow-rs keeps metadata in a map).
fn normalized(field: &Field) -> Field {
    let data_type = map_children(field.data_type(), normalized);
    let mut metadata = field.metadata().clone();
    metadata.sort();
    let mut out = Field::new(field.name(), data_type, field.is_nullable()).with_metadata(metadata);
    if let Some(d) = field.dictionary() {
        out = out.with_dictionary(DictionaryEncoding { id: 0, ..*d });
    }
    out
}

/// Compares quiver's reading of an arrow-rs file with quiver's reading of the original.
fn same_data(expected: &(Schema, Batches), actual: &(Schema, Batches)) -> Result<(), String> {
    let fields = |s: &Schema| s.fields().iter().map(normalized).collect::<Vec<_>>();
    if expected.0.fields().len() != actual.0.fields().len() {
        return Err(format!(
            "schema {:?} expected, {:?} found",
            expected.0, actual.0
        ));
    }
    for (e, a) in fields(&expected.0).iter().zip(fields(&actual.0)) {
        if *e != a {
            return Err(format!("field {e:?} expected, {a:?} found"));
        }
    }
    let metadata = |s: &Schema| {
        let mut m = s.metadata().clone();
        m.sort();
        m
    };
    if metadata(&expected.0) != metadata(&actual.0) {
        return Err(format!(
            "schema metadata {:?} expected, {:?} found",
            expected.0.metadata(),
            actual.0.metadata()
        ));
    }
    if expected.1.len() != actual.1.len() {
        return Err(format!(
            "{} batches expected, {} found",
            expected.1.len(),
            actual.1.len()
        ));
    }
    for (b, (e, a)) in expected.1.iter().zip(&actual.1).enumerate() {
        if e.num_rows() != a.num_rows() {
            return Err(format!(
                "batch {b}: {} rows expected, {} found",
                e.num_rows(),
                a.num_rows()
            ));
        }
        for (field, (x, y)) in e
            .schema()
            .fields()
            .iter()
            .zip(e.columns().iter().zip(a.columns()))
        {
            arrays_equal(x, y, &format!("batch {b} {}", field.name()))?;
        }
    }
    Ok(())
}

#[test]
fn quiver_reads_what_arrow_rs_writes() {
    let mut failures = Vec::new();
    let mut skipped = Vec::new();
    let mut runs = 0;
    let files = golden_files();
    for (name, path) in &files {
        // arrow-rs reads no big-endian file: it writes what it read from the little-endian twin,
        // which quiver's reading of the big-endian original must equal.
        let reference = std::fs::read(reference_for(path)).unwrap();
        let Ok(arrow_batches) = arrow_read(reference.clone(), false) else {
            skipped.push(name.clone());
            continue;
        };
        let arrow_schema = arrow_ipc::reader::FileReader::try_new(Cursor::new(reference), None)
            .unwrap()
            .schema();
        let expected = quiver_read(std::fs::read(path).unwrap(), false).unwrap();
        for (config, options) in arrow_configurations() {
            for stream in [false, true] {
                runs += 1;
                let format = if stream { "stream" } else { "file" };
                let result = arrow_write(&arrow_schema, &arrow_batches, options.clone(), stream)
                    .and_then(|bytes| quiver_read(bytes, stream))
                    .and_then(|actual| same_data(&expected, &actual));
                if let Err(e) = result {
                    failures.push(format!("  {name} ({config}, {format}): {e}"));
                }
            }
        }
    }
    println!(
        "quiver reads arrow-rs: {} files, {runs} writes, {} passed, {} failed; arrow-rs cannot read {skipped:?}",
        files.len(),
        runs - failures.len(),
        failures.len(),
    );
    for line in &failures {
        println!("{line}");
    }
    assert!(failures.is_empty(), "{} failures", failures.len());
}

// ---- dictionary deltas -----------------------------------------------------------------------

const KEYS: IntType = IntType {
    bit_width: 8,
    signed: true,
};

/// The growing dictionaries and the keys of each batch of the delta tests.
fn delta_cases() -> Vec<(Vec<&'static str>, Vec<i8>)> {
    vec![
        (vec!["a", "b", "c"], vec![0, 2, 1, 1]),
        (vec!["a", "b", "c"], vec![2]),
        (vec!["a", "b", "c", "d", "e"], vec![4, 0, 3]),
        (vec!["a", "b", "c", "d", "e", "f"], vec![5, 5, 1]),
    ]
}

fn quiver_utf8(values: &[&str]) -> ArrayView<'static> {
    let mut offsets = vec![0u8; 4];
    let mut data = Vec::new();
    for v in values {
        data.extend_from_slice(v.as_bytes());
        offsets.extend_from_slice(&(data.len() as i32).to_le_bytes());
    }
    ArrayView::try_new(ArrayParts {
        data_type: Some(quiver::datatype::DataType::Utf8),
        len: values.len(),
        buffers: vec![Bytes::from_vec(offsets), Bytes::from_vec(data)],
        ..ArrayParts::default()
    })
    .unwrap()
}

fn arrow_dictionary(values: &[&str], keys: &[i8]) -> DictionaryArray<Int8Type> {
    DictionaryArray::try_new(
        Int8Array::from(keys.to_vec()),
        Arc::new(StringArray::from(values.to_vec())),
    )
    .unwrap()
}

/// The (isDelta, length) of every dictionary batch of a stream, read with quiver's views.
fn stream_dictionary_batches(stream: &[u8]) -> Vec<(bool, i64)> {
    let mut out = Vec::new();
    let mut pos = 0;
    while pos + 8 <= stream.len() {
        let len = i32::from_le_bytes(stream[pos + 4..pos + 8].try_into().unwrap()) as usize;
        if len == 0 {
            break;
        }
        let message = format::Message::parse(&stream[pos + 8..pos + 8 + len]).unwrap();
        if let MessageHeader::DictionaryBatch(d) = message.header().unwrap() {
            out.push((d.is_delta(), d.data().unwrap().length()));
        }
        pos += 8 + len + message.body_length() as usize;
    }
    out
}

#[test]
fn arrow_rs_reads_quiver_deltas() {
    let schema = Arc::new(Schema::new(vec![
        Field::new("letters", quiver::datatype::DataType::Utf8, false).with_dictionary(
            DictionaryEncoding {
                id: 3,
                index_type: KEYS,
                ordered: false,
            },
        ),
    ]));
    let batches: Vec<RecordBatch<'static>> = delta_cases()
        .into_iter()
        .map(|(values, keys)| {
            let column = ArrayView::try_new(ArrayParts {
                data_type: Some(quiver::datatype::DataType::Utf8),
                len: keys.len(),
                buffers: vec![Bytes::from_vec(keys.iter().map(|k| *k as u8).collect())],
                dictionary: Some(Dictionary {
                    index_type: KEYS,
                    values: Arc::new(quiver_utf8(&values)),
                }),
                ..ArrayParts::default()
            })
            .unwrap();
            RecordBatch::try_new(Arc::clone(&schema), vec![column], keys.len()).unwrap()
        })
        .collect();
    for (config, options) in quiver_configurations() {
        for stream in [false, true] {
            let bytes = quiver_write(&schema, &batches, &options, stream).unwrap();
            if stream {
                assert_eq!(
                    stream_dictionary_batches(&bytes),
                    [(false, 3), (true, 2), (true, 1)],
                    "{config}"
                );
            }
            let back = arrow_read(bytes, stream).unwrap_or_else(|e| panic!("{config}: {e}"));
            assert_eq!(back.len(), batches.len());
            for (batch, (values, keys)) in back.iter().zip(delta_cases()) {
                let expected = arrow_dictionary(&values, &keys);
                assert_eq!(batch.column(0).to_data(), expected.to_data(), "{config}");
            }
        }
    }
}

#[test]
fn quiver_reads_arrow_rs_deltas() {
    let field = ArrowField::new(
        "letters",
        ArrowType::Dictionary(Box::new(ArrowType::Int8), Box::new(ArrowType::Utf8)),
        false,
    );
    let schema = Arc::new(ArrowSchema::new(vec![field]));
    let batches: Vec<ArrowBatch> = delta_cases()
        .into_iter()
        .map(|(values, keys)| {
            let column: ArrayRef = Arc::new(arrow_dictionary(&values, &keys));
            ArrowBatch::try_new(Arc::clone(&schema), vec![column]).unwrap()
        })
        .collect();
    for (config, options) in arrow_configurations() {
        for stream in [false, true] {
            let bytes = arrow_write(&schema, &batches, options.clone(), stream).unwrap();
            if stream {
                let deltas = stream_dictionary_batches(&bytes);
                assert!(
                    deltas.iter().any(|(delta, _)| *delta),
                    "{config}: {deltas:?}"
                );
            }
            let (_, back) = quiver_read(bytes, stream).unwrap_or_else(|e| panic!("{config}: {e}"));
            assert_eq!(back.len(), batches.len());
            for (batch, (_, keys)) in back.iter().zip(delta_cases()) {
                let column = batch.column(0).unwrap();
                let all = ["a", "b", "c", "d", "e", "f"];
                let got: Vec<&str> = (0..column.len())
                    .map(|i| {
                        let values = &column.dictionary().unwrap().values;
                        values.str_value(column.dictionary_index(i))
                    })
                    .collect();
                let want: Vec<&str> = keys.iter().map(|k| all[*k as usize]).collect();
                assert_eq!(got, want, "{config}");
            }
        }
    }
}

// ---- random schemas and data -----------------------------------------------------------------

mod random {
    use super::*;
    use proptest::prelude::*;
    use quiver_tests::arbitrary::{self, Options, column_values};

    /// Whether a field that may not be null has a type whose nulls come from elsewhere (union
    /// children, run values, dictionary values, or a null type). quiver writes what it is given,
    /// but arrow-rs refuses such "unmasked" logical nulls under a non-nullable struct or
    /// fixed-size list field, so these schemas are left out here.
    fn logical_nulls_where_none_allowed(fields: &[Field]) -> bool {
        fields.iter().any(|f| {
            let logical = f.dictionary().is_some()
                || matches!(
                    f.data_type(),
                    quiver::datatype::DataType::Union(..)
                        | quiver::datatype::DataType::RunEndEncoded(_)
                        | quiver::datatype::DataType::Null
                );
            (!f.is_nullable() && logical)
                || logical_nulls_where_none_allowed(f.data_type().children())
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig {
            cases: 64,
            // About half the random schemas put logical nulls where arrow-rs allows none.
            max_global_rejects: 100_000,
            ..ProptestConfig::default()
        })]

        /// quiver writes random batches (every type, nested, sliced, dictionaries, metadata);
        /// arrow-rs reads them and writes them back; quiver reads what arrow-rs wrote and finds
        /// the values it started from.
        #[test]
        fn through_arrow_rs_and_back(
            (schema, generated) in arbitrary::schema_and_batches(Options::default(), 3),
            codec in prop_oneof![
                Just(None),
                Just(Some(CompressionCodec::Lz4Frame)),
                Just(Some(CompressionCodec::Zstd)),
            ],
        ) {
            prop_assume!(!logical_nulls_where_none_allowed(schema.fields()));
            let options = WriterOptions::default().with_compression(codec);
            let batches: Vec<_> = generated.iter().map(|g| g.batch.clone()).collect();
            let ours = quiver_write(&schema, &batches, &options, true).map_err(TestCaseError::fail)?;
            let arrow_schema = arrow_ipc::reader::StreamReader::try_new(Cursor::new(ours.clone()), None)
                .map_err(|e| TestCaseError::fail(format!("arrow-rs reading quiver's stream: {e}")))?
                .schema();
            let arrow_batches = arrow_read(ours, true)
                .map_err(|e| TestCaseError::fail(format!("arrow-rs reading quiver's stream: {e}")))?;
            let theirs = arrow_write(&arrow_schema, &arrow_batches, IpcWriteOptions::default(), true)
                .map_err(|e| TestCaseError::fail(format!("arrow-rs writing: {e}")))?;
            let (back_schema, back) = quiver_read(theirs, true).map_err(TestCaseError::fail)?;
            let normalized_fields = |s: &Schema| s.fields().iter().map(normalized).collect::<Vec<_>>();
            prop_assert_eq!(normalized_fields(&schema), normalized_fields(&back_schema));
            prop_assert_eq!(back.len(), generated.len());
            for (g, b) in generated.iter().zip(&back) {
                prop_assert_eq!(g.batch.num_rows(), b.num_rows());
                for (expected, column) in g.columns.iter().zip(b.columns()) {
                    prop_assert_eq!(expected, &column_values(column));
                }
            }
        }
    }
}
