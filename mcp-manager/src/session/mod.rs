//! The session engine: requests with ids and deadlines over a [`Transport`], a pending map in
//! which every entry resolves, and concurrent dispatch of what the server asks.
//!
//! Every request ends in exactly one way: the server's result, its error object, a timeout, or
//! the transport's end (then all pending requests fail at once with the reason). A request that
//! times out or whose future is dropped is cancelled: by the transport where it has a way of its
//! own (streamable HTTP in the modern era closes the response stream), otherwise with
//! `notifications/cancelled`. A late answer is ignored. Every deadline saturates: no timeout
//! value, `Duration::MAX` included, can overflow the clock. One timer per session keeps every
//! request's deadline (`session/pending.rs`): a request arms none of its own. Progress extends
//! the deadline only of a request that asked for progress (its token is its id), and never past
//! the hard cap.
//!
//! The server's requests are served concurrently, at most `max_inbound_requests` at once (the
//! input requests of multi round-trip results count too); a request whose id is still being
//! served is refused. Replies and `notifications/cancelled` are sent in the background through a
//! bounded outbox: a fixed number in flight, each under a timeout, all stopped when the session
//! closes or is dropped, none holding the session or a lock. A server that floods requests and
//! never reads can neither pile up tasks nor keep its transport alive.

mod error;
mod inbound;
mod meta;
mod outbox;
mod pending;

use std::borrow::Cow;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::Duration;

use futures::FutureExt;
use futures::future::BoxFuture;
use mcp_protocol::types::cancellation::CancelledParams;
use mcp_protocol::types::meta::JsonObject;
use mcp_protocol::types::progress::ProgressParams;
use mcp_protocol::{Message, NotificationMethod, RawJson, Request, RequestId, RequestMethod};
use mcp_transport::{CancelHandling, CloseReason, Transport};
use tokio::sync::{oneshot, watch};
use tracing::Instrument;

pub use self::error::SessionError;
pub use self::inbound::{InboundHandler, NoHandler};
use self::meta::RequestMeta;
use self::outbox::Outbox;
pub(crate) use self::pending::Deadline;
use self::pending::{Pending, PendingMap};
use crate::telemetry;

/// The answer to a request started with [`Session::request_unbounded`].
pub type Answer<T> = BoxFuture<'static, Result<T, SessionError>>;

/// Called with each progress notification of a request, in arrival order and before the answer
/// it precedes, on the task that reads the server's messages (the transport's own, when it
/// routes): keep it quick. A panic in it loses that report (with a warning); the request and the
/// session go on.
pub type ProgressCallback = Arc<dyn Fn(ProgressParams) + Send + Sync>;

/// Limits of a session.
#[derive(Debug, Clone)]
pub struct SessionOptions {
    /// The server's name, for errors and logs.
    pub name: String,
    /// Default time a request waits for its answer (default 60 s).
    pub request_timeout: Duration,
    /// Hard cap on a request's life, however much progress it reports (default 10 min).
    pub max_request_timeout: Duration,
    /// Most server requests handled at once; beyond it they are refused (default 64). The input
    /// requests of multi round-trip results count too (they wait for a free slot). 0 counts as 1.
    pub max_inbound_requests: usize,
}

impl SessionOptions {
    /// Defaults for a server called `name`.
    pub fn new(name: impl Into<String>) -> Self {
        SessionOptions {
            name: name.into(),
            request_timeout: Duration::from_secs(60),
            max_request_timeout: Duration::from_secs(600),
            max_inbound_requests: 64,
        }
    }
}

/// Options of one request.
#[derive(Clone, Default)]
pub struct RequestOptions {
    /// Overrides the session's default timeout.
    pub timeout: Option<Duration>,
    /// Ask for progress: a `progressToken` is added to `params._meta`, each progress notification
    /// calls this and extends the deadline (up to the hard cap).
    pub progress: Option<ProgressCallback>,
}

impl std::fmt::Debug for RequestOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RequestOptions")
            .field("timeout", &self.timeout)
            .field("progress", &self.progress.is_some())
            .finish()
    }
}

pub(crate) struct Shared {
    pub(crate) name: Arc<str>,
    pub(crate) transport: Arc<dyn Transport>,
    pub(crate) pending: PendingMap,
    pub(crate) options: SessionOptions,
    pub(crate) closed: watch::Sender<Option<CloseReason>>,
    /// The background sends (replies, `notifications/cancelled`), bounded.
    pub(crate) outbox: Outbox,
    /// One permit per server request being served (`max_inbound_requests`).
    pub(crate) inbound: Arc<tokio::sync::Semaphore>,
    next_id: AtomicI64,
    /// Members added to every request's `params._meta` (the modern era's protocol version,
    /// client capabilities and client info).
    request_meta: std::sync::RwLock<Option<Arc<RequestMeta>>>,
    /// The transport reads send hints ([`Transport::wants_send_hints`], asked once).
    wants_hints: bool,
    /// The connection's span and revision, for the spans of requests.
    pub(crate) telemetry: crate::telemetry::SessionTelemetry,
}

impl Shared {
    /// Whether this session ever sent a request with this id.
    pub(crate) fn issued(&self, id: &RequestId) -> bool {
        matches!(id, RequestId::Number(n) if *n >= 0 && *n < self.next_id.load(Ordering::Relaxed))
    }
}

/// A JSON-RPC session with one server. Cheap to clone; all clones share the session.
///
/// Dropping the last clone stops the session's reader and releases the transport without
/// waiting (for stdio: the process group is killed); [`Session::close`] is the graceful end.
#[derive(Clone)]
pub struct Session {
    shared: Arc<Shared>,
    _reader: Arc<ReaderGuard>,
}

/// Stops the reader task and the deadlines' timer when the last [`Session`] clone drops. They
/// hold the transport, so without this a dropped session would keep its server running.
struct ReaderGuard([tokio::task::AbortHandle; 2]);

impl Drop for ReaderGuard {
    fn drop(&mut self) {
        for task in &self.0 {
            task.abort();
        }
    }
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session").field("name", &self.shared.name).finish_non_exhaustive()
    }
}

impl Session {
    /// Start a session over `transport`; `handler` answers what the server asks. Must be called
    /// within a Tokio runtime: the session's reader runs as a task.
    pub fn start(transport: Arc<dyn Transport>, handler: Arc<dyn InboundHandler>, options: SessionOptions) -> Session {
        let name: Arc<str> = Arc::from(options.name.as_str());
        let permits = options.max_inbound_requests.clamp(1, tokio::sync::Semaphore::MAX_PERMITS);
        let wants_hints = transport.wants_send_hints();
        let shared = Arc::new(Shared {
            outbox: Outbox::new(name.clone(), transport.clone()),
            inbound: Arc::new(tokio::sync::Semaphore::new(permits)),
            name,
            transport,
            pending: PendingMap::default(),
            options,
            closed: watch::Sender::new(None),
            next_id: AtomicI64::new(0),
            request_meta: std::sync::RwLock::new(None),
            wants_hints,
            telemetry: Default::default(),
        });
        // Set before any request is sent: no answer can reach the queue instead.
        let routed = shared.transport.set_router(inbound::router(Arc::downgrade(&shared)));
        let reader = tokio::spawn(inbound::run(shared.clone(), handler, routed));
        let deadlines = tokio::spawn(pending::watch_deadlines(shared.clone()));
        Session { shared, _reader: Arc::new(ReaderGuard([reader.abort_handle(), deadlines.abort_handle()])) }
    }

    /// The server's name.
    pub fn name(&self) -> &str {
        &self.shared.name
    }

    /// Members to add to every later request's `params._meta` (`None`: add nothing). The modern
    /// era sends its protocol version, client capabilities and client info this way.
    pub fn set_request_meta(&self, meta: Option<JsonObject>) {
        let meta = meta.and_then(|members| match RequestMeta::new(members) {
            Ok(meta) => Some(Arc::new(meta)),
            Err(error) => {
                tracing::error!(server = %self.shared.name, %error, "request _meta members cannot be encoded; none are sent");
                None
            }
        });
        *self.shared.request_meta.write().unwrap_or_else(|p| p.into_inner()) = meta;
    }

    /// `method`, when the transport reads send hints (only then are they gathered).
    fn hinted<'m>(&self, method: &'m str) -> Option<&'m str> {
        self.shared.wants_hints.then_some(method)
    }

    fn request_meta(&self) -> Option<Arc<RequestMeta>> {
        self.shared.request_meta.read().unwrap_or_else(|p| p.into_inner()).clone()
    }

    pub(crate) fn telemetry(&self) -> &crate::telemetry::SessionTelemetry {
        &self.shared.telemetry
    }

    /// The transport the session runs on.
    pub fn transport(&self) -> &Arc<dyn Transport> {
        &self.shared.transport
    }

    /// Why the session ended, once it has.
    pub fn close_reason(&self) -> Option<CloseReason> {
        self.shared.closed.borrow().clone()
    }

    /// Wait until the session ends, and say why.
    pub async fn closed(&self) -> CloseReason {
        let mut rx = self.shared.closed.subscribe();
        match rx.wait_for(Option::is_some).await {
            Ok(r) => r.clone().unwrap_or(CloseReason::Closed),
            Err(_) => CloseReason::Closed,
        }
    }

    /// Close the transport; pending requests fail with [`SessionError::Closed`], the server's
    /// requests still being served are abandoned, and replies still being sent are dropped.
    ///
    /// The background sends are stopped first, so the wait is the transport's own close. Not
    /// cancel-safe: dropped before it returns, the sends are stopped but the transport's close
    /// may be cut short; dropping the last session clone then releases the transport.
    pub async fn close(&self) {
        // Stop the background sends first: they may hold what the transport's close waits for.
        self.shared.outbox.close().await;
        self.shared.transport.close().await;
        // The reader notices the end and fails what is pending; make sure of it even if the
        // transport's end event never comes.
        let reason = self.close_reason().unwrap_or(CloseReason::Closed);
        self.shared.pending.fail_all(&self.shared.name, &reason);
        self.shared.closed.send_if_modified(|c| {
            if c.is_none() {
                *c = Some(reason);
                true
            } else {
                false
            }
        });
        // The reader may wait on a transport that never reports its end: stop it, and with it
        // the server's requests it still serves.
        self._reader.0[0].abort();
        self.shared.telemetry.end();
    }

    /// A typed request.
    ///
    /// This layer and those below it (`request_undecoded`, `send_and_wait`) are `async` blocks,
    /// not `async fn`s, and `exchange` is no layer of its own: an `async fn` keeps its arguments
    /// in its state both as given and as moved into its body, and every request in flight holds
    /// the states of all the layers (see ARCHITECTURE.md).
    #[expect(clippy::manual_async_fn, reason = "an async fn would hold its arguments twice")]
    pub fn request<'a, M: RequestMethod>(
        &'a self,
        params: &'a M::Params,
        options: RequestOptions,
    ) -> impl Future<Output = Result<M::Result, SessionError>> + Send + 'a {
        async move {
            let raw = self.request_undecoded::<M>(params, options).await?;
            self.decode_result::<M>(raw)
        }
    }

    /// A typed request whose result is handed back as its JSON text, for a caller that looks
    /// at it before decoding it with [`Session::decode_result`] (pagination reads the next
    /// cursor first).
    #[expect(clippy::manual_async_fn, reason = "an async fn would hold its arguments twice")]
    pub(crate) fn request_undecoded<'a, M: RequestMethod>(
        &'a self,
        params: &'a M::Params,
        options: RequestOptions,
    ) -> impl Future<Output = Result<RawJson, SessionError>> + Send + 'a {
        async move {
            if let Some(reason) = self.close_reason() {
                return Err(SessionError::Closed { server: self.shared.name.clone(), reason });
            }
            // Made in a block that ends before the exchange is awaited: what it holds (the
            // `_meta`, the typed params' reference) is not kept in the request's state.
            let (id, outgoing) = {
                let id = self.next_id();
                let meta = self.request_meta();
                let token = options.progress.as_ref().map(|_| &id);
                let (params, hints) = meta::typed_params(self.hinted(M::METHOD), params, meta.as_deref(), token)
                    .map_err(|e| SessionError::Encode { method: M::METHOD.into(), error: Arc::new(e) })?;
                (id, Outgoing { method: Method::Typed(M::METHOD), params: Some(params), hints })
            };
            let timeout = options.timeout.unwrap_or(self.shared.options.request_timeout);
            self.exchange(id, outgoing, Some(timeout), options.progress).await
        }
    }

    /// Decode the result of request `M` from its JSON text, which it may keep (a large text
    /// stays in the buffer it arrived in).
    pub(crate) fn decode_result<M: RequestMethod>(&self, raw: RawJson) -> Result<M::Result, SessionError> {
        M::decode_owned(raw).map_err(|e| SessionError::InvalidResult {
            server: self.shared.name.clone(),
            method: M::METHOD.into(),
            error: Arc::new(e),
        })
    }

    /// A typed notification. Its send takes at most the session's request timeout.
    pub async fn notify<N: NotificationMethod>(&self, params: Option<&N::Params>) -> Result<(), SessionError> {
        let message = Message::notification(N::METHOD, params)
            .map_err(|e| SessionError::Encode { method: N::METHOD.into(), error: Arc::new(e) })?;
        let limit = self.shared.options.request_timeout;
        match tokio::time::timeout(limit, self.shared.transport.send(message)).await {
            Ok(sent) => sent.map_err(|error| SessionError::Transport {
                server: self.shared.name.clone(),
                method: N::METHOD.into(),
                error,
            }),
            Err(_) => {
                Err(SessionError::Timeout { server: self.shared.name.clone(), method: N::METHOD.into(), after: limit })
            }
        }
    }

    /// Wait for a slot of the limit on server requests served at once (`max_inbound_requests`),
    /// shared with the requests the server sends on this session; the slot is held until the
    /// permit drops.
    pub(crate) async fn inbound_slot(&self) -> Option<tokio::sync::OwnedSemaphorePermit> {
        self.shared.inbound.clone().acquire_owned().await.ok()
    }

    /// A request by method name with raw params; the raw result.
    pub async fn request_raw(
        &self,
        method: &str,
        params: Option<RawJson>,
        options: RequestOptions,
    ) -> Result<RawJson, SessionError> {
        if let Some(reason) = self.close_reason() {
            return Err(SessionError::Closed { server: self.shared.name.clone(), reason });
        }
        let id = self.next_id();
        let meta = self.request_meta();
        let token = options.progress.as_ref().map(|_| &id);
        let params = if meta.is_some() || token.is_some() {
            Some(
                meta::raw_params(params, meta.as_deref(), token)
                    .map_err(|e| SessionError::Encode { method: method.into(), error: Arc::new(e) })?,
            )
        } else {
            params
        };
        let timeout = options.timeout.unwrap_or(self.shared.options.request_timeout);
        self.exchange(
            id,
            Outgoing { method: Method::Raw(method), params, hints: None },
            Some(timeout),
            options.progress,
        )
        .await
    }

    /// Start a request that has no deadline, such as the long-lived `subscriptions/listen`.
    /// Returns the request's id at once (a subscription is named by it) and the future of its
    /// answer. That future ends with the server's answer, a transport failure of this request, or
    /// the transport's end ([`SessionError::Closed`], also after [`Session::close`]); dropping it
    /// cancels the request. Nothing is sent before the future is first polled.
    pub fn request_unbounded<M: RequestMethod>(&self, params: &M::Params) -> (RequestId, Answer<M::Result>) {
        let meta = self.request_meta();
        let params = meta::typed_params(self.hinted(M::METHOD), params, meta.as_deref(), None)
            .map_err(|e| SessionError::Encode { method: M::METHOD.into(), error: Arc::new(e) });
        let id = self.next_id();
        let session = self.clone();
        let request_id = id.clone();
        let answer = async move {
            if let Some(reason) = session.close_reason() {
                return Err(SessionError::Closed { server: session.shared.name.clone(), reason });
            }
            let (params, hints) = params?;
            let outgoing = Outgoing { method: Method::Typed(M::METHOD), params: Some(params), hints };
            let raw = session.exchange(request_id, outgoing, None, None).await?;
            session.decode_result::<M>(raw)
        };
        (id, Box::pin(answer))
    }

    fn next_id(&self) -> RequestId {
        RequestId::Number(self.shared.next_id.fetch_add(1, Ordering::Relaxed))
    }

    /// [`Session::send_and_wait`] in the request's span (see [`crate::telemetry`]).
    fn exchange<'a>(
        &'a self,
        id: RequestId,
        outgoing: Outgoing<'a>,
        timeout: Option<Duration>,
        progress: Option<ProgressCallback>,
    ) -> impl Future<Output = Result<RawJson, SessionError>> + Send + 'a {
        // No `async` layer of its own: its state would keep the arguments it hands to
        // `send_and_wait` beside that call's own state. The span is made with the future (which
        // the caller awaits at once), and the answer recorded as it comes.
        let method = outgoing.method.name();
        let span = {
            let shared = &self.shared;
            let cx = telemetry::RequestContext {
                server: &shared.name,
                telemetry: &shared.telemetry,
                transport: &*shared.transport,
            };
            telemetry::request_span(&cx, &id, method, outgoing.params.as_ref())
        };
        let mut unanswered = telemetry::Unanswered(Some(span.clone()));
        self.send_and_wait(id, outgoing, timeout, progress).instrument(span).map(move |answer| {
            if let Some(span) = unanswered.0.take() {
                telemetry::record_answer(&span, method, answer.as_ref().map_err(telemetry_failure));
            }
            answer
        })
    }

    /// Send request `id` (its params complete, `_meta` included) and wait for its answer, at most `timeout` (extended by progress, up to
    /// the hard cap) when there is one.
    #[expect(clippy::manual_async_fn, reason = "an async fn would hold its arguments twice")]
    fn send_and_wait<'a>(
        &'a self,
        id: RequestId,
        outgoing: Outgoing<'a>,
        timeout: Option<Duration>,
        progress: Option<ProgressCallback>,
    ) -> impl Future<Output = Result<RawJson, SessionError>> + Send + 'a {
        async move {
            let shared = &self.shared;
            let Outgoing { method, params, hints } = outgoing;
            let (kept, method) = (method.kept(), method.name());
            let (tx, rx) = oneshot::channel();
            // The deadline starts before sending: a transport whose send waits on the peer (an HTTP
            // server holding back its response headers) must not stretch the request's time. The
            // session's timer fails the request when it passes (see `pending`).
            let started = tokio::time::Instant::now();
            let deadline = timeout.map(|t| Deadline::new(started, t, shared.options.max_request_timeout));
            shared.pending.insert(id.clone(), Pending { method: kept, tx, deadline, progress });
            let mut guard = CancelOnDrop { shared: Some(shared.clone()), id: id.clone() };
            // Sent here and now where the transport can (stdio, whose queue has room): no future
            // to allocate. Made in a block of its own, so that the message is not kept in the
            // request's state, and settled before anything is awaited, so that only the future
            // of a send still to make is.
            let send = {
                let request = Message::Request(Request { id: id.clone(), method: method.to_owned(), params });
                let send = match hints {
                    Some(hints) => Err(shared.transport.send_hinted(request, hints)),
                    None => match shared.transport.send_now(&request) {
                        Some(sent) => Ok(sent),
                        None => Err(shared.transport.send(request)),
                    },
                };
                match send {
                    Ok(Ok(())) => None,
                    Ok(Err(error)) => return Err(send_failed(shared, &mut guard, &id, method, error)),
                    Err(send) => Some(send),
                }
            };
            if let Some(mut send) = send {
                // Polled once before a timer is made for it: many sends are done at once.
                let sent = match futures::poll!(&mut send) {
                    std::task::Poll::Ready(sent) => Some(sent),
                    std::task::Poll::Pending => match deadline {
                        Some(d) => tokio::time::timeout_at(d.at, send).await.ok(),
                        None => Some(send.await),
                    },
                };
                let Some(sent) = sent else {
                    guard.disarm();
                    // The session's timer may have failed and cancelled it already.
                    if shared.pending.remove(&id).is_some() {
                        cancel(shared.clone(), id, "request timed out");
                    }
                    return Err(SessionError::Timeout {
                        server: shared.name.clone(),
                        method: method.into(),
                        after: started.elapsed(),
                    });
                };
                if let Err(error) = sent {
                    return Err(send_failed(shared, &mut guard, &id, method, error));
                }
            }
            let answer = rx.await;
            guard.disarm();
            match answer {
                Ok(result) => result,
                Err(_) => Err(SessionError::Closed {
                    server: shared.name.clone(),
                    reason: self.close_reason().unwrap_or(CloseReason::Closed),
                }),
            }
        }
    }
}

/// The error of a request whose send failed; the request is no longer pending.
fn send_failed(
    shared: &Shared,
    guard: &mut CancelOnDrop,
    id: &RequestId,
    method: &str,
    error: mcp_transport::TransportError,
) -> SessionError {
    guard.disarm();
    shared.pending.remove(id);
    match error {
        mcp_transport::TransportError::Closed(reason) => SessionError::Closed { server: shared.name.clone(), reason },
        error => SessionError::Transport { server: shared.name.clone(), method: method.into(), error },
    }
}

/// How a request failed, for its span.
fn telemetry_failure(error: &SessionError) -> telemetry::Failure<'_> {
    error.rpc_error().ok_or_else(|| error.kind())
}

/// The longest wait any deadline stands for: a timeout beyond it (`Duration::MAX`, 1e19 s from a
/// config) means "no sooner than decades from now", never an overflow.
const FAR_FUTURE: Duration = Duration::from_secs(30 * 365 * 24 * 3600);

/// `start + wait`, saturating at [`FAR_FUTURE`] from `start`: no timeout value can overflow.
fn deadline_after(start: tokio::time::Instant, wait: Duration) -> tokio::time::Instant {
    start.checked_add(wait.min(FAR_FUTURE)).unwrap_or(start)
}

/// Cancel an abandoned request: the transport's own way when it has one, otherwise with
/// `notifications/cancelled`.
fn cancel(shared: Arc<Shared>, id: RequestId, reason: &'static str) {
    if shared.transport.cancel_request(&id) == CancelHandling::Handled {
        return;
    }
    // Outside a runtime (the runtime itself is shutting down) there is no one to send it.
    if tokio::runtime::Handle::try_current().is_ok() {
        send_cancelled(shared, id, reason);
    }
}

/// Tell the server a request is abandoned, in the background: the caller returns at once even if
/// the transport cannot take the notification (bounded by a short timeout and the outbox).
fn send_cancelled(shared: Arc<Shared>, id: RequestId, reason: &'static str) {
    if shared.closed.borrow().is_some() {
        return;
    }
    let params = CancelledParams { request_id: Some(id), reason: Some(reason.into()), ..Default::default() };
    let method = mcp_protocol::types::cancellation::Cancelled::METHOD;
    let Ok(message) = Message::notification(method, Some(&params)) else {
        return;
    };
    shared.outbox.send(method, message, CANCEL_SEND_TIMEOUT);
}

/// How long the background send of `notifications/cancelled` may take.
const CANCEL_SEND_TIMEOUT: Duration = Duration::from_secs(5);

/// A request about to be sent: its method, its params (`_meta` included) and what the transport
/// may be told of it (from [`meta::typed_params`]; `None` for raw params).
struct Outgoing<'a> {
    method: Method<'a>,
    params: Option<RawJson>,
    hints: Option<mcp_transport::SendHints>,
}

/// A request's method: a typed request's constant, or the name a raw request was given.
#[derive(Clone, Copy)]
enum Method<'a> {
    Typed(&'static str),
    Raw(&'a str),
}

impl<'a> Method<'a> {
    fn name(self) -> &'a str {
        match self {
            Method::Typed(name) => name,
            Method::Raw(name) => name,
        }
    }

    /// The name its pending entry keeps: a typed request's constant itself (no allocation a
    /// request), a raw request's copied.
    fn kept(self) -> Cow<'static, str> {
        match self {
            Method::Typed(name) => Cow::Borrowed(name),
            Method::Raw(name) => Cow::Owned(name.to_owned()),
        }
    }
}

/// Removes a pending request whose future was dropped, and cancels it.
struct CancelOnDrop {
    shared: Option<Arc<Shared>>,
    id: RequestId,
}

impl CancelOnDrop {
    fn disarm(&mut self) {
        self.shared = None;
    }
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        let Some(shared) = self.shared.take() else { return };
        if shared.pending.remove(&self.id).is_none() {
            return;
        }
        cancel(shared, self.id.clone(), "request cancelled by the client");
    }
}
