//! What the demo server keeps between messages: the legacy session (the revision and the client's
//! capabilities from `initialize`), the requests in flight (so that `notifications/cancelled` can
//! stop them), and the requests this server sent to the client and awaits (legacy era).

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use mcp_protocol::jsonrpc::to_raw;
use mcp_protocol::messages::ServerRequest;
use mcp_protocol::types::lifecycle::ClientCapabilities;
use mcp_protocol::types::logging::LoggingLevel;
use mcp_protocol::{ErrorCode, ErrorObject, Message, ProtocolVersion, RawJson, RequestId, Response, ResponsePayload};
use serde::Serialize;
use tokio::sync::{mpsc, oneshot, watch};
use tokio::task::AbortHandle;

/// Most client requests handled at once; beyond it a request is refused with an error.
pub(crate) const MAX_IN_FLIGHT: usize = 64;

/// How long a request to the client (roots, sampling) waits for its answer.
pub(crate) const ASK_TIMEOUT: Duration = Duration::from_secs(120);

/// The legacy-era session, as `initialize` set it up.
#[derive(Debug, Clone, Default)]
pub(crate) struct LegacySession {
    /// The negotiated revision (`None` before `initialize`).
    pub(crate) version: Option<ProtocolVersion>,
    /// What the client declared.
    pub(crate) capabilities: ClientCapabilities,
    /// The level set with `logging/setLevel`, if any.
    pub(crate) log_level: Option<LoggingLevel>,
}

type AskReply = oneshot::Sender<Result<RawJson, ErrorObject>>;

/// The server's shared state. Every method is synchronous and short: no lock is held across an
/// await.
pub(crate) struct State {
    out: mpsc::Sender<Message>,
    pub(crate) legacy: Mutex<LegacySession>,
    in_flight: Mutex<HashMap<RequestId, AbortHandle>>,
    /// How many requests are in flight.
    busy: watch::Sender<usize>,
    asks: Mutex<HashMap<RequestId, AskReply>>,
    next_ask: AtomicU64,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl State {
    pub(crate) fn new(out: mpsc::Sender<Message>) -> Self {
        State {
            out,
            legacy: Mutex::new(LegacySession::default()),
            in_flight: Mutex::new(HashMap::new()),
            busy: watch::Sender::new(0),
            asks: Mutex::new(HashMap::new()),
            next_ask: AtomicU64::new(1),
        }
    }

    /// The legacy session as it stands.
    pub(crate) fn legacy(&self) -> LegacySession {
        lock(&self.legacy).clone()
    }

    /// Queue a message for stdout. A closed output (the client went away) drops it: the reader
    /// ends the server when stdin closes.
    pub(crate) async fn send(&self, message: Message) {
        let _ = self.out.send(message).await;
    }

    /// Queue a notification; one that cannot be encoded is logged and dropped.
    pub(crate) async fn notify<P: Serialize>(&self, method: &str, params: &P) {
        match Message::notification(method, Some(params)) {
            Ok(message) => self.send(message).await,
            Err(e) => crate::output::terminal::errln(&format!("mcp serve-demo: could not encode {method}: {e}")),
        }
    }

    /// Run `task` for request `id`, remembered as in flight until it calls
    /// [`State::finished`]. Refused when the id is already in flight or the limit is reached.
    pub(crate) fn spawn_request<F>(&self, id: RequestId, task: F) -> Result<(), ErrorObject>
    where
        F: std::future::Future<Output = ()> + Send + 'static,
    {
        // Spawned under the lock, so that the task's `finished` cannot run before its entry exists.
        let mut in_flight = lock(&self.in_flight);
        if in_flight.contains_key(&id) {
            return Err(ErrorObject::new(ErrorCode::INVALID_REQUEST, format!("request id {id} is already in use")));
        }
        if in_flight.len() >= MAX_IN_FLIGHT {
            return Err(ErrorObject::new(
                ErrorCode::INTERNAL_ERROR,
                format!("too many requests in flight (at most {MAX_IN_FLIGHT}); try again later"),
            ));
        }
        let handle = tokio::spawn(task).abort_handle();
        in_flight.insert(id, handle);
        self.busy.send_replace(in_flight.len());
        Ok(())
    }

    /// Forget request `id` (it answered).
    pub(crate) fn finished(&self, id: &RequestId) {
        let mut in_flight = lock(&self.in_flight);
        in_flight.remove(id);
        self.busy.send_replace(in_flight.len());
    }

    /// Stop request `id` without answering it (`notifications/cancelled`). Whether it was running.
    pub(crate) fn cancel(&self, id: &RequestId) -> bool {
        let mut in_flight = lock(&self.in_flight);
        let handle = in_flight.remove(id);
        self.busy.send_replace(in_flight.len());
        handle.map(|h| h.abort()).is_some()
    }

    /// The input ended: requests to the client can no longer be answered, so they fail now.
    pub(crate) fn fail_asks(&self) {
        lock(&self.asks).clear();
    }

    /// Wait until no request is in flight, at most `limit`. Whether they all finished.
    pub(crate) async fn idle(&self, limit: Duration) -> bool {
        let mut busy = self.busy.subscribe();
        tokio::time::timeout(limit, busy.wait_for(|n| *n == 0)).await.is_ok()
    }

    /// Stop every request in flight.
    pub(crate) fn cancel_all(&self) {
        let mut in_flight = lock(&self.in_flight);
        for (_, handle) in in_flight.drain() {
            handle.abort();
        }
        self.busy.send_replace(0);
        lock(&self.asks).clear();
    }

    /// Send a request to the client (legacy era) and wait for its answer, at most
    /// [`ASK_TIMEOUT`]. The client's error object comes back as the error.
    pub(crate) async fn ask(&self, request: ServerRequest) -> Result<RawJson, ErrorObject> {
        let id = RequestId::String(format!("demo-{}", self.next_ask.fetch_add(1, Ordering::Relaxed)));
        let method = request.method().to_owned();
        let request = request.into_request(id.clone()).map_err(|e| internal(format!("encoding {method}: {e}")))?;
        let (tx, rx) = oneshot::channel();
        lock(&self.asks).insert(id.clone(), tx);
        // Forget the ask however this future ends (answered, timed out, or its call cancelled).
        let _forget = ForgetAsk { state: self, id: id.clone() };
        self.send(Message::Request(request)).await;
        match tokio::time::timeout(ASK_TIMEOUT, rx).await {
            Ok(Ok(answer)) => answer,
            Ok(Err(_)) => Err(internal(format!("the server stopped before the client answered {method}"))),
            Err(_) => Err(internal(format!("the client did not answer {method} within {} s", ASK_TIMEOUT.as_secs()))),
        }
    }

    /// Hand a response from the client to the ask waiting for it.
    pub(crate) fn answered(&self, response: Response) {
        let waiting = response.id.as_ref().and_then(|id| lock(&self.asks).remove(id));
        let Some(tx) = waiting else {
            crate::output::terminal::errln(&format!(
                "mcp serve-demo: ignored a response to no request of mine (id {:?})",
                response.id
            ));
            return;
        };
        let answer = match response.payload {
            ResponsePayload::Result(raw) => Ok(raw),
            ResponsePayload::Error(error) => Err(*error),
        };
        let _ = tx.send(answer);
    }
}

struct ForgetAsk<'a> {
    state: &'a State,
    id: RequestId,
}

impl Drop for ForgetAsk<'_> {
    fn drop(&mut self) {
        lock(&self.state.asks).remove(&self.id);
    }
}

/// An internal error.
pub(crate) fn internal(message: impl Into<String>) -> ErrorObject {
    ErrorObject::new(ErrorCode::INTERNAL_ERROR, message)
}

/// Invalid params, with a message naming what was wrong.
pub(crate) fn invalid_params(message: impl Into<String>) -> ErrorObject {
    ErrorObject::new(ErrorCode::INVALID_PARAMS, message)
}

/// A value as raw JSON, or an internal error.
pub(crate) fn encode<T: Serialize>(value: &T) -> Result<RawJson, ErrorObject> {
    to_raw(value).map_err(|e| internal(format!("could not encode the result: {e}")))
}
