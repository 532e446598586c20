//! Remote servers: which transport reaches a URL, and the fallback from streamable HTTP to the
//! legacy HTTP+SSE transport.
//!
//! A [`RemoteTarget`] names the transport explicitly (`streamable_http` or `sse`), or leaves it
//! implied. An implied transport follows the specification's backwards-compatibility procedure:
//! POST `initialize` to the URL with streamable HTTP first; when that POST fails with HTTP 400, 404
//! or 405, close that transport and open the legacy HTTP+SSE transport on the same URL (GET, then
//! the `endpoint` event).
//!
//! The decision is taken in [`McpConnection::connect`](super::McpConnection::connect), where the
//! handshake happens: a [`TransportPlan`] is an ordered list of transport factories, and the
//! connection moves to the next one only when the handshake's `initialize` request failed in the
//! transport with one of those statuses. Any other failure (a 401, a 500, a server that answered
//! `initialize` with a JSON-RPC error, a timeout) is reported as it is. The transport that carries
//! the connection is reported in [`ServerInfo::transport`](super::ServerInfo::transport).
//!
//! When the era is probed first (`server/discover`), a legacy-only server refuses the probe's POST
//! the same way; the probe then settles on the legacy era, and the refused `initialize` that
//! follows is what moves the connection to HTTP+SSE.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use mcp_transport::auth::Authorization;
use mcp_transport::{
    Secret, SseConfig, SseTransport, StreamableHttpConfig, StreamableHttpTransport, Transport, TransportError,
    TransportKind,
};

use super::{ConnectionError, Live, McpConnection, TransportFactory, handler};
use crate::session::{Session, SessionError};

/// The HTTP statuses of a refused `initialize` POST that send an implied transport to HTTP+SSE:
/// what servers that only speak the 2024-11-05 transport answer a POST on their SSE URL.
pub const FALLBACK_STATUSES: [u16; 3] = [400, 404, 405];

/// How long the HTTP transports may wait, in each step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct RemoteTimeouts {
    /// Establishing a connection (default 10 s).
    pub connect: Duration,
    /// Streamable HTTP: how long a response may stay silent, waiting for its headers or between
    /// two chunks of its body or SSE stream (default 300 s).
    pub read: Duration,
    /// HTTP+SSE: how long opening the stream and receiving its `endpoint` event may take
    /// (default 10 s).
    pub sse_endpoint: Duration,
    /// HTTP+SSE: how long a POST may wait for its response headers (default 60 s).
    pub sse_post: Duration,
}

impl Default for RemoteTimeouts {
    fn default() -> Self {
        RemoteTimeouts {
            connect: Duration::from_secs(10),
            read: Duration::from_secs(300),
            sse_endpoint: Duration::from_secs(10),
            sse_post: Duration::from_secs(60),
        }
    }
}

/// A server reached over HTTP.
#[derive(Clone)]
#[non_exhaustive]
pub struct RemoteTarget {
    /// The endpoint: the MCP endpoint of a streamable HTTP server, or the SSE URL of a legacy one.
    pub url: String,
    /// [`TransportKind::StreamableHttp`] or [`TransportKind::Sse`]: that transport only. `None`:
    /// streamable HTTP, falling back to HTTP+SSE when `initialize` is refused with one of
    /// [`FALLBACK_STATUSES`].
    pub transport: Option<TransportKind>,
    /// Extra headers sent with every request. Values are never logged.
    pub headers: Vec<(String, String)>,
    /// A bearer token, sent as `Authorization: Bearer <token>`; it replaces any configured
    /// `Authorization` header.
    pub bearer: Option<Secret>,
    /// What authorizes the requests (an OAuth client, say); it takes precedence over `bearer`.
    /// One provider serves every transport the target opens (reconnections, the fallback).
    pub authorization: Option<Arc<dyn Authorization>>,
    /// Time limits.
    pub timeouts: RemoteTimeouts,
}

impl RemoteTarget {
    /// A target at `url`, with the transport implied and the default limits.
    pub fn new(url: impl Into<String>) -> Self {
        RemoteTarget {
            url: url.into(),
            transport: None,
            headers: Vec::new(),
            bearer: None,
            authorization: None,
            timeouts: RemoteTimeouts::default(),
        }
    }

    /// The same target with an explicit transport (`None`: implied).
    pub fn with_transport(mut self, transport: Option<TransportKind>) -> Self {
        self.transport = transport;
        self
    }

    /// The streamable HTTP configuration of this target, for a server called `name`.
    pub fn streamable_http_config(&self, name: &str) -> StreamableHttpConfig {
        let mut config = StreamableHttpConfig::new(name, self.url.clone());
        config.headers = self.headers.clone();
        config.bearer_token = self.bearer.clone();
        config.authorization = self.authorization.clone();
        config.connect_timeout = self.timeouts.connect;
        config.read_timeout = self.timeouts.read;
        config
    }

    /// The HTTP+SSE configuration of this target, for a server called `name`.
    pub fn sse_config(&self, name: &str) -> SseConfig {
        let mut config = SseConfig::new(name, self.url.clone());
        config.headers = self.headers.clone();
        config.bearer_token = self.bearer.clone();
        config.authorization = self.authorization.clone();
        config.connect_timeout = self.timeouts.connect;
        config.endpoint_timeout = self.timeouts.sse_endpoint;
        config.post_timeout = self.timeouts.sse_post;
        config
    }
}

impl fmt::Debug for RemoteTarget {
    // Header values may hold secrets: show only their names. The URL loses its credentials and
    // query values.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RemoteTarget")
            .field("url", &mcp_transport::redact::redact_url_str(&self.url))
            .field("transport", &self.transport)
            .field("header_names", &self.headers.iter().map(|(k, _)| k).collect::<Vec<_>>())
            .field("bearer", &self.bearer)
            .field("authorization", &self.authorization)
            .field("timeouts", &self.timeouts)
            .finish()
    }
}

/// A factory that opens a streamable HTTP transport (nothing is sent before the first message).
pub fn streamable_http_factory(config: StreamableHttpConfig) -> TransportFactory {
    Arc::new(move || {
        let result = StreamableHttpTransport::new(config.clone()).map(|t| Arc::new(t) as Arc<dyn Transport>);
        Box::pin(async move { result })
    })
}

/// A factory that opens a legacy HTTP+SSE transport: the stream, and its `endpoint` event.
pub fn sse_factory(config: SseConfig) -> TransportFactory {
    Arc::new(move || {
        let config = config.clone();
        Box::pin(async move { Ok(Arc::new(SseTransport::connect(config).await?) as Arc<dyn Transport>) })
    })
}

/// How a connection opens its transport: factories tried in order. The next one is tried only
/// when the handshake on the previous one failed because its `initialize` request was refused with
/// an HTTP status of [`FALLBACK_STATUSES`] (see [`calls_for_fallback`]).
#[derive(Clone)]
pub struct TransportPlan {
    candidates: Vec<TransportFactory>,
}

impl fmt::Debug for TransportPlan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TransportPlan").field("candidates", &self.candidates.len()).finish()
    }
}

impl From<TransportFactory> for TransportPlan {
    fn from(factory: TransportFactory) -> Self {
        TransportPlan::single(factory)
    }
}

impl TransportPlan {
    /// One transport, no fallback.
    pub fn single(factory: TransportFactory) -> Self {
        TransportPlan { candidates: vec![factory] }
    }

    /// `primary`, then `fallback` when the primary's `initialize` is refused.
    pub fn with_fallback(primary: TransportFactory, fallback: TransportFactory) -> Self {
        TransportPlan { candidates: vec![primary, fallback] }
    }

    /// The transports that reach `target`, for a server called `name`. Fails when the target names
    /// a transport that cannot reach a URL (stdio, memory, custom).
    pub fn remote(name: &str, target: &RemoteTarget) -> Result<Self, TransportError> {
        let streamable = || streamable_http_factory(target.streamable_http_config(name));
        let sse = || sse_factory(target.sse_config(name));
        match target.transport {
            None => Ok(TransportPlan::with_fallback(streamable(), sse())),
            Some(TransportKind::StreamableHttp) => Ok(TransportPlan::single(streamable())),
            Some(TransportKind::Sse) => Ok(TransportPlan::single(sse())),
            Some(other) => Err(TransportError::Other(format!(
                "transport {other} cannot reach the URL of a remote server; expected streamable_http or sse"
            ))),
        }
    }
}

/// Whether a failed handshake calls for the next transport of a plan: the `initialize` request
/// failed in the transport with an HTTP status of [`FALLBACK_STATUSES`]. A JSON-RPC error from the
/// server does not: that server speaks the transport.
pub fn calls_for_fallback(error: &ConnectionError) -> bool {
    match error {
        ConnectionError::Session(SessionError::Transport { method, error, .. }) => {
            method == "initialize" && error.http_status().is_some_and(|s| FALLBACK_STATUSES.contains(&s))
        }
        _ => false,
    }
}

impl McpConnection {
    /// A connection to a remote server, not open yet. The server's name is the session's name in
    /// `options`. Fails when the target names a transport that cannot reach a URL.
    pub fn remote(target: &RemoteTarget, options: super::ConnectionOptions) -> Result<Self, TransportError> {
        let plan = TransportPlan::remote(&options.session.name, target)?;
        Ok(McpConnection::with_plan(plan, options))
    }

    /// Open the transports of the plan in turn and run the handshake, until one succeeds or one
    /// fails in a way that does not call for the next.
    pub(super) async fn open(&self) -> Result<Live, ConnectionError> {
        let handler: Arc<handler::CallbackHandler> = Arc::new(
            handler::CallbackHandler::new(&self.name, self.options.callbacks.clone())
                .watching(self.fresh.clone())
                .completing(self.completions.clone())
                .following_tasks(self.task_watchers.clone()),
        );
        // The first transport whose initialize was refused, and why.
        let mut refused: Option<(TransportKind, ConnectionError)> = None;
        let mut candidates = self.plan.candidates.iter().peekable();
        while let Some(factory) = candidates.next() {
            let (kind, error) = match self.attempt(factory, handler.clone()).await {
                Ok(live) => {
                    if let Some((kind, error)) = &refused {
                        tracing::info!(
                            server = %self.name,
                            refused = %kind,
                            using = %live.server.transport,
                            %error,
                            "initialize was refused; connected with the fallback transport"
                        );
                    }
                    return Ok(live);
                }
                Err(failure) => failure,
            };
            if let Some(kind) = kind
                && candidates.peek().is_some()
                && calls_for_fallback(&error)
            {
                tracing::debug!(server = %self.name, transport = %kind, %error, "initialize refused; trying the next transport");
                refused.get_or_insert((kind, error));
                continue;
            }
            return Err(match refused {
                Some((tried, first)) => {
                    ConnectionError::FallbackFailed { tried, first: Box::new(first), fallback: Box::new(error) }
                }
                None => error,
            });
        }
        // Unreachable: a plan has at least one transport.
        Err(ConnectionError::NotConnected(self.name.clone()))
    }

    /// Open one transport and run the handshake on it. A failure carries the transport's kind once
    /// it was open.
    async fn attempt(
        &self,
        factory: &TransportFactory,
        handler: Arc<handler::CallbackHandler>,
    ) -> Result<Live, (Option<TransportKind>, ConnectionError)> {
        let transport =
            factory().await.map_err(|error| (None, ConnectionError::Transport { server: self.name.clone(), error }))?;
        let kind = transport.kind();
        let session = Session::start(transport, handler, self.options.session.clone());
        match self.negotiate(&session, kind).await {
            Ok(server) => Ok(Live::new(session, server)),
            Err(e) => {
                session.close().await;
                Err((Some(kind), e))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn failed(method: &str, error: TransportError) -> ConnectionError {
        ConnectionError::Session(SessionError::Transport { server: Arc::from("s"), method: method.into(), error })
    }

    fn http(status: u16) -> TransportError {
        TransportError::Http { status, body_excerpt: "x".into(), context: "initialize (request 0)".into() }
    }

    #[test]
    fn only_an_http_refusal_of_initialize_calls_for_fallback() {
        for status in FALLBACK_STATUSES {
            assert!(calls_for_fallback(&failed("initialize", http(status))), "{status}");
        }
        for status in [401, 403, 406, 415, 500, 502] {
            assert!(!calls_for_fallback(&failed("initialize", http(status))), "{status}");
        }
        assert!(!calls_for_fallback(&failed("tools/list", http(405))));
        assert!(!calls_for_fallback(&failed("initialize", TransportError::Other("HTTP 405".into()))));
        let rpc = mcp_protocol::ErrorObject::new(mcp_protocol::ErrorCode::INVALID_REQUEST, "refused");
        let rpc = SessionError::Rpc { server: Arc::from("s"), method: "initialize".into(), error: Box::new(rpc) };
        assert!(!calls_for_fallback(&ConnectionError::Session(rpc)));
        let transport = ConnectionError::Transport { server: "s".into(), error: http(404) };
        assert!(!calls_for_fallback(&transport), "the factory failing is not a refused initialize");
    }

    #[test]
    fn plans_follow_the_target() {
        let target = RemoteTarget::new("http://127.0.0.1:9/mcp");
        assert_eq!(TransportPlan::remote("s", &target).unwrap().candidates.len(), 2);
        for kind in [TransportKind::StreamableHttp, TransportKind::Sse] {
            let target = target.clone().with_transport(Some(kind));
            assert_eq!(TransportPlan::remote("s", &target).unwrap().candidates.len(), 1);
        }
        for kind in [TransportKind::Stdio, TransportKind::Memory, TransportKind::Custom] {
            assert!(TransportPlan::remote("s", &target.clone().with_transport(Some(kind))).is_err(), "{kind}");
        }
        let sse = target.sse_config("s");
        assert_eq!((sse.endpoint_timeout, sse.post_timeout), (Duration::from_secs(10), Duration::from_secs(60)));
        assert_eq!(target.streamable_http_config("s").read_timeout, Duration::from_secs(300));
    }
}
