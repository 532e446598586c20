//! Resumption: a reply stream that ends before its response is resumed with GET and
//! `Last-Event-ID` after the server's `retry`; a stream that never resumes fails its request
//! after a bounded number of attempts; the standalone GET stream reconnects where it left off.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::http_support::*;
use mcp_protocol::RequestId;
use mcp_transport::{StreamableHttpTransport, Transport};
use serde_json::json;
use test_support::within;

fn progress(n: u32) -> serde_json::Value {
    json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": 1, "progress": n}})
}

#[tokio::test]
async fn a_stream_that_ends_after_retry_is_resumed_with_last_event_id() {
    within(async {
        let server = Server::start(|req| match req.method.as_str() {
            "POST" => sse_response(
                &[],
                vec![
                    Step::Send("id: ev-1\nretry: 50\ndata:\n\n".into()),
                    json_event(Some("ev-2"), &progress(1)),
                    // The server ends the stream before the response (SEP-1699 polling).
                ],
            ),
            _ => match req.header("last-event-id").as_deref() {
                Some("ev-2") => sse_response(
                    &[],
                    vec![
                        json_event(Some("ev-3"), &progress(2)),
                        json_event(Some("ev-4"), &json!({"jsonrpc": "2.0", "id": 5, "result": {"content": []}})),
                    ],
                ),
                _ => status(400),
            },
        })
        .await;
        let t = StreamableHttpTransport::new(config(&server.url("/mcp"))).unwrap();
        t.send(request(5, "tools/call", json!({"name": "slow"}))).await.unwrap();
        assert_eq!(next_message(&t).await.method(), Some("notifications/progress"));
        assert_eq!(next_message(&t).await.method(), Some("notifications/progress"));
        assert_eq!(response_id(&next_message(&t).await), RequestId::Number(5));
        let gets = server.gets();
        assert_eq!(gets.len(), 1);
        assert_eq!(gets[0].header_values("last-event-id"), ["ev-2"]);
        assert_eq!(gets[0].header("accept").as_deref(), Some("text/event-stream"));
        no_event(&t, 200).await;
    })
    .await;
}

#[tokio::test]
async fn a_stream_that_never_resumes_fails_after_bounded_retries() {
    within(async {
        let server = Server::start(|req| match req.method.as_str() {
            "POST" => sse_response(&[], vec![Step::Send("id: p-1\nretry: 10\ndata:\n\n".into())]),
            // Every resumption is an empty 200 stream: a failed attempt each time.
            _ => sse_response(&[], vec![]),
        })
        .await;
        let t = StreamableHttpTransport::new(config(&server.url("/mcp"))).unwrap();
        t.send(request(9, "tools/call", json!({"name": "x"}))).await.unwrap();
        let error = next_failure(&t, 9).await;
        assert!(error.contains("gave up resuming") && error.contains("3 attempts"), "{error}");
        let gets = server.gets();
        assert_eq!(gets.len(), 3, "max_retries attempts");
        assert!(gets.iter().all(|g| g.header("last-event-id").as_deref() == Some("p-1")));
    })
    .await;
}

#[tokio::test]
async fn a_stream_whose_resumption_is_refused_fails_at_once() {
    within(async {
        let server = Server::start(|req| match req.method.as_str() {
            "POST" => sse_response(
                &[],
                vec![event(Some("p-1"), ""), Step::Sleep(std::time::Duration::from_millis(50)), Step::Reset],
            ),
            _ => status(405),
        })
        .await;
        let t = StreamableHttpTransport::new(config(&server.url("/mcp"))).unwrap();
        t.send(request(3, "tools/call", json!({"name": "x"}))).await.unwrap();
        let error = next_failure(&t, 3).await;
        assert!(error.contains("405"), "{error}");
        assert_eq!(server.gets().len(), 1);
    })
    .await;
}

#[tokio::test]
async fn the_get_stream_reconnects_with_last_event_id_and_drops_replayed_events() {
    within(async {
        let gets = Arc::new(AtomicUsize::new(0));
        let counter = gets.clone();
        let note = |n: u32| json!({"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": n}});
        let server = Server::start(move |req| match (req.method.as_str(), req.rpc_method()) {
            ("POST", Some("initialize")) => json_response(
                200,
                &[("mcp-session-id", "s-1")],
                &result_for(req, initialize_result("2025-11-25")),
            ),
            ("POST", _) => status(202),
            ("GET", _) => match counter.fetch_add(1, Ordering::SeqCst) {
                0 => sse_response(&[], vec![Step::Send("retry: 10\n\n".into()), json_event(Some("g-1"), &note(1))]),
                // Replays g-1 (as server-everything's event store does), then goes on.
                _ => sse_response(&[], vec![json_event(Some("g-1"), &note(1)), json_event(Some("g-2"), &note(2)), Step::Hang]),
            },
            _ => status(200),
        })
        .await;
        let t = StreamableHttpTransport::new(config(&server.url("/mcp"))).unwrap();
        t.send(initialize(1)).await.unwrap();
        next_message(&t).await;
        t.send(notification("notifications/initialized")).await.unwrap();
        for n in [1, 2] {
            let m = next_message(&t).await;
            let mcp_protocol::Message::Notification(note) = m else { panic!("{m:?}") };
            let params: serde_json::Value = serde_json::from_str(note.params.unwrap().get()).unwrap();
            assert_eq!(params["data"], n);
        }
        no_event(&t, 200).await;
        let log = server.gets();
        assert_eq!(log.len(), 2);
        assert_eq!(log[0].header("last-event-id"), None);
        assert_eq!(log[1].header_values("last-event-id"), ["g-1"]);
        assert_eq!(log[1].header("mcp-session-id").as_deref(), Some("s-1"));
        t.close().await;
    })
    .await;
}
