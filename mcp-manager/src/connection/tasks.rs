//! Tool calls that run as tasks, in both eras, followed to their end within the call's one
//! deadline.
//!
//! - 2025-11-25 (`tasks` in core): a tool whose `execution.taskSupport` is `required` (or
//!   `optional`, when the host asks: [`TaskMode`]) is called with `task` params; the server
//!   answers with a `CreateTaskResult`. The client polls `tasks/get`, takes
//!   `notifications/tasks/status` where the server sends them, and fetches the payload with
//!   `tasks/result`. When the task is `input_required`, `tasks/result` is called at once: the
//!   server sends its elicitation and sampling requests while that request is open, and the
//!   session answers them through the host's handlers as any other server request.
//! - 2026-07-28 (extension `io.modelcontextprotocol/tasks`): the client declares the extension
//!   in its per-request capabilities (to a server that advertises it) and the server decides; a
//!   task handle comes back with `resultType: "task"`. `tasks/get` inlines the `result`, the
//!   `error` or the `inputRequests`; the input requests are answered through the host's handlers
//!   (each key once) and sent back with `tasks/update`. While the task runs a
//!   `subscriptions/listen` with the task's id asks for `notifications/tasks`.
//!
//! Polls are spaced by the server's `pollInterval`, clamped to
//! [`MIN_POLL_INTERVAL`]..=[`MAX_POLL_INTERVAL`] (a server that gives none gets
//! [`DEFAULT_POLL_INTERVAL`]); while nothing changes the interval grows by half at each poll, up to
//! four times the server's (and never past the maximum). A status push wakes the loop at once.
//! Everything happens within the call's deadline (the request timeout, extended by progress,
//! never past the hard cap): when it passes, or when the caller drops the call, `tasks/cancel`
//! is sent in the background, and the error names the task so that a host can resume it
//! ([`McpConnection::resume_task`]) or cancel it later.
//!
//! Progress (2025-11-25): when the caller asks for it, a task call carries a progress token of its
//! own, valid for the whole task; each notification reaches the caller's callback and extends
//! the deadline. The 2026-07-28 extension has no progress on tasks (progress before the task
//! handle comes is the request's own, as for any call).

use std::sync::Arc;
use std::time::Duration;

use futures::TryFutureExt;
use futures::future::BoxFuture;
use mcp_protocol::types::meta::{Cursor, JsonObject, Meta};
use mcp_protocol::types::mrtr::{InputRequests, Outcome};
use mcp_protocol::types::subscriptions::{SubscriptionFilter, SubscriptionsListen, SubscriptionsListenParams};
use mcp_protocol::types::tasks::{
    CancelTask, GetTask, GetTaskParams, GetTaskPayload, GetTaskPayloadResult, ListTasks, ListTasksParams,
    ListTasksResult, RelatedTaskMetadata, Task, TaskMetadata, TaskState,
};
use mcp_protocol::types::tasks_ext::{
    DetailedTask, ExtCancelTask, ExtGetTask, ExtUpdateTask, TASK_IDS_FILTER, UpdateTaskParams,
};
use mcp_protocol::types::tools::{CallTool, CallToolOutcome, CallToolParams, CallToolResult};
use mcp_protocol::{ErrorObject, RequestId};
use tokio::time::Instant;

use super::deadline::CallDeadline;
use super::handler::CallbackHandler;
use super::task_watch::Pushed;
use super::{AbortOnDrop, ConnectionError, McpConnection, OpenSession};
use crate::session::{ProgressCallback, RequestOptions, Session, SessionError};

pub use super::task_watch::{MAX_TASK_ID_BYTES, MAX_WATCHED};

/// The shortest pause between two polls, whatever the server suggests.
pub const MIN_POLL_INTERVAL: Duration = Duration::from_millis(100);
/// The longest pause between two polls, whatever the server suggests.
pub const MAX_POLL_INTERVAL: Duration = Duration::from_secs(30);
/// The pause between polls when the server suggests none.
pub const DEFAULT_POLL_INTERVAL: Duration = Duration::from_secs(1);
/// Most characters of a server's status message kept (the rest is cut, with `…`).
pub const MAX_STATUS_MESSAGE_CHARS: usize = 1024;
/// How long a `tasks/cancel` sent for a dropped or timed-out call may take.
pub const CANCEL_TIMEOUT: Duration = Duration::from_secs(5);
/// Most input request keys remembered as answered for one task (2026-07-28).
const MAX_ANSWERED_KEYS: usize = 4096;

/// When a tool is called as a task.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TaskMode {
    /// Only when the tool requires it (`taskSupport: "required"`).
    #[default]
    Auto,
    /// Whenever the tool allows it (`required` or `optional`).
    Always,
    /// Only when the tool requires it: a tool that requires a task cannot be called otherwise.
    Never,
}

impl TaskMode {
    /// Whether a tool with this `execution.taskSupport` is called as a task (2025-11-25; in the
    /// 2026-07-28 extension the server decides).
    pub fn wants_task(self, task_support: Option<&str>) -> bool {
        match task_support {
            Some("required") => true,
            Some("optional") => self == TaskMode::Always,
            _ => false,
        }
    }
}

impl std::str::FromStr for TaskMode {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.to_ascii_lowercase().as_str() {
            "auto" => Ok(TaskMode::Auto),
            "always" => Ok(TaskMode::Always),
            "never" => Ok(TaskMode::Never),
            other => Err(format!("unknown task mode {other:?}: expected auto, always or never")),
        }
    }
}

/// What a task reports while it runs: its state after each change (the first one when it was
/// created), with the status message cut to [`MAX_STATUS_MESSAGE_CHARS`].
#[derive(Debug, Clone)]
pub struct TaskUpdate {
    /// The server's name.
    pub server: Arc<str>,
    /// The task's state, in the 2025-11-25 shape in both eras.
    pub task: Task,
    /// Whether this is the task's first report (it was just created or resumed).
    pub first: bool,
}

/// Called with each [`TaskUpdate`] of a task call.
pub type TaskObserver = Arc<dyn Fn(&TaskUpdate) + Send + Sync>;

/// How a tool call treats tasks.
#[derive(Clone, Default)]
pub struct TaskOptions {
    /// When to ask for a task (2025-11-25); `None`: the server's configured default, else
    /// [`TaskMode::Auto`].
    pub mode: Option<TaskMode>,
    /// The lifetime to ask for (2025-11-25 `task.ttl`).
    pub ttl: Option<Duration>,
    /// Told of the task's states as it runs.
    pub observer: Option<TaskObserver>,
}

impl std::fmt::Debug for TaskOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TaskOptions")
            .field("mode", &self.mode)
            .field("ttl", &self.ttl)
            .field("observer", &self.observer.is_some())
            .finish()
    }
}

/// Why a task did not give a result.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum TaskError {
    /// The task ended `failed`.
    #[error("server {server:?}: task {task_id:?} failed: {message}")]
    Failed {
        /// The server's name.
        server: String,
        /// The task id.
        task_id: String,
        /// The server's error or status message.
        message: String,
        /// The JSON-RPC error the task ended with, when the server sent one.
        error: Option<ErrorObject>,
    },
    /// The task ended `cancelled`.
    #[error("server {server:?}: task {task_id:?} was cancelled{}", message.as_deref().map(|m| format!(": {m}")).unwrap_or_default())]
    Cancelled {
        /// The server's name.
        server: String,
        /// The task id.
        task_id: String,
        /// The server's status message.
        message: Option<String>,
    },
    /// The call's deadline passed while the task ran; `tasks/cancel` was sent.
    #[error("server {server:?}: task {task_id:?} timed out after {}ms (last status {status}); tasks/cancel was sent", after.as_millis())]
    Timeout {
        /// The server's name.
        server: String,
        /// The task id.
        task_id: String,
        /// The last status seen.
        status: String,
        /// How long the call ran.
        after: Duration,
    },
    /// The server broke the tasks protocol (a task id that is too long, `tasks/list` in an era
    /// without it, a result that does not decode, ...).
    #[error("server {server:?}: task {task_id:?}: {message}")]
    Protocol {
        /// The server's name.
        server: String,
        /// The task id (cut), or empty.
        task_id: String,
        /// What was wrong.
        message: String,
    },
}

impl TaskError {
    /// The id of the task this error is about.
    pub fn task_id(&self) -> &str {
        match self {
            TaskError::Failed { task_id, .. }
            | TaskError::Cancelled { task_id, .. }
            | TaskError::Timeout { task_id, .. }
            | TaskError::Protocol { task_id, .. } => task_id,
        }
    }
}

/// A task's state as seen in either era.
#[derive(Clone)]
enum Snapshot {
    Legacy(Box<Task>),
    Modern(Box<DetailedTask>),
}

impl Snapshot {
    fn task(&self) -> Task {
        let mut task = match self {
            Snapshot::Legacy(t) => Task { extra: JsonObject::new(), ..(**t).clone() },
            Snapshot::Modern(t) => t.to_task(),
        };
        task.status_message = task.status_message.map(cut);
        task
    }

    fn status(&self) -> &TaskState {
        match self {
            Snapshot::Legacy(t) => &t.status,
            Snapshot::Modern(t) => &t.status,
        }
    }

    fn poll_interval(&self) -> Option<u64> {
        match self {
            Snapshot::Legacy(t) => t.poll_interval,
            Snapshot::Modern(t) => t.poll_interval_ms,
        }
    }

    /// What a host would see change: the status and its message.
    fn same_as(&self, other: &Snapshot) -> bool {
        let a = self.task();
        let b = other.task();
        a.status == b.status && a.status_message == b.status_message
    }
}

fn cut(text: String) -> String {
    match text.char_indices().nth(MAX_STATUS_MESSAGE_CHARS) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text,
    }
}

fn status_name(status: &TaskState) -> String {
    match status {
        TaskState::Working => "working".into(),
        TaskState::InputRequired => "input_required".into(),
        TaskState::Completed => "completed".into(),
        TaskState::Failed => "failed".into(),
        TaskState::Cancelled => "cancelled".into(),
        TaskState::Unknown(s) => cut(s.clone()),
    }
}

/// The pause the server asks for, clamped.
fn base_interval(server_ms: Option<u64>) -> Duration {
    server_ms.map_or(DEFAULT_POLL_INTERVAL, Duration::from_millis).clamp(MIN_POLL_INTERVAL, MAX_POLL_INTERVAL)
}

/// Sends `tasks/cancel` in the background when dropped armed (the call was dropped or timed out).
struct CancelOnDrop {
    session: Session,
    task_id: String,
    modern: bool,
    armed: bool,
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        if !self.armed {
            return;
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else { return };
        let session = self.session.clone();
        let params = GetTaskParams::new(std::mem::take(&mut self.task_id));
        let modern = self.modern;
        runtime.spawn(async move {
            let options = RequestOptions { timeout: Some(CANCEL_TIMEOUT), ..Default::default() };
            let sent = if modern {
                session.request::<ExtCancelTask>(&params, options).await.map(|_| ())
            } else {
                session.request::<CancelTask>(&params, options).await.map(|_| ())
            };
            match sent {
                Ok(()) => tracing::debug!(task_id = %params.task_id, "cancelled a task the host no longer waits for"),
                Err(error) => tracing::warn!(task_id = %params.task_id, %error, "could not cancel a task"),
            }
        });
    }
}

/// A progress token of a task call: a string, so it never equals a request id of the session.
fn progress_token() -> RequestId {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    RequestId::String(format!("task-progress-{}", NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)))
}

impl McpConnection {
    fn task_error(&self, task_id: &str, message: impl Into<String>) -> ConnectionError {
        let task_id = cut_id(task_id);
        TaskError::Protocol { server: self.name.clone(), task_id, message: message.into() }.into()
    }

    async fn modern(&self) -> bool {
        self.is_modern().await
    }

    /// The `execution.taskSupport` of tool `name` on a server that offers tool-call tasks:
    /// from the cached inventory, else from a listing (`None` when the tool is not listed or
    /// the listing fails).
    async fn task_support(&self, name: &str) -> Option<String> {
        let inventory = match self.cached_inventory() {
            Some(inventory) => inventory,
            None => Box::pin(self.inventory()).await.ok()?,
        };
        let tool = inventory.tools.iter().find(|t| t.name == name)?;
        tool.execution.as_ref()?.task_support.clone()
    }

    /// Call a tool, as a task where the tool and `task` say so (see the module's
    /// documentation), and follow a task to its end: the outcome is then complete. A task that
    /// fails, is cancelled or outlives the deadline is a [`TaskError`].
    ///
    /// Cancel-safe in the sense that matters: dropping the call sends `tasks/cancel` for the
    /// task it started.
    pub fn call_tool_with<'a>(
        &'a self,
        name: &'a str,
        arguments: Option<JsonObject>,
        options: RequestOptions,
        task: TaskOptions,
    ) -> impl Future<Output = Result<CallToolOutcome, ConnectionError>> + Send + 'a {
        // A map of the one call future, not a second `async` layer around it.
        self.call_tool_served(name, arguments, options, task).map_ok(|(outcome, _)| outcome)
    }

    /// [`McpConnection::call_tool_with`], and the session that served the call with what it says
    /// of its server (read under the call's one lock of the connection).
    ///
    /// An `async` block, as `request_within`'s: an `async fn` would hold its arguments twice in
    /// every call's state. The params are made in a block of their own, whose end comes before
    /// the request is awaited, so that they are held once, in the request's state.
    #[expect(clippy::manual_async_fn, reason = "an async fn would hold the arguments twice")]
    pub(crate) fn call_tool_served<'a>(
        &'a self,
        name: &'a str,
        arguments: Option<JsonObject>,
        options: RequestOptions,
        task: TaskOptions,
    ) -> impl Future<Output = Result<(CallToolOutcome, OpenSession), ConnectionError>> + Send + 'a {
        async move {
            let open = self.open_session().await?;
            let (session, modern) = (open.session.clone(), open.modern);
            let mode = task.mode.unwrap_or_default();
            // A task only on a server that declared tool-call tasks: without the capability a
            // client must not augment a call, whatever the tool's `taskSupport` says (2025-11-25).
            let augment = !modern && open.tool_call_tasks && mode.wants_task(self.task_support(name).await.as_deref());
            let max = self.options.session.max_request_timeout;
            let timeout = options.timeout.unwrap_or(self.options.session.request_timeout).min(max);
            let deadline = CallDeadline::new(timeout, max);
            let progress_guard;
            let first = {
                let mut params = CallToolParams { name: name.to_owned(), arguments, ..Default::default() };
                if augment {
                    let ttl = task.ttl.map(|t| u64::try_from(t.as_millis()).unwrap_or(u64::MAX));
                    params.task = Some(TaskMetadata { ttl, ..Default::default() });
                }
                // Progress of a task outlives its tools/call: the call carries a token of its own.
                let round_progress;
                (progress_guard, round_progress) = match options.progress {
                    Some(report) if augment => {
                        let token = progress_token();
                        let d = deadline.clone();
                        let callback: ProgressCallback = Arc::new(move |p| {
                            d.extend();
                            report(p)
                        });
                        let guard = self.task_watchers.progress(token.clone(), callback.clone());
                        if guard.is_some() {
                            let mut meta = Meta::default();
                            meta.0.insert("progressToken".into(), serde_json::to_value(&token).unwrap_or_default());
                            params.meta = Some(Box::new(meta));
                            (guard, None)
                        } else {
                            (None, Some(callback))
                        }
                    }
                    other => (None, other),
                };
                // The first request's rounds and the task they may start share one deadline.
                self.request_within::<CallTool, _>(params, round_progress, deadline.clone(), Some((session, modern)))
            }
            .await?;
            let snapshot = match first {
                Outcome::Task(created) => Snapshot::Legacy(Box::new(created.task)),
                Outcome::TaskHandle(handle) => Snapshot::Modern(handle),
                other => return Ok((other, open)),
            };
            // Boxed: following a task is rare, and its state would weigh on every call's future.
            let result = Box::pin(self.follow(snapshot, &deadline, &task)).await;
            drop(progress_guard);
            result.map(|result| (Outcome::Complete(result), open))
        }
    }

    /// Wait for the result of a task this host started earlier (its id came in a
    /// [`TaskUpdate`] or a [`TaskError`]), within `options.timeout`, answering its input
    /// requests, as [`McpConnection::call_tool_with`] does.
    pub async fn resume_task(
        &self,
        task_id: &str,
        options: RequestOptions,
        task: TaskOptions,
    ) -> Result<CallToolResult, ConnectionError> {
        let max = self.options.session.max_request_timeout;
        let timeout = options.timeout.unwrap_or(self.options.session.request_timeout).min(max);
        let deadline = CallDeadline::new(timeout, max);
        let snapshot = self.poll_once(task_id, &deadline).await?;
        self.follow(snapshot, &deadline, &task).await
    }

    /// `tasks/get`: the task's state, in the 2025-11-25 shape in both eras.
    pub async fn get_task(&self, task_id: &str) -> Result<Task, ConnectionError> {
        let timeout = self.options.session.request_timeout;
        let deadline = CallDeadline::new(timeout, self.options.session.max_request_timeout);
        Ok(self.poll_once(task_id, &deadline).await?.task())
    }

    /// `tasks/cancel`: ask the server to cancel a task (cooperative: it may still finish). The
    /// task's state after the request, where the era's answer carries it (2025-11-25).
    pub async fn cancel_task(&self, task_id: &str) -> Result<Option<Task>, ConnectionError> {
        let session = self.session().await?;
        let params = GetTaskParams::new(task_id);
        if self.modern().await {
            session.request::<ExtCancelTask>(&params, RequestOptions::default()).await?;
            Ok(None)
        } else {
            let task = session.request::<CancelTask>(&params, RequestOptions::default()).await?.task;
            Ok(Some(Task { status_message: task.status_message.map(cut), ..task }))
        }
    }

    /// `tasks/list` (2025-11-25 only: the extension of 2026-07-28 has none), one page.
    pub async fn list_tasks(&self, cursor: Option<Cursor>) -> Result<ListTasksResult, ConnectionError> {
        if self.modern().await {
            return Err(self.task_error("", "tasks/list does not exist in the 2026-07-28 tasks extension"));
        }
        let session = self.session().await?;
        let params = ListTasksParams { cursor, ..Default::default() };
        let mut list = session.request::<ListTasks>(&params, RequestOptions::default()).await?;
        for t in &mut list.tasks {
            t.status_message = t.status_message.take().map(cut);
        }
        Ok(list)
    }

    /// One `tasks/get` within the deadline.
    async fn poll_once(&self, task_id: &str, deadline: &CallDeadline) -> Result<Snapshot, ConnectionError> {
        let session = self.session().await?;
        let params = GetTaskParams::new(task_id);
        let options = RequestOptions { timeout: Some(deadline.remaining_or_zero()), ..Default::default() };
        Ok(if self.modern().await {
            Snapshot::Modern(Box::new(session.request::<ExtGetTask>(&params, options).await?))
        } else {
            Snapshot::Legacy(Box::new(session.request::<GetTask>(&params, options).await?.task))
        })
    }

    /// Follow a task from `snapshot` to its end (see the module's documentation).
    async fn follow(
        &self,
        mut snapshot: Snapshot,
        deadline: &CallDeadline,
        options: &TaskOptions,
    ) -> Result<CallToolResult, ConnectionError> {
        let task_id = match &snapshot {
            Snapshot::Legacy(t) => t.task_id.clone(),
            Snapshot::Modern(t) => t.task_id.clone(),
        };
        if task_id.is_empty() || task_id.len() > MAX_TASK_ID_BYTES {
            return Err(self.task_error(&task_id, format!("a task id must have 1 to {MAX_TASK_ID_BYTES} bytes")));
        }
        let session = self.session().await?;
        let modern = matches!(snapshot, Snapshot::Modern(_));
        let mut cancel = CancelOnDrop { session: session.clone(), task_id: task_id.clone(), modern, armed: true };
        let (_watch, mut pushes) = match self.task_watchers.watch(&task_id) {
            Some((guard, rx)) => (Some(guard), Some(rx)),
            None => (None, None),
        };
        let _listen = modern.then(|| listen_for(&session, &task_id));
        let handler = CallbackHandler::new(self.name(), self.options.callbacks.clone());
        let report = |snapshot: &Snapshot, first: bool| {
            if let Some(observer) = &options.observer {
                observer(&TaskUpdate { server: Arc::from(self.name()), task: snapshot.task(), first });
            }
        };
        report(&snapshot, true);
        let mut base = base_interval(snapshot.poll_interval());
        let mut interval = base;
        let mut answered = std::collections::HashSet::new();
        // 2025-11-25: the open tasks/result, once the task asked for input or ended.
        let mut payload: Option<BoxFuture<'static, Result<GetTaskPayloadResult, SessionError>>> = None;
        loop {
            match snapshot.status() {
                TaskState::Completed | TaskState::Failed | TaskState::Cancelled if modern => {
                    cancel.armed = false;
                    let Snapshot::Modern(t) = &snapshot else { unreachable!() };
                    return self.modern_outcome(t);
                }
                TaskState::Cancelled => {
                    cancel.armed = false;
                    return Err(self.cancelled(&task_id, &snapshot));
                }
                TaskState::Completed | TaskState::Failed | TaskState::InputRequired if !modern && payload.is_none() => {
                    let s = session.clone();
                    let p = GetTaskParams::new(task_id.clone());
                    let d = deadline.clone();
                    payload = Some(Box::pin(async move {
                        let options = RequestOptions { timeout: Some(d.remaining_or_zero()), ..Default::default() };
                        s.request::<GetTaskPayload>(&p, options).await
                    }));
                }
                TaskState::InputRequired if modern => {
                    let Snapshot::Modern(t) = &snapshot else { unreachable!() };
                    if let Some(requests) = &t.input_requests {
                        self.answer_inputs(&session, &handler, &task_id, requests, &mut answered, deadline).await?;
                    }
                }
                _ => {}
            }
            let wake = (Instant::now() + interval).min(deadline.at());
            let pushed = tokio::select! {
                done = async { payload.as_mut().expect("guarded").await }, if payload.is_some() => {
                    cancel.armed = false;
                    return self.legacy_outcome(&task_id, &snapshot, done);
                }
                pushed = next_push(&mut pushes) => Some(pushed),
                _ = tokio::time::sleep_until(wake) => None,
            };
            let next = match pushed {
                Some(pushed) => pushed,
                None => {
                    if deadline.remaining().is_none() {
                        return Err(TaskError::Timeout {
                            server: self.name.clone(),
                            task_id: cut_id(&task_id),
                            status: status_name(snapshot.status()),
                            after: deadline.elapsed(),
                        }
                        .into());
                    }
                    match self.poll_once(&task_id, deadline).await {
                        Ok(next) => next,
                        Err(ConnectionError::Session(SessionError::Timeout { .. }))
                            if deadline.remaining().is_none() =>
                        {
                            continue;
                        }
                        Err(e) => return Err(e),
                    }
                }
            };
            if next.same_as(&snapshot) {
                interval = interval.mul_f64(1.5).min(base * 4).min(MAX_POLL_INTERVAL);
            } else {
                report(&next, false);
                base = base_interval(next.poll_interval());
                interval = base;
            }
            if let Some(ms) = next.poll_interval() {
                base = base_interval(Some(ms));
                interval = interval.max(base);
            }
            snapshot = next;
        }
    }

    /// 2026-07-28: answer the input requests not answered yet, then `tasks/update`.
    async fn answer_inputs(
        &self,
        session: &Session,
        handler: &CallbackHandler,
        task_id: &str,
        requests: &InputRequests,
        answered: &mut std::collections::HashSet<String>,
        deadline: &CallDeadline,
    ) -> Result<(), ConnectionError> {
        let fresh: InputRequests =
            requests.iter().filter(|(k, _)| !answered.contains(*k)).map(|(k, v)| (k.clone(), v.clone())).collect();
        if fresh.is_empty() {
            return Ok(());
        }
        if fresh.len() > super::mrtr::MAX_INPUT_REQUESTS_PER_ROUND || answered.len() + fresh.len() > MAX_ANSWERED_KEYS {
            return Err(self.task_error(
                task_id,
                format!("asked for {} inputs at once, more than this client answers", fresh.len()),
            ));
        }
        let keys: Vec<String> = fresh.keys().cloned().collect();
        let responses =
            match tokio::time::timeout_at(deadline.at(), super::mrtr::answer_all(session, handler, fresh)).await {
                Err(_) => return Err(deadline.timeout_error(self.name(), "tasks/update")),
                Ok(Err(failed)) => return Err(failed.into_error(self.name(), "tasks/update")),
                Ok(Ok(responses)) => responses,
            };
        answered.extend(keys);
        let params = UpdateTaskParams { task_id: task_id.to_owned(), input_responses: responses, ..Default::default() };
        let options = RequestOptions { timeout: Some(deadline.remaining_or_zero()), ..Default::default() };
        session.request::<ExtUpdateTask>(&params, options).await?;
        Ok(())
    }

    fn cancelled(&self, task_id: &str, snapshot: &Snapshot) -> ConnectionError {
        TaskError::Cancelled {
            server: self.name.clone(),
            task_id: cut_id(task_id),
            message: snapshot.task().status_message,
        }
        .into()
    }

    /// 2026-07-28: the outcome inlined in a terminal task.
    // The connection's one error type, made once per task.
    #[allow(clippy::result_large_err)]
    fn modern_outcome(&self, task: &DetailedTask) -> Result<CallToolResult, ConnectionError> {
        match task.status {
            TaskState::Completed => {
                let Some(result) = task.result.clone() else {
                    return Err(self.task_error(&task.task_id, "completed without a result"));
                };
                let result: CallToolResult = serde_json::from_value(serde_json::Value::Object(result))
                    .map_err(|e| self.task_error(&task.task_id, format!("the result is not a CallToolResult: {e}")))?;
                Ok(with_related_task(result, &task.task_id))
            }
            TaskState::Failed => {
                let error = task.rpc_error();
                let message = error
                    .as_ref()
                    .map(|e| e.message.clone())
                    .or_else(|| task.status_message.clone())
                    .unwrap_or_else(|| "no reason given".into());
                Err(TaskError::Failed {
                    server: self.name.clone(),
                    task_id: cut_id(&task.task_id),
                    message: cut(message),
                    error,
                }
                .into())
            }
            _ => Err(self.cancelled(&task.task_id, &Snapshot::Modern(Box::new(task.clone())))),
        }
    }

    /// 2025-11-25: the outcome `tasks/result` gave.
    #[allow(clippy::result_large_err)]
    fn legacy_outcome(
        &self,
        task_id: &str,
        last: &Snapshot,
        payload: Result<GetTaskPayloadResult, SessionError>,
    ) -> Result<CallToolResult, ConnectionError> {
        let failed = |message: String, error: Option<ErrorObject>| -> ConnectionError {
            TaskError::Failed { server: self.name.clone(), task_id: cut_id(task_id), message: cut(message), error }
                .into()
        };
        match payload {
            Ok(payload) => {
                let mut result: CallToolResult = payload
                    .decode()
                    .map_err(|e| self.task_error(task_id, format!("tasks/result is not a CallToolResult: {e}")))?;
                if *last.status() == TaskState::Failed {
                    // The server stored a result for a failed task: a failed result.
                    result.is_error = Some(true);
                }
                Ok(with_related_task(result, task_id))
            }
            Err(e) => match e.rpc_error() {
                Some(rpc) => Err(failed(rpc.message.clone(), Some(rpc.clone()))),
                None => Err(e.into()),
            },
        }
    }
}

/// `capabilities` with the tasks extension declared (2026-07-28 per-request capabilities: this
/// client follows task handles on every tool call). Declared on the `server/discover` probe and
/// then on every request to a server whose capabilities advertise the extension
/// ([`advertises_tasks`]); a server that does not has no task to return. 2025-11-25 declares
/// nothing: its client `tasks` capability says which server requests the client runs as tasks,
/// and this client runs none; calling tools as tasks needs only the server's capability.
pub(crate) fn with_tasks_extension(
    mut capabilities: mcp_protocol::types::lifecycle::ClientCapabilities,
) -> mcp_protocol::types::lifecycle::ClientCapabilities {
    let extensions = capabilities.extensions.get_or_insert_with(JsonObject::new);
    extensions.entry(mcp_protocol::types::tasks_ext::TASKS_EXTENSION).or_insert_with(|| serde_json::json!({}));
    capabilities
}

/// Whether a modern server's capabilities advertise the tasks extension (SEP-2663: under
/// `capabilities.extensions`).
pub(crate) fn advertises_tasks(capabilities: &mcp_protocol::types::lifecycle::ServerCapabilities) -> bool {
    capabilities.extensions.as_ref().is_some_and(|e| e.contains_key(mcp_protocol::types::tasks_ext::TASKS_EXTENSION))
}

/// The task id in `_meta["io.modelcontextprotocol/related-task"]`, where the host reads it.
fn with_related_task(mut result: CallToolResult, task_id: &str) -> CallToolResult {
    let meta = result.meta.get_or_insert_with(Box::default);
    if meta.get::<RelatedTaskMetadata>(Meta::RELATED_TASK).is_none() {
        let related = RelatedTaskMetadata { task_id: task_id.to_owned(), ..Default::default() };
        meta.0.insert(Meta::RELATED_TASK.into(), serde_json::to_value(related).unwrap_or_default());
    }
    result
}

/// The task id of a result that came from a task, from its `_meta`.
pub fn result_task_id(result: &CallToolResult) -> Option<String> {
    Some(result.meta.as_ref()?.get::<RelatedTaskMetadata>(Meta::RELATED_TASK)?.task_id)
}

fn cut_id(id: &str) -> String {
    match id.char_indices().nth(128) {
        Some((at, _)) => format!("{}…", &id[..at]),
        None => id.to_owned(),
    }
}

/// The next push for the task, or never when it is not watched (or the watch ended).
async fn next_push(pushes: &mut Option<tokio::sync::watch::Receiver<Option<Pushed>>>) -> Snapshot {
    if let Some(rx) = pushes {
        if rx.changed().await.is_ok()
            && let Some(pushed) = rx.borrow_and_update().clone()
        {
            return match pushed {
                Pushed::Legacy(t) => Snapshot::Legacy(t),
                Pushed::Modern(t) => Snapshot::Modern(t),
            };
        }
        *pushes = None;
    }
    std::future::pending().await
}

/// 2026-07-28: keep a `subscriptions/listen` open for the task's notifications until dropped.
fn listen_for(session: &Session, task_id: &str) -> AbortOnDrop {
    let mut filter = SubscriptionFilter::default();
    filter.extra.insert(TASK_IDS_FILTER.into(), serde_json::json!([task_id]));
    let params = SubscriptionsListenParams { notifications: filter, ..Default::default() };
    let (_, answer) = session.request_unbounded::<SubscriptionsListen>(&params);
    let task_id = task_id.to_owned();
    let handle = tokio::spawn(async move {
        if let Err(error) = answer.await {
            tracing::debug!(task_id, %error, "the task's subscriptions/listen ended; polling alone");
        }
    });
    AbortOnDrop(handle.abort_handle())
}
