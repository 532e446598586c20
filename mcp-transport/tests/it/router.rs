//! `Transport::set_router` on the stdio and streamable HTTP transports: the router sees every
//! decoded message first, in arrival order, what it takes never reaches `recv`, what it gives
//! back does (in order), a second router is refused, and a router that panics loses only the
//! message it was given.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::http_support::*;
use mcp_protocol::{Message, RequestId};
use mcp_transport::{MessageRouter, StdioTransport, StreamableHttpTransport, Transport, TransportEvent};
use serde_json::json;
use test_support::stdio::sh;
use test_support::within;

/// A router that takes the messages `take` picks (recording their ids, in order) and gives back
/// the others; the ids of everything it saw, in order.
fn recording(take: impl Fn(&Message) -> bool + Send + Sync + 'static) -> (MessageRouter, Arc<Mutex<Vec<String>>>) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    let router: MessageRouter = Arc::new(move |message: Message| {
        let id = match &message {
            Message::Request(r) => format!("request {}", r.id),
            Message::Response(r) => format!("response {}", r.id.as_ref().map_or("-".into(), ToString::to_string)),
            Message::Notification(n) => format!("notification {}", n.method),
        };
        log.lock().unwrap().push(id);
        if take(&message) { None } else { Some(message) }
    });
    (router, seen)
}

fn ping(id: i64) -> Message {
    Message::request::<()>(RequestId::Number(id), "ping", None).unwrap()
}

fn even(message: &Message) -> bool {
    matches!(message, Message::Request(r) if matches!(r.id, RequestId::Number(n) if n % 2 == 0))
}

/// The ids of the next `n` requests `recv` yields.
async fn received(transport: &dyn Transport, n: usize) -> Vec<RequestId> {
    let mut ids = Vec::new();
    while ids.len() < n {
        match transport.recv().await {
            TransportEvent::Message(Message::Request(r)) => ids.push(r.id),
            other => panic!("expected an echoed request, got {other:?}"),
        }
    }
    ids
}

#[tokio::test]
async fn a_stdio_router_takes_what_it_picks_and_recv_gets_the_rest_in_order() {
    within(async {
        // `cat` echoes every line: the requests sent come back as the server's messages.
        let transport = StdioTransport::spawn(sh("echo", "exec cat", &[])).unwrap();
        let (router, seen) = recording(even);
        assert!(transport.set_router(router));
        assert!(!transport.set_router(Arc::new(|_| None)), "a second router is refused");
        for id in 1..=6 {
            transport.send(ping(id)).await.unwrap();
        }
        let ids = received(&transport, 3).await;
        assert_eq!(ids, [RequestId::Number(1), RequestId::Number(3), RequestId::Number(5)]);
        let wanted: Vec<String> = (1..=6).map(|id| format!("request {id}")).collect();
        assert_eq!(*seen.lock().unwrap(), wanted, "the router saw every message, in order");
        let nothing = tokio::time::timeout(Duration::from_millis(100), transport.recv()).await;
        assert!(nothing.is_err(), "what the router took never reaches recv: {nothing:?}");
        transport.close().await;
    })
    .await
}

#[tokio::test]
async fn a_stdio_router_that_panics_loses_one_message_and_the_transport_goes_on() {
    within(async {
        let transport = StdioTransport::spawn(sh("echo", "exec cat", &[])).unwrap();
        let router: MessageRouter = Arc::new(|message: Message| {
            assert!(!even(&message), "a router bug");
            Some(message)
        });
        assert!(transport.set_router(router));
        for id in 1..=5 {
            transport.send(ping(id)).await.unwrap();
        }
        let ids = received(&transport, 3).await;
        assert_eq!(ids, [RequestId::Number(1), RequestId::Number(3), RequestId::Number(5)]);
        transport.close().await;
    })
    .await
}

/// A server whose `tools/call` answers on an SSE stream: a progress notification, then the
/// response.
fn progress_then_answer(req: &Req) -> axum::response::Response {
    match (req.method.as_str(), req.rpc_method()) {
        ("POST", Some("initialize")) => {
            json_response(200, &[("mcp-session-id", "s-9")], &result_for(req, initialize_result("2025-06-18")))
        }
        ("POST", Some("tools/call")) => {
            let progress = json!({"jsonrpc": "2.0", "method": "notifications/progress",
                "params": {"progressToken": "p", "progress": 1}});
            sse_response(
                &[],
                vec![json_event(None, &progress), json_event(None, &result_for(req, json!({"content": []})))],
            )
        }
        ("POST", _) => status(202),
        ("GET", _) => status(405),
        ("DELETE", _) => status(200),
        _ => status(400),
    }
}

#[tokio::test]
async fn a_streamable_http_router_sees_a_stream_in_order_and_the_transport_still_reads_what_it_takes() {
    within(async {
        let server = Server::start(progress_then_answer).await;
        let t = StreamableHttpTransport::new(config(&server.url("/mcp"))).unwrap();
        let (router, seen) = recording(|m| matches!(m, Message::Response(_)));
        assert!(t.set_router(router));
        t.send(initialize(1)).await.unwrap();
        server.wait_for(|log| !log.is_empty()).await;
        // The answer to `initialize` went to the router, and the transport still learnt the
        // session and the revision from it.
        tokio::time::timeout(Duration::from_secs(5), async {
            while t.protocol_version().is_none() {
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        })
        .await
        .expect("the revision of the routed answer");
        assert_eq!(t.protocol_version().as_deref(), Some("2025-06-18"));
        assert_eq!(t.session_id().as_deref(), Some("s-9"));
        t.send(notification("notifications/initialized")).await.unwrap();
        t.send(request(2, "tools/call", json!({"name": "x"}))).await.unwrap();
        // The notification the router gave back comes through recv; the answer does not.
        match next_message(&t).await {
            Message::Notification(n) => assert_eq!(n.method, "notifications/progress"),
            other => panic!("expected the progress notification, got {other:?}"),
        }
        no_event(&t, 200).await;
        assert_eq!(
            *seen.lock().unwrap(),
            ["response 1", "notification notifications/progress", "response 2"],
            "the router saw the stream's messages in order"
        );
        t.close().await;
    })
    .await;
}
