//! Hosts' own files: goose's YAML extensions, Zed's `context_servers` and Claude Code's
//! `~/.claude.json`. Their servers load; keys of the host's own are notes, never problems;
//! wrong types are problems naming the server and key; the readers are bounded.

use std::collections::BTreeMap;
use std::time::Duration;

use mcp_manager::config::{
    ConfigError, ConfigFormat, LoadedConfig, MAX_CONFIG_BYTES, McpConfig, ParseOptions, TransportChoice,
    claude_code_projects,
};

fn vars(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
}

fn parse(text: &str, name: &str, env: &BTreeMap<String, String>) -> Result<LoadedConfig, ConfigError> {
    McpConfig::parse_noted(text, &ParseOptions::new(name, env))
}

fn notes(loaded: &LoadedConfig) -> Vec<String> {
    loaded.notes.iter().map(ToString::to_string).collect()
}

const GOOSE: &str = r#"
GOOSE_PROVIDER: openai
GOOSE_MODEL: gpt-4o
extensions:
  developer:
    enabled: true
    type: builtin
    name: developer
    display_name: Developer
    timeout: 300
    bundled: true
  github:
    enabled: true
    type: stdio
    name: github
    cmd: npx
    args: [-y, "@modelcontextprotocol/server-github"]
    envs: {GITHUB_API_URL: "https://api.github.com"}
    env_keys: [GITHUB_TOKEN]
    timeout: 120
    description: GitHub tools
    available_tools: []
    frobnicate: 3
  remote:
    enabled: false
    type: streamable_http
    uri: https://mcp.example.com/mcp
    headers: {X-Team: blue}
    available_tools: [search]
  legacy:
    enabled: true
    type: sse
    uri: http://127.0.0.1:9000/sse
"#;

#[test]
fn goose_extensions_load_with_notes_for_goose_keys() {
    let env = vars(&[("GITHUB_TOKEN", "ghp_secret")]);
    let loaded = parse(GOOSE, "/home/me/.config/goose/config.yaml", &env).unwrap();
    let config = &loaded.config;
    let names: Vec<_> = config.servers.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["github", "remote", "legacy"], "the builtin extension is skipped");

    let github = &config.servers[0];
    assert_eq!(github.transport, TransportChoice::Stdio);
    assert_eq!(github.command.as_deref(), Some("npx"));
    assert_eq!(github.args, ["-y", "@modelcontextprotocol/server-github"]);
    assert_eq!(github.env.get("GITHUB_TOKEN").map(String::as_str), Some("ghp_secret"), "env_keys from the env");
    assert_eq!(github.env.get("GITHUB_API_URL").map(String::as_str), Some("https://api.github.com"));
    assert_eq!(github.request_timeout, Duration::from_secs(120));
    assert_eq!(github.tools.allow, None, "goose's empty available_tools means every tool");

    let remote = &config.servers[1];
    assert!(!remote.enabled);
    assert_eq!(remote.transport, TransportChoice::StreamableHttp);
    assert_eq!(remote.url.as_deref(), Some("https://mcp.example.com/mcp"));
    assert_eq!(remote.tools.allow, Some(vec!["search".to_owned()]));
    assert_eq!(config.servers[2].transport, TransportChoice::Sse);

    let said = notes(&loaded);
    assert_eq!(said.len(), 2, "{said:?}");
    assert!(said[0].contains("extensions.developer") && said[0].contains("builtin"), "{said:?}");
    assert!(said[1].contains("server \"github\"") && said[1].contains("frobnicate") && said[1].contains("ignored"));
    assert!(!said.iter().any(|n| n.contains("ghp_secret")));
    assert_eq!(ConfigFormat::detect("config.yml", GOOSE).unwrap(), ConfigFormat::GooseYaml);
}

#[test]
fn goose_bad_types_are_problems_naming_server_and_key() {
    let text = "extensions:\n  broken:\n    type: stdio\n    cmd: [npx]\n    timeout: soon\n  other: 5\n  weird:\n    type: carrier_pigeon\n    cmd: x\n";
    let err = parse(text, "config.yaml", &vars(&[])).unwrap_err();
    let problems: Vec<String> = err.problems().iter().map(ToString::to_string).collect();
    assert!(problems.iter().any(|p| p.contains("\"broken\"") && p.contains("\"cmd\"") && p.contains("a string")));
    assert!(problems.iter().any(|p| p.contains("\"broken\"") && p.contains("\"timeout\"") && p.contains("a number")));
    assert!(problems.iter().any(|p| p.contains("extensions.other") && p.contains("expected a mapping")));
    assert!(problems.iter().any(|p| p.contains("\"weird\"") && p.contains("carrier_pigeon")), "{problems:?}");

    let err = parse("extensions: [a, b]\n", "config.yaml", &vars(&[])).unwrap_err();
    assert!(err.to_string().contains("field \"extensions\": expected a mapping, found an array"), "{err}");
    let err = parse("extensions:\n  a: {cmd: x\n", "goose.yaml", &vars(&[])).unwrap_err();
    assert!(matches!(&err, ConfigError::Syntax { source_name, .. } if source_name == "goose.yaml"), "{err}");
    // A file with no extensions has no servers, and that is not an error of the loader.
    assert!(parse("GOOSE_MODEL: x\n", "config.yaml", &vars(&[])).unwrap().config.servers.is_empty());
}

const ZED: &str = r#"{
  // Zed's settings: JSON with comments.
  "theme": "One Dark",
  "context_servers": {
    "local": {"source": "custom", "command": "uvx", "args": ["mcp-server-time"], "env": {"TZ": "UTC"}},
    "old-style": {"command": {"path": "node", "args": ["server.js"], "env": {"A": "1"}, "wat": 1}, "settings": {}},
    "remote": {"url": "https://mcp.example.com/mcp", "headers": {"Authorization": "Bearer xyz"}, "timeout": 30},
    "from-extension": {"source": "extension", "settings": {"token": "t"}},
    "off": {"command": "x", "enabled": false},
  },
}"#;

#[test]
fn zed_context_servers_in_both_command_forms() {
    let loaded = parse(ZED, "/home/me/.config/zed/settings.json", &vars(&[])).unwrap();
    let servers = &loaded.config.servers;
    let names: Vec<_> = servers.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["local", "old-style", "remote", "off"]);
    assert_eq!(servers[0].command.as_deref(), Some("uvx"));
    assert_eq!(servers[0].args, ["mcp-server-time"]);
    assert_eq!(servers[1].command.as_deref(), Some("node"));
    assert_eq!(servers[1].args, ["server.js"]);
    assert_eq!(servers[1].env.get("A").map(String::as_str), Some("1"));
    assert_eq!(servers[2].transport, TransportChoice::Remote);
    assert!(servers[2].headers.contains_key("Authorization"));
    assert!(!servers[3].enabled);
    let said = notes(&loaded).join("\n");
    assert!(said.contains("context_servers.old-style.command.wat"), "{said}");
    assert!(said.contains("\"remote\"") && said.contains("timeout"), "{said}");
    assert!(said.contains("from-extension") && said.contains("extension"), "{said}");
    assert!(!said.contains("xyz"), "a header value is never in a note: {said}");
    assert_eq!(ConfigFormat::detect("settings.json", ZED).unwrap(), ConfigFormat::ZedJson);

    // The same key given in both forms is a problem, as any key written twice.
    let twice = r#"{"context_servers": {"s": {"command": {"path": "a", "args": ["1"]}, "args": ["2"]}}}"#;
    let err = McpConfig::parse(twice, Some(ConfigFormat::ZedJson), "settings.json", &vars(&[])).unwrap_err();
    assert!(err.to_string().contains("\"args\": written more than once"), "{err}");
    let err =
        McpConfig::parse(r#"{"context_servers": {"s": {"command": 7}}}"#, Some(ConfigFormat::ZedJson), "z", &vars(&[]))
            .unwrap_err();
    assert!(err.to_string().contains("server \"s\": field \"command\": expected a string, found a number"), "{err}");
}

const CLAUDE_CODE: &str = r#"{
  "numStartups": 12,
  "oauthAccount": {"emailAddress": "me@example.com"},
  "mcpServers": {
    "memory": {"type": "stdio", "command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"], "env": {}},
    "shared": {"command": "user-version"}
  },
  "projects": {
    "/home/me/app": {
      "allowedTools": [], "history": [{"display": "hi"}],
      "mcpServers": {
        "shared": {"command": "project-version", "alwaysAllow": ["x"]},
        "docs": {"type": "http", "url": "https://docs.example.com/mcp", "headers": {"Authorization": "Bearer s3cret"}}
      }
    },
    "/home/me/empty": {"mcpServers": {}},
    "/home/me/other": {"mcpServers": {"other": {"type": "sse", "url": "http://127.0.0.1:1/sse"}}}
  }
}"#;

#[test]
fn claude_code_reads_user_and_project_servers_only() {
    let env = vars(&[]);
    let user = parse(CLAUDE_CODE, "/home/me/.claude.json", &env).unwrap();
    let names: Vec<_> = user.config.servers.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["memory", "shared"], "only the user scope without a project");
    assert!(user.notes.is_empty(), "{:?}", user.notes);

    let options = ParseOptions { project: Some("/home/me/app"), ..ParseOptions::new("/home/me/.claude.json", &env) };
    let app = McpConfig::parse_noted(CLAUDE_CODE, &options).unwrap();
    let names: Vec<_> = app.config.servers.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["memory", "shared", "docs"]);
    assert_eq!(app.config.servers[1].command.as_deref(), Some("project-version"), "the project's wins");
    assert_eq!(app.config.servers[2].transport, TransportChoice::StreamableHttp);
    let said = notes(&app).join("\n");
    assert!(said.contains("replaced") && said.contains("alwaysAllow"), "{said}");
    assert!(!said.contains("s3cret"));

    let projects = claude_code_projects(CLAUDE_CODE, ".claude.json").unwrap();
    assert_eq!(
        projects,
        [
            ("/home/me/app".to_owned(), vec!["shared".to_owned(), "docs".to_owned()]),
            ("/home/me/other".to_owned(), vec!["other".to_owned()])
        ]
    );
    // A project that is not in the file adds nothing.
    let options = ParseOptions { project: Some("/nowhere"), ..ParseOptions::new(".claude.json", &env) };
    assert_eq!(McpConfig::parse_noted(CLAUDE_CODE, &options).unwrap().config.servers.len(), 2);
    // A wrong type in a project's server is a problem naming where it is.
    let bad = r#"{"projects": {"/p": {"mcpServers": {"s": {"command": ["x"]}}}}}"#;
    let options = ParseOptions { project: Some("/p"), ..ParseOptions::new(".claude.json", &env) };
    let err = McpConfig::parse_noted(bad, &options).unwrap_err();
    assert!(err.to_string().contains("server \"s\": field \"command\": expected a string"), "{err}");
}

#[test]
fn host_files_are_bounded() {
    let dir = tempfile::tempdir().unwrap();
    let big = dir.path().join("config.yaml");
    let mut text = String::from("extensions: {}\n");
    text.push_str(&"# padding\n".repeat((MAX_CONFIG_BYTES / 10 + 1) as usize));
    std::fs::write(&big, &text).unwrap();
    let err = McpConfig::load_noted(&big, None, None, &vars(&[])).unwrap_err();
    assert!(err.to_string().contains("config.yaml") && err.to_string().contains("larger than"), "{err}");

    // Claude Code's file holds its own history too: it may be larger than a config.
    let claude = dir.path().join(".claude.json");
    let history = "x".repeat((MAX_CONFIG_BYTES + 1024) as usize);
    std::fs::write(&claude, format!(r#"{{"history": "{history}", "mcpServers": {{"m": {{"command": "x"}}}}}}"#))
        .unwrap();
    let loaded = McpConfig::load_noted(&claude, None, None, &vars(&[])).unwrap();
    assert_eq!(loaded.config.servers[0].name, "m");
}
