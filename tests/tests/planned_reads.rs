//! Planned, coalesced reads (`FileReader::scan`): exact read and round-trip counts, projection
//! reading only the selected buffers, and the same values as batch-by-batch reading.

use quiver::array::{ArrayView, RecordBatch};
use quiver::ipc::{FileReader, Projection, ReaderOptions, ScanOptions};
use quiver::source::Counting;

fn golden(name: &str) -> Option<Vec<u8>> {
    let data = quiver_tests::arrow_testing_data()?;
    Some(std::fs::read(data.join("arrow-ipc-stream/integration").join(name)).unwrap())
}

/// Same type, length, validity and buffer bytes, recursively (dictionaries included).
fn assert_same(a: &ArrayView<'_>, b: &ArrayView<'_>, path: &str) {
    assert_eq!(a.data_type(), b.data_type(), "{path}");
    assert_eq!(
        (a.len(), a.offset(), a.null_count()),
        (b.len(), b.offset(), b.null_count()),
        "{path}"
    );
    assert_eq!(a.validity(), b.validity(), "{path} validity");
    assert_eq!(a.buffers(), b.buffers(), "{path} buffers");
    assert_eq!(a.children().len(), b.children().len(), "{path}");
    for (i, (x, y)) in a.children().iter().zip(b.children()).enumerate() {
        assert_same(x, y, &format!("{path}.{i}"));
    }
    match (a.dictionary(), b.dictionary()) {
        (Some(x), Some(y)) => assert_same(&x.values, &y.values, &format!("{path} dictionary")),
        (None, None) => {}
        _ => panic!("{path}: dictionary on one side only"),
    }
}

fn batch_by_batch(file: &[u8]) -> Vec<RecordBatch<'static>> {
    let mut reader = FileReader::open(file, ReaderOptions::default()).unwrap();
    reader.batches().collect::<Result<_, _>>().unwrap()
}

#[test]
fn a_full_scan_is_the_footer_read_plus_one_round_trip() {
    for name in [
        "1.0.0-littleendian/generated_decimal.arrow_file",
        "1.0.0-littleendian/generated_dictionary.arrow_file",
        "1.0.0-bigendian/generated_nested_dictionary.arrow_file",
        "2.0.0-compression/generated_zstd.arrow_file",
    ] {
        let Some(file) = golden(name) else { return };
        let expected = batch_by_batch(&file);
        let source = Counting::new(file.as_slice());
        let mut reader = FileReader::open(&source, ReaderOptions::default()).unwrap();
        let batches: Vec<_> = reader
            .scan(0..usize::MAX, ScanOptions::default())
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(batches.len(), expected.len());
        for (got, want) in batches.iter().zip(&expected) {
            for (c, (a, b)) in got.columns().iter().zip(want.columns()).enumerate() {
                assert_same(a, b, &format!("{name} column {c}"));
            }
        }
        assert_eq!(source.round_trips(), 2, "{name}");
        assert_eq!(
            source.read_count(),
            2,
            "{name}: footer + one coalesced body read"
        );
        let body_read = source.reads()[1];
        assert_eq!(
            body_read.offset, 0,
            "{name}: the first read starts at the magic"
        );
        println!(
            "planned_reads: {name}: {} batches in {} reads, {} round trips",
            batches.len(),
            source.read_count(),
            source.round_trips()
        );
    }
}

#[test]
fn a_projection_reads_only_its_buffers_in_three_round_trips() {
    let name = "1.0.0-littleendian/generated_decimal.arrow_file";
    let Some(file) = golden(name) else { return };
    let expected = batch_by_batch(&file);
    let source = Counting::new(file.as_slice());
    let mut reader = FileReader::open(&source, ReaderOptions::default()).unwrap();
    let footer_bytes = source.bytes_read();
    let column = reader.schema().fields()[3].name().to_owned();
    reader.set_projection(Projection::from_paths(reader.schema(), &[&column]).unwrap());
    let metadata: u64 = reader
        .record_batch_blocks()
        .iter()
        .map(|b| b.meta_data_length as u64)
        .sum();
    let batches: Vec<_> = reader
        .scan(
            0..usize::MAX,
            ScanOptions::default().with_hole_size_limit(0),
        )
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(source.round_trips(), 3, "footer, metadata, buffers");
    let mut buffers = 0u64;
    for (got, want) in batches.iter().zip(&expected) {
        assert_eq!(got.columns().len(), 1);
        assert_same(&got.columns()[0], &want.columns()[3], &column);
        let c = &want.columns()[3];
        buffers += c.validity().map_or(0, |v| v.len() as u64);
        buffers += c.buffers().iter().map(|b| b.len() as u64).sum::<u64>();
    }
    // With no holes merged, exactly the footer, every block's metadata and the column's buffers
    // (validity bitmaps of columns without nulls are still read: they are in the message).
    let read = source.bytes_read();
    assert!(read >= footer_bytes + metadata + buffers, "{read}");
    assert!(
        read as f64
            <= 1.1 * (footer_bytes + metadata + buffers) as f64 + 64.0 * batches.len() as f64,
        "read {read} bytes for {buffers} bytes of buffers"
    );
    println!(
        "planned_reads: {name}: one of {} columns: {} round trips, {read} bytes of {} (buffers {buffers}, metadata {metadata}, footer {footer_bytes})",
        reader.schema().fields().len(),
        source.round_trips(),
        file.len()
    );
}

#[test]
fn dictionaries_are_fetched_only_for_columns_that_use_them_and_only_once() {
    let name = "1.0.0-littleendian/generated_nested_dictionary.arrow_file";
    let Some(file) = golden(name) else { return };
    let source = Counting::new(file.as_slice());
    let mut reader = FileReader::open(&source, ReaderOptions::default()).unwrap();
    let dictionary_extents: Vec<_> = reader
        .dictionary_blocks()
        .iter()
        .map(|b| b.offset as u64..(b.offset + b.meta_data_length as i64 + b.body_length) as u64)
        .collect();
    let fetched_a_dictionary = |source: &Counting<&[u8]>| {
        source.reads().iter().any(|r| {
            dictionary_extents
                .iter()
                .any(|d| r.offset <= d.start && d.end <= r.offset + r.len)
        })
    };
    let schema = reader.schema().clone();
    for (i, field) in schema.fields().iter().enumerate() {
        let uses = !matches!(
            quiver::schema::Schema::new(vec![field.clone()]),
            s if s.fields().iter().all(|f| f.dictionary().is_none() && !nested_dictionary(f))
        );
        source.reset();
        reader.set_projection(Projection::from_paths(&schema, &[field.name()]).unwrap());
        let options = ScanOptions::default().with_hole_size_limit(0);
        let batches: Vec<_> = reader
            .scan(0..usize::MAX, options)
            .collect::<Result<_, _>>()
            .unwrap();
        assert!(!batches.is_empty());
        let fetched = fetched_a_dictionary(&source);
        println!(
            "planned_reads: {name}: column {i} `{}` uses a dictionary: {uses}, fetched one: {fetched}",
            field.name()
        );
        if !uses {
            assert!(!fetched, "column {i} fetched a dictionary it does not use");
        }
    }
    // Once fetched, never again.
    reader.set_projection(Projection::All);
    source.reset();
    let _ = reader.scan(0..usize::MAX, ScanOptions::default()).count();
    let first = source.bytes_read();
    source.reset();
    let _ = reader
        .scan(
            0..usize::MAX,
            ScanOptions::default().with_hole_size_limit(0),
        )
        .count();
    assert!(!fetched_a_dictionary(&source) || source.bytes_read() <= first);
}

fn nested_dictionary(field: &quiver::schema::Field) -> bool {
    field.dictionary().is_some() || field.data_type().children().iter().any(nested_dictionary)
}

#[test]
fn round_trips_grow_with_the_window_not_the_batch_count() {
    let name = "1.0.0-littleendian/generated_decimal.arrow_file";
    let Some(file) = golden(name) else { return };
    let source = Counting::new(file.as_slice());
    let mut reader = FileReader::open(&source, ReaderOptions::default()).unwrap();
    let blocks = reader.record_batch_blocks().to_vec();
    let body: u64 = blocks
        .iter()
        .map(|b| b.meta_data_length as u64 + b.body_length as u64)
        .sum();
    for windows in [1u64, 2, 4, 9] {
        source.reset();
        let readahead = body.div_ceil(windows);
        let n = reader
            .scan(
                0..usize::MAX,
                ScanOptions::default().with_readahead(readahead),
            )
            .map(Result::unwrap)
            .count();
        assert_eq!(n, blocks.len());
        // Whole blocks are packed greedily, so a window holds between half and all of its
        // budget: at least `windows` and at most `2 × windows + 1` round trips, whatever the count of
        // batches.
        let trips = source.round_trips() as u64;
        assert!(
            trips >= windows && trips <= 2 * windows + 1,
            "{windows} windows: {trips} round trips"
        );
        println!(
            "planned_reads: {} batches, readahead {readahead}: {trips} round trips",
            blocks.len()
        );
    }
}

/// The 100-batch, ten-column file the counts are stated for, written by quiver.
fn hundred_batches() -> Vec<u8> {
    quiver_tests::ten_columns::file(100, 2000, quiver::ipc::WriterOptions::default())
}

#[test]
fn a_hundred_batches_read_in_two_reads_and_two_round_trips() {
    let file = hundred_batches();
    let source = Counting::new(file.as_slice());
    let mut reader = FileReader::open(&source, ReaderOptions::default()).unwrap();
    let rows: usize = reader
        .scan(0..usize::MAX, ScanOptions::default())
        .map(|b| b.unwrap().num_rows())
        .sum();
    assert_eq!(rows, 200_000);
    assert_eq!(source.read_count(), 2, "footer + body");
    assert_eq!(source.round_trips(), 2);
    println!(
        "planned_reads: 100 batches, {} bytes: {} reads, {} round trips",
        file.len(),
        source.read_count(),
        source.round_trips()
    );
}

/// Bytes of a column's buffers (validity included), dictionary values excluded.
fn buffer_bytes(column: &ArrayView<'_>) -> u64 {
    column.validity().map_or(0, |v| v.len() as u64)
        + column.buffers().iter().map(|b| b.len() as u64).sum::<u64>()
        + column.children().iter().map(buffer_bytes).sum::<u64>()
}

#[test]
fn one_column_of_a_hundred_batches_is_three_round_trips_and_its_own_bytes() {
    let file = hundred_batches();
    let expected = batch_by_batch(&file);
    for (path, index) in [
        ("i32", 0),
        ("struct.name", 8),
        ("list", 7),
        ("dictionary", 9),
    ] {
        let source = Counting::new(file.as_slice());
        let mut reader = FileReader::open(&source, ReaderOptions::default()).unwrap();
        let footer = source.bytes_read();
        let metadata: u64 = reader
            .record_batch_blocks()
            .iter()
            .map(|b| b.meta_data_length as u64)
            .sum();
        let dictionaries: u64 = reader
            .dictionary_blocks()
            .iter()
            .map(|b| b.meta_data_length as u64 + b.body_length as u64)
            .sum();
        reader.set_projection(Projection::from_paths(reader.schema(), &[path]).unwrap());
        let batches: Vec<_> = reader
            .scan(0..usize::MAX, ScanOptions::default())
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(batches.len(), 100);
        assert!(
            source.round_trips() <= 3,
            "{path}: {} round trips",
            source.round_trips()
        );
        // The column's own buffers, as the projected arrays hold them.
        let column: u64 = batches.iter().map(|b| buffer_bytes(&b.columns()[0])).sum();
        let uses_dictionary = path == "dictionary";
        let needed = column + metadata + footer + if uses_dictionary { dictionaries } else { 0 };
        let read = source.bytes_read();
        assert!(
            read as f64 <= 1.1 * needed as f64,
            "{path}: read {read}, needed {needed}"
        );
        // With holes merged, the first read may run from offset 0 (checking the magic) through
        // a small dictionary block before batch 0; with no holes merged, the dictionary is read
        // only when the projection needs it.
        let exact = Counting::new(file.as_slice());
        let mut again = FileReader::open(&exact, ReaderOptions::default()).unwrap();
        again.set_projection(Projection::from_paths(again.schema(), &[path]).unwrap());
        let scan = again.scan(
            0..usize::MAX,
            ScanOptions::default().with_hole_size_limit(0),
        );
        assert_eq!(scan.map(Result::unwrap).count(), 100);
        let fetched_dictionary = exact.reads().iter().any(|r| {
            again.dictionary_blocks().iter().any(|b| {
                (r.offset..r.offset + r.len)
                    .contains(&(b.offset as u64 + b.meta_data_length as u64))
            })
        });
        assert_eq!(fetched_dictionary, uses_dictionary, "{path}");
        let whole = &expected[0].columns()[index];
        assert_eq!(batches[0].columns()[0].len(), whole.len());
        if path != "struct.name" {
            assert_same(&batches[0].columns()[0], whole, path);
        }
        println!(
            "planned_reads: 100 batches, `{path}`: {} round trips, {read} bytes read of {} (column {column}, metadata {metadata}, footer read {footer}), dictionary fetched: {fetched_dictionary}",
            source.round_trips(),
            file.len()
        );
    }
}

#[test]
fn a_small_window_costs_round_trips_by_file_size_not_batch_count() {
    let file = hundred_batches();
    let source = Counting::new(file.as_slice());
    let mut reader = FileReader::open(&source, ReaderOptions::default()).unwrap();
    for window in [file.len() as u64 / 4, file.len() as u64 / 10] {
        source.reset();
        let n = reader
            .scan(0..usize::MAX, ScanOptions::default().with_readahead(window))
            .map(Result::unwrap)
            .count();
        assert_eq!(n, 100);
        let windows = (file.len() as u64).div_ceil(window);
        let trips = source.round_trips() as u64;
        assert!(
            trips <= 2 * windows + 1,
            "window {window}: {trips} round trips"
        );
        println!("planned_reads: 100 batches, window {window} bytes: {trips} round trips");
    }
}
