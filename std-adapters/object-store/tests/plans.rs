//! The plans the cost model picks (`quiver::cost`, `ScanOptions::network`), seen as what a
//! store receives: the requests, their ranges and bytes for each kind of read, on networks
//! of different figures. Counts only, never wall time.

mod common;

use common::{Counted, hundred_batches, local, put, trips};
use object_store::memory::InMemory;
use object_store::path::Path;
use object_store::{GetRange, ObjectStore};
use quiver::ipc::{AsyncFileReader, FileReader, Projection, ReaderOptions};
use quiver::source::AsyncRandomAccess;
use quiver_object_store::{
    NetworkMetrics, ObjectBatches, ObjectSource, Reading, RequestStats, SourceOptions,
};
use quiver_tests::equal::assert_batches_equal;
use std::sync::Arc;
use std::time::Duration;

const MIB: u64 = 1024 * 1024;

/// The bytes of column `column`'s own buffers (its children's included) in every batch.
fn column_bytes(file: &[u8], column: usize) -> u64 {
    local(file, None)
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
        .sum()
}

/// Reads `paths` (every column when `None`) of the object `path` through `store` with
/// `options`, opened for `reading`, checks the batches against a local read, and returns the
/// requests.
async fn read(
    store: Arc<dyn ObjectStore>,
    path: &Path,
    file: &[u8],
    paths: Option<&[&str]>,
    (options, reading): (SourceOptions, Reading),
) -> RequestStats {
    let (source, _) = ObjectSource::open_for(store, path.clone(), options, reading)
        .await
        .unwrap();
    let mut reader = AsyncFileReader::open(&source, ReaderOptions::default())
        .await
        .unwrap();
    if let Some(paths) = paths {
        reader.set_projection(Projection::from_paths(reader.schema(), paths).unwrap());
    }
    reader.select(0..usize::MAX, source.scan_options());
    let mut batches = Vec::new();
    while let Some(batch) = reader.next_batch().await {
        batches.push(batch.unwrap());
    }
    assert_batches_equal(&local(file, paths), &batches);
    source.requests()
}

/// S3 as the model's defaults have it, the time to first byte given (not measured).
fn s3() -> SourceOptions {
    SourceOptions::default()
        .with_network(NetworkMetrics::default().with_time_to_first_byte(Duration::from_millis(50)))
}

/// A network where bytes cost more than requests: 4 MiB/s, 1 ms a request.
fn thin() -> SourceOptions {
    let network = NetworkMetrics::default()
        .with_time_to_first_byte(Duration::from_millis(50))
        .with_bandwidth(4 * MIB)
        .with_total_bandwidth(4 * MIB)
        .with_request_cost(Duration::from_millis(1));
    SourceOptions::default().with_network(network)
}

/// The bytes of the GETs' ranges after the opening one, and their count.
fn ranged(counted: &Counted) -> Vec<std::ops::Range<u64>> {
    let ranges = counted.ranges.lock().unwrap();
    ranges
        .iter()
        .filter_map(|r| match r {
            Some(GetRange::Bounded(r)) => Some(r.clone()),
            _ => None,
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_column_of_a_small_file_is_read_whole_in_a_few_parts() {
    let file = hundred_batches();
    let memory: Arc<dyn ObjectStore> = Arc::new(InMemory::new());
    let path = put(&*memory, "100.arrow", &file).await;
    // On S3's figures, the 7.8 MB file's 100 blocks are cheaper read whole, in parts side by
    // side, than block metadata and then buffers (201 requests before the model).
    for column in ["f64", "bool"] {
        let counted = Counted::new(Arc::clone(&memory), Duration::ZERO);
        let stats = read(
            counted.clone(),
            &path,
            &file,
            Some(&[column]),
            (s3(), Reading::Peek),
        )
        .await;
        // In file order (each GET is a task of its own: they reach the store in any order).
        let mut parts = ranged(&counted);
        parts.sort_by_key(|p| p.start);
        println!("{column}: {stats:?}, parts {parts:?}");
        assert!(stats.requests <= 16, "{stats:?}");
        assert_eq!(stats.requests, counted.gets());
        // The opening brought the last 64 KiB; parts of 512 KiB cover the rest once (the
        // first from offset 0, for the leading magic).
        assert_eq!(stats.bytes, file.len() as u64);
        assert_eq!(parts.len(), 15, "{parts:?}");
        assert!(
            parts[1..].iter().all(|p| p.end - p.start <= MIB / 2),
            "{parts:?}"
        );
    }
    // Every column: the same parts.
    let counted = Counted::new(Arc::clone(&memory), Duration::ZERO);
    let stats = read(counted.clone(), &path, &file, None, (s3(), Reading::Peek)).await;
    assert!(stats.requests <= 16, "{stats:?}");
    assert_eq!(stats.bytes, file.len() as u64);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_a_thin_network_metadata_and_predicted_buffers_are_read_together() {
    let file = hundred_batches();
    let memory: Arc<dyn ObjectStore> = Arc::new(InMemory::new());
    let path = put(&*memory, "100.arrow", &file).await;
    let reader = FileReader::open(file.as_slice(), ReaderOptions::default()).unwrap();
    let metadata: u64 = reader
        .record_batch_blocks()
        .iter()
        .map(|b| b.meta_data_length as u64)
        .sum();

    // "i32" is the first column: its buffers start each body, right after the metadata. The
    // first block is read as metadata, then buffers; each other block is then ONE request of
    // its metadata and the buffers predicted from the first, all 99 in one wave. Each request
    // waits 10 ms, so that a wave's requests overlap however the threads are scheduled: with
    // none, one that ends before another of its wave starts counts as a round trip more (a
    // busy machine once saw 5).
    let counted = Counted::new(Arc::clone(&memory), Duration::from_millis(10));
    let stats = read(
        counted.clone(),
        &path,
        &file,
        Some(&["i32"]),
        (thin(), Reading::Peek),
    )
    .await;
    let needed = column_bytes(&file, 0) + metadata;
    println!("i32: {stats:?}, needed {needed}");
    assert_eq!(stats.requests, 1 + 2 + 99, "{stats:?}");
    assert!(stats.round_trips <= 4, "{stats:?}");
    // The prediction is widened by the difference of the bodies' lengths: a little more.
    assert!(
        stats.bytes <= 64 * 1024 + needed * 11 / 10,
        "{stats:?}, needed {needed}"
    );

    // "f64" lies after two fixed-width columns: metadata and buffers are two ranges a block,
    // 198 in all, more than the 128 requests a wave may send. The model reads the gap
    // between them through where it costs least, just enough to stay within the cap.
    let counted = Counted::new(Arc::clone(&memory), Duration::ZERO);
    let stats = read(
        counted.clone(),
        &path,
        &file,
        Some(&["f64"]),
        (thin(), Reading::Peek),
    )
    .await;
    let needed = column_bytes(&file, 2) + metadata;
    println!("f64: {stats:?}, needed {needed}");
    let waves = ranged(&counted);
    assert!(stats.requests <= 1 + 2 + 128 + 2, "{stats:?} {waves:?}");
    assert!(stats.bytes < file.len() as u64 / 4, "{stats:?}");

    // "bool" follows a string column whose length varies: the prediction is widened by the
    // difference of the bodies' lengths and may still miss; what it missed is read once the
    // metadata says where it is. Within the cap again, and a fraction of the file.
    let counted = Counted::new(Arc::clone(&memory), Duration::ZERO);
    let stats = read(
        counted.clone(),
        &path,
        &file,
        Some(&["bool"]),
        (thin(), Reading::Peek),
    )
    .await;
    println!("bool: {stats:?}");
    assert!(stats.requests <= 1 + 2 + 2 * 128, "{stats:?}");
    assert!(stats.bytes < file.len() as u64 / 2, "{stats:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_scan_reads_the_file_start_with_its_end() {
    let file = hundred_batches();
    let memory: Arc<dyn ObjectStore> = Arc::new(InMemory::new());
    let path = put(&*memory, "100.arrow", &file).await;
    // Each request waits 10 ms, so that the round trips are counted as they are sent.
    let delay = Duration::from_millis(10);

    // S3's figures: the 7.8 MB file is read whole in parts. Its first 3.2 MiB (a whole read's
    // first part) come with the suffix GET; the rest is 9 parts of 512 KiB, 11 requests in
    // all (16 when opened for a peek, above), every byte read once.
    let counted = Counted::new(Arc::clone(&memory), delay);
    let scan = (s3(), Reading::Scan);
    let stats = read(counted.clone(), &path, &file, Some(&["f64"]), scan).await;
    let head = NetworkMetrics::default().first_part();
    let parts = ranged(&counted);
    println!("f64, scan: {stats:?}, parts {parts:?}");
    assert_eq!((stats.requests, stats.bytes), (11, file.len() as u64));
    assert!(stats.round_trips <= 3, "{stats:?}");
    assert!(parts.contains(&(0..head)), "{parts:?}");
    assert!(
        parts.iter().all(|p| *p == (0..head) || p.start >= head),
        "{parts:?}"
    );

    // A thin network, one column: the first block's metadata and buffers come with the
    // opening (the head given: 64 KiB), so the waves that learn where the buffers lie go,
    // and every other block is one request of its metadata and predicted buffers:
    // 1 + 1 + 99 requests in 2 round trips (1 + 2 + 99 in 3 when opened for a peek).
    let counted = Counted::new(Arc::clone(&memory), delay);
    let scan = (thin().with_head(64 * 1024), Reading::Scan);
    let stats = read(counted.clone(), &path, &file, Some(&["i32"]), scan).await;
    println!("i32, scan: {stats:?}");
    assert_eq!(stats.requests, 1 + 1 + 99, "{stats:?}");
    assert!(stats.round_trips <= 3, "{stats:?}");

    // The size given (as a listing gives it) and the object within the head: ONE GET of all
    // of it, footer and all, no suffix GET.
    let trips = trips();
    let path = put(&*memory, "trips.arrow", &trips).await;
    let counted = Counted::new(Arc::clone(&memory), delay);
    let sized = (s3().with_size(trips.len() as u64), Reading::Scan);
    let stats = read(counted.clone(), &path, &trips, Some(&["city"]), sized).await;
    assert_eq!(
        (stats.requests, stats.bytes),
        (1, trips.len() as u64),
        "{stats:?}"
    );
    let ranges = ranged(&counted);
    assert_eq!(ranges.len(), 1, "{ranges:?}");
    assert_eq!(ranges[0], 0..NetworkMetrics::default().first_part());
}

/// Every batch of `path` read front to back through `open_whole` with `options`, the
/// batches checked against a local read; checks after each batch that the bytes received
/// and not yet decoded stay within `bound`. Returns the source's requests.
async fn whole(
    store: Arc<dyn ObjectStore>,
    path: &Path,
    file: &[u8],
    options: SourceOptions,
    bound: u64,
) -> RequestStats {
    let (source, reader) = ObjectSource::open_whole(store, path.clone(), options)
        .await
        .unwrap();
    let mut reader = ObjectBatches::new(reader, ReaderOptions::default())
        .await
        .unwrap();
    let mut batches = Vec::new();
    let mut most = 0;
    while let Some(batch) = reader.next_batch().await.unwrap() {
        batches.push(batch);
        // A slow reader: the parts would pile up if nothing held them back.
        tokio::time::sleep(Duration::from_millis(2)).await;
        let buffered = source.bytes_received() - reader.position();
        most = most.max(buffered);
        assert!(
            buffered <= bound,
            "{buffered} bytes buffered, bound {bound}"
        );
    }
    println!("most buffered: {most} bytes, bound {bound}");
    assert_batches_equal(&local(file, None), &batches);
    assert_eq!(source.len(), file.len() as u64);
    source.requests()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_whole_read_is_parallel_parts_in_order_within_its_window() {
    let file = quiver_tests::ten_columns::file(100, 2000, Default::default());
    let memory: Arc<dyn ObjectStore> = Arc::new(InMemory::new());
    let path = put(&*memory, "large.arrow", &file).await;
    let size = file.len() as u64;
    assert!(size > 14 * MIB, "{size}");

    // S3's figures, a window of 2 MiB and 1 MiB of read-ahead: a first part of the
    // bandwidth-delay product (3.2 MiB at 50 ms and 64 MiB/s), then the rest in parts of the
    // model's size, as many in flight as the window holds.
    let (window, read_ahead) = (2 * MIB, MIB as usize);
    let options = s3().with_window(window).with_read_ahead(read_ahead);
    let first = options.network.first_part();
    assert_eq!(first, 64 * MIB / 20);
    let model = options.network.model(options.max_in_flight);
    let part = model.part_size(size - first, window);
    let in_flight = model.in_flight_for(part, window);
    println!("first part {first}, then parts of {part}, {in_flight} in flight");
    assert!(part < size - first && in_flight > 1, "{part} {in_flight}");

    let counted = Counted::new(Arc::clone(&memory), Duration::from_millis(5));
    // Held at most: the parts in flight, their successors sent ahead of their ends and room
    // for parts behind a late one (three times the window, with a reader this slow), a chunk
    // of the first part (a store may send it as one) and the read-ahead.
    let bound = 3 * window + first + read_ahead as u64;
    assert!(bound < size * 3 / 4);
    let stats = whole(counted.clone(), &path, &file, options, bound).await;
    // Every byte once: the parts tile the object in order.
    let mut parts = ranged(&counted);
    parts.sort_by_key(|r| r.start);
    assert_eq!(parts[0], 0..first);
    for pair in parts.windows(2) {
        assert_eq!(pair[0].end, pair[1].start, "{parts:?}");
    }
    assert_eq!(parts.last().unwrap().end, size);
    assert_eq!(
        stats.requests,
        1 + (size - first).div_ceil(part),
        "{stats:?}"
    );
    assert_eq!(stats.bytes, size);
    assert_eq!(counted.heads(), 0);

    // An object within the first part: ONE request, as before.
    let trips = std::fs::read(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/data/trips.arrow"),
    )
    .unwrap();
    let path = put(&*memory, "trips.arrow", &trips).await;
    let counted = Counted::new(Arc::clone(&memory), Duration::ZERO);
    let stats = whole(counted.clone(), &path, &trips, s3(), u64::MAX).await;
    assert_eq!((stats.requests, stats.bytes), (1, trips.len() as u64));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_first_batches_come_with_the_footer() {
    let file = hundred_batches();
    let memory: Arc<dyn ObjectStore> = Arc::new(InMemory::new());
    let path = put(&*memory, "100.arrow", &file).await;
    let all = local(&file, None);
    // Each request waits 10 ms, so that the round trips are counted as they are sent.
    let delay = Duration::from_millis(10);
    // `--batches 0..2` or `--limit`: the object's start read with its end; batches after the
    // first, or no rows, a peek (the end, then what the reader asks for).
    assert_eq!(Reading::of(true, Some(&(0..2)), None), Reading::First);
    assert_eq!(Reading::of(false, None, Some(10)), Reading::First);
    assert_eq!(Reading::of(false, None, None), Reading::Scan);
    assert_eq!(Reading::of(true, None, None), Reading::Whole);
    assert_eq!(Reading::of(true, None, Some(0)), Reading::Peek);
    assert_eq!(Reading::of(true, Some(&(50..52)), None), Reading::Peek);
    assert_eq!(Reading::of(true, Some(&(0..0)), None), Reading::Peek);
    for (batches, requests, round_trips) in [(0..2, 2, 1), (50..52, 3, 2)] {
        let counted = Counted::new(Arc::clone(&memory), delay);
        let reading = Reading::of(true, Some(&batches), None);
        let (source, _) = ObjectSource::open_for(counted.clone(), path.clone(), s3(), reading)
            .await
            .unwrap();
        let mut reader = AsyncFileReader::open(&source, ReaderOptions::default())
            .await
            .unwrap();
        reader.select(batches.clone(), source.scan_options());
        let mut read = Vec::new();
        while let Some(batch) = reader.next_batch().await {
            read.push(batch.unwrap());
        }
        assert_batches_equal(&all[batches.clone()], &read);
        let stats = source.requests();
        println!("batches {batches:?}: {stats:?}");
        // The first two blocks (156 KB) lie within the head's 3.2 MiB (all of it here, come
        // before the scan is done with it; a far store's is cut once the scan moves on).
        assert_eq!(
            (stats.requests, stats.round_trips),
            (requests, round_trips),
            "{batches:?}: {stats:?}"
        );
        assert!(stats.bytes <= NetworkMetrics::default().first_part() + 64 * 1024);
    }
}
