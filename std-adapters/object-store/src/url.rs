//! [`from_url`]: the store and path a URL names, configured from the environment.
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
//! seconds rather than after `object_store`'s default three minutes.

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
    let (scheme, path) = ObjectStoreScheme::parse(&parsed).map_err(|_| unsupported())?;
    let (store, endpoint): (Arc<dyn ObjectStore>, String) = match scheme {
        ObjectStoreScheme::Local => (
            Arc::new(object_store::local::LocalFileSystem::new()),
            "the local file system".into(),
        ),
        ObjectStoreScheme::Memory => (
            Arc::new(object_store::memory::InMemory::new()),
            "memory".into(),
        ),
        ObjectStoreScheme::AmazonS3 => s3(url)?,
        ObjectStoreScheme::GoogleCloudStorage => gcs(url)?,
        ObjectStoreScheme::MicrosoftAzure => azure(url)?,
        ObjectStoreScheme::Http => http(&parsed)?,
        _ => return Err(unsupported()),
    };
    Ok(StoreUrl {
        store,
        path,
        endpoint,
    })
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
    use object_store::aws::{AmazonS3Builder, AmazonS3ConfigKey};
    let builder = AmazonS3Builder::from_env()
        .with_url(url)
        .with_retry(retry());
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
        .with_retry(retry());
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
        .with_retry(retry());
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
    let store = HttpBuilder::new()
        .with_url(base)
        .with_retry(retry())
        .with_client_options(ClientOptions::new().with_allow_http(true))
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

    #[test]
    fn memory_and_file_urls_name_their_paths() {
        let url = from_url("memory:///dir/data.arrow").unwrap();
        assert_eq!(url.path.as_ref(), "dir/data.arrow");
        let url = from_url("file:///tmp/data.arrow").unwrap();
        assert_eq!(url.path.as_ref(), "tmp/data.arrow");
    }
}
