//! Shared by the `ipc_file` and `ipc_stream` targets (not a target itself): each batch they read
//! is encoded to JSON.

use quiver::json::{Encoder, EncoderOptions, JsonFormat};

/// Encodes a validated batch to NDJSON through a 64 KiB buffer, up to 1 MiB of output (a null
/// or fixed-size-list column can claim far more JSON than its bytes; writing it all would only
/// time the fuzzer out): it must not panic, and what it writes is UTF-8.
pub fn encode(batch: &quiver::array::RecordBatch<'_>) {
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
