//! [`from_url`]: the store and path a URL names, configured from the environment.
//!
//! It uses `transport`.
//!
//! | scheme | store | configured from |
//! | --- | --- | --- |
//! | `s3://bucket/key`, `s3a://` | Amazon S3 and S3-compatible stores (feature `aws`) | `AWS_*` (`AWS_ENDPOINT_URL`, `AWS_REGION`, `AWS_ACCESS_KEY_ID`, `AWS_ALLOW_HTTP`, …) |
//! | `gs://bucket/key` | Google Cloud Storage (feature `gcp`) | `GOOGLE_*` |
//! | `az://`, `abfs(s)://`, `azure://`, `adl://` | Azure Blob Storage (feature `azure`) | `AZURE_*` |
//! | `http://`, `https://` | any HTTP server that answers ranged GETs (feature `http`) | |
//! | `file:///path` | the local file system | |
//! | `memory:///key` | a new, empty in-memory store (for tests) | |
//!
//! Requests that fail transiently are retried up to [`MAX_RETRIES`] times within
//! [`RETRY_TIMEOUT`] (`object_store`'s backoff), so an unreachable endpoint is reported in
//! seconds rather than after `object_store`'s default three minutes. The cloud stores' HTTP
//! client has no overall request timeout, keeps an `http(s)://` URL's query string on every
//! request, and reads servers that ignore `Range` (`transport.rs`).
//!
//! **Keys are taken literally**, as the AWS CLI takes them: in `s3://bucket/KEY` (and `gs://`,
//! `az://`, `abfs(s)://`, `adl://`) everything after the bucket's `/` is the key, byte for
//! byte: `?`, `#`, `%` and spaces included, and nothing is percent-decoded
//! (`s3://b/a%20b?v=1#x` is the key `a%20b?v=1#x`). An `http(s)://` URL is a URL: its path is
//! percent-decoded, its query is sent with every request (a presigned URL's signature, an Azure
//! SAS), its fragment is dropped. One with a query is always read as a plain HTTP URL, even when
//! its host is a cloud store's (`https://b.s3.amazonaws.com/k?X-Amz-Signature=…`): its query
//! is its credentials.
//!
//! An `s3://` endpoint in plain `http://` (`AWS_ENDPOINT_URL`) needs `AWS_ALLOW_HTTP=true`;
//! without it the URL is refused here, with that said ([`UrlError::PlainHttp`]).

#[cfg(any(feature = "aws", feature = "gcp", feature = "azure", feature = "http"))]
use crate::transport::Connector;
use object_store::path::Path;
use object_store::{ObjectStore, ObjectStoreScheme};
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

/// The schemes [`from_url`] reads, for messages.
pub const SCHEMES: &str = "s3://, s3a://, gs://, az://, abfs://, abfss://, azure://, adl://, \
                           http://, https://, file://, memory://";

/// Retries of a request that failed transiently.
pub const MAX_RETRIES: usize = 4;

/// The longest time spent retrying one request.
pub const RETRY_TIMEOUT: Duration = Duration::from_secs(20);

/// What a URL names: a store, the object's path in it, and where the store is, for messages.
#[derive(Debug, Clone)]
pub struct StoreUrl {
    /// The store.
    pub store: Arc<dyn ObjectStore>,
    /// The object's path in the store.
    pub path: Path,
    /// The endpoint requests go to (`http://127.0.0.1:9000`, `https://s3.eu-west-1.amazonaws.com`).
    pub endpoint: String,
    /// The store's kind, for messages: `S3`, `GCS`, `Azure`, `HTTP`, `file`, `memory`.
    pub kind: &'static str,
    /// The bucket (container) the URL names; empty for `http(s)://`, `file://`, `memory://`.
    pub bucket: String,
}

/// Why a URL names no store.
#[derive(Debug)]
#[non_exhaustive]
pub enum UrlError {
    /// Not a URL, or of a scheme no store reads (the message lists [`SCHEMES`]).
    Unsupported {
        /// The text given.
        url: String,
    },
    /// A store this build leaves out: the cargo feature that adds it.
    NotBuilt {
        /// The cargo feature of `quiver-object-store` that adds the store.
        feature: &'static str,
    },
    /// The store's configuration is incomplete or wrong (a bucket name, a region, a key).
    Store(object_store::Error),
    /// A key no store path can hold (an empty segment, as in `a//b`, or `.`, `..`).
    Key {
        /// The key as given.
        key: String,
        /// What is wrong with it.
        reason: String,
    },
    /// An S3 endpoint in plain `http://` without `AWS_ALLOW_HTTP=true`.
    PlainHttp {
        /// The endpoint.
        endpoint: String,
    },
}

impl fmt::Display for UrlError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            UrlError::Unsupported { url } => {
                write!(f, "`{url}` is not a URL quiver reads (schemes: {SCHEMES})")
            }
            UrlError::NotBuilt { feature } => write!(
                f,
                "this build has no `{feature}` store (cargo feature `{feature}` of \
                 quiver-object-store)"
            ),
            UrlError::Store(e) => e.fmt(f),
            UrlError::Key { key, reason } => write!(f, "the key `{key}` cannot be read: {reason}"),
            UrlError::PlainHttp { endpoint } => write!(
                f,
                "the endpoint {endpoint} is plain HTTP: set AWS_ALLOW_HTTP=true to send requests \
                 (and credentials) unencrypted, or use https://"
            ),
        }
    }
}

impl std::error::Error for UrlError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            UrlError::Store(e) => Some(e),
            _ => None,
        }
    }
}

impl From<object_store::Error> for UrlError {
    fn from(error: object_store::Error) -> Self {
        UrlError::Store(error)
    }
}

/// Whether `text` looks like a URL rather than a local path (`scheme://…`).
pub fn is_url(text: &str) -> bool {
    text.split_once("://").is_some_and(|(scheme, _)| {
        !scheme.is_empty()
            && scheme
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
    })
}

/// The store and path `url` names, configured from the environment; see the module docs.
pub fn from_url(url: &str) -> Result<StoreUrl, UrlError> {
    let unsupported = || UrlError::Unsupported {
        url: url.to_owned(),
    };
    let parsed = url::Url::parse(url).map_err(|_| unsupported())?;
    // A bucket URL's scheme is told without its key, which is read below, literally.
    let mut base = parsed.clone();
    if !matches!(parsed.scheme(), "http" | "https" | "file" | "memory") {
        base.set_path("");
        base.set_query(None);
        base.set_fragment(None);
    }
    let (mut scheme, mut path) = ObjectStoreScheme::parse(&base).map_err(|_| unsupported())?;
    // A presigned URL (S3, GCS) or an Azure SAS carries its credentials in its query: it is
    // read as the HTTP URL it is, not through the store its host names.
    if matches!(parsed.scheme(), "http" | "https") && parsed.query().is_some() {
        scheme = ObjectStoreScheme::Http;
        path = Path::from_url_path(parsed.path()).map_err(|e| UrlError::Key {
            key: parsed.path().to_owned(),
            reason: e.to_string(),
        })?;
    }
    let bucket = parsed.host_str().unwrap_or_default().to_owned();
    let (store, endpoint, kind): (Arc<dyn ObjectStore>, String, _) = match scheme {
        ObjectStoreScheme::Local => {
            let store = Arc::new(object_store::local::LocalFileSystem::new());
            return Ok(StoreUrl {
                store,
                path,
                endpoint: "the local file system".into(),
                kind: "file",
                bucket: String::new(),
            });
        }
        ObjectStoreScheme::Memory => {
            let store = Arc::new(object_store::memory::InMemory::new());
            return Ok(StoreUrl {
                store,
                path,
                endpoint: "memory".into(),
                kind: "memory",
                bucket: String::new(),
            });
        }
        ObjectStoreScheme::AmazonS3 => {
            let (store, endpoint) = s3(url)?;
            (store, endpoint, "S3")
        }
        ObjectStoreScheme::GoogleCloudStorage => {
            let (store, endpoint) = gcs(url)?;
            (store, endpoint, "GCS")
        }
        ObjectStoreScheme::MicrosoftAzure => {
            let (store, endpoint) = azure(url)?;
            (store, endpoint, "Azure")
        }
        ObjectStoreScheme::Http => {
            let (store, endpoint) = http(&parsed)?;
            return Ok(StoreUrl {
                store,
                path,
                endpoint,
                kind: "HTTP",
                bucket: String::new(),
            });
        }
        _ => return Err(unsupported()),
    };
    // A bucket's key: literal, unless the URL is an https:// one naming a bucket.
    let path = match literal_key(url) {
        Some(key) if !parsed.scheme().starts_with("http") => {
            Path::parse(key).map_err(|e| UrlError::Key {
                key: key.to_owned(),
                reason: e.to_string(),
            })?
        }
        _ => path,
    };
    Ok(StoreUrl {
        store,
        path,
        endpoint,
        kind,
        bucket,
    })
}

/// The text after `scheme://authority/`: the key of a bucket URL, taken literally.
fn literal_key(url: &str) -> Option<&str> {
    let (_, rest) = url.split_once("://")?;
    let (_, key) = rest.split_once('/')?;
    Some(key)
}

/// The retries of every store built here (the cloud back ends: `file://` and `memory://`
/// have none).
#[cfg(any(feature = "aws", feature = "gcp", feature = "azure", feature = "http"))]
fn retry() -> object_store::RetryConfig {
    object_store::RetryConfig {
        max_retries: MAX_RETRIES,
        retry_timeout: RETRY_TIMEOUT,
        ..object_store::RetryConfig::default()
    }
}

#[cfg(feature = "aws")]
fn s3(url: &str) -> Result<(Arc<dyn ObjectStore>, String), UrlError> {
    use object_store::ClientConfigKey;
    use object_store::aws::{AmazonS3Builder, AmazonS3ConfigKey};
    let builder = AmazonS3Builder::from_env()
        .with_url(url)
        .with_retry(retry())
        .with_http_connector(Connector::default());
    let allow_http =
        builder.get_config_value(&AmazonS3ConfigKey::Client(ClientConfigKey::AllowHttp));
    if let Some(endpoint) = builder.get_config_value(&AmazonS3ConfigKey::Endpoint)
        && endpoint.starts_with("http://")
        && allow_http.is_none_or(|v| v.trim().is_empty() || v.eq_ignore_ascii_case("false"))
    {
        return Err(UrlError::PlainHttp { endpoint });
    }
    let endpoint = builder
        .get_config_value(&AmazonS3ConfigKey::Endpoint)
        .unwrap_or_else(|| {
            let region = builder
                .get_config_value(&AmazonS3ConfigKey::Region)
                .unwrap_or_else(|| "us-east-1".into());
            format!("https://s3.{region}.amazonaws.com")
        });
    Ok((Arc::new(builder.build()?), endpoint))
}

#[cfg(not(feature = "aws"))]
fn s3(_: &str) -> Result<(Arc<dyn ObjectStore>, String), UrlError> {
    Err(UrlError::NotBuilt { feature: "aws" })
}

#[cfg(feature = "gcp")]
fn gcs(url: &str) -> Result<(Arc<dyn ObjectStore>, String), UrlError> {
    use object_store::gcp::GoogleCloudStorageBuilder;
    let builder = GoogleCloudStorageBuilder::from_env()
        .with_url(url)
        .with_retry(retry())
        .with_http_connector(Connector::default());
    Ok((
        Arc::new(builder.build()?),
        "https://storage.googleapis.com".into(),
    ))
}

#[cfg(not(feature = "gcp"))]
fn gcs(_: &str) -> Result<(Arc<dyn ObjectStore>, String), UrlError> {
    Err(UrlError::NotBuilt { feature: "gcp" })
}

#[cfg(feature = "azure")]
fn azure(url: &str) -> Result<(Arc<dyn ObjectStore>, String), UrlError> {
    use object_store::azure::{AzureConfigKey, MicrosoftAzureBuilder};
    let builder = MicrosoftAzureBuilder::from_env()
        .with_url(url)
        .with_retry(retry())
        .with_http_connector(Connector::default());
    let endpoint = builder
        .get_config_value(&AzureConfigKey::Endpoint)
        .unwrap_or_else(|| {
            let account = builder
                .get_config_value(&AzureConfigKey::AccountName)
                .unwrap_or_else(|| "ACCOUNT".into());
            format!("https://{account}.blob.core.windows.net")
        });
    Ok((Arc::new(builder.build()?), endpoint))
}

#[cfg(not(feature = "azure"))]
fn azure(_: &str) -> Result<(Arc<dyn ObjectStore>, String), UrlError> {
    Err(UrlError::NotBuilt { feature: "azure" })
}

#[cfg(feature = "http")]
fn http(url: &url::Url) -> Result<(Arc<dyn ObjectStore>, String), UrlError> {
    use object_store::ClientOptions;
    use object_store::http::HttpBuilder;
    let base = &url[..url::Position::BeforePath];
    let connector = Connector {
        query: url.query().map(str::to_owned),
    };
    let store = HttpBuilder::new()
        .with_url(base)
        .with_retry(retry())
        .with_client_options(ClientOptions::new().with_allow_http(true))
        .with_http_connector(connector)
        .build()?;
    Ok((Arc::new(store), base.to_owned()))
}

#[cfg(not(feature = "http"))]
fn http(_: &url::Url) -> Result<(Arc<dyn ObjectStore>, String), UrlError> {
    Err(UrlError::NotBuilt { feature: "http" })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_are_told_from_paths() {
        for url in ["s3://b/k", "memory:///k", "file:///tmp/x", "https://h/p"] {
            assert!(is_url(url), "{url}");
        }
        for path in ["data.arrow", "/tmp/x.arrow", "-", "a://", "dir/s3://x"] {
            assert_eq!(is_url(path), path == "a://", "{path}");
        }
    }

    #[test]
    fn unknown_schemes_list_the_known_ones() {
        let e = from_url("ftp://host/file").unwrap_err();
        assert!(matches!(e, UrlError::Unsupported { .. }));
        assert!(e.to_string().contains("s3://"), "{e}");
    }

    #[cfg(feature = "http")]
    #[test]
    fn presigned_urls_are_http_urls() {
        let url = "https://b.s3.eu-west-1.amazonaws.com/dir/f%20g.arrow?X-Amz-Signature=a";
        let presigned = from_url(url).unwrap();
        assert_eq!(presigned.kind, "HTTP");
        assert_eq!(presigned.path.as_ref(), "dir/f g.arrow");
        assert_eq!(presigned.endpoint, "https://b.s3.eu-west-1.amazonaws.com");
    }

    #[cfg(feature = "aws")]
    #[test]
    fn s3_keys_are_taken_literally() {
        let url = from_url("s3://b/dir/a b?v=1#x%20y.arrow").unwrap();
        assert_eq!((url.kind, url.bucket.as_str()), ("S3", "b"));
        assert_eq!(url.path.as_ref(), "dir/a b?v=1#x%20y.arrow");
        let error = from_url("s3://b/dir//x.arrow").unwrap_err();
        assert!(matches!(error, UrlError::Key { .. }), "{error}");
    }

    #[test]
    fn memory_and_file_urls_name_their_paths() {
        let url = from_url("memory:///dir/data.arrow").unwrap();
        assert_eq!(url.path.as_ref(), "dir/data.arrow");
        let url = from_url("file:///tmp/data.arrow").unwrap();
        assert_eq!(url.path.as_ref(), "tmp/data.arrow");
    }
}
