//! The legacy-era session of a streamable HTTP transport: the `Mcp-Session-Id` and negotiated
//! revision learnt from the `initialize` exchange, and the transparent re-initialization after
//! the server forgot the session.
//!
//! The session engine above stays transport-agnostic: it sends `initialize` like on any
//! transport, and this module watches that request and its answer.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use http::StatusCode;
use mcp_protocol::codec;
use mcp_protocol::{Message, RawJson, Request, RequestId, ResponsePayload};

use super::Inner;
use crate::TransportError;
use crate::http_body::{self as body, BodyError, Events, status_error};

/// What the transport knows of the server's session.
#[derive(Debug, Clone, Default)]
pub(crate) struct SessionState {
    /// The `Mcp-Session-Id` the server assigned, if any.
    pub(crate) id: Option<String>,
    /// The revision the server answered `initialize` with.
    pub(crate) protocol_version: Option<String>,
    /// Bumped on each re-initialization.
    pub(crate) generation: u64,
}

/// The `initialize` request the session engine sent: replayed when the session expires.
#[derive(Default)]
pub(crate) struct InitMemory {
    params: Option<RawJson>,
    pending: Option<RequestId>,
}

impl InitMemory {
    /// Remember an outgoing `initialize` request.
    pub(crate) fn remember(&mut self, request: &Request) {
        self.params = request.params.clone();
        self.pending = Some(request.id.clone());
    }

    /// If `message` answers the remembered `initialize`, the revision it names.
    pub(crate) fn answer(&mut self, message: &Message) -> Option<Option<String>> {
        let Message::Response(response) = message else { return None };
        if response.id.is_none() || response.id != self.pending {
            return None;
        }
        self.pending = None;
        Some(match &response.payload {
            ResponsePayload::Result(raw) => protocol_version_of(raw),
            ResponsePayload::Error(_) => None,
        })
    }
}

/// The `protocolVersion` of an initialize result.
pub(crate) fn protocol_version_of(result: &RawJson) -> Option<String> {
    let value: serde_json::Value = serde_json::from_str(result.get()).ok()?;
    value.get("protocolVersion")?.as_str().map(str::to_owned)
}

/// Whether an error status to a request that carried a session id says the session is gone:
/// 404 (the spec's answer, e.g. the Python SDK's `Session not found`), or a 400 whose body says
/// the session is unknown (the TypeScript SDK's `Bad Request: No valid session ID provided`).
pub(crate) fn is_session_expiry(status: StatusCode, body: &[u8]) -> bool {
    match status {
        StatusCode::NOT_FOUND => true,
        StatusCode::BAD_REQUEST => {
            let text = String::from_utf8_lossy(&body[..body.len().min(4096)]).to_ascii_lowercase();
            text.contains("session")
                && ["not found", "no valid", "invalid", "unknown", "expired", "does not exist", "terminated"]
                    .iter()
                    .any(|p| text.contains(p))
        }
        _ => false,
    }
}

/// Re-initialize after the server forgot the session seen at `generation`: replay the
/// remembered `initialize` with an internal id, read the new session id, send
/// `notifications/initialized`. Nothing of this exchange reaches `recv`. When another request
/// already re-initialized since `generation`, returns at once.
pub(crate) async fn reinitialize(inner: &Arc<Inner>, generation: u64) -> Result<(), TransportError> {
    let _one_at_a_time = inner.reinit.lock().await;
    if inner.session.borrow().generation != generation {
        return Ok(());
    }
    let context = "re-initializing the expired session";
    let params = super::lock(&inner.init)
        .params
        .clone()
        .ok_or_else(|| TransportError::Other(format!("{context}: no initialize request was sent to replay")))?;
    let n = inner.internal_ids.fetch_add(1, Ordering::Relaxed);
    let id = RequestId::String(format!("mcp-transport-reinitialize-{n}"));
    let request = Message::Request(Request { id: id.clone(), method: "initialize".into(), params: Some(params) });
    tracing::info!(server = %inner.name, "the server no longer knows the session; re-initializing");

    let mut response = inner.post(codec::encode_line(&request).into(), None, None, &[]).await?;
    let status = response.status();
    if !status.is_success() {
        let body = body::read_prefix(&mut response, body::EXCERPT_BYTES, inner.read_timeout).await;
        return Err(status_error(context, status, &body));
    }
    let session_id = super::session_id_header(&response);
    let result = read_answer(inner, response, &id).await.map_err(|e| e.in_context(context))?;
    let version = protocol_version_of(&result);

    let initialized = Message::notification::<()>("notifications/initialized", None)
        .map_err(|e| TransportError::Other(format!("{context}: {e}")))?;
    let mut response =
        inner.post(codec::encode_line(&initialized).into(), session_id.as_deref(), version.as_deref(), &[]).await?;
    let status = response.status();
    if !status.is_success() {
        let body = body::read_prefix(&mut response, body::EXCERPT_BYTES, inner.read_timeout).await;
        return Err(status_error("re-initializing: notifications/initialized was refused", status, &body));
    }
    super::lock(&inner.seen).clear();
    inner.session.send_modify(|s| {
        s.id = session_id;
        s.protocol_version = version.or(s.protocol_version.take());
        s.generation += 1;
    });
    Ok(())
}

/// Read the answer to the internal request `id` from a JSON or SSE reply; everything else on
/// that reply is dropped.
async fn read_answer(
    inner: &Inner,
    mut response: crate::http_client::Response,
    id: &RequestId,
) -> Result<RawJson, TransportError> {
    let limit = inner.max_body;
    let mut found = None;
    if body::is_event_stream(&response) {
        let mut events = Events::new(response, limit, Some(inner.read_timeout));
        while let Some(event) = events.next().await {
            let event = event.map_err(|e| e.into_transport("reading the initialize reply"))?;
            if let Some(data) = event.data.filter(|d| !d.trim().is_empty()) {
                take(inner, &mut found, id, body::decode_event_data(&inner.name, data, limit));
            }
            if found.is_some() {
                break;
            }
        }
    } else {
        let bytes = body::read_limited(&mut response, limit, Some(inner.read_timeout))
            .await
            .map_err(|e: BodyError| e.into_transport("reading the initialize reply"))?;
        let items = body::decode(&bytes, limit).map_err(|e| {
            TransportError::Other(format!("the initialize reply is not JSON-RPC ({e}): {}", body::excerpt(&bytes)))
        })?;
        take(inner, &mut found, id, items.into_iter().filter_map(Result::ok).collect());
    }
    match found {
        Some(Ok(result)) => Ok(result),
        Some(Err(error)) => Err(TransportError::Other(format!("the server refused initialize: {error}"))),
        None => Err(TransportError::Other("the reply held no answer to initialize".into())),
    }
}

type Answer = Result<RawJson, mcp_protocol::ErrorObject>;

/// Keep the answer to `id`; drop the rest.
fn take(inner: &Inner, found: &mut Option<Answer>, id: &RequestId, messages: Vec<Message>) {
    for message in messages {
        match message {
            Message::Response(r) if r.id.as_ref() == Some(id) => *found = Some(r.into_result()),
            other => tracing::debug!(
                server = %inner.name,
                method = ?other.method(),
                "dropped a message sent during re-initialization"
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expiry_shapes_from_the_corpus() {
        let ts = br#"{"jsonrpc":"2.0","error":{"code":-32000,"message":"Bad Request: No valid session ID provided"}}"#;
        let py = br#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Session not found"}}"#;
        let not_init =
            br#"{"jsonrpc":"2.0","error":{"code":-32000,"message":"Bad Request: Server not initialized"},"id":null}"#;
        assert!(is_session_expiry(StatusCode::BAD_REQUEST, ts));
        assert!(is_session_expiry(StatusCode::NOT_FOUND, py));
        assert!(!is_session_expiry(StatusCode::BAD_REQUEST, not_init));
        assert!(!is_session_expiry(StatusCode::INTERNAL_SERVER_ERROR, py));
    }

    #[test]
    fn learns_the_version_of_the_initialize_answer_only() {
        let mut memory = InitMemory::default();
        let request = Request { id: RequestId::Number(1), method: "initialize".into(), params: None };
        memory.remember(&request);
        let other = Message::response(RequestId::Number(2), &serde_json::json!({"protocolVersion": "x"})).unwrap();
        assert_eq!(memory.answer(&other), None);
        let answer =
            Message::response(RequestId::Number(1), &serde_json::json!({"protocolVersion": "2025-06-18"})).unwrap();
        assert_eq!(memory.answer(&answer), Some(Some("2025-06-18".into())));
        assert_eq!(memory.answer(&answer), None);
    }
}
