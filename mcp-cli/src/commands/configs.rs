//! `mcp configs`: the MCP hosts' config files found on this machine, with their servers, read
//! as `--config HOST` would read them and without starting anything.
//!
//! A file that does not load is listed with its error; the listing goes on. Claude Code's
//! `~/.claude.json` is listed once for the user's servers and once per project that has local
//! servers. No secret is shown: servers are shown by command and arguments (secret-looking flag
//! values redacted) or by URL (credentials redacted), env variables and headers by name only.

use std::io::Read as _;
use std::path::{Path, PathBuf};

use mcp_manager::config::{
    ConfigFormat, EnvLookup, LoadedConfig, MAX_CLAUDE_CODE_BYTES, McpConfig, ParseOptions, ProcessEnv, ServerConfig,
    TransportChoice, claude_code_projects,
};
use mcp_transport::redact::{redact_args, redact_url_str};
use serde_json::{Value, json};

use super::{print, print_json};
use crate::cli::Cli;
use crate::discover::hosts::{HostFile, HostPaths, Platform, Scope, host_files};
use crate::exit::{CliError, ExitCode};
use crate::output::{Table, stdout_width};

/// One file (or one project of Claude Code's file) as listed.
pub(crate) struct Listed {
    /// Where it is and how it is read.
    pub file: HostFile,
    /// For Claude Code's local servers: their project folder.
    pub project: Option<String>,
    /// The servers and notes, or why the file did not load.
    pub outcome: Result<LoadedConfig, String>,
}

/// Every host file that exists, loaded, and every place looked at that holds none.
pub(crate) fn list(paths: &HostPaths<'_>, env: &dyn EnvLookup) -> (Vec<Listed>, Vec<HostFile>) {
    let mut found = Vec::new();
    let mut missing = Vec::new();
    for file in host_files(paths) {
        if !file.path.is_file() {
            missing.push(file);
            continue;
        }
        let outcome = McpConfig::load_noted(&file.path, Some(file.format), None, env).map_err(|e| e.to_string());
        let claude_code = file.format == ConfigFormat::ClaudeCodeJson && outcome.is_ok();
        found.push(Listed { file: file.clone(), project: None, outcome });
        if claude_code {
            found.extend(claude_code_locals(&file, env));
        }
    }
    (found, missing)
}

/// The projects of Claude Code's file that have local servers, one listing each.
fn claude_code_locals(file: &HostFile, env: &dyn EnvLookup) -> Vec<Listed> {
    let Ok(text) = read_bounded(&file.path, MAX_CLAUDE_CODE_BYTES) else { return Vec::new() };
    let source_name = file.path.display().to_string();
    let Ok(projects) = claude_code_projects(&text, &source_name) else { return Vec::new() };
    projects
        .into_iter()
        .map(|(dir, names)| {
            let options = ParseOptions {
                format: Some(ConfigFormat::ClaudeCodeJson),
                project: Some(&dir),
                ..ParseOptions::new(&source_name, env)
            };
            // The project's servers only: the user's are listed on their own.
            let outcome = McpConfig::parse_noted(&text, &options).map_err(|e| e.to_string()).map(|mut loaded| {
                loaded.config.servers.retain(|s| names.contains(&s.name));
                loaded.notes.retain(|n| n.server.as_ref().is_some_and(|s| names.contains(s)));
                loaded
            });
            Listed { file: file.clone(), project: Some(dir), outcome }
        })
        .collect()
}

fn read_bounded(path: &Path, limit: u64) -> std::io::Result<String> {
    let mut text = String::new();
    std::fs::File::open(path)?.take(limit + 1).read_to_string(&mut text)?;
    if text.len() as u64 > limit {
        return Err(std::io::Error::new(std::io::ErrorKind::InvalidData, "too large"));
    }
    Ok(text)
}

/// `mcp configs`.
pub(crate) fn run(cli: &Cli) -> Result<ExitCode, CliError> {
    let cwd =
        std::env::current_dir().map_err(|e| CliError::usage(format!("cannot read the working directory: {e}")))?;
    let home: PathBuf =
        HostPaths::home_here().ok_or_else(|| CliError::usage("cannot find the home folder (HOME is not set)"))?;
    let env = |name: &str| std::env::var(name).ok();
    let paths = HostPaths { platform: Platform::current(), home: &home, cwd: &cwd, env: &env };
    let (found, missing) = list(&paths, &ProcessEnv);
    if cli.global.json {
        print_json(&listing_json(&found, &missing))?;
    } else {
        print(&listing_text(&found, &missing, cli.global.verbose))?;
    }
    Ok(ExitCode::Ok)
}

fn scope_label(listed: &Listed) -> String {
    match (&listed.project, listed.file.scope) {
        (Some(dir), _) => format!("local: {dir}"),
        (None, Scope::User) => "user".into(),
        (None, Scope::Project) => "project".into(),
    }
}

/// The transport as `mcp status` names it.
fn transport_label(transport: TransportChoice) -> &'static str {
    match transport {
        TransportChoice::Stdio => "stdio",
        TransportChoice::StreamableHttp => "http",
        TransportChoice::Sse => "sse",
        TransportChoice::Remote => "http (sse fallback)",
    }
}

/// The command line (secret-looking flag values redacted) or the URL (credentials redacted).
fn target(server: &ServerConfig) -> String {
    if let Some(url) = &server.url {
        return redact_url_str(url);
    }
    let mut words = server.command.clone().into_iter().collect::<Vec<_>>();
    words.extend(redact_args(&server.args));
    words.join(" ")
}

fn listing_text(found: &[Listed], missing: &[HostFile], verbose: bool) -> String {
    let mut out = String::new();
    for listed in found {
        let file = &listed.file;
        out.push_str(&format!(
            "{}  {}  ({}, {})\n",
            file.host.name(),
            file.path.display(),
            file.format,
            scope_label(listed)
        ));
        match &listed.outcome {
            Err(error) => {
                for (i, line) in error.lines().enumerate() {
                    out.push_str(&format!("{}{line}\n", if i == 0 { "  error: " } else { "  " }));
                }
            }
            Ok(loaded) if loaded.config.servers.is_empty() => out.push_str("  (no servers)\n"),
            Ok(loaded) => {
                let mut table = Table::new(["SERVER", "ENABLED", "TRANSPORT", "COMMAND OR URL"]);
                for s in &loaded.config.servers {
                    let enabled = if s.enabled { "yes" } else { "no" };
                    table.row([s.name.clone(), enabled.into(), transport_label(s.transport).into(), target(s)]);
                }
                for line in table.render(stdout_width().map(|w| w.saturating_sub(2))).lines() {
                    out.push_str(&format!("  {line}\n"));
                }
            }
        }
        if let Ok(loaded) = &listed.outcome {
            match loaded.notes.len() {
                0 => {}
                _ if verbose => loaded.notes.iter().for_each(|n| out.push_str(&format!("  note: {n}\n"))),
                n => out.push_str(&format!("  {n} setting(s) of the host ignored (-v shows which)\n")),
            }
        }
    }
    if found.is_empty() {
        out.push_str("no MCP host config file found\n");
    }
    if verbose {
        for file in missing {
            out.push_str(&format!("not found: {}  {}\n", file.host.name(), file.path.display()));
        }
    } else {
        let mut hosts: Vec<&str> = Vec::new();
        for file in missing {
            let has_file = found.iter().any(|l| l.file.host == file.host);
            if !has_file && !hosts.contains(&file.host.name()) {
                hosts.push(file.host.name());
            }
        }
        if !hosts.is_empty() {
            out.push_str(&format!("no file for: {} (-v shows where mcp looked)\n", hosts.join(", ")));
        }
    }
    out.trim_end().to_owned()
}

fn server_json(s: &ServerConfig) -> Value {
    json!({
        "name": s.name,
        "enabled": s.enabled,
        "transport": transport_label(s.transport),
        "command": s.command,
        "args": redact_args(&s.args),
        "url": s.url.as_deref().map(redact_url_str),
        "envNames": s.env.keys().collect::<Vec<_>>(),
        "headerNames": s.headers.keys().collect::<Vec<_>>(),
    })
}

fn listing_json(found: &[Listed], missing: &[HostFile]) -> Value {
    let files: Vec<Value> = found
        .iter()
        .map(|listed| {
            let (servers, notes, error) = match &listed.outcome {
                Ok(loaded) => (
                    loaded.config.servers.iter().map(server_json).collect(),
                    loaded.notes.iter().map(ToString::to_string).collect(),
                    None,
                ),
                Err(error) => (Vec::new(), Vec::new(), Some(error.clone())),
            };
            json!({
                "host": listed.file.host.name(),
                "path": listed.file.path.display().to_string(),
                "format": listed.file.format.as_str(),
                "scope": match (&listed.project, listed.file.scope) {
                    (Some(_), _) => "local",
                    (None, Scope::User) => "user",
                    (None, Scope::Project) => "project",
                },
                "project": listed.project,
                "servers": servers,
                "notes": notes,
                "error": error,
            })
        })
        .collect();
    let not_found: Vec<Value> =
        missing.iter().map(|f| json!({"host": f.host.name(), "path": f.path.display().to_string()})).collect();
    json!({"files": files, "notFound": not_found})
}
