//! `ObjectSource` under `AsyncFileReader`: exact request counts and bytes (counted by a store
//! wrapper and by the source's own log), the same batches as a local read for every golden file
//! and stream, on `object_store`'s in-memory store and on `moto_server` (an S3 API on loopback).

mod common;

use common::{Counted, Moto, hundred_batches, moto_store};
use object_store::memory::InMemory;
use object_store::path::Path;
use object_store::{ObjectStore, ObjectStoreExt};
use quiver::array::RecordBatch;
use quiver::ipc::{AsyncFileReader, FileReader, Projection, ReaderOptions, StreamReader};
use quiver_object_store::{ObjectSource, SourceOptions};
use quiver_tests::equal::assert_batches_equal;
use std::sync::Arc;
use std::time::Duration;

async fn put(store: &dyn ObjectStore, key: &str, bytes: &[u8]) -> Path {
    let path = Path::from(key);
    store.put(&path, bytes.to_vec().into()).await.unwrap();
    path
}

fn local(file: &[u8], paths: Option<&[&str]>) -> Vec<RecordBatch<'static>> {
    let mut reader = FileReader::open(file, ReaderOptions::default()).unwrap();
    if let Some(paths) = paths {
        reader.set_projection(Projection::from_paths(reader.schema(), paths).unwrap());
    }
    reader.batches().collect::<Result<_, _>>().unwrap()
}

async fn remote(
    source: &ObjectSource,
    paths: Option<&[&str]>,
) -> Result<Vec<RecordBatch<'static>>, quiver::error::Error<quiver_object_store::ObjectError>> {
    let mut reader = AsyncFileReader::open(source, ReaderOptions::default()).await?;
    if let Some(paths) = paths {
        reader.set_projection(Projection::from_paths(reader.schema(), paths).unwrap());
    }
    reader.select(0..usize::MAX, source.scan_options());
    let mut batches = Vec::new();
    while let Some(batch) = reader.next_batch().await {
        batches.push(batch?);
    }
    Ok(batches)
}

/// The bytes a read of one column needs at least: the tail read, every block's metadata and
/// the column's buffers.
fn minimal_bytes(file: &[u8], column: usize) -> u64 {
    let reader = FileReader::open(file, ReaderOptions::default()).unwrap();
    let metadata: u64 = reader
        .record_batch_blocks()
        .iter()
        .map(|b| b.meta_data_length as u64)
        .sum();
    let buffers: u64 = local(file, None)
        .iter()
        .map(|b| {
            let c = &b.columns()[column];
            let own = c.validity().map_or(0, |v| v.len() as u64)
                + c.buffers().iter().map(|b| b.len() as u64).sum::<u64>();
            own + c
                .children()
                .iter()
                .flat_map(|c| c.buffers())
                .map(|b| b.len() as u64)
                .sum::<u64>()
        })
        .sum();
    64 * 1024 + metadata + buffers
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn open_whole_file_and_one_column_in_few_requests() {
    let file = hundred_batches();
    let memory: Arc<dyn ObjectStore> = Arc::new(InMemory::new());
    let path = put(&*memory, "data/100.arrow", &file).await;

    // Opening: one suffix GET; the reader's footer read costs nothing more.
    let counted = Counted::new(Arc::clone(&memory), Duration::ZERO);
    let source = ObjectSource::open(counted.clone(), path.clone(), SourceOptions::default())
        .await
        .unwrap();
    let reader = AsyncFileReader::open(&source, ReaderOptions::default())
        .await
        .unwrap();
    assert_eq!(reader.num_batches(), 100);
    assert_eq!((counted.gets(), counted.heads()), (1, 0));
    assert_eq!(source.requests().requests, 1);

    // The whole file: the body in one window, at most two more requests.
    let counted = Counted::new(Arc::clone(&memory), Duration::from_millis(20));
    let source = ObjectSource::open(counted.clone(), path.clone(), SourceOptions::default())
        .await
        .unwrap();
    let batches = remote(&source, None).await.unwrap();
    assert_batches_equal(&local(&file, None), &batches);
    let stats = source.requests();
    println!("whole file: {stats:?}, {} GETs", counted.gets());
    assert!(counted.gets() <= 3, "{}", counted.gets());
    assert_eq!(stats.requests, counted.gets());
    assert!(stats.round_trips <= 2, "{stats:?}");

    // One column: every block's metadata, then its buffers.
    let counted = Counted::new(Arc::clone(&memory), Duration::from_millis(20));
    let source = ObjectSource::open(counted.clone(), path.clone(), SourceOptions::default())
        .await
        .unwrap();
    let batches = remote(&source, Some(&["f64"])).await.unwrap();
    assert_batches_equal(&local(&file, Some(&["f64"])), &batches);
    let stats = source.requests();
    let minimal = minimal_bytes(&file, 2);
    println!(
        "one column: {stats:?}, {} GETs, minimal {minimal} bytes of {}",
        counted.gets(),
        file.len()
    );
    assert!(stats.round_trips <= 9, "{stats:?}");
    assert!(
        stats.bytes as f64 <= 1.25 * minimal as f64,
        "{} bytes read, {minimal} needed",
        stats.bytes
    );

    // A size known from a listing: opening sends nothing.
    let counted = Counted::new(Arc::clone(&memory), Duration::ZERO);
    let source = ObjectSource::open(
        counted.clone(),
        path.clone(),
        SourceOptions::default().with_size(file.len() as u64),
    )
    .await
    .unwrap();
    assert_eq!(counted.gets() + counted.heads(), 0);
    let batches = remote(&source, None).await.unwrap();
    assert_eq!(batches.len(), 100);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_golden_file_and_stream_reads_as_it_does_locally() {
    let Some(data) = quiver_tests::arrow_testing_data() else {
        return;
    };
    let memory: Arc<dyn ObjectStore> = Arc::new(InMemory::new());
    let mut files = 0;
    for file in quiver_tests::integration_files(&data, "arrow_file") {
        let bytes = std::fs::read(&file).unwrap();
        let path = put(&*memory, "golden.arrow_file", &bytes).await;
        let source = ObjectSource::open(Arc::clone(&memory), path, SourceOptions::default())
            .await
            .unwrap();
        let batches = remote(&source, None)
            .await
            .unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        assert_batches_equal(&local(&bytes, None), &batches);

        let stream = std::fs::read(file.with_extension("stream")).unwrap();
        let path = put(&*memory, "golden.stream", &stream).await;
        let source = ObjectSource::open(Arc::clone(&memory), path, SourceOptions::default())
            .await
            .unwrap();
        let reader = source.reader(0);
        let from_store = tokio::task::spawn_blocking(move || {
            StreamReader::new(
                embedded_io_adapters::std::FromStd::new(reader),
                Default::default(),
            )
            .unwrap()
            .collect::<Result<Vec<_>, _>>()
            .unwrap()
        })
        .await
        .unwrap();
        let expected: Vec<_> = StreamReader::new(stream.as_slice(), Default::default())
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert_batches_equal(&expected, &from_store);
        files += 1;
    }
    println!("object store: {files} golden files and their streams read as locally");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn missing_objects_and_cut_files_are_errors() {
    let memory: Arc<dyn ObjectStore> = Arc::new(InMemory::new());
    let missing = ObjectSource::open(
        Arc::clone(&memory),
        Path::from("nope.arrow"),
        SourceOptions::default(),
    )
    .await
    .unwrap_err();
    assert!(missing.to_string().contains("nope.arrow"), "{missing}");

    let file = hundred_batches();
    let path = put(&*memory, "cut.arrow", &file[..file.len() / 2]).await;
    let source = ObjectSource::open(Arc::clone(&memory), path, SourceOptions::default())
        .await
        .unwrap();
    let error = remote(&source, None).await.unwrap_err();
    assert!(error.to_string().contains("truncated"), "{error}");

    let path = put(&*memory, "empty.arrow", b"").await;
    let source = ObjectSource::open(Arc::clone(&memory), path, SourceOptions::default())
        .await
        .unwrap();
    let error = remote(&source, None).await.unwrap_err();
    assert!(error.to_string().contains("empty"), "{error}");
}

#[test]
fn on_moto_the_server_sees_what_the_source_counts() {
    let Some(moto) = Moto::start() else { return };
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let store = moto_store(&moto);
        let file = hundred_batches();
        let key = "100.arrow";
        moto.put(key, &file);

        let source = ObjectSource::open(Arc::clone(&store), Path::from(key), Default::default())
            .await
            .unwrap();
        let reader = AsyncFileReader::open(&source, ReaderOptions::default())
            .await
            .unwrap();
        assert_eq!(reader.num_batches(), 100);
        assert_eq!(source.requests().requests, 1);
        assert_eq!(moto.logged("GET", key), 1, "schema: one request");
        assert_eq!(moto.logged("HEAD", key), 0);

        let batches = remote(&source, None).await.unwrap();
        assert_batches_equal(&local(&file, None), &batches);
        let whole = source.requests();
        assert!(whole.requests <= 3, "{whole:?}");
        assert!(whole.round_trips <= 2, "{whole:?}");
        assert_eq!(moto.logged("GET", key) as u64, whole.requests);

        let source = ObjectSource::open(Arc::clone(&store), Path::from(key), Default::default())
            .await
            .unwrap();
        let batches = remote(&source, Some(&["utf8"])).await.unwrap();
        assert_batches_equal(&local(&file, Some(&["utf8"])), &batches);
        let column = source.requests();
        assert!(column.round_trips <= 9, "{column:?}");
        assert!(column.bytes as f64 <= 1.25 * minimal_bytes(&file, 3) as f64);
        assert_eq!(
            moto.logged("GET", key) as u64,
            whole.requests + column.requests
        );
        println!(
            "moto: schema 1 request; whole file {whole:?}; one column {column:?} ({} bytes of {})",
            column.bytes,
            file.len()
        );
    });
}
