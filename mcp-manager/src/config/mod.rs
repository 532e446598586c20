//! Runtime configuration of servers and of the client, and loaders for the formats users already
//! write.
//!
//! [`McpConfig::load`] reads a file, tells its [`ConfigFormat`], expands `${VAR}` references
//! and validates the result; [`McpConfig::parse`] does the same on text with an injected
//! environment ([`EnvLookup`]). The result is an [`McpConfig`]: the [`ServerConfig`]s in file
//! order and a [`ClientConfig`].
//!
//! A host can also describe servers in code: [`ServerConfig::stdio`] and [`ServerConfig::http`]
//! with chained setters, checked with the same rules by [`ServerConfig::validate`] and
//! [`McpConfig::validate`].
//!
//! # Formats
//!
//! | format | where | servers |
//! |--------|-------|---------|
//! | [`ConfigFormat::DesktopJson`] | Claude Desktop, Cursor, Windsurf... | `{"mcpServers": {"<name>": {...}}}` |
//! | [`ConfigFormat::VsCodeJson`] | VS Code's `.vscode/mcp.json` | `{"servers": {"<name>": {...}}, "inputs": [...]}` |
//! | [`ConfigFormat::CodexToml`] | Codex's `config.toml` | `[mcp_servers.<name>]` |
//! | [`ConfigFormat::ReferenceToml`] | this crate | `[[mcp.servers]]` and `[mcp.client]` |
//! | [`ConfigFormat::ClaudeCodeJson`] | Claude Code's `~/.claude.json` | `mcpServers`, `projects.<dir>.mcpServers` |
//! | [`ConfigFormat::GooseYaml`] | goose's `config.yaml` | `extensions: {<name>: {...}}` |
//! | [`ConfigFormat::ZedJson`] | Zed's `settings.json` | `context_servers: {<name>: {...}}` |
//!
//! The hosts' own formats (Claude Code, goose, Zed) are read leniently: an unknown key in a
//! server entry is a note ([`LoadedConfig::notes`], from [`McpConfig::load_noted`] and
//! [`McpConfig::parse_noted`]), not a problem; the rest of the file is the host's and is not
//! looked at. goose's entries take `type` (`stdio`, `sse`, `streamable_http`; `builtin` and the
//! other in-process types are skipped with a note), `cmd`, `args`, `envs`, `env_keys` (taken
//! from the environment), `uri`, `headers`, `timeout` (the request timeout), `enabled` and
//! `available_tools` (the allow-list; empty means every tool). Zed's take `command` (a string
//! with `args` and `env`, or the older `{"path", "args", "env"}`), `url`, `headers` and
//! `enabled`; an extension's server (`"source": "extension"`, or no command and no url) is
//! skipped with a note. YAML is told by the file name (`.yaml`, `.yml`); `.claude.json` is
//! Claude Code's; JSON with `context_servers` and neither key below is Zed's.
//!
//! The JSON formats accept `//` and `/* */` comments and trailing commas. The format is the
//! explicit one when given; otherwise the file name decides the syntax (`.toml`, or `.json` and
//! `.jsonc`; any other name: text starting with `{` is JSON) and the content decides the format:
//! a top-level `mcpServers` is desktop JSON, `servers` VS Code, `mcp_servers` Codex and `mcp`
//! the reference format. A file named `.vscode/mcp.json` is always VS Code's, and one named
//! `.codex/config.toml` always Codex's. Both keys of one syntax at once is ambiguous and an
//! error: pass the format.
//!
//! Keys per server entry:
//!
//! - desktop JSON: `command`, `args`, `env`, `cwd`, `envFile`, `url`, `headers`, `type`
//!   (`stdio`, `http`/`streamable_http`, `sse`), `disabled`, `enabledTools`, `disabledTools`,
//!   `toolVisibility` (the last three also as Codex spells them: `enabled_tools`, ...);
//! - VS Code: `type` (`stdio`; `http`, which keeps VS Code's fallback to SSE; `sse`),
//!   `command`, `args`, `env`, `envFile`, `cwd`, `url`, `headers`, the tool filter and
//!   visibility as in desktop JSON, and `dev` (ignored). The top-level `inputs` list is
//!   ignored: `${input:...}` prompts are not supported, and a value that uses one is reported;
//! - Codex: `command`, `args`, `env`, `env_vars`, `cwd`, `url`, `bearer_token_env_var`,
//!   `http_headers`, `env_http_headers`, `startup_timeout_sec`, `tool_timeout_sec` (the request
//!   timeout), `enabled`, `enabled_tools`, `disabled_tools`, `tool_visibility` (ours);
//! - reference TOML: `name`, `enabled`, `transport`, `command`, `args`, `env`, `env_file`,
//!   `cwd`, `url`, `headers`, `bearer_token`, `bearer_token_env_var`, `startup_timeout_sec`,
//!   `request_timeout_sec`, `read_timeout_sec`, `era` (`auto`, `modern`, `legacy`),
//!   `enabled_tools`, `disabled_tools`, `tool_visibility` (`visible`, `deferred`; the older
//!   `allowed_tools`, `denied_tools` and `visibility` are read too), `log_level`; and
//!   `[mcp.client]` with `name`, `version`, `roots`, `reserved_tool_names`,
//!   `[mcp.client.sampling]` (`enabled`, `tool_support`, `requests_per_minute`,
//!   `default_max_tokens`, `max_tokens_cap`, `models`, `token_parameter`, and for hosts that
//!   build their LLM from the config: `base_url`, `model`, `api_key_env`) and `[mcp.client.elicitation]` (`enabled`, `url_mode`).
//!
//! Any other key in a server entry or in `[mcp]` is a problem naming the server and the key
//! (with the nearest known key, so `comand` is caught). Top-level keys that belong to the host
//! (the rest of a Claude Desktop or Codex file, or of a host file holding `[mcp]`) are ignored.
//!
//! # Defaults
//!
//! A server is enabled, times out start-up after 30 s, requests after 60 s and silent HTTP
//! responses after 300 s, probes the era (auto), and all its tools are allowed, with the
//! manager's default visibility (`ManagerOptions::tool_visibility`: visible unless the host
//! says otherwise).
//!
//! # Tool filters
//!
//! `enabled_tools` (only these) and `disabled_tools` (never these, winning over the other) name
//! the server's own tool names, as Codex writes them; a name in both, a blank name or a list that
//! is not a list of strings is a problem naming the server and field. A dropped tool is in no
//! listing and not callable, and a name in `enabled_tools` the server does not have is warned
//! about once (see `Routing::filter_warnings`). Goose's `available_tools` is the same allow-list
//! under another name.
//! Without a `type`, a server with a `url` is remote (streamable HTTP with the SSE fallback)
//! and any other is stdio. The client is named after this crate, with its version; sampling and
//! elicitation are enabled (when the host supplies them), with 1024 default max tokens, a cap of
//! 4096 tokens on any request (a larger `maxTokens` is lowered), a rate limit of 30 sampling
//! requests per minute and server, no tool support and no URL mode.
//!
//! # Interpolation
//!
//! `${VAR}`, `${VAR:-default}`, `${env:VAR}` and `$$` (a literal `$`) are expanded in
//! `command`, `args`, `env` values, `cwd`, `url`, header values, the env file path and a
//! reference `bearer_token`; see [`interpolate`] for the rules. A variable that is not set and
//! has no default is a problem naming the server, the field and the variable.
//!
//! # Validation
//!
//! Every problem is reported at once, as a [`ConfigProblem`]: blank or duplicate names among
//! enabled servers, a stdio server without a command, a remote one without an http(s) url, a
//! bearer token whose variable is unset, timeouts that are not positive and finite or exceed
//! [`MAX_TIMEOUT`] (365 days: a larger one would overflow deadline arithmetic), unknown keys,
//! unknown era, transport or log level strings, roots that are not `file://` URIs, fields that the
//! server's transport does not use, tool filters as above, and two spellings of one setting. A disabled server is a draft: it is listed, but none of its
//! problems is reported. No message, and no `Debug` output, shows a secret.

mod builder;
mod error;
mod hosts;
pub mod interpolate;
mod json;
mod model;
mod node;
mod plan;
mod raw;
mod toml_file;
mod validate;
mod yaml;

use std::fmt;
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::str::FromStr;

pub use self::error::{ConfigError, ConfigProblem};
pub use self::interpolate::{EnvLookup, ProcessEnv};
pub use self::model::{
    AuthMode, ClientConfig, ClientKey, CredentialConfig, DEFAULT_MAX_TOKENS, DEFAULT_READ_TIMEOUT,
    DEFAULT_REQUEST_TIMEOUT, DEFAULT_SAMPLING_MAX_TOKENS_CAP, DEFAULT_SAMPLING_REQUESTS_PER_MINUTE,
    DEFAULT_STARTUP_TIMEOUT, ElicitationSettings, EnterpriseConfig, GrantConfig, MAX_TIMEOUT, McpConfig, OAuthConfig,
    SamplingSettings, ServerConfig, TokenParameter, ToolFilter, TransportChoice, looks_secret,
};

use self::interpolate::Interpolator;
use self::node::Node;
use self::raw::RawServer;

/// The largest configuration file [`McpConfig::load`] reads: 4 MiB.
pub const MAX_CONFIG_BYTES: u64 = 4 << 20;
/// The largest Claude Code `~/.claude.json` read: 64 MiB. That file also holds Claude Code's
/// own state (per-project history), so it grows well past what a configuration needs.
pub const MAX_CLAUDE_CODE_BYTES: u64 = 64 << 20;
/// The largest env file read: 1 MiB.
pub const MAX_ENV_FILE_BYTES: u64 = 1 << 20;

/// Reads a file for the loader (env files); injectable so tests need no files.
pub type FileReader<'a> = dyn Fn(&Path) -> io::Result<String> + 'a;

/// The file formats the loaders understand.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ConfigFormat {
    /// `{"mcpServers": ...}` of desktop hosts (Claude Desktop, Cursor, ...), JSON with comments.
    DesktopJson,
    /// VS Code's `.vscode/mcp.json`: `{"servers": ..., "inputs": ...}`.
    VsCodeJson,
    /// Codex's `config.toml`: `[mcp_servers.<name>]`.
    CodexToml,
    /// This crate's `[mcp]` table: `[[mcp.servers]]` and `[mcp.client]`.
    ReferenceToml,
    /// Claude Code's `~/.claude.json`: `mcpServers` (user scope) and
    /// `projects.<dir>.mcpServers` (local scope, for [`ParseOptions::project`]).
    ClaudeCodeJson,
    /// goose's `config.yaml`: `extensions:`.
    GooseYaml,
    /// Zed's `settings.json`: `context_servers`.
    ZedJson,
}

/// The syntax a format is written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Syntax {
    Json,
    Toml,
    Yaml,
}

impl ConfigFormat {
    /// Whether the format is TOML (else JSON).
    pub fn is_toml(self) -> bool {
        matches!(self, ConfigFormat::CodexToml | ConfigFormat::ReferenceToml)
    }

    /// The short name [`FromStr`] takes: `desktop`, `vscode`, `codex`, `reference`,
    /// `claude-code`, `goose` or `zed`.
    pub fn as_str(self) -> &'static str {
        match self {
            ConfigFormat::DesktopJson => "desktop",
            ConfigFormat::VsCodeJson => "vscode",
            ConfigFormat::CodexToml => "codex",
            ConfigFormat::ReferenceToml => "reference",
            ConfigFormat::ClaudeCodeJson => "claude-code",
            ConfigFormat::GooseYaml => "goose",
            ConfigFormat::ZedJson => "zed",
        }
    }

    /// Whether the format belongs to a host that writes keys of its own into server entries:
    /// an unknown key there is a note, not a problem.
    pub fn is_lenient(self) -> bool {
        matches!(self, ConfigFormat::ClaudeCodeJson | ConfigFormat::GooseYaml | ConfigFormat::ZedJson)
    }

    fn syntax(self) -> Syntax {
        match self {
            ConfigFormat::CodexToml | ConfigFormat::ReferenceToml => Syntax::Toml,
            ConfigFormat::GooseYaml => Syntax::Yaml,
            _ => Syntax::Json,
        }
    }

    /// The format of `text`, named `source_name` (a file name or path), as [`McpConfig::parse`]
    /// would tell it.
    pub fn detect(source_name: &str, text: &str) -> Result<ConfigFormat, ConfigError> {
        let syntax = syntax_of(source_name, text);
        detect(source_name, syntax, &parse_syntax(text, source_name, syntax)?)
    }
}

impl fmt::Display for ConfigFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for ConfigFormat {
    type Err = String;

    /// `desktop` (or `desktop-json`, `claude`, `cursor`), `vscode` (or `vs-code`), `codex`,
    /// `reference` (or `toml`), `claude-code`, `goose` (or `yaml`), `zed`; case is ignored.
    fn from_str(s: &str) -> Result<Self, String> {
        match s.trim().to_ascii_lowercase().as_str() {
            "desktop" | "desktop-json" | "claude" | "cursor" => Ok(ConfigFormat::DesktopJson),
            "vscode" | "vs-code" => Ok(ConfigFormat::VsCodeJson),
            "codex" => Ok(ConfigFormat::CodexToml),
            "reference" | "toml" => Ok(ConfigFormat::ReferenceToml),
            "claude-code" => Ok(ConfigFormat::ClaudeCodeJson),
            "goose" | "yaml" => Ok(ConfigFormat::GooseYaml),
            "zed" => Ok(ConfigFormat::ZedJson),
            _ => Err(format!(
                "unknown config format {s:?}: expected desktop, vscode, codex, reference, claude-code, goose or zed"
            )),
        }
    }
}

/// Everything [`McpConfig::parse_with`] needs.
pub struct ParseOptions<'a> {
    /// The format; `None`: told from `source_name` and the content.
    pub format: Option<ConfigFormat>,
    /// The file name or path (in errors, and for format detection).
    pub source_name: &'a str,
    /// Where `${VAR}` finds its values.
    pub env: &'a dyn EnvLookup,
    /// The folder relative env files are read from, and VS Code's `${workspaceFolder}`.
    pub base_dir: Option<&'a Path>,
    /// Reads env files; `None`: an env file is a problem.
    pub read_file: Option<&'a FileReader<'a>>,
    /// For Claude Code's file: the project folder whose local servers
    /// (`projects.<dir>.mcpServers`) are read with the user's; `None`: the user's only.
    pub project: Option<&'a str>,
}

impl<'a> ParseOptions<'a> {
    /// Options that detect the format, with no base folder and no file access.
    pub fn new(source_name: &'a str, env: &'a dyn EnvLookup) -> Self {
        ParseOptions { format: None, source_name, env, base_dir: None, read_file: None, project: None }
    }
}

/// A configuration with the notes its loader made: keys of a host's own format it ignored, and
/// entries it skipped (a goose builtin, a Zed extension). Notes are not problems: the
/// configuration loaded.
#[derive(Debug, Clone, PartialEq)]
pub struct LoadedConfig {
    /// The configuration.
    pub config: McpConfig,
    /// What was ignored, each naming the server (or path) and key.
    pub notes: Vec<ConfigProblem>,
}

impl McpConfig {
    /// Reads the file at `path` with the process environment, telling the format from the name
    /// and content. Relative env files are read from the file's folder (for
    /// `.vscode/mcp.json`, from the workspace folder that holds `.vscode/`).
    pub fn load(path: &Path) -> Result<McpConfig, ConfigError> {
        McpConfig::load_with(path, None, &ProcessEnv)
    }

    /// [`load`](McpConfig::load) with an explicit format and environment.
    pub fn load_with(path: &Path, format: Option<ConfigFormat>, env: &dyn EnvLookup) -> Result<McpConfig, ConfigError> {
        McpConfig::load_noted(path, format, None, env).map(|loaded| loaded.config)
    }

    /// [`load_with`](McpConfig::load_with), keeping the notes; `project` as in
    /// [`ParseOptions::project`]. A file over [`MAX_CONFIG_BYTES`] is refused (Claude Code's
    /// `.claude.json`: over [`MAX_CLAUDE_CODE_BYTES`]).
    pub fn load_noted(
        path: &Path,
        format: Option<ConfigFormat>,
        project: Option<&str>,
        env: &dyn EnvLookup,
    ) -> Result<LoadedConfig, ConfigError> {
        let claude_code =
            format.map_or_else(|| is_claude_code_name(&path.to_string_lossy()), |f| f == ConfigFormat::ClaudeCodeJson);
        let limit = if claude_code { MAX_CLAUDE_CODE_BYTES } else { MAX_CONFIG_BYTES };
        let text = read_limited(path, limit).map_err(|source| ConfigError::Io { path: path.to_path_buf(), source })?;
        let source_name = path.display().to_string();
        let base_dir = base_dir_of(path);
        let read_file = |p: &Path| read_limited(p, MAX_ENV_FILE_BYTES);
        let options = ParseOptions {
            format,
            source_name: &source_name,
            env,
            base_dir: base_dir.as_deref(),
            read_file: Some(&read_file),
            project,
        };
        McpConfig::parse_noted(&text, &options)
    }

    /// Parses `text` in `format` (or the detected one), expanding variables from `env`.
    /// `source_name` names the text in errors and helps detection. Env files cannot be read
    /// this way (see [`parse_with`](McpConfig::parse_with)).
    pub fn parse(
        text: &str,
        format: Option<ConfigFormat>,
        source_name: &str,
        env: &dyn EnvLookup,
    ) -> Result<McpConfig, ConfigError> {
        McpConfig::parse_with(text, &ParseOptions { format, ..ParseOptions::new(source_name, env) })
    }

    /// Parses `text` with every option.
    pub fn parse_with(text: &str, options: &ParseOptions<'_>) -> Result<McpConfig, ConfigError> {
        McpConfig::parse_noted(text, options).map(|loaded| loaded.config)
    }

    /// [`parse_with`](McpConfig::parse_with), keeping the notes.
    pub fn parse_noted(text: &str, options: &ParseOptions<'_>) -> Result<LoadedConfig, ConfigError> {
        let source_name = options.source_name;
        let syntax = options.format.map_or_else(|| syntax_of(source_name, text), ConfigFormat::syntax);
        let root = parse_syntax(text, source_name, syntax)?;
        let format = match options.format {
            Some(format) => format,
            None => detect(source_name, syntax, &root)?,
        };
        let doc = match format {
            ConfigFormat::DesktopJson => json::desktop(&root),
            ConfigFormat::VsCodeJson => json::vscode(&root),
            ConfigFormat::CodexToml => toml_file::codex(&root),
            ConfigFormat::ReferenceToml => toml_file::reference(&root),
            ConfigFormat::ClaudeCodeJson => hosts::claude_code(&root, options.project),
            ConfigFormat::GooseYaml => hosts::goose(&root),
            ConfigFormat::ZedJson => hosts::zed(&root),
        };
        let cx = validate::Context {
            interpolator: Interpolator {
                env: options.env,
                vscode: format == ConfigFormat::VsCodeJson,
                workspace_folder: options.base_dir,
            },
            env: options.env,
            read_file: options.read_file,
            base_dir: options.base_dir,
        };
        let (servers, server_problems, server_notes) = validate::build_servers(doc.servers, &cx);
        let mut problems = doc.problems;
        problems.extend(server_problems);
        let mut notes = doc.notes;
        notes.extend(server_notes);
        if problems.is_empty() {
            Ok(LoadedConfig { config: McpConfig { servers, client: doc.client }, notes })
        } else {
            Err(ConfigError::Invalid(problems))
        }
    }
}

/// What a format reader found.
#[derive(Default)]
pub(crate) struct Document {
    pub servers: Vec<RawServer>,
    pub client: ClientConfig,
    /// Problems outside any server entry.
    pub problems: Vec<ConfigProblem>,
    /// What a host's format skipped (see [`LoadedConfig::notes`]).
    pub notes: Vec<ConfigProblem>,
}

/// The projects of Claude Code's `~/.claude.json` (`text`) that have local servers: each
/// project folder, as the file keys it, with the names of its servers.
pub fn claude_code_projects(text: &str, source_name: &str) -> Result<Vec<(String, Vec<String>)>, ConfigError> {
    Ok(hosts::claude_code_projects(&json::parse(text, source_name)?))
}

/// 1-based line and column (in characters) of a byte offset.
pub(crate) fn position(text: &str, offset: usize) -> (usize, usize) {
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().unwrap_or("").chars().count() + 1;
    (line, column)
}

/// Whether `source_name` is Claude Code's `.claude.json`.
fn is_claude_code_name(source_name: &str) -> bool {
    let name = source_name.replace('\\', "/").to_ascii_lowercase();
    name == ".claude.json" || name.ends_with("/.claude.json")
}

/// The syntax of a file: YAML by extension only (`.yaml`, `.yml`), else TOML or JSON as
/// [`looks_like_toml`] tells.
fn syntax_of(source_name: &str, text: &str) -> Syntax {
    let lower = source_name.to_ascii_lowercase();
    if lower.ends_with(".yaml") || lower.ends_with(".yml") {
        Syntax::Yaml
    } else if looks_like_toml(source_name, text) {
        Syntax::Toml
    } else {
        Syntax::Json
    }
}

fn parse_syntax(text: &str, source_name: &str, syntax: Syntax) -> Result<Node, ConfigError> {
    match syntax {
        Syntax::Json => json::parse(text, source_name),
        Syntax::Toml => toml_file::parse(text, source_name),
        Syntax::Yaml => yaml::parse(text, source_name),
    }
}

/// Whether the text is TOML: by extension, else by whether it starts (after blanks and JSON
/// comments) with `{`.
fn looks_like_toml(source_name: &str, text: &str) -> bool {
    let lower = source_name.to_ascii_lowercase();
    if lower.ends_with(".toml") {
        return true;
    }
    if lower.ends_with(".json") || lower.ends_with(".jsonc") {
        return false;
    }
    let mut rest = text.trim_start_matches('\u{feff}').trim_start();
    loop {
        if let Some(comment) = rest.strip_prefix("//") {
            rest = comment.split_once('\n').map_or("", |(_, after)| after).trim_start();
        } else if let Some(comment) = rest.strip_prefix("/*") {
            rest = comment.split_once("*/").map_or("", |(_, after)| after).trim_start();
        } else {
            return !rest.starts_with('{');
        }
    }
}

/// The format of a parsed document, by file name first and content second. YAML is goose's;
/// `.claude.json` is Claude Code's; a JSON file with `context_servers` and neither of the
/// other keys is Zed's settings.
fn detect(source_name: &str, syntax: Syntax, root: &Node) -> Result<ConfigFormat, ConfigError> {
    let name = source_name.replace('\\', "/").to_ascii_lowercase();
    let unknown =
        |message: &str| ConfigError::UnknownFormat { source_name: source_name.to_owned(), message: message.to_owned() };
    if syntax == Syntax::Yaml {
        return Ok(ConfigFormat::GooseYaml);
    }
    let toml = syntax == Syntax::Toml;
    if !toml && is_claude_code_name(&name) {
        return Ok(ConfigFormat::ClaudeCodeJson);
    }
    if !toml
        && root.get("mcpServers").is_none()
        && root.get("servers").is_none()
        && root.get("context_servers").is_some()
    {
        return Ok(ConfigFormat::ZedJson);
    }
    let (by_name, first, second, formats, hint) = if toml {
        (
            (name.ends_with(".codex/config.toml")).then_some(ConfigFormat::CodexToml),
            "mcp_servers",
            "mcp",
            [ConfigFormat::CodexToml, ConfigFormat::ReferenceToml],
            "expected a [mcp_servers] table (Codex) or an [mcp] table (reference format)",
        )
    } else {
        (
            (name.ends_with(".vscode/mcp.json")).then_some(ConfigFormat::VsCodeJson),
            "mcpServers",
            "servers",
            [ConfigFormat::DesktopJson, ConfigFormat::VsCodeJson],
            "expected a top-level \"mcpServers\" (desktop hosts), \"servers\" (VS Code) or \"context_servers\" (Zed) object",
        )
    };
    if let Some(format) = by_name {
        return Ok(format);
    }
    match (root.get(first).is_some(), root.get(second).is_some()) {
        (true, true) => Err(unknown(&format!(
            "it has both {first:?} and {second:?}: pass the format explicitly ({} or {})",
            formats[0], formats[1]
        ))),
        (true, false) => Ok(formats[0]),
        (false, true) => Ok(formats[1]),
        (false, false) => Err(unknown(hint)),
    }
}

/// The folder relative env files are read from: the file's folder, or for a file inside a
/// `.vscode` folder the workspace folder above it.
fn base_dir_of(path: &Path) -> Option<PathBuf> {
    let parent = path.parent()?;
    let parent = if parent.as_os_str().is_empty() { Path::new(".") } else { parent };
    match parent.file_name() {
        Some(name) if name == ".vscode" => Some(parent.parent().map_or_else(|| PathBuf::from("."), Path::to_path_buf)),
        _ => Some(parent.to_path_buf()),
    }
}

/// Reads a UTF-8 file of at most `limit` bytes.
fn read_limited(path: &Path, limit: u64) -> io::Result<String> {
    let file = std::fs::File::open(path)?;
    let mut text = String::new();
    file.take(limit + 1).read_to_string(&mut text)?;
    if text.len() as u64 > limit {
        return Err(io::Error::new(io::ErrorKind::InvalidData, format!("larger than {limit} bytes")));
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions() {
        let text = "ab\ncdé\nf";
        assert_eq!(position(text, 0), (1, 1));
        assert_eq!(position(text, 3), (2, 1));
        assert_eq!(position(text, 6), (2, 3)); // inside "é": clamped back to its start
        assert_eq!(position(text, 100), (3, 2));
    }

    #[test]
    fn base_dirs() {
        assert_eq!(base_dir_of(Path::new("/p/.vscode/mcp.json")), Some(PathBuf::from("/p")));
        assert_eq!(base_dir_of(Path::new("/p/q/config.toml")), Some(PathBuf::from("/p/q")));
        assert_eq!(base_dir_of(Path::new("mcp.json")), Some(PathBuf::from(".")));
    }

    #[test]
    fn syntax_guess() {
        assert!(looks_like_toml("x.toml", "{"));
        assert!(!looks_like_toml("x.JSON", "[mcp]"));
        assert!(!looks_like_toml("stdin", "// c\n/* d */ {}"));
        assert!(looks_like_toml("stdin", "# c\n[mcp]"));
    }
}
