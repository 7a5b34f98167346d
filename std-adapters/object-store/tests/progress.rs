//! Requests that are slow in the ways real stores are, from a small S3-like server on loopback:
//! a body that trickles for longer than the stall timeout is read whole (it keeps arriving),
//! a body that stalls is resumed from its first missing byte, one that always stalls fails
//! saying it timed out, and late answers are hedged. Counts, never wall time: the stall timeout
//! is 300 ms so that the suite stays fast, and every assertion is on requests, hedges, retries
//! and the batches.

mod common;

use common::trips;
use object_store::ObjectStore;
use object_store::path::Path;
use quiver::array::RecordBatch;
use quiver::ipc::{AsyncFileReader, FileReader, Projection, ReaderOptions};
use quiver_object_store::{
    Hedge, NetworkMetrics, ObjectBatches, ObjectError, ObjectSource, Reading, RequestStats,
    SourceOptions,
};
use quiver_tests::equal::assert_batches_equal;
use std::collections::HashSet;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncWriteExt, BufReader};
use tokio::net::TcpListener;

/// The stall timeout of these tests.
const STALL: Duration = Duration::from_millis(300);

/// How the server answers a ranged GET.
#[derive(Clone, Copy, Debug)]
enum Mode {
    /// The body in `pieces` parts, `gap` apart (each gap under the stall timeout).
    Trickle { pieces: usize, gap: Duration },
    /// The body in parts of `piece` bytes, `gap` apart: a bandwidth.
    Paced { piece: usize, gap: Duration },
    /// The first `n` ranged GETs send half their body, then nothing.
    StallFirst(usize),
    /// Every ranged GET sends half its body, then nothing.
    StallAlways,
    /// The first `times` requests for every `every`-th distinct range wait before their
    /// answers.
    Delay { every: usize, times: usize },
}

/// What the server saw.
#[derive(Default)]
struct Seen {
    requests: AtomicUsize,
    delayed: AtomicUsize,
    starts: Mutex<Vec<String>>,
    /// Requests being answered now, and the most at once.
    answering: AtomicUsize,
    most_answering: AtomicUsize,
}

/// Serves `object` for any path with `mode`; returns its endpoint and what it saw.
async fn serve(object: Arc<Vec<u8>>, mode: Mode) -> (String, Arc<Seen>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let endpoint = format!("http://{}", listener.local_addr().unwrap());
    let seen = Arc::new(Seen::default());
    let shared = Arc::clone(&seen);
    tokio::spawn(async move {
        loop {
            let Ok((socket, _)) = listener.accept().await else {
                return;
            };
            let (object, seen) = (Arc::clone(&object), Arc::clone(&shared));
            tokio::spawn(async move {
                let (read, mut write) = socket.into_split();
                let mut read = BufReader::new(read);
                loop {
                    let Some((_, range)) = common::request_head(&mut read).await else {
                        return;
                    };
                    let n = seen.requests.fetch_add(1, Ordering::SeqCst);
                    let now = seen.answering.fetch_add(1, Ordering::SeqCst) + 1;
                    seen.most_answering.fetch_max(now, Ordering::SeqCst);
                    let _answered = Answered(&seen.answering);
                    let whole = range.is_none();
                    let range = range.unwrap_or_else(|| format!("0-{}", object.len() - 1));
                    let (start, end) = range.split_once('-').unwrap();
                    let (start, end): (usize, usize) =
                        (start.parse().unwrap(), end.parse().unwrap());
                    // A range past the end is cut at it, as HTTP servers do.
                    let end = end.min(object.len() - 1);
                    let body = &object[start..=end];
                    let status = if whole {
                        "200 OK".to_owned()
                    } else {
                        format!(
                            "206 Partial Content\r\nContent-Range: bytes {start}-{end}/{}",
                            object.len()
                        )
                    };
                    let header = format!(
                        "HTTP/1.1 {status}\r\nContent-Length: {}\r\nETag: \"q\"\r\n\
                         Last-Modified: Mon, 01 Jan 2024 00:00:00 GMT\r\n\r\n",
                        body.len(),
                    );
                    // The range's place among the distinct ranges, and its requests before.
                    let (distinct, before) = {
                        let mut starts = seen.starts.lock().unwrap();
                        let before = starts.iter().filter(|r| **r == range).count();
                        if before == 0 {
                            starts.push(range.clone());
                        }
                        let place = starts.iter().position(|r| *r == range).unwrap_or(0);
                        let distinct = starts[..=place].iter().collect::<HashSet<_>>().len();
                        if before > 0 {
                            starts.push(range.clone());
                        }
                        (distinct, before)
                    };
                    match mode {
                        Mode::Delay { every, times } if distinct % every == 0 && before < times => {
                            seen.delayed.fetch_add(1, Ordering::SeqCst);
                            tokio::time::sleep(Duration::from_secs(20)).await;
                        }
                        _ => {}
                    }
                    if write.write_all(header.as_bytes()).await.is_err() {
                        return;
                    }
                    let stall = match mode {
                        Mode::StallFirst(k) => n < k,
                        Mode::StallAlways => true,
                        _ => false,
                    };
                    if stall {
                        let _ = write.write_all(&body[..body.len() / 2]).await;
                        let _ = write.flush().await;
                        tokio::time::sleep(Duration::from_secs(20)).await;
                        return;
                    }
                    let paced = match mode {
                        Mode::Trickle { pieces, gap } => Some((body.len().div_ceil(pieces), gap)),
                        Mode::Paced { piece, gap } => Some((piece, gap)),
                        _ => None,
                    };
                    if let Some((piece, gap)) = paced {
                        for piece in body.chunks(piece.max(1)) {
                            if write.write_all(piece).await.is_err() {
                                return;
                            }
                            let _ = write.flush().await;
                            tokio::time::sleep(gap).await;
                        }
                        continue;
                    }
                    if write.write_all(body).await.is_err() {
                        return;
                    }
                }
            });
        }
    });
    (endpoint, seen)
}

/// Counts a request as answered when dropped: its body sent, or its connection gone.
struct Answered<'a>(&'a AtomicUsize);

impl Drop for Answered<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

fn store(endpoint: &str) -> Arc<dyn ObjectStore> {
    common::loopback_s3(endpoint, 2, None)
}

fn local(object: &[u8]) -> Vec<RecordBatch<'static>> {
    FileReader::open(object, ReaderOptions::default())
        .unwrap()
        .batches()
        .collect::<Result<_, _>>()
        .unwrap()
}

/// Every batch of the object at `endpoint` read whole (`ObjectSource::open_whole`), with the
/// source's counts.
async fn read_whole(
    endpoint: &str,
    path: &str,
    options: SourceOptions,
) -> (Vec<RecordBatch<'static>>, RequestStats) {
    let (source, reader) = ObjectSource::open_whole(store(endpoint), Path::from(path), options)
        .await
        .unwrap();
    let mut batches = ObjectBatches::new(reader, ReaderOptions::default())
        .await
        .unwrap();
    let mut read = Vec::new();
    while let Some(batch) = batches.next_batch().await.unwrap() {
        read.push(batch);
    }
    (read, source.requests())
}

/// The batches of `object` read by ranges through a server in `mode` (the size given, so every
/// request is a planned range), or the error, with the source's counts.
async fn read(
    object: &Arc<Vec<u8>>,
    mode: Mode,
    options: SourceOptions,
) -> (
    Result<Vec<RecordBatch<'static>>, ObjectError>,
    RequestStats,
    Arc<Seen>,
) {
    let (endpoint, seen) = serve(Arc::clone(object), mode).await;
    let options = options.with_size(object.len() as u64);
    let source = ObjectSource::open(store(&endpoint), Path::from("trips.arrow"), options)
        .await
        .unwrap();
    let result = async {
        let mut reader = AsyncFileReader::open(&source, ReaderOptions::default()).await?;
        reader.select(0..usize::MAX, source.scan_options());
        let mut batches = Vec::new();
        while let Some(batch) = reader.next_batch().await {
            batches.push(batch?);
        }
        Ok(batches)
    }
    .await;
    let result = result.map_err(|e: quiver::error::Error<ObjectError>| match e {
        quiver::error::Error::Source { error, .. } => error,
        other => panic!("not the source's error: {other}"),
    });
    (result, source.requests(), seen)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_body_that_keeps_arriving_is_never_cut() {
    let object = Arc::new(trips());
    // Each range arrives in 8 pieces 100 ms apart: 700 ms a body, beyond the 300 ms stall
    // timeout, never 300 ms without a byte.
    let mode = Mode::Trickle {
        pieces: 8,
        gap: Duration::from_millis(100),
    };
    let options = SourceOptions::default()
        .with_stall_timeout(STALL)
        .with_hedge(None);
    let (batches, stats, seen) = read(&object, mode, options).await;
    assert_batches_equal(&local(&object), &batches.unwrap());
    assert_eq!(stats.retries, 0, "{stats:?}");
    assert_eq!(stats.requests, seen.requests.load(Ordering::SeqCst) as u64);
    println!("progress: a trickled body read whole: {stats:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stalled_body_resumes_from_its_first_missing_byte() {
    let object = Arc::new(trips());
    let expected = local(&object);
    let options = SourceOptions::default()
        .with_stall_timeout(STALL)
        .with_hedge(None);
    // The first two requests stall halfway: each is asked for again from where it stopped.
    let (batches, stats, seen) = read(&object, Mode::StallFirst(2), options.clone()).await;
    assert_batches_equal(&expected, &batches.unwrap());
    assert_eq!(stats.retries, 2, "{stats:?}");
    let asked = seen.starts.lock().unwrap().clone();
    assert_eq!(stats.requests, asked.len() as u64, "{asked:?}");
    // The retry of the first request asks for its second half only.
    let (start, end) = asked[0].split_once('-').unwrap();
    let (start, end): (u64, u64) = (start.parse().unwrap(), end.parse().unwrap());
    let half = (end + 1 - start) / 2;
    assert!(
        asked.contains(&format!("{}-{end}", start + half)),
        "{asked:?}"
    );
    println!("progress: two stalls resumed: {stats:?}, ranges {asked:?}");

    // Always stalling: after the retries, the error says it timed out, with the object, the
    // range and the wait.
    let (result, stats, _) = read(&object, Mode::StallAlways, options).await;
    let error = result.unwrap_err();
    assert!(matches!(error, ObjectError::TimedOut { .. }), "{error:?}");
    let text = error.to_string();
    assert!(
        text.starts_with("timed out: no byte of `trips.arrow` bytes "),
        "{text}"
    );
    assert!(text.contains("for 300ms, 4 times"), "{text}");
    assert_eq!(stats.retries, 3, "{stats:?}");
    println!("progress: {text}");
}

/// Every request the source counted reached the server, but the copies that lost, which may
/// have been dropped before they were sent.
fn sent_or_dropped(stats: &RequestStats, seen: &Seen) {
    let reached = seen.requests.load(Ordering::SeqCst) as u64;
    assert!(
        reached <= stats.requests && stats.requests - reached <= stats.hedges,
        "{stats:?}, {reached} reached the server"
    );
}

/// Hedging after 200 ms (the usual first byte here is well under it), stalls after 10 s.
fn hedging() -> SourceOptions {
    let hedge = Hedge::default()
        .with_multiple(1)
        .with_floor(Duration::from_millis(200));
    SourceOptions::default()
        .with_stall_timeout(Duration::from_secs(10))
        .with_hedge(Some(hedge))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn late_answers_are_hedged() {
    let object = Arc::new(trips());
    let options = hedging();
    // Every other range late once: one copy each. Late twice: a second copy, as late as the
    // first.
    for times in [1, 2] {
        let mode = Mode::Delay { every: 2, times };
        let (batches, stats, seen) = read(&object, mode, options.clone()).await;
        assert_batches_equal(&local(&object), &batches.unwrap());
        let delayed = seen.delayed.load(Ordering::SeqCst) as u64;
        assert!(delayed > 0);
        // Each delayed request was sent again; the answer to a copy won.
        assert!(stats.hedges >= delayed, "{stats:?}, {delayed} delayed");
        sent_or_dropped(&stats, &seen);
        assert_eq!(stats.retries, 0, "{stats:?}");
        println!("progress: {delayed} late answers hedged ({times} a range): {stats:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_late_opening_is_hedged_with_two_copies() {
    // Every range's first request late, the opening's too: the opening is the source's only
    // request, so it is sent again once late, though nothing has overtaken it, and the first
    // time a request is sent again, two copies go at once.
    let object = Arc::new(trips());
    let options = hedging();
    let (endpoint, seen) = serve(Arc::clone(&object), Mode::Delay { every: 1, times: 1 }).await;
    let (batches, stats) = read_whole(&endpoint, "trips.arrow", options).await;
    assert_batches_equal(&local(&object), &batches);
    let delayed = seen.delayed.load(Ordering::SeqCst) as u64;
    let asked = seen.starts.lock().unwrap().clone();
    assert!(delayed >= 1, "{asked:?}");
    // The opening's range asked for again, twice at once (the copy that lost may be dropped
    // before it reaches the server).
    let opening = asked.iter().filter(|r| **r == asked[0]).count();
    assert!((2..=3).contains(&opening), "{asked:?}");
    assert!(stats.hedges >= 2 * delayed, "{stats:?}, {delayed} delayed");
    sent_or_dropped(&stats, &seen);
    println!("progress: a late opening hedged: {stats:?}, ranges {asked:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_whole_read_resumes_after_a_stall_and_is_never_cut() {
    let object = Arc::new(trips());
    let expected = local(&object);
    let trickle = Mode::Trickle {
        pieces: 8,
        gap: Duration::from_millis(100),
    };
    for (mode, retries) in [(Mode::StallFirst(1), 1), (trickle, 0)] {
        let (endpoint, seen) = serve(Arc::clone(&object), mode).await;
        let options = SourceOptions::default().with_stall_timeout(STALL);
        let (read, stats) = read_whole(&endpoint, "trips.arrow", options).await;
        assert_batches_equal(&expected, &read);
        assert_eq!(stats.retries, retries, "{mode:?}: {stats:?}");
        assert_eq!(stats.requests, 1 + retries, "{mode:?}: {stats:?}");
        assert_eq!(
            stats.bytes,
            object.len() as u64,
            "every byte once: {stats:?}"
        );
        let asked = seen.starts.lock().unwrap().clone();
        assert_eq!(asked.len() as u64, 1 + retries, "{asked:?}");
        if retries == 1 {
            // The GET of the whole object stalled halfway: the rest, from its first missing byte.
            let half = object.len() / 2;
            assert_eq!(
                asked[1],
                format!("{half}-{}", object.len() - 1),
                "{asked:?}"
            );
        }
        println!("progress: a whole read, {mode:?}: {stats:?}");
    }
}

/// A whole read in parts sends each part's successor before the part has ended (a
/// bandwidth-delay product ahead of its end), so the bytes keep flowing instead of stopping for
/// a first byte every window: more requests are being answered at once than the window's
/// parts, and never more than three times them (and the first part).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_whole_read_sends_each_parts_successor_before_it_ends() {
    let object = Arc::new(common::hundred_batches());
    let trickle = Mode::Trickle {
        pieces: 4,
        gap: Duration::from_millis(50),
    };
    let (endpoint, seen) = serve(Arc::clone(&object), trickle).await;
    let network = NetworkMetrics::default().with_time_to_first_byte(Duration::from_millis(50));
    let window = 2 * 1024 * 1024;
    let options = SourceOptions::default()
        .with_network(network)
        .with_window(window)
        .with_stall_timeout(Duration::from_secs(10));
    let model = network.model(options.max_in_flight);
    let first = network.first_part();
    let part = model.part_size(object.len() as u64 - first, window);
    let in_flight = model.in_flight_for(part, window) as usize;
    assert!(part <= model.bandwidth_delay(), "{part}");
    assert!(
        in_flight > 1 && object.len() as u64 - first > 2 * window,
        "{in_flight}"
    );
    let (read, stats) = read_whole(&endpoint, "hundred.arrow", options).await;
    assert_batches_equal(&local(&object), &read);
    let parts = (object.len() as u64 - first).div_ceil(part);
    assert_eq!(
        (stats.requests, stats.bytes),
        (1 + parts, object.len() as u64)
    );
    let most = seen.most_answering.load(Ordering::SeqCst);
    println!("parts of {part}, {in_flight} in flight: at most {most} answered at once");
    assert!(
        most > 1 + in_flight,
        "{most} answered at once, {in_flight} in flight"
    );
    assert!(
        most <= 1 + 3 * in_flight,
        "{most} answered at once, {in_flight} in flight"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_scans_head_is_cut_once_the_scan_moves_past_it() {
    // One column of a file of 4 blocks of about 1.5 MB, every body in pieces of 16 KiB 5 ms
    // apart (the head of 1 MiB would take 320 ms). The planner counts the head's bytes as
    // held, so it learns where the buffers lie from the first block's metadata, which costs
    // no request, rather than reading every block's metadata first: it reads the first block's
    // metadata and `i32` buffers from the head, then asks for each other block's metadata and
    // predicted buffers, past it. The head is cut once it has brought what was asked of it,
    // not read to its end.
    let object = Arc::new(quiver_tests::ten_columns::file(
        4,
        20_000,
        Default::default(),
    ));
    let mode = Mode::Paced {
        piece: 16 * 1024,
        gap: Duration::from_millis(5),
    };
    let (endpoint, seen) = serve(Arc::clone(&object), mode).await;
    let head = 1 << 20;
    // A network where bytes cost more than requests, so that the blocks are read as metadata
    // and buffers; the size given (this server has no suffix ranges): the footer is a ranged
    // GET.
    let network = NetworkMetrics::default()
        .with_time_to_first_byte(Duration::from_millis(50))
        .with_bandwidth(4 << 20)
        .with_total_bandwidth(4 << 20);
    let options = SourceOptions::default()
        .with_network(network)
        .with_size(object.len() as u64)
        .with_head(head)
        .with_hedge(None);
    let path = Path::from("4.arrow");
    let (source, _) = ObjectSource::open_for(store(&endpoint), path, options, Reading::Scan)
        .await
        .unwrap();
    let mut reader = AsyncFileReader::open(&source, ReaderOptions::default())
        .await
        .unwrap();
    let column = Projection::from_paths(reader.schema(), &["i32"]).unwrap();
    reader.set_projection(column);
    reader.select(0..usize::MAX, source.scan_options());
    let mut batches = Vec::new();
    while let Some(batch) = reader.next_batch().await {
        batches.push(batch.unwrap());
    }
    assert_batches_equal(&common::local(&object, Some(&["i32"])), &batches);
    let stats = source.requests();
    let ranges = seen.starts.lock().unwrap().clone();
    println!("progress: a scan's head cut: {stats:?}, ranges {ranges:?}");
    // The footer, the head, one request for each other block, in two round trips.
    assert_eq!(stats.requests, 1 + 1 + 3, "{stats:?}");
    assert!(stats.round_trips <= 3, "{stats:?}");
    assert_eq!(stats.requests, seen.requests.load(Ordering::SeqCst) as u64);
    // The footer, the blocks' metadata and `i32` buffers, and what the head brought: less
    // than half the head alone would have been.
    assert!(stats.bytes < head / 2, "{stats:?}");
}
