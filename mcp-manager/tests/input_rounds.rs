//! Multi round-trip requests (2026-07-28) against scripted in-memory servers: input requests
//! with envelope members, rounds that bring no input requests ("still working"), the call's
//! deadline across rounds, and input requests the host cannot answer.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::future::BoxFuture;
use mcp_manager::callbacks::{ElicitationHandler, HostCallbacks, SamplingHandler};
use mcp_manager::connection::{
    ConnectionError, ConnectionOptions, McpConnection, STILL_WAITING_FIRST_PAUSE, STILL_WAITING_MAX_PAUSE,
    single_use_factory,
};
use mcp_manager::{RequestOptions, SessionError};
use mcp_protocol::types::elicitation::{ElicitParams, ElicitResult};
use mcp_protocol::types::mrtr::Outcome;
use mcp_protocol::types::sampling::{CreateMessageParams, CreateMessageResult};
use mcp_protocol::{ErrorCode, ErrorObject};
use mcp_transport::MemoryTransport;
use serde_json::{Value, json};
use tokio::time::Instant;

use test_support::{ScriptedServer, within};

fn discover_result() -> Value {
    json!({
        "supportedVersions": ["2026-07-28"],
        "capabilities": {"tools": {}},
        "resultType": "complete",
        "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "mrtr-fake", "version": "1.0"}}
    })
}

fn connection(client: MemoryTransport, options: ConnectionOptions) -> McpConnection {
    McpConnection::new(single_use_factory(Arc::new(client)), options)
}

/// Answers every form with a name, or declines when built with `decline`.
struct Asker {
    decline: bool,
}

impl ElicitationHandler for Asker {
    fn elicit(&self, _server: &str, params: ElicitParams) -> BoxFuture<'static, Result<ElicitResult, ErrorObject>> {
        let decline = self.decline;
        Box::pin(async move {
            if decline {
                return Ok(ElicitResult::decline());
            }
            let asked = params.message().unwrap_or_default().to_owned();
            Ok(ElicitResult::accept(json!({"name": format!("answer to {asked}")}).as_object().cloned().unwrap()))
        })
    }
}

/// A sampling handler whose user refuses every request.
struct Refuser;

impl SamplingHandler for Refuser {
    fn create_message(
        &self,
        _server: &str,
        _params: CreateMessageParams,
    ) -> BoxFuture<'static, Result<CreateMessageResult, ErrorObject>> {
        Box::pin(async { Err(ErrorObject::new(ErrorCode::from(-1), "the user refused the sampling request")) })
    }
}

fn options_with(name: &str, callbacks: HostCallbacks) -> ConnectionOptions {
    let mut options = ConnectionOptions::new(name);
    options.callbacks = callbacks;
    options
}

fn tool_calls(seen: &ScriptedServer) -> Vec<Value> {
    seen.requests().iter().filter(|(r, _)| r.method == "tools/call").map(|(_, p)| p.clone()).collect()
}

/// A server that writes the JSON-RPC envelope into its input request (the schema allows it):
/// the request is answered, and the retry completes. It asks again while the answer is missing.
#[tokio::test]
async fn an_input_request_with_a_jsonrpc_member_is_answered() {
    within(async {
        let (client, server) = MemoryTransport::pair();
        let seen = ScriptedServer::start(server, |req, params| {
            Some(Ok(match req.method.as_str() {
                "server/discover" => discover_result(),
                "tools/call" => match params["inputResponses"]["who"]["content"]["name"].as_str() {
                    Some(name) => json!({"content": [{"type": "text", "text": name}], "resultType": "complete"}),
                    None => json!({
                        "resultType": "input_required",
                        "inputRequests": {"who": {"jsonrpc": "2.0", "method": "elicitation/create", "params": {
                            "message": "name?", "mode": "form",
                            "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}}}}},
                        "requestState": "st"
                    }),
                },
                _ => return None,
            }))
        });
        let callbacks = HostCallbacks { elicitation: Some(Arc::new(Asker { decline: false })), ..Default::default() };
        let conn = connection(client, options_with("envelope", callbacks));
        conn.connect().await.unwrap();
        let outcome = conn.call_tool("ask", None, Default::default()).await.unwrap();
        let Outcome::Complete(result) = outcome else { panic!("{outcome:?}") };
        assert_eq!(result.content[0].as_text(), Some("answer to name?"));
        assert_eq!(tool_calls(&seen).len(), 2, "answered in one round");
    })
    .await
}

/// A server that answers "still working" (its state, no input requests) three times: the
/// client pauses between those rounds, doubling from the first pause, and then completes.
#[tokio::test(start_paused = true)]
async fn still_working_rounds_are_retried_after_growing_pauses() {
    let (client, server) = MemoryTransport::pair();
    let times: Arc<Mutex<Vec<Instant>>> = Arc::default();
    let log = times.clone();
    let mut calls = 0;
    let seen = ScriptedServer::start(server, move |req, params| {
        Some(Ok(match req.method.as_str() {
            "server/discover" => discover_result(),
            "tools/call" => {
                log.lock().unwrap().push(Instant::now());
                calls += 1;
                if calls <= 3 {
                    json!({"resultType": "input_required", "requestState": "working-7"})
                } else {
                    json!({"content": [{"type": "text", "text": params["requestState"].to_string()}], "resultType": "complete"})
                }
            }
            _ => return None,
        }))
    });
    let conn = connection(client, ConnectionOptions::new("patient"));
    conn.connect().await.unwrap();
    let outcome = conn.call_tool("wait", None, Default::default()).await.unwrap();
    let Outcome::Complete(result) = outcome else { panic!("{outcome:?}") };
    assert_eq!(result.content[0].as_text(), Some("\"working-7\""), "the state is sent back");
    let calls = tool_calls(&seen);
    assert_eq!(calls.len(), 4);
    assert!(calls[1..].iter().all(|p| p.get("inputResponses").is_none()), "nothing to answer: {calls:?}");
    // The paused clock moves only when the client sleeps: each gap is the client's pause.
    let times = times.lock().unwrap();
    let gaps: Vec<Duration> = times.windows(2).map(|w| w[1] - w[0]).collect();
    let first = STILL_WAITING_FIRST_PAUSE;
    assert_eq!(gaps, [first, first * 2, first * 4], "pauses double from the first");
    assert!(first * 4 <= STILL_WAITING_MAX_PAUSE);
}

/// A server that is always "still working" is retried until the call's timeout, not until the
/// round limit in no time; the pauses never go past the deadline, and the error is a timeout
/// that names the server and the method.
#[tokio::test(start_paused = true)]
async fn a_server_that_never_finishes_fails_at_the_calls_deadline() {
    let (client, server) = MemoryTransport::pair();
    let seen = ScriptedServer::start(server, |req, _| {
        Some(Ok(match req.method.as_str() {
            "server/discover" => discover_result(),
            _ => json!({"resultType": "input_required", "requestState": "forever"}),
        }))
    });
    let mut options = ConnectionOptions::new("stuck");
    options.max_input_rounds = 1000;
    let conn = connection(client, options);
    conn.connect().await.unwrap();
    let started = Instant::now();
    let timeout = Duration::from_secs(5);
    let err = conn
        .call_tool("wait", None, RequestOptions { timeout: Some(timeout), ..Default::default() })
        .await
        .unwrap_err();
    let text = err.to_string();
    assert!(matches!(&err, ConnectionError::Session(SessionError::Timeout { .. })), "{text}");
    assert!(text.contains("\"stuck\"") && text.contains("tools/call") && text.contains("timed out"), "{text}");
    assert_eq!(started.elapsed(), timeout, "the call ends at its deadline, not before or after");
    // 100 + 200 + 400 + 800 + 1600 ms, then the pause is cut at the deadline.
    assert_eq!(tool_calls(&seen).len(), 6, "rounds within the deadline");
}

/// The host refuses a sampling input request: the call fails at once with the reason, naming
/// the input request, instead of leaving it out and being asked again.
#[tokio::test]
async fn a_refused_input_request_fails_the_call_with_the_reason() {
    within(async {
        let (client, server) = MemoryTransport::pair();
        let seen = ScriptedServer::start(server, |req, _| {
            Some(Ok(match req.method.as_str() {
                "server/discover" => discover_result(),
                _ => json!({"resultType": "input_required", "requestState": "s", "inputRequests": {
                        "llm": {"method": "sampling/createMessage", "params": {"maxTokens": 5,
                            "messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}]}}}}),
            }))
        });
        let callbacks = HostCallbacks { sampling: Some(Arc::new(Refuser)), ..Default::default() };
        let conn = connection(client, options_with("sampler", callbacks));
        conn.connect().await.unwrap();
        let err = conn.call_tool("ask", None, Default::default()).await.unwrap_err();
        let ConnectionError::InputRequestFailed { server, method, key, input_method, error } = &err else {
            panic!("{err}")
        };
        assert_eq!(
            (server.as_str(), *method, key.as_str(), input_method.as_str()),
            ("sampler", "tools/call", "llm", "sampling/createMessage")
        );
        assert_eq!(error.code, ErrorCode::from(-1));
        assert!(err.to_string().contains("the user refused the sampling request"), "{err}");
        assert_eq!(tool_calls(&seen).len(), 1, "not asked again");
    })
    .await
}

/// What the host cannot answer at all fails the call at once too: no handler (-32601), an
/// unknown method (-32601), params that do not decode (-32602).
#[tokio::test]
async fn unanswerable_input_requests_fail_the_call_at_once() {
    within(async {
        let cases = [
            (json!({"method": "roots/list"}), "roots/list", ErrorCode::METHOD_NOT_FOUND, "method not found"),
            (
                json!({"method": "vendor/thing", "params": {}}),
                "vendor/thing",
                ErrorCode::METHOD_NOT_FOUND,
                "unknown input request method \"vendor/thing\"",
            ),
            (
                json!({"method": "elicitation/create", "params": {"message": 3}}),
                "elicitation/create",
                ErrorCode::INVALID_PARAMS,
                "invalid params of elicitation/create",
            ),
        ];
        for (request, want_method, want_code, want_text) in cases {
            let (client, server) = MemoryTransport::pair();
            let seen = ScriptedServer::start(server, move |req, _| {
                Some(Ok(match req.method.as_str() {
                    "server/discover" => discover_result(),
                    _ => json!({"resultType": "input_required", "inputRequests": {"k": request.clone()}}),
                }))
            });
            // An elicitation handler, but no roots provider.
            let callbacks =
                HostCallbacks { elicitation: Some(Arc::new(Asker { decline: false })), ..Default::default() };
            let conn = connection(client, options_with("host", callbacks));
            conn.connect().await.unwrap();
            let err = conn.call_tool("ask", None, Default::default()).await.unwrap_err();
            let ConnectionError::InputRequestFailed { key, input_method, error, .. } = &err else { panic!("{err}") };
            assert_eq!((key.as_str(), input_method.as_str(), error.code), ("k", want_method, want_code), "{err}");
            assert!(err.to_string().contains(want_text), "{err}");
            assert_eq!(tool_calls(&seen).len(), 1, "{want_method}: not asked again");
        }
    })
    .await
}

/// A user who declines an elicitation has answered it: the answer goes to the server.
#[tokio::test]
async fn a_declined_elicitation_is_sent_as_the_answer() {
    within(async {
        let (client, server) = MemoryTransport::pair();
        let seen = ScriptedServer::start(server, |req, params| {
            Some(Ok(match req.method.as_str() {
                "server/discover" => discover_result(),
                _ if params.get("inputResponses").is_some() => {
                    let action = params["inputResponses"]["q"]["action"].clone();
                    json!({"content": [{"type": "text", "text": action}], "resultType": "complete"})
                }
                _ => json!({"resultType": "input_required", "inputRequests": {"q": {"method": "elicitation/create",
                        "params": {"message": "ok?", "requestedSchema": {"type": "object", "properties": {}}}}}}),
            }))
        });
        let callbacks = HostCallbacks { elicitation: Some(Arc::new(Asker { decline: true })), ..Default::default() };
        let conn = connection(client, options_with("polite", callbacks));
        conn.connect().await.unwrap();
        let Outcome::Complete(result) = conn.call_tool("ask", None, Default::default()).await.unwrap() else {
            panic!()
        };
        assert_eq!(result.content[0].as_text(), Some("decline"));
        assert_eq!(tool_calls(&seen).len(), 2);
    })
    .await
}
