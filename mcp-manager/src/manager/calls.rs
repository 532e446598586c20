//! Tool calls through the manager: routing, the [interceptors](super::interceptors), argument
//! checks, the call itself, the conversion for the host, and the `mcp.tool_executed` event.

use std::sync::Arc;
use std::time::Instant;

use mcp_protocol::types::meta::JsonObject;
use mcp_protocol::types::mrtr::Outcome;
use mcp_protocol::types::tools::CallToolResult;
use tool_system::{ResultOrigin, SharedText, ToolExecutionResult};
use tracing::Instrument;

use super::hooks::{self, ManagerEvent};
use super::interceptors::{Before, Caller, ToolCall};
use super::{ManagedServer, ManagerError, McpManager, RoutedTool, convert, tasks};
use crate::ServerState;
use crate::connection::TaskOptions;
use crate::session::RequestOptions;
use crate::telemetry;

/// What the connection that served a call says about itself, for the result's metadata.
struct Served {
    protocol_version: mcp_protocol::ProtocolVersion,
    session_id: Option<String>,
}

impl McpManager {
    /// Call tool `name` on the server that owns it; the MCP result as the server sent it.
    /// Arguments are checked against the tool's `inputSchema` first (unless turned off).
    pub async fn call_tool(
        &self,
        name: &str,
        arguments: Option<JsonObject>,
        options: RequestOptions,
    ) -> Result<(RoutedTool, CallToolResult), ManagerError> {
        self.call_tool_with(name, arguments, options, TaskOptions::default()).await
    }

    /// [`McpManager::call_tool`], with the task options of this call (a task's result carries
    /// its id: [`crate::connection::tasks::result_task_id`]).
    pub async fn call_tool_with(
        &self,
        name: &str,
        arguments: Option<JsonObject>,
        options: RequestOptions,
        task: TaskOptions,
    ) -> Result<(RoutedTool, CallToolResult), ManagerError> {
        self.call_tool_as(&Caller::default(), name, arguments, options, task).await
    }

    /// [`McpManager::call_tool_with`] for `caller`, whom the before-call
    /// [interceptors](super::interceptors) see (a veto is [`ManagerError::Vetoed`]; after-call
    /// interceptors do not run on the server's own result).
    pub async fn call_tool_as(
        &self,
        caller: &Caller,
        name: &str,
        arguments: Option<JsonObject>,
        options: RequestOptions,
        task: TaskOptions,
    ) -> Result<(RoutedTool, CallToolResult), ManagerError> {
        let span = telemetry::tool_call_span(name);
        let called = async {
            let route = self.routing().tool(name).cloned().ok_or_else(|| self.missing_tool(name))?;
            telemetry::record_server(&span, route.server());
            let arguments = match self.intercept(&route, caller, arguments).await {
                Ok((arguments, _)) => arguments,
                Err((vetoed, _)) => return Err(vetoed),
            };
            let (result, _) = self.call_route(&route, arguments, options, task).await?;
            Ok((route, result))
        };
        let called = called.instrument(span.clone()).await;
        match &called {
            Ok((_, result)) if result.is_error == Some(true) => telemetry::record_tool_error(&span),
            Ok(_) => {}
            Err(e) => telemetry::record_error(&span, e.kind()),
        }
        called
    }

    /// Why tool `name` has no route: the manager is closed, its server's config disables it, its
    /// server (the one that offered it last) is not ready, or no server offers it.
    pub(super) fn missing_tool(&self, name: &str) -> ManagerError {
        if self.shared.is_closing() {
            return ManagerError::Closed;
        }
        let routing = self.routing();
        if let error @ ManagerError::DisabledTool { .. } = routing.missing_tool(name) {
            return error;
        }
        match self.shared.former_owner(name) {
            Some(server) if !matches!(server.state(), ServerState::Ready | ServerState::Degraded) => {
                ManagerError::ServerUnavailable {
                    server: server.name.to_string(),
                    tool: name.to_owned(),
                    state: server.state(),
                }
            }
            _ => ManagerError::UnknownTool(name.into()),
        }
    }

    /// Run the before-call interceptors: the arguments to send and the call as they saw it
    /// (`None` without interceptors), or the veto with the arguments as they were given.
    async fn intercept(
        &self,
        route: &RoutedTool,
        caller: &Caller,
        arguments: Option<JsonObject>,
    ) -> Result<(Option<JsonObject>, Option<ToolCall>), (ManagerError, Option<JsonObject>)> {
        let interceptors = &self.shared.options.interceptors;
        if interceptors.is_empty() {
            return Ok((arguments, None));
        }
        let mut call = ToolCall {
            server: route.server().to_string(),
            tool: route.tool().name.clone(),
            arguments: arguments.clone().unwrap_or_default(),
            caller: caller.clone(),
        };
        // Boxed, as run_after: a call without interceptors does not carry their state.
        match Box::pin(interceptors.run_before(call.clone())).await {
            Before::Proceed(None) => Ok((arguments, Some(call))),
            Before::Proceed(Some(rewritten)) => {
                call.arguments = rewritten.clone();
                Ok((Some(rewritten), Some(call)))
            }
            Before::Vetoed { by, reason } => {
                Err((ManagerError::Vetoed { server: call.server, tool: call.tool, interceptor: by, reason }, arguments))
            }
        }
    }

    /// Call `route`; the result and what the connection that served it says about itself.
    /// (`execute_tool_traced` runs the same steps in its own body, to await the connection's
    /// call without this layer.)
    async fn call_route(
        &self,
        route: &RoutedTool,
        arguments: Option<JsonObject>,
        options: RequestOptions,
        task: TaskOptions,
    ) -> Result<(CallToolResult, Served), ManagerError> {
        let (server, arguments, task) = self.prepare_call(route, arguments, task)?;
        let _in_flight = server.in_flight.enter().await;
        let (outcome, open) = server.conn.call_tool_served(&route.tool().name, arguments, options, task).await?;
        served(route, outcome, open)
    }

    /// What a call of `route` needs before it is sent: its server, the arguments checked against
    /// the tool's `inputSchema` (unless the host turned that off) and the call's task options.
    #[allow(clippy::result_large_err)]
    fn prepare_call(
        &self,
        route: &RoutedTool,
        arguments: Option<JsonObject>,
        task: TaskOptions,
    ) -> Result<(Arc<ManagedServer>, Option<JsonObject>, TaskOptions), ManagerError> {
        // A host that skips the check does not compile the schema either.
        let check = if self.shared.options.skip_argument_validation { None } else { route.input_check() };
        let arguments = match check {
            Some(check) => {
                // Checked in place: the validator reads a `Value`, which the arguments become
                // and then are again, without a copy (and still absent if they were).
                let given = arguments.is_some();
                let value = serde_json::Value::Object(arguments.unwrap_or_default());
                convert::check_argument_value(&check, &route.tool().name, &value)
                    .map_err(ManagerError::InvalidArguments)?;
                match value {
                    serde_json::Value::Object(arguments) if given => Some(arguments),
                    _ => None,
                }
            }
            _ => arguments,
        };
        let server =
            self.shared.server(route.server()).ok_or_else(|| ManagerError::UnknownTool(route.tool().name.clone()))?;
        // The server's configured task mode, unless the call says otherwise.
        let task = TaskOptions { mode: task.mode.or(Some(server.config.task)), ..task };
        Ok((server, arguments, task))
    }

    /// Run tool `name` and convert its result for the host: an MCP error result, a result that
    /// does not match the tool's `outputSchema`, bad arguments or a failed call all become a
    /// failed [`ToolExecutionResult`] with a message. Observers see a `tool_executed` event.
    pub async fn execute_tool(
        &self,
        name: &str,
        arguments: Option<JsonObject>,
        options: RequestOptions,
    ) -> ToolExecutionResult {
        self.execute_tool_with(name, arguments, options, TaskOptions::default()).await
    }

    /// [`McpManager::execute_tool`], with the task options of this call. A tool that ran as a
    /// task reports the task's id in the result's metadata (`task_id`), also when it failed or
    /// timed out, so that the host can resume or cancel it ([`McpManager::resume_task`]).
    pub async fn execute_tool_with(
        &self,
        name: &str,
        arguments: Option<JsonObject>,
        options: RequestOptions,
        task: TaskOptions,
    ) -> ToolExecutionResult {
        self.execute_tool_as(&Caller::default(), name, arguments, options, task).await
    }

    /// [`McpManager::execute_tool_with`] for `caller` (`McpToolProvider` passes the
    /// `ToolExecutionContext`'s user and session). The
    /// [interceptors](super::interceptors) see the caller, may veto the call (a failed result
    /// naming the interceptor and its reason, with `vetoed_by` in its metadata) or rewrite its
    /// arguments, and may replace the result; the `tool_executed` observers then see the
    /// arguments that were sent, the result the host gets, and the caller.
    ///
    /// The call's future is the traced call itself, not an `async fn` around it: every layer
    /// of a call's future is moved whole when it is first awaited, and this state is kilobytes.
    pub fn execute_tool_as<'a>(
        &'a self,
        caller: &'a Caller,
        name: &'a str,
        arguments: Option<JsonObject>,
        options: RequestOptions,
        task: TaskOptions,
    ) -> impl Future<Output = ToolExecutionResult> + Send + 'a {
        let span = telemetry::tool_call_span(name);
        self.execute_tool_traced(span.clone(), caller, name, arguments, options, task).instrument(span)
    }

    /// [`McpManager::execute_tool_as`] in the tool call's `span`.
    ///
    /// One `async` layer from the route to the connection's call: the steps around the call are
    /// plain functions, and the interceptors' are awaited only when there are some, so the
    /// connection's call future is moved once into this one's state rather than through a layer
    /// for each step (each move copies the whole state, kilobytes). An `async` block rather than
    /// an `async fn`, whose arguments the state would hold twice (as given and as moved in).
    #[expect(clippy::manual_async_fn, reason = "an async fn would hold the arguments twice")]
    fn execute_tool_traced<'a>(
        &'a self,
        span: tracing::Span,
        caller: &'a Caller,
        name: &'a str,
        arguments: Option<JsonObject>,
        options: RequestOptions,
        task: TaskOptions,
    ) -> impl Future<Output = ToolExecutionResult> + Send + 'a {
        async move {
            let started = Instant::now();
            let Some(route) = self.routing().tool(name).cloned() else {
                let (server, failed) = self.unrouted(&span, name);
                return self.executed(caller, name, server.as_deref(), arguments, failed, started);
            };
            telemetry::record_server(&span, route.server());
            let interceptors = &self.shared.options.interceptors;
            // The call as the interceptors saw it, boxed: held across the server's call, and
            // absent without interceptors (the state of every call in flight would hold its
            // 288 bytes).
            let (arguments, call) = if interceptors.is_empty() {
                (arguments, None)
            } else {
                match self.intercept(&route, caller, arguments).await {
                    Ok((arguments, call)) => (arguments, call.map(Box::new)),
                    Err((vetoed, arguments)) => {
                        let failed = vetoed_result(&span, &route, &vetoed);
                        return self.executed(caller, name, Some(route.server()), arguments, failed, started);
                    }
                }
            };
            // Copied only for the observers, who see what was sent.
            let sent = if self.shared.hooks.is_empty() { None } else { arguments.clone() };
            let called = 'call: {
                // Taken apart in a statement of its own: a `match` over the call's preparation
                // would keep room for all of it (200 bytes) across the server's call.
                let (server, arguments, task) = match self.prepare_call(&route, arguments, task) {
                    Ok(prepared) => prepared,
                    Err(e) => break 'call Err(e),
                };
                let _in_flight = server.in_flight.enter().await;
                match server.conn.call_tool_served(&route.tool().name, arguments, options, task).await {
                    Ok((outcome, open)) => served(&route, outcome, open),
                    Err(e) => Err(e.into()),
                }
            };
            let result = host_result(&span, &route, called);
            let result = match call {
                Some(call) if interceptors.has_after() => Box::pin(interceptors.run_after(&call, result)).await,
                _ => result,
            };
            self.executed(caller, name, Some(route.server()), sent, result, started)
        }
    }

    /// Why tool `name` has no route, as a failed result (with the server it names, if any).
    fn unrouted(&self, span: &tracing::Span, name: &str) -> (Option<Arc<str>>, ToolExecutionResult) {
        let error = self.missing_tool(name);
        telemetry::record_error(span, error.kind());
        let server = match &error {
            ManagerError::ServerUnavailable { server, .. } => Some(Arc::<str>::from(server.as_str())),
            _ => None,
        };
        let failed = ToolExecutionResult::failed(error.to_string());
        let failed = match &server {
            Some(server) => failed.with_origin(ResultOrigin::new(Some(SharedText::from(&**server)), name)),
            None => failed,
        };
        (server, failed)
    }

    /// Tell the `tool_executed` observers about a call of `name` on `server` with the arguments
    /// `sent`, which gave `result`; returns the result.
    fn executed(
        &self,
        caller: &Caller,
        name: &str,
        server: Option<&str>,
        sent: Option<JsonObject>,
        result: ToolExecutionResult,
        started: Instant,
    ) -> ToolExecutionResult {
        let hooks = &self.shared.hooks;
        if !hooks.is_empty() {
            let arguments = sent.map(serde_json::Value::Object).unwrap_or(serde_json::Value::Null);
            let event =
                hooks::ToolExecuted::new(server.unwrap_or_default(), name, &arguments, &result, started.elapsed())
                    .with_caller(caller.clone());
            // The history text's length: what the host puts into the conversation.
            hooks.emit(ManagerEvent::ToolExecuted(hooks::ToolExecuted {
                content_length: result.content.as_deref().map_or(0, str::len),
                ..event
            }));
        }
        result
    }
}

/// The complete result of a call's `outcome` and what the session `open` that served it says
/// of itself; an error for an outcome a tool call must not end with.
#[allow(clippy::result_large_err)]
fn served(
    route: &RoutedTool,
    outcome: Outcome<CallToolResult>,
    open: crate::connection::OpenSession,
) -> Result<(CallToolResult, Served), ManagerError> {
    match outcome {
        Outcome::Complete(result) => {
            // Of the session that served the call, not of a replacement.
            let served = Served { session_id: open.session_id(), protocol_version: open.protocol_version };
            Ok((result, served))
        }
        Outcome::InputRequired(_) => Err(ManagerError::UnexpectedShape {
            server: route.server().to_string(),
            method: "tools/call",
            shape: "input_required",
        }),
        Outcome::Task(_) | Outcome::TaskHandle(_) => Err(ManagerError::UnexpectedShape {
            server: route.server().to_string(),
            method: "tools/call",
            shape: "task",
        }),
    }
}

/// The host's result of a call of `route`: the server's result converted (checked against the
/// tool's `outputSchema`), or the call's error as a failed result; either with the id of the
/// task it ran as.
fn host_result(
    span: &tracing::Span,
    route: &RoutedTool,
    called: Result<(CallToolResult, Served), ManagerError>,
) -> ToolExecutionResult {
    match called {
        Ok((result, served)) => {
            let task_id = crate::connection::tasks::result_task_id(&result);
            let origin = route.origin(Some((&served.protocol_version, served.session_id.as_deref())));
            if result.is_error == Some(true) {
                telemetry::record_tool_error(span);
            }
            let converted = convert::tool_result(result, route.output_check().as_deref(), origin);
            tasks::with_task_id(converted, task_id.as_deref())
        }
        Err(e) => {
            telemetry::record_error(span, e.kind());
            let task_id = tasks::error_task_id(&e);
            let failed = ToolExecutionResult::failed(e.to_string()).with_origin(route.origin(None));
            tasks::with_task_id(failed, task_id.as_deref())
        }
    }
}

/// The failed result of a call of `route` that an interceptor vetoed.
fn vetoed_result(span: &tracing::Span, route: &RoutedTool, vetoed: &ManagerError) -> ToolExecutionResult {
    telemetry::record_error(span, vetoed.kind());
    let interceptor = match vetoed {
        ManagerError::Vetoed { interceptor, .. } => interceptor.clone(),
        _ => String::new(),
    };
    ToolExecutionResult::failed(vetoed.to_string())
        .with_origin(route.origin(None))
        .with_metadata("vetoed_by", interceptor.into())
}
