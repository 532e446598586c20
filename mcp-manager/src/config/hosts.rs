//! Hosts' own files, read for their servers only: goose's `config.yaml` (`extensions:`), Zed's
//! `settings.json` (`context_servers`) and Claude Code's `~/.claude.json` (`mcpServers`, and
//! `projects.<dir>.mcpServers`). Everything else in these files belongs to the host and is not
//! looked at; an unknown key inside a server entry is a note, never a problem, because these
//! formats grow keys of their own that `mcp` has no use for.

use super::Document;
use super::error::ConfigProblem;
use super::json::{self, DESKTOP, entry_path};
use super::node::Node;
use super::raw::Spelling;

/// goose's extension entries (`ExtensionConfig` in goose's source, flattened into the entry
/// with `enabled`): `type` (`stdio`, `sse`, `streamable_http`), `cmd`, `args`, `envs`,
/// `env_keys` (variables goose fills from its secret store: taken from the environment here),
/// `uri`, `headers`, `timeout` (seconds per request), `available_tools` (the allow-list; empty
/// means every tool). `name`, `display_name`, `description` and `bundled` are goose's.
const GOOSE: Spelling = Spelling {
    name: None,
    transport: Some("type"),
    http_is_remote: false,
    enabled: Some("enabled"),
    disabled: None,
    command: "cmd",
    args: "args",
    env: "envs",
    env_file: None,
    env_vars: Some("env_keys"),
    cwd: "cwd",
    url: "uri",
    headers: "headers",
    env_headers: None,
    bearer_token: None,
    bearer_token_env_var: None,
    auth: None,
    oauth: None,
    startup_timeout: None,
    request_timeout: Some("timeout"),
    read_timeout: None,
    era: None,
    visibility: &[],
    log_level: None,
    task: None,
    allow: &["available_tools"],
    deny: &[],
    ignored: &["name", "display_name", "description", "bundled"],
    lenient: true,
};

/// goose extension types that are not MCP servers `mcp` can start (they run inside goose).
const GOOSE_IN_PROCESS: [&str; 4] = ["builtin", "platform", "frontend", "inline_python"];

/// Zed's `context_servers` entries: `command` (a string, with `args` and `env`; or the older
/// object `{"path", "args", "env"}`), `url` and `headers` for a remote server, `enabled`.
/// `source` and `settings` (an extension's own settings) are Zed's.
const ZED: Spelling = Spelling {
    name: None,
    transport: None,
    http_is_remote: false,
    enabled: Some("enabled"),
    disabled: None,
    command: "command",
    args: "args",
    env: "env",
    env_file: None,
    env_vars: None,
    cwd: "cwd",
    url: "url",
    headers: "headers",
    env_headers: None,
    bearer_token: None,
    bearer_token_env_var: None,
    auth: None,
    oauth: None,
    startup_timeout: None,
    request_timeout: None,
    read_timeout: None,
    era: None,
    visibility: &[],
    log_level: None,
    task: None,
    allow: &[],
    deny: &[],
    ignored: &["source", "settings"],
    lenient: true,
};

/// Claude Code's entries: the desktop keys (`type` is `stdio`, `http` or `sse`), read leniently;
/// its `oauth` object is its own (a note, not our OAuth settings).
const CLAUDE_CODE: Spelling = Spelling { auth: None, oauth: None, lenient: true, ..DESKTOP };

/// Reads goose's `extensions:` mapping.
pub(crate) fn goose(root: &Node) -> Document {
    let mut doc = Document::default();
    let Some(extensions) = members_of(root, "extensions", &mut doc) else { return doc };
    for (name, entry) in extensions {
        let path = entry_path("extensions", name);
        let Node::Object(members) = entry else {
            doc.problems.push(ConfigProblem::global(path, format!("expected a mapping, found {}", entry.kind())));
            continue;
        };
        let kind = members.iter().rev().find(|(k, _)| k == "type").and_then(|(_, v)| match v {
            Node::String(s) => Some(s.trim().to_ascii_lowercase()),
            _ => None,
        });
        if let Some(kind) = kind.filter(|k| GOOSE_IN_PROCESS.contains(&k.as_str())) {
            doc.notes.push(ConfigProblem::global(
                path,
                format!("skipped: a goose {kind} extension runs inside goose, not as an MCP server"),
            ));
            continue;
        }
        // goose writes `available_tools: []` for "every tool"; an empty allow-list would hide all.
        let members: Vec<(String, Node)> = members
            .iter()
            .filter(|(k, v)| !(k == "available_tools" && *v == Node::Array(Vec::new())))
            .cloned()
            .collect();
        doc.servers.push(GOOSE.read(Some(name), path, &members));
    }
    doc
}

/// Reads Zed's `context_servers` object.
pub(crate) fn zed(root: &Node) -> Document {
    let mut doc = Document::default();
    let Some(servers) = members_of(root, "context_servers", &mut doc) else { return doc };
    for (name, entry) in servers {
        let path = entry_path("context_servers", name);
        let Node::Object(members) = entry else {
            doc.problems.push(ConfigProblem::global(path, format!("expected an object, found {}", entry.kind())));
            continue;
        };
        let source = members.iter().rev().find(|(k, _)| k == "source").map(|(_, v)| v);
        let has = |key: &str| members.iter().any(|(k, v)| k == key && *v != Node::Null);
        if source == Some(&Node::String("extension".into())) || (!has("command") && !has("url")) {
            doc.notes.push(ConfigProblem::global(
                path,
                "skipped: a Zed extension's server (its command comes from the extension)",
            ));
            continue;
        }
        let members = flatten_zed_command(members, &path, &mut doc.notes);
        doc.servers.push(ZED.read(Some(name), path, &members));
    }
    doc
}

/// Zed's older `"command": {"path", "args", "env"}` as the flat `command`, `args`, `env`; the
/// same key written both ways is then reported as written twice.
fn flatten_zed_command(members: &[(String, Node)], path: &str, notes: &mut Vec<ConfigProblem>) -> Vec<(String, Node)> {
    let mut out = Vec::with_capacity(members.len() + 2);
    for (key, value) in members {
        match (key.as_str(), value) {
            ("command", Node::Object(inner)) => {
                for (inner_key, inner_value) in inner {
                    match inner_key.as_str() {
                        "path" => out.push(("command".to_owned(), inner_value.clone())),
                        "args" | "env" => out.push((inner_key.clone(), inner_value.clone())),
                        _ => notes.push(ConfigProblem::global(
                            format!("{path}.command.{inner_key}"),
                            "ignored (not a setting mcp reads)",
                        )),
                    }
                }
            }
            _ => out.push((key.clone(), value.clone())),
        }
    }
    out
}

/// Reads Claude Code's user servers (`mcpServers`) and, for `project`, that project's local
/// servers (`projects.<dir>.mcpServers`), which win over a user server of the same name as
/// they do in Claude Code.
pub(crate) fn claude_code(root: &Node, project: Option<&str>) -> Document {
    let mut doc = json::servers_map(root, "mcpServers", &CLAUDE_CODE, Document::default());
    let Some((dir, servers)) = project.and_then(|p| project_servers(root, p)) else { return doc };
    let map_key = format!("projects.{dir:?}.mcpServers");
    for (name, entry) in servers {
        if let Some(server) = json::entry_of(name, &map_key, entry, &CLAUDE_CODE, &mut doc.problems) {
            if let Some(i) = doc.servers.iter().position(|s| &s.name == name) {
                doc.servers.remove(i);
                doc.notes.push(ConfigProblem::server(
                    name,
                    "mcpServers",
                    "the user server is replaced by this project's server of the same name",
                ));
            }
            doc.servers.push(server);
        }
    }
    doc
}

/// The projects of a Claude Code file that have servers: each folder with its server names.
pub(crate) fn claude_code_projects(root: &Node) -> Vec<(String, Vec<String>)> {
    let Some(Node::Object(projects)) = root.get("projects") else { return Vec::new() };
    projects
        .iter()
        .filter_map(|(dir, project)| match project.get("mcpServers") {
            Some(Node::Object(servers)) if !servers.is_empty() => {
                Some((dir.clone(), servers.iter().map(|(name, _)| name.clone()).collect()))
            }
            _ => None,
        })
        .collect()
}

/// The local servers of `project`: Claude Code keys projects by their folder as the system
/// spells it; a Windows folder is matched with either slash.
fn project_servers<'a>(root: &'a Node, project: &str) -> Option<(&'a str, &'a [(String, Node)])> {
    let Node::Object(projects) = root.get("projects")? else { return None };
    let same = |dir: &str| dir == project || dir.replace('\\', "/") == project.replace('\\', "/");
    projects.iter().rev().find(|(dir, _)| same(dir)).and_then(|(dir, p)| match p.get("mcpServers") {
        Some(Node::Object(servers)) => Some((dir.as_str(), servers.as_slice())),
        _ => None,
    })
}

/// The members of the object at top-level `key`: `None` (and nothing said) when it is absent,
/// `None` with a problem when it is not an object.
fn members_of<'a>(root: &'a Node, key: &str, doc: &mut Document) -> Option<&'a [(String, Node)]> {
    let Some(members) = root.as_object() else {
        doc.problems.push(ConfigProblem::global("(top level)", format!("expected a mapping, found {}", root.kind())));
        return None;
    };
    match members.iter().rev().find(|(k, _)| k == key).map(|(_, v)| v) {
        None | Some(Node::Null) => None,
        Some(Node::Object(inner)) => Some(inner),
        Some(other) => {
            doc.problems.push(ConfigProblem::global(key, format!("expected a mapping, found {}", other.kind())));
            None
        }
    }
}
