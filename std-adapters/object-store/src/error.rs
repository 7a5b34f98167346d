//! [`ObjectError`]: what reading an object can fail with, said in words a person can act on.
//!
//! It uses nothing else of the crate: the bottom of it, with `log` and `transport`.
//!
//! A store's refusal is read from its answer once ([`Refusal::of`]): the S3 error code in the
//! XML body (`NoSuchBucket`, `NoSuchKey`, `AccessDenied`, `SignatureDoesNotMatch`, …), else the
//! HTTP status, else an instance-metadata request that found no credentials. The message says
//! what it means and what to change; the store's own error (the XML body, the request id) stays
//! reachable through [`std::error::Error::source`] and [`ObjectError::verbose`].

use std::fmt;
use std::ops::Range;
use std::time::Duration;

/// Why a read from an object store failed.
#[derive(Debug)]
#[non_exhaustive]
pub enum ObjectError {
    /// The store's error, after its retries: a missing object, denied access, an endpoint
    /// that cannot be reached. Displayed in words ([`Refusal`]), without the response body.
    Store(object_store::Error),
    /// A response held another number of bytes than the range asked for (a truncated body).
    Length {
        /// The range asked for.
        range: Range<u64>,
        /// The bytes the response held (or said it held).
        received: u64,
    },
    /// No byte of a response arrived for [`crate::SourceOptions::stall_timeout`], on every try.
    TimedOut {
        /// The object.
        path: String,
        /// The bytes asked for (of the first request; later ones asked for the rest); `None`
        /// for the whole object, or its end (the opening suffix GET).
        range: Option<Range<u64>>,
        /// How long each try waited for a byte.
        waited: Duration,
        /// The requests sent for the range, the first included.
        tries: u32,
    },
    /// The task running the requests failed (the runtime is shutting down).
    Task(tokio::task::JoinError),
    /// The source was opened outside a tokio runtime.
    NoRuntime,
}

/// What a store's refusal means, read from its answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Refusal {
    /// The bucket (container) does not exist (S3 `NoSuchBucket`, Azure `ContainerNotFound`).
    NoSuchBucket,
    /// The object does not exist in the bucket (`NoSuchKey`, `BlobNotFound`, HTTP 404).
    NoSuchKey,
    /// The credentials may not read the object (`AccessDenied`, HTTP 403).
    AccessDenied,
    /// The request's signature is wrong: the secret key does not match the key id, or the
    /// clock is off (`SignatureDoesNotMatch`, `RequestTimeTooSkewed`).
    SignatureDoesNotMatch,
    /// The store does not know the access key id (`InvalidAccessKeyId`).
    InvalidAccessKeyId,
    /// The credentials have expired (`ExpiredToken`).
    ExpiredToken,
    /// No credentials were configured, and the instance-metadata service gave none.
    NoCredentials,
}

impl Refusal {
    /// The refusal `error` reports, if it is one of these.
    pub fn of(error: &object_store::Error) -> Option<Refusal> {
        let text = error.to_string();
        if let Some(code) = s3_code(&text) {
            let refusal = match code {
                "NoSuchBucket" | "ContainerNotFound" => Refusal::NoSuchBucket,
                "NoSuchKey" | "BlobNotFound" => Refusal::NoSuchKey,
                "AccessDenied" | "AuthorizationPermissionMismatch" => Refusal::AccessDenied,
                "SignatureDoesNotMatch" | "RequestTimeTooSkewed" | "AuthenticationFailed" => {
                    Refusal::SignatureDoesNotMatch
                }
                "InvalidAccessKeyId" => Refusal::InvalidAccessKeyId,
                "ExpiredToken" | "TokenRefreshRequired" => Refusal::ExpiredToken,
                _ => return None,
            };
            return Some(refusal);
        }
        // object_store's instance-metadata credential provider: a token, then the role.
        if text.contains("/latest/api/token") || text.contains("/latest/meta-data/iam") {
            return Some(Refusal::NoCredentials);
        }
        match error {
            object_store::Error::NotFound { .. } => Some(Refusal::NoSuchKey),
            object_store::Error::PermissionDenied { .. } => Some(Refusal::AccessDenied),
            _ => None,
        }
    }
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Refusal::NoSuchBucket => "no such bucket",
            Refusal::NoSuchKey => "no such object",
            Refusal::AccessDenied => {
                "access denied (the credentials may not read this object, or the bucket's policy \
                 refuses them)"
            }
            Refusal::SignatureDoesNotMatch => {
                "the request's signature does not match (is the secret key the access key id's, \
                 AWS_SECRET_ACCESS_KEY? is the clock right?)"
            }
            Refusal::InvalidAccessKeyId => {
                "the store does not know this access key id (AWS_ACCESS_KEY_ID)"
            }
            Refusal::ExpiredToken => "the credentials have expired (renew AWS_SESSION_TOKEN)",
            Refusal::NoCredentials => {
                "no credentials found (set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or \
                 AWS_WEB_IDENTITY_TOKEN_FILE and AWS_ROLE_ARN, or AWS_SKIP_SIGNATURE=true for a \
                 public bucket; the instance-metadata service gave none)"
            }
        })
    }
}

/// The object `error` names, if it does.
fn path_of(error: &object_store::Error) -> Option<&str> {
    match error {
        object_store::Error::NotFound { path, .. }
        | object_store::Error::PermissionDenied { path, .. }
        | object_store::Error::Unauthenticated { path, .. } => Some(path),
        _ => None,
    }
}

/// The `<Code>` of an S3 (or Azure) XML error body quoted in `text`.
fn s3_code(text: &str) -> Option<&str> {
    let (_, rest) = text.split_once("<Code>")?;
    let (code, _) = rest.split_once("</Code>")?;
    Some(code.trim())
}

/// `text` without the response body a store quotes after the status (`… status code: 404 Not
/// Found: <?xml …`), on one line.
fn without_body(text: &str) -> String {
    const STATUS: &str = "status code: ";
    let short = match text.find(STATUS) {
        Some(at) => {
            let status = &text[at + STATUS.len()..];
            let end = status.find(": ").map_or(status.len(), |i| i);
            &text[..at + STATUS.len() + end]
        }
        None => text,
    };
    short.split_whitespace().collect::<Vec<_>>().join(" ")
}

impl ObjectError {
    /// The store's refusal this error reports, if it is one [`Refusal`] names.
    pub fn refusal(&self) -> Option<Refusal> {
        match self {
            ObjectError::Store(e) => Refusal::of(e),
            _ => None,
        }
    }

    /// This error with everything the store said (its response body, request ids), on one line.
    pub fn verbose(&self) -> String {
        let text = match self {
            ObjectError::Store(e) => e.to_string(),
            other => other.to_string(),
        };
        text.split_whitespace().collect::<Vec<_>>().join(" ")
    }
}

impl From<object_store::Error> for ObjectError {
    fn from(error: object_store::Error) -> Self {
        ObjectError::Store(error)
    }
}

impl fmt::Display for ObjectError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ObjectError::Store(e) => match (Refusal::of(e), path_of(e)) {
                (Some(Refusal::NoSuchKey), Some(path)) => write!(f, "no such object `{path}`"),
                (Some(refusal @ (Refusal::NoSuchBucket | Refusal::AccessDenied)), Some(path)) => {
                    write!(f, "{refusal}, reading `{path}`")
                }
                (Some(refusal), _) => refusal.fmt(f),
                (None, _) => f.write_str(&without_body(&e.to_string())),
            },
            ObjectError::Length { range, received } => write!(
                f,
                "asked for bytes {}..{} ({} bytes), the response held {received}",
                range.start,
                range.end,
                range.end - range.start
            ),
            ObjectError::TimedOut {
                path,
                range,
                waited,
                tries,
            } => {
                write!(f, "timed out: no byte of `{path}` ")?;
                if let Some(range) = range {
                    write!(f, "bytes {}..{} ", range.start, range.end)?;
                }
                write!(
                    f,
                    "arrived for {waited:?}, {tries} times (raise the wait with \
                     QUIVER_STALL_TIMEOUT or SourceOptions::with_stall_timeout)"
                )
            }
            ObjectError::Task(e) => write!(f, "the request task failed: {e}"),
            ObjectError::NoRuntime => f.write_str("an object source needs a tokio runtime"),
        }
    }
}

impl std::error::Error for ObjectError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ObjectError::Store(e) => Some(e),
            ObjectError::Task(e) => Some(e),
            _ => None,
        }
    }
}

impl embedded_io::Error for ObjectError {
    fn kind(&self) -> embedded_io::ErrorKind {
        match self {
            ObjectError::Length { .. } => embedded_io::ErrorKind::InvalidData,
            ObjectError::TimedOut { .. } => embedded_io::ErrorKind::TimedOut,
            _ => embedded_io::ErrorKind::Other,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn not_found(body: &str) -> object_store::Error {
        object_store::Error::NotFound {
            path: "k.arrow".into(),
            source: format!(
                "Error performing GET http://h/b/k.arrow in 7ms - Server returned non-2xx status \
                 code: 404 Not Found: {body}"
            )
            .into(),
        }
    }

    #[test]
    fn refusals_are_read_from_the_code_and_said_in_words() {
        let bucket = not_found(
            "<?xml version=\"1.0\"?>\n<Error><Code>NoSuchBucket</Code><RequestId>R1</RequestId>",
        );
        let error = ObjectError::from(bucket);
        assert_eq!(error.refusal(), Some(Refusal::NoSuchBucket));
        assert_eq!(error.to_string(), "no such bucket, reading `k.arrow`");
        assert!(error.verbose().contains("R1"), "{}", error.verbose());
        let key = ObjectError::from(not_found("<Error><Code>NoSuchKey</Code></Error>"));
        assert_eq!(key.refusal(), Some(Refusal::NoSuchKey));
        assert_eq!(key.to_string(), "no such object `k.arrow`");
        let html = ObjectError::from(not_found("<html><body>gone</body></html>"));
        assert_eq!(html.refusal(), Some(Refusal::NoSuchKey), "by the status");
        let metadata = ObjectError::from(object_store::Error::Generic {
            store: "S3",
            source: "Error performing PUT http://169.254.169.254/latest/api/token in 8ms - \
                     Server returned non-2xx status code: 403 Forbidden: denied"
                .into(),
        });
        assert_eq!(metadata.refusal(), Some(Refusal::NoCredentials));
        assert!(
            metadata
                .to_string()
                .starts_with("no credentials found (set AWS_ACCESS_KEY_ID")
        );
    }

    #[test]
    fn other_errors_lose_the_body() {
        let error = ObjectError::from(object_store::Error::Generic {
            store: "S3",
            source: "Error performing GET http://h/b/k in 1ms - Server returned non-2xx status \
                     code: 500 Internal Server Error: <Error>\n<RequestId>R2</RequestId></Error>"
                .into(),
        });
        let text = error.to_string();
        assert!(
            text.ends_with("status code: 500 Internal Server Error"),
            "{text}"
        );
        assert!(!text.contains("R2"), "{text}");
    }
}
