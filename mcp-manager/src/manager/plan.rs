//! From a [`ServerConfig`] to what opens its connection: the transport plan and the connection
//! options.

use std::sync::Arc;

use mcp_protocol::types::common::Implementation;

use mcp_transport::auth::AuthError;
use mcp_transport::auth::browser::BrowserStep;
use mcp_transport::auth::oauth::OAuthClient;
use mcp_transport::auth::store::{MemoryStore, TokenStore};

use crate::HostCallbacks;
use crate::config::{AuthMode, ClientConfig, ServerConfig, TransportChoice};
use crate::connection::{ConnectionOptions, TransportPlan, stdio_factory};

/// Builds the transport plan of a server, instead of the one its config describes. Hosts use it
/// for transports of their own (and tests for in-memory servers); `None` falls back to the
/// config.
pub type PlanOverride = Arc<dyn Fn(&ServerConfig) -> Option<TransportPlan> + Send + Sync>;

/// How the manager authorizes the remote servers that use OAuth ([`ServerConfig::uses_oauth`]).
#[derive(Clone)]
pub struct AuthOptions {
    /// Where registrations and tokens are kept (default: in memory, for the manager's life).
    pub store: Arc<dyn TokenStore>,
    /// The browser step for a login in the middle of a request; `None` (the default): a server
    /// that needs a login fails with an `AuthStep::LoginRequired` error, and the host logs in
    /// with [`OAuthClient::login`] (as `mcp login` does).
    pub browser: Option<Arc<dyn BrowserStep>>,
}

impl Default for AuthOptions {
    fn default() -> Self {
        AuthOptions { store: Arc::new(MemoryStore::new()), browser: None }
    }
}

impl std::fmt::Debug for AuthOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AuthOptions").field("store", &self.store).field("browser", &self.browser).finish()
    }
}

/// The OAuth client of `server`, when it uses OAuth.
pub fn oauth_client(
    server: &ServerConfig,
    client: &ClientConfig,
    auth: &AuthOptions,
) -> Option<Result<OAuthClient, AuthError>> {
    if !server.uses_oauth() {
        return None;
    }
    let url = server.url.as_deref()?;
    let settings = server.oauth_settings(&client.name, auth.store.clone(), auth.browser.clone());
    Some(OAuthClient::new(&server.name, url, settings))
}

/// The transport plan of `server`.
pub(crate) fn transport_plan(
    server: &ServerConfig,
    client: &ClientConfig,
    custom: Option<&PlanOverride>,
    auth: &AuthOptions,
) -> Result<TransportPlan, String> {
    if let Some(plan) = custom.and_then(|f| f(server)) {
        return Ok(plan);
    }
    if server.transport.is_remote() {
        let mut target = server
            .remote_target()
            .ok_or_else(|| format!("server {:?}: field \"url\": missing (a remote server needs a url)", server.name))?;
        if server.auth == AuthMode::None {
            target.bearer = None;
        }
        if let Some(oauth) = oauth_client(server, client, auth) {
            let oauth = oauth.map_err(|e| format!("server {:?}: {e}", server.name))?;
            target.authorization = Some(Arc::new(oauth));
        }
        TransportPlan::remote(&server.name, &target).map_err(|e| e.to_string())
    } else {
        let config = server.stdio_config().filter(|c| !c.command.trim().is_empty()).ok_or_else(|| {
            format!("server {:?}: field \"command\": missing (a stdio server needs a command)", server.name)
        })?;
        Ok(TransportPlan::single(stdio_factory(config)))
    }
}

/// The connection options of `server`, for a client configured by `client` with `callbacks`.
pub(crate) fn connection_options(
    server: &ServerConfig,
    client: &ClientConfig,
    callbacks: &HostCallbacks,
) -> ConnectionOptions {
    let mut options = ConnectionOptions::new(&server.name);
    // The session caps every request at its hard limit anyway; a larger value (a timeout of
    // 1e19 s built in code) only risks an overflow of the clock.
    options.session.request_timeout = server.request_timeout.min(options.session.max_request_timeout);
    options.client_info = Implementation::new(&client.name, &client.version);
    options.callbacks = callbacks.clone();
    options.era = server.era;
    options.log_level = server.log_level.clone();
    options
}

/// A short name of the configured transport, for status and hooks before a connection exists.
pub(crate) fn configured_transport(server: &ServerConfig) -> &'static str {
    match server.transport {
        TransportChoice::Stdio => "stdio",
        TransportChoice::StreamableHttp => "streamable_http",
        TransportChoice::Sse => "sse",
        TransportChoice::Remote => "remote",
    }
}
