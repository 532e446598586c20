//! Tool calls that run as tasks, against real servers no one here wrote: the npm reference
//! server `@modelcontextprotocol/server-everything` (`simulate-research-query`, whose
//! `execution.taskSupport` is `required`, 2025-11-25 tasks) over stdio and streamable HTTP, with
//! and without its elicitation branch, through a connection and through `ToolRegistry::invoke`;
//! and `tests/peers/python/tasks_peer.py`, the tasks extension of 2026-07-28 written on the Python
//! `mcp` SDK's extension interface, over stdio and streamable HTTP (the SDK cannot serve the
//! 2025-11-25 design: see that file); and `tests/peers/python/fastmcp_tasks_peer.py`, whose
//! tasks run on `fastmcp-tasks`, the FastMCP project's runtime of that extension (so the server
//! side of every task exchange there is code no one here wrote), over stdio and streamable HTTP.
//!
//! Same contract as `peers_stdio.rs`: `cargo xtask test` installs the peers into
//! `target/peers/` and runs this file with `MCP_PEERS_DIR` set and `MCP_REQUIRE_PEERS=1`; without
//! `MCP_PEERS_DIR` every test says it skipped and passes. Servers listen on 127.0.0.1 only.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::future::BoxFuture;
use mcp_manager::callbacks::ElicitationHandler;
use mcp_manager::config::McpConfig;
use mcp_manager::connection::tasks::result_task_id;
use mcp_manager::connection::{EraPreference, TaskError, TaskOptions, TaskUpdate, stdio_factory};
use mcp_manager::manager::{ManagerOptions, McpManager, McpToolProvider};
use mcp_manager::{ConnectionError, ConnectionOptions, HostCallbacks, McpConnection, RemoteTarget, RequestOptions};
use mcp_protocol::types::elicitation::{ElicitParams, ElicitResult};
use mcp_protocol::types::tasks::TaskState;
use mcp_protocol::types::tools::CallToolResult;
use mcp_protocol::{ErrorObject, ProtocolVersion};
use mcp_transport::{StdioConfig, TransportKind};
use serde_json::{Value, json};
use tests::peers::{HttpPeer, args, free_port, peer, repo_peer_file};
use tool_system::{ToolExecutionContext, ToolInvocation, ToolRegistry};

/// Each test's whole run, server start-up included.
const TEST_TIMEOUT: Duration = Duration::from_secs(120);

const EVERYTHING: &str = "npm/node_modules/@modelcontextprotocol/server-everything/dist/index.js";
const TOOL: &str = "simulate-research-query";

/// Picks the "snake" reading of every clarification asked, recording the questions.
#[derive(Default)]
struct Clarifier(Mutex<Vec<String>>);

impl ElicitationHandler for Clarifier {
    fn elicit(&self, _server: &str, params: ElicitParams) -> BoxFuture<'static, Result<ElicitResult, ErrorObject>> {
        self.0.lock().unwrap().push(params.message().unwrap_or_default().to_owned());
        let Value::Object(content) = json!({"interpretation": "snake", "answer": "snake"}) else { unreachable!() };
        Box::pin(async move { Ok(ElicitResult::accept(content)) })
    }
}

fn options(name: &str, clarifier: &Arc<Clarifier>) -> ConnectionOptions {
    let mut options = ConnectionOptions::new(name);
    options.callbacks = HostCallbacks { elicitation: Some(clarifier.clone()), ..Default::default() };
    options
}

/// Task options that record every update.
fn recorded() -> (TaskOptions, Arc<Mutex<Vec<TaskUpdate>>>) {
    let updates: Arc<Mutex<Vec<TaskUpdate>>> = Arc::default();
    let log = updates.clone();
    let observer = Arc::new(move |u: &TaskUpdate| {
        println!(
            "  task {} {:?}: {:?} (poll {:?} ms)",
            u.task.task_id, u.task.status, u.task.status_message, u.task.poll_interval
        );
        log.lock().unwrap().push(u.clone());
    });
    (TaskOptions { observer: Some(observer), ..Default::default() }, updates)
}

fn text(result: &CallToolResult) -> String {
    result.content.iter().filter_map(|c| c.as_text()).collect::<Vec<_>>().join("\n")
}

fn long() -> RequestOptions {
    RequestOptions { timeout: Some(Duration::from_secs(60)), ..Default::default() }
}

/// The research task, plain and ambiguous (the server asks which reading is meant, through
/// `tasks/result`, and the host's elicitation handler answers), then a call whose deadline
/// passes: `tasks/cancel` is sent and the server reports the task cancelled.
async fn research(conn: &McpConnection, clarifier: &Clarifier) {
    let info = conn.connect().await.expect("connect to server-everything");
    assert_eq!(info.protocol_version, ProtocolVersion::LATEST_LEGACY);
    assert!(info.capabilities.supports_tool_call_tasks(), "{:?}", info.capabilities);
    let inventory = conn.discover().await.expect("discover");
    let tool = inventory.tools.iter().find(|t| t.name == TOOL).expect("simulate-research-query is listed");
    assert_eq!(tool.execution.as_ref().and_then(|e| e.task_support.as_deref()), Some("required"));

    // Without the elicitation branch: four stages, reported as they pass.
    let t = Instant::now();
    let (task, updates) = recorded();
    let outcome = conn.call_tool_with(TOOL, args(json!({"topic": "rust"})), long(), task).await.expect("research");
    let result = outcome.complete().expect("followed to its end");
    let report = text(&result);
    println!("plain research: {:?}", t.elapsed());
    assert!(report.contains("# Research Report: rust") && !report.contains("Clarification"), "{report}");
    let id = result_task_id(&result).expect("the result names its task");
    {
        let updates = updates.lock().unwrap();
        assert!(updates.iter().all(|u| u.task.task_id == id));
        assert!(updates[0].first);
        let messages: Vec<&str> = updates.iter().filter_map(|u| u.task.status_message.as_deref()).collect();
        assert!(messages.iter().any(|m| m.contains("Analyzing content")), "stages reported: {messages:?}");
        assert_eq!(updates.last().unwrap().task.status, TaskState::Completed);
    }
    assert!(clarifier.0.lock().unwrap().is_empty(), "nothing was ambiguous");
    let listed = conn.list_tasks(None).await.expect("tasks/list");
    assert!(listed.tasks.iter().any(|t| t.task_id == id), "{listed:?}");

    // With it: input_required, answered through the host's handler.
    let (task, updates) = recorded();
    let outcome = conn
        .call_tool_with(TOOL, args(json!({"topic": "python", "ambiguous": true})), long(), task)
        .await
        .expect("ambiguous research");
    let report = text(&outcome.complete().unwrap());
    assert!(report.contains("python (snake)"), "the answer reached the server: {report}");
    let asked = clarifier.0.lock().unwrap().clone();
    assert_eq!(asked.len(), 1, "{asked:?}");
    assert!(asked[0].contains("multiple interpretations"), "{asked:?}");
    let statuses: Vec<TaskState> = updates.lock().unwrap().iter().map(|u| u.task.status.clone()).collect();
    assert!(statuses.contains(&TaskState::InputRequired), "{statuses:?}");

    // The host's deadline passes before the four seconds of research: the task is cancelled.
    let short = RequestOptions { timeout: Some(Duration::from_millis(1500)), ..Default::default() };
    let err = conn.call_tool(TOOL, args(json!({"topic": "slow"})), short).await.unwrap_err();
    let ConnectionError::Task(TaskError::Timeout { task_id, .. }) = &err else { panic!("{err:?}") };
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let state = conn.get_task(task_id).await.expect("tasks/get");
        if state.status == TaskState::Cancelled {
            break;
        }
        assert!(Instant::now() < deadline, "the server never reported the task cancelled: {state:?}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_everything_research_over_stdio() {
    let Some(entry) = peer(EVERYTHING) else { return };
    tokio::time::timeout(TEST_TIMEOUT, async {
        let config = StdioConfig::new("everything", "node", [entry.to_string_lossy().into_owned(), "stdio".into()]);
        let clarifier = Arc::new(Clarifier::default());
        let conn = McpConnection::new(stdio_factory(config), options("everything", &clarifier));
        research(&conn, &clarifier).await;
        conn.close().await;
    })
    .await
    .expect("the test timed out");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_everything_research_over_streamable_http() {
    let Some(entry) = peer(EVERYTHING) else { return };
    tokio::time::timeout(TEST_TIMEOUT, async {
        let port = free_port();
        let loopback = repo_peer_file("loopback.cjs");
        let argv = [
            "--require".to_owned(),
            loopback.display().to_string(),
            entry.display().to_string(),
            "streamableHttp".into(),
        ];
        let server = HttpPeer::start(
            "server-everything (streamableHttp)",
            Path::new("node"),
            &argv,
            &[("PORT", port.to_string())],
            port,
        )
        .await;
        server.assert_loopback_only();
        let clarifier = Arc::new(Clarifier::default());
        let target = RemoteTarget::new(server.url("/mcp")).with_transport(Some(TransportKind::StreamableHttp));
        let conn = McpConnection::remote(&target, options("everything-http", &clarifier)).expect("a remote target");
        research(&conn, &clarifier).await;
        conn.close().await;
        server.stop().await;
    })
    .await
    .expect("the test timed out");
}

/// The host's tool model: one `ToolRegistry::invoke` runs the whole task and returns its result,
/// with the task's id in the metadata, its stages reported to the context's progress sink.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_is_one_tool_invocation() {
    let Some(entry) = peer(EVERYTHING) else { return };
    tokio::time::timeout(TEST_TIMEOUT, async {
        let dir = std::env::temp_dir().join(format!("mcp-peers-tasks-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("mcp.json");
        let config =
            json!({"mcpServers": {"everything": {"command": "node", "args": [entry.to_string_lossy(), "stdio"]}}});
        std::fs::write(&path, config.to_string()).unwrap();
        let config = McpConfig::load(&path).expect("load the config");
        let manager = McpManager::start(config, ManagerOptions::default()).await;
        let registry = ToolRegistry::new();
        registry.register(McpToolProvider::new(manager.clone())).await;
        let reports = Arc::new(Mutex::new(Vec::new()));
        let sink = reports.clone();
        let ctx = ToolExecutionContext::default().with_progress(move |p| sink.lock().unwrap().push(p));
        let name = "everything__simulate-research-query";
        let result = registry.invoke(ToolInvocation::from_value(name, json!({"topic": "tasks"})), ctx).await;
        assert!(result.success, "{:?}", result.error_message);
        assert!(result.history_text().contains("# Research Report: tasks"), "{}", result.history_text());
        let task_id = result.metadata["task_id"].as_str().expect("the task id is reported").to_owned();
        // Along the way, the host's progress sink heard the task's stages, each naming the task
        // (so a host can cancel or resume it before the call returns).
        let reports = reports.lock().unwrap().clone();
        assert!(reports.iter().all(|p| p.metadata["task_id"] == task_id.as_str()), "{reports:?}");
        let messages: Vec<&str> = reports.iter().filter_map(|p| p.message.as_deref()).collect();
        assert!(messages.iter().any(|m| m.contains("Analyzing content")), "{messages:?}");
        assert_eq!(reports.last().unwrap().metadata["task_status"], "completed", "{reports:?}");
        let state = manager.get_task("everything", &task_id).await.expect("tasks/get by server name");
        assert_eq!(state.status, TaskState::Completed);
        registry.close().await;
        let _ = std::fs::remove_dir_all(&dir);
    })
    .await
    .expect("the test timed out");
}

// ---- the Python SDK peer ----

fn python() -> Option<PathBuf> {
    peer("venv/bin/python")
}

/// The Python peer's task tools (2026-07-28 extension): a long job whose steps are reported,
/// input asked for mid-task and answered through the host's handler, a task that fails, and
/// cancellation from the host, which the server sees.
async fn python_tasks(conn: &McpConnection) {
    let info = conn.connect().await.expect("connect to the Python tasks peer");
    assert_eq!(info.protocol_version.era(), Some(mcp_protocol::Era::Modern), "{:?}", info.protocol_version);
    let declared =
        info.capabilities.extensions.as_ref().is_some_and(|e| e.contains_key("io.modelcontextprotocol/tasks"));
    assert!(declared, "the server declares the extension: {:?}", info.capabilities);

    let (task, updates) = recorded();
    let outcome = conn.call_tool_with("long_job", args(json!({"steps": 3})), long(), task).await.expect("long_job");
    let result = outcome.complete().unwrap();
    assert_eq!(text(&result), "done after 3 steps");
    assert!(result_task_id(&result).is_some());
    let messages: Vec<String> = updates.lock().unwrap().iter().filter_map(|u| u.task.status_message.clone()).collect();
    assert!(messages.iter().any(|m| m.starts_with("step ")), "the steps were reported: {messages:?}");

    let outcome = conn.call_tool("ask_job", None, long()).await.expect("ask_job");
    assert_eq!(text(&outcome.complete().unwrap()), "the user chose snake");

    let err = conn.call_tool("failing_job", None, long()).await.unwrap_err();
    let ConnectionError::Task(TaskError::Failed { error: Some(error), .. }) = &err else { panic!("{err:?}") };
    assert_eq!((error.code.0, error.message.as_str()), (-32603, "the job broke"));

    let short = RequestOptions { timeout: Some(Duration::from_millis(800)), ..Default::default() };
    let err = conn.call_tool("long_job", args(json!({"steps": 100})), short).await.unwrap_err();
    let ConnectionError::Task(TaskError::Timeout { task_id, .. }) = &err else { panic!("{err:?}") };
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let outcome = conn.call_tool("was_cancelled", args(json!({"task_id": task_id})), long()).await.unwrap();
        if text(&outcome.complete().unwrap()) == "true" {
            break;
        }
        assert!(Instant::now() < deadline, "the server never saw tasks/cancel for {task_id}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert_eq!(conn.get_task(task_id).await.unwrap().status, TaskState::Cancelled);
}

async fn python_peer(transport: &str) {
    let Some(python) = python() else { return };
    let script = repo_peer_file("python/tasks_peer.py");
    assert!(script.is_file(), "{} is missing", script.display());
    let clarifier = Arc::new(Clarifier::default());
    let mut opts = options("py-tasks", &clarifier);
    opts.era = EraPreference::Modern;
    if transport == "stdio" {
        let argv = [script.display().to_string(), "--transport".into(), "stdio".into()];
        let config = StdioConfig::new("py-tasks", python.to_string_lossy(), argv);
        let conn = McpConnection::new(stdio_factory(config), opts);
        python_tasks(&conn).await;
        conn.close().await;
    } else {
        let port = free_port();
        let argv = [
            script.display().to_string(),
            "--transport".into(),
            "streamable-http".into(),
            "--port".into(),
            port.to_string(),
        ];
        let server = HttpPeer::start("python tasks peer", &python, &argv, &[], port).await;
        server.assert_loopback_only();
        let target = RemoteTarget::new(server.url("/mcp")).with_transport(Some(TransportKind::StreamableHttp));
        let conn = McpConnection::remote(&target, opts).expect("a remote target");
        python_tasks(&conn).await;
        conn.close().await;
        server.stop().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_tasks_over_stdio() {
    tokio::time::timeout(TEST_TIMEOUT, python_peer("stdio")).await.expect("timed out");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_tasks_over_streamable_http() {
    tokio::time::timeout(TEST_TIMEOUT, python_peer("streamable-http")).await.expect("timed out");
}

// ---- the FastMCP tasks runtime (`fastmcp-tasks`) ----

fn fastmcp_tasks_python() -> Option<PathBuf> {
    peer("venv-tasks/bin/python")
}

/// The same four cases against a tasks runtime no one here wrote: `fastmcp-tasks` decides what
/// `tasks/get` reports, how input is asked for and how a failure and a cancellation look.
async fn fastmcp_tasks(conn: &McpConnection, clarifier: &Clarifier) {
    let info = conn.connect().await.expect("connect to the fastmcp-tasks peer");
    assert_eq!(info.protocol_version.era(), Some(mcp_protocol::Era::Modern), "{:?}", info.protocol_version);
    let declared =
        info.capabilities.extensions.as_ref().is_some_and(|e| e.contains_key("io.modelcontextprotocol/tasks"));
    assert!(declared, "the server declares the extension: {:?}", info.capabilities);

    // Progress: each `ctx.report_progress` becomes the task's status message.
    let (task, updates) = recorded();
    let outcome = conn.call_tool_with("long_job", args(json!({"steps": 12})), long(), task).await.expect("long_job");
    let result = outcome.complete().unwrap();
    assert_eq!(text(&result), "done after 12 steps");
    let id = result_task_id(&result).expect("the result names its task");
    {
        let updates = updates.lock().unwrap();
        assert!(updates.iter().all(|u| u.task.task_id == id), "one task");
        let messages: Vec<&str> = updates.iter().filter_map(|u| u.task.status_message.as_deref()).collect();
        assert!(messages.iter().any(|m| m.starts_with("step ") && m.ends_with(" of 12")), "{messages:?}");
        assert_eq!(updates.last().unwrap().task.status, TaskState::Completed);
    }

    // Input mid-task: input_required, answered through the host's elicitation handler.
    let (task, updates) = recorded();
    let outcome = conn.call_tool_with("ask_job", None, long(), task).await.expect("ask_job");
    assert_eq!(text(&outcome.complete().unwrap()), "the user chose snake");
    assert!(clarifier.0.lock().unwrap().iter().any(|q| q == "Which python do you mean?"));
    let statuses: Vec<TaskState> = updates.lock().unwrap().iter().map(|u| u.task.status.clone()).collect();
    assert!(statuses.contains(&TaskState::InputRequired), "{statuses:?}");

    // A failing task: the runtime reports the tool's error as the task's failure or as an
    // error result; either way the host sees a failure that carries the message.
    match conn.call_tool("failing_job", None, long()).await {
        Ok(outcome) => {
            let result = outcome.complete().unwrap();
            assert_eq!(result.is_error, Some(true), "{result:?}");
            assert!(text(&result).contains("the job broke"), "{result:?}");
        }
        Err(ConnectionError::Task(TaskError::Failed { error, message, .. })) => {
            let said = format!("{message} {error:?}");
            assert!(said.contains("the job broke"), "{said}");
        }
        Err(other) => panic!("failing_job: {other:?}"),
    }

    // Cancellation from the host: the deadline passes, `tasks/cancel` is sent, the job sees it.
    let short = RequestOptions { timeout: Some(Duration::from_millis(800)), ..Default::default() };
    let err = conn.call_tool("slow_job", args(json!({"tag": "t1"})), short).await.unwrap_err();
    let ConnectionError::Task(TaskError::Timeout { task_id, .. }) = &err else { panic!("{err:?}") };
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let outcome = conn.call_tool("was_cancelled", args(json!({"tag": "t1"})), long()).await.unwrap();
        if text(&outcome.complete().unwrap()) == "true" {
            break;
        }
        assert!(Instant::now() < deadline, "the job never saw the cancellation of {task_id}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert_eq!(conn.get_task(task_id).await.unwrap().status, TaskState::Cancelled);
}

async fn fastmcp_tasks_peer(transport: &str) {
    let Some(python) = fastmcp_tasks_python() else { return };
    let script = repo_peer_file("python/fastmcp_tasks_peer.py");
    assert!(script.is_file(), "{} is missing", script.display());
    let clarifier = Arc::new(Clarifier::default());
    let mut opts = options("fastmcp-tasks", &clarifier);
    opts.era = EraPreference::Modern;
    if transport == "stdio" {
        let argv = [script.display().to_string(), "--transport".into(), "stdio".into()];
        let config = StdioConfig::new("fastmcp-tasks", python.to_string_lossy(), argv);
        let conn = McpConnection::new(stdio_factory(config), opts);
        fastmcp_tasks(&conn, &clarifier).await;
        conn.close().await;
    } else {
        let port = free_port();
        let argv = [
            script.display().to_string(),
            "--transport".into(),
            "streamable-http".into(),
            "--port".into(),
            port.to_string(),
        ];
        let server = HttpPeer::start("fastmcp-tasks peer", &python, &argv, &[], port).await;
        server.assert_loopback_only();
        let target = RemoteTarget::new(server.url("/mcp")).with_transport(Some(TransportKind::StreamableHttp));
        let conn = McpConnection::remote(&target, opts).expect("a remote target");
        fastmcp_tasks(&conn, &clarifier).await;
        conn.close().await;
        server.stop().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fastmcp_tasks_runtime_over_stdio() {
    tokio::time::timeout(TEST_TIMEOUT, fastmcp_tasks_peer("stdio")).await.expect("timed out");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fastmcp_tasks_runtime_over_streamable_http() {
    tokio::time::timeout(TEST_TIMEOUT, fastmcp_tasks_peer("streamable-http")).await.expect("timed out");
}
