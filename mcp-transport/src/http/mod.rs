//! Streamable HTTP (revisions 2025-03-26 .. 2025-11-25): every message is POSTed to one
//! endpoint, and the server answers with nothing (202), a JSON body, or an SSE stream carrying
//! its requests and notifications before the response.
//!
//! - Session: the `Mcp-Session-Id` of the `initialize` reply is sent on every later request,
//!   with `MCP-Protocol-Version` set to the revision the `initialize` result named. When the
//!   server forgets the session (404, or a 400 saying so), the transport re-initializes once,
//!   transparently, and retries the request.
//! - Streams: SSE replies are resumed with `Last-Event-ID` when they break before the response;
//!   a standalone GET stream carries what the server sends on its own (405: there is none).
//! - Bounds: bodies and SSE events are limited in size, silent responses in time; every failure
//!   of a request becomes [`TransportEvent::RequestFailed`] for that request.
//! - Modern era (2026-07-28): a message naming its revision in `_meta` carries no session, and
//!   gets `Mcp-Method`, `Mcp-Name` and, on `tools/call`, the `Mcp-Param-*` headers of the
//!   tool's `x-mcp-header` parameters, learnt from the `tools/list` answers carried ([`params`]).
//! - Cancellation: in the modern era, [`Transport::cancel_request`] closes the request's exchange
//!   (its POST or response stream) instead of letting the session send `notifications/cancelled`.
//! - Secrets: header values and the bearer token are never logged; URLs in errors are redacted.
//!   Credentials sent over plain http to a host that is not loopback are warned about, once.
//! - Redirects: followed only within the endpoint's origin ([`crate::http_policy`]).

mod config;
mod inflight;
mod modern;
pub mod params;
mod post;
pub(crate) mod runtime;
mod session;
mod stream;

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use futures::FutureExt;
use futures::future::BoxFuture;
use http::header::{ACCEPT, CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue};
use http::{Method, StatusCode};
use mcp_protocol::{Message, ProtocolVersion, RequestId};
use tokio::sync::{oneshot, watch};

pub use self::config::{DEFAULT_MAX_BODY_BYTES, ResumePolicy, StreamableHttpConfig};
pub(crate) use self::config::{authorization_of, build_headers, has_credentials};
use self::runtime::{BoxedTask, EventQueue, Inline, TaskSet};
pub(crate) use self::session::protocol_version_of;
use self::session::{InitMemory, SessionState};
use self::stream::SeenIds;
use crate::http_client::{Endpoint, HttpClient, Response};
use crate::http_policy::parse_url;
use crate::redact::redact_url;
use crate::{
    CancelHandling, CloseReason, MessageRouter, RouterSlot, SendHints, Transport, TransportError, TransportEvent,
    TransportKind,
};

const SESSION_ID: HeaderName = HeaderName::from_static("mcp-session-id");
const PROTOCOL_VERSION: HeaderName = HeaderName::from_static("mcp-protocol-version");
const LAST_EVENT_ID: HeaderName = HeaderName::from_static("last-event-id");

/// What every POST says it accepts and sends.
static POST_HEADERS: [(HeaderName, HeaderValue); 2] = [
    (ACCEPT, HeaderValue::from_static("application/json, text/event-stream")),
    (CONTENT_TYPE, HeaderValue::from_static("application/json")),
];

/// What the GET stream accepts.
static GET_HEADERS: [(HeaderName, HeaderValue); 1] = [(ACCEPT, HeaderValue::from_static("text/event-stream"))];

/// Events queued for `recv` before senders wait.
const QUEUE_CAPACITY: usize = 256;

pub(crate) fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// The `Mcp-Session-Id` of a response.
pub(crate) fn session_id_header(response: &Response) -> Option<String> {
    let value = response.headers().get(SESSION_ID)?.to_str().ok()?.trim();
    (!value.is_empty()).then(|| value.to_owned())
}

/// A connection to a streamable HTTP server. See the module docs.
pub struct StreamableHttpTransport {
    inner: Arc<Inner>,
    closing: tokio::sync::Mutex<bool>,
}

pub(crate) struct Inner {
    pub(crate) name: Arc<str>,
    client: HttpClient,
    endpoint: Endpoint,
    headers: HeaderMap,
    /// What authorizes the requests, if anything.
    auth: Option<Arc<dyn crate::auth::Authorization>>,
    connect_timeout: Duration,
    pub(crate) read_timeout: Duration,
    pub(crate) max_body: usize,
    pub(crate) resume: ResumePolicy,
    pub(crate) session: watch::Sender<SessionState>,
    init: Mutex<InitMemory>,
    reinit: tokio::sync::Mutex<()>,
    pub(crate) seen: Mutex<SeenIds>,
    queue: EventQueue,
    tasks: Arc<TaskSet>,
    standalone_started: AtomicBool,
    /// Set once the standalone GET stream's first attempt has been answered (or has failed).
    standalone_tried: watch::Sender<bool>,
    pub(crate) internal_ids: AtomicU64,
    pub(crate) tool_headers: Mutex<params::ToolHeaders>,
    /// Modern-era requests in flight, which `cancel_request` cancels by closing their exchange.
    in_flight: Arc<inflight::InFlight>,
    /// Whether the configured headers carry credentials.
    credentials: bool,
    /// Warns once when those credentials would go over plain http to a remote host.
    plain_http: crate::http_policy::PlainHttpWarning,
    /// Takes delivered messages before the queue does (see [`Transport::set_router`]).
    router: RouterSlot,
}

impl std::fmt::Debug for StreamableHttpTransport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StreamableHttpTransport")
            .field("name", &self.inner.name)
            .field("url", &redact_url(&self.inner.endpoint.url))
            .finish_non_exhaustive()
    }
}

impl StreamableHttpTransport {
    /// A transport for `config`. Nothing is sent before the first message. Fails on an invalid
    /// URL or header.
    pub fn new(config: StreamableHttpConfig) -> Result<Self, TransportError> {
        let url = parse_url(&config.url)?;
        let auth = authorization_of(config.authorization.as_ref(), config.bearer_token.as_ref());
        let headers = build_headers(&config.headers, auth.is_some())?;
        let endpoint = Endpoint::new(url)?;
        let client = HttpClient::new(config.connect_timeout, &endpoint)?;
        let inner = Inner {
            name: Arc::from(config.name.as_str()),
            client,
            endpoint,
            headers: headers.clone(),
            connect_timeout: config.connect_timeout,
            read_timeout: config.read_timeout,
            max_body: config.max_body_bytes,
            resume: config.resume,
            session: watch::Sender::new(SessionState::default()),
            init: Mutex::new(InitMemory::default()),
            reinit: tokio::sync::Mutex::new(()),
            seen: Mutex::new(SeenIds::default()),
            queue: EventQueue::new(QUEUE_CAPACITY),
            tasks: Arc::new(TaskSet::new()),
            standalone_started: AtomicBool::new(false),
            standalone_tried: watch::Sender::new(false),
            internal_ids: AtomicU64::new(0),
            tool_headers: Mutex::new(params::ToolHeaders::default()),
            in_flight: Arc::default(),
            credentials: auth.is_some() || config::has_credentials(&headers),
            auth,
            plain_http: crate::http_policy::PlainHttpWarning::new(),
            router: RouterSlot::default(),
        };
        Ok(StreamableHttpTransport { inner: Arc::new(inner), closing: tokio::sync::Mutex::new(false) })
    }

    /// The server's name.
    pub fn name(&self) -> &str {
        &self.inner.name
    }

    /// The session id the server assigned, if any.
    pub fn session_id(&self) -> Option<String> {
        self.inner.session.borrow().id.clone()
    }

    /// The revision the server answered `initialize` with, once known.
    pub fn protocol_version(&self) -> Option<String> {
        self.inner.session.borrow().protocol_version.clone()
    }
}

impl Inner {
    /// The headers of a request: the configured ones, the session's, then `fixed`, `extra` and
    /// `credentials` (appended, as a builder's `header` would), in one map sized for them all
    /// and for what the HTTP client adds.
    fn headers(
        &self,
        session_id: Option<&str>,
        version: Option<&str>,
        [fixed, extra]: [&[(HeaderName, HeaderValue)]; 2],
        credentials: &[(HeaderName, HeaderValue)],
    ) -> HeaderMap {
        // The session id and the version, then room for what the client adds: `Host`, and a
        // forwarding proxy's `Proxy-Authorization` (a full map is rebuilt to make room: about
        // 1,000 instructions a modern-era request, whose headers filled the map).
        let mut headers = self.headers.clone();
        headers.reserve(4 + fixed.len() + extra.len() + credentials.len());
        if let Some(id) = session_id.and_then(|v| HeaderValue::from_str(v).ok()) {
            headers.insert(SESSION_ID, id);
        }
        if let Some(v) = version.and_then(version_header) {
            headers.insert(PROTOCOL_VERSION, v);
        }
        for (name, value) in fixed.iter().chain(extra).chain(credentials) {
            headers.append(name.clone(), value.clone());
        }
        headers
    }

    /// Send a request and wait for its response headers, at most the read timeout.
    async fn send_request(
        &self,
        method: Method,
        headers: impl Fn() -> HeaderMap,
        body: Bytes,
    ) -> Result<Response, TransportError> {
        match tokio::time::timeout(self.read_timeout, self.client.send(method, &self.endpoint, headers, body)).await {
            Ok(Ok(response)) => Ok(response),
            Ok(Err(e)) => Err(TransportError::Other(format!("HTTP request failed: {e}"))),
            Err(_) => Err(TransportError::Other(format!("no response from the server within {:?}", self.read_timeout))),
        }
    }

    /// Send one request, with the provider's credentials; after a refusal that the provider
    /// answers with new credentials, once more ([`crate::auth`]).
    async fn send_built(
        &self,
        method: Method,
        session_id: Option<&str>,
        version: Option<&str>,
        headers: [&[(HeaderName, HeaderValue)]; 2],
        body: Bytes,
    ) -> Result<Response, TransportError> {
        self.plain_http.check(&self.name, &self.endpoint.url, self.credentials);
        crate::auth::send_authorized(self.auth.as_ref(), &method, &self.endpoint.url, |credentials| {
            let (method, body) = (method.clone(), body.clone());
            async move {
                self.send_request(method, || self.headers(session_id, version, headers, &credentials), body).await
            }
        })
        .await
    }

    /// POST a JSON-RPC body.
    pub(crate) async fn post(
        &self,
        body: Bytes,
        session_id: Option<&str>,
        version: Option<&str>,
        extra: &[(HeaderName, HeaderValue)],
    ) -> Result<Response, TransportError> {
        self.send_built(Method::POST, session_id, version, [&POST_HEADERS, extra], body).await
    }

    /// Open an SSE stream with GET, resuming after `last_event_id` when given.
    pub(crate) async fn get(
        &self,
        last_event_id: Option<&str>,
        session: &SessionState,
    ) -> Result<Response, TransportError> {
        let last = last_event_id.and_then(|v| HeaderValue::from_str(v).ok()).map(|id| [(LAST_EVENT_ID, id)]);
        let last = last.as_ref().map_or(&[][..], |last| &last[..]);
        let (id, version) = (session.id.as_deref(), session.protocol_version.as_deref());
        self.send_built(Method::GET, id, version, [&GET_HEADERS, last], Bytes::new()).await
    }

    /// Hand a message to `recv`, learning the negotiated revision from the `initialize` answer
    /// first (so that the next request already carries it).
    pub(crate) async fn deliver(&self, message: Message) {
        if let Some(event) = self.deliver_now(message) {
            self.queue.push(event).await;
        }
    }

    /// [`Inner::deliver`] without waiting: the router takes the message or the queue has room.
    /// Otherwise the message's event comes back (the message was seen: the caller only queues
    /// the event, with [`EventQueue::push`]).
    pub(crate) fn deliver_now(&self, message: Message) -> Option<TransportEvent> {
        if let Some(version) = lock(&self.init).answer(&message) {
            self.session.send_modify(|s| s.protocol_version = version);
        }
        lock(&self.tool_headers).received(&message);
        if self.queue.ended().is_some() {
            return None; // what arrives after the end is dropped, routed or not
        }
        let message = self.router.route(&self.name, message)?;
        self.queue.try_push(TransportEvent::Message(message))
    }

    /// [`Inner::deliver`] for an exchange run in its sender's task: the sender never waits for
    /// room in the queue (it may be the one to read it); a task of the transport queues what
    /// does not fit.
    pub(crate) fn deliver_soon(self: &Arc<Self>, message: Message) {
        if let Some(event) = self.deliver_now(message) {
            self.queue_soon(event);
        }
    }

    /// Fail one request.
    pub(crate) async fn fail(&self, id: RequestId, error: TransportError) {
        tracing::debug!(server = %self.name, %id, %error, "request failed in the transport");
        self.queue.push(TransportEvent::RequestFailed { id, error }).await;
    }

    /// [`Inner::fail`] without waiting (see [`Inner::deliver_soon`]).
    pub(crate) fn fail_soon(self: &Arc<Self>, id: RequestId, error: TransportError) {
        tracing::debug!(server = %self.name, %id, %error, "request failed in the transport");
        if let Some(event) = self.queue.try_push(TransportEvent::RequestFailed { id, error }) {
            self.queue_soon(event);
        }
    }

    /// Queue `event`, which did not fit, from a task of the transport.
    fn queue_soon(self: &Arc<Self>, event: TransportEvent) {
        let inner = self.clone();
        self.tasks.spawn(async move { inner.queue.push(event).await });
    }

    /// Open the standalone GET stream, once.
    pub(crate) fn start_standalone_stream(self: &Arc<Self>) {
        if !self.standalone_started.swap(true, Ordering::AcqRel) {
            self.tasks.spawn(stream::standalone(self.clone()));
        }
    }

    /// Wait, at most `bound`, until the standalone GET stream's first attempt was answered: a
    /// server sends its own requests (an elicitation during a tool call, say) on that stream, and
    /// drops them while it is not open yet.
    pub(crate) async fn standalone_stream_tried(&self, bound: Duration) {
        let mut tried = self.standalone_tried.subscribe();
        let _ = tokio::time::timeout(bound, tried.wait_for(|t| *t)).await;
    }

    /// Called by the standalone stream's task after its first attempt.
    pub(crate) fn standalone_stream_answered(&self) {
        self.standalone_tried.send_replace(true);
    }

    /// End the session on the server: DELETE with the session id (405 means the server keeps
    /// sessions until they expire).
    async fn delete_session(&self) {
        let session = self.session.borrow().clone();
        let Some(id) = session.id.as_deref() else { return };
        let timeout = self.connect_timeout.max(Duration::from_secs(1));
        let credentials = match &self.auth {
            Some(auth) => {
                let info = crate::auth::RequestInfo { method: &Method::DELETE, url: &self.endpoint.url };
                match tokio::time::timeout(timeout, auth.credentials(info)).await {
                    Ok(Ok(c)) => c.headers,
                    _ => Vec::new(),
                }
            }
            None => Vec::new(),
        };
        let version = session.protocol_version.as_deref();
        let headers = || self.headers(Some(id), version, [&[], &[]], &credentials);
        match tokio::time::timeout(timeout, self.client.send(Method::DELETE, &self.endpoint, headers, Bytes::new()))
            .await
        {
            Ok(Ok(r)) if r.status().is_success() || r.status() == StatusCode::METHOD_NOT_ALLOWED => {
                tracing::debug!(server = %self.name, status = %r.status(), "session ended");
            }
            Ok(Ok(r)) => {
                tracing::debug!(server = %self.name, status = %r.status(), "the server refused to end the session")
            }
            Ok(Err(e)) => {
                tracing::debug!(server = %self.name, error = %e, "could not end the session")
            }
            Err(_) => tracing::debug!(server = %self.name, "ending the session timed out"),
        }
    }
}

/// The `MCP-Protocol-Version` value for `version`: a known revision's value is static (no copy
/// per request), another is copied; `None` when it cannot be a header value.
fn version_header(version: &str) -> Option<HeaderValue> {
    match ProtocolVersion::parse(version).static_str() {
        Some(known) => Some(HeaderValue::from_static(known)),
        None => HeaderValue::from_str(version).ok(),
    }
}

impl StreamableHttpTransport {
    /// Send `message`; its modern-era headers come from `hints` when the sender gave them, and
    /// from the message itself otherwise.
    fn send_with(&self, message: Message, hints: Option<SendHints>) -> BoxFuture<'_, Result<(), TransportError>> {
        async move {
            if let Some(reason) = self.inner.queue.ended() {
                return Err(TransportError::Closed(reason));
            }
            if let Message::Request(request) = &message
                && request.method == "initialize"
            {
                lock(&self.inner.init).remember(request);
            }
            let modern = {
                let mut tools = lock(&self.inner.tool_headers);
                let modern = match hints {
                    Some(hints) => modern::hinted(&message, hints, &tools),
                    None => modern::headers(&message, &tools),
                };
                // Parameter headers are of the modern era: only its listings are read for them.
                if modern.is_some() {
                    tools.sent(&message);
                }
                modern
            };
            // A request of a revision that cancels by closing the response stream is tracked.
            let cancellable = match (&message, &modern) {
                (Message::Request(r), Some((version, _))) if version.has_http_stream_cancellation() => {
                    Some(r.id.clone())
                }
                _ => None,
            };
            let (tx, rx) = oneshot::channel();
            // Boxed where it is made (by a function, out of this block): it runs to kilobytes.
            let exchange = post::boxed_exchange(self.inner.clone(), message, modern, tx, cancellable.is_some());
            let exchange: BoxedTask = match cancellable {
                Some(id) => Box::pin(self.inner.in_flight.track(id, exchange)),
                None => exchange,
            };
            // The exchange runs here, in the sender's task, up to the delivery of a JSON reply
            // (an SSE reply goes on in a task of its own). Dropped before that, this future
            // hands it to a task: a POST is never cut half-way, and the reply is still delivered.
            let mut exchange = Inline::new(exchange, self.inner.tasks.clone());
            tokio::select! {
                biased;
                () = &mut exchange => {}
                reason = self.inner.queue.until_end() => {
                    // Closing: the exchange stops here, as the transport's tasks do.
                    exchange.abandon();
                    return Err(TransportError::Closed(reason));
                }
            }
            match rx.await {
                Ok(result) => result,
                Err(_) => Err(TransportError::Closed(self.inner.queue.ended().unwrap_or(CloseReason::Closed))),
            }
        }
        .boxed()
    }
}

impl Transport for StreamableHttpTransport {
    fn send(&self, message: Message) -> BoxFuture<'_, Result<(), TransportError>> {
        self.send_with(message, None)
    }

    fn send_hinted(&self, message: Message, hints: SendHints) -> BoxFuture<'_, Result<(), TransportError>> {
        self.send_with(message, Some(hints))
    }

    fn wants_send_hints(&self) -> bool {
        true
    }

    fn recv(&self) -> BoxFuture<'_, TransportEvent> {
        self.inner.queue.recv().boxed()
    }

    fn close(&self) -> BoxFuture<'_, ()> {
        async move {
            let mut closing = self.closing.lock().await;
            if *closing {
                return;
            }
            *closing = true;
            self.inner.queue.end(CloseReason::Closed, true);
            self.inner.tasks.abort_all();
            self.inner.delete_session().await;
        }
        .boxed()
    }

    fn session_id(&self) -> Option<String> {
        StreamableHttpTransport::session_id(self)
    }

    fn set_router(&self, router: MessageRouter) -> bool {
        self.inner.router.set(router)
    }

    fn kind(&self) -> TransportKind {
        TransportKind::StreamableHttp
    }

    /// Modern era: abort the request's exchange, which closes its POST or response stream.
    /// Legacy era (or a request no longer in flight): not handled, the session sends
    /// `notifications/cancelled` (closing a legacy stream is a disconnection, not a cancellation).
    fn cancel_request(&self, id: &RequestId) -> CancelHandling {
        if self.inner.in_flight.cancel(id) {
            tracing::debug!(server = %self.inner.name, %id, "cancelled a request by closing its exchange");
            CancelHandling::Handled
        } else {
            CancelHandling::NotHandled
        }
    }
}

impl Drop for StreamableHttpTransport {
    fn drop(&mut self) {
        self.inner.queue.end(CloseReason::Closed, true);
        self.inner.tasks.abort_all();
    }
}

#[cfg(test)]
mod version_header_tests {
    use super::*;

    #[test]
    fn known_revisions_are_static_values_and_others_are_copied_when_valid() {
        let known = version_header("2025-11-25").unwrap();
        assert_eq!(known, "2025-11-25");
        let bytes = |v: &HeaderValue| v.as_bytes().as_ptr();
        assert_eq!(bytes(&known), bytes(&version_header("2025-11-25").unwrap()), "one static value");
        assert_eq!(version_header("2099-01-01").unwrap(), "2099-01-01");
        assert_eq!(version_header("line\nbreak"), None, "not a header value");
    }
}
