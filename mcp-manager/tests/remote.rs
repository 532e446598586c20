//! Which transport reaches a remote server: `McpConnection::remote` against in-process axum
//! servers on 127.0.0.1:0. An implied transport tries streamable HTTP and falls back to legacy
//! HTTP+SSE on the same URL when `initialize` is refused with HTTP 400, 404 or 405; an explicit one
//! is used alone; any other failure is reported without a fallback.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, Method, Uri};
use axum::response::Response;
use mcp_manager::{ConnectionError, ConnectionOptions, McpConnection, RemoteTarget, SessionError};
use mcp_protocol::ProtocolVersion;
use mcp_transport::{Secret, TransportKind};
use serde_json::{Value, json};
use test_support::within;
use tokio::sync::mpsc;

/// How the test server behaves.
#[derive(Clone, Copy)]
enum Shape {
    /// A 2024-11-05 server: `GET /sse` opens the stream, `POST /message` takes messages, and a
    /// POST on `/sse` is answered with this status.
    Legacy { post_status: u16 },
    /// A streamable HTTP server on `/mcp` with JSON replies.
    Streamable,
    /// Every request is answered with this status.
    Failing(u16),
}

/// One request the server got.
#[derive(Debug, Clone)]
struct Seen {
    method: Method,
    path: String,
    rpc: Option<String>,
    authorization: Option<String>,
    client_header: Option<String>,
}

impl Seen {
    fn summary(&self) -> String {
        match &self.rpc {
            Some(m) => format!("{} {} {m}", self.method, self.path),
            None => format!("{} {}", self.method, self.path),
        }
    }
}

struct ServerState {
    shape: Shape,
    log: Mutex<Vec<Seen>>,
    stream: Mutex<Option<mpsc::UnboundedSender<String>>>,
}

struct TestServer {
    addr: SocketAddr,
    state: Arc<ServerState>,
}

impl TestServer {
    async fn start(shape: Shape) -> TestServer {
        let state = Arc::new(ServerState { shape, log: Mutex::default(), stream: Mutex::default() });
        let app = axum::Router::new().fallback(handle).with_state(state.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        TestServer { addr, state }
    }

    fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    fn log(&self) -> Vec<Seen> {
        self.state.log.lock().unwrap().clone()
    }

    /// The requests that carried `initialize`, and every GET, in order.
    fn handshake_requests(&self) -> Vec<String> {
        self.log()
            .iter()
            .filter(|s| s.method == Method::GET || s.rpc.as_deref() == Some("initialize"))
            .map(Seen::summary)
            .collect()
    }
}

async fn handle(
    State(state): State<Arc<ServerState>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let body: Option<Value> = serde_json::from_slice(&body).ok();
    let header = |name: &str| headers.get(name).map(|v| v.to_str().unwrap().to_owned());
    let seen = Seen {
        method: method.clone(),
        path: uri.path().to_owned(),
        rpc: body.as_ref().and_then(|b| b.get("method")).and_then(Value::as_str).map(str::to_owned),
        authorization: header("authorization"),
        client_header: header("x-client"),
    };
    state.log.lock().unwrap().push(seen);
    match (state.shape, method.as_str(), uri.path()) {
        (Shape::Failing(status), _, _) => text(status, "text/plain", "boom"),
        (Shape::Legacy { .. }, "GET", "/sse") => open_stream(&state),
        (Shape::Legacy { post_status }, "POST", "/sse") => match post_status {
            // The TypeScript SDK's shape of a refused POST without a valid session.
            400 => text(
                400,
                "application/json",
                r#"{"jsonrpc":"2.0","error":{"code":-32000,"message":"Bad Request"},"id":null}"#,
            ),
            status => text(status, "text/html", "Cannot POST /sse"),
        },
        (Shape::Legacy { .. }, "POST", "/message") => {
            if let Some(answer) = body.as_ref().and_then(|b| answer(b, "2024-11-05"))
                && let Some(tx) = state.stream.lock().unwrap().as_ref()
            {
                let _ = tx.send(format!("event: message\ndata: {answer}\n\n"));
            }
            text(202, "text/plain", "Accepted")
        }
        (Shape::Streamable, "POST", "/mcp") => match body.as_ref().and_then(|b| answer(b, "2025-11-25")) {
            Some(answer) => Response::builder()
                .status(200)
                .header("content-type", "application/json")
                .header("mcp-session-id", "session-1")
                .body(Body::from(answer.to_string()))
                .unwrap(),
            None => text(202, "text/plain", ""),
        },
        (Shape::Streamable, "GET", "/mcp") => text(405, "text/plain", "no GET stream"),
        (Shape::Streamable, "DELETE", "/mcp") => text(200, "text/plain", ""),
        _ => text(404, "text/plain", "not found"),
    }
}

/// The server's answer to a request (`None` for notifications and responses).
fn answer(message: &Value, version: &str) -> Option<Value> {
    let id = message.get("id")?.clone();
    let method = message.get("method")?.as_str()?;
    let result = match method {
        "initialize" => json!({
            "protocolVersion": version,
            "capabilities": {"tools": {}},
            "serverInfo": {"name": format!("test-{version}"), "version": "1"},
        }),
        "tools/list" => json!({"tools": [{"name": "echo", "inputSchema": {"type": "object"}}]}),
        "ping" => json!({}),
        _ => {
            return Some(json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": "Method not found"}}));
        }
    };
    Some(json!({"jsonrpc": "2.0", "id": id, "result": result}))
}

fn text(status: u16, content_type: &str, body: &str) -> Response {
    Response::builder().status(status).header("content-type", content_type).body(Body::from(body.to_owned())).unwrap()
}

/// The legacy SSE stream: the `endpoint` event, then whatever the POST handler queues.
fn open_stream(state: &ServerState) -> Response {
    let (tx, rx) = mpsc::unbounded_channel::<String>();
    tx.send("event: endpoint\ndata: /message?sessionId=1\n\n".to_owned()).unwrap();
    *state.stream.lock().unwrap() = Some(tx);
    let body = futures::stream::unfold(rx, |mut rx| async move {
        let text = rx.recv().await?;
        Some((Ok::<_, std::io::Error>(Bytes::from(text)), rx))
    });
    Response::builder().status(200).header("content-type", "text/event-stream").body(Body::from_stream(body)).unwrap()
}

/// A target with short limits, a bearer token and one extra header.
fn target(url: String, transport: Option<TransportKind>) -> RemoteTarget {
    let mut target = RemoteTarget::new(url).with_transport(transport);
    target.bearer = Some(Secret::new("tok-1"));
    target.headers = vec![("X-Client".into(), "tests".into())];
    target.timeouts.connect = Duration::from_secs(5);
    target.timeouts.read = Duration::from_secs(5);
    target.timeouts.sse_endpoint = Duration::from_secs(5);
    target.timeouts.sse_post = Duration::from_secs(5);
    target
}

fn options() -> ConnectionOptions {
    let mut options = ConnectionOptions::new("remote");
    options.session.request_timeout = Duration::from_secs(5);
    options
}

/// The HTTP status of a connection error that a transport reported.
fn http_status(error: &ConnectionError) -> Option<u16> {
    match error {
        ConnectionError::Session(SessionError::Transport { error, .. }) => error.http_status(),
        ConnectionError::Transport { error, .. } => error.http_status(),
        _ => None,
    }
}

#[tokio::test]
async fn an_implied_transport_falls_back_to_sse_when_initialize_is_refused() {
    within(async {
        for status in [405, 404, 400] {
            let server = TestServer::start(Shape::Legacy { post_status: status }).await;
            let conn = McpConnection::remote(&target(server.url("/sse"), None), options()).unwrap();
            let info = conn.connect().await.unwrap_or_else(|e| panic!("HTTP {status}: {e}"));
            assert_eq!(info.transport, TransportKind::Sse, "HTTP {status}");
            assert_eq!(info.protocol_version, ProtocolVersion::parse("2024-11-05"));
            assert_eq!(info.implementation.name, "test-2024-11-05");
            assert_eq!(
                server.handshake_requests(),
                ["POST /sse initialize", "GET /sse", "POST /message initialize"],
                "HTTP {status}: streamable HTTP first, then the legacy stream on the same URL"
            );
            let tools = conn.list_all_tools().await.expect("tools/list over the fallback");
            assert_eq!(tools.len(), 1);
            conn.ping().await.expect("ping");
            // Credentials and headers reach both transports.
            for seen in server.log() {
                assert_eq!(seen.authorization.as_deref(), Some("Bearer tok-1"), "{}", seen.summary());
                assert_eq!(seen.client_header.as_deref(), Some("tests"), "{}", seen.summary());
            }
            conn.close().await;

            // A reconnect goes through the same steps.
            let info = conn.connect().await.expect("reconnect");
            assert_eq!(info.transport, TransportKind::Sse);
            assert_eq!(server.handshake_requests().len(), 6, "{:?}", server.handshake_requests());
            conn.close().await;
        }
    })
    .await;
}

#[tokio::test]
async fn an_implied_transport_stays_on_streamable_http_when_it_works() {
    within(async {
        let server = TestServer::start(Shape::Streamable).await;
        let conn = McpConnection::remote(&target(server.url("/mcp"), None), options()).unwrap();
        let info = conn.connect().await.expect("connect");
        assert_eq!(info.transport, TransportKind::StreamableHttp);
        assert_eq!(info.protocol_version, ProtocolVersion::parse("2025-11-25"));
        assert_eq!(conn.list_all_tools().await.expect("tools/list").len(), 1);
        let initializes: Vec<String> =
            server.handshake_requests().into_iter().filter(|r| r.starts_with("POST")).collect();
        assert_eq!(initializes, ["POST /mcp initialize"]);
        assert!(server.log().iter().all(|s| s.path == "/mcp"), "nothing but the MCP endpoint was asked");
        conn.close().await;
    })
    .await;
}

#[tokio::test]
async fn a_500_on_initialize_is_an_error_and_no_fallback() {
    within(async {
        let server = TestServer::start(Shape::Failing(500)).await;
        let conn = McpConnection::remote(&target(server.url("/mcp"), None), options()).unwrap();
        let error = conn.connect().await.expect_err("a 500 fails the connection");
        assert_eq!(http_status(&error), Some(500), "{error:?}");
        assert!(!mcp_manager::connection::calls_for_fallback(&error));
        assert!(error.to_string().contains("HTTP 500") && error.to_string().contains("boom"), "{error}");
        assert!(server.log().iter().all(|s| s.method == Method::POST), "no SSE stream was tried: {:?}", server.log());
        assert!(conn.session().await.is_err(), "not connected");
    })
    .await;
}

#[tokio::test]
async fn an_explicit_sse_transport_opens_the_stream_first() {
    within(async {
        let server = TestServer::start(Shape::Legacy { post_status: 405 }).await;
        let conn = McpConnection::remote(&target(server.url("/sse"), Some(TransportKind::Sse)), options()).unwrap();
        let info = conn.connect().await.expect("connect");
        assert_eq!(info.transport, TransportKind::Sse);
        assert_eq!(server.log()[0].summary(), "GET /sse");
        assert!(server.log().iter().all(|s| s.path != "/sse" || s.method == Method::GET), "{:?}", server.log());
        conn.close().await;
    })
    .await;
}

#[tokio::test]
async fn an_explicit_streamable_transport_does_not_fall_back() {
    within(async {
        let server = TestServer::start(Shape::Legacy { post_status: 405 }).await;
        let target = target(server.url("/sse"), Some(TransportKind::StreamableHttp));
        let conn = McpConnection::remote(&target, options()).unwrap();
        let error = conn.connect().await.expect_err("the server does not speak streamable HTTP");
        assert_eq!(http_status(&error), Some(405), "{error:?}");
        assert!(mcp_manager::connection::calls_for_fallback(&error), "the status would call for it, if implied");
        assert!(server.log().iter().all(|s| s.method == Method::POST), "no SSE stream was tried: {:?}", server.log());
    })
    .await;
}

#[tokio::test]
async fn a_failing_fallback_reports_both_failures() {
    within(async {
        let server = TestServer::start(Shape::Failing(404)).await;
        let conn = McpConnection::remote(&target(server.url("/mcp"), None), options()).unwrap();
        let error = conn.connect().await.expect_err("neither transport works");
        let ConnectionError::FallbackFailed { tried, first, fallback } = &error else {
            panic!("expected FallbackFailed, got {error:?}")
        };
        assert_eq!(*tried, TransportKind::StreamableHttp);
        assert_eq!(http_status(first), Some(404), "{first:?}");
        assert_eq!(http_status(fallback), Some(404), "{fallback:?}");
        let shown = error.to_string();
        assert!(shown.contains("opening the SSE stream: HTTP 404"), "{shown}");
        assert!(shown.contains("falling back from streamable_http") && shown.contains("initialize"), "{shown}");
        assert_eq!(server.handshake_requests(), ["POST /mcp initialize", "GET /mcp"]);
    })
    .await;
}

#[tokio::test]
async fn a_target_naming_a_local_transport_is_refused() {
    let error = McpConnection::remote(&target("http://127.0.0.1:9/".into(), Some(TransportKind::Stdio)), options())
        .expect_err("stdio cannot reach a URL");
    assert!(error.to_string().contains("stdio") && error.to_string().contains("streamable_http"), "{error}");
}

#[test]
fn a_target_never_shows_its_secrets() {
    let mut target = target("http://127.0.0.1:9/mcp?key=secret-query".into(), None);
    target.headers.push(("X-Api-Key".into(), "secret-header".into()));
    let shown = format!("{target:?}");
    assert!(!shown.contains("secret") && !shown.contains("tok-1"), "{shown}");
    assert!(shown.contains("X-Api-Key"), "{shown}");
}
