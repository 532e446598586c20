//! The configs users already have: a fake home folder (HOME and XDG_CONFIG_HOME set on the
//! child) holding each host's file, listed by `mcp configs` (text and --json) with their
//! servers, a broken file listed with its error, no secret printed, and `--config HOST`
//! starting a server from a host's file (the demo server: `mcp serve-demo` is this binary).

mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use serde_json::Value;

const LIMIT: Duration = Duration::from_secs(60);
const MCP: &str = env!("CARGO_BIN_EXE_mcp");

/// Values that must never be printed.
const SECRETS: [&str; 6] = ["ghp_secretvalue", "hunter2", "s3cr3t-header", "pw-in-url", "qtok", "flag-secret"];

struct Fixture {
    home: tempfile::TempDir,
    cwd: tempfile::TempDir,
}

impl Fixture {
    fn new() -> Fixture {
        Fixture { home: tempfile::tempdir().unwrap(), cwd: tempfile::tempdir().unwrap() }
    }

    fn home(&self) -> &Path {
        self.home.path()
    }

    fn cwd(&self) -> PathBuf {
        // Claude Code keys projects by the folder as the system spells it.
        self.cwd.path().canonicalize().unwrap()
    }

    fn write(&self, relative: &str, text: &str) {
        let path = self.home().join(relative);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    /// Every host's file, each with a server of its own.
    fn with_every_host(&self) -> &Self {
        let cwd = self.cwd().display().to_string();
        self.write(
            ".config/Claude/claude_desktop_config.json",
            r#"{"mcpServers": {"desktop-fs": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"],
                "env": {"GITHUB_TOKEN": "ghp_secretvalue"}}}, "globalShortcut": "Ctrl+Space"}"#,
        );
        self.write(
            ".claude.json",
            &format!(
                r#"{{"numStartups": 3, "mcpServers": {{"cc-user": {{"type": "stdio", "command": "{MCP}", "args": ["serve-demo"]}}}},
                "projects": {{"{cwd}": {{"history": [], "mcpServers": {{"cc-local": {{"type": "http",
                "url": "https://user:pw-in-url@mcp.example.com/mcp?token=qtok"}}}}}}}}}}"#
            ),
        );
        self.write(
            ".cursor/mcp.json",
            r#"{"mcpServers": {"cursor-remote": {"url": "https://cursor.example.com/mcp", "headers": {"Authorization": "Bearer s3cr3t-header"}}}}"#,
        );
        self.write(
            ".config/Code/User/mcp.json",
            r#"{"servers": {"vscode-srv": {"type": "stdio", "command": "uvx", "args": ["mcp-server-time", "--api-key=flag-secret"]}}, "inputs": []}"#,
        );
        self.write(
            ".codeium/windsurf/mcp_config.json",
            r#"{"mcpServers": {"windsurf-srv": {"command": "node", "args": ["w.js"], "disabled": true}}}"#,
        );
        self.write(".codex/config.toml", "model = \"o3\"\n[mcp_servers.codex-srv]\ncommand = \"codex-mcp\"\n");
        self.write(
            ".config/goose/config.yaml",
            &format!(
                "GOOSE_PROVIDER: openai\nextensions:\n  developer:\n    type: builtin\n    enabled: true\n  goose-demo:\n    type: stdio\n    cmd: {MCP}\n    args: [serve-demo]\n    envs: {{API_KEY: hunter2}}\n    enabled: true\n    timeout: 30\n    display_name: Demo\n    sparkles: true\n"
            ),
        );
        self.write(
            ".config/zed/settings.json",
            &format!(
                "// Zed\n{{\"theme\": \"One\", \"context_servers\": {{\"zed-old\": {{\"source\": \"custom\", \"command\": {{\"path\": \"{MCP}\", \"args\": [\"serve-demo\"]}}}}}},}}"
            ),
        );
        self
    }

    fn run(&self, args: &[&str]) -> Output {
        let mut command = Command::new(MCP);
        command
            .args(args)
            .current_dir(self.cwd())
            .env("HOME", self.home())
            .env("XDG_CONFIG_HOME", self.home().join(".config"))
            .env("APPDATA", self.home().join("AppData/Roaming"))
            .env_remove("CODEX_HOME")
            .env_remove("CLAUDE_CONFIG_DIR")
            .env_remove("OPENAI_API_KEY")
            .stdin(Stdio::null());
        let output = support::run_bounded(command, None, LIMIT);
        let err = String::from_utf8_lossy(&output.stderr);
        assert!(!err.contains("panicked"), "{err}");
        output
    }
}

fn text(output: &Output) -> (String, String) {
    (String::from_utf8_lossy(&output.stdout).into_owned(), String::from_utf8_lossy(&output.stderr).into_owned())
}

fn assert_no_secret(output: &Output) {
    let (out, err) = text(output);
    for secret in SECRETS {
        assert!(!out.contains(secret) && !err.contains(secret), "{secret} printed:\n{out}\n{err}");
    }
}

/// The servers of each listed file, as `host (scope): name name ...`.
fn summary(listing: &Value) -> Vec<String> {
    listing["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            let names: Vec<&str> =
                f["servers"].as_array().unwrap().iter().map(|s| s["name"].as_str().unwrap()).collect();
            format!("{} ({}): {}", f["host"].as_str().unwrap(), f["scope"].as_str().unwrap(), names.join(" "))
        })
        .collect()
}

#[test]
fn configs_lists_every_hosts_file_with_its_servers() {
    let fx = Fixture::new();
    fx.with_every_host();
    let output = fx.run(&["configs", "--json"]);
    assert_eq!(output.status.code(), Some(0), "{:?}", text(&output));
    assert_no_secret(&output);
    let listing: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(
        summary(&listing),
        [
            "claude-desktop (user): desktop-fs",
            "claude-code (user): cc-user",
            "claude-code (local): cc-local",
            "cursor (user): cursor-remote",
            "vscode (user): vscode-srv",
            "windsurf (user): windsurf-srv",
            "codex (user): codex-srv",
            "goose (user): goose-demo",
            "zed (user): zed-old",
        ]
    );
    let files = listing["files"].as_array().unwrap();
    let server = |host: &str, name: &str| -> Value {
        let file = files.iter().find(|f| f["host"] == host && f["servers"][0]["name"] == name).unwrap();
        file["servers"][0].clone()
    };
    assert_eq!(server("claude-desktop", "desktop-fs")["envNames"], serde_json::json!(["GITHUB_TOKEN"]));
    assert_eq!(server("claude-code", "cc-local")["transport"], "http");
    assert_eq!(server("cursor", "cursor-remote")["headerNames"], serde_json::json!(["Authorization"]));
    assert_eq!(server("windsurf", "windsurf-srv")["enabled"], false);
    assert_eq!(server("goose", "goose-demo")["command"], MCP);
    assert_eq!(server("zed", "zed-old")["args"], serde_json::json!(["serve-demo"]));
    let goose = files.iter().find(|f| f["host"] == "goose").unwrap();
    let notes = goose["notes"].to_string();
    assert!(notes.contains("developer") && notes.contains("sparkles"), "{notes}");
    assert!(files.iter().all(|f| f["error"].is_null()), "{listing}");
    assert!(listing["notFound"].as_array().unwrap().iter().any(|f| f["host"] == "zed"), "the project file is absent");

    // The same facts as text, without secrets either (with -v: the notes and every place looked).
    for args in [&["configs"][..], &["configs", "-v"]] {
        let output = fx.run(args);
        assert_eq!(output.status.code(), Some(0));
        assert_no_secret(&output);
        let (out, _) = text(&output);
        for needed in [
            "claude-desktop",
            "desktop-fs",
            "cc-user",
            "local: ",
            "cc-local",
            "cursor-remote",
            "vscode-srv",
            "windsurf-srv",
            "codex-srv",
            "goose-demo",
            "zed-old",
            "uvx mcp-server-time --api-key=<redacted>",
        ] {
            assert!(out.contains(needed), "{args:?} lacks {needed:?}:\n{out}");
        }
        if args.len() == 2 {
            assert!(out.contains("note: ") && out.contains("sparkles") && out.contains("not found: zed"), "{out}");
        }
    }
}

#[test]
fn a_broken_file_is_listed_with_its_error_and_the_rest_still_are() {
    let fx = Fixture::new();
    fx.write(".config/zed/settings.json", "{\"context_servers\": {\"z\": {\"command\": \"x\",, }}}");
    fx.write(".config/goose/config.yaml", "extensions:\n  bad:\n    type: stdio\n    cmd: [not, a, string]\n");
    fx.write(".codex/config.toml", "[mcp_servers.fine]\ncommand = \"ok\"\n");
    let output = fx.run(&["configs", "--json"]);
    assert_eq!(output.status.code(), Some(0), "{:?}", text(&output));
    let listing: Value = serde_json::from_slice(&output.stdout).unwrap();
    let files = listing["files"].as_array().unwrap();
    let error_of = |host: &str| files.iter().find(|f| f["host"] == host).unwrap()["error"].as_str().unwrap().to_owned();
    let zed = error_of("zed");
    assert!(zed.contains("settings.json") && zed.contains("line 1"), "{zed}");
    let goose = error_of("goose");
    assert!(goose.contains("\"bad\"") && goose.contains("\"cmd\""), "{goose}");
    assert_eq!(summary(&listing)[0], "codex (user): fine");

    let (out, _) = text(&fx.run(&["configs"]));
    assert!(out.contains("error: syntax error") && !out.contains("codex-srv") && out.contains("fine"), "{out}");
    // Running a broken host file is a usage error naming the file and the key.
    let output = fx.run(&["--config", "goose", "tools"]);
    assert_eq!(output.status.code(), Some(1));
    let (_, err) = text(&output);
    assert!(err.contains("config.yaml") && err.contains("\"cmd\""), "{err}");
}

#[test]
fn config_by_host_name_starts_that_hosts_server() {
    let fx = Fixture::new();
    fx.with_every_host();
    for (host, server) in [("goose", "goose-demo"), ("zed", "zed-old"), ("claude-code", "cc-user")] {
        let args = ["--config", host, "tools", "--json"];
        let args: Vec<&str> =
            if host == "claude-code" { [&args[..], &["--server", server]].concat() } else { args.to_vec() };
        let output = fx.run(&args);
        assert_eq!(output.status.code(), Some(0), "{host}: {:?}", text(&output));
        assert_no_secret(&output);
        let tools: Value = serde_json::from_slice(&output.stdout).unwrap();
        let rows = tools.as_array().or_else(|| tools["tools"].as_array()).unwrap().clone();
        assert!(
            rows.iter().any(|t| t["name"] == "echo" && t["server"] == server),
            "{host}: the demo's echo from {server}: {tools}"
        );
    }
    // -v says what the host's format ignored.
    let (_, err) = text(&fx.run(&["--config", "goose", "-v", "tools"]));
    assert!(err.contains("sparkles") && err.contains("ignored"), "{err}");
}

#[test]
fn a_host_name_without_a_file_is_a_usage_error_and_wins_over_a_file_of_that_name() {
    let fx = Fixture::new();
    let output = fx.run(&["--config", "windsurf", "tools"]);
    assert_eq!(output.status.code(), Some(1));
    let (out, err) = text(&output);
    assert!(out.is_empty());
    assert!(
        err.contains("no windsurf config file found") && err.contains(".codeium/windsurf/mcp_config.json"),
        "{err}"
    );

    // A file named like a host in the working directory: the host's file wins, and mcp says how
    // to reach the other.
    fx.write(
        ".codex/config.toml",
        &format!("[mcp_servers.codex-demo]\ncommand = \"{MCP}\"\nargs = [\"serve-demo\"]\n"),
    );
    std::fs::write(fx.cwd().join("codex"), "{\"mcpServers\": {\"local-file\": {\"command\": \"nope\"}}}").unwrap();
    let output = fx.run(&["--config", "codex", "tools", "--json"]);
    let (out, err) = text(&output);
    assert_eq!(output.status.code(), Some(0), "{err}");
    assert!(out.contains("codex-demo") && !out.contains("local-file"), "{out}");
    assert!(err.contains("--config ./codex"), "{err}");
    let output = fx.run(&["--config", "./codex", "tools"]);
    let (_, err) = text(&output);
    assert!(err.contains("local-file") || err.contains("nope"), "./codex is the file: {err}");
}
