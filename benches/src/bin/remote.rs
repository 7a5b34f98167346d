//! The object-store benchmark: readers of an Arrow IPC file on an S3 API (`moto_server`) behind
//! a proxy on loopback that holds every request for a fixed delay (50 ms by default), as a store
//! across an ocean would. Every reader's requests go through the proxy, which counts them, the
//! bytes of their answers and the round trips they took one after another, and times the run
//! from the first request to the last byte.
//!
//! Readers, each on the whole file and on one column:
//! - quiver: `ObjectSource` under `AsyncFileReader`;
//! - one GET per block with arrow-rs (DataFusion's approach): the footer, then each record
//!   batch block in turn, decoded with `arrow_ipc::reader::FileDecoder`;
//! - polars `scan_ipc(...).collect()` and pyarrow's `S3FileSystem` + `ipc.open_file`, when
//!   `python3` has them (`benches/remote.py`).
//!
//! `cargo run --release -p quiver-benches --bin remote -- [BATCHES] [ROWS] [DELAY_MS]`
//! (defaults 100 batches of 1,000 rows of the ten-column table, about 8 MB, and 50 ms).

use object_store::aws::AmazonS3Builder;
use object_store::path::Path;
use object_store::{ObjectStore, ObjectStoreExt};
use quiver::ipc::{AsyncFileReader, Projection};
use quiver_object_store::{ObjectSource, RequestLog, SourceOptions};
use quiver_tests::moto::{BUCKET, Moto};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};

/// The proxy's record of the run in progress.
#[derive(Default)]
struct Recorder {
    log: Mutex<Arc<RequestLog>>,
    span: Mutex<Option<(Instant, Instant)>>,
}

impl Recorder {
    /// Starts a new run: an empty log.
    fn reset(&self) {
        *self.log.lock().unwrap() = Arc::new(RequestLog::default());
        *self.span.lock().unwrap() = None;
    }

    fn record(&self, start: Instant, bytes: u64) {
        self.log.lock().unwrap().record(start, bytes);
        let mut span = self.span.lock().unwrap();
        let end = Instant::now();
        *span = Some(span.map_or((start, end), |(s, e)| (s.min(start), e.max(end))));
    }

    /// Requests, round trips, bytes and the time from the first request to the last byte.
    fn report(&self) -> (quiver_object_store::RequestStats, Duration) {
        let stats = self.log.lock().unwrap().stats();
        let time = self
            .span
            .lock()
            .unwrap()
            .map_or(Duration::ZERO, |(s, e)| e - s);
        (stats, time)
    }
}

/// Forwards each request to `upstream` after `delay`, one upstream connection per request;
/// answers with `Connection: close`. Returns the proxy's endpoint.
async fn proxy(upstream: String, delay: Duration, recorder: Arc<Recorder>) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let endpoint = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move {
        while let Ok((client, _)) = listener.accept().await {
            let (upstream, recorder) = (upstream.clone(), Arc::clone(&recorder));
            tokio::spawn(async move {
                let _ = forward(client, &upstream, delay, &recorder).await;
            });
        }
    });
    endpoint
}

async fn forward(
    client: TcpStream,
    upstream: &str,
    delay: Duration,
    recorder: &Recorder,
) -> std::io::Result<()> {
    let (read, mut write) = client.into_split();
    let mut read = BufReader::new(read);
    let mut head = String::new();
    let mut length = 0usize;
    loop {
        let mut line = String::new();
        if read.read_line(&mut line).await? == 0 {
            return Ok(());
        }
        if line == "\r\n" {
            break;
        }
        let lower = line.to_ascii_lowercase();
        if let Some(n) = lower.strip_prefix("content-length:") {
            length = n.trim().parse().unwrap_or(0);
        }
        if !lower.starts_with("connection:") {
            head.push_str(&line);
        }
    }
    head.push_str("Connection: close\r\n\r\n");
    let mut body = vec![0u8; length];
    read.read_exact(&mut body).await?;
    let start = Instant::now();
    tokio::time::sleep(delay).await;
    let mut server = TcpStream::connect(upstream.trim_start_matches("http://")).await?;
    server.write_all(head.as_bytes()).await?;
    server.write_all(&body).await?;
    let mut answer = Vec::new();
    server.read_to_end(&mut answer).await?;
    write.write_all(&answer).await?;
    write.shutdown().await?;
    let header_end = answer
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .map_or(0, |p| p + 4);
    recorder.record(start, (answer.len() - header_end) as u64);
    Ok(())
}

fn s3(endpoint: &str) -> Arc<dyn ObjectStore> {
    Arc::new(
        AmazonS3Builder::new()
            .with_bucket_name(BUCKET)
            .with_endpoint(endpoint)
            .with_region("us-east-1")
            .with_access_key_id("quiver")
            .with_secret_access_key("quiver")
            .with_allow_http(true)
            .build()
            .unwrap(),
    )
}

/// quiver: the whole file, or one column; returns the rows read.
async fn quiver_read(store: Arc<dyn ObjectStore>, key: &str, column: Option<&str>) -> usize {
    let source = ObjectSource::open(store, Path::from(key), SourceOptions::default())
        .await
        .unwrap();
    let mut reader = AsyncFileReader::open(&source, Default::default())
        .await
        .unwrap();
    if let Some(column) = column {
        reader.set_projection(Projection::from_paths(reader.schema(), &[column]).unwrap());
    }
    let mut options = source.scan_options();
    if let Some(range) = std::env::var("QUIVER_RANGE")
        .ok()
        .and_then(|r| r.parse().ok())
    {
        options = options.with_range_size_limit(range);
    }
    reader.select(0..usize::MAX, options);
    let mut rows = 0;
    while let Some(batch) = reader.next_batch().await {
        rows += batch.unwrap().num_rows();
    }
    rows
}

/// One GET per block with arrow-rs: the footer (a suffix GET, then the rest if it is longer),
/// then each record batch block in order, decoded with `FileDecoder`.
async fn per_block_read(store: Arc<dyn ObjectStore>, key: &str, column: Option<usize>) -> usize {
    use arrow_buffer::Buffer;
    use object_store::{GetOptions, GetRange};
    let path = Path::from(key);
    let tail = store
        .get_opts(
            &path,
            GetOptions {
                range: Some(GetRange::Suffix(64 * 1024)),
                ..GetOptions::default()
            },
        )
        .await
        .unwrap();
    let size = tail.meta.size;
    let tail = tail.bytes().await.unwrap();
    let footer_len =
        i32::from_le_bytes(tail[tail.len() - 10..tail.len() - 6].try_into().unwrap()) as u64;
    let footer_start = size - 10 - footer_len;
    let tail_start = size - tail.len() as u64;
    let footer = if footer_start >= tail_start {
        tail.slice((footer_start - tail_start) as usize..tail.len() - 10)
    } else {
        store
            .get_range(&path, footer_start..size - 10)
            .await
            .unwrap()
    };
    let footer = arrow_ipc::root_as_footer(&footer).unwrap();
    let schema = Arc::new(arrow_ipc::convert::try_fb_to_schema(footer.schema().unwrap()).unwrap());
    let mut decoder = arrow_ipc::reader::FileDecoder::new(Arc::clone(&schema), footer.version());
    if let Some(column) = column {
        decoder = decoder.with_projection(vec![column]);
    }
    let block_bytes = |b: &arrow_ipc::Block| {
        let start = b.offset() as u64;
        start..start + b.metaDataLength() as u64 + b.bodyLength() as u64
    };
    for block in footer.dictionaries().iter().flatten() {
        let data = store.get_range(&path, block_bytes(block)).await.unwrap();
        decoder
            .read_dictionary(block, &Buffer::from(data.to_vec()))
            .unwrap();
    }
    let mut rows = 0;
    for block in footer.recordBatches().iter().flatten() {
        let data = store.get_range(&path, block_bytes(block)).await.unwrap();
        let batch = decoder
            .read_record_batch(block, &Buffer::from(data.to_vec()))
            .unwrap()
            .unwrap();
        rows += batch.num_rows();
    }
    rows
}

/// A row of the table: reader, what it read, requests, round trips, bytes, time.
fn row(reader: &str, what: &str, recorder: &Recorder) -> Duration {
    let (stats, time) = recorder.report();
    println!(
        "| {reader} | {what} | {} | {} | {} | {:.0} |",
        stats.requests,
        stats.round_trips,
        stats.bytes,
        time.as_secs_f64() * 1000.0
    );
    time
}

fn main() {
    let args: Vec<u64> = std::env::args()
        .skip(1)
        .map(|a| a.parse().expect("a number"))
        .collect();
    let batches = args.first().copied().unwrap_or(100) as usize;
    let rows = args.get(1).copied().unwrap_or(1000) as usize;
    let delay = Duration::from_millis(args.get(2).copied().unwrap_or(50));
    let moto = Moto::start().expect("moto_server on the PATH");
    let file = quiver_tests::ten_columns::file(batches, rows, quiver::WriterOptions::default());
    let key = "bench.arrow";
    moto.put(key, &file);
    let column = "f64";
    let column_index = 2;
    println!(
        "{batches} batches of {rows} rows, {} bytes; {} ms added to every request\n",
        file.len(),
        delay.as_millis()
    );
    println!("| reader | read | requests | round trips | bytes | ms |");
    println!("| --- | --- | ---: | ---: | ---: | ---: |");

    let runtime = tokio::runtime::Runtime::new().unwrap();
    let recorder = Arc::new(Recorder::default());
    let endpoint = runtime.block_on(proxy(moto.endpoint.clone(), delay, Arc::clone(&recorder)));
    let store = s3(&endpoint);
    let mut times = Vec::new();
    for (what, projection) in [("whole file", None), ("one column", Some(column))] {
        recorder.reset();
        runtime.block_on(quiver_read(Arc::clone(&store), key, projection));
        times.push((what, "quiver", row("quiver", what, &recorder)));
        recorder.reset();
        runtime.block_on(per_block_read(
            Arc::clone(&store),
            key,
            projection.map(|_| column_index),
        ));
        row("one GET per block (arrow-rs)", what, &recorder);
        for reader in ["polars", "pyarrow"] {
            recorder.reset();
            let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("remote.py");
            let status = std::process::Command::new("python3")
                .arg(&script)
                .args([reader, &endpoint, BUCKET, key, projection.unwrap_or("")])
                .status();
            match status {
                Ok(s) if s.success() => {
                    let time = row(reader, what, &recorder);
                    times.push((what, reader, time));
                }
                _ => println!("| {reader} | {what} | (not run: python3 {reader} missing) | | | |"),
            }
        }
    }
    for what in ["whole file", "one column"] {
        let of = |reader: &str| {
            times
                .iter()
                .find(|(w, r, _)| *w == what && *r == reader)
                .map(|(_, _, t)| t.as_secs_f64())
        };
        if let (Some(quiver), Some(polars)) = (of("quiver"), of("polars")) {
            println!("{what}: quiver / polars = {:.2}", quiver / polars);
        }
    }
}
