//! The memory the no-alloc loop needs for a ten-column file (i32, i64, f64, utf8, bool,
//! timestamp, date32, `list<i32>`, `struct<i32, utf8>`, `dictionary<utf8>`): the scratch (static
//! memory on a device) and the stack.
//!
//! The stack is measured, not estimated: the loop (open, read every batch, encode NDJSON through a
//! 256-byte buffer) runs on a thread of a given stack size in a child process, and the smallest
//! size that completes is found by bisection at 4 KiB (page) granularity. A thread that needs
//! more dies of a stack overflow, which only kills its child process.
//!
//! `cargo run --release -p quiver-benches --bin no_alloc_stack`

use quiver::json::{EncoderOptions, JsonFormat};
use quiver::no_alloc::{Batch, Encoder, FileReader};
use std::process::Command;

const PROBE: &str = "QUIVER_STACK_PROBE";

/// Counts the bytes written.
struct Count(usize);

impl embedded_io::ErrorType for Count {
    type Error = core::convert::Infallible;
}

impl embedded_io::Write for Count {
    fn write(&mut self, buf: &[u8]) -> Result<usize, Self::Error> {
        self.0 += buf.len();
        Ok(buf.len())
    }

    fn flush(&mut self) -> Result<(), Self::Error> {
        Ok(())
    }
}

/// The loop; returns bytes of JSON.
fn run(file: &[u8], scratch: &mut [u8]) -> usize {
    let mut reader: FileReader<_> = FileReader::open(file, scratch).expect("open");
    let mut out = Count(0);
    for i in 0..reader.num_batches() {
        let batch: Batch = reader.batch(i).expect("batch");
        let options = EncoderOptions::default();
        let mut encoder: Encoder =
            Encoder::new(&batch, JsonFormat::LineDelimited, options).expect("encoder");
        encoder
            .write_through(&mut out, &mut [0u8; 256])
            .expect("write");
    }
    out.0
}

fn file() -> Vec<u8> {
    quiver_tests::ten_columns::file(4, 1000, quiver::ipc::WriterOptions::default())
}

/// Whether the loop completes on a thread with `stack` bytes of stack.
fn fits(stack: usize) -> bool {
    let exe = std::env::current_exe().expect("own path");
    Command::new(exe)
        .env(PROBE, stack.to_string())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

fn main() {
    if let Ok(stack) = std::env::var(PROBE) {
        let stack: usize = stack.parse().expect("stack size");
        let file = file();
        let mut scratch = vec![0u8; file.len()];
        let json = std::thread::Builder::new()
            .stack_size(stack)
            .spawn(move || run(&file, &mut scratch))
            .expect("thread")
            .join()
            .expect("loop");
        assert!(json > 0);
        return;
    }
    let file = file();
    let mut scratch = vec![0u8; file.len()];
    let needed = FileReader::<_>::open(&file[..], &mut scratch)
        .expect("open")
        .scratch_needed();
    let json = run(&file, &mut scratch);
    let (mut lo, mut hi) = (4096usize, 1 << 20);
    assert!(fits(hi), "the loop does not run in 1 MiB of stack");
    while hi - lo > 4096 {
        let mid = (lo + hi) / 2 / 4096 * 4096;
        if fits(mid) {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    println!(
        "no_alloc_stack: ten columns, 4 batches x 1000 rows ({} bytes, {json} bytes of NDJSON)",
        file.len()
    );
    println!("scratch (static memory): {needed} bytes (footer, dictionary, largest batch block)");
    println!(
        "stack: the loop completes on a thread of {} KiB, not of {} KiB",
        hi / 1024,
        lo / 1024
    );
    println!(
        "sizes: Batch ({} arrays) {} bytes, Encoder (depth {}, plan {}) {} bytes, FileReader {} bytes, chunk 256 bytes",
        quiver::no_alloc::DEFAULT_ARRAYS,
        std::mem::size_of::<Batch<'static>>(),
        quiver::json::DEFAULT_DEPTH,
        quiver::json::DEFAULT_PLAN,
        std::mem::size_of::<Encoder<'static>>(),
        std::mem::size_of::<FileReader<'static, &[u8]>>(),
    );
}
