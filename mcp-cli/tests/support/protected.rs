//! A protected MCP endpoint for the authorization tests (`login.rs`, `unattended.rs`): it
//! answers `initialize` and `tools/list` (one tool) to a request that carries the expected bearer
//! token, and a 401 with a `Bearer` challenge naming its protected resource metadata otherwise.

#![allow(dead_code)]

use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

/// The endpoint: `token` is the one access token it takes; `server` and `tool` name what it
/// offers; `port` is where the fake listens (for the metadata URL of the challenge).
pub fn mcp(headers: &HeaderMap, body: &str, port: u16, token: &str, server: &str, tool: &str) -> Response {
    let authorized =
        headers.get(header::AUTHORIZATION).and_then(|v| v.to_str().ok()) == Some(&format!("Bearer {token}"));
    if !authorized {
        let challenge =
            format!("Bearer resource_metadata=\"http://127.0.0.1:{port}/.well-known/oauth-protected-resource/mcp\"");
        return (StatusCode::UNAUTHORIZED, [(header::WWW_AUTHENTICATE, challenge)]).into_response();
    }
    let request: Value = serde_json::from_str(body).unwrap_or(Value::Null);
    let Some(id) = request.get("id").cloned() else { return StatusCode::ACCEPTED.into_response() };
    let result = match request["method"].as_str() {
        Some("initialize") => json!({
            "protocolVersion": "2025-11-25",
            "capabilities": {"tools": {}},
            "serverInfo": {"name": server, "version": "1"}
        }),
        Some("tools/list") => json!({"tools": [{"name": tool, "inputSchema": {"type": "object"}}]}),
        Some(other) => {
            let error = json!({"code": -32601, "message": format!("no {other}")});
            return json_body(json!({"jsonrpc": "2.0", "id": id, "error": error}));
        }
        None => Value::Null,
    };
    json_body(json!({"jsonrpc": "2.0", "id": id, "result": result}))
}

/// A JSON answer.
pub fn json_body(value: Value) -> Response {
    ([(header::CONTENT_TYPE, "application/json")], value.to_string()).into_response()
}

/// The routes every authorization fake shares: the protected endpoint ([`mcp`]) at `/mcp`, its
/// protected resource metadata naming the fake itself as the authorization server, and that
/// server's metadata `meta`. A test adds its own authorization server endpoints.
pub fn resource_routes(
    port: u16,
    token: &'static str,
    server: &'static str,
    tool: &'static str,
    meta: Value,
) -> axum::Router {
    use axum::routing::{get, post};
    let base = format!("http://127.0.0.1:{port}");
    let prm = json!({"resource": format!("{base}/mcp"), "authorization_servers": [base]});
    axum::Router::new()
        .route(
            "/mcp",
            post(
                move |headers: HeaderMap, body: String| async move { mcp(&headers, &body, port, token, server, tool) },
            ),
        )
        .route("/.well-known/oauth-protected-resource/mcp", get(move || async move { json_body(prm) }))
        .route("/.well-known/oauth-authorization-server", get(move || async move { json_body(meta) }))
}
