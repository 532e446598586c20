//! The session engine over an in-memory transport, with the test playing the server.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use futures::future::BoxFuture;
use mcp_manager::session::{InboundHandler, NoHandler, RequestOptions, Session, SessionError, SessionOptions};
use mcp_protocol::messages::{ServerNotification, ServerRequest};
use mcp_protocol::types::common::PaginatedParams;
use mcp_protocol::types::tools::{CallTool, CallToolParams, ListTools, ListToolsResult, Tool};
use mcp_protocol::{ErrorCode, ErrorObject, Message, RawJson, RequestId, Response};
use mcp_transport::{MemoryTransport, Transport, TransportEvent};
use serde_json::{Value, json};
use test_support::{within, within_for};

fn start(handler: Arc<dyn InboundHandler>, timeout: Duration) -> (Session, MemoryTransport) {
    let (client, server) = MemoryTransport::pair();
    let mut options = SessionOptions::new("fake");
    options.request_timeout = timeout;
    (Session::start(Arc::new(client), handler, options), server)
}

async fn next_message(server: &MemoryTransport) -> Message {
    match server.recv().await {
        TransportEvent::Message(m) => m,
        other => panic!("expected a message, got {other:?}"),
    }
}

fn reply(id: &RequestId, result: Value) -> Message {
    Message::Response(Response::result(id.clone(), mcp_protocol::to_raw(&result).unwrap()))
}

#[tokio::test]
async fn typed_request_gets_typed_result() {
    within(async {
        let (session, server) = start(Arc::new(NoHandler), Duration::from_secs(5));
        let call = tokio::spawn({
            let session = session.clone();
            async move { session.request::<ListTools>(&PaginatedParams::default(), RequestOptions::default()).await }
        });
        let Message::Request(req) = next_message(&server).await else { panic!("expected a request") };
        assert_eq!(req.method, "tools/list");
        server
            .send(reply(&req.id, json!({"tools": [{"name": "echo", "inputSchema": {"type": "object"}}]})))
            .await
            .unwrap();
        let result: ListToolsResult = call.await.unwrap().unwrap();
        assert_eq!(
            result.tools,
            vec![Tool {
                name: "echo".into(),
                input_schema: json!({"type": "object"}).as_object().unwrap().clone().into(),
                ..Default::default()
            }]
        );
    })
    .await
}

#[tokio::test]
async fn peer_error_is_kept_apart() {
    within(async {
        let (session, server) = start(Arc::new(NoHandler), Duration::from_secs(5));
        let call = tokio::spawn({
            let session = session.clone();
            async move { session.request::<ListTools>(&PaginatedParams::default(), RequestOptions::default()).await }
        });
        let Message::Request(req) = next_message(&server).await else { panic!() };
        let error = ErrorObject::new(ErrorCode::METHOD_NOT_FOUND, "nope");
        server.send(Message::Response(Response::error(Some(req.id), error.clone()))).await.unwrap();
        let err = call.await.unwrap().unwrap_err();
        assert_eq!(err.rpc_error(), Some(&error));
        assert!(err.to_string().contains("\"fake\"") && err.to_string().contains("tools/list"), "{err}");
    })
    .await
}

#[tokio::test(start_paused = true)]
async fn timeout_sends_cancelled_and_ignores_the_late_answer() {
    // Paused time: a hang ends at this virtual limit, at once.
    within_for(Duration::from_secs(7_200), async {
        let (session, server) = start(Arc::new(NoHandler), Duration::from_millis(200));
        let err =
            session.request::<ListTools>(&PaginatedParams::default(), RequestOptions::default()).await.unwrap_err();
        assert!(err.is_timeout(), "{err}");
        assert!(err.to_string().contains("timed out after"), "{err}");
        let Message::Request(req) = next_message(&server).await else { panic!() };
        let Message::Notification(n) = next_message(&server).await else { panic!("expected notifications/cancelled") };
        assert_eq!(n.method, "notifications/cancelled");
        let params: Value = serde_json::from_str(n.params.unwrap().get()).unwrap();
        assert_eq!(params["requestId"], serde_json::to_value(&req.id).unwrap());
        // The late answer is ignored and the session still works.
        server.send(reply(&req.id, json!({"tools": []}))).await.unwrap();
        let call = tokio::spawn({
            let session = session.clone();
            async move { session.request::<ListTools>(&PaginatedParams::default(), RequestOptions::default()).await }
        });
        let Message::Request(req2) = next_message(&server).await else { panic!() };
        assert_ne!(req2.id, req.id, "ids are never reused");
        server.send(reply(&req2.id, json!({"tools": []}))).await.unwrap();
        assert!(call.await.unwrap().unwrap().tools.is_empty());
    })
    .await
}

#[tokio::test(start_paused = true)]
async fn progress_extends_the_deadline_up_to_the_cap() {
    // Paused time: a hang ends at this virtual limit, at once.
    within_for(Duration::from_secs(7_200), async {
        let (client, server) = MemoryTransport::pair();
        let mut options = SessionOptions::new("fake");
        options.request_timeout = Duration::from_secs(1);
        options.max_request_timeout = Duration::from_secs(5);
        let session = Session::start(Arc::new(client), Arc::new(NoHandler), options);
        let seen = Arc::new(AtomicUsize::new(0));
        let progress = {
            let seen = seen.clone();
            Arc::new(move |_p| {
                seen.fetch_add(1, Ordering::SeqCst);
            })
        };
        let call = tokio::spawn({
            let session = session.clone();
            async move {
                session
                    .request::<ListTools>(
                        &PaginatedParams::default(),
                        RequestOptions { timeout: None, progress: Some(progress) },
                    )
                    .await
            }
        });
        let Message::Request(req) = next_message(&server).await else { panic!() };
        let params: Value = serde_json::from_str(req.params.as_ref().unwrap().get()).unwrap();
        let token = params["_meta"]["progressToken"].clone();
        assert_eq!(token, serde_json::to_value(&req.id).unwrap(), "the token is the request id");
        // Progress every 800 ms keeps a 1 s timeout alive past 1 s, but not past the 5 s cap.
        for i in 0..10 {
            tokio::time::sleep(Duration::from_millis(800)).await;
            let note =
                Message::notification("notifications/progress", Some(&json!({"progressToken": token, "progress": i})));
            if server.send(note.unwrap()).await.is_err() {
                break;
            }
            if call.is_finished() {
                break;
            }
        }
        let err = call.await.unwrap().unwrap_err();
        assert!(err.is_timeout(), "{err}");
        let n = seen.load(Ordering::SeqCst);
        assert!((5..=7).contains(&n), "progress callbacks: {n}");
    })
    .await
}

#[tokio::test]
async fn transport_end_fails_every_pending_request_at_once() {
    within(async {
        let (session, server) = start(Arc::new(NoHandler), Duration::from_secs(30));
        let calls: Vec<_> = (0..3)
            .map(|_| {
                let session = session.clone();
                tokio::spawn(async move {
                    session.request::<ListTools>(&PaginatedParams::default(), RequestOptions::default()).await
                })
            })
            .collect();
        for _ in 0..3 {
            next_message(&server).await;
        }
        server.close().await;
        drop(server);
        for c in calls {
            let err = c.await.unwrap().unwrap_err();
            assert!(err.is_closed(), "{err}");
        }
        assert!(session.close_reason().is_some());
        let err =
            session.request::<ListTools>(&PaginatedParams::default(), RequestOptions::default()).await.unwrap_err();
        assert!(err.is_closed(), "a closed session fails at once: {err}");
    })
    .await
}

#[tokio::test]
async fn dropped_request_future_sends_cancelled() {
    within(async {
        let (session, server) = start(Arc::new(NoHandler), Duration::from_secs(30));
        let call = tokio::spawn({
            let session = session.clone();
            async move { session.request::<ListTools>(&PaginatedParams::default(), RequestOptions::default()).await }
        });
        let Message::Request(req) = next_message(&server).await else { panic!() };
        call.abort();
        let Message::Notification(n) = next_message(&server).await else { panic!("expected cancelled") };
        assert_eq!(n.method, "notifications/cancelled");
        let params: Value = serde_json::from_str(n.params.unwrap().get()).unwrap();
        assert_eq!(params["requestId"], serde_json::to_value(&req.id).unwrap());
        assert_eq!(params["reason"], "request cancelled by the client");
    })
    .await
}

struct Recorder {
    notes: tokio::sync::mpsc::UnboundedSender<String>,
}

impl InboundHandler for Recorder {
    fn handle_request(&self, request: ServerRequest) -> BoxFuture<'static, Result<RawJson, ErrorObject>> {
        Box::pin(async move {
            match request {
                ServerRequest::ListRoots(_) => Ok(mcp_protocol::to_raw(&json!({"roots": []})).unwrap()),
                ServerRequest::Elicit(_) => Err(ErrorObject::new(ErrorCode::INTERNAL_ERROR, "user went away")),
                other => Err(ErrorObject::new(ErrorCode::METHOD_NOT_FOUND, other.method().to_owned())),
            }
        })
    }

    fn handle_notification(&self, notification: ServerNotification) -> BoxFuture<'static, ()> {
        let _ = self.notes.send(notification.method().to_owned());
        Box::pin(async {})
    }
}

#[tokio::test]
async fn server_requests_are_answered_and_notifications_arrive_in_order() {
    within(async {
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let (_session, server) = start(Arc::new(Recorder { notes: tx }), Duration::from_secs(5));
        let requests = [
            (1, "ping", json!({})),
            (2, "roots/list", json!({})),
            (
                3,
                "elicitation/create",
                json!({"message": "name?", "requestedSchema": {"type": "object", "properties": {}}}),
            ),
            (4, "foo/bar", json!({})),
            (5, "sampling/createMessage", json!({"messages": "not a list", "maxTokens": 3})),
        ];
        for (id, method, params) in &requests {
            server.send(Message::request(RequestId::Number(*id), *method, Some(params)).unwrap()).await.unwrap();
        }
        let mut answers = std::collections::BTreeMap::new();
        for _ in 0..requests.len() {
            let Message::Response(r) = next_message(&server).await else { panic!("expected a response") };
            let key = match r.id.clone().unwrap() {
                RequestId::Number(n) => n,
                other => panic!("unexpected id {other}"),
            };
            answers.insert(key, r.into_result());
        }
        assert_eq!(answers[&1].as_ref().unwrap().get(), "{}");
        assert_eq!(answers[&2].as_ref().unwrap().get(), r#"{"roots":[]}"#);
        assert_eq!(answers[&3].as_ref().unwrap_err().message, "user went away");
        assert_eq!(answers[&4].as_ref().unwrap_err().code, ErrorCode::METHOD_NOT_FOUND);
        assert_eq!(answers[&5].as_ref().unwrap_err().code, ErrorCode::INVALID_PARAMS);

        for method in ["notifications/message", "notifications/tools/list_changed", "notifications/progress", "x/y"] {
            let params = match method {
                "notifications/message" => json!({"level": "info", "data": "hi"}),
                "notifications/progress" => json!({"progressToken": 99, "progress": 1}),
                _ => json!({}),
            };
            server.send(Message::notification(method, Some(&params)).unwrap()).await.unwrap();
        }
        let mut got = Vec::new();
        for _ in 0..4 {
            got.push(rx.recv().await.unwrap());
        }
        assert_eq!(got, ["notifications/message", "notifications/tools/list_changed", "notifications/progress", "x/y"]);
    })
    .await
}

#[tokio::test]
async fn errors_say_which_server() {
    within(async {
        let (session, server) = start(Arc::new(NoHandler), Duration::from_secs(5));
        drop(server);
        let err: SessionError =
            session.request::<ListTools>(&PaginatedParams::default(), RequestOptions::default()).await.unwrap_err();
        assert!(err.to_string().starts_with("server \"fake\""), "{err}");
    })
    .await
}

#[tokio::test]
async fn dropping_the_last_session_clone_releases_the_transport() {
    within(async {
        let (session, server) = start(Arc::new(NoHandler), Duration::from_secs(5));
        let clone = session.clone();
        drop(session);
        server.send(Message::request(RequestId::Number(1), "ping", Some(&json!({}))).unwrap()).await.unwrap();
        let Message::Response(_) = next_message(&server).await else { panic!("a clone keeps the session alive") };
        drop(clone);
        // The reader held the client end; with the last clone gone, the end is dropped.
        assert!(matches!(server.recv().await, TransportEvent::Closed(mcp_transport::CloseReason::PeerClosed)));
    })
    .await
}

/// A transport whose `send` never completes (an HTTP server that holds back its headers).
struct StuckSend;

impl Transport for StuckSend {
    fn send(&self, _: Message) -> BoxFuture<'_, Result<(), mcp_transport::TransportError>> {
        Box::pin(futures::future::pending())
    }
    fn recv(&self) -> BoxFuture<'_, TransportEvent> {
        Box::pin(futures::future::pending())
    }
    fn close(&self) -> BoxFuture<'_, ()> {
        Box::pin(async {})
    }
    fn kind(&self) -> mcp_transport::TransportKind {
        mcp_transport::TransportKind::Custom
    }
}

#[tokio::test(start_paused = true)]
async fn a_send_that_never_completes_is_bounded_by_the_deadline() {
    // Paused time: a hang ends at this virtual limit, at once.
    within_for(Duration::from_secs(7_200), async {
        let mut options = SessionOptions::new("stuck");
        options.request_timeout = Duration::from_secs(2);
        let session = Session::start(Arc::new(StuckSend), Arc::new(NoHandler), options);
        let err =
            session.request::<ListTools>(&PaginatedParams::default(), RequestOptions::default()).await.unwrap_err();
        assert!(err.is_timeout(), "{err}");
    })
    .await
}

/// A request without a deadline (the modern `subscriptions/listen`): its id is known before it
/// is sent, no timeout or hard cap ends it, and the transport's end does.
#[tokio::test(start_paused = true)]
async fn an_unbounded_request_has_no_deadline_but_ends_with_the_transport() {
    // Paused time: a hang ends at this virtual limit, at once.
    within_for(Duration::from_secs(7_200), async {
        let (session, server) = start(Arc::new(NoHandler), Duration::from_secs(1));
        let (id, answer) = session.request_unbounded::<ListTools>(&PaginatedParams::default());
        let call = tokio::spawn(answer);
        let Message::Request(req) = next_message(&server).await else { panic!("expected a request") };
        assert_eq!(req.id, id, "the id handed out is the one sent");
        tokio::time::sleep(Duration::from_secs(3600)).await;
        assert!(!call.is_finished(), "past the timeout and the 10 min hard cap, still waiting");
        server.close().await;
        let err = call.await.unwrap().unwrap_err();
        assert!(err.is_closed(), "{err}");
        let (_, late) = session.request_unbounded::<ListTools>(&PaginatedParams::default());
        assert!(late.await.unwrap_err().is_closed(), "a closed session refuses a new one");
    })
    .await
}

/// Every request in flight holds its future (a host with a thousand calls in flight holds a
/// thousand), so each of the request's layers (the typed request, its encoding and the wait for
/// the answer in the request's span) holds its arguments once. As `async fn`s, which hold theirs
/// as given and again as moved into the body, they made a `tools/call` request's future 1,368
/// bytes in a debug build; as `async` blocks 1,104, 944 with the span's layer a map of the wait
/// rather than an `async` block of its own, and 792 since the session's one timer keeps the
/// deadlines (the wait no longer races a timer of its own).
#[tokio::test]
async fn a_requests_future_holds_the_arguments_of_each_layer_once() {
    within(async {
        let (session, _server) = start(Arc::new(NoHandler), Duration::from_secs(5));
        let params = CallToolParams { name: "echo".into(), ..Default::default() };
        let future = session.request::<CallTool>(&params, RequestOptions::default());
        let size = std::mem::size_of_val(&future);
        println!("tools/call request future: {size} bytes");
        assert!(size <= 820, "{size} bytes: a layer of the request holds its arguments twice");
    })
    .await;
}

/// The session keeps one timer over all its deadlines: a request with a shorter timeout than
/// those already waiting still times out at its own deadline, and the others keep theirs.
#[tokio::test(start_paused = true)]
async fn a_shorter_deadline_after_a_longer_one_fires_at_its_own_time() {
    within_for(Duration::from_secs(120), async {
        let (session, server) = start(Arc::new(NoHandler), Duration::from_secs(30));
        let long = tokio::spawn({
            let session = session.clone();
            async move { session.request::<ListTools>(&PaginatedParams::default(), RequestOptions::default()).await }
        });
        let Message::Request(long_req) = next_message(&server).await else { panic!("expected a request") };
        let started = tokio::time::Instant::now();
        let short = RequestOptions { timeout: Some(Duration::from_secs(1)), progress: None };
        let err = session.request::<ListTools>(&PaginatedParams::default(), short).await.unwrap_err();
        assert!(err.is_timeout(), "{err}");
        let waited = started.elapsed();
        assert!(
            waited >= Duration::from_secs(1) && waited < Duration::from_millis(1_100),
            "the 1 s request failed after {waited:?}"
        );
        let Message::Request(_) = next_message(&server).await else { panic!("expected the second request") };
        let Message::Notification(n) = next_message(&server).await else { panic!("expected its cancellation") };
        assert_eq!(n.method, "notifications/cancelled");
        assert!(!long.is_finished(), "the 30 s request is still waiting");
        server.send(reply(&long_req.id, json!({"tools": []}))).await.unwrap();
        assert!(long.await.unwrap().unwrap().tools.is_empty());
    })
    .await
}

/// A request whose deadline comes after the one the session's timer was set for (that of a
/// request answered meanwhile) times out at its own deadline, neither at the earlier one nor
/// never.
#[tokio::test(start_paused = true)]
async fn a_deadline_after_an_answered_requests_fires_at_its_own_time() {
    within_for(Duration::from_secs(120), async {
        let (session, server) = start(Arc::new(NoHandler), Duration::from_secs(1));
        let first = tokio::spawn({
            let session = session.clone();
            async move { session.request::<ListTools>(&PaginatedParams::default(), RequestOptions::default()).await }
        });
        let Message::Request(first_req) = next_message(&server).await else { panic!("expected a request") };
        tokio::time::sleep(Duration::from_millis(400)).await;
        let second = tokio::spawn({
            let session = session.clone();
            async move {
                let started = tokio::time::Instant::now();
                let answer = session.request::<ListTools>(&PaginatedParams::default(), RequestOptions::default()).await;
                (answer, started.elapsed())
            }
        });
        let Message::Request(_) = next_message(&server).await else { panic!("expected the second request") };
        server.send(reply(&first_req.id, json!({"tools": []}))).await.unwrap();
        assert!(first.await.unwrap().unwrap().tools.is_empty());
        let (answer, waited) = second.await.unwrap();
        assert!(answer.unwrap_err().is_timeout());
        assert!(
            waited >= Duration::from_secs(1) && waited < Duration::from_millis(1_100),
            "the second request failed after {waited:?}"
        );
    })
    .await
}
