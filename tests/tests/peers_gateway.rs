//! Scale-out through a real gateway: FastMCP's proxy (`fastmcp` 4.2.3, `create_proxy`, see
//! `tests/peers/python/gateway_peer.py`) in front of three stdio servers — the reference servers
//! server-everything and server-memory, and a FastMCP server — reached over streamable HTTP by
//! several `McpManager`s at once, one per simulated user, in both protocol eras, through a gateway
//! that keeps sessions and through one that serves statelessly.
//!
//! What it proves, per gateway and era:
//! - each manager negotiates its own era through the gateway and lists the backends' tools
//!   (FastMCP names them `<backend>_<tool>`; the manager qualifies them with its server name);
//! - calls from all users run concurrently, each routed through one registry to the right
//!   backend, and every answer comes back to the user who asked (checked on content unique to the
//!   caller: no answer lost, none crossed);
//! - prompts and resources pass through the gateway too;
//! - the backends are shared: what one user writes to server-memory, another user reads.
//!
//! Same contract as `peers_stdio.rs`: `cargo xtask peers` installs the peers into `target/peers/`;
//! the test runs with `MCP_PEERS_DIR` set (`MCP_REQUIRE_PEERS=1` fails instead of skipping).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use futures::future::join_all;
use mcp_manager::config::ServerConfig;
use mcp_manager::connection::EraPreference;
use mcp_manager::{McpManager, McpToolProvider, ServerState};
use serde_json::{Value, json};
use tests::peers::{HttpPeer, TempDir, free_port, peer, repo_peer_file};
use tool_system::{ToolExecutionContext, ToolInvocation, ToolRegistry};

/// The whole run: two gateways start (each starting its three backends), then the users.
const TEST_TIMEOUT: Duration = Duration::from_secs(240);

/// Simulated users per era and gateway.
const USERS: usize = 3;

/// Calls each user has in flight at once.
const CALLS_PER_USER: usize = 8;

const NPM: &str = "npm/node_modules/@modelcontextprotocol";

/// The modern revision and the legacy one the gateway negotiates.
const MODERN: &str = "2026-07-28";
const LEGACY: &str = "2025-11-25";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn several_managers_share_a_fastmcp_gateway_in_both_eras() {
    let Some(everything) = peer(&format!("{NPM}/server-everything/dist/index.js")) else { return };
    let Some(memory) = peer(&format!("{NPM}/server-memory/dist/index.js")) else { return };
    let Some(python) = peer("venv/bin/python") else { return };
    let started = Instant::now();
    tokio::time::timeout(TEST_TIMEOUT, run(Peers { everything, memory, python }))
        .await
        .expect("the gateway test timed out");
    println!("gateway scale-out: passed in {:?}", started.elapsed());
}

struct Peers {
    everything: PathBuf,
    memory: PathBuf,
    python: PathBuf,
}

/// The gateway's backends, in the `mcpServers` format `gateway_peer.py` takes.
fn backends(peers: &Peers, memory_file: &Path) -> Value {
    let path = |p: &Path| p.to_string_lossy().into_owned();
    let fastmcp = repo_peer_file("python/fastmcp_peer.py");
    assert!(fastmcp.is_file(), "{} is missing", fastmcp.display());
    json!({"mcpServers": {
        "everything": {"command": "node", "args": [path(&peers.everything), "stdio"]},
        "memory": {
            "command": "node",
            "args": [path(&peers.memory)],
            "env": {"MEMORY_FILE_PATH": path(memory_file), "PATH": std::env::var("PATH").unwrap_or_default()}
        },
        "py": {"command": path(&peers.python), "args": [path(&fastmcp), "--transport", "stdio"]}
    }})
}

async fn start_gateway(name: &'static str, peers: &Peers, memory_file: &Path, stateless: bool) -> HttpPeer {
    let script = repo_peer_file("python/gateway_peer.py");
    assert!(script.is_file(), "{} is missing", script.display());
    let port = free_port();
    let mut argv = vec![
        script.display().to_string(),
        "--port".to_owned(),
        port.to_string(),
        "--backends".to_owned(),
        backends(peers, memory_file).to_string(),
    ];
    if stateless {
        argv.push("--stateless".to_owned());
    }
    let gateway = HttpPeer::start(name, &peers.python, &argv, &[], port).await;
    gateway.assert_loopback_only();
    gateway
}

async fn run(peers: Peers) {
    let work = TempDir::new("gateway");
    let sessions_memory = work.0.join("memory-sessions.jsonl");
    let stateless_memory = work.0.join("memory-stateless.jsonl");
    let (with_sessions, stateless) = tokio::join!(
        start_gateway("gateway with sessions", &peers, &sessions_memory, false),
        start_gateway("stateless gateway", &peers, &stateless_memory, true),
    );
    for (gateway, label) in [(&with_sessions, "sessions"), (&stateless, "stateless")] {
        let url = gateway.url("/mcp");
        let eras = [(EraPreference::Legacy, LEGACY), (EraPreference::Modern, MODERN)];
        // server-memory rewrites its whole file on each write without a lock, so two writes at
        // once can lose one (seen here: two of six entities gone): the users take turns for that
        // one call, everything else runs at once.
        let memory_turn = tokio::sync::Mutex::new(());
        let users = eras.iter().flat_map(|&(era, version)| {
            let (url, turn) = (url.clone(), &memory_turn);
            (0..USERS).map(move |n| user(url.clone(), turn, label, era, version, n))
        });
        let written: Vec<String> = join_all(users).await.into_iter().collect();
        assert_eq!(written.len(), 2 * USERS);
        // The backends are shared: a new user sees what every user wrote to server-memory.
        let reader = connect(&url, EraPreference::Auto, MODERN).await;
        let (registry, ctx) = registry_of(&reader).await;
        let graph = invoke(&registry, &ctx, "gateway__memory_read_graph", json!({})).await;
        let names: Vec<&str> =
            graph["entities"].as_array().into_iter().flatten().filter_map(|e| e["name"].as_str()).collect();
        for name in &written {
            assert!(names.contains(&name.as_str()), "{label}: {name} is not in the shared graph {names:?}");
        }
        registry.close().await;
        println!(
            "{label}: {} users in two eras, {} tool calls, a prompt and a resource each, all answered",
            2 * USERS,
            2 * CALLS_PER_USER + 1
        );
    }
    with_sessions.stop().await;
    stateless.stop().await;
}

/// A manager with the gateway as its one server, in `era`; it must be ready in `version`.
async fn connect(url: &str, era: EraPreference, version: &str) -> McpManager {
    let manager = McpManager::builder()
        .server(ServerConfig::http("gateway", url).era(era))
        .start()
        .await
        .expect("a valid config");
    let status = manager.server_status("gateway").expect("the gateway's status");
    assert_eq!(status.state, ServerState::Ready, "{status:#?}");
    assert_eq!(status.protocol_version.as_deref(), Some(version), "{status:#?}");
    assert_eq!(status.transport, "streamable_http");
    manager
}

async fn registry_of(manager: &McpManager) -> (ToolRegistry, ToolExecutionContext) {
    let registry = ToolRegistry::new();
    registry.register(McpToolProvider::new(manager.clone())).await;
    (registry, ToolExecutionContext::default())
}

/// The structured content (or the text) of a call that must succeed.
async fn invoke(registry: &ToolRegistry, ctx: &ToolExecutionContext, llm_name: &str, args: Value) -> Value {
    let result = registry.invoke(ToolInvocation::from_value(llm_name, args), ctx.clone()).await;
    assert!(result.success, "{llm_name} failed: {:?}", result.error_message);
    assert_eq!(result.origin.as_ref().and_then(|o| o.namespace.as_deref()), Some("gateway"), "{:?}", result.origin);
    match result.structured_content {
        Some(structured) => structured,
        None => Value::String(result.history_text()),
    }
}

/// One simulated user: its own manager and registry, `CALLS_PER_USER` echo and add calls in
/// flight at once, a prompt, a resource and one entity written to the shared memory server.
/// Returns the entity's name.
async fn user(
    url: String,
    memory_turn: &tokio::sync::Mutex<()>,
    label: &'static str,
    era: EraPreference,
    version: &'static str,
    n: usize,
) -> String {
    let who = format!("{label}-{version}-user{n}");
    let manager = connect(&url, era, version).await;
    let (registry, ctx) = registry_of(&manager).await;
    let tools: Vec<String> = registry.tools(&ctx).await.into_iter().map(|t| t.llm_name.into_string()).collect();
    for wanted in ["gateway__everything_echo", "gateway__py_add", "gateway__memory_create_entities"] {
        assert!(tools.iter().any(|t| t == wanted), "{who}: {wanted} is not listed: {tools:?}");
    }

    let echoes = (0..CALLS_PER_USER).map(|k| {
        let (registry, ctx, who) = (&registry, &ctx, &who);
        async move {
            let message = format!("{who} call {k}");
            let answer = invoke(registry, ctx, "gateway__everything_echo", json!({"message": message})).await;
            assert_eq!(answer, Value::String(format!("Echo: {message}")), "{who}: an answer crossed or was lost");
        }
    });
    let sums = (0..CALLS_PER_USER).map(|k| {
        let (registry, ctx, who) = (&registry, &ctx, &who);
        async move {
            let (a, b) = (1000 * (n as i64 + 1) + k as i64, version.len() as i64 * k as i64);
            let answer = invoke(registry, ctx, "gateway__py_add", json!({"a": a, "b": b})).await;
            assert_eq!(answer, json!({"result": a + b}), "{who}: add({a}, {b})");
        }
    });
    tokio::join!(join_all(echoes), join_all(sums));

    let (server, prompt) = manager
        .get_prompt("py_summarize", BTreeMap::from([("topic".to_owned(), who.clone())]))
        .await
        .unwrap_or_else(|e| panic!("{who}: get_prompt: {e}"));
    assert_eq!(&*server, "gateway");
    let prompt = serde_json::to_value(&prompt).expect("a prompt encodes");
    assert!(prompt.to_string().contains(&format!("Summarize {who}")), "{who}: {prompt}");
    let (_, motd) = manager.read_resource("fastmcp://py/motd").await.unwrap_or_else(|e| panic!("{who}: read: {e}"));
    assert!(serde_json::to_string(&motd).unwrap().contains("message of the day"), "{who}: {motd:?}");

    let entity = who.replace(['-', '.'], "_");
    let entities = json!({"entities": [{"name": entity, "entityType": "user", "observations": [who]}]});
    {
        let _turn = memory_turn.lock().await;
        invoke(&registry, &ctx, "gateway__memory_create_entities", entities).await;
    }
    registry.close().await;
    assert!(manager.is_closed());
    entity
}
