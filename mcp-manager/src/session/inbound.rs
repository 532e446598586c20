//! The session's reader: routes answers to pending requests, serves the server's requests
//! concurrently, and delivers notifications in order.
//!
//! A transport that routes ([`mcp_transport::Transport::set_router`]) hands the answers and the
//! progress notifications to [`router`] on its own task as it decodes them: an answer then
//! reaches its caller without a hop through the transport's queue and this reader, and progress
//! still comes before the answer it precedes. Everything else, and everything from a transport
//! that does not route, comes through [`run`].

use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};

use futures::future::BoxFuture;
use mcp_protocol::jsonrpc::to_raw;
use mcp_protocol::messages::{ServerNotification, ServerRequest};
use mcp_protocol::method::NotificationMethod;
use mcp_protocol::types::common::EmptyResult;
use mcp_protocol::types::progress::Progress;
use mcp_protocol::{ErrorCode, ErrorObject, Message, RawJson, Request, RequestId, Response, ResponsePayload};
use mcp_transport::{CloseReason, MessageRouter, TransportEvent};
use tokio::sync::mpsc;
use tokio::task::AbortHandle;
use tracing::Instrument;

use super::outbox::REPLY_SEND_TIMEOUT;
use super::{SessionError, Shared};
use crate::telemetry;

/// Answers what a server asks of the client. The session engine answers `ping` itself; every
/// other request comes here, concurrently, each on its own task.
pub trait InboundHandler: Send + Sync + 'static {
    /// Serve a request from the server. An `Err` becomes a JSON-RPC error reply. An unknown
    /// method should be answered with [`ErrorCode::METHOD_NOT_FOUND`].
    fn handle_request(&self, request: ServerRequest) -> BoxFuture<'static, Result<RawJson, ErrorObject>>;

    /// A notification from the server, delivered in arrival order.
    fn handle_notification(&self, notification: ServerNotification) -> BoxFuture<'static, ()>;
}

/// A handler that serves nothing: every request gets METHOD_NOT_FOUND, notifications are dropped.
#[derive(Debug, Default, Clone, Copy)]
pub struct NoHandler;

impl InboundHandler for NoHandler {
    fn handle_request(&self, request: ServerRequest) -> BoxFuture<'static, Result<RawJson, ErrorObject>> {
        let method = request.method().to_owned();
        Box::pin(async move { Err(method_not_found(&method)) })
    }

    fn handle_notification(&self, _: ServerNotification) -> BoxFuture<'static, ()> {
        Box::pin(async {})
    }
}

pub(crate) fn method_not_found(method: &str) -> ErrorObject {
    ErrorObject::new(ErrorCode::METHOD_NOT_FOUND, format!("method not found: {method}"))
}

/// The server's requests being served: by id, the generation of the entry (so that a finished
/// handler removes its own entry, never a later one with the same id) and its task.
#[derive(Default)]
struct Served {
    tasks: HashMap<RequestId, (u64, AbortHandle)>,
    next: u64,
}

type InFlight = Arc<Mutex<Served>>;

/// Aborts the server's requests still being served when the reader ends, or is dropped because
/// the session was.
struct AbortInFlight(InFlight);

impl Drop for AbortInFlight {
    fn drop(&mut self) {
        for (_, (_, task)) in lock(&self.0).tasks.drain() {
            task.abort();
        }
    }
}

/// What the session takes from a routing transport as it decodes them: answers go to their
/// pending requests, and progress reaches its request's callback (and is still queued, for the
/// handler). Holds the session weakly: the transport is the session's.
pub(super) fn router(shared: Weak<Shared>) -> MessageRouter {
    Arc::new(move |message| {
        let Some(shared) = shared.upgrade() else { return Some(message) };
        match message {
            Message::Response(response) => {
                answer(&shared, response);
                None
            }
            Message::Notification(n) if n.method == Progress::METHOD => {
                if let Ok(ServerNotification::Progress(Some(p))) = ServerNotification::from_notification(&n) {
                    let token = p.progress_token.clone();
                    shared.pending.progress(&token, p);
                }
                Some(Message::Notification(n))
            }
            other => Some(other),
        }
    })
}

/// The session's reader. With `routed`, the transport routes through [`router`]: answers do
/// not come here, and progress has reached its request already.
pub(super) async fn run(shared: Arc<Shared>, handler: Arc<dyn InboundHandler>, routed: bool) {
    // Notifications go through one queue to one task, so they reach the handler in order
    // without holding up answers to pending requests. Boxed in the queue: its slots are
    // allocated 32 at a time, and a session that never gets a notification (most) then holds
    // 32 pointers, not 32 notifications.
    let (note_tx, mut note_rx) = mpsc::channel::<Box<ServerNotification>>(1024);
    let note_handler = handler.clone();
    let notes = tokio::spawn(async move {
        while let Some(n) = note_rx.recv().await {
            note_handler.handle_notification(*n).await;
        }
    });
    let in_flight: InFlight = Arc::default();
    let abort_in_flight = AbortInFlight(in_flight.clone());
    let reason = loop {
        match shared.transport.recv().await {
            TransportEvent::Message(Message::Response(response)) => answer(&shared, response),
            TransportEvent::Message(Message::Request(request)) => serve(&shared, &handler, &in_flight, request),
            TransportEvent::Message(Message::Notification(n)) => {
                let typed = match ServerNotification::from_notification(&n) {
                    Ok(t) => t,
                    Err(e) => {
                        tracing::warn!(server = %shared.name, method = %n.method, error = %e, "dropped a notification with invalid params");
                        continue;
                    }
                };
                match &typed {
                    ServerNotification::Progress(Some(p)) if !routed => {
                        shared.pending.progress(&p.progress_token, p.clone());
                    }
                    ServerNotification::Cancelled(Some(c)) => {
                        if let Some(id) = &c.request_id
                            && let Some((_, task)) = lock(&in_flight).tasks.remove(id)
                        {
                            task.abort();
                        }
                    }
                    _ => {}
                }
                if note_tx.send(Box::new(typed)).await.is_err() {
                    tracing::debug!(server = %shared.name, "notification handler stopped");
                }
            }
            TransportEvent::RequestFailed { id, error } => {
                if let Some(p) = shared.pending.remove(&id) {
                    let _ = p.tx.send(Err(SessionError::Transport {
                        server: shared.name.clone(),
                        method: p.method.into_owned(),
                        error,
                    }));
                }
            }
            TransportEvent::Closed(reason) => break reason,
        }
    };
    end(&shared, reason);
    drop(abort_in_flight);
    // Nothing more reaches the server: stop the replies still being sent.
    shared.outbox.close().await;
    drop(note_tx);
    let _ = notes.await;
}

fn end(shared: &Shared, reason: CloseReason) {
    let reason = shared.closed.borrow().clone().unwrap_or(reason);
    shared.pending.fail_all(&shared.name, &reason);
    shared.telemetry.end();
    shared.closed.send_if_modified(|c| {
        if c.is_none() {
            *c = Some(reason);
            true
        } else {
            false
        }
    });
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

fn answer(shared: &Shared, response: Response) {
    let Some(id) = response.id.clone() else {
        if let ResponsePayload::Error(e) = &response.payload {
            tracing::warn!(server = %shared.name, error = %e, "server sent an error without a request id");
        }
        return;
    };
    let Some(pending) = shared.pending.remove(&id) else {
        if shared.issued(&id) {
            tracing::debug!(server = %shared.name, %id, "ignored an answer to no pending request (late, cancelled or repeated)");
        } else {
            tracing::warn!(server = %shared.name, %id, "ignored an answer to a request id this client never sent");
        }
        return;
    };
    let result = match response.payload {
        ResponsePayload::Result(raw) => Ok(raw),
        ResponsePayload::Error(error) => {
            Err(SessionError::Rpc { server: shared.name.clone(), method: pending.method.into_owned(), error })
        }
    };
    let _ = pending.tx.send(result);
}

/// Answer request `id` of the server, in the background (bounded: see [`super::outbox`]).
fn reply(shared: &Shared, method: &str, id: RequestId, result: Result<RawJson, ErrorObject>) {
    let message = match result {
        Ok(raw) => Message::Response(Response::result(id, raw)),
        Err(error) => Message::Response(Response::error(Some(id), error)),
    };
    shared.outbox.send(method, message, REPLY_SEND_TIMEOUT);
}

fn serve(shared: &Arc<Shared>, handler: &Arc<dyn InboundHandler>, in_flight: &InFlight, request: Request) {
    let Request { id, method, .. } = &request;
    if method == "ping" {
        let result =
            to_raw(&EmptyResult::default()).map_err(|e| ErrorObject::new(ErrorCode::INTERNAL_ERROR, e.to_string()));
        reply(shared, method, id.clone(), result);
        return;
    }
    let typed = match ServerRequest::from_request(&request) {
        Ok(t) => t,
        Err(e) => {
            let error = ErrorObject::new(ErrorCode::INVALID_PARAMS, format!("invalid params for {method}: {e}"));
            reply(shared, method, id.clone(), Err(error));
            return;
        }
    };
    let mut served = lock(in_flight);
    // A second request with the id of one still being served would replace it (and escape the
    // limit and cancellation): refuse it, and keep serving the first.
    if served.tasks.contains_key(id) {
        tracing::debug!(server = %shared.name, %id, method, "the server reused the id of a request still being served; refused it");
        let error = ErrorObject::new(
            ErrorCode::INVALID_REQUEST,
            format!("request id {id} is already in use by a request still being served"),
        );
        reply(shared, method, id.clone(), Err(error));
        return;
    }
    let Ok(permit) = shared.inbound.clone().try_acquire_owned() else {
        let limit = shared.options.max_inbound_requests;
        tracing::debug!(server = %shared.name, %id, method, limit, "too many concurrent requests from the server; refused one");
        let error = ErrorObject::new(
            ErrorCode::INTERNAL_ERROR,
            format!("too many concurrent requests from the server (at most {limit})"),
        );
        reply(shared, method, id.clone(), Err(error));
        return;
    };
    let generation = served.next;
    served.next += 1;
    let fut = handler.handle_request(typed);
    let cx =
        telemetry::RequestContext { server: &shared.name, telemetry: &shared.telemetry, transport: &*shared.transport };
    let span = telemetry::server_request_span(&cx, id, method);
    let (shared2, in_flight2, id2, method2) = (shared.clone(), in_flight.clone(), id.clone(), method.clone());
    // Spawned under the lock: the task removes its entry under it, so never before it is in.
    let task = tokio::spawn(async move {
        let result = fut.instrument(span.clone()).await;
        telemetry::record_served(&span, &result);
        drop(permit);
        {
            let mut served = lock(&in_flight2);
            if served.tasks.get(&id2).is_some_and(|(g, _)| *g == generation) {
                served.tasks.remove(&id2);
            }
        }
        reply(&shared2, &method2, id2, result);
    });
    served.tasks.insert(id.clone(), (generation, task.abort_handle()));
}
