//! One POST exchange: send a message, report when the server accepted it, then deliver what the
//! reply carries (nothing, a JSON body or an SSE stream). Failures of a request become
//! [`TransportEvent::RequestFailed`](crate::TransportEvent::RequestFailed); failures of a
//! notification or response are returned by `send`.
//!
//! The exchange runs in the sender's task (see `send_with`): it never waits for room in the event
//! queue (what does not fit is queued by a task of the transport), and an SSE reply, which may
//! last, is read by a task of its own.

use std::sync::Arc;

use bytes::Bytes;
use http::StatusCode;
use mcp_protocol::{Message, RequestId, codec};
use tokio::sync::oneshot;

use super::Inner;
use super::modern::Modern;
use super::runtime::BoxedTask;
use super::session::{is_session_expiry, reinitialize};
use crate::TransportError;
use crate::http_body::{self as body, status_error};

/// How long sending `notifications/initialized` waits for the GET stream to be answered.
const STANDALONE_OPEN_WAIT: std::time::Duration = std::time::Duration::from_secs(2);

/// Reports to `send` whether the message was accepted; a request's later failures are events.
struct Acceptance {
    tx: Option<oneshot::Sender<Result<(), TransportError>>>,
    request: Option<RequestId>,
}

impl Acceptance {
    fn accept(&mut self) {
        if let Some(tx) = self.tx.take() {
            let _ = tx.send(Ok(()));
        }
    }

    fn fail(mut self, inner: &Arc<Inner>, error: TransportError) {
        match self.request.clone() {
            Some(id) => {
                self.accept();
                inner.fail_soon(id, error);
            }
            None => {
                if let Some(tx) = self.tx.take() {
                    let _ = tx.send(Err(error));
                }
            }
        }
    }
}

/// What an error names the exchange by: the method and the request id, or "response".
struct Context<'a> {
    method: Option<&'a str>,
    request: Option<&'a RequestId>,
}

impl std::fmt::Display for Context<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (self.method, self.request) {
            (Some(m), Some(id)) => write!(f, "{m} (request {id})"),
            (Some(m), None) => f.write_str(m),
            (None, _) => f.write_str("response"),
        }
    }
}

/// [`exchange`], boxed by a plain function: the exchange's future runs to kilobytes, and made
/// inside the sender's async block it would make that block as large (a future made there takes
/// room in the block's state even when no await holds it), which is boxed and copied for every
/// message sent.
pub(crate) fn boxed_exchange(
    inner: Arc<Inner>,
    message: Message,
    modern: Option<Modern>,
    accepted: oneshot::Sender<Result<(), TransportError>>,
    tracked: bool,
) -> BoxedTask {
    Box::pin(exchange(inner, message, modern, accepted, tracked))
}

/// POST `message` and deliver its reply. `modern` holds the modern-era headers of the message
/// (see [`super::modern`]). `accepted` learns when the response headers arrived. `tracked`: the
/// exchange is a request that cancelling closes (see [`super::inflight`]), and so is the task
/// that reads an SSE reply to it.
async fn exchange(
    inner: Arc<Inner>,
    message: Message,
    modern: Option<Modern>,
    accepted: oneshot::Sender<Result<(), TransportError>>,
    tracked: bool,
) {
    let request = match &message {
        Message::Request(r) => Some(r.id.clone()),
        _ => None,
    };
    let method = message.method();
    let is_initialize = method == Some("initialize");
    // Written out only when an error names the exchange.
    let context = Context { method, request: request.as_ref() };
    // Shared by every attempt (and every redirect that resends it) instead of copied for each.
    let body = Bytes::from(codec::encode_line(&message));
    let mut acceptance = Acceptance { tx: Some(accepted), request: request.clone() };
    let mut reinitialized = false;
    loop {
        // `initialize` starts a session: it carries neither the old id nor a version.
        // A modern-era message names its revision itself. Only what is sent is copied.
        let (session_id, session_version, generation) = {
            let session = inner.session.borrow();
            let legacy_initialize = is_initialize && modern.is_none();
            let id = if legacy_initialize { None } else { session.id.clone() };
            let version = if modern.is_none() && !is_initialize { session.protocol_version.clone() } else { None };
            (id, version, session.generation)
        };
        let (version, extra) = match &modern {
            Some((version, extra)) => (Some(version.as_str()), extra.as_slice()),
            None => (session_version.as_deref(), &[][..]),
        };
        let mut response = match inner.post(body.clone(), session_id.as_deref(), version, extra).await {
            Ok(r) => r,
            Err(e) => return acceptance.fail(&inner, e.in_context(&context.to_string())),
        };
        let status = response.status();
        if status.is_success() {
            if is_initialize {
                let id = super::session_id_header(&response);
                inner.session.send_modify(|s| s.id = id);
            }
            if method == Some("notifications/initialized") {
                // What the server asks right after initialization (an elicitation during the
                // first tool call) goes on the GET stream: open it before `send` returns.
                inner.start_standalone_stream();
                inner.standalone_stream_tried(STANDALONE_OPEN_WAIT).await;
            }
            acceptance.accept();
            return deliver_reply(&inner, response, request.clone(), &context, tracked).await;
        }

        let bytes = body::read_prefix(&mut response, body::ERROR_BODY_BYTES, inner.read_timeout).await;
        // An error status may still carry the server's JSON-RPC answer to the request.
        if let Some(id) = &request
            && let Some(answer) = answer_in(&bytes, id, inner.max_body)
        {
            acceptance.accept();
            return inner.deliver_soon(answer);
        }
        let expired = session_id.is_some() && is_session_expiry(status, &bytes);
        if expired && request.is_some() && !reinitialized {
            reinitialized = true;
            if let Err(e) = reinitialize(&inner, generation).await {
                return acceptance.fail(&inner, e.in_context(&context.to_string()));
            }
            continue;
        }
        let error = match (expired, reinitialized) {
            (true, true) => status_error(
                &format!("{context}: the server still reports the session unknown after re-initializing"),
                status,
                &bytes,
            ),
            (true, false) => {
                status_error(&format!("{context}: the server no longer knows the session"), status, &bytes)
            }
            _ => status_error(&context.to_string(), status, &bytes),
        };
        return acceptance.fail(&inner, error);
    }
}

/// The response to `id` in an error body, if that is what it holds.
fn answer_in(bytes: &[u8], id: &RequestId, limit: usize) -> Option<Message> {
    let mut items = body::decode(bytes, limit).ok()?;
    if items.len() != 1 {
        return None;
    }
    match items.pop()? {
        Ok(Message::Response(r)) if r.id.as_ref() == Some(id) => Some(Message::Response(r)),
        _ => None,
    }
}

/// Deliver what a successful reply carries.
async fn deliver_reply(
    inner: &Arc<Inner>,
    mut response: crate::http_client::Response,
    request: Option<RequestId>,
    context: &Context<'_>,
    tracked: bool,
) {
    let status = response.status();
    let no_body = status == StatusCode::ACCEPTED
        || status == StatusCode::NO_CONTENT
        || crate::http_client::content_length(&response) == Some(0);
    // What the body is, from one look at its Content-Type.
    let media_type = body::media_type(&response);
    if body::is_event_stream_type(media_type) {
        // A stream may last (and a server may leave it open after the response): it is read by
        // a task of its own, which cancelling the request still closes.
        let stream = Box::pin(super::stream::reply_stream(inner.clone(), response, request.clone()));
        match request.filter(|_| tracked) {
            Some(id) => inner.tasks.spawn(inner.in_flight.track(id, stream)),
            None => inner.tasks.spawn_boxed(stream),
        }
        return;
    }
    let json = body::is_json_or_unnamed(media_type);
    let bytes = if no_body {
        Vec::new()
    } else {
        match body::read_limited(&mut response, inner.max_body, Some(inner.read_timeout)).await {
            Ok(b) => b,
            Err(e) => {
                let error = e.into_transport(&format!("{context}: reading the reply"));
                return match request {
                    Some(id) => inner.fail_soon(id, error),
                    None => tracing::debug!(server = %inner.name, %error, "could not read the reply to a notification"),
                };
            }
        }
    };
    if bytes.iter().all(u8::is_ascii_whitespace) {
        if let Some(id) = request {
            let error = format!("{context}: the server answered HTTP {status} without a response");
            inner.fail_soon(id, TransportError::Other(error));
        }
        return;
    }
    // A large body becomes its message's payload; errors quote its head.
    let head = body::excerpt_head(&bytes);
    let items = match body::decode_owned(bytes, inner.max_body) {
        Ok(items) if json => items,
        Ok(_) | Err(_) => {
            let content_type = body::content_type(&response);
            let error = format!(
                "{context}: the reply (HTTP {status}, content type {content_type:?}) is not JSON-RPC: {}",
                body::excerpt(&head)
            );
            return match request {
                Some(id) => inner.fail_soon(id, TransportError::Other(error)),
                None => tracing::debug!(server = %inner.name, %error, "ignored the reply to a notification"),
            };
        }
    };
    let answered =
        |id: &RequestId| items.iter().any(|item| matches!(item, Ok(Message::Response(r)) if r.id.as_ref() == Some(id)));
    let unanswered = request.filter(|id| !answered(id)).map(|id| {
        let error = format!("{context}: the reply held no response to the request: {}", body::excerpt(&head));
        (id, TransportError::Other(error))
    });
    let mut items = items.into_iter();
    for item in items.by_ref() {
        match item {
            Ok(message) => {
                if let Some(event) = inner.deliver_now(message) {
                    // The queue is full: a task queues this and the rest, in order.
                    let inner = inner.clone();
                    inner.tasks.clone().spawn(async move {
                        inner.queue.push(event).await;
                        for item in items {
                            match item {
                                Ok(message) => inner.deliver(message).await,
                                Err(e) => dropped_from_batch(&inner, &e),
                            }
                        }
                        if let Some((id, error)) = unanswered {
                            inner.fail(id, error).await;
                        }
                    });
                    return;
                }
            }
            Err(e) => dropped_from_batch(inner, &e),
        }
    }
    if let Some((id, error)) = unanswered {
        inner.fail_soon(id, error);
    }
}

/// The warning for a message of a batch reply that is not valid JSON-RPC (it is dropped).
fn dropped_from_batch(inner: &Inner, error: &dyn std::fmt::Display) {
    tracing::warn!(server = %inner.name, %error, "dropped an invalid message of a batch reply");
}
