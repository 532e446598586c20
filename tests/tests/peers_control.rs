//! Per-call control through `ToolRegistry::invoke` over `McpToolProvider`, against real peers
//! over stdio, with every message on the wire recorded by a `Transport` wrapper:
//!
//! - server-everything (legacy era), `trigger-long-running-operation`: progress reaches the
//!   context's sink (every step, in order); a context timeout shorter than the operation ends
//!   the call as timed out and `notifications/cancelled` names the call's request id; a
//!   cancellation token ends the call before the server answers, and the cancel is on the wire;
//! - the Python SDK's `MCPServer` (`tests/peers/python/slow_peer.py`) in the modern era and in
//!   the legacy era: a cancellation token ends `sleep` at once, the cancel names its id, and the
//!   server itself counts the cancelled call;
//! - a Codex config with `disabled_tools` and `enabled_tools` for two server-everything
//!   processes: the disabled tools are in no definition and not callable, and only the enabled
//!   ones of the other server are there.
//!
//! Orderings and events are asserted, never durations. Same contract as `peers_stdio.rs`:
//! without `MCP_PEERS_DIR` the tests say they skipped and pass.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::future::BoxFuture;
use mcp_manager::config::{ConfigFormat, McpConfig, ServerConfig};
use mcp_manager::connection::EraPreference;
use mcp_manager::manager::{ManagerError, ManagerOptions, McpManager, McpToolProvider, PlanOverride};
use mcp_manager::{RequestOptions, ServerState, TransportPlan};
use mcp_protocol::{Message, RequestId};
use mcp_transport::{CancelHandling, Transport, TransportError, TransportEvent, TransportKind};
use serde_json::{Value, json};
use tests::peers::{assert_gone, peer, repo_peer_file};
use tool_system::{CancellationToken, ToolExecutionContext, ToolInvocation, ToolProgress, ToolRegistry};

/// The whole of one test, start-up included.
const TEST_TIMEOUT: Duration = Duration::from_secs(120);
/// How long a message may take to show up on the wire once it is due.
const WIRE_WAIT: Duration = Duration::from_secs(10);

const EVERYTHING: &str = "npm/node_modules/@modelcontextprotocol/server-everything/dist/index.js";
const LONG_RUNNING: &str = "everything__trigger-long-running-operation";

// ---------------------------------------------------------------------------------------------
// The wire

/// Which way a message went.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Dir {
    Out,
    In,
}

/// Every message of one server's transports, in order.
#[derive(Clone, Default)]
struct Wire(Arc<Mutex<Vec<(Dir, Message)>>>);

impl Wire {
    fn push(&self, dir: Dir, message: &Message) {
        self.0.lock().unwrap().push((dir, message.clone()));
    }

    fn messages(&self) -> Vec<(Dir, Message)> {
        self.0.lock().unwrap().clone()
    }

    /// The id of the last `tools/call` of `tool` sent.
    fn call_id(&self, tool: &str) -> Option<RequestId> {
        self.messages().into_iter().rev().find_map(|(dir, message)| match message {
            Message::Request(r) if dir == Dir::Out && r.method == "tools/call" && params(&r.params)["name"] == tool => {
                Some(r.id)
            }
            _ => None,
        })
    }

    /// Whether the server answered request `id`.
    fn answered(&self, id: &RequestId) -> bool {
        self.messages()
            .iter()
            .any(|(dir, m)| *dir == Dir::In && matches!(m, Message::Response(r) if r.id.as_ref() == Some(id)))
    }

    /// Whether `notifications/cancelled` for request `id` was sent.
    fn cancelled(&self, id: &RequestId) -> bool {
        let id = serde_json::to_value(id).unwrap();
        self.messages().iter().any(|(dir, m)| {
            *dir == Dir::Out
                && matches!(m, Message::Notification(n) if n.method == "notifications/cancelled" && params(&n.params)["requestId"] == id)
        })
    }

    /// Waits (at most [`WIRE_WAIT`]) until `notifications/cancelled` for `id` was sent.
    async fn wait_cancelled(&self, id: &RequestId) {
        let deadline = tokio::time::Instant::now() + WIRE_WAIT;
        while !self.cancelled(id) {
            assert!(
                tokio::time::Instant::now() < deadline,
                "no notifications/cancelled for {id:?}: {:#?}",
                self.summary()
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    fn summary(&self) -> Vec<String> {
        self.messages()
            .iter()
            .map(|(dir, m)| format!("{dir:?} {}", serde_json::to_string(m).unwrap_or_default()))
            .collect()
    }
}

fn params(raw: &Option<mcp_protocol::RawJson>) -> Value {
    raw.as_ref().and_then(|p| serde_json::from_str(p.get()).ok()).unwrap_or(Value::Null)
}

/// A transport that records every message it carries, around another.
struct Recording {
    inner: Arc<dyn Transport>,
    wire: Wire,
}

impl Transport for Recording {
    fn send(&self, message: Message) -> BoxFuture<'_, Result<(), TransportError>> {
        self.wire.push(Dir::Out, &message);
        self.inner.send(message)
    }

    fn recv(&self) -> BoxFuture<'_, TransportEvent> {
        Box::pin(async move {
            let event = self.inner.recv().await;
            if let TransportEvent::Message(message) = &event {
                self.wire.push(Dir::In, message);
            }
            event
        })
    }

    fn close(&self) -> BoxFuture<'_, ()> {
        self.inner.close()
    }

    fn kind(&self) -> TransportKind {
        self.inner.kind()
    }

    fn diagnostics_tail(&self) -> Vec<String> {
        self.inner.diagnostics_tail()
    }

    fn process_id(&self) -> Option<u32> {
        self.inner.process_id()
    }

    fn session_id(&self) -> Option<String> {
        self.inner.session_id()
    }

    fn cancel_request(&self, id: &RequestId) -> CancelHandling {
        self.inner.cancel_request(id)
    }
}

/// Stdio servers as their configs say, each behind a [`Recording`] of its server's wire.
fn recording_plans(wires: BTreeMap<String, Wire>) -> PlanOverride {
    Arc::new(move |config: &ServerConfig| {
        let wire = wires.get(&config.name)?.clone();
        let stdio = config.stdio_config()?;
        let factory: mcp_manager::TransportFactory = Arc::new(move || {
            let wire = wire.clone();
            let spawned = mcp_transport::StdioTransport::spawn(stdio.clone());
            Box::pin(async move {
                let inner: Arc<dyn Transport> = Arc::new(spawned?);
                Ok(Arc::new(Recording { inner, wire }) as Arc<dyn Transport>)
            })
        });
        Some(TransportPlan::single(factory))
    })
}

// ---------------------------------------------------------------------------------------------
// Hosts

/// A manager over `servers` (every one recorded) with a registry over it.
async fn host(servers: Vec<ServerConfig>) -> (McpManager, ToolRegistry, BTreeMap<String, Wire>) {
    let wires: BTreeMap<String, Wire> = servers.iter().map(|s| (s.name.clone(), Wire::default())).collect();
    let options =
        ManagerOptions { transport_override: Some(recording_plans(wires.clone())), ..ManagerOptions::default() };
    let manager = McpManager::start(McpConfig { servers, ..McpConfig::default() }, options).await;
    for status in manager.status() {
        assert_eq!(status.state, ServerState::Ready, "{status:#?}");
    }
    let registry = ToolRegistry::new();
    registry.register(McpToolProvider::new(manager.clone())).await;
    (manager, registry, wires)
}

/// Closes the manager and checks that no server process is left.
async fn close(manager: McpManager) {
    let pids: Vec<u32> = manager.status().iter().filter_map(|s| s.pid).collect();
    manager.close().await;
    for pid in pids {
        assert_gone(pid).await;
    }
}

fn stdio(name: &str, command: &Path, args: &[String], era: EraPreference) -> ServerConfig {
    let mut config = ServerConfig::new(name);
    config.command = Some(command.display().to_string());
    config.args = args.to_vec();
    config.era = era;
    config.startup_timeout = Duration::from_secs(60);
    config
}

fn everything(name: &str, script: &Path) -> ServerConfig {
    stdio(name, Path::new("node"), &[script.display().to_string(), "stdio".into()], EraPreference::Legacy)
}

/// A sink that keeps every report, and the reports so far.
fn recorder() -> (Arc<Mutex<Vec<ToolProgress>>>, impl Fn(ToolProgress) + Send + Sync + 'static) {
    let seen: Arc<Mutex<Vec<ToolProgress>>> = Arc::default();
    let sink = {
        let seen = seen.clone();
        move |p: ToolProgress| seen.lock().unwrap().push(p)
    };
    (seen, sink)
}

/// A context whose token is cancelled by the first progress report (the call is then surely
/// running on the server), and the reports.
fn cancelled_at_first_report() -> (ToolExecutionContext, Arc<Mutex<Vec<ToolProgress>>>) {
    let token = CancellationToken::new();
    let (seen, keep) = recorder();
    let cancel = token.clone();
    let ctx = ToolExecutionContext::new("session", "chat").with_cancellation(token).with_progress(move |p| {
        keep(p);
        cancel.cancel();
    });
    (ctx, seen)
}

fn call(tool: &str, arguments: Value) -> ToolInvocation {
    ToolInvocation::from_value(tool, arguments)
}

// ---------------------------------------------------------------------------------------------
// server-everything, legacy era

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_everything_gets_progress_timeouts_and_cancellation_from_the_context() {
    let Some(script) = peer(EVERYTHING) else { return };
    tokio::time::timeout(TEST_TIMEOUT, everything_control(script)).await.expect("the test timed out");
}

async fn everything_control(script: PathBuf) {
    let (manager, registry, wires) = host(vec![everything("everything", &script)]).await;
    let wire = &wires["everything"];

    // (a) Progress reaches the sink: every step, increasing, with the total.
    let (seen, sink) = recorder();
    let ctx = ToolExecutionContext::new("session", "chat").with_progress(sink);
    let result = registry.invoke(call(LONG_RUNNING, json!({"duration": 1, "steps": 4})), ctx).await;
    assert!(result.success, "{result:?}");
    assert!(result.history_text().contains("Long running operation completed"), "{}", result.history_text());
    let deadline = tokio::time::Instant::now() + WIRE_WAIT;
    while seen.lock().unwrap().len() < 4 && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let reports: Vec<(Option<f64>, Option<f64>)> = seen.lock().unwrap().iter().map(|p| (p.progress, p.total)).collect();
    assert_eq!(
        reports,
        [(Some(1.0), Some(4.0)), (Some(2.0), Some(4.0)), (Some(3.0), Some(4.0)), (Some(4.0), Some(4.0))]
    );
    let id = wire.call_id("trigger-long-running-operation").expect("the call is on the wire");
    assert!(wire.answered(&id) && !wire.cancelled(&id), "a call that finished is not cancelled");

    // (b) A context timeout shorter than the operation: timed out, and cancelled on the wire.
    let ctx = ToolExecutionContext::new("session", "chat").with_timeout(Duration::from_millis(1500));
    let result = registry.invoke(call(LONG_RUNNING, json!({"duration": 60, "steps": 60})), ctx).await;
    assert!(!result.success && result.is_timed_out(), "{result:?}");
    let id = wire.call_id("trigger-long-running-operation").unwrap();
    assert!(!wire.answered(&id), "the result came before the server's answer");
    wire.wait_cancelled(&id).await;
    println!("timed out: {}; notifications/cancelled for {id:?} sent", result.error_message.unwrap_or_default());

    // (c) A cancellation token ends the call at once: before the server answers, after the
    // first progress report, and the cancel is on the wire.
    let (ctx, seen) = cancelled_at_first_report();
    let result = registry.invoke(call(LONG_RUNNING, json!({"duration": 60, "steps": 60})), ctx).await;
    let id = wire.call_id("trigger-long-running-operation").unwrap();
    assert!(result.is_cancelled(), "{result:?}");
    assert!(!wire.answered(&id), "the call ended before the server answered it");
    let reports = seen.lock().unwrap().len();
    assert!((1..60).contains(&reports), "cancelled after the first of 60 reports, long before the end: {reports}");
    wire.wait_cancelled(&id).await;

    // The connection is fine afterwards.
    let echo =
        registry.invoke(call("everything__echo", json!({"message": "still here"})), ToolExecutionContext::default());
    assert_eq!(echo.await.history_text(), "Echo: still here");
    close(manager).await;
}

// ---------------------------------------------------------------------------------------------
// The Python SDK, both eras

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_sdk_sees_the_cancellation_in_both_eras() {
    let Some(python) = peer("venv/bin/python") else { return };
    tokio::time::timeout(TEST_TIMEOUT, python_cancellation(python)).await.expect("the test timed out");
}

async fn python_cancellation(python: PathBuf) {
    let script = repo_peer_file("python/slow_peer.py");
    assert!(script.is_file(), "{} is missing", script.display());
    let args = [script.display().to_string(), "--transport".into(), "stdio".into()];
    // One manager per era: both servers have the same tool names.
    for (server, era) in [("modern", EraPreference::Modern), ("legacy", EraPreference::Legacy)] {
        let (manager, registry, wires) = host(vec![stdio(server, &python, &args, era)]).await;
        assert_eq!(manager.server_status(server).unwrap().era.as_deref(), Some(server));
        let wire = &wires[server];
        let (ctx, seen) = cancelled_at_first_report();
        let result = registry.invoke(call(&format!("{server}__sleep"), json!({"seconds": 60})), ctx).await;
        assert!(result.is_cancelled(), "{server}: {result:?}");
        let id = wire.call_id("sleep").expect("the call is on the wire");
        assert!(!wire.answered(&id), "{server}: the call ended before the server answered it");
        let reports = seen.lock().unwrap().len();
        assert!((1..10).contains(&reports), "{server}: cancelled after the first of 10 reports: {reports}");
        wire.wait_cancelled(&id).await;

        // The server itself stopped the call (its handler was cancelled, and counted it).
        let deadline = tokio::time::Instant::now() + WIRE_WAIT;
        loop {
            let count = registry
                .invoke(call(&format!("{server}__cancelled_sleeps"), json!({})), ToolExecutionContext::default())
                .await;
            if count.history_text().contains('1') {
                break;
            }
            assert!(tokio::time::Instant::now() < deadline, "{server}: the server never saw the cancel: {count:?}");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        println!("{server} era: cancelled at once; the server counted the cancelled call");
        close(manager).await;
    }
}

// ---------------------------------------------------------------------------------------------
// Tool filters from a config file

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn disabled_tools_are_gone_and_enabled_tools_are_all_there_is() {
    let Some(script) = peer(EVERYTHING) else { return };
    tokio::time::timeout(TEST_TIMEOUT, filters(script)).await.expect("the test timed out");
}

async fn filters(script: PathBuf) {
    let text = format!(
        "[mcp_servers.everything]\ncommand = \"node\"\nargs = [{script:?}, \"stdio\"]\n\
         disabled_tools = [\"echo\", \"get-env\", \"get-sum\"]\n\n\
         [mcp_servers.sums]\ncommand = \"node\"\nargs = [{script:?}, \"stdio\"]\n\
         enabled_tools = [\"get-sum\", \"echo\"]\n",
        script = script.display().to_string()
    );
    let mut config =
        McpConfig::parse(&text, Some(ConfigFormat::CodexToml), "config.toml", &BTreeMap::<String, String>::new())
            .unwrap_or_else(|e| panic!("{e}"));
    for server in &mut config.servers {
        server.era = EraPreference::Legacy;
        server.startup_timeout = Duration::from_secs(60);
    }
    let (manager, registry, _) = host(config.servers).await;
    // `sums` is another server-everything: every tool it keeps is one `everything` disabled,
    // and the ones it drops are no clash with `everything`'s.
    let routing = manager.routing();
    let tool_conflicts: Vec<_> = routing.conflicts().iter().filter(|c| c.what == "tool").collect();
    assert!(tool_conflicts.is_empty(), "{tool_conflicts:?}");
    let ctx = ToolExecutionContext::default();
    let names: Vec<String> = registry
        .llm_definitions(&ctx)
        .await
        .iter()
        .map(|d| d["function"]["name"].as_str().unwrap().to_owned())
        .collect();
    assert!(names.iter().any(|n| n == LONG_RUNNING), "{names:?}");
    for gone in ["everything__echo", "everything__get-env", "everything__get-sum"] {
        assert!(!names.iter().any(|n| n == gone), "{gone} is disabled: {names:?}");
    }
    let sums: Vec<&String> = names.iter().filter(|n| n.starts_with("sums__")).collect();
    assert_eq!(sums, ["sums__echo", "sums__get-sum"], "only the enabled ones, in the server's order");
    assert_eq!(manager.server_status("sums").unwrap().tool_count, 2);

    let result = registry.invoke(call("everything__echo", json!({"message": "x"})), ctx.clone()).await;
    assert_eq!(result.error_message.as_deref(), Some("unknown tool `everything__echo`"));
    let err = manager.call_tool("get-env", None, RequestOptions::default()).await.unwrap_err();
    assert!(matches!(&err, ManagerError::DisabledTool { server, .. } if server == "everything"), "{err:?}");
    // `echo` is disabled in `everything` only: the name goes to `sums`, which enables it.
    let (route, _) = manager
        .call_tool("echo", Some(json!({"message": "hi"}).as_object().unwrap().clone()), RequestOptions::default())
        .await
        .unwrap();
    assert_eq!(&**route.server(), "sums");
    let sum = registry.invoke(call("sums__get-sum", json!({"a": 2, "b": 3})), ctx).await;
    assert!(sum.history_text().contains('5'), "{}", sum.history_text());
    close(manager).await;
}
