//! Cancellation over streamable HTTP (2026-07-28: "stdio sends notifications/cancelled; HTTP
//! closes the response stream"): a modern-era request is cancelled by closing its exchange, and
//! nothing is POSTed; a legacy-era request is left to `notifications/cancelled`, its stream open.

use std::time::Duration;

use crate::http_support::*;
use axum::body::{Body, Bytes};
use axum::response::Response;
use futures::StreamExt;
use mcp_protocol::RequestId;
use mcp_transport::{CancelHandling, StreamableHttpTransport, Transport};
use serde_json::{Value, json};
use test_support::within;
use tokio::sync::mpsc;

fn modern_meta() -> Value {
    json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28"})
}

/// Signals when the server drops the response body: the client closed the stream.
struct DropSignal(mpsc::UnboundedSender<()>);

impl Drop for DropSignal {
    fn drop(&mut self) {
        let _ = self.0.send(());
    }
}

/// An SSE reply that sends a priming event, then stays open; `closed` hears when it is dropped.
fn open_stream(closed: mpsc::UnboundedSender<()>) -> Response {
    let signal = DropSignal(closed);
    let body = futures::stream::once(async { Ok::<_, std::io::Error>(Bytes::from("id: e-1\ndata:\n\n")) })
        .chain(futures::stream::pending())
        .map(move |chunk| {
            let _signal = &signal;
            chunk
        });
    Response::builder().status(200).header("content-type", "text/event-stream").body(Body::from_stream(body)).unwrap()
}

#[tokio::test]
async fn a_modern_request_is_cancelled_by_closing_its_response_stream() {
    within(async {
        let (closed_tx, mut closed) = mpsc::unbounded_channel();
        let server = Server::start(move |req| match req.rpc_method() {
            Some("tools/call") => open_stream(closed_tx.clone()),
            _ => status(202),
        })
        .await;
        let t = StreamableHttpTransport::new(config(&server.url("/mcp"))).unwrap();
        t.send(request(1, "tools/call", json!({"name": "slow", "_meta": modern_meta()}))).await.unwrap();
        assert!(closed.try_recv().is_err(), "the stream is open");

        assert_eq!(t.cancel_request(&RequestId::Number(1)), CancelHandling::Handled);
        tokio::time::timeout(Duration::from_secs(2), closed.recv())
            .await
            .expect("the server saw the response stream closed")
            .unwrap();
        // The request is gone: no failure is reported for it, and nothing else was sent.
        no_event(&t, 200).await;
        assert_eq!(server.posts(), ["POST tools/call"]);
        assert!(server.gets().is_empty(), "a cancelled stream is not resumed");
        assert_eq!(t.cancel_request(&RequestId::Number(1)), CancelHandling::NotHandled, "no longer in flight");
    })
    .await;
}

#[tokio::test]
async fn a_legacy_request_is_not_cancelled_by_the_transport() {
    within(async {
        let server = Server::start(|req| match req.rpc_method() {
            Some("tools/call") => sse_response(
                &[],
                vec![
                    event(Some("e-1"), ""),
                    Step::Sleep(Duration::from_millis(200)),
                    json_event(Some("e-2"), &result_for(req, json!({"content": []}))),
                ],
            ),
            _ => status(202),
        })
        .await;
        let t = StreamableHttpTransport::new(config(&server.url("/mcp"))).unwrap();
        t.send(request(2, "tools/call", json!({"name": "slow"}))).await.unwrap();
        assert_eq!(t.cancel_request(&RequestId::Number(2)), CancelHandling::NotHandled);
        // The stream stays open: closing it would be a disconnection, not a cancellation.
        assert_eq!(response_id(&next_message(&t).await), RequestId::Number(2));
        assert_eq!(server.posts(), ["POST tools/call"]);
    })
    .await;
}

#[tokio::test]
async fn a_modern_request_that_was_answered_is_no_longer_in_flight() {
    within(async {
        let server = Server::start(|req| json_response(200, &[], &result_for(req, json!({"content": []})))).await;
        let t = StreamableHttpTransport::new(config(&server.url("/mcp"))).unwrap();
        t.send(request(3, "tools/call", json!({"name": "fast", "_meta": modern_meta()}))).await.unwrap();
        assert_eq!(response_id(&next_message(&t).await), RequestId::Number(3));
        // The exchange ends right after delivering the answer, and its entry with it.
        no_event(&t, 100).await;
        assert_eq!(t.cancel_request(&RequestId::Number(3)), CancelHandling::NotHandled);
    })
    .await;
}
