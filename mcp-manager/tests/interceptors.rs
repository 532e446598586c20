//! Interceptors against a scripted server on an in-memory transport: a veto keeps the call off
//! the wire and says who vetoed and why; a rewrite of the arguments is what the server gets; a
//! rewrite of the result is what the host and the observers get; the caller of the host's
//! context reaches them through the registry; and an interceptor that fails, panics or hangs
//! never breaks the call (it fails open), unless it fails closed.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::future::BoxFuture;
use mcp_manager::config::ServerConfig;
use mcp_manager::connection::{EraPreference, single_use_factory};
use mcp_manager::manager::hooks::ToolExecuted;
use mcp_manager::manager::interceptors::{AfterCall, BeforeCall};
use mcp_manager::manager::{Caller, Decision, InterceptorOptions, Interceptors, ToolCall};
use mcp_manager::{
    ErrorKind, ManagerBuilder, ManagerError, McpManager, McpToolProvider, RequestOptions, TransportPlan,
};
use mcp_transport::{MemoryTransport, Transport};
use serde_json::{Value, json};
use test_support::ScriptedServer;
use test_support::within;
use tool_system::{ToolExecutionContext, ToolExecutionResult, ToolInvocation, ToolRegistry};

/// A legacy server with `echo` (returns its text) and `card` (returns a card number).
fn serve(server: MemoryTransport) -> ScriptedServer {
    ScriptedServer::start(server, |request, params| {
        Some(Ok(match request.method.as_str() {
            "initialize" => json!({"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                    "serverInfo": {"name": "lab", "version": "1"}}),
            "tools/list" => json!({"tools": [
                {"name": "echo", "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}},
                    "required": ["text"]}},
                {"name": "card", "inputSchema": {"type": "object"}},
            ]}),
            "tools/call" => {
                let text = match params["name"].as_str() {
                    Some("card") => "card 4111 1111 1111 1111, expires 12/30".to_owned(),
                    _ => params["arguments"]["text"].as_str().unwrap_or_default().to_owned(),
                };
                json!({"content": [{"type": "text", "text": text}]})
            }
            _ => json!({}),
        }))
    })
}

/// The manager a builder makes over one scripted server `lab`, with every event it emits.
async fn start(builder: ManagerBuilder) -> (McpManager, ScriptedServer, Arc<Mutex<Vec<ToolExecuted>>>) {
    let (client, server) = MemoryTransport::pair();
    let seen = serve(server);
    let factory = single_use_factory(Arc::new(client) as Arc<dyn Transport>);
    let executed: Arc<Mutex<Vec<ToolExecuted>>> = Arc::default();
    let log = executed.clone();
    let manager = builder
        .server(ServerConfig::stdio("lab", "unused: the transport is in memory").era(EraPreference::Legacy))
        .transport(move |_| Some(TransportPlan::single(factory.clone())))
        .on_tool_executed(move |e| log.lock().unwrap().push(e.clone()))
        .start()
        .await
        .expect("a valid config");
    assert!(manager.routing().tool("echo").is_some(), "{:?}", manager.status());
    (manager, seen, executed)
}

fn args(value: Value) -> Option<serde_json::Map<String, Value>> {
    value.as_object().cloned()
}

/// The arguments of every `tools/call` the server got.
fn calls(seen: &ScriptedServer) -> Vec<Value> {
    seen.requests_of("tools/call").into_iter().map(|p| p["arguments"].clone()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_veto_keeps_the_call_off_the_wire_and_says_who_and_why() {
    within(async {
        let seen_callers: Arc<Mutex<Vec<Caller>>> = Arc::default();
        let log = seen_callers.clone();
        let builder = McpManager::builder().before_call("policy", move |call: ToolCall| {
            log.lock().unwrap().push(call.caller.clone());
            async move {
                if call.caller.user_id == "bob" && call.tool == "card" {
                    Decision::Veto("bob may not read cards".into())
                } else {
                    Decision::Allow
                }
            }
        });
        let (manager, seen, executed) = start(builder).await;
        let registry = ToolRegistry::new();
        registry.register(McpToolProvider::new(manager.clone())).await;

        // Through the registry: the context's user and session reach the interceptor.
        let bob = ToolExecutionContext::new("session-9", "chat-1").with_user("bob");
        let vetoed = registry.invoke(ToolInvocation::from_value("lab__card", json!({"id": 7})), bob.clone()).await;
        assert!(!vetoed.success);
        let message = vetoed.error_message.clone().unwrap();
        assert!(message.contains("\"policy\"") && message.contains("bob may not read cards"), "{message}");
        assert_eq!(vetoed.metadata["vetoed_by"], "policy");
        assert!(calls(&seen).is_empty(), "a vetoed call is not sent: {:?}", calls(&seen));
        let callers = seen_callers.lock().unwrap().clone();
        assert_eq!((callers[0].user_id.as_str(), callers[0].session_id.as_str()), ("bob", "session-9"));

        // Another user is allowed; the observers saw both calls, with their callers.
        let ann = ToolExecutionContext::default().with_user("ann");
        let allowed = registry.invoke(ToolInvocation::from_value("lab__card", json!({})), ann).await;
        assert!(allowed.success, "{allowed:?}");
        assert_eq!(calls(&seen).len(), 1);
        let executed = executed.lock().unwrap().clone();
        let summary: Vec<_> = executed.iter().map(|e| (e.caller.user_id.as_str(), e.success)).collect();
        assert_eq!(summary, [("bob", false), ("ann", true)]);
        assert_eq!(executed[0].metadata["vetoed_by"], "policy");
        assert_eq!(executed[0].arguments, json!({"id": 7}), "the observers see the vetoed call's arguments");

        // The raw call path honours the veto too, as an error of its own kind.
        let bob_caller = Caller::from(&bob);
        let error = manager
            .call_tool_as(&bob_caller, "card", None, RequestOptions::default(), Default::default())
            .await
            .unwrap_err();
        assert!(matches!(&error, ManagerError::Vetoed { interceptor, .. } if interceptor == "policy"), "{error}");
        assert_eq!(error.kind(), ErrorKind::Denied);
        assert_eq!(calls(&seen).len(), 1, "still not sent");
        manager.close().await;
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rewritten_arguments_are_what_the_server_gets_and_later_interceptors_see() {
    within(async {
        let second_saw: Arc<Mutex<Vec<Value>>> = Arc::default();
        let log = second_saw.clone();
        let builder = McpManager::builder()
            .before_call("scrub", |call: ToolCall| async move {
                let mut arguments = call.arguments;
                arguments.insert("text".into(), json!("[scrubbed]"));
                Decision::Rewrite(arguments)
            })
            .before_call("witness", move |call: ToolCall| {
                log.lock().unwrap().push(Value::Object(call.arguments));
                async { Decision::Allow }
            });
        let (manager, seen, executed) = start(builder).await;
        let result =
            manager.execute_tool("echo", args(json!({"text": "my password is x"})), RequestOptions::default()).await;
        assert!(result.success, "{result:?}");
        assert_eq!(result.content.as_deref(), Some("[scrubbed]"));
        assert_eq!(calls(&seen), [json!({"text": "[scrubbed]"})]);
        assert_eq!(*second_saw.lock().unwrap(), [json!({"text": "[scrubbed]"})]);
        assert_eq!(executed.lock().unwrap()[0].arguments, json!({"text": "[scrubbed]"}), "what was sent");
        manager.close().await;
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rewritten_result_is_what_the_host_and_the_observers_get() {
    within(async {
        let builder =
            McpManager::builder().after_call("redact", |_call: ToolCall, mut result: ToolExecutionResult| async move {
                if let Some(content) = &mut result.content {
                    *content = content.replace("4111 1111 1111 1111", "**** **** **** 1111").into();
                }
                result.items.clear();
                result
            });
        let (manager, _seen, executed) = start(builder).await;
        let result = manager.execute_tool("card", None, RequestOptions::default()).await;
        assert!(result.success);
        assert_eq!(result.content.as_deref(), Some("card **** **** **** 1111, expires 12/30"));
        assert!(!result.history_text().contains("4111"), "{}", result.history_text());
        let executed = executed.lock().unwrap().clone();
        assert_eq!(executed[0].content_length, "card **** **** **** 1111, expires 12/30".len());
        // The raw MCP result is the server's own: after-call interceptors do not touch it.
        let (_, raw) = manager.call_tool("card", None, RequestOptions::default()).await.unwrap();
        assert!(serde_json::to_string(&raw).unwrap().contains("4111"));
        manager.close().await;
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn panicking_and_hanging_interceptors_are_ignored_and_the_call_goes_on() {
    within(async {
        let quick = InterceptorOptions::default().with_timeout(Duration::from_millis(200));
        let builder = McpManager::builder()
            .before_call("panics", |_call: ToolCall| async { panic!("interceptor bug") })
            .before_call_with("hangs", quick, |_call: ToolCall| async {
                tokio::time::sleep(Duration::from_secs(3600)).await;
                Decision::Veto("too late to count".into())
            })
            .after_call("panics-after", |_call: ToolCall, _result: ToolExecutionResult| async { panic!("after bug") })
            .after_call_with("hangs-after", quick, |_call: ToolCall, _result: ToolExecutionResult| async {
                tokio::time::sleep(Duration::from_secs(3600)).await;
                ToolExecutionResult::failed("too late to count")
            });
        let (manager, seen, _) = start(builder).await;
        let result = manager.execute_tool("echo", args(json!({"text": "still here"})), RequestOptions::default()).await;
        assert!(result.success, "{result:?}");
        assert_eq!(result.content.as_deref(), Some("still here"), "the results of failed interceptors are ignored");
        assert_eq!(calls(&seen), [json!({"text": "still here"})], "the call went out unchanged");
        manager.close().await;
    })
    .await
}

/// An interceptor of the host's own type whose every answer is an error.
struct Broken;

impl BeforeCall for Broken {
    fn before_call(&self, _call: ToolCall) -> BoxFuture<'_, Result<Decision, String>> {
        Box::pin(async { Err("policy service unreachable".to_owned()) })
    }
}

impl AfterCall for Broken {
    fn after_call(
        &self,
        _call: ToolCall,
        _result: ToolExecutionResult,
    ) -> BoxFuture<'_, Result<ToolExecutionResult, String>> {
        Box::pin(async { Err("redaction service unreachable".to_owned()) })
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failing_interceptors_fail_open_by_default_and_closed_when_asked() {
    within(async {
        // Open: the errors are logged and ignored.
        let mut open = Interceptors::new();
        open.add_before("policy", Arc::new(Broken), InterceptorOptions::default());
        open.add_after("redact", Arc::new(Broken), InterceptorOptions::default());
        let (manager, seen, _) = start(McpManager::builder().interceptors(open)).await;
        let result = manager.execute_tool("card", None, RequestOptions::default()).await;
        assert!(result.success, "{result:?}");
        assert_eq!(calls(&seen).len(), 1);
        manager.close().await;

        // Closed before: the call is vetoed, not sent.
        let mut closed = Interceptors::new();
        closed.add_before("policy", Arc::new(Broken), InterceptorOptions::fail_closed());
        let (manager, seen, _) = start(McpManager::builder().interceptors(closed)).await;
        let result = manager.execute_tool("card", None, RequestOptions::default()).await;
        assert!(!result.success);
        let message = result.error_message.unwrap();
        assert!(message.contains("policy service unreachable") && message.contains("fails closed"), "{message}");
        assert!(calls(&seen).is_empty());
        manager.close().await;

        // Closed after: the server's content is withheld, and the host is told why.
        let mut closed = Interceptors::new();
        closed.add_after("redact", Arc::new(Broken), InterceptorOptions::fail_closed());
        let (manager, seen, executed) = start(McpManager::builder().interceptors(closed)).await;
        let result = manager.execute_tool("card", None, RequestOptions::default()).await;
        assert!(!result.success);
        assert_eq!(calls(&seen).len(), 1, "the call itself was made");
        assert!(!result.history_text().contains("4111"), "{}", result.history_text());
        assert!(result.error_message.unwrap().contains("withheld"));
        assert_eq!(result.metadata["withheld_by"], "redact");
        let executed = executed.lock().unwrap().clone();
        assert!(!serde_json::to_string(&executed).unwrap().contains("4111"), "the observers do not see it either");
        manager.close().await;
    })
    .await
}
