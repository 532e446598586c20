//! The MCP side of a host: the session engine, one-server connections and the many-server
//! manager.
//!
//! Main types (arriving with their issues): `McpConnection` (one server, either protocol era),
//! `McpManager` (many servers, routing, state, hot reload) and `McpToolProvider` (the manager seen
//! as a `tool_system` provider). Today only [`ServerState`] exists.

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
