//! The parallel writer against one thread, side by side in one run: one batch of the shared
//! ten-column table (`quiver_tests::ten_columns`: i32, i64, f64, utf8, bool, timestamp, date32,
//! list, struct, dictionary; about 10% nulls) at 2^16 and 2^18 rows, as NDJSON into
//! `io::sink()`, through `ParallelWriter` with one thread (the caller's) and with one worker per
//! core.
//!
//! Each writer is made once and writes the batch again and again, as it would the batches of a
//! stream (chunk buffers recycled, rows per chunk learnt from the first batch). After criterion's
//! report, `cargo bench --bench parallel` prints the throughput of each and the speed-up (median
//! of repeated runs). Issue 4's target: at least 1.7x on 2 cores for batches of 2^16 rows or
//! more.

use criterion::{BenchmarkId, Criterion, Throughput};
use quiver::array::RecordBatch;
use quiver::json::{EncoderOptions, JsonFormat};
use quiver_std::ParallelWriter;
use std::hint::black_box;
use std::time::{Duration, Instant};

/// A writer of NDJSON to `io::sink()` on `threads` threads.
fn writer(threads: usize) -> ParallelWriter<std::io::Sink> {
    ParallelWriter::new(
        std::io::sink(),
        JsonFormat::LineDelimited,
        EncoderOptions::default(),
    )
    .with_threads(threads)
}

/// Writes `batch` once more; returns the bytes it took.
fn write(writer: &mut ParallelWriter<std::io::Sink>, batch: &RecordBatch<'_>) -> u64 {
    let before = writer.bytes_written();
    writer.write(batch).expect("write");
    writer.bytes_written() - before
}

/// The JSON of `batch` written on `threads` threads by a new writer.
fn json(batch: &RecordBatch<'_>, threads: usize) -> Vec<u8> {
    let mut writer = ParallelWriter::new(
        Vec::new(),
        JsonFormat::LineDelimited,
        EncoderOptions::default(),
    )
    .with_threads(threads);
    writer.write(batch).expect("write");
    writer.finish().expect("finish");
    writer.into_inner()
}

/// Median seconds of `f` over repeated runs (at least 5, about a second).
fn median_seconds(mut f: impl FnMut() -> u64) -> f64 {
    let mut times = Vec::new();
    let start = Instant::now();
    while times.len() < 5 || (start.elapsed() < Duration::from_secs(1) && times.len() < 200) {
        let t = Instant::now();
        black_box(f());
        times.push(t.elapsed().as_secs_f64());
    }
    times.sort_by(f64::total_cmp);
    times[times.len() / 2]
}

fn main() {
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    let batches: Vec<RecordBatch<'static>> = [1 << 16, 1 << 18]
        .into_iter()
        .map(|rows| quiver_tests::ten_columns::batch(rows, 1))
        .collect();
    // The same bytes either way.
    for batch in &batches {
        assert_eq!(json(batch, 1), json(batch, cores));
    }
    let mut criterion = Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(2))
        .configure_from_args();
    for batch in &batches {
        let rows = batch.num_rows();
        let mut group = criterion.benchmark_group("parallel/ten_columns");
        group.throughput(Throughput::Elements(rows as u64));
        for threads in [1, cores] {
            let mut writer = writer(threads);
            group.bench_with_input(
                BenchmarkId::new(format!("threads-{threads}"), rows),
                batch,
                |b, batch| b.iter(|| write(&mut writer, batch)),
            );
        }
        group.finish();
    }
    criterion.final_summary();
    // `cargo bench` passes --bench; `cargo test --benches` runs each benchmark once, no table.
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    println!();
    println!("| rows | 1 thread ms | {cores} threads ms | MB/s of JSON, 1 thread | speed-up |");
    println!("| ---: | ---: | ---: | ---: | ---: |");
    for batch in &batches {
        let (mut single, mut parallel) = (writer(1), writer(cores));
        let bytes = write(&mut single, batch) as f64;
        write(&mut parallel, batch);
        let one = median_seconds(|| write(&mut single, batch));
        let all = median_seconds(|| write(&mut parallel, batch));
        println!(
            "| {} | {:.2} | {:.2} | {:.0} | {:.2}x |",
            batch.num_rows(),
            one * 1e3,
            all * 1e3,
            bytes / one / 1e6,
            one / all
        );
    }
    println!("({cores} cores, load average {})", load_average());
}

fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_default()
}
