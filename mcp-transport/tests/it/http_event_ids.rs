//! SSE event ids are peer input: an id longer than the limit (1 KiB) is neither remembered nor
//! sent back as `Last-Event-ID`; the stream just cannot be resumed from it.

use crate::http_support::*;
use mcp_protocol::RequestId;
use mcp_transport::{StreamableHttpTransport, Transport};
use serde_json::json;
use test_support::within;

fn progress(n: u32) -> serde_json::Value {
    json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": 1, "progress": n}})
}

#[tokio::test]
async fn a_huge_event_id_is_not_sent_back() {
    within(async {
        let huge = "i".repeat(2 * 1024 * 1024);
        let server = Server::start(move |req| match req.method.as_str() {
            "POST" => sse_response(
                &[],
                vec![
                    json_event(Some("ev-1"), &progress(1)),
                    json_event(Some(&huge), &progress(2)),
                    // The stream breaks before the response.
                ],
            ),
            _ => sse_response(&[], vec![json_event(None, &json!({"jsonrpc": "2.0", "id": 5, "result": {}}))]),
        })
        .await;
        let t = StreamableHttpTransport::new(config(&server.url("/mcp"))).unwrap();
        t.send(request(5, "tools/call", json!({"name": "slow"}))).await.unwrap();
        assert_eq!(next_message(&t).await.method(), Some("notifications/progress"));
        assert_eq!(next_message(&t).await.method(), Some("notifications/progress"));
        let error = next_failure(&t, 5).await;
        assert!(error.contains("no event id to resume from"), "{error}");
        assert!(error.len() < 4096, "the error does not quote the id: {} bytes", error.len());
        let gets = server.gets();
        assert!(gets.iter().all(|g| g.headers.get("last-event-id").is_none()), "{} GETs resumed", gets.len());
        no_event(&t, 200).await;
    })
    .await;
}

#[tokio::test]
async fn an_id_at_the_limit_is_still_used() {
    within(async {
        let long = "l".repeat(1024);
        let expected = long.clone();
        let server = Server::start(move |req| match req.method.as_str() {
            "POST" => sse_response(&[], vec![json_event(Some(&long), &progress(1))]),
            _ if req.header("last-event-id").as_deref() == Some(expected.as_str()) => {
                sse_response(&[], vec![json_event(Some("ev-2"), &json!({"jsonrpc": "2.0", "id": 5, "result": {}}))])
            }
            _ => status(400),
        })
        .await;
        let t = StreamableHttpTransport::new(config(&server.url("/mcp"))).unwrap();
        t.send(request(5, "tools/call", json!({"name": "slow"}))).await.unwrap();
        assert_eq!(next_message(&t).await.method(), Some("notifications/progress"));
        assert_eq!(response_id(&next_message(&t).await), RequestId::Number(5));
        assert_eq!(server.gets().len(), 1);
    })
    .await;
}
