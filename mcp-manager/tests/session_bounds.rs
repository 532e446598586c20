//! The session engine against hostile servers: a ping flood over a transport that never takes
//! a message, repeated request ids, progress for requests that asked for none, and timeouts too
//! large for any clock.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Weak};
use std::time::Duration;

use futures::future::BoxFuture;
use mcp_manager::session::{InboundHandler, NoHandler, RequestOptions, Session, SessionError, SessionOptions};
use mcp_protocol::messages::{ServerNotification, ServerRequest};
use mcp_protocol::types::common::PaginatedParams;
use mcp_protocol::types::lifecycle::Initialized;
use mcp_protocol::types::tools::ListTools;
use mcp_protocol::{ErrorCode, ErrorObject, Message, RawJson, RequestId, Response};
use mcp_transport::{CloseReason, MemoryTransport, Transport, TransportError, TransportEvent, TransportKind};
use serde_json::json;
use test_support::within_named;
use tokio::sync::{Notify, mpsc, watch};

/// Counts the sends in flight; the count drops with the send's future.
struct InFlight(Arc<AtomicUsize>);

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// A server that writes what the test feeds it and never reads: every send waits for ever for
/// the writer (held by the first send, the way a pipe's writer is held by a write the peer
/// never reads), and `close` waits for the writer too before it ends the transport.
struct NeverReads {
    incoming: tokio::sync::Mutex<mpsc::UnboundedReceiver<Message>>,
    delivered: AtomicUsize,
    writer: tokio::sync::Mutex<()>,
    in_flight: Arc<AtomicUsize>,
    most_in_flight: AtomicUsize,
    closed: watch::Sender<bool>,
}

impl NeverReads {
    fn new() -> (Arc<NeverReads>, mpsc::UnboundedSender<Message>) {
        let (tx, rx) = mpsc::unbounded_channel();
        let transport = NeverReads {
            incoming: tokio::sync::Mutex::new(rx),
            delivered: AtomicUsize::new(0),
            writer: tokio::sync::Mutex::new(()),
            in_flight: Arc::default(),
            most_in_flight: AtomicUsize::new(0),
            closed: watch::Sender::new(false),
        };
        (Arc::new(transport), tx)
    }
}

impl Transport for NeverReads {
    fn send(&self, _: Message) -> BoxFuture<'_, Result<(), TransportError>> {
        let now = self.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
        self.most_in_flight.fetch_max(now, Ordering::SeqCst);
        let guard = InFlight(self.in_flight.clone());
        Box::pin(async move {
            let _guard = guard;
            let _writer = self.writer.lock().await;
            futures::future::pending().await
        })
    }

    fn recv(&self) -> BoxFuture<'_, TransportEvent> {
        Box::pin(async move {
            let mut closed = self.closed.subscribe();
            let ended = async move {
                let _ = closed.wait_for(|c| *c).await;
            };
            let mut incoming = self.incoming.lock().await;
            tokio::select! {
                _ = ended => TransportEvent::Closed(CloseReason::Closed),
                m = incoming.recv() => match m {
                    Some(m) => {
                        self.delivered.fetch_add(1, Ordering::SeqCst);
                        TransportEvent::Message(m)
                    }
                    None => std::future::pending().await,
                },
            }
        })
    }

    fn close(&self) -> BoxFuture<'_, ()> {
        Box::pin(async move {
            let _writer = self.writer.lock().await;
            self.closed.send_replace(true);
        })
    }

    fn kind(&self) -> TransportKind {
        TransportKind::Custom
    }
}

const FLOOD: usize = 5000;

fn ping(n: usize) -> Message {
    Message::request(RequestId::Number(n as i64), "ping", Some(&json!({}))).unwrap()
}

/// Start a session on a server that never reads, and flood it with pings; returns once the
/// session's reader has taken every ping.
async fn flooded(timeout: Duration) -> (Session, Weak<NeverReads>, Arc<NeverReads>, mpsc::UnboundedSender<Message>) {
    let (transport, feed) = NeverReads::new();
    let mut options = SessionOptions::new("flood");
    options.request_timeout = timeout;
    let session = Session::start(transport.clone(), Arc::new(NoHandler), options);
    for n in 0..FLOOD {
        feed.send(ping(n)).unwrap();
    }
    within_named("the reader takes the flood", async {
        while transport.delivered.load(Ordering::SeqCst) < FLOOD {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await;
    // Give every reply that was taken time to start its send.
    tokio::time::sleep(Duration::from_millis(300)).await;
    (session, Arc::downgrade(&transport), transport, feed)
}

async fn released(weak: &Weak<NeverReads>) {
    within_named("the transport is released", async {
        while weak.strong_count() > 0 {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await
}

/// 5,000 pings from a server that never reads: the replies in flight stay few, a request and a
/// notification still end at their deadline, close finishes (it does not wait behind the stuck
/// replies) and the transport is released.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_ping_flood_to_a_server_that_never_reads_stays_bounded_and_closes() {
    let (session, weak, transport, _feed) = flooded(Duration::from_millis(500)).await;
    let most = transport.most_in_flight.load(Ordering::SeqCst);
    assert!(most <= 100, "{most} sends in flight at once for {FLOOD} pings");
    assert!(most >= 1, "the replies were sent");

    let err = within_named("a request during the flood", async {
        session.request::<ListTools>(&PaginatedParams::default(), RequestOptions::default()).await
    })
    .await
    .unwrap_err();
    assert!(err.is_timeout(), "{err}");
    let err = within_named("a notification during the flood", session.notify::<Initialized>(None)).await.unwrap_err();
    assert!(err.is_timeout(), "{err}");

    drop(transport);
    within_named("close during the flood", session.close()).await;
    assert!(session.close_reason().is_some());
    assert!(
        session
            .request::<ListTools>(&PaginatedParams::default(), RequestOptions::default())
            .await
            .unwrap_err()
            .is_closed()
    );
    drop(session);
    released(&weak).await;
}

/// Dropping the session without closing it releases the transport too, stuck replies and all.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropping_a_flooded_session_releases_the_transport() {
    let (session, weak, transport, _feed) = flooded(Duration::from_secs(5)).await;
    drop(transport);
    drop(session);
    released(&weak).await;
}

/// When the transport ends by itself (the server went away), the replies still being sent stop:
/// they would otherwise wait out their timeout on a dead transport.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_transports_end_stops_the_replies_in_flight() {
    let (session, _weak, transport, _feed) = flooded(Duration::from_secs(5)).await;
    assert!(transport.in_flight.load(Ordering::SeqCst) > 0);
    transport.closed.send_replace(true);
    within_named("the session notices the end", session.closed()).await;
    within_named("the replies stop", async {
        while transport.in_flight.load(Ordering::SeqCst) > 0 {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await;
}

/// A handler that never finishes; counts its calls and notices when it is dropped.
#[derive(Default)]
struct Blocks {
    calls: AtomicUsize,
    dropped: Arc<AtomicUsize>,
    dropped_now: Arc<Notify>,
}

struct DropFlag(Arc<AtomicUsize>, Arc<Notify>);

impl Drop for DropFlag {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
        self.1.notify_one();
    }
}

impl InboundHandler for Blocks {
    fn handle_request(&self, _: ServerRequest) -> BoxFuture<'static, Result<RawJson, ErrorObject>> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        let flag = DropFlag(self.dropped.clone(), self.dropped_now.clone());
        Box::pin(async move {
            let _flag = flag;
            futures::future::pending().await
        })
    }

    fn handle_notification(&self, _: ServerNotification) -> BoxFuture<'static, ()> {
        Box::pin(async {})
    }
}

fn sampling(id: i64) -> Message {
    let params = json!({"messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}], "maxTokens": 5});
    Message::request(RequestId::Number(id), "sampling/createMessage", Some(&params)).unwrap()
}

async fn next_response(server: &MemoryTransport) -> Response {
    match within_named("a response", server.recv()).await {
        TransportEvent::Message(Message::Response(r)) => r,
        other => panic!("expected a response, got {other:?}"),
    }
}

/// Fifty requests with id 7: the first is served, the other 49 are refused with an error reply,
/// and `notifications/cancelled` for 7 stops the one being served.
#[tokio::test]
async fn a_repeated_request_id_is_refused_and_cancellation_reaches_the_first() {
    let (client, server) = MemoryTransport::pair();
    let handler = Arc::new(Blocks::default());
    let _session = Session::start(Arc::new(client), handler.clone(), SessionOptions::new("dup"));
    for _ in 0..50 {
        server.send(sampling(7)).await.unwrap();
    }
    for _ in 0..49 {
        let response = next_response(&server).await;
        assert_eq!(response.id, Some(RequestId::Number(7)));
        let error = response.into_result().unwrap_err();
        assert_eq!(error.code, ErrorCode::INVALID_REQUEST, "{error:?}");
        assert!(error.message.contains("already in use"), "{}", error.message);
    }
    assert_eq!(handler.calls.load(Ordering::SeqCst), 1, "one handler runs");
    assert_eq!(handler.dropped.load(Ordering::SeqCst), 0);

    let cancel = Message::notification("notifications/cancelled", Some(&json!({"requestId": 7}))).unwrap();
    server.send(cancel).await.unwrap();
    within_named("the handler is aborted", async {
        while handler.dropped.load(Ordering::SeqCst) == 0 {
            handler.dropped_now.notified().await;
        }
    })
    .await;
    // The id is free again: a new request with it is served.
    server.send(sampling(7)).await.unwrap();
    within_named("the new request is served", async {
        while handler.calls.load(Ordering::SeqCst) < 2 {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await;
}

/// Every handler still running counts against `max_inbound_requests`.
#[tokio::test]
async fn handlers_in_flight_count_against_the_limit() {
    let (client, server) = MemoryTransport::pair();
    let handler = Arc::new(Blocks::default());
    let mut options = SessionOptions::new("limit");
    options.max_inbound_requests = 3;
    let _session = Session::start(Arc::new(client), handler.clone(), options);
    for id in 1..=5 {
        server.send(sampling(id)).await.unwrap();
    }
    let mut refused = Vec::new();
    for _ in 0..2 {
        let response = next_response(&server).await;
        let error = response.clone().into_result().unwrap_err();
        assert!(error.message.contains("too many concurrent requests"), "{}", error.message);
        refused.push(response.id.unwrap());
    }
    assert_eq!(refused, [RequestId::Number(4), RequestId::Number(5)]);
    assert_eq!(handler.calls.load(Ordering::SeqCst), 3);
}

async fn next_request(server: &MemoryTransport) -> mcp_protocol::Request {
    loop {
        match within_named("a request", server.recv()).await {
            TransportEvent::Message(Message::Request(r)) => return r,
            TransportEvent::Message(_) => continue,
            other => panic!("expected a request, got {other:?}"),
        }
    }
}

/// `Duration::MAX` as the timeout, the hard cap and the session default: no deadline overflows,
/// progress still extends one, and the answer arrives.
#[tokio::test]
async fn the_largest_timeouts_do_not_overflow() {
    let (client, server) = MemoryTransport::pair();
    let mut options = SessionOptions::new("huge");
    options.request_timeout = Duration::MAX;
    options.max_request_timeout = Duration::MAX;
    let session = Session::start(Arc::new(client), Arc::new(NoHandler), options);
    let seen = Arc::new(AtomicUsize::new(0));
    let progress = {
        let seen = seen.clone();
        Arc::new(move |_| {
            seen.fetch_add(1, Ordering::SeqCst);
        })
    };
    let with_progress = tokio::spawn({
        let session = session.clone();
        async move {
            let options = RequestOptions { timeout: Some(Duration::MAX), progress: Some(progress) };
            session.request::<ListTools>(&PaginatedParams::default(), options).await
        }
    });
    let plain = tokio::spawn({
        let session = session.clone();
        async move { session.request::<ListTools>(&PaginatedParams::default(), RequestOptions::default()).await }
    });
    let (first, second) = (next_request(&server).await, next_request(&server).await);
    let (asked, other) = if first.params.as_ref().is_some_and(|p| p.get().contains("progressToken")) {
        (first, second)
    } else {
        (second, first)
    };
    let note = json!({"progressToken": asked.id, "progress": 1});
    server.send(Message::notification("notifications/progress", Some(&note)).unwrap()).await.unwrap();
    within_named("the progress callback", async {
        while seen.load(Ordering::SeqCst) == 0 {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await;
    for id in [&asked.id, &other.id] {
        let result = mcp_protocol::to_raw(&json!({"tools": []})).unwrap();
        server.send(Message::Response(Response::result(id.clone(), result))).await.unwrap();
    }
    assert!(within_named("the answer", with_progress).await.unwrap().unwrap().tools.is_empty());
    assert!(within_named("the answer", plain).await.unwrap().unwrap().tools.is_empty());
    within_named("a notification", session.notify::<Initialized>(None)).await.unwrap();
}

/// Progress extends only the deadline of a request that asked for progress, and only with its
/// own token: progress naming a request that asked for none changes nothing.
#[tokio::test(start_paused = true)]
async fn progress_for_a_request_that_asked_for_none_does_not_extend_it() {
    let (client, server) = MemoryTransport::pair();
    let mut options = SessionOptions::new("progress");
    options.request_timeout = Duration::from_secs(1);
    let session = Session::start(Arc::new(client), Arc::new(NoHandler), options);
    let seen = Arc::new(AtomicBool::new(false));
    let progress = {
        let seen = seen.clone();
        Arc::new(move |_| seen.store(true, Ordering::SeqCst))
    };
    let asked = tokio::spawn({
        let session = session.clone();
        async move {
            let options = RequestOptions { timeout: None, progress: Some(progress) };
            session.request::<ListTools>(&PaginatedParams::default(), options).await
        }
    });
    let plain = tokio::spawn({
        let session = session.clone();
        async move { session.request::<ListTools>(&PaginatedParams::default(), RequestOptions::default()).await }
    });
    let (first, second) = (next_request(&server).await, next_request(&server).await);
    let plain_id =
        if first.params.as_ref().is_some_and(|p| p.get().contains("progressToken")) { second.id } else { first.id };
    // Progress naming the request without a token, every 300 ms for 3 s.
    for i in 0..10 {
        let note = json!({"progressToken": plain_id, "progress": i});
        let _ = server.send(Message::notification("notifications/progress", Some(&note)).unwrap()).await;
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
    for call in [plain, asked] {
        let err = call.await.unwrap().unwrap_err();
        let SessionError::Timeout { after, .. } = err else { panic!("expected a timeout, got {err}") };
        assert!(after < Duration::from_millis(1500), "the 1 s deadline was extended to {after:?}");
    }
    assert!(!seen.load(Ordering::SeqCst), "another request's progress reached the callback");
}
