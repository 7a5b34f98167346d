//! The three drivers of the one file decoder: the sync `FileReader`, the `AsyncFileReader` and
//! a `FileDecoder` driven by hand. For every read-count and planned-read case of
//! `read_counts.rs` and `planned_reads.rs`, all three make the same requests (offset, length
//! and round trip) and return the same batches. Also: requests answered in random splits,
//! supersets and orders, and hostile pushes.

#![allow(clippy::single_range_in_vec_init)]

use proptest::prelude::*;
use quiver::array::RecordBatch;
use quiver::bytes::Bytes;
use quiver::ipc::{
    AsyncFileReader, DecodeResult, FileDecoder, FileReader, Projection, ReaderOptions, ScanOptions,
};
use quiver::source::{Blocking, Counting, RandomAccess, ReadCall};
use quiver_tests::{block_on, equal::assert_batches_equal};

fn golden(name: &str) -> Option<Vec<u8>> {
    let data = quiver_tests::arrow_testing_data()?;
    Some(std::fs::read(data.join("arrow-ipc-stream/integration").join(name)).unwrap())
}

/// What to read and how.
#[derive(Clone, Debug, Default)]
struct Case {
    footer_read_size: Option<usize>,
    /// Field paths, or every field.
    paths: Option<Vec<String>>,
    /// A planned scan of every batch with these options, or one batch at a time in this order.
    scan: Option<ScanOptions>,
    batches: Vec<usize>,
}

impl Case {
    fn options(&self) -> ReaderOptions {
        let options = ReaderOptions::default();
        match self.footer_read_size {
            Some(size) => options.with_footer_read_size(size),
            None => options,
        }
    }

    fn projection(&self, schema: &quiver::schema::Schema) -> Option<Projection> {
        let paths = self.paths.as_ref()?;
        Some(Projection::from_paths(schema, paths).unwrap())
    }
}

type Run = (Vec<ReadCall>, Vec<RecordBatch<'static>>);

fn sync(file: &[u8], case: &Case) -> Run {
    let source = Counting::new(file);
    let mut reader = FileReader::open(&source, case.options()).unwrap();
    if let Some(p) = case.projection(reader.schema()) {
        reader.set_projection(p);
    }
    let batches = match &case.scan {
        Some(options) => reader
            .scan(0..usize::MAX, options.clone())
            .collect::<Result<_, _>>()
            .unwrap(),
        None => case
            .batches
            .iter()
            .map(|&i| reader.batch(i).unwrap())
            .collect(),
    };
    (source.reads(), batches)
}

fn asynchronous(file: &[u8], case: &Case, prefetch: usize) -> Run {
    let source = Blocking(Counting::new(file));
    let batches = block_on(async {
        let mut reader = AsyncFileReader::open(&source, case.options())
            .await
            .unwrap()
            .with_prefetch(prefetch);
        if let Some(p) = case.projection(reader.schema()) {
            reader.set_projection(p);
        }
        let mut batches = Vec::new();
        match &case.scan {
            Some(options) => {
                reader.select(0..usize::MAX, options.clone());
                while let Some(batch) = reader.next_batch().await {
                    batches.push(batch.unwrap());
                }
            }
            None => {
                for &i in &case.batches {
                    batches.push(reader.batch(i).await.unwrap());
                }
            }
        }
        batches
    });
    (source.inner().reads(), batches)
}

/// Answers one request list from `source`, in one call.
fn answer(source: &Counting<&[u8]>, ranges: &[std::ops::Range<u64>]) -> Vec<Bytes<'static>> {
    let total: u64 = ranges.iter().map(|r| r.end - r.start).sum();
    let mut out = vec![0; total as usize];
    source.read_ranges(ranges, &mut out).unwrap();
    let mut at = 0;
    ranges
        .iter()
        .map(|r| {
            let len = (r.end - r.start) as usize;
            at += len;
            Bytes::from_vec(out[at - len..at].to_vec())
        })
        .collect()
}

/// Runs the decoder until it returns something other than a request.
fn drive(decoder: &mut FileDecoder, source: &Counting<&[u8]>) -> DecodeResult {
    loop {
        match decoder.try_decode().unwrap() {
            DecodeResult::NeedsData(ranges) => {
                let data = answer(source, &ranges);
                decoder.push_ranges(ranges, data).unwrap();
            }
            other => return other,
        }
    }
}

fn by_hand(file: &[u8], case: &Case) -> Run {
    let source = Counting::new(file);
    let mut decoder = FileDecoder::new(file.len() as u64, case.options());
    assert!(matches!(drive(&mut decoder, &source), DecodeResult::Footer));
    if let Some(p) = case.projection(decoder.schema()) {
        decoder.set_projection(p);
    }
    let mut batches = Vec::new();
    match &case.scan {
        Some(options) => {
            decoder.set_scan_options(options.clone());
            decoder.select(0..usize::MAX);
            while let DecodeResult::Data(batch) = drive(&mut decoder, &source) {
                batches.push(batch);
            }
        }
        None => {
            for &i in &case.batches {
                decoder.select_batch(i);
                let DecodeResult::Data(batch) = drive(&mut decoder, &source) else {
                    panic!("batch {i}: no data");
                };
                batches.push(batch);
            }
        }
    }
    (source.reads(), batches)
}

/// (offset, length) of every read, sorted, and the number of round trips.
fn requests(reads: &[ReadCall]) -> (Vec<(u64, u64)>, usize) {
    let mut ranges: Vec<_> = reads.iter().map(|r| (r.offset, r.len)).collect();
    ranges.sort();
    let trips = reads.iter().map(|r| r.round_trip + 1).max().unwrap_or(0);
    (ranges, trips)
}

/// All drivers agree with the sync reader: the same request log (prefetching aside, which
/// reorders but neither adds nor changes requests) and the same batches.
fn check(name: &str, file: &[u8], case: &Case) -> Run {
    let (reads, batches) = sync(file, case);
    let (hand, hand_batches) = by_hand(file, case);
    assert_eq!(hand, reads, "{name} {case:?}: by hand");
    assert_batches_equal(&batches, &hand_batches);
    let (serial, serial_batches) = asynchronous(file, case, 0);
    assert_eq!(serial, reads, "{name} {case:?}: async, no prefetch");
    assert_batches_equal(&batches, &serial_batches);
    let (ahead, ahead_batches) = asynchronous(file, case, 1);
    assert_eq!(
        requests(&ahead),
        requests(&reads),
        "{name} {case:?}: async, prefetch 1"
    );
    assert_batches_equal(&batches, &ahead_batches);
    println!(
        "drivers: {name}: {} reads, {} round trips, {} batches from sync, async and by hand",
        reads.len(),
        requests(&reads).1,
        batches.len()
    );
    (reads, batches)
}

fn hundred_batches() -> Vec<u8> {
    quiver_tests::ten_columns::file(100, 2000, quiver::ipc::WriterOptions::default())
}

#[test]
fn open_and_batch_by_batch_reads_agree() {
    let Some(file) = golden("1.0.0-littleendian/generated_primitive.arrow_file") else {
        return;
    };
    let len = file.len();
    for size in [len, 4096, 64] {
        let case = Case {
            footer_read_size: Some(size),
            ..Case::default()
        };
        let (reads, _) = check("generated_primitive open", &file, &case);
        assert_eq!(reads.len(), if size == 64 { 2 } else { 1 });
    }
    let case = Case {
        batches: vec![1, 0],
        ..Case::default()
    };
    let (reads, _) = check("generated_primitive batches", &file, &case);
    assert_eq!(reads.len(), 3, "open + one read per batch");

    let Some(file) = golden("1.0.0-littleendian/generated_dictionary.arrow_file") else {
        return;
    };
    let (reads, _) = check("generated_dictionary batches", &file, &case);
    let dictionaries = FileReader::open(file.as_slice(), ReaderOptions::default())
        .unwrap()
        .dictionary_blocks()
        .len();
    assert_eq!(reads.len(), 1 + dictionaries + 1 + 1);
}

#[test]
fn full_scans_agree() {
    for name in [
        "1.0.0-littleendian/generated_decimal.arrow_file",
        "1.0.0-littleendian/generated_dictionary.arrow_file",
        "1.0.0-bigendian/generated_nested_dictionary.arrow_file",
        "2.0.0-compression/generated_zstd.arrow_file",
    ] {
        let Some(file) = golden(name) else { return };
        let case = Case {
            scan: Some(ScanOptions::default()),
            ..Case::default()
        };
        let (reads, _) = check(name, &file, &case);
        assert_eq!(requests(&reads).1, 2, "{name}");
        assert_eq!(reads.len(), 2, "{name}");
    }
    let file = hundred_batches();
    let case = Case {
        scan: Some(ScanOptions::default()),
        ..Case::default()
    };
    let (reads, batches) = check("100 batches", &file, &case);
    assert_eq!(
        (reads.len(), requests(&reads).1, batches.len()),
        (2, 2, 100)
    );
}

#[test]
fn projections_and_windows_agree() {
    let file = hundred_batches();
    for path in ["i32", "struct.name", "list", "dictionary"] {
        for hole in [None, Some(0)] {
            let options = ScanOptions::default();
            let case = Case {
                paths: Some(vec![path.to_owned()]),
                scan: Some(hole.map_or(options.clone(), |h| options.with_hole_size_limit(h))),
                ..Case::default()
            };
            let (reads, batches) = check(&format!("100 batches, `{path}`"), &file, &case);
            assert_eq!(batches.len(), 100);
            assert!(requests(&reads).1 <= 3, "{path}");
        }
    }
    for window in [file.len() as u64 / 4, file.len() as u64 / 10] {
        let case = Case {
            scan: Some(ScanOptions::default().with_readahead(window)),
            ..Case::default()
        };
        check(&format!("100 batches, window {window}"), &file, &case);
        let case = Case {
            paths: Some(vec!["utf8".to_owned(), "dictionary".to_owned()]),
            scan: Some(ScanOptions::default().with_readahead(window)),
            ..Case::default()
        };
        check(
            &format!("100 batches, window {window}, two columns"),
            &file,
            &case,
        );
    }
    let name = "1.0.0-littleendian/generated_decimal.arrow_file";
    let Some(file) = golden(name) else { return };
    let schema = FileReader::open(file.as_slice(), ReaderOptions::default())
        .unwrap()
        .schema()
        .clone();
    let case = Case {
        paths: Some(vec![schema.fields()[3].name().to_owned()]),
        scan: Some(ScanOptions::default().with_hole_size_limit(0)),
        ..Case::default()
    };
    let (reads, _) = check(name, &file, &case);
    assert_eq!(requests(&reads).1, 3, "footer, metadata, buffers");
}

/// The futures are `Send` when the source's are, so a multi-threaded runtime can run them.
#[test]
fn futures_are_send_when_the_source_is() {
    fn assert_send<T: Send>(_: &T) {}
    let file = hundred_batches();
    let source = Blocking(file);
    let open = AsyncFileReader::open(&source, ReaderOptions::default());
    assert_send(&open);
    let mut reader = block_on(open).unwrap();
    assert_send(&reader);
    let next = reader.next_batch();
    assert_send(&next);
    assert!(block_on(next).unwrap().is_ok());
}

/// Answers every request of `decoder` with pieces cut by `cuts`: each range split at chosen
/// points, widened by chosen amounts (clamped to the file), and the pieces shuffled.
fn answer_oddly(
    decoder: &mut FileDecoder,
    file: &[u8],
    cuts: &mut impl Iterator<Item = (u8, u8, u8)>,
) -> Vec<RecordBatch<'static>> {
    let len = file.len() as u64;
    let mut batches = Vec::new();
    let mut requests = 0;
    loop {
        match decoder.try_decode().unwrap() {
            DecodeResult::NeedsData(ranges) => {
                requests += 1;
                assert!(requests < 10_000, "the decoder keeps asking");
                let mut pieces = Vec::new();
                for range in ranges {
                    let (split, widen, order) = cuts.next().unwrap_or((0, 0, 0));
                    let start = range.start.saturating_sub(widen as u64 * 7);
                    let end = (range.end + widen as u64 * 5).min(len);
                    let mid = start + (end - start) * split as u64 / 255;
                    for piece in [start..mid, mid..end] {
                        let at = (order as usize) % (pieces.len() + 1);
                        pieces.insert(at, piece);
                    }
                }
                let data = pieces
                    .iter()
                    .map(|r| Bytes::from_vec(file[r.start as usize..r.end as usize].to_vec()))
                    .collect();
                decoder.push_ranges(pieces, data).unwrap();
            }
            DecodeResult::Data(batch) => batches.push(batch),
            DecodeResult::Finished => return batches,
            _ => {}
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(quiver_tests::proptest_cases(64)))]

    #[test]
    fn odd_answers_give_the_same_batches(
        batches in 1usize..6,
        rows in 1usize..40,
        columns in proptest::collection::vec(any::<bool>(), 10),
        readahead in prop_oneof![Just(u64::MAX), 1u64..20_000],
        hole in prop_oneof![Just(0u64), 1u64..5000],
        cuts in proptest::collection::vec(any::<(u8, u8, u8)>(), 0..200),
    ) {
        let file = quiver_tests::ten_columns::file(batches, rows, quiver::ipc::WriterOptions::default());
        let reader = FileReader::open(file.as_slice(), ReaderOptions::default()).unwrap();
        let paths: Vec<&str> = reader
            .schema()
            .fields()
            .iter()
            .zip(&columns)
            .filter(|(_, keep)| **keep)
            .map(|(f, _)| f.name())
            .collect();
        let projection = if columns.iter().all(|c| *c) {
            Projection::All
        } else {
            Projection::from_paths(reader.schema(), &paths).unwrap()
        };
        let options = ScanOptions::default().with_readahead(readahead).with_hole_size_limit(hole);
        let mut reader = reader;
        reader.set_projection(projection.clone());
        let expected: Vec<_> = reader.scan(0..usize::MAX, options.clone()).map(Result::unwrap).collect();

        let mut decoder = FileDecoder::new(file.len() as u64, ReaderOptions::default().with_footer_read_size(100));
        decoder.set_projection(projection);
        decoder.set_scan_options(options);
        let got = answer_oddly(&mut decoder, &file, &mut cuts.into_iter());
        assert_batches_equal(&expected, &got);
    }
}

#[test]
fn hostile_pushes_are_errors_and_unanswered_requests_are_asked_again() {
    let file = hundred_batches();
    let len = file.len() as u64;
    let mut decoder = FileDecoder::new(len, ReaderOptions::default());
    let DecodeResult::NeedsData(tail) = decoder.try_decode().unwrap() else {
        panic!("asks for the tail first");
    };
    let bytes =
        |r: std::ops::Range<u64>| Bytes::from_vec(file[r.start as usize..r.end as usize].to_vec());
    let tail_range = tail[0].clone();
    let short = tail_range.start + 1..tail_range.end;
    let err = decoder
        .push_ranges(vec![tail_range.clone()], vec![bytes(short)])
        .unwrap_err();
    assert_eq!(err.offset(), Some(tail_range.start), "short: {err}");
    let mut long = file[tail_range.start as usize..].to_vec();
    long.push(0);
    let err = decoder
        .push_ranges(vec![tail_range.clone()], vec![Bytes::from_vec(long)])
        .unwrap_err();
    assert_eq!(err.offset(), Some(tail_range.start), "long: {err}");
    let err = decoder
        .push_ranges(vec![len - 2..len + 2], vec![Bytes::from_vec(vec![0; 4])])
        .unwrap_err();
    assert_eq!(err.offset(), Some(len - 2), "past the end: {err}");
    let err = decoder
        .push_ranges(
            vec![tail_range.clone(), 0..4],
            vec![bytes(tail_range.clone())],
        )
        .unwrap_err();
    println!("drivers: hostile pushes rejected, e.g. {err}");
    // Never answered, or half answered: asked again for exactly what is missing.
    let DecodeResult::NeedsData(again) = decoder.try_decode().unwrap() else {
        panic!("asks again");
    };
    assert_eq!(again, tail);
    let half = tail_range.start..tail_range.start + 100;
    decoder
        .push_ranges(vec![half.clone()], vec![bytes(half.clone())])
        .unwrap();
    let DecodeResult::NeedsData(rest) = decoder.try_decode().unwrap() else {
        panic!("asks for the rest");
    };
    assert_eq!(rest, vec![half.end..tail_range.end]);
    decoder
        .push_ranges(rest.clone(), vec![bytes(rest[0].clone())])
        .unwrap();
    assert!(matches!(
        decoder.try_decode().unwrap(),
        DecodeResult::Footer
    ));
    // Garbage where a block should be: a located error, then the same error again.
    let DecodeResult::NeedsData(window) = decoder.try_decode().unwrap() else {
        panic!("asks for the first window");
    };
    let zeros = window
        .iter()
        .map(|r| Bytes::from_vec(vec![0; (r.end - r.start) as usize]))
        .collect();
    decoder.push_ranges(window, zeros).unwrap();
    let err = decoder.try_decode().unwrap_err();
    assert_eq!(err.offset(), Some(0), "bad leading magic: {err}");
    assert_eq!(decoder.try_decode().unwrap_err(), err);
}

/// The caller's work on a batch: its rows as JSON lines.
fn encode(batch: &RecordBatch<'_>) -> usize {
    let format = quiver::json::JsonFormat::LineDelimited;
    quiver::json::to_vec(batch, format, quiver::json::EncoderOptions::default())
        .unwrap()
        .len()
}

/// With each request taking 20 ms and one batch per window, reading ahead overlaps the
/// requests with the encoding: the run costs about the larger of the two, not their sum. The
/// test asserts the request counts; it prints the times.
#[test]
fn prefetch_overlaps_requests_with_the_callers_work() {
    use std::time::{Duration, Instant};
    let file = hundred_batches();
    let reader = FileReader::open(file.as_slice(), ReaderOptions::default()).unwrap();
    let one_batch = reader
        .record_batch_blocks()
        .iter()
        .map(|b| b.meta_data_length as u64 + b.body_length as u64)
        .max()
        .unwrap();
    let options = ScanOptions::default().with_readahead(one_batch);

    let start = Instant::now();
    let mut reader = reader;
    let json: usize = reader
        .scan(0..usize::MAX, options.clone())
        .map(|b| encode(&b.unwrap()))
        .sum();
    let cpu = start.elapsed();

    let delay = Duration::from_millis(20);
    let mut times = Vec::new();
    for prefetch in [0, 1, 2] {
        let source = quiver_std::Latency::new(Blocking(file.clone()), delay);
        let start = Instant::now();
        let written = block_on(async {
            let mut reader = AsyncFileReader::open(&source, ReaderOptions::default())
                .await
                .unwrap()
                .with_prefetch(prefetch);
            reader.select(0..usize::MAX, options.clone());
            let mut written = 0;
            while let Some(batch) = reader.next_batch().await {
                written += encode(&batch.unwrap());
            }
            written
        });
        times.push(start.elapsed());
        assert_eq!(written, json);
        assert_eq!(
            source.calls(),
            1 + 100,
            "the tail, then one request per window"
        );
    }
    let io = delay * 101;
    println!(
        "drivers: 100 batches, one per window, 20 ms per request: requests alone {io:?}, encoding alone {cpu:?}; \
         no prefetch {:?}, prefetch 1 {:?}, prefetch 2 {:?}",
        times[0], times[1], times[2]
    );
}
