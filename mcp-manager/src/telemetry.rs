//! `tracing` spans for servers, requests and tool calls, named and attributed after the
//! OpenTelemetry semantic conventions for MCP (status: development;
//! <https://opentelemetry.io/docs/specs/semconv/gen-ai/mcp/>, kept in
//! `open-telemetry/semantic-conventions-genai`, `docs/gen-ai/mcp.md`), so that a host exports
//! them with a subscriber of its own (`tracing-opentelemetry` to OTLP, say).
//!
//! Every span has target [`TARGET`] and level `INFO`. The convention's span name (`tools/call
//! get_weather`) is not static, so it is the `otel.name` field, with the span kind in
//! `otel.kind` and an error status in `otel.status_code` / `otel.status_description`: the special
//! fields `tracing-opentelemetry` reads. The spans:
//!
//! - `mcp.connection`, one per connection attempt and the session it opens, kind `client`:
//!   [`attribute::SERVER_NAME`], `network.transport` (`pipe` for stdio, `tcp` for HTTP),
//!   `mcp.protocol.version` once negotiated, `mcp.session.id` when the server gave one,
//!   `error.type` when the connection could not be opened. It closes when the session ends.
//! - `mcp.request`, one per request to a server, kind `client`, named `{mcp.method.name}
//!   {target}`: `mcp.method.name`, `jsonrpc.request.id`, `mcp.session.id`,
//!   `mcp.protocol.version`, `network.transport`, `gen_ai.tool.name` and
//!   `gen_ai.operation.name` (`execute_tool`) for `tools/call`, `gen_ai.prompt.name` for
//!   `prompts/get`, `mcp.resource.uri` (without query or fragment) for `resources/read`,
//!   `resources/subscribe` and `resources/unsubscribe`. On failure `error.type` is the JSON-RPC
//!   error code (also `rpc.response.status_code`, with the server's message, shortened, as the
//!   status description), `tool_error` for a `CallToolResult` with `isError`, else the
//!   [`ErrorKind`] (`timeout`, `closed`, `unreachable`, ...; `cancelled` for a request whose
//!   caller gave up). Its parent is the current span, else the connection's span.
//! - `mcp.server_request`, one per request the server sends (sampling, elicitation, roots),
//!   kind `server`, parented by the connection's span: the same attributes as a request.
//! - `execute_tool`, one per tool call through [`McpManager`](crate::McpManager) (and so
//!   [`McpToolProvider`](crate::McpToolProvider)), kind `internal`, named `execute_tool
//!   {gen_ai.tool.name}` as the GenAI convention names it: `gen_ai.operation.name`,
//!   `gen_ai.tool.name`, [`attribute::SERVER_NAME`], `error.type`. It parents the
//!   `tools/call` request span.
//!
//! Never recorded: arguments, results, prompt arguments, headers, tokens, environment values.
//! Attributes are worked out only when a subscriber takes the span: with none, a span costs
//! one check of its callsite's interest.

use std::fmt;
use std::sync::{Arc, Mutex, OnceLock};

use mcp_protocol::{RawJson, RequestId};
use mcp_transport::TransportKind;
use tracing::Span;
use tracing::field::Empty;

use mcp_protocol::ErrorObject;
use mcp_transport::{ErrorKind, Transport};

/// The target of every span of this module, for a subscriber's filter (`mcp=info`).
pub const TARGET: &str = "mcp";

/// The attribute names the spans use.
pub mod attribute {
    /// The name of the request or notification method (convention, required).
    pub const METHOD_NAME: &str = "mcp.method.name";
    /// The MCP session id (convention): the streamable HTTP session of the legacy era.
    pub const SESSION_ID: &str = "mcp.session.id";
    /// The negotiated protocol revision (convention).
    pub const PROTOCOL_VERSION: &str = "mcp.protocol.version";
    /// The URI of `resources/read`, `resources/subscribe`, `resources/unsubscribe` (convention).
    pub const RESOURCE_URI: &str = "mcp.resource.uri";
    /// The string form of the JSON-RPC request id (convention).
    pub const REQUEST_ID: &str = "jsonrpc.request.id";
    /// The tool of `tools/call` and of a tool call span (GenAI convention).
    pub const TOOL_NAME: &str = "gen_ai.tool.name";
    /// The prompt of `prompts/get` (GenAI convention).
    pub const PROMPT_NAME: &str = "gen_ai.prompt.name";
    /// `execute_tool` on tool calls (GenAI convention).
    pub const OPERATION_NAME: &str = "gen_ai.operation.name";
    /// The class of error an operation ended with (convention).
    pub const ERROR_TYPE: &str = "error.type";
    /// The JSON-RPC error code of an error answer (convention).
    pub const RESPONSE_STATUS_CODE: &str = "rpc.response.status_code";
    /// `pipe` (stdio) or `tcp` (HTTP) (convention).
    pub const NETWORK_TRANSPORT: &str = "network.transport";
    /// The configured name of the server. Not in the convention, which has no attribute for it.
    pub const SERVER_NAME: &str = "mcp.server.name";
}

/// The longest status description recorded: a server's error message, cut at a char boundary.
const MAX_DESCRIPTION: usize = 256;

/// What a session keeps for its spans: the connection's span and the negotiated revision.
#[derive(Default)]
pub(crate) struct SessionTelemetry {
    /// Taken (and so closed) when the session ends.
    connection: Mutex<Option<Span>>,
    protocol_version: OnceLock<Arc<str>>,
}

impl SessionTelemetry {
    /// Keep the connection's `span` (the parent of requests made outside any span, and of the
    /// server's requests) and the revision the connection negotiated.
    pub(crate) fn attach(&self, span: Span, protocol_version: &str) {
        let _ = self.protocol_version.set(Arc::from(protocol_version));
        *lock(&self.connection) = Some(span);
    }

    /// Close the connection's span: the session has ended.
    pub(crate) fn end(&self) {
        lock(&self.connection).take();
    }

    fn connection(&self) -> Span {
        lock(&self.connection).clone().unwrap_or_else(Span::none)
    }

    fn protocol_version(&self) -> Option<&str> {
        self.protocol_version.get().map(|v| &**v)
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// The span of one connection to server `server`; the connection records the rest with
/// [`connected`] or [`record_error`].
pub(crate) fn connection_span(server: &str) -> Span {
    tracing::info_span!(
        target: TARGET,
        "mcp.connection",
        otel.name = Empty,
        otel.kind = "client",
        otel.status_code = Empty,
        mcp.server.name = server,
        network.transport = Empty,
        mcp.protocol.version = Empty,
        mcp.session.id = Empty,
        error.type = Empty,
    )
}

/// Record on `span` what the handshake of server `server` over `transport` settled, and keep it
/// in the session's `telemetry` to parent the session's spans.
pub(crate) fn connected(
    span: Span,
    server: &str,
    transport: &dyn Transport,
    telemetry: &SessionTelemetry,
    protocol_version: &str,
) {
    if !span.is_disabled() {
        span.record("otel.name", format!("mcp.connection {server}"));
        record_transport(&span, transport.kind());
        span.record("mcp.protocol.version", protocol_version);
        if let Some(id) = transport.session_id() {
            span.record("mcp.session.id", id);
        }
    }
    telemetry.attach(span, protocol_version);
}

fn record_transport(span: &Span, kind: TransportKind) {
    let transport = match kind {
        TransportKind::Stdio => "pipe",
        TransportKind::StreamableHttp | TransportKind::Sse => "tcp",
        TransportKind::Memory | TransportKind::Custom => return,
    };
    span.record("network.transport", transport);
}

/// Mark `span` failed with `kind`.
pub(crate) fn record_error(span: &Span, kind: ErrorKind) {
    if !span.is_disabled() {
        span.record("error.type", kind.as_str());
        span.record("otel.status_code", "error");
    }
}

/// What a request or server-request span is made from.
pub(crate) struct RequestContext<'a> {
    pub(crate) server: &'a str,
    pub(crate) telemetry: &'a SessionTelemetry,
    pub(crate) transport: &'a dyn Transport,
}

/// The span of request `id` of `method` to the server; its parent is the current span, else the
/// connection's.
pub(crate) fn request_span(cx: &RequestContext<'_>, id: &RequestId, method: &str, params: Option<&RawJson>) -> Span {
    let span = tracing::info_span!(
        target: TARGET,
        parent: &parent(cx.telemetry),
        "mcp.request",
        otel.name = Empty,
        otel.kind = "client",
        otel.status_code = Empty,
        otel.status_description = Empty,
        mcp.method.name = method,
        jsonrpc.request.id = %IdText(id),
        mcp.server.name = cx.server,
        mcp.session.id = Empty,
        mcp.protocol.version = Empty,
        network.transport = Empty,
        gen_ai.operation.name = Empty,
        gen_ai.tool.name = Empty,
        gen_ai.prompt.name = Empty,
        mcp.resource.uri = Empty,
        error.type = Empty,
        rpc.response.status_code = Empty,
    );
    if !span.is_disabled() {
        record_common(&span, cx, method, params);
    }
    span
}

/// The span of request `id` of `method` from the server.
pub(crate) fn server_request_span(cx: &RequestContext<'_>, id: &RequestId, method: &str) -> Span {
    let span = tracing::info_span!(
        target: TARGET,
        parent: &cx.telemetry.connection(),
        "mcp.server_request",
        otel.name = Empty,
        otel.kind = "server",
        otel.status_code = Empty,
        otel.status_description = Empty,
        mcp.method.name = method,
        jsonrpc.request.id = %IdText(id),
        mcp.server.name = cx.server,
        mcp.session.id = Empty,
        mcp.protocol.version = Empty,
        network.transport = Empty,
        error.type = Empty,
        rpc.response.status_code = Empty,
    );
    if !span.is_disabled() {
        record_common(&span, cx, method, None);
    }
    span
}

fn parent(telemetry: &SessionTelemetry) -> Span {
    let current = Span::current();
    if current.is_none() { telemetry.connection() } else { current }
}

fn record_common(span: &Span, cx: &RequestContext<'_>, method: &str, params: Option<&RawJson>) {
    if let Some(version) = cx.telemetry.protocol_version() {
        span.record("mcp.protocol.version", version);
    }
    if let Some(id) = cx.transport.session_id() {
        span.record("mcp.session.id", id);
    }
    record_transport(span, cx.transport.kind());
    let target = params.and_then(|p| Target::of(method, p));
    let name = match &target {
        Some(Target::Tool(tool)) => {
            span.record("gen_ai.operation.name", "execute_tool");
            span.record("gen_ai.tool.name", tool.as_str());
            format!("{method} {tool}")
        }
        Some(Target::Prompt(prompt)) => {
            span.record("gen_ai.prompt.name", prompt.as_str());
            format!("{method} {prompt}")
        }
        Some(Target::Resource(uri)) => {
            // A URI is high-cardinality: an attribute, not part of the name.
            span.record("mcp.resource.uri", uri.as_str());
            method.to_owned()
        }
        None => method.to_owned(),
    };
    span.record("otel.name", name);
}

/// The low-cardinality target of a request, read from its params.
enum Target {
    Tool(String),
    Prompt(String),
    Resource(String),
}

impl Target {
    fn of(method: &str, params: &RawJson) -> Option<Target> {
        #[derive(serde::Deserialize)]
        struct Named {
            name: Option<String>,
            uri: Option<String>,
        }
        let wanted = matches!(
            method,
            "tools/call" | "prompts/get" | "resources/read" | "resources/subscribe" | "resources/unsubscribe"
        );
        if !wanted {
            return None;
        }
        // Only `name` and `uri` are kept: the arguments are skipped, never stored.
        let named: Named = serde_json::from_str(params.get()).ok()?;
        match method {
            "tools/call" => named.name.map(Target::Tool),
            "prompts/get" => named.name.map(Target::Prompt),
            _ => named.uri.map(|uri| Target::Resource(without_query(&uri).to_owned())),
        }
    }
}

/// `uri` without its query and fragment, where credentials sometimes travel.
fn without_query(uri: &str) -> &str {
    uri.find(['?', '#']).map_or(uri, |end| &uri[..end])
}

/// How a request failed: the server's error object, else the kind of the local failure.
pub(crate) type Failure<'a> = Result<&'a ErrorObject, ErrorKind>;

/// Record the answer to a request on its span.
pub(crate) fn record_answer(span: &Span, method: &str, answer: Result<&RawJson, Failure<'_>>) {
    if span.is_disabled() {
        return;
    }
    match answer {
        Ok(raw) if method == "tools/call" && is_tool_error(raw) => {
            span.record("error.type", "tool_error");
            span.record("otel.status_code", "error");
        }
        Ok(_) => {}
        Err(Ok(error)) => record_rpc_error(span, error),
        Err(Err(kind)) => record_error(span, kind),
    }
}

/// Record the handler's answer to a server request on its span.
pub(crate) fn record_served(span: &Span, answer: &Result<RawJson, ErrorObject>) {
    if let Err(error) = answer
        && !span.is_disabled()
    {
        record_rpc_error(span, error);
    }
}

fn record_rpc_error(span: &Span, error: &ErrorObject) {
    let code = error.code.0.to_string();
    span.record("error.type", code.as_str());
    span.record("rpc.response.status_code", code.as_str());
    span.record("otel.status_code", "error");
    span.record("otel.status_description", shorten(&error.message, MAX_DESCRIPTION));
}

fn is_tool_error(raw: &RawJson) -> bool {
    #[derive(serde::Deserialize)]
    struct Flag {
        #[serde(rename = "isError")]
        is_error: Option<bool>,
    }
    serde_json::from_str::<Flag>(raw.get()).ok().and_then(|f| f.is_error).unwrap_or(false)
}

fn shorten(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// Marks a request span `cancelled` when its future is dropped before the answer came (taking
/// the span out disarms it).
pub(crate) struct Unanswered(pub(crate) Option<Span>);

impl Drop for Unanswered {
    fn drop(&mut self) {
        if let Some(span) = self.0.take() {
            record_error(&span, ErrorKind::Cancelled);
        }
    }
}

/// The span of a host's call of tool `tool` through the manager.
pub(crate) fn tool_call_span(tool: &str) -> Span {
    let span = tracing::info_span!(
        target: TARGET,
        "execute_tool",
        otel.name = Empty,
        otel.kind = "internal",
        otel.status_code = Empty,
        gen_ai.operation.name = "execute_tool",
        gen_ai.tool.name = tool,
        mcp.server.name = Empty,
        error.type = Empty,
    );
    if !span.is_disabled() {
        span.record("otel.name", format!("execute_tool {tool}"));
    }
    span
}

/// Record the server a tool call was routed to.
pub(crate) fn record_server(span: &Span, server: &str) {
    span.record("mcp.server.name", server);
}

/// Mark a tool call span failed with a `CallToolResult` whose `isError` is set.
pub(crate) fn record_tool_error(span: &Span) {
    if !span.is_disabled() {
        span.record("error.type", "tool_error");
        span.record("otel.status_code", "error");
    }
}

/// A request id as the convention writes it: its string or number, unquoted.
struct IdText<'a>(&'a RequestId);

impl fmt::Display for IdText<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            RequestId::Number(n) => write!(f, "{n}"),
            RequestId::String(s) => f.write_str(s),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uri_loses_query_and_fragment() {
        assert_eq!(without_query("https://x/a?token=s3cret#f"), "https://x/a");
        assert_eq!(without_query("file:///a/b#frag"), "file:///a/b");
        assert_eq!(without_query("file:///a/b"), "file:///a/b");
    }

    #[test]
    fn shorten_keeps_char_boundaries() {
        assert_eq!(shorten("héllo", 2), "h");
        assert_eq!(shorten("hello", 10), "hello");
    }

    #[test]
    fn targets_come_only_from_name_and_uri() {
        let raw = |s: &str| mcp_protocol::RawJson::from_string(s.to_owned()).unwrap();
        let call = raw(r#"{"name":"echo","arguments":{"name":"not me"}}"#);
        assert!(matches!(Target::of("tools/call", &call), Some(Target::Tool(t)) if t == "echo"));
        assert!(Target::of("tools/list", &call).is_none());
        assert!(Target::of("tools/call", &raw("[1,2]")).is_none(), "hostile params are no target");
        let read = raw(r#"{"uri":"file:///x?k=v"}"#);
        assert!(matches!(Target::of("resources/read", &read), Some(Target::Resource(u)) if u == "file:///x"));
        assert_eq!(IdText(&RequestId::String("a-1".into())).to_string(), "a-1");
        assert!(is_tool_error(&raw(r#"{"content":[],"isError":true}"#)));
        assert!(!is_tool_error(&raw(r#"{"content":[]}"#)));
    }
}
