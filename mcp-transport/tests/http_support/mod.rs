//! In-process HTTP servers for the HTTP transport tests: an axum server on 127.0.0.1:0 whose
//! every answer comes from a script, and which records every request it got.

#![allow(dead_code)]

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use axum::response::Response;
use mcp_protocol::{Message, RequestId};
use mcp_transport::{ResumePolicy, StreamableHttpConfig, Transport, TransportEvent};
use serde_json::{Value, json};

/// One request the server got.
#[derive(Debug, Clone)]
pub struct Req {
    pub method: Method,
    pub uri: Uri,
    pub headers: HeaderMap,
    pub body: Option<Value>,
}

impl Req {
    /// A header's value (the first one).
    pub fn header(&self, name: &str) -> Option<String> {
        self.headers.get(name).map(|v| v.to_str().unwrap().to_owned())
    }

    /// Every value of a header.
    pub fn header_values(&self, name: &str) -> Vec<String> {
        self.headers.get_all(name).iter().map(|v| v.to_str().unwrap().to_owned()).collect()
    }

    /// The JSON-RPC method of the body.
    pub fn rpc_method(&self) -> Option<&str> {
        self.body.as_ref()?.get("method")?.as_str()
    }

    /// The JSON-RPC id of the body.
    pub fn rpc_id(&self) -> Option<Value> {
        self.body.as_ref()?.get("id").cloned()
    }

    /// A one-line description, for assertions on the sequence of requests.
    pub fn summary(&self) -> String {
        match self.rpc_method() {
            Some(m) => format!("{} {m}", self.method),
            None if self.body.as_ref().is_some_and(|b| b.get("result").is_some()) => {
                format!("{} response", self.method)
            }
            None => self.method.to_string(),
        }
    }
}

type Script = Arc<dyn Fn(&Req) -> Response + Send + Sync>;

struct ServerState {
    log: Mutex<Vec<Req>>,
    script: Script,
}

/// A running test server.
#[derive(Clone)]
pub struct Server {
    pub addr: SocketAddr,
    state: Arc<ServerState>,
}

impl Server {
    /// Start a server answering every request with `script`.
    pub async fn start(script: impl Fn(&Req) -> Response + Send + Sync + 'static) -> Server {
        let state = Arc::new(ServerState { log: Mutex::new(Vec::new()), script: Arc::new(script) });
        let app = axum::Router::new().fallback(handle).with_state(state.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        Server { addr, state }
    }

    /// The URL of `path` on this server.
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    /// Every request so far.
    pub fn log(&self) -> Vec<Req> {
        self.state.log.lock().unwrap().clone()
    }

    /// The requests so far, summarised, GETs left out.
    pub fn posts(&self) -> Vec<String> {
        self.log().iter().filter(|r| r.method != Method::GET).map(Req::summary).collect()
    }

    /// The GET requests so far.
    pub fn gets(&self) -> Vec<Req> {
        self.log().into_iter().filter(|r| r.method == Method::GET).collect()
    }

    /// Wait until `pred` holds for the log.
    pub async fn wait_for(&self, pred: impl Fn(&[Req]) -> bool) {
        loop {
            if pred(&self.log()) {
                return;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }
}

async fn handle(
    State(state): State<Arc<ServerState>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let body = serde_json::from_slice(&body).ok();
    let req = Req { method, uri, headers, body };
    state.log.lock().unwrap().push(req.clone());
    (state.script)(&req)
}

/// A response with a JSON body.
pub fn json_response(status: u16, headers: &[(&str, &str)], body: &Value) -> Response {
    text_response(status, "application/json", headers, &body.to_string())
}

/// A response with any body.
pub fn text_response(status: u16, content_type: &str, headers: &[(&str, &str)], body: &str) -> Response {
    let mut builder =
        Response::builder().status(StatusCode::from_u16(status).unwrap()).header("content-type", content_type);
    for (k, v) in headers {
        builder = builder.header(*k, *v);
    }
    builder.body(Body::from(body.to_owned())).unwrap()
}

/// An empty response.
pub fn status(status: u16) -> Response {
    Response::builder().status(StatusCode::from_u16(status).unwrap()).body(Body::empty()).unwrap()
}

/// The JSON-RPC result answering `req`.
pub fn result_for(req: &Req, result: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": req.rpc_id().unwrap(), "result": result})
}

/// An initialize result naming `version`.
pub fn initialize_result(version: &str) -> Value {
    json!({"protocolVersion": version, "capabilities": {}, "serverInfo": {"name": "test", "version": "1"}})
}

/// What an SSE response body does, step by step.
pub enum Step {
    /// Send these bytes.
    Send(String),
    /// Wait.
    Sleep(Duration),
    /// Break the connection.
    Reset,
    /// Stay open without sending anything.
    Hang,
}

/// One SSE event.
pub fn event(id: Option<&str>, data: &str) -> Step {
    let mut text = String::new();
    if let Some(id) = id {
        text.push_str(&format!("id: {id}\n"));
    }
    for line in data.split('\n') {
        text.push_str(&format!("data: {line}\n"));
    }
    text.push('\n');
    Step::Send(text)
}

/// An SSE event carrying a JSON value.
pub fn json_event(id: Option<&str>, value: &Value) -> Step {
    event(id, &value.to_string())
}

/// An SSE response following `steps`, then ending.
pub fn sse_response(headers: &[(&str, &str)], steps: Vec<Step>) -> Response {
    let steps: VecDeque<Step> = steps.into();
    let body = futures::stream::unfold(steps, |mut steps| async move {
        loop {
            match steps.pop_front()? {
                Step::Send(text) => return Some((Ok(Bytes::from(text)), steps)),
                Step::Sleep(d) => tokio::time::sleep(d).await,
                Step::Reset => return Some((Err(std::io::Error::other("reset")), steps)),
                Step::Hang => futures::future::pending::<()>().await,
            }
        }
    });
    let mut builder =
        Response::builder().status(200).header("content-type", "text/event-stream").header("cache-control", "no-cache");
    for (k, v) in headers {
        builder = builder.header(*k, *v);
    }
    builder.body(Body::from_stream(body)).unwrap()
}

/// A config for `url` with short delays for tests.
pub fn config(url: &str) -> StreamableHttpConfig {
    let mut config = StreamableHttpConfig::new("test-server", url);
    config.connect_timeout = Duration::from_secs(5);
    config.read_timeout = Duration::from_secs(5);
    config.resume = ResumePolicy {
        max_retries: 3,
        initial_backoff: Duration::from_millis(20),
        max_backoff: Duration::from_millis(100),
    };
    config
}

/// A request message.
pub fn request(id: i64, method: &str, params: Value) -> Message {
    Message::request(RequestId::Number(id), method, Some(&params)).unwrap()
}

/// A notification message.
pub fn notification(method: &str) -> Message {
    Message::notification::<()>(method, None).unwrap()
}

/// The client's initialize request.
pub fn initialize(id: i64) -> Message {
    request(
        id,
        "initialize",
        json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}),
    )
}

/// The next event, within 10 s.
pub async fn next_event(transport: &dyn Transport) -> TransportEvent {
    tokio::time::timeout(Duration::from_secs(10), transport.recv()).await.expect("no event within 10 s")
}

/// The next event, which must be a message.
pub async fn next_message(transport: &dyn Transport) -> Message {
    match next_event(transport).await {
        TransportEvent::Message(m) => m,
        other => panic!("expected a message, got {other:?}"),
    }
}

/// The next event, which must be the failure of request `id`; its error text.
pub async fn next_failure(transport: &dyn Transport, id: i64) -> String {
    next_failure_error(transport, id).await.to_string()
}

/// The next event, which must be the failure of request `id`; its error.
pub async fn next_failure_error(transport: &dyn Transport, id: i64) -> mcp_transport::TransportError {
    match next_event(transport).await {
        TransportEvent::RequestFailed { id: failed, error } => {
            assert_eq!(failed, RequestId::Number(id));
            error
        }
        other => panic!("expected the failure of request {id}, got {other:?}"),
    }
}

/// Assert that no event arrives within `ms` milliseconds.
pub async fn no_event(transport: &dyn Transport, ms: u64) {
    if let Ok(event) = tokio::time::timeout(Duration::from_millis(ms), transport.recv()).await {
        panic!("unexpected event {event:?}");
    }
}

/// The id of a response message.
pub fn response_id(message: &Message) -> RequestId {
    match message {
        Message::Response(r) => r.id.clone().expect("a response id"),
        other => panic!("expected a response, got {other:?}"),
    }
}
