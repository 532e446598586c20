//! [`ManagerBuilder`]: the one way in for a host. Servers (a loaded [`McpConfig`], servers
//! described in code, or both), the host's callbacks (`host_bridge::HostBridge` converts into
//! them), observers, interceptors and the reconnect policy, then [`start`](ManagerBuilder::start).

use std::future::Future;
use std::sync::Arc;

use tool_system::ToolExecutionResult;

use crate::HostCallbacks;
use crate::config::{ClientConfig, ConfigError, McpConfig, ServerConfig};
use crate::connection::TransportPlan;
use crate::manager::hooks::{ManagerEvent, ManagerObserver, ServerConnected, ServerDisconnected, ToolExecuted};
use crate::manager::interceptors::{Decision, InterceptorOptions, Interceptors, ToolCall};
use crate::manager::{AuthOptions, Hooks, ManagerOptions, McpManager, ReconnectPolicy};

/// Builds and starts an [`McpManager`] (see [`McpManager::builder`]).
#[derive(Debug, Default)]
pub struct ManagerBuilder {
    config: McpConfig,
    options: ManagerOptions,
    wait_for_servers: bool,
}

impl McpManager {
    /// Start building a manager: no servers yet, default options, and `start` waits for each
    /// server's first attempt.
    pub fn builder() -> ManagerBuilder {
        ManagerBuilder { wait_for_servers: true, ..ManagerBuilder::default() }
    }
}

impl ManagerBuilder {
    /// Use `config`: its servers (before any added with [`server`](ManagerBuilder::server)) and
    /// its client settings. A later call replaces an earlier one's servers and settings.
    pub fn config(mut self, config: McpConfig) -> Self {
        let added = std::mem::take(&mut self.config.servers);
        self.config = config;
        self.config.servers.extend(added);
        self
    }

    /// Add `server` after the others (see [`ServerConfig::stdio`] and [`ServerConfig::http`]).
    pub fn server(mut self, server: ServerConfig) -> Self {
        self.config.servers.push(server);
        self
    }

    /// The client settings: how the client names itself, reserved tool names, roots.
    pub fn client(mut self, client: ClientConfig) -> Self {
        self.config.client = client;
        self
    }

    /// What servers may ask of the host: sampling, elicitation, roots, notifications. A
    /// `host_bridge::HostBridge` converts into them (`.callbacks(&bridge)`).
    pub fn callbacks(mut self, callbacks: impl Into<HostCallbacks>) -> Self {
        self.options.callbacks = callbacks.into();
        self
    }

    /// How lost servers are reconnected.
    pub fn reconnect(mut self, policy: ReconnectPolicy) -> Self {
        self.options.reconnect = policy;
        self
    }

    /// Replace the observers given so far with `hooks`.
    pub fn hooks(mut self, hooks: Hooks) -> Self {
        self.options.hooks = hooks;
        self
    }

    /// Add an observer of every event.
    pub fn observer(mut self, observer: impl ManagerObserver) -> Self {
        self.options.hooks.add(observer);
        self
    }

    /// Add a closure that sees every event.
    pub fn on_event(mut self, f: impl Fn(&ManagerEvent) + Send + Sync + 'static) -> Self {
        self.options.hooks = std::mem::take(&mut self.options.hooks).on_event(f);
        self
    }

    /// Add a closure that sees each server that connects.
    pub fn on_server_connected(mut self, f: impl Fn(&ServerConnected) + Send + Sync + 'static) -> Self {
        self.options.hooks = std::mem::take(&mut self.options.hooks).on_server_connected(f);
        self
    }

    /// Add a closure that sees each server that disconnects.
    pub fn on_server_disconnected(mut self, f: impl Fn(&ServerDisconnected) + Send + Sync + 'static) -> Self {
        self.options.hooks = std::mem::take(&mut self.options.hooks).on_server_disconnected(f);
        self
    }

    /// Add a closure that sees each finished tool call.
    pub fn on_tool_executed(mut self, f: impl Fn(&ToolExecuted) + Send + Sync + 'static) -> Self {
        self.options.hooks = std::mem::take(&mut self.options.hooks).on_tool_executed(f);
        self
    }

    /// Replace the interceptors given so far with `interceptors`.
    pub fn interceptors(mut self, interceptors: Interceptors) -> Self {
        self.options.interceptors = interceptors;
        self
    }

    /// Add a before-call interceptor (see [`Interceptors::before`]).
    pub fn before_call<F, Fut>(self, name: &str, f: F) -> Self
    where
        F: Fn(ToolCall) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Decision> + Send + 'static,
    {
        self.before_call_with(name, InterceptorOptions::default(), f)
    }

    /// Add a before-call interceptor with `options` (a time bound, failing closed).
    pub fn before_call_with<F, Fut>(mut self, name: &str, options: InterceptorOptions, f: F) -> Self
    where
        F: Fn(ToolCall) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Decision> + Send + 'static,
    {
        self.options.interceptors = std::mem::take(&mut self.options.interceptors).before_with(name, options, f);
        self
    }

    /// Add an after-call interceptor (see [`Interceptors::after`]).
    pub fn after_call<F, Fut>(self, name: &str, f: F) -> Self
    where
        F: Fn(ToolCall, ToolExecutionResult) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ToolExecutionResult> + Send + 'static,
    {
        self.after_call_with(name, InterceptorOptions::default(), f)
    }

    /// Add an after-call interceptor with `options`.
    pub fn after_call_with<F, Fut>(mut self, name: &str, options: InterceptorOptions, f: F) -> Self
    where
        F: Fn(ToolCall, ToolExecutionResult) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ToolExecutionResult> + Send + 'static,
    {
        self.options.interceptors = std::mem::take(&mut self.options.interceptors).after_with(name, options, f);
        self
    }

    /// Open servers through transports of the host's own making: `plan` gets each server's
    /// config and returns its plan, or `None` for the one the config describes.
    pub fn transport(mut self, plan: impl Fn(&ServerConfig) -> Option<TransportPlan> + Send + Sync + 'static) -> Self {
        self.options.transport_override = Some(Arc::new(plan));
        self
    }

    /// How remote servers that use OAuth are authorized (token store, browser step).
    pub fn authorization(mut self, authorization: AuthOptions) -> Self {
        self.options.authorization = authorization;
        self
    }

    /// Send tool arguments unchecked (by default they are checked against the tool's
    /// `inputSchema` first); the schema is then not compiled either.
    pub fn skip_argument_validation(mut self, skip: bool) -> Self {
        self.options.skip_argument_validation = skip;
        self
    }

    /// Every option at once (replacing what was set so far).
    pub fn options(mut self, options: ManagerOptions) -> Self {
        self.options = options;
        self
    }

    /// Whether [`start`](ManagerBuilder::start) waits for each server's first attempt (`true`,
    /// the default: each is bounded by its start-up timeout), or returns at once with the
    /// servers still starting (`false`: a hung server delays no one; see
    /// [`McpManager::subscribe_status`] and [`McpManager::wait_started`]).
    pub fn wait_for_servers(mut self, wait: bool) -> Self {
        self.wait_for_servers = wait;
        self
    }

    /// Check the servers ([`McpConfig::validate`]: every problem at once, naming server and
    /// field), then start them. A server that then fails to start does not fail this: it is a
    /// state ([`McpManager::status`]).
    pub async fn start(self) -> Result<McpManager, ConfigError> {
        self.config.validate()?;
        Ok(if self.wait_for_servers {
            McpManager::start(self.config, self.options).await
        } else {
            McpManager::start_in_background(self.config, self.options).await
        })
    }
}
