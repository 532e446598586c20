//! A session over a transport that routes ([`Transport::set_router`]): the answers to its
//! requests and their progress are taken by the session's router as the transport decodes
//! them, and never come through `recv`; each progress report reaches its request's callback
//! once, before the answer it precedes, and the handler still hears of it.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use futures::FutureExt;
use futures::future::BoxFuture;
use mcp_manager::session::{InboundHandler, ProgressCallback, RequestOptions, Session, SessionError, SessionOptions};
use mcp_protocol::messages::{ServerNotification, ServerRequest};
use mcp_protocol::types::common::PaginatedParams;
use mcp_protocol::types::tools::{ListTools, ListToolsResult};
use mcp_protocol::{ErrorObject, Message, RawJson, Response};
use mcp_transport::{MemoryTransport, MessageRouter, Transport, TransportError, TransportEvent, TransportKind};
use serde_json::{Value, json};
use test_support::within;

/// A memory transport that routes: what the peer sends goes through the router first, and
/// only what it gives back reaches `recv`. Counts what `recv` yields.
struct Routing {
    inner: MemoryTransport,
    router: OnceLock<MessageRouter>,
    through_recv: Arc<Mutex<Vec<String>>>,
}

impl Transport for Routing {
    fn send(&self, message: Message) -> BoxFuture<'_, Result<(), TransportError>> {
        self.inner.send(message)
    }

    fn recv(&self) -> BoxFuture<'_, TransportEvent> {
        async move {
            loop {
                let event = self.inner.recv().await;
                let TransportEvent::Message(message) = event else { return event };
                let message = match self.router.get() {
                    Some(router) => match router(message) {
                        Some(message) => message,
                        None => continue,
                    },
                    None => message,
                };
                let label = match &message {
                    Message::Request(r) => r.method.clone(),
                    Message::Notification(n) => n.method.clone(),
                    Message::Response(_) => "response".to_owned(),
                };
                self.through_recv.lock().unwrap().push(label);
                return TransportEvent::Message(message);
            }
        }
        .boxed()
    }

    fn close(&self) -> BoxFuture<'_, ()> {
        self.inner.close()
    }

    fn kind(&self) -> TransportKind {
        TransportKind::Custom
    }

    fn set_router(&self, router: MessageRouter) -> bool {
        self.router.set(router).is_ok()
    }
}

/// Records the methods of the notifications it is given.
struct Notes(Arc<Mutex<Vec<String>>>);

impl InboundHandler for Notes {
    fn handle_request(&self, request: ServerRequest) -> BoxFuture<'static, Result<RawJson, ErrorObject>> {
        let method = request.method().to_owned();
        Box::pin(async move { Err(ErrorObject::new(mcp_protocol::ErrorCode::METHOD_NOT_FOUND, method)) })
    }

    fn handle_notification(&self, notification: ServerNotification) -> BoxFuture<'static, ()> {
        self.0.lock().unwrap().push(notification.method().to_owned());
        Box::pin(async {})
    }
}

async fn next_message(server: &MemoryTransport) -> Message {
    match server.recv().await {
        TransportEvent::Message(m) => m,
        other => panic!("expected a message, got {other:?}"),
    }
}

/// Answer the next request `server` gets with an empty tool list.
async fn answer_next_listing(server: &MemoryTransport) {
    let Message::Request(req) = next_message(server).await else { panic!("expected the request") };
    let answer = mcp_protocol::to_raw(&json!({"tools": []})).unwrap();
    server.send(Message::Response(Response::result(req.id, answer))).await.unwrap();
}

/// `tools/list` on `session` with `progress` as its callback, while `server` sends `reports`
/// progress reports and then the answer, all at once (the answer right behind the last report).
async fn listing_with_progress(
    session: &Session,
    server: &MemoryTransport,
    progress: ProgressCallback,
    reports: u32,
) -> Result<ListToolsResult, SessionError> {
    let call = tokio::spawn({
        let session = session.clone();
        async move {
            let options = RequestOptions { timeout: None, progress: Some(progress) };
            session.request::<ListTools>(&PaginatedParams::default(), options).await
        }
    });
    let Message::Request(req) = next_message(server).await else { panic!("expected the request") };
    let params: Value = serde_json::from_str(req.params.as_ref().unwrap().get()).unwrap();
    let token = params["_meta"]["progressToken"].clone();
    for i in 1..=reports {
        let note = json!({"progressToken": token, "progress": i});
        server.send(Message::notification("notifications/progress", Some(&note)).unwrap()).await.unwrap();
    }
    let answer = mcp_protocol::to_raw(&json!({"tools": []})).unwrap();
    server.send(Message::Response(Response::result(req.id, answer))).await.unwrap();
    call.await.unwrap()
}

/// A progress callback that counts its reports, and the count.
fn counting(check: impl Fn(usize) + Send + Sync + 'static) -> (ProgressCallback, Arc<AtomicUsize>) {
    let reports = Arc::new(AtomicUsize::new(0));
    let seen = reports.clone();
    (Arc::new(move |_p| check(seen.fetch_add(1, Ordering::SeqCst))), reports)
}

#[tokio::test]
async fn answers_and_progress_go_through_the_router_once_and_in_order() {
    within(async {
        let (client, server) = MemoryTransport::pair();
        let through_recv = Arc::new(Mutex::new(Vec::new()));
        let transport = Routing { inner: client, router: OnceLock::new(), through_recv: through_recv.clone() };
        let notes = Arc::new(Mutex::new(Vec::new()));
        let mut options = SessionOptions::new("routed");
        options.request_timeout = Duration::from_secs(5);
        let session = Session::start(Arc::new(transport), Arc::new(Notes(notes.clone())), options);

        let (progress, reports) = counting(|_| {});
        // Three reports and the answer, sent at once: the reports must all reach the callback,
        // once each, before the answer resolves the call.
        let result = listing_with_progress(&session, &server, progress, 3).await;
        let result = result.expect("the routed answer resolves the call");
        assert!(result.tools.is_empty());
        assert_eq!(reports.load(Ordering::SeqCst), 3, "each report reached the callback once, before the answer");

        // The handler hears of the reports too; the answer never came through recv.
        tokio::time::timeout(Duration::from_secs(5), async {
            while notes.lock().unwrap().len() < 3 {
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        })
        .await
        .expect("the handler got the progress notifications");
        assert_eq!(*notes.lock().unwrap(), ["notifications/progress"; 3]);
        assert_eq!(*through_recv.lock().unwrap(), ["notifications/progress"; 3]);
        assert_eq!(reports.load(Ordering::SeqCst), 3, "the reader did not report them a second time");

        // A second request is answered the same way.
        let again = tokio::spawn({
            let session = session.clone();
            async move { session.request::<ListTools>(&PaginatedParams::default(), RequestOptions::default()).await }
        });
        answer_next_listing(&server).await;
        assert!(again.await.unwrap().is_ok());
        assert!(!through_recv.lock().unwrap().iter().any(|m| m == "response"));
    })
    .await
}

/// A progress callback that panics on its first report: the request still gets its answer and
/// the later reports, over a transport that routes and over one that does not.
#[tokio::test]
async fn a_panicking_progress_callback_loses_one_report_and_nothing_else() {
    within(async {
        for routing in [true, false] {
            let (client, server) = MemoryTransport::pair();
            let transport: Arc<dyn Transport> = if routing {
                Arc::new(Routing { inner: client, router: OnceLock::new(), through_recv: Arc::default() })
            } else {
                Arc::new(client)
            };
            let mut options = SessionOptions::new("panicky");
            options.request_timeout = Duration::from_secs(5);
            let session = Session::start(transport, Arc::new(Notes(Arc::default())), options);
            let (progress, reports) = counting(|before| assert!(before > 0, "a host bug on the first report"));
            let result = listing_with_progress(&session, &server, progress, 2).await;
            assert!(result.is_ok(), "routing {routing}: {result:?}");
            assert_eq!(reports.load(Ordering::SeqCst), 2, "routing {routing}: both reports reached the callback");
        }
    })
    .await
}
