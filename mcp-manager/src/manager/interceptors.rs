//! Interceptors: hooks that may act on a tool call, not only watch it.
//!
//! A [`BeforeCall`] interceptor sees the call (server, tool, arguments and the [`Caller`]) before
//! it is sent and [allows](Decision::Allow) it, [rewrites its arguments](Decision::Rewrite) or
//! [vetoes](Decision::Veto) it: a vetoed call is not sent, and the host gets a failed result that
//! names the interceptor and its reason. An [`AfterCall`] interceptor sees the host's
//! [`ToolExecutionResult`] and may replace it (to redact it, say) before the host and the
//! `mcp.tool_executed` observers see it. Interceptors run in the order they were added, each on
//! what the one before it left.
//!
//! Each runs in a task of its own, under its time bound ([`InterceptorOptions::timeout`],
//! default [`DEFAULT_INTERCEPTOR_TIMEOUT`]). One that fails (returns `Err`), panics or runs out
//! of time never breaks the call. By default it *fails open*: its outcome is ignored, the call
//! goes on as if it were not there, and a warning is logged. An interceptor added with
//! [`InterceptorOptions::fail_closed`] (a security policy, a redaction that must happen) *fails
//! closed* instead: a before-call failure vetoes the call, an after-call failure withholds the
//! result (the host gets a failed result saying why, without the server's content).
//!
//! An interceptor's future must not block its thread: the time bound is enforced from the
//! caller's side, which a blocked single-threaded runtime cannot do.
//!
//! Before-call interceptors run for [`McpManager::call_tool`](super::McpManager::call_tool) as
//! well as for [`McpManager::execute_tool`](super::McpManager::execute_tool) (and so for every call
//! through `McpToolProvider`); after-call interceptors only where a `ToolExecutionResult` is made
//! (`execute_tool*`): `call_tool` returns the server's own result.

use std::fmt;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use mcp_protocol::types::meta::JsonObject;
use serde_json::Value;
use tool_system::{ResultOrigin, ToolExecutionResult};

pub use super::hooks::Caller;

/// How long an interceptor may take unless its options say otherwise.
pub const DEFAULT_INTERCEPTOR_TIMEOUT: Duration = Duration::from_secs(5);

/// One tool call, as interceptors see it. Its `Debug` output shows the arguments
/// [redacted](super::hooks::redact), like the observers' events.
#[derive(Clone, PartialEq)]
pub struct ToolCall {
    /// The server the call is routed to.
    pub server: String,
    /// The tool's name on that server.
    pub tool: String,
    /// The arguments (after the rewrites of earlier interceptors).
    pub arguments: JsonObject,
    /// Who the call is made for.
    pub caller: Caller,
}

impl fmt::Debug for ToolCall {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolCall")
            .field("server", &self.server)
            .field("tool", &self.tool)
            .field("arguments", &super::hooks::redact(&Value::Object(self.arguments.clone())))
            .field("caller", &self.caller)
            .finish()
    }
}

/// What a before-call interceptor decides.
#[derive(Debug, Clone, PartialEq)]
pub enum Decision {
    /// Send the call as it is.
    Allow,
    /// Send the call with these arguments instead (they are still checked against the tool's
    /// `inputSchema`).
    Rewrite(JsonObject),
    /// Do not send the call; the host gets a failed result with this reason.
    Veto(String),
}

/// Sees each call before it is sent, and may rewrite or veto it (see the [module](self)).
pub trait BeforeCall: Send + Sync + 'static {
    /// Decide on `call`. An `Err` is a failure of the interceptor (see [`InterceptorOptions`]).
    fn before_call(&self, call: ToolCall) -> BoxFuture<'_, Result<Decision, String>>;
}

/// Sees each result before the host does, and may replace it (see the [module](self)).
pub trait AfterCall: Send + Sync + 'static {
    /// The result the host gets for `call`: `result` itself, or a replacement. An `Err` is a
    /// failure of the interceptor (see [`InterceptorOptions`]).
    fn after_call(
        &self,
        call: ToolCall,
        result: ToolExecutionResult,
    ) -> BoxFuture<'_, Result<ToolExecutionResult, String>>;
}

/// How one interceptor is run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InterceptorOptions {
    /// How long it may take (default [`DEFAULT_INTERCEPTOR_TIMEOUT`]).
    pub timeout: Duration,
    /// What its failure (an `Err`, a panic, the timeout) means: `false` (the default) ignores it
    /// and the call goes on unchanged; `true` vetoes the call (before) or withholds the result
    /// (after).
    pub fail_closed: bool,
}

impl Default for InterceptorOptions {
    fn default() -> Self {
        InterceptorOptions { timeout: DEFAULT_INTERCEPTOR_TIMEOUT, fail_closed: false }
    }
}

impl InterceptorOptions {
    /// The defaults, failing closed.
    pub fn fail_closed() -> Self {
        InterceptorOptions { fail_closed: true, ..InterceptorOptions::default() }
    }

    /// The same options with another time bound.
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }
}

struct Registered<T: ?Sized> {
    name: Arc<str>,
    interceptor: Arc<T>,
    options: InterceptorOptions,
}

impl<T: ?Sized> Clone for Registered<T> {
    fn clone(&self) -> Self {
        Registered { name: self.name.clone(), interceptor: self.interceptor.clone(), options: self.options }
    }
}

/// The interceptors of one manager, run in the order they were added.
#[derive(Clone, Default)]
pub struct Interceptors {
    before: Vec<Registered<dyn BeforeCall>>,
    after: Vec<Registered<dyn AfterCall>>,
}

impl fmt::Debug for Interceptors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let before: Vec<&str> = self.before.iter().map(|r| &*r.name).collect();
        let after: Vec<&str> = self.after.iter().map(|r| &*r.name).collect();
        f.debug_struct("Interceptors").field("before", &before).field("after", &after).finish()
    }
}

struct FnBefore<F>(F);

impl<F, Fut> BeforeCall for FnBefore<F>
where
    F: Fn(ToolCall) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Decision> + Send + 'static,
{
    fn before_call(&self, call: ToolCall) -> BoxFuture<'_, Result<Decision, String>> {
        let decided = (self.0)(call);
        Box::pin(async move { Ok(decided.await) })
    }
}

struct FnAfter<F>(F);

impl<F, Fut> AfterCall for FnAfter<F>
where
    F: Fn(ToolCall, ToolExecutionResult) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = ToolExecutionResult> + Send + 'static,
{
    fn after_call(
        &self,
        call: ToolCall,
        result: ToolExecutionResult,
    ) -> BoxFuture<'_, Result<ToolExecutionResult, String>> {
        let replaced = (self.0)(call, result);
        Box::pin(async move { Ok(replaced.await) })
    }
}

/// What the before-call interceptors decided.
pub(crate) enum Before {
    /// Send the call: with these arguments when an interceptor rewrote them, else as it came.
    Proceed(Option<JsonObject>),
    /// Do not send it.
    Vetoed {
        /// The interceptor's name.
        by: String,
        /// Its reason.
        reason: String,
    },
}

impl Interceptors {
    /// No interceptors.
    pub fn new() -> Self {
        Interceptors::default()
    }

    /// Whether there is none.
    pub fn is_empty(&self) -> bool {
        self.before.is_empty() && self.after.is_empty()
    }

    /// Adds a before-call interceptor named `name` (in messages and logs), with the default
    /// options: `f` gets each call and returns a [`Decision`].
    pub fn before<F, Fut>(self, name: &str, f: F) -> Self
    where
        F: Fn(ToolCall) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Decision> + Send + 'static,
    {
        self.before_with(name, InterceptorOptions::default(), f)
    }

    /// [`Interceptors::before`] with `options`.
    pub fn before_with<F, Fut>(mut self, name: &str, options: InterceptorOptions, f: F) -> Self
    where
        F: Fn(ToolCall) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Decision> + Send + 'static,
    {
        self.add_before(name, Arc::new(FnBefore(f)), options);
        self
    }

    /// Adds an after-call interceptor named `name`, with the default options: `f` gets each
    /// call and its result, and returns the result the host gets.
    pub fn after<F, Fut>(self, name: &str, f: F) -> Self
    where
        F: Fn(ToolCall, ToolExecutionResult) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ToolExecutionResult> + Send + 'static,
    {
        self.after_with(name, InterceptorOptions::default(), f)
    }

    /// [`Interceptors::after`] with `options`.
    pub fn after_with<F, Fut>(mut self, name: &str, options: InterceptorOptions, f: F) -> Self
    where
        F: Fn(ToolCall, ToolExecutionResult) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ToolExecutionResult> + Send + 'static,
    {
        self.add_after(name, Arc::new(FnAfter(f)), options);
        self
    }

    /// Adds a before-call interceptor of the host's own type.
    pub fn add_before(&mut self, name: &str, interceptor: Arc<dyn BeforeCall>, options: InterceptorOptions) {
        self.before.push(Registered { name: Arc::from(name), interceptor, options });
    }

    /// Adds an after-call interceptor of the host's own type.
    pub fn add_after(&mut self, name: &str, interceptor: Arc<dyn AfterCall>, options: InterceptorOptions) {
        self.after.push(Registered { name: Arc::from(name), interceptor, options });
    }

    /// Whether some interceptor runs after calls.
    pub(crate) fn has_after(&self) -> bool {
        !self.after.is_empty()
    }

    /// Runs the before-call interceptors on `call`, in order; the arguments to send, or who
    /// vetoed the call and why.
    pub(crate) async fn run_before(&self, mut call: ToolCall) -> Before {
        let mut rewritten = false;
        for registered in &self.before {
            let interceptor = registered.interceptor.clone();
            let seen = call.clone();
            let outcome = bounded(registered.options.timeout, async move { interceptor.before_call(seen).await }).await;
            match outcome {
                Ok(Decision::Allow) => {}
                Ok(Decision::Rewrite(arguments)) => {
                    call.arguments = arguments;
                    rewritten = true;
                }
                Ok(Decision::Veto(reason)) => return Before::Vetoed { by: registered.name.to_string(), reason },
                Err(failure) if registered.options.fail_closed => {
                    tracing::warn!(interceptor = %registered.name, server = %call.server, tool = %call.tool, %failure, "a before-call interceptor failed; it fails closed, so the call is vetoed");
                    let reason = format!("the interceptor {failure}, and it fails closed");
                    return Before::Vetoed { by: registered.name.to_string(), reason };
                }
                Err(failure) => {
                    tracing::warn!(interceptor = %registered.name, server = %call.server, tool = %call.tool, %failure, "a before-call interceptor failed; the call goes on unchanged");
                }
            }
        }
        Before::Proceed(rewritten.then_some(call.arguments))
    }

    /// Runs the after-call interceptors on `result`, in order; the result the host gets.
    pub(crate) async fn run_after(&self, call: &ToolCall, mut result: ToolExecutionResult) -> ToolExecutionResult {
        for registered in &self.after {
            let interceptor = registered.interceptor.clone();
            let (seen, given) = (call.clone(), result.clone());
            let outcome =
                bounded(registered.options.timeout, async move { interceptor.after_call(seen, given).await }).await;
            match outcome {
                Ok(replaced) => result = replaced,
                Err(failure) if registered.options.fail_closed => {
                    tracing::warn!(interceptor = %registered.name, server = %call.server, tool = %call.tool, %failure, "an after-call interceptor failed; it fails closed, so the result is withheld");
                    let message = format!(
                        "the result of tool `{}` of server `{}` was withheld: interceptor `{}` {failure}, and it fails closed",
                        call.tool, call.server, registered.name
                    );
                    return ToolExecutionResult::failed(message)
                        .with_origin(ResultOrigin::new(Some(call.server.as_str().into()), call.tool.as_str()))
                        .with_metadata("withheld_by", registered.name.to_string().into());
                }
                Err(failure) => {
                    tracing::warn!(interceptor = %registered.name, server = %call.server, tool = %call.tool, %failure, "an after-call interceptor failed; the result goes on unchanged");
                }
            }
        }
        result
    }
}

/// Aborts the interceptor's task when the call that waits for it goes away.
struct AbortOnDrop<T>(tokio::task::JoinHandle<T>);

impl<T> Drop for AbortOnDrop<T> {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Runs `work` in a task of its own for at most `timeout`: its value, or what went wrong
/// ("failed: ...", "panicked: ...", "did not answer within ...").
async fn bounded<T: Send + 'static>(
    timeout: Duration,
    work: impl Future<Output = Result<T, String>> + Send + 'static,
) -> Result<T, String> {
    let mut task = AbortOnDrop(tokio::spawn(work));
    match tokio::time::timeout(timeout, &mut task.0).await {
        Ok(Ok(Ok(value))) => Ok(value),
        Ok(Ok(Err(error))) => Err(format!("failed: {error}")),
        Ok(Err(join)) => match join.try_into_panic() {
            Ok(panic) => Err(format!("panicked: {}", super::hooks::panic_message(panic.as_ref()))),
            Err(_) => Err("was cancelled".to_owned()),
        },
        Err(_) => Err(format!("did not answer within {timeout:?}")),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use tool_system::ToolExecutionContext;

    use super::*;

    #[test]
    fn a_call_shows_no_secret_and_the_caller_comes_from_the_context() {
        let ctx = ToolExecutionContext::new("session-1", "chat-2").with_user("ann").with_extra("role", json!("admin"));
        let caller = Caller::from(&ctx);
        assert_eq!((caller.user_id.as_str(), caller.session_id.as_str()), ("ann", "session-1"));
        assert_eq!(caller.extra["role"], "admin");
        assert!(!caller.is_unknown() && Caller::default().is_unknown());
        let arguments = json!({"query": "weather", "api_key": "sk-live-123"}).as_object().cloned().unwrap();
        let call = ToolCall { server: "s".into(), tool: "t".into(), arguments, caller };
        let shown = format!("{call:?}");
        assert!(!shown.contains("sk-live-123") && shown.contains("weather"), "{shown}");
        assert_eq!(call.arguments["api_key"], "sk-live-123", "interceptors get the arguments as they are");
    }

    #[tokio::test]
    async fn a_bounded_run_reports_each_way_of_failing() {
        let within = Duration::from_millis(100);
        let run = |work: BoxFuture<'static, Result<u8, String>>| bounded(within, work);
        let bound = Duration::from_secs(20);
        let outcomes = tokio::time::timeout(bound, async {
            [
                run(Box::pin(async { Ok(1) })).await,
                run(Box::pin(async { Err("no".to_owned()) })).await,
                run(Box::pin(async { panic!("bug") })).await,
                run(Box::pin(async {
                    tokio::time::sleep(Duration::from_secs(3600)).await;
                    Ok(2)
                }))
                .await,
            ]
        })
        .await
        .expect("bounded runs end");
        assert_eq!(outcomes[0], Ok(1));
        assert_eq!(outcomes[1], Err("failed: no".to_owned()));
        assert_eq!(outcomes[2], Err("panicked: bug".to_owned()));
        assert!(outcomes[3].as_ref().unwrap_err().starts_with("did not answer within"), "{:?}", outcomes[3]);
    }
}
