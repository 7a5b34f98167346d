//! The stream decoder fed by hand in fuzzer-chosen chunks. Byte 0 picks the options (metadata
//! limit, projection of the first field, largest chunk, a stream or a file read front to back),
//! bytes 1–2 seed the chunk sizes (now and then an empty push). The rest is the input. The decoder must keep its contract (it asks
//! for at least one byte, makes no progress on fewer than it asked for, repeats its first
//! error) and give the sync `StreamReader`'s batches and error.
#![no_main]

use libfuzzer_sys::fuzz_target;
use quiver::bytes::{Bytes, Owner};
use quiver::ipc::{Projection, StreamDecodeResult, StreamDecoder, ReaderOptions, StreamReader};
use std::sync::Arc;

/// A small xorshift generator for the chunk sizes.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

/// The first field alone.
fn first_field(schema: &quiver::schema::Schema) -> Option<Projection> {
    let first = schema.fields().first()?.name().to_owned();
    Projection::from_paths(schema, &[first]).ok()
}

fuzz_target!(|data: &[u8]| {
    let [choice, seed0, seed1, stream @ ..] = data else {
        return;
    };
    let options = ReaderOptions::default()
        .with_max_decompressed_buffer(1 << 24)
        .with_max_metadata_size([1 << 20, 64, 300, 4096][(choice & 3) as usize]);
    let project = choice & 4 != 0;
    let largest = [1u64, 8, 64, 1000, 4096, 1 << 16, 7, 3][(choice >> 3 & 7) as usize];
    let decoder = || match choice & 64 {
        0 => StreamDecoder::new(options.clone()),
        _ => StreamDecoder::for_file(options.clone()),
    };

    // What the sync reader says: the rows of each batch, and the error.
    let expected = match StreamReader::with_decoder(stream, decoder()) {
        Err(e) => (Vec::new(), Some(e.to_string())),
        Ok(mut reader) => {
            if project && let Some(p) = first_field(reader.schema()) {
                reader.set_projection(p);
            }
            let mut rows = Vec::new();
            let mut error = None;
            for batch in reader {
                match batch {
                    Ok(batch) => rows.push(batch.num_rows()),
                    Err(e) => error = Some(e.to_string()),
                }
            }
            (rows, error)
        }
    };

    let owner: Owner = Arc::new(stream.to_vec());
    let mut rng = Rng(u64::from(*seed0) << 8 | u64::from(*seed1) | 1 << 40);
    let mut decoder = decoder();
    let mut at = 0;
    let mut rows = Vec::new();
    let mut short = false;
    let error = loop {
        let result = match decoder.try_decode() {
            Ok(result) => result,
            Err(e) => {
                assert_eq!(decoder.try_decode().unwrap_err(), e, "the first error stays");
                break Some(quiver::error::Error::<std::convert::Infallible>::from(e).to_string());
            }
        };
        assert!(
            !short || matches!(result, StreamDecodeResult::NeedsData { .. }),
            "progress with fewer bytes than asked for"
        );
        short = false;
        match result {
            StreamDecodeResult::NeedsData { at_least } => {
                assert!(at_least > 0, "asked for nothing");
                if at == stream.len() {
                    decoder.finish();
                    continue;
                }
                let n = if rng.next() % 16 == 0 {
                    0
                } else {
                    (1 + rng.next() % largest) as usize
                };
                let n = n.min(stream.len() - at);
                short = n < at_least;
                decoder.push(Bytes::from_owner(owner.clone(), at..at + n));
                at += n;
            }
            StreamDecodeResult::Schema => {
                if project && let Some(p) = decoder.schema().and_then(|s| first_field(s)) {
                    decoder.set_projection(p);
                }
            }
            StreamDecodeResult::Data(batch) => rows.push(batch.num_rows()),
            StreamDecodeResult::Finished => {
                assert!(matches!(decoder.try_decode(), Ok(StreamDecodeResult::Finished)));
                break None;
            }
            _ => unreachable!("no other results"),
        }
    };
    assert_eq!((rows, error), expected, "the sync reader's batches and error");
});
