//! JSON conformance on Arrow's integration files: every batch of every file and stream under
//! `arrow-ipc-stream/integration/` is encoded in both formats, with default options and with
//! every option switched on. Each document must parse with serde_json, hold one object per row,
//! and come out byte-identical through 7-byte buffers.
//!
//! Prints `json golden: N files, B batches, R rows, X bytes`.

use quiver::array::RecordBatch;
use quiver::ipc::{FileReader, ReaderOptions, StreamReader};
use quiver::json::{BinaryFormat, Encoder, EncoderOptions, JsonError, JsonFormat};
use serde_json::Value;
use std::path::Path;

fn read(path: &Path, bytes: &[u8]) -> Result<Vec<RecordBatch<'static>>, String> {
    if path.extension().is_some_and(|e| e == "stream") {
        StreamReader::new(bytes, ReaderOptions::default())
            .map_err(|e| e.to_string())?
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| e.to_string())
    } else {
        FileReader::open(bytes.to_vec(), ReaderOptions::default())
            .map_err(|e| e.to_string())?
            .batches()
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| e.to_string())
    }
}

fn run(encoder: &mut Encoder<'_>, size: usize) -> Vec<u8> {
    let mut out = Vec::new();
    let mut buffer = vec![0u8; size];
    loop {
        let progress = encoder.encode(&mut buffer);
        out.extend_from_slice(&buffer[..progress.written]);
        if progress.done {
            return out;
        }
    }
}

/// Encodes one batch every way; returns the bytes of the default NDJSON document.
fn check(batch: &RecordBatch<'_>) -> Result<usize, String> {
    let all_on = EncoderOptions::default()
        .with_omit_nulls(true)
        .with_large_ints_as_strings(true)
        .with_non_finite_as_strings(true)
        .with_timestamps_as_epoch(true)
        .with_binary(BinaryFormat::Base64);
    let mut default_len = 0;
    for options in [EncoderOptions::default(), all_on] {
        for format in [JsonFormat::LineDelimited, JsonFormat::JsonArray] {
            let encoder = || Encoder::batch(batch, format, options);
            let whole = run(
                &mut encoder().map_err(|e: JsonError| e.to_string())?,
                1 << 16,
            );
            let chunked = run(&mut encoder().map_err(|e| e.to_string())?, 7);
            if whole != chunked {
                return Err(format!("{format:?} {options:?}: 7-byte buffers differ"));
            }
            let text = std::str::from_utf8(&whole).map_err(|e| e.to_string())?;
            let rows: Vec<Value> = match format {
                JsonFormat::JsonArray => match serde_json::from_str(text) {
                    Ok(Value::Array(rows)) => rows,
                    Ok(other) => return Err(format!("not an array: {other}")),
                    Err(e) => return Err(format!("{format:?}: {e}")),
                },
                _ => text
                    .lines()
                    .map(serde_json::from_str)
                    .collect::<Result<_, _>>()
                    .map_err(|e| format!("{format:?}: {e}"))?,
            };
            if rows.len() != batch.num_rows() || !rows.iter().all(Value::is_object) {
                return Err(format!(
                    "{format:?}: {} rows for {} in the batch",
                    rows.len(),
                    batch.num_rows()
                ));
            }
            if !options.omit_nulls {
                // Every row then has every column.
                let columns = batch.schema().fields().len();
                if let Some(row) = rows.iter().find(|r| r.as_object().unwrap().len() > columns) {
                    return Err(format!("row with extra members: {row}"));
                }
            }
            if options == EncoderOptions::default() && format == JsonFormat::LineDelimited {
                default_len = whole.len();
            }
        }
    }
    Ok(default_len)
}

#[test]
fn every_golden_batch_encodes_to_valid_json() {
    let Some(data) = quiver_tests::arrow_testing_data() else {
        return;
    };
    let mut files = quiver_tests::integration_files(&data, "arrow_file");
    files.extend(quiver_tests::integration_files(&data, "stream"));
    assert!(
        !files.is_empty(),
        "no integration files under {}",
        data.display()
    );
    let (mut batches, mut rows, mut bytes) = (0, 0, 0);
    let mut failures = Vec::new();
    for path in &files {
        let result = std::fs::read(path)
            .map_err(|e| e.to_string())
            .and_then(|b| read(path, &b))
            .and_then(|read| {
                for (i, batch) in read.iter().enumerate() {
                    bytes += check(batch).map_err(|e| format!("batch {i}: {e}"))?;
                    batches += 1;
                    rows += batch.num_rows();
                }
                Ok(())
            });
        if let Err(e) = result {
            failures.push(format!("{}: {e}", path.display()));
        }
    }
    println!(
        "json golden: {} files, {batches} batches, {rows} rows, {bytes} bytes",
        files.len()
    );
    for f in &failures {
        println!("  {f}");
    }
    assert!(failures.is_empty(), "{} files failed", failures.len());
}
