//! Peeks at an object read only what they need: `--limit`, `--batches` and `quiver schema`
//! on a `file://` URL (the same object-store reader as `s3://`, without a server), counted
//! by `--stats` (the bytes the requests brought). Counts only, never wall time.

use quiver::array::RecordBatch;
use quiver::ipc::{FileReader, ReaderOptions};
use std::path::Path;
use std::process::{Command, Output};

const KIB: u64 = 1024;

fn quiver(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_quiver"))
        .args(args)
        .output()
        .expect("run quiver")
}

fn ok(output: &Output) -> &[u8] {
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{:?}: {stderr}", output.status);
    &output.stdout
}

/// A `--stats` value.
fn stat(output: &Output, name: &str) -> u64 {
    let stderr = String::from_utf8_lossy(&output.stderr);
    stderr
        .split_whitespace()
        .find_map(|kv| kv.strip_prefix(name)?.strip_prefix('='))
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{name} in {stderr}"))
}

fn url(path: &Path) -> String {
    format!("file://{}", path.display())
}

/// Eight batches of 40,000 rows of the ten-column table (about 3 MB a block), as a file and
/// as a stream, in `folder`; returns both paths and the largest block.
fn objects(folder: &Path) -> (std::path::PathBuf, std::path::PathBuf, u64) {
    let file = quiver_tests::ten_columns::file(8, 40_000, Default::default());
    let mut reader = FileReader::open(file.as_slice(), ReaderOptions::default()).unwrap();
    let block = reader
        .record_batch_blocks()
        .iter()
        .map(|b| b.meta_data_length as u64 + b.body_length as u64)
        .max()
        .unwrap();
    let batches: Vec<RecordBatch<'static>> = reader.batches().map(Result::unwrap).collect();
    let mut writer =
        quiver::ipc::StreamWriter::new(Vec::new(), batches[0].schema().clone(), Default::default())
            .unwrap();
    for batch in &batches {
        writer.write(batch).unwrap();
    }
    writer.finish().unwrap();
    let (file_path, stream_path) = (folder.join("big.arrow"), folder.join("big.arrows"));
    std::fs::write(&file_path, &file).unwrap();
    std::fs::write(&stream_path, writer.into_inner()).unwrap();
    (file_path, stream_path, block)
}

#[test]
fn peeks_fetch_the_footer_and_the_blocks_they_use() {
    let folder = tempfile::tempdir().unwrap();
    let (file, stream, block) = objects(folder.path());
    let size = std::fs::metadata(&file).unwrap().len();
    assert!(size > 20 * 1024 * 1024, "{size}");
    let tail = 64 * KIB;

    for path in [&file, &stream] {
        let url = url(path);
        let local = quiver(&["json", "--limit", "10", path.to_str().unwrap()]);
        // `--limit 10`: the tail, then the first block (a stream: its bytes up to the first
        // batch, and the read-ahead grown while reading it, about 1.3 MiB after 3 MB).
        let output = quiver(&["json", "--stats", "--limit", "10", &url]);
        assert_eq!(ok(&output), ok(&local), "{url}");
        let bytes = stat(&output, "bytes_read");
        println!("--limit 10 of {url}: {bytes} bytes of {size}, a block {block}");
        assert!(bytes <= tail + block + 1536 * KIB, "{bytes}");

        // `--limit` of more rows than a batch: the batches they need, no window beyond.
        let output = quiver(&["json", "--stats", "--limit", "50000", &url]);
        ok(&output);
        let bytes = stat(&output, "bytes_read");
        println!("--limit 50000 of {url}: {bytes} bytes");
        assert!(bytes <= tail + 2 * block + 2048 * KIB, "{bytes}");
    }

    // `--batches 3..5` of the file: the tail and those two blocks.
    let output = quiver(&["json", "--stats", "--batches", "3..5", &url(&file)]);
    ok(&output);
    let bytes = stat(&output, "bytes_read");
    assert!(bytes <= tail + 2 * block, "{bytes}");

    // The schema alone, as `quiver schema` reads it (which has no `--stats`; `--limit 0`
    // opens the same way and reads no batch): the file's footer came with the opening
    // request; the stream's schema is its first message, read with the read-ahead's first
    // step.
    for (path, most) in [(&file, tail), (&stream, tail + 2 * 256 * KIB)] {
        ok(&quiver(&["schema", &url(path)]));
        let output = quiver(&["json", "--stats", "--limit", "0", &url(path)]);
        let bytes = stat(&output, "bytes_read");
        println!("schema of {}: {bytes} bytes", url(path));
        assert!(bytes <= most, "{bytes}");
    }
}
