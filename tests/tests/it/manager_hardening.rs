//! The many-server manager against hostile or broken servers (the scriptable `fake-mcp-server`
//! and a panicking transport factory): a panicking supervisor fails its server instead of
//! hanging start, huge timeouts built in code do not panic, routing follows config order from
//! the first published table on, a call drained during a reload reports its own connection, a
//! server with `ttlMs: 0` that announces changes is not re-listed in a loop, and a stop does not
//! wait for a listing that hangs.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::future::BoxFuture;
use mcp_manager::config::{McpConfig, ServerConfig};
use mcp_manager::connection::TransportPlan;
use mcp_manager::manager::hooks::ManagerEvent;
use mcp_manager::manager::{Hooks, ManagerOptions, McpManager};
use mcp_manager::{RequestOptions, ServerState};
use mcp_transport::{Transport, TransportError};
use serde_json::{Value, json};
use test_support::process::wait_until_gone;
use test_support::within_for;

const LIMIT: Duration = Duration::from_secs(90);

fn fake(name: &str, flags: &[&str]) -> ServerConfig {
    tests::fake::server_config(name, env!("CARGO_BIN_EXE_fake-mcp-server"), flags)
}

fn config(servers: Vec<ServerConfig>) -> McpConfig {
    McpConfig { servers, client: Default::default() }
}

fn args(value: Value) -> Option<serde_json::Map<String, Value>> {
    value.as_object().cloned()
}

fn pids(manager: &McpManager) -> Vec<u32> {
    manager.status().iter().filter_map(|s| s.pid).collect()
}

async fn close_and_reap(manager: &McpManager) {
    let pids = pids(manager);
    manager.close().await;
    for pid in pids {
        wait_until_gone(pid, Duration::from_secs(10)).await.unwrap();
    }
}

/// What the `stats` tool of the server that owns it reports.
async fn stats(manager: &McpManager) -> Value {
    let (_, result) = manager.call_tool("stats", None, RequestOptions::default()).await.unwrap();
    let text = serde_json::to_value(&result.content[0]).unwrap()["text"].as_str().unwrap().to_owned();
    serde_json::from_str(&text).unwrap()
}

fn requests(stats: &Value, method: &str) -> u64 {
    stats["requests"][method].as_u64().unwrap_or(0)
}

/// A plan override: server `name` gets a transport factory that panics.
fn panicking_factory_for(name: &'static str) -> ManagerOptions {
    let factory = Arc::new(|| -> BoxFuture<'static, Result<Arc<dyn Transport>, TransportError>> {
        panic!("the transport factory exploded")
    });
    ManagerOptions {
        transport_override: Some(Arc::new(move |server: &ServerConfig| {
            (server.name == name).then(|| TransportPlan::single(factory.clone()))
        })),
        ..Default::default()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_panicking_supervisor_fails_its_server_and_start_still_returns() {
    within_for(LIMIT, async {
        let servers = vec![fake("before", &[]), ServerConfig::new("boom"), fake("after", &["--tools", "2"])];
        let manager = McpManager::start(config(servers), panicking_factory_for("boom")).await;
        let status = manager.status();
        assert_eq!(status[1].state, ServerState::Failed, "{:?}", status[1]);
        let error = status[1].last_error.as_deref().unwrap();
        assert!(error.contains("panicked") && error.contains("the transport factory exploded"), "{error}");
        assert_eq!((status[0].state, status[2].state), (ServerState::Ready, ServerState::Ready), "{status:#?}");
        // The servers around it are routed and answer.
        let routing = manager.routing();
        assert_eq!(routing.tool("echo").map(|t| &**t.server()), Some("before"));
        assert_eq!(routing.tool("tool-0001").map(|t| &**t.server()), Some("after"), "not held back by the panic");
        let result = manager.execute_tool("echo", args(json!({"text": "still here"})), RequestOptions::default()).await;
        assert_eq!(result.content.as_deref(), Some("still here"), "{result:?}");
        // Trying it again panics again, and settles again.
        let again = manager.restart("boom").await.unwrap();
        assert_eq!(again.state, ServerState::Failed);
        assert!(again.last_error.unwrap().contains("the transport factory exploded"));
        close_and_reap(&manager).await;
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn huge_timeouts_built_in_code_do_not_panic() {
    within_for(LIMIT, async {
        let mut server = fake("patient", &[]);
        server.request_timeout = Duration::MAX;
        server.startup_timeout = Duration::MAX;
        let manager = McpManager::start(config(vec![server]), ManagerOptions::default()).await;
        assert_eq!(manager.status()[0].state, ServerState::Ready, "{:?}", manager.status());
        let forever = RequestOptions { timeout: Some(Duration::MAX), ..Default::default() };
        let (_, result) = manager.call_tool("add", args(json!({"a": 1, "b": 2})), forever).await.unwrap();
        assert_eq!(result.structured_content.unwrap()["sum"].as_f64(), Some(3.0));
        let result = manager.execute_tool("echo", args(json!({"text": "ok"})), RequestOptions::default()).await;
        assert!(result.success, "{result:?}");
        close_and_reap(&manager).await;
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_first_table_during_start_already_follows_config_order() {
    within_for(LIMIT, async {
        // Both offer the same tools; the first in config order is ready long after the second.
        let connected: Arc<Mutex<Vec<(String, usize)>>> = Arc::default();
        let seen = connected.clone();
        let hooks = Hooks::default().with(move |e: &ManagerEvent| {
            if let ManagerEvent::ServerConnected(c) = e {
                seen.lock().unwrap().push((c.server_name.clone(), c.tool_count));
            }
            Ok(())
        });
        let servers = vec![fake("first", &["--start-delay-ms", "1500"]), fake("second", &[])];
        let manager = McpManager::start(config(servers), ManagerOptions { hooks, ..Default::default() }).await;
        assert_eq!(manager.routing().tool("echo").map(|t| t.server().to_string()).as_deref(), Some("first"));
        // Each server is announced with what the table gives it when its tools get in: the
        // second never owned the shared tools, not even before the first was ready.
        let mut connected = connected.lock().unwrap().clone();
        connected.sort();
        assert_eq!(connected, [("first".to_string(), 6), ("second".to_string(), 0)]);
        close_and_reap(&manager).await;
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_table_published_during_a_reload_follows_config_order() {
    within_for(LIMIT, async {
        let manager = McpManager::start(config(vec![]), ManagerOptions::default()).await;
        // Record who owns `echo` in every table published (each bumps the revision).
        let owners: Arc<Mutex<Vec<Option<String>>>> = Arc::default();
        let watcher = {
            let (manager, owners) = (manager.clone(), owners.clone());
            let mut changes = manager.subscribe_changes();
            tokio::spawn(async move {
                while changes.changed().await.is_ok() {
                    let owner = manager.routing().tool("echo").map(|t| t.server().to_string());
                    owners.lock().unwrap().push(owner);
                }
            })
        };
        let report =
            manager.apply_config(config(vec![fake("first", &["--start-delay-ms", "1500"]), fake("second", &[])])).await;
        assert_eq!(report.added, ["first", "second"]);
        let result = manager.execute_tool("echo", args(json!({"text": "x"})), RequestOptions::default()).await;
        assert_eq!(result.origin.as_ref().and_then(|o| o.namespace.as_deref()), Some("first"), "{:?}", result.origin);
        // Let the watcher see the last table.
        tokio::time::sleep(Duration::from_millis(200)).await;
        watcher.abort();
        let owners = owners.lock().unwrap().clone();
        assert!(owners.iter().flatten().all(|o| o == "first"), "the shared tool moved: {owners:?}");
        assert_eq!(owners.last(), Some(&Some("first".to_string())), "{owners:?}");
        close_and_reap(&manager).await;
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_drained_during_a_reload_reports_the_connection_that_served_it() {
    within_for(LIMIT, async {
        let manager = McpManager::start(config(vec![fake("s", &[])]), ManagerOptions::default()).await;
        let call = {
            let manager = manager.clone();
            tokio::spawn(async move {
                manager.execute_tool("slow", args(json!({"ms": 1500})), RequestOptions::default()).await
            })
        };
        // The call is under way (the server answers after 1.5 s); the reload replaces the server
        // once the call has finished.
        tokio::time::sleep(Duration::from_millis(300)).await;
        let report = manager.apply_config(config(vec![fake("s", &["--prompts"])])).await;
        assert_eq!(report.restarted, ["s"]);
        let result = call.await.unwrap();
        assert!(result.success, "{result:?}");
        assert_eq!(result.content.as_deref(), Some("slept 1500 ms"));
        assert_eq!(
            result.origin.as_ref().and_then(|o| o.protocol_version.as_deref()),
            Some("2025-11-25"),
            "{:?}",
            result.origin
        );
        close_and_reap(&manager).await;
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_ttl_of_zero_with_list_changed_is_refreshed_once_not_in_a_loop() {
    within_for(LIMIT, async {
        let server = fake("ttl0", &["--list-ttl-ms", "0", "--list-changed", "--prompts"]);
        let manager = McpManager::start(config(vec![server]), ManagerOptions::default()).await;
        // The first call makes the server announce a change of its tools.
        let result = manager.execute_tool("echo", args(json!({"text": "x"})), RequestOptions::default()).await;
        assert!(result.success, "{result:?}");
        let mut changes = manager.subscribe_changes();
        tokio::time::timeout(
            Duration::from_secs(20),
            changes.wait_for(|_| manager.routing().tool("late-tool").is_some()),
        )
        .await
        .expect("the change is followed")
        .unwrap();
        // A window in which a loop would re-list hundreds of times.
        let before = manager.revision();
        tokio::time::sleep(Duration::from_secs(3)).await;
        let bumps = manager.revision().wrapping_sub(before);
        assert!(bumps <= 1, "the revision kept changing: {bumps} times in the window");
        let stats = stats(&manager).await;
        assert!(requests(&stats, "tools/list") <= 3, "tools listed again and again: {stats}");
        assert!(requests(&stats, "prompts/list") <= 2, "prompts listed again and again: {stats}");
        close_and_reap(&manager).await;
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stop_does_not_wait_for_a_listing_that_hangs() {
    within_for(LIMIT, async {
        // Discovery and the refresh after the change are answered; every listing after that
        // hangs (each page would wait for the request timeout).
        let mut server = fake("hangs", &["--list-ttl-ms", "0", "--list-changed", "--hang-list-after", "2"]);
        server.request_timeout = Duration::from_secs(60);
        let manager = McpManager::start(config(vec![server]), ManagerOptions::default()).await;
        let pid = manager.status()[0].pid.unwrap();
        let result = manager.execute_tool("echo", args(json!({"text": "x"})), RequestOptions::default()).await;
        assert!(result.success, "{result:?}");
        // Until the change is published, or a third listing (which hangs) was asked for.
        let waited = tokio::time::timeout(Duration::from_secs(20), async {
            loop {
                if manager.routing().tool("late-tool").is_some() || requests(&stats(&manager).await, "tools/list") >= 3
                {
                    return;
                }
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        })
        .await;
        assert!(waited.is_ok(), "the change was never followed: {:?}", manager.status());
        tokio::time::timeout(Duration::from_secs(15), manager.close())
            .await
            .expect("close waited for a listing that hangs");
        wait_until_gone(pid, Duration::from_secs(10)).await.unwrap();
        assert_eq!(manager.status()[0].state, ServerState::Stopped);
    })
    .await
}
