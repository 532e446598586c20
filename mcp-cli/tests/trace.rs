//! `mcp --trace FILE`: every line of the file is one JSON span. A call on the demo server
//! (`mcp serve-demo`, configured with a secret in its environment) leaves a `tools/call echo`
//! client span under the `execute_tool echo` span, with the protocol version; a call on a
//! streamable HTTP server (an in-process fake on 127.0.0.1:0 that wants a bearer token and gives
//! a session id) leaves one with the session id and `tcp`. No argument, result, token or
//! environment value is in the file. A file that cannot be opened is a usage error naming it.

mod support;

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use serde_json::{Value, json};

const ARGUMENT_SECRET: &str = "argument-marker-3131";
const ENV_SECRET: &str = "env-secret-6262";
const TOKEN: &str = "bearer-secret-8484";
const RESULT_SECRET: &str = "result-marker-5353";
const SESSION: &str = "session-trace-17";

fn mcp(dir: &Path, args: &[&str]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_mcp"));
    command.current_dir(dir).args(args).stdin(Stdio::null()).env("TRACE_TEST_TOKEN", TOKEN);
    let output = support::run_bounded(command, None, Duration::from_secs(60));
    assert!(!String::from_utf8_lossy(&output.stderr).contains("panicked"), "{output:?}");
    output
}

/// Every line of the trace file, parsed: each must be one JSON object.
fn spans(file: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(file).expect("the trace file exists");
    for secret in [ARGUMENT_SECRET, ENV_SECRET, TOKEN, RESULT_SECRET] {
        assert!(!text.contains(secret), "{secret} is in the trace:\n{text}");
    }
    text.lines().map(|line| serde_json::from_str::<Value>(line).unwrap_or_else(|e| panic!("{e}: {line}"))).collect()
}

fn named<'a>(spans: &'a [Value], name: &str) -> &'a Value {
    let found: Vec<&Value> = spans.iter().filter(|s| s["name"] == name).collect();
    assert_eq!(found.len(), 1, "one {name} span expected in {spans:#?}");
    found[0]
}

#[test]
fn a_call_on_the_demo_server_leaves_its_tool_call_and_request_spans() {
    let dir = tempfile::tempdir().unwrap();
    let config = json!({"mcpServers": {"demo": {
        "command": env!("CARGO_BIN_EXE_mcp"), "args": ["serve-demo"], "env": {"DEMO_API_KEY": ENV_SECRET}
    }}});
    std::fs::write(dir.path().join("mcp.json"), config.to_string()).unwrap();
    let file = dir.path().join("trace.jsonl");
    let text = format!("text={ARGUMENT_SECRET}");
    let output = mcp(dir.path(), &["--trace", file.to_str().unwrap(), "call", "echo", &text]);
    assert_eq!(output.status.code(), Some(0), "{output:?}");

    let spans = spans(&file);
    let call = named(&spans, "tools/call echo");
    assert_eq!(call["span"], "mcp.request");
    assert_eq!(call["kind"], "client");
    assert_eq!(call["status"]["code"], "unset");
    let attributes = &call["attributes"];
    assert_eq!(attributes["mcp.method.name"], "tools/call");
    assert_eq!(attributes["gen_ai.tool.name"], "echo");
    assert_eq!(attributes["mcp.server.name"], "demo");
    assert_eq!(attributes["network.transport"], "pipe");
    let version = attributes["mcp.protocol.version"].as_str().expect("the negotiated revision");
    assert!(version.len() == 10 && version.starts_with("20"), "{version}");
    assert!(attributes["jsonrpc.request.id"].as_str().is_some_and(|id| id.parse::<u64>().is_ok()), "{call}");
    assert!(call["end_time_unix_nano"].as_u64() >= call["start_time_unix_nano"].as_u64(), "{call}");

    let tool = named(&spans, "execute_tool echo");
    assert_eq!(call["parent_span_id"], tool["span_id"]);
    assert_eq!(call["trace_id"], tool["trace_id"]);
    assert_eq!(tool["attributes"]["mcp.server.name"], "demo");

    let connection = named(&spans, "mcp.connection demo");
    assert_eq!(connection["attributes"]["mcp.protocol.version"], version);
    assert!(spans.iter().any(|s| s["parent_span_id"] == connection["span_id"]), "the handshake is under it");
}

/// A streamable HTTP server that wants `Bearer TOKEN` and gives session [`SESSION`].
fn start_server() -> u16 {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        rt.block_on(async move {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            tx.send(listener.local_addr().unwrap().port()).unwrap();
            let app = axum::Router::new().route(
                "/mcp",
                post(answer).get(|| async { StatusCode::METHOD_NOT_ALLOWED }).delete(|| async { StatusCode::OK }),
            );
            axum::serve(listener, app).await.unwrap();
        });
    });
    rx.recv_timeout(Duration::from_secs(10)).unwrap()
}

async fn answer(headers: HeaderMap, body: String) -> Response {
    if headers.get(header::AUTHORIZATION).and_then(|v| v.to_str().ok()) != Some(&format!("Bearer {TOKEN}")) {
        return StatusCode::UNAUTHORIZED.into_response();
    }
    let request: Value = serde_json::from_str(&body).unwrap_or(Value::Null);
    let Some(id) = request.get("id").cloned() else { return StatusCode::ACCEPTED.into_response() };
    let reply = match request["method"].as_str() {
        Some("initialize") => json!({"result": {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
            "serverInfo": {"name": "http-lab", "version": "1"}}}),
        Some("tools/list") => json!({"result": {"tools": [{"name": "lookup", "inputSchema": {"type": "object"}}]}}),
        Some("tools/call") => json!({"result": {"content": [{"type": "text", "text": RESULT_SECRET}]}}),
        other => json!({"error": {"code": -32601, "message": format!("no {other:?}")}}),
    };
    let mut message = json!({"jsonrpc": "2.0", "id": id});
    message.as_object_mut().unwrap().extend(reply.as_object().unwrap().clone());
    (
        [(header::CONTENT_TYPE, "application/json"), (header::HeaderName::from_static("mcp-session-id"), SESSION)],
        message.to_string(),
    )
        .into_response()
}

#[test]
fn a_call_over_http_records_the_session_but_never_the_token() {
    let port = start_server();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("trace.jsonl");
    let url = format!("http://127.0.0.1:{port}/mcp");
    let text = format!("q={ARGUMENT_SECRET}");
    let args =
        ["--trace", file.to_str().unwrap(), "--url", &url, "--bearer-env", "TRACE_TEST_TOKEN", "call", "lookup", &text];
    let output = mcp(dir.path(), &args);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    assert!(String::from_utf8_lossy(&output.stdout).contains(RESULT_SECRET), "{output:?}");

    let spans = spans(&file);
    let call = named(&spans, "tools/call lookup");
    let attributes = &call["attributes"];
    assert_eq!(attributes["mcp.session.id"], SESSION);
    assert_eq!(attributes["mcp.protocol.version"], "2025-11-25");
    assert_eq!(attributes["network.transport"], "tcp");
    assert_eq!(attributes["gen_ai.tool.name"], "lookup");
}

#[test]
fn a_trace_file_that_cannot_be_opened_is_a_usage_error_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("no-such-dir").join("trace.jsonl");
    let output = mcp(dir.path(), &["--trace", file.to_str().unwrap(), "tools"]);
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("--trace") && stderr.contains("no-such-dir"), "{stderr}");
    assert!(!file.exists());
}
