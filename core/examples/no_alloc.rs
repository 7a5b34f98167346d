//! An Arrow IPC file to NDJSON on stdout with no heap allocation in quiver: the loop a
//! microcontroller or WASM module runs (only loading the file and stdout are std here).
//!
//! `cargo run --release -p quiver --example no_alloc -- examples/data/trips.arrow`
use quiver::json::{EncoderOptions, JsonFormat};
use quiver::no_alloc::{Batch, Encoder, FileReader};
use std::error::Error;
use std::io::Write as _;

/// Scratch for the footer, the dictionaries and one record batch block at a time (`trips.arrow`
/// needs 58,248 bytes); too small is an error saying how many bytes are needed.
const SCRATCH: usize = 64 * 1024;

fn main() {
    let path = std::env::args().nth(1).unwrap_or_default();
    let mut scratch = [0u8; SCRATCH];
    let mut out = Stdout(std::io::stdout().lock());
    let file = std::fs::read(&path).map_err(Into::into);
    if let Err(e) = file.and_then(|file| run(&file, &mut scratch, &mut out)) {
        eprintln!("error: {path}: {e}");
        std::process::exit(1)
    }
}

/// Opens the file in `scratch`, then reads each batch and writes its rows as NDJSON to `out`.
fn run(file: &[u8], scratch: &mut [u8], out: &mut Stdout) -> Result<(), Box<dyn Error>> {
    let mut reader: FileReader<_> = FileReader::open(file, scratch)?;
    eprintln!("scratch needed: {} bytes", reader.scratch_needed());
    for i in 0..reader.num_batches() {
        // Up to 32 arrays; `Batch<'_, N>` and `Encoder<'_, DEPTH, N>` for more.
        let batch: Batch = reader.batch(i)?;
        let options = EncoderOptions::default();
        let mut encoder: Encoder = Encoder::new(&batch, JsonFormat::LineDelimited, options)?;
        encoder
            .write_through(out, &mut [0u8; 256]) // 256-byte chunks
            .map_err(|e| format!("{e:?}"))?;
    }
    Ok(())
}

/// Standard output as an `embedded_io::Write` (a UART or socket on a device).
struct Stdout(std::io::StdoutLock<'static>);

impl embedded_io::ErrorType for Stdout {
    type Error = embedded_io::ErrorKind;
}

impl embedded_io::Write for Stdout {
    fn write(&mut self, buf: &[u8]) -> Result<usize, Self::Error> {
        self.0.write(buf).map_err(|_| embedded_io::ErrorKind::Other)
    }

    fn flush(&mut self) -> Result<(), Self::Error> {
        self.0.flush().map_err(|_| embedded_io::ErrorKind::Other)
    }
}
