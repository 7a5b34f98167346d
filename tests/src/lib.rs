//! Shared test support: where the Arrow conformance files are, and how to skip without them.

use std::path::PathBuf;

pub mod arbitrary;
pub mod equal;
pub mod json;
pub mod moto;
pub mod paths;
pub mod ten_columns;

/// The `arrow-testing` data folder: `$ARROW_TESTING_DATA`, else `../shared/arrow-testing/data`
/// beside the project. `None` (with a printed notice) when absent, unless
/// `QUIVER_REQUIRE_ARROW_TESTING=1`, which turns a missing folder into a test failure.
pub fn arrow_testing_data() -> Option<PathBuf> {
    let path = std::env::var_os("ARROW_TESTING_DATA")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/arrow-testing/data")
        });
    if path.is_dir() {
        return Some(path);
    }
    let required = std::env::var("QUIVER_REQUIRE_ARROW_TESTING").is_ok_and(|v| v == "1");
    assert!(
        !required,
        "arrow-testing data not found at {} and QUIVER_REQUIRE_ARROW_TESTING=1",
        path.display()
    );
    println!(
        "skipped: arrow-testing data not found at {}",
        path.display()
    );
    None
}

/// Every file under the integration folder with this extension (`arrow_file` or `stream`), sorted.
pub fn integration_files(data: &std::path::Path, extension: &str) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let root = data.join("arrow-ipc-stream/integration");
    let mut dirs = vec![root];
    while let Some(dir) = dirs.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == extension) {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

/// A file of three batches of one dictionary-encoded column whose dictionary grows: the
/// dictionary, then a delta before each later batch, so the footer lists two dictionary
/// blocks that lie between record batches.
pub fn file_with_deltas() -> Vec<u8> {
    use quiver::array::RecordBatch;
    use quiver::builder::{AppendValue, ArrayBuilder, DictionaryBuilder, StringBuilder};
    let batch = |words: &[&str]| {
        let mut column = DictionaryBuilder::new(StringBuilder::new());
        for word in words {
            column.append_value(*word);
        }
        let array = column.finish().unwrap();
        RecordBatch::from_fields(vec![(column.field("word"), array)]).unwrap()
    };
    file_of(&[
        batch(&["a", "b"]),
        batch(&["a", "b", "c"]),
        batch(&["a", "b", "c", "d"]),
    ])
}

/// An IPC file of `batches`, written by quiver's `FileWriter` with its default options.
pub fn file_of(batches: &[quiver::array::RecordBatch<'_>]) -> Vec<u8> {
    let mut writer =
        quiver::ipc::FileWriter::new(Vec::new(), batches[0].schema().clone(), Default::default())
            .unwrap();
    for batch in batches {
        writer.write(batch).unwrap();
    }
    writer.finish().unwrap();
    writer.into_inner()
}

/// The IPC file `bytes` as polars writes it: the schema message at its start without the
/// continuation marker and length before it (file readers take the schema from the footer),
/// so its stream cannot be read from its start.
pub fn polars_like(bytes: &[u8]) -> Vec<u8> {
    let mut bytes = bytes.to_vec();
    let schema = bytes.windows(4).position(|w| w == [0xFF; 4]).unwrap();
    bytes[schema..schema + 8].copy_from_slice(&[4, 0, 0, 0, 0xF2, 0xFF, 0xFF, 0xFF]);
    bytes
}

/// Runs a future to completion on this thread: the smallest executor, for the async reader's
/// tests (it parks the thread until a waker unparks it).
pub fn block_on<F: std::future::Future>(future: F) -> F::Output {
    struct Unpark(std::thread::Thread);
    impl std::task::Wake for Unpark {
        fn wake(self: std::sync::Arc<Self>) {
            self.0.unpark();
        }
    }
    let waker = std::task::Waker::from(std::sync::Arc::new(Unpark(std::thread::current())));
    let mut cx = std::task::Context::from_waker(&waker);
    let mut future = std::pin::pin!(future);
    loop {
        if let std::task::Poll::Ready(out) = future.as_mut().poll(&mut cx) {
            return out;
        }
        std::thread::park();
    }
}

/// Cases a property test runs: `$PROPTEST_CASES` when set (as proptest's own default reads it,
/// which a `with_cases` in the test would otherwise override), else the test's `default`.
pub fn proptest_cases(default: u32) -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|c| c.parse().ok())
        .unwrap_or(default)
}
