//! Arbitrary bytes as an IPC file: open it, read every batch one by one and encode each one that
//! validates to JSON, then read again with a planned scan of a projection of the first column.
#![no_main]

#[path = "batch_json.rs"]
mod batch_json;

use libfuzzer_sys::fuzz_target;
use quiver::ipc::{Projection, ScanOptions, FileReader, ReaderOptions};

fuzz_target!(|data: &[u8]| {
    let options = ReaderOptions::default().with_max_decompressed_buffer(1 << 24);
    let Ok(mut reader) = FileReader::open(data, options) else {
        return;
    };
    for batch in reader.batches() {
        let Ok(batch) = batch else { break };
        batch_json::encode(&batch);
    }
    let first = reader
        .schema()
        .fields()
        .first()
        .map(|f| f.name().to_owned());
    if let Some(Ok(projection)) = first.map(|name| Projection::from_paths(reader.schema(), &[name]))
    {
        reader.set_projection(projection);
    }
    let options = ScanOptions::default().with_readahead(4096);
    for batch in reader.scan(0..usize::MAX, options) {
        if batch.is_err() {
            break;
        }
    }
});
