//! `ObjectSource` under `AsyncFileReader`: exact request counts and bytes (counted by a store
//! wrapper and by the source's own log), the same batches as a local read for every golden file
//! and stream, on `object_store`'s in-memory store and on `moto_server` (an S3 API on loopback).

mod common;

use common::{Counted, Moto, NoSuffix, hundred_batches, local, moto_store, put};
use futures::StreamExt;
use object_store::GetRange;
use object_store::ObjectStore;
use object_store::memory::InMemory;
use object_store::path::Path;
use quiver::array::RecordBatch;
use quiver::ipc::{
    AsyncFileReader, AsyncStreamReader, FileReader, Projection, ReaderOptions, StreamReader,
};
use quiver_object_store::{
    DEFAULT_TAIL, NetworkMetrics, ObjectBatches, ObjectError, ObjectSource, SourceOptions,
};
use quiver_tests::equal::assert_batches_equal;
use std::sync::Arc;
use std::time::Duration;

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

/// Every batch of the object `path` (file or stream), read front to back through one GET of
/// all of it, and the source that counted the request.
async fn whole(
    store: Arc<dyn ObjectStore>,
    path: &Path,
) -> Result<(Vec<RecordBatch<'static>>, ObjectSource), quiver::error::Error<ObjectError>> {
    let opened = ObjectSource::open_whole(store, path.clone(), SourceOptions::default()).await;
    let (source, reader) = opened.map_err(|error| quiver::error::Error::Source {
        error,
        offset: 0,
        len: 0,
    })?;
    let mut reader = ObjectBatches::new(reader, ReaderOptions::default()).await?;
    let mut batches = Vec::new();
    while let Some(batch) = reader.next_batch().await? {
        batches.push(batch);
    }
    Ok((batches, source))
}

/// Whether `ranges` (the GETs a whole read sent) are bounded ranges that tile `0..len`, each
/// byte asked for once.
fn tiles(ranges: &[Option<GetRange>], len: u64) -> bool {
    let mut bounded: Vec<std::ops::Range<u64>> = ranges
        .iter()
        .filter_map(|r| match r {
            Some(GetRange::Bounded(r)) => Some(r.clone()),
            _ => None,
        })
        .collect();
    bounded.sort_by_key(|r| r.start);
    let mut end = 0;
    for r in &bounded {
        if r.start != end {
            return false;
        }
        end = r.end.min(len);
    }
    bounded.len() == ranges.len() && end == len
}

/// Every batch of the stream `source` holds, through `AsyncStreamReader` over its reader.
async fn stream_batches(source: &ObjectSource) -> Vec<RecordBatch<'static>> {
    batches_of(source.reader(0)).await
}

/// Every batch of the stream `reader` reads, through `AsyncStreamReader`.
async fn batches_of(reader: quiver_object_store::ObjectReader) -> Vec<RecordBatch<'static>> {
    let reader = AsyncStreamReader::new(reader, ReaderOptions::default())
        .await
        .unwrap();
    let mut batches = Vec::new();
    let mut stream = std::pin::pin!(reader.into_stream());
    while let Some(batch) = stream.next().await {
        batches.push(batch.unwrap());
    }
    batches
}

/// `parts` (ranges from `start`) as GET ranges from 0, for [`tiles`].
fn ranges_from(start: u64, parts: &[std::ops::Range<u64>]) -> Vec<Option<GetRange>> {
    let from = |p: &std::ops::Range<u64>| GetRange::Bounded(p.start - start..p.end - start);
    parts.iter().map(|p| Some(from(p))).collect()
}

/// Every byte `reader` reads, to its end.
async fn read_all(mut reader: quiver_object_store::ObjectReader) -> Vec<u8> {
    use embedded_io_async::Read;
    let mut bytes = Vec::new();
    let mut buffer = vec![0; 64 * 1024];
    loop {
        match reader.read(&mut buffer).await.unwrap() {
            0 => return bytes,
            n => bytes.extend_from_slice(&buffer[..n]),
        }
    }
}

/// A stream of the hundred batches of [`hundred_batches`].
fn hundred_batch_stream() -> Vec<u8> {
    let file = hundred_batches();
    let batches = local(&file, None);
    let mut writer =
        quiver::ipc::StreamWriter::new(Vec::new(), batches[0].schema().clone(), Default::default())
            .unwrap();
    for batch in &batches {
        writer.write(batch).unwrap();
    }
    writer.finish().unwrap();
    writer.into_inner()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_is_one_streaming_get_with_a_bounded_buffer() {
    let stream = hundred_batch_stream();
    let memory: Arc<dyn ObjectStore> = Arc::new(InMemory::new());
    let path = put(&*memory, "100.stream", &stream).await;
    let expected: Vec<_> = StreamReader::new(stream.as_slice(), Default::default())
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(expected.len(), 100);

    // Its size known: exactly one GET, of the whole object.
    let counted = Counted::new(Arc::clone(&memory), Duration::ZERO);
    let options = SourceOptions::default().with_size(stream.len() as u64);
    let source = ObjectSource::open(counted.clone(), path.clone(), options)
        .await
        .unwrap();
    assert_batches_equal(&expected, &stream_batches(&source).await);
    assert_eq!((counted.gets(), counted.heads()), (1, 0));
    assert_eq!(counted.ranges.lock().unwrap().as_slice(), &[None]);
    assert_eq!(source.requests().bytes, stream.len() as u64);

    // Opened with a suffix GET: one more GET, up to where the tail starts.
    let counted = Counted::new(Arc::clone(&memory), Duration::ZERO);
    let source = ObjectSource::open(counted.clone(), path.clone(), SourceOptions::default())
        .await
        .unwrap();
    assert_batches_equal(&expected, &stream_batches(&source).await);
    let tail_start = stream.len() as u64 - DEFAULT_TAIL;
    assert_eq!(
        counted.ranges.lock().unwrap().as_slice(),
        &[
            Some(GetRange::Suffix(DEFAULT_TAIL)),
            Some(GetRange::Bounded(0..tail_start))
        ]
    );
    assert_eq!(source.requests().bytes, stream.len() as u64);

    // A whole read: its first part, then the rest in parallel parts, every byte once.
    let counted = Counted::new(Arc::clone(&memory), Duration::ZERO);
    let (batches, source) = whole(counted.clone(), &path).await.unwrap();
    assert_batches_equal(&expected, &batches);
    let ranges = counted.ranges.lock().unwrap().clone();
    assert!(tiles(&ranges, stream.len() as u64), "{ranges:?}");
    assert_eq!(source.requests().bytes, stream.len() as u64);

    // Opened for a scan (its start read with its end): the stream's first bytes come from the
    // head as it arrives, and the GET of what lies between head and tail goes out at once:
    // three requests, every byte once, two round trips.
    let head = 1024 * 1024;
    let counted = Counted::new(Arc::clone(&memory), Duration::from_millis(20));
    let options = SourceOptions::default().with_head(head);
    let source = ObjectSource::open(counted.clone(), path.clone(), options.clone())
        .await
        .unwrap();
    assert_batches_equal(&expected, &stream_batches(&source).await);
    let mut ranges = counted.ranges.lock().unwrap().clone();
    ranges.sort_by_key(|r| format!("{r:?}"));
    assert_eq!(
        ranges,
        [
            Some(GetRange::Bounded(0..head)),
            Some(GetRange::Bounded(head..tail_start)),
            Some(GetRange::Suffix(DEFAULT_TAIL)),
        ]
    );
    let read = source.requests();
    assert_eq!((read.requests, read.round_trips), (3, 2), "{read:?}");
    assert_eq!(read.bytes, stream.len() as u64);
    // Every batch (a scan of a stream): what lies between head and tail in parallel parts of
    // the cost model's size (S3's figures, given: not measured on loopback; 512 KiB), all
    // sent at once and handed over in order; every byte once, still two round trips.
    let counted = Counted::new(Arc::clone(&memory), Duration::from_millis(20));
    let s3 = quiver_object_store::NetworkMetrics::default()
        .with_time_to_first_byte(Duration::from_millis(50))
        .with_bandwidth(64 * 1024 * 1024);
    let scan = options.clone().with_network(s3);
    let source = ObjectSource::open(counted.clone(), path.clone(), scan)
        .await
        .unwrap();
    assert_batches_equal(&expected, &batches_of(source.parts_reader(0)).await);
    let ranges = counted.ranges.lock().unwrap().clone();
    let parts: Vec<_> = ranges
        .iter()
        .filter_map(|r| match r {
            Some(GetRange::Bounded(r)) if r.start >= head => Some(r.clone()),
            _ => None,
        })
        .collect();
    assert!(ranges.contains(&Some(GetRange::Bounded(0..head))));
    assert!(
        tiles(&ranges_from(head, &parts), tail_start - head),
        "{parts:?}"
    );
    assert!(
        parts.iter().all(|p| p.end - p.start <= 512 * 1024),
        "{parts:?}"
    );
    let read = source.requests();
    assert_eq!(read.requests, 2 + parts.len() as u64, "{read:?}");
    assert_eq!(
        (read.round_trips, read.bytes),
        (2, stream.len() as u64),
        "{read:?}"
    );

    // From an offset within the head, and past it (the head then cut, brought for nothing).
    for offset in [100, head + 100] {
        let source = ObjectSource::open(Arc::clone(&memory), path.clone(), options.clone())
            .await
            .unwrap();
        assert_eq!(
            read_all(source.reader(offset)).await,
            stream[offset as usize..]
        );
    }

    // The same through `std::io::Read` on a thread outside the runtime.
    let counted = Counted::new(Arc::clone(&memory), Duration::ZERO);
    let source = ObjectSource::open(counted.clone(), path.clone(), SourceOptions::default())
        .await
        .unwrap();
    let reader = source.reader(0);
    let batches = tokio::task::spawn_blocking(move || {
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
    assert_batches_equal(&expected, &batches);
    assert_eq!(counted.gets(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_whose_get_fails_is_an_error_and_one_request() {
    let stream = hundred_batch_stream();
    let memory: Arc<dyn ObjectStore> = Arc::new(InMemory::new());
    let path = put(&*memory, "gone.stream", &stream).await;
    let source = ObjectSource::open(Arc::clone(&memory), path.clone(), SourceOptions::default())
        .await
        .unwrap();
    // Deleted once opened: the streaming GET of the rest finds nothing.
    object_store::ObjectStoreExt::delete(&*memory, &path)
        .await
        .unwrap();
    let opened = AsyncStreamReader::new(source.reader(0), ReaderOptions::default()).await;
    let error = opened.map(|_| ()).expect_err("a stream whose GET failed");
    let error = error.to_string();
    assert!(error.contains("no such object `gone.stream`"), "{error}");
    // The suffix and the failed GET, counted once each, whether or not it is over.
    let (logged, so_far) = (source.requests(), source.requests_so_far());
    assert_eq!(logged.requests, 2, "{logged:?}");
    assert_eq!(so_far, logged);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_store_refusing_suffix_ranges_costs_a_head_and_a_bounded_get() {
    let file = hundred_batches();
    let memory: Arc<dyn ObjectStore> = Arc::new(InMemory::new());
    let path = put(&*memory, "data/100.arrow", &file).await;
    let size = file.len() as u64;
    // What reaches the store below the refusing one: nothing for the suffix GET.
    let counted = Counted::new(Arc::clone(&memory), Duration::from_millis(5));
    let azure_like: Arc<dyn ObjectStore> = Arc::new(NoSuffix(counted.clone()));
    let source = ObjectSource::open(azure_like, path.clone(), SourceOptions::default())
        .await
        .unwrap();
    assert_eq!((counted.heads(), counted.gets()), (1, 1));
    assert_eq!(
        counted.ranges.lock().unwrap().as_slice(),
        &[Some(GetRange::Bounded(size - DEFAULT_TAIL..size))]
    );
    let opened = source.requests();
    assert_eq!((opened.requests, opened.round_trips), (2, 2), "{opened:?}");
    assert_eq!(opened.bytes, DEFAULT_TAIL);
    let batches = remote(&source, None).await.unwrap();
    assert_batches_equal(&local(&file, None), &batches);
    assert_eq!(source.requests().requests, 1 + counted.gets());
    // A whole read asks for no suffix range: bounded parts only, and no HEAD.
    let counted = Counted::new(Arc::clone(&memory), Duration::ZERO);
    let azure_like: Arc<dyn ObjectStore> = Arc::new(NoSuffix(counted.clone()));
    let (batches, _) = whole(azure_like, &path).await.unwrap();
    assert_batches_equal(&local(&file, None), &batches);
    assert_eq!(counted.heads(), 0);
    assert!(tiles(&counted.ranges.lock().unwrap(), size));
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

    // The whole file: the body in one window, in parallel parts of the cost model's size.
    let counted = Counted::new(Arc::clone(&memory), Duration::from_millis(20));
    let source = ObjectSource::open(counted.clone(), path.clone(), SourceOptions::default())
        .await
        .unwrap();
    let batches = remote(&source, None).await.unwrap();
    assert_batches_equal(&local(&file, None), &batches);
    let stats = source.requests();
    println!("whole file: {stats:?}, {} GETs", counted.gets());
    assert!(counted.gets() <= 16, "{}", counted.gets());
    assert_eq!(stats.requests, counted.gets());
    assert!(stats.round_trips <= 2, "{stats:?}");

    // The whole file read front to back: a first part, then the rest in parallel parts,
    // every byte once. The same for a larger file.
    let large = quiver_tests::ten_columns::file(100, 2000, quiver::ipc::WriterOptions::default());
    assert!(large.len() > 8 * 1024 * 1024);
    let large_path = put(&*memory, "data/large.arrow", &large).await;
    for (bytes, path) in [(&file, &path), (&large, &large_path)] {
        let counted = Counted::new(Arc::clone(&memory), Duration::from_millis(20));
        let (batches, source) = whole(counted.clone(), path).await.unwrap();
        assert_batches_equal(&local(bytes, None), &batches);
        let stats = source.requests();
        assert_eq!((stats.requests, counted.heads()), (counted.gets(), 0));
        assert!(tiles(&counted.ranges.lock().unwrap(), bytes.len() as u64));
        assert!(stats.round_trips <= 2, "{stats:?}");
        assert_eq!(stats.bytes, bytes.len() as u64);
    }
    // Its schema alone: the opening request.
    let counted = Counted::new(Arc::clone(&memory), Duration::ZERO);
    let source = ObjectSource::open(counted.clone(), large_path, SourceOptions::default())
        .await
        .unwrap();
    let reader = AsyncFileReader::open(&source, ReaderOptions::default())
        .await
        .unwrap();
    assert_eq!(reader.num_batches(), 100);
    assert_eq!((counted.gets(), counted.heads()), (1, 0));

    // One column: on the model's figures this 7.8 MB file is cheaper read whole in parallel
    // parts than by its blocks' metadata and then the column (tests/plans.rs has the plans
    // of other networks, where the column alone is read).
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
    assert!(stats.round_trips <= 2, "{stats:?}");
    assert!(stats.requests <= 16, "{stats:?}");
    assert_eq!(stats.bytes, file.len() as u64);

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

/// A file whose stream cannot be read from its start (polars writes its schema message
/// without a length prefix): held whole from the whole read's parts, within the window, then
/// read by ranges from memory (every byte once, no request more); larger than the window,
/// read by ranges after its stream fails.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_file_whose_stream_does_not_start_as_one_is_held_from_the_whole_read() {
    let bytes = quiver_tests::ten_columns::file(100, 2000, quiver::ipc::WriterOptions::default());
    let polars = quiver_tests::polars_like(&bytes);
    let memory: Arc<dyn ObjectStore> = Arc::new(InMemory::new());
    let usual = put(&*memory, "data/usual.arrow", &bytes).await;
    let path = put(&*memory, "data/polars.arrow", &polars).await;
    // The network given and no hedging, so that both files are read in the same parts
    // whatever the machine's load.
    let network = NetworkMetrics::default()
        .with_time_to_first_byte(Duration::from_millis(20))
        .with_bandwidth(64 << 20);
    // Every batch of `path` read whole with a window of `window` bytes, and the requests.
    let read = |path: &Path, window: u64| {
        let counted = Counted::new(Arc::clone(&memory), Duration::from_millis(20));
        let options = SourceOptions::default()
            .with_window(window)
            .with_network(network)
            .with_hedge(None);
        let opened = ObjectSource::open_whole(counted.clone(), path.clone(), options);
        async move {
            let (mut source, reader) = opened.await.unwrap();
            let batches = ObjectBatches::of_whole(&mut source, reader, ReaderOptions::default());
            let batches = match batches.await.unwrap() {
                Some(mut stream) => {
                    let mut batches = Vec::new();
                    while let Some(batch) = stream.next_batch().await.unwrap() {
                        batches.push(batch);
                    }
                    batches
                }
                None => remote(&source, None).await.unwrap(),
            };
            (batches, source.requests(), counted)
        }
    };
    let (batches, stats, counted) = read(&path, 64 << 20).await;
    assert_batches_equal(&local(&polars, None), &batches);
    assert_eq!((stats.requests, counted.heads()), (counted.gets(), 0));
    assert!(tiles(&counted.ranges.lock().unwrap(), polars.len() as u64));
    assert!(stats.round_trips <= 2, "{stats:?}");
    assert_eq!(stats.bytes, polars.len() as u64);
    // The same parts as the file whose stream is read front to back.
    let (_, usual, _) = read(&usual, 64 << 20).await;
    assert_eq!(stats.requests, usual.requests);
    assert!(stats.requests > 2, "in parts: {stats:?}");

    let (batches, stats, _) = read(&path, 1 << 20).await;
    assert_batches_equal(&local(&polars, None), &batches);
    assert!(
        stats.bytes > polars.len() as u64,
        "the footer and blocks again: {stats:?}"
    );
}

/// A file of three batches of one dictionary-encoded column whose dictionary grows: the delta
/// batches lie between record batches, where a read front to back meets them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dictionary_deltas_between_batches_read_front_to_back() {
    let file = quiver_tests::file_with_deltas();
    let reader = FileReader::open(file.as_slice(), ReaderOptions::default()).unwrap();
    assert_eq!(
        reader.dictionary_blocks().len(),
        3,
        "the dictionary and two deltas"
    );
    assert!(reader.dictionary_blocks()[1].offset > reader.record_batch_blocks()[0].offset);
    let memory: Arc<dyn ObjectStore> = Arc::new(InMemory::new());
    let path = put(&*memory, "deltas.arrow", &file).await;
    let counted = Counted::new(Arc::clone(&memory), Duration::ZERO);
    let (batches, source) = whole(counted.clone(), &path).await.unwrap();
    assert_batches_equal(&local(&file, None), &batches);
    assert_eq!((source.requests().requests, counted.gets()), (1, 1));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_golden_file_and_stream_reads_as_it_does_locally() {
    let Some(data) = quiver_tests::arrow_testing_data() else {
        return;
    };
    let memory: Arc<dyn ObjectStore> = Arc::new(InMemory::new());
    let (mut files, mut streams_beyond_tail) = (0, 0);
    for file in quiver_tests::integration_files(&data, "arrow_file") {
        let bytes = std::fs::read(&file).unwrap();
        let path = put(&*memory, "golden.arrow_file", &bytes).await;
        let source =
            ObjectSource::open(Arc::clone(&memory), path.clone(), SourceOptions::default())
                .await
                .unwrap();
        let batches = remote(&source, None)
            .await
            .unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        assert_batches_equal(&local(&bytes, None), &batches);
        // Front to back: one GET, every byte once.
        let (batches, source) = whole(Arc::clone(&memory), &path)
            .await
            .unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        assert_batches_equal(&local(&bytes, None), &batches);
        let stats = source.requests();
        assert_eq!(stats.requests, 1, "{stats:?}");
        assert_eq!(stats.bytes, bytes.len() as u64, "{}", file.display());

        let stream = std::fs::read(file.with_extension("stream")).unwrap();
        let path = put(&*memory, "golden.stream", &stream).await;
        let counted = Counted::new(Arc::clone(&memory), Duration::ZERO);
        let source = ObjectSource::open(counted.clone(), path.clone(), SourceOptions::default())
            .await
            .unwrap();
        let from_store = stream_batches(&source).await;
        let expected: Vec<_> = StreamReader::new(stream.as_slice(), Default::default())
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert_batches_equal(&expected, &from_store);
        let (batches, _) = whole(Arc::clone(&memory), &path).await.unwrap();
        assert_batches_equal(&expected, &batches);
        // The opening GET, then one streaming GET of what it did not bring: every byte once.
        let beyond_tail = stream.len() as u64 > DEFAULT_TAIL;
        let stats = source.requests();
        assert_eq!(stats.requests, 1 + u64::from(beyond_tail), "{stats:?}");
        assert_eq!(counted.gets(), stats.requests);
        assert_eq!(stats.bytes, stream.len() as u64, "{}", file.display());
        streams_beyond_tail += usize::from(beyond_tail);
        files += 1;
    }
    assert!(streams_beyond_tail > 0);
    println!(
        "object store: {files} golden files and their streams read as locally \
         ({streams_beyond_tail} streams longer than the opening read), and front to back \
         through one GET each"
    );
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
        // The GETs moto logged since `before` are the source's: all of them, or, when a loaded
        // moto answered late and the source hedged, all but copies dropped before they reached
        // it (hedges are not planned requests; each copy may add a round trip).
        let logged_since = |before: u64, stats: &quiver_object_store::RequestStats| {
            let logged = moto.logged("GET", key) as u64 - before;
            assert!(
                logged <= stats.requests && logged + stats.hedges >= stats.requests,
                "{logged} logged, {stats:?}"
            );
            before + logged
        };
        let opening = source.requests();
        assert_eq!(opening.requests - opening.hedges, 1, "schema: one request");
        logged_since(0, &opening);
        assert_eq!(moto.logged("HEAD", key), 0);

        let batches = remote(&source, None).await.unwrap();
        assert_batches_equal(&local(&file, None), &batches);
        let whole = source.requests();
        assert!(whole.requests - whole.hedges <= 16, "{whole:?}");
        assert!(whole.round_trips <= 2 + whole.hedges, "{whole:?}");
        let before = logged_since(0, &whole);

        // Read front to back: a first part, then the rest in parallel parts.
        let (batches, source) = self::whole(Arc::clone(&store), &Path::from(key))
            .await
            .unwrap();
        assert_batches_equal(&local(&file, None), &batches);
        let one = source.requests();
        assert!(one.round_trips <= 2 + one.hedges, "{one:?}");
        assert_eq!(one.bytes, file.len() as u64);
        let before = logged_since(before, &one);

        let source = ObjectSource::open(Arc::clone(&store), Path::from(key), Default::default())
            .await
            .unwrap();
        let batches = remote(&source, Some(&["utf8"])).await.unwrap();
        assert_batches_equal(&local(&file, Some(&["utf8"])), &batches);
        let column = source.requests();
        assert!(column.round_trips <= 2 + column.hedges, "{column:?}");
        assert!(column.requests - column.hedges <= 16, "{column:?}");
        assert!(column.bytes <= file.len() as u64);
        logged_since(before, &column);
        // A stream: one streaming GET after the opening one, into a bounded buffer (a reader
        // that reads nothing holds the GET at its read-ahead of 64 KiB, plus what the
        // sockets hold; the body of 7.8 MB is not read ahead whole).
        let stream = hundred_batch_stream();
        moto.put("100.stream", &stream);
        let source = ObjectSource::open(
            Arc::clone(&store),
            Path::from("100.stream"),
            SourceOptions::default().with_read_ahead(64 * 1024),
        )
        .await
        .unwrap();
        let mut reader = source.reader(0);
        assert_eq!(reader.peek(16).await.unwrap(), &stream[..16]);
        tokio::time::sleep(Duration::from_millis(300)).await;
        assert_eq!(
            source.requests().requests,
            1,
            "the streaming GET has not ended"
        );
        // Its bytes so far count for a progress display, not yet in the log's totals.
        let opening = source.requests().bytes;
        assert!(source.bytes_received() > opening, "{opening}");
        assert!(source.bytes_received() < stream.len() as u64);
        drop(reader);
        let source = ObjectSource::open(
            Arc::clone(&store),
            Path::from("100.stream"),
            Default::default(),
        )
        .await
        .unwrap();
        let batches = stream_batches(&source).await;
        assert_eq!(batches.len(), 100);
        // A loaded machine can make moto late enough for a copy of a request to be sent.
        let read = source.requests();
        assert_eq!(read.requests - read.hedges, 2, "{read:?}");
        assert_eq!(read.bytes, stream.len() as u64);

        println!(
            "moto: schema 1 request; whole file {whole:?}, said to be whole {one:?}; one column \
             {column:?} ({} bytes of {})",
            column.bytes,
            file.len()
        );
    });
}
