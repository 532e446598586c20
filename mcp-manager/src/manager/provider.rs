//! [`McpToolProvider`]: the manager's tools as a `tool_system` provider.

use futures::future::BoxFuture;
use mcp_protocol::types::progress::ProgressParams;
use tool_system::{
    AppOrigin, CallControl, SharedText, ToolError, ToolExecutionContext, ToolExecutionResult, ToolInvocation,
    ToolProgress, ToolProvider, ToolSpec,
};

use std::sync::Arc;
use std::time::Instant;

use super::McpManager;
use crate::connection::{TaskOptions, TaskUpdate};
use crate::session::RequestOptions;

/// Shows every tool the manager routes to a `tool_system::ToolRegistry` (provider name and type
/// `mcp`). Each spec carries its server's name as namespace, so the registry exposes
/// `server__tool`; the provider's own tool names are the MCP names, unique after the manager's
/// conflict rules. Its revision is the manager's routing revision, so the registry lists again
/// whenever a server connects, is lost or changes its lists. `close` closes the manager.
#[derive(Debug, Clone)]
pub struct McpToolProvider {
    manager: McpManager,
    /// Shared with the specs that name it.
    name: SharedText,
}

impl McpToolProvider {
    /// A provider named `mcp` over `manager`.
    pub fn new(manager: McpManager) -> Self {
        McpToolProvider { manager, name: super::convert::mcp_text() }
    }

    /// The same provider under another name (to register several managers in one registry).
    pub fn with_name(mut self, name: impl Into<String>) -> Self {
        self.name = SharedText::from(name.into());
        self
    }

    /// The origin of the MCP Apps views of server `server` (see [`crate::apps`]): pass it to
    /// [`ToolRegistry::invoke_from_app`](tool_system::ToolRegistry::invoke_from_app) when a view
    /// that server served calls one of its tools.
    pub fn app_origin(&self, server: &str) -> AppOrigin {
        AppOrigin::new(self.name.as_str(), Some(server.to_owned()))
    }

    /// The manager behind the provider.
    pub fn manager(&self) -> &McpManager {
        &self.manager
    }

    /// The specs of every routed tool, in config order. Each route makes its spec once; every
    /// listing shares it (a provider renamed with [`McpToolProvider::with_name`] gets copies
    /// naming it).
    pub fn specs(&self) -> Vec<Arc<ToolSpec>> {
        let routing = self.manager.routing();
        routing
            .tools()
            .iter()
            .map(|route| {
                let mut spec = route.spec();
                if spec.provider_name != self.name {
                    Arc::make_mut(&mut spec).provider_name = self.name.clone();
                }
                spec
            })
            .collect()
    }
}

impl ToolProvider for McpToolProvider {
    fn name(&self) -> &str {
        &self.name
    }

    fn provider_type(&self) -> &str {
        "mcp"
    }

    fn list_tools(&self, _ctx: &ToolExecutionContext) -> BoxFuture<'_, Result<Vec<Arc<ToolSpec>>, ToolError>> {
        Box::pin(async move {
            if self.manager.is_closed() {
                return Err(ToolError::closed(&self.name));
            }
            Ok(self.specs())
        })
    }

    /// Calls the tool on its server. The context's [`CallControl`] becomes the request's: the
    /// time left before the deadline is the request's timeout, and progress notifications and
    /// the state changes of a task go to the progress sink. The registry enforces the token and
    /// the deadline for every provider by dropping the call's future (this one does not watch
    /// the token a second time), which sends the protocol's cancellation
    /// (`notifications/cancelled`, or `tasks/cancel` for a task). A call that fails once the
    /// deadline has passed (the request's own timeout, which is the same deadline) is reported
    /// as timed out ([`ToolExecutionResult::is_timed_out`]), with the manager's message.
    fn invoke(&self, invocation: ToolInvocation, ctx: ToolExecutionContext) -> BoxFuture<'_, ToolExecutionResult> {
        // The caller takes the context's strings and the call keeps its options and deadline,
        // made before the call's future: what it captures is held by the call's state for as
        // long as the call is in flight, and the context's parts would be held beside the caller
        // made of them.
        let (options, task) = call_options(&ctx.control);
        let deadline = ctx.control.deadline;
        let caller = super::Caller {
            user_id: ctx.user_id,
            session_id: ctx.session_id,
            chat_stream_id: ctx.chat_stream_id,
            platform: ctx.platform,
            extra: ctx.extra,
        };
        let ToolInvocation { tool_name, arguments, .. } = invocation;
        // Written into its allocation where it is made: `Box::pin(future)` made the future (its
        // 2.6 KB, most of it the call's states to come) on the stack and copied it into the box,
        // a 2.6 KB copy every call, which also pushed as much other data out of the cache.
        let call: Box<_> = Box::write(Box::new_uninit(), async move {
            // Pinned where it is made, in this future's own state (which the registry holds on
            // the heap): awaited by value, the call's kilobytes of state would be moved first.
            let call =
                std::pin::pin!(self.manager.execute_tool_as(&caller, &tool_name, Some(arguments), options, task));
            let result = call.await;
            let past_deadline = deadline.is_some_and(|deadline| Instant::now() >= deadline);
            if !result.success && past_deadline && !result.is_cancelled() && !result.is_timed_out() {
                return result.with_metadata(ToolExecutionResult::INTERRUPTED_METADATA, "timeout".into());
            }
            result
        });
        Box::into_pin(call)
    }

    fn close(&self) -> BoxFuture<'_, ()> {
        Box::pin(self.manager.close())
    }

    fn revision(&self) -> u64 {
        self.manager.revision()
    }

    fn revision_changes(&self) -> Option<tokio::sync::watch::Receiver<u64>> {
        Some(self.manager.subscribe_changes())
    }
}

/// The request and task options of a call under `control`.
fn call_options(control: &CallControl) -> (RequestOptions, TaskOptions) {
    let mut options = RequestOptions { timeout: control.remaining(), ..RequestOptions::default() };
    let mut task = TaskOptions::default();
    if let Some(sink) = &control.progress {
        let progress_sink = sink.clone();
        options.progress = Some(Arc::new(move |p: ProgressParams| progress_sink.report(progress_report(&p))));
        let task_sink = sink.clone();
        task.observer = Some(Arc::new(move |update: &TaskUpdate| task_sink.report(task_report(update))));
    }
    (options, task)
}

/// A progress notification as the host's report.
fn progress_report(params: &ProgressParams) -> ToolProgress {
    ToolProgress {
        progress: params.progress.as_f64(),
        total: params.total.as_ref().and_then(serde_json::Number::as_f64),
        message: params.message.clone(),
        ..ToolProgress::default()
    }
}

/// A task's new state as the host's report: its status message (else its status), with the
/// task's id and status in the metadata.
fn task_report(update: &TaskUpdate) -> ToolProgress {
    let status = update.task.status.as_str();
    let message = update.task.status_message.clone().unwrap_or_else(|| status.to_owned());
    ToolProgress::status(message)
        .with_metadata("task_id", update.task.task_id.clone().into())
        .with_metadata("task_status", status.into())
}
