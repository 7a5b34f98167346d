//! Arbitrary bytes as an IPC stream: read the schema and every batch, and encode each one that
//! validates to JSON.
#![no_main]

#[path = "batch_json.rs"]
mod batch_json;

use libfuzzer_sys::fuzz_target;
use quiver::ipc::{ReaderOptions, StreamReader};

fuzz_target!(|data: &[u8]| {
    let options = ReaderOptions::default()
        .with_max_decompressed_buffer(1 << 24)
        .with_max_metadata_size(1 << 20);
    let Ok(reader) = StreamReader::new(data, options) else {
        return;
    };
    for batch in reader {
        let Ok(batch) = batch else { break };
        batch_json::encode(&batch);
    }
});
