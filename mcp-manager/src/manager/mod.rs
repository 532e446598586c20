//! [`McpManager`]: many servers under one roof.
//!
//! The manager connects every enabled server of an [`McpConfig`] concurrently, each under its
//! start-up timeout, and supervises it ([`ServerStatus`], [`ServerState`]):
//! a lost server is reconnected with capped backoff, a change of its lists refreshes the
//! [`Routing`] table, which is rebuilt in config order so the outcome never depends on timing.
//! Tool calls, prompts and resources are routed through that table. [`McpManager::apply_config`]
//! reloads a new config by diff, and [`McpManager::close`] releases every connection and
//! process. [`McpToolProvider`] shows the manager's tools to a `tool_system::ToolRegistry`.
//!
//! Observers ([`hooks`]) see servers connect and disconnect and every tool call; one that fails
//! or panics never affects the manager. [`interceptors`] may act on a call: veto it, rewrite its
//! arguments or its result, bounded in time and isolated like the observers. A host watches its
//! servers through [`McpManager::subscribe_status`] (every state change, in order) and
//! [`ServerStatus`] (state, counts, conflicts, warnings, last error).

mod calls;
pub mod convert;
pub mod hooks;
mod in_flight;
pub mod interceptors;
mod plan;
mod provider;
mod routing;
mod server;
mod skills;
mod status;
mod tasks;
pub mod template;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use mcp_protocol::types::mrtr::Outcome;
use mcp_protocol::types::prompts::{GetPromptParams, GetPromptResult};
use mcp_protocol::types::resources::ReadResourceResult;
use tokio::sync::{broadcast, watch};
use tool_system::ToolVisibility;

pub use self::hooks::{Caller, Hooks, ManagerEvent, ManagerObserver};
pub use self::interceptors::{Decision, InterceptorOptions, Interceptors, ToolCall};
pub use self::plan::{AuthOptions, PlanOverride, oauth_client};
pub use self::provider::McpToolProvider;
pub use self::routing::{
    Conflict, ConflictKind, FilterWarning, RoutedPrompt, RoutedResource, RoutedTemplate, RoutedTool, Routing,
};
use self::server::ManagedServer;
pub use self::skills::skills_catalog;
pub use self::status::{STATUS_CHANNEL_CAPACITY, ServerStatus, StatusChange};
use crate::apps::{AppView, AppViewError};
use crate::config::{ClientConfig, McpConfig, ServerConfig};
use crate::connection::ConnectionError;
use crate::{HostCallbacks, ServerState};

/// How lost servers are reconnected.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReconnectPolicy {
    /// The delay before the first attempt (default 1 s); doubled after each failure.
    pub initial_delay: Duration,
    /// The longest delay (default 30 s).
    pub max_delay: Duration,
    /// Attempts in a row before the server is `Failed` (default 5).
    pub max_attempts: u32,
}

impl Default for ReconnectPolicy {
    fn default() -> Self {
        ReconnectPolicy { initial_delay: Duration::from_secs(1), max_delay: Duration::from_secs(30), max_attempts: 5 }
    }
}

/// How the manager behaves.
#[derive(Clone, Default)]
pub struct ManagerOptions {
    /// What servers may ask of the host (sampling, elicitation, roots, notifications).
    pub callbacks: HostCallbacks,
    /// Reconnection of lost servers.
    pub reconnect: ReconnectPolicy,
    /// Send tool arguments unchecked (default false: they are checked against the tool's
    /// `inputSchema` before sending). Skipped, the schema is not compiled either.
    pub skip_argument_validation: bool,
    /// Observers of the manager's life cycle.
    pub hooks: Hooks,
    /// Transport plans of the host's own making (custom transports, tests).
    pub transport_override: Option<PlanOverride>,
    /// How remote servers that use OAuth are authorized (token store, browser step).
    pub authorization: AuthOptions,
    /// Whether MCP tools are offered to the LLM directly ([`ToolVisibility::Visible`], the
    /// default) or only through the registry's `tool_search` ([`ToolVisibility::Deferred`]),
    /// for servers whose config sets no `tool_visibility`.
    pub tool_visibility: ToolVisibility,
    /// Interceptors that may veto a call or rewrite its arguments or result.
    pub interceptors: Interceptors,
}

impl std::fmt::Debug for ManagerOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ManagerOptions")
            .field("callbacks", &self.callbacks)
            .field("reconnect", &self.reconnect)
            .field("skip_argument_validation", &self.skip_argument_validation)
            .field("transport_override", &self.transport_override.is_some())
            .field("authorization", &self.authorization)
            .field("tool_visibility", &self.tool_visibility)
            .field("interceptors", &self.interceptors)
            .finish_non_exhaustive()
    }
}

/// Why a manager operation failed.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum ManagerError {
    /// No ready server offers this tool.
    #[error("unknown tool {0:?}: no ready server offers it")]
    UnknownTool(String),
    /// The server's config disables this tool (`enabled_tools` / `disabled_tools`).
    #[error("tool {tool:?} is disabled by the config of server {server:?} (enabled_tools / disabled_tools)")]
    DisabledTool {
        /// The tool's name.
        tool: String,
        /// The server whose config disables it.
        server: String,
    },
    /// No ready server offers this prompt.
    #[error("unknown prompt {0:?}: no ready server offers it")]
    UnknownPrompt(String),
    /// No ready server lists this resource or has a template that matches it.
    #[error("unknown resource {0:?}: no ready server lists it or has a template that matches it")]
    UnknownResource(String),
    /// No server of this name is configured.
    #[error("unknown server {0:?}")]
    UnknownServer(String),
    /// The arguments do not match the tool's `inputSchema` (nothing was sent).
    #[error("{0}")]
    InvalidArguments(String),
    /// The server asked for input more often than allowed, or answered in a shape that needs a
    /// feature this call does not use (a task).
    #[error("server {server:?} answered {method} with a {shape} result, which this call does not handle")]
    UnexpectedShape {
        /// The server's name.
        server: String,
        /// The method.
        method: &'static str,
        /// `input_required` or `task`.
        shape: &'static str,
    },
    /// The connection failed.
    #[error(transparent)]
    Connection(#[from] ConnectionError),
    /// The resource is not an MCP Apps view the host can render.
    #[error(transparent)]
    AppView(#[from] AppViewError),
    /// The manager was closed.
    #[error("the MCP manager is closed")]
    Closed,
    /// A skill could not be listed, loaded or read (the message names the failed check).
    #[error(transparent)]
    Skill(#[from] crate::connection::skills::SkillError),
    /// The tool's server is not ready: starting or reconnecting (it will be back), failed or
    /// stopped. Said instead of "unknown tool" for a tool the server offered before.
    #[error("{}", unavailable(server, tool, *state))]
    ServerUnavailable {
        /// The server that offered the tool.
        server: String,
        /// The tool.
        tool: String,
        /// The server's state.
        state: ServerState,
    },
    /// An interceptor vetoed the call; nothing was sent.
    #[error("tool {tool:?} of server {server:?} was not called: interceptor {interceptor:?} vetoed it: {reason}")]
    Vetoed {
        /// The server the call was routed to.
        server: String,
        /// The tool.
        tool: String,
        /// The interceptor's name.
        interceptor: String,
        /// Its reason.
        reason: String,
    },
}

/// What [`ManagerError::ServerUnavailable`] says.
fn unavailable(server: &str, tool: &str, state: ServerState) -> String {
    match state {
        ServerState::Reconnecting => {
            format!("server {server:?} is reconnecting; tool {tool:?} will be back when it is")
        }
        ServerState::Starting => {
            format!("server {server:?} is still starting; tool {tool:?} will be available once it is ready")
        }
        ServerState::Failed => {
            format!("server {server:?} has failed; tool {tool:?} is unavailable until it is restarted")
        }
        ServerState::Stopped => format!("server {server:?} is stopped; tool {tool:?} is unavailable"),
        ServerState::Ready | ServerState::Degraded => format!("server {server:?} no longer offers tool {tool:?}"),
    }
}

/// How many lost tools [`ManagerShared::former_owners`] remembers before it forgets older
/// losses (a table that loses more at once has them all remembered).
const MAX_FORMER_OWNERS: usize = 10_000;

/// The state the manager's parts share.
pub(crate) struct ManagerShared {
    pub(crate) options: ManagerOptions,
    client: RwLock<ClientConfig>,
    servers: RwLock<Vec<Arc<ManagedServer>>>,
    routing: RwLock<Arc<Routing>>,
    changes: watch::Sender<u64>,
    /// Every server's state changes ([`McpManager::subscribe_status`]).
    status_events: broadcast::Sender<StatusChange>,
    /// The server each tool that left the routing table was last routed to, so that a call for
    /// a tool whose server went away says so rather than "unknown tool" (bounded by
    /// [`MAX_FORMER_OWNERS`]).
    former_owners: Mutex<foldhash::HashMap<Arc<str>, Arc<str>>>,
    pub(crate) hooks: Hooks,
    closed: std::sync::atomic::AtomicBool,
    /// Held while the routing table is rebuilt.
    rebuild: std::sync::Mutex<()>,
    /// Rebuilds asked for so far ([`ManagerShared::rebuild_routing`] numbers each one).
    rebuilds_asked: std::sync::atomic::AtomicU64,
    /// The number of the last ask the current table covers: every change made before that
    /// ask is in it. Sent once the rebuild lock is released.
    rebuilt: watch::Sender<u64>,
}

impl Drop for ManagerShared {
    /// A manager dropped without [`McpManager::close`] still leaves no server running: the
    /// supervisors stop and the connections (stdio process groups included) are dropped.
    fn drop(&mut self) {
        let servers = std::mem::take(&mut *write(&self.servers));
        for server in &servers {
            server.halt();
        }
    }
}

fn read<T>(l: &RwLock<T>) -> std::sync::RwLockReadGuard<'_, T> {
    l.read().unwrap_or_else(|p| p.into_inner())
}

fn write<T>(l: &RwLock<T>) -> std::sync::RwLockWriteGuard<'_, T> {
    l.write().unwrap_or_else(|p| p.into_inner())
}

impl ManagerShared {
    pub(crate) fn client(&self) -> ClientConfig {
        read(&self.client).clone()
    }

    /// Rebuild the routing table from the ready servers, in config order. Rebuilds run one at a
    /// time, so a table built from older inventories never replaces a newer one.
    ///
    /// A ready server's lists get into the table only once every server before it in config
    /// order has ended its first attempt (ready, failed, or past its start-up timeout), or if
    /// they have been in it before: so config order decides a clash from the first table on,
    /// whichever server was ready first, and a name the host sees never moves to an earlier
    /// server just because that one was slower to start.
    ///
    /// Asks are coalesced: a caller that finds a table built after its ask (by a rebuild that
    /// waited for the lock with it) takes that table instead of building another.
    pub(crate) fn rebuild_routing(&self) -> Arc<Routing> {
        let asked = self.ask_rebuild();
        let guard = self.rebuild.lock().unwrap_or_else(|p| p.into_inner());
        if *self.rebuilt.borrow() >= asked {
            return read(&self.routing).clone();
        }
        self.rebuild_locked(guard)
    }

    /// [`ManagerShared::rebuild_routing`] for a task: while another rebuild runs, wait for it
    /// (without blocking the thread) and build at most one more table for every ask made
    /// meanwhile. So servers that become ready together cost one rebuild, not one each, and
    /// the table is rebuilt at most as often as a rebuild can finish.
    pub(crate) async fn rebuild_routing_coalesced(&self) {
        let mut rebuilt = self.rebuilt.subscribe();
        let asked = self.ask_rebuild();
        loop {
            if *rebuilt.borrow_and_update() >= asked {
                return;
            }
            if !self.try_rebuild() {
                // The holder of the lock sends `rebuilt` after letting go of it: this wakes up.
                let _ = rebuilt.changed().await;
            }
        }
    }

    /// Rebuild unless a rebuild is under way; whether this one ran.
    fn try_rebuild(&self) -> bool {
        let guard = match self.rebuild.try_lock() {
            Ok(guard) => guard,
            Err(std::sync::TryLockError::Poisoned(p)) => p.into_inner(),
            Err(std::sync::TryLockError::WouldBlock) => return false,
        };
        self.rebuild_locked(guard);
        true
    }

    /// Number an ask for a rebuild (after the change it is for).
    fn ask_rebuild(&self) -> u64 {
        self.rebuilds_asked.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1
    }

    /// Build and publish the table, holding the rebuild lock (`guard`); released before the
    /// waiters are told.
    fn rebuild_locked(&self, guard: std::sync::MutexGuard<'_, ()>) -> Arc<Routing> {
        // Every ask numbered up to here was made after its change, so this build sees them all.
        let covers = self.rebuilds_asked.load(std::sync::atomic::Ordering::SeqCst);
        let (table, included) = {
            let _one_at_a_time = guard;
            let servers = read(&self.servers).clone();
            let mut ahead_settled = true;
            let mut included = Vec::new();
            for server in servers {
                if let Some(inventory) = server.inventory()
                    && server.admit(ahead_settled)
                {
                    included.push((server.clone(), inventory));
                }
                ahead_settled &= server.first_attempt_over();
            }
            let inputs = included.iter().map(|(s, inventory)| routing::RoutingInput {
                server: &s.name,
                inventory,
                filter: &s.config.tools,
                visibility: s.config.tool_visibility.unwrap_or(self.options.tool_visibility),
            });
            let reserved = read(&self.client).reserved_tool_names.clone();
            let previous = read(&self.routing).clone();
            let table = Arc::new(Routing::build(inputs, &reserved, &previous));
            self.remember_owners(&previous, &table);
            *write(&self.routing) = table.clone();
            self.changes.send_modify(|g| *g = g.wrapping_add(1));
            (table, included)
        };
        self.rebuilt.send_modify(|done| *done = (*done).max(covers));
        // Observers hear of a connection once its lists are in the table (outside the lock).
        for (server, _) in &included {
            server.announce(&table, &self.hooks);
        }
        table
    }

    /// Remember who owned each tool that `previous` routed and `table` does not, so that a call
    /// of it says that its server is unavailable rather than that no server has it. A table
    /// that kept every route of `previous` (a server connected) lost none, and costs nothing
    /// here; nor does the table of a closed manager, whose calls all say that it is closed.
    fn remember_owners(&self, previous: &Routing, table: &Routing) {
        if self.is_closing() {
            return;
        }
        let mut lost = table.lost_tools(previous).peekable();
        if lost.peek().is_none() {
            return;
        }
        let mut owners = self.former_owners.lock().unwrap_or_else(|p| p.into_inner());
        if owners.len() > MAX_FORMER_OWNERS {
            // Too many: forget the tools routed again, then (still too many) the older losses.
            owners.retain(|tool, _| table.tool(tool).is_none());
            if owners.len() > MAX_FORMER_OWNERS {
                owners.clear();
            }
        }
        for route in lost {
            owners.insert(Arc::from(route.tool().name.as_str()), route.server().clone());
        }
    }

    /// Forget the tools of servers no longer configured (after a reload).
    fn forget_unconfigured_owners(&self) {
        let configured: std::collections::HashSet<Arc<str>> =
            read(&self.servers).iter().map(|s| s.name.clone()).collect();
        let mut owners = self.former_owners.lock().unwrap_or_else(|p| p.into_inner());
        owners.retain(|_, server| configured.contains(server));
    }

    /// The server `tool` was last routed to, if it is still configured.
    fn former_owner(&self, tool: &str) -> Option<Arc<ManagedServer>> {
        let owner = self.former_owners.lock().unwrap_or_else(|p| p.into_inner()).get(tool).cloned()?;
        self.server(&owner)
    }

    pub(crate) fn is_closing(&self) -> bool {
        self.closed.load(std::sync::atomic::Ordering::SeqCst)
    }

    fn server(&self, name: &str) -> Option<Arc<ManagedServer>> {
        read(&self.servers).iter().find(|s| &*s.name == name).cloned()
    }
}

/// Many MCP servers, connected, supervised and routed. Cheap to clone; clones share everything.
#[derive(Clone)]
pub struct McpManager {
    shared: Arc<ManagerShared>,
}

impl std::fmt::Debug for McpManager {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<String> = read(&self.shared.servers).iter().map(|s| s.name.to_string()).collect();
        f.debug_struct("McpManager").field("servers", &names).finish_non_exhaustive()
    }
}

/// What [`McpManager::apply_config`] did, by server name.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReloadReport {
    /// Kept with their connections.
    pub unchanged: Vec<String>,
    /// New servers, started.
    pub added: Vec<String>,
    /// Changed servers, restarted after their calls in flight finished.
    pub restarted: Vec<String>,
    /// Removed or disabled servers, closed.
    pub removed: Vec<String>,
}

impl McpManager {
    /// Start every enabled server of `config` concurrently and wait until each one is ready or
    /// has failed its first attempt (each bounded by its start-up timeout). A server that fails
    /// does not hold up or affect the others: see [`McpManager::status`].
    pub async fn start(config: McpConfig, options: ManagerOptions) -> McpManager {
        let manager = McpManager::new(config.client, options);
        let servers = manager.add_servers(config.servers);
        futures::future::join_all(servers.iter().map(|s| s.settled())).await;
        manager
    }

    /// Start every enabled server of `config` concurrently, and return at once, with the
    /// servers still `Starting`: a hung server delays no one. Watch them with
    /// [`McpManager::subscribe_status`], or wait with [`McpManager::wait_started`]. Routing
    /// follows config order all the same: a server's tools enter the table once every server
    /// before it has ended its first attempt. Call it within a tokio runtime.
    pub async fn start_in_background(config: McpConfig, options: ManagerOptions) -> McpManager {
        let manager = McpManager::new(config.client, options);
        manager.add_servers(config.servers);
        manager
    }

    fn new(client: ClientConfig, options: ManagerOptions) -> McpManager {
        let hooks = options.hooks.clone();
        McpManager {
            shared: Arc::new(ManagerShared {
                options,
                client: RwLock::new(client),
                servers: RwLock::new(Vec::new()),
                routing: RwLock::new(Arc::new(Routing::default())),
                changes: watch::Sender::new(0),
                status_events: broadcast::Sender::new(STATUS_CHANNEL_CAPACITY),
                former_owners: Mutex::new(foldhash::HashMap::default()),
                hooks,
                closed: std::sync::atomic::AtomicBool::new(false),
                rebuild: std::sync::Mutex::new(()),
                rebuilds_asked: std::sync::atomic::AtomicU64::new(0),
                rebuilt: watch::Sender::new(0),
            }),
        }
    }

    /// Create and start servers, appended in this order (their first attempts go on in the
    /// background).
    fn add_servers(&self, configs: Vec<ServerConfig>) -> Vec<Arc<ManagedServer>> {
        let servers: Vec<_> = configs.into_iter().map(|c| ManagedServer::new(c, &self.shared)).collect();
        write(&self.shared.servers).extend(servers.iter().cloned());
        for s in &servers {
            s.start(Arc::downgrade(&self.shared), self.shared.options.reconnect);
        }
        servers
    }

    /// The status of every configured server, in config order. The counts are of what is
    /// routed to each server now (a tool lost to an earlier server's clash is not counted), and
    /// the conflicts are those of the current routing table.
    pub fn status(&self) -> Vec<ServerStatus> {
        let routing = self.routing();
        let counts = routing.all_counts();
        read(&self.shared.servers).iter().map(|s| status::with_routing(s.status(), &routing, &counts)).collect()
    }

    /// The status of server `name`.
    pub fn server_status(&self, name: &str) -> Option<ServerStatus> {
        let routing = self.routing();
        self.shared.server(name).map(|s| status::with_routing(s.status(), &routing, &routing.all_counts()))
    }

    /// The current routing table (a snapshot: cheap, and consistent for as long as it is held).
    pub fn routing(&self) -> Arc<Routing> {
        read(&self.shared.routing).clone()
    }

    /// A counter bumped whenever the routing table changes (a server connected, was lost, or its
    /// lists changed).
    pub fn subscribe_changes(&self) -> watch::Receiver<u64> {
        self.shared.changes.subscribe()
    }

    /// The counter of [`McpManager::subscribe_changes`], now.
    pub fn revision(&self) -> u64 {
        *self.shared.changes.borrow()
    }

    /// Get prompt `name` with `arguments` from the server that owns it.
    pub async fn get_prompt(
        &self,
        name: &str,
        arguments: BTreeMap<String, String>,
    ) -> Result<(Arc<str>, GetPromptResult), ManagerError> {
        let route = self.routing().prompt(name).cloned().ok_or_else(|| ManagerError::UnknownPrompt(name.into()))?;
        let server = self.shared.server(&route.server).ok_or_else(|| ManagerError::UnknownPrompt(name.into()))?;
        let params = GetPromptParams {
            name: name.to_owned(),
            arguments: (!arguments.is_empty()).then(|| arguments.into_iter().collect()),
            ..Default::default()
        };
        match server.conn.get_prompt(params).await? {
            Outcome::Complete(result) => Ok((route.server, result)),
            _ => Err(ManagerError::UnexpectedShape {
                server: route.server.to_string(),
                method: "prompts/get",
                shape: "input_required",
            }),
        }
    }

    /// Read resource `uri` from the server that lists it or whose template matches it.
    pub async fn read_resource(&self, uri: &str) -> Result<(Arc<str>, ReadResourceResult), ManagerError> {
        let server =
            self.routing().resource_server(uri).cloned().ok_or_else(|| ManagerError::UnknownResource(uri.into()))?;
        let managed = self.shared.server(&server).ok_or_else(|| ManagerError::UnknownResource(uri.into()))?;
        match managed.conn.read_resource(uri).await? {
            Outcome::Complete(result) => Ok((server, result)),
            _ => Err(ManagerError::UnexpectedShape {
                server: server.to_string(),
                method: "resources/read",
                shape: "input_required",
            }),
        }
    }

    /// Read the MCP Apps view `uri` (a `ui://` resource, usually a tool's
    /// `_meta.ui.resourceUri`) from server `server`, with the sandbox it asks for (see
    /// [`crate::apps`]): its HTML, CSP origins and permissions, the read contents' `_meta.ui`
    /// taking precedence over the listing's. The view need not be listed by `resources/list`.
    pub async fn read_app_view(&self, server: &str, uri: &str) -> Result<AppView, ManagerError> {
        if !mcp_protocol::types::ui::is_ui_uri(uri) {
            return Err(ManagerError::AppView(AppViewError::NotUiUri { uri: uri.to_owned() }));
        }
        let managed = self.shared.server(server).ok_or_else(|| ManagerError::UnknownServer(server.into()))?;
        let routing = self.routing();
        let listed =
            routing.resources().iter().find(|r| &*r.server == server && r.resource.uri == uri).map(|r| &r.resource);
        match managed.conn.read_resource(uri).await? {
            Outcome::Complete(result) => Ok(crate::apps::app_view(server, uri, listed, result)?),
            _ => Err(ManagerError::UnexpectedShape {
                server: server.to_owned(),
                method: "resources/read",
                shape: "input_required",
            }),
        }
    }

    /// Try server `name` again now: after a failure, or to restart it.
    pub async fn restart(&self, name: &str) -> Result<ServerStatus, ManagerError> {
        let old = self.shared.server(name).ok_or_else(|| ManagerError::UnknownServer(name.into()))?;
        old.stop(true).await;
        let fresh = ManagedServer::new(old.config.clone(), &self.shared);
        self.replace(&old, fresh.clone());
        fresh.start(Arc::downgrade(&self.shared), self.shared.options.reconnect);
        fresh.settled().await;
        Ok(fresh.status())
    }

    fn replace(&self, old: &Arc<ManagedServer>, new: Arc<ManagedServer>) {
        let mut servers = write(&self.shared.servers);
        if let Some(slot) = servers.iter_mut().find(|s| Arc::ptr_eq(s, old)) {
            *slot = new;
        }
    }

    /// Apply a new config by diff: unchanged servers keep their connections, removed or
    /// disabled ones are closed, changed ones are restarted once their calls in flight have
    /// finished, added ones are started. Servers take the new config's order. The client part
    /// (reserved names, roots, client info) applies to routing at once and to connections made
    /// from now on.
    pub async fn apply_config(&self, config: McpConfig) -> ReloadReport {
        let mut report = ReloadReport::default();
        *write(&self.shared.client) = config.client.clone();
        let old: Vec<Arc<ManagedServer>> = read(&self.shared.servers).clone();
        let mut next = Vec::new();
        let mut to_start = Vec::new();
        let mut to_stop = Vec::new();
        for cfg in config.servers {
            match old.iter().find(|s| s.config.name == cfg.name) {
                Some(s) if s.config == cfg => {
                    report.unchanged.push(cfg.name.clone());
                    next.push(s.clone());
                }
                Some(s) => {
                    if cfg.enabled {
                        report.restarted.push(cfg.name.clone());
                    } else {
                        report.removed.push(cfg.name.clone());
                    }
                    to_stop.push(s.clone());
                    let fresh = ManagedServer::new(cfg, &self.shared);
                    to_start.push(fresh.clone());
                    next.push(fresh);
                }
                None => {
                    if cfg.enabled {
                        report.added.push(cfg.name.clone());
                    }
                    let fresh = ManagedServer::new(cfg, &self.shared);
                    to_start.push(fresh.clone());
                    next.push(fresh);
                }
            }
        }
        for s in &old {
            if !next.iter().any(|n| n.name == s.name) {
                report.removed.push(s.name.to_string());
                to_stop.push(s.clone());
            }
        }
        // The replaced servers leave the table first, so that no new call is routed to them;
        // calls already in flight finish before they close.
        *write(&self.shared.servers) = next;
        self.shared.forget_unconfigured_owners();
        self.shared.rebuild_routing();
        futures::future::join_all(to_stop.iter().map(|s| s.stop(true))).await;
        for s in &to_start {
            s.start(Arc::downgrade(&self.shared), self.shared.options.reconnect);
        }
        futures::future::join_all(to_start.iter().map(|s| s.settled())).await;
        self.shared.rebuild_routing();
        report
    }

    /// Tell every server connected in the legacy era that the host's roots changed
    /// (`notifications/roots/list_changed`; modern-era servers ask for roots with each request).
    /// Returns how many servers were told; a server that cannot be told is skipped. Connections
    /// whose roots provider reports its changes (`RootsProvider::changes`, as
    /// `host_bridge::Roots` does) announce them by themselves: this is for providers that do
    /// not, and calling it for one that does sends the notification twice.
    pub async fn notify_roots_changed(&self) -> usize {
        let servers = read(&self.shared.servers).clone();
        let mut told = 0;
        for server in servers {
            if server.conn.announce_roots_changed().await {
                told += 1;
            }
        }
        told
    }

    /// Close every connection (and every stdio server's process group). Idempotent.
    pub async fn close(&self) {
        self.shared.closed.store(true, std::sync::atomic::Ordering::SeqCst);
        let servers: Vec<_> = read(&self.shared.servers).clone();
        futures::future::join_all(servers.iter().map(|s| s.stop(false))).await;
        self.shared.rebuild_routing();
    }

    /// Whether [`McpManager::close`] was called.
    pub fn is_closed(&self) -> bool {
        self.shared.closed.load(std::sync::atomic::Ordering::SeqCst)
    }
}
