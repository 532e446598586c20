//! The MCP side of a host: the session engine, one-server connections and the many-server
//! manager.
//!
//! A host starts here: [`McpManager::builder`] takes its servers (a loaded [`McpConfig`], or
//! [`ServerConfig`]s described in code), its callbacks (`host_bridge::HostBridge` converts into
//! [`HostCallbacks`]), observers, interceptors and reconnect policy, then
//! [`start`](ManagerBuilder::start)s them; [`McpToolProvider`] puts the servers' tools into a
//! `tool_system::ToolRegistry` next to the host's own. `mcp-manager/examples/` holds a whole
//! host in twenty lines and one example per extension point (a custom transport, an audit hook,
//! a native tool).
//!
//! ```
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! use mcp_manager::{ErrorKind, McpManager, RequestOptions, ServerConfig, ServerState};
//!
//! let manager = McpManager::builder()
//!     .server(ServerConfig::stdio("notes", "/nonexistent/notes-server").arg("--stdio"))
//!     .on_tool_executed(|e| println!("{} took {} ms", e.tool_name, e.duration_ms))
//!     .wait_for_servers(false) // a slow server holds no one up
//!     .start()
//!     .await?;
//! let mut changes = manager.subscribe_status(); // every state change, in order
//! manager.wait_started().await;
//! let status = &manager.status()[0];
//! assert_eq!(status.state, ServerState::Failed, "its command does not exist");
//! assert!(status.last_error.as_deref().unwrap().contains("/nonexistent/notes-server"));
//! let error = manager.call_tool("search", None, RequestOptions::default()).await.unwrap_err();
//! assert_eq!(error.kind(), ErrorKind::NotFound);
//! manager.close().await;
//! # drop(changes);
//! # Ok::<(), mcp_manager::config::ConfigError>(())
//! # }).unwrap();
//! ```
//!
//! The modules:
//!
//! - [`session`]: [`Session`], the JSON-RPC engine over any `mcp_transport::Transport`: typed
//!   requests with deadlines, cancellation, progress, and an [`InboundHandler`] for what the
//!   server asks.
//! - [`connection`]: [`McpConnection`], one server in either era, opened from a
//!   [`TransportPlan`]; a [`RemoteTarget`] (a URL) tries streamable HTTP and falls back to legacy
//!   HTTP+SSE. Its cached [`Inventory`] is kept fresh by list_changed notifications (legacy),
//!   `subscriptions/listen` (modern) and `ttlMs` hints.
//! - [`manager`]: [`McpManager`], many servers supervised and routed ([`ServerStatus`],
//!   [`McpManager::subscribe_status`]), its [`hooks`](manager::hooks) and
//!   [`interceptors`](manager::interceptors), and [`McpToolProvider`], the manager as a
//!   `tool_system` provider.
//! - [`config`]: [`McpConfig`] and its loaders (desktop `mcpServers` JSON, VS Code, Codex TOML,
//!   this crate's TOML), interpolation and validation.
//! - [`callbacks`]: what a server may ask of the host ([`HostCallbacks`]).
//! - [`apps`]: MCP Apps views ([`AppView`](apps::AppView)) read for a host that renders them.
//! - [`error_kind`]: the stable [`ErrorKind`] of every error a host branches on.
//! - [`telemetry`]: the `tracing` spans of connections, requests and tool calls, after the
//!   OpenTelemetry semantic conventions for MCP.
//!
//! A host reads its servers from a config file ([`McpConfig::load`](config::McpConfig::load)),
//! or from text with an environment of its choosing, then starts an
//! [`McpManager`] on the result:
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
pub mod telemetry;

pub use callbacks::HostCallbacks;
pub use connection::{
    ConnectionError, ConnectionOptions, Inventory, McpConnection, ServerInfo, SharedList, ToolCompanion,
    ToolCompanions, TransportFactory, single_use_factory, stdio_factory,
};
pub use connection::{FreshnessOptions, RemoteTarget, RemoteTimeouts, TransportPlan};
pub use session::{InboundHandler, NoHandler, RequestOptions, Session, SessionError, SessionOptions};

pub use builder::ManagerBuilder;
pub use config::{McpConfig, ServerConfig};
pub use error_kind::ErrorKind;
pub use manager::{
    Caller, Decision, Hooks, Interceptors, ManagerError, ManagerOptions, McpManager, McpToolProvider, ReconnectPolicy,
    ServerStatus, StatusChange, ToolCall,
};

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
