//! The JSON formats: desktop hosts' `mcpServers` and VS Code's `.vscode/mcp.json`.
//!
//! Both are read as JSON with comments: `//` and `/* */` comments and trailing commas are
//! accepted; single quotes, unquoted keys, hexadecimal numbers and the like are not.

use jsonc_parser::ParseOptions;

use super::error::{ConfigError, ConfigProblem};
use super::node::Node;
use super::raw::{OAUTH_CAMEL, RawServer, Spelling};
use super::{Document, position};

/// Parses JSON with comments and trailing commas.
pub(crate) fn parse(text: &str, source_name: &str) -> Result<Node, ConfigError> {
    let options = ParseOptions {
        allow_comments: true,
        allow_trailing_commas: true,
        allow_loose_object_property_names: false,
        allow_missing_commas: false,
        allow_single_quoted_strings: false,
        allow_hexadecimal_numbers: false,
        allow_unary_plus_numbers: false,
        allow_bare_decimal_point_numbers: false,
        allow_non_finite_numbers: false,
        allow_extended_string_escapes: false,
    };
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    jsonc_parser::parse_to_serde_value::<Node>(text, &options).map_err(|e| {
        let (line, column) = if e.range().start == 0 && e.range().end == 0 {
            (e.line_display(), e.column_display())
        } else {
            position(text, e.range().start)
        };
        ConfigError::Syntax { source_name: source_name.to_owned(), line, column, message: e.kind().to_string() }
    })
}

/// Server entries of desktop hosts (Claude Desktop, Cursor, Windsurf, ...):
/// `{"command", "args", "env", "cwd", "envFile"}` or `{"url", "headers", "type"}`, with
/// `"disabled": true` as some hosts write it. The tool filter and visibility are ours, in the
/// format's camelCase (`enabledTools`, `disabledTools`, `toolVisibility`), with Codex's
/// spellings (`enabled_tools`, `disabled_tools`, `tool_visibility`) accepted too.
pub(crate) const DESKTOP: Spelling = Spelling {
    name: None,
    transport: Some("type"),
    http_is_remote: false,
    enabled: None,
    disabled: Some("disabled"),
    command: "command",
    args: "args",
    env: "env",
    env_file: Some("envFile"),
    env_vars: None,
    cwd: "cwd",
    url: "url",
    headers: "headers",
    env_headers: None,
    bearer_token: None,
    bearer_token_env_var: None,
    auth: Some("auth"),
    oauth: Some(("oauth", &OAUTH_CAMEL)),
    startup_timeout: None,
    request_timeout: None,
    read_timeout: None,
    era: None,
    visibility: &["toolVisibility", "tool_visibility"],
    log_level: None,
    task: None,
    allow: &["enabledTools", "enabled_tools"],
    deny: &["disabledTools", "disabled_tools"],
    ignored: &[],
    lenient: false,
};

/// VS Code's server entries. `dev` (VS Code's watch-and-debug settings) is accepted and
/// ignored.
const VSCODE: Spelling = Spelling { http_is_remote: true, disabled: None, ignored: &["dev"], ..DESKTOP };

/// Reads `{"mcpServers": {...}}`. Other top-level keys belong to the host and are ignored.
pub(crate) fn desktop(root: &Node) -> Document {
    servers_map(root, "mcpServers", &DESKTOP, Document::default())
}

/// Reads `{"servers": {...}, "inputs": [...]}`. `inputs` (VS Code's prompts) is ignored: a
/// `${input:...}` reference is reported where it is used.
pub(crate) fn vscode(root: &Node) -> Document {
    let mut doc = Document::default();
    if let Some(members) = root.as_object() {
        for (key, _) in members {
            if key != "servers" && key != "inputs" {
                doc.problems.push(ConfigProblem::global(
                    key,
                    "unknown key (a VS Code mcp.json has \"servers\" and \"inputs\")",
                ));
            }
        }
    }
    servers_map(root, "servers", &VSCODE, doc)
}

/// The servers of an object keyed by server name.
pub(crate) fn servers_map(root: &Node, key: &str, spelling: &Spelling, mut doc: Document) -> Document {
    let Some(members) = root.as_object() else {
        doc.problems.push(ConfigProblem::global("(top level)", format!("expected an object, found {}", root.kind())));
        return doc;
    };
    let servers = match members.iter().rev().find(|(k, _)| k == key).map(|(_, v)| v) {
        None | Some(Node::Null) => return doc,
        Some(Node::Object(servers)) => servers,
        Some(other) => {
            doc.problems.push(ConfigProblem::global(key, format!("expected an object, found {}", other.kind())));
            return doc;
        }
    };
    doc.servers =
        servers.iter().filter_map(|(name, entry)| entry_of(name, key, entry, spelling, &mut doc.problems)).collect();
    doc
}

/// One entry of a map keyed by server name (JSON or TOML).
pub(crate) fn entry_of(
    name: &str,
    map_key: &str,
    entry: &Node,
    spelling: &Spelling,
    problems: &mut Vec<ConfigProblem>,
) -> Option<RawServer> {
    let path = entry_path(map_key, name);
    match entry {
        Node::Object(members) => Some(spelling.read(Some(name), path, members)),
        other => {
            problems.push(ConfigProblem::global(path, format!("expected an object, found {}", other.kind())));
            None
        }
    }
}

/// Where the entry `name` of the map `map_key` is, for problems: `mcpServers.github`, or
/// `mcpServers."my server"` when the name needs quotes.
pub(crate) fn entry_path(map_key: &str, name: &str) -> String {
    let plain = !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if plain { format!("{map_key}.{name}") } else { format!("{map_key}.{name:?}") }
}
