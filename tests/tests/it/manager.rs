//! The many-server manager against several real processes (the scriptable `fake-mcp-server`):
//! deterministic routing under random start-up delays, reserved names, clashes and duplicates,
//! a server that fails to start, one that crashes later (state, reconnect, routing restored),
//! list_changed refresh, hot reload by diff, hooks, and no process left after close.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_manager::config::{McpConfig, ServerConfig};
use mcp_manager::manager::hooks::ManagerEvent;
use mcp_manager::manager::{ConflictKind, Hooks, ManagerOptions, McpManager, McpToolProvider, ReconnectPolicy};
use mcp_manager::{RequestOptions, ServerState};
use serde_json::json;
use test_support::process::wait_until_gone;
use test_support::within;
use tool_system::{ToolExecutionContext, ToolInvocation, ToolRegistry};

fn fake(name: &str, flags: &[&str]) -> ServerConfig {
    tests::fake::server_config(name, env!("CARGO_BIN_EXE_fake-mcp-server"), flags)
}

fn config(servers: Vec<ServerConfig>) -> McpConfig {
    McpConfig { servers, client: Default::default() }
}

fn fast_reconnect() -> ManagerOptions {
    ManagerOptions {
        reconnect: ReconnectPolicy {
            initial_delay: Duration::from_millis(50),
            max_delay: Duration::from_millis(200),
            max_attempts: 3,
        },
        ..Default::default()
    }
}

fn tool_owners(manager: &McpManager) -> Vec<(String, String)> {
    manager.routing().tools().iter().map(|t| (t.tool().name.clone(), t.server().to_string())).collect()
}

async fn wait_for(manager: &McpManager, what: &str, mut ok: impl FnMut(&McpManager) -> bool) {
    let mut changes = manager.subscribe_changes();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    while !ok(manager) {
        let left = deadline.saturating_duration_since(tokio::time::Instant::now());
        let _ = tokio::time::timeout(left.min(Duration::from_millis(100)), changes.changed()).await;
        assert!(tokio::time::Instant::now() < deadline, "timed out waiting for {what}: {:#?}", manager.status());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn routing_follows_config_order_whatever_the_start_up_delays() {
    within(async {
        // The first server in config order starts last, yet keeps every clashing name.
        let servers = vec![
            fake("alpha", &["--tools", "3", "--start-delay-ms", "400"]),
            fake("beta", &["--tools", "5", "--start-delay-ms", "0"]),
            fake("gamma", &["--start-delay-ms", "150", "--duplicate-tool"]),
        ];
        let manager = McpManager::start(config(servers), ManagerOptions::default()).await;
        let owners = tool_owners(&manager);
        let expected: Vec<(String, String)> = [
            ("tool-0000", "alpha"),
            ("tool-0001", "alpha"),
            ("tool-0002", "alpha"),
            ("tool-0003", "beta"),
            ("tool-0004", "beta"),
        ]
        .iter()
        .map(|(t, s)| (t.to_string(), s.to_string()))
        .chain(["echo", "add", "slow", "huge", "stats", "fail"].iter().map(|t| (t.to_string(), "gamma".to_string())))
        .collect();
        assert_eq!(owners, expected);
        let conflicts = manager.routing().conflicts().to_vec();
        let clash: Vec<_> = conflicts
            .iter()
            .filter(|c| c.kind == ConflictKind::TakenBy("alpha".into()))
            .map(|c| c.name.as_str())
            .collect();
        assert_eq!(clash, ["tool-0000", "tool-0001", "tool-0002"], "beta loses the clash, reported");
        assert!(
            conflicts
                .iter()
                .any(|c| c.server == "gamma" && c.kind == ConflictKind::DuplicateInServer && c.name == "echo")
        );
        assert!(conflicts[0].to_string().contains("earlier in the config"), "{}", conflicts[0]);
        for s in manager.status() {
            assert_eq!(s.state, ServerState::Ready, "{s:?}");
            assert!(s.pid.is_some());
        }
        let counts: Vec<_> = manager.status().iter().map(|s| s.tool_count).collect();
        assert_eq!(counts, [3, 2, 6]);
        let pids: Vec<u32> = manager.status().iter().filter_map(|s| s.pid).collect();
        manager.close().await;
        for pid in pids {
            wait_until_gone(pid, Duration::from_secs(10)).await.unwrap();
        }
        assert!(manager.status().iter().all(|s| s.state == ServerState::Stopped));
        assert!(manager.routing().tools().is_empty());
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reserved_names_are_never_taken_and_a_failing_server_breaks_nothing() {
    within(async {
        let mut cfg = config(vec![
            fake("broken", &["--fail-initialize", "--stderr-lines", "2"]),
            {
                let mut s = ServerConfig::new("missing");
                s.command = Some("/nonexistent/mcp-server".into());
                s
            },
            fake("good", &[]),
        ]);
        cfg.client.reserved_tool_names = vec!["echo".into()];
        let manager = McpManager::start(cfg, ManagerOptions::default()).await;
        let status = manager.status();
        assert_eq!(status[0].state, ServerState::Failed);
        assert!(status[0].last_error.as_deref().unwrap().contains("broken"), "{:?}", status[0]);
        assert_eq!(status[1].state, ServerState::Failed);
        assert!(status[1].last_error.as_deref().unwrap().contains("/nonexistent/mcp-server"), "{:?}", status[1]);
        assert_eq!(status[2].state, ServerState::Ready);
        let routing = manager.routing();
        assert!(routing.tool("echo").is_none(), "reserved by the host");
        assert!(routing.conflicts().iter().any(|c| c.kind == ConflictKind::Reserved && c.name == "echo"));
        let (route, result) = manager
            .call_tool("add", Some(json!({"a": 2, "b": 3}).as_object().unwrap().clone()), RequestOptions::default())
            .await
            .unwrap();
        assert_eq!(&**route.server(), "good");
        assert_eq!(result.structured_content.unwrap()["sum"].as_f64(), Some(5.0));
        let unknown = manager.execute_tool("echo", None, RequestOptions::default()).await;
        assert!(!unknown.success);
        assert!(unknown.error_message.unwrap().contains("unknown tool \"echo\""));
        manager.close().await;
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crashed_server_is_noticed_reconnected_and_routed_again() {
    within(async {
        let manager = McpManager::start(config(vec![fake("crashy", &["--crash-after", "0"])]), fast_reconnect()).await;
        let first_pid = manager.status()[0].pid.unwrap();
        // The first call kills the server: the call fails, the state changes at once.
        let result = manager
            .execute_tool("echo", Some(json!({"text": "x"}).as_object().unwrap().clone()), RequestOptions::default())
            .await;
        assert!(!result.success);
        assert!(!result.error_message.as_deref().unwrap_or_default().is_empty());
        wait_for(&manager, "a new process", |m| {
            let s = &m.status()[0];
            s.state == ServerState::Ready && s.pid.is_some_and(|p| p != first_pid)
        })
        .await;
        wait_until_gone(first_pid, Duration::from_secs(10)).await.unwrap();
        let status = &manager.status()[0];
        assert!(manager.routing().tool("echo").is_some(), "routing restored");
        assert!(status.last_error.is_none(), "cleared once ready again: {status:?}");
        manager.close().await;
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_changed_refreshes_the_routing_and_the_registry() {
    within(async {
        let manager =
            McpManager::start(config(vec![fake("growing", &["--list-changed"])]), ManagerOptions::default()).await;
        let registry = ToolRegistry::new();
        registry.register(McpToolProvider::new(manager.clone())).await;
        let ctx = ToolExecutionContext::default();
        let names = |tools: Vec<tool_system::ExposedTool>| {
            tools.into_iter().map(|t| t.llm_name.into_string()).collect::<Vec<_>>()
        };
        assert!(!names(registry.tools(&ctx).await).contains(&"growing__late-tool".to_string()));
        let invocation = ToolInvocation::from_value("growing__echo", json!({"text": "hello"}));
        let result = registry.invoke(invocation, ctx.clone()).await;
        assert!(result.success, "{result:?}");
        assert_eq!(result.content.as_deref(), Some("hello"));
        assert_eq!(result.origin.as_ref().and_then(|o| o.namespace.as_deref()), Some("growing"), "{:?}", result.origin);
        wait_for(&manager, "late-tool", |m| m.routing().tool("late-tool").is_some()).await;
        assert!(names(registry.tools(&ctx).await).contains(&"growing__late-tool".to_string()));
        registry.close().await;
        assert!(manager.is_closed(), "closing the registry closes the provider's manager");
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hot_reload_keeps_unchanged_servers_and_their_processes() {
    within(async {
        let manager = McpManager::start(
            config(vec![fake("keep", &[]), fake("change", &["--tools", "2"]), fake("drop", &["--prompts"])]),
            ManagerOptions::default(),
        )
        .await;
        let pid = |m: &McpManager, name: &str| m.server_status(name).and_then(|s| s.pid);
        let (keep, change, dropped) =
            (pid(&manager, "keep").unwrap(), pid(&manager, "change").unwrap(), pid(&manager, "drop").unwrap());
        assert!(manager.routing().prompt("greet").is_some());
        let report = manager
            .apply_config(config(vec![
                fake("added", &["--resources"]),
                fake("keep", &[]),
                fake("change", &["--tools", "4"]),
            ]))
            .await;
        assert_eq!(report.unchanged, ["keep"]);
        assert_eq!(report.added, ["added"]);
        assert_eq!(report.restarted, ["change"]);
        assert_eq!(report.removed, ["drop"]);
        assert_eq!(pid(&manager, "keep"), Some(keep), "an unchanged server keeps its process");
        assert_ne!(pid(&manager, "change"), Some(change));
        wait_until_gone(change, Duration::from_secs(10)).await.unwrap();
        wait_until_gone(dropped, Duration::from_secs(10)).await.unwrap();
        let names: Vec<_> = manager.status().into_iter().map(|s| s.name).collect();
        assert_eq!(names, ["added", "keep", "change"], "the new config's order");
        assert!(manager.routing().prompt("greet").is_none());
        assert_eq!(manager.server_status("change").unwrap().tool_count, 4);
        let (server, read) = manager.read_resource("fake://items/42").await.unwrap();
        assert_eq!(&*server, "added", "a concrete uri routed by its template");
        assert!(!read.contents.is_empty());
        let pids: Vec<u32> = manager.status().iter().filter_map(|s| s.pid).collect();
        manager.close().await;
        for pid in pids {
            wait_until_gone(pid, Duration::from_secs(10)).await.unwrap();
        }
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hooks_see_connections_and_calls_and_a_panicking_observer_breaks_nothing() {
    within(async {
        let events: Arc<Mutex<Vec<ManagerEvent>>> = Arc::default();
        let seen = events.clone();
        let hooks = Hooks::default()
            .with(move |e: &ManagerEvent| {
                seen.lock().unwrap().push(e.clone());
                Ok(())
            })
            .with(|_: &ManagerEvent| -> Result<(), String> { panic!("observer bug") })
            .with(|_: &ManagerEvent| Err("observer refuses".to_string()));
        let options = ManagerOptions { hooks, ..Default::default() };
        let manager = McpManager::start(config(vec![fake("obs", &["--prompts", "--resources"])]), options).await;
        let args = json!({"text": "hi", "api_key": "sk-123", "nested": {"password": "p"}});
        let result =
            manager.execute_tool("echo", Some(args.as_object().unwrap().clone()), RequestOptions::default()).await;
        assert!(result.success, "{result:?}");
        manager.close().await;
        let events = events.lock().unwrap().clone();
        let ManagerEvent::ServerConnected(c) = &events[0] else { panic!("{events:?}") };
        assert_eq!(
            (c.server_name.as_str(), c.transport.as_str(), c.protocol_version.as_str()),
            ("obs", "stdio", "2025-11-25")
        );
        assert_eq!((c.tool_count, c.prompt_count, c.resource_count, c.resource_template_count), (6, 2, 2, 1));
        let ManagerEvent::ToolExecuted(t) = &events[1] else { panic!("{events:?}") };
        assert_eq!((t.server_name.as_str(), t.tool_name.as_str(), t.success), ("obs", "echo", true));
        assert_eq!(t.arguments, json!({"text": "hi", "api_key": "<redacted>", "nested": {"password": "<redacted>"}}));
        assert_eq!(t.content_length, 2);
        assert_eq!(t.error_message, None);
        let ManagerEvent::ServerDisconnected(d) = &events[2] else { panic!("{events:?}") };
        assert_eq!((d.server_name.as_str(), d.reason.as_str(), d.had_session), ("obs", "stopped", false));
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn arguments_are_checked_against_the_input_schema_before_sending() {
    within(async {
        let manager = McpManager::start(config(vec![fake("v", &[])]), ManagerOptions::default()).await;
        let bad = json!({"a": 1, "b": "two"});
        let result =
            manager.execute_tool("add", Some(bad.as_object().unwrap().clone()), RequestOptions::default()).await;
        assert!(!result.success);
        let message = result.error_message.unwrap();
        assert!(message.contains("add") && message.contains("/b"), "{message}");
        manager.close().await;
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn legacy_servers_hear_that_the_roots_changed() {
    within(async {
        let manager =
            McpManager::start(config(vec![fake("r1", &[]), fake("r2", &["--tools", "1"])]), ManagerOptions::default())
                .await;
        assert_eq!(manager.notify_roots_changed().await, 2);
        let (_, stats) = manager.call_tool("stats", None, RequestOptions::default()).await.unwrap();
        let text = serde_json::to_value(&stats.content[0]).unwrap()["text"].as_str().unwrap().to_owned();
        let stats: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(stats["requests"]["notifications/roots/list_changed"], 1, "{stats}");
        manager.close().await;
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_configured_log_level_is_set_once_in_the_legacy_era() {
    within(async {
        let mut server = fake("logs", &["--log"]);
        server.log_level = Some(mcp_protocol::types::logging::LoggingLevel::Debug);
        let manager =
            McpManager::start(config(vec![server, fake("quiet", &["--tools", "1"])]), ManagerOptions::default()).await;
        let (_, stats) = manager.call_tool("stats", None, RequestOptions::default()).await.unwrap();
        let text = serde_json::to_value(&stats.content[0]).unwrap()["text"].as_str().unwrap().to_owned();
        let stats: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(stats["requests"]["logging/setLevel"], 1, "{stats}");
        manager.close().await;
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_manager_dropped_without_close_leaves_no_process() {
    within(async {
        let manager =
            McpManager::start(config(vec![fake("d1", &[]), fake("d2", &["--tools", "1"])]), fast_reconnect()).await;
        let pids: Vec<u32> = manager.status().iter().filter_map(|s| s.pid).collect();
        assert_eq!(pids.len(), 2);
        let clone = manager.clone();
        drop(manager);
        assert_eq!(clone.status().len(), 2, "a clone keeps everything alive");
        drop(clone);
        for pid in pids {
            wait_until_gone(pid, Duration::from_secs(10)).await.unwrap();
        }
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_never_finishes_starting_fails_at_its_startup_timeout() {
    within(async {
        let mut slow = fake("sleepy", &["--start-delay-ms", "30000"]);
        slow.startup_timeout = Duration::from_millis(300);
        let manager = McpManager::start(config(vec![slow, fake("awake", &[])]), ManagerOptions::default()).await;
        let status = manager.status();
        assert_eq!(status[0].state, ServerState::Failed);
        assert!(status[0].last_error.as_deref().unwrap().contains("startup timeout"), "{:?}", status[0]);
        assert_eq!(status[0].pid, None, "no process is reported for it");
        assert_eq!(status[1].state, ServerState::Ready, "the other server is not held up");
        manager.close().await;
    })
    .await
}
