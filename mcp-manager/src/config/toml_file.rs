//! The TOML formats: Codex's `[mcp_servers.<name>]` tables and this crate's reference `[mcp]`
//! table.

use super::error::{ConfigError, ConfigProblem};
use super::model::ClientConfig;
use super::node::{Node, ObjectReader};
use super::raw::{OAUTH_SNAKE, Spelling};
use super::{Document, json, position};

/// Parses TOML.
pub(crate) fn parse(text: &str, source_name: &str) -> Result<Node, ConfigError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    match text.parse::<toml::Table>() {
        Ok(table) => Ok(Node::from_toml(table)),
        Err(e) => {
            let (line, column) = position(text, e.span().map_or(0, |span| span.start));
            let message = e.message().trim().to_owned();
            Err(ConfigError::Syntax { source_name: source_name.to_owned(), line, column, message })
        }
    }
}

/// Codex's server tables. `tool_timeout_sec` is the request timeout; `enabled_tools` and
/// `disabled_tools` are the tool filter; `env_vars` names variables copied from the
/// environment; `env_http_headers` maps a header to the variable that holds its value;
/// `tool_visibility` (ours: Codex has no such key) defers the server's tools.
const CODEX: Spelling = Spelling {
    name: None,
    transport: None,
    http_is_remote: false,
    enabled: Some("enabled"),
    disabled: None,
    command: "command",
    args: "args",
    env: "env",
    env_file: None,
    env_vars: Some("env_vars"),
    cwd: "cwd",
    url: "url",
    headers: "http_headers",
    env_headers: Some("env_http_headers"),
    bearer_token: None,
    bearer_token_env_var: Some("bearer_token_env_var"),
    auth: None,
    oauth: None,
    startup_timeout: Some("startup_timeout_sec"),
    request_timeout: Some("tool_timeout_sec"),
    read_timeout: None,
    era: None,
    visibility: &["tool_visibility"],
    log_level: None,
    task: None,
    allow: &["enabled_tools"],
    deny: &["disabled_tools"],
    ignored: &[],
    lenient: false,
};

/// The reference format's `[[mcp.servers]]` entries: every setting of `ServerConfig`.
const REFERENCE: Spelling = Spelling {
    name: Some("name"),
    transport: Some("transport"),
    http_is_remote: false,
    enabled: Some("enabled"),
    disabled: None,
    command: "command",
    args: "args",
    env: "env",
    env_file: Some("env_file"),
    env_vars: None,
    cwd: "cwd",
    url: "url",
    headers: "headers",
    env_headers: None,
    bearer_token: Some("bearer_token"),
    bearer_token_env_var: Some("bearer_token_env_var"),
    auth: Some("auth"),
    oauth: Some(("oauth", &OAUTH_SNAKE)),
    startup_timeout: Some("startup_timeout_sec"),
    request_timeout: Some("request_timeout_sec"),
    read_timeout: Some("read_timeout_sec"),
    era: Some("era"),
    // The older spellings (`visibility`, `allowed_tools`, `denied_tools`) still work.
    visibility: &["tool_visibility", "visibility"],
    log_level: Some("log_level"),
    task: Some("task"),
    allow: &["enabled_tools", "allowed_tools"],
    deny: &["disabled_tools", "denied_tools"],
    ignored: &[],
    lenient: false,
};

/// Reads `[mcp_servers.<name>]`. The rest of a Codex `config.toml` is Codex's and is ignored.
pub(crate) fn codex(root: &Node) -> Document {
    let mut doc = Document::default();
    match root.get("mcp_servers") {
        None => {}
        Some(Node::Object(servers)) => {
            doc.servers = servers
                .iter()
                .filter_map(|(name, entry)| json::entry_of(name, "mcp_servers", entry, &CODEX, &mut doc.problems))
                .collect();
        }
        Some(other) => {
            doc.problems.push(ConfigProblem::global("mcp_servers", format!("expected a table, found {}", other.kind())))
        }
    }
    doc
}

/// Reads the `[mcp]` table: `[[mcp.servers]]` and `[mcp.client]`. Keys outside `[mcp]` belong
/// to the host and are ignored.
pub(crate) fn reference(root: &Node) -> Document {
    let mut doc = Document::default();
    let Some(mcp) = root.get("mcp") else { return doc };
    let Some(members) = mcp.as_object() else {
        doc.problems.push(ConfigProblem::global("mcp", format!("expected a table, found {}", mcp.kind())));
        return doc;
    };
    let mut r = ObjectReader::new(members, "mcp.");
    r.check_keys(&["servers", "client"]);
    match r.get("servers") {
        None => {}
        Some(Node::Array(entries)) => {
            for (i, entry) in entries.iter().enumerate() {
                let path = format!("mcp.servers[{i}]");
                match entry {
                    Node::Object(fields) => doc.servers.push(REFERENCE.read(None, path, fields)),
                    other => r.problems.push((path, format!("expected a table, found {}", other.kind()))),
                }
            }
        }
        Some(other) => {
            r.problems.push(("mcp.servers".to_owned(), format!("expected an array of tables, found {}", other.kind())))
        }
    }
    if let Some(client) = r.object("client") {
        doc.client = read_client(client, &mut r.problems);
    }
    doc.problems.extend(r.problems.into_iter().map(|(field, message)| ConfigProblem::global(field, message)));
    doc
}

/// `[mcp.client]`, with its `sampling` and `elicitation` tables.
fn read_client(members: &[(String, Node)], problems: &mut Vec<(String, String)>) -> ClientConfig {
    let mut client = ClientConfig::default();
    let mut r = ObjectReader::new(members, "mcp.client.");
    r.check_keys(&["name", "version", "roots", "sampling", "elicitation", "reserved_tool_names"]);
    for (key, target) in [("name", &mut client.name), ("version", &mut client.version)] {
        if let Some(text) = r.string(key) {
            if text.value.trim().is_empty() {
                r.problem(key, "blank");
            }
            *target = text.value;
        }
    }
    for root in r.strings("roots").unwrap_or_default() {
        match url::Url::parse(&root.value) {
            Ok(url) if url.scheme() == "file" => client.roots.push(root.value),
            _ => r.problems.push((root.field, "not a file:// URI".to_owned())),
        }
    }
    for name in r.strings("reserved_tool_names").unwrap_or_default() {
        if name.value.trim().is_empty() {
            r.problems.push((name.field, "blank".to_owned()));
        } else {
            client.reserved_tool_names.push(name.value);
        }
    }
    if let Some(sampling) = r.object("sampling") {
        let mut s = ObjectReader::new(sampling, "mcp.client.sampling.");
        s.check_keys(&[
            "enabled",
            "tool_support",
            "requests_per_minute",
            "default_max_tokens",
            "max_tokens_cap",
            "models",
            "token_parameter",
            "base_url",
            "model",
            "api_key_env",
        ]);
        let settings = &mut client.sampling;
        settings.enabled = s.bool("enabled").unwrap_or(settings.enabled);
        settings.tool_support = s.bool("tool_support").unwrap_or(settings.tool_support);
        settings.requests_per_minute = s.positive_u32("requests_per_minute").or(settings.requests_per_minute);
        settings.default_max_tokens = s.positive_u32("default_max_tokens").unwrap_or(settings.default_max_tokens);
        settings.max_tokens_cap = s.positive_u32("max_tokens_cap").unwrap_or(settings.max_tokens_cap);
        settings.token_parameter = s.parsed("token_parameter", str::parse).or(settings.token_parameter);
        settings.models = s.strings("models").unwrap_or_default().into_iter().map(|t| t.value).collect();
        for (key, target) in [
            ("base_url", &mut settings.base_url),
            ("model", &mut settings.model),
            ("api_key_env", &mut settings.api_key_env),
        ] {
            if let Some(text) = s.string(key) {
                if text.value.trim().is_empty() {
                    s.problem(key, "blank");
                } else {
                    *target = Some(text.value);
                }
            }
        }
        r.problems.append(&mut s.problems);
    }
    if let Some(elicitation) = r.object("elicitation") {
        let mut e = ObjectReader::new(elicitation, "mcp.client.elicitation.");
        e.check_keys(&["enabled", "url_mode"]);
        client.elicitation.enabled = e.bool("enabled").unwrap_or(client.elicitation.enabled);
        client.elicitation.url_mode = e.bool("url_mode").unwrap_or(client.elicitation.url_mode);
        r.problems.append(&mut e.problems);
    }
    problems.append(&mut r.problems);
    client
}
