//! The standalone GET stream is open when sending `notifications/initialized` returns: servers
//! send their own requests (an elicitation during the first tool call) on it, and the official
//! TypeScript SDK's server drops them while it is not open. Found by the conformance suite's
//! `elicitation-sep1034-client-defaults` scenario, which failed when the first `tools/call` won
//! the race against the GET.

use std::time::{Duration, Instant};

use crate::http_support::*;
use mcp_transport::{StreamableHttpTransport, Transport};
use serde_json::json;
use test_support::within;

fn server(req: &Req) -> axum::response::Response {
    match (req.method.as_str(), req.rpc_method()) {
        ("POST", Some("initialize")) => {
            json_response(200, &[("mcp-session-id", "s-1")], &result_for(req, initialize_result("2025-11-25")))
        }
        ("POST", _) => status(202),
        ("GET", _) => sse_response(&[], vec![Step::Hang]),
        _ => status(405),
    }
}

#[tokio::test]
async fn sending_initialized_returns_once_the_get_stream_was_answered() {
    within(async {
        let server = Server::start(server).await;
        let t = StreamableHttpTransport::new(config(&server.url("/mcp"))).unwrap();
        t.send(initialize(1)).await.unwrap();
        next_message(&t).await;
        t.send(notification("notifications/initialized")).await.unwrap();
        assert_eq!(server.gets().len(), 1, "the GET stream is open before the next request: {:?}", server.posts());
    })
    .await;
}

#[tokio::test]
async fn a_server_without_a_get_stream_costs_one_round_trip() {
    within(async {
        let server = Server::start(|req| match req.method.as_str() {
            "GET" => status(405),
            _ => server(req),
        })
        .await;
        let t = StreamableHttpTransport::new(config(&server.url("/mcp"))).unwrap();
        t.send(initialize(1)).await.unwrap();
        next_message(&t).await;
        let started = Instant::now();
        t.send(notification("notifications/initialized")).await.unwrap();
        assert!(started.elapsed() < Duration::from_secs(1), "took {:?}", started.elapsed());
        assert_eq!(server.gets().len(), 1);
        t.send(request(2, "tools/list", json!({}))).await.unwrap();
    })
    .await;
}
