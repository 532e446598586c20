//! `bench-http-server`: a minimal, fast streamable HTTP MCP server for `cargo xtask bench http`,
//! built on `mcp_protocol` and axum. Every benchmark client (ours in both eras, and the official
//! SDK's) talks to it, so it does as little as it can: one current-thread runtime, JSON replies
//! (`application/json`, never SSE), results written straight out as JSON text.
//!
//! - `POST` with a request: `initialize` (legacy era: the client's revision if it is a legacy one,
//!   and an `Mcp-Session-Id`), `server/discover` (modern era, 2026-07-28, with the legacy revisions
//!   listed too), `ping`, `tools/list` (one tool, `echo`) and `tools/call echo {text}`, which
//!   returns `text` as one text block. Other methods get METHOD_NOT_FOUND.
//! - `POST` with a notification or a response: 202 and no body.
//! - `GET` (a standalone stream): 405, there is none. `DELETE` (end the session): 200.
//!
//! Session ids and headers are not checked: the server answers what it is sent.
//!
//! `bench-http-server [PORT]`: listens on 127.0.0.1:PORT (default 0, any free port) and prints the
//! bound port as the first line of stdout. It runs until killed.

use std::io::Write;
use std::process::exit;
use std::sync::atomic::{AtomicU64, Ordering};

use axum::body::{Body, Bytes};
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::response::Response;
use mcp_protocol::jsonrpc::to_raw;
use mcp_protocol::types::common::{CacheScope, Implementation, ResultType};
use mcp_protocol::types::content::ContentBlock;
use mcp_protocol::types::discover::DiscoverResult;
use mcp_protocol::types::lifecycle::{Initialize, InitializeResult, ServerCapabilities, ToolsCapability};
use mcp_protocol::types::meta::Meta;
use mcp_protocol::types::tools::{CallTool, CallToolResult};
use mcp_protocol::{
    DecodeLimits, Era, ErrorCode, ErrorObject, Message, ProtocolVersion, RawJson, Request, RequestId, RequestMethod,
    codec,
};
use serde_json::json;
use serde_json::value::RawValue;

/// Session ids handed out by `initialize`.
static SESSIONS: AtomicU64 = AtomicU64::new(1);

fn main() {
    let port: u16 = match std::env::args().nth(1).map(|p| p.parse()) {
        None => 0,
        Some(Ok(p)) => p,
        Some(Err(_)) => {
            eprintln!("usage: bench-http-server [PORT]");
            exit(2);
        }
    };
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("a Tokio runtime");
    runtime.block_on(async move {
        let listener = match tokio::net::TcpListener::bind(("127.0.0.1", port)).await {
            Ok(l) => l,
            Err(e) => {
                eprintln!("bench-http-server: cannot listen on 127.0.0.1:{port}: {e}");
                exit(1);
            }
        };
        let bound = listener.local_addr().expect("a bound address").port();
        let mut stdout = std::io::stdout().lock();
        let _ = writeln!(stdout, "{bound}");
        let _ = stdout.flush();
        drop(stdout);
        let app = axum::Router::new().fallback(handle);
        if let Err(e) = axum::serve(listener, app).await {
            eprintln!("bench-http-server: {e}");
            exit(1);
        }
    });
}

async fn handle(method: Method, body: Bytes) -> Response {
    match method {
        Method::POST => post(&body),
        Method::DELETE => status(StatusCode::OK),
        _ => status(StatusCode::METHOD_NOT_ALLOWED),
    }
}

fn status(code: StatusCode) -> Response {
    let mut response = Response::new(Body::empty());
    *response.status_mut() = code;
    response
}

fn json_response(body: Vec<u8>, session: Option<u64>) -> Response {
    let mut response = Response::new(Body::from(body));
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    if let Some(id) = session {
        headers.insert("mcp-session-id", HeaderValue::from(id));
    }
    response
}

fn post(body: &[u8]) -> Response {
    let message = match codec::decode_line(body, &DecodeLimits::default()).map(|d| d.into_messages()) {
        Ok(mut messages) if messages.len() == 1 => messages.pop().expect("one message"),
        Ok(_) => return error_reply(None, ErrorObject::new(ErrorCode::INVALID_REQUEST, "batches are not served")),
        Err(e) => return error_reply(None, ErrorObject::new(ErrorCode::PARSE_ERROR, e.to_string())),
    };
    match message {
        Ok(Message::Request(request)) => answer(&request),
        Ok(_) => status(StatusCode::ACCEPTED),
        Err(e) => error_reply(None, ErrorObject::new(ErrorCode::INVALID_REQUEST, e.to_string())),
    }
}

fn error_reply(id: Option<RequestId>, error: ErrorObject) -> Response {
    json_response(codec::encode_line(&Message::error_response(id, error)), None)
}

fn answer(request: &Request) -> Response {
    let (result, session) = match request.method.as_str() {
        "initialize" => (initialize(request), Some(SESSIONS.fetch_add(1, Ordering::Relaxed))),
        "server/discover" => (discover(), None),
        "ping" => (Ok(to_raw(&json!({})).expect("{} encodes")), None),
        "tools/list" => (Ok(tools_list()), None),
        "tools/call" => return call(request),
        other => (Err(ErrorObject::new(ErrorCode::METHOD_NOT_FOUND, format!("method not found: {other}"))), None),
    };
    match result {
        Ok(raw) => json_response(result_body(&request.id, raw.get()), session),
        Err(error) => error_reply(Some(request.id.clone()), error),
    }
}

fn internal(e: impl std::fmt::Display) -> ErrorObject {
    ErrorObject::new(ErrorCode::INTERNAL_ERROR, e.to_string())
}

fn capabilities() -> ServerCapabilities {
    ServerCapabilities { tools: Some(ToolsCapability::default()), ..Default::default() }
}

fn initialize(request: &Request) -> Result<RawJson, ErrorObject> {
    let params = params::<Initialize>(request)?;
    let offered = ProtocolVersion::parse(&params.protocol_version);
    let version = if offered.era() == Some(Era::Legacy) { offered } else { ProtocolVersion::LATEST_LEGACY };
    to_raw(&InitializeResult {
        protocol_version: version.as_str().to_owned(),
        capabilities: capabilities(),
        server_info: Implementation::new("bench-http-server", "1.0.0"),
        ..Default::default()
    })
    .map_err(internal)
}

fn discover() -> Result<RawJson, ErrorObject> {
    let mut meta = Meta::new();
    meta.set(Meta::SERVER_INFO, Implementation::new("bench-http-server", "1.0.0"));
    let result = DiscoverResult {
        supported_versions: ProtocolVersion::KNOWN.iter().map(|v| v.as_str().to_owned()).collect(),
        capabilities: capabilities(),
        ttl_ms: Some(60_000),
        cache_scope: Some(CacheScope::Public),
        result_type: Some(ResultType::Complete),
        meta: Some(meta),
        ..Default::default()
    };
    to_raw(&result).map_err(internal)
}

fn tools_list() -> RawJson {
    let list = json!({"tools": [{
        "name": "echo",
        "description": "Returns its text",
        "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}
    }]});
    to_raw(&list).expect("the tool list encodes")
}

fn call(request: &Request) -> Response {
    let params = match params::<CallTool>(request) {
        Ok(p) => p,
        Err(error) => return error_reply(Some(request.id.clone()), error),
    };
    if params.name != "echo" {
        let error = ErrorObject::new(ErrorCode::INVALID_PARAMS, format!("unknown tool {:?}", params.name));
        return error_reply(Some(request.id.clone()), error);
    }
    let text = params.arguments.as_ref().and_then(|a| a.get("text")).and_then(|t| t.as_str()).unwrap_or("");
    let result = CallToolResult { content: vec![ContentBlock::text(text)], ..Default::default() };
    match serde_json::to_string(&result) {
        Ok(raw) => json_response(result_body(&request.id, &raw), None),
        Err(e) => error_reply(Some(request.id.clone()), internal(e)),
    }
}

/// The typed params of a request to method `M`; a missing or invalid `params` is INVALID_PARAMS.
fn params<M: RequestMethod>(request: &Request) -> Result<M::Params, ErrorObject> {
    let raw = request.params.as_deref().map_or("{}", RawValue::get);
    serde_json::from_str(raw).map_err(|e| ErrorObject::new(ErrorCode::INVALID_PARAMS, format!("invalid params: {e}")))
}

/// A response's JSON text, with `result` written in as it is.
fn result_body(id: &RequestId, result: &str) -> Vec<u8> {
    let id = serde_json::to_string(id).unwrap_or_else(|_| "null".to_owned());
    let mut out = Vec::with_capacity(40 + id.len() + result.len());
    out.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
    out.extend_from_slice(id.as_bytes());
    out.extend_from_slice(br#","result":"#);
    out.extend_from_slice(result.as_bytes());
    out.push(b'}');
    out
}
