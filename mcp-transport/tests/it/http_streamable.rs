//! Streamable HTTP against in-process servers: JSON and SSE replies, 202 for notifications,
//! session and protocol-version headers, the optional GET stream, DELETE on close, bearer auth.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::http_support::*;
use mcp_protocol::{Message, RequestId};
use mcp_transport::{Secret, StreamableHttpTransport, Transport, TransportError, TransportEvent, TransportKind};
use serde_json::json;
use test_support::within;

/// A server in the style of the Python SDK with JSON replies: session `s-1`, revision
/// 2025-06-18, 202 for notifications and responses, 405 for GET, 200 for DELETE.
fn json_server(req: &Req) -> axum::response::Response {
    match (req.method.as_str(), req.rpc_method()) {
        ("POST", Some("initialize")) => {
            json_response(200, &[("mcp-session-id", "s-1")], &result_for(req, initialize_result("2025-06-18")))
        }
        ("POST", Some("tools/list")) => json_response(200, &[], &result_for(req, json!({"tools": []}))),
        ("POST", _) if req.rpc_id().is_none() || req.rpc_method().is_none() => status(202),
        ("GET", _) => status(405),
        ("DELETE", _) => status(200),
        _ => status(400),
    }
}

#[tokio::test]
async fn json_reply_and_session_headers() {
    within(async {
        let server = Server::start(json_server).await;
        let t = StreamableHttpTransport::new(config(&server.url("/mcp"))).unwrap();
        assert_eq!(t.kind(), TransportKind::StreamableHttp);

        t.send(initialize(1)).await.unwrap();
        assert_eq!(response_id(&next_message(&t).await), RequestId::Number(1));
        assert_eq!(t.session_id().as_deref(), Some("s-1"));
        assert_eq!(t.protocol_version().as_deref(), Some("2025-06-18"));
        t.send(notification("notifications/initialized")).await.unwrap();
        t.send(request(2, "tools/list", json!({}))).await.unwrap();
        assert_eq!(response_id(&next_message(&t).await), RequestId::Number(2));

        let log = server.log();
        let init = &log[0];
        assert_eq!(init.header("accept").as_deref(), Some("application/json, text/event-stream"));
        assert_eq!(init.header("content-type").as_deref(), Some("application/json"));
        assert_eq!(init.header("mcp-session-id"), None, "initialize starts a session");
        assert_eq!(init.header("mcp-protocol-version"), None);
        let list = log.iter().find(|r| r.rpc_method() == Some("tools/list")).unwrap();
        assert_eq!(list.header_values("mcp-session-id"), ["s-1"]);
        assert_eq!(list.header_values("mcp-protocol-version"), ["2025-06-18"]);
        assert_eq!(list.header("accept").as_deref(), Some("application/json, text/event-stream"));
    })
    .await;
}

#[tokio::test]
async fn notifications_get_202_and_a_405_get_stream_is_no_error() {
    within(async {
        let server = Server::start(json_server).await;
        let t = StreamableHttpTransport::new(config(&server.url("/mcp"))).unwrap();
        t.send(initialize(1)).await.unwrap();
        next_message(&t).await;
        // send() returns once the server accepted the notification.
        t.send(notification("notifications/initialized")).await.unwrap();
        assert_eq!(server.posts(), ["POST initialize", "POST notifications/initialized"]);
        // After initialization the transport opens the GET stream; 405 means there is none.
        server.wait_for(|log| log.iter().any(|r| r.method == "GET")).await;
        let get = &server.gets()[0];
        assert_eq!(get.header("accept").as_deref(), Some("text/event-stream"));
        assert_eq!(get.header("mcp-session-id").as_deref(), Some("s-1"));
        no_event(&t, 300).await;
        assert_eq!(server.gets().len(), 1, "a 405 GET stream is not retried");
        // The transport still works.
        t.send(Message::notification::<()>("notifications/roots/list_changed", None).unwrap()).await.unwrap();
        t.send(request(2, "tools/list", json!({}))).await.unwrap();
        assert_eq!(response_id(&next_message(&t).await), RequestId::Number(2));
    })
    .await;
}

#[tokio::test]
async fn sse_reply_carries_server_requests_and_notifications_before_the_response() {
    within(async {
        let server = Server::start(|req| match (req.method.as_str(), req.rpc_method()) {
            ("POST", Some("tools/call")) => {
                let id = req.rpc_id().unwrap();
                sse_response(
                    &[],
                    vec![
                        event(Some("e-0"), ""),
                        json_event(
                            Some("e-1"),
                            &json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": 1, "progress": 1}}),
                        ),
                        json_event(Some("e-2"), &json!({"jsonrpc": "2.0", "id": "srv-1", "method": "roots/list"})),
                        event(Some("e-3"), "{}"),
                        event(None, "not json"),
                        json_event(
                            Some("e-4"),
                            &json!({"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "x"}}),
                        ),
                        json_event(Some("e-5"), &json!({"jsonrpc": "2.0", "id": id, "result": {"content": []}})),
                    ],
                )
            }
            ("POST", None) => status(202),
            _ => status(405),
        })
        .await;
        let t = StreamableHttpTransport::new(config(&server.url("/mcp"))).unwrap();
        t.send(request(7, "tools/call", json!({"name": "x"}))).await.unwrap();
        let mut seen = Vec::new();
        for _ in 0..4 {
            let m = next_message(&t).await;
            seen.push(m.method().map(str::to_owned).unwrap_or_else(|| format!("response {}", response_id(&m))));
        }
        assert_eq!(seen, ["notifications/progress", "roots/list", "notifications/message", "response 7"]);
        // The answer to the server's request is POSTed and accepted with 202.
        let answer = Message::response(RequestId::String("srv-1".into()), &json!({"roots": []})).unwrap();
        t.send(answer).await.unwrap();
        assert_eq!(server.posts().last().unwrap(), "POST response");
        no_event(&t, 200).await;
    })
    .await;
}

#[tokio::test]
async fn close_deletes_the_session_once_and_ends_the_transport() {
    within(async {
        let server = Server::start(json_server).await;
        let t = StreamableHttpTransport::new(config(&server.url("/mcp"))).unwrap();
        t.send(initialize(1)).await.unwrap();
        next_message(&t).await;
        t.close().await;
        t.close().await;
        let deletes: Vec<_> = server.log().into_iter().filter(|r| r.method == "DELETE").collect();
        assert_eq!(deletes.len(), 1);
        assert_eq!(deletes[0].header("mcp-session-id").as_deref(), Some("s-1"));
        assert_eq!(deletes[0].header("mcp-protocol-version").as_deref(), Some("2025-06-18"));
        assert!(matches!(next_event(&t).await, TransportEvent::Closed(_)));
        assert!(matches!(next_event(&t).await, TransportEvent::Closed(_)));
        assert!(matches!(t.send(request(2, "tools/list", json!({}))).await, Err(TransportError::Closed(_))));
    })
    .await;
}

#[tokio::test]
async fn close_accepts_405_for_delete() {
    within(async {
        let deletes = Arc::new(AtomicUsize::new(0));
        let counter = deletes.clone();
        let server = Server::start(move |req| {
            if req.method == "DELETE" {
                counter.fetch_add(1, Ordering::SeqCst);
                return status(405);
            }
            json_server(req)
        })
        .await;
        let t = StreamableHttpTransport::new(config(&server.url("/mcp"))).unwrap();
        t.send(initialize(1)).await.unwrap();
        next_message(&t).await;
        t.close().await;
        assert_eq!(deletes.load(Ordering::SeqCst), 1);
        assert!(matches!(next_event(&t).await, TransportEvent::Closed(_)));
    })
    .await;
}

#[tokio::test]
async fn bearer_replaces_a_configured_authorization_header() {
    within(async {
        let server = Server::start(json_server).await;
        let mut config = config(&server.url("/mcp"));
        config.headers = vec![("AuThOrIzAtIoN".into(), "Basic old".into()), ("X-Tenant".into(), "acme".into())];
        config.bearer_token = Some(Secret::new("tok-123"));
        let shown = format!("{config:?}");
        assert!(!shown.contains("tok-123") && !shown.contains("Basic old"), "{shown}");
        let t = StreamableHttpTransport::new(config).unwrap();
        t.send(initialize(1)).await.unwrap();
        next_message(&t).await;
        let init = &server.log()[0];
        assert_eq!(init.header_values("authorization"), ["Bearer tok-123"]);
        assert_eq!(init.header_values("x-tenant"), ["acme"]);
    })
    .await;
}

#[tokio::test]
async fn invalid_configs_are_refused() {
    assert!(StreamableHttpTransport::new(config("not a url")).is_err());
    assert!(StreamableHttpTransport::new(config("file:///tmp/x")).is_err());
    let mut bad = config("http://127.0.0.1:1/mcp");
    bad.headers = vec![("bad header".into(), "v".into())];
    let e = StreamableHttpTransport::new(bad).unwrap_err().to_string();
    assert!(e.contains("bad header"), "{e}");
}

#[tokio::test]
async fn modern_requests_carry_their_revision_method_and_name_headers() {
    within(async {
        let server = Server::start(|req| json_response(200, &[], &result_for(req, json!({"content": []})))).await;
        let t = StreamableHttpTransport::new(config(&server.url("/mcp"))).unwrap();
        let meta = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28"});
        t.send(request(1, "tools/call", json!({"name": "add", "arguments": {}, "_meta": meta}))).await.unwrap();
        next_message(&t).await;
        let call = &server.log()[0];
        assert_eq!(call.header_values("mcp-protocol-version"), ["2026-07-28"]);
        assert_eq!(call.header_values("mcp-method"), ["tools/call"]);
        assert_eq!(call.header_values("mcp-name"), ["add"]);
        assert_eq!(call.header("mcp-session-id"), None);
    })
    .await;
}

#[tokio::test]
async fn event_ids_repeated_across_fresh_streams_are_still_delivered() {
    within(async {
        // A server numbering events per stream breaks the uniqueness rule; only resumed streams
        // drop ids seen before, so nothing is lost here.
        let server =
            Server::start(|req| sse_response(&[], vec![json_event(Some("1"), &result_for(req, json!({})))])).await;
        let t = StreamableHttpTransport::new(config(&server.url("/mcp"))).unwrap();
        for id in [1, 2] {
            t.send(request(id, "ping", json!({}))).await.unwrap();
            assert_eq!(response_id(&next_message(&t).await), RequestId::Number(id));
        }
    })
    .await;
}
