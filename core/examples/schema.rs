//! Prints an Arrow IPC file's schema, then its batch and row counts.
//!
//! `cargo run --example schema -- path/to/file.arrow`

use quiver::ipc::{FileReader, ReaderOptions};

fn main() {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: schema <file.arrow>");
        std::process::exit(2);
    };
    if let Err(e) = run(&path) {
        eprintln!("error: {path}: {e}");
        std::process::exit(1);
    }
}

fn run(path: &str) -> Result<(), Box<dyn std::error::Error>> {
    let bytes = std::fs::read(path)?;
    let mut reader = FileReader::open(bytes, ReaderOptions::default())?;
    for field in reader.schema().fields() {
        let nullable = if field.is_nullable() { "" } else { " not null" };
        let dictionary = match field.dictionary() {
            Some(d) => format!(" dictionary(id {}, {:?})", d.id, d.index_type),
            None => String::new(),
        };
        println!(
            "{}: {:?}{nullable}{dictionary}",
            field.name(),
            field.data_type()
        );
    }
    let mut rows = 0;
    let batches = reader.num_batches();
    for batch in reader.batches() {
        rows += batch?.num_rows();
    }
    println!("{batches} batches, {rows} rows");
    Ok(())
}
