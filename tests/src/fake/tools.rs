//! The fake server's catalogue: built-in tools, generated tools, prompts and resources, and what
//! calling each tool answers.

use std::time::Duration;

use mcp_protocol::types::common::Role;
use mcp_protocol::types::content::{ContentBlock, ResourceContents, TextResourceContents};
use mcp_protocol::types::meta::JsonObject;
use mcp_protocol::types::prompts::{GetPromptParams, GetPromptResult, Prompt, PromptArgument, PromptMessage};
use mcp_protocol::types::resources::{Resource, ResourceTemplate};
use mcp_protocol::types::tools::{CallToolParams, CallToolResult, Tool};
use mcp_protocol::{ErrorCode, ErrorObject};
use serde_json::{Value, json};

/// What a tools/call answers.
// One answer per call, moved once: boxing the result would cost more than it saves.
#[allow(clippy::large_enum_variant)]
pub(crate) enum Answer {
    /// A result or a JSON-RPC error.
    Done(Result<CallToolResult, ErrorObject>),
    /// One line of this many MiB.
    Huge(usize),
}

fn schema(value: Value) -> JsonObject {
    match value {
        Value::Object(map) => map,
        _ => unreachable!("schemas are objects"),
    }
}

fn tool(name: &str, description: &str, input_schema: Value) -> Tool {
    Tool {
        name: name.into(),
        description: Some(description.into()),
        input_schema: schema(input_schema).into(),
        ..Default::default()
    }
}

/// The tools every fake server can call, listed unless `--tools N` replaces the listing.
pub(crate) fn builtin() -> Vec<Tool> {
    let none = json!({"type": "object"});
    vec![
        tool(
            "echo",
            "Returns its `text` argument",
            json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}),
        ),
        tool(
            "add",
            "Adds `a` and `b`",
            json!({"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}}, "required": ["a", "b"]}),
        ),
        tool(
            "slow",
            "Answers after `ms` milliseconds",
            json!({"type": "object", "properties": {"ms": {"type": "integer"}}}),
        ),
        tool("huge", "Answers with one line of --huge-mib MiB", none.clone()),
        tool("stats", "What the server has seen so far, as JSON text", none.clone()),
        tool("fail", "Always a tool error", none),
    ]
}

/// `count` generated tools, `tool-0000` and on.
pub(crate) fn generated(count: usize) -> Vec<Tool> {
    (0..count)
        .map(|i| tool(&format!("tool-{i:04}"), &format!("generated tool number {i}"), json!({"type": "object"})))
        .collect()
}

fn text(text: impl Into<String>) -> CallToolResult {
    CallToolResult { content: vec![ContentBlock::text(text)], ..Default::default() }
}

fn tool_error(message: impl Into<String>) -> CallToolResult {
    CallToolResult { is_error: Some(true), ..text(message) }
}

/// Call a tool. `stats` is what the `stats` tool reports. Returns the answer and how long the tool
/// itself takes (the `slow` tool).
pub(crate) fn call(params: &CallToolParams, stats: Value, huge_mib: usize) -> (Answer, Duration) {
    let empty = JsonObject::new();
    let args = params.arguments.as_ref().unwrap_or(&empty);
    let done = |r: CallToolResult| (Answer::Done(Ok(r)), Duration::ZERO);
    match params.name.as_str() {
        "echo" => match args.get("text").and_then(Value::as_str) {
            Some(t) => done(text(t)),
            None => done(tool_error("echo needs a string argument `text`")),
        },
        "add" => match (args.get("a").and_then(Value::as_f64), args.get("b").and_then(Value::as_f64)) {
            (Some(a), Some(b)) => {
                let sum = a + b;
                done(CallToolResult { structured_content: Some(json!({"sum": sum})), ..text(sum.to_string()) })
            }
            _ => done(tool_error("add needs numbers `a` and `b`")),
        },
        "slow" => {
            let ms = args.get("ms").and_then(Value::as_u64).unwrap_or(0);
            (Answer::Done(Ok(text(format!("slept {ms} ms")))), Duration::from_millis(ms))
        }
        "huge" => (Answer::Huge(huge_mib), Duration::ZERO),
        "stats" => done(text(stats.to_string())),
        "fail" => done(tool_error("this tool always fails")),
        other => (
            Answer::Done(Err(ErrorObject::new(ErrorCode::INVALID_PARAMS, format!("unknown tool: {other}")))),
            Duration::ZERO,
        ),
    }
}

/// The prompts of `--prompts`.
pub(crate) fn prompts() -> Vec<Prompt> {
    vec![
        Prompt {
            name: "greet".into(),
            description: Some("Greets someone".into()),
            arguments: Some(vec![PromptArgument { name: "name".into(), required: Some(true), ..Default::default() }]),
            ..Default::default()
        },
        Prompt { name: "static".into(), description: Some("Always the same".into()), ..Default::default() },
    ]
}

/// `prompts/get`.
pub(crate) fn get_prompt(params: &GetPromptParams) -> Result<GetPromptResult, ErrorObject> {
    let say = |t: String| PromptMessage { role: Role::User, content: ContentBlock::text(t), extra: JsonObject::new() };
    match params.name.as_str() {
        "greet" => {
            let name =
                params.arguments.as_ref().and_then(|a| a.get("name")).cloned().unwrap_or_else(|| "nobody".into());
            Ok(GetPromptResult { messages: vec![say(format!("Hello, {name}!"))], ..Default::default() })
        }
        "static" => Ok(GetPromptResult { messages: vec![say("Always the same.".into())], ..Default::default() }),
        other => Err(ErrorObject::new(ErrorCode::INVALID_PARAMS, format!("unknown prompt: {other}"))),
    }
}

/// The resources of `--resources`.
pub(crate) fn resources() -> Vec<Resource> {
    ["readme", "notes"]
        .iter()
        .map(|name| Resource {
            uri: format!("fake://{name}"),
            name: (*name).into(),
            mime_type: Some("text/plain".into()),
            ..Default::default()
        })
        .collect()
}

/// The resource templates of `--resources`.
pub(crate) fn resource_templates() -> Vec<ResourceTemplate> {
    vec![ResourceTemplate { uri_template: "fake://items/{id}".into(), name: "item".into(), ..Default::default() }]
}

/// `resources/read`.
pub(crate) fn read_resource(uri: &str) -> Result<ResourceContents, ErrorObject> {
    let text = match uri.strip_prefix("fake://") {
        Some("readme") => "This is the fake server's readme.".to_owned(),
        Some("notes") => "Some notes.".to_owned(),
        Some(rest) if rest.starts_with("items/") => format!("item {}", &rest["items/".len()..]),
        _ => return Err(ErrorObject::new(ErrorCode::RESOURCE_NOT_FOUND, format!("no resource {uri}"))),
    };
    Ok(ResourceContents::Text(TextResourceContents {
        uri: uri.into(),
        mime_type: Some("text/plain".into()),
        text,
        ..Default::default()
    }))
}
