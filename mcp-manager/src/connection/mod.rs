//! One server connection in either era: the handshake, capability-driven discovery of
//! everything the server offers, a cached inventory kept fresh (see [`freshness`]), and the
//! operations on it.
//!
//! [`McpConnection`] is safe to share: concurrent `connect` calls start the server once, and
//! concurrent `close` calls close it once.

mod deadline;
mod discovery;
mod era;
pub mod freshness;
mod handler;
mod mrtr;
pub mod pagination;
mod remote;
pub mod skills;
mod task_watch;
pub mod tasks;
mod url_elicitation;

use std::sync::Arc;

use futures::future::BoxFuture;
use mcp_protocol::types::common::{EmptyResult, Implementation, RequestParams};
use mcp_protocol::types::completion::{Complete, CompleteParams, CompleteResult};
use mcp_protocol::types::lifecycle::{Initialize, InitializeParams, Initialized, Ping, ServerCapabilities};
use mcp_protocol::types::logging::{LoggingLevel, SetLevel, SetLevelParams};
use mcp_protocol::types::meta::JsonObject;
use mcp_protocol::types::prompts::{GetPrompt, GetPromptOutcome, GetPromptParams};
use mcp_protocol::types::resources::{Subscribe, SubscribeParams, Unsubscribe};
use mcp_protocol::types::tools::CallToolOutcome;
use mcp_protocol::{ProtocolVersion, RequestMethod};
use mcp_transport::{Transport, TransportError, TransportKind};
use tokio::sync::Mutex;
use tracing::Instrument;

pub use self::discovery::{Inventory, SharedList, ToolCompanion, ToolCompanions};
pub use self::era::EraPreference;
pub use self::freshness::FreshnessOptions;
pub use self::mrtr::{STILL_WAITING_FIRST_PAUSE, STILL_WAITING_MAX_PAUSE};
pub use self::pagination::PaginationError;
pub use self::remote::{
    FALLBACK_STATUSES, RemoteTarget, RemoteTimeouts, TransportPlan, calls_for_fallback, sse_factory,
    streamable_http_factory,
};
pub use self::skills::{LoadedSkill, SkillCheck, SkillError, SkillFile, SkillLimits, SkillSummary};
pub use self::tasks::{TaskError, TaskMode, TaskObserver, TaskOptions, TaskUpdate};
pub use self::url_elicitation::{MAX_PENDING_COMPLETIONS, MAX_URL_ELICITATION_RETRIES, MAX_URL_ELICITATIONS_PER_ERROR};
use crate::callbacks::HostCallbacks;
use crate::session::{RequestOptions, Session, SessionError, SessionOptions};

/// Starts a transport to the server (for stdio: spawns the process).
pub type TransportFactory =
    Arc<dyn Fn() -> BoxFuture<'static, Result<Arc<dyn Transport>, TransportError>> + Send + Sync>;

/// A factory that spawns a stdio server (a fresh process on every call).
pub fn stdio_factory(config: mcp_transport::StdioConfig) -> TransportFactory {
    Arc::new(move || {
        let config = config.clone();
        Box::pin(async move {
            let transport = mcp_transport::StdioTransport::start(config).await?;
            Ok(Arc::new(transport) as Arc<dyn Transport>)
        })
    })
}

/// A factory that hands out one already-open transport, once (tests, custom transports).
pub fn single_use_factory(transport: Arc<dyn Transport>) -> TransportFactory {
    let slot = std::sync::Mutex::new(Some(transport));
    Arc::new(move || {
        let taken = slot.lock().unwrap_or_else(|p| p.into_inner()).take();
        Box::pin(
            async move { taken.ok_or_else(|| TransportError::Other("this transport was already used once".into())) },
        )
    })
}

/// A factory that always fails with `message` (a server whose transport cannot be planned).
pub fn failing_factory(message: String) -> TransportFactory {
    Arc::new(move || {
        let message = message.clone();
        Box::pin(async move { Err(TransportError::Other(message)) })
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
    /// Most items of one list, across its pages (default 50,000).
    pub max_list_items: usize,
    /// Most bytes of one list's results, across its pages (default 64 MiB).
    pub max_list_bytes: usize,
    /// The host's callbacks.
    pub callbacks: HostCallbacks,
    /// Which era to speak (default: probe, then fall back).
    pub era: EraPreference,
    /// How long the `server/discover` probe waits before assuming a legacy server (default 5 s).
    pub probe_timeout: std::time::Duration,
    /// The log level requested from the server (modern era: in every request's `_meta`).
    pub log_level: Option<LoggingLevel>,
    /// Most input rounds of one multi round-trip request (default 10).
    pub max_input_rounds: usize,
    /// How the cached inventory is kept fresh.
    pub freshness: FreshnessOptions,
    /// What to make of each tool as the tools are listed (default: nothing); the inventory keeps
    /// it beside the tool.
    pub tool_companions: Option<ToolCompanions>,
}

impl ConnectionOptions {
    /// Defaults for a server called `name`.
    pub fn new(name: impl Into<String>) -> Self {
        ConnectionOptions {
            session: SessionOptions::new(name),
            client_info: Implementation::new("mcp-stack", env!("CARGO_PKG_VERSION")),
            protocol_version: ProtocolVersion::LATEST_LEGACY,
            max_pages: 1000,
            max_list_items: pagination::DEFAULT_MAX_LIST_ITEMS,
            max_list_bytes: pagination::DEFAULT_MAX_LIST_BYTES,
            callbacks: HostCallbacks::default(),
            era: EraPreference::Auto,
            probe_timeout: era::DEFAULT_PROBE_TIMEOUT,
            log_level: None,
            max_input_rounds: 10,
            freshness: FreshnessOptions::default(),
            tool_companions: None,
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
    #[error(
        "server {server:?} answered initialize with protocol version {answered}, which this client does not support (it offered {offered})"
    )]
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
    /// The first transport of a plan refused `initialize` (HTTP 400, 404 or 405), and the
    /// fallback transport failed too.
    #[error("{fallback} (after falling back from {tried}, which refused initialize: {first})")]
    FallbackFailed {
        /// The transport that refused `initialize`.
        tried: TransportKind,
        /// How it refused.
        first: Box<ConnectionError>,
        /// How the fallback failed.
        fallback: Box<ConnectionError>,
    },
    /// Client and server share no protocol revision.
    #[error("server {server:?} supports protocol versions [{theirs}], none of which this client speaks [{ours}]")]
    NoMutualVersion {
        /// The server's name.
        server: String,
        /// The revisions this client speaks.
        ours: String,
        /// The revisions the server named.
        theirs: String,
    },
    /// The server requires a client capability this host did not declare (-32021).
    #[error("server {server:?} requires client capabilities this host does not offer: {required} ({message})")]
    MissingClientCapability {
        /// The server's name.
        server: String,
        /// The required capabilities, as JSON.
        required: String,
        /// The server's message.
        message: String,
    },
    /// An HTTP header disagreed with the request body (-32020).
    #[error("server {server:?} reports a header mismatch: {message} {detail}")]
    HeaderMismatch {
        /// The server's name.
        server: String,
        /// The server's message.
        message: String,
        /// The error's data, as JSON.
        detail: String,
    },
    /// A multi round-trip request kept asking for input.
    #[error("server {server:?} still asked for input after {rounds} rounds of {method}; giving up")]
    TooManyInputRounds {
        /// The server's name.
        server: String,
        /// The method.
        method: &'static str,
        /// Rounds answered.
        rounds: usize,
    },
    /// A multi round-trip result asked for more input requests at once than one round answers.
    #[error(
        "server {server:?} asked for {count} inputs in one round of {method}; at most {max} are answered per round"
    )]
    TooManyInputRequests {
        /// The server's name.
        server: String,
        /// The method.
        method: &'static str,
        /// The input requests of the refused round.
        count: usize,
        /// The most answered in one round.
        max: usize,
    },
    /// An input request of a multi round-trip result could not be answered: the host's handler
    /// failed or refused (the user refused sampling, say), there is none for it, its params do
    /// not decode, or its method is unknown. The call stops at the first one.
    #[error(
        "server {server:?}: {method} asked for input {key:?} ({input_method}), which this host could not give: {error}"
    )]
    InputRequestFailed {
        /// The server's name.
        server: String,
        /// The method of the call.
        method: &'static str,
        /// The server's key of the input request (at most 128 characters of it).
        key: String,
        /// The input request's method.
        input_method: String,
        /// Why it could not be answered (the handler's error, or -32601 / -32602).
        error: mcp_protocol::ErrorObject,
    },
    /// A URL elicitation that the server required (-32042) was declined, dismissed or refused by
    /// the host, so the request was not retried.
    #[error("server {server:?}: {method} needs the user to open {url}, and {reason}")]
    UrlElicitationFailed {
        /// The server's name.
        server: String,
        /// The method of the call.
        method: &'static str,
        /// The URL (at most 256 characters of it).
        url: String,
        /// What happened.
        reason: String,
    },
    /// The server did not send `notifications/elicitation/complete` for the URL elicitations the
    /// user accepted before the call's deadline.
    #[error(
        "server {server:?}: {method} timed out after {} waiting for the server to complete the URL elicitations {elicitation_ids:?} (no notifications/elicitation/complete)",
        url_elicitation::fmt_after(*after)
    )]
    UrlElicitationTimeout {
        /// The server's name.
        server: String,
        /// The method of the call.
        method: &'static str,
        /// The `elicitationId`s still not completed.
        elicitation_ids: Vec<String>,
        /// How long the call ran.
        after: std::time::Duration,
    },
    /// A -32042 error named more URL elicitations than are taken from one error
    /// ([`MAX_URL_ELICITATIONS_PER_ERROR`]); the user was asked nothing.
    #[error("server {server:?}: {method} requires {count} URL elicitations at once; at most {max} are taken")]
    TooManyUrlElicitations {
        /// The server's name.
        server: String,
        /// The method of the call.
        method: &'static str,
        /// The elicitations of the error.
        count: usize,
        /// The most taken.
        max: usize,
    },
    /// The server still answered -32042 after the request was retried
    /// [`MAX_URL_ELICITATION_RETRIES`] times.
    #[error("server {server:?}: {method} still requires URL elicitations after {retries} retries: {error}")]
    UrlElicitationStillRequired {
        /// The server's name.
        server: String,
        /// The method of the call.
        method: &'static str,
        /// The retries made.
        retries: usize,
        /// The server's last error.
        error: mcp_protocol::ErrorObject,
    },
    /// A tool call that ran as a task did not give a result.
    #[error(transparent)]
    Task(#[from] TaskError),
}

struct Live {
    session: Session,
    server: ServerInfo,
    /// The epoch of the freshness state this session belongs to.
    epoch: u64,
    /// The session's background tasks (list refresh, subscriptions/listen, root changes),
    /// stopped with it.
    _tasks: Vec<AbortOnDrop>,
}

impl Live {
    fn new(session: Session, server: ServerInfo) -> Self {
        Live { session, server, epoch: 0, _tasks: Vec::new() }
    }
}

/// Aborts a background task when dropped.
struct AbortOnDrop(tokio::task::AbortHandle);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// A connection to one MCP server.
pub struct McpConnection {
    name: String,
    plan: TransportPlan,
    options: ConnectionOptions,
    live: Mutex<Option<Live>>,
    /// What a request needs of the open session, published by `connect` (under `live`'s lock)
    /// and withdrawn before the session is closed or replaced: every request reads it here,
    /// without `live`'s asynchronous lock (a lock and an unlock of a waiter queue each), and
    /// takes that lock only when nothing open is published ([`McpConnection::open_session`]).
    published: std::sync::RwLock<Option<OpenSession>>,
    /// The era a previous connection settled on (reused for remote servers).
    era: std::sync::Mutex<Option<mcp_protocol::Era>>,
    /// The cached inventory and what keeps it fresh.
    fresh: Arc<freshness::Freshness>,
    /// The calls waiting for `notifications/elicitation/complete`.
    completions: Arc<url_elicitation::CompletionWaiters>,
    /// The tasks the calls follow (status pushes, progress).
    task_watchers: Arc<task_watch::TaskWatchers>,
}

impl std::fmt::Debug for McpConnection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpConnection").field("name", &self.name).finish_non_exhaustive()
    }
}

impl McpConnection {
    /// A connection that is not open yet; [`McpConnection::connect`] opens it.
    pub fn new(factory: TransportFactory, options: ConnectionOptions) -> Self {
        McpConnection::with_plan(TransportPlan::single(factory), options)
    }

    /// A connection that opens the transports of `plan` in turn (see [`TransportPlan`]);
    /// [`McpConnection::connect`] opens it.
    pub fn with_plan(plan: TransportPlan, options: ConnectionOptions) -> Self {
        McpConnection {
            name: options.session.name.clone(),
            fresh: Arc::new(freshness::Freshness::new(&options.session.name, options.freshness.clone())),
            plan,
            options,
            live: Mutex::new(None),
            published: std::sync::RwLock::new(None),
            era: std::sync::Mutex::new(None),
            completions: Arc::default(),
            task_watchers: Arc::default(),
        }
    }

    /// The server's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Open the connection: start the transport and run the handshake. Returns at once when it
    /// is already open; concurrent callers share one attempt.
    ///
    /// Nothing is listed yet ([`McpConnection::inventory`] lists on first use). In the modern
    /// era a `subscriptions/listen` request is opened in the background for the list changes the
    /// server offers. In the legacy era, when the roots provider of the callbacks announces
    /// changes ([`RootsProvider::changes`](crate::callbacks::RootsProvider::changes)), a
    /// background task sends `notifications/roots/list_changed` after each change, until the
    /// session ends.
    pub async fn connect(&self) -> Result<ServerInfo, ConnectionError> {
        let mut live = self.live.lock().await;
        if let Some(l) = live.as_ref() {
            if l.session.close_reason().is_none() {
                return Ok(l.server.clone());
            }
            self.publish(None);
            l.session.close().await;
            self.fresh.begin(false);
        }
        *live = None;
        let root_changes = handler::root_changes(&self.options.callbacks);
        // The transports of the plan in turn: see `remote.rs` for when the next one is tried.
        let span = crate::telemetry::connection_span(&self.name);
        let opened = self.open().instrument(span.clone()).await;
        let mut opened = opened.inspect_err(|e| crate::telemetry::record_error(&span, e.kind()))?;
        let (session, version) = (&opened.session, opened.server.protocol_version.as_str());
        crate::telemetry::connected(span, &self.name, &**session.transport(), session.telemetry(), version);
        let modern = opened.server.protocol_version.era() == Some(mcp_protocol::Era::Modern);
        opened.epoch = self.fresh.begin(modern);
        opened._tasks = self.start_freshness(&opened);
        // Legacy-era servers hear of root changes; modern-era ones ask with each request.
        if let Some(changes) = root_changes
            && opened.server.protocol_version.era() == Some(mcp_protocol::Era::Legacy)
        {
            let task = handler::announce_root_changes(Arc::from(self.name.as_str()), opened.session.clone(), changes);
            opened._tasks.push(AbortOnDrop(task.abort_handle()));
        }
        let server = opened.server.clone();
        self.publish(Some(OpenSession::of(&opened)));
        *live = Some(opened);
        Ok(server)
    }

    /// Start the background tasks that keep the lists of `live` fresh.
    fn start_freshness(&self, live: &Live) -> Vec<AbortOnDrop> {
        let lister = self.lister_for(live);
        let refresher = tokio::spawn(self.fresh.clone().run_refresher(lister.clone()));
        let mut tasks = vec![AbortOnDrop(refresher.abort_handle())];
        if lister.modern
            && self.options.freshness.listen
            && let Some(filter) = freshness::listen_filter(&live.server.capabilities)
        {
            let listener = tokio::spawn(self.fresh.clone().run_listener(lister, filter));
            tasks.push(AbortOnDrop(listener.abort_handle()));
        }
        tasks
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

    /// The era settled by an earlier connection, reused for remote servers (a stdio server is a
    /// new process on every connect, so it is probed again).
    pub(crate) fn cached_era(&self, kind: TransportKind) -> Option<mcp_protocol::Era> {
        if kind == TransportKind::Stdio {
            return None;
        }
        *self.era.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub(crate) fn remember_era(&self, era: mcp_protocol::Era) {
        *self.era.lock().unwrap_or_else(|p| p.into_inner()) = Some(era);
    }

    /// Close the connection and its transport (for stdio: the whole process group). Idempotent;
    /// concurrent callers all return once the close is done.
    pub async fn close(&self) {
        // The lock is held while closing, so that a concurrent caller waits for this close
        // instead of returning while the server still runs.
        let mut live = self.live.lock().await;
        if let Some(l) = live.take() {
            self.publish(None);
            l.session.close().await;
            self.fresh.begin(false);
        }
    }

    /// What the server said in the handshake, while connected.
    pub async fn server_info(&self) -> Option<ServerInfo> {
        self.live.lock().await.as_ref().map(|l| l.server.clone())
    }

    /// The open session. Once the transport has ended (the server exited, say), this fails with
    /// [`SessionError::Closed`] and the reason, until the next [`McpConnection::connect`].
    pub async fn session(&self) -> Result<Session, ConnectionError> {
        self.open_session().await.map(|open| open.session)
    }

    /// Whether the agreed protocol version is of the modern era (`false` while not connected):
    /// from the published session while one is open, else under the connection's lock; no copy
    /// of the [`ServerInfo`] either way.
    pub(crate) async fn is_modern(&self) -> bool {
        if let Some(open) = self.published() {
            return open.modern;
        }
        self.live
            .lock()
            .await
            .as_ref()
            .is_some_and(|l| l.server.protocol_version.era() == Some(mcp_protocol::Era::Modern))
    }

    /// The open session (as [`McpConnection::session`]) and whether its era is modern, under
    /// one lock.
    pub(crate) async fn session_and_era(&self) -> Result<(Session, bool), ConnectionError> {
        self.open_session().await.map(|open| (open.session, open.modern))
    }

    /// The open session and what a call needs to know of its server: the published one while
    /// it is open, else (not connected yet, closed, or being opened or closed right now) under
    /// `live`'s lock, which waits for a connect or close in progress and says why there is none.
    pub(crate) async fn open_session(&self) -> Result<OpenSession, ConnectionError> {
        if let Some(open) = self.published() {
            return Ok(open);
        }
        let live = self.live.lock().await;
        let Some(l) = live.as_ref() else {
            return Err(ConnectionError::NotConnected(self.name.clone()));
        };
        if let Some(reason) = l.session.close_reason() {
            return Err(SessionError::Closed { server: Arc::from(self.name.as_str()), reason }.into());
        }
        Ok(OpenSession::of(l))
    }

    /// The published session, if it is still open.
    fn published(&self) -> Option<OpenSession> {
        let published = self.published.read().unwrap_or_else(std::sync::PoisonError::into_inner);
        published.as_ref().filter(|open| open.session.close_reason().is_none()).cloned()
    }

    /// Publish `open` (or withdraw what was published); called with `live`'s lock held.
    fn publish(&self, open: Option<OpenSession>) {
        *self.published.write().unwrap_or_else(std::sync::PoisonError::into_inner) = open;
    }

    async fn call<M: RequestMethod>(
        &self,
        params: &M::Params,
        options: RequestOptions,
    ) -> Result<M::Result, ConnectionError> {
        Ok(self.session().await?.request::<M>(params, options).await?)
    }

    /// Call a tool; a tool that requires a task runs as one, followed to its end (see
    /// [`McpConnection::call_tool_with`]).
    pub async fn call_tool(
        &self,
        name: &str,
        arguments: Option<JsonObject>,
        options: RequestOptions,
    ) -> Result<CallToolOutcome, ConnectionError> {
        self.call_tool_with(name, arguments, options, TaskOptions::default()).await
    }

    /// Get a prompt.
    pub async fn get_prompt(&self, params: GetPromptParams) -> Result<GetPromptOutcome, ConnectionError> {
        self.request_with_input::<GetPrompt, _>(params, RequestOptions::default()).await
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

    /// Tell the server that the host's roots changed, when it is connected in the legacy era
    /// (modern servers ask for roots with each request); whether it was told.
    pub(crate) async fn announce_roots_changed(&self) -> bool {
        let Some(info) = self.server_info().await else { return false };
        if info.protocol_version.era() != Some(mcp_protocol::Era::Legacy) {
            return false;
        }
        match self.session().await {
            Ok(session) => handler::send_roots_changed(&self.name, &session).await,
            Err(_) => false,
        }
    }

    /// Check the server answers.
    pub async fn ping(&self) -> Result<(), ConnectionError> {
        self.call::<Ping>(&RequestParams::default(), RequestOptions::default()).await.map(|_| ())
    }
}

/// The open session of a connection and what a call needs to know of its server:
/// [`McpConnection::open_session`].
#[derive(Clone)]
pub(crate) struct OpenSession {
    pub(crate) session: Session,
    /// Whether the agreed revision is of the modern era.
    pub(crate) modern: bool,
    /// Whether the server declared task-augmented `tools/call` (the 2025-11-25 capability).
    pub(crate) tool_call_tasks: bool,
    /// The agreed revision (a known one is no string to copy).
    pub(crate) protocol_version: ProtocolVersion,
}

impl OpenSession {
    /// What `live` tells a request.
    fn of(live: &Live) -> Self {
        let version = &live.server.protocol_version;
        OpenSession {
            session: live.session.clone(),
            modern: version.era() == Some(mcp_protocol::Era::Modern),
            tool_call_tasks: live.server.capabilities.supports_tool_call_tasks(),
            protocol_version: version.clone(),
        }
    }

    /// The transport's session id, while the session is open (a closed session's id is no
    /// longer the server's).
    pub(crate) fn session_id(&self) -> Option<String> {
        self.session.close_reason().is_none().then(|| self.session.transport().session_id()).flatten()
    }
}
