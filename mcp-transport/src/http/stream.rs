//! SSE streams of a streamable HTTP transport: the stream answering a POST, its resumption with
//! `Last-Event-ID` when it breaks before the answer, and the standalone GET stream that carries
//! what the server sends on its own.

use std::collections::{HashSet, VecDeque};
use std::sync::Arc;
use std::time::Duration;

use http::StatusCode;
use mcp_protocol::{Message, RequestId};

use super::Inner;
use super::session::is_session_expiry;
use crate::TransportError;
use crate::http_body::{self as body, BodyError, Events};

/// How many event ids are remembered to drop replayed duplicates.
const SEEN_IDS: usize = 4096;

/// How many bytes of event ids are remembered in all (each id is stored once).
const SEEN_ID_BYTES: usize = 256 * 1024;

/// Longest event id used: a longer one is neither remembered nor sent back as `Last-Event-ID`.
pub(crate) const MAX_EVENT_ID_BYTES: usize = 1024;

/// Event ids already delivered, the oldest forgotten first, bounded both in count
/// ([`SEEN_IDS`]) and in bytes ([`SEEN_ID_BYTES`]). The spec makes event ids unique across the
/// streams of a session, so an event seen twice (some servers replay other streams' events on
/// resumption) is dropped.
#[derive(Default)]
pub(crate) struct SeenIds {
    order: VecDeque<Arc<str>>,
    set: HashSet<Arc<str>>,
    bytes: usize,
}

impl SeenIds {
    /// Record `id`; false when it was already seen. Ids longer than [`MAX_EVENT_ID_BYTES`] are
    /// not recorded (and reported as new).
    pub(crate) fn insert(&mut self, id: &str) -> bool {
        if id.len() > MAX_EVENT_ID_BYTES {
            return true;
        }
        if self.set.contains(id) {
            return false;
        }
        while self.order.len() >= SEEN_IDS || (self.bytes + id.len() > SEEN_ID_BYTES && !self.order.is_empty()) {
            let Some(old) = self.order.pop_front() else { break };
            self.bytes -= old.len();
            self.set.remove(&old);
        }
        let id: Arc<str> = Arc::from(id);
        self.bytes += id.len();
        self.order.push_back(id.clone());
        self.set.insert(id);
        true
    }

    pub(crate) fn clear(&mut self) {
        self.order.clear();
        self.set.clear();
        self.bytes = 0;
    }

    /// How many ids, and how many bytes of ids, are remembered.
    #[cfg(test)]
    fn size(&self) -> (usize, usize) {
        (self.order.len(), self.bytes)
    }
}

/// Where a stream stands: the id to resume after, and the server's reconnection delay.
#[derive(Debug, Default)]
struct Cursor {
    last_event_id: Option<String>,
    retry: Option<Duration>,
}

/// How reading a stream ended.
enum End {
    /// The awaited response arrived.
    Answered,
    /// The stream ended cleanly.
    Ended,
    /// The stream broke.
    Failed(BodyError),
}

/// Read events, delivering their messages, until the response to `awaited` arrives or the
/// stream ends. On a `replay` (resumed) stream, events already seen are skipped. Sets
/// `progressed` when a message was delivered.
async fn pump(
    inner: &Inner,
    events: &mut Events,
    cursor: &mut Cursor,
    awaited: Option<&RequestId>,
    replay: bool,
    progressed: &mut bool,
) -> End {
    while let Some(event) = events.next().await {
        let event = match event {
            Ok(event) => event,
            Err(e) => return End::Failed(e),
        };
        if let Some(retry) = event.retry {
            cursor.retry = Some(Duration::from_millis(retry));
        }
        if let Some(id) = event.id.filter(|id| !id.is_empty()) {
            if id.len() > MAX_EVENT_ID_BYTES {
                // Not worth remembering, nor sending back as a header: this stream cannot be
                // resumed until an event with a usable id arrives.
                tracing::warn!(
                    server = %inner.name,
                    id_bytes = id.len(),
                    limit = MAX_EVENT_ID_BYTES,
                    "ignored an SSE event id longer than the limit: the stream cannot be resumed from it"
                );
                cursor.last_event_id = None;
            } else {
                cursor.last_event_id = Some(id.clone());
            }
            // Only a resumed stream may replay; elsewhere a repeated id (a server breaking the
            // uniqueness rule) is delivered anyway.
            if !super::lock(&inner.seen).insert(&id) && replay {
                tracing::debug!(server = %inner.name, event_id = %id, "skipped a replayed SSE event");
                continue;
            }
        }
        if event.event.as_deref().is_some_and(|e| e != "message") {
            tracing::debug!(server = %inner.name, event = ?event.event, "skipped an SSE event of unknown type");
            continue;
        }
        // An event without data is a priming event: it only carries an id to resume from.
        let Some(data) = event.data.filter(|d| !d.trim().is_empty()) else { continue };
        let mut answered = false;
        for message in body::decode_event_data(&inner.name, data, inner.max_body) {
            answered |= matches!((&message, awaited), (Message::Response(r), Some(id)) if r.id.as_ref() == Some(id));
            *progressed = true;
            inner.deliver(message).await;
        }
        if answered {
            return End::Answered;
        }
    }
    End::Ended
}

/// Deliver the SSE reply to a POST. When the message was a request and the stream ends before
/// its response, resume it with GET and `Last-Event-ID`, within the resume policy; then fail
/// the request.
pub(crate) async fn reply_stream(
    inner: Arc<Inner>,
    response: crate::http_client::Response,
    awaited: Option<RequestId>,
) {
    let mut cursor = Cursor::default();
    let mut events = Events::new(response, inner.max_body, Some(inner.read_timeout));
    let mut attempts = 0u32;
    let mut resumed = false;
    loop {
        let mut progressed = false;
        let end = pump(&inner, &mut events, &mut cursor, awaited.as_ref(), resumed, &mut progressed).await;
        let Some(id) = &awaited else {
            if let End::Failed(e) = end {
                tracing::debug!(server = %inner.name, error = %e, "an SSE reply to a notification broke");
            }
            return;
        };
        let why = match end {
            End::Answered => return,
            End::Failed(BodyError::TooLarge { limit }) => {
                return inner.fail(id.clone(), TransportError::MessageTooLarge { limit }).await;
            }
            End::Failed(e) => format!("the response stream broke ({e})"),
            End::Ended => "the response stream ended".to_owned(),
        };
        let Some(last_event_id) = cursor.last_event_id.clone() else {
            let error = format!(
                "{why} before the response to request {id} arrived, and the server gave no event id to resume from"
            );
            return inner.fail(id.clone(), TransportError::Other(error)).await;
        };
        if progressed {
            attempts = 0;
        }
        match resume(&inner, &last_event_id, &cursor, &mut attempts, &why).await {
            Ok(stream) => {
                events = stream;
                resumed = true;
            }
            Err(error) => {
                let error = format!("request {id}: {error}");
                return inner.fail(id.clone(), TransportError::Other(error)).await;
            }
        }
    }
}

/// Reconnect with `Last-Event-ID` until a stream opens or the attempts run out.
async fn resume(
    inner: &Inner,
    last_event_id: &str,
    cursor: &Cursor,
    attempts: &mut u32,
    why: &str,
) -> Result<Events, String> {
    let policy = inner.resume;
    let mut last_error = why.to_owned();
    loop {
        if *attempts >= policy.max_retries {
            return Err(format!(
                "gave up resuming the response stream after {} attempts with Last-Event-ID; last: {last_error}",
                policy.max_retries
            ));
        }
        tokio::time::sleep(policy.delay(cursor.retry, *attempts)).await;
        *attempts += 1;
        let session = inner.session.borrow().clone();
        tracing::debug!(server = %inner.name, attempt = *attempts, "resuming an SSE stream with Last-Event-ID");
        let mut response = match inner.get(Some(last_event_id), &session).await {
            Ok(r) => r,
            Err(e) => {
                last_error = e.to_string();
                continue;
            }
        };
        let status = response.status();
        if status.is_success() && body::is_event_stream(&response) {
            return Ok(Events::new(response, inner.max_body, Some(inner.read_timeout)));
        }
        let bytes = body::read_prefix(&mut response, body::EXCERPT_BYTES, inner.read_timeout).await;
        if status == StatusCode::METHOD_NOT_ALLOWED {
            return Err(format!("{why}, and the server does not support resuming it (HTTP 405)"));
        }
        if session.id.is_some() && is_session_expiry(status, &bytes) {
            return Err(format!("{why}, and the session expired (HTTP {status}: {})", body::excerpt(&bytes)));
        }
        if status.is_client_error() {
            return Err(format!("{why}; resuming it failed: HTTP {status}: {}", body::excerpt(&bytes)));
        }
        last_error = if status.is_success() {
            format!("HTTP {status} without an event stream")
        } else {
            format!("HTTP {status}: {}", body::excerpt(&bytes))
        };
    }
}

/// The standalone GET stream: opened after initialization, reconnected with `Last-Event-ID`
/// and capped backoff when it drops. A 405 means the server offers none. After too many
/// failures in a row, or when the session expired, it waits for the next session.
pub(crate) async fn standalone(inner: Arc<Inner>) {
    let policy = inner.resume;
    let mut cursor = Cursor::default();
    let mut generation = inner.session.borrow().generation;
    let mut failures = 0u32;
    loop {
        if failures > policy.max_retries {
            tracing::warn!(server = %inner.name, "the GET stream failed {failures} times in a row; waiting for a new session");
            if !wait_for_new_session(&inner, generation).await {
                return;
            }
            failures = 0;
        }
        if failures > 0 {
            tokio::time::sleep(policy.delay(cursor.retry, failures - 1)).await;
        }
        let session = inner.session.borrow().clone();
        if session.generation != generation {
            generation = session.generation;
            cursor = Cursor::default();
        }
        let response = inner.get(cursor.last_event_id.as_deref(), &session).await;
        inner.standalone_stream_answered();
        let mut response = match response {
            Ok(r) => r,
            Err(e) => {
                tracing::debug!(server = %inner.name, error = %e, "could not open the GET stream");
                failures += 1;
                continue;
            }
        };
        let status = response.status();
        if status == StatusCode::METHOD_NOT_ALLOWED {
            tracing::debug!(server = %inner.name, "the server offers no GET stream (HTTP 405)");
            return;
        }
        if status.is_success() && body::is_event_stream(&response) {
            let mut events = Events::new(response, inner.max_body, Some(inner.read_timeout));
            let mut progressed = false;
            let replay = cursor.last_event_id.is_some();
            if let End::Failed(e) = pump(&inner, &mut events, &mut cursor, None, replay, &mut progressed).await {
                tracing::debug!(server = %inner.name, error = %e, "the GET stream broke");
            }
            failures = if progressed { 1 } else { failures + 1 };
            continue;
        }
        let bytes = body::read_prefix(&mut response, body::EXCERPT_BYTES, inner.read_timeout).await;
        if session.id.is_some() && is_session_expiry(status, &bytes) {
            tracing::debug!(server = %inner.name, "the GET stream's session expired; waiting for a new session");
            if !wait_for_new_session(&inner, generation).await {
                return;
            }
            failures = 0;
            continue;
        }
        tracing::debug!(server = %inner.name, %status, body = %body::excerpt(&bytes), "the GET stream was refused");
        failures += 1;
    }
}

/// Wait until the session is re-initialized; false when the transport is gone.
async fn wait_for_new_session(inner: &Inner, generation: u64) -> bool {
    let mut session = inner.session.subscribe();
    session.wait_for(|s| s.generation != generation).await.is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seen_ids_are_bounded() {
        let mut seen = SeenIds::default();
        assert!(seen.insert("a"));
        assert!(!seen.insert("a"));
        for i in 0..SEEN_IDS {
            seen.insert(&i.to_string());
        }
        assert!(seen.insert("a"), "the oldest id was forgotten");
        assert_eq!(seen.order.len(), SEEN_IDS);
    }

    #[test]
    fn seen_ids_are_bounded_in_bytes() {
        let mut seen = SeenIds::default();
        let huge = "x".repeat(4 * 1024 * 1024);
        assert!(seen.insert(&huge), "a huge id is new");
        assert!(seen.insert(&huge), "and never remembered");
        assert_eq!(seen.size(), (0, 0));
        // Ids at the length limit: the byte budget, not the count, is what bounds them.
        for i in 0..SEEN_IDS {
            let id = format!("{i:0>width$}", width = MAX_EVENT_ID_BYTES);
            assert!(seen.insert(&id));
            let (count, bytes) = seen.size();
            assert!(bytes <= SEEN_ID_BYTES, "{count} ids hold {bytes} bytes");
        }
        let (count, bytes) = seen.size();
        assert_eq!(count, SEEN_ID_BYTES / MAX_EVENT_ID_BYTES, "{bytes}");
        let last = format!("{:0>width$}", SEEN_IDS - 1, width = MAX_EVENT_ID_BYTES);
        assert!(!seen.insert(&last), "the newest id is still remembered");
        seen.clear();
        assert_eq!(seen.size(), (0, 0));
    }
}
