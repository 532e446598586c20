//! The `tracing` spans of `mcp_manager::telemetry`, captured as a host's subscriber would see
//! them (`test_support::spans`), against a scripted legacy server on an in-memory transport:
//! the attributes of a `tools/call` span and its parent tool call span, the `error.type` of a
//! JSON-RPC error, a tool error, a timeout and an unknown tool, the server-kind span of a request
//! the server sends, and that no argument, result, token or environment value is in any span.

use std::sync::Arc;
use std::time::Duration;

use mcp_manager::config::ServerConfig;
use mcp_manager::connection::{EraPreference, single_use_factory};
use mcp_manager::{McpManager, McpToolProvider, RequestOptions, TransportPlan};
use mcp_transport::{MemoryTransport, Transport};
use serde_json::json;
use test_support::spans::{ClosedSpan, SpanCapture};
use test_support::{ScriptedServer, within};
use tool_system::{ToolExecutionContext, ToolInvocation, ToolRegistry};

const ARGUMENT_SECRET: &str = "argument-secret-4242";
const RESULT_SECRET: &str = "result-secret-9191";
const ENV_SECRET: &str = "env-secret-5555";
const BEARER_SECRET: &str = "bearer-secret-7777";

/// A 2025-11-25 server `lab`: `echo` answers with a secret, `broken` with a JSON-RPC error,
/// `failing` with `isError`, `stuck` never.
fn serve(server: MemoryTransport) -> ScriptedServer {
    ScriptedServer::start(server, |request, params| {
        let tool = params["name"].as_str().unwrap_or_default();
        match (request.method.as_str(), tool) {
            ("initialize", _) => Some(Ok(json!({"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                "serverInfo": {"name": "lab", "version": "1"}}))),
            ("tools/list", _) => {
                let tools = ["echo", "broken", "failing", "stuck"].map(|name| json!({"name": name, "inputSchema": {}}));
                Some(Ok(json!({ "tools": tools })))
            }
            ("tools/call", "echo") => Some(Ok(json!({"content": [{"type": "text", "text": RESULT_SECRET}]}))),
            ("tools/call", "broken") => {
                Some(Err(mcp_protocol::ErrorObject::new(mcp_protocol::ErrorCode::INVALID_PARAMS, "bad arguments")))
            }
            ("tools/call", "failing") => {
                Some(Ok(json!({"content": [{"type": "text", "text": "it broke"}], "isError": true})))
            }
            ("tools/call", _) => None,
            _ => Some(Ok(json!({}))),
        }
    })
}

/// A manager on server `lab` (in memory, configured with an environment secret) and server
/// `vault` (a URL on a closed port of 127.0.0.1, with a bearer token and an API key header):
/// no span may show the secrets.
async fn start() -> (McpManager, ScriptedServer) {
    let (client, server) = MemoryTransport::pair();
    let seen = serve(server);
    let factory = single_use_factory(Arc::new(client) as Arc<dyn Transport>);
    let lab = ServerConfig::stdio("lab", "unused: the transport is in memory")
        .era(EraPreference::Legacy)
        .env("LAB_API_KEY", ENV_SECRET);
    let closed_port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let vault = ServerConfig::http("vault", format!("http://127.0.0.1:{closed_port}/mcp"))
        .bearer(BEARER_SECRET)
        .header("X-Api-Key", ENV_SECRET);
    let manager = McpManager::builder()
        .server(lab)
        .server(vault)
        .transport(move |config| (config.name == "lab").then(|| TransportPlan::single(factory.clone())))
        .start()
        .await
        .expect("a valid config");
    assert!(manager.routing().tool("echo").is_some(), "{:?}", manager.status());
    (manager, seen)
}

fn one<'a>(spans: &'a [ClosedSpan], what: &str, pick: impl Fn(&ClosedSpan) -> bool) -> &'a ClosedSpan {
    let found: Vec<&ClosedSpan> = spans.iter().filter(|s| pick(s)).collect();
    assert_eq!(found.len(), 1, "one {what} span expected in {spans:#?}");
    found[0]
}

fn lab_connection(spans: &[ClosedSpan]) -> &ClosedSpan {
    one(spans, "lab connection", |s| s.name == "mcp.connection" && s.field("mcp.server.name") == Some("lab"))
}

fn request<'a>(spans: &'a [ClosedSpan], name: &str) -> &'a ClosedSpan {
    one(spans, name, |s| {
        s.name == "mcp.request" && s.field("otel.name") == Some(name) && s.field("mcp.server.name") == Some("lab")
    })
}

fn tool_call<'a>(spans: &'a [ClosedSpan], tool: &str) -> &'a ClosedSpan {
    one(spans, tool, |s| s.name == "execute_tool" && s.field("gen_ai.tool.name") == Some(tool))
}

#[tokio::test]
async fn a_tool_call_span_parents_its_request_span_with_the_conventions_attributes() {
    let (capture, _guard) = SpanCapture::start();
    within(async {
        let (manager, seen) = start().await;
        let registry = ToolRegistry::new();
        registry.register(McpToolProvider::new(manager.clone())).await;
        let invocation = ToolInvocation::from_value("lab__echo", json!({"text": ARGUMENT_SECRET}));
        let result = registry.invoke(invocation, ToolExecutionContext::default()).await;
        assert!(result.success, "{result:?}");
        assert_eq!(seen.count("tools/call"), 1);
        manager.close().await;
    })
    .await;

    let spans = capture.closed();
    let call = request(&spans, "tools/call echo");
    assert_eq!(call.target, "mcp");
    for (field, value) in [
        ("otel.kind", "client"),
        ("mcp.method.name", "tools/call"),
        ("gen_ai.tool.name", "echo"),
        ("gen_ai.operation.name", "execute_tool"),
        ("mcp.protocol.version", "2025-11-25"),
        ("mcp.server.name", "lab"),
    ] {
        assert_eq!(call.field(field), Some(value), "{field} of {call:#?}");
    }
    let id: i64 = call.field("jsonrpc.request.id").expect("a request id").parse().expect("a number");
    assert!(id >= 0);
    assert_eq!(call.field("error.type"), None, "a success has no error.type");
    assert_eq!(call.field("mcp.session.id"), None, "an in-memory transport has no session");

    let tool = tool_call(&spans, "echo");
    assert_eq!(call.parent, Some(tool.id), "the tool call span parents the request span");
    assert_eq!(tool.field("otel.name"), Some("execute_tool echo"));
    assert_eq!(tool.field("mcp.server.name"), Some("lab"));
    assert_eq!(tool.field("otel.kind"), Some("internal"));

    // The handshake ran in the connection's span, which says what was negotiated.
    let connection = lab_connection(&spans);
    assert_eq!(connection.field("mcp.protocol.version"), Some("2025-11-25"));
    assert_eq!(connection.field("mcp.server.name"), Some("lab"));
    assert_eq!(request(&spans, "initialize").parent, Some(connection.id));
    assert_eq!(request(&spans, "tools/list").parent, Some(connection.id), "made outside any span");

    // The server that could not be reached: its connection span says why, over TCP.
    let vault =
        one(&spans, "vault connection", |s| s.name == "mcp.connection" && s.field("mcp.server.name") == Some("vault"));
    assert_eq!(vault.field("error.type"), Some("unreachable"), "{vault:#?}");
    assert_eq!(vault.field("otel.status_code"), Some("error"));

    let text = capture.all_text();
    for secret in [ARGUMENT_SECRET, RESULT_SECRET, ENV_SECRET, BEARER_SECRET] {
        assert!(!text.contains(secret), "{secret} is in a span:\n{text}");
    }
}

#[tokio::test]
async fn failed_calls_say_their_error_type() {
    let (capture, _guard) = SpanCapture::start();
    within(async {
        let (manager, _seen) = start().await;
        let error = manager.call_tool("broken", None, RequestOptions::default()).await.unwrap_err();
        assert!(error.to_string().contains("bad arguments"), "{error}");
        let (_, result) = manager.call_tool("failing", None, RequestOptions::default()).await.unwrap();
        assert_eq!(result.is_error, Some(true));
        let quick = RequestOptions { timeout: Some(Duration::from_millis(50)), ..Default::default() };
        let error = manager.call_tool("stuck", None, quick).await.unwrap_err();
        assert_eq!(error.kind(), mcp_manager::ErrorKind::Timeout, "{error}");
        let failed = manager.execute_tool("missing", None, RequestOptions::default()).await;
        assert!(!failed.success);
        manager.close().await;
    })
    .await;

    let spans = capture.closed();
    let broken = request(&spans, "tools/call broken");
    assert_eq!(broken.field("error.type"), Some("-32602"), "the JSON-RPC error code");
    assert_eq!(broken.field("rpc.response.status_code"), Some("-32602"));
    assert_eq!(broken.field("otel.status_code"), Some("error"));
    assert_eq!(broken.field("otel.status_description"), Some("bad arguments"));
    assert_eq!(tool_call(&spans, "broken").field("error.type"), Some("invalid_arguments"), "the ErrorKind");

    let failing = request(&spans, "tools/call failing");
    assert_eq!(failing.field("error.type"), Some("tool_error"), "isError, as the convention says");
    assert_eq!(tool_call(&spans, "failing").field("error.type"), Some("tool_error"));

    assert_eq!(request(&spans, "tools/call stuck").field("error.type"), Some("timeout"));
    assert_eq!(tool_call(&spans, "stuck").field("error.type"), Some("timeout"));

    let missing = tool_call(&spans, "missing");
    assert_eq!(missing.field("error.type"), Some("not_found"));
    assert_eq!(missing.field("mcp.server.name"), None, "no server took it");
    assert!(!spans.iter().any(|s| s.parent == Some(missing.id)), "nothing was sent for it");
}

/// A request whose caller stops waiting (its future dropped) before the server answers: its span
/// ends as cancelled, not as a success.
#[tokio::test]
async fn a_request_dropped_before_its_answer_is_marked_cancelled() {
    let (capture, _guard) = SpanCapture::start();
    within(async {
        let (manager, seen) = start().await;
        let mut call = Box::pin(manager.call_tool("stuck", None, RequestOptions::default()));
        // Polled until the server has the request (it never answers), then dropped.
        while seen.count("tools/call") == 0 {
            tokio::select! {
                outcome = &mut call => panic!("the stuck tool answered: {outcome:?}"),
                () = tokio::time::sleep(Duration::from_millis(5)) => {}
            }
        }
        drop(call);
        manager.close().await;
    })
    .await;

    let stuck = request(&capture.closed(), "tools/call stuck").clone();
    assert_eq!(stuck.field("error.type"), Some("cancelled"), "{stuck:#?}");
    assert_eq!(stuck.field("otel.status_code"), Some("error"));
}

#[tokio::test]
async fn a_request_from_the_server_gets_a_server_span_under_the_connection() {
    let (capture, _guard) = SpanCapture::start();
    within(async {
        let (manager, seen) = start().await;
        // No roots provider: the manager refuses the request.
        let answer = seen.ask("roots/list", json!({})).await;
        assert!(answer.is_err(), "{answer:?}");
        manager.close().await;
    })
    .await;

    let spans = capture.closed();
    let served = one(&spans, "server request", |s| s.name == "mcp.server_request");
    assert_eq!(served.field("otel.kind"), Some("server"));
    assert_eq!(served.field("mcp.method.name"), Some("roots/list"));
    assert_eq!(served.field("jsonrpc.request.id"), Some("scripted-1"), "a string id, unquoted");
    assert_eq!(served.field("mcp.protocol.version"), Some("2025-11-25"));
    assert_eq!(served.field("error.type"), Some("-32601"));
    assert_eq!(served.parent, Some(lab_connection(&spans).id));
}
