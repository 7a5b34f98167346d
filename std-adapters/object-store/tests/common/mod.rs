//! What the object-store tests share: a store wrapper that counts (and may delay) requests, a
//! `moto_server` on a loopback port, and the files they read.

#![allow(dead_code)]

use async_trait::async_trait;
use futures::stream::BoxStream;
use object_store::path::Path;
use object_store::{
    CopyOptions, GetOptions, GetRange, GetResult, ListResult, MultipartUpload, ObjectMeta,
    ObjectStore, PutMultipartOptions, PutOptions, PutPayload, PutResult, Result,
};
use std::fmt;
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Counts the GETs and HEADs that reach the store below, the bytes asked for, and adds a delay
/// before each (a far-away store).
#[derive(Debug)]
pub struct Counted {
    pub inner: Arc<dyn ObjectStore>,
    pub delay: Duration,
    pub gets: AtomicU64,
    pub heads: AtomicU64,
    pub ranges: Mutex<Vec<Option<GetRange>>>,
}

impl Counted {
    pub fn new(inner: Arc<dyn ObjectStore>, delay: Duration) -> Arc<Self> {
        Arc::new(Counted {
            inner,
            delay,
            gets: AtomicU64::new(0),
            heads: AtomicU64::new(0),
            ranges: Mutex::new(Vec::new()),
        })
    }

    pub fn gets(&self) -> u64 {
        self.gets.load(Ordering::SeqCst)
    }

    pub fn heads(&self) -> u64 {
        self.heads.load(Ordering::SeqCst)
    }

    /// The bytes of the bounded ranges asked for.
    pub fn bounded_bytes(&self) -> u64 {
        let ranges = self.ranges.lock().unwrap();
        ranges
            .iter()
            .map(|r| match r {
                Some(GetRange::Bounded(r)) => r.end - r.start,
                Some(GetRange::Suffix(n)) => *n,
                _ => 0,
            })
            .sum()
    }
}

impl fmt::Display for Counted {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Counted({})", self.inner)
    }
}

#[async_trait]
impl ObjectStore for Counted {
    async fn put_opts(&self, l: &Path, p: PutPayload, o: PutOptions) -> Result<PutResult> {
        self.inner.put_opts(l, p, o).await
    }

    async fn put_multipart_opts(
        &self,
        l: &Path,
        o: PutMultipartOptions,
    ) -> Result<Box<dyn MultipartUpload>> {
        self.inner.put_multipart_opts(l, o).await
    }

    async fn get_opts(&self, location: &Path, options: GetOptions) -> Result<GetResult> {
        if options.head {
            self.heads.fetch_add(1, Ordering::SeqCst);
        } else {
            self.gets.fetch_add(1, Ordering::SeqCst);
            self.ranges.lock().unwrap().push(options.range.clone());
        }
        tokio::time::sleep(self.delay).await;
        self.inner.get_opts(location, options).await
    }

    fn delete_stream(
        &self,
        locations: BoxStream<'static, Result<Path>>,
    ) -> BoxStream<'static, Result<Path>> {
        self.inner.delete_stream(locations)
    }

    fn list(&self, prefix: Option<&Path>) -> BoxStream<'static, Result<ObjectMeta>> {
        self.inner.list(prefix)
    }

    async fn list_with_delimiter(&self, prefix: Option<&Path>) -> Result<ListResult> {
        self.inner.list_with_delimiter(prefix).await
    }

    async fn copy_opts(&self, from: &Path, to: &Path, options: CopyOptions) -> Result<()> {
        self.inner.copy_opts(from, to, options).await
    }
}

/// A `moto_server` (an S3 API) on a free loopback port, with one bucket; stopped when dropped.
pub struct Moto {
    child: Child,
    pub endpoint: String,
    pub log: Arc<Mutex<String>>,
}

pub const BUCKET: &str = "quiver";

impl Moto {
    /// Starts `moto_server`, or `None` (printing that the tests skipped) when it is not
    /// installed; with `QUIVER_REQUIRE_MOTO=1` a missing server is a failure.
    pub fn start() -> Option<Moto> {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let child = Command::new("moto_server")
            .args(["-H", "127.0.0.1", "-p", &port.to_string()])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn();
        let mut child = match child {
            Ok(child) => child,
            Err(e) => {
                let required = std::env::var("QUIVER_REQUIRE_MOTO").is_ok_and(|v| v == "1");
                assert!(!required, "moto_server: {e} and QUIVER_REQUIRE_MOTO=1");
                println!("skipped: moto_server not found ({e})");
                return None;
            }
        };
        let log = Arc::new(Mutex::new(String::new()));
        let mut stderr = child.stderr.take().unwrap();
        let sink = Arc::clone(&log);
        std::thread::spawn(move || {
            use std::io::Read;
            let mut buf = [0u8; 4096];
            while let Ok(n) = stderr.read(&mut buf) {
                if n == 0 {
                    break;
                }
                sink.lock()
                    .unwrap()
                    .push_str(&String::from_utf8_lossy(&buf[..n]));
            }
        });
        let started = Instant::now();
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                started.elapsed() < Duration::from_secs(30),
                "moto_server did not start"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        let moto = Moto {
            child,
            endpoint: format!("http://127.0.0.1:{port}"),
            log,
        };
        moto.request("PUT", &format!("/{BUCKET}"));
        Some(moto)
    }

    /// One plain HTTP request (moto checks no signature), answered 200.
    fn request(&self, method: &str, path: &str) {
        use std::io::{Read, Write};
        let host = self.endpoint.trim_start_matches("http://");
        let mut stream = TcpStream::connect(host).unwrap();
        write!(
            stream,
            "{method} {path} HTTP/1.1\r\nHost: {host}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
        )
        .unwrap();
        let mut answer = String::new();
        stream.read_to_string(&mut answer).unwrap();
        assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    }

    /// The environment that points the AWS builder at this server, with dummy credentials (so
    /// that no request ever looks for an instance-metadata endpoint).
    pub fn env(&self) -> Vec<(&'static str, String)> {
        vec![
            ("AWS_ACCESS_KEY_ID", "quiver".into()),
            ("AWS_SECRET_ACCESS_KEY", "quiver".into()),
            ("AWS_REGION", "us-east-1".into()),
            ("AWS_ENDPOINT_URL", self.endpoint.clone()),
            ("AWS_ALLOW_HTTP", "true".into()),
        ]
    }

    /// A store for the bucket, configured as `env` says.
    pub fn store(&self) -> Arc<dyn ObjectStore> {
        let mut builder = object_store::aws::AmazonS3Builder::new().with_bucket_name(BUCKET);
        for (key, value) in self.env() {
            builder = builder.with_config(key.to_ascii_lowercase().parse().unwrap(), value);
        }
        Arc::new(builder.build().unwrap())
    }

    /// The requests moto logged for `key` so far, by method (`GET`, `HEAD`).
    pub fn logged(&self, method: &str, key: &str) -> usize {
        let needle = format!("\"{method} /{BUCKET}/{key} ");
        self.log.lock().unwrap().matches(&needle).count()
    }
}

impl Drop for Moto {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The hundred-batch ten-column file of the read-count tests (about 8 MB).
pub fn hundred_batches() -> Vec<u8> {
    quiver_tests::ten_columns::file(100, 1000, quiver::WriterOptions::default())
}
