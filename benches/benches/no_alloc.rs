//! The no-alloc path against the alloc path, side by side in one run: the same uncompressed
//! ten-column file (16 batches of 4,096 rows, in memory) to NDJSON.
//!
//! - alloc: `FileReader` (owned schema, validated `ArrayView`s) and `json::Encoder` with its
//!   fast path, written through `write_to` (chunks of `json::WRITE_BUFFER`, 512 bytes; the
//!   labels said 16 KiB until 2026-12-01);
//! - no-alloc: `no_alloc::FileReader` into a scratch buffer, `no_alloc::Batch` views and the
//!   `no_alloc::Encoder`, written through `write_through` and a 256-byte buffer as on a device,
//!   and through 512-byte chunks as the alloc path's, to separate the chunk size from the path.
//!
//! Both write into a sink that only counts bytes. After criterion's report, `cargo bench --bench
//! no_alloc` prints the throughput of each and the ratio (median of repeated runs).

use criterion::Criterion;
use quiver::ipc::{FileReader, ReaderOptions, WriterOptions};
use quiver::json::{EncoderOptions, JsonFormat, WRITE_BUFFER};
use quiver::no_alloc::{self, Batch};
use std::hint::black_box;
use std::time::{Duration, Instant};

const BATCHES: usize = 16;
const ROWS: usize = 4096;

/// An `embedded_io::Write` that counts bytes.
struct Count(usize);

impl embedded_io::ErrorType for Count {
    type Error = core::convert::Infallible;
}

impl embedded_io::Write for Count {
    fn write(&mut self, buf: &[u8]) -> Result<usize, Self::Error> {
        self.0 += black_box(buf).len();
        Ok(buf.len())
    }

    fn flush(&mut self) -> Result<(), Self::Error> {
        Ok(())
    }
}

fn alloc_path(file: &[u8]) -> usize {
    let mut reader = FileReader::open(file, ReaderOptions::default()).expect("open");
    let mut out = Count(0);
    for i in 0..reader.num_batches() {
        let batch = reader.batch(i).expect("batch");
        let mut encoder = quiver::json::Encoder::batch(
            &batch,
            JsonFormat::LineDelimited,
            EncoderOptions::default(),
        )
        .expect("encoder");
        encoder.write_to(&mut out).expect("write");
    }
    out.0
}

fn no_alloc_path<const CHUNK: usize>(file: &[u8], scratch: &mut [u8]) -> usize {
    let mut reader: no_alloc::FileReader<_> =
        no_alloc::FileReader::open(file, scratch).expect("open");
    let mut out = Count(0);
    for i in 0..reader.num_batches() {
        let batch: Batch = reader.batch(i).expect("batch");
        let mut encoder: no_alloc::Encoder =
            no_alloc::Encoder::new(&batch, JsonFormat::LineDelimited, EncoderOptions::default())
                .expect("encoder");
        encoder
            .write_through(&mut out, &mut [0u8; CHUNK])
            .expect("write");
    }
    out.0
}

/// Median time of `runs` runs of `f`.
fn median(runs: usize, mut f: impl FnMut()) -> Duration {
    let mut times: Vec<Duration> = (0..runs)
        .map(|_| {
            let start = Instant::now();
            f();
            start.elapsed()
        })
        .collect();
    times.sort();
    times[runs / 2]
}

fn main() {
    // `cargo bench` passes --bench; `cargo test --benches` runs each case once, small and fast.
    let benching = std::env::args().any(|a| a == "--bench");
    let rows = if benching { ROWS } else { 64 };
    let file = quiver_tests::ten_columns::file(BATCHES, rows, WriterOptions::default());
    let mut scratch = vec![0u8; file.len()];
    let json = alloc_path(&file);
    assert_eq!(
        json,
        no_alloc_path::<256>(&file, &mut scratch),
        "both paths write the same bytes"
    );

    let mut c = Criterion::default().configure_from_args();
    let mut group = c.benchmark_group("no_alloc");
    group.throughput(criterion::Throughput::Bytes(json as u64));
    group.bench_function("alloc path (512-byte chunks)", |b| {
        b.iter(|| alloc_path(&file))
    });
    group.bench_function("no-alloc path (256-byte chunks)", |b| {
        b.iter(|| no_alloc_path::<256>(&file, &mut scratch))
    });
    group.bench_function("no-alloc path (512-byte chunks)", |b| {
        b.iter(|| no_alloc_path::<WRITE_BUFFER>(&file, &mut scratch))
    });
    group.finish();
    c.final_summary();
    if !benching {
        return;
    }
    let runs = 31;
    let alloc = median(runs, || {
        black_box(alloc_path(&file));
    });
    let small = median(runs, || {
        black_box(no_alloc_path::<256>(&file, &mut scratch));
    });
    let large = median(runs, || {
        black_box(no_alloc_path::<WRITE_BUFFER>(&file, &mut scratch));
    });
    let mbps = |t: Duration| json as f64 / t.as_secs_f64() / 1e6;
    println!(
        "\nno_alloc: {BATCHES} batches x {rows} rows, {} bytes of IPC, {json} bytes of NDJSON (median of {runs})",
        file.len()
    );
    println!("| path | time | MB/s of JSON | vs alloc |");
    println!("|---|---|---|---|");
    for (name, t) in [
        ("alloc (512-byte chunks)", alloc),
        ("no-alloc (256-byte chunks)", small),
        ("no-alloc (512-byte chunks)", large),
    ] {
        println!(
            "| {name} | {:.2} ms | {:.0} | {:.2}x |",
            t.as_secs_f64() * 1e3,
            mbps(t),
            alloc.as_secs_f64() / t.as_secs_f64()
        );
    }
}
