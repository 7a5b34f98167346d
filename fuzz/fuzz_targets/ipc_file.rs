//! Arbitrary bytes as an IPC file: open it, read every batch one by one and encode each one that
//! validates to JSON, then read again with a planned scan of a projection of the first column.
#![no_main]

use libfuzzer_sys::fuzz_target;
use quiver::ipc::{Projection, ScanOptions};
use quiver::json::{Encoder, EncoderOptions, JsonFormat};
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

/// Encodes a validated batch to NDJSON through a 64 KiB buffer, up to 1 MiB of output (a null
/// or fixed-size-list column can claim far more JSON than its bytes; writing it all would only
/// time the fuzzer out): it must not panic, and what it writes is UTF-8.
fn encode(batch: &quiver::RecordBatch<'_>) {
    let Ok(mut encoder) =
        Encoder::batch(batch, JsonFormat::LineDelimited, EncoderOptions::default())
    else {
        return;
    };
    let mut buffer = vec![0u8; 64 * 1024];
    let mut json = Vec::new();
    while json.len() < 1 << 20 {
        let progress = encoder.encode(&mut buffer);
        json.extend_from_slice(&buffer[..progress.written]);
        if progress.done {
            break;
        }
        assert!(progress.written > 0, "the encoder made no progress");
    }
    if let Err(e) = std::str::from_utf8(&json) {
        assert!(e.error_len().is_none(), "the encoder wrote invalid UTF-8");
    }
}
