//! Servers described in code: [`ServerConfig::stdio`] and [`ServerConfig::http`] with chained
//! setters, so a host need not write a config file to add a server, checked by
//! [`ServerConfig::validate`] (and [`McpConfig::validate`]) with the loaders' rules: every
//! problem at once, each naming the server and the field.
//!
//! ```
//! use std::time::Duration;
//!
//! use mcp_manager::config::{McpConfig, ServerConfig};
//!
//! let files = ServerConfig::stdio("files", "npx")
//!     .args(["-y", "@modelcontextprotocol/server-filesystem", "/srv/notes"])
//!     .env("LOG_LEVEL", "warn")
//!     .startup_timeout(Duration::from_secs(20));
//! let search = ServerConfig::http("search", "https://search.example/mcp").bearer("s3cret").header("X-Team", "core");
//! let config = McpConfig::default().with_server(files).with_server(search);
//! config.validate()?;
//!
//! let broken = ServerConfig::http("broken", "ftp://x.example").header("Bad Header", "v");
//! let problems: Vec<String> = broken.problems().iter().map(ToString::to_string).collect();
//! assert_eq!(problems, [
//!     r#"server "broken": field "url": not an http or https URL (scheme "ftp")"#,
//!     r#"server "broken": field "headers.Bad Header": not a valid header name"#,
//! ]);
//! # Ok::<(), mcp_manager::config::ConfigError>(())
//! ```

use std::path::PathBuf;
use std::time::Duration;

use mcp_protocol::types::logging::LoggingLevel;
use mcp_transport::Secret;
use tool_system::ToolVisibility;

use super::error::{ConfigError, ConfigProblem};
use super::model::{AuthMode, MAX_TIMEOUT, McpConfig, ServerConfig, TransportChoice};
use super::validate::{check_url, header_problems};
use crate::connection::{EraPreference, TaskMode};

impl ServerConfig {
    /// A stdio server named `name` that runs `command` (add arguments with
    /// [`arg`](ServerConfig::arg) or [`args`](ServerConfig::args)).
    pub fn stdio(name: impl Into<String>, command: impl Into<String>) -> Self {
        ServerConfig { command: Some(command.into()), ..ServerConfig::new(name) }
    }

    /// A remote server named `name` at `url`: streamable HTTP, falling back to the legacy
    /// HTTP+SSE transport when the server refuses it (set [`transport`](ServerConfig::transport)
    /// to force one).
    pub fn http(name: impl Into<String>, url: impl Into<String>) -> Self {
        ServerConfig { transport: TransportChoice::Remote, url: Some(url.into()), ..ServerConfig::new(name) }
    }

    /// Adds one argument (stdio).
    pub fn arg(mut self, arg: impl Into<String>) -> Self {
        self.args.push(arg.into());
        self
    }

    /// Adds arguments (stdio).
    pub fn args<I, A>(mut self, args: I) -> Self
    where
        I: IntoIterator<Item = A>,
        A: Into<String>,
    {
        self.args.extend(args.into_iter().map(Into::into));
        self
    }

    /// Sets a variable of the child's environment (stdio).
    pub fn env(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.env.insert(name.into(), value.into());
        self
    }

    /// Sets the child's working directory (stdio).
    pub fn cwd(mut self, dir: impl Into<PathBuf>) -> Self {
        self.cwd = Some(dir.into());
        self
    }

    /// Adds a header sent with every request (remote).
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.insert(name.into(), value.into());
        self
    }

    /// Sends `token` as `Authorization: Bearer ...` (remote); it is never shown.
    pub fn bearer(mut self, token: impl Into<String>) -> Self {
        self.bearer_token = Some(Secret::new(token.into()));
        self
    }

    /// How requests are authorized (remote; default [`AuthMode::Auto`]).
    pub fn auth(mut self, auth: AuthMode) -> Self {
        self.auth = auth;
        self
    }

    /// Which transport carries the connection.
    pub fn transport(mut self, transport: TransportChoice) -> Self {
        self.transport = transport;
        self
    }

    /// How long start-up and handshake may take.
    pub fn startup_timeout(mut self, timeout: Duration) -> Self {
        self.startup_timeout = timeout;
        self
    }

    /// How long one request may take.
    pub fn request_timeout(mut self, timeout: Duration) -> Self {
        self.request_timeout = timeout;
        self
    }

    /// How long a response may stay silent (remote).
    pub fn read_timeout(mut self, timeout: Duration) -> Self {
        self.read_timeout = timeout;
        self
    }

    /// Which protocol era to speak.
    pub fn era(mut self, era: EraPreference) -> Self {
        self.era = era;
        self
    }

    /// Whether its tools are offered directly or through tool search (unset: the manager's
    /// `ManagerOptions::tool_visibility`).
    pub fn tool_visibility(mut self, visibility: ToolVisibility) -> Self {
        self.tool_visibility = Some(visibility);
        self
    }

    /// Offer only these of its tools (`enabled_tools`, exact names).
    pub fn enabled_tools<I, S>(mut self, names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.tools.allow = Some(names.into_iter().map(Into::into).collect());
        self
    }

    /// Never offer these of its tools (`disabled_tools`, exact names; wins over
    /// `enabled_tools`).
    pub fn disabled_tools<I, S>(mut self, names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.tools.deny = names.into_iter().map(Into::into).collect();
        self
    }

    /// How long each step of its shutdown waits (stdio; default: the transport's 2 s).
    pub fn close_grace(mut self, grace: std::time::Duration) -> Self {
        self.close_grace = Some(grace);
        self
    }

    /// The log level to ask the server for.
    pub fn log_level(mut self, level: LoggingLevel) -> Self {
        self.log_level = Some(level);
        self
    }

    /// When a tool whose task support is `optional` is called as a task.
    pub fn task(mut self, mode: TaskMode) -> Self {
        self.task = mode;
        self
    }

    /// Whether the manager connects it (a disabled server is a draft: not started, not
    /// checked).
    pub fn enabled(mut self, enabled: bool) -> Self {
        self.enabled = enabled;
        self
    }

    /// Everything wrong with this server, by the rules of the config loaders: a blank name; a
    /// stdio server without a command, or with remote fields; a remote server without an
    /// `http(s)` URL, or with stdio fields; bad variable or header names; an empty bearer
    /// token; `auth = bearer` without one; timeouts that are zero or over [`MAX_TIMEOUT`]; a blank
    /// tool name in `enabled_tools` / `disabled_tools`, or a name in both.
    /// Fields are named as in this type (`url`, `headers.X-Team`, `startup_timeout`).
    pub fn problems(&self) -> Vec<ConfigProblem> {
        let mut out = Vec::new();
        let mut push = |field: &str, message: &str| {
            out.push(if self.name.trim().is_empty() {
                ConfigProblem::global(field, message)
            } else {
                ConfigProblem::server(&self.name, field, message)
            })
        };
        if self.name.trim().is_empty() {
            push("name", "blank server name (every server needs a name)");
        }
        if self.transport.is_remote() {
            match &self.url {
                None => push("url", "missing (a remote server needs a url)"),
                Some(url) => {
                    if let Err(message) = check_url(url) {
                        push("url", &message);
                    }
                }
            }
            let stdio_fields = [
                ("command", self.command.is_some()),
                ("args", !self.args.is_empty()),
                ("env", !self.env.is_empty()),
                ("cwd", self.cwd.is_some()),
            ];
            for (field, set) in stdio_fields {
                if set {
                    push(field, "not used by a remote server");
                }
            }
        } else {
            match &self.command {
                None => push("command", "missing (a stdio server needs a command)"),
                Some(command) if command.trim().is_empty() => push("command", "blank"),
                Some(_) => {}
            }
            let remote_fields = [
                ("url", self.url.is_some()),
                ("headers", !self.headers.is_empty()),
                ("bearer_token", self.bearer_token.is_some()),
            ];
            for (field, set) in remote_fields {
                if set {
                    push(field, "not used by a stdio server");
                }
            }
        }
        for key in self.env.keys() {
            if key.is_empty() || key.contains(['=', '\0']) {
                push(&format!("env.{key}"), "not a valid variable name (empty, or contains \"=\" or NUL)");
            }
        }
        for (name, value) in &self.headers {
            for problem in header_problems(name, value) {
                push(&format!("headers.{name}"), problem);
            }
        }
        if self.bearer_token.as_ref().is_some_and(|t| t.expose().trim().is_empty()) {
            push("bearer_token", "empty (a bearer token cannot be empty)");
        }
        if self.auth == AuthMode::Bearer
            && self.bearer_token.is_none()
            && !self.headers.keys().any(|k| k.eq_ignore_ascii_case("authorization"))
        {
            push("auth", "\"bearer\" needs a bearer token or an Authorization header");
        }
        let allowed = self.tools.allow.iter().flatten().map(|n| ("enabled_tools", n));
        for (field, name) in allowed.chain(self.tools.deny.iter().map(|n| ("disabled_tools", n))) {
            if name.trim().is_empty() {
                push(field, "blank (a tool name is needed)");
            }
        }
        for name in &self.tools.deny {
            if self.tools.allow.iter().flatten().any(|e| e == name) {
                push(
                    "disabled_tools",
                    &format!(
                        "tool {name:?} is also enabled (enabled_tools): a tool cannot be both enabled and disabled"
                    ),
                );
            }
        }
        for (field, timeout) in [
            ("startup_timeout", self.startup_timeout),
            ("request_timeout", self.request_timeout),
            ("read_timeout", self.read_timeout),
        ] {
            if timeout.is_zero() {
                push(field, "must be positive");
            } else if timeout > MAX_TIMEOUT {
                push(field, &format!("too large: at most {} seconds (365 days)", MAX_TIMEOUT.as_secs()));
            }
        }
        out
    }

    /// [`ServerConfig::problems`] as a result: `Err` lists every problem.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let problems = self.problems();
        if problems.is_empty() { Ok(()) } else { Err(ConfigError::Invalid(problems)) }
    }
}

impl McpConfig {
    /// The same config with `server` added after the others.
    pub fn with_server(mut self, server: ServerConfig) -> Self {
        self.servers.push(server);
        self
    }

    /// Everything wrong with the enabled servers ([`ServerConfig::problems`]) and names that
    /// two enabled servers share. Disabled servers are drafts and are not checked.
    pub fn problems(&self) -> Vec<ConfigProblem> {
        let mut problems: Vec<ConfigProblem> = self.enabled_servers().flat_map(ServerConfig::problems).collect();
        let enabled: Vec<&ServerConfig> = self.enabled_servers().collect();
        for (i, server) in enabled.iter().enumerate() {
            if !server.name.trim().is_empty() && enabled[..i].iter().any(|s| s.name == server.name) {
                problems.push(ConfigProblem::server(
                    &server.name,
                    "name",
                    "duplicate (another enabled server has this name; disable or rename one)",
                ));
            }
        }
        problems
    }

    /// [`McpConfig::problems`] as a result: `Err` lists every problem.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let problems = self.problems();
        if problems.is_empty() { Ok(()) } else { Err(ConfigError::Invalid(problems)) }
    }
}
