//! What a host needs to watch its servers, against scripted servers on in-memory transports
//! whose connections the test lets through one at a time: a start that does not wait for a
//! server that cannot connect, every state change in order without polling (ready →
//! reconnecting → ready), a call for a tool whose server is reconnecting that says so, the
//! registry's change signal, conflicts in the status, a subscriber that never reads, and
//! servers described in code that are checked before anything starts.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use mcp_manager::config::{ClientConfig, McpConfig, ServerConfig};
use mcp_manager::connection::{EraPreference, TransportFactory};
use mcp_manager::manager::{ConflictKind, StatusChange};
use mcp_manager::{
    ErrorKind, ManagerError, McpManager, McpToolProvider, ReconnectPolicy, RequestOptions, ServerState, TransportPlan,
};
use mcp_protocol::{Message, Response};
use mcp_transport::{MemoryTransport, Transport, TransportEvent};
use serde_json::{Value, json};
use test_support::within;
use tokio::sync::{Semaphore, broadcast};
use tool_system::{ToolExecutionContext, ToolInvocation, ToolRegistry};

/// A scripted legacy server that offers `tools`; calling `crash` drops its end of the
/// transport, as a crashed process would.
async fn serve(server: MemoryTransport, tools: Vec<&'static str>) {
    loop {
        let request = match server.recv().await {
            TransportEvent::Message(Message::Request(r)) => r,
            TransportEvent::Message(_) => continue,
            _ => return,
        };
        let params: Value = request.params.as_ref().map(|p| serde_json::from_str(p.get()).unwrap()).unwrap_or_default();
        let result = match request.method.as_str() {
            "initialize" => json!({"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                "serverInfo": {"name": "lab", "version": "1"}}),
            "tools/list" => {
                let listed: Vec<Value> =
                    tools.iter().map(|t| json!({"name": t, "inputSchema": {"type": "object"}})).collect();
                json!({ "tools": listed })
            }
            "tools/call" if params["name"] == "crash" => return,
            "tools/call" => json!({"content": [{"type": "text", "text": format!("ran {}", params["name"])}]}),
            _ => json!({}),
        };
        let raw = mcp_protocol::to_raw(&result).unwrap();
        if server.send(Message::Response(Response::result(request.id.clone(), raw))).await.is_err() {
            return;
        }
    }
}

/// Connections to a scripted server, each let through by one permit of `gate`.
struct Lab {
    gate: Arc<Semaphore>,
    connections: Arc<AtomicUsize>,
    factory: TransportFactory,
}

impl Lab {
    fn new(tools: Vec<&'static str>, open: bool) -> Lab {
        let gate = Arc::new(Semaphore::new(if open { Semaphore::MAX_PERMITS } else { 0 }));
        let connections = Arc::new(AtomicUsize::new(0));
        let (g, c) = (gate.clone(), connections.clone());
        let factory: TransportFactory = Arc::new(move || {
            let (gate, connections, tools) = (g.clone(), c.clone(), tools.clone());
            Box::pin(async move {
                gate.acquire().await.expect("the gate stays open").forget();
                connections.fetch_add(1, Ordering::SeqCst);
                let (client, server) = MemoryTransport::pair();
                tokio::spawn(serve(server, tools));
                Ok(Arc::new(client) as Arc<dyn Transport>)
            })
        });
        Lab { gate, connections, factory }
    }

    fn plan(&self) -> TransportPlan {
        TransportPlan::single(self.factory.clone())
    }
}

fn server(name: &str) -> ServerConfig {
    ServerConfig::stdio(name, "unused: the transport is in memory").era(EraPreference::Legacy)
}

fn quick_reconnect() -> ReconnectPolicy {
    ReconnectPolicy { initial_delay: Duration::from_millis(10), max_delay: Duration::from_millis(50), max_attempts: 5 }
}

async fn next(changes: &mut broadcast::Receiver<StatusChange>) -> (Option<ServerState>, ServerState) {
    let change = changes.recv().await.expect("a status change");
    (change.previous, change.state)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_host_sees_start_loss_and_return_without_polling_and_calls_say_why_a_tool_is_missing() {
    within(async {
        let lab = Lab::new(vec!["echo", "crash"], false);
        let plan = lab.plan();
        // The server cannot connect until the gate opens: `start` must not wait for it.
        let manager = McpManager::builder()
            .server(server("lab"))
            .transport(move |_| Some(plan.clone()))
            .reconnect(quick_reconnect())
            .wait_for_servers(false)
            .start()
            .await
            .unwrap();
        let mut changes = manager.subscribe_status();
        assert_eq!(manager.status()[0].state, ServerState::Starting);
        let registry = ToolRegistry::new();
        registry.register(McpToolProvider::new(manager.clone())).await;
        let mut tool_list = registry.subscribe_changes();
        let ctx = ToolExecutionContext::default();
        assert!(registry.llm_definitions(&ctx).await.is_empty(), "nothing is ready yet");
        let unknown = manager.execute_tool("echo", None, RequestOptions::default()).await;
        assert!(unknown.error_message.unwrap().contains("unknown tool"), "never offered before");

        lab.gate.add_permits(1);
        assert_eq!(next(&mut changes).await, (Some(ServerState::Starting), ServerState::Ready));
        manager.wait_started().await;
        tool_list.changed().await.unwrap();
        let names: Vec<String> =
            registry.llm_tools(&ctx).await.into_iter().map(|t| t.llm_name.into_string()).collect::<Vec<_>>();
        assert_eq!(names, ["lab__echo", "lab__crash"]);

        // The server goes away: the subscriber hears it at once; the next connection waits at
        // the gate, so the server stays `reconnecting` for as long as the test needs.
        let crashed = manager.execute_tool("crash", None, RequestOptions::default()).await;
        assert!(!crashed.success);
        assert_eq!(next(&mut changes).await, (Some(ServerState::Ready), ServerState::Reconnecting));
        tool_list.changed().await.unwrap();
        let during = manager.execute_tool("echo", None, RequestOptions::default()).await;
        assert_eq!(
            during.error_message.as_deref(),
            Some(r#"server "lab" is reconnecting; tool "echo" will be back when it is"#)
        );
        assert_eq!(during.origin.as_ref().and_then(|o| o.namespace.as_deref()), Some("lab"), "{:?}", during.origin);
        // Through the host's registry too: the tool left its listing, but a call of its LLM
        // name still reaches the MCP provider, which says why it is gone.
        assert!(registry.llm_tools(&ctx).await.is_empty(), "the lost server's tools are not offered");
        let through_registry = registry.invoke(ToolInvocation::new("lab__echo", Default::default()), ctx.clone()).await;
        assert_eq!(
            through_registry.error_message.as_deref(),
            Some(r#"server "lab" is reconnecting; tool "echo" will be back when it is"#)
        );
        let error = manager.call_tool("echo", None, RequestOptions::default()).await.unwrap_err();
        assert!(matches!(error, ManagerError::ServerUnavailable { state: ServerState::Reconnecting, .. }), "{error}");
        assert_eq!(error.kind(), ErrorKind::Unavailable);
        assert!(error.kind().is_transient());

        lab.gate.add_permits(1);
        assert_eq!(next(&mut changes).await, (Some(ServerState::Reconnecting), ServerState::Ready));
        let back = manager.execute_tool("echo", None, RequestOptions::default()).await;
        assert!(back.success, "{back:?}");
        assert_eq!(lab.connections.load(Ordering::SeqCst), 2);
        let unknown = manager.execute_tool("nope", None, RequestOptions::default()).await;
        assert!(unknown.error_message.unwrap().contains("unknown tool \"nope\""));

        manager.close().await;
        assert_eq!(next(&mut changes).await, (Some(ServerState::Ready), ServerState::Stopped));
        let stopped = manager.execute_tool("echo", None, RequestOptions::default()).await;
        assert_eq!(stopped.error_message.as_deref(), Some("the MCP manager is closed"), "after close");
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn routing_stays_in_config_order_when_servers_start_in_the_background() {
    within(async {
        // The first server is held at the gate; the second is ready at once. Its clashing tool
        // must not be routed to it in the meantime, and the status says who won what.
        let (first, second) = (Lab::new(vec!["echo", "first_only"], false), Lab::new(vec!["echo", "shell"], true));
        let (plan_a, plan_b) = (first.plan(), second.plan());
        let client = ClientConfig { reserved_tool_names: vec!["shell".into()], ..ClientConfig::default() };
        let manager = McpManager::builder()
            .server(server("first"))
            .server(server("second"))
            .client(client)
            .transport(move |s| Some(if s.name == "first" { plan_a.clone() } else { plan_b.clone() }))
            .wait_for_servers(false)
            .start()
            .await
            .unwrap();
        // Subscribe, then read the status: the second server is ready now or will say so.
        let mut changes = manager.subscribe_status();
        if manager.server_status("second").unwrap().state != ServerState::Ready {
            let ready = changes.recv().await.unwrap();
            assert_eq!((ready.server.as_str(), ready.state), ("second", ServerState::Ready));
        }
        assert_eq!(manager.server_status("first").unwrap().state, ServerState::Starting);
        assert!(manager.routing().tool("echo").is_none(), "held until the first server's attempt ends");
        first.gate.add_permits(1);
        manager.wait_started().await;
        let owner = manager.routing().tool("echo").map(|t| t.server().to_string());
        assert_eq!(owner.as_deref(), Some("first"));
        let status = manager.status();
        let won: Vec<_> = status[0].conflicts.iter().map(|c| (c.name.as_str(), c.server.as_str())).collect();
        assert_eq!(won, [("echo", "second")], "the first server's status shows the name it won");
        let lost: Vec<_> = status[1].conflicts.iter().map(|c| (c.name.as_str(), c.kind.clone())).collect();
        assert_eq!(lost, [("echo", ConflictKind::TakenBy("first".into())), ("shell", ConflictKind::Reserved)]);
        let json = serde_json::to_value(&status[1]).unwrap();
        assert_eq!(json["conflicts"][0]["kind"], "taken_by");
        assert_eq!(json["conflicts"][0]["winner"], "first");
        assert!(json["conflicts"][1]["message"].as_str().unwrap().contains("reserves"), "{json}");
        manager.close().await;
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_subscriber_that_never_reads_holds_nothing_up_and_learns_what_it_missed() {
    within(async {
        let lab = Lab::new(vec!["echo"], true);
        let plan = lab.plan();
        let manager =
            McpManager::builder().server(server("lab")).transport(move |_| Some(plan.clone())).start().await.unwrap();
        let mut sleeper = manager.subscribe_status();
        // Each restart is three changes (stopped, added as starting, ready): more than the
        // channel holds.
        let restarts = mcp_manager::manager::STATUS_CHANNEL_CAPACITY / 3 + 10;
        for _ in 0..restarts {
            assert_eq!(manager.restart("lab").await.unwrap().state, ServerState::Ready);
        }
        match sleeper.recv().await {
            Err(broadcast::error::RecvError::Lagged(missed)) => assert!(missed > 0),
            other => panic!("expected to hear that changes were missed, got {other:?}"),
        }
        // After the gap, the newest changes are still there, in order.
        let last = sleeper.recv().await.unwrap();
        assert_eq!(last.server, "lab");
        manager.close().await;
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn servers_described_in_code_are_checked_before_anything_starts() {
    within(async {
        let started = Arc::new(AtomicUsize::new(0));
        let count = started.clone();
        let error = McpManager::builder()
            .server(ServerConfig::stdio("tools", "  "))
            .server(ServerConfig::http("remote", "ftp://files.example").bearer("t0ps3cret").arg("--x"))
            .server(ServerConfig::stdio("tools", "other"))
            .server(ServerConfig::stdio("draft", "").enabled(false))
            .server(ServerConfig::stdio("slow", "x").startup_timeout(Duration::ZERO))
            .server(ServerConfig::stdio("picky", "x").enabled_tools(["read", " "]).disabled_tools(["read"]))
            .transport(move |_| {
                count.fetch_add(1, Ordering::SeqCst);
                None
            })
            .start()
            .await
            .unwrap_err();
        assert_eq!(error.kind(), ErrorKind::Config);
        let problems: Vec<String> = error.problems().iter().map(ToString::to_string).collect();
        assert_eq!(
            problems,
            [
                r#"server "tools": field "command": blank"#,
                r#"server "remote": field "url": not an http or https URL (scheme "ftp")"#,
                r#"server "remote": field "args": not used by a remote server"#,
                r#"server "slow": field "startup_timeout": must be positive"#,
                r#"server "picky": field "enabled_tools": blank (a tool name is needed)"#,
                r#"server "picky": field "disabled_tools": tool "read" is also enabled (enabled_tools): a tool cannot be both enabled and disabled"#,
                r#"server "tools": field "name": duplicate (another enabled server has this name; disable or rename one)"#,
            ]
        );
        assert!(!error.to_string().contains("t0ps3cret") && !format!("{error:?}").contains("t0ps3cret"));
        assert_eq!(started.load(Ordering::SeqCst), 0, "no server was planned");
    })
    .await
}

#[test]
fn a_server_described_in_code_equals_the_same_server_loaded_from_a_file() {
    let text = r#"{"mcpServers": {
        "files": {"command": "npx", "args": ["-y", "server-filesystem", "/tmp"], "env": {"LOG": "1"}, "cwd": "/srv",
                  "disabledTools": ["write_file"], "toolVisibility": "deferred"},
        "search": {"url": "https://search.example/mcp", "headers": {"X-Team": "core", "Authorization": "Bearer t"}}
    }}"#;
    let env = std::collections::BTreeMap::<String, String>::new();
    let loaded = McpConfig::parse(text, None, "mcp.json", &env).unwrap();
    let built = McpConfig::default()
        .with_server(
            ServerConfig::stdio("files", "npx")
                .args(["-y", "server-filesystem", "/tmp"])
                .env("LOG", "1")
                .cwd("/srv")
                .disabled_tools(["write_file"])
                .tool_visibility(tool_system::ToolVisibility::Deferred),
        )
        .with_server(
            ServerConfig::http("search", "https://search.example/mcp")
                .header("X-Team", "core")
                .header("Authorization", "Bearer t"),
        );
    assert_eq!(loaded, built);
    assert!(built.validate().is_ok() && loaded.validate().is_ok(), "the same rules accept both");
    let debug = format!("{:?}", ServerConfig::http("s", "https://h.example/mcp?key=k3y").bearer("b34rer"));
    assert!(!debug.contains("b34rer") && !debug.contains("k3y"), "{debug}");
}
