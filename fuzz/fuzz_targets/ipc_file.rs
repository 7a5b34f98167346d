//! Arbitrary bytes as an IPC file: open it, read every batch one by one and encode each one that
//! validates to JSON, then read again with a planned scan of a projection of the first column.
#![no_main]

use libfuzzer_sys::fuzz_target;
use quiver::ipc::{Projection, ScanOptions};
use quiver::json::{EncoderOptions, JsonFormat, to_vec};
use quiver::{FileReader, ReaderOptions};

fuzz_target!(|data: &[u8]| {
    let options = ReaderOptions::default().with_max_decompressed_buffer(1 << 24);
    let Ok(mut reader) = FileReader::open(data, options) else {
        return;
    };
    for batch in reader.batches() {
        let Ok(batch) = batch else { break };
        encode(&batch);
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
