//! Arbitrary bytes as an IPC stream: read the schema and every batch, and encode each one that
//! validates to JSON.
#![no_main]

use libfuzzer_sys::fuzz_target;
use quiver::json::{EncoderOptions, JsonFormat, to_vec};
use quiver::{ReaderOptions, StreamReader};

fuzz_target!(|data: &[u8]| {
    let options = ReaderOptions::default()
        .with_max_decompressed_buffer(1 << 24)
        .with_max_metadata_size(1 << 20);
    let Ok(reader) = StreamReader::new(data, options) else {
        return;
    };
    for batch in reader {
        let Ok(batch) = batch else { break };
        encode(&batch);
    }
});

/// Encodes a validated batch to NDJSON: it must not panic, and what it writes is UTF-8. Batches
/// claiming more than 2^16 rows are skipped: their JSON is as long as they claim (a null column
/// of 2^40 rows costs the file nothing), which would only time the fuzzer out.
fn encode(batch: &quiver::RecordBatch<'_>) {
    if batch.num_rows() > 1 << 16 {
        return;
    }
    if let Ok(json) = to_vec(batch, JsonFormat::LineDelimited, EncoderOptions::default()) {
        assert!(
            std::str::from_utf8(&json).is_ok(),
            "the encoder wrote invalid UTF-8"
        );
    }
}
