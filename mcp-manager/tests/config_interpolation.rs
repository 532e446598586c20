//! `${VAR}` interpolation through the loaders: each syntax, defaults, unset variables, the `$$`
//! escape, which fields are expanded, and env files read through an injected reader.

use std::collections::BTreeMap;
use std::io;
use std::path::Path;

use mcp_manager::config::{ConfigError, ConfigFormat, McpConfig, ParseOptions, ServerConfig};

fn vars(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
}

/// The one server of a desktop JSON document.
fn server(json: &str, env: &BTreeMap<String, String>) -> Result<ServerConfig, ConfigError> {
    McpConfig::parse(json, Some(ConfigFormat::DesktopJson), "test.json", env).map(|mut c| c.servers.remove(0))
}

/// What `arg` becomes as the only argument of a stdio server.
fn expand_arg(arg: &str, env: &BTreeMap<String, String>) -> Result<String, Vec<String>> {
    let json = serde_json::json!({"mcpServers": {"s": {"command": "x", "args": [arg]}}}).to_string();
    match server(&json, env) {
        Ok(server) => Ok(server.args[0].clone()),
        Err(e) => Err(e.problems().iter().map(ToString::to_string).collect()),
    }
}

#[test]
fn each_syntax() {
    let env = vars(&[("HOME", "/home/me"), ("EMPTY", ""), ("USER", "me")]);
    let cases: &[(&str, &str)] = &[
        ("no variables", "no variables"),
        ("${HOME}/docs", "/home/me/docs"),
        ("${env:HOME}", "/home/me"),
        ("${USER}@${HOME}", "me@/home/me"),
        ("${MISSING:-fallback}", "fallback"),
        ("${env:MISSING:-fb}", "fb"),
        ("${EMPTY:-used when empty}", "used when empty"),
        ("${EMPTY}", ""),
        ("${HOME:-unused}", "/home/me"),
        ("${MISSING:-}", ""),
        ("${MISSING:-a default: with colons}", "a default: with colons"),
        ("price: $$5", "price: $5"),
        ("$${HOME}", "${HOME}"),
        ("$$$$", "$$"),
        ("$HOME stays", "$HOME stays"),
        ("a lone $", "a lone $"),
    ];
    for (arg, want) in cases {
        assert_eq!(expand_arg(arg, &env).as_deref(), Ok(*want), "{arg}");
    }
}

#[test]
fn errors_name_server_field_and_variable() {
    let env = vars(&[("SET", "v")]);
    let cases: &[(&str, &[&str])] = &[
        (
            "${UNSET}",
            &[
                r#"server "s": field "args[0]": variable "UNSET" is not set (write ${UNSET:-default} to give a default)"#,
            ],
        ),
        (
            "${A}/${SET}/${B}",
            &[
                r#"server "s": field "args[0]": variable "A" is not set (write ${A:-default} to give a default)"#,
                r#"server "s": field "args[0]": variable "B" is not set (write ${B:-default} to give a default)"#,
            ],
        ),
        ("${UNCLOSED", &[r#"server "s": field "args[0]": unterminated "${" (write "$$" for a literal "$")"#]),
        (
            "${NOT-A-NAME}",
            &[
                r#"server "s": field "args[0]": invalid variable reference "${NOT-A-NAME}": expected ${NAME}, ${NAME:-default} or ${env:NAME} (write "$$" for a literal "$")"#,
            ],
        ),
        (
            "${}",
            &[
                r#"server "s": field "args[0]": invalid variable reference "${}": expected ${NAME}, ${NAME:-default} or ${env:NAME} (write "$$" for a literal "$")"#,
            ],
        ),
    ];
    for (arg, want) in cases {
        assert_eq!(expand_arg(arg, &env), Err(want.iter().map(|s| s.to_string()).collect()), "{arg}");
    }
}

#[test]
fn expanded_fields() {
    let env = vars(&[("V", "val"), ("TOKEN", "tok")]);
    let stdio = r#"{"mcpServers": {"s": {
        "command": "${V}-cmd", "args": ["${V}"], "cwd": "/w/${V}", "env": {"KEY_${V}": "${V}"}
    }}}"#;
    let s = server(stdio, &env).unwrap();
    assert_eq!(s.command.as_deref(), Some("val-cmd"));
    assert_eq!(s.args, ["val"]);
    assert_eq!(s.cwd.as_deref(), Some(Path::new("/w/val")));
    // Values are expanded, names are not.
    assert_eq!(s.env, vars(&[("KEY_${V}", "val")]));

    let remote = r#"{"mcpServers": {"s": {
        "url": "https://${V}.example.com/mcp", "headers": {"Authorization": "Bearer ${TOKEN}", "X-V": "${V}"}
    }}}"#;
    let s = server(remote, &env).unwrap();
    assert_eq!(s.url.as_deref(), Some("https://val.example.com/mcp"));
    assert_eq!(s.headers, vars(&[("Authorization", "Bearer tok"), ("X-V", "val")]));
}

#[test]
fn reference_bearer_token_and_codex_variables() {
    let env = vars(&[("GH", "ghp_1"), ("TEAM", "core"), ("PATH", "/bin")]);
    let text = "[[mcp.servers]]\nname = \"gh\"\nurl = \"https://x.example\"\nbearer_token = \"${GH}\"\n";
    let config = McpConfig::parse(text, None, "host.toml", &env).unwrap();
    assert_eq!(config.servers[0].bearer_token.as_ref().map(|t| t.expose()), Some("ghp_1"));

    let text = "[[mcp.servers]]\nname = \"gh\"\nurl = \"https://x.example\"\nbearer_token_env_var = \"GH\"\n";
    let config = McpConfig::parse(text, None, "host.toml", &env).unwrap();
    assert_eq!(config.servers[0].bearer_token.as_ref().map(|t| t.expose()), Some("ghp_1"));

    let text = "[mcp_servers.s]\ncommand = \"x\"\nenv_vars = [\"PATH\", \"UNSET\"]\nenv = { PATH = \"/override\" }\n";
    let config = McpConfig::parse(text, None, "config.toml", &env).unwrap();
    // Listed variables are copied when set; an explicit env entry wins.
    assert_eq!(config.servers[0].env, vars(&[("PATH", "/override")]));
}

#[test]
fn env_files_through_an_injected_reader() {
    let env = vars(&[("HOME", "/home/me")]);
    let read = |path: &Path| -> io::Result<String> {
        match path.to_str() {
            Some("/ws/.env") => Ok("# comment\nA=1\nexport B=\"two words\"\nC='x'\n\nSHARED=file\n".to_owned()),
            Some("/ws/bad.env") => Ok("A=1\nnot a line\n".to_owned()),
            _ => Err(io::Error::new(io::ErrorKind::NotFound, "no such file")),
        }
    };
    let parse = |text: &str| {
        let options = ParseOptions {
            format: Some(ConfigFormat::VsCodeJson),
            base_dir: Some(Path::new("/ws")),
            read_file: Some(&read),
            ..ParseOptions::new("mcp.json", &env)
        };
        McpConfig::parse_with(text, &options)
    };
    let config = parse(
        r#"{"servers": {"s": {"command": "x", "envFile": "${workspaceFolder}/.env", "env": {"SHARED": "env"}}}}"#,
    )
    .unwrap();
    assert_eq!(config.servers[0].env, vars(&[("A", "1"), ("B", "two words"), ("C", "x"), ("SHARED", "env")]));
    // A relative path is relative to the base folder.
    let config = parse(r#"{"servers": {"s": {"command": "x", "envFile": ".env"}}}"#).unwrap();
    assert_eq!(config.servers[0].env.len(), 4);

    let err = parse(r#"{"servers": {"s": {"command": "x", "envFile": "bad.env"}}}"#).unwrap_err();
    assert_eq!(
        err.problems()[0].to_string(),
        r#"server "s": field "envFile": /ws/bad.env: line 2: expected NAME=value"#
    );
    let err = parse(r#"{"servers": {"s": {"command": "x", "envFile": "${userHome}/.env"}}}"#).unwrap_err();
    assert_eq!(
        err.problems()[0].to_string(),
        r#"server "s": field "envFile": cannot read /home/me/.env: no such file"#
    );
}

#[test]
fn workspace_folder_needs_a_file() {
    let env = vars(&[]);
    let text = r#"{"servers": {"s": {"command": "x", "args": ["${workspaceFolder}/a", "${workspaceFolder:-.}/b"]}}}"#;
    let err = McpConfig::parse(text, Some(ConfigFormat::VsCodeJson), "mcp.json", &env).unwrap_err();
    assert_eq!(
        err.problems().iter().map(ToString::to_string).collect::<Vec<_>>(),
        [r#"server "s": field "args[0]": "${workspaceFolder}" is only known when the file is loaded from disk"#]
    );
    // Outside VS Code files it is an ordinary variable.
    let text = r#"{"mcpServers": {"s": {"command": "x", "args": ["${workspaceFolder}"]}}}"#;
    let config = McpConfig::parse(text, None, "c.json", &vars(&[("workspaceFolder", "/env")])).unwrap();
    assert_eq!(config.servers[0].args, ["/env"]);
}

#[test]
fn environment_is_injectable_as_a_closure() {
    let lookup = |name: &str| (name == "X").then(|| "from-closure".to_owned());
    let text = r#"{"mcpServers": {"s": {"command": "${X}"}}}"#;
    let config = McpConfig::parse(text, None, "c.json", &lookup).unwrap();
    assert_eq!(config.servers[0].command.as_deref(), Some("from-closure"));
}
