//! The anchor of the process benchmark (`benches/process.sh`): arrow-rs converting an Arrow IPC
//! file to NDJSON on stdout with its `FileReader` and `LineDelimitedWriter`, as a user of
//! arrow-rs would write it.
//!
//! `arrow_rs_ndjson FILE > out.ndjson`

use arrow_ipc::reader::FileReader;
use arrow_json::LineDelimitedWriter;
use std::error::Error;
use std::fs::File;
use std::io::{self, BufReader};

fn main() -> Result<(), Box<dyn Error>> {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: arrow_rs_ndjson FILE");
        std::process::exit(2);
    };
    let reader = FileReader::try_new(BufReader::new(File::open(path)?), None)?;
    let mut writer = LineDelimitedWriter::new(io::stdout().lock());
    for batch in reader {
        writer.write(&batch?)?;
    }
    writer.finish()?;
    Ok(())
}
