//! The legacy HTTP+SSE transport of revision 2024-11-05: GET an SSE stream, wait for its
//! `endpoint` event, then POST every message to that endpoint; everything the server sends,
//! responses included, arrives on the stream.
//!
//! The endpoint must be on the same origin (scheme, host, port) as the configured URL: a server
//! cannot send the client's messages (and its credentials) elsewhere, and redirects are followed
//! only within that origin too ([`crate::http_policy`]). Closing the transport ends
//! the stream; when the server ends it, the transport ends.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use futures::FutureExt;
use futures::future::BoxFuture;
use http::Method;
use http::header::{ACCEPT, CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue};
use mcp_protocol::{Message, codec};
use tokio::sync::oneshot;

use crate::http::runtime::{EventQueue, TaskSet};
use crate::http::{DEFAULT_MAX_BODY_BYTES, authorization_of, build_headers, has_credentials};
use crate::http_body::{self as body, Events};
use crate::http_client::{Endpoint, HttpClient};
use crate::http_policy::{PlainHttpWarning, parse_url};
use crate::redact::{Secret, redact_url};
use crate::{CloseReason, Transport, TransportError, TransportEvent, TransportKind};

const PROTOCOL_VERSION: &str = "mcp-protocol-version";

/// How to reach a legacy HTTP+SSE server.
#[derive(Clone)]
pub struct SseConfig {
    /// The server's name, used in logs and errors.
    pub name: String,
    /// The SSE URL, e.g. `http://127.0.0.1:3001/sse`.
    pub url: String,
    /// Extra headers sent with every request. Values are never logged.
    pub headers: Vec<(String, String)>,
    /// A bearer token, sent as `Authorization: Bearer <token>`; it replaces any configured
    /// `Authorization` header.
    pub bearer_token: Option<Secret>,
    /// What authorizes the requests (OAuth, say); it takes precedence over `bearer_token`, and
    /// replaces any configured `Authorization` header.
    pub authorization: Option<Arc<dyn crate::auth::Authorization>>,
    /// How long establishing a connection may take (default 10 s).
    pub connect_timeout: Duration,
    /// How long to wait for the stream and its `endpoint` event (default 10 s).
    pub endpoint_timeout: Duration,
    /// How long a POST may wait for its response headers (default 60 s).
    pub post_timeout: Duration,
    /// How long the stream may stay silent before the transport ends (default: no limit; the
    /// stream is the only channel and cannot be resumed).
    pub read_timeout: Option<Duration>,
    /// Largest SSE event accepted (default 32 MiB).
    pub max_body_bytes: usize,
}

impl SseConfig {
    /// A config for `url` with the defaults.
    pub fn new(name: impl Into<String>, url: impl Into<String>) -> Self {
        SseConfig {
            name: name.into(),
            url: url.into(),
            headers: Vec::new(),
            bearer_token: None,
            authorization: None,
            connect_timeout: Duration::from_secs(10),
            endpoint_timeout: Duration::from_secs(10),
            post_timeout: Duration::from_secs(60),
            read_timeout: None,
            max_body_bytes: DEFAULT_MAX_BODY_BYTES,
        }
    }
}

impl std::fmt::Debug for SseConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SseConfig")
            .field("name", &self.name)
            .field("url", &crate::redact::redact_url_str(&self.url))
            .field("header_names", &self.headers.iter().map(|(k, _)| k).collect::<Vec<_>>())
            .field("bearer_token", &self.bearer_token)
            .field("connect_timeout", &self.connect_timeout)
            .field("endpoint_timeout", &self.endpoint_timeout)
            .field("read_timeout", &self.read_timeout)
            .field("max_body_bytes", &self.max_body_bytes)
            .finish_non_exhaustive()
    }
}

/// A connection to a legacy HTTP+SSE server. See the module docs.
pub struct SseTransport {
    inner: Arc<Inner>,
}

struct Inner {
    name: Arc<str>,
    client: HttpClient,
    endpoint: Endpoint,
    headers: HeaderMap,
    /// What authorizes the requests, if anything.
    auth: Option<Arc<dyn crate::auth::Authorization>>,
    post_timeout: Duration,
    /// The revision named by the answer to `initialize`, sent as `MCP-Protocol-Version`.
    version: Mutex<(Option<mcp_protocol::RequestId>, Option<String>)>,
    queue: Arc<EventQueue>,
    tasks: Arc<TaskSet>,
    /// Whether the configured headers carry credentials.
    credentials: bool,
    /// Warns once when those credentials would go over plain http to a remote host.
    plain_http: PlainHttpWarning,
}

impl std::fmt::Debug for SseTransport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SseTransport")
            .field("name", &self.inner.name)
            .field("endpoint", &redact_url(&self.inner.endpoint.url))
            .finish_non_exhaustive()
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl SseTransport {
    /// Open the SSE stream and wait for the server's `endpoint` event. Must be called within a
    /// Tokio runtime.
    pub async fn connect(config: SseConfig) -> Result<Self, TransportError> {
        let name = config.name.as_str();
        let url = parse_url(&config.url)?;
        let auth = authorization_of(config.authorization.as_ref(), config.bearer_token.as_ref());
        let headers = build_headers(&config.headers, auth.is_some())?;
        let stream = Endpoint::new(url.clone())?;
        let client = HttpClient::new(config.connect_timeout, &stream)?;
        let credentials = auth.is_some() || has_credentials(&headers);
        let plain_http = PlainHttpWarning::new();
        plain_http.check(name, &url, credentials);
        let timed_out = || TransportError::Other(format!("no endpoint event within {:?}", config.endpoint_timeout));

        // The authorization flow (a login, say) is not counted in the endpoint timeout.
        let base = &headers;
        let mut response = crate::auth::send_authorized(auth.as_ref(), &Method::GET, &url, |extra| {
            let event_stream = (ACCEPT, HeaderValue::from_static("text/event-stream"));
            let request_headers = move || with_headers(base, &event_stream, &extra);
            let sent = client.send(Method::GET, &stream, request_headers, Bytes::new());
            async {
                tokio::time::timeout(config.endpoint_timeout, sent)
                    .await
                    .map_err(|_| timed_out())?
                    .map_err(|e| TransportError::Other(format!("opening the SSE stream failed: {e}")))
            }
        })
        .await?;
        // A huge timeout from code means "no limit", not a panic in `Instant + Duration`.
        let now = tokio::time::Instant::now();
        let deadline = now
            .checked_add(config.endpoint_timeout)
            .unwrap_or_else(|| now + Duration::from_secs(100 * 365 * 24 * 3600));
        let status = response.status();
        if !status.is_success() || !body::is_event_stream(&response) {
            let bytes = body::read_prefix(&mut response, body::EXCERPT_BYTES, config.endpoint_timeout).await;
            return Err(body::status_error("opening the SSE stream", status, &bytes));
        }

        let queue = Arc::new(EventQueue::new(256));
        let tasks = Arc::new(TaskSet::new());
        let (endpoint_tx, endpoint_rx) = oneshot::channel();
        let events = Events::new(response, config.max_body_bytes, config.read_timeout);
        let reader = Reader { name: Arc::from(name), queue: queue.clone(), max_body: config.max_body_bytes };
        tasks.spawn(reader.run(events, endpoint_tx));

        let announced = match tokio::time::timeout_at(deadline, endpoint_rx).await {
            Ok(Ok(endpoint)) => endpoint,
            Ok(Err(_)) => {
                tasks.abort_all();
                let reason = queue.ended().map(|r| r.to_string()).unwrap_or_else(|| "stream ended".into());
                return Err(TransportError::Other(format!("the SSE stream ended before an endpoint event ({reason})")));
            }
            Err(_) => {
                tasks.abort_all();
                return Err(timed_out());
            }
        };
        let endpoint = match resolve_endpoint(&url, &announced).and_then(Endpoint::new) {
            Ok(e) => e,
            Err(e) => {
                tasks.abort_all();
                return Err(e);
            }
        };
        let inner = Inner {
            name: Arc::from(name),
            client,
            endpoint,
            headers,
            auth,
            post_timeout: config.post_timeout,
            version: Mutex::new((None, None)),
            queue,
            tasks,
            credentials,
            plain_http,
        };
        Ok(SseTransport { inner: Arc::new(inner) })
    }

    /// The server's name.
    pub fn name(&self) -> &str {
        &self.inner.name
    }

    /// The URL messages are POSTed to, as the server announced it (resolved).
    pub fn endpoint(&self) -> &url::Url {
        &self.inner.endpoint.url
    }
}

/// A request's headers: `base`, then `fixed` and the credentials `extra` (appended).
fn with_headers(base: &HeaderMap, fixed: &(HeaderName, HeaderValue), extra: &[(HeaderName, HeaderValue)]) -> HeaderMap {
    let mut headers = base.clone();
    for (name, value) in std::iter::once(fixed).chain(extra) {
        headers.append(name.clone(), value.clone());
    }
    headers
}

/// Resolve the announced endpoint against the SSE URL and check it stays on the same origin.
fn resolve_endpoint(sse_url: &url::Url, announced: &str) -> Result<url::Url, TransportError> {
    let endpoint = sse_url.join(announced.trim()).map_err(|e| {
        TransportError::Other(format!("invalid endpoint {:?} in the endpoint event: {e}", announced.trim()))
    })?;
    if endpoint.origin() != sse_url.origin() {
        return Err(TransportError::Other(format!(
            "refusing endpoint {} announced by the SSE stream at {}: it is not on the same origin (scheme, host and port)",
            redact_url(&endpoint),
            redact_url(sse_url)
        )));
    }
    Ok(endpoint)
}

/// Reads the SSE stream: the first `endpoint` event goes to `connect`, messages go to `recv`.
struct Reader {
    name: Arc<str>,
    queue: Arc<EventQueue>,
    max_body: usize,
}

impl Reader {
    async fn run(self, mut events: Events, endpoint: oneshot::Sender<String>) {
        let mut endpoint = Some(endpoint);
        let reason = loop {
            let event = match events.next().await {
                None => break CloseReason::PeerClosed,
                Some(Ok(event)) => event,
                Some(Err(e)) => {
                    tracing::debug!(server = %self.name, error = %e, "the SSE stream broke");
                    break CloseReason::Io(Arc::new(std::io::Error::other(format!("SSE stream: {e}"))));
                }
            };
            match event.event.as_deref() {
                Some("endpoint") => match endpoint.take() {
                    Some(tx) => {
                        let _ = tx.send(event.data.unwrap_or_default());
                    }
                    None => tracing::debug!(server = %self.name, "ignored a second endpoint event"),
                },
                None | Some("message") => {
                    let Some(data) = event.data.filter(|d| !d.trim().is_empty()) else { continue };
                    for message in body::decode_event_data(&self.name, data, self.max_body) {
                        self.queue.push(TransportEvent::Message(message)).await;
                    }
                }
                Some(other) => {
                    tracing::debug!(server = %self.name, event = other, "skipped an SSE event of unknown type")
                }
            }
        };
        self.queue.end(reason, false);
    }
}

impl Inner {
    async fn post(&self, message: &Message) -> Result<(), TransportError> {
        self.plain_http.check(&self.name, &self.endpoint.url, self.credentials);
        let mut headers = self.headers.clone();
        if let Some(v) = lock(&self.version).1.as_deref().and_then(|v| HeaderValue::from_str(v).ok()) {
            headers.insert(PROTOCOL_VERSION, v);
        }
        let body = Bytes::from(codec::encode_line(message));
        let base = &headers;
        let mut response =
            crate::auth::send_authorized(self.auth.as_ref(), &Method::POST, &self.endpoint.url, |extra| {
                let json = (CONTENT_TYPE, HeaderValue::from_static("application/json"));
                let request_headers = move || with_headers(base, &json, &extra);
                let sent = self.client.send(Method::POST, &self.endpoint, request_headers, body.clone());
                async move {
                    match tokio::time::timeout(self.post_timeout, sent).await {
                        Ok(Ok(r)) => Ok(r),
                        Ok(Err(e)) => Err(TransportError::Other(format!("HTTP request failed: {e}"))),
                        Err(_) => Err(TransportError::Other(format!(
                            "no response from the server within {:?}",
                            self.post_timeout
                        ))),
                    }
                }
            })
            .await?;
        let status = response.status();
        if status.is_success() {
            return Ok(());
        }
        let bytes = body::read_prefix(&mut response, body::EXCERPT_BYTES, self.post_timeout).await;
        let what = message.method().unwrap_or("response");
        Err(body::status_error(what, status, &bytes))
    }
}

impl Transport for SseTransport {
    fn send(&self, message: Message) -> BoxFuture<'_, Result<(), TransportError>> {
        async move {
            let inner = &self.inner;
            if let Some(reason) = inner.queue.ended() {
                return Err(TransportError::Closed(reason));
            }
            if let Message::Request(r) = &message
                && r.method == "initialize"
            {
                lock(&inner.version).0 = Some(r.id.clone());
            }
            let id = match &message {
                Message::Request(r) => Some(r.id.clone()),
                _ => None,
            };
            match (inner.post(&message).await, id) {
                (Ok(()), _) => Ok(()),
                (Err(error), Some(id)) => {
                    inner.queue.push(TransportEvent::RequestFailed { id, error }).await;
                    Ok(())
                }
                (Err(error), None) => Err(error),
            }
        }
        .boxed()
    }

    fn recv(&self) -> BoxFuture<'_, TransportEvent> {
        async move {
            let event = self.inner.queue.recv().await;
            if let TransportEvent::Message(Message::Response(r)) = &event {
                let mut version = lock(&self.inner.version);
                if r.id.is_some() && r.id == version.0 {
                    version.0 = None;
                    if let mcp_protocol::ResponsePayload::Result(raw) = &r.payload {
                        version.1 = crate::http::protocol_version_of(raw);
                    }
                }
            }
            event
        }
        .boxed()
    }

    fn close(&self) -> BoxFuture<'_, ()> {
        self.inner.queue.end(CloseReason::Closed, true);
        self.inner.tasks.abort_all();
        futures::future::ready(()).boxed()
    }

    fn kind(&self) -> TransportKind {
        TransportKind::Sse
    }
}

impl Drop for SseTransport {
    fn drop(&mut self) {
        self.inner.queue.end(CloseReason::Closed, true);
        self.inner.tasks.abort_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoints_resolve_and_stay_on_origin() {
        let sse = url::Url::parse("http://127.0.0.1:3001/sse").unwrap();
        let e = resolve_endpoint(&sse, "/message?sessionId=abc").unwrap();
        assert_eq!(e.as_str(), "http://127.0.0.1:3001/message?sessionId=abc");
        assert!(resolve_endpoint(&sse, "http://127.0.0.1:3001/m").is_ok());
        for other in ["http://127.0.0.1:3002/m", "https://127.0.0.1:3001/m", "http://evil.example/m"] {
            let e = resolve_endpoint(&sse, other).unwrap_err().to_string();
            assert!(e.contains("same origin") && e.contains("127.0.0.1:3001/sse"), "{e}");
        }
    }
}
