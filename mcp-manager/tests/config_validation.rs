//! Validation: each problem with its exact message, several problems at once, disabled drafts.

use std::collections::BTreeMap;

use mcp_manager::config::ConfigFormat::{CodexToml as Codex, DesktopJson as Desktop, ReferenceToml as Reference};
use mcp_manager::config::{ConfigError, ConfigFormat, ConfigProblem, McpConfig};

fn vars(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
}

/// The problems `text` has, displayed; empty when it loads.
fn problems(format: ConfigFormat, text: &str, env: &[(&str, &str)]) -> Vec<String> {
    match McpConfig::parse(text, Some(format), "test", &vars(env)) {
        Ok(_) => Vec::new(),
        Err(ConfigError::Invalid(problems)) => problems.iter().map(ToString::to_string).collect(),
        Err(other) => panic!("expected problems, got: {other}"),
    }
}

/// One server entry of desktop JSON named "a".
fn desktop(entry: &str) -> String {
    format!(r#"{{"mcpServers": {{"a": {entry}}}}}"#)
}

/// One `[mcp_servers.a]` table of Codex TOML.
fn codex(body: &str) -> String {
    format!("[mcp_servers.a]\n{body}\n")
}

/// One `[[mcp.servers]]` entry of the reference format named "a".
fn reference(body: &str) -> String {
    format!("[[mcp.servers]]\nname = \"a\"\n{body}\n")
}

/// A case: its name, the format, the text, the environment and the problems expected.
type Case = (&'static str, ConfigFormat, String, Vec<(&'static str, &'static str)>, Vec<&'static str>);

#[test]
fn each_problem_has_its_message() {
    let stdio = "command = \"x\"";
    let cases: Vec<Case> = vec![
        (
            "blank name (reference)",
            Reference,
            "[[mcp.servers]]\nname = \" \"\ncommand = \"x\"\n".into(),
            vec![],
            vec![r#"field "mcp.servers[0].name": blank server name (every server needs a name)"#],
        ),
        (
            "missing name (reference)",
            Reference,
            "[[mcp.servers]]\ncommand = \"x\"\nera = \"old\"\n".into(),
            vec![],
            vec![
                r#"field "mcp.servers[0].name": blank server name (every server needs a name)"#,
                r#"field "mcp.servers[0].era": unknown era "old": expected auto, modern or legacy"#,
            ],
        ),
        (
            "blank name (desktop)",
            Desktop,
            r#"{"mcpServers": {"": {"command": "x"}}}"#.into(),
            vec![],
            vec![r#"field "mcpServers.\"\"": blank server name (every server needs a name)"#],
        ),
        (
            "duplicate names (reference)",
            Reference,
            format!("{}{}", reference(stdio), reference(stdio)),
            vec![],
            vec![
                r#"server "a": field "name": duplicate (another enabled server has this name; disable or rename one)"#,
            ],
        ),
        (
            "duplicate names (JSON object keys)",
            Desktop,
            r#"{"mcpServers": {"a": {"command": "x"}, "a": {"command": "y"}}}"#.into(),
            vec![],
            vec![
                r#"server "a": field "name": duplicate (another enabled server has this name; disable or rename one)"#,
            ],
        ),
        (
            "stdio without command",
            Desktop,
            desktop(r#"{"args": ["x"]}"#),
            vec![],
            vec![r#"server "a": field "command": missing (a stdio server needs a command)"#],
        ),
        (
            "explicit stdio without command",
            Desktop,
            desktop(r#"{"type": "stdio"}"#),
            vec![],
            vec![r#"server "a": field "command": missing (a stdio server needs a command)"#],
        ),
        (
            "blank command",
            Desktop,
            desktop(r#"{"command": " "}"#),
            vec![],
            vec![r#"server "a": field "command": blank"#],
        ),
        (
            "remote without url",
            Desktop,
            desktop(r#"{"type": "http"}"#),
            vec![],
            vec![r#"server "a": field "url": missing (a remote server needs a url)"#],
        ),
        (
            "headers without url",
            Desktop,
            desktop(r#"{"headers": {"X-A": "b"}}"#),
            vec![],
            vec![r#"server "a": field "url": missing (a remote server needs a url)"#],
        ),
        (
            "url not http",
            Desktop,
            desktop(r#"{"url": "ftp://files.example.com/mcp"}"#),
            vec![],
            vec![r#"server "a": field "url": not an http or https URL (scheme "ftp")"#],
        ),
        (
            "url not a URL",
            Desktop,
            desktop(r#"{"url": "/mcp"}"#),
            vec![],
            vec![r#"server "a": field "url": not a valid URL (relative URL without a base)"#],
        ),
        (
            "bearer variable unset",
            Codex,
            codex("url = \"https://x.example\"\nbearer_token_env_var = \"FIGMA_TOKEN\""),
            vec![],
            vec![
                r#"server "a": field "bearer_token_env_var": variable "FIGMA_TOKEN" is not set (the bearer token comes from it)"#,
            ],
        ),
        (
            "bearer variable empty",
            Codex,
            codex("url = \"https://x.example\"\nbearer_token_env_var = \"FIGMA_TOKEN\""),
            vec![("FIGMA_TOKEN", "")],
            vec![
                r#"server "a": field "bearer_token_env_var": variable "FIGMA_TOKEN" is empty (the bearer token comes from it)"#,
            ],
        ),
        (
            "bearer token empty",
            Reference,
            reference("url = \"https://x.example\"\nbearer_token = \"\""),
            vec![],
            vec![r#"server "a": field "bearer_token": empty (a bearer token cannot be empty)"#],
        ),
        (
            "bearer token empty after interpolation",
            Reference,
            reference("url = \"https://x.example\"\nbearer_token = \"${TOKEN:-}\""),
            vec![],
            vec![r#"server "a": field "bearer_token": empty after interpolation (a bearer token cannot be empty)"#],
        ),
        (
            "bearer token twice",
            Reference,
            reference("url = \"https://x.example\"\nbearer_token = \"t\"\nbearer_token_env_var = \"T\""),
            vec![("T", "t")],
            vec![
                r#"server "a": field "bearer_token_env_var": give either "bearer_token" or "bearer_token_env_var", not both"#,
            ],
        ),
        (
            "zero and negative timeouts",
            Codex,
            codex("command = \"x\"\nstartup_timeout_sec = 0\ntool_timeout_sec = -1.5"),
            vec![],
            vec![
                r#"server "a": field "startup_timeout_sec": must be a positive number of seconds (found 0)"#,
                r#"server "a": field "tool_timeout_sec": must be a positive number of seconds (found -1.5)"#,
            ],
        ),
        (
            "nan, huge and text timeouts",
            Reference,
            reference(
                "command = \"x\"\nstartup_timeout_sec = nan\nrequest_timeout_sec = 1e30\nread_timeout_sec = \"5s\"",
            ),
            vec![],
            vec![
                r#"server "a": field "read_timeout_sec": expected a number, found a string"#,
                r#"server "a": field "startup_timeout_sec": must be a finite number of seconds (found NaN)"#,
                r#"server "a": field "request_timeout_sec": too large: at most 31536000 seconds (365 days), found 1e30"#,
            ],
        ),
        (
            "unknown key with a suggestion (desktop)",
            Desktop,
            desktop(r#"{"comand": "npx"}"#),
            vec![],
            vec![
                r#"server "a": field "comand": unknown key (did you mean "command"?)"#,
                r#"server "a": field "command": missing (a stdio server needs a command)"#,
            ],
        ),
        (
            "unknown key with a suggestion (codex)",
            Codex,
            codex("command = \"x\"\ntool_timeout = 5"),
            vec![],
            vec![r#"server "a": field "tool_timeout": unknown key (did you mean "tool_timeout_sec"?)"#],
        ),
        (
            "unknown key with a suggestion (vscode)",
            ConfigFormat::VsCodeJson,
            r#"{"servers": {"a": {"command": "x", "evn": {}}}}"#.into(),
            vec![],
            vec![r#"server "a": field "evn": unknown key (did you mean "env"?)"#],
        ),
        (
            "unknown key without a suggestion",
            Desktop,
            desktop(r#"{"command": "x", "autoApprove": []}"#),
            vec![],
            vec![
                r#"server "a": field "autoApprove": unknown key (known keys: type, disabled, command, args, env, envFile, cwd, url, headers, auth, oauth, toolVisibility, tool_visibility, enabledTools, enabled_tools, disabledTools, disabled_tools)"#,
            ],
        ),
        (
            "unknown key in [mcp]",
            Reference,
            "[mcp]\nserver = []\n".into(),
            vec![],
            vec![r#"field "mcp.server": unknown key (did you mean "servers"?)"#],
        ),
        (
            "key written twice",
            Desktop,
            desktop(r#"{"command": "x", "command": "y"}"#),
            vec![],
            vec![r#"server "a": field "command": written more than once"#],
        ),
        (
            "invalid era",
            Reference,
            reference("command = \"x\"\nera = \"future\""),
            vec![],
            vec![r#"server "a": field "era": unknown era "future": expected auto, modern or legacy"#],
        ),
        (
            "invalid type",
            Desktop,
            desktop(r#"{"type": "websocket", "url": "wss://x"}"#),
            vec![],
            vec![
                r#"server "a": field "type": unknown transport type "websocket": expected "stdio", "streamable_http" (also "streamable-http", "streamableHttp" or "http") or "sse""#,
                r#"server "a": field "url": not an http or https URL (scheme "wss")"#,
            ],
        ),
        (
            "invalid log level and visibility",
            Reference,
            reference("command = \"x\"\nlog_level = \"verbose\"\nvisibility = \"hidden\""),
            vec![],
            vec![
                r#"server "a": field "visibility": unknown visibility "hidden": expected "visible" or "deferred""#,
                r#"server "a": field "log_level": unknown log level "verbose": expected debug, info, notice, warning, error, critical, alert or emergency"#,
            ],
        ),
        (
            "roots that are not file URIs",
            Reference,
            "[mcp.client]\nroots = [\"file:///ok\", \"https://x.example/\", \"/home/me\"]\n".into(),
            vec![],
            vec![
                r#"field "mcp.client.roots[1]": not a file:// URI"#,
                r#"field "mcp.client.roots[2]": not a file:// URI"#,
            ],
        ),
        (
            "client settings",
            Reference,
            "[mcp.client]\nname = \"\"\n[mcp.client.sampling]\nrequests_per_minute = 0\ndefault_max_tokens = \
             1.5\nmodel = []\nmdel = 1\ntoken_parameter = \"max_tokenz\"\n[mcp.client.elicitation]\nurl_mode = \"yes\"\n"
                .into(),
            vec![],
            vec![
                r#"field "mcp.client.name": blank"#,
                r#"field "mcp.client.sampling.mdel": unknown key (did you mean "model"?)"#,
                r#"field "mcp.client.sampling.requests_per_minute": must be a positive whole number"#,
                r#"field "mcp.client.sampling.default_max_tokens": expected a whole number, found a number"#,
                r#"field "mcp.client.sampling.token_parameter": "max_tokenz" is not auto, max_tokens or max_completion_tokens"#,
                r#"field "mcp.client.sampling.model": expected a string, found an array"#,
                r#"field "mcp.client.elicitation.url_mode": expected true or false, found a string"#,
            ],
        ),
        (
            "unset variable",
            Desktop,
            desktop(r#"{"url": "https://${HOST}/mcp"}"#),
            vec![],
            vec![r#"server "a": field "url": variable "HOST" is not set (write ${HOST:-default} to give a default)"#],
        ),
        (
            "stdio fields on a remote server",
            Desktop,
            desktop(
                r#"{"type": "sse", "url": "https://x.example/sse", "command": "y", "args": [], "env": {"A": "b"}}"#,
            ),
            vec![],
            vec![
                r#"server "a": field "command": not used by a remote server"#,
                r#"server "a": field "env": not used by a remote server"#,
            ],
        ),
        (
            "remote fields on a stdio server",
            Reference,
            reference("command = \"x\"\nheaders = { A = \"b\" }\nbearer_token_env_var = \"T\""),
            vec![("T", "t")],
            vec![
                r#"server "a": field "headers": not used by a stdio server"#,
                r#"server "a": field "bearer_token_env_var": not used by a stdio server"#,
            ],
        ),
        (
            "command and url",
            Desktop,
            desktop(r#"{"command": "x", "url": "https://x.example"}"#),
            vec![],
            vec![r#"server "a": field "url": a server has either a command or a url, not both"#],
        ),
        (
            "wrong types",
            Desktop,
            desktop(r#"{"command": ["npx"], "args": "x", "env": {"A": 1}, "disabled": "no"}"#),
            vec![],
            vec![
                r#"server "a": field "disabled": expected true or false, found a string"#,
                r#"server "a": field "command": expected a string, found an array"#,
                r#"server "a": field "args": expected an array of strings, found a string"#,
                r#"server "a": field "env.A": expected a string, found a number"#,
                r#"server "a": field "command": missing (a stdio server needs a command)"#,
            ],
        ),
        (
            "bad header name and value",
            Desktop,
            desktop(r#"{"url": "https://x.example", "headers": {"Bad Header": "x", "X-Ok": "a\nb"}}"#),
            vec![],
            vec![
                r#"server "a": field "headers.Bad Header": not a valid header name"#,
                r#"server "a": field "headers.X-Ok": the value contains a line break or NUL"#,
            ],
        ),
        (
            "env header variable unset",
            Codex,
            codex("url = \"https://x.example\"\nenv_http_headers = { \"X-Team\" = \"TEAM\" }"),
            vec![],
            vec![r#"server "a": field "env_http_headers.X-Team": variable "TEAM" is not set"#],
        ),
        (
            "env_vars that are not names",
            Codex,
            codex("command = \"x\"\nenv_vars = [\"OK\", \"NOT-A-NAME\"]"),
            vec![],
            vec![r#"server "a": field "env_vars[1]": not a variable name"#],
        ),
        (
            "env file without file access",
            Desktop,
            desktop(r#"{"command": "x", "envFile": ".env"}"#),
            vec![],
            vec![
                r#"server "a": field "envFile": env files are read only when the configuration is loaded from a file"#,
            ],
        ),
        (
            "VS Code input variable",
            ConfigFormat::VsCodeJson,
            r#"{"servers": {"a": {"command": "x", "env": {"KEY": "${input:key}"}}}}"#.into(),
            vec![],
            vec![
                r#"server "a": field "env.KEY": VS Code input variables are not supported ("${input:key}"): write the value in the file or use ${env:VAR}"#,
            ],
        ),
        (
            "entry that is not an object",
            Desktop,
            r#"{"mcpServers": {"a": "npx server"}}"#.into(),
            vec![],
            vec![r#"field "mcpServers.a": expected an object, found a string"#],
        ),
        (
            "servers that are not an object",
            Desktop,
            r#"{"mcpServers": []}"#.into(),
            vec![],
            vec![r#"field "mcpServers": expected an object, found an array"#],
        ),
        (
            "servers that are not an array of tables",
            Reference,
            "[mcp]\nservers = 3\n".into(),
            vec![],
            vec![r#"field "mcp.servers": expected an array of tables, found a number"#],
        ),
    ];
    for (name, format, text, env, want) in cases {
        assert_eq!(problems(format, &text, &env), want, "{name}");
    }
}

#[test]
fn several_problems_reported_at_once() {
    let text = r#"{
      "mcpServers": {
        "github": {"type": "http", "headers": {"Authorization": "Bearer ${GH_TOKEN}"}},
        "fs": {"comand": "npx", "args": ["${ROOT}"]},
        "ok": {"command": "uvx", "args": ["mcp-server-time"]},
        "events": {"type": "sse", "url": "ftp://x"}
      }
    }"#;
    let err = McpConfig::parse(text, None, "claude_desktop_config.json", &vars(&[])).unwrap_err();
    let want = [
        ConfigProblem::server("github", "url", "missing (a remote server needs a url)"),
        ConfigProblem::server(
            "github",
            "headers.Authorization",
            "variable \"GH_TOKEN\" is not set (write ${GH_TOKEN:-default} to give a default)",
        ),
        ConfigProblem::server("fs", "comand", "unknown key (did you mean \"command\"?)"),
        ConfigProblem::server(
            "fs",
            "args[0]",
            "variable \"ROOT\" is not set (write ${ROOT:-default} to give a default)",
        ),
        ConfigProblem::server("fs", "command", "missing (a stdio server needs a command)"),
        ConfigProblem::server("events", "url", "not an http or https URL (scheme \"ftp\")"),
    ];
    assert_eq!(err.problems(), want);
    assert_eq!(
        err.to_string(),
        "invalid MCP configuration (6 problems):\n  \
         - server \"github\": field \"url\": missing (a remote server needs a url)\n  \
         - server \"github\": field \"headers.Authorization\": variable \"GH_TOKEN\" is not set (write ${GH_TOKEN:-default} to give a default)\n  \
         - server \"fs\": field \"comand\": unknown key (did you mean \"command\"?)\n  \
         - server \"fs\": field \"args[0]\": variable \"ROOT\" is not set (write ${ROOT:-default} to give a default)\n  \
         - server \"fs\": field \"command\": missing (a stdio server needs a command)\n  \
         - server \"events\": field \"url\": not an http or https URL (scheme \"ftp\")"
    );
}

#[test]
fn disabled_drafts_are_listed_without_problems() {
    let cases: &[(&str, ConfigFormat, &str)] = &[
        (
            "desktop draft",
            Desktop,
            r#"{"mcpServers": {"a": {"disabled": true, "comand": "x", "url": "ftp://${NOPE}"}}}"#,
        ),
        (
            "codex draft",
            Codex,
            "[mcp_servers.a]\nenabled = false\nbearer_token_env_var = \"UNSET\"\nstartup_timeout_sec = 0",
        ),
        (
            "reference draft",
            Reference,
            "[[mcp.servers]]\nname = \"a\"\nenabled = false\nera = \"?\"\ntransport = \"pigeon\"",
        ),
        ("blank name draft", Reference, "[[mcp.servers]]\nname = \"\"\nenabled = false"),
    ];
    for (name, format, text) in cases {
        let config =
            McpConfig::parse(text, Some(*format), "test", &vars(&[])).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(config.servers.len(), 1, "{name}");
        assert!(!config.servers[0].enabled, "{name}");
        assert_eq!(config.enabled_servers().count(), 0, "{name}");
    }
    // A disabled server may share its name with an enabled one.
    let text = "[[mcp.servers]]\nname = \"a\"\ncommand = \"x\"\n[[mcp.servers]]\nname = \"a\"\nenabled = false\n";
    let config = McpConfig::parse(text, Some(Reference), "test", &vars(&[])).unwrap();
    assert_eq!(config.servers.len(), 2);
    assert_eq!(config.server("a").map(|s| s.enabled), Some(true));
    // An enabled draft is validated.
    let text = "[[mcp.servers]]\nname = \"a\"\nenabled = true\n";
    assert_eq!(
        problems(Reference, text, &[]),
        [r#"server "a": field "command": missing (a stdio server needs a command)"#]
    );
}

#[test]
fn host_keys_outside_our_tables_are_ignored() {
    let env = vars(&[]);
    let desktop = r#"{"globalShortcut": "x", "preferences": {"a": 1}, "mcpServers": {}}"#;
    assert!(McpConfig::parse(desktop, None, "claude_desktop_config.json", &env).unwrap().servers.is_empty());
    let codex = "model = \"o3\"\n[profiles.x]\nmodel = \"y\"\n[mcp_servers.a]\ncommand = \"x\"\n";
    assert_eq!(McpConfig::parse(codex, None, "config.toml", &env).unwrap().servers.len(), 1);
    let reference = "[ui]\ntheme = \"dark\"\n[mcp]\n";
    assert!(McpConfig::parse(reference, None, "host.toml", &env).unwrap().servers.is_empty());
}

/// Timeouts that a `Duration` can hold but a deadline cannot (`now + 1e19 s` overflows the clock
/// and panicked, exit 5) are refused at validation in every format that has timeouts, with the
/// server and the field named; so are infinities, NaN, negatives and the value just over the cap.
/// The JSON formats have no timeout keys: the same numbers there are unknown keys, never a panic.
#[test]
fn absurd_timeouts_are_refused_in_every_format() {
    let cap = "too large: at most 31536000 seconds (365 days)";
    let cases: Vec<Case> = vec![
        (
            "1e19 (codex)",
            Codex,
            codex("command = \"x\"\ntool_timeout_sec = 1e19\nstartup_timeout_sec = 31536000.5"),
            vec![],
            vec![
                r#"server "a": field "startup_timeout_sec": too large: at most 31536000 seconds (365 days), found 31536000.5"#,
                r#"server "a": field "tool_timeout_sec": too large: at most 31536000 seconds (365 days), found 1e19"#,
            ],
        ),
        (
            "1e19, -1 and inf (reference)",
            Reference,
            reference("command = \"x\"\nrequest_timeout_sec = 1e19\nstartup_timeout_sec = -1\nread_timeout_sec = -inf"),
            vec![],
            vec![
                r#"server "a": field "startup_timeout_sec": must be a positive number of seconds (found -1)"#,
                r#"server "a": field "request_timeout_sec": too large: at most 31536000 seconds (365 days), found 1e19"#,
                r#"server "a": field "read_timeout_sec": must be a finite number of seconds (found -inf)"#,
            ],
        ),
        (
            "inf, nan and a whole number just over the cap (codex)",
            Codex,
            codex("command = \"x\"\ntool_timeout_sec = inf\nstartup_timeout_sec = 31536001"),
            vec![],
            vec![
                r#"server "a": field "startup_timeout_sec": too large: at most 31536000 seconds (365 days), found 31536001"#,
                r#"server "a": field "tool_timeout_sec": must be a finite number of seconds (found inf)"#,
            ],
        ),
        (
            "below a nanosecond (reference)",
            Reference,
            reference("command = \"x\"\nrequest_timeout_sec = 1e-12"),
            vec![],
            vec![r#"server "a": field "request_timeout_sec": must be at least one nanosecond (found 1e-12)"#],
        ),
        (
            "NaN-ish strings (reference)",
            Reference,
            reference("command = \"x\"\nrequest_timeout_sec = \"NaN\"\nstartup_timeout_sec = \"1e19\""),
            vec![],
            vec![
                r#"server "a": field "startup_timeout_sec": expected a number, found a string"#,
                r#"server "a": field "request_timeout_sec": expected a number, found a string"#,
            ],
        ),
    ];
    for (name, format, text, env, expected) in cases {
        let mut got = problems(format, &text, &env);
        let mut expected: Vec<String> = expected.iter().map(|s| s.to_string()).collect();
        got.sort();
        expected.sort();
        assert_eq!(got, expected, "case {name:?}");
        assert!(got.iter().all(|p| !p.contains(cap) || p.contains("found")), "case {name:?}");
    }

    // The cap itself is allowed, and gives that duration.
    let config =
        McpConfig::parse(&codex("command = \"x\"\ntool_timeout_sec = 31536000"), Some(Codex), "test", &vars(&[]))
            .expect("the cap itself is allowed");
    assert_eq!(config.servers[0].request_timeout, mcp_manager::config::MAX_TIMEOUT);

    // JSON numbers out of range, in the JSON formats (no timeout keys there) and in TOML (an
    // integer past i64 is a syntax error): a problem or an error, never a panic.
    for (format, text) in [
        (Desktop, desktop(r#"{"command": "x", "timeout": 1e19, "tool_timeout_sec": 1e400}"#)),
        (ConfigFormat::VsCodeJson, r#"{"servers": {"a": {"command": "x", "timeout": -1e400}}}"#.to_owned()),
        (Codex, codex("command = \"x\"\ntool_timeout_sec = 100000000000000000000")),
    ] {
        let outcome = McpConfig::parse(&text, Some(format), "test", &vars(&[]));
        assert!(outcome.is_err(), "{format:?}: {text}");
    }
}
