//! Session expiry: the server forgets the session (404 in the Python SDK's shape, 400 in the
//! TypeScript SDK's), the transport re-initializes once by itself and retries the request; the
//! session above sees only its own messages. A second refusal fails the request.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use crate::http_support::*;
use mcp_protocol::RequestId;
use mcp_transport::{StreamableHttpTransport, Transport};
use serde_json::{Value, json};
use test_support::within;

#[derive(Clone, Copy)]
enum Forget {
    /// 404 `Session not found` (Python SDK).
    NotFound,
    /// 400 `Bad Request: No valid session ID provided` (TypeScript SDK).
    BadRequest,
}

/// A server that numbers its sessions `s-1`, `s-2`, ... and, once `forget` is set, refuses every
/// request carrying an old session id. With `forget_forever`, it refuses tools/list every time.
struct Forgetful {
    sessions: AtomicUsize,
    forget: AtomicBool,
    forget_forever: bool,
    shape: Forget,
}

impl Forgetful {
    fn answer(&self, req: &Req) -> axum::response::Response {
        let current = format!("s-{}", self.sessions.load(Ordering::SeqCst));
        let sent = req.header("mcp-session-id");
        let stale = sent.is_some() && (sent.as_deref() != Some(current.as_str()) || self.forget.load(Ordering::SeqCst));
        let refuse_always = self.forget_forever && req.rpc_method() == Some("tools/list");
        if req.rpc_method() != Some("initialize") && (stale || refuse_always) {
            return match self.shape {
                Forget::NotFound => json_response(
                    404,
                    &[],
                    &json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32600, "message": "Session not found"}}),
                ),
                Forget::BadRequest => json_response(
                    400,
                    &[],
                    &json!({"jsonrpc": "2.0", "error": {"code": -32000, "message": "Bad Request: No valid session ID provided"}}),
                ),
            };
        }
        match (req.method.as_str(), req.rpc_method()) {
            ("POST", Some("initialize")) => {
                let n = self.sessions.fetch_add(1, Ordering::SeqCst) + 1;
                self.forget.store(false, Ordering::SeqCst);
                let id = format!("s-{n}");
                let body = result_for(req, initialize_result("2025-03-26"));
                // Replies as an SSE stream with a priming event, like server-everything.
                sse_response(
                    &[("mcp-session-id", id.as_str())],
                    vec![event(Some("p"), ""), json_event(Some("r"), &body)],
                )
            }
            ("POST", Some("tools/list")) => {
                json_response(200, &[], &result_for(req, json!({"tools": [], "session": sent})))
            }
            ("POST", _) => status(202),
            ("GET", _) => status(405),
            _ => status(200),
        }
    }
}

async fn expire_and_retry(shape: Forget) {
    let state = Arc::new(Forgetful {
        sessions: AtomicUsize::new(0),
        forget: AtomicBool::new(false),
        forget_forever: false,
        shape,
    });
    let script = state.clone();
    let server = Server::start(move |req| script.answer(req)).await;
    let t = StreamableHttpTransport::new(config(&server.url("/mcp"))).unwrap();

    t.send(initialize(1)).await.unwrap();
    assert_eq!(response_id(&next_message(&t).await), RequestId::Number(1));
    t.send(notification("notifications/initialized")).await.unwrap();
    assert_eq!(t.session_id().as_deref(), Some("s-1"));

    state.forget.store(true, Ordering::SeqCst);
    t.send(request(2, "tools/list", json!({}))).await.unwrap();
    let answer = next_message(&t).await;
    assert_eq!(response_id(&answer), RequestId::Number(2));
    let mcp_protocol::Message::Response(r) = answer else { unreachable!() };
    let result: Value = serde_json::from_str(r.into_result().unwrap().get()).unwrap();
    assert_eq!(result["session"], "s-2", "the retry carried the new session id");
    assert_eq!(t.session_id().as_deref(), Some("s-2"));
    // Nothing of the internal re-initialization reached recv.
    no_event(&t, 300).await;

    assert_eq!(
        server.posts(),
        [
            "POST initialize",
            "POST notifications/initialized",
            "POST tools/list",
            "POST initialize",
            "POST notifications/initialized",
            "POST tools/list",
        ]
    );
    let log: Vec<Req> = server.log().into_iter().filter(|r| r.method == "POST").collect();
    assert_eq!(log[0].body.as_ref().unwrap()["params"], log[3].body.as_ref().unwrap()["params"], "initialize replayed");
    assert!(log[3].rpc_id().unwrap().is_string(), "the replay uses an internal id");
    assert_eq!(log[3].header("mcp-session-id"), None);
    assert_eq!(log[4].header("mcp-session-id").as_deref(), Some("s-2"));
    assert_eq!(log[4].header("mcp-protocol-version").as_deref(), Some("2025-03-26"));
    assert_eq!(log[5].header("mcp-session-id").as_deref(), Some("s-2"));
}

#[tokio::test]
async fn expired_session_404_is_reinitialized_once_and_the_request_retried() {
    within(expire_and_retry(Forget::NotFound)).await;
}

#[tokio::test]
async fn expired_session_400_is_reinitialized_once_and_the_request_retried() {
    within(expire_and_retry(Forget::BadRequest)).await;
}

#[tokio::test]
async fn a_second_404_fails_the_request() {
    within(async {
        let state = Arc::new(Forgetful {
            sessions: AtomicUsize::new(0),
            forget: AtomicBool::new(false),
            forget_forever: true,
            shape: Forget::NotFound,
        });
        let script = state.clone();
        let server = Server::start(move |req| script.answer(req)).await;
        let t = StreamableHttpTransport::new(config(&server.url("/mcp"))).unwrap();
        t.send(initialize(1)).await.unwrap();
        next_message(&t).await;
        t.send(notification("notifications/initialized")).await.unwrap();

        t.send(request(2, "tools/list", json!({}))).await.unwrap();
        let error = next_failure(&t, 2).await;
        assert!(error.contains("404") && error.contains("after re-initializing"), "{error}");
        assert!(error.contains("Session not found"), "{error}");
        let initializes = server.posts().iter().filter(|p| *p == "POST initialize").count();
        assert_eq!(initializes, 2, "re-initialized exactly once");
        no_event(&t, 200).await;
    })
    .await;
}

#[tokio::test]
async fn a_404_without_a_session_is_an_error_and_an_error_answer_is_delivered() {
    within(async {
        // A stateless (modern-style) server answers an unknown method with HTTP 404 and a
        // JSON-RPC error carrying the id: that is the answer, not an expired session.
        let server = Server::start(|req| match req.rpc_method() {
            Some("foo/bar") => json_response(
                404,
                &[],
                &json!({"jsonrpc": "2.0", "id": req.rpc_id().unwrap(), "error": {"code": -32601, "message": "Method not found"}}),
            ),
            _ => text_response(404, "text/plain", &[], "no such endpoint"),
        })
        .await;
        let t = StreamableHttpTransport::new(config(&server.url("/mcp"))).unwrap();
        t.send(request(1, "foo/bar", json!({}))).await.unwrap();
        let answer = next_message(&t).await;
        let mcp_protocol::Message::Response(r) = answer else { panic!() };
        assert_eq!(r.into_result().unwrap_err().code, mcp_protocol::ErrorCode::METHOD_NOT_FOUND);
        t.send(request(2, "tools/list", json!({}))).await.unwrap();
        let error = next_failure(&t, 2).await;
        assert!(error.contains("404") && error.contains("no such endpoint"), "{error}");
        assert_eq!(server.posts().len(), 2, "no re-initialization without a session");
    })
    .await;
}

#[tokio::test]
async fn a_failed_reinitialization_fails_the_request() {
    within(async {
        let initializes = Arc::new(AtomicUsize::new(0));
        let count = initializes.clone();
        let server = Server::start(move |req| match (req.method.as_str(), req.rpc_method()) {
            ("POST", Some("initialize")) if count.fetch_add(1, Ordering::SeqCst) == 0 => {
                json_response(200, &[("mcp-session-id", "s-1")], &result_for(req, initialize_result("2025-11-25")))
            }
            ("POST", Some("initialize")) => text_response(503, "text/plain", &[], "restarting"),
            ("POST", Some("tools/list")) => status(404),
            ("POST", _) => status(202),
            _ => status(405),
        })
        .await;
        let t = StreamableHttpTransport::new(config(&server.url("/mcp"))).unwrap();
        t.send(initialize(1)).await.unwrap();
        next_message(&t).await;
        t.send(request(2, "tools/list", json!({}))).await.unwrap();
        let error = next_failure(&t, 2).await;
        assert!(
            error.contains("tools/list (request 2)") && error.contains("503") && error.contains("restarting"),
            "{error}"
        );
        assert_eq!(initializes.load(Ordering::SeqCst), 2);
        no_event(&t, 200).await;
    })
    .await;
}
