//! The explicit adapter from MCP types to the host tool model: an MCP [`Tool`] becomes a
//! [`ToolSpec`] ([`tool_spec`]), a [`CallToolResult`] becomes a [`ToolExecutionResult`]
//! ([`tool_result`]), and tool schemas are checked locally with a [`SchemaCheck`].
//!
//! No MCP wire shape leaks into `tool_system`: every field is mapped by hand, and what the host
//! model has no field for travels in `metadata` (under `_meta` for the protocol's `_meta`).

mod content;
mod guard;
mod schema;
#[cfg(test)]
mod tests;

use mcp_protocol::types::common::Icon;
use mcp_protocol::types::meta::JsonObject;
use mcp_protocol::types::tools::{CallToolResult, Tool, ToolAnnotations};
use mcp_protocol::types::ui::UiToolMeta;
use serde_json::{Map, Value};
use tool_system::{
    ContentItem, Metadata, ResultOrigin, SharedText, ToolAnnotation, ToolCallers, ToolExecutionResult, ToolIcon,
    ToolParameters, ToolSpec, ToolVisibility,
};

pub use guard::{MAX_SCHEMA_DEPTH, MAX_SCHEMA_EXPANSION, MAX_SCHEMA_TEXT, MAX_SCHEMA_VALUES, screen_schema};
pub use schema::{SchemaCheck, SchemaError, SchemaOptions, check_argument_value, check_arguments};

/// The provider name and type of every spec [`tool_spec`] makes.
pub const MCP_PROVIDER: &str = "mcp";

/// The metadata key of a tool's MCP Apps declaration (its `_meta.ui`, read leniently as a
/// [`UiToolMeta`]: the view's `ui://` URI and who may call the tool).
pub const UI_KEY: &str = "ui";

/// The provider name and type of MCP tools ([`MCP_PROVIDER`]), one buffer that every spec
/// shares.
pub(crate) fn mcp_text() -> SharedText {
    static MCP: std::sync::LazyLock<SharedText> = std::sync::LazyLock::new(|| SharedText::from(MCP_PROVIDER));
    MCP.clone()
}

/// The host spec of the MCP tool `tool` of the server named `server`.
///
/// - `name` is the server's own name for the tool and `namespace` is `Some(server)`, so the
///   registry exposes a server-qualified name;
/// - `title` is the tool's title, else its annotations' title;
/// - `parameters` is the `inputSchema` object as it came (the registry makes it an object schema
///   for LLM APIs), `output_schema` the `outputSchema`;
/// - `annotation` maps the behaviour hints and title; `audience` and `priority`, which MCP tool
///   annotations do not model, are read from the annotations' unmodelled members or their
///   `_meta`, and every other unmodelled member goes to the annotation's `metadata`;
/// - `callers` follows the MCP Apps visibility in `_meta.ui` (`["app"]`: only the server's own
///   views may call the tool, and the LLM never sees it; `["model"]`: an app may not call it;
///   absent: both);
/// - `metadata` holds the tool's `_meta` under `_meta`, its `execution` properties under
///   `execution` and its MCP Apps declaration under `ui` ([`UI_KEY`]), when present, and is
///   empty (no allocation) for most tools.
///
/// `server` becomes the namespace, which is where a host reads the server a tool belongs to (the
/// metadata does not repeat it: a copy of the name and a map for each of thousands of tools cost
/// more than the rest of the spec). Pass a [`SharedText`] that the server's other specs share to
/// keep one buffer for it (the routing table does).
pub fn tool_spec(server: impl Into<SharedText>, tool: &Tool, visibility: ToolVisibility) -> ToolSpec {
    let server: SharedText = server.into();
    let title =
        tool.title.clone().or_else(|| tool.annotations.as_ref().and_then(|annotations| annotations.title.clone()));
    let ui = tool.meta.as_ref().and_then(|meta| UiToolMeta::from_meta(&meta.0));
    let callers =
        ui.as_ref().map_or(ToolCallers::BOTH, |ui| ToolCallers { model: ui.model_visible(), app: ui.app_visible() });
    let entries = usize::from(tool.meta.is_some()) + usize::from(tool.execution.is_some()) + usize::from(ui.is_some());
    // Most tools have none: no map is made to be found empty. Otherwise it is sized exactly:
    // hosts list thousands of tools, and a map's default growth would reserve several unused
    // entries per tool.
    let metadata = if entries == 0 {
        Metadata::new()
    } else {
        let mut metadata = Map::with_capacity(entries);
        if let Some(meta) = &tool.meta {
            metadata.insert("_meta".into(), Value::Object(meta.0.clone()));
        }
        if let Some(ui) = &ui {
            metadata.insert(UI_KEY.into(), serde_json::to_value(ui).unwrap_or(Value::Null));
        }
        if let Some(execution) = &tool.execution {
            metadata.insert("execution".into(), serde_json::to_value(execution).unwrap_or(Value::Null));
        }
        metadata.into()
    };
    ToolSpec {
        name: tool.name.clone(),
        title,
        description: tool.description.clone(),
        // Shared with the inventory, not copied, and parsed (once, for both) only when read: a
        // host listing thousands of tools keeps each schema once, as the text it came as.
        parameters: ToolParameters::from_source(tool.input_schema.value_source()),
        output_schema: tool.output_schema.as_deref().map(|schema| Box::new(Value::Object(schema.clone()))),
        icons: tool.icons.iter().flatten().map(tool_icon).collect(),
        annotation: tool.annotations.as_deref().map(|a| Box::new(annotation(a))),
        provider_name: mcp_text(),
        provider_type: mcp_text(),
        namespace: Some(server),
        visibility,
        callers,
        metadata,
    }
}

fn tool_icon(icon: &Icon) -> ToolIcon {
    ToolIcon { src: icon.src.clone(), mime_type: icon.mime_type.clone(), sizes: icon.sizes.clone().unwrap_or_default() }
}

fn annotation(annotations: &ToolAnnotations) -> ToolAnnotation {
    let mut metadata = annotations.extra.clone();
    let audience = take_audience(&mut metadata);
    let priority = take_priority(&mut metadata);
    ToolAnnotation {
        audience,
        priority,
        title: annotations.title.clone(),
        read_only_hint: annotations.read_only_hint,
        destructive_hint: annotations.destructive_hint,
        idempotent_hint: annotations.idempotent_hint,
        open_world_hint: annotations.open_world_hint,
        metadata,
    }
}

/// `audience` from the annotations' members, else from their `_meta`; removed from the members
/// only when it has the expected shape (an array of strings).
fn take_audience(members: &mut JsonObject) -> Vec<String> {
    fn strings(value: &Value) -> Option<Vec<String>> {
        value.as_array()?.iter().map(|v| v.as_str().map(str::to_owned)).collect()
    }
    if let Some(audience) = members.get("audience").and_then(strings) {
        members.shift_remove("audience");
        return audience;
    }
    nested_meta(members).and_then(|meta| meta.get("audience")).and_then(strings).unwrap_or_default()
}

/// `priority` from the annotations' members, else from their `_meta` (a number).
fn take_priority(members: &mut JsonObject) -> Option<f64> {
    if let Some(priority) = members.get("priority").and_then(Value::as_f64) {
        members.shift_remove("priority");
        return Some(priority);
    }
    nested_meta(members).and_then(|meta| meta.get("priority")).and_then(Value::as_f64)
}

fn nested_meta(members: &JsonObject) -> Option<&JsonObject> {
    members.get("_meta").and_then(Value::as_object)
}

/// The host result of a completed `tools/call`.
///
/// - every content block becomes a [`ContentItem`] (blocks a tool
///   result should not hold, `tool_use` and `tool_result`, and unknown types become `Unknown`
///   items that keep the raw block);
/// - `content` is the text blocks joined with `\n` (`None` without text blocks); the structured
///   content is kept. The result's
///   [`history_text`](tool_system::ToolExecutionResult::history_text) takes that text from the
///   items, so it gives every block in order, the text ones and a summary of the others;
/// - `isError` gives a failed result whose error message is the non-blank text blocks joined
///   with `\n`, or a message naming the tool and server when the server gave no text (saying
///   so when it gave structured content instead, which the history text then shows);
/// - with `output_check` (pass it when the tool declares an `outputSchema` that compiled), a
///   successful result must carry structured content that matches it; otherwise the result is
///   failed with a message that names the tool, the server, the JSON path and the problem.
///   Content and structured content stay in a failed result. With a refused `outputSchema`
///   ([`SchemaCheck::untrusted`]) every successful result is failed with the refusal;
/// - `origin` is `origin` (the server as namespace, the tool's name, the protocol revision and
///   the session when there is one), which also names the tool and server in the messages here;
/// - `metadata` holds the result's `_meta` under `_meta` and its unmodelled members under
///   `extra`, and is empty (no allocation) for most results.
pub fn tool_result(
    result: CallToolResult,
    output_check: Option<&SchemaCheck>,
    origin: ResultOrigin,
) -> ToolExecutionResult {
    let (tool, server) = (origin.tool.as_str(), origin.namespace.as_deref().unwrap_or_default());
    let CallToolResult { content, structured_content, is_error, result_type: _, meta, extra } = result;
    let items: Vec<_> = content.into_iter().map(content::content_item).collect();
    let texts = || items.iter().filter_map(ContentItem::as_text);
    let text = join_lines(&items);

    let failure = if is_error == Some(true) {
        let said: Vec<&str> = texts().filter(|t| !t.trim().is_empty()).collect();
        Some(if !said.is_empty() {
            said.join("\n")
        } else if structured_content.is_some() {
            format!("tool `{}` on server `{}` reported an error with structured content but no text", tool, server)
        } else {
            format!("tool `{}` on server `{}` reported an error without a message", tool, server)
        })
    } else {
        output_check.and_then(|check| match &structured_content {
            _ if check.refusal().is_some() => {
                check.refusal().map(|reason| format!("{reason}; the result is not accepted"))
            }
            Some(value) => check.check(value).err().map(|problem| {
                format!(
                    "structured content of tool `{}` on server `{}` does not match its outputSchema {problem}",
                    tool, server
                )
            }),
            None => Some(format!(
                "tool `{}` on server `{}` declares an outputSchema but returned no structuredContent",
                tool, server
            )),
        })
    };

    let mut out = match failure {
        Some(message) => ToolExecutionResult::failed(message),
        None => ToolExecutionResult::ok(),
    };
    out.content = text;
    out.items = items;
    out.structured_content = structured_content;
    // Most results have neither: no map is made to be found empty.
    if meta.is_some() || !extra.is_empty() {
        out.metadata = result_metadata(meta.map(|m| m.0), extra.into_inner()).into();
    }
    out.origin = Some(origin);
    out
}

/// The text items' text joined by line breaks: `None` when there is none, the item's own buffer
/// when there is one (the result holds the text once), else one allocation.
fn join_lines(items: &[ContentItem]) -> Option<SharedText> {
    let mut texts = items.iter().filter_map(|item| match item {
        ContentItem::Text(text) => Some(&text.text),
        _ => None,
    });
    let first = texts.next()?;
    let Some(second) = texts.next() else {
        return Some(first.clone());
    };
    let rest = texts;
    let len = first.len() + 1 + second.len() + rest.clone().map(|t| t.len() + 1).sum::<usize>();
    let mut joined = String::with_capacity(len);
    joined.push_str(first);
    for text in std::iter::once(second).chain(rest) {
        joined.push('\n');
        joined.push_str(text);
    }
    Some(joined.into())
}

/// The result's `_meta` and unmodelled members, in a map sized for them (none for most
/// results: where a result came from is its typed `origin`, not a map's keys).
fn result_metadata(meta: Option<JsonObject>, extra: JsonObject) -> Map<String, Value> {
    let mut metadata = Map::with_capacity(usize::from(meta.is_some()) + usize::from(!extra.is_empty()));
    if let Some(meta) = meta {
        metadata.insert("_meta".into(), Value::Object(meta));
    }
    if !extra.is_empty() {
        metadata.insert("extra".into(), Value::Object(extra));
    }
    metadata
}
