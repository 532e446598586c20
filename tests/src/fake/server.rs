//! The fake server's main loop: a synchronous read of stdin, typed dispatch with
//! `mcp_protocol`, and threads for answers that come late.

use std::collections::{BTreeMap, HashMap};
use std::io::{self, BufRead};
use std::process::exit;
use std::thread;
use std::time::Duration;

use mcp_protocol::jsonrpc::to_raw;
use mcp_protocol::messages::{ClientRequest, ClientResult, ServerRequest};
use mcp_protocol::types::common::{EmptyResult, Implementation, PaginatedParams, RequestParams};
use mcp_protocol::types::lifecycle::{
    InitializeParams, InitializeResult, PromptsCapability, ResourcesCapability, ServerCapabilities, ToolsCapability,
};
use mcp_protocol::types::logging::{LoggingLevel, LoggingMessageParams};
use mcp_protocol::types::meta::{JsonObject, ProgressToken};
use mcp_protocol::types::progress::ProgressParams;
use mcp_protocol::types::prompts::ListPromptsResult;
use mcp_protocol::types::resources::{ListResourceTemplatesResult, ListResourcesResult, ReadResourceResult};
use mcp_protocol::types::sampling::{CreateMessageParams, SamplingMessage};
use mcp_protocol::types::tools::{CallToolParams, ListToolsResult, Tool};
use mcp_protocol::{
    DecodeLimits, Era, ErrorCode, ErrorObject, Message, Notification, ProtocolVersion, RawJson, Request, RequestId,
    Response, ResponsePayload, codec,
};
use serde_json::{Value, json};

use super::chaos;
use super::config::Config;
use super::out::Out;
use super::tools::{self, Answer};

/// Run the fake server on stdin/stdout until stdin ends.
pub fn run(config: Config) -> ! {
    thread::sleep(config.start_delay);
    for i in 0..config.stderr_lines {
        eprintln!("fake-mcp-server: stderr line {i:03}");
    }
    if config.grandchild {
        spawn_grandchild();
    }
    let mut server = Server::new(config);
    let mut stdin = io::stdin().lock();
    let mut line = Vec::new();
    loop {
        line.clear();
        match stdin.read_until(b'\n', &mut line) {
            Ok(0) => exit(0),
            Ok(_) => {}
            Err(e) => {
                eprintln!("fake-mcp-server: stdin failed: {e}");
                exit(1);
            }
        }
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        match codec::decode_line(&line, &DecodeLimits::default()) {
            Ok(decoded) => {
                for message in decoded.into_messages() {
                    match message {
                        Ok(m) => {
                            let stall = stall_after(&server.config, &m);
                            server.handle(m);
                            if let Some(pause) = stall {
                                thread::sleep(pause);
                            }
                        }
                        Err(e) => eprintln!("fake-mcp-server: dropped a bad batch element: {e}"),
                    }
                }
            }
            Err(e) => {
                eprintln!("fake-mcp-server: bad line: {e}");
                server
                    .out
                    .send(&Message::error_response(None, ErrorObject::new(ErrorCode::PARSE_ERROR, e.to_string())));
            }
        }
    }
}

/// `--stall-stdin-ms`: how long to stop reading stdin after handling `message` (a slow reader
/// from the moment the client has initialized).
fn stall_after(config: &Config, message: &Message) -> Option<Duration> {
    config.stall_stdin.filter(|_| message.method() == Some("notifications/initialized"))
}

/// `sleep 1000` in the server's process group, never waited for.
fn spawn_grandchild() {
    let child = std::process::Command::new("sleep")
        .arg("1000")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn();
    match child {
        Ok(child) => {
            eprintln!("server-pid={}", std::process::id());
            eprintln!("grandchild-pid={}", child.id());
        }
        Err(e) => eprintln!("fake-mcp-server: could not start the grandchild: {e}"),
    }
}

struct Server {
    config: Config,
    out: Out,
    listed_tools: Vec<Tool>,
    /// Requests and notifications received, by method.
    counts: BTreeMap<String, u64>,
    /// The `requestId`s of `notifications/cancelled` received.
    cancelled: Vec<Value>,
    /// tools/call requests received (and not deferred).
    calls: u64,
    /// Requests this server sent to the client and awaits, by id: their method.
    asks: HashMap<RequestId, String>,
    /// The client's answers, to report in the next tools/call result.
    answers: Vec<String>,
    /// tools/call requests waiting for the client's answers.
    deferred: Vec<(RequestId, CallToolParams)>,
    list_changed_sent: bool,
}

/// `to_raw` with its error as a JSON-RPC error (a macro: the fake server does without `serde`).
macro_rules! encode {
    ($value:expr) => {
        to_raw($value).map_err(|e| ErrorObject::new(ErrorCode::INTERNAL_ERROR, e.to_string()))
    };
}

fn method_not_found(method: &str) -> ErrorObject {
    ErrorObject::new(ErrorCode::METHOD_NOT_FOUND, format!("method not found: {method}"))
}

fn cursor(params: Option<PaginatedParams>) -> Option<String> {
    params.and_then(|p| p.cursor)
}

impl Server {
    fn new(config: Config) -> Server {
        let mut listed_tools = match config.tools {
            Some(n) => tools::generated(n),
            None => tools::builtin(),
        };
        if config.duplicate_tool
            && let Some(first) = listed_tools.first().cloned()
        {
            listed_tools.push(first);
        }
        if let Some(name) = &config.chaos {
            listed_tools.push(chaos::tool(name));
        }
        Server {
            out: Out::new(config.banner),
            config,
            listed_tools,
            counts: BTreeMap::new(),
            cancelled: Vec::new(),
            calls: 0,
            asks: HashMap::new(),
            answers: Vec::new(),
            deferred: Vec::new(),
            list_changed_sent: false,
        }
    }

    fn handle(&mut self, message: Message) {
        if let Some(method) = message.method() {
            *self.counts.entry(method.to_owned()).or_default() += 1;
        }
        match message {
            Message::Request(r) => self.request(r),
            Message::Notification(n) => self.notification(n),
            Message::Response(r) => self.response(r),
        }
    }

    fn reply(&self, id: RequestId, result: Result<RawJson, ErrorObject>) {
        let message = match result {
            Ok(raw) => Message::Response(Response::result(id, raw)),
            Err(error) => Message::error_response(Some(id), error),
        };
        self.out.send(&message);
    }

    fn request(&mut self, request: Request) {
        let typed = match ClientRequest::from_request(&request) {
            Ok(t) => t,
            Err(e) => {
                let error = ErrorObject::new(ErrorCode::INVALID_PARAMS, format!("invalid params: {e}"));
                return self.reply(request.id, Err(error));
            }
        };
        if self.list_hangs(&request.method) {
            return;
        }
        let c = &self.config;
        let result = match typed {
            ClientRequest::Initialize(Some(p)) => self.initialize(p),
            ClientRequest::Ping(_) => encode!(&EmptyResult::default()),
            ClientRequest::ListTools(p) => self.page(&self.listed_tools, cursor(p)).and_then(|(tools, next_cursor)| {
                encode!(&ListToolsResult { tools, next_cursor, ..Default::default() })
            }),
            ClientRequest::CallTool(Some(p)) => return self.call_tool(request.id, p),
            ClientRequest::ListPrompts(p) if c.prompts && !c.no_method_prompts => {
                self.page(&tools::prompts(), cursor(p)).and_then(|(prompts, next_cursor)| {
                    encode!(&ListPromptsResult { prompts, next_cursor, ..Default::default() })
                })
            }
            ClientRequest::GetPrompt(Some(p)) if c.prompts => tools::get_prompt(&p).and_then(|r| encode!(&r)),
            ClientRequest::ListResources(p) if c.resources => {
                self.page(&tools::resources(), cursor(p)).and_then(|(resources, next_cursor)| {
                    encode!(&ListResourcesResult { resources, next_cursor, ..Default::default() })
                })
            }
            ClientRequest::ListResourceTemplates(p) if c.resources => {
                self.page(&tools::resource_templates(), cursor(p)).and_then(|(resource_templates, next_cursor)| {
                    encode!(&ListResourceTemplatesResult { resource_templates, next_cursor, ..Default::default() })
                })
            }
            ClientRequest::ReadResource(Some(p)) if c.resources => tools::read_resource(&p.uri)
                .and_then(|contents| encode!(&ReadResourceResult { contents: vec![contents], ..Default::default() })),
            ClientRequest::Subscribe(_) | ClientRequest::Unsubscribe(_) if c.resources => {
                encode!(&EmptyResult::default())
            }
            ClientRequest::SetLevel(_) if c.log => encode!(&EmptyResult::default()),
            other => Err(method_not_found(other.method())),
        };
        let result = self.with_list_ttl(&request.method, result);
        self.reply(request.id, result);
    }

    /// `--hang-list-after N`: whether this `*/list` request (already counted) is past the N-th.
    fn list_hangs(&self, method: &str) -> bool {
        let Some(n) = self.config.hang_list_after else { return false };
        let lists: u64 = self.counts.iter().filter(|(m, _)| m.ends_with("/list")).map(|(_, k)| k).sum();
        method.ends_with("/list") && lists > n
    }

    /// `--list-ttl-ms MS`: add `ttlMs` to a `*/list` result.
    fn with_list_ttl(&self, method: &str, result: Result<RawJson, ErrorObject>) -> Result<RawJson, ErrorObject> {
        let (Some(ttl), true, Ok(raw)) = (self.config.list_ttl_ms, method.ends_with("/list"), &result) else {
            return result;
        };
        let mut value: Value = serde_json::from_str(raw.get()).unwrap_or_default();
        if let Some(object) = value.as_object_mut() {
            object.insert("ttlMs".into(), json!(ttl));
        }
        encode!(&value)
    }

    fn initialize(&self, params: InitializeParams) -> Result<RawJson, ErrorObject> {
        let c = &self.config;
        if c.fail_initialize {
            return Err(ErrorObject::new(
                ErrorCode::INTERNAL_ERROR,
                "initialize refused: this server was started with --fail-initialize",
            ));
        }
        let protocol_version = match &c.protocol {
            Some(v) => v.clone(),
            None => {
                let offered = ProtocolVersion::parse(&params.protocol_version);
                let chosen = if offered.era() == Some(Era::Legacy) { offered } else { ProtocolVersion::LATEST_LEGACY };
                chosen.as_str().to_owned()
            }
        };
        let capabilities = ServerCapabilities {
            tools: Some(ToolsCapability { list_changed: Some(c.list_changed), ..Default::default() }),
            prompts: c.prompts.then(PromptsCapability::default),
            resources: c.resources.then(|| ResourcesCapability { subscribe: Some(true), ..Default::default() }),
            logging: c.log.then(JsonObject::new),
            ..Default::default()
        };
        encode!(&InitializeResult {
            protocol_version,
            capabilities,
            server_info: Implementation::new("fake-mcp-server", "1.0.0"),
            instructions: Some("A scriptable fake server for tests.".into()),
            ..Default::default()
        })
    }

    /// One page of `items`: cursors are `page-K`, K the index of the page they lead to.
    fn page<T: Clone>(&self, items: &[T], cursor: Option<String>) -> Result<(Vec<T>, Option<String>), ErrorObject> {
        let size = self.config.page_size.unwrap_or(usize::MAX);
        let index = match cursor {
            None => 0,
            Some(c) => c
                .strip_prefix("page-")
                .and_then(|k| k.parse::<usize>().ok())
                .ok_or_else(|| ErrorObject::new(ErrorCode::INVALID_PARAMS, format!("unknown cursor {c:?}")))?,
        };
        let start = index.saturating_mul(size).min(items.len());
        let end = start.saturating_add(size).min(items.len());
        let next = (end < items.len()).then(|| {
            // --repeat-cursor: the second page sends the first page's cursor again.
            let k = if self.config.repeat_cursor && index == 1 { 1 } else { index + 1 };
            format!("page-{k}")
        });
        Ok((items[start..end].to_vec(), next))
    }

    fn stats(&self) -> Value {
        json!({"calls": self.calls, "requests": self.counts, "cancelled": self.cancelled})
    }

    fn call_tool(&mut self, id: RequestId, params: CallToolParams) {
        if self.config.chaos.as_ref() == Some(&params.name) {
            return chaos::call(self.out, id, &params);
        }
        if !self.asks.is_empty() {
            // Report the client's answers in this call's result: wait for them first.
            self.deferred.push((id, params));
            return;
        }
        self.calls += 1;
        let c = &self.config;
        if let Some(k) = c.crash_after
            && self.calls > k
        {
            eprintln!("fake-mcp-server: crashing on tools/call #{} (--crash-after {k})", self.calls);
            exit(3);
        }
        if c.hang {
            return;
        }
        if c.log {
            let log = LoggingMessageParams {
                level: LoggingLevel::Info,
                logger: Some("fake".into()),
                data: json!({"tool": params.name}),
                meta: None,
                extra: JsonObject::new(),
            };
            self.out.send(&Message::notification("notifications/message", Some(&log)).expect("encodes"));
        }
        let (mut answer, tool_delay) = tools::call(&params, self.stats(), c.huge_mib);
        if let Answer::Done(Ok(result)) = &mut answer {
            for report in self.answers.drain(..) {
                result
                    .content
                    .push(mcp_protocol::types::content::ContentBlock::text(format!("client answered {report}")));
            }
        }
        let list_changed = c.list_changed && !self.list_changed_sent;
        self.list_changed_sent |= list_changed;
        if list_changed {
            // What changed: one more tool, listed from now on.
            let mut late = tools::generated(1).remove(0);
            late.name = "late-tool".into();
            self.listed_tools.push(late);
        }
        let reply = Reply {
            id,
            answer,
            delay: tool_delay + c.slow.unwrap_or_default(),
            progress: if c.progress { params.meta.as_ref().and_then(|m| m.progress_token()) } else { None },
            wrong_id: c.wrong_id,
            duplicate: c.duplicate_id,
            list_changed,
        };
        let out = self.out;
        if reply.delay.is_zero() && reply.progress.is_none() {
            reply.deliver(out);
        } else {
            thread::spawn(move || reply.deliver(out));
        }
    }

    fn notification(&mut self, n: Notification) {
        match n.method.as_str() {
            "notifications/initialized" => self.ask_client(),
            "notifications/cancelled" => {
                let params: Value = n.params.and_then(|p| serde_json::from_str(p.get()).ok()).unwrap_or_default();
                self.cancelled.push(params.get("requestId").cloned().unwrap_or_default());
            }
            _ => {}
        }
    }

    /// `--ask-*`: the requests to the client, sent once initialized.
    fn ask_client(&mut self) {
        let mut requests = Vec::new();
        if self.config.ask_roots {
            requests.push(ServerRequest::ListRoots(Some(RequestParams::default())));
        }
        if self.config.ask_sampling {
            requests.push(ServerRequest::CreateMessage(Some(CreateMessageParams {
                messages: vec![SamplingMessage::user_text("What is 2+2?")],
                max_tokens: 16,
                ..Default::default()
            })));
        }
        if self.config.ask_unknown {
            requests.push(ServerRequest::Other { method: "foo/bar".into(), params: Some(json!({})) });
        }
        for (n, request) in requests.into_iter().enumerate() {
            let id = RequestId::String(format!("ask-{n}"));
            self.asks.insert(id.clone(), request.method().to_owned());
            let request = request.into_request(id).expect("encodes");
            self.out.send(&Message::Request(request));
        }
    }

    fn response(&mut self, response: Response) {
        let Some(method) = response.id.as_ref().and_then(|id| self.asks.remove(id)) else {
            eprintln!("fake-mcp-server: a response to no request of mine: {:?}", response.id);
            return;
        };
        let report = match response.payload {
            ResponsePayload::Result(raw) => match ClientResult::decode(&method, &raw) {
                Ok(typed) => format!("{method} => {}", typed.to_raw().map(|r| r.get().to_owned()).unwrap_or_default()),
                Err(e) => format!("{method} => an invalid result ({e}): {}", raw.get()),
            },
            ResponsePayload::Error(e) => format!("{method} => error {e}"),
        };
        self.answers.push(report);
        if self.asks.is_empty() {
            for (id, params) in std::mem::take(&mut self.deferred) {
                self.call_tool(id, params);
            }
        }
    }
}

/// The answer to one tools/call, with the faults it is delivered with.
struct Reply {
    id: RequestId,
    answer: Answer,
    delay: Duration,
    progress: Option<ProgressToken>,
    wrong_id: bool,
    duplicate: bool,
    list_changed: bool,
}

impl Reply {
    fn deliver(self, out: Out) {
        match &self.progress {
            Some(token) => {
                // A notification at least every 100 ms while the tool works, and at least three.
                let steps = (self.delay.as_millis() / 100).max(3) as u32;
                for i in 1..=steps {
                    let mut p = ProgressParams::new(token.clone(), f64::from(i)).with_total(f64::from(steps));
                    p.message = Some(format!("step {i} of {steps}"));
                    out.send(&Message::notification("notifications/progress", Some(&p)).expect("encodes"));
                    thread::sleep(self.delay / steps);
                }
            }
            None => thread::sleep(self.delay),
        }
        let id = if self.wrong_id {
            match self.id {
                RequestId::Number(n) => RequestId::Number(n + 1_000_000),
                RequestId::String(s) => RequestId::String(format!("wrong-{s}")),
            }
        } else {
            self.id
        };
        match self.answer {
            Answer::Huge(mib) => out.send_huge(&id, mib),
            Answer::Done(result) => {
                let message = match result.and_then(|r| encode!(&r)) {
                    Ok(raw) => Message::Response(Response::result(id, raw)),
                    Err(error) => Message::error_response(Some(id), error),
                };
                out.send(&message);
                if self.duplicate {
                    out.send(&message);
                }
            }
        }
        if self.list_changed {
            let n = Message::notification("notifications/tools/list_changed", Some(&RequestParams::default()));
            out.send(&n.expect("encodes"));
        }
    }
}
