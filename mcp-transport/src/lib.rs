//! Transports that move MCP JSON-RPC messages between a host and a server.
//!
//! - [`Transport`]: the abstraction the session engine drives. It sends [`Message`]s and yields
//!   [`TransportEvent`]s: messages from the peer, a failure tied to one request, and finally why
//!   the transport ended ([`CloseReason`]). Hosts may implement it for transports of their own.
//!   [`Transport::cancel_request`] lets a transport cancel an abandoned request its own way
//!   ([`CancelHandling`]), as streamable HTTP does in the modern era, and
//!   [`Transport::set_router`] gives it a [`MessageRouter`] that takes messages (the answers to
//!   the session's requests) as they are decoded, before the queue of `recv`;
//!   [`Transport::send_hinted`] sends with [`SendHints`], what the sender knows of a message (its
//!   revision, what it acts on), so that streamable HTTP writes its modern-era headers without
//!   parsing the message back.
//! - [`MemoryTransport`]: an in-memory pair for tests.
//! - [`StdioTransport`]: a server run as a child process in its own process group, speaking
//!   newline-delimited JSON-RPC, configured by [`StdioConfig`].
//! - [`StreamableHttpTransport`]: a remote server over streamable HTTP (revisions 2025-03-26 and
//!   later): JSON or SSE replies, sessions with transparent re-initialization, resumable streams,
//!   configured by [`StreamableHttpConfig`].
//! - [`SseTransport`]: a remote server over the legacy HTTP+SSE transport of 2024-11-05,
//!   configured by [`SseConfig`].
//! - [`parse_transport_kind`]: which transport a config's `type` names.
//! - [`ErrorKind`]: the stable kind of a failure ([`TransportError::kind`]), which the layers
//!   above share so that a host branches on it without walking their error trees.
//! - [`http_policy`]: the policy of every HTTP client of the workspace (same-origin redirects
//!   only, a warning for credentials over plain http), which the transports' own client
//!   applies (hyper's HTTP/1.1 connections in a pool of its own, see ARCHITECTURE.md), and [`redact`]:
//!   keeping secrets out of `Debug` output, logs and errors ([`Secret`], the one type of every
//!   secret value, and [`redact::describe`] for every `reqwest::Error`).
//!
//! ```
//! # tokio_test_block_on(async {
//! use mcp_transport::{MemoryTransport, Transport, TransportEvent};
//! use mcp_protocol::{Message, RequestId};
//!
//! let (client, server) = MemoryTransport::pair();
//! client.send(Message::request::<()>(RequestId::Number(1), "ping", None).unwrap()).await.unwrap();
//! let TransportEvent::Message(m) = server.recv().await else { panic!() };
//! assert_eq!(m.method(), Some("ping"));
//! # });
//! # fn tokio_test_block_on<F: std::future::Future>(f: F) -> F::Output {
//! #     tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(f)
//! # }
//! ```

pub mod auth;
mod error;
mod error_kind;
pub mod http;
mod http_body;
mod http_client;
pub mod http_policy;
mod kind;
mod memory;
pub mod redact;
mod router;
pub mod sse;
pub mod stdio;

use std::fmt;

use futures::future::BoxFuture;
use mcp_protocol::{Message, RequestId};

pub use error::{CloseReason, TransportError};
pub use error_kind::ErrorKind;
pub use http::{ResumePolicy, StreamableHttpConfig, StreamableHttpTransport};
pub use kind::{UnknownTransportKind, parse_transport_kind};
pub use memory::MemoryTransport;
pub use redact::Secret;
pub use router::MessageRouter;
pub(crate) use router::RouterSlot;
pub use sse::{SseConfig, SseTransport};
pub use stdio::{StderrSink, StdioConfig, StdioTransport};

/// The kinds of transport a server connection can use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TransportKind {
    /// A child process speaking newline-delimited JSON-RPC on stdin/stdout.
    Stdio,
    /// Streamable HTTP (revisions 2025-03-26 and later, both eras).
    StreamableHttp,
    /// The legacy HTTP+SSE transport of revision 2024-11-05.
    Sse,
    /// An in-memory pair (tests).
    Memory,
    /// A transport the host implemented.
    Custom,
}

impl fmt::Display for TransportKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            TransportKind::Stdio => "stdio",
            TransportKind::StreamableHttp => "streamable_http",
            TransportKind::Sse => "sse",
            TransportKind::Memory => "memory",
            TransportKind::Custom => "custom",
        })
    }
}

/// What a transport yields.
#[derive(Debug)]
pub enum TransportEvent {
    /// A message from the peer.
    Message(Message),
    /// A request failed in the transport (an HTTP error, an over-long response whose id could be
    /// read): the session fails that request with this error.
    RequestFailed {
        /// The id of the request that failed.
        id: RequestId,
        /// Why.
        error: TransportError,
    },
    /// The transport ended; every later `recv` returns this again.
    Closed(CloseReason),
}

/// What the sender of a message already knows of it, so that a transport need not read the
/// message back ([`Transport::send_hinted`]). Streamable HTTP mirrors both in headers in the
/// modern era (`MCP-Protocol-Version`, `Mcp-Name`).
///
/// Hints are a promise about the message they come with: `revision` is the revision its
/// `params._meta` names (`None`: it names none, a legacy-era message), and `target` the string
/// its params hold in the member [`mcp_protocol::method::target_member`] gives for its method
/// (`None`: the method has no such member, or the message does not hold a string in it).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SendHints {
    /// The revision the message's `params._meta` names.
    pub revision: Option<mcp_protocol::ProtocolVersion>,
    /// The one thing the request acts on (a tool or prompt name, a resource URI, a task id).
    pub target: Option<String>,
}

/// What a transport did with a request the session abandoned ([`Transport::cancel_request`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CancelHandling {
    /// Nothing: the session tells the server with `notifications/cancelled`.
    NotHandled,
    /// The transport cancelled the request itself (streamable HTTP in the modern era closes the
    /// request's response stream); no `notifications/cancelled` is sent.
    Handled,
}

/// Moves JSON-RPC messages to and from one peer.
///
/// Contract:
/// - `send` may be called from several tasks at once; each message is delivered whole.
/// - `send` is cancel-safe: a `send` future dropped before it completes (a timeout, a caller
///   that gave up) never leaves part of a message behind, and later messages are unaffected. A
///   transport may queue: `Ok` then means the message was accepted whole and will be delivered
///   unless the transport ends first. The stdio transport encodes the message to a whole line and
///   waits only for room in its bounded queue (one writer task owns the pipe): dropped while it
///   waits, the message was not queued and nothing of it is written; once `send` returned `Ok`, the
///   whole line is written. So `send` may wait while the peer does not read; a caller that must
///   not wait bounds it with a timeout, and a timed-out `send` sent nothing.
/// - `recv` is called by one task at a time (the session's reader) and is cancel-safe.
/// - After the transport ends, `recv` returns [`TransportEvent::Closed`] on every call and `send`
///   fails with [`TransportError::Closed`].
/// - `close` is idempotent and releases everything the transport holds (for a child process: the
///   whole process group). It finishes in bounded time whatever is stuck (stdio: at most three
///   grace periods, even with a writer blocked on a full pipe), and a `close` whose future is
///   dropped still completes. Dropping a transport releases them too, without waiting.
pub trait Transport: Send + Sync + 'static {
    /// Send one message to the peer.
    fn send(&self, message: Message) -> BoxFuture<'_, Result<(), TransportError>>;

    /// Send one message with what the sender knows of it ([`SendHints`], which must be true of
    /// the message), so that a transport that needs those facts does not parse the message again.
    /// The default ignores the hints and sends.
    fn send_hinted(&self, message: Message, hints: SendHints) -> BoxFuture<'_, Result<(), TransportError>> {
        let _ = hints;
        self.send(message)
    }

    /// Send `message` here and now if that needs no wait: `Some` with what [`send`](Self::send)
    /// would have returned, or `None` when sending would wait (or has something to wait for, such
    /// as the reason the transport ended), and the caller then sends it with `send`. It spares
    /// the common case `send`'s future, an allocation a message. The default never sends here.
    fn send_now(&self, message: &Message) -> Option<Result<(), TransportError>> {
        let _ = message;
        None
    }

    /// Whether [`send_hinted`](Self::send_hinted) reads its hints. A sender gathers them only for
    /// a transport that does (gathering costs an allocation a request); the default is `false`.
    fn wants_send_hints(&self) -> bool {
        false
    }

    /// The next event from the peer.
    fn recv(&self) -> BoxFuture<'_, TransportEvent>;

    /// End the transport gracefully.
    fn close(&self) -> BoxFuture<'_, ()>;

    /// Which kind of transport this is.
    fn kind(&self) -> TransportKind;

    /// The last lines the peer wrote to its diagnostics stream, oldest first (stdio: stderr).
    fn diagnostics_tail(&self) -> Vec<String> {
        Vec::new()
    }

    /// The operating-system process of the peer, for transports that run one (stdio).
    fn process_id(&self) -> Option<u32> {
        None
    }

    /// The session id the server assigned (streamable HTTP, legacy era), if any.
    fn session_id(&self) -> Option<String> {
        None
    }

    /// The session abandoned request `id` (it timed out, or its future was dropped). A transport
    /// whose revision cancels by other means than `notifications/cancelled` does so here and
    /// returns [`CancelHandling::Handled`]. The default does nothing: the session then sends
    /// `notifications/cancelled`. Called from `Drop` too, so it must not block.
    fn cancel_request(&self, id: &RequestId) -> CancelHandling {
        let _ = id;
        CancelHandling::NotHandled
    }

    /// Hand every message the transport decodes to `router` first, on the transport's own task
    /// and in the order the messages arrive, before queueing it for [`recv`](Self::recv): a
    /// message the router takes (it returns `None`) is not queued. The session routes the
    /// answers to its requests (and progress, which must not fall behind them) this way: an
    /// answer then reaches its caller without a hop through `recv`'s queue and the session's
    /// reader task. The router must be quick and must not block or wait; a panic in it is caught
    /// and loses only the message it was given. Returns whether the transport routes: once (a
    /// second router is refused). The default does not route, and every message goes to `recv`;
    /// what was queued before the router was set stays queued.
    fn set_router(&self, router: MessageRouter) -> bool {
        let _ = router;
        false
    }
}
