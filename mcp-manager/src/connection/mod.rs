//! One server connection in the legacy era: the initialize handshake, capability-driven
//! discovery of everything the server offers, and the operations on it.
//!
//! [`McpConnection`] is safe to share: concurrent `connect` calls start the server once, and
//! concurrent `close` calls close it once.

mod discovery;
mod handler;
pub mod pagination;

use std::sync::Arc;

use futures::future::BoxFuture;
use mcp_protocol::types::common::{EmptyResult, Implementation, RequestParams};
use mcp_protocol::types::completion::{Complete, CompleteParams, CompleteResult};
use mcp_protocol::types::lifecycle::{Initialize, InitializeParams, Initialized, Ping, ServerCapabilities};
use mcp_protocol::types::logging::{LoggingLevel, SetLevel, SetLevelParams};
use mcp_protocol::types::meta::JsonObject;
use mcp_protocol::types::prompts::{GetPrompt, GetPromptOutcome, GetPromptParams};
use mcp_protocol::types::resources::{ReadResource, ReadResourceOutcome, ReadResourceParams, Subscribe, SubscribeParams, Unsubscribe};
use mcp_protocol::types::tools::{CallTool, CallToolOutcome, CallToolParams};
use mcp_protocol::{ProtocolVersion, RequestMethod};
use mcp_transport::{Transport, TransportError, TransportKind};
use tokio::sync::Mutex;

pub use self::discovery::Inventory;
pub use self::pagination::PaginationError;
use crate::callbacks::HostCallbacks;
use crate::session::{RequestOptions, Session, SessionError, SessionOptions};

/// Starts a transport to the server (for stdio: spawns the process).
pub type TransportFactory = Arc<dyn Fn() -> BoxFuture<'static, Result<Arc<dyn Transport>, TransportError>> + Send + Sync>;

/// A factory that spawns a stdio server (a fresh process on every call).
pub fn stdio_factory(config: mcp_transport::StdioConfig) -> TransportFactory {
    Arc::new(move || {
        let config = config.clone();
        Box::pin(async move {
            let transport = mcp_transport::StdioTransport::spawn(config)?;
            Ok(Arc::new(transport) as Arc<dyn Transport>)
        })
    })
}

/// A factory that hands out one already-open transport, once (tests, custom transports).
pub fn single_use_factory(transport: Arc<dyn Transport>) -> TransportFactory {
    let slot = std::sync::Mutex::new(Some(transport));
    Arc::new(move || {
        let taken = slot.lock().unwrap_or_else(|p| p.into_inner()).take();
        Box::pin(async move {
            taken.ok_or_else(|| TransportError::Other("this transport was already used once".into()))
        })
    })
}

/// How a connection behaves.
#[derive(Debug, Clone)]
pub struct ConnectionOptions {
    /// Session limits (name, timeouts).
    pub session: SessionOptions,
    /// How this client introduces itself.
    pub client_info: Implementation,
    /// The revision offered in `initialize` (default: the latest legacy revision).
    pub protocol_version: ProtocolVersion,
    /// Most pages followed per list (default 1000).
    pub max_pages: usize,
    /// The host's callbacks.
    pub callbacks: HostCallbacks,
}

impl ConnectionOptions {
    /// Defaults for a server called `name`.
    pub fn new(name: impl Into<String>) -> Self {
        ConnectionOptions {
            session: SessionOptions::new(name),
            client_info: Implementation::new("mcp-stack", env!("CARGO_PKG_VERSION")),
            protocol_version: ProtocolVersion::LATEST_LEGACY,
            max_pages: 1000,
            callbacks: HostCallbacks::default(),
        }
    }
}

/// What the server said about itself in the handshake.
#[derive(Debug, Clone)]
pub struct ServerInfo {
    /// The negotiated revision.
    pub protocol_version: ProtocolVersion,
    /// The server's name and version.
    pub implementation: Implementation,
    /// What the server offers.
    pub capabilities: ServerCapabilities,
    /// Instructions for the LLM, if any.
    pub instructions: Option<String>,
    /// Which transport carries the connection.
    pub transport: TransportKind,
}

/// Why a connection or an operation failed.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum ConnectionError {
    /// The transport could not be started.
    #[error("server {server:?}: {error}")]
    Transport {
        /// The server's name.
        server: String,
        /// The transport's error.
        error: TransportError,
    },
    /// A request failed.
    #[error(transparent)]
    Session(#[from] SessionError),
    /// The server picked a revision this client does not speak.
    #[error("server {server:?} answered initialize with protocol version {answered}, which this client does not support (it offered {offered})")]
    UnsupportedVersion {
        /// The server's name.
        server: String,
        /// What the client offered.
        offered: String,
        /// What the server answered.
        answered: String,
    },
    /// A listing did not terminate properly.
    #[error(transparent)]
    Pagination(#[from] PaginationError),
    /// The connection is not open.
    #[error("server {0:?} is not connected")]
    NotConnected(String),
}

struct Live {
    session: Session,
    server: ServerInfo,
}

/// A connection to one MCP server.
pub struct McpConnection {
    name: String,
    factory: TransportFactory,
    options: ConnectionOptions,
    live: Mutex<Option<Live>>,
}

impl std::fmt::Debug for McpConnection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpConnection").field("name", &self.name).finish_non_exhaustive()
    }
}

impl McpConnection {
    /// A connection that is not open yet; [`McpConnection::connect`] opens it.
    pub fn new(factory: TransportFactory, options: ConnectionOptions) -> Self {
        McpConnection { name: options.session.name.clone(), factory, options, live: Mutex::new(None) }
    }

    /// The server's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Open the connection: start the transport and run the handshake. Returns at once when it
    /// is already open; concurrent callers share one attempt.
    pub async fn connect(&self) -> Result<ServerInfo, ConnectionError> {
        let mut live = self.live.lock().await;
        if let Some(l) = live.as_ref() {
            if l.session.close_reason().is_none() {
                return Ok(l.server.clone());
            }
            l.session.close().await;
        }
        *live = None;
        let transport = (self.factory)()
            .await
            .map_err(|error| ConnectionError::Transport { server: self.name.clone(), error })?;
        let handler = Arc::new(handler::CallbackHandler {
            server: Arc::from(self.name.as_str()),
            callbacks: self.options.callbacks.clone(),
        });
        let kind = transport.kind();
        let session = Session::start(transport, handler, self.options.session.clone());
        match self.handshake(&session, kind).await {
            Ok(server) => {
                *live = Some(Live { session, server: server.clone() });
                Ok(server)
            }
            Err(e) => {
                session.close().await;
                Err(e)
            }
        }
    }

    async fn handshake(&self, session: &Session, transport: TransportKind) -> Result<ServerInfo, ConnectionError> {
        let offered = &self.options.protocol_version;
        let params = InitializeParams {
            protocol_version: offered.as_str().to_owned(),
            capabilities: self.options.callbacks.capabilities(),
            client_info: self.options.client_info.clone(),
            ..Default::default()
        };
        let result = session.request::<Initialize>(&params, RequestOptions::default()).await?;
        let answered = ProtocolVersion::parse(&result.protocol_version);
        if answered.era() != Some(mcp_protocol::Era::Legacy) || answered > *offered {
            return Err(ConnectionError::UnsupportedVersion {
                server: self.name.clone(),
                offered: offered.to_string(),
                answered: answered.to_string(),
            });
        }
        session.notify::<Initialized>(Some(&RequestParams::default())).await?;
        Ok(ServerInfo {
            protocol_version: answered,
            implementation: result.server_info,
            capabilities: result.capabilities,
            instructions: result.instructions,
            transport,
        })
    }

    /// Close the connection and its transport (for stdio: the whole process group). Idempotent;
    /// concurrent callers all return once the close is done.
    pub async fn close(&self) {
        // The lock is held while closing, so that a concurrent caller waits for this close
        // instead of returning while the server still runs.
        let mut live = self.live.lock().await;
        if let Some(l) = live.take() {
            l.session.close().await;
        }
    }

    /// What the server said in the handshake, while connected.
    pub async fn server_info(&self) -> Option<ServerInfo> {
        self.live.lock().await.as_ref().map(|l| l.server.clone())
    }

    /// The open session. Once the transport has ended (the server exited, say), this fails with
    /// [`SessionError::Closed`] and the reason, until the next [`McpConnection::connect`].
    pub async fn session(&self) -> Result<Session, ConnectionError> {
        let live = self.live.lock().await;
        let Some(l) = live.as_ref() else {
            return Err(ConnectionError::NotConnected(self.name.clone()));
        };
        match l.session.close_reason() {
            None => Ok(l.session.clone()),
            Some(reason) => Err(SessionError::Closed { server: Arc::from(self.name.as_str()), reason }.into()),
        }
    }

    async fn call<M: RequestMethod>(&self, params: &M::Params, options: RequestOptions) -> Result<M::Result, ConnectionError> {
        Ok(self.session().await?.request::<M>(params, options).await?)
    }

    /// Call a tool.
    pub async fn call_tool(&self, name: &str, arguments: Option<JsonObject>, options: RequestOptions) -> Result<CallToolOutcome, ConnectionError> {
        let params = CallToolParams { name: name.to_owned(), arguments, ..Default::default() };
        self.call::<CallTool>(&params, options).await
    }

    /// Get a prompt.
    pub async fn get_prompt(&self, params: GetPromptParams) -> Result<GetPromptOutcome, ConnectionError> {
        self.call::<GetPrompt>(&params, RequestOptions::default()).await
    }

    /// Read a resource.
    pub async fn read_resource(&self, uri: &str) -> Result<ReadResourceOutcome, ConnectionError> {
        let params = ReadResourceParams { uri: uri.to_owned(), ..Default::default() };
        self.call::<ReadResource>(&params, RequestOptions::default()).await
    }

    /// Ask for completions of a prompt or template argument.
    pub async fn complete(&self, params: CompleteParams) -> Result<CompleteResult, ConnectionError> {
        self.call::<Complete>(&params, RequestOptions::default()).await
    }

    /// Set the level of the server's log notifications.
    pub async fn set_logging_level(&self, level: LoggingLevel) -> Result<EmptyResult, ConnectionError> {
        let params = SetLevelParams { level, meta: None, extra: Default::default() };
        self.call::<SetLevel>(&params, RequestOptions::default()).await
    }

    /// Subscribe to updates of a resource.
    pub async fn subscribe(&self, uri: &str) -> Result<EmptyResult, ConnectionError> {
        let params = SubscribeParams { uri: uri.to_owned(), ..Default::default() };
        self.call::<Subscribe>(&params, RequestOptions::default()).await
    }

    /// Stop updates of a resource.
    pub async fn unsubscribe(&self, uri: &str) -> Result<EmptyResult, ConnectionError> {
        let params = SubscribeParams { uri: uri.to_owned(), ..Default::default() };
        self.call::<Unsubscribe>(&params, RequestOptions::default()).await
    }

    /// Check the server answers.
    pub async fn ping(&self) -> Result<(), ConnectionError> {
        self.call::<Ping>(&RequestParams::default(), RequestOptions::default()).await.map(|_| ())
    }
}
