//! The legacy HTTP+SSE transport (2024-11-05) against an in-process server shaped like
//! server-everything's `sse` mode: `GET /sse`, an `endpoint` event with a relative URI, POSTs
//! answered `202 Accepted`, responses on the stream.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::http_support::*;
use axum::body::{Body, Bytes};
use axum::response::Response;
use mcp_protocol::RequestId;
use mcp_transport::{
    CloseReason, Secret, SseConfig, SseTransport, Transport, TransportError, TransportEvent, TransportKind,
};
use serde_json::json;
use test_support::within;
use tokio::sync::mpsc;

type Stream = Arc<Mutex<Option<mpsc::UnboundedSender<String>>>>;

/// An SSE response fed by a channel; the first event announces `endpoint`.
fn open_stream(stream: &Stream, endpoint: Option<&str>) -> Response {
    let (tx, rx) = mpsc::unbounded_channel::<String>();
    if let Some(endpoint) = endpoint {
        tx.send(format!("event: endpoint\ndata: {endpoint}\n\n")).unwrap();
    }
    *stream.lock().unwrap() = Some(tx);
    let body = futures::stream::unfold(rx, |mut rx| async move {
        let text = rx.recv().await?;
        Some((Ok::<_, std::io::Error>(Bytes::from(text)), rx))
    });
    Response::builder().status(200).header("content-type", "text/event-stream").body(Body::from_stream(body)).unwrap()
}

/// A legacy server: answers requests on the stream, 202 to every POST on `/message`.
async fn legacy_server(endpoint: impl Fn(&Server) -> String + Send + Sync + 'static) -> (Server, Stream) {
    let stream: Stream = Arc::default();
    let script_stream = stream.clone();
    let me: Arc<Mutex<Option<Server>>> = Arc::default();
    let me2 = me.clone();
    let server = Server::start(move |req| match (req.method.as_str(), req.uri.path()) {
        ("GET", "/sse") => {
            let server = me2.lock().unwrap().clone().unwrap();
            open_stream(&script_stream, Some(&endpoint(&server)))
        }
        ("POST", "/message") => {
            if let Some(id) = req.rpc_id() {
                let result = match req.rpc_method() {
                    Some("initialize") => initialize_result("2024-11-05"),
                    _ => json!({"tools": []}),
                };
                let answer = json!({"jsonrpc": "2.0", "id": id, "result": result});
                if let Some(tx) = script_stream.lock().unwrap().as_ref() {
                    let _ = tx.send(format!("event: message\ndata: {answer}\n\n"));
                }
            }
            text_response(202, "text/plain", &[], "Accepted")
        }
        _ => status(404),
    })
    .await;
    *me.lock().unwrap() = Some(server.clone());
    (server, stream)
}

#[tokio::test]
async fn relative_endpoint_works_end_to_end() {
    within(async {
        let (server, stream) = legacy_server(|_| "/message?sessionId=abc".to_owned()).await;
        let mut config = SseConfig::new("legacy", server.url("/sse"));
        config.bearer_token = Some(Secret::new("tok"));
        config.headers = vec![("Authorization".into(), "Basic x".into())];
        let t = SseTransport::connect(config).await.unwrap();
        assert_eq!(t.kind(), TransportKind::Sse);
        assert_eq!(t.endpoint().as_str(), server.url("/message?sessionId=abc"));

        t.send(initialize(1)).await.unwrap();
        assert_eq!(response_id(&next_message(&t).await), RequestId::Number(1));
        t.send(notification("notifications/initialized")).await.unwrap();
        // Server-initiated messages arrive on the stream too; `{}` placeholders are skipped.
        let tx = stream.lock().unwrap().clone().unwrap();
        tx.send("data: {}\n\n".into()).unwrap();
        tx.send(format!("data: {}\n\n", json!({"jsonrpc": "2.0", "id": 0, "method": "roots/list"}))).unwrap();
        assert_eq!(next_message(&t).await.method(), Some("roots/list"));
        t.send(request(2, "tools/list", json!({}))).await.unwrap();
        assert_eq!(response_id(&next_message(&t).await), RequestId::Number(2));

        let posts: Vec<Req> = server.log().into_iter().filter(|r| r.method == "POST").collect();
        assert_eq!(posts.len(), 3);
        assert!(posts.iter().all(|p| p.uri.query() == Some("sessionId=abc")));
        assert!(posts.iter().all(|p| p.header_values("authorization") == ["Bearer tok"]));
        assert_eq!(posts[0].header("mcp-protocol-version"), None);
        assert_eq!(posts[2].header("mcp-protocol-version").as_deref(), Some("2024-11-05"));
        assert_eq!(server.log()[0].header("accept").as_deref(), Some("text/event-stream"));

        t.close().await;
        t.close().await;
        assert!(matches!(next_event(&t).await, TransportEvent::Closed(CloseReason::Closed)));
        assert!(matches!(t.send(request(3, "ping", json!({}))).await, Err(TransportError::Closed(_))));
    })
    .await;
}

#[tokio::test]
async fn a_cross_origin_endpoint_is_refused() {
    within(async {
        let (server, _) = legacy_server(|s| format!("http://localhost:{}/message?sessionId=abc", s.addr.port())).await;
        let e = SseTransport::connect(SseConfig::new("legacy", server.url("/sse"))).await.unwrap_err().to_string();
        assert!(e.contains("same origin"), "{e}");
        assert!(e.contains(&format!("http://localhost:{}/message", server.addr.port())), "names the endpoint: {e}");
        assert!(e.contains(&server.url("/sse")), "names the configured URL: {e}");
        assert!(!e.contains("abc") && e.contains("sessionId=redacted"), "query values are not shown: {e}");
    })
    .await;
}

#[tokio::test]
async fn a_stream_without_endpoint_event_times_out() {
    within(async {
        let stream: Stream = Arc::default();
        let s2 = stream.clone();
        let server = Server::start(move |_| open_stream(&s2, None)).await;
        let mut config = SseConfig::new("legacy", server.url("/sse"));
        config.endpoint_timeout = Duration::from_millis(300);
        let e = SseTransport::connect(config).await.unwrap_err().to_string();
        assert!(e.contains("no endpoint event"), "{e}");
    })
    .await;
}

#[tokio::test]
async fn the_largest_timeouts_from_code_do_not_panic() {
    // `Instant + Duration::MAX` overflows: every timeout must saturate instead.
    within(async {
        let (server, _stream) = legacy_server(|_| "/message".to_owned()).await;
        let mut config = SseConfig::new("legacy", server.url("/sse"));
        config.endpoint_timeout = Duration::MAX;
        config.post_timeout = Duration::MAX;
        config.read_timeout = Some(Duration::MAX);
        let t = SseTransport::connect(config).await.unwrap();
        t.send(initialize(1)).await.unwrap();
        assert_eq!(response_id(&next_message(&t).await), RequestId::Number(1));
        t.close().await;
    })
    .await;
}

#[tokio::test]
async fn a_refused_stream_is_an_error_with_status() {
    within(async {
        let server = Server::start(|_| text_response(401, "text/plain", &[], "unauthorized")).await;
        let e = SseTransport::connect(SseConfig::new("legacy", server.url("/sse"))).await.unwrap_err();
        assert_eq!(e.http_status(), Some(401), "{e:?}");
        let e = e.to_string();
        assert_eq!(e, "opening the SSE stream: HTTP 401 Unauthorized: unauthorized");
    })
    .await;
}

#[tokio::test]
async fn the_server_ending_the_stream_ends_the_transport_after_queued_messages() {
    within(async {
        let (server, stream) = legacy_server(|_| "/message".to_owned()).await;
        let t = SseTransport::connect(SseConfig::new("legacy", server.url("/sse"))).await.unwrap();
        t.send(initialize(1)).await.unwrap();
        // Wait until the answer is on the stream, then end the stream.
        server.wait_for(|log| log.len() >= 2).await;
        tokio::time::sleep(Duration::from_millis(50)).await;
        stream.lock().unwrap().take();
        assert_eq!(response_id(&next_message(&t).await), RequestId::Number(1));
        assert!(matches!(next_event(&t).await, TransportEvent::Closed(CloseReason::PeerClosed)));
        assert!(matches!(next_event(&t).await, TransportEvent::Closed(CloseReason::PeerClosed)));
        assert!(t.send(request(2, "ping", json!({}))).await.is_err());
    })
    .await;
}

#[tokio::test]
async fn a_failed_post_fails_its_request() {
    within(async {
        let stream: Stream = Arc::default();
        let s2 = stream.clone();
        let server = Server::start(move |req| match req.method.as_str() {
            "GET" => open_stream(&s2, Some("/message")),
            _ => text_response(500, "text/plain", &[], "boom"),
        })
        .await;
        let t = SseTransport::connect(SseConfig::new("legacy", server.url("/sse"))).await.unwrap();
        t.send(request(1, "tools/list", json!({}))).await.unwrap();
        let error = next_failure_error(&t, 1).await;
        assert_eq!(error.http_status(), Some(500), "{error:?}");
        let error = error.to_string();
        assert!(error.contains("500") && error.contains("boom"), "{error}");
        let error = t.send(notification("notifications/initialized")).await.unwrap_err();
        assert_eq!(error.http_status(), Some(500), "{error:?}");
    })
    .await;
}
