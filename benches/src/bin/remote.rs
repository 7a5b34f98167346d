//! The object-store benchmark: readers of an Arrow IPC file on an S3 API (`moto_server`) behind
//! a proxy on loopback that holds every request for a fixed delay (50 ms by default), as a store
//! across an ocean would. Every reader's requests go through the proxy, which counts them, the
//! bytes of their answers and the round trips they took one after another, and times the run
//! from the first request to the last byte.
//!
//! Readers, each on the whole file and on one column:
//! - quiver as `quiver json` reads: the whole file front to back through one GET
//!   (`ObjectSource::open_whole`, `ObjectBatches`), one column by ranges (`ObjectSource` opened
//!   for a scan, `Reading::Scan`: its start read with its end, under `AsyncFileReader`);
//! - one GET per block with arrow-rs (DataFusion's approach): the footer, then each record
//!   batch block in turn, decoded with `arrow_ipc::reader::FileDecoder`;
//! - polars `scan_ipc(...).collect()` and pyarrow's `S3FileSystem` + `ipc.open_file`, when
//!   `python3` has them (`benches/remote.py`).
//!
//! `cargo run --release -p quiver-benches --bin remote -- [BATCHES] [ROWS] [DELAY_MS]`
//! (defaults 100 batches of 1,000 rows of the ten-column table, about 8 MB, and 50 ms).
//!
//! `... --bin remote -- --big [GB] [DELAY_MS]` (default 1.1 GB): the large-file run. A file of at
//! least GB x 10^9 bytes is written to disk (tmpfs) a batch at a time and put with one streaming
//! PUT; then, through the proxy, against `moto_server` and against a Rust range server here:
//! one plain GET of the whole object (the bandwidth baseline), one 64 MiB ranged GET, and quiver
//! reading every batch in a child process whose peak resident set (`VmHWM`) is compared with the
//! planner's window: front to back through one GET (`ObjectBatches`, what `quiver json` does
//! for a whole read), and by planned ranges (`AsyncFileReader`). A third server is the Rust range server holding each request for the delay
//! itself (no proxy). `QUIVER_SERVERS=moto,rust,inside` picks the servers; the child takes
//! `QUIVER_RANGE` (bytes per range, window twice that), `QUIVER_WINDOW` (ranges per window) and
//! `QUIVER_PREFETCH` (windows in flight). The time to decode every batch from memory, with no
//! network, is printed first: the floor.
//!
//! `... --bin remote -- --many [OBJECTS] [ROWS] [DELAY_MS]` (defaults 100, 1,000 and 50): OBJECTS
//! files of ROWS rows (written by pyarrow when the Python below has it, else by quiver) under
//! one prefix; `quiver json s3://bucket/many/` (the release binary beside this one, as a child
//! process, output to /dev/null) side by side with polars `scan_ipc` over the glob
//! `many/*.arrow` (`benches/remote_many.py`; `QUIVER_PYTHON` names the Python, by default
//! /work/venv/bin/python when it exists, else python3), each run three times.
//!
//! `... --bin remote -- --model FILE:COLUMN...` (the network model of issue 27): each file
//! held in memory by the proxy and answered from there (no server behind it whose work
//! would share the cores with the readers), which holds each request 50 ms
//! (`QUIVER_BENCH_DELAY_MS`) before its first byte, sends each answer's body at 64 MiB/s
//! (`QUIVER_BENCH_MIBPS`) and, with `QUIVER_BENCH_SLOW_EVERY=N`, holds every Nth request
//! `QUIVER_BENCH_SLOW_MS` (3,000) longer; any number in flight. quiver (whole, one column,
//! `--limit 10`; with and without the cost model), polars, pyarrow and the quiver Python
//! package's `quiver.read` (`QUIVER_PYTHON`, with the package installed) read each in the same
//! run; requests, round trips, bytes, time and peak resident set.
//! `python3 benches/remote.py write PATH` writes the 1,000,000-row pyarrow file; the FILE
//! `hundred` is the 100-batch file of the small run. A FILE that holds an IPC stream is read
//! as `quiver json` reads one (polars and pyarrow do not read streams from a store: leave
//! them out with `QUIVER_BENCH_READS`).
//!
//! `... --bin remote -- --connections [N] [DELAY_MS]` (defaults 32 and 50): N concurrent 64 KiB
//! ranged GETs from one `object_store` S3 client through the proxy, to `moto_server` and to the
//! Rust range server: the most connections held at once, when they arrived and when the answers
//! came back (the "8 connections per host" question).

use object_store::aws::AmazonS3Builder;
use object_store::path::Path;
use object_store::{ObjectStore, ObjectStoreExt};
use quiver::ipc::{AsyncFileReader, Projection};
use quiver_object_store::{ObjectBatches, ObjectSource, Reading, RequestLog, SourceOptions};
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
    /// Requests the proxy is passing on.
    active: std::sync::atomic::AtomicUsize,
    /// The most requests it was passing on at once since the last reset.
    peak: std::sync::atomic::AtomicUsize,
    /// When it accepted each connection since the last reset.
    accepted: Mutex<Vec<Instant>>,
    /// When the last reset was.
    reset_at: Mutex<Option<Instant>>,
    /// Requests forwarded since the proxy started (for the slow tail).
    forwarded: std::sync::atomic::AtomicU64,
}

/// What the proxy adds to every request besides its first-byte delay: a bandwidth cap on each
/// answer's body, and a slow tail (one request in `slow_every` held `slow` longer: every
/// `slow_every`-th, or, `random`, each with a chance of one in `slow_every`, drawn from its
/// number, so the same in every run). From the environment: `QUIVER_BENCH_MIBPS` (default 64;
/// 0: no cap), `QUIVER_BENCH_SLOW_EVERY` (default 0: none), `QUIVER_BENCH_SLOW_RANDOM=1` and
/// `QUIVER_BENCH_SLOW_MS` (default 3000).
///
/// A real store's slow tail strikes at random. Every n-th request is the simpler model, but it
/// beats in time with a client's own rhythm: a late request's copies, sent while the others
/// wait for it, can be n-th ones too, far more often than one in n.
#[derive(Debug, Clone, Copy)]
struct Shape {
    bytes_per_second: u64,
    slow_every: u64,
    random: bool,
    slow: Duration,
}

impl Shape {
    fn from_env() -> Self {
        let var = |name: &str, default: u64| {
            std::env::var(name)
                .ok()
                .and_then(|v| v.parse().ok())
                .unwrap_or(default)
        };
        Shape {
            bytes_per_second: var("QUIVER_BENCH_MIBPS", 64) * 1024 * 1024,
            slow_every: var("QUIVER_BENCH_SLOW_EVERY", 0),
            random: var("QUIVER_BENCH_SLOW_RANDOM", 0) != 0,
            slow: Duration::from_millis(var("QUIVER_BENCH_SLOW_MS", 3000)),
        }
    }

    /// Whether the `n`-th request forwarded is in the slow tail.
    fn is_slow(&self, n: u64) -> bool {
        if self.slow_every == 0 {
            return false;
        }
        if !self.random {
            return n.is_multiple_of(self.slow_every);
        }
        // splitmix64 of the request's number: a fixed draw per request, no rhythm.
        let mut z = n.wrapping_add(0x9e37_79b9_7f4a_7c15);
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        (z ^ (z >> 31)).is_multiple_of(self.slow_every)
    }

    fn describe(&self) -> String {
        let cap = match self.bytes_per_second {
            0 => "no bandwidth cap".to_string(),
            b => format!("each answer's body at {} MiB/s", b / (1024 * 1024)),
        };
        match self.slow_every {
            0 => cap,
            n => format!(
                "{cap}, {} {n}th request {} ms later",
                if self.random {
                    "a random one in every"
                } else {
                    "every"
                },
                self.slow.as_millis()
            ),
        }
    }
}

/// The python that runs `remote.py` (`QUIVER_PYTHON`, default `python3`).
fn python() -> String {
    std::env::var("QUIVER_PYTHON").unwrap_or_else(|_| "python3".into())
}

impl Recorder {
    /// Starts a new run: an empty log.
    fn reset(&self) {
        *self.log.lock().unwrap() = Arc::new(RequestLog::default());
        *self.span.lock().unwrap() = None;
        self.peak.store(0, std::sync::atomic::Ordering::SeqCst);
        self.accepted.lock().unwrap().clear();
        *self.reset_at.lock().unwrap() = Some(Instant::now());
    }

    /// The time since the last reset, to a tenth of a millisecond (for traces).
    fn since_reset(&self) -> Duration {
        let at = self.reset_at.lock().unwrap().unwrap_or_else(Instant::now);
        Duration::from_micros(at.elapsed().as_micros() as u64 / 100 * 100)
    }

    fn record(&self, start: Instant, bytes: u64) {
        self.log.lock().unwrap().record(start, bytes);
        let mut span = self.span.lock().unwrap();
        let end = Instant::now();
        *span = Some(span.map_or((start, end), |(s, e)| (s.min(start), e.max(end))));
    }

    /// Requests, round trips, bytes and the time from the first request to the last byte,
    /// once the proxy has finished with every request (a client may have its last byte a
    /// moment before the proxy logs it).
    fn report(&self) -> (quiver_object_store::RequestStats, Duration) {
        while self.active.load(std::sync::atomic::Ordering::SeqCst) > 0 {
            std::thread::sleep(Duration::from_millis(1));
        }
        let stats = self.log.lock().unwrap().stats();
        let time = self
            .span
            .lock()
            .unwrap()
            .map_or(Duration::ZERO, |(s, e)| e - s);
        (stats, time)
    }
}

/// Where the proxy's answers come from.
#[derive(Clone)]
enum Upstream {
    /// A server at this endpoint (`moto_server`, a range server), one connection per request.
    Server(String),
    /// One object held here, answered as [`range_server`] answers (any path): each byte is
    /// copied once on its way to the client, and no other server's work shares the machine's
    /// cores with the reader (a real store's work is not on the client's machine).
    Object(Arc<Vec<u8>>),
}

/// Answers each request from `upstream` after `delay`; answers with `Connection: close`.
/// Returns the proxy's endpoint.
async fn proxy(upstream: Upstream, delay: Duration, recorder: Arc<Recorder>) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let endpoint = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move {
        while let Ok((client, _)) = listener.accept().await {
            let (upstream, recorder) = (upstream.clone(), Arc::clone(&recorder));
            recorder.accepted.lock().unwrap().push(Instant::now());
            let active = recorder
                .active
                .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            recorder
                .peak
                .fetch_max(active + 1, std::sync::atomic::Ordering::SeqCst);
            tokio::spawn(async move {
                let _ = forward(client, &upstream, delay, &recorder, Shape::from_env()).await;
                recorder
                    .active
                    .fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
            });
        }
    });
    endpoint
}

async fn forward(
    client: TcpStream,
    upstream: &Upstream,
    delay: Duration,
    recorder: &Recorder,
    shape: Shape,
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
    let mut request_body = vec![0u8; length];
    read.read_exact(&mut request_body).await?;
    let start = Instant::now();
    let n = recorder
        .forwarded
        .fetch_add(1, std::sync::atomic::Ordering::SeqCst)
        + 1;
    let slow = shape.is_slow(n);
    // QUIVER_BENCH_TRACE=1: each request on stderr as it comes (its number, whether it is in
    // the slow tail, its range), as the upstream server's answer comes, and as its body ends.
    let trace = std::env::var_os("QUIVER_BENCH_TRACE").is_some();
    let range = head
        .lines()
        .find(|l| l.to_ascii_lowercase().starts_with("range:"))
        .unwrap_or("")
        .trim()
        .to_string();
    if trace {
        eprintln!(
            "{:?} #{n}{} {range}",
            recorder.since_reset(),
            if slow { " SLOW" } else { "" }
        );
    }
    // A client that closes the connection while the request is held (a hedge's loser whose
    // copy answered first) ended it then: logged with no bytes.
    let held = tokio::time::sleep(if slow { delay + shape.slow } else { delay });
    let mut byte = [0u8; 1];
    tokio::select! {
        () = held => {}
        _ = read.read(&mut byte) => {
            recorder.record(start, 0);
            return Ok(());
        }
    }
    // What the client was sent, logged however the answer ends: a request the client cut
    // (a hedge's loser, a head no longer needed) is a request all the same.
    let mut bytes = 0u64;
    let mut logged = false;
    let passed: std::io::Result<()> = async {
        let to_client = (&mut write, shape, (recorder, start, n));
        match upstream {
            Upstream::Server(endpoint) => {
                let server = TcpStream::connect(endpoint.trim_start_matches("http://")).await?;
                let (from_server, mut to_server) = server.into_split();
                to_server.write_all(head.as_bytes()).await?;
                to_server.write_all(&request_body).await?;
                // The answer streams through as it arrives: its head line by line, then its
                // body.
                let mut from_server = BufReader::with_capacity(256 * 1024, from_server);
                let mut length = None;
                loop {
                    let mut line = Vec::new();
                    if from_server.read_until(b'\n', &mut line).await? == 0 {
                        break;
                    }
                    to_client.0.write_all(&line).await?;
                    let lower = String::from_utf8_lossy(&line).to_ascii_lowercase();
                    if let Some(n) = lower.strip_prefix("content-length:") {
                        length = n.trim().parse::<u64>().ok();
                    }
                    if line == b"\r\n" {
                        break;
                    }
                }
                pass_body(from_server, length, to_client, (&mut bytes, &mut logged)).await
            }
            Upstream::Object(object) => {
                let (reply, sent) = answer(object, &head);
                to_client.0.write_all(reply.as_bytes()).await?;
                let length = Some(sent.len() as u64);
                pass_body(sent, length, to_client, (&mut bytes, &mut logged)).await
            }
        }
    }
    .await;
    if !logged {
        recorder.record(start, bytes);
    }
    passed
}

/// Passes an answer's `body` (of `length` bytes, when said) on to the client `write` at the
/// bandwidth `shape` caps it to, counting what it sent in `bytes`; the request (the `n`-th,
/// received at `start`) is logged as ended just before its last byte is passed on, so that a
/// request the client sends on receiving it never seems to overlap it (`logged` once it is).
async fn pass_body(
    mut body: impl tokio::io::AsyncBufRead + Unpin,
    length: Option<u64>,
    (write, shape, (recorder, start, n)): (
        &mut tokio::net::tcp::OwnedWriteHalf,
        Shape,
        (&Recorder, Instant, u64),
    ),
    (bytes, logged): (&mut u64, &mut bool),
) -> std::io::Result<()> {
    let trace = std::env::var_os("QUIVER_BENCH_TRACE").is_some();
    let body_start = tokio::time::Instant::now();
    if trace {
        eprintln!("{:?} #{n} upstream head", recorder.since_reset());
    }
    loop {
        // The body at the per-request bandwidth: each piece leaves when the bytes before it
        // would have at that rate.
        if shape.bytes_per_second > 0 {
            let due = Duration::from_secs_f64(*bytes as f64 / shape.bytes_per_second as f64);
            tokio::time::sleep_until(body_start + due).await;
        }
        let chunk = body.fill_buf().await?;
        if chunk.is_empty() {
            break;
        }
        let chunk = &chunk[..chunk.len().min(64 * 1024)];
        let size = chunk.len();
        let sent = *bytes + size as u64;
        if length.is_some_and(|l| sent >= l) && !*logged {
            recorder.record(start, sent);
            *logged = true;
        }
        write.write_all(chunk).await?;
        *bytes = sent;
        body.consume(size);
    }
    if trace {
        eprintln!("{:?} #{n} done, {bytes} bytes", recorder.since_reset());
    }
    write.shutdown().await
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

/// quiver reading every batch of `key` front to back (`ObjectSource::open_whole` with
/// `options`); returns the rows read and the source that counted the requests.
async fn whole_read(
    store: Arc<dyn ObjectStore>,
    key: &str,
    options: SourceOptions,
) -> (usize, ObjectSource) {
    let (mut source, reader) = ObjectSource::open_whole(store, Path::from(key), options)
        .await
        .unwrap();
    let mut rows = 0;
    let batches = ObjectBatches::of_whole(&mut source, reader, Default::default());
    let Some(mut reader) = batches.await.unwrap() else {
        // A file whose stream cannot be read from its start (polars writes its schema
        // message without the length prefix) is read by ranges, as `quiver json` reads it.
        let mut reader = AsyncFileReader::open(&source, Default::default())
            .await
            .unwrap();
        reader.select(0..usize::MAX, source.scan_options());
        while let Some(batch) = reader.next_batch().await {
            rows += batch.unwrap().num_rows();
        }
        drop(reader);
        return (rows, source);
    };
    while let Some(batch) = reader.next_batch().await.unwrap() {
        rows += batch.num_rows();
    }
    (rows, source)
}

/// quiver: the whole file, or one column; returns the rows read.
async fn quiver_read(store: Arc<dyn ObjectStore>, key: &str, column: Option<&str>) -> usize {
    let Some(column) = column else {
        return whole_read(store, key, SourceOptions::default()).await.0;
    };
    let source = ObjectSource::open(store, Path::from(key), SourceOptions::default())
        .await
        .unwrap();
    let mut reader = AsyncFileReader::open(&source, Default::default())
        .await
        .unwrap();
    reader.set_projection(Projection::from_paths(reader.schema(), &[column]).unwrap());
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

/// The small-file table: every reader, on the whole file and on one column.
fn small(args: &[String]) {
    let args: Vec<u64> = args.iter().map(|a| a.parse().expect("a number")).collect();
    let batches = args.first().copied().unwrap_or(100) as usize;
    let rows = args.get(1).copied().unwrap_or(1000) as usize;
    let delay = Duration::from_millis(args.get(2).copied().unwrap_or(50));
    let moto = Moto::start().expect("moto_server on the PATH");
    let file =
        quiver_tests::ten_columns::file(batches, rows, quiver::ipc::WriterOptions::default());
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
    let endpoint = runtime.block_on(proxy(
        Upstream::Server(moto.endpoint.clone()),
        delay,
        Arc::clone(&recorder),
    ));
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
            let status = std::process::Command::new(python())
                .arg(&script)
                .args([reader, &endpoint, BUCKET, key, projection.unwrap_or("")])
                .output();
            match status {
                Ok(s) if s.status.success() => {
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

/// The Python with polars and pyarrow, for `--many`.
fn many_python() -> String {
    std::env::var("QUIVER_PYTHON").unwrap_or_else(|_| {
        let venv = "/work/venv/bin/python";
        match std::path::Path::new(venv).exists() {
            true => venv.into(),
            false => "python3".into(),
        }
    })
}

/// `--many`: OBJECTS objects under one prefix, quiver's command against polars.
fn many(objects: usize, rows: usize, delay: Duration) {
    let moto = Moto::start().expect("moto_server on the PATH");
    let temp = std::env::temp_dir().join(format!("quiver-many-{}", std::process::id()));
    std::fs::create_dir_all(&temp).unwrap();
    // The files: written by pyarrow (from quiver's ten-column file, read back and written
    // again) when it is there, else quiver's own.
    let file = quiver_tests::ten_columns::file(1, rows, quiver::ipc::WriterOptions::default());
    let source = temp.join("source.arrow");
    std::fs::write(&source, &file).unwrap();
    let rewritten = temp.join("pyarrow.arrow");
    let by_pyarrow = std::process::Command::new(many_python())
        .args([
            "-c",
            "import sys, pyarrow.ipc as i; t = i.open_file(sys.argv[1]).read_all(); \
             w = i.new_file(sys.argv[2], t.schema); w.write_table(t); w.close()",
            source.to_str().unwrap(),
            rewritten.to_str().unwrap(),
        ])
        .status()
        .is_ok_and(|s| s.success());
    let file = match by_pyarrow {
        true => std::fs::read(&rewritten).unwrap(),
        false => file,
    };
    let _ = std::fs::remove_dir_all(&temp);
    std::thread::scope(|scope| {
        for lane in 0..8 {
            let (moto, file) = (&moto, &file);
            scope.spawn(move || {
                for i in (lane..objects).step_by(8) {
                    moto.put(&format!("many/part-{i:04}.arrow"), file);
                }
            });
        }
    });
    println!(
        "{objects} objects of {rows} rows ({} bytes each, written by {}) under one prefix; {} ms \
         added to every request\n",
        file.len(),
        if by_pyarrow { "pyarrow" } else { "quiver" },
        delay.as_millis()
    );
    println!("| reader | read | requests | round trips | bytes | ms |");
    println!("| --- | --- | ---: | ---: | ---: | ---: |");
    let what = format!("{objects} objects");
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let recorder = Arc::new(Recorder::default());
    let endpoint = runtime.block_on(proxy(
        Upstream::Server(moto.endpoint.clone()),
        delay,
        Arc::clone(&recorder),
    ));
    let quiver = std::env::current_exe().unwrap().with_file_name("quiver");
    assert!(
        quiver.exists(),
        "{}: build it first (cargo build --release -p quiver-cli)",
        quiver.display()
    );
    let (mut ours, mut theirs) = (Vec::new(), Vec::new());
    for _ in 0..3 {
        recorder.reset();
        let status = std::process::Command::new(&quiver)
            .args(["json", &format!("s3://{BUCKET}/many/"), "-o", "/dev/null"])
            .envs([
                ("AWS_ACCESS_KEY_ID", "quiver"),
                ("AWS_SECRET_ACCESS_KEY", "quiver"),
                ("AWS_REGION", "us-east-1"),
                ("AWS_ENDPOINT_URL", &endpoint),
                ("AWS_ALLOW_HTTP", "true"),
            ])
            .status()
            .unwrap();
        assert!(status.success());
        ours.push(row("quiver json s3://…/many/", &what, &recorder));
        recorder.reset();
        let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("remote_many.py");
        let status = std::process::Command::new(many_python())
            .arg(&script)
            .args([&endpoint, BUCKET, "many/"])
            .status();
        match status {
            Ok(s) if s.success() => {
                theirs.push(row("polars scan_ipc(many/*.arrow)", &what, &recorder));
            }
            _ => println!(
                "| polars | (not run: no polars in {}) | | | |",
                many_python()
            ),
        }
    }
    let best = |times: &[Duration]| times.iter().min().map(Duration::as_secs_f64);
    if let (Some(ours), Some(theirs)) = (best(&ours), best(&theirs)) {
        println!(
            "best of 3: quiver {:.0} ms, polars {:.0} ms, quiver / polars = {:.2}",
            ours * 1000.0,
            theirs * 1000.0,
            ours / theirs
        );
    }
}

/// A `std::io::Write` that counts the bytes written through it.
struct Counting<W> {
    inner: W,
    bytes: std::rc::Rc<std::cell::Cell<u64>>,
}

impl<W: std::io::Write> std::io::Write for Counting<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.bytes.set(self.bytes.get() + n as u64);
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

/// Writes ten-column batches of `rows` rows with quiver's `FileWriter` straight to `path` (one
/// batch in memory at a time) until the file holds at least `target` bytes; returns its
/// batches and bytes.
fn write_big_file(path: &std::path::Path, target: u64, rows: usize) -> (usize, u64) {
    let file = std::fs::File::create(path).expect("create the big file");
    let bytes = std::rc::Rc::new(std::cell::Cell::new(0));
    let sink = embedded_io_adapters::std::FromStd::new(Counting {
        inner: std::io::BufWriter::with_capacity(1 << 20, file),
        bytes: std::rc::Rc::clone(&bytes),
    });
    let first = quiver_tests::ten_columns::batch(rows, 0);
    let mut writer = quiver::ipc::FileWriter::new(
        sink,
        first.schema().clone(),
        quiver::ipc::WriterOptions::default(),
    )
    .expect("file writer");
    writer.write(&first).expect("write a batch");
    drop(first);
    let mut batches = 1;
    while bytes.get() < target {
        let batch = quiver_tests::ten_columns::batch(rows, batches as u64);
        writer.write(&batch).expect("write a batch");
        batches += 1;
    }
    writer.finish().expect("finish the file");
    drop(writer);
    let len = std::fs::metadata(path).expect("the big file").len();
    (batches, len)
}

/// quiver reading every batch of `key` by planned ranges (`QUIVER_PREFETCH`, `QUIVER_RANGE`
/// and `QUIVER_WINDOW` set the reader's limits); returns the rows, the source and the limits.
async fn ranged_read(
    store: Arc<dyn ObjectStore>,
    key: &str,
) -> (usize, ObjectSource, quiver::ipc::ScanOptions) {
    let source = ObjectSource::open(store, Path::from(key), SourceOptions::default())
        .await
        .unwrap();
    let reader = AsyncFileReader::open(&source, Default::default())
        .await
        .unwrap();
    let mut reader = match std::env::var("QUIVER_PREFETCH")
        .ok()
        .and_then(|p| p.parse().ok())
    {
        Some(p) => reader.with_prefetch(p),
        None => reader,
    };
    let mut options = source.scan_options();
    if let Some(range) = std::env::var("QUIVER_RANGE")
        .ok()
        .and_then(|r| r.parse().ok())
    {
        options = options
            .with_range_size_limit(range)
            .with_readahead(2 * range);
    }
    // QUIVER_WINDOW: ranges per window (2 by default).
    if let Some(ranges) = std::env::var("QUIVER_WINDOW")
        .ok()
        .and_then(|r| r.parse::<u64>().ok())
    {
        let range = options.range_size_limit;
        options = options.with_readahead(ranges * range);
    }
    reader.select(0..usize::MAX, options.clone());
    let mut rows = 0;
    while let Some(batch) = reader.next_batch().await {
        rows += batch.unwrap().num_rows();
    }
    drop(reader);
    (rows, source, options)
}

/// The child process of the big-file run: quiver reads every batch of `key` through the proxy
/// at `endpoint` (decoding only), then prints one line: rows, requests, round trips, bytes,
/// range size and window of the planner, the resident set before reading and its peak.
fn big_child(endpoint: &str, key: &str, in_order: bool) {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let store = s3(endpoint);
    runtime.block_on(async {
        let opened_rss = status_kib("VmRSS");
        let (rows, source, options) = if in_order {
            let (rows, source) = whole_read(store, key, SourceOptions::default()).await;
            let options = source.scan_options();
            (rows, source, options)
        } else {
            ranged_read(store, key).await
        };
        let stats = source.requests();
        println!(
            "{rows} {} {} {} {} {} {opened_rss} {} {} {} {}",
            stats.requests,
            stats.round_trips,
            stats.bytes,
            options.range_size_limit,
            options.readahead,
            status_kib("VmHWM"),
            cpu().0,
            cpu().1,
            cpu().2,
        );
    });
}

/// This process's CPU time so far, user and system, in ms, and its minor page faults (from
/// `/proc/self/stat`).
fn cpu() -> (u64, u64, u64) {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let fields: Vec<u64> = stat
        .rsplit_once(')')
        .map_or("", |(_, rest)| rest)
        .split_whitespace()
        .map(|f| f.parse().unwrap_or(0))
        .collect();
    // Fields 10 (minflt), 14 (utime) and 15 (stime), counted from 1, the state being 3.
    let field = |n: usize| fields.get(n - 3).copied().unwrap_or(0);
    (field(14) * 10, field(15) * 10, field(10))
}

/// A `/proc/self/status` line's value, in KiB.
fn status_kib(name: &str) -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            status.lines().find_map(|line| {
                let value = line.strip_prefix(name)?.strip_prefix(':')?;
                value.trim().trim_end_matches("kB").trim().parse().ok()
            })
        })
        .unwrap_or(0)
}

/// A loopback server of one object held in memory, with S3's answers to GET and HEAD (any
/// path): the whole object (200), or one range (`bytes=a-b`, `bytes=a-`, `bytes=-n`; 206). Every
/// request costs only its own bytes, where `moto_server` reads the whole object again for each
/// one. With `delayed`, it holds each request for the delay itself and records it (no proxy
/// needed). Returns its endpoint.
async fn range_server(object: Arc<Vec<u8>>, delayed: Option<(Duration, Arc<Recorder>)>) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let endpoint = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move {
        while let Ok((client, _)) = listener.accept().await {
            let (object, delayed) = (Arc::clone(&object), delayed.clone());
            if let Some((_, recorder)) = &delayed {
                recorder
                    .active
                    .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            }
            tokio::spawn(async move {
                let _ = serve_range(client, &object, delayed.as_ref()).await;
                if let Some((_, recorder)) = &delayed {
                    recorder
                        .active
                        .fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
                }
            });
        }
    });
    endpoint
}

async fn serve_range(
    client: TcpStream,
    object: &[u8],
    delayed: Option<&(Duration, Arc<Recorder>)>,
) -> std::io::Result<()> {
    let (read, mut write) = client.into_split();
    let mut read = BufReader::new(read);
    let mut request = String::new();
    loop {
        let mut line = String::new();
        if read.read_line(&mut line).await? == 0 {
            return Ok(());
        }
        if line == "\r\n" {
            break;
        }
        request.push_str(&line);
    }
    let start = Instant::now();
    if let Some((delay, _)) = delayed {
        tokio::time::sleep(*delay).await;
    }
    let (head, sent) = answer(object, &request);
    write.write_all(head.as_bytes()).await?;
    // The last byte goes once the request is logged (as the proxy does).
    let (most, last) = sent.split_at(sent.len().saturating_sub(1));
    write.write_all(most).await?;
    if let Some((_, recorder)) = delayed {
        recorder.record(start, sent.len() as u64);
        if std::env::var_os("QUIVER_TIMELINE").is_some() {
            // When each request came and its last byte went, from the run's first request.
            let first = recorder.span.lock().unwrap().map_or(start, |(s, _)| s);
            eprintln!(
                "timeline: {:.0} ms .. {:.0} ms, {} bytes",
                (start - first).as_secs_f64() * 1000.0,
                first.elapsed().as_secs_f64() * 1000.0,
                sent.len()
            );
        }
    }
    write.write_all(last).await?;
    write.shutdown().await
}

/// S3's answer to the request whose head is `request` (its lines) for `object` (any path): the
/// answer's head and the bytes of its body. GET and HEAD: the whole object (200), or one range
/// (`bytes=a-b`, `bytes=a-`, `bytes=-n`; 206).
fn answer<'a>(object: &'a [u8], request: &str) -> (String, &'a [u8]) {
    let method = request.split(' ').next().unwrap_or("");
    let len = object.len() as u64;
    let range = request.lines().find_map(|line| {
        let lower = line.to_ascii_lowercase();
        let spec = lower
            .strip_prefix("range:")?
            .trim()
            .trim_start_matches("bytes=")
            .to_string();
        let (a, b) = spec.split_once('-').unwrap_or(("", ""));
        match (a.parse::<u64>().ok(), b.parse::<u64>().ok()) {
            (Some(a), Some(b)) => Some(a..(b + 1).min(len)),
            (Some(a), None) => Some(a..len),
            (None, Some(n)) => Some(len.saturating_sub(n)..len),
            (None, None) => None,
        }
    });
    let (status, body, content_range) = match range {
        Some(r) if r.start < r.end => {
            let body = &object[r.start as usize..r.end as usize];
            let content_range = format!("Content-Range: bytes {}-{}/{len}\r\n", r.start, r.end - 1);
            ("206 Partial Content", body, content_range)
        }
        _ => ("200 OK", object, String::new()),
    };
    let head = format!(
        "HTTP/1.1 {status}\r\nContent-Length: {}\r\n{content_range}Accept-Ranges: bytes\r\n\
         ETag: \"quiver\"\r\nLast-Modified: Tue, 01 Dec 2026 00:00:00 GMT\r\n\
         Content-Type: application/octet-stream\r\nConnection: close\r\n\r\n",
        body.len()
    );
    (head, if method == "HEAD" { &[] } else { body })
}

/// One plain GET of the whole object, its body streamed and dropped; returns its bytes.
async fn single_get(store: Arc<dyn ObjectStore>, key: &str) -> u64 {
    use futures::StreamExt;
    let mut body = store.get(&Path::from(key)).await.unwrap().into_stream();
    let mut bytes = 0;
    while let Some(chunk) = body.next().await {
        bytes += chunk.unwrap().len() as u64;
    }
    bytes
}

/// The big-file run: a file of at least `gigabytes` GB (10^9 bytes) of 100,000-row batches,
/// written to disk and put with one streaming PUT; then through the proxy one plain GET of it
/// (the bandwidth baseline) and quiver reading every batch in a child process (its peak
/// resident set against the planner's window).
fn big(gigabytes: f64, delay: Duration) {
    let rows = 100_000;
    // On tmpfs where there is one: the file is a staging copy, deleted once put.
    let shm = std::path::Path::new("/dev/shm");
    let dir = if shm.is_dir() {
        shm.to_path_buf()
    } else {
        std::env::temp_dir()
    };
    let path = dir.join(format!("quiver-remote-big-{}.arrow", std::process::id()));
    let started = Instant::now();
    let (batches, len) = write_big_file(&path, (gigabytes * 1e9) as u64, rows);
    println!(
        "{batches} batches of {rows} rows, {len} bytes, written in {:.1} s; {} ms added to every request",
        started.elapsed().as_secs_f64(),
        delay.as_millis()
    );
    // moto keeps the object in memory (by default it spills objects over 5 MiB to a temporary
    // file on disk, read whole again for every GET).
    // QUIVER_SERVERS (default `moto,rust,inside`) picks the servers.
    let servers = std::env::var("QUIVER_SERVERS").unwrap_or_else(|_| "moto,rust,inside".into());
    let key = "big.arrow";
    let moto = servers.split(',').any(|s| s == "moto").then(|| {
        let buffer = (2 * len).to_string();
        let moto = Moto::start_with_env(&[("MOTO_S3_DEFAULT_KEY_BUFFER_SIZE", &buffer)])
            .expect("moto_server on the PATH");
        let started = Instant::now();
        moto.put_file(key, &path);
        println!("put in {:.1} s\n", started.elapsed().as_secs_f64());
        moto
    });

    let object = Arc::new(std::fs::read(&path).expect("read the big file back"));
    let _ = std::fs::remove_file(&path);

    // The floor: decoding every batch from memory, no network (one thread, as the child's
    // decoding runs on one).
    let started = Instant::now();
    let mut reader = quiver::ipc::FileReader::open(object.as_slice(), Default::default()).unwrap();
    let decoded: usize = reader.batches().map(|b| b.unwrap().num_rows()).sum();
    assert_eq!(decoded, batches * rows);
    let secs = started.elapsed().as_secs_f64();
    println!(
        "decoding every batch from memory (no network): {:.0} ms, {:.0} MB/s\n",
        secs * 1000.0,
        len as f64 / secs / 1e6
    );

    let runtime = tokio::runtime::Runtime::new().unwrap();
    let recorder = Arc::new(Recorder::default());
    let loopback = runtime.block_on(range_server(Arc::clone(&object), None));
    let delayed = runtime.block_on(range_server(object, Some((delay, Arc::clone(&recorder)))));
    println!("| server | reader | requests | round trips | bytes | ms | MB/s | time / one GET's |");
    println!("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |");
    let parent_cpu = std::cell::Cell::new((0, 0, 0));
    let line = |server: &str, reader: &str, baseline: Option<f64>| {
        let (stats, time) = recorder.report();
        let (before, now) = (parent_cpu.get(), cpu());
        parent_cpu.set(now);
        eprintln!(
            "{server}, {reader}: the benchmark's process (server, proxy, and the client of the \
             plain GETs) used {} ms user, {} ms system CPU, {} minor faults",
            now.0 - before.0,
            now.1 - before.1,
            now.2 - before.2
        );
        let secs = time.as_secs_f64();
        println!(
            "| {server} | {reader} | {} | {} | {} | {:.0} | {:.0} | {} |",
            stats.requests,
            stats.round_trips,
            stats.bytes,
            secs * 1000.0,
            stats.bytes as f64 / secs / 1e6,
            baseline.map_or("1".to_string(), |b| format!("{:.2}", secs / b))
        );
        secs
    };
    let mut memory = Vec::new();
    let moto_endpoint = moto.as_ref().map_or(String::new(), |m| m.endpoint.clone());
    for (name, server, upstream) in [
        ("moto", "`moto_server`", moto_endpoint),
        ("rust", "Rust range server", loopback),
        (
            "inside",
            "Rust range server, delay inside (no proxy)",
            delayed,
        ),
    ] {
        if !servers.split(',').any(|s| s == name) {
            continue;
        }
        let endpoint = if name == "inside" {
            upstream
        } else {
            runtime.block_on(proxy(
                Upstream::Server(upstream),
                delay,
                Arc::clone(&recorder),
            ))
        };
        recorder.reset();
        parent_cpu.set(cpu());
        let got = runtime.block_on(single_get(s3(&endpoint), key));
        assert_eq!(got, len, "the single GET's bytes");
        let baseline = line(server, "one GET of the whole object", None);
        recorder.reset();
        parent_cpu.set(cpu());
        let range = 64 * 1024 * 1024;
        let got = runtime
            .block_on(s3(&endpoint).get_range(&Path::from(key), 0..range))
            .unwrap();
        assert_eq!(got.len() as u64, range, "the ranged GET's bytes");
        line(server, "one ranged GET of 64 MiB", Some(baseline));
        for (mode, reader) in [
            (
                "in-order",
                "quiver front to back (one GET, `ObjectBatches`, as `quiver json`)",
            ),
            ("ranges", "quiver by ranges (`AsyncFileReader`)"),
        ] {
            recorder.reset();
            parent_cpu.set(cpu());
            let child = std::process::Command::new(std::env::current_exe().unwrap())
                .args(["--big-child", &endpoint, key, mode])
                .output()
                .expect("run the quiver child");
            let out = String::from_utf8_lossy(&child.stdout).into_owned();
            assert!(
                child.status.success(),
                "quiver child: {out} {}",
                String::from_utf8_lossy(&child.stderr)
            );
            line(server, &format!("{reader}, every batch"), Some(baseline));
            memory.push((server, mode, out));
        }
    }
    println!();
    for (server, mode, out) in memory {
        let numbers: Vec<u64> = out
            .split_whitespace()
            .filter_map(|n| n.parse().ok())
            .collect();
        if let [
            rows_read,
            _,
            _,
            _,
            range,
            window,
            opened,
            peak,
            user,
            system,
            faults,
        ] = numbers[..]
        {
            assert_eq!(rows_read, (batches * rows) as u64, "rows read");
            let mib = |b: u64| b as f64 / (1024.0 * 1024.0);
            println!(
                "quiver {mode} from {server}: range size {:.1} MiB, window {:.1} MiB; resident {:.1} MiB \
                 before reading, peak {:.1} MiB = {:.2} windows ({:.2} above the resident set \
                 before reading)",
                mib(range),
                mib(window),
                mib(opened * 1024),
                mib(peak * 1024),
                peak as f64 * 1024.0 / window as f64,
                (peak - opened) as f64 * 1024.0 / window as f64,
            );
            println!(
                "quiver {mode} from {server}: its process used {user} ms of user CPU, {system} ms of \
                 system CPU, {faults} minor page faults"
            );
        }
    }
}

/// The "8 connections per host" question: `requests` concurrent ranged GETs of 64 KiB from one
/// `object_store` S3 client, through the proxy (which answers `Connection: close`, so each
/// request is a connection of its own), to `moto_server` and to the Rust range server. Prints,
/// per server: the most connections the proxy held at once, the spread of their arrival, the
/// round trips, and when the answers arrived (the waves).
fn connections(requests: usize, delay: Duration) {
    use futures::StreamExt;
    let moto = Moto::start().expect("moto_server on the PATH");
    let file = quiver_tests::ten_columns::file(100, 1000, quiver::ipc::WriterOptions::default());
    let key = "bench.arrow";
    moto.put(key, &file);
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let loopback = runtime.block_on(range_server(Arc::new(file.clone()), None));
    let recorder = Arc::new(Recorder::default());
    println!(
        "{requests} concurrent ranged GETs of 64 KiB, one object_store S3 client, {} ms added \
         to each\n",
        delay.as_millis()
    );
    println!(
        "| server | connections at once (peak) | all arrived within ms | round trips | answers \
         arrived at ms (first, median, last) | ms |"
    );
    println!("| --- | ---: | ---: | ---: | --- | ---: |");
    for (server, upstream) in [
        ("`moto_server`", moto.endpoint.clone()),
        ("Rust range server", loopback),
    ] {
        let endpoint = runtime.block_on(proxy(
            Upstream::Server(upstream),
            delay,
            Arc::clone(&recorder),
        ));
        let store = s3(&endpoint);
        // One request first, so that any connection set-up of the client is done.
        runtime
            .block_on(store.get_range(&Path::from(key), 0..1024))
            .unwrap();
        recorder.reset();
        let step = (file.len() as u64 - 65536) / requests as u64;
        let started = Instant::now();
        let mut ends: Vec<f64> = runtime.block_on(
            futures::stream::iter(0..requests as u64)
                .map(|i| {
                    let store = Arc::clone(&store);
                    async move {
                        let start = i * step;
                        store
                            .get_range(&Path::from(key), start..start + 65536)
                            .await
                            .unwrap();
                        started.elapsed().as_secs_f64() * 1000.0
                    }
                })
                .buffer_unordered(usize::MAX)
                .collect(),
        );
        ends.sort_by(f64::total_cmp);
        let (stats, time) = recorder.report();
        let accepted = recorder.accepted.lock().unwrap().clone();
        let spread = accepted
            .iter()
            .max()
            .zip(accepted.iter().min())
            .map_or(0.0, |(last, first)| (*last - *first).as_secs_f64() * 1000.0);
        println!(
            "| {server} | {} | {spread:.1} | {} | {:.0}, {:.0}, {:.0} | {:.0} |",
            recorder.peak.load(std::sync::atomic::Ordering::SeqCst),
            stats.round_trips,
            ends[0],
            ends[ends.len() / 2],
            ends[ends.len() - 1],
            time.as_secs_f64() * 1000.0
        );
    }
}

/// The model run's child: quiver reads `key` at `endpoint` as `mode` says, then prints the
/// rows read and its peak resident set in KiB. Modes: `whole` (front to back, as `quiver json`
/// reads every batch), `column NAME`, `limit N` (the batches N rows need, as `quiver json
/// --limit N`), and `column-old NAME`, `limit-old N`: the same with the planner as it was
/// before the cost model (fixed limits: 8 KiB gaps, ranges of 9x the bandwidth-delay
/// product, windows of two ranges, metadata then buffers). The source takes the settings
/// `quiver json` takes from the environment (`SourceOptions::with_environment`:
/// `QUIVER_WINDOW_MIB`, `QUIVER_REQUEST_COST_MS`, ...).
fn model_child(endpoint: &str, key: &str, mode: &str, arg: Option<&str>) {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let store = s3(endpoint);
    // The settings `quiver json` takes from the environment (`QUIVER_WINDOW_MIB`, the
    // network's figures), so that the child reads as the CLI would with them.
    let options = SourceOptions::default()
        .with_environment(|name| std::env::var(name).ok())
        .unwrap_or_else(|bad| panic!("{bad}"));
    let rows = runtime.block_on(async {
        if mode == "whole" {
            return whole_read(store, key, options).await.0;
        }
        // As `quiver json --columns` and `--limit` open an object: its start read with its
        // end (before: a peek, its end, then what the reader asks for).
        let reading = match mode {
            "column" => Reading::Scan,
            "limit" => Reading::First,
            _ => Reading::Peek,
        };
        let (source, _) = ObjectSource::open_for(store, Path::from(key), options, reading)
            .await
            .unwrap();
        if !source.tail().ends_with(quiver::format::MAGIC) {
            return stream_rows(&source, mode, arg).await;
        }
        let mut reader = AsyncFileReader::open(&source, Default::default())
            .await
            .unwrap();
        let old = mode.ends_with("-old");
        let options = if old {
            source.network().scan_options()
        } else {
            source.scan_options()
        };
        let mut rows = 0;
        if mode.starts_with("column") {
            let column = arg.expect("a column");
            reader.set_projection(Projection::from_paths(reader.schema(), &[column]).unwrap());
            reader.select(0..usize::MAX, options);
            while let Some(batch) = reader.next_batch().await {
                rows += batch.unwrap().num_rows();
            }
            return rows;
        }
        let limit: usize = arg.and_then(|a| a.parse().ok()).expect("a row limit");
        // As `quiver json --limit` reads: one batch first, then the batches the rest needs
        // (before: every batch selected, stopped once the rows are there).
        let end = reader.num_batches();
        let mut next = 0;
        while rows < limit && next < end {
            let selected = match (old, rows) {
                (true, _) => next..end,
                (false, 0) => next..next + 1,
                (false, _) => {
                    let per_batch = (rows / next).max(1);
                    next..end.min(next + (limit - rows).div_ceil(per_batch))
                }
            };
            reader.select(selected, options.clone());
            while rows < limit {
                let Some(batch) = reader.next_batch().await else {
                    break;
                };
                rows += batch.unwrap().num_rows();
                next += 1;
            }
        }
        rows
    });
    println!("{rows} {}", status_kib("VmHWM"));
}

/// The rows of the stream `source` holds, read as `quiver json` reads a stream: every batch
/// (`column`: the stream's columns are all decoded, a stream having no index to skip by) in
/// parallel parts, or (`limit N`) as it is read until N rows have come; `-old`: before, one
/// streaming GET of all but the opening's bytes.
async fn stream_rows(source: &ObjectSource, mode: &str, arg: Option<&str>) -> usize {
    let reader = match mode {
        "column" => source.parts_reader(0),
        _ => source.reader(0),
    };
    let limit = if mode.starts_with("limit") {
        arg.and_then(|a| a.parse().ok()).expect("a row limit")
    } else {
        usize::MAX
    };
    let mut batches = ObjectBatches::new(reader, Default::default())
        .await
        .unwrap();
    let mut rows = 0;
    while rows < limit
        && let Some(batch) = batches.next_batch().await.unwrap()
    {
        rows += batch.num_rows();
    }
    rows
}

/// The model run: each `FILE:COLUMN` held and answered by the proxy (the
/// first-byte delay, each answer's bandwidth capped, any number in flight, the slow tail as
/// `QUIVER_BENCH_*` say), read whole, one column and `--limit 10` by quiver (a child process,
/// its peak resident set measured) with and without the cost model, by polars and pyarrow
/// (`QUIVER_PYTHON`), side by side in the same run.
fn model(files: &[String], delay: Duration) {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    // QUIVER_BENCH_READS: the reads to run, by mode (`whole`, `column`, `column-old`, `limit`,
    // `limit-old`, `one-get`, `polars-whole`, `polars-one-column`, `pyarrow-…`, `python-…`), comma
    // separated (default: all); QUIVER_BENCH_REPEAT: runs of each quiver read (default 1).
    let reads = std::env::var("QUIVER_BENCH_READS").ok();
    let chosen = |mode: &str| {
        reads
            .as_deref()
            .is_none_or(|r| r.split(',').any(|m| m == mode))
    };
    let repeat: usize = std::env::var("QUIVER_BENCH_REPEAT")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(1);
    let recorder = Arc::new(Recorder::default());
    println!(
        "{} ms before each first byte, {}; any number of requests in flight\n",
        delay.as_millis(),
        Shape::from_env().describe()
    );
    println!("| file | reader | read | requests | round trips | bytes | ms | peak MiB |");
    println!("| --- | --- | --- | ---: | ---: | ---: | ---: | ---: |");
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("remote.py");
    for spec in files {
        let (file, column) = spec.rsplit_once(':').expect("FILE:COLUMN");
        // `hundred`: the 100-batch ten-column file of the small run.
        let object = Arc::new(match file {
            "hundred" => quiver_tests::ten_columns::file(100, 1000, Default::default()),
            path => std::fs::read(path).expect("read the file"),
        });
        let name = std::path::Path::new(file)
            .file_name()
            .map_or(file.to_string(), |n| n.to_string_lossy().into_owned());
        let label = format!("{name} ({:.1} MB)", object.len() as f64 / 1e6);
        let upstream = Upstream::Object(Arc::clone(&object));
        let endpoint = runtime.block_on(proxy(upstream, delay, Arc::clone(&recorder)));
        let key = "model.arrow";
        let line = |reader: &str, what: &str, peak_kib: Option<u64>| {
            let (stats, time) = recorder.report();
            println!(
                "| {label} | {reader} | {what} | {} | {} | {} | {:.0} | {} |",
                stats.requests,
                stats.round_trips,
                stats.bytes,
                time.as_secs_f64() * 1000.0,
                peak_kib.map_or("".into(), |k| format!("{:.0}", k as f64 / 1024.0))
            );
        };
        let child = |mode: &str, arg: Option<&str>| -> Option<u64> {
            let mut command = std::process::Command::new(std::env::current_exe().unwrap());
            command.args(["--model-child", &endpoint, key, mode]);
            command.args(arg);
            let out = command.output().expect("run the quiver child");
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
            let out = String::from_utf8_lossy(&out.stdout).into_owned();
            out.split_whitespace().nth(1).and_then(|k| k.parse().ok())
        };
        if chosen("one-get") {
            recorder.reset();
            let got = runtime.block_on(single_get(s3(&endpoint), key));
            assert_eq!(got, object.len() as u64);
            line("one GET (quiver's whole read before)", "whole", None);
        }
        for (reader, what, mode, arg) in [
            ("quiver", "whole", "whole", None),
            ("quiver", "one column", "column", Some(column)),
            (
                "quiver, no cost model (before)",
                "one column",
                "column-old",
                Some(column),
            ),
            ("quiver", "--limit 10", "limit", Some("10")),
            (
                "quiver, no cost model (before)",
                "--limit 10",
                "limit-old",
                Some("10"),
            ),
        ] {
            for _ in 0..repeat {
                if !chosen(mode) {
                    continue;
                }
                recorder.reset();
                let peak = child(mode, arg);
                line(reader, what, peak);
            }
        }
        // `quiver`: `quiver.read` from the Python package (`pyarrow.table(...)` of it), when
        // QUIVER_PYTHON has it installed.
        for reader in ["polars", "pyarrow", "quiver"] {
            for (what, projection) in [("whole", ""), ("one column", column)] {
                let mode = format!(
                    "{}-{}",
                    if reader == "quiver" { "python" } else { reader },
                    what.replace(' ', "-")
                );
                if !chosen(&mode) {
                    continue;
                }
                recorder.reset();
                let out = std::process::Command::new(python())
                    .arg(&script)
                    .args([reader, &endpoint, BUCKET, key, projection])
                    .output();
                match out {
                    Ok(out) if out.status.success() => {
                        let out = String::from_utf8_lossy(&out.stdout).into_owned();
                        let peak = out.split_whitespace().nth(1).and_then(|k| k.parse().ok());
                        match reader {
                            "quiver" => line("quiver.read (Python package)", what, peak),
                            _ => line(reader, what, peak),
                        }
                    }
                    Ok(out) => println!(
                        "| {label} | {reader} | {what} | (failed: {}) | | | | |",
                        String::from_utf8_lossy(&out.stderr)
                            .lines()
                            .last()
                            .unwrap_or("")
                    ),
                    Err(e) => println!("| {label} | {reader} | {what} | (not run: {e}) | | | | |"),
                }
            }
        }
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("--model-child") => model_child(
            &args[1],
            &args[2],
            &args[3],
            args.get(4).map(String::as_str),
        ),
        Some("--model") => {
            let delay = std::env::var("QUIVER_BENCH_DELAY_MS")
                .ok()
                .and_then(|d| d.parse().ok())
                .unwrap_or(50);
            model(&args[1..], Duration::from_millis(delay));
        }
        Some("--big-child") => big_child(
            &args[1],
            &args[2],
            args.get(3).is_none_or(|m| m == "in-order"),
        ),
        Some("--connections") => {
            let requests = args
                .get(1)
                .map_or(32, |n| n.parse().expect("a request count"));
            let delay = args
                .get(2)
                .map_or(50, |d| d.parse().expect("a delay in ms"));
            connections(requests, Duration::from_millis(delay));
        }
        Some("--many") => {
            let number = |i: usize, default: u64| {
                args.get(i)
                    .map_or(default, |n| n.parse().expect("a number"))
            };
            many(
                number(1, 100) as usize,
                number(2, 1000) as usize,
                Duration::from_millis(number(3, 50)),
            );
        }
        Some("--big") => {
            let gigabytes = args
                .get(1)
                .map_or(1.1, |g| g.parse().expect("a number of GB"));
            let delay = args
                .get(2)
                .map_or(50, |d| d.parse().expect("a delay in ms"));
            big(gigabytes, Duration::from_millis(delay));
        }
        _ => small(&args),
    }
}
