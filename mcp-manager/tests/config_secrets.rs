//! Secrets (bearer tokens, secret-looking headers, env values, URL passwords) never appear in
//! `Debug` output or in error messages; syntax errors name the file, line and column.

use std::collections::BTreeMap;

use mcp_manager::config::{ConfigError, ConfigFormat, McpConfig};

fn vars(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
}

const SECRETS: [&str; 6] = ["tok-ABC", "hdr-DEF", "key-GHI", "env-JKL", "pw-MNO", "q-PQR"];

#[test]
fn debug_output_hides_secrets() {
    let env = vars(&[("BEARER", "tok-ABC"), ("API", "key-GHI")]);
    let text = r#"
        [[mcp.servers]]
        name = "remote"
        url = "https://user:pw-MNO@api.example.com/mcp?token=q-PQR"
        bearer_token = "${BEARER}"
        headers = { Authorization = "Basic hdr-DEF", "X-Api-Key" = "${API}", "X-Client" = "visible-value" }

        [[mcp.servers]]
        name = "local"
        command = "server"
        env = { DATABASE_URL = "env-JKL" }
    "#;
    let config = McpConfig::parse(text, Some(ConfigFormat::ReferenceToml), "host.toml", &env).unwrap();
    assert_eq!(config.servers[0].bearer_token.as_ref().map(|t| t.expose()), Some("tok-ABC"));
    for debug in [format!("{config:?}"), format!("{config:#?}")] {
        for secret in SECRETS {
            assert!(!debug.contains(secret), "{secret} in {debug}");
        }
        assert!(debug.contains("visible-value"), "{debug}");
        assert!(debug.contains("X-Api-Key") && debug.contains("DATABASE_URL"), "{debug}");
        assert!(debug.contains("<redacted>"), "{debug}");
    }
}

#[test]
fn error_messages_hide_secrets() {
    let env = vars(&[("BEARER", "tok-ABC")]);
    // Every field below holds a secret and is wrong in some way.
    let text = r#"{"mcpServers": {
        "bad-scheme": {"url": "ftp://user:pw-MNO@files.example/?token=q-PQR", "headers": {"Authorization": "hdr-DEF\n"}},
        "bad-header": {"url": "https://x.example", "headers": {"X-Api-Key": "key-GHI${UNSET}"}},
        "bad-env": {"command": "x", "env": {"SECRET": "env-JKL ${NOPE}"}, "url": "https://${BEARER}@x.example"}
    }}"#;
    let err = McpConfig::parse(text, None, "c.json", &env).unwrap_err();
    assert_eq!(err.problems().len(), 5, "{err}");
    let shown = format!("{err} {err:?}");
    for secret in SECRETS {
        assert!(!shown.contains(secret), "{secret} in {shown}");
    }
}

#[test]
fn syntax_errors_name_file_line_and_column() {
    let env = vars(&[]);
    let cases: &[(&str, &str, &str)] = &[
        (
            "claude_desktop_config.json",
            "{\n  \"mcpServers\": {\n    \"a\": {\"command\": \"x\" \"args\": []}\n  }\n}\n",
            "syntax error in claude_desktop_config.json at line 3, column 25: Expected comma",
        ),
        (
            "c.json",
            "{\"mcpServers\": {'a': {}}}",
            "syntax error in c.json at line 1, column 17: Single-quoted strings are not allowed",
        ),
        (
            "c.json",
            "{\"mcpServers\": {} /* open",
            "syntax error in c.json at line 1, column 19: Unterminated comment block",
        ),
        (
            "c.json",
            "{\"mcpServers\": {}}}",
            "syntax error in c.json at line 1, column 19: Text cannot contain more than one JSON value",
        ),
        (
            "config.toml",
            "[mcp_servers.a]\ncommand = \n",
            "syntax error in config.toml at line 2, column 11: string values must be quoted, expected literal string",
        ),
        (
            "config.toml",
            "[mcp_servers.a]\ncommand = \"x\"\ncommand = \"y\"\n",
            "syntax error in config.toml at line 3, column 1: duplicate key",
        ),
    ];
    for (name, text, want) in cases {
        let err = McpConfig::parse(text, None, name, &env).unwrap_err();
        assert!(matches!(err, ConfigError::Syntax { .. }), "{name}: {err:?}");
        assert_eq!(err.to_string(), *want, "{text}");
    }
}

#[test]
fn syntax_errors_do_not_quote_secret_text() {
    let env = vars(&[]);
    let text = "[mcp_servers.a]\nbearer = tok-ABC\n";
    let err = McpConfig::parse(text, None, "config.toml", &env).unwrap_err();
    let shown = format!("{err} {err:?}");
    assert!(!shown.contains("tok-ABC"), "{shown}");
    let ConfigError::Syntax { line, .. } = err else { panic!("{err}") };
    assert_eq!(line, 2);
}
