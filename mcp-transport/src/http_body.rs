//! Bounded reading of HTTP bodies and SSE streams, and the errors they turn into: shared by both
//! HTTP transports and the authorization client's requests.
//!
//! Every read has two bounds: a size (a whole JSON body, or one SSE event) and an idle time
//! between two chunks. SSE framing is parsed by `sse-stream`; this module only feeds it bounded,
//! timed chunks.

use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use bytes::Bytes;
use futures::{Stream, StreamExt};
use http::StatusCode;
use mcp_protocol::Message;
use mcp_protocol::codec::{self, DecodeError, DecodeLimits};
use sse_stream::{Sse, SseByteStream};

use crate::TransportError;

/// How many bytes of a body an error report quotes.
pub(crate) const EXCERPT_BYTES: usize = 1024;

/// How much of an error response is read to look for a JSON-RPC answer in it.
pub(crate) const ERROR_BODY_BYTES: usize = 64 * 1024;

/// SSE input is fed to the parser in slices of at most this many bytes, so the size counted
/// since the last complete event overshoots the event's real size by at most one slice.
const SLICE_BYTES: usize = 8 * 1024;

/// Why reading a body stopped early.
#[derive(Debug, thiserror::Error)]
pub(crate) enum BodyError {
    /// The body or event is larger than the limit.
    #[error("exceeded the size limit of {limit} bytes")]
    TooLarge { limit: usize },
    /// No data arrived for too long.
    #[error("no data for {0:?}")]
    Idle(Duration),
    /// The connection failed (reset, closed mid-body, ...).
    #[error("{0}")]
    Network(String),
    /// The SSE framing could not be parsed.
    #[error("invalid SSE stream: {0}")]
    Parse(String),
}

impl BodyError {
    /// The transport error for a request that this failure ended.
    pub(crate) fn into_transport(self, what: &str) -> TransportError {
        match self {
            BodyError::TooLarge { limit } => TransportError::MessageTooLarge { limit },
            other => TransportError::Other(format!("{what}: {other}")),
        }
    }
}

/// The first [`EXCERPT_BYTES`] of a body as text, for error messages.
pub(crate) fn excerpt(body: &[u8]) -> String {
    let cut = body.len().min(EXCERPT_BYTES);
    let mut text = String::from_utf8_lossy(&body[..cut]).trim().to_owned();
    if body.len() > cut {
        text.push('…');
    }
    if text.is_empty() { "(empty body)".to_owned() } else { text }
}

/// The error for an HTTP error status, quoting the body.
pub(crate) fn status_error(context: &str, status: StatusCode, body: &[u8]) -> TransportError {
    TransportError::Http { status: status.as_u16(), body_excerpt: excerpt(body), context: context.to_owned() }
}

/// A response whose body is read here: the transports' ([`crate::http_client::Response`]) or
/// the authorization client's (`reqwest`'s, as an `http::Response`).
pub(crate) trait ResponseBody:
    http_body::Body<Data = Bytes, Error: std::error::Error> + Send + Unpin + 'static
{
}

impl<B: http_body::Body<Data = Bytes, Error: std::error::Error> + Send + Unpin + 'static> ResponseBody for B {}

/// The next chunk of data of `body`: `None` at its end (trailers are skipped).
async fn next_chunk<B: ResponseBody>(body: &mut B) -> Option<Result<Bytes, B::Error>> {
    loop {
        match http_body_util::BodyExt::frame(body).await? {
            Ok(frame) => match frame.into_data() {
                Ok(data) => return Some(Ok(data)),
                Err(_trailers) => continue,
            },
            Err(e) => return Some(Err(e)),
        }
    }
}

/// Read a whole body, failing past `limit` bytes or after `idle` without data.
pub(crate) async fn read_limited<B: ResponseBody>(
    response: &mut http::Response<B>,
    limit: usize,
    idle: Option<Duration>,
) -> Result<Vec<u8>, BodyError> {
    let announced = crate::http_client::content_length(response);
    if let Some(len) = announced
        && len > limit as u64
    {
        return Err(BodyError::TooLarge { limit });
    }
    // Sized for the body when its length is known (within the limit, checked above).
    let mut body = Vec::with_capacity(announced.map_or(0, |len| len as usize));
    loop {
        let chunk = match idle {
            Some(idle) => {
                tokio::time::timeout(idle, next_chunk(response.body_mut())).await.map_err(|_| BodyError::Idle(idle))?
            }
            None => next_chunk(response.body_mut()).await,
        };
        match chunk {
            None => return Ok(body),
            Some(Err(e)) => return Err(BodyError::Network(crate::redact::describe_error(&e))),
            Some(Ok(chunk)) => {
                if body.len() + chunk.len() > limit {
                    return Err(BodyError::TooLarge { limit });
                }
                body.extend_from_slice(&chunk);
            }
        }
    }
}

/// Up to `max` bytes of a body, for an error report; a failure just ends it early.
pub(crate) async fn read_prefix<B: ResponseBody>(
    response: &mut http::Response<B>,
    max: usize,
    idle: Duration,
) -> Vec<u8> {
    let mut body = Vec::new();
    while body.len() < max {
        match tokio::time::timeout(idle, next_chunk(response.body_mut())).await {
            Ok(Some(Ok(chunk))) => body.extend_from_slice(&chunk[..chunk.len().min(max - body.len())]),
            _ => break,
        }
    }
    body
}

/// The content type of a response, lower-cased, without parameters.
pub(crate) fn content_type<B>(response: &http::Response<B>) -> String {
    media_type(response).to_ascii_lowercase()
}

/// The media type of a response's `Content-Type` as written (no parameters, trimmed; any
/// case), empty when there is none: read without a copy.
pub(crate) fn media_type<B>(response: &http::Response<B>) -> &str {
    response
        .headers()
        .get(http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .map(str::trim)
        .unwrap_or_default()
}

/// Whether a response is an SSE stream.
pub(crate) fn is_event_stream<B>(response: &http::Response<B>) -> bool {
    is_event_stream_type(media_type(response))
}

/// Whether a media type (as [`media_type`] reads it) is that of an SSE stream.
pub(crate) fn is_event_stream_type(media_type: &str) -> bool {
    media_type.eq_ignore_ascii_case("text/event-stream")
}

/// Whether a media type (as [`media_type`] reads it) is JSON: `application/json` or another
/// `...json` type, in any case; an absent one is taken for JSON too.
pub(crate) fn is_json_or_unnamed(media_type: &str) -> bool {
    media_type.is_empty()
        || media_type.get(media_type.len().saturating_sub(4)..).is_some_and(|end| end.eq_ignore_ascii_case("json"))
}

/// Decode a JSON body or an SSE event's data into messages, under `limit` bytes.
pub(crate) fn decode(bytes: &[u8], limit: usize) -> Result<Vec<Result<Message, DecodeError>>, DecodeError> {
    let limits = DecodeLimits { max_line_bytes: limit, ..DecodeLimits::default() };
    codec::decode_line(bytes, &limits).map(|d| d.into_messages())
}

/// [`decode`] for a body the caller gives up: a large one becomes the buffer of its message's
/// payload instead of being copied into one ([`codec::decode_owned_line`]).
pub(crate) fn decode_owned(bytes: Vec<u8>, limit: usize) -> Result<Vec<Result<Message, DecodeError>>, DecodeError> {
    let limits = DecodeLimits { max_line_bytes: limit, ..DecodeLimits::default() };
    codec::decode_owned_line(bytes, &limits).map(|d| d.into_messages())
}

/// The start of a body, enough for its [`excerpt`]: what an error quotes once the body itself
/// has been given up.
pub(crate) fn excerpt_head(body: &[u8]) -> Vec<u8> {
    body[..body.len().min(EXCERPT_BYTES + 1)].to_vec()
}

/// Decode an SSE event's data, dropping (with a log line) what is not JSON-RPC: priming
/// placeholders such as `{}`, and invalid messages. Large data is decoded where it lies.
pub(crate) fn decode_event_data(server: &str, data: String, limit: usize) -> Vec<Message> {
    let quote = |s: &str| s.chars().take(200).collect::<String>();
    let (decoded, data) = if data.len() >= codec::LARGE_LINE {
        let head = quote(&data);
        (decode_owned(data.into_bytes(), limit), head)
    } else {
        (decode(data.as_bytes(), limit), data)
    };
    match decoded {
        Ok(items) => items
            .into_iter()
            .filter_map(|item| match item {
                Ok(m) => Some(m),
                Err(e) => {
                    tracing::warn!(server, error = %e, "dropped an invalid JSON-RPC message from an SSE event");
                    None
                }
            })
            .collect(),
        Err(e) if e.is_noise() => {
            tracing::debug!(server, data = %quote(&data), "skipped SSE event data that is not JSON-RPC");
            Vec::new()
        }
        Err(e) => {
            tracing::warn!(server, error = %e, data = %quote(&data), "dropped an invalid JSON-RPC message from an SSE event");
            Vec::new()
        }
    }
}

type SseItems = Pin<Box<dyn Stream<Item = Result<Sse, sse_stream::Error>> + Send>>;

/// The events of an SSE response, each bounded in size, with an idle timeout between chunks.
pub(crate) struct Events {
    inner: SseItems,
    counted: Arc<AtomicUsize>,
    limit: usize,
    /// An error was returned: the stream has ended.
    failed: bool,
}

struct Feed {
    body: Pin<Box<dyn Stream<Item = Result<Bytes, String>> + Send>>,
    pending: Bytes,
    counted: Arc<AtomicUsize>,
    limit: usize,
    idle: Option<Duration>,
    done: bool,
}

impl Events {
    /// Read the events of `response`; no event may exceed `limit` bytes of data.
    pub(crate) fn new<B: ResponseBody>(response: http::Response<B>, limit: usize, idle: Option<Duration>) -> Self {
        let counted = Arc::new(AtomicUsize::new(0));
        let chunks = futures::stream::unfold(response.into_body(), |mut body| async move {
            let chunk = next_chunk(&mut body).await?;
            Some((chunk.map_err(|e| crate::redact::describe_error(&e)), body))
        });
        let feed =
            Feed { body: Box::pin(chunks), pending: Bytes::new(), counted: counted.clone(), limit, idle, done: false };
        let bytes = futures::stream::unfold(feed, |mut feed| async move {
            let item = feed.next_slice().await?;
            Some((item, feed))
        });
        Events { inner: Box::pin(SseByteStream::new(bytes)), counted, limit, failed: false }
    }

    /// The next event; `None` at the end of the stream. After an error the stream ends.
    pub(crate) async fn next(&mut self) -> Option<Result<Sse, BodyError>> {
        if self.failed {
            return None;
        }
        let item = self.inner.next().await?;
        self.counted.store(0, Ordering::Relaxed);
        let item = match item {
            Ok(event) if event.data.as_ref().is_some_and(|d| d.len() > self.limit) => {
                Err(BodyError::TooLarge { limit: self.limit })
            }
            Ok(event) => Ok(event),
            Err(sse_stream::Error::Body(e)) => Err(match e.downcast::<BodyError>() {
                Ok(e) => *e,
                Err(e) => BodyError::Network(e.to_string()),
            }),
            Err(e) => Err(BodyError::Parse(e.to_string())),
        };
        // An event over the limit is refused here, after the parser read it whole: end the
        // stream too, as the documentation says, rather than go on with the next event.
        self.failed = item.is_err();
        Some(item)
    }
}

impl Feed {
    async fn next_slice(&mut self) -> Option<Result<Bytes, BodyError>> {
        if self.done {
            return None;
        }
        while self.pending.is_empty() {
            let next = match self.idle {
                Some(idle) => match tokio::time::timeout(idle, self.body.next()).await {
                    Ok(next) => next,
                    Err(_) => return self.fail(BodyError::Idle(idle)),
                },
                None => self.body.next().await,
            };
            match next {
                None => {
                    self.done = true;
                    return None;
                }
                Some(Err(e)) => return self.fail(BodyError::Network(e)),
                Some(Ok(chunk)) => self.pending = chunk,
            }
        }
        let slice = self.pending.split_to(self.pending.len().min(SLICE_BYTES));
        let counted = self.counted.fetch_add(slice.len(), Ordering::Relaxed) + slice.len();
        // Field names, line breaks and one slice of look-ahead come on top of the data.
        if counted > self.limit.saturating_add(2 * SLICE_BYTES) {
            return self.fail(BodyError::TooLarge { limit: self.limit });
        }
        Some(Ok(slice))
    }

    fn fail(&mut self, error: BodyError) -> Option<Result<Bytes, BodyError>> {
        self.done = true;
        Some(Err(error))
    }
}

#[cfg(test)]
mod prop_tests;

#[cfg(test)]
mod tests {
    use super::*;

    fn with_content_type(value: &str) -> http::Response<String> {
        let mut response = http::Response::new(String::new());
        response.headers_mut().insert(http::header::CONTENT_TYPE, value.parse().unwrap());
        response
    }

    #[test]
    fn media_types_are_read_in_any_case_without_their_parameters() {
        let sse = with_content_type(" Text/Event-Stream ; charset=utf-8");
        assert!(is_event_stream(&sse));
        assert_eq!(media_type(&sse), "Text/Event-Stream");
        assert_eq!(content_type(&sse), "text/event-stream");
        let json = with_content_type("application/problem+JSON");
        assert!(!is_event_stream(&json));
        assert!(is_json_or_unnamed(media_type(&json)));
        assert!(is_json_or_unnamed(media_type(&http::Response::new(String::new()))));
        for other in ["text/plain", "on", "é", "jsonp/x"] {
            assert!(!is_json_or_unnamed(other), "{other}");
        }
    }

    #[test]
    fn excerpt_is_bounded() {
        let body = "x".repeat(5000);
        let e = excerpt(body.as_bytes());
        assert_eq!(e.chars().count(), EXCERPT_BYTES + 1);
        assert_eq!(excerpt(b"  "), "(empty body)");
    }

    #[test]
    fn event_data_that_is_not_json_rpc_is_skipped() {
        assert!(decode_event_data("s", "{}".into(), 1024).is_empty());
        assert!(decode_event_data("s", "hello".into(), 1024).is_empty());
        let batch = r#"[{"jsonrpc":"2.0","method":"a"},{"jsonrpc":"2.0","id":1,"result":{}}]"#;
        assert_eq!(decode_event_data("s", batch.into(), 1024).len(), 2);
        // Large data too.
        let big = format!("[{}{}]", "{}, ".repeat(codec::LARGE_LINE / 4), r#"{"jsonrpc":"2.0","id":1,"result":{}}"#);
        assert_eq!(decode_event_data("s", big, 64 * codec::LARGE_LINE).len(), 1);
        assert!(
            decode_event_data("s", format!("x{}", "y".repeat(codec::LARGE_LINE)), 64 * codec::LARGE_LINE).is_empty()
        );
    }

    #[test]
    fn a_large_body_becomes_its_payload_where_it_lies() {
        let text = "z".repeat(2 * codec::LARGE_LINE);
        let body = format!(r#"{{"jsonrpc":"2.0","id":4,"result":{{"content":[{{"type":"text","text":"{text}"}}]}}}}"#);
        let borrowed = decode(body.as_bytes(), 4 * codec::LARGE_LINE).unwrap();
        let bytes = body.clone().into_bytes();
        let start = bytes.as_ptr();
        let mut owned = decode_owned(bytes, 4 * codec::LARGE_LINE).unwrap();
        assert_eq!(format!("{owned:?}"), format!("{borrowed:?}"));
        let Some(Ok(Message::Response(response))) = owned.pop() else { panic!("a response") };
        assert_eq!(response.into_result().unwrap().get().as_ptr(), start, "the payload was copied");
        // Over the limit, a large body is refused as a borrowed one is.
        let err = decode_owned(body.clone().into_bytes(), codec::LARGE_LINE).unwrap_err();
        assert_eq!(err, decode(body.as_bytes(), codec::LARGE_LINE).unwrap_err());
        assert_eq!(excerpt(&excerpt_head(body.as_bytes())), excerpt(body.as_bytes()));
        assert_eq!(excerpt(&excerpt_head(b" {} ")), excerpt(b" {} "));
    }
}
