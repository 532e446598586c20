//! From entries as written to [`ServerConfig`]s: interpolation, env files, and the checks that
//! name the server and field at fault. Every problem is collected; nothing stops at the first.
//!
//! A disabled server is a draft: it is built as far as it goes, and its problems are dropped.

mod oauth;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::error::ConfigProblem;
use super::interpolate::{Interpolator, is_variable_name};
use super::model::{AuthMode, MAX_TIMEOUT, ServerConfig, ToolFilter, TransportChoice};
use super::node::Text;
use super::raw::{RawServer, Seconds, SecretSource};
use super::{EnvLookup, FileReader};
use mcp_transport::Secret;

/// What building servers needs from the outside world.
pub(crate) struct Context<'a> {
    pub interpolator: Interpolator<'a>,
    pub env: &'a dyn EnvLookup,
    /// Reads env files; `None` when parsing without file access.
    pub read_file: Option<&'a FileReader<'a>>,
    /// What relative env file paths are relative to.
    pub base_dir: Option<&'a Path>,
}

/// What [`build_servers`] returns: the servers, the problems of the enabled ones, and the
/// notes of every one (keys a lenient format ignored).
pub(crate) type Built = (Vec<ServerConfig>, Vec<ConfigProblem>, Vec<ConfigProblem>);

/// Builds every server and returns them with the problems of the enabled ones.
pub(crate) fn build_servers(raws: Vec<RawServer>, cx: &Context<'_>) -> Built {
    let mut servers = Vec::with_capacity(raws.len());
    let mut problems = Vec::new();
    let mut notes = Vec::new();
    for raw in raws {
        let mut noted = Problems { name: raw.name.clone(), path: raw.path.clone(), list: Vec::new() };
        for (field, message) in &raw.notes {
            noted.push(field, message.clone());
        }
        notes.append(&mut noted.list);
        let mut out = Problems { name: raw.name.clone(), path: raw.path.clone(), list: Vec::new() };
        let server = build(raw, cx, &mut out);
        if server.enabled {
            problems.append(&mut out.list);
        }
        servers.push(server);
    }
    for (i, server) in servers.iter().enumerate() {
        let duplicate = servers[..i].iter().any(|s| s.enabled && s.name == server.name);
        if server.enabled && duplicate && !server.name.trim().is_empty() {
            problems.push(ConfigProblem::server(
                &server.name,
                "name",
                "duplicate (another enabled server has this name; disable or rename one)",
            ));
        }
    }
    (servers, problems, notes)
}

/// The problems of one server; a server with a blank name reports with its path instead.
pub(super) struct Problems {
    name: String,
    path: String,
    list: Vec<ConfigProblem>,
}

impl Problems {
    pub(super) fn push(&mut self, field: &str, message: impl Into<String>) {
        self.list.push(if self.name.trim().is_empty() {
            ConfigProblem::global(format!("{}.{field}", self.path), message)
        } else {
            ConfigProblem::server(&self.name, field, message)
        });
    }
}

fn build(raw: RawServer, cx: &Context<'_>, out: &mut Problems) -> ServerConfig {
    let mut server = ServerConfig::new(raw.name.clone());
    server.enabled = raw.enabled;
    if raw.name.trim().is_empty() {
        out.list.push(ConfigProblem::global(&raw.name_field, "blank server name (every server needs a name)"));
    }
    for (field, message) in &raw.problems {
        out.push(field, message.clone());
    }
    let expand = |text: &Text, out: &mut Problems| expand_text(text, cx, out);

    server.transport = transport(&raw, out);
    if let Some(command) = &raw.command {
        let value = expand(command, out);
        if value.trim().is_empty() {
            out.push(&command.field, "blank");
        }
        server.command = Some(value);
    }
    server.args = raw.args.iter().map(|arg| expand(arg, out)).collect();
    if let Some(env_file) = &raw.env_file {
        let path = expand(env_file, out);
        for (key, value) in read_env_file(&path, &env_file.field, cx, out) {
            server.env.insert(key, value);
        }
    }
    for var in &raw.env_vars {
        if !is_variable_name(&var.value) {
            out.push(&var.field, "not a variable name");
        } else if let Some(value) = cx.env.var(&var.value) {
            server.env.insert(var.value.clone(), value);
        }
    }
    for pair in &raw.env {
        if pair.key.is_empty() || pair.key.contains(['=', '\0']) {
            out.push(&pair.field, "not a valid variable name (empty, or contains \"=\" or NUL)");
        }
        let value = expand(&Text { field: pair.field.clone(), value: pair.value.clone() }, out);
        server.env.insert(pair.key.clone(), value);
    }
    server.cwd = raw.cwd.as_ref().map(|cwd| PathBuf::from(expand(cwd, out)));
    if let Some(url) = &raw.url {
        let value = expand(url, out);
        if let Err(message) = check_url(&value) {
            out.push(&url.field, message);
        }
        server.url = Some(value);
    } else if server.transport.is_remote() {
        out.push("url", "missing (a remote server needs a url)");
    }
    if server.transport == TransportChoice::Stdio && raw.command.is_none() {
        out.push("command", "missing (a stdio server needs a command)");
    }
    for pair in &raw.headers {
        let value = expand(&Text { field: pair.field.clone(), value: pair.value.clone() }, out);
        check_header(&pair.key, &value, &pair.field, out);
        server.headers.insert(pair.key.clone(), value);
    }
    for pair in &raw.env_headers {
        match variable(&pair.value, cx) {
            Ok(value) => {
                check_header(&pair.key, &value, &pair.field, out);
                server.headers.insert(pair.key.clone(), value);
            }
            Err(message) => out.push(&pair.field, message),
        }
    }
    server.bearer_token = match &raw.bearer {
        None => None,
        Some(SecretSource::Value(text)) => {
            let value = expand(text, out);
            if value.trim().is_empty() && !text.value.trim().is_empty() {
                out.push(&text.field, "empty after interpolation (a bearer token cannot be empty)");
            } else if value.trim().is_empty() {
                out.push(&text.field, "empty (a bearer token cannot be empty)");
            }
            Some(Secret::new(value))
        }
        Some(SecretSource::EnvVar(var)) => match variable(&var.value, cx) {
            Ok(value) => Some(Secret::new(value)),
            Err(message) => {
                out.push(&var.field, format!("{message} (the bearer token comes from it)"));
                None
            }
        },
    };
    server.auth = raw.auth.unwrap_or_default();
    if server.auth == AuthMode::Bearer
        && server.bearer_token.is_none()
        && !server.headers.keys().any(|k| k.eq_ignore_ascii_case("authorization"))
    {
        out.push("auth", "\"bearer\" needs a bearer token or an Authorization header");
    }
    if let Some(oauth) = &raw.oauth {
        server.oauth = oauth::oauth_config(oauth, cx, out);
    }
    for (slot, seconds) in [
        (&mut server.startup_timeout, &raw.startup_timeout),
        (&mut server.request_timeout, &raw.request_timeout),
        (&mut server.read_timeout, &raw.read_timeout),
    ] {
        if let Some(seconds) = seconds {
            match duration(seconds) {
                Ok(d) => *slot = d,
                Err(message) => out.push(&seconds.field, message),
            }
        }
    }
    server.era = raw.era.unwrap_or_default();
    server.tool_visibility = raw.visibility;
    server.log_level = raw.log_level.clone();
    server.task = raw.task.unwrap_or_default();
    server.tools = tool_filter(&raw, out);
    server
}

/// `enabled_tools` and `disabled_tools`: no blank name, and no name in both.
fn tool_filter(raw: &RawServer, out: &mut Problems) -> ToolFilter {
    for name in raw.allow.iter().flatten().chain(&raw.deny) {
        if name.value.trim().is_empty() {
            out.push(&name.field, "blank (a tool name is needed)");
        }
    }
    for name in &raw.deny {
        if let Some(enabled) = raw.allow.iter().flatten().find(|e| e.value == name.value) {
            out.push(
                &name.field,
                format!(
                    "tool {:?} is also enabled ({}): a tool cannot be both enabled and disabled",
                    name.value, enabled.field
                ),
            );
        }
    }
    ToolFilter {
        allow: raw.allow.as_ref().map(|names| names.iter().map(|t| t.value.clone()).collect()),
        deny: raw.deny.iter().map(|t| t.value.clone()).collect(),
    }
}

/// The transport: the explicit one, else a url makes a remote server and anything else a
/// stdio one. Reports fields that the transport does not use.
fn transport(raw: &RawServer, out: &mut Problems) -> TransportChoice {
    if let Some(explicit) = raw.transport {
        let unused = if explicit.is_remote() { &raw.stdio_keys } else { &raw.remote_keys };
        let kind = if explicit.is_remote() { "a remote" } else { "a stdio" };
        for key in unused {
            out.push(key, format!("not used by {kind} server"));
        }
        return explicit;
    }
    match (&raw.command, &raw.url) {
        (Some(_), Some(url)) => {
            out.push(&url.field, "a server has either a command or a url, not both");
            TransportChoice::Stdio
        }
        (None, Some(_)) => {
            for key in &raw.stdio_keys {
                out.push(key, "not used by a remote server");
            }
            TransportChoice::Remote
        }
        (Some(_), None) => {
            for key in &raw.remote_keys {
                out.push(key, "not used by a stdio server");
            }
            TransportChoice::Stdio
        }
        (None, None) if !raw.remote_keys.is_empty() => TransportChoice::Remote,
        (None, None) => TransportChoice::Stdio,
    }
}

/// The value of the variable named `name`: unset, empty or badly named is an error.
pub(super) fn variable(name: &str, cx: &Context<'_>) -> Result<String, String> {
    if !is_variable_name(name) {
        return Err(format!("{name:?} is not a variable name"));
    }
    match cx.env.var(name) {
        None => Err(format!("variable {name:?} is not set")),
        Some(value) if value.is_empty() => Err(format!("variable {name:?} is empty")),
        Some(value) => Ok(value),
    }
}

/// An absolute `http` or `https` URL with a host. The message names the scheme, never the URL
/// (it may carry a token).
pub(super) fn check_url(value: &str) -> Result<(), String> {
    match url::Url::parse(value) {
        Ok(url) if url.scheme() != "http" && url.scheme() != "https" => {
            Err(format!("not an http or https URL (scheme {:?})", url.scheme()))
        }
        Ok(url) if url.host_str().is_none_or(str::is_empty) => Err("the URL has no host".to_owned()),
        Ok(_) => Ok(()),
        Err(e) => Err(format!("not a valid URL ({e})")),
    }
}

/// A header name is an HTTP token; a value has no line break or NUL.
fn check_header(name: &str, value: &str, field: &str, out: &mut Problems) {
    for problem in header_problems(name, value) {
        out.push(field, problem);
    }
}

/// What is wrong with a header (see [`check_header`]).
pub(super) fn header_problems(name: &str, value: &str) -> Vec<&'static str> {
    let token = |c: char| c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c);
    let mut problems = Vec::new();
    if name.is_empty() || !name.chars().all(token) {
        problems.push("not a valid header name");
    }
    if value.contains(['\r', '\n', '\0']) {
        problems.push("the value contains a line break or NUL");
    }
    problems
}

/// A positive, finite number of seconds, at most [`MAX_TIMEOUT`]: larger ones would overflow
/// the clock arithmetic of deadlines (`now + timeout`), so they are refused here rather than
/// panicking later. A positive value below a nanosecond is refused too (it would be zero).
fn duration(seconds: &Seconds) -> Result<Duration, String> {
    let value = seconds.value;
    let found = shown(value);
    if !value.is_finite() {
        return Err(format!("must be a finite number of seconds (found {found})"));
    }
    if value <= 0.0 {
        return Err(format!("must be a positive number of seconds (found {found})"));
    }
    let cap = MAX_TIMEOUT.as_secs();
    if value > cap as f64 {
        return Err(format!("too large: at most {cap} seconds (365 days), found {found}"));
    }
    match Duration::try_from_secs_f64(value) {
        Ok(duration) if !duration.is_zero() => Ok(duration),
        _ => Err(format!("must be at least one nanosecond (found {found})")),
    }
}

/// A number as written in a problem: plain, or in exponent form when it is very large or small.
fn shown(value: f64) -> String {
    let magnitude = value.abs();
    if magnitude != 0.0 && !(1e-6..1e15).contains(&magnitude) { format!("{value:e}") } else { format!("{value}") }
}

/// The variables of an env file (`NAME=value` lines), or nothing after reporting why not.
fn read_env_file(path: &str, field: &str, cx: &Context<'_>, out: &mut Problems) -> BTreeMap<String, String> {
    let Some(read) = cx.read_file else {
        out.push(field, "env files are read only when the configuration is loaded from a file");
        return BTreeMap::new();
    };
    let path = match cx.base_dir {
        Some(base) if Path::new(path).is_relative() => base.join(path),
        _ => PathBuf::from(path),
    };
    let text = match read(&path) {
        Ok(text) => text,
        Err(e) => {
            out.push(field, format!("cannot read {}: {e}", path.display()));
            return BTreeMap::new();
        }
    };
    let mut vars = BTreeMap::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let line = line.strip_prefix("export ").unwrap_or(line);
        match line.split_once('=') {
            Some((name, value)) if is_variable_name(name.trim()) => {
                vars.insert(name.trim().to_owned(), unquote(value.trim()).to_owned());
            }
            _ => out.push(field, format!("{}: line {}: expected NAME=value", path.display(), n + 1)),
        }
    }
    vars
}

/// A value without one pair of matching surrounding quotes.
fn unquote(value: &str) -> &str {
    for quote in ['"', '\''] {
        if let Some(inner) = value.strip_prefix(quote).and_then(|v| v.strip_suffix(quote)) {
            return inner;
        }
    }
    value
}

/// `text` with its variables expanded; an expansion error is reported on its field, and the text
/// is kept as written.
pub(super) fn expand_text(text: &Text, cx: &Context<'_>, out: &mut Problems) -> String {
    match cx.interpolator.expand(&text.value) {
        Ok(value) => value,
        Err(errors) => {
            for error in errors {
                out.push(&text.field, error);
            }
            text.value.clone()
        }
    }
}
