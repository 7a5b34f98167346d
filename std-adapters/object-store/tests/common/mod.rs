//! What the object-store tests share: a store wrapper that counts (and may delay) requests, an
//! S3 client of a `moto_server`, and the files they read.

#![allow(dead_code)]

use async_trait::async_trait;
use futures::stream::BoxStream;
use object_store::path::Path;
use object_store::{
    CopyOptions, GetOptions, GetRange, GetResult, ListResult, MultipartUpload, ObjectMeta,
    ObjectStore, PutMultipartOptions, PutOptions, PutPayload, PutResult, Result,
};
pub use quiver_tests::moto::{BUCKET, Moto};
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

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

/// An S3 client of `moto`'s bucket, configured as its environment says.
pub fn moto_store(moto: &Moto) -> Arc<dyn ObjectStore> {
    let mut builder = object_store::aws::AmazonS3Builder::new().with_bucket_name(BUCKET);
    for (key, value) in moto.env() {
        builder = builder.with_config(key.to_ascii_lowercase().parse().unwrap(), value);
    }
    Arc::new(builder.build().unwrap())
}

/// An S3 client of the bucket `quiver` at a loopback test server `endpoint` (plain HTTP):
/// `retries` times within 5 s, and `timeout` for a whole request (`None`: no overall timeout).
pub fn loopback_s3(
    endpoint: &str,
    retries: usize,
    timeout: Option<Duration>,
) -> Arc<dyn ObjectStore> {
    let retry = object_store::RetryConfig {
        max_retries: retries,
        retry_timeout: Duration::from_secs(5),
        ..object_store::RetryConfig::default()
    };
    let client = object_store::ClientOptions::new().with_allow_http(true);
    let client = match timeout {
        Some(timeout) => client.with_timeout(timeout),
        None => client.with_timeout_disabled(),
    };
    let store = object_store::aws::AmazonS3Builder::new()
        .with_bucket_name("quiver")
        .with_endpoint(endpoint)
        .with_region("us-east-1")
        .with_access_key_id("quiver")
        .with_secret_access_key("quiver")
        .with_client_options(client)
        .with_retry(retry)
        .build()
        .unwrap();
    Arc::new(store)
}

/// Reads one HTTP request's head from a loopback test server's connection: its request line and
/// its `Range` header's value (`bytes=` removed); `None` when the connection ends.
pub async fn request_head<R>(read: &mut R) -> Option<(String, Option<String>)>
where
    R: tokio::io::AsyncBufRead + Unpin,
{
    use tokio::io::AsyncBufReadExt;
    let mut line = String::new();
    if read.read_line(&mut line).await.unwrap_or(0) == 0 {
        return None;
    }
    let mut range = None;
    loop {
        let mut header = String::new();
        if read.read_line(&mut header).await.unwrap_or(0) == 0 {
            return None;
        }
        if header == "\r\n" {
            return Some((line, range));
        }
        if let Some(value) = header.to_ascii_lowercase().strip_prefix("range:") {
            range = Some(value.trim().trim_start_matches("bytes=").to_owned());
        }
    }
}

/// The bundled example file, `examples/data/trips.arrow`.
pub fn trips() -> Vec<u8> {
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/data/trips.arrow");
    std::fs::read(path).unwrap()
}

/// The hundred-batch ten-column file of the read-count tests (about 8 MB).
pub fn hundred_batches() -> Vec<u8> {
    quiver_tests::ten_columns::file(100, 1000, quiver::ipc::WriterOptions::default())
}

/// A store that refuses suffix ranges as `object_store`'s Azure client does (0.14,
/// `azure/client.rs`): `Error::NotSupported` before any request is sent; everything else
/// goes to the store below.
#[derive(Debug)]
pub struct NoSuffix(pub Arc<dyn ObjectStore>);

impl fmt::Display for NoSuffix {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "NoSuffix({})", self.0)
    }
}

#[async_trait]
impl ObjectStore for NoSuffix {
    async fn put_opts(&self, l: &Path, p: PutPayload, o: PutOptions) -> Result<PutResult> {
        self.0.put_opts(l, p, o).await
    }

    async fn put_multipart_opts(
        &self,
        l: &Path,
        o: PutMultipartOptions,
    ) -> Result<Box<dyn MultipartUpload>> {
        self.0.put_multipart_opts(l, o).await
    }

    async fn get_opts(&self, location: &Path, options: GetOptions) -> Result<GetResult> {
        if let Some(GetRange::Suffix(_)) = options.range.as_ref() {
            return Err(object_store::Error::NotSupported {
                source: "Azure does not support suffix range requests".into(),
            });
        }
        self.0.get_opts(location, options).await
    }

    fn delete_stream(
        &self,
        locations: BoxStream<'static, Result<Path>>,
    ) -> BoxStream<'static, Result<Path>> {
        self.0.delete_stream(locations)
    }

    fn list(&self, prefix: Option<&Path>) -> BoxStream<'static, Result<ObjectMeta>> {
        self.0.list(prefix)
    }

    async fn list_with_delimiter(&self, prefix: Option<&Path>) -> Result<ListResult> {
        self.0.list_with_delimiter(prefix).await
    }

    async fn copy_opts(&self, from: &Path, to: &Path, options: CopyOptions) -> Result<()> {
        self.0.copy_opts(from, to, options).await
    }
}

/// Puts `bytes` at `key` in `store`; returns its path.
pub async fn put(store: &dyn ObjectStore, key: &str, bytes: &[u8]) -> Path {
    let path = Path::from(key);
    object_store::ObjectStoreExt::put(store, &path, bytes.to_vec().into())
        .await
        .unwrap();
    path
}

/// The batches of the IPC file `file` read locally, of the columns `paths` (all: `None`).
pub fn local(file: &[u8], paths: Option<&[&str]>) -> Vec<quiver::array::RecordBatch<'static>> {
    use quiver::ipc::{FileReader, Projection, ReaderOptions};
    let mut reader = FileReader::open(file, ReaderOptions::default()).unwrap();
    if let Some(paths) = paths {
        reader.set_projection(Projection::from_paths(reader.schema(), paths).unwrap());
    }
    reader
        .batches()
        .collect::<std::result::Result<_, _>>()
        .unwrap()
}
