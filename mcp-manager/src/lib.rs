//! The MCP side of a host: the session engine, one-server connections and the many-server
//! manager.
//!
//! - [`session`]: [`Session`], the JSON-RPC engine over any `mcp_transport::Transport`: typed
//!   requests with deadlines, cancellation, progress, and an [`InboundHandler`] for what the
//!   server asks.
//! - [`connection`]: [`McpConnection`], one server in either era, opened from a
//!   [`TransportPlan`]; a [`RemoteTarget`] (a URL) tries streamable HTTP and falls back to legacy
//!   HTTP+SSE. Its cached [`Inventory`] is kept fresh by list_changed notifications (legacy),
//!   `subscriptions/listen` (modern) and `ttlMs` hints.
//! - [`manager`]: [`McpManager`](manager::McpManager), many servers supervised and routed, and
//!   [`McpToolProvider`](manager::McpToolProvider), the manager as a `tool_system` provider.
//! - [`config`]: [`McpConfig`](config::McpConfig) and its loaders (desktop `mcpServers` JSON,
//!   VS Code, Codex TOML, this crate's TOML), interpolation and validation.
//! - [`callbacks`]: what a server may ask of the host ([`HostCallbacks`]).
//! - [`apps`]: MCP Apps views ([`AppView`](apps::AppView)) read for a host that renders them.
//!
//! A host reads its servers from a config file ([`McpConfig::load`](config::McpConfig::load)),
//! or from text with an environment of its choosing, then starts an
//! [`McpManager`](manager::McpManager) on the result:
//!
//! ```
//! use std::collections::BTreeMap;
//!
//! use mcp_manager::config::{McpConfig, TransportChoice};
//!
//! let text = r#"{
//!     // Claude Desktop's format: comments and trailing commas are fine.
//!     "mcpServers": {
//!         "files": { "command": "npx", "args": ["-y", "server-filesystem", "${HOME}/notes"] },
//!         "search": { "url": "https://search.example/mcp", "headers": { "X-Team": "${TEAM:-core}" } },
//!         "draft": { "command": "", "disabled": true },
//!     }
//! }"#;
//! let env = BTreeMap::from([("HOME".to_string(), "/home/ann".to_string())]);
//! let config = McpConfig::parse(text, None, "claude_desktop_config.json", &env)?;
//!
//! let enabled: Vec<&str> = config.enabled_servers().map(|s| s.name.as_str()).collect();
//! assert_eq!(enabled, ["files", "search"], "file order; the disabled draft is not validated");
//! let files = config.server("files").unwrap();
//! assert_eq!(files.transport, TransportChoice::Stdio);
//! assert_eq!(files.args[2], "/home/ann/notes");
//! let search = config.server("search").unwrap().remote_target().unwrap();
//! assert_eq!(search.transport, None, "streamable HTTP, falling back to HTTP+SSE");
//! assert_eq!(search.headers, [("X-Team".to_string(), "core".to_string())]);
//!
//! // Every problem is reported at once, naming the server and the field.
//! let broken = r#"{ "mcpServers": { "remote": { "type": "http" }, "local": { "comand": "x" } } }"#;
//! let error = McpConfig::parse(broken, None, "mcp.json", &env).unwrap_err();
//! let problems: Vec<String> = error.problems().iter().map(ToString::to_string).collect();
//! assert!(problems.iter().any(|p| p.starts_with(r#"server "remote": field "url""#)), "{problems:?}");
//! assert!(problems.iter().any(|p| p.contains(r#"field "comand""#)), "{problems:?}");
//! # Ok::<(), mcp_manager::config::ConfigError>(())
//! ```

pub mod apps;
mod builder;
pub mod callbacks;
pub mod config;
pub mod connection;
pub mod error_kind;
pub mod manager;
pub mod session;

pub use callbacks::HostCallbacks;
pub use connection::{
    ConnectionError, ConnectionOptions, Inventory, McpConnection, ServerInfo, TransportFactory, single_use_factory,
    stdio_factory,
};
pub use connection::{FreshnessOptions, RemoteTarget, RemoteTimeouts, TransportPlan};
pub use session::{InboundHandler, NoHandler, RequestOptions, Session, SessionError, SessionOptions};

pub use builder::ManagerBuilder;
pub use config::{McpConfig, ServerConfig};
pub use error_kind::ErrorKind;
pub use manager::{ManagerError, ManagerOptions, McpManager, McpToolProvider, ReconnectPolicy, ServerStatus};

/// The life-cycle state of one configured server.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ServerState {
    /// Spawning or connecting, handshake not finished.
    Starting,
    /// Connected and discovered.
    Ready,
    /// Connected, but an optional list failed.
    Degraded,
    /// Lost and trying again with backoff.
    Reconnecting,
    /// Gave up; the status carries the last error.
    Failed,
    /// Closed on purpose.
    Stopped,
}

impl ServerState {
    /// The state's name: `starting`, `ready`, `degraded`, `reconnecting`, `failed`, `stopped`.
    pub fn as_str(self) -> &'static str {
        match self {
            ServerState::Starting => "starting",
            ServerState::Ready => "ready",
            ServerState::Degraded => "degraded",
            ServerState::Reconnecting => "reconnecting",
            ServerState::Failed => "failed",
            ServerState::Stopped => "stopped",
        }
    }
}

impl std::fmt::Display for ServerState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}
