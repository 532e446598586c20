//! The many-server manager against real peers, all at once: server-everything, server-filesystem
//! and server-memory over stdio, and the Python SDK's server (`tests/peers/python/http_server.py`)
//! over streamable HTTP, under one `McpManager` started from a desktop `mcpServers` config file
//! loaded with `McpConfig::load`.
//!
//! The host's view is checked end to end: every server ready, every tool listed through a
//! `ToolRegistry` with `McpToolProvider` under a unique name valid for LLM APIs, one call routed to
//! each server through the registry and asserted on what the server really did, results with
//! structured content checked by the manager against the tool's `outputSchema`, and no process
//! left once the manager is closed.
//!
//! Same contract as `peers_stdio.rs`: `cargo xtask peers` installs the peers into `target/peers/`;
//! the test runs with `MCP_PEERS_DIR` set (and `MCP_REQUIRE_PEERS=1` to fail instead of skip when
//! a peer is missing). Without `MCP_PEERS_DIR` it says it skipped and passes.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use mcp_manager::ServerState;
use mcp_manager::config::McpConfig;
use mcp_manager::manager::{ManagerOptions, McpManager, McpToolProvider};
use serde_json::{Value, json};
use test_support::process::wait_until_gone;
use tests::peers::{HttpPeer, TempDir, assert_gone, free_port, peer, repo_peer_file};
use tool_system::{ExposedTool, ToolExecutionContext, ToolExecutionResult, ToolInvocation, ToolRegistry};

/// The whole run, every server's start-up included.
const TEST_TIMEOUT: Duration = Duration::from_secs(120);

const NPM: &str = "npm/node_modules/@modelcontextprotocol";

/// The text of the file the filesystem server is given to read.
const NOTE: &str = "notes from the manager test\nsecond line\n";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_manager_serves_four_real_servers() {
    let Some(everything) = peer(&format!("{NPM}/server-everything/dist/index.js")) else { return };
    let Some(filesystem) = peer(&format!("{NPM}/server-filesystem/dist/index.js")) else { return };
    let Some(memory) = peer(&format!("{NPM}/server-memory/dist/index.js")) else { return };
    let Some(python) = peer("venv/bin/python") else { return };
    let started = Instant::now();
    tokio::time::timeout(TEST_TIMEOUT, run(Peers { everything, filesystem, memory, python }))
        .await
        .expect("the manager test timed out");
    println!("one manager, four real servers: passed in {:?}", started.elapsed());
}

/// Where the provisioned peers are.
struct Peers {
    everything: PathBuf,
    filesystem: PathBuf,
    memory: PathBuf,
    python: PathBuf,
}

/// The config file, in the desktop hosts' `mcpServers` format.
fn desktop_config(peers: &Peers, files: &Path, memory_file: &Path, python_url: &str) -> Value {
    let path = |p: &Path| p.to_string_lossy().into_owned();
    json!({
        "mcpServers": {
            "everything": { "command": "node", "args": [path(&peers.everything), "stdio"] },
            "filesystem": { "command": "node", "args": [path(&peers.filesystem), path(files)] },
            "memory": {
                "command": "node",
                "args": [path(&peers.memory)],
                "env": { "MEMORY_FILE_PATH": path(memory_file) }
            },
            "python": { "type": "http", "url": python_url }
        }
    })
}

async fn run(peers: Peers) {
    let work = TempDir::new("work");
    let files = work.0.join("files");
    std::fs::create_dir(&files).expect("create the served directory");
    let note = files.join("note.txt");
    std::fs::write(&note, NOTE).expect("write the file to serve");
    let memory_file = work.0.join("memory.jsonl");

    let script = repo_peer_file("python/http_server.py");
    assert!(script.is_file(), "{} is missing", script.display());
    let port = free_port();
    let argv = [script.display().to_string(), "--port".to_owned(), port.to_string()];
    let python = HttpPeer::start("python mcp server", &peers.python, &argv, &[], port).await;
    python.assert_loopback_only();

    let config_path = work.0.join("claude_desktop_config.json");
    let config = desktop_config(&peers, &files, &memory_file, &python.url("/mcp"));
    std::fs::write(&config_path, serde_json::to_string_pretty(&config).unwrap()).expect("write the config file");
    let config = McpConfig::load(&config_path).unwrap_or_else(|e| panic!("load {}: {e}", config_path.display()));
    let names: Vec<&str> = config.servers.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["everything", "filesystem", "memory", "python"], "file order is kept");

    let t = Instant::now();
    let manager = McpManager::start(config, ManagerOptions::default()).await;
    println!("all four settled after {:?}", t.elapsed());
    let status = manager.status();
    for s in &status {
        println!(
            "{}: {} over {}, {}, {} tools, pid {:?}",
            s.name,
            s.state,
            s.transport,
            s.protocol_version.as_deref().unwrap_or("-"),
            s.tool_count,
            s.pid
        );
        assert_eq!(s.state, ServerState::Ready, "{s:#?}");
        assert!(s.tool_count > 0, "{s:#?}");
        assert!(s.warnings.is_empty(), "{s:#?}");
    }
    let transports: Vec<&str> = status.iter().map(|s| s.transport.as_str()).collect();
    assert_eq!(transports, ["stdio", "stdio", "stdio", "streamable_http"]);
    let pids: Vec<u32> = status.iter().take(3).map(|s| s.pid.expect("a stdio server has a pid")).collect();
    assert_eq!(status[3].pid, None, "a remote server has no process of ours");
    let conflicts = manager.routing().conflicts().to_vec();
    assert!(conflicts.is_empty(), "these four servers share no tool name: {conflicts:?}");

    let registry = ToolRegistry::new();
    registry.register(McpToolProvider::new(manager.clone())).await;
    let ctx = ToolExecutionContext::default();
    let tools = registry.tools(&ctx).await;
    check_names(&tools, &manager);
    let definitions = registry.llm_definitions(&ctx).await;
    assert_eq!(definitions.len(), tools.len(), "every tool is visible, and none is deferred");

    everything_echo(&registry, &ctx).await;
    filesystem_calls(&registry, &tools, &ctx, &files).await;
    memory_calls(&registry, &ctx, &memory_file).await;
    python_add(&registry, &tools, &ctx).await;

    // The registry closes its providers, and McpToolProvider closes the manager.
    registry.close().await;
    assert!(manager.is_closed());
    for pid in pids {
        wait_until_gone(pid, Duration::from_secs(10)).await.unwrap_or_else(|e| panic!("after close: {e}"));
        assert_gone(pid).await;
    }
    assert!(manager.status().iter().all(|s| s.state == ServerState::Stopped), "{:#?}", manager.status());
    assert!(manager.routing().tools().is_empty());
    python.stop().await;
}

/// Every tool is listed once, under a unique LLM-valid name qualified by its server, and the
/// registry lists exactly what the manager routes.
fn check_names(tools: &[ExposedTool], manager: &McpManager) {
    let valid =
        |n: &str| (1..=64).contains(&n.len()) && n.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    let mut seen = HashSet::new();
    for tool in tools {
        assert!(valid(&tool.llm_name), "not a valid LLM tool name: {:?}", tool.llm_name);
        assert!(seen.insert(tool.llm_name.as_str()), "{:?} is listed twice", tool.llm_name);
        let server = tool.spec.namespace.as_deref().expect("an MCP tool carries its server as namespace");
        assert!(tool.llm_name.starts_with(&format!("{server}__")), "{:?} of {server}", tool.llm_name);
        assert_eq!(tool.provider, "mcp");
    }
    let routed = manager.routing().tools().len();
    let counted: usize = manager.status().iter().map(|s| s.tool_count).sum();
    assert_eq!((tools.len(), routed), (counted, counted));
    for server in ["everything", "filesystem", "memory", "python"] {
        let n = tools.iter().filter(|t| t.spec.namespace.as_deref() == Some(server)).count();
        println!("{server}: {n} tools listed");
    }
}

/// Invoke the tool exposed as `llm_name` through the registry; it must succeed.
async fn invoke(
    registry: &ToolRegistry,
    ctx: &ToolExecutionContext,
    llm_name: &str,
    args: Value,
) -> ToolExecutionResult {
    let result = registry.invoke(ToolInvocation::from_value(llm_name, args), ctx.clone()).await;
    assert!(result.success, "{llm_name} failed: {:?}", result.error_message);
    result
}

fn spec<'a>(tools: &'a [ExposedTool], llm_name: &str) -> &'a ExposedTool {
    tools.iter().find(|t| t.llm_name == llm_name).unwrap_or_else(|| panic!("no tool {llm_name} is listed"))
}

async fn everything_echo(registry: &ToolRegistry, ctx: &ToolExecutionContext) {
    let result = invoke(registry, ctx, "everything__echo", json!({"message": "routed by the manager"})).await;
    assert_eq!(result.history_text(), "Echo: routed by the manager");
    assert_eq!(result.origin.as_ref().and_then(|o| o.namespace.as_deref()), Some("everything"), "{:?}", result.origin);
}

async fn filesystem_calls(registry: &ToolRegistry, tools: &[ExposedTool], ctx: &ToolExecutionContext, files: &Path) {
    // Both tools declare an outputSchema; the manager checked each result against it (a result
    // that did not match would have failed), so these successes are validated ones.
    for name in ["filesystem__read_text_file", "filesystem__list_directory"] {
        let schema = spec(tools, name).spec.output_schema.as_ref();
        assert!(schema.is_some_and(|s| s["properties"]["content"].is_object()), "{name}: outputSchema {schema:?}");
    }
    let note = files.join("note.txt").to_string_lossy().into_owned();
    let read = invoke(registry, ctx, "filesystem__read_text_file", json!({"path": note})).await;
    assert_eq!(read.content.as_deref(), Some(NOTE));
    assert_eq!(read.structured_content, Some(json!({"content": NOTE})));
    assert_eq!(read.origin.as_ref().and_then(|o| o.namespace.as_deref()), Some("filesystem"), "{:?}", read.origin);
    let listing = invoke(registry, ctx, "filesystem__list_directory", json!({"path": files})).await;
    assert_eq!(listing.content.as_deref(), Some("[FILE] note.txt"));
    assert_eq!(listing.structured_content, Some(json!({"content": "[FILE] note.txt"})));
    // Outside the served directory: the server's error, as a failed result with its message.
    let outside = registry
        .invoke(ToolInvocation::from_value("filesystem__read_text_file", json!({"path": "/etc/hostname"})), ctx.clone())
        .await;
    assert!(!outside.success, "{outside:?}");
    assert!(outside.error_message.as_deref().is_some_and(|m| m.contains("denied")), "{outside:?}");
}

async fn memory_calls(registry: &ToolRegistry, ctx: &ToolExecutionContext, memory_file: &Path) {
    let entities = json!({"entities": [
        {"name": "Grace_Hopper", "entityType": "person", "observations": ["Wrote the first compiler"]},
    ]});
    invoke(registry, ctx, "memory__create_entities", entities).await;
    let graph = invoke(registry, ctx, "memory__read_graph", json!({})).await;
    let graph = graph.structured_content.expect("read_graph has structured content");
    assert_eq!(graph["entities"][0]["name"], "Grace_Hopper", "{graph}");
    assert_eq!(graph["entities"][0]["observations"], json!(["Wrote the first compiler"]), "{graph}");
    let stored = std::fs::read_to_string(memory_file).expect("the server wrote its memory file");
    assert!(stored.contains("Grace_Hopper"), "{stored}");
}

async fn python_add(registry: &ToolRegistry, tools: &[ExposedTool], ctx: &ToolExecutionContext) {
    assert!(spec(tools, "python__add").spec.output_schema.is_some(), "the SDK declares add's output schema");
    let sum = invoke(registry, ctx, "python__add", json!({"a": 40, "b": 2})).await;
    assert_eq!(sum.history_text(), "42");
    assert_eq!(sum.structured_content, Some(json!({"result": 42})));
    assert_eq!(sum.origin.as_ref().and_then(|o| o.namespace.as_deref()), Some("python"), "{:?}", sum.origin);
    let greeting = invoke(registry, ctx, "python__greet", json!({"name": "manager"})).await;
    assert_eq!(greeting.history_text(), "Hello, manager!");
}
