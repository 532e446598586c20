//! The kept-alive HTTP/1.1 connections of one client, all to its one origin (a transport's
//! client never sends elsewhere: redirects to another origin are refused before they are
//! followed). A request takes the connection that was idle last, if one is usable, or opens a
//! new one ([`Opener`]); the connection comes back when its response's body has been read to
//! its end ([`ResponseBody`]), and is closed once it has been idle for
//! [`POOL_IDLE_TIMEOUT`], by the request that finds it so or by a reaper task that runs while
//! connections are idle.
//!
//! Why not hyper-util's pooled client, which the transports used before: it keeps its
//! connections in a map from origin to list (SipHash of the origin on every checkout and every
//! return), and hands each connection back on a task of its own: about 8,700 of the client's
//! 63,900 instructions a call (W1 over streamable HTTP against rmcp's server). One origin needs
//! one list.

use std::pin::Pin;
use std::sync::{Arc, Mutex, Weak};
use std::task::{Context, Poll, ready};
use std::time::Instant;

use bytes::Bytes;
use futures::future::BoxFuture;
use http::{Request, Uri};
use http_body::{Body as _, Frame, SizeHint};
use http_body_util::Full;
use hyper::client::conn::http1::{self, SendRequest};

use crate::http_policy::POOL_IDLE_TIMEOUT;

type Body = Full<Bytes>;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// Opens a connection `T` to the pool's origin (or to the proxy that reaches it), which hyper's
/// HTTP/1.1 then reads and writes.
pub(super) type Opener<T> = Box<dyn Fn() -> BoxFuture<'static, Result<T, BoxError>> + Send + Sync>;

/// Why a request got no response.
#[derive(Debug)]
pub(crate) enum RequestError {
    /// No connection could be opened.
    Connect(BoxError),
    /// The connection failed before the response's headers, or the response was no HTTP.
    Http(hyper::Error),
    /// The request was for another origin than the client's (a bug of the caller).
    OtherOrigin,
}

impl std::fmt::Display for RequestError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RequestError::Connect(_) => f.write_str("cannot connect"),
            RequestError::Http(e) => e.fmt(f),
            RequestError::OtherOrigin => f.write_str("a request to another origin than its client's"),
        }
    }
}

impl std::error::Error for RequestError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            RequestError::Connect(e) => Some(e.as_ref()),
            RequestError::Http(e) => std::error::Error::source(e),
            RequestError::OtherOrigin => None,
        }
    }
}

/// The connections of one client, each a `T` that its [`Opener`] opened. Clones share them.
pub(super) struct Pool<T> {
    shared: Arc<Shared<T>>,
}

impl<T> Clone for Pool<T> {
    fn clone(&self) -> Self {
        Pool { shared: self.shared.clone() }
    }
}

struct Shared<T> {
    open: Opener<T>,
    /// The origin every request goes to (its scheme and authority).
    scheme: http::uri::Scheme,
    authority: http::uri::Authority,
    /// Requests go in absolute form (to a forwarding proxy), not in origin form.
    absolute_form: bool,
    /// Only the pool holds it: the connections in it close with the pool.
    idle: Arc<IdleList>,
}

/// The idle connections, which responses and the reaper reach without keeping them.
#[derive(Default)]
struct IdleList(Mutex<Idle>);

#[derive(Default)]
struct Idle {
    /// Last returned last.
    connections: Vec<IdleConnection>,
    /// A reaper task is running.
    reaping: bool,
}

struct IdleConnection {
    sender: SendRequest<Body>,
    since: Instant,
}

impl IdleConnection {
    fn expired(&self, now: Instant) -> bool {
        now.saturating_duration_since(self.since) >= POOL_IDLE_TIMEOUT || self.sender.is_closed()
    }
}

impl IdleList {
    fn lock(&self) -> std::sync::MutexGuard<'_, Idle> {
        self.0.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

impl<T: hyper::rt::Read + hyper::rt::Write + Send + Unpin + 'static> Pool<T> {
    /// The pool of connections to `origin`'s origin, each opened by `open`; requests are sent
    /// in absolute form when `absolute_form` (to a forwarding proxy).
    pub(super) fn new(origin: &Uri, absolute_form: bool, open: Opener<T>) -> Option<Pool<T>> {
        let shared = Shared {
            open,
            scheme: origin.scheme()?.clone(),
            authority: origin.authority()?.clone(),
            absolute_form,
            idle: Arc::default(),
        };
        Some(Pool { shared: Arc::new(shared) })
    }

    /// Send `request` on the connection that was idle last, or on a new one if none is
    /// usable; its response, whose body gives the connection back once it is read.
    pub(super) async fn request(
        &self,
        mut request: Request<Body>,
    ) -> Result<http::Response<ResponseBody>, RequestError> {
        let shared = &self.shared;
        let uri = request.uri();
        if uri.scheme() != Some(&shared.scheme) || uri.authority() != Some(&shared.authority) {
            return Err(RequestError::OtherOrigin);
        }
        if !shared.absolute_form {
            let path = uri.path_and_query().cloned().unwrap_or_else(|| http::uri::PathAndQuery::from_static("/"));
            *request.uri_mut() = Uri::from(path);
        }
        while let Some(mut sender) = self.checkout() {
            match sender.try_send_request(request).await {
                Ok(response) => return Ok(self.track(response, sender)),
                // Not sent (the server closed the connection as it was taken): on another one.
                Err(mut error) => match error.take_message() {
                    Some(unsent) => request = unsent,
                    None => return Err(RequestError::Http(error.into_error())),
                },
            }
        }
        let mut sender = self.connect().await?;
        match sender.send_request(request).await {
            Ok(response) => Ok(self.track(response, sender)),
            Err(error) => Err(RequestError::Http(error)),
        }
    }

    /// The connection that was idle last and can take a request now, if any; expired and closed
    /// ones are dropped (which closes them), one not ready yet (its last exchange is still
    /// ending) is left for a later request.
    fn checkout(&self) -> Option<SendRequest<Body>> {
        let mut idle = self.shared.idle.lock();
        let now = Instant::now();
        let mut found = None;
        let mut busy = Vec::new();
        while let Some(connection) = idle.connections.pop() {
            if connection.expired(now) {
                continue;
            }
            if connection.sender.is_ready() {
                found = Some(connection.sender);
                break;
            }
            busy.push(connection);
        }
        idle.connections.extend(busy.into_iter().rev());
        found
    }

    /// A new connection, ready for its first request; hyper's side of it runs on a task of its
    /// own, which ends when the connection closes.
    async fn connect(&self) -> Result<SendRequest<Body>, RequestError> {
        let io = (self.shared.open)().await.map_err(RequestError::Connect)?;
        let (sender, connection) = http1::Builder::new().handshake(io).await.map_err(RequestError::Http)?;
        tokio::spawn(async move {
            if let Err(error) = connection.await {
                tracing::debug!(error = %crate::redact::describe_error(&error), "HTTP connection closed");
            }
        });
        Ok(sender)
    }

    /// `response` with a body that gives `sender` back to the pool once it is read (at once
    /// when there is none).
    fn track(
        &self,
        response: http::Response<hyper::body::Incoming>,
        sender: SendRequest<Body>,
    ) -> http::Response<ResponseBody> {
        let (parts, inner) = response.into_parts();
        let mut checkin = Some(Checkin { sender, idle: Arc::downgrade(&self.shared.idle) });
        if inner.is_end_stream()
            && let Some(checkin) = checkin.take()
        {
            checkin.give_back();
        }
        http::Response::from_parts(parts, ResponseBody { inner, checkin })
    }
}

/// A connection on its way back to its pool, if the pool is still there.
struct Checkin {
    sender: SendRequest<Body>,
    idle: Weak<IdleList>,
}

impl Checkin {
    fn give_back(self) {
        let Some(list) = self.idle.upgrade() else { return };
        let mut idle = list.lock();
        idle.connections.push(IdleConnection { sender: self.sender, since: Instant::now() });
        if !idle.reaping
            && let Ok(runtime) = tokio::runtime::Handle::try_current()
        {
            idle.reaping = true;
            runtime.spawn(reap(self.idle));
        }
    }
}

/// Close the pool's connections as they pass the idle timeout, until none is idle (or the
/// pool is gone).
async fn reap(list: Weak<IdleList>) {
    let mut wake = tokio::time::Instant::now() + POOL_IDLE_TIMEOUT;
    loop {
        tokio::time::sleep_until(wake).await;
        let Some(list) = list.upgrade() else { return };
        let mut idle = list.lock();
        let now = Instant::now();
        idle.connections.retain(|connection| !connection.expired(now));
        let Some(oldest) = idle.connections.iter().map(|connection| connection.since).min() else {
            idle.reaping = false;
            return;
        };
        wake = tokio::time::Instant::from_std(oldest + POOL_IDLE_TIMEOUT);
    }
}

/// The body of a response from the pool: hyper's, read as it arrives. Once it has been read to
/// its end, its connection goes back to the pool; dropped before, the connection closes.
pub(crate) struct ResponseBody {
    inner: hyper::body::Incoming,
    checkin: Option<Checkin>,
}

impl std::fmt::Debug for ResponseBody {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResponseBody").field("inner", &self.inner).finish_non_exhaustive()
    }
}

impl http_body::Body for ResponseBody {
    type Data = Bytes;
    type Error = hyper::Error;

    fn poll_frame(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, hyper::Error>>> {
        let this = self.get_mut();
        let frame = ready!(Pin::new(&mut this.inner).poll_frame(cx));
        let ended = match &frame {
            None => true,
            Some(Ok(_)) => this.inner.is_end_stream(),
            Some(Err(_)) => {
                // A broken body: its connection is not used again.
                this.checkin = None;
                false
            }
        };
        if ended && let Some(checkin) = this.checkin.take() {
            checkin.give_back();
        }
        Poll::Ready(frame)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}
