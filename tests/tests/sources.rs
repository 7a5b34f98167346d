//! The std sources: positioned file reads, requests in flight, simulated latency, zero-copy
//! memory maps, and streams from `std::io::Read`. Each gives the same batches as an in-memory
//! slice, with the same planned requests.

use quiver::ipc::{FileReader, ReaderOptions, ScanOptions};
use quiver::source::{Counting, RandomAccess};
use quiver_mmap::MmapSource;
use quiver_std::{Concurrent, FileSource, Latency};
use std::path::PathBuf;
use std::time::Duration;

fn golden(name: &str) -> Option<PathBuf> {
    Some(
        quiver_tests::arrow_testing_data()?
            .join("arrow-ipc-stream/integration")
            .join(name),
    )
}

const FILE: &str = "1.0.0-littleendian/generated_decimal.arrow_file";

/// Rows per batch and the request log of a full scan through `source`.
fn scan<S: RandomAccess>(source: S) -> (Vec<usize>, Vec<quiver::source::ReadCall>) {
    let counted = Counting::new(source);
    let mut reader = FileReader::open(&counted, ReaderOptions::default()).unwrap();
    let rows = reader
        .scan(0..usize::MAX, ScanOptions::default())
        .map(|b| b.unwrap().num_rows())
        .collect();
    (rows, counted.reads())
}

#[test]
fn every_source_reads_the_same_batches_with_the_same_requests() {
    let Some(path) = golden(FILE) else { return };
    let bytes = std::fs::read(&path).unwrap();
    let expected = scan(bytes.as_slice());
    assert_eq!(
        scan(FileSource::open(&path).unwrap()),
        expected,
        "FileSource"
    );
    assert_eq!(
        scan(Concurrent::new(FileSource::open(&path).unwrap())),
        expected,
        "Concurrent"
    );
    assert_eq!(
        scan(MmapSource::open(&path).unwrap()),
        expected,
        "MmapSource"
    );
    println!(
        "sources: {FILE}: {} batches in {} requests from slice, file, concurrent and mmap",
        expected.0.len(),
        expected.1.len()
    );
}

#[test]
fn concurrent_reads_fill_every_range() {
    let Some(path) = golden(FILE) else { return };
    let bytes = std::fs::read(&path).unwrap();
    let ranges: Vec<_> = (0..40u64).map(|i| i * 1000..i * 1000 + 333 + i).collect();
    let total: usize = ranges.iter().map(|r| (r.end - r.start) as usize).sum();
    let mut want = vec![0; total];
    bytes.as_slice().read_ranges(&ranges, &mut want).unwrap();
    let source = Concurrent::with_in_flight(FileSource::open(&path).unwrap(), 5);
    let mut got = vec![0; total];
    source.read_ranges(&ranges, &mut got).unwrap();
    assert!(got == want, "concurrent reads differ from sequential ones");
    for part in [1, 7, 333, 4096] {
        let parts =
            Concurrent::with_in_flight(FileSource::open(&path).unwrap(), 3).with_part_size(part);
        let mut got = vec![0; total];
        parts.read_ranges(&ranges, &mut got).unwrap();
        assert!(got == want, "reads in parts of {part} bytes differ");
    }
    let past_end = [0..10, bytes.len() as u64..bytes.len() as u64 + 10];
    assert!(source.read_ranges(&past_end, &mut [0; 20]).is_err());
}

#[test]
fn latency_is_paid_once_per_call_and_in_parallel_under_concurrent() {
    let Some(path) = golden(FILE) else { return };
    let delay = Duration::from_millis(20);
    let ranges: Vec<_> = (0..8u64).map(|i| i * 100..i * 100 + 50).collect();
    let mut out = vec![0; 400];

    let serial = Latency::new(FileSource::open(&path).unwrap(), delay);
    serial.read_ranges(&ranges, &mut out).unwrap();
    assert_eq!(serial.calls(), 1, "one list, one call");

    let parallel = Concurrent::new(Latency::new(FileSource::open(&path).unwrap(), delay));
    parallel.read_ranges(&ranges, &mut out).unwrap();
    assert_eq!(
        parallel.inner().calls(),
        8,
        "one request per range, 8 in flight"
    );

    let parts =
        Concurrent::new(Latency::new(FileSource::open(&path).unwrap(), delay)).with_part_size(20);
    parts.read_ranges(&ranges, &mut out).unwrap();
    assert_eq!(
        parts.inner().calls(),
        24,
        "three parts of each 50-byte range"
    );
    let whole = 0..400;
    let mut one = vec![0; 400];
    parts
        .read_ranges(std::slice::from_ref(&whole), &mut one)
        .unwrap();
    assert_eq!(parts.inner().calls(), 24 + 20, "one range in 20 parts");
}

#[test]
fn mmap_batches_point_into_the_map() {
    let Some(path) = golden(FILE) else { return };
    let source = MmapSource::open(&path).unwrap();
    let map = source.as_slice().as_ptr_range();
    let mut reader = FileReader::open(&source, ReaderOptions::default()).unwrap();
    let mut buffers = 0;
    for batch in reader.scan(0..usize::MAX, ScanOptions::default()) {
        for column in batch.unwrap().columns() {
            for buffer in column.buffers().iter().filter(|b| !b.is_empty()) {
                assert!(map.contains(&buffer.as_ptr()), "a buffer was copied");
                buffers += 1;
            }
        }
    }
    assert!(buffers > 0);
    println!("sources: mmap: {buffers} buffers decoded in place, none copied");
}

#[test]
fn streams_read_from_std_io() {
    let Some(path) = golden("1.0.0-littleendian/generated_nested.stream") else {
        return;
    };
    let file = std::fs::File::open(&path).unwrap();
    let reader =
        quiver_std::stream_reader(std::io::BufReader::new(file), ReaderOptions::default()).unwrap();
    let rows: usize = reader.map(|b| b.unwrap().num_rows()).sum();
    assert!(rows > 0);
}

/// Rows per batch of a full scan through the async reader, driven by the test executor.
fn scan_async<S: quiver::source::AsyncRandomAccess>(source: &S) -> Vec<usize> {
    quiver_tests::block_on(async {
        let mut reader = quiver::ipc::AsyncFileReader::open(source, ReaderOptions::default())
            .await
            .unwrap();
        let mut rows = Vec::new();
        while let Some(batch) = reader.next_batch().await {
            rows.push(batch.unwrap().num_rows());
        }
        rows
    })
}

#[test]
#[allow(clippy::single_range_in_vec_init)]
fn the_std_sources_serve_the_async_reader_alike() {
    let Some(path) = golden(FILE) else { return };
    let bytes = std::fs::read(&path).unwrap();
    let (expected, _) = scan(bytes.as_slice());
    let file = || FileSource::open(&path).unwrap();
    assert_eq!(scan_async(&file()), expected, "FileSource");
    assert_eq!(
        scan_async(&Concurrent::with_in_flight(file(), 3)),
        expected,
        "Concurrent"
    );
    let delay = Duration::from_millis(5);
    let latency = Latency::new(file(), delay);
    assert_eq!(scan_async(&latency), expected, "Latency");
    assert_eq!(latency.calls(), 2, "the tail, then one window");
    let both = Concurrent::new(Latency::new(file(), delay));
    assert_eq!(scan_async(&both), expected, "Concurrent over Latency");
    assert!(both.inner().calls() >= 2);
    // Their futures are Send: a multi-threaded runtime can run the reader.
    fn assert_send<T: Send>(_: &T) {}
    let open = quiver::ipc::AsyncFileReader::open(&both, ReaderOptions::default());
    assert_send(&open);
    let mut reader = quiver_tests::block_on(open).unwrap();
    let next = reader.next_batch();
    assert_send(&next);
    drop(next);
    // A read past the end is the source's error, unchanged.
    let short =
        quiver::source::AsyncRandomAccess::read_ranges(&file(), vec![0..bytes.len() as u64 + 1]);
    assert!(quiver_tests::block_on(short).is_err());
    println!(
        "sources: {FILE}: {} batches through the async reader from file, concurrent and latency sources",
        expected.len()
    );
}
