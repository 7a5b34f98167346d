//! Inputs the fuzzers found, replayed: each must end in `Ok` or `Err`, never a panic or an abort.
//!
//! `ipc_file-null-rows-claim.arrow`: a valid file whose batch claims about 2^45 rows of a null
//! column. Encoding it to JSON once reserved output space for every claimed row and aborted; now
//! `append_to` reserves at most 64 MiB ahead of what it has written.

use quiver::ipc::{FileReader, ReaderOptions};
use quiver::json::{Encoder, EncoderOptions, JsonFormat};
use std::path::PathBuf;

fn regressions() -> Vec<(String, Vec<u8>)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("data/regressions");
    let mut out: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| {
            let path = e.unwrap().path();
            (
                path.file_name().unwrap().to_string_lossy().into_owned(),
                std::fs::read(&path).unwrap(),
            )
        })
        .collect();
    out.sort();
    out
}

#[test]
fn fuzzer_findings_read_and_encode_without_aborting() {
    for (name, bytes) in regressions() {
        let Ok(mut reader) = FileReader::open(bytes.as_slice(), ReaderOptions::default()) else {
            continue;
        };
        for batch in reader.batches() {
            let Ok(batch) = batch else { break };
            // The first 64 KiB of its JSON, and a bounded slice appended in full.
            let mut encoder =
                Encoder::batch(&batch, JsonFormat::LineDelimited, EncoderOptions::default())
                    .unwrap();
            let mut out = vec![0u8; 64 * 1024];
            let progress = encoder.encode(&mut out);
            assert!(progress.written > 0 || progress.done, "{name}");
            let rows = batch.num_rows().min(4096);
            let slice = batch.slice(0, rows).unwrap();
            let mut json = Vec::new();
            Encoder::batch(&slice, JsonFormat::LineDelimited, EncoderOptions::default())
                .unwrap()
                .append_to(&mut json);
            assert_eq!(json.iter().filter(|b| **b == b'\n').count(), rows, "{name}");
            println!(
                "regressions: {name}: batch of {} rows encodes",
                batch.num_rows()
            );
        }
    }
}
