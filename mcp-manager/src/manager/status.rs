//! What a host watches: each server's state changes as they happen ([`StatusChange`], from
//! [`McpManager::subscribe_status`]), the end of the first start-up attempts
//! ([`McpManager::wait_started`]), and the conflicts of each server in its [`ServerStatus`].

use std::collections::HashMap;
use std::time::SystemTime;

use serde::ser::SerializeStruct;
use serde::{Serialize, Serializer};
use tokio::sync::broadcast;

use super::hooks::unix_ms;
use super::plan;
use super::routing::{Conflict, ConflictKind, Routing};
use super::{McpManager, read};
use crate::ServerState;
use crate::config::ServerConfig;

/// What the host sees of one server.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ServerStatus {
    /// The configured name.
    pub name: String,
    /// The life-cycle state.
    #[serde(serialize_with = "state_name")]
    pub state: ServerState,
    /// The transport in use (`stdio`, `streamable_http`, `sse`), or the configured one before
    /// a connection exists (`remote`: streamable HTTP with the SSE fallback).
    pub transport: String,
    /// The negotiated protocol revision, while connected.
    pub protocol_version: Option<String>,
    /// `legacy` or `modern`, while connected.
    pub era: Option<String>,
    /// The server's own name and version, while connected.
    pub server_info: Option<String>,
    /// Tools routed to this server.
    pub tool_count: usize,
    /// Prompts routed to this server.
    pub prompt_count: usize,
    /// Resources routed to this server.
    pub resource_count: usize,
    /// Resource templates routed to this server.
    pub resource_template_count: usize,
    /// Optional lists that failed, each with the reason (the server is `Degraded`).
    pub warnings: Vec<String>,
    /// The names this server lost (reserved by the host, listed twice, or offered by an
    /// earlier server in config order) and the names it won from later servers: see
    /// [`Conflict`].
    pub conflicts: Vec<Conflict>,
    /// What the host should know that does not degrade the server: names in its
    /// `enabled_tools` that it does not offer (a typo, or a tool it dropped).
    pub notices: Vec<String>,
    /// The last error: why it failed or was lost.
    pub last_error: Option<String>,
    /// The last lines of the server's stderr (stdio), kept with the last error.
    pub stderr_tail: Vec<String>,
    /// The server asked for authorization that this run could not obtain: it needs a login
    /// (`OAuthClient::login`, `mcp login`).
    pub needs_login: bool,
    /// The last failure was one of authorization: HTTP 401 or 403, or an OAuth flow or grant
    /// that failed (`needs_login` says whether a person's login is what is missing).
    pub auth_failed: bool,
    /// The server's process id (stdio), while it runs.
    pub pid: Option<u32>,
    /// Reconnection attempts since the server was last ready.
    pub reconnect_attempts: u32,
}

impl ServerStatus {
    pub(super) fn new(config: &ServerConfig) -> Self {
        ServerStatus {
            name: config.name.clone(),
            state: if config.enabled { ServerState::Starting } else { ServerState::Stopped },
            transport: plan::configured_transport(config).to_owned(),
            protocol_version: None,
            era: None,
            server_info: None,
            tool_count: 0,
            prompt_count: 0,
            resource_count: 0,
            resource_template_count: 0,
            warnings: Vec::new(),
            conflicts: Vec::new(),
            notices: Vec::new(),
            last_error: None,
            stderr_tail: Vec::new(),
            needs_login: false,
            auth_failed: false,
            pid: None,
            reconnect_attempts: 0,
        }
    }
}

/// How many state changes wait for a slow subscriber before it misses the oldest ones
/// (`RecvError::Lagged`); the manager never waits for a subscriber.
pub const STATUS_CHANNEL_CAPACITY: usize = 256;

/// One server's move from one state to another.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct StatusChange {
    /// The server's configured name.
    pub server: String,
    /// The state it left; `None` when the server's supervision just began (it was added by
    /// `start` or a reload, or made anew by a restart).
    #[serde(serialize_with = "maybe_state_name")]
    pub previous: Option<ServerState>,
    /// The state it is in now.
    #[serde(serialize_with = "state_name")]
    pub state: ServerState,
    /// The last error, when it failed or was lost (cleared once ready again).
    pub last_error: Option<String>,
    /// Reconnection attempts since it was last ready.
    pub reconnect_attempts: u32,
    /// When it changed.
    #[serde(rename = "timestamp_ms", serialize_with = "unix_ms")]
    pub at: SystemTime,
}

impl StatusChange {
    /// The change to `status` from `previous`, now.
    pub(crate) fn of(status: &ServerStatus, previous: Option<ServerState>) -> StatusChange {
        StatusChange {
            server: status.name.clone(),
            previous,
            state: status.state,
            last_error: status.last_error.clone(),
            reconnect_attempts: status.reconnect_attempts,
            at: SystemTime::now(),
        }
    }
}

fn state_name<S: Serializer>(state: &ServerState, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(state.as_str())
}

fn maybe_state_name<S: Serializer>(state: &Option<ServerState>, s: S) -> Result<S::Ok, S::Error> {
    match state {
        Some(state) => s.serialize_str(state.as_str()),
        None => s.serialize_none(),
    }
}

/// A conflict as JSON: `what`, `name`, `server`, `kind` (`reserved`, `duplicate_in_server`,
/// `taken_by`), `winner` (for `taken_by`) and `message`.
impl Serialize for Conflict {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let (kind, winner) = match &self.kind {
            ConflictKind::Reserved => ("reserved", None),
            ConflictKind::DuplicateInServer => ("duplicate_in_server", None),
            ConflictKind::TakenBy(winner) => ("taken_by", Some(winner.as_str())),
        };
        let mut out = s.serialize_struct("Conflict", 6)?;
        out.serialize_field("what", self.what)?;
        out.serialize_field("name", &self.name)?;
        out.serialize_field("server", &self.server)?;
        out.serialize_field("kind", kind)?;
        out.serialize_field("winner", &winner)?;
        out.serialize_field("message", &self.to_string())?;
        out.end()
    }
}

/// `status` with what `routing` says of its server: the counts of what is routed to it, the
/// conflicts it is part of (names it lost, and names it won from a later server), and the names
/// of its `enabled_tools` it does not offer.
pub(crate) fn with_routing(
    mut status: ServerStatus,
    routing: &Routing,
    counts: &HashMap<&str, [usize; 4]>,
) -> ServerStatus {
    [status.tool_count, status.prompt_count, status.resource_count, status.resource_template_count] =
        counts.get(status.name.as_str()).copied().unwrap_or_default();
    status.conflicts = routing
        .conflicts()
        .iter()
        .filter(|c| {
            c.server == status.name || matches!(&c.kind, ConflictKind::TakenBy(winner) if *winner == status.name)
        })
        .cloned()
        .collect();
    status.notices =
        routing.filter_warnings().iter().filter(|w| w.server == status.name).map(ToString::to_string).collect();
    status
}

impl McpManager {
    /// Every state change of every server from now on, in the order they happen (per server,
    /// and across servers in the order the manager made them): `starting` → `ready`, `ready` →
    /// `reconnecting` → `ready`, → `failed`, → `stopped`, and servers added by a reload or made
    /// anew by a restart (`previous: None`).
    ///
    /// To know where things stand, subscribe first, then read [`McpManager::status`]: every
    /// change after that read is delivered (one made between the two may come twice). The
    /// channel holds [`STATUS_CHANNEL_CAPACITY`] changes: a subscriber that falls further
    /// behind gets `RecvError::Lagged(n)` (it missed `n` changes; read `status()` again) and
    /// never slows the manager. `RecvError::Closed` means the manager is gone.
    pub fn subscribe_status(&self) -> broadcast::Receiver<StatusChange> {
        self.shared.status_events.subscribe()
    }

    /// Wait until every configured server has ended its first attempt to start (ready,
    /// degraded, failed or stopped), for a manager started without waiting
    /// ([`ManagerBuilder::wait_for_servers`](crate::ManagerBuilder::wait_for_servers)). Each
    /// attempt is bounded by its server's start-up timeout, so this ends; it is cancel-safe, so
    /// a host that wants a shorter bound wraps it in `tokio::time::timeout`. The tools of a
    /// server enter the routing table as soon as it is ready and every server before it in
    /// config order has ended its first attempt, without waiting for this.
    pub async fn wait_started(&self) {
        let servers = read(&self.shared.servers).clone();
        futures::future::join_all(servers.iter().map(|s| s.settled())).await;
    }
}
