//! Writes the process benchmark's input: the shared ten-column table
//! (`quiver_tests::ten_columns`), 16 batches of 62,500 rows (1M rows, about 80 MB).
//!
//! `ten_columns_file OUT.arrow [BATCHES [ROWS]]`

use std::error::Error;

fn main() -> Result<(), Box<dyn Error>> {
    let mut args = std::env::args().skip(1);
    let Some(path) = args.next() else {
        eprintln!("usage: ten_columns_file OUT.arrow [BATCHES [ROWS]]");
        std::process::exit(2);
    };
    let batches = args.next().map_or(Ok(16), |a| a.parse())?;
    let rows = args.next().map_or(Ok(62_500), |a| a.parse())?;
    let bytes =
        quiver_tests::ten_columns::file(batches, rows, quiver::ipc::WriterOptions::default());
    std::fs::write(&path, &bytes)?;
    println!(
        "wrote {path}: {batches} batches of {rows} rows, {} bytes",
        bytes.len()
    );
    Ok(())
}
