//! One managed server: its connection, its state, and the task that supervises it.
//!
//! The supervisor connects (under the start-up timeout) and discovers; then it waits for the
//! first of: the session ending (a crashed stdio server is noticed at once, as its transport
//! ends), a change of the inventory (list_changed or the modern subscription: it publishes what
//! the connection's background refresh stored, without a request of its own), or a stop. A lost
//! server is reconnected with capped exponential backoff, up to a number of attempts in a row;
//! a server whose very first start fails is `Failed` at once (a wrong command or URL rarely
//! fixes itself; [`McpManager::restart`](super::McpManager::restart) tries again). A panic in the
//! supervisor is caught: the server is `Failed` with the panic's message.

use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use futures::FutureExt;

use mcp_transport::{CloseReason, TransportError};
use tokio::sync::{broadcast, watch};

use super::hooks::{Hooks, ManagerEvent, ServerConnected, ServerDisconnected};
use super::in_flight::InFlight;
use super::plan;
use super::routing::Routing;
use super::status::{ServerStatus, StatusChange};
use super::{ManagerShared, ReconnectPolicy};
use crate::ServerState;
use crate::config::ServerConfig;
use crate::connection::{ConnectionError, Inventory, McpConnection, ServerInfo};
use crate::session::SessionError;

/// A configured server under supervision.
pub(crate) struct ManagedServer {
    pub(crate) name: Arc<str>,
    pub(crate) config: ServerConfig,
    pub(crate) conn: Arc<McpConnection>,
    status: watch::Sender<ServerStatus>,
    /// Where state changes go ([`McpManager::subscribe_status`](super::McpManager::subscribe_status)).
    events: broadcast::Sender<StatusChange>,
    inventory: Mutex<Option<Arc<Inventory>>>,
    /// Calls enter it; a replacement drains it, so calls in flight finish first.
    pub(crate) in_flight: InFlight,
    stop: watch::Sender<bool>,
    /// Whether the first connection attempt has ended (either way), for those who wait for it:
    /// signalled once the status says how it ended.
    settled: watch::Sender<bool>,
    /// Whether the first connection attempt has ended, for the routing table: set before the
    /// rebuild that follows it. The servers after this one in config order get into the table
    /// only once it is set (see [`ManagedServer::admit`]).
    first_attempt_over: AtomicBool,
    /// Whether this server's lists have been in a routing table.
    admitted: AtomicBool,
    /// The `server_connected` event of the current connection, until its lists get into the
    /// routing table (they may wait for the servers before this one).
    pending_connected: Mutex<Option<ServerConnected>>,
    task: Mutex<Option<tokio::task::JoinHandle<()>>>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl ManagedServer {
    /// A server for `config`; `Err` when its transport cannot be planned (no command, bad URL).
    pub(crate) fn new(config: ServerConfig, shared: &ManagerShared) -> Arc<ManagedServer> {
        let status = ServerStatus::new(&config);
        let plan = plan::transport_plan(
            &config,
            &shared.client(),
            shared.options.transport_override.as_ref(),
            &shared.options.authorization,
        );
        let mut options = plan::connection_options(&config, &shared.client(), &shared.options.callbacks);
        // Each tool's host spec is made as its page arrives, while the server prepares the next.
        let visibility = config.tool_visibility.unwrap_or(shared.options.tool_visibility);
        options.tool_companions = Some(super::routing::spec_companions(&config.name, visibility, &config.tools));
        let (conn, error) = match plan {
            Ok(p) => (McpConnection::with_plan(p, options), None),
            Err(e) => (McpConnection::new(crate::connection::failing_factory(e.clone()), options), Some(e)),
        };
        let server = Arc::new(ManagedServer {
            name: Arc::from(config.name.as_str()),
            config,
            conn: Arc::new(conn),
            status: watch::Sender::new(status),
            events: shared.status_events.clone(),
            inventory: Mutex::new(None),
            in_flight: InFlight::default(),
            stop: watch::Sender::new(false),
            settled: watch::Sender::new(false),
            first_attempt_over: AtomicBool::new(false),
            admitted: AtomicBool::new(false),
            pending_connected: Mutex::new(None),
            task: Mutex::new(None),
        });
        if let Some(e) = error {
            server.status.send_modify(|s| {
                s.state = ServerState::Failed;
                s.last_error = Some(e);
            });
            server.first_attempt_over.store(true, Ordering::SeqCst);
            server.settled.send_replace(true);
        }
        let _ = server.events.send(StatusChange::of(&server.status.borrow(), None));
        server
    }

    pub(crate) fn status(&self) -> ServerStatus {
        self.status.borrow().clone()
    }

    /// Change the status with `change`; a change of state is sent to the status subscribers,
    /// while the status is still locked, so they get the changes in the order they were made.
    fn set_status(&self, change: impl FnOnce(&mut ServerStatus)) {
        self.status.send_modify(|s| {
            let before = s.state;
            change(s);
            if s.state != before {
                // No subscriber is fine; a full channel drops its oldest for the slow ones.
                let _ = self.events.send(StatusChange::of(s, Some(before)));
            }
        });
    }

    pub(crate) fn state(&self) -> ServerState {
        self.status.borrow().state
    }

    /// The inventory of the current connection, while ready.
    pub(crate) fn inventory(&self) -> Option<Arc<Inventory>> {
        lock(&self.inventory).clone()
    }

    /// Start supervising (no-op for a disabled server or one already failed at planning).
    pub(crate) fn start(self: &Arc<Self>, shared: std::sync::Weak<ManagerShared>, policy: ReconnectPolicy) {
        if !self.config.enabled || self.state() == ServerState::Failed {
            self.first_attempt_over.store(true, Ordering::SeqCst);
            self.settled.send_replace(true);
            return;
        }
        self.stop.send_replace(false);
        self.first_attempt_over.store(false, Ordering::SeqCst);
        self.settled.send_replace(false);
        self.set_status(|s| {
            s.state = ServerState::Starting;
            s.reconnect_attempts = 0;
        });
        let task = tokio::spawn(self.clone().supervise_guarded(shared, policy));
        if let Some(old) = lock(&self.task).replace(task) {
            old.abort();
        }
    }

    /// Whether this server's lists may be in the routing table: they have been before, or every
    /// server before it in config order has ended its first attempt (`ahead_settled`). So the
    /// first table a server's tools appear in already follows config order, whichever server
    /// was ready first.
    /// Called by the (one at a time) rebuilds of the table only.
    pub(crate) fn admit(&self, ahead_settled: bool) -> bool {
        if ahead_settled {
            self.admitted.store(true, Ordering::SeqCst);
        }
        self.admitted.load(Ordering::SeqCst)
    }

    /// Whether the first connection attempt has ended (for the routing gate).
    pub(crate) fn first_attempt_over(&self) -> bool {
        self.first_attempt_over.load(Ordering::SeqCst)
    }

    /// Emit the pending `server_connected` event, with the counts of what `routing` gives this
    /// server; once per connection.
    pub(crate) fn announce(&self, routing: &Routing, hooks: &Hooks) {
        let Some(mut event) = lock(&self.pending_connected).take() else { return };
        [event.tool_count, event.prompt_count, event.resource_count, event.resource_template_count] =
            routing.counts(&self.name);
        event.at = SystemTime::now();
        tracing::info!(server = %self.name, transport = %event.transport, protocol_version = %event.protocol_version, tools = event.tool_count, prompts = event.prompt_count, resources = event.resource_count, templates = event.resource_template_count, "server connected");
        hooks.emit(ManagerEvent::ServerConnected(event));
    }

    /// Wait until the first connection attempt has ended.
    pub(crate) async fn settled(&self) {
        let mut rx = self.settled.subscribe();
        let _ = rx.wait_for(|s| *s).await;
    }

    /// Stop supervising and close the connection (the process group, for stdio). Calls in
    /// flight finish first when `drain` is set.
    pub(crate) async fn stop(&self, drain: bool) {
        let _exclusive = if drain { Some(self.in_flight.drain().await) } else { None };
        self.stop.send_replace(true);
        let task = lock(&self.task).take();
        if let Some(task) = task {
            let _ = task.await;
        }
        self.conn.close().await;
        *lock(&self.inventory) = None;
        self.first_attempt_over.store(true, Ordering::SeqCst);
        self.set_status(|s| {
            if s.state != ServerState::Failed || s.last_error.is_none() {
                s.state = ServerState::Stopped;
            }
            s.pid = None;
        });
        self.settled.send_replace(true);
    }

    /// Stop at once, without waiting (the manager is being dropped): the supervisor ends, and
    /// the connection (with a stdio server's process group) goes with the last reference.
    pub(crate) fn halt(&self) {
        self.stop.send_replace(true);
        if let Some(task) = lock(&self.task).take() {
            task.abort();
        }
        self.first_attempt_over.store(true, Ordering::SeqCst);
        self.settled.send_replace(true);
    }

    /// The supervisor, with a panic in it (ours, a transport factory's, a callback's) caught:
    /// the server is then `Failed` with the panic's message, its first attempt is settled (so
    /// nothing waits for it for ever), and the other servers go on.
    async fn supervise_guarded(self: Arc<Self>, shared: std::sync::Weak<ManagerShared>, policy: ReconnectPolicy) {
        let run = AssertUnwindSafe(self.clone().supervise(shared.clone(), policy)).catch_unwind().await;
        let Err(panic) = run else { return };
        let failure = format!("server {:?}: its supervisor panicked: {}", self.name, panic_message(panic.as_ref()));
        tracing::error!(server = %self.name, "{failure}");
        // The connection may be half open: close it (a panic in there is caught too).
        if AssertUnwindSafe(self.conn.close()).catch_unwind().await.is_err() {
            tracing::error!(server = %self.name, "closing the connection panicked too");
        }
        *lock(&self.inventory) = None;
        self.first_attempt_over.store(true, Ordering::SeqCst);
        self.set_status(|s| {
            s.state = ServerState::Failed;
            s.last_error = Some(failure.clone());
            s.pid = None;
        });
        if let Some(shared) = shared.upgrade()
            && !shared.is_closing()
        {
            shared.rebuild_routing_coalesced().await;
        }
        self.settled.send_replace(true);
    }

    async fn supervise(self: Arc<Self>, shared: std::sync::Weak<ManagerShared>, policy: ReconnectPolicy) {
        let mut stop = self.stop.subscribe();
        let mut attempts = 0u32;
        let mut was_ready = false;
        loop {
            // Boxed: connecting is the largest state of this task by far, and only passing.
            let attempt = tokio::select! {
                r = tokio::time::timeout(self.config.startup_timeout, Box::pin(self.connect_and_discover())) => r,
                _ = stopped(&mut stop) => return,
            };
            let failure = match attempt {
                Ok(Ok((info, inventory))) => {
                    attempts = 0;
                    was_ready = true;
                    match self.serve(&shared, info, inventory, &mut stop).await {
                        Served::Stopped => return,
                        Served::Lost(reason, tail) => (reason, tail),
                    }
                }
                Ok(Err(e)) => {
                    let (needs_login, auth_failed) = (needs_login(&e), auth_failed(&e));
                    self.set_status(|s| {
                        s.needs_login = needs_login;
                        s.auth_failed = auth_failed;
                    });
                    (e.to_string(), stderr_of(&e))
                }
                Err(_) => (
                    format!(
                        "server {:?} did not finish starting within {:?} (startup timeout)",
                        self.name, self.config.startup_timeout
                    ),
                    Vec::new(),
                ),
            };
            let (failure, stderr_tail) = failure;
            self.conn.close().await;
            let first_attempt = !self.first_attempt_over.swap(true, Ordering::SeqCst);
            attempts += 1;
            let give_up = !was_ready || attempts > policy.max_attempts;
            self.set_status(|s| {
                s.state = if give_up { ServerState::Failed } else { ServerState::Reconnecting };
                s.last_error = Some(failure.clone());
                if !stderr_tail.is_empty() {
                    s.stderr_tail = stderr_tail;
                }
                s.pid = None;
                s.reconnect_attempts = attempts.saturating_sub(1);
            });
            // The servers after this one may have waited for its first attempt to end.
            if first_attempt
                && let Some(shared) = shared.upgrade()
                && !shared.is_closing()
            {
                shared.rebuild_routing_coalesced().await;
            }
            self.settled.send_replace(true);
            if give_up {
                tracing::warn!(server = %self.name, error = %failure, "server failed");
                return;
            }
            let delay = policy.delay(attempts);
            tracing::warn!(server = %self.name, error = %failure, ?delay, attempt = attempts, "server lost; reconnecting");
            tokio::select! {
                _ = tokio::time::sleep(delay) => {}
                _ = stopped(&mut stop) => return,
            }
        }
    }

    async fn connect_and_discover(&self) -> Result<(ServerInfo, Inventory), ConnectionError> {
        let info = self.conn.connect().await?;
        let inventory = self.conn.discover().await?;
        Ok((info, inventory))
    }

    /// Serve a ready connection until it is lost or stopped.
    async fn serve(
        &self,
        shared: &std::sync::Weak<ManagerShared>,
        info: ServerInfo,
        inventory: Inventory,
        stop: &mut watch::Receiver<bool>,
    ) -> Served {
        let session = match self.conn.session().await {
            Ok(session) => session,
            Err(e) => return Served::Lost(e.to_string(), stderr_of(&e)),
        };
        let transport = session.transport().clone();
        let mut changes = self.conn.subscribe_changes();
        changes.borrow_and_update();
        self.publish(shared, &info, inventory, transport.process_id(), true).await;
        let reason = loop {
            tokio::select! {
                reason = session.closed() => break reason,
                Ok(()) = changes.changed() => {
                    // What the refresh that bumped the counter stored: taken from the cache,
                    // without asking the server (a list with a `ttlMs` of 0 waits for the next
                    // look that needs it), so a change is published once, and a stop never
                    // waits for a listing.
                    if let Some(inventory) = self.conn.cached_inventory() {
                        self.publish(shared, &info, inventory, transport.process_id(), false).await;
                    }
                }
                _ = stopped(stop) => {
                    self.unpublish(shared).await;
                    self.disconnected(shared, &info, &transport, "stopped".into());
                    return Served::Stopped;
                }
            }
        };
        let tail = match &reason {
            CloseReason::Exited { stderr_tail, .. } => stderr_tail.clone(),
            _ => transport.diagnostics_tail(),
        };
        let reason = format!("server {:?} was lost: {reason}", self.name);
        self.unpublish(shared).await;
        self.disconnected(shared, &info, &transport, reason.clone());
        Served::Lost(reason, tail)
    }

    /// Make a fresh inventory visible: status, routing, and (on connect) the hook. Servers that
    /// publish together share a rebuild of the routing table; each is `Ready` only once a
    /// table with its lists is out.
    async fn publish(
        &self,
        shared: &std::sync::Weak<ManagerShared>,
        info: &ServerInfo,
        inventory: Inventory,
        pid: Option<u32>,
        connected: bool,
    ) {
        let warnings = inventory.warnings.clone();
        *lock(&self.inventory) = Some(Arc::new(inventory));
        self.first_attempt_over.store(true, Ordering::SeqCst);
        let Some(shared) = shared.upgrade() else { return };
        if connected {
            // Emitted by the rebuild that puts this server's lists into the table (this one,
            // or a later one when they wait for the servers before it).
            *lock(&self.pending_connected) = Some(ServerConnected {
                server_name: self.name.to_string(),
                transport: info.transport.to_string(),
                protocol_version: info.protocol_version.to_string(),
                tool_count: 0,
                prompt_count: 0,
                resource_count: 0,
                resource_template_count: 0,
                at: SystemTime::now(),
            });
        }
        shared.rebuild_routing_coalesced().await;
        self.set_status(|s| {
            s.state = if warnings.is_empty() { ServerState::Ready } else { ServerState::Degraded };
            s.transport = info.transport.to_string();
            s.protocol_version = Some(info.protocol_version.to_string());
            s.era = info.protocol_version.era().map(|e| match e {
                mcp_protocol::Era::Legacy => "legacy".to_owned(),
                mcp_protocol::Era::Modern => "modern".to_owned(),
            });
            s.server_info = Some(format!("{} {}", info.implementation.name, info.implementation.version));
            s.warnings = warnings;
            s.pid = pid;
            s.reconnect_attempts = 0;
            if connected {
                s.last_error = None;
                s.needs_login = false;
                s.auth_failed = false;
                s.stderr_tail.clear();
            }
        });
        self.settled.send_replace(true);
    }

    async fn unpublish(&self, shared: &std::sync::Weak<ManagerShared>) {
        *lock(&self.inventory) = None;
        // A closing manager rebuilds once, after every server has stopped.
        if let Some(shared) = shared.upgrade()
            && !shared.is_closing()
        {
            shared.rebuild_routing_coalesced().await;
        }
    }

    fn disconnected(
        &self,
        shared: &std::sync::Weak<ManagerShared>,
        info: &ServerInfo,
        transport: &Arc<dyn mcp_transport::Transport>,
        reason: String,
    ) {
        let Some(shared) = shared.upgrade() else { return };
        // A connection whose lists never got into the table was still connected: say so first.
        self.announce(&super::read(&shared.routing), &shared.hooks);
        let session_id = transport.session_id();
        shared.hooks.emit(ManagerEvent::ServerDisconnected(ServerDisconnected {
            server_name: self.name.to_string(),
            transport: info.transport.to_string(),
            reason,
            had_session: session_id.is_some(),
            protocol_version: Some(info.protocol_version.to_string()),
            session_id,
            at: SystemTime::now(),
        }));
    }
}

/// Resolves once a stop is asked for (the guard `wait_for` returns is not `Send`).
async fn stopped(stop: &mut watch::Receiver<bool>) {
    let _ = stop.wait_for(|s| *s).await;
}

enum Served {
    Stopped,
    /// Why, and the server's last stderr lines.
    Lost(String, Vec<String>),
}

/// The message of a caught panic.
fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    match (panic.downcast_ref::<&str>(), panic.downcast_ref::<String>()) {
        (Some(s), _) => (*s).to_owned(),
        (_, Some(s)) => s.clone(),
        _ => "(a panic without a message)".to_owned(),
    }
}

/// The stderr lines a failure carries (a stdio server that exited).
/// Whether `error` is an authorization that needs a person's login.
fn needs_login(error: &ConnectionError) -> bool {
    let transport = match error {
        ConnectionError::Transport { error, .. } | ConnectionError::Session(SessionError::Transport { error, .. }) => {
            error
        }
        ConnectionError::FallbackFailed { first, fallback, .. } => return needs_login(first) || needs_login(fallback),
        _ => return false,
    };
    matches!(transport, TransportError::Auth(e) if e.needs_login())
}

/// Whether `error` is a failed authorization: HTTP 401 or 403, or an OAuth error.
fn auth_failed(error: &ConnectionError) -> bool {
    let transport = match error {
        ConnectionError::Transport { error, .. } | ConnectionError::Session(SessionError::Transport { error, .. }) => {
            error
        }
        ConnectionError::FallbackFailed { first, fallback, .. } => return auth_failed(first) || auth_failed(fallback),
        _ => return false,
    };
    matches!(transport, TransportError::Auth(_) | TransportError::Http { status: 401 | 403, .. })
}

fn stderr_of(error: &ConnectionError) -> Vec<String> {
    let reason = match error {
        ConnectionError::Session(SessionError::Closed { reason, .. }) => reason,
        ConnectionError::Transport { error: TransportError::Closed(reason), .. } => reason,
        ConnectionError::FallbackFailed { fallback, .. } => return stderr_of(fallback),
        _ => return Vec::new(),
    };
    match reason {
        CloseReason::Exited { stderr_tail, .. } => stderr_tail.clone(),
        _ => Vec::new(),
    }
}

impl ReconnectPolicy {
    /// The delay before reconnection attempt `attempt` (1-based): doubled each time, capped.
    pub(crate) fn delay(&self, attempt: u32) -> Duration {
        let factor = 2u32.saturating_pow(attempt.saturating_sub(1));
        self.initial_delay.saturating_mul(factor).min(self.max_delay)
    }
}
