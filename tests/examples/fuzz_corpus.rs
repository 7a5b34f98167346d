//! Writes the fuzz seed corpora under `fuzz/corpus/<target>/` with quiver's own writer: random
//! schemas of every type (nested, dictionaries, slices) as files and streams, uncompressed, LZ4
//! and ZSTD; the ten-column table; single messages for `flatbuffer_message`; and streams behind
//! an options byte and buffer sizes for `json_chunks`.
//!
//! `cargo run -p quiver-tests --example fuzz_corpus`

use proptest::strategy::{Strategy, ValueTree};
use proptest::test_runner::TestRunner;
use quiver::array::RecordBatch;
use quiver::datatype::CompressionCodec;
use quiver::ipc::fuzzing::schemas;
use quiver::ipc::{FileWriter, StreamWriter, WriterOptions};
use quiver_tests::arbitrary::{self, Options};
use std::error::Error;
use std::path::{Path, PathBuf};

const CODECS: [Option<CompressionCodec>; 3] = [
    None,
    Some(CompressionCodec::Lz4Frame),
    Some(CompressionCodec::Zstd),
];

fn main() -> Result<(), Box<dyn Error>> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../fuzz/corpus");
    let mut runner = TestRunner::deterministic();
    let opts = Options {
        max_rows: 5,
        ..Options::default()
    };

    for i in 0..24 {
        let generated = arbitrary::schema_and_batch(opts)
            .new_tree(&mut runner)
            .map_err(|e| e.to_string())?
            .current();
        let options = WriterOptions::default().with_compression(CODECS[i % 3]);
        let batches = [generated.batch];
        write(
            &root.join("ipc_file"),
            &format!("random-{i:02}.arrow"),
            &file(&batches, &options)?,
        )?;
        write(
            &root.join("ipc_stream"),
            &format!("random-{i:02}.stream"),
            &stream(&batches, &options)?,
        )?;
    }
    for (i, codec) in CODECS.into_iter().enumerate() {
        let options = WriterOptions::default().with_compression(codec);
        let batches = [quiver_tests::ten_columns::batch(12, i as u64)];
        write(
            &root.join("ipc_file"),
            &format!("ten-columns-{i}.arrow"),
            &file(&batches, &options)?,
        )?;
        write(
            &root.join("ipc_stream"),
            &format!("ten-columns-{i}.stream"),
            &stream(&batches, &options)?,
        )?;
    }

    // flatbuffer_message: byte 0 picks the schema, bytes 1-2 the metadata length.
    for (pick, schema) in schemas().into_iter().enumerate() {
        let generated = arbitrary::batch(schema, opts)
            .new_tree(&mut runner)
            .map_err(|e| e.to_string())?
            .current();
        let bytes = stream(&[generated.batch], &WriterOptions::default())?;
        for (k, (metadata, body)) in messages(&bytes).into_iter().enumerate() {
            let mut seed = vec![pick as u8];
            seed.extend_from_slice(&(metadata.len() as u16).to_le_bytes());
            seed.extend_from_slice(metadata);
            seed.extend_from_slice(body);
            write(
                &root.join("flatbuffer_message"),
                &format!("schema-{pick}-message-{k}"),
                &seed,
            )?;
        }
    }

    // coalesce: limits then (start, length) pairs, as the target reads them.
    let mut seed = Vec::new();
    for v in [9u64, 99, 110, 11, 130, 11, 150, 10, 170, 11, 190, 11] {
        seed.extend_from_slice(&v.to_le_bytes());
    }
    write(&root.join("coalesce"), "arrow-cpp-basics", &seed)?;

    // json_chunks: an options byte, a count of buffer sizes, the sizes, then an IPC stream.
    let sizes: [&[u8]; 4] = [&[], &[1], &[0, 7, 1, 64], &[3, 255, 0, 2, 31]];
    for i in 0..24 {
        let generated = arbitrary::schema_and_batch(opts)
            .new_tree(&mut runner)
            .map_err(|e| e.to_string())?
            .current();
        let options = WriterOptions::default().with_compression(CODECS[i % 3]);
        let mut seed = vec![(i * 37 % 128) as u8, sizes[i % 4].len() as u8];
        seed.extend_from_slice(sizes[i % 4]);
        seed.extend_from_slice(&stream(&[generated.batch], &options)?);
        write(&root.join("json_chunks"), &format!("random-{i:02}"), &seed)?;
    }
    let mut seed = vec![0b0100_0001, 2, 5, 200];
    seed.extend_from_slice(&stream(
        &[quiver_tests::ten_columns::batch(12, 3)],
        &WriterOptions::default(),
    )?);
    write(&root.join("json_chunks"), "ten-columns", &seed)?;
    Ok(())
}

fn write(dir: &Path, name: &str, bytes: &[u8]) -> Result<(), Box<dyn Error>> {
    std::fs::create_dir_all(dir)?;
    std::fs::write(dir.join(name), bytes)?;
    Ok(())
}

fn file(batches: &[RecordBatch<'_>], options: &WriterOptions) -> Result<Vec<u8>, Box<dyn Error>> {
    let mut writer = FileWriter::new(Vec::new(), batches[0].schema().clone(), options.clone())?;
    for batch in batches {
        writer.write(batch)?;
    }
    writer.finish()?;
    Ok(writer.into_inner())
}

fn stream(batches: &[RecordBatch<'_>], options: &WriterOptions) -> Result<Vec<u8>, Box<dyn Error>> {
    let mut writer = StreamWriter::new(Vec::new(), batches[0].schema().clone(), options.clone())?;
    for batch in batches {
        writer.write(batch)?;
    }
    writer.finish()?;
    Ok(writer.into_inner())
}

/// The (metadata, body) of every message in a stream after the schema.
fn messages(stream: &[u8]) -> Vec<(&[u8], &[u8])> {
    let mut out = Vec::new();
    let mut at = 0;
    while let Some(len) = stream.get(at + 4..at + 8) {
        let len = i32::from_le_bytes(len.try_into().unwrap_or_default()) as usize;
        if len == 0 {
            break;
        }
        let metadata = &stream[at + 8..at + 8 + len];
        let body_len = quiver::format::Message::parse(metadata)
            .map(|m| m.body_length() as usize)
            .unwrap_or(0);
        let body = &stream[at + 8 + len..at + 8 + len + body_len];
        if at > 0 {
            out.push((metadata, body));
        }
        at += 8 + len + body_len;
    }
    out
}
