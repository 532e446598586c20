//! A scriptable, in-process fake of an OpenAI-compatible chat-completions server.
//!
//! [`FakeLlm::start`] listens on 127.0.0.1 (a free port) and answers every request with the
//! next scripted [`Reply`] (when the script is used up: the fallback, by default a 500 that
//! says so). Every request is recorded ([`FakeLlm::requests`]). Dropping the fake stops it and
//! ends replies still waiting out a delay.
//!
//! Checks ([`FakeLlm::check_requests`]) make it as strict as a real endpoint: a request a check
//! refuses gets the check's reply (and uses up no scripted reply). [`openai_rules`] refuses what
//! OpenAI refuses (`tool_choice` without `tools`), [`refuse_parameter`] a parameter the model does
//! not take (`max_tokens` on OpenAI's reasoning models), each with OpenAI's error body.
//!
//! ```no_run
//! # async fn demo() {
//! use tests::fake_llm::{FakeLlm, Reply};
//! let llm = FakeLlm::start().await;
//! llm.push(Reply::status(429, "slow down").with_header("retry-after", "0"));
//! llm.push(Reply::text("hello"));
//! // Point an OpenAI-compatible client at `llm.base_url()`.
//! # }
//! ```

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::State as Extract;
use axum::http::{HeaderMap, Method, StatusCode, Uri, header};
use axum::response::Response;
use serde_json::{Value, json};
use tokio::sync::watch;

/// The model name the canned replies report.
pub const FAKE_MODEL: &str = "fake-model";

/// One scripted answer.
#[derive(Debug, Clone)]
pub struct Reply {
    status: u16,
    headers: Vec<(String, String)>,
    body: String,
    delay: Duration,
}

impl Reply {
    /// Any status with a JSON body.
    pub fn json(status: u16, body: Value) -> Self {
        Reply {
            status,
            headers: vec![("content-type".into(), "application/json".into())],
            body: body.to_string(),
            delay: Duration::ZERO,
        }
    }

    /// Any status with a plain-text body.
    pub fn status(status: u16, body: &str) -> Self {
        Reply {
            status,
            headers: vec![("content-type".into(), "text/plain".into())],
            body: body.to_owned(),
            delay: Duration::ZERO,
        }
    }

    /// A 200 chat completion: `text`, finish reason `stop`.
    pub fn text(text: &str) -> Self {
        Reply::json(200, completion(json!({"role": "assistant", "content": text}), "stop"))
    }

    /// A 200 chat completion that calls tools: `(id, name, arguments as the model wrote them)`.
    pub fn tool_calls(calls: &[(&str, &str, &str)]) -> Self {
        let calls: Vec<Value> = calls
            .iter()
            .map(|(id, name, arguments)| {
                json!({"id": id, "type": "function", "function": {"name": name, "arguments": arguments}})
            })
            .collect();
        Reply::json(200, completion(json!({"role": "assistant", "content": null, "tool_calls": calls}), "tool_calls"))
    }

    /// The same reply with one more header.
    pub fn with_header(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.to_owned(), value.to_owned()));
        self
    }

    /// The same reply, sent after `delay` (or never, if the fake stops first).
    pub fn after(mut self, delay: Duration) -> Self {
        self.delay = delay;
        self
    }
}

/// A chat-completions body with one choice holding `message`.
pub fn completion(message: Value, finish_reason: &str) -> Value {
    json!({
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": 0,
        "model": FAKE_MODEL,
        "choices": [{"index": 0, "message": message, "finish_reason": finish_reason}],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}
    })
}

/// A request the fake received.
#[derive(Debug, Clone)]
pub struct RecordedRequest {
    /// The HTTP method.
    pub method: String,
    /// The path, e.g. `/v1/chat/completions`.
    pub path: String,
    /// The `Authorization` header, if any.
    pub authorization: Option<String>,
    /// The body as JSON (`Value::Null` when it is not JSON).
    pub body: Value,
}

/// A check of each chat request's JSON body: `Some(reply)` refuses it with that reply.
pub type Check = Arc<dyn Fn(&Value) -> Option<Reply> + Send + Sync>;

/// OpenAI's error body: `{"error": {"message", "type": "invalid_request_error", "param", "code"}}`.
pub fn openai_error(status: u16, message: &str, param: &str, code: Option<&str>) -> Reply {
    Reply::json(
        status,
        json!({"error": {"message": message, "type": "invalid_request_error", "param": param, "code": code}}),
    )
}

/// What OpenAI refuses with a 400 (and vLLM too): a `tool_choice` without `tools`.
pub fn openai_rules() -> Check {
    Arc::new(|body: &Value| {
        let has_tools = body.get("tools").and_then(Value::as_array).is_some_and(|t| !t.is_empty());
        (body.get("tool_choice").is_some() && !has_tools).then(|| {
            openai_error(
                400,
                "Invalid value for 'tool_choice': 'tool_choice' is only allowed when 'tools' are specified.",
                "tool_choice",
                None,
            )
        })
    })
}

/// A 400 for any request that carries `parameter`, as OpenAI answers `max_tokens` on its
/// reasoning models: `Unsupported parameter: 'max_tokens' is not supported with this model. Use
/// 'max_completion_tokens' instead.` (`instead` names the parameter to use).
pub fn refuse_parameter(parameter: &'static str, instead: &'static str) -> Check {
    Arc::new(move |body: &Value| {
        body.get(parameter).is_some().then(|| {
            let message = format!(
                "Unsupported parameter: '{parameter}' is not supported with this model. Use '{instead}' instead."
            );
            openai_error(400, &message, parameter, Some("unsupported_parameter"))
        })
    })
}

struct State {
    checks: Mutex<Vec<Check>>,
    script: Mutex<VecDeque<Reply>>,
    fallback: Mutex<Reply>,
    requests: Mutex<Vec<RecordedRequest>>,
    stopped: watch::Receiver<bool>,
}

/// The running fake. Stops when dropped.
pub struct FakeLlm {
    addr: SocketAddr,
    state: Arc<State>,
    stop: watch::Sender<bool>,
    task: tokio::task::JoinHandle<()>,
}

impl std::fmt::Debug for FakeLlm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FakeLlm").field("addr", &self.addr).finish_non_exhaustive()
    }
}

impl FakeLlm {
    /// Start on 127.0.0.1, port 0.
    pub async fn start() -> FakeLlm {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind 127.0.0.1:0");
        let addr = listener.local_addr().expect("local address");
        let (stop, stopped) = watch::channel(false);
        let state = Arc::new(State {
            checks: Mutex::new(Vec::new()),
            script: Mutex::new(VecDeque::new()),
            fallback: Mutex::new(Reply::status(500, "the fake LLM has no scripted reply left")),
            requests: Mutex::new(Vec::new()),
            stopped,
        });
        let app = axum::Router::new().fallback(handle).with_state(state.clone());
        let mut until_stopped = stop.subscribe();
        let task = tokio::spawn(async move {
            let server = axum::serve(listener, app).with_graceful_shutdown(async move {
                let _ = until_stopped.wait_for(|s| *s).await;
            });
            let _ = server.await;
        });
        FakeLlm { addr, state, stop, task }
    }

    /// The API root to give a client: `http://127.0.0.1:<port>/v1`.
    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// Add a reply to the script.
    pub fn push(&self, reply: Reply) {
        self.state.script.lock().unwrap_or_else(|p| p.into_inner()).push_back(reply);
    }

    /// What to answer once the script is used up.
    pub fn set_fallback(&self, reply: Reply) {
        *self.state.fallback.lock().unwrap_or_else(|p| p.into_inner()) = reply;
    }

    /// Check every chat request from now on (after the checks given before): the first check
    /// that refuses a request answers it.
    pub fn check_requests(&self, check: Check) {
        self.state.checks.lock().unwrap_or_else(|p| p.into_inner()).push(check);
    }

    /// Every request so far, in order.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.state.requests.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }
}

impl Drop for FakeLlm {
    fn drop(&mut self) {
        let _ = self.stop.send(true);
        self.task.abort();
    }
}

async fn handle(
    Extract(state): Extract<Arc<State>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let authorization = headers.get(header::AUTHORIZATION).and_then(|v| v.to_str().ok()).map(str::to_owned);
    let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let checks = state.checks.lock().unwrap_or_else(|p| p.into_inner()).clone();
    let refused = checks.iter().find_map(|check| check(&body));
    let recorded = RecordedRequest { method: method.to_string(), path: uri.path().to_owned(), authorization, body };
    state.requests.lock().unwrap_or_else(|p| p.into_inner()).push(recorded);
    let chat = method == Method::POST && uri.path().ends_with("/chat/completions");
    let reply = if let Some(refusal) = refused.filter(|_| chat) {
        refusal
    } else if chat {
        let next = state.script.lock().unwrap_or_else(|p| p.into_inner()).pop_front();
        next.unwrap_or_else(|| state.fallback.lock().unwrap_or_else(|p| p.into_inner()).clone())
    } else {
        Reply::status(404, "only POST /v1/chat/completions is served")
    };
    if !reply.delay.is_zero() {
        let mut stopped = state.stopped.clone();
        tokio::select! {
            _ = tokio::time::sleep(reply.delay) => {}
            _ = stopped.wait_for(|s| *s) => {}
        }
    }
    let mut response =
        Response::builder().status(StatusCode::from_u16(reply.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR));
    for (name, value) in &reply.headers {
        response = response.header(name.as_str(), value.as_str());
    }
    response.body(Body::from(reply.body)).unwrap_or_else(|_| Response::new(Body::from("invalid scripted reply")))
}
