//! Reading IPC files: quiver against arrow-rs 60, side by side in one run.
//!
//! - Remote storage: the 100-batch ten-column file (2,000 rows a batch) behind 20 ms per
//!   request. quiver reads it through `Concurrent::new(Latency::new(bytes, 20 ms))` (8 requests
//!   in flight) with a planned scan, whole and with one column projected; arrow-rs reads it with
//!   `FileReader` over a `Read + Seek` wrapper that sleeps 20 ms in every `read` call, whole and
//!   with `FileReader::try_new(reader, Some(vec![column]))`. Both count requests and bytes.
//! - Local, no latency: a 1,000,000-row ten-column file (100 batches of 10,000 rows) in the
//!   temporary folder, memory-mapped: quiver's `MmapSource` and `scan` against arrow-rs's
//!   `FileDecoder` over the same kind of map (a zero-copy `Buffer`), validation on for both.
//!
//! After criterion's report, `cargo bench --bench ipc_read` prints a ratio table (median of
//! repeated runs). Under `cargo test --benches` every case runs once on small inputs with 1 ms
//! of latency, and no table is printed.

use arrow_buffer::Buffer;
use arrow_ipc::reader::FileDecoder;
use criterion::Criterion;
use quiver::ipc::{FileReader, Projection, ReaderOptions, ScanOptions};
use quiver::source::{Counting, RandomAccess};
use quiver_mmap::MmapSource;
use quiver_std::{Concurrent, Latency};
use std::hint::black_box;
use std::io::{Cursor, Read, Seek, SeekFrom};
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// The projected column of the one-column cases: `i32`, the first of the ten.
const COLUMN: (&str, usize) = ("i32", 0);

/// What one read of a file did: rows decoded, requests made, bytes fetched, and the time.
#[derive(Debug, Clone, Copy, Default)]
struct Measured {
    rows: usize,
    requests: u64,
    round_trips: u64,
    bytes: u64,
    time: Duration,
}

/// Counts the bytes of every range asked of the source below, for a source that is shared by
/// threads (quiver's `Counting` records calls but is not `Sync`).
struct CountBytes<S> {
    inner: S,
    bytes: AtomicU64,
}

impl<S: RandomAccess> RandomAccess for CountBytes<S> {
    type Error = S::Error;

    fn len(&self) -> u64 {
        self.inner.len()
    }

    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<(), S::Error> {
        self.bytes.fetch_add(buf.len() as u64, Ordering::Relaxed);
        self.inner.read_at(offset, buf)
    }

    fn read_ranges(&self, ranges: &[Range<u64>], out: &mut [u8]) -> Result<(), S::Error> {
        self.bytes.fetch_add(out.len() as u64, Ordering::Relaxed);
        self.inner.read_ranges(ranges, out)
    }
}

/// quiver over simulated remote storage: `delay` per request, 8 requests in flight.
fn quiver_remote(file: &[u8], delay: Duration, column: Option<&str>) -> Measured {
    let start = Instant::now();
    let counted = CountBytes {
        inner: file,
        bytes: AtomicU64::new(0),
    };
    let source = Counting::new(Concurrent::new(Latency::new(&counted, delay)));
    let mut reader = FileReader::open(&source, ReaderOptions::default()).unwrap();
    if let Some(column) = column {
        reader.set_projection(Projection::from_paths(reader.schema(), &[column]).unwrap());
    }
    let rows = reader
        .scan(0..usize::MAX, ScanOptions::default())
        .map(|b| black_box(b.unwrap()).num_rows())
        .sum();
    let time = start.elapsed();
    Measured {
        rows,
        requests: source.inner().inner().calls() as u64,
        round_trips: source.round_trips() as u64,
        bytes: counted.bytes.load(Ordering::Relaxed),
        time,
    }
}

/// A `Read + Seek` over bytes as remote storage looks to arrow-rs: every `read` call sleeps
/// `delay` (one request) and is counted with the bytes it returns; seeking is free.
struct SlowReader<R> {
    inner: R,
    delay: Duration,
    calls: u64,
    bytes: u64,
}

impl<R: Read> Read for SlowReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        std::thread::sleep(self.delay);
        self.calls += 1;
        let n = self.inner.read(buf)?;
        self.bytes += n as u64;
        Ok(n)
    }
}

impl<R: Seek> Seek for SlowReader<R> {
    fn seek(&mut self, pos: SeekFrom) -> std::io::Result<u64> {
        self.inner.seek(pos)
    }
}

/// arrow-rs's `FileReader` over the slow reader, whole or with one column projected.
fn arrow_remote(file: &[u8], delay: Duration, column: Option<usize>) -> Measured {
    let start = Instant::now();
    let slow = SlowReader {
        inner: Cursor::new(file),
        delay,
        calls: 0,
        bytes: 0,
    };
    let mut reader = arrow_ipc::reader::FileReader::try_new(slow, column.map(|c| vec![c])).unwrap();
    let rows = reader
        .by_ref()
        .map(|b| black_box(b.unwrap()).num_rows())
        .sum();
    let time = start.elapsed();
    let slow = reader.get_ref();
    Measured {
        rows,
        requests: slow.calls,
        round_trips: slow.calls,
        bytes: slow.bytes,
        time,
    }
}

/// quiver over a memory map: a planned scan of the whole file, batches borrowing the map.
fn quiver_mmap(path: &Path) -> usize {
    let source = MmapSource::open(path).unwrap();
    let mut reader = FileReader::open(source, ReaderOptions::default()).unwrap();
    reader
        .scan(0..usize::MAX, ScanOptions::default())
        .map(|b| black_box(b.unwrap()).num_rows())
        .sum()
}

/// The map as the owner of an arrow `Buffer`, so arrow-rs decodes from it without copying.
struct MapOwner(MmapSource);

impl AsRef<[u8]> for MapOwner {
    fn as_ref(&self) -> &[u8] {
        self.0.as_slice()
    }
}

/// arrow-rs over a memory map: the footer parsed by hand, then `FileDecoder` on each block of a
/// zero-copy `Buffer` of the whole map (full validation, arrow-rs's default).
fn arrow_mmap(path: &Path) -> usize {
    let map = MapOwner(MmapSource::open(path).unwrap());
    let buffer = Buffer::from(bytes::Bytes::from_owner(map));
    let trailer_at = buffer.len() - 10;
    let footer_len =
        arrow_ipc::reader::read_footer_length(buffer[trailer_at..].try_into().unwrap()).unwrap();
    let footer = arrow_ipc::root_as_footer(&buffer[trailer_at - footer_len..trailer_at]).unwrap();
    let schema = arrow_ipc::convert::try_fb_to_schema(footer.schema().unwrap()).unwrap();
    let mut decoder = FileDecoder::new(Arc::new(schema), footer.version());
    let block_bytes = |block: &arrow_ipc::Block| {
        let len = block.metaDataLength() as usize + block.bodyLength() as usize;
        buffer.slice_with_length(block.offset() as usize, len)
    };
    for block in footer.dictionaries().iter().flatten() {
        decoder.read_dictionary(block, &block_bytes(block)).unwrap();
    }
    footer
        .recordBatches()
        .unwrap()
        .iter()
        .map(|block| {
            let batch = decoder.read_record_batch(block, &block_bytes(block));
            black_box(batch.unwrap().unwrap()).num_rows()
        })
        .sum()
}

/// Writes the large local file once per run into the temporary folder.
fn large_file(rows_per_batch: usize) -> PathBuf {
    let path = std::env::temp_dir().join(format!(
        "quiver-bench-ten-columns-100x{rows_per_batch}-{}.arrow",
        std::process::id()
    ));
    let bytes =
        quiver_tests::ten_columns::file(100, rows_per_batch, quiver::ipc::WriterOptions::default());
    std::fs::write(&path, bytes).unwrap();
    path
}

/// The median of `runs` timed calls of `f` (each returning what it read).
fn median(runs: usize, mut f: impl FnMut() -> Measured) -> Measured {
    let mut all: Vec<Measured> = (0..runs).map(|_| f()).collect();
    all.sort_by_key(|r| r.time);
    all[all.len() / 2]
}

/// The median wall time of `runs` calls of `f`.
fn median_time(runs: usize, mut f: impl FnMut() -> usize) -> Duration {
    let mut times: Vec<Duration> = (0..runs)
        .map(|_| {
            let t = Instant::now();
            black_box(f());
            t.elapsed()
        })
        .collect();
    times.sort();
    times[times.len() / 2]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn ratio_table(remote: &[u8], delay: Duration, local: &Path) {
    let q_full = median(5, || quiver_remote(remote, delay, None));
    let a_full = median(3, || arrow_remote(remote, delay, None));
    let q_one = median(5, || quiver_remote(remote, delay, Some(COLUMN.0)));
    let a_one = median(3, || arrow_remote(remote, delay, Some(COLUMN.1)));
    assert_eq!(q_full.rows, a_full.rows);
    assert_eq!(q_one.rows, a_one.rows);
    println!();
    println!(
        "Remote: {} bytes, {} rows, {} ms per request, 8 in flight for quiver",
        remote.len(),
        q_full.rows,
        delay.as_millis()
    );
    println!();
    println!(
        "| read | quiver ms | arrow-rs ms | time ratio | quiver requests (round trips) | arrow-rs requests | quiver bytes | arrow-rs bytes | bytes ratio |"
    );
    println!("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
    for (name, q, a) in [
        ("full", q_full, a_full),
        (&*format!("one column (`{}`)", COLUMN.0), q_one, a_one),
    ] {
        println!(
            "| {name} | {:.1} | {:.1} | {:.1}× | {} ({}) | {} | {} | {} | {:.1}× |",
            ms(q.time),
            ms(a.time),
            a.time.as_secs_f64() / q.time.as_secs_f64(),
            q.requests,
            q.round_trips,
            a.requests,
            q.bytes,
            a.bytes,
            a.bytes as f64 / q.bytes as f64
        );
    }

    column_bytes_table(remote);

    let q_rows = quiver_mmap(local);
    assert_eq!(q_rows, arrow_mmap(local));
    let q = median_time(15, || quiver_mmap(local));
    let a = median_time(15, || arrow_mmap(local));
    println!();
    println!(
        "Local memory map: {} bytes, {q_rows} rows, validation on for both",
        std::fs::metadata(local).unwrap().len()
    );
    println!();
    println!("| read | quiver ms | arrow-rs ms | quiver / arrow-rs |");
    println!("| --- | ---: | ---: | ---: |");
    println!(
        "| full (mmap) | {:.2} | {:.2} | {:.2} |",
        ms(q),
        ms(a),
        q.as_secs_f64() / a.as_secs_f64()
    );
}

/// Bytes of an array's own buffers (validity included, children too, dictionary values not).
fn buffer_bytes(array: &quiver::array::ArrayView<'_>) -> u64 {
    array.validity().map_or(0, |v| v.len() as u64)
        + array.buffers().iter().map(|b| b.len() as u64).sum::<u64>()
        + array.children().iter().map(buffer_bytes).sum::<u64>()
}

/// For every column: the bytes a one-column read fetches (no latency: bytes do not depend on
/// it), and the best any reader could do, the column's own buffers.
fn column_bytes_table(file: &[u8]) {
    let schema = FileReader::open(file, ReaderOptions::default())
        .unwrap()
        .schema()
        .clone();
    println!();
    println!(
        "| one column | quiver bytes | arrow-rs bytes | bytes ratio | column's buffers | best possible ratio |"
    );
    println!("| --- | ---: | ---: | ---: | ---: | ---: |");
    for (index, field) in schema.fields().iter().enumerate() {
        let source = Counting::new(file);
        let mut reader = FileReader::open(&source, ReaderOptions::default()).unwrap();
        reader.set_projection(Projection::from_paths(reader.schema(), &[field.name()]).unwrap());
        let own: u64 = reader
            .scan(0..usize::MAX, ScanOptions::default())
            .map(|b| buffer_bytes(&b.unwrap().columns()[0]))
            .sum();
        let quiver = source.bytes_read();
        let arrow = arrow_remote(file, Duration::ZERO, Some(index)).bytes;
        println!(
            "| `{}` | {quiver} | {arrow} | {:.1}× | {own} | {:.1}× |",
            field.name(),
            arrow as f64 / quiver as f64,
            arrow as f64 / own as f64
        );
    }
}

fn main() {
    // `cargo bench` passes --bench; `cargo test --benches` runs each case once, small and fast.
    let benching = std::env::args().any(|a| a == "--bench");
    let (delay, local_rows) = if benching {
        (Duration::from_millis(20), 10_000)
    } else {
        (Duration::from_millis(1), 100)
    };
    let remote = quiver_tests::ten_columns::file(100, 2000, quiver::ipc::WriterOptions::default());
    let local = large_file(local_rows);

    let mut criterion = Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_millis(100))
        .measurement_time(Duration::from_secs(1))
        .configure_from_args();
    let mut group = criterion.benchmark_group("ipc_read/remote_20ms");
    group.bench_function("quiver/full", |b| {
        b.iter(|| quiver_remote(&remote, delay, None))
    });
    group.bench_function("arrow-rs/full", |b| {
        b.iter(|| arrow_remote(&remote, delay, None))
    });
    group.bench_function("quiver/one_column", |b| {
        b.iter(|| quiver_remote(&remote, delay, Some(COLUMN.0)))
    });
    group.bench_function("arrow-rs/one_column", |b| {
        b.iter(|| arrow_remote(&remote, delay, Some(COLUMN.1)))
    });
    group.finish();
    let mut group = criterion.benchmark_group("ipc_read/mmap");
    group.bench_function("quiver", |b| b.iter(|| quiver_mmap(&local)));
    group.bench_function("arrow-rs", |b| b.iter(|| arrow_mmap(&local)));
    group.finish();
    criterion.final_summary();

    if benching && std::env::var_os("QUIVER_BENCH_NO_TABLE").is_none() {
        ratio_table(&remote, delay, &local);
    }
    let _ = std::fs::remove_file(&local);
}
