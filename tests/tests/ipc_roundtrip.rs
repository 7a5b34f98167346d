//! Round trips through quiver's own writers: data read with quiver's readers, written with
//! [`FileWriter`] and [`StreamWriter`], read back, and compared slot by slot
//! ([`quiver_tests::equal`]).
//!
//! - every file of the arrow-testing integration corpus, for both formats, each compression and
//!   both alignments;
//! - the same batches sliced, so arrays with offsets are written;
//! - dictionaries that grow (deltas), change (replacements in streams, errors in files) or are
//!   shared between columns;
//! - the file layout itself: magic, alignment of every block and buffer, end-of-stream marker.

use quiver::array::{ArrayParts, ArrayView, Dictionary, RecordBatch};
use quiver::bytes::Bytes;
use quiver::datatype::{CompressionCodec, DataType, IntType};
use quiver::error::FormatErrorKind;
use quiver::format::{self, MessageHeader};
use quiver::ipc::WriteError;
use quiver::ipc::{
    FileReader, FileWriter, ReaderOptions, StreamReader, StreamWriter, WriterOptions,
};
use quiver::schema::{DictionaryEncoding, Field, Schema};
use quiver_tests::equal::{assert_batches_equal, batches_equal, schemas_equal};

use std::sync::Arc;

type Batches = Vec<RecordBatch<'static>>;

fn read_file(bytes: Vec<u8>) -> Result<(Schema, Batches), String> {
    let mut reader =
        FileReader::open(bytes, ReaderOptions::default()).map_err(|e| e.to_string())?;
    let schema = Schema::clone(reader.schema());
    let batches = reader
        .batches()
        .collect::<Result<_, _>>()
        .map_err(|e| e.to_string())?;
    Ok((schema, batches))
}

fn read_stream(bytes: &[u8]) -> Result<(Schema, Batches), String> {
    let reader = StreamReader::new(bytes, ReaderOptions::default()).map_err(|e| e.to_string())?;
    let schema = Schema::clone(reader.schema());
    let batches = reader
        .collect::<Result<_, _>>()
        .map_err(|e| e.to_string())?;
    Ok((schema, batches))
}

fn write_file(
    schema: &Arc<Schema>,
    batches: &[RecordBatch<'_>],
    options: &WriterOptions,
) -> Result<Vec<u8>, String> {
    let mut writer = FileWriter::new(Vec::new(), Arc::clone(schema), options.clone())
        .map_err(|e| e.to_string())?;
    for batch in batches {
        writer.write(batch).map_err(|e| e.to_string())?;
    }
    writer.finish().map_err(|e| e.to_string())?;
    Ok(writer.into_inner())
}

fn write_stream(
    schema: &Arc<Schema>,
    batches: &[RecordBatch<'_>],
    options: &WriterOptions,
) -> Result<Vec<u8>, String> {
    let mut writer = StreamWriter::new(Vec::new(), Arc::clone(schema), options.clone())
        .map_err(|e| e.to_string())?;
    for batch in batches {
        writer.write(batch).map_err(|e| e.to_string())?;
    }
    writer.finish().map_err(|e| e.to_string())?;
    Ok(writer.into_inner())
}

/// Every combination of compression and alignment, with a name for messages.
fn configurations() -> Vec<(String, WriterOptions)> {
    let mut out = Vec::new();
    for compression in [
        None,
        Some(CompressionCodec::Lz4Frame),
        Some(CompressionCodec::Zstd),
    ] {
        for alignment in [8, 64] {
            let name = format!(
                "{} align {alignment}",
                compression.map_or("uncompressed", CompressionCodec::name)
            );
            let options = WriterOptions::default()
                .with_compression(compression)
                .with_alignment(alignment);
            out.push((name, options));
        }
    }
    out
}

/// Fewer combinations, for the slower tests: slicing is independent of compression, and the
/// debug build's ZSTD encoder is slow. Each codec and alignment still appears.
fn some_configurations() -> Vec<(String, WriterOptions)> {
    configurations()
        .into_iter()
        .filter(|(name, _)| {
            ["uncompressed align 8", "LZ4_FRAME align 64", "ZSTD align 8"].contains(&name.as_str())
        })
        .collect()
}

/// Writes `batches` as a file and as a stream with `options`, reads both back and compares.
fn round_trip(
    schema: &Arc<Schema>,
    batches: &[RecordBatch<'_>],
    options: &WriterOptions,
) -> Result<(), String> {
    let file = write_file(schema, batches, options).map_err(|e| format!("write file: {e}"))?;
    let stream =
        write_stream(schema, batches, options).map_err(|e| format!("write stream: {e}"))?;
    for (format, read) in [("file", read_file(file)), ("stream", read_stream(&stream))] {
        let (back_schema, back) = read.map_err(|e| format!("read {format}: {e}"))?;
        schemas_equal(schema, &back_schema).map_err(|e| format!("{format}: {e}"))?;
        if back.len() != batches.len() {
            return Err(format!(
                "{format}: {} batches, {} expected",
                back.len(),
                batches.len()
            ));
        }
        for (i, (e, a)) in batches.iter().zip(&back).enumerate() {
            batches_equal(e, a).map_err(|m| format!("{format} batch {i}: {m}"))?;
        }
    }
    Ok(())
}

/// Each integration file, read with quiver.
fn golden() -> Vec<(String, Arc<Schema>, Batches)> {
    let Some(data) = quiver_tests::arrow_testing_data() else {
        return Vec::new();
    };
    let root = data.join("arrow-ipc-stream/integration");
    quiver_tests::integration_files(&data, "arrow_file")
        .into_iter()
        .map(|path| {
            let name = path
                .strip_prefix(&root)
                .unwrap_or(&path)
                .display()
                .to_string();
            let bytes = std::fs::read(&path).unwrap();
            let (schema, batches) = read_file(bytes).unwrap_or_else(|e| panic!("{name}: {e}"));
            (name, Arc::new(schema), batches)
        })
        .collect()
}

/// Runs `check` on every golden file and configuration; prints a summary and fails on any
/// failure.
fn for_every_golden_file(
    what: &str,
    configurations: Vec<(String, WriterOptions)>,
    check: impl Fn(&Arc<Schema>, &[RecordBatch<'static>], &WriterOptions) -> Result<(), String>,
) {
    let files = golden();
    let mut failures = Vec::new();
    for (name, schema, batches) in &files {
        for (config, options) in &configurations {
            if let Err(e) = check(schema, batches, options) {
                failures.push(format!("  {name} ({config}): {e}"));
            }
        }
    }
    let runs = files.len() * configurations.len();
    println!(
        "{what}: {} files x {} configurations, {} passed, {} failed",
        files.len(),
        configurations.len(),
        runs - failures.len(),
        failures.len()
    );
    for failure in &failures {
        println!("{failure}");
    }
    assert!(failures.is_empty(), "{} {what} failures", failures.len());
}

#[test]
fn golden_files_round_trip() {
    for_every_golden_file("golden round trip", configurations(), round_trip);
}

/// `batch` cut to `len` rows from `offset`.
fn slice(batch: &RecordBatch<'static>, offset: usize, len: usize) -> RecordBatch<'static> {
    let columns = batch
        .columns()
        .iter()
        .map(|c| c.slice(offset, len).unwrap())
        .collect();
    RecordBatch::try_new(Arc::clone(batch.schema()), columns, len).unwrap()
}

#[test]
fn sliced_golden_batches_round_trip() {
    let configurations = some_configurations();
    assert_eq!(configurations.len(), 3);
    for_every_golden_file(
        "sliced golden round trip",
        configurations,
        |schema, batches, options| {
            // Offsets that fall inside a byte (1, 3) and on one (8), each with the rest of the batch
            // or a short run.
            let mut sliced = Vec::new();
            for batch in batches {
                let rows = batch.num_rows();
                for offset in [1, 3, 8] {
                    if offset < rows {
                        sliced.push(slice(batch, offset, rows - offset));
                        sliced.push(slice(batch, offset, (rows - offset).min(2)));
                    }
                }
                sliced.push(slice(batch, rows, 0));
            }
            round_trip(schema, &sliced, options)
        },
    );
}

// ---- dictionaries ----------------------------------------------------------------------------

fn utf8(values: &[&str]) -> ArrayView<'static> {
    let mut offsets = vec![0u8; 4];
    let mut data = Vec::new();
    for v in values {
        data.extend_from_slice(v.as_bytes());
        offsets.extend_from_slice(&(data.len() as i32).to_le_bytes());
    }
    ArrayView::try_new(ArrayParts {
        data_type: Some(DataType::Utf8),
        len: values.len(),
        buffers: vec![Bytes::from_vec(offsets), Bytes::from_vec(data)],
        ..ArrayParts::default()
    })
    .unwrap()
}

const INDEX: IntType = IntType {
    bit_width: 8,
    signed: true,
};

/// A dictionary-encoded column: `indices` into `values`.
fn encoded(indices: &[i8], values: &Arc<ArrayView<'static>>) -> ArrayView<'static> {
    ArrayView::try_new(ArrayParts {
        data_type: Some(DataType::Utf8),
        len: indices.len(),
        buffers: vec![Bytes::from_vec(indices.iter().map(|i| *i as u8).collect())],
        dictionary: Some(Dictionary {
            index_type: INDEX,
            values: Arc::clone(values),
        }),
        ..ArrayParts::default()
    })
    .unwrap()
}

fn dictionary_schema(columns: usize) -> Arc<Schema> {
    let fields = (0..columns)
        .map(|i| {
            Field::new(format!("c{i}"), DataType::Utf8, false).with_dictionary(DictionaryEncoding {
                id: 42,
                index_type: INDEX,
                ordered: false,
            })
        })
        .collect();
    Arc::new(Schema::new(fields))
}

fn dictionary_batch(
    schema: &Arc<Schema>,
    columns: Vec<ArrayView<'static>>,
) -> RecordBatch<'static> {
    let rows = columns.first().map_or(0, ArrayView::len);
    RecordBatch::try_new(Arc::clone(schema), columns, rows).unwrap()
}

/// The (id, isDelta, length) of every dictionary batch in a stream.
fn dictionary_messages(stream: &[u8]) -> Vec<(i64, bool, i64)> {
    let mut out = Vec::new();
    let mut pos = 0;
    loop {
        assert_eq!(&stream[pos..pos + 4], &[0xFF; 4]);
        let len = i32::from_le_bytes(stream[pos + 4..pos + 8].try_into().unwrap()) as usize;
        if len == 0 {
            assert_eq!(
                pos + 8,
                stream.len(),
                "end-of-stream marker ends the stream"
            );
            return out;
        }
        let message = format::Message::parse(&stream[pos + 8..pos + 8 + len]).unwrap();
        if let MessageHeader::DictionaryBatch(d) = message.header().unwrap() {
            out.push((d.id(), d.is_delta(), d.data().unwrap().length()));
        }
        pos += 8 + len + message.body_length() as usize;
    }
}

#[test]
fn growing_dictionaries_are_written_as_deltas() {
    let schema = dictionary_schema(1);
    let abc = Arc::new(utf8(&["a", "b", "c"]));
    let abcde = Arc::new(utf8(&["a", "b", "c", "d", "e"]));
    let batches = vec![
        dictionary_batch(&schema, vec![encoded(&[0, 2, 1], &abc)]),
        dictionary_batch(&schema, vec![encoded(&[2, 2], &abc)]),
        dictionary_batch(&schema, vec![encoded(&[4, 0, 3], &abcde)]),
        // A dictionary that is a prefix of what the reader holds serves the same indices.
        dictionary_batch(&schema, vec![encoded(&[1], &abc)]),
    ];
    for (_, options) in configurations() {
        let file = write_file(&schema, &batches, &options).unwrap();
        let (_, back) = read_file(file.clone()).unwrap();
        assert_batches_equal(&batches, &back);
        let reader = FileReader::open(file, ReaderOptions::default()).unwrap();
        assert_eq!(
            reader.dictionary_blocks().len(),
            2,
            "the dictionary, then one delta"
        );

        let stream = write_stream(&schema, &batches, &options).unwrap();
        let (_, back) = read_stream(&stream).unwrap();
        assert_batches_equal(&batches, &back);
        // Streams replace a dictionary that shrank (the brief's rule): whole, delta, whole.
        assert_eq!(
            dictionary_messages(&stream),
            [(42, false, 3), (42, true, 2), (42, false, 3)]
        );
    }
}

#[test]
fn changed_dictionaries_replace_in_streams_and_fail_in_files() {
    let schema = dictionary_schema(1);
    let abc = Arc::new(utf8(&["a", "b", "c"]));
    let xy = Arc::new(utf8(&["x", "y"]));
    let batches = vec![
        dictionary_batch(&schema, vec![encoded(&[0, 2], &abc)]),
        dictionary_batch(&schema, vec![encoded(&[1, 0], &xy)]),
    ];
    let stream = write_stream(&schema, &batches, &WriterOptions::default()).unwrap();
    assert_eq!(
        dictionary_messages(&stream),
        [(42, false, 3), (42, false, 2)]
    );
    let (_, back) = read_stream(&stream).unwrap();
    assert_batches_equal(&batches, &back);

    let mut writer =
        FileWriter::new(Vec::new(), Arc::clone(&schema), WriterOptions::default()).unwrap();
    writer.write(&batches[0]).unwrap();
    let written = writer.bytes_written();
    let err = writer.write(&batches[1]).unwrap_err();
    let WriteError::Invalid(e) = &err else {
        panic!("expected an Invalid error, got {err:?}");
    };
    assert!(
        matches!(e.kind, FormatErrorKind::Unsupported { .. }),
        "{e:?}"
    );
    let shown = e.display_with(&schema).to_string();
    assert!(shown.ends_with("(field `c0`, batch 1)"), "{shown}");
    // Nothing of the failed batch was written, and the writer goes on.
    assert_eq!(writer.bytes_written(), written);
    writer.write(&batches[0]).unwrap();
    writer.finish().unwrap();
    let (_, back) = read_file(writer.into_inner()).unwrap();
    assert_batches_equal(&[batches[0].clone(), batches[0].clone()], &back);
}

#[test]
fn shared_dictionaries_are_written_once_per_change() {
    let schema = dictionary_schema(2);
    let abc = Arc::new(utf8(&["a", "b", "c"]));
    let ab = Arc::new(utf8(&["a", "b"]));
    let abcd = Arc::new(utf8(&["a", "b", "c", "d"]));
    let batches = vec![
        // Both columns share one dictionary object.
        dictionary_batch(
            &schema,
            vec![encoded(&[0, 1], &abc), encoded(&[2, 2], &abc)],
        ),
        // Equal by value, different objects: nothing to write.
        dictionary_batch(
            &schema,
            vec![
                encoded(&[0], &Arc::new(utf8(&["a", "b", "c"]))),
                encoded(&[1], &abc),
            ],
        ),
        // One column needs a longer dictionary, the other a prefix: one delta serves both.
        dictionary_batch(
            &schema,
            vec![encoded(&[1, 0], &ab), encoded(&[3, 0], &abcd)],
        ),
    ];
    for (_, options) in configurations() {
        let stream = write_stream(&schema, &batches, &options).unwrap();
        assert_eq!(
            dictionary_messages(&stream),
            [(42, false, 3), (42, true, 1)]
        );
        let (_, back) = read_stream(&stream).unwrap();
        assert_batches_equal(&batches, &back);
        let file = write_file(&schema, &batches, &options).unwrap();
        let (_, back) = read_file(file).unwrap();
        assert_batches_equal(&batches, &back);
    }
}

// ---- layout ----------------------------------------------------------------------------------

#[test]
fn file_layout_is_aligned_and_framed() {
    let files = golden();
    let Some((_, schema, batches)) = files
        .iter()
        .find(|(name, ..)| name.ends_with("1.0.0-littleendian/generated_dictionary.arrow_file"))
    else {
        return;
    };
    for (config, options) in configurations() {
        let alignment = options.alignment;
        let file = write_file(schema, batches, &options).unwrap();
        // The magic, padded to 8 bytes, then the stream: the schema message right away.
        assert_eq!(&file[..8], b"ARROW1\0\0");
        assert_eq!(&file[8..12], &[0xFF; 4], "{config}");
        let schema_len = i32::from_le_bytes(file[12..16].try_into().unwrap()) as usize;
        assert_eq!(
            (16 + schema_len) % alignment,
            0,
            "{config}: the next message is aligned"
        );
        assert_eq!(&file[file.len() - 6..], b"ARROW1");
        let footer_len =
            i32::from_le_bytes(file[file.len() - 10..file.len() - 6].try_into().unwrap()) as usize;
        let footer_at = file.len() - 10 - footer_len;
        assert_eq!(
            &file[footer_at - 8..footer_at],
            &[0xFF, 0xFF, 0xFF, 0xFF, 0, 0, 0, 0]
        );
        let footer = format::Footer::parse(&file[footer_at..file.len() - 10]).unwrap();
        assert_eq!(footer.version().unwrap(), format::MetadataVersion::V5);
        let blocks: Vec<_> = footer
            .dictionaries()
            .unwrap()
            .iter()
            .chain(footer.record_batches().unwrap().iter())
            .collect();
        assert!(!footer.dictionaries().unwrap().is_empty());
        assert_eq!(footer.record_batches().unwrap().len(), batches.len());
        for block in blocks {
            let at = block.offset as usize;
            assert_eq!(at % alignment, 0, "{config}: block at {at}");
            assert_eq!(block.meta_data_length as usize % alignment, 0, "{config}");
            assert_eq!(block.body_length as usize % alignment, 0, "{config}");
            assert_eq!(&file[at..at + 4], &[0xFF; 4]);
            let len = i32::from_le_bytes(file[at + 4..at + 8].try_into().unwrap());
            assert_eq!(len as usize + 8, block.meta_data_length as usize);
            let message = format::Message::parse(&file[at + 8..at + 8 + len as usize]).unwrap();
            assert_eq!(message.version().unwrap(), format::MetadataVersion::V5);
            assert_eq!(message.body_length(), block.body_length);
            let data = match message.header().unwrap() {
                MessageHeader::RecordBatch(b) => b,
                MessageHeader::DictionaryBatch(d) => d.data().unwrap(),
                _ => panic!("unexpected message"),
            };
            assert_eq!(
                data.compression().unwrap().map(|c| c.codec),
                options.compression
            );
            for buffer in data.buffers().unwrap().iter() {
                assert_eq!(buffer.offset as usize % alignment, 0, "{config}");
                assert!(buffer.offset + buffer.length <= block.body_length);
            }
        }
    }
}

#[test]
fn schema_only_and_empty_batches() {
    let schema = Arc::new(Schema::new(vec![Field::new("x", DataType::Int64, true)]));
    let empty = RecordBatch::try_new(
        Arc::clone(&schema),
        vec![
            ArrayView::try_new(ArrayParts {
                data_type: Some(DataType::Int64),
                buffers: vec![Bytes::default()],
                ..ArrayParts::default()
            })
            .unwrap(),
        ],
        0,
    )
    .unwrap();
    for (_, options) in configurations() {
        round_trip(&schema, &[], &options).unwrap();
        round_trip(&schema, &[empty.clone(), empty.clone()], &options).unwrap();
    }
    let no_columns = Arc::new(Schema::new(Vec::new()));
    let rows = RecordBatch::try_new(Arc::clone(&no_columns), Vec::new(), 5).unwrap();
    round_trip(&no_columns, &[rows], &WriterOptions::default()).unwrap();
}

#[test]
fn batches_of_another_schema_are_refused() {
    let schema = Arc::new(Schema::new(vec![Field::new("x", DataType::Utf8, false)]));
    let other = Arc::new(Schema::new(vec![Field::new("y", DataType::Utf8, false)]));
    let batch = RecordBatch::try_new(other, vec![utf8(&["a"])], 1).unwrap();
    let mut writer = StreamWriter::new(Vec::new(), schema, WriterOptions::default()).unwrap();
    let err = writer.write(&batch).unwrap_err();
    assert!(err.invalid().is_some(), "{err}");
    writer.finish().unwrap();
    assert!(writer.write(&batch).is_err(), "no writes after finish");
    let (_, back) = read_stream(&writer.into_inner()).unwrap();
    assert!(back.is_empty());
}

#[test]
fn bad_alignment_is_refused() {
    let schema = Arc::new(Schema::new(Vec::new()));
    for alignment in [0, 4, 12, 128] {
        let options = WriterOptions::default().with_alignment(alignment);
        assert!(FileWriter::new(Vec::new(), Arc::clone(&schema), options.clone()).is_err());
        assert!(StreamWriter::new(Vec::new(), Arc::clone(&schema), options).is_err());
    }
}

// ---- random schemas and data -----------------------------------------------------------------

mod random {
    use super::*;
    use proptest::prelude::*;
    use quiver_tests::arbitrary::{self, Options, column_values};

    fn codec() -> impl Strategy<Value = Option<CompressionCodec>> {
        prop_oneof![
            Just(None),
            Just(Some(CompressionCodec::Lz4Frame)),
            Just(Some(CompressionCodec::Zstd)),
        ]
    }

    fn has_dictionaries(fields: &[Field]) -> bool {
        fields
            .iter()
            .any(|f| f.dictionary().is_some() || has_dictionaries(f.data_type().children()))
    }

    /// Checks that `back` holds the values each generated batch was built from.
    fn check_values(
        generated: &[arbitrary::Generated],
        back: &[RecordBatch<'static>],
    ) -> Result<(), TestCaseError> {
        prop_assert_eq!(back.len(), generated.len());
        for (g, b) in generated.iter().zip(back) {
            batches_equal(&g.batch, b).map_err(TestCaseError::fail)?;
            for (expected, column) in g.columns.iter().zip(b.columns()) {
                prop_assert_eq!(expected, &column_values(column));
            }
        }
        Ok(())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(quiver_tests::proptest_cases(96)))]

        /// Random schemas (every type, nested up to depth 4, dictionaries, metadata) and random
        /// batches (nulls, empty batches, sliced columns): written, read back, equal.
        #[test]
        fn random_batches_round_trip(
            (schema, generated) in arbitrary::schema_and_batches(Options::default(), 3),
            compression in codec(),
            wide in any::<bool>(),
        ) {
            let options = WriterOptions::default()
                .with_compression(compression)
                .with_alignment(if wide { 64 } else { 8 });
            let batches: Vec<_> = generated.iter().map(|g| g.batch.clone()).collect();

            // Streams take every batch: dictionaries that change are replaced.
            let stream = write_stream(&schema, &batches, &options).map_err(TestCaseError::fail)?;
            let (back_schema, back) = read_stream(&stream).map_err(TestCaseError::fail)?;
            schemas_equal(&schema, &back_schema).map_err(TestCaseError::fail)?;
            check_values(&generated, &back)?;

            // Files cannot replace dictionaries: each batch has its own, so with dictionaries
            // only the first batch goes into a file.
            let n = if has_dictionaries(schema.fields()) { batches.len().min(1) } else { batches.len() };
            let file = write_file(&schema, &batches[..n], &options).map_err(TestCaseError::fail)?;
            let (back_schema, back) = read_file(file).map_err(TestCaseError::fail)?;
            schemas_equal(&schema, &back_schema).map_err(TestCaseError::fail)?;
            check_values(&generated[..n], &back)?;
        }
    }
}

#[test]
fn footer_metadata_reads_back() {
    let schema = Arc::new(Schema::new(vec![Field::new("x", DataType::Utf8, false)]));
    let batch = RecordBatch::try_new(Arc::clone(&schema), vec![utf8(&["a", "bc"])], 2).unwrap();
    let mut writer = FileWriter::new(Vec::new(), schema, WriterOptions::default()).unwrap();
    writer.write(&batch).unwrap();
    let metadata = vec![
        ("created by".to_string(), "quiver".to_string()),
        ("empty".to_string(), String::new()),
    ];
    writer.set_metadata(metadata.clone());
    writer.finish().unwrap();
    let reader = FileReader::open(writer.into_inner(), ReaderOptions::default()).unwrap();
    assert_eq!(reader.metadata(), &metadata);
}
