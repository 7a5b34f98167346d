//! Batches from fuzzer input written as JSON twice: in one shot, and through buffers of
//! fuzzer-chosen sizes (and, if asked, by encoders of rows split off the first, as the parallel
//! writer cuts batches). The bytes must be equal, and a finished document must parse as JSON
//! with one value per row.
//!
//! Input: byte 0 picks the options (bit 0 a JSON array rather than lines, bit 1 explicit nulls,
//! bit 2 large integers and decimals as strings, bit 3 non-finite floats as strings and zoned
//! timestamps in UTC, bit 4 timestamps as epoch numbers, bit 5 base64 binary, bit 6 each column alone through `Encoder::array`, bit 7
//! the second encoding split into pieces with `Encoder::split_rows`, the buffer sizes read again
//! as their row counts); byte 1 is a count `n`, the next `n` bytes are buffer sizes used in turn
//! (0 is an empty buffer); the rest is an IPC stream whose batches are encoded. Every zone name
//! resolves to a made-up zone whose offset changes every few days (daylight saving time without
//! a database). Batch by batch, the stream is also read by the no-alloc reader and each batch
//! it reads encoded by the no-alloc encoder through the same buffer sizes: the bytes must be
//! the alloc path's (its view's plan and walk against a `RecordBatch`'s).
#![no_main]

use libfuzzer_sys::fuzz_target;
use quiver::json::{BinaryFormat, Encoder, EncoderOptions, JsonFormat, ZoneResolver, ZoneRules};
use quiver::ipc::{ReaderOptions, StreamReader};
use quiver::no_alloc;
use serde::de::IgnoredAny;

/// Output written in one shot at most; a longer document is compared up to this length only.
const ONE_SHOT: usize = 1 << 18;

/// Batches encoded at most per input.
const MAX_BATCHES: usize = 8;

/// A zone at -04:00 for three days of each week and -05:00 for the other four.
struct Weekly;

impl ZoneRules for Weekly {
    fn offset(&self, utc_seconds: i64) -> i32 {
        if utc_seconds.rem_euclid(7 * 86_400) < 3 * 86_400 {
            -14_400
        } else {
            -18_000
        }
    }
}

fn weekly(_: &str) -> Option<&'static dyn ZoneRules> {
    Some(&Weekly)
}

fuzz_target!(|data: &[u8]| {
    let [flags, n, rest @ ..] = data else {
        return;
    };
    let n = usize::from(*n).min(rest.len());
    let (sizes, stream) = rest.split_at(n);
    let bit = |i: u8| flags >> i & 1 == 1;
    let format = if bit(0) {
        JsonFormat::JsonArray
    } else {
        JsonFormat::LineDelimited
    };
    let options = EncoderOptions::default()
        .with_omit_nulls(bit(1))
        .with_extensions_as_storage(bit(6))
        .with_large_ints_as_strings(bit(2))
        .with_decimals_as_strings(bit(2))
        .with_non_finite_as_strings(bit(3))
        .with_timestamps_utc(bit(3))
        .with_time_zones(Some(ZoneResolver(weekly)))
        .with_timestamps_as_epoch(bit(4))
        .with_binary(if bit(5) {
            BinaryFormat::Base64
        } else {
            BinaryFormat::Hex
        });
    let reader_options = ReaderOptions::default()
        .with_max_decompressed_buffer(1 << 24)
        .with_max_metadata_size(1 << 20);
    let Ok(reader) = StreamReader::new(stream, reader_options) else {
        return;
    };
    // The no-alloc reader, until it refuses a message (compression, big-endian, a capacity).
    let mut scratch = vec![0u8; stream.len().max(64)];
    let mut small = no_alloc::StreamReader::<_>::new(stream, &mut scratch[..]).ok();
    for batch in reader.take(MAX_BATCHES) {
        let Ok(batch) = batch else {
            return;
        };
        let read = small.as_mut().is_some_and(|reader| {
            match reader.next_batch::<{ no_alloc::DEFAULT_ARRAYS }>() {
                Ok(Some(view)) => {
                    same_without_alloc(&view, &batch, format, options, sizes);
                    true
                }
                _ => false,
            }
        });
        if !read {
            small = None;
        }
        if bit(6) {
            for column in batch.columns() {
                if let Ok(encoder) = Encoder::array(column, format, options) {
                    let again = Encoder::array(column, format, options).expect("built once");
                    check(
                        encoder,
                        pieces(again, bit(7), sizes),
                        sizes,
                        format,
                        column.len(),
                    );
                }
            }
        } else if let Ok(encoder) = Encoder::batch(&batch, format, options) {
            let again = Encoder::batch(&batch, format, options).expect("built once");
            check(
                encoder,
                pieces(again, bit(7), sizes),
                sizes,
                format,
                batch.num_rows(),
            );
        }
    }
});

/// Encodes the no-alloc reader's `view` through `sizes` and compares with the alloc path's
/// encoding of the same `batch` (up to [`ONE_SHOT`] bytes).
fn same_without_alloc(
    view: &no_alloc::Batch<'_>,
    batch: &quiver::array::RecordBatch<'_>,
    format: JsonFormat,
    options: EncoderOptions,
    sizes: &[u8],
) {
    let small: Result<no_alloc::Encoder<'_>, _> = no_alloc::Encoder::new(view, format, options);
    let (Ok(mut alloc), Ok(mut small)) = (Encoder::batch(batch, format, options), small) else {
        return;
    };
    let mut expected = vec![0u8; ONE_SHOT];
    let progress = alloc.encode(&mut expected);
    expected.truncate(progress.written);
    let (mut out, mut buffer, mut turn) = (Vec::new(), [0u8; 256], 0);
    while out.len() < expected.len() || progress.done {
        let size = sizes.get(turn % sizes.len().max(1)).map_or(97, |&s| usize::from(s));
        turn += 1;
        let step = small.encode(&mut buffer[..size.max(1)]);
        out.extend_from_slice(&buffer[..step.written]);
        if step.done {
            break;
        }
    }
    let end = out.len().min(expected.len());
    assert_eq!(&out[..end], &expected[..end], "the no-alloc path writes other bytes");
    if progress.done {
        assert_eq!(out.len(), expected.len(), "the no-alloc path writes other bytes");
    }
}

/// `encoder` alone, or (`split`) cut into encoders of `rows[0]`, `rows[1]`… rows and the rest.
fn pieces<'b>(mut encoder: Encoder<'b>, split: bool, rows: &[u8]) -> Vec<Encoder<'b>> {
    let mut pieces = Vec::new();
    if split {
        for &n in rows {
            pieces.push(encoder.split_rows(usize::from(n)).expect("not started"));
        }
    }
    pieces.push(encoder);
    pieces
}

/// Encodes with `whole` in one buffer and with the `pieces`, one after the other, through
/// `sizes`, and compares.
fn check(mut whole: Encoder, pieces: Vec<Encoder>, sizes: &[u8], format: JsonFormat, rows: usize) {
    let mut one_shot = vec![0u8; ONE_SHOT];
    let progress = whole.encode(&mut one_shot);
    one_shot.truncate(progress.written);
    assert_eq!(
        progress.done,
        whole.is_done(),
        "done disagrees with is_done"
    );

    let mut out = Vec::with_capacity(one_shot.len());
    let mut pieces = pieces.into_iter();
    let Some(mut chunked) = pieces.next() else {
        return;
    };
    let mut buffer = [0u8; 256];
    let mut turn = 0usize;
    let mut empty_in_a_row = 0usize;
    loop {
        let size = match sizes {
            [] => 97,
            _ => usize::from(sizes[turn % sizes.len()]),
        };
        turn += 1;
        let size = if empty_in_a_row > sizes.len() {
            size.max(1)
        } else {
            size
        };
        let step = chunked.encode(&mut buffer[..size]);
        assert!(step.written <= size, "wrote past the buffer");
        out.extend_from_slice(&buffer[..step.written]);
        if step.done {
            assert!(chunked.is_done());
            match pieces.next() {
                Some(next) => chunked = next,
                None => break,
            }
            continue;
        }
        if size == 0 {
            assert_eq!(step.written, 0, "wrote into an empty buffer");
            empty_in_a_row += 1;
        } else {
            assert!(step.written > 0, "no progress with a {size}-byte buffer");
            empty_in_a_row = 0;
        }
        if !progress.done && out.len() >= one_shot.len() {
            break;
        }
    }
    if !progress.done {
        assert_eq!(
            &out[..one_shot.len()],
            &one_shot[..],
            "chunked output differs"
        );
        return;
    }
    assert_eq!(out, one_shot, "chunked output differs");
    let text = std::str::from_utf8(&out).expect("JSON output is UTF-8");
    match format {
        JsonFormat::JsonArray => {
            let values: Vec<IgnoredAny> = serde_json::from_str(text).expect("a JSON array");
            assert_eq!(values.len(), rows, "one value per row");
        }
        _ => {
            let lines: Vec<&str> = text.split('\n').collect();
            assert_eq!(lines.len(), rows + 1, "one line per row");
            assert_eq!(lines.last(), Some(&""), "every line ends with a newline");
            for line in &lines[..rows] {
                let _: IgnoredAny = serde_json::from_str(line).expect("each line is JSON");
            }
        }
    }
}
