//! What a server may ask of the host. The manager defines these traits; the host (or the
//! host-bridge crate) implements them. Which ones are present decides the client capabilities a
//! connection declares.

use std::sync::Arc;

use futures::future::BoxFuture;
use mcp_protocol::ErrorObject;
use mcp_protocol::messages::ServerNotification;
use mcp_protocol::types::elicitation::{ElicitParams, ElicitResult};
use mcp_protocol::types::lifecycle::{ClientCapabilities, ElicitationCapability, RootsCapability, SamplingCapability};
use mcp_protocol::types::roots::Root;
use mcp_protocol::types::sampling::{CreateMessageParams, CreateMessageResult};
use mcp_protocol::types::ui::{UI_EXTENSION, UiClientCapabilities};

/// Answers `sampling/createMessage` with the host's LLM.
pub trait SamplingHandler: Send + Sync + 'static {
    /// Sample the host's LLM for `server`.
    fn create_message(
        &self,
        server: &str,
        params: CreateMessageParams,
    ) -> BoxFuture<'static, Result<CreateMessageResult, ErrorObject>>;

    /// Whether sampling requests may carry tools (declares `sampling.tools`).
    fn supports_tools(&self) -> bool {
        false
    }
}

/// Answers `elicitation/create` by asking the user.
pub trait ElicitationHandler: Send + Sync + 'static {
    /// Ask the user on behalf of `server`.
    fn elicit(&self, server: &str, params: ElicitParams) -> BoxFuture<'static, Result<ElicitResult, ErrorObject>>;

    /// Whether URL-mode elicitation is supported (form mode always is).
    fn supports_url(&self) -> bool {
        false
    }
}

/// Answers `roots/list`.
pub trait RootsProvider: Send + Sync + 'static {
    /// The host's roots, as `file://` URIs.
    fn list_roots(&self, server: &str) -> BoxFuture<'static, Result<Vec<Root>, ErrorObject>>;

    /// A receiver whose value changes whenever the roots change (its value is a version number;
    /// only the change matters), or `None` when this provider does not announce changes (the
    /// default).
    ///
    /// With `Some`, every connection opened in the legacy era watches it for as long as its
    /// session lives and sends `notifications/roots/list_changed` after each change (several
    /// changes in quick succession may be announced once). Modern-era servers ask for the roots
    /// with each request, so they are told nothing. With `None`, the host announces changes
    /// itself (`McpManager::notify_roots_changed`).
    fn changes(&self) -> Option<tokio::sync::watch::Receiver<u64>> {
        None
    }
}

/// Receives the notifications of servers (logs, progress, list changes), in order per server.
pub trait NotificationSink: Send + Sync + 'static {
    /// A notification from `server`.
    fn on_notification(&self, server: &str, notification: &ServerNotification);
}

/// The host's callbacks. Absent ones are not declared as capabilities, and their requests get
/// METHOD_NOT_FOUND.
#[derive(Clone, Default)]
pub struct HostCallbacks {
    /// Sampling through the host's LLM.
    pub sampling: Option<Arc<dyn SamplingHandler>>,
    /// Elicitation from the user.
    pub elicitation: Option<Arc<dyn ElicitationHandler>>,
    /// The host's roots.
    pub roots: Option<Arc<dyn RootsProvider>>,
    /// Server notifications.
    pub notifications: Option<Arc<dyn NotificationSink>>,
    /// The host renders MCP Apps views of these MIME types (usually
    /// [`UiClientCapabilities::html`]): the `io.modelcontextprotocol/ui` extension is declared
    /// to servers. `None` (the default) claims nothing, and servers that check fall back to
    /// text-only tools. See [`apps`](crate::apps).
    pub apps: Option<UiClientCapabilities>,
}

impl std::fmt::Debug for HostCallbacks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HostCallbacks")
            .field("sampling", &self.sampling.is_some())
            .field("elicitation", &self.elicitation.is_some())
            .field("roots", &self.roots.is_some())
            .field("notifications", &self.notifications.is_some())
            .field("apps", &self.apps)
            .finish()
    }
}

impl HostCallbacks {
    /// The client capabilities these callbacks support.
    pub fn capabilities(&self) -> ClientCapabilities {
        let mut caps = ClientCapabilities::default();
        if self.roots.is_some() {
            caps.roots = Some(RootsCapability { list_changed: Some(true), ..Default::default() });
        }
        if let Some(s) = &self.sampling {
            let mut sampling = SamplingCapability::default();
            if s.supports_tools() {
                sampling.tools = Some(Default::default());
            }
            caps.sampling = Some(sampling);
        }
        if let Some(e) = &self.elicitation {
            let mut elicitation = ElicitationCapability { form: Some(Default::default()), ..Default::default() };
            if e.supports_url() {
                elicitation.url = Some(Default::default());
            }
            caps.elicitation = Some(elicitation);
        }
        if let Some(apps) = &self.apps {
            let value = serde_json::to_value(apps).unwrap_or_else(|_| serde_json::Value::Object(Default::default()));
            caps.extensions.get_or_insert_with(Default::default).insert(UI_EXTENSION.to_owned(), value);
        }
        caps
    }
}
