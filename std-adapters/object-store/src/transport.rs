//! [`Connector`]: the HTTP client under every cloud store [`crate::from_url`] builds.
//!
//! It uses `log` (where an answer came from) and nothing else of the crate.
//!
//! It is `object_store`'s own reqwest client with three changes, each for a server as it is
//! found rather than as the store's API describes it:
//!
//! - **No overall request timeout.** `object_store`'s default (30 s) covers the body, so a
//!   large object on a slow link failed however steadily it arrived. A request now waits for
//!   progress instead: a stall (no byte for [`crate::SourceOptions::stall_timeout`]) is found
//!   and resumed by the source ([`crate::ObjectSource`]); connecting keeps its own timeout.
//! - **The URL's query on every request** (an `http(s)://` URL's `?…`: a presigned S3 or GCS
//!   URL, an Azure SAS), which `object_store`'s HTTP store would drop.
//! - **Servers without `Range` support**: a ranged GET answered `200` with the whole object
//!   (`python3 -m http.server`) is answered here from that body instead, which is kept as it
//!   arrives (the last such object of the store, in memory while the store lives): this range
//!   and every later one of the object are cut from it, without a copy and with no request,
//!   each receiving its bytes as they arrive, and an empty chunk whenever bytes before it
//!   arrive (so that only a stall of the object is seen as one). The object is fetched
//!   once whatever is read of it; a `200` to a request sent before that was known is dropped.
//!   Each answer says where it came from ([`crate::log::ORIGIN`]), so that the source's log
//!   counts the one request the server saw, with the object's bytes, and not the answers cut
//!   from it.

use crate::log::{Origin, answered_from};
use async_trait::async_trait;
use bytes::Bytes;
use futures::StreamExt;
use http::header::{CONTENT_LENGTH, CONTENT_RANGE, RANGE};
use http::{HeaderMap, Method, StatusCode, Uri};
use http_body::Frame;
use object_store::ClientOptions;
use object_store::client::{
    HttpClient, HttpConnector, HttpError, HttpErrorKind, HttpRequest, HttpResponse,
    HttpResponseBody, HttpService, ReqwestConnector,
};
use std::ops::Range;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};
use tokio::sync::mpsc;

/// Builds the [`Transport`] of a store: see the module docs.
#[derive(Debug, Default)]
pub(crate) struct Connector {
    /// The query string added to every request, without its `?`.
    pub(crate) query: Option<String>,
}

impl HttpConnector for Connector {
    fn connect(&self, options: &ClientOptions) -> object_store::Result<HttpClient> {
        let options = options.clone().with_timeout_disabled();
        let client = ReqwestConnector::default().connect(&options)?;
        Ok(HttpClient::new(Transport {
            client,
            query: self.query.clone(),
            whole: Mutex::new(None),
        }))
    }
}

/// The client with the changes of the module docs.
#[derive(Debug)]
struct Transport {
    client: HttpClient,
    query: Option<String>,
    /// The last object a server sent whole for a ranged GET.
    whole: Mutex<Option<Arc<Download>>>,
}

#[async_trait]
impl HttpService for Transport {
    async fn call(&self, mut request: HttpRequest) -> Result<HttpResponse, HttpError> {
        if let Some(query) = &self.query
            && let Some(uri) = with_query(request.uri(), query)
        {
            *request.uri_mut() = uri;
        }
        let range = (request.method() == Method::GET)
            .then(|| request.headers().get(RANGE))
            .flatten()
            .and_then(|value| value.to_str().ok())
            .and_then(ByteRange::parse);
        let Some(range) = range else {
            return self.client.execute(request).await;
        };
        let uri = request.uri().clone();
        if let Some(download) = self.kept(&uri) {
            answered_from(Origin::Kept);
            return Ok(download.answer(range));
        }
        let response = self.client.execute(request).await?;
        if response.status() != StatusCode::OK {
            return Ok(response);
        }
        // The server ignored the range: its body is every byte, which answer this range and
        // the object's later ones. (A request sent before that was known may have started
        // the object's download already: this answer is then dropped.)
        if let Some(download) = self.kept(&uri) {
            return Ok(download.answer(range));
        }
        let download = Download::start(uri, response).await?;
        *self.whole.lock().unwrap_or_else(PoisonError::into_inner) = Some(Arc::clone(&download));
        answered_from(Origin::Whole(Arc::clone(&download.received)));
        Ok(download.answer(range))
    }
}

impl Transport {
    /// The download of `uri` under way or done, unless it failed.
    fn kept(&self, uri: &Uri) -> Option<Arc<Download>> {
        let kept = self.whole.lock().unwrap_or_else(PoisonError::into_inner);
        kept.as_ref()
            .filter(|download| download.uri == *uri && !download.failed())
            .cloned()
    }
}

/// An object a server sends whole, kept as it arrives: its URI, the answer's headers, its
/// length, and the bytes so far, handed to the ranges waiting for them.
#[derive(Debug)]
struct Download {
    uri: Uri,
    headers: HeaderMap,
    len: u64,
    /// Bytes received so far (changed with `state` locked; the log reads them too).
    received: Arc<AtomicU64>,
    state: Mutex<Arrived>,
}

/// What a [`Download`] keeps, and who waits for more.
#[derive(Debug, Default)]
struct Arrived {
    chunks: Vec<Bytes>,
    /// The ranges still waiting for bytes, and where their bytes go.
    waiting: Vec<(Range<u64>, Sender)>,
    /// Why the body stopped before its end.
    failed: Option<String>,
}

/// Where a range's bytes go.
type Sender = mpsc::UnboundedSender<Result<Bytes, HttpError>>;

impl Download {
    /// Keeps the body of `response`, a `200`: as it arrives (a task reads it) when its length
    /// is known, else all of it before this returns.
    async fn start(uri: Uri, response: HttpResponse) -> Result<Arc<Download>, HttpError> {
        let (parts, body) = response.into_parts();
        let mut headers = parts.headers;
        let len = headers
            .remove(CONTENT_LENGTH)
            .and_then(|value| value.to_str().ok()?.parse::<u64>().ok());
        let Some(len) = len else {
            let body = body.bytes().await?;
            let len = body.len() as u64;
            let state = Mutex::new(Arrived {
                chunks: vec![body],
                ..Arrived::default()
            });
            return Ok(Arc::new(Download {
                uri,
                headers,
                len,
                received: Arc::new(AtomicU64::new(len)),
                state,
            }));
        };
        let download = Arc::new(Download {
            uri,
            headers,
            len,
            received: Arc::default(),
            state: Mutex::default(),
        });
        let reading = Arc::clone(&download);
        tokio::spawn(async move {
            let mut body = body.bytes_stream();
            while let Some(chunk) = body.next().await {
                match chunk {
                    Ok(chunk) => reading.arrived(chunk),
                    Err(e) => return reading.fail(&e.to_string()),
                }
            }
            let received = reading.received.load(Ordering::Relaxed);
            if received != reading.len {
                let said = reading.len;
                reading.fail(&format!("the body ended after {received} of {said} bytes"));
            }
        });
        Ok(download)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Arrived> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Whether the body stopped before its end.
    fn failed(&self) -> bool {
        self.lock().failed.is_some()
    }

    /// Hands `chunk`, the body's next bytes, to the ranges waiting for them, and keeps it.
    fn arrived(&self, chunk: Bytes) {
        let mut state = self.lock();
        let at = self
            .received
            .fetch_add(chunk.len() as u64, Ordering::Relaxed);
        let received = at + chunk.len() as u64;
        state.waiting.retain(|(range, send)| {
            // A range whose bytes are still to come hears that the body moves on (an empty
            // chunk), so that a wait for them is not taken for a stall.
            let part = overlap(&chunk, at, range).unwrap_or_default();
            let _ = send.send(Ok(part));
            range.end > received && !send.is_closed()
        });
        state.chunks.push(chunk);
    }

    /// Ends the waiting ranges with `error`.
    fn fail(&self, error: &str) {
        let mut state = self.lock();
        for (_, send) in state.waiting.drain(..) {
            let _ = send.send(Err(HttpError::new(
                HttpErrorKind::Interrupted,
                Failed(error.into()),
            )));
        }
        state.failed = Some(error.into());
    }

    /// The `206` answer to `range` (`416` when the object has none of its bytes), its body
    /// the range's bytes as they arrive.
    fn answer(&self, range: ByteRange) -> HttpResponse {
        let len = self.len;
        let Some((start, end)) = range.within(len) else {
            let mut response = HttpResponse::new(Bytes::new().into());
            *response.status_mut() = StatusCode::RANGE_NOT_SATISFIABLE;
            if let Ok(value) = format!("bytes */{len}").parse() {
                response.headers_mut().insert(CONTENT_RANGE, value);
            }
            return response;
        };
        let (send, receive) = mpsc::unbounded_channel();
        {
            let mut state = self.lock();
            let mut at = 0;
            for chunk in &state.chunks {
                if let Some(part) = overlap(chunk, at, &(start..end)) {
                    let _ = send.send(Ok(part));
                }
                at += chunk.len() as u64;
            }
            if let Some(error) = &state.failed {
                let error = Failed(error.clone());
                let _ = send.send(Err(HttpError::new(HttpErrorKind::Interrupted, error)));
            } else if self.received.load(Ordering::Relaxed) < end {
                state.waiting.push((start..end, send));
            }
        }
        let mut response = HttpResponse::new(HttpResponseBody::new(Arriving(receive)));
        *response.status_mut() = StatusCode::PARTIAL_CONTENT;
        *response.headers_mut() = self.headers.clone();
        let headers = response.headers_mut();
        if let Ok(value) = format!("bytes {start}-{}/{len}", end - 1).parse() {
            headers.insert(CONTENT_RANGE, value);
        }
        headers.insert(CONTENT_LENGTH, (end - start).into());
        response
    }
}

/// The part of `chunk` (the body's bytes from `at`) within `range`, if any (no copy).
fn overlap(chunk: &Bytes, at: u64, range: &Range<u64>) -> Option<Bytes> {
    let start = range.start.max(at);
    let end = range.end.min(at + chunk.len() as u64);
    (start < end).then(|| chunk.slice((start - at) as usize..(end - at) as usize))
}

/// Why a kept body stopped: the first error's text.
#[derive(Debug)]
struct Failed(String);

impl std::fmt::Display for Failed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Failed {}

/// A range's body: its bytes as the [`Download`] hands them over.
#[derive(Debug)]
struct Arriving(mpsc::UnboundedReceiver<Result<Bytes, HttpError>>);

impl http_body::Body for Arriving {
    type Data = Bytes;
    type Error = HttpError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, HttpError>>> {
        self.0
            .poll_recv(cx)
            .map(|received| received.map(|r| r.map(Frame::data)))
    }
}

/// `uri` with `query` added to its own (joined by `&`), if the result is a URI.
fn with_query(uri: &Uri, query: &str) -> Option<Uri> {
    let text = uri.to_string();
    let joined = if uri.query().is_some() {
        format!("{text}&{query}")
    } else {
        format!("{text}?{query}")
    };
    joined.parse().ok()
}

/// A `Range: bytes=…` header's one range.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ByteRange {
    /// `bytes=A-B`: from A to B, both included.
    Bounded(u64, u64),
    /// `bytes=A-`: from A to the end.
    From(u64),
    /// `bytes=-N`: the last N bytes.
    Suffix(u64),
}

impl ByteRange {
    fn parse(text: &str) -> Option<ByteRange> {
        let (start, end) = text.trim().strip_prefix("bytes=")?.split_once('-')?;
        match (start.trim(), end.trim()) {
            ("", n) => n.parse().ok().map(ByteRange::Suffix),
            (a, "") => a.parse().ok().map(ByteRange::From),
            (a, b) => Some(ByteRange::Bounded(a.parse().ok()?, b.parse().ok()?)),
        }
    }

    /// The bytes of an object of `len` bytes this range names (end excluded), if any.
    fn within(self, len: u64) -> Option<(u64, u64)> {
        let (start, end) = match self {
            ByteRange::Bounded(a, b) => (a, b.saturating_add(1).min(len)),
            ByteRange::From(a) => (a, len),
            ByteRange::Suffix(n) => (len.saturating_sub(n), len),
        };
        (start < end).then_some((start, end))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A download of `len` bytes of which none has arrived.
    fn download(len: u64) -> Download {
        Download {
            uri: Uri::from_static("http://h/f"),
            headers: HeaderMap::new(),
            len,
            received: Arc::default(),
            state: Mutex::default(),
        }
    }

    #[tokio::test]
    async fn ranges_are_cut_from_the_whole_object_as_it_arrives() {
        assert_eq!(
            ByteRange::parse("bytes=2-5"),
            Some(ByteRange::Bounded(2, 5))
        );
        assert_eq!(ByteRange::parse("bytes=-4"), Some(ByteRange::Suffix(4)));
        assert_eq!(ByteRange::parse("bytes=7-"), Some(ByteRange::From(7)));
        assert_eq!(ByteRange::parse("items=1-2"), None);
        let whole = download(10);
        let early = whole.answer(ByteRange::Bounded(2, 5));
        assert_eq!(early.status(), StatusCode::PARTIAL_CONTENT);
        assert_eq!(early.headers()[CONTENT_RANGE], "bytes 2-5/10");
        assert_eq!(early.headers()[CONTENT_LENGTH], "4");
        whole.arrived(Bytes::from_static(b"0123"));
        let tail = whole.answer(ByteRange::Suffix(64));
        assert_eq!(tail.headers()[CONTENT_RANGE], "bytes 0-9/10");
        whole.arrived(Bytes::from_static(b"456789"));
        assert_eq!(&early.into_body().bytes().await.unwrap()[..], b"2345");
        assert_eq!(&tail.into_body().bytes().await.unwrap()[..], b"0123456789");
        assert!(whole.lock().waiting.is_empty());
        assert_eq!(whole.received.load(Ordering::Relaxed), 10);
        let late = whole.answer(ByteRange::From(7));
        assert_eq!(&late.into_body().bytes().await.unwrap()[..], b"789");
        let beyond = whole.answer(ByteRange::From(10));
        assert_eq!(beyond.status(), StatusCode::RANGE_NOT_SATISFIABLE);
        // A body that stops early ends the ranges waiting for it with an error.
        let cut = download(10);
        let waiting = cut.answer(ByteRange::From(0));
        cut.arrived(Bytes::from_static(b"01"));
        cut.fail("reset");
        assert!(waiting.into_body().bytes().await.is_err());
        assert!(cut.failed());
    }

    #[test]
    fn the_query_is_added_to_every_request() {
        let uri = Uri::from_static("http://h/b/f.arrow");
        let signed = with_query(&uri, "X-Amz-Signature=abc&x=1").unwrap();
        assert_eq!(
            signed.to_string(),
            "http://h/b/f.arrow?X-Amz-Signature=abc&x=1"
        );
        let listed = with_query(&Uri::from_static("http://h/?list-type=2"), "sig=1").unwrap();
        assert_eq!(listed.query(), Some("list-type=2&sig=1"));
    }
}
