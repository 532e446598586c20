//! `bench-server --http PORT`: streamable HTTP on 127.0.0.1 at any path, with axum on one
//! current-thread runtime. JSON replies (`application/json`, never SSE).
//!
//! - `POST` with a request: answered as over stdio. `initialize` also hands out an
//!   `Mcp-Session-Id`. A request is legacy when its `MCP-Protocol-Version` header names a legacy
//!   revision or is missing, modern otherwise (`server/discover` is always modern).
//! - `POST` with a notification or a response: 202 and no body.
//! - `GET` (a standalone stream): 405, there is none. `DELETE` (end the session): 200.
//!
//! Session ids are not checked: the server answers what it is sent. The bound port is the first
//! line of stdout; the server runs until killed.

use std::io::Write;
use std::process::exit;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::response::Response;
use mcp_protocol::{DecodeLimits, Era, ErrorCode, ErrorObject, Message, ProtocolVersion, codec};

use super::Responder;

/// Session ids handed out by `initialize`.
static SESSIONS: AtomicU64 = AtomicU64::new(1);

/// Serve `responder` on 127.0.0.1:`port` until killed.
pub(crate) fn serve(responder: Responder, port: u16) {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("a Tokio runtime");
    runtime.block_on(async move {
        let listener = match tokio::net::TcpListener::bind(("127.0.0.1", port)).await {
            Ok(l) => l,
            Err(e) => {
                eprintln!("bench-server: cannot listen on 127.0.0.1:{port}: {e}");
                exit(1);
            }
        };
        let bound = listener.local_addr().expect("a bound address").port();
        let mut stdout = std::io::stdout().lock();
        let _ = writeln!(stdout, "{bound}");
        let _ = stdout.flush();
        drop(stdout);
        let app = axum::Router::new().fallback(handle).with_state(Arc::new(responder));
        if let Err(e) = axum::serve(listener, app).await {
            eprintln!("bench-server: {e}");
            exit(1);
        }
    });
}

async fn handle(State(responder): State<Arc<Responder>>, method: Method, headers: HeaderMap, body: Bytes) -> Response {
    match method {
        Method::POST => post(&responder, &headers, &body),
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

fn post(responder: &Responder, headers: &HeaderMap, body: &[u8]) -> Response {
    let message = match codec::decode_line(body, &DecodeLimits::default()).map(|d| d.into_messages()) {
        Ok(mut messages) if messages.len() == 1 => messages.pop().expect("one message"),
        Ok(_) => return error_reply(ErrorObject::new(ErrorCode::INVALID_REQUEST, "batches are not served")),
        Err(e) => return json_response(super::parse_error(&e), None),
    };
    let request = match message {
        Ok(Message::Request(request)) => request,
        Ok(_) => return status(StatusCode::ACCEPTED),
        Err(e) => return error_reply(ErrorObject::new(ErrorCode::INVALID_REQUEST, e.to_string())),
    };
    let version = headers.get("mcp-protocol-version").and_then(|v| v.to_str().ok());
    let legacy = request.method != "server/discover"
        && version.is_none_or(|v| ProtocolVersion::parse(v).era() == Some(Era::Legacy));
    let mut out = Vec::new();
    if responder.answer(&request, legacy, &mut out).is_err() {
        return status(StatusCode::INTERNAL_SERVER_ERROR);
    }
    let session = (request.method == "initialize").then(|| SESSIONS.fetch_add(1, Ordering::Relaxed));
    json_response(out, session)
}

fn error_reply(error: ErrorObject) -> Response {
    json_response(codec::encode_line(&Message::error_response(None, error)), None)
}
