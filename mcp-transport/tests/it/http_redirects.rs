//! Redirects: the HTTP transports follow them only within the origin of the request. A 307 to
//! another origin would resend the custom headers (`X-Api-Key`), the session id and the
//! JSON-RPC body there; it fails the request instead, and the other origin receives nothing.

use std::time::Duration;

use crate::http_support::*;
use axum::response::Response;
use mcp_transport::{SseConfig, SseTransport, StreamableHttpTransport, Transport};
use serde_json::json;
use test_support::within;

/// A 307 to `location`.
fn redirect(location: &str) -> Response {
    text_response(307, "text/plain", &[("location", location)], "moved")
}

/// The origin that must receive nothing: it answers like a good server, and records requests.
async fn other_origin() -> Server {
    Server::start(|req| match req.method.as_str() {
        "POST" if req.rpc_method() == Some("initialize") => {
            json_response(200, &[], &result_for(req, initialize_result("2025-06-18")))
        }
        "GET" => sse_response(&[], vec![Step::Send("event: endpoint\ndata: /message\n\n".into()), Step::Hang]),
        _ => status(202),
    })
    .await
}

#[tokio::test]
async fn streamable_http_refuses_a_redirect_to_another_origin() {
    within(async {
        let elsewhere = other_origin().await;
        let target = elsewhere.url("/mcp");
        let server = Server::start(move |_| redirect(&target)).await;
        let mut config = config(&server.url("/mcp"));
        config.headers.push(("X-Api-Key".into(), "key-that-must-not-leak".into()));
        let transport = StreamableHttpTransport::new(config).unwrap();
        transport.send(initialize(0)).await.unwrap();
        let error = next_failure(&transport, 0).await;
        assert!(error.contains("refused a redirect") && error.contains("same origin"), "{error}");
        assert!(error.contains(&elsewhere.addr.to_string()), "the error names where it led: {error}");
        assert_eq!(server.log().len(), 1, "the first origin got the request");
        tokio::time::sleep(Duration::from_millis(200)).await;
        assert!(elsewhere.log().is_empty(), "the other origin got {:?}", elsewhere.log());
        transport.close().await;
    })
    .await
}

#[tokio::test]
async fn streamable_http_follows_a_redirect_within_its_origin() {
    within(async {
        let server = Server::start(|req| match req.uri.path() {
            "/old" => redirect("/mcp"),
            _ => json_response(200, &[], &result_for(req, initialize_result("2025-06-18"))),
        })
        .await;
        let transport = StreamableHttpTransport::new(config(&server.url("/old"))).unwrap();
        transport.send(initialize(0)).await.unwrap();
        let answer = next_message(&transport).await;
        assert_eq!(response_id(&answer), mcp_protocol::RequestId::Number(0));
        let paths: Vec<String> = server.log().iter().map(|r| r.uri.path().to_owned()).collect();
        assert_eq!(paths, ["/old", "/mcp"]);
        let moved = &server.log()[1];
        assert_eq!(moved.rpc_method(), Some("initialize"), "a 307 resends the body");
        transport.close().await;
    })
    .await
}

#[tokio::test]
async fn sse_refuses_a_redirected_stream_to_another_origin() {
    within(async {
        let elsewhere = other_origin().await;
        let target = elsewhere.url("/sse");
        let server = Server::start(move |_| redirect(&target)).await;
        let mut config = SseConfig::new("legacy", server.url("/sse"));
        config.headers.push(("X-Api-Key".into(), "key-that-must-not-leak".into()));
        let error = SseTransport::connect(config).await.unwrap_err().to_string();
        assert!(error.contains("refused a redirect") && error.contains("same origin"), "{error}");
        tokio::time::sleep(Duration::from_millis(200)).await;
        assert!(elsewhere.log().is_empty(), "the other origin got {:?}", elsewhere.log());
    })
    .await
}

#[tokio::test]
async fn sse_posts_are_not_redirected_past_the_endpoint_check() {
    within(async {
        let elsewhere = other_origin().await;
        let target = elsewhere.url("/message");
        let server = Server::start(move |req| match (req.method.as_str(), req.uri.path()) {
            ("GET", "/sse") => {
                sse_response(&[], vec![Step::Send("event: endpoint\ndata: /message\n\n".into()), Step::Hang])
            }
            _ => redirect(&target),
        })
        .await;
        let mut config = SseConfig::new("legacy", server.url("/sse"));
        config.headers.push(("X-Api-Key".into(), "key-that-must-not-leak".into()));
        let transport = SseTransport::connect(config).await.unwrap();
        transport.send(initialize(0)).await.unwrap();
        let error = next_failure(&transport, 0).await;
        assert!(error.contains("refused a redirect"), "{error}");
        let notification = mcp_protocol::Message::notification("notifications/message", Some(&json!({}))).unwrap();
        let error = transport.send(notification).await.unwrap_err().to_string();
        assert!(error.contains("refused a redirect"), "{error}");
        tokio::time::sleep(Duration::from_millis(200)).await;
        assert!(elsewhere.log().is_empty(), "the other origin got {:?}", elsewhere.log());
        transport.close().await;
    })
    .await
}
