//! Failures fail the request that caused them, with a useful message, and nothing hangs:
//! oversize bodies and events, HTTP error statuses, bodies that are not JSON-RPC, broken and
//! silent connections.

use std::time::Duration;

use crate::http_support::*;
use mcp_transport::{StreamableHttpTransport, Transport, TransportError};
use serde_json::json;
use test_support::within;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

fn big_result(req: &Req) -> serde_json::Value {
    result_for(req, json!({"content": [{"type": "text", "text": "x".repeat(4096)}]}))
}

#[tokio::test]
async fn an_oversize_json_body_fails_the_request_naming_the_limit() {
    within(async {
        let server = Server::start(|req| json_response(200, &[], &big_result(req))).await;
        let mut config = config(&server.url("/mcp"));
        config.max_body_bytes = 1024;
        let t = StreamableHttpTransport::new(config).unwrap();
        t.send(request(1, "tools/call", json!({}))).await.unwrap();
        let error = next_failure(&t, 1).await;
        assert!(error.contains("1024"), "{error}");
    })
    .await;
}

#[tokio::test]
async fn an_oversize_sse_event_fails_the_request_naming_the_limit() {
    within(async {
        let server = Server::start(|req| {
            let small =
                json!({"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "ok"}});
            sse_response(&[], vec![json_event(None, &small), json_event(None, &big_result(req))])
        })
        .await;
        let mut config = config(&server.url("/mcp"));
        config.max_body_bytes = 1024;
        let t = StreamableHttpTransport::new(config).unwrap();
        t.send(request(1, "tools/call", json!({}))).await.unwrap();
        assert_eq!(next_message(&t).await.method(), Some("notifications/message"));
        let error = next_failure(&t, 1).await;
        assert!(error.contains("1024"), "{error}");
    })
    .await;
}

#[tokio::test]
async fn a_huge_sse_event_is_cut_off_while_it_streams() {
    within(async {
        // 64 MiB of data in one event, never terminated: the transport must stop reading early.
        let server = Server::start(|_| {
            let mut steps = vec![Step::Send("data: ".into())];
            steps.extend((0..1024).map(|_| Step::Send("y".repeat(64 * 1024))));
            steps.push(Step::Hang);
            sse_response(&[], steps)
        })
        .await;
        let mut config = config(&server.url("/mcp"));
        config.max_body_bytes = 64 * 1024;
        let t = StreamableHttpTransport::new(config).unwrap();
        t.send(request(1, "tools/call", json!({}))).await.unwrap();
        let error = next_failure(&t, 1).await;
        assert!(error.contains("65536"), "{error}");
    })
    .await;
}

#[tokio::test]
async fn a_500_with_html_fails_the_request_with_status_and_excerpt() {
    within(async {
        let html = format!("<html><h1>Internal Server Error</h1>{}</html>", "<p>detail</p>".repeat(500));
        let server = Server::start(move |_| text_response(500, "text/html", &[], &html)).await;
        let t = StreamableHttpTransport::new(config(&server.url("/mcp"))).unwrap();
        t.send(request(4, "tools/list", json!({}))).await.unwrap();
        let failure = next_failure_error(&t, 4).await;
        assert_eq!(failure.http_status(), Some(500), "{failure:?}");
        let TransportError::Http { body_excerpt, context, .. } = &failure else { panic!("{failure:?}") };
        assert_eq!(context, "tools/list (request 4)");
        assert!(body_excerpt.starts_with("<html><h1>Internal Server Error</h1>") && body_excerpt.ends_with('…'));
        let error = failure.to_string();
        assert!(error.starts_with("tools/list (request 4): HTTP 500 Internal Server Error: <html>"), "{error}");
        assert!(error.contains("500") && error.contains("<h1>Internal Server Error</h1>"), "{error}");
        assert!(error.len() < 1400, "only the first KiB of the body is quoted ({} bytes)", error.len());
    })
    .await;
}

#[tokio::test]
async fn a_refused_notification_is_an_error_of_send() {
    within(async {
        let server = Server::start(|_| text_response(503, "text/plain", &[], "overloaded")).await;
        let t = StreamableHttpTransport::new(config(&server.url("/mcp"))).unwrap();
        let error = t.send(notification("notifications/initialized")).await.unwrap_err();
        assert_eq!(error.http_status(), Some(503), "{error:?}");
        let error = error.to_string();
        assert!(error.contains("503") && error.contains("overloaded"), "{error}");
    })
    .await;
}

#[tokio::test]
async fn a_reply_that_is_not_json_rpc_fails_the_request() {
    within(async {
        let server = Server::start(|req| match req.rpc_id() {
            Some(id) if id == 1 => text_response(200, "text/plain", &[], "hello"),
            // A JSON-RPC answer, but said to be a web page.
            Some(id) if id == 3 => text_response(200, "text/html", &[], r#"{"jsonrpc":"2.0","id":3,"result":{}}"#),
            _ => json_response(200, &[], &json!({"unexpected": true})),
        })
        .await;
        let t = StreamableHttpTransport::new(config(&server.url("/mcp"))).unwrap();
        t.send(request(1, "ping", json!({}))).await.unwrap();
        let error = next_failure(&t, 1).await;
        assert!(error.contains("not JSON-RPC") && error.contains("hello"), "{error}");
        t.send(request(2, "ping", json!({}))).await.unwrap();
        let error = next_failure(&t, 2).await;
        assert!(error.contains("unexpected"), "{error}");
        t.send(request(3, "ping", json!({}))).await.unwrap();
        let error = next_failure(&t, 3).await;
        assert!(error.contains("not JSON-RPC") && error.contains("\"text/html\""), "{error}");
    })
    .await;
}

#[tokio::test]
async fn a_connection_reset_mid_stream_fails_the_request() {
    within(async {
        let server = Server::start(|_| {
            let note = json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": 1, "progress": 1}});
            sse_response(&[], vec![json_event(None, &note), Step::Sleep(Duration::from_millis(50)), Step::Reset])
        })
        .await;
        let t = StreamableHttpTransport::new(config(&server.url("/mcp"))).unwrap();
        t.send(request(1, "tools/call", json!({}))).await.unwrap();
        assert_eq!(next_message(&t).await.method(), Some("notifications/progress"));
        let error = next_failure(&t, 1).await;
        assert!(error.contains("broke") && error.contains("no event id"), "{error}");
    })
    .await;
}

#[tokio::test]
async fn a_connection_closed_before_the_reply_fails_the_request() {
    within(async {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move {
            while let Ok((mut socket, _)) = listener.accept().await {
                let mut buf = [0u8; 4096];
                let _ = socket.read(&mut buf).await;
                let _ = socket.write_all(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n").await;
                // Dropped half-way through the headers.
            }
        });
        let t = StreamableHttpTransport::new(config(&format!("http://{addr}/mcp"))).unwrap();
        t.send(request(1, "tools/list", json!({}))).await.unwrap();
        let error = next_failure(&t, 1).await;
        assert!(error.contains("HTTP request failed"), "{error}");
        // Nothing listens any more on this port: the next request fails too, promptly.
        let t = StreamableHttpTransport::new(config("http://127.0.0.1:9/mcp")).unwrap();
        t.send(request(2, "tools/list", json!({}))).await.unwrap();
        next_failure(&t, 2).await;
    })
    .await;
}

#[tokio::test]
async fn a_silent_stream_fails_after_the_read_timeout() {
    within(async {
        let server = Server::start(|_| sse_response(&[], vec![Step::Hang])).await;
        let mut config = config(&server.url("/mcp"));
        config.read_timeout = Duration::from_millis(300);
        let t = StreamableHttpTransport::new(config).unwrap();
        t.send(request(1, "tools/call", json!({}))).await.unwrap();
        let error = next_failure(&t, 1).await;
        assert!(error.contains("no data for"), "{error}");
    })
    .await;
}

#[tokio::test]
async fn dropping_the_transport_releases_its_streams() {
    within(async {
        let server = Server::start(|_| sse_response(&[], vec![Step::Hang])).await;
        let t = StreamableHttpTransport::new(config(&server.url("/mcp"))).unwrap();
        t.send(request(1, "tools/call", json!({}))).await.unwrap();
        drop(t);
        // The hanging reply's task was aborted; a fresh transport still works.
        let t = StreamableHttpTransport::new(config(&server.url("/mcp"))).unwrap();
        t.close().await;
        assert!(matches!(t.send(request(2, "ping", json!({}))).await, Err(TransportError::Closed(_))));
    })
    .await;
}
