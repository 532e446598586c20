//! The output of each subcommand: a table or text for people, and a JSON document for `--json`.
//!
//! The JSON documents have stable field names (camelCase, as MCP's own) and keep every field
//! present, `null` when there is no value:
//!
//! - `mcp tools`: `{"tools": [{"server", "name", "llmName", "title", "description", "inputSchema",
//!   "outputSchema"}]}`
//! - `mcp prompts`: `{"prompts": [{"server", "name", "title", "description", "arguments":
//!   [{"name", "description", "required"}]}]}`
//! - `mcp resources`: `{"resources": [{"server", "uri", "name", "title", "description", "mimeType",
//!   "size"}]}`
//! - `mcp templates`: `{"templates": [{"server", "uriTemplate", "name", "title", "description",
//!   "mimeType"}]}`
//! - `mcp call`: `{"server", "tool", "isError", "content", "structuredContent", "saved"}` with the
//!   content blocks as the server sent them and `saved` as `[{"index", "path"}]`
//! - `mcp read`: `{"server", "uri", "contents", "saved"}`
//! - `mcp prompt`: `{"server", "name", "description", "messages"}`
//! - `mcp status`: `{"servers": [{"name", "state", "transport", "protocolVersion", "era",
//!   "tools", "prompts", "resources", "templates", "lastError"}]}`

use std::path::{Path, PathBuf};

use mcp_protocol::types::content::{ContentBlock, ResourceContents};
use mcp_protocol::types::prompts::{GetPromptResult, Prompt};
use mcp_protocol::types::resources::{Resource, ResourceTemplate};
use mcp_protocol::types::tools::{CallToolResult, Tool};
use serde_json::{Value, json};

use super::media::{self, SaveError};
use super::{Table, one_line};

/// A tool as `mcp tools` lists it.
#[derive(Debug, Clone)]
pub struct ToolEntry {
    /// The server that offers it.
    pub server: String,
    /// The name an LLM sees (valid for LLM APIs, server-qualified when needed); `None` for a
    /// tool only an MCP App may call, which the LLM never sees.
    pub llm_name: Option<String>,
    /// The tool.
    pub tool: Tool,
}

/// A prompt, resource or template with the server that offers it.
#[derive(Debug, Clone)]
pub struct Served<T> {
    /// The server.
    pub server: String,
    /// The item.
    pub item: T,
}

/// One row of `mcp status`, filled in from the manager's status.
#[derive(Debug, Clone, Default, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StatusRow {
    /// The server's name.
    pub name: String,
    /// Its authorization: the grant, then its state (`oauth: authorized until ...`,
    /// `client credentials (private_key_jwt), DPoP: no token yet ...`, `oauth: needs login`),
    /// for remote servers that use OAuth.
    pub auth: Option<String>,
    /// The OAuth grant it uses (`authorization_code`, `client_credentials`,
    /// `workload_identity`, `enterprise`), for remote servers that use OAuth.
    pub grant: Option<String>,
    /// Its state (`ready`, `failed`, ...).
    pub state: String,
    /// The transport (`stdio`, `streamable_http`, `sse`).
    pub transport: String,
    /// The negotiated revision, when connected.
    pub protocol_version: Option<String>,
    /// `legacy` or `modern`, when connected.
    pub era: Option<String>,
    /// How many tools it offers.
    pub tools: usize,
    /// How many prompts.
    pub prompts: usize,
    /// How many resources.
    pub resources: usize,
    /// How many resource templates.
    pub templates: usize,
    /// Its last error, if any.
    pub last_error: Option<String>,
    /// Why it is `degraded`: the optional lists that failed, with the server's reason.
    pub warnings: Vec<String>,
    /// What the host should know that does not degrade it (names in its `enabled_tools` it lacks).
    pub notices: Vec<String>,
    /// Its tools that another server (earlier in config order) hides, with that server.
    pub hidden: Vec<HiddenTool>,
}

/// A tool of a server that another server's tool of the same name hides.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct HiddenTool {
    /// The tool's name.
    pub tool: String,
    /// The server that keeps the name.
    #[serde(rename = "hiddenBy")]
    pub hidden_by: String,
}

/// A file `--save` wrote: which block (or resource contents) it came from, and where.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Saved {
    /// Index of the block in `content` (or of the item in `contents`).
    pub index: usize,
    /// The file written.
    pub path: PathBuf,
}

fn text_or_dash(text: Option<&str>) -> String {
    text.map(one_line).filter(|t| !t.is_empty()).unwrap_or_else(|| "-".into())
}

/// What `mcp tools` shows in place of the LLM name of a tool only an MCP App may call.
const APP_ONLY: &str = "(app only)";

/// `mcp tools`: NAME, SERVER, LLM NAME, DESCRIPTION.
pub fn tools_table(entries: &[ToolEntry], width: Option<usize>) -> String {
    let mut table = Table::new(["NAME", "SERVER", "LLM NAME", "DESCRIPTION"]);
    for e in entries {
        let description = e.tool.description.as_deref().or(e.tool.title.as_deref()).unwrap_or_default();
        table.row([e.tool.name.as_str(), &e.server, e.llm_name.as_deref().unwrap_or(APP_ONLY), description]);
    }
    table.render(width)
}

/// `mcp tools --schema`: each tool with its input and output schemas, pretty-printed.
pub fn tools_schemas(entries: &[ToolEntry]) -> String {
    let mut out = String::new();
    for e in entries {
        match &e.llm_name {
            Some(llm_name) => out.push_str(&format!("{} (server {}, LLM name {llm_name})\n", e.tool.name, e.server)),
            None => out.push_str(&format!("{} (server {}, {APP_ONLY})\n", e.tool.name, e.server)),
        }
        if let Some(description) = e.tool.description.as_deref() {
            out.push_str(&format!("  {}\n", one_line(description)));
        }
        out.push_str(&indented("input schema", e.tool.input_schema.as_value()));
        if let Some(schema) = &e.tool.output_schema {
            out.push_str(&indented("output schema", &Value::Object(schema.as_ref().clone())));
        }
        out.push('\n');
    }
    out
}

fn indented(label: &str, value: &Value) -> String {
    let pretty = super::terminal::json_text(value);
    let mut out = format!("  {label}:\n");
    for line in pretty.lines() {
        out.push_str("    ");
        out.push_str(line);
        out.push('\n');
    }
    out
}

/// `mcp tools --json`.
pub fn tools_json(entries: &[ToolEntry]) -> Value {
    let tools: Vec<Value> = entries
        .iter()
        .map(|e| {
            json!({"server": e.server, "name": e.tool.name, "llmName": e.llm_name, "title": e.tool.title,
                "description": e.tool.description, "inputSchema": e.tool.input_schema,
                "outputSchema": e.tool.output_schema})
        })
        .collect();
    json!({ "tools": tools })
}

/// The arguments of a prompt for people: `code, language?` (optional ones marked).
fn prompt_arguments(prompt: &Prompt) -> String {
    let args = prompt.arguments.as_deref().unwrap_or_default();
    let names: Vec<String> =
        args.iter().map(|a| if a.required == Some(true) { a.name.clone() } else { format!("{}?", a.name) }).collect();
    if names.is_empty() { "-".into() } else { names.join(", ") }
}

/// `mcp prompts`: NAME, SERVER, ARGUMENTS, DESCRIPTION.
pub fn prompts_table(entries: &[Served<Prompt>], width: Option<usize>) -> String {
    let mut table = Table::new(["NAME", "SERVER", "ARGUMENTS", "DESCRIPTION"]);
    for e in entries {
        let description = e.item.description.as_deref().or(e.item.title.as_deref()).unwrap_or_default();
        table.row([e.item.name.clone(), e.server.clone(), prompt_arguments(&e.item), description.to_owned()]);
    }
    table.render(width)
}

/// `mcp prompts --json`.
pub fn prompts_json(entries: &[Served<Prompt>]) -> Value {
    let prompts: Vec<Value> = entries
        .iter()
        .map(|e| {
            let arguments: Vec<Value> = e
                .item
                .arguments
                .as_deref()
                .unwrap_or_default()
                .iter()
                .map(|a| json!({"name": a.name, "description": a.description, "required": a.required == Some(true)}))
                .collect();
            json!({"server": e.server, "name": e.item.name, "title": e.item.title,
                "description": e.item.description, "arguments": arguments})
        })
        .collect();
    json!({ "prompts": prompts })
}

/// `mcp resources`: URI, SERVER, TYPE, DESCRIPTION.
pub fn resources_table(entries: &[Served<Resource>], width: Option<usize>) -> String {
    let mut table = Table::new(["URI", "SERVER", "TYPE", "DESCRIPTION"]);
    for e in entries {
        let r = &e.item;
        let description = r.description.as_deref().or(r.title.as_deref()).unwrap_or(&r.name);
        table.row([r.uri.clone(), e.server.clone(), text_or_dash(r.mime_type.as_deref()), description.to_owned()]);
    }
    table.render(width)
}

/// `mcp resources --json`.
pub fn resources_json(entries: &[Served<Resource>]) -> Value {
    let resources: Vec<Value> = entries
        .iter()
        .map(|e| {
            let r = &e.item;
            json!({"server": e.server, "uri": r.uri, "name": r.name, "title": r.title,
                "description": r.description, "mimeType": r.mime_type, "size": r.size})
        })
        .collect();
    json!({ "resources": resources })
}

/// `mcp templates`: URI TEMPLATE, SERVER, TYPE, DESCRIPTION.
pub fn templates_table(entries: &[Served<ResourceTemplate>], width: Option<usize>) -> String {
    let mut table = Table::new(["URI TEMPLATE", "SERVER", "TYPE", "DESCRIPTION"]);
    for e in entries {
        let t = &e.item;
        let description = t.description.as_deref().or(t.title.as_deref()).unwrap_or(&t.name);
        table.row([
            t.uri_template.clone(),
            e.server.clone(),
            text_or_dash(t.mime_type.as_deref()),
            description.to_owned(),
        ]);
    }
    table.render(width)
}

/// `mcp templates --json`.
pub fn templates_json(entries: &[Served<ResourceTemplate>]) -> Value {
    let templates: Vec<Value> = entries
        .iter()
        .map(|e| {
            let t = &e.item;
            json!({"server": e.server, "uriTemplate": t.uri_template, "name": t.name, "title": t.title,
                "description": t.description, "mimeType": t.mime_type})
        })
        .collect();
    json!({ "templates": templates })
}

/// Save the images, audio and embedded blobs of a tool result into `dir`, named after the tool
/// and the block's position (`image-1.png` for the first block of tool `image`).
pub fn save_call_media(dir: &Path, tool: &str, result: &CallToolResult) -> Result<Vec<Saved>, SaveError> {
    let mut saved = Vec::new();
    for (index, block) in result.content.iter().enumerate() {
        let suggested = format!("{tool}-{}", index + 1);
        let path = match block {
            ContentBlock::Image(m) | ContentBlock::Audio(m) => {
                media::save_base64(dir, &suggested, Some(&m.mime_type), &m.data)?
            }
            ContentBlock::Resource(e) => match &e.resource {
                ResourceContents::Blob(b) => media::save_base64(dir, &b.uri, b.mime_type.as_deref(), &b.blob)?,
                ResourceContents::Text(_) => continue,
            },
            _ => continue,
        };
        saved.push(Saved { index, path });
    }
    Ok(saved)
}

fn saved_note(saved: &[Saved], index: usize) -> String {
    saved.iter().find(|s| s.index == index).map(|s| format!(" saved to {}", s.path.display())).unwrap_or_default()
}

/// A content block for people: text as it is, media and blobs as summaries.
fn block_text(block: &ContentBlock, saved: &[Saved], index: usize) -> String {
    let note = saved_note(saved, index);
    match block {
        ContentBlock::Text(t) => t.text.clone(),
        ContentBlock::Image(m) => format!("{}{note}", media::summary("image", Some(&m.mime_type), &m.data)),
        ContentBlock::Audio(m) => format!("{}{note}", media::summary("audio", Some(&m.mime_type), &m.data)),
        ContentBlock::ResourceLink(l) => format!("[resource link: {} ({})]", l.uri, l.name),
        ContentBlock::Resource(e) => match &e.resource {
            ResourceContents::Text(t) => format!("[resource {}]\n{}", t.uri, t.text),
            ResourceContents::Blob(b) => {
                format!("[resource {}] {}{note}", b.uri, media::summary("blob", b.mime_type.as_deref(), &b.blob))
            }
        },
        other => format!("[{} content]", other.kind()),
    }
}

/// `mcp call` for people: each block on its own line(s); the structured content, pretty, when
/// no block is text.
pub fn call_result_text(result: &CallToolResult, saved: &[Saved]) -> String {
    let mut parts: Vec<String> = result.content.iter().enumerate().map(|(i, b)| block_text(b, saved, i)).collect();
    let has_text = result.content.iter().any(|b| matches!(b, ContentBlock::Text(_)));
    if let (Some(structured), false) = (&result.structured_content, has_text) {
        parts.push(super::terminal::json_text(structured));
    }
    let mut out = parts.join("\n");
    if !out.ends_with('\n') {
        out.push('\n');
    }
    out
}

/// `mcp call --json`.
pub fn call_result_json(server: &str, tool: &str, result: &CallToolResult, saved: &[Saved]) -> Value {
    json!({"server": server, "tool": tool, "isError": result.is_error == Some(true), "content": result.content,
        "structuredContent": result.structured_content, "saved": saved})
}

/// Save the blob contents of a read resource into `dir`, named after their URIs.
pub fn save_read_media(dir: &Path, contents: &[ResourceContents]) -> Result<Vec<Saved>, SaveError> {
    let mut saved = Vec::new();
    for (index, item) in contents.iter().enumerate() {
        if let ResourceContents::Blob(b) = item {
            let path = media::save_base64(dir, &b.uri, b.mime_type.as_deref(), &b.blob)?;
            saved.push(Saved { index, path });
        }
    }
    Ok(saved)
}

/// `mcp read` for people: text as it is, blobs as summaries; a header per item when there are
/// several.
pub fn read_result_text(contents: &[ResourceContents], saved: &[Saved]) -> String {
    let mut out = String::new();
    for (index, item) in contents.iter().enumerate() {
        if contents.len() > 1 {
            out.push_str(&format!("== {} ==\n", item.uri()));
        }
        match item {
            ResourceContents::Text(t) => out.push_str(&t.text),
            ResourceContents::Blob(b) => {
                out.push_str(&media::summary("blob", b.mime_type.as_deref(), &b.blob));
                out.push_str(&saved_note(saved, index));
            }
        }
        if !out.ends_with('\n') {
            out.push('\n');
        }
    }
    out
}

/// `mcp read --json`.
pub fn read_result_json(server: &str, uri: &str, contents: &[ResourceContents], saved: &[Saved]) -> Value {
    json!({"server": server, "uri": uri, "contents": contents, "saved": saved})
}

/// `mcp prompt` for people: the description, then each message as `role: text`.
pub fn prompt_result_text(result: &GetPromptResult) -> String {
    let mut out = String::new();
    if let Some(description) = &result.description {
        out.push_str(&format!("# {}\n\n", one_line(description)));
    }
    for message in &result.messages {
        let role = serde_json::to_value(&message.role).ok().and_then(|v| v.as_str().map(str::to_owned));
        out.push_str(&format!("{}: {}\n", role.unwrap_or_else(|| "?".into()), block_text(&message.content, &[], 0)));
    }
    out
}

/// `mcp prompt --json`.
pub fn prompt_result_json(server: &str, name: &str, result: &GetPromptResult) -> Value {
    json!({"server": server, "name": name, "description": result.description, "messages": result.messages})
}

/// `mcp status`: SERVER, STATE, TRANSPORT, PROTOCOL, TOOLS, PROMPTS, RESOURCES, TEMPLATES, AUTH,
/// HIDDEN (its tools another server hides) and NOTES (the last error, else why it is degraded,
/// else the notices).
pub fn status_table(rows: &[StatusRow], width: Option<usize>) -> String {
    let mut table = Table::new([
        "SERVER",
        "STATE",
        "TRANSPORT",
        "PROTOCOL",
        "TOOLS",
        "PROMPTS",
        "RESOURCES",
        "TEMPLATES",
        "AUTH",
        "HIDDEN",
        "NOTES",
    ]);
    for r in rows {
        let protocol = match (&r.protocol_version, &r.era) {
            (Some(v), Some(era)) => format!("{v} ({era})"),
            (Some(v), None) => v.clone(),
            _ => "-".into(),
        };
        let mut winners: Vec<&str> = r.hidden.iter().map(|h| h.hidden_by.as_str()).collect();
        winners.dedup();
        let hidden = match r.hidden.len() {
            0 => "-".to_owned(),
            n => format!("{n} (by {})", winners.join(", ")),
        };
        let notes = match (&r.last_error, r.warnings.is_empty()) {
            (Some(error), _) => error.clone(),
            (None, false) => r.warnings.join("; "),
            (None, true) => r.notices.join("; "),
        };
        table.row([
            r.name.clone(),
            r.state.clone(),
            r.transport.clone(),
            protocol,
            r.tools.to_string(),
            r.prompts.to_string(),
            r.resources.to_string(),
            r.templates.to_string(),
            text_or_dash(r.auth.as_deref()),
            hidden,
            text_or_dash(Some(&notes)),
        ]);
    }
    table.render(width)
}

/// `mcp status --json`.
pub fn status_json(rows: &[StatusRow]) -> Value {
    json!({ "servers": rows })
}

#[cfg(test)]
mod tests;
