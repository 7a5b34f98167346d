//! Arbitrary bytes as an IPC stream: read the schema and every batch, and encode each one that
//! validates to JSON.
#![no_main]

use libfuzzer_sys::fuzz_target;
use quiver::json::{Encoder, EncoderOptions, JsonFormat};
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
