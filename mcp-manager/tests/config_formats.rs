//! Each configuration format, read from a realistic file under `tests/fixtures/config/`, becomes
//! the expected `McpConfig`; format detection by name and content.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use mcp_manager::config::{
    ClientConfig, ConfigError, ConfigFormat, ElicitationSettings, McpConfig, SamplingSettings, ServerConfig,
    TokenParameter, ToolFilter, TransportChoice,
};
use mcp_manager::connection::EraPreference;
use mcp_protocol::types::logging::LoggingLevel;
use mcp_transport::Secret;
use tool_system::ToolVisibility;

fn fixture(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/config").join(path)
}

fn vars(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
}

fn map(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    vars(pairs)
}

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| s.to_string()).collect()
}

#[test]
fn desktop_json_with_comments_and_trailing_commas() {
    let env = vars(&[("HOME", "/home/me"), ("GITHUB_TOKEN", "ghp_secret"), ("SEARCH_TOKEN", "st_secret")]);
    let config = McpConfig::load_with(&fixture("claude_desktop_config.json"), None, &env).unwrap();
    let expected = vec![
        ServerConfig {
            command: Some("npx".into()),
            args: strings(&["-y", "@modelcontextprotocol/server-filesystem", "/home/me/Documents", "/home/me/Desktop"]),
            env: map(&[("NODE_ENV", "production")]),
            ..ServerConfig::new("filesystem")
        },
        ServerConfig {
            command: Some("docker".into()),
            args: strings(&[
                "run",
                "-i",
                "--rm",
                "-e",
                "GITHUB_PERSONAL_ACCESS_TOKEN",
                "ghcr.io/github/github-mcp-server",
            ]),
            env: map(&[("GITHUB_PERSONAL_ACCESS_TOKEN", "ghp_secret")]),
            cwd: Some(PathBuf::from("/srv/mcp")),
            ..ServerConfig::new("github")
        },
        ServerConfig {
            transport: TransportChoice::Remote,
            url: Some("https://search.example.com/mcp".into()),
            headers: map(&[("Authorization", "Bearer st_secret"), ("X-Client", "desktop")]),
            ..ServerConfig::new("remote-search")
        },
        ServerConfig {
            transport: TransportChoice::Sse,
            url: Some("http://127.0.0.1:8808/sse".into()),
            ..ServerConfig::new("legacy-events")
        },
        // A disabled draft keeps its text as written: no interpolation error, no unknown-key error.
        ServerConfig { enabled: false, command: Some("${NOT_SET_ANYWHERE}".into()), ..ServerConfig::new("draft") },
    ];
    assert_eq!(config.servers, expected);
    assert_eq!(config.client, ClientConfig::default());
    let enabled: Vec<&str> = config.enabled_servers().map(|s| s.name.as_str()).collect();
    assert_eq!(enabled, ["filesystem", "github", "remote-search", "legacy-events"]);
}

#[test]
fn vscode_mcp_json_with_env_file_and_workspace_folder() {
    let env = vars(&[("DOCS_KEY", "dk_secret")]);
    let path = fixture("vscode/.vscode/mcp.json");
    let config = McpConfig::load_with(&path, None, &env).unwrap();
    let workspace = fixture("vscode");
    let expected = vec![
        ServerConfig {
            command: Some("uvx".into()),
            args: strings(&["mcp-server-fetch"]),
            // The env file is merged in; "env" wins over it.
            env: map(&[("EMPTY", ""), ("FETCH_USER_AGENT", "mcp-tests/1.0"), ("LOG_LEVEL", "debug")]),
            ..ServerConfig::new("fetch")
        },
        ServerConfig {
            // VS Code's "http" falls back to SSE, as VS Code does.
            transport: TransportChoice::Remote,
            url: Some("https://docs.example.com/mcp".into()),
            headers: map(&[("X-Api-Key", "dk_secret")]),
            ..ServerConfig::new("docs")
        },
        ServerConfig {
            transport: TransportChoice::StreamableHttp,
            url: Some("https://stream.example.com/mcp".into()),
            ..ServerConfig::new("streaming")
        },
        ServerConfig {
            transport: TransportChoice::Sse,
            url: Some("https://old.example.com/sse".into()),
            ..ServerConfig::new("old")
        },
        ServerConfig {
            command: Some("node".into()),
            args: vec![format!("{}/server/index.js", workspace.display())],
            ..ServerConfig::new("local")
        },
    ];
    assert_eq!(config.servers, expected);
}

#[test]
fn codex_toml() {
    let env = vars(&[("PATH", "/usr/bin"), ("FIGMA_TOKEN", "figd_secret"), ("FIGMA_TEAM", "design")]);
    let config = McpConfig::load_with(&fixture("codex/config.toml"), None, &env).unwrap();
    let expected = vec![
        ServerConfig {
            command: Some("npx".into()),
            args: strings(&["-y", "mcp-server-docs"]),
            env: map(&[("API_KEY", "none"), ("PATH", "/usr/bin")]),
            startup_timeout: Duration::from_secs(20),
            request_timeout: Duration::from_millis(45_500),
            tools: ToolFilter { allow: Some(strings(&["search", "fetch"])), deny: vec![] },
            ..ServerConfig::new("docs")
        },
        ServerConfig {
            transport: TransportChoice::Remote,
            url: Some("https://mcp.figma.com/mcp".into()),
            bearer_token: Some(Secret::new("figd_secret")),
            headers: map(&[("X-Figma-Region", "us-east-1"), ("X-Team", "design")]),
            tools: ToolFilter { allow: None, deny: strings(&["delete_file"]) },
            ..ServerConfig::new("figma")
        },
        ServerConfig { enabled: false, command: Some(String::new()), ..ServerConfig::new("off") },
    ];
    assert_eq!(config.servers, expected);
    assert_eq!(config.client, ClientConfig::default());
}

#[test]
fn reference_toml() {
    let env = vars(&[("GITHUB_TOKEN", "ghp_secret")]);
    let config = McpConfig::load_with(&fixture("mcp.toml"), None, &env).unwrap();
    let expected = vec![
        ServerConfig {
            command: Some("uvx".into()),
            args: strings(&["mcp-server-time", "--local-timezone=UTC"]),
            cwd: Some(PathBuf::from("/tmp")),
            era: EraPreference::Modern,
            log_level: Some(LoggingLevel::Warning),
            tool_visibility: Some(ToolVisibility::Deferred),
            startup_timeout: Duration::from_secs(10),
            request_timeout: Duration::from_secs(15),
            tools: ToolFilter { allow: Some(strings(&["get_current_time"])), deny: vec![] },
            ..ServerConfig::new("time")
        },
        ServerConfig {
            transport: TransportChoice::StreamableHttp,
            url: Some("https://api.githubcopilot.com/mcp/".into()),
            bearer_token: Some(Secret::new("ghp_secret")),
            headers: map(&[("X-MCP-Toolsets", "repos,issues")]),
            read_timeout: Duration::from_secs(120),
            era: EraPreference::Legacy,
            tools: ToolFilter { allow: None, deny: strings(&["delete_repository"]) },
            ..ServerConfig::new("github")
        },
        ServerConfig { enabled: false, ..ServerConfig::new("wip") },
    ];
    assert_eq!(config.servers, expected);
    assert_eq!(
        config.client,
        ClientConfig {
            name: "my-agent".into(),
            version: "2.1.0".into(),
            roots: strings(&["file:///home/me/project"]),
            sampling: SamplingSettings {
                enabled: true,
                tool_support: true,
                requests_per_minute: Some(30),
                default_max_tokens: 2048,
                max_tokens_cap: 4096,
                models: strings(&["gpt-4o-mini", "claude-sonnet"]),
                token_parameter: Some(TokenParameter::MaxCompletionTokens),
                model: Some("gpt-4o-mini".into()),
                base_url: Some("https://llm.example/v1".into()),
                api_key_env: Some("AGENT_LLM_KEY".into()),
            },
            elicitation: ElicitationSettings { enabled: false, url_mode: true },
            reserved_tool_names: strings(&["read_file", "write_file"]),
        }
    );
}

#[test]
fn defaults() {
    let server = ServerConfig::new("x");
    assert!(server.enabled);
    assert_eq!(server.transport, TransportChoice::Stdio);
    assert_eq!(server.startup_timeout, Duration::from_secs(30));
    assert_eq!(server.request_timeout, Duration::from_secs(60));
    assert_eq!(server.read_timeout, Duration::from_secs(300));
    assert_eq!(server.era, EraPreference::Auto);
    assert_eq!(server.tool_visibility, None, "the manager's default");
    assert_eq!(server.log_level, None);
    assert!(server.tools.allows("anything"));
    let client = ClientConfig::default();
    assert_eq!(client.name, "mcp-manager");
    assert_eq!(client.version, env!("CARGO_PKG_VERSION"));
    assert_eq!(client.sampling.default_max_tokens, 1024);
    assert!(client.sampling.enabled && !client.sampling.tool_support);
    assert_eq!(
        (client.sampling.requests_per_minute, client.sampling.max_tokens_cap),
        (Some(30), 4096),
        "safe defaults"
    );
    assert_eq!(client.sampling.token_parameter, None, "the LLM client's own setting");
    assert!(client.elicitation.enabled && !client.elicitation.url_mode);
}

#[test]
fn tool_filter() {
    let filter = ToolFilter { allow: Some(strings(&["a", "b"])), deny: strings(&["b"]) };
    for (name, allowed) in [("a", true), ("b", false), ("c", false)] {
        assert_eq!(filter.allows(name), allowed, "{name}");
    }
    let filter = ToolFilter { allow: None, deny: strings(&["x"]) };
    assert!(filter.allows("y") && !filter.allows("x"));
}

#[test]
fn format_detection() {
    let cases: &[(&str, &str, Result<ConfigFormat, &str>)] = &[
        ("claude_desktop_config.json", r#"{"mcpServers": {}}"#, Ok(ConfigFormat::DesktopJson)),
        ("mcp.json", r#"{"servers": {}}"#, Ok(ConfigFormat::VsCodeJson)),
        ("/p/.vscode/mcp.json", "{}", Ok(ConfigFormat::VsCodeJson)),
        ("C:\\p\\.vscode\\mcp.json", r#"{"mcpServers": {}}"#, Ok(ConfigFormat::VsCodeJson)),
        ("config.toml", "[mcp_servers.x]\ncommand = \"y\"", Ok(ConfigFormat::CodexToml)),
        ("/home/me/.codex/config.toml", "model = \"o3\"", Ok(ConfigFormat::CodexToml)),
        ("host.toml", "[[mcp.servers]]\nname = \"a\"", Ok(ConfigFormat::ReferenceToml)),
        ("stdin", "// comment\n{\"mcpServers\": {}}", Ok(ConfigFormat::DesktopJson)),
        ("stdin", "[mcp]\n", Ok(ConfigFormat::ReferenceToml)),
        (
            "settings.json",
            r#"{"editor": 1}"#,
            Err(
                "cannot tell the configuration format of settings.json: expected a top-level \"mcpServers\" (desktop hosts), \"servers\" (VS Code) or \"context_servers\" (Zed) object",
            ),
        ),
        (
            "both.json",
            r#"{"mcpServers": {}, "servers": {}}"#,
            Err(
                "cannot tell the configuration format of both.json: it has both \"mcpServers\" and \"servers\": pass the format explicitly (desktop or vscode)",
            ),
        ),
        (
            "both.toml",
            "[mcp]\n[mcp_servers]\n",
            Err(
                "cannot tell the configuration format of both.toml: it has both \"mcp_servers\" and \"mcp\": pass the format explicitly (codex or reference)",
            ),
        ),
        (
            "x.toml",
            "a = 1",
            Err(
                "cannot tell the configuration format of x.toml: expected a [mcp_servers] table (Codex) or an [mcp] table (reference format)",
            ),
        ),
    ];
    for (name, text, want) in cases {
        let got = ConfigFormat::detect(name, text).map_err(|e| e.to_string());
        assert_eq!(got, want.map_err(str::to_owned), "{name}: {text}");
    }
}

#[test]
fn explicit_format_overrides_detection() {
    let env = vars(&[]);
    // Both keys: ambiguous unless the format is given.
    let text = r#"{"mcpServers": {"a": {"command": "x"}}, "servers": {"b": {"command": "y"}}}"#;
    assert!(matches!(McpConfig::parse(text, None, "both.json", &env), Err(ConfigError::UnknownFormat { .. })));
    let desktop = McpConfig::parse(text, Some(ConfigFormat::DesktopJson), "both.json", &env).unwrap();
    assert_eq!(desktop.servers[0].name, "a");
    // VS Code reports the other top-level key.
    let err = McpConfig::parse(text, Some(ConfigFormat::VsCodeJson), "both.json", &env).unwrap_err();
    assert_eq!(
        err.to_string(),
        "invalid MCP configuration (1 problem):\n  - field \"mcpServers\": unknown key (a VS Code mcp.json has \"servers\" and \"inputs\")"
    );
    // A name without extension and an explicit TOML format.
    let codex = McpConfig::parse("[mcp_servers.t]\ncommand = \"t\"", Some(ConfigFormat::CodexToml), "-", &env).unwrap();
    assert_eq!(codex.servers[0].command.as_deref(), Some("t"));
}

#[test]
fn format_names() {
    for (text, format) in [
        ("desktop", ConfigFormat::DesktopJson),
        ("Claude", ConfigFormat::DesktopJson),
        ("vscode", ConfigFormat::VsCodeJson),
        ("codex", ConfigFormat::CodexToml),
        ("reference", ConfigFormat::ReferenceToml),
    ] {
        assert_eq!(text.parse::<ConfigFormat>(), Ok(format));
    }
    assert_eq!(ConfigFormat::CodexToml.to_string(), "codex");
    assert_eq!(
        "ini".parse::<ConfigFormat>(),
        Err("unknown config format \"ini\": expected desktop, vscode, codex, reference, claude-code, goose or zed"
            .to_owned())
    );
}

#[test]
fn servers_keep_file_order() {
    let env = vars(&[]);
    let text = r#"{"mcpServers": {"zeta": {"command": "z"}, "alpha": {"command": "a"}, "mid": {"command": "m"}}}"#;
    let config = McpConfig::parse(text, None, "x.json", &env).unwrap();
    let names: Vec<&str> = config.servers.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["zeta", "alpha", "mid"]);
    let text = "[mcp_servers.zeta]\ncommand = \"z\"\n[mcp_servers.alpha]\ncommand = \"a\"\n";
    let config = McpConfig::parse(text, None, "config.toml", &env).unwrap();
    let names: Vec<&str> = config.servers.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["zeta", "alpha"]);
}

#[test]
fn missing_file_is_an_io_error() {
    let path = fixture("does-not-exist.json");
    let err = McpConfig::load(&path).unwrap_err();
    match &err {
        ConfigError::Io { path: p, source } => {
            assert_eq!(p, &path);
            assert_eq!(source.kind(), std::io::ErrorKind::NotFound);
        }
        other => panic!("expected an I/O error, got {other:?}"),
    }
    assert!(err.to_string().starts_with("cannot read MCP configuration "));
}

#[test]
fn oversized_file_is_refused() {
    let path = std::env::temp_dir().join(format!("mcp-manager-config-oversized-{}.json", std::process::id()));
    let mut text = String::from(r#"{"mcpServers": {}, "pad": ""#);
    text.push_str(&" ".repeat(mcp_manager::config::MAX_CONFIG_BYTES as usize));
    text.push_str("\"}");
    std::fs::write(&path, &text).unwrap();
    let err = McpConfig::load(&path).unwrap_err();
    std::fs::remove_file(&path).unwrap();
    match err {
        ConfigError::Io { source, .. } => {
            assert_eq!(source.kind(), std::io::ErrorKind::InvalidData);
            assert_eq!(source.to_string(), "larger than 4194304 bytes");
        }
        other => panic!("expected an I/O error, got {other:?}"),
    }
}
