//! [`Connector`]: the HTTP client under every cloud store [`crate::from_url`] builds.
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
//!   (`python3 -m http.server`) is answered here from that body instead, which is kept (the
//!   last such object of the store): every later range of the object is cut from it with no
//!   request, so the object is fetched once whatever is read of it. The whole body is read
//!   before the first range is answered, and held in memory while the store lives.

use async_trait::async_trait;
use bytes::Bytes;
use http::header::{CONTENT_LENGTH, CONTENT_RANGE, RANGE};
use http::{HeaderMap, Method, StatusCode, Uri};
use object_store::ClientOptions;
use object_store::client::{
    HttpClient, HttpConnector, HttpError, HttpRequest, HttpResponse, HttpService, ReqwestConnector,
};
use std::sync::{Arc, Mutex, PoisonError};

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
    whole: Mutex<Option<Arc<Whole>>>,
}

/// An object a server sent whole: its URI, the answer's headers, every byte.
#[derive(Debug)]
struct Whole {
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
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
        let kept = {
            let kept = self.whole.lock().unwrap_or_else(PoisonError::into_inner);
            kept.as_ref().filter(|w| w.uri == uri).cloned()
        };
        if let Some(whole) = kept {
            return Ok(whole.answer(range));
        }
        let response = self.client.execute(request).await?;
        if response.status() != StatusCode::OK {
            return Ok(response);
        }
        // The server ignored the range: it sent every byte, which answer this range and the
        // object's later ones.
        let (parts, body) = response.into_parts();
        let mut headers = parts.headers;
        headers.remove(CONTENT_LENGTH);
        let whole = Arc::new(Whole {
            uri,
            headers,
            body: body.bytes().await?,
        });
        let answer = whole.answer(range);
        *self.whole.lock().unwrap_or_else(PoisonError::into_inner) = Some(whole);
        Ok(answer)
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

impl Whole {
    /// The `206` answer to `range` (`416` when the object has none of its bytes).
    fn answer(&self, range: ByteRange) -> HttpResponse {
        let len = self.body.len() as u64;
        let (status, content_range, body) = match range.within(len) {
            Some((start, end)) => (
                StatusCode::PARTIAL_CONTENT,
                format!("bytes {start}-{}/{len}", end - 1),
                self.body.slice(start as usize..end as usize),
            ),
            None => (
                StatusCode::RANGE_NOT_SATISFIABLE,
                format!("bytes */{len}"),
                Bytes::new(),
            ),
        };
        let mut response = HttpResponse::new(body.clone().into());
        *response.status_mut() = status;
        *response.headers_mut() = self.headers.clone();
        let headers = response.headers_mut();
        if let Ok(value) = content_range.parse() {
            headers.insert(CONTENT_RANGE, value);
        }
        headers.insert(CONTENT_LENGTH, body.len().into());
        response
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_parse_and_are_cut_from_the_whole_object() {
        assert_eq!(
            ByteRange::parse("bytes=2-5"),
            Some(ByteRange::Bounded(2, 5))
        );
        assert_eq!(ByteRange::parse("bytes=-4"), Some(ByteRange::Suffix(4)));
        assert_eq!(ByteRange::parse("bytes=7-"), Some(ByteRange::From(7)));
        assert_eq!(ByteRange::parse("items=1-2"), None);
        let whole = Whole {
            uri: Uri::from_static("http://h/f"),
            headers: HeaderMap::new(),
            body: Bytes::from_static(b"0123456789"),
        };
        let answer = whole.answer(ByteRange::Bounded(2, 5));
        assert_eq!(answer.status(), StatusCode::PARTIAL_CONTENT);
        assert_eq!(answer.headers()[CONTENT_RANGE], "bytes 2-5/10");
        assert_eq!(answer.headers()[CONTENT_LENGTH], "4");
        let answer = whole.answer(ByteRange::Suffix(64));
        assert_eq!(answer.headers()[CONTENT_RANGE], "bytes 0-9/10");
        let answer = whole.answer(ByteRange::From(10));
        assert_eq!(answer.status(), StatusCode::RANGE_NOT_SATISFIABLE);
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
