//! Every JSON-RPC message of the captured wire corpus (`<workspace>/../shared/corpus/*.ndjson`)
//! decodes through the codec from its exact wire text into the typed messages — typed down to the
//! params and result of its method — and re-encodes to a JSON value equal to the original.
//!
//! - Requests and notifications are typed by their method and direction ([`ClientRequest`],
//!   [`ServerRequest`], [`ClientNotification`], [`ServerNotification`]).
//! - A response is typed by the method of the request it answers, matched by id within its
//!   session, connection and direction (a client->server request is answered server->client);
//!   an error response without id is matched through its HTTP exchange.
//! - Only `unknown-method` kinds may fall into the `Other` variants; the kind suffixes
//!   `[input_required]`, `[task]` and `[retry-with-inputResponses]` must show in the typed form;
//!   multi round-trip input requests and responses, content blocks, elicitation schemas, task
//!   payloads and typed error data must not fall back to their untyped variants.
//! - Lines without a message are skipped by their documented kind; the `{}` events
//!   (`sse:empty-object`) must be rejected by the codec as [`DecodeError::NotJsonRpc`].
//!
//! Failures are collected over the whole corpus and reported together, with `file:seq`, the
//! kind and the first differing JSON pointer. Run with `-- --nocapture` to see the summary.

mod corpus;

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use corpus::{Kind, Line, first_difference, short};
use mcp_protocol::codec::{DecodeError, DecodeLimits, Decoded, decode_line};
use mcp_protocol::messages::{
    ClientNotification, ClientRequest, ClientResult, ServerNotification, ServerRequest, ServerResult,
};
use mcp_protocol::types::completion::Reference;
use mcp_protocol::types::content::ContentBlock;
use mcp_protocol::types::discover::{MissingRequiredClientCapabilityData, UnsupportedProtocolVersionData};
use mcp_protocol::types::elicitation::{ElicitParams, PrimitiveSchemaDefinition, UrlElicitationRequiredData};
use mcp_protocol::types::mrtr::{InputRequest, InputRequests, InputResponse, InputResponses, Outcome};
use mcp_protocol::types::sampling::{CreateMessageParams, SamplingMessage};
use mcp_protocol::types::tools::CallToolResult;
use mcp_protocol::{ErrorCode, ErrorObject, Message, RequestId, Response, ResponsePayload};
use serde::Serialize;
use serde_json::Value;

/// Kinds of lines that carry no JSON-RPC message (`message: null`), skipped by kind.
const NO_MESSAGE_KINDS: &[&str] =
    &["http:GET", "http:DELETE", "sse:endpoint", "sse:priming", "http:stream-dropped-by-tap"];

/// The kind of the `{}` events a replaying event store sends: JSON, but not JSON-RPC.
const EMPTY_OBJECT_KIND: &str = "sse:empty-object";

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Direction {
    ClientToServer,
    ServerToClient,
}

impl Direction {
    fn parse(s: &str) -> Result<Direction, String> {
        match s {
            "client->server" => Ok(Direction::ClientToServer),
            "server->client" => Ok(Direction::ServerToClient),
            other => Err(format!("unknown direction {other:?}")),
        }
    }

    fn opposite(self) -> Direction {
        match self {
            Direction::ClientToServer => Direction::ServerToClient,
            Direction::ServerToClient => Direction::ClientToServer,
        }
    }
}

/// A request as seen on the wire: connection, direction and id.
type RequestKey = (Option<u64>, Direction, RequestId);

/// What one session (one file) has seen so far.
#[derive(Default)]
struct Session {
    /// The method of every request, by connection, direction and id.
    requests: HashMap<RequestKey, String>,
    /// The method of the request each HTTP exchange carried, for error responses without id.
    exchanges: HashMap<u64, String>,
    /// Requests whose params did not decode into their type (invalid on the wire), with whether
    /// the peer answered them with an error yet.
    invalid_requests: HashMap<RequestKey, (String, bool)>,
    /// Input requests of the `input_required` results, by `requestState`.
    input_requests: HashMap<String, InputRequests>,
    /// The method of the task-augmented request that created each task, by task id.
    tasks: HashMap<String, String>,
}

struct Failure {
    at: String,
    kind: String,
    what: String,
}

#[derive(Default)]
struct Run {
    files: usize,
    lines: usize,
    decoded: BTreeMap<&'static str, usize>,
    by_revision: BTreeMap<String, usize>,
    by_transport: BTreeMap<String, usize>,
    skipped: BTreeMap<String, usize>,
    not_json_rpc: usize,
    typed: BTreeMap<&'static str, usize>,
    /// Requests whose params the typed layer rejected, as `session:seq method: error`.
    invalid: Vec<String>,
    failures: Vec<Failure>,
}

/// What checking one message found wrong, beyond a failure that stops it.
type Problems = Vec<String>;

#[test]
fn every_corpus_message_round_trips_through_the_typed_messages() {
    let dir = corpus::dir();
    let files = corpus::files(&dir);
    assert!(!files.is_empty(), "no *.ndjson file in {}", dir.display());
    let mut run = Run::default();
    for path in &files {
        run.file(path);
    }
    run.report(&dir);
}

impl Run {
    fn file(&mut self, path: &Path) {
        self.files += 1;
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
        let mut session = Session::default();
        for (n, text) in text.lines().enumerate() {
            self.lines += 1;
            let line: Line = match serde_json::from_str(text) {
                Ok(line) => line,
                Err(e) => {
                    self.fail(format!("{name}:{n}"), "?", format!("corpus line does not parse: {e}"));
                    continue;
                }
            };
            let at = format!("{name}:{}", line.seq);
            let mut problems = Problems::new();
            if Some(line.session.as_str()) != path.file_stem().and_then(|s| s.to_str()) {
                problems.push(format!("line of session {:?} in another session's file", line.session));
            }
            if let Err(e) = self.line(&mut session, &line, &mut problems) {
                problems.push(e);
            }
            for what in problems {
                self.fail(at.clone(), &line.kind, what);
            }
        }
        for ((_, _, id), (method, answered)) in &session.invalid_requests {
            if !answered {
                self.fail(
                    name.clone(),
                    "",
                    format!("{method} request {id} did not decode into its type and got no error response"),
                );
            }
        }
    }

    fn fail(&mut self, at: String, kind: &str, what: String) {
        self.failures.push(Failure { at, kind: kind.to_owned(), what });
    }

    fn line(&mut self, session: &mut Session, line: &Line, p: &mut Problems) -> Result<(), String> {
        if line.kind == EMPTY_OBJECT_KIND {
            if line.message.as_ref().is_none_or(|m| m.as_object().is_none_or(|o| !o.is_empty())) {
                return Err(format!("{EMPTY_OBJECT_KIND} line whose message is not {{}}"));
            }
            let wire = line.wire_text().unwrap();
            return match decode_line(wire.as_bytes(), &DecodeLimits::default()) {
                Err(DecodeError::NotJsonRpc(_)) => {
                    self.not_json_rpc += 1;
                    Ok(())
                }
                other => Err(format!("{wire:?} must decode as DecodeError::NotJsonRpc, got {other:?}")),
            };
        }
        let Some(message) = &line.message else {
            if !NO_MESSAGE_KINDS.contains(&line.kind.as_str()) {
                return Err("no message, and the kind is not one documented for lines without one".into());
            }
            *self.skipped.entry(line.kind.clone()).or_default() += 1;
            return Ok(());
        };
        if NO_MESSAGE_KINDS.contains(&line.kind.as_str()) {
            return Err("a message on a line whose kind says it carries none".into());
        }
        let kind = Kind::parse(&line.kind).ok_or("kind does not parse")?;
        let direction = Direction::parse(&line.direction)?;
        let wire = line.wire_text().unwrap();
        let decoded = match decode_line(wire.as_bytes(), &DecodeLimits::default()) {
            Ok(Decoded::Single(m)) => m,
            Ok(Decoded::Batch(_)) => return Err("the codec decoded a batch".into()),
            Err(e) => return Err(format!("the codec rejected the line: {e:?}")),
        };
        let problems_before = p.len();
        let (label, reencoded) = match decoded {
            Message::Request(request) => self.request(session, line, &kind, direction, request, p)?,
            Message::Notification(n) => {
                expect_category(&kind, "notification")?;
                let (method, other, encoded) = match direction {
                    Direction::ClientToServer => {
                        let typed =
                            ClientNotification::from_notification(&n).map_err(|e| params_error(&n.method, e))?;
                        let other = matches!(typed, ClientNotification::Other { .. });
                        (typed.method().to_owned(), other, typed.into_notification().map_err(encode_error)?)
                    }
                    Direction::ServerToClient => {
                        let typed =
                            ServerNotification::from_notification(&n).map_err(|e| params_error(&n.method, e))?;
                        let other = matches!(typed, ServerNotification::Other { .. });
                        (typed.method().to_owned(), other, typed.into_notification().map_err(encode_error)?)
                    }
                };
                check_union(&kind, &method, other, p);
                ("notifications", Message::Notification(encoded))
            }
            Message::Response(response) => match &response.payload {
                ResponsePayload::Result(_) => ("results", self.result(session, line, &kind, direction, response, p)?),
                ResponsePayload::Error(_) => ("errors", self.error(session, line, &kind, direction, response, p)?),
            },
        };
        let reencoded = serde_json::to_value(&reencoded).map_err(encode_error)?;
        if let Some(diff) = first_difference(message, &reencoded) {
            p.push(format!("re-encoded message differs at {diff}"));
        }
        if p.len() == problems_before {
            *self.decoded.entry(label).or_default() += 1;
            *self.by_revision.entry(line.protocol_version.clone()).or_default() += 1;
            *self.by_transport.entry(line.transport.clone()).or_default() += 1;
        }
        Ok(())
    }

    fn typed(&mut self, what: &'static str) {
        *self.typed.entry(what).or_default() += 1;
    }

    fn request(
        &mut self,
        session: &mut Session,
        line: &Line,
        kind: &Kind<'_>,
        direction: Direction,
        request: mcp_protocol::Request,
        p: &mut Problems,
    ) -> Result<(&'static str, Message), String> {
        expect_category(kind, "request")?;
        let key = (line.connection, direction, request.id.clone());
        session.requests.insert(key.clone(), request.method.clone());
        if let Some(exchange) = exchange_of(line) {
            session.exchanges.insert(exchange, request.method.clone());
        }
        let encoded = match direction {
            Direction::ClientToServer => match ClientRequest::from_request(&request) {
                Ok(typed) => {
                    check_union(kind, typed.method(), matches!(typed, ClientRequest::Other { .. }), p);
                    self.client_request(session, kind, &typed, p);
                    typed.into_request(request.id).map_err(encode_error)?
                }
                Err(e) => {
                    // Invalid params (the malformed `tools/call` without a name): the typed layer
                    // must reject them, as the receiving peer does. Its response must be an error.
                    self.invalid.push(format!("{}:{} {}: {e}", line.session, line.seq, request.method));
                    session.invalid_requests.insert(key, (format!("{} ({e})", request.method), false));
                    return Ok(("requests with invalid params (envelope only)", Message::Request(request)));
                }
            },
            Direction::ServerToClient => {
                let typed = ServerRequest::from_request(&request).map_err(|e| params_error(&request.method, e))?;
                check_union(kind, typed.method(), matches!(typed, ServerRequest::Other { .. }), p);
                check_suffix(kind, None, p);
                match &typed {
                    ServerRequest::CreateMessage(Some(params)) => {
                        check_sampling_params(params, "params", p);
                    }
                    ServerRequest::Elicit(Some(params)) => check_elicit_params(params, "params", p),
                    _ => {}
                }
                typed.into_request(request.id).map_err(encode_error)?
            }
        };
        Ok(("requests", Message::Request(encoded)))
    }

    fn client_request(&mut self, session: &Session, kind: &Kind<'_>, typed: &ClientRequest, p: &mut Problems) {
        let (task, retry) = match typed {
            ClientRequest::CallTool(Some(params)) => {
                (params.task.is_some(), Some((params.input_responses.as_ref(), params.request_state.as_deref())))
            }
            ClientRequest::GetPrompt(Some(params)) => {
                (false, Some((params.input_responses.as_ref(), params.request_state.as_deref())))
            }
            ClientRequest::ReadResource(Some(params)) => {
                (false, Some((params.input_responses.as_ref(), params.request_state.as_deref())))
            }
            ClientRequest::Complete(Some(params)) => {
                if let Reference::Unknown(v) = &params.reference {
                    p.push(format!("completion reference kept untyped: {}", short(v)));
                }
                (false, None)
            }
            _ => (false, None),
        };
        let (responses, state) = retry.unwrap_or((None, None));
        let actual = match (task, responses.is_some()) {
            (true, _) => Some("task"),
            (false, true) => Some("retry-with-inputResponses"),
            (false, false) => None,
        };
        check_suffix(kind, actual, p);
        if let Some(responses) = responses {
            self.typed("retries with inputResponses");
            check_input_responses(session, responses, state, p);
        }
        if task {
            self.typed("task-augmented requests");
        }
    }

    fn result(
        &mut self,
        session: &mut Session,
        line: &Line,
        kind: &Kind<'_>,
        direction: Direction,
        response: Response,
        p: &mut Problems,
    ) -> Result<Message, String> {
        expect_category(kind, "result")?;
        let id = response.id.clone().ok_or("a result without id")?;
        let key = (line.connection, direction.opposite(), id.clone());
        let method = session.requests.get(&key).cloned().ok_or_else(|| format!("no request with id {id} to answer"))?;
        if session.invalid_requests.contains_key(&key) {
            return Err(format!("{method} request {id} did not decode into its type, yet got a result"));
        }
        let ResponsePayload::Result(raw) = &response.payload else { unreachable!() };
        let encoded = match direction {
            Direction::ServerToClient => {
                let typed = ServerResult::decode(&method, raw).map_err(|e| result_error(&method, e))?;
                check_union(kind, &method, matches!(typed, ServerResult::Other(_)), p);
                self.server_result(session, kind, &typed, raw_value(raw)?, p);
                typed.to_raw().map_err(encode_error)?
            }
            Direction::ClientToServer => {
                let typed = ClientResult::decode(&method, raw).map_err(|e| result_error(&method, e))?;
                check_union(kind, &method, matches!(typed, ClientResult::Other(_)), p);
                match &typed {
                    ClientResult::CreateMessage(outcome) => {
                        check_outcome_suffix(kind, outcome, p);
                        if let Outcome::Complete(r) = outcome {
                            check_blocks(r.content.blocks(), "content", p);
                        }
                    }
                    ClientResult::Elicit(outcome) => check_outcome_suffix(kind, outcome, p),
                    _ => check_suffix(kind, None, p),
                }
                typed.to_raw().map_err(encode_error)?
            }
        };
        Ok(Message::Response(Response::result(id, encoded)))
    }

    fn server_result(
        &mut self,
        session: &mut Session,
        kind: &Kind<'_>,
        typed: &ServerResult,
        raw: Value,
        p: &mut Problems,
    ) {
        let input_required = match typed {
            ServerResult::CallTool(outcome) => {
                check_outcome_suffix(kind, outcome, p);
                match outcome {
                    Outcome::Complete(r) => check_blocks(&r.content, "content", p),
                    Outcome::Task(t) => {
                        self.typed("task results (CreateTaskResult)");
                        session.tasks.insert(t.task.task_id.clone(), "tools/call".to_owned());
                    }
                    Outcome::TaskHandle(t) => {
                        self.typed("task handles (tasks extension)");
                        session.tasks.insert(t.task_id.clone(), "tools/call".to_owned());
                    }
                    Outcome::InputRequired(_) => {}
                }
                match outcome {
                    Outcome::InputRequired(r) => Some(r),
                    _ => None,
                }
            }
            ServerResult::GetPrompt(outcome) => {
                check_outcome_suffix(kind, outcome, p);
                if let Outcome::Complete(r) = outcome {
                    for (i, m) in r.messages.iter().enumerate() {
                        check_blocks(std::slice::from_ref(&m.content), &format!("messages/{i}/content"), p);
                    }
                }
                match outcome {
                    Outcome::InputRequired(r) => Some(r),
                    _ => None,
                }
            }
            ServerResult::ReadResource(outcome) => {
                check_outcome_suffix(kind, outcome, p);
                match outcome {
                    Outcome::InputRequired(r) => Some(r),
                    _ => None,
                }
            }
            ServerResult::GetTaskPayload(payload) => {
                check_suffix(kind, None, p);
                let Some(task) = payload.related_task() else {
                    p.push("tasks/result payload without io.modelcontextprotocol/related-task".into());
                    return;
                };
                match session.tasks.get(&task.task_id).map(String::as_str) {
                    Some("tools/call") => match payload.decode::<CallToolResult>() {
                        Ok(r) => {
                            self.typed("task payloads typed by their request");
                            check_blocks(&r.content, "content", p);
                            let again = serde_json::to_value(&r).expect("encoding a typed result");
                            if let Some(d) = first_difference(&raw, &again) {
                                p.push(format!("tasks/result payload typed as CallToolResult differs at {d}"));
                            }
                        }
                        Err(e) => p.push(format!("tasks/result payload is not a CallToolResult: {e}")),
                    },
                    Some(other) => p.push(format!("no type for the payload of a {other} task")),
                    None => p.push(format!("tasks/result for task {} that no result created", task.task_id)),
                }
                None
            }
            _ => {
                check_suffix(kind, None, p);
                None
            }
        };
        if let Some(r) = input_required {
            self.typed("input_required results");
            let (Some(requests), Some(state)) = (&r.input_requests, &r.request_state) else {
                p.push("input_required result without inputRequests or requestState".into());
                return;
            };
            if requests.is_empty() {
                p.push("input_required result with no input request".into());
            }
            for (key, request) in requests {
                self.typed("input requests");
                check_input_request(request, &format!("inputRequests/{key}"), p);
            }
            session.input_requests.insert(state.clone(), requests.clone());
        }
    }

    fn error(
        &mut self,
        session: &mut Session,
        line: &Line,
        kind: &Kind<'_>,
        direction: Direction,
        response: Response,
        p: &mut Problems,
    ) -> Result<Message, String> {
        expect_category(kind, "error")?;
        let ResponsePayload::Error(error) = &response.payload else { unreachable!() };
        if kind.code != Some(i64::from(error.code.0)) {
            p.push(format!("error code {} but the kind says {:?}", error.code.0, kind.code));
        }
        let method = match &response.id {
            Some(id) => {
                let key = (line.connection, direction.opposite(), id.clone());
                if let Some(invalid) = session.invalid_requests.get_mut(&key) {
                    invalid.1 = true;
                }
                session.requests.get(&key).cloned().ok_or_else(|| format!("no request with id {id} to answer"))?
            }
            // No id: the error answers the HTTP request of its exchange.
            None => {
                let http = line.http.as_ref().ok_or("an error without id outside HTTP")?;
                match http.get("method").and_then(Value::as_str) {
                    Some(m @ ("GET" | "DELETE")) => format!("(http {m})"),
                    _ => exchange_of(line)
                        .and_then(|x| session.exchanges.get(&x).cloned())
                        .ok_or("an error without id whose HTTP exchange carried no request")?,
                }
            }
        };
        if kind.is_unknown_method() {
            let known = match direction.opposite() {
                Direction::ClientToServer => {
                    !matches!(ClientRequest::decode(&method, None), Ok(ClientRequest::Other { .. }))
                }
                Direction::ServerToClient => {
                    !matches!(ServerRequest::decode(&method, None), Ok(ServerRequest::Other { .. }))
                }
            };
            if known {
                p.push(format!("kind says unknown-method, but {method} is a known method"));
            }
        } else if kind.method != method {
            p.push(format!("kind says {}, but the request answered was {method}", kind.method));
        }
        self.error_data(error, p);
        Ok(Message::Response(response))
    }

    /// Typed `data` of the error codes that define it.
    fn error_data(&mut self, error: &ErrorObject, p: &mut Problems) {
        fn check<T: Serialize>(typed: Option<T>, error: &ErrorObject, p: &mut Problems) -> bool {
            let Some(typed) = typed else {
                p.push(format!("data of error {} does not decode into its type", error.code));
                return false;
            };
            let again = serde_json::to_value(&typed).expect("encoding typed error data");
            if let Some(d) = first_difference(error.data.as_ref().unwrap_or(&Value::Null), &again) {
                p.push(format!("typed data of error {} differs at {d}", error.code));
            }
            true
        }
        let typed = match error.code {
            ErrorCode::URL_ELICITATION_REQUIRED => {
                let data = UrlElicitationRequiredData::from_error(error);
                for (i, e) in data.iter().flat_map(|d| &d.elicitations).enumerate() {
                    if e.url.is_empty() {
                        p.push(format!("elicitations/{i} has an empty url"));
                    }
                }
                check(data, error, p)
            }
            ErrorCode::UNSUPPORTED_PROTOCOL_VERSION => {
                check(UnsupportedProtocolVersionData::from_error(error), error, p)
            }
            ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY => {
                check(MissingRequiredClientCapabilityData::from_error(error), error, p)
            }
            _ => false,
        };
        if typed {
            self.typed("error data typed by code");
        }
    }

    fn report(&self, dir: &Path) {
        fn counts<K: std::fmt::Display>(m: &BTreeMap<K, usize>) -> String {
            m.iter().map(|(k, n)| format!("{k} {n}")).collect::<Vec<_>>().join(", ")
        }
        let total: usize = self.decoded.values().sum();
        let skipped: usize = self.skipped.values().sum();
        println!("corpus {}: {} files, {} lines", dir.display(), self.files, self.lines);
        println!("messages decoded and re-encoded equal: {total} ({})", counts(&self.decoded));
        println!("  by revision: {}", counts(&self.by_revision));
        println!("  by transport: {}", counts(&self.by_transport));
        println!("typed checks: {}", counts(&self.typed));
        println!("requests whose params the typed layer rejects, each answered by an error: {}", self.invalid.len());
        for invalid in &self.invalid {
            println!("  {invalid}");
        }
        println!("skipped, no message: {skipped} ({})", counts(&self.skipped));
        println!("rejected as DecodeError::NotJsonRpc ({EMPTY_OBJECT_KIND}): {}", self.not_json_rpc);
        if self.failures.is_empty() {
            return;
        }
        let mut report = format!("{} failure(s):\n", self.failures.len());
        for f in &self.failures {
            report.push_str(&format!("  {} [{}] {}\n", f.at, f.kind, f.what));
        }
        let mut by_kind = BTreeMap::new();
        for f in &self.failures {
            *by_kind.entry(f.kind.as_str()).or_insert(0usize) += 1;
        }
        report.push_str(&format!("failures by kind: {}\n", counts(&by_kind)));
        panic!("{report}");
    }
}

fn exchange_of(line: &Line) -> Option<u64> {
    line.http.as_ref()?.get("exchange")?.as_u64()
}

fn raw_value(raw: &mcp_protocol::RawJson) -> Result<Value, String> {
    serde_json::from_str(raw.get()).map_err(|e| format!("result is not JSON: {e}"))
}

fn params_error(method: &str, e: serde_json::Error) -> String {
    format!("params of {method} do not decode into their type: {e}")
}

fn result_error(method: &str, e: serde_json::Error) -> String {
    format!("result of {method} does not decode into its type: {e}")
}

fn encode_error(e: serde_json::Error) -> String {
    format!("re-encoding failed: {e}")
}

fn expect_category(kind: &Kind<'_>, category: &str) -> Result<(), String> {
    if kind.category == category {
        Ok(())
    } else {
        Err(format!("decoded a {category}, but the kind says {}", kind.category))
    }
}

/// The typed union agrees with the kind: `Other` exactly for `unknown-method`, and the same method.
fn check_union(kind: &Kind<'_>, method: &str, other: bool, p: &mut Problems) {
    if kind.is_unknown_method() {
        if !other {
            p.push(format!("kind says unknown-method, but {method} decoded into a typed variant"));
        }
        return;
    }
    if other {
        p.push(format!("{method} fell into the Other variant"));
    }
    if kind.method != method {
        p.push(format!("kind says {}, but the message is {method}", kind.method));
    }
}

fn check_suffix(kind: &Kind<'_>, actual: Option<&str>, p: &mut Problems) {
    if kind.suffix != actual {
        p.push(format!("kind suffix {:?}, but the typed message shows {actual:?}", kind.suffix));
    }
}

fn check_outcome_suffix<T>(kind: &Kind<'_>, outcome: &Outcome<T>, p: &mut Problems) {
    let actual = match outcome {
        Outcome::Complete(_) => None,
        Outcome::InputRequired(_) => Some("input_required"),
        Outcome::Task(_) | Outcome::TaskHandle(_) => Some("task"),
    };
    check_suffix(kind, actual, p);
}

/// No content block fell back to [`ContentBlock::Unknown`], tool_result blocks included.
fn check_blocks(blocks: &[ContentBlock], at: &str, p: &mut Problems) {
    for (i, block) in blocks.iter().enumerate() {
        match block {
            ContentBlock::Unknown(v) => p.push(format!("{at}/{i}: content block kept untyped: {}", short(v))),
            ContentBlock::ToolResult(r) => check_blocks(&r.content, &format!("{at}/{i}/content"), p),
            _ => {}
        }
    }
}

fn check_sampling_messages(messages: &[SamplingMessage], at: &str, p: &mut Problems) {
    for (i, m) in messages.iter().enumerate() {
        check_blocks(m.content.blocks(), &format!("{at}/messages/{i}/content"), p);
    }
}

fn check_sampling_params(params: &CreateMessageParams, at: &str, p: &mut Problems) {
    check_sampling_messages(&params.messages, at, p);
}

fn check_elicit_params(params: &ElicitParams, at: &str, p: &mut Problems) {
    match params {
        ElicitParams::Form(form) => {
            for (name, def) in form.requested_schema.properties.iter() {
                if let PrimitiveSchemaDefinition::Unknown(v) = def {
                    p.push(format!("{at}/requestedSchema/properties/{name} kept untyped: {}", short(v)));
                }
            }
        }
        ElicitParams::Url(_) => {}
        ElicitParams::Unknown(v) => p.push(format!("{at}: elicitation kept untyped: {}", short(v))),
    }
}

fn check_input_request(request: &InputRequest, at: &str, p: &mut Problems) {
    match request {
        InputRequest::CreateMessage(params) => check_sampling_params(params, &format!("{at}/params"), p),
        InputRequest::Elicit(params) => check_elicit_params(params, &format!("{at}/params"), p),
        InputRequest::ListRoots(_) => {}
        InputRequest::Unknown(v) => p.push(format!("{at}: input request kept untyped: {}", short(v))),
    }
}

/// Every input response is typed, answers an input request of the result whose `requestState`
/// the retry carries, and has the shape of that request's result.
fn check_input_responses(session: &Session, responses: &InputResponses, state: Option<&str>, p: &mut Problems) {
    if responses.is_empty() {
        p.push("retry with an empty inputResponses".into());
    }
    let Some(state) = state else {
        p.push("retry with inputResponses but no requestState".into());
        return;
    };
    let Some(requests) = session.input_requests.get(state) else {
        p.push("retry whose requestState no input_required result sent".into());
        return;
    };
    for (key, response) in responses {
        let at = format!("inputResponses/{key}");
        let expected = match requests.get(key) {
            Some(request) => request.method(),
            None => {
                p.push(format!("{at} answers no input request"));
                continue;
            }
        };
        let actual = match response {
            InputResponse::CreateMessage(r) => {
                check_blocks(r.content.blocks(), &format!("{at}/content"), p);
                "sampling/createMessage"
            }
            InputResponse::ListRoots(_) => "roots/list",
            InputResponse::Elicit(_) => "elicitation/create",
            InputResponse::Other(v) => {
                p.push(format!("{at} kept untyped: {}", short(v)));
                continue;
            }
        };
        if actual != expected {
            p.push(format!("{at} typed as the result of {actual}, but answers {expected}"));
        }
    }
}
