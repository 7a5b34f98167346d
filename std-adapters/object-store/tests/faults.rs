//! Faults between the reader and the store, injected by a small S3-like server on loopback:
//! failed and reset requests are retried and the read succeeds; a truncated body, a `200` for a
//! ranged GET and a server that stalls are clear errors. The batches are never wrong: each read
//! either equals the local one or fails.

mod common;

use common::trips;
use object_store::ObjectStore;
use object_store::path::Path;
use quiver::array::RecordBatch;
use quiver::ipc::{AsyncFileReader, AsyncStreamReader, FileReader, ReaderOptions};
use quiver_object_store::{ObjectBatches, ObjectSource, SourceOptions};
use quiver_tests::equal::assert_batches_equal;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;
use tokio::io::{AsyncWriteExt, BufReader};
use tokio::net::TcpListener;

/// What the server does wrong.
#[derive(Clone, Copy, Debug)]
enum Fault {
    /// The first `n` requests are answered 503.
    Unavailable(usize),
    /// The first `n` connections are closed without an answer.
    Reset(usize),
    /// Every body stops halfway.
    Truncate,
    /// Bodies longer than this many bytes stop halfway.
    TruncateOver(usize),
    /// Bodies longer than this many bytes stop halfway, their connections closed 300 ms later.
    TruncateLateOver(usize),
    /// Ranged GETs are answered 200 with the whole object.
    IgnoreRange,
    /// Requests after the first are never answered.
    Stall,
}

/// Serves `object` for any path, with `fault`; returns its endpoint and its request count.
async fn serve(object: Arc<Vec<u8>>, fault: Fault) -> (String, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let endpoint = format!("http://{}", listener.local_addr().unwrap());
    let requests = Arc::new(AtomicUsize::new(0));
    let count = Arc::clone(&requests);
    tokio::spawn(async move {
        loop {
            let Ok((socket, _)) = listener.accept().await else {
                return;
            };
            let (object, count) = (Arc::clone(&object), Arc::clone(&count));
            tokio::spawn(async move {
                let (read, mut write) = socket.into_split();
                let mut read = BufReader::new(read);
                loop {
                    let Some((line, range)) = common::request_head(&mut read).await else {
                        return;
                    };
                    let head = line.starts_with("HEAD");
                    let n = count.fetch_add(1, Ordering::SeqCst);
                    let answer = respond(&object, head, range.as_deref(), fault, n);
                    match answer {
                        None => return, // reset
                        Some((header, body, cut)) => {
                            if matches!(fault, Fault::Stall) && n > 0 {
                                tokio::time::sleep(Duration::from_secs(3600)).await;
                            }
                            if write.write_all(header.as_bytes()).await.is_err()
                                || write.write_all(&body).await.is_err()
                            {
                                return;
                            }
                            if cut {
                                if let Fault::TruncateLateOver(_) = fault {
                                    tokio::time::sleep(Duration::from_millis(300)).await;
                                }
                                return; // the body was cut: close
                            }
                        }
                    }
                }
            });
        }
    });
    (endpoint, requests)
}

/// The answer to request `n`: status line and headers, body, and whether the body was cut
/// (`None`: close instead).
fn respond(
    object: &[u8],
    head: bool,
    range: Option<&str>,
    fault: Fault,
    n: usize,
) -> Option<(String, Vec<u8>, bool)> {
    let len = object.len();
    let meta = "Last-Modified: Mon, 01 Jan 2024 00:00:00 GMT\r\nETag: \"quiver\"\r\n";
    match fault {
        Fault::Unavailable(k) if n < k => {
            return Some((
                "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\n\r\n".into(),
                Vec::new(),
                false,
            ));
        }
        Fault::Reset(k) if n < k => return None,
        _ => {}
    }
    if head || range.is_none() || matches!(fault, Fault::IgnoreRange) {
        let header = format!("HTTP/1.1 200 OK\r\nContent-Length: {len}\r\n{meta}\r\n");
        let body = if head { Vec::new() } else { object.to_vec() };
        return Some(cut(fault, header, body));
    }
    let (start, end) = range?.split_once('-')?;
    let (start, end) = match (start.parse::<usize>().ok(), end.parse::<usize>().ok()) {
        (None, Some(suffix)) => (len.saturating_sub(suffix), len - 1),
        (Some(start), Some(end)) => (start, end.min(len - 1)),
        (Some(start), None) => (start, len - 1),
        (None, None) => return None,
    };
    let body = object.get(start..=end)?.to_vec();
    let header = format!(
        "HTTP/1.1 206 Partial Content\r\nContent-Length: {}\r\nContent-Range: bytes {start}-{end}/{len}\r\n{meta}\r\n",
        body.len()
    );
    Some(cut(fault, header, body))
}

/// The answer with its body cut halfway if `fault` cuts it.
fn cut(fault: Fault, header: String, mut body: Vec<u8>) -> (String, Vec<u8>, bool) {
    let cut = match fault {
        Fault::Truncate => !body.is_empty(),
        Fault::TruncateOver(limit) | Fault::TruncateLateOver(limit) => body.len() > limit,
        _ => false,
    };
    if cut {
        body.truncate(body.len() / 2);
    }
    (header, body, cut)
}

fn store(endpoint: &str) -> Arc<dyn ObjectStore> {
    common::loopback_s3(endpoint, 3, Some(Duration::from_secs(1)))
}

/// The batches read through `fault` by ranges, or front to back through one GET
/// (`in_order`), or the error, as text.
async fn read(
    object: &Arc<Vec<u8>>,
    fault: Fault,
    in_order: bool,
) -> (Result<Vec<RecordBatch<'static>>, String>, usize) {
    let (endpoint, requests) = serve(Arc::clone(object), fault).await;
    let result = async {
        let (store, path) = (store(&endpoint), Path::from("trips.arrow"));
        let mut batches = Vec::new();
        let source = if in_order {
            let (mut source, reader) =
                ObjectSource::open_whole(store, path, SourceOptions::default())
                    .await
                    .map_err(|e| e.to_string())?;
            let opened = ObjectBatches::of_whole(&mut source, reader, ReaderOptions::default());
            // A file whose stream does not start as one: held, then read by ranges.
            if let Some(mut reader) = opened.await.map_err(|e| e.to_string())? {
                while let Some(batch) = reader.next_batch().await.map_err(|e| e.to_string())? {
                    batches.push(batch);
                }
                return Ok(batches);
            }
            source
        } else {
            ObjectSource::open(store, path, SourceOptions::default())
                .await
                .map_err(|e| e.to_string())?
        };
        let mut reader = AsyncFileReader::open(&source, ReaderOptions::default())
            .await
            .map_err(|e| e.to_string())?;
        reader.select(0..usize::MAX, source.scan_options());
        while let Some(batch) = reader.next_batch().await {
            batches.push(batch.map_err(|e| e.to_string())?);
        }
        Ok(batches)
    }
    .await;
    (result, requests.load(Ordering::SeqCst))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn transient_failures_are_retried_and_others_are_clear_errors() {
    let object = Arc::new(trips());
    let expected: Vec<_> = FileReader::open(object.as_slice(), ReaderOptions::default())
        .unwrap()
        .batches()
        .collect::<Result<_, _>>()
        .unwrap();
    // Read front to back, a file whose stream does not start as one (as polars writes it) is
    // held from its GET, then read by ranges from memory: the same faults, the same outcomes.
    let polars = Arc::new(quiver_tests::polars_like(&object));
    let reads = [(&object, false), (&object, true), (&polars, true)];
    for (object, in_order) in reads {
        for fault in [Fault::Unavailable(2), Fault::Reset(2)] {
            let (batches, requests) = read(object, fault, in_order).await;
            let batches = batches.unwrap_or_else(|e| panic!("{fault:?}: {e}"));
            assert_batches_equal(&expected, &batches);
            assert!(requests > 2, "{fault:?}: {requests} requests, retried");
            println!(
                "faults: {fault:?} (in order: {in_order}) retried, {requests} requests, the same \
                 batches"
            );
        }
        // Front to back is one GET, which asks for no range (a 200 is the right answer) and
        // is the first request (the stalled server answers it).
        let ranged = [(Fault::IgnoreRange, "non-partial"), (Fault::Stall, "")];
        let ranged = ranged.into_iter().filter(|_| !in_order);
        for (fault, says) in [(Fault::Truncate, "")].into_iter().chain(ranged) {
            let (batches, requests) = read(object, fault, in_order).await;
            let Err(error) = batches else {
                panic!("{fault:?} (in order: {in_order}): read whole after {requests} requests")
            };
            assert!(error.contains(says), "{fault:?}: {error}");
            println!("faults: {fault:?} (in order: {in_order}) after {requests} requests: {error}");
        }
    }
    // The one GET of the object (172 KB) is cut halfway: object_store asks again for the bytes
    // it lacks (not cut: under 100 KiB), and the batches are the same.
    assert_eq!(object.len(), 171_994);
    for object in [&object, &polars] {
        let (batches, requests) = read(object, Fault::TruncateOver(100 * 1024), true).await;
        let batches = batches.unwrap_or_else(|e| panic!("a cut streaming GET resumed: {e}"));
        assert_batches_equal(&expected, &batches);
        assert_eq!(requests, 2, "the GET cut at 85,997 bytes, then the rest");
    }
    println!("faults: the streaming GET cut and resumed, 2 requests, the same batches");
}

/// The batches of the stream `object` read through `fault` (its size given, so the one request
/// is the streaming GET), or the error, as text.
async fn read_stream(
    object: &Arc<Vec<u8>>,
    fault: Fault,
) -> (Result<Vec<RecordBatch<'static>>, String>, usize) {
    let (endpoint, requests) = serve(Arc::clone(object), fault).await;
    let result = async {
        // Not hedged: the store's client retrying behind a late answer is not a late answer,
        // and the counts here are the retries'.
        let options = SourceOptions::default()
            .with_size(object.len() as u64)
            .with_hedge(None);
        let source = ObjectSource::open(store(&endpoint), Path::from("trips.stream"), options)
            .await
            .map_err(|e| e.to_string())?;
        let mut reader = AsyncStreamReader::new(source.reader(0), ReaderOptions::default())
            .await
            .map_err(|e| e.to_string())?;
        let mut batches = Vec::new();
        while let Some(batch) = reader.next_batch().await.map_err(|e| e.to_string())? {
            batches.push(batch);
        }
        Ok(batches)
    }
    .await;
    (result, requests.load(Ordering::SeqCst))
}

/// The batches of `trips.arrow`, and a stream of them.
fn trips_stream() -> (Vec<RecordBatch<'static>>, Arc<Vec<u8>>) {
    let file = trips();
    let batches: Vec<_> = FileReader::open(file.as_slice(), ReaderOptions::default())
        .unwrap()
        .batches()
        .collect::<Result<_, _>>()
        .unwrap();
    let schema = batches[0].schema().clone();
    let mut writer =
        quiver::ipc::StreamWriter::new(Vec::new(), schema, Default::default()).unwrap();
    for batch in &batches {
        writer.write(batch).unwrap();
    }
    writer.finish().unwrap();
    (batches, Arc::new(writer.into_inner()))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_streaming_get_is_retried_or_fails_never_shorter() {
    let (expected, object) = trips_stream();
    for fault in [Fault::Unavailable(2), Fault::Reset(2)] {
        let (batches, requests) = read_stream(&object, fault).await;
        let batches = batches.unwrap_or_else(|e| panic!("{fault:?}: {e}"));
        assert_batches_equal(&expected, &batches);
        assert_eq!(requests, 3, "{fault:?}: two failures, then the GET");
    }
    // (A stall needs a second request; the stream's GET is the only one.)
    let (batches, requests) = read_stream(&object, Fault::Truncate).await;
    let error = match batches {
        Ok(batches) => panic!("a body cut short read as {} batches", batches.len()),
        Err(error) => error,
    };
    assert!(error.contains("body"), "{error}");
    println!("faults: stream, Truncate after {requests} requests: {error}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_whose_head_fails_asks_for_its_bytes_again() {
    let (expected, object) = trips_stream();
    // The head's body (128 KiB) stops halfway, after the stream's reader started on it, and
    // the client does not retry it; every other answer is within the limit.
    let (head, tail) = (128 * 1024, 16 * 1024);
    assert!(object.len() > head + tail && object.len() - head - tail < 100_000);
    let (endpoint, requests) = serve(Arc::clone(&object), Fault::TruncateLateOver(100_000)).await;
    let options = SourceOptions::default()
        .with_head(head as u64)
        .with_tail(tail as u64)
        .with_hedge(None);
    let store = common::loopback_s3(&endpoint, 0, Some(Duration::from_secs(1)));
    let source = ObjectSource::open(store, Path::from("trips.stream"), options)
        .await
        .unwrap();
    let mut reader = AsyncStreamReader::new(source.reader(0), ReaderOptions::default())
        .await
        .unwrap();
    let mut batches = Vec::new();
    while let Some(batch) = reader.next_batch().await.unwrap() {
        batches.push(batch);
    }
    assert_batches_equal(&expected, &batches);
    // The suffix, the head (cut), the head's missing half, and the rest.
    assert_eq!(requests.load(Ordering::SeqCst), 4);
    let read = source.requests();
    assert_eq!(read.requests, 4, "{read:?}");
    assert_eq!(read.bytes, object.len() as u64, "{read:?}");
}
