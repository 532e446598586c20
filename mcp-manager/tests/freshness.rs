//! Keeping a connection's lists fresh, with the test playing a scripted server over an
//! in-memory transport: legacy list_changed notifications, the modern `subscriptions/listen`,
//! and `ttlMs` cache hints. Time is paused: sleeps advance a virtual clock.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_manager::callbacks::{HostCallbacks, NotificationSink};
use mcp_manager::connection::{ConnectionOptions, EraPreference, McpConnection, single_use_factory};
use mcp_protocol::messages::ServerNotification;
use mcp_protocol::types::mrtr::Outcome;
use mcp_protocol::{ErrorCode, ErrorObject, RequestId};
use mcp_transport::MemoryTransport;
use serde_json::{Value, json};
use test_support::{Script, ScriptedServer, within_for};

const SUBSCRIPTION_ID: &str = "io.modelcontextprotocol/subscriptionId";

/// The tools of version `v` of the server's list.
fn tools(v: usize, ttl: Option<u64>) -> Value {
    let mut result = json!({"tools": [{"name": format!("tool-v{v}"), "inputSchema": {"type": "object"}}]});
    if let Some(ttl) = ttl {
        result["ttlMs"] = json!(ttl);
        result["resultType"] = json!("complete");
    }
    result
}

/// A scripted server whose tools list is at `version`; `listen` answers nothing (held open).
fn script(modern: bool, caps: Value, version: Arc<AtomicUsize>, tools_ttl: Option<u64>) -> Script {
    Box::new(move |req, _| {
        Some(Ok(match req.method.as_str() {
            "server/discover" if modern => json!({
                "supportedVersions": ["2026-07-28"], "capabilities": caps, "resultType": "complete",
                "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "fresh", "version": "1"}}
            }),
            "initialize" if !modern => {
                json!({"protocolVersion": "2025-11-25", "capabilities": caps, "serverInfo": {"name": "fresh", "version": "1"}})
            }
            "tools/list" => tools(version.load(Ordering::SeqCst), tools_ttl),
            "prompts/list" => json!({"prompts": [{"name": "p"}]}),
            "resources/list" => json!({"resources": []}),
            "resources/templates/list" => json!({"resourceTemplates": []}),
            "subscriptions/listen" => return None,
            _ => return Some(Err(ErrorObject::new(ErrorCode::METHOD_NOT_FOUND, "no"))),
        }))
    })
}

/// Records the notifications the host's sink receives.
#[derive(Default)]
struct Sink(Mutex<Vec<String>>);

impl NotificationSink for Sink {
    fn on_notification(&self, _server: &str, notification: &ServerNotification) {
        self.0.lock().unwrap().push(notification.method().to_owned());
    }
}

fn options(name: &str, era: EraPreference, sink: &Arc<Sink>) -> ConnectionOptions {
    let mut options = ConnectionOptions::new(name);
    options.era = era;
    options.callbacks = HostCallbacks { notifications: Some(sink.clone()), ..Default::default() };
    options
}

fn connection(client: MemoryTransport, options: ConnectionOptions) -> McpConnection {
    McpConnection::new(single_use_factory(Arc::new(client)), options)
}

fn tool_names(conn_tools: &[mcp_protocol::types::tools::Tool]) -> Vec<&str> {
    conn_tools.iter().map(|t| t.name.as_str()).collect()
}

/// Every test runs on paused time: a stuck test ends at this (virtual) timeout.
const VIRTUAL_HOUR: Duration = Duration::from_secs(3600);

/// A legacy server and a connection to it, with tools (listChanged), prompts and resources.
async fn legacy(name: &str) -> (ScriptedServer, McpConnection, Arc<AtomicUsize>, Arc<Sink>) {
    let (client, server) = MemoryTransport::pair();
    let version = Arc::new(AtomicUsize::new(1));
    let caps = json!({"tools": {"listChanged": true}, "prompts": {}, "resources": {}});
    let fake = ScriptedServer::start(server, script(false, caps, version.clone(), None));
    let sink = Arc::new(Sink::default());
    let conn = connection(client, options(name, EraPreference::Legacy, &sink));
    conn.connect().await.unwrap();
    (fake, conn, version, sink)
}

#[tokio::test(start_paused = true)]
async fn legacy_list_changed_relists_the_tools_and_updates_the_inventory() {
    within_for(VIRTUAL_HOUR, async {
        let (fake, conn, version, sink) = legacy("legacy").await;
        let mut changes = conn.subscribe_changes();
        let inventory = conn.inventory().await.unwrap();
        assert_eq!(tool_names(&inventory.tools), ["tool-v1"]);
        assert_eq!(inventory.prompts.len(), 1);
        assert_eq!(fake.count("tools/list"), 1);
        conn.inventory().await.unwrap();
        assert_eq!(fake.count("tools/list"), 1, "a fresh list is served from the cache");
        changes.borrow_and_update();

        version.store(2, Ordering::SeqCst);
        fake.notify("notifications/tools/list_changed", json!({})).await;
        changes.changed().await.unwrap();
        assert_eq!(fake.count("tools/list"), 2, "the background refresh re-listed the tools");
        assert_eq!(fake.count("prompts/list"), 1, "only the changed list is re-listed");
        let inventory = conn.inventory().await.unwrap();
        assert_eq!(tool_names(&inventory.tools), ["tool-v2"]);
        assert_eq!(fake.count("tools/list"), 2, "the inventory is the refreshed one");
        assert_eq!(*sink.0.lock().unwrap(), ["notifications/tools/list_changed"], "the host's sink sees it too");
    })
    .await
}

#[tokio::test(start_paused = true)]
async fn a_burst_of_list_changed_causes_one_refresh() {
    within_for(VIRTUAL_HOUR, async {
        let (fake, conn, version, sink) = legacy("burst").await;
        conn.inventory().await.unwrap();
        let mut changes = conn.subscribe_changes();
        let before = *changes.borrow_and_update();
        version.store(2, Ordering::SeqCst);
        // Five notifications, 10 ms apart: within the debounce (100 ms) of the first.
        for _ in 0..5 {
            fake.notify("notifications/tools/list_changed", json!({})).await;
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        changes.changed().await.unwrap();
        tokio::time::sleep(Duration::from_secs(10)).await;
        assert_eq!(fake.count("tools/list"), 2, "one refresh for the whole burst");
        assert_eq!(*changes.borrow(), before + 1);
        assert_eq!(sink.0.lock().unwrap().len(), 5);
        assert_eq!(tool_names(&conn.inventory().await.unwrap().tools), ["tool-v2"]);
    })
    .await
}

#[tokio::test(start_paused = true)]
async fn a_change_before_anything_was_listed_lists_nothing_by_itself() {
    within_for(VIRTUAL_HOUR, async {
        let (fake, conn, version, _sink) = legacy("lazy").await;
        version.store(3, Ordering::SeqCst);
        fake.notify("notifications/tools/list_changed", json!({})).await;
        tokio::time::sleep(Duration::from_secs(10)).await;
        assert_eq!(fake.count("tools/list"), 0, "no one asked for the tools yet");
        assert_eq!(tool_names(&conn.inventory().await.unwrap().tools), ["tool-v3"]);
        assert_eq!(fake.count("tools/list"), 1);
    })
    .await
}

/// A modern server offering tool and prompt list changes (not resource ones), and a connection
/// to it.
async fn modern(
    name: &str,
    tools_ttl: Option<u64>,
    max_failures: u32,
) -> (ScriptedServer, McpConnection, Arc<AtomicUsize>) {
    let (client, server) = MemoryTransport::pair();
    let version = Arc::new(AtomicUsize::new(1));
    let caps =
        json!({"tools": {"listChanged": true}, "prompts": {"listChanged": true}, "resources": {"subscribe": true}});
    let fake = ScriptedServer::start(server, script(true, caps, version.clone(), tools_ttl));
    let mut options = options(name, EraPreference::Auto, &Arc::new(Sink::default()));
    options.freshness.listen_max_failures = max_failures;
    let conn = connection(client, options);
    conn.connect().await.unwrap();
    (fake, conn, version)
}

/// Wait for the `n`-th listen and acknowledge it; its id.
async fn acknowledge(fake: &ScriptedServer, n: usize) -> RequestId {
    let (listen, _) = fake.nth("subscriptions/listen", n).await;
    let ack = json!({"_meta": {SUBSCRIPTION_ID: listen.id}, "notifications": {"toolsListChanged": true, "promptsListChanged": true}});
    fake.notify("notifications/subscriptions/acknowledged", ack).await;
    listen.id
}

#[tokio::test(start_paused = true)]
async fn modern_listen_asks_for_what_the_server_offers_and_only_its_own_changes_count() {
    within_for(VIRTUAL_HOUR, async {
        let (fake, conn, version) = modern("modern", None, 8).await;
        let (listen, params) = fake.nth("subscriptions/listen", 1).await;
        assert_eq!(params["notifications"], json!({"toolsListChanged": true, "promptsListChanged": true}));
        let meta = &params["_meta"];
        assert_eq!(meta["io.modelcontextprotocol/protocolVersion"], "2026-07-28");
        assert!(meta["io.modelcontextprotocol/clientCapabilities"].is_object());
        assert_eq!(meta["io.modelcontextprotocol/clientInfo"]["name"], "mcp-stack");
        let id = acknowledge(&fake, 1).await;
        assert_eq!(id, listen.id);

        assert_eq!(tool_names(&conn.inventory().await.unwrap().tools), ["tool-v1"]);
        let mut changes = conn.subscribe_changes();
        let before = *changes.borrow_and_update();
        version.store(2, Ordering::SeqCst);
        fake.notify("notifications/tools/list_changed", json!({"_meta": {SUBSCRIPTION_ID: "someone-else"}})).await;
        fake.notify("notifications/tools/list_changed", json!({})).await;
        tokio::time::sleep(Duration::from_secs(10)).await;
        assert_eq!(fake.count("tools/list"), 1, "changes of no subscription of ours are ignored");
        assert_eq!(*changes.borrow(), before);

        fake.notify("notifications/tools/list_changed", json!({"_meta": {SUBSCRIPTION_ID: id}})).await;
        changes.changed().await.unwrap();
        assert_eq!(fake.count("tools/list"), 2);
        assert_eq!(tool_names(&conn.inventory().await.unwrap().tools), ["tool-v2"]);
        assert_eq!(fake.count("subscriptions/listen"), 1);
    })
    .await
}

#[tokio::test(start_paused = true)]
async fn the_listen_outlives_every_request_timeout() {
    within_for(VIRTUAL_HOUR, async {
        let (fake, _conn, _) = modern("long", None, 8).await;
        acknowledge(&fake, 1).await;
        tokio::time::sleep(Duration::from_secs(3000)).await;
        assert_eq!(fake.count("subscriptions/listen"), 1);
        assert!(!fake.notifications().iter().any(|m| m == "notifications/cancelled"), "nothing was cancelled");
    })
    .await
}

#[tokio::test(start_paused = true)]
async fn a_gracefully_ended_listen_is_not_reopened() {
    within_for(VIRTUAL_HOUR, async {
        let (fake, conn, version) = modern("graceful", None, 8).await;
        let id = acknowledge(&fake, 1).await;
        conn.inventory().await.unwrap();
        fake.reply(&id, Ok(json!({"_meta": {SUBSCRIPTION_ID: id}, "resultType": "complete"}))).await;
        tokio::time::sleep(Duration::from_secs(600)).await;
        assert_eq!(fake.count("subscriptions/listen"), 1, "the server ended it: no new listen");
        version.store(2, Ordering::SeqCst);
        fake.notify("notifications/tools/list_changed", json!({"_meta": {SUBSCRIPTION_ID: id}})).await;
        tokio::time::sleep(Duration::from_secs(10)).await;
        assert_eq!(fake.count("tools/list"), 1, "the ended subscription's changes no longer count");
    })
    .await
}

#[tokio::test(start_paused = true)]
async fn an_abruptly_ended_listen_is_reopened_after_a_backoff_and_the_lists_refreshed() {
    within_for(VIRTUAL_HOUR, async {
        let (fake, conn, version) = modern("abrupt", None, 8).await;
        let first = acknowledge(&fake, 1).await;
        assert_eq!(tool_names(&conn.inventory().await.unwrap().tools), ["tool-v1"]);
        let mut changes = conn.subscribe_changes();
        changes.borrow_and_update();

        fake.reply(&first, Err(ErrorObject::new(ErrorCode::INTERNAL_ERROR, "stream reset"))).await;
        tokio::time::sleep(Duration::from_millis(900)).await;
        assert_eq!(fake.count("subscriptions/listen"), 1, "not before the backoff (1 s)");
        let (second, _) = fake.nth("subscriptions/listen", 2).await;
        assert_ne!(second.id, first);
        fake.reply(&second.id, Err(ErrorObject::new(ErrorCode::INTERNAL_ERROR, "again"))).await;
        tokio::time::sleep(Duration::from_millis(1900)).await;
        assert_eq!(fake.count("subscriptions/listen"), 2, "the backoff doubled (2 s)");

        // A change made while no listen was open is caught up once the new one is acknowledged.
        version.store(2, Ordering::SeqCst);
        let third = acknowledge(&fake, 3).await;
        changes.changed().await.unwrap();
        assert_eq!(tool_names(&conn.inventory().await.unwrap().tools), ["tool-v2"]);
        version.store(3, Ordering::SeqCst);
        fake.notify("notifications/tools/list_changed", json!({"_meta": {SUBSCRIPTION_ID: third}})).await;
        changes.changed().await.unwrap();
        assert_eq!(tool_names(&conn.inventory().await.unwrap().tools), ["tool-v3"]);
    })
    .await
}

#[tokio::test(start_paused = true)]
async fn a_listen_that_keeps_failing_is_given_up_and_close_stops_it() {
    within_for(VIRTUAL_HOUR, async {
        let (fake, _conn, _) = modern("failing", None, 2).await;
        for n in 1..=3 {
            let (listen, _) = fake.nth("subscriptions/listen", n).await;
            fake.reply(&listen.id, Err(ErrorObject::new(ErrorCode::INTERNAL_ERROR, "no"))).await;
        }
        tokio::time::sleep(Duration::from_secs(600)).await;
        assert_eq!(fake.count("subscriptions/listen"), 3, "two retries, then it gave up");

        let (fake, conn, _) = modern("closing", None, 8).await;
        acknowledge(&fake, 1).await;
        conn.close().await;
        tokio::time::sleep(Duration::from_secs(600)).await;
        assert_eq!(fake.count("subscriptions/listen"), 1, "a closed connection does not listen again");
    })
    .await
}

#[tokio::test(start_paused = true)]
async fn a_list_with_a_ttl_is_fetched_again_once_it_has_run_out() {
    within_for(VIRTUAL_HOUR, async {
        let (fake, conn, version) = modern("ttl", Some(1000), 8).await;
        // The listen is open but not acknowledged: nothing reports changes yet, the ttl rules.
        fake.nth("subscriptions/listen", 1).await;
        assert_eq!(tool_names(&conn.inventory().await.unwrap().tools), ["tool-v1"]);
        version.store(2, Ordering::SeqCst);
        tokio::time::sleep(Duration::from_millis(999)).await;
        assert_eq!(tool_names(&conn.inventory().await.unwrap().tools), ["tool-v1"], "still fresh");
        assert_eq!(fake.count("tools/list"), 1);
        tokio::time::sleep(Duration::from_millis(2)).await;
        assert_eq!(tool_names(&conn.inventory().await.unwrap().tools), ["tool-v2"], "stale: fetched again");
        assert_eq!(fake.count("tools/list"), 2);
        assert_eq!(fake.count("prompts/list"), 1, "a list without a ttl stays fresh");

        // Once the server acknowledges that it reports tool changes, the ttl is not needed.
        acknowledge(&fake, 1).await;
        tokio::time::sleep(Duration::from_millis(1)).await;
        version.store(3, Ordering::SeqCst);
        tokio::time::sleep(Duration::from_secs(5)).await;
        assert_eq!(tool_names(&conn.inventory().await.unwrap().tools), ["tool-v2"], "covered by the subscription");
        assert_eq!(fake.count("tools/list"), 2);
    })
    .await
}

#[tokio::test(start_paused = true)]
async fn read_results_are_kept_for_their_ttl_and_dropped_on_update() {
    within_for(VIRTUAL_HOUR, async {
        let (client, server) = MemoryTransport::pair();
        let reads = Arc::new(AtomicUsize::new(0));
        let counter = reads.clone();
        let fake = ScriptedServer::start(
            server,
            move |req, params| {
                Some(Ok(match req.method.as_str() {
                    "initialize" => json!({"protocolVersion": "2025-11-25", "capabilities": {"resources": {"subscribe": true}}, "serverInfo": {"name": "r", "version": "1"}}),
                    "resources/read" => {
                        let n = counter.fetch_add(1, Ordering::SeqCst) + 1;
                        let uri = params["uri"].as_str().unwrap();
                        let mut result = json!({"contents": [{"uri": uri, "text": format!("read {n}")}]});
                        if uri == "a://cached" {
                            result["ttlMs"] = json!(1000);
                        }
                        result
                    }
                    _ => return Some(Err(ErrorObject::new(ErrorCode::METHOD_NOT_FOUND, "no"))),
                }))
            },
        );
        let conn = connection(client, options("reads", EraPreference::Legacy, &Arc::new(Sink::default())));
        conn.connect().await.unwrap();
        let text = |o: Outcome<mcp_protocol::types::resources::ReadResourceResult>| {
            serde_json::to_value(&o.complete().unwrap().contents[0]).unwrap()["text"].as_str().unwrap().to_owned()
        };
        assert_eq!(text(conn.read_resource("a://cached").await.unwrap()), "read 1");
        assert_eq!(text(conn.read_resource("a://cached").await.unwrap()), "read 1", "served from the cache");
        assert_eq!(text(conn.read_resource("a://plain").await.unwrap()), "read 2");
        assert_eq!(text(conn.read_resource("a://plain").await.unwrap()), "read 3", "no ttl: read every time");
        tokio::time::sleep(Duration::from_millis(1001)).await;
        assert_eq!(text(conn.read_resource("a://cached").await.unwrap()), "read 4", "the ttl ran out");
        fake.notify("notifications/resources/updated", json!({"uri": "a://cached"})).await;
        tokio::time::sleep(Duration::from_millis(10)).await;
        assert_eq!(text(conn.read_resource("a://cached").await.unwrap()), "read 5", "an update drops it");
        assert_eq!(fake.count("resources/read"), 5);
    })
    .await
}

#[tokio::test(start_paused = true)]
async fn discover_refreshes_the_cache_and_a_new_connection_starts_afresh() {
    within_for(VIRTUAL_HOUR, async {
        let (fake, conn, version, _sink) = legacy("rediscover").await;
        let mut changes = conn.subscribe_changes();
        let before = *changes.borrow_and_update();
        assert_eq!(tool_names(&conn.inventory().await.unwrap().tools), ["tool-v1"]);
        version.store(2, Ordering::SeqCst);
        assert_eq!(tool_names(&conn.discover().await.unwrap().tools), ["tool-v2"]);
        assert_eq!(tool_names(&conn.inventory().await.unwrap().tools), ["tool-v2"]);
        assert_eq!(fake.count("tools/list"), 2);
        assert_eq!(*changes.borrow(), before + 2);
        conn.close().await;
        assert!(conn.inventory().await.is_err(), "a closed connection has no inventory");
    })
    .await
}

/// A legacy server whose every list carries `ttl` (ms), with tools and prompts that announce
/// changes; and a connection to it.
async fn legacy_with_ttl(name: &str, ttl: u64) -> (ScriptedServer, McpConnection) {
    let (client, server) = MemoryTransport::pair();
    let caps = json!({"tools": {"listChanged": true}, "prompts": {"listChanged": true}});
    let fake = ScriptedServer::start(server, move |req, _| {
        Some(Ok(match req.method.as_str() {
            "initialize" => {
                json!({"protocolVersion": "2025-11-25", "capabilities": caps, "serverInfo": {"name": "t", "version": "1"}})
            }
            "tools/list" => json!({"tools": [{"name": "t", "inputSchema": {"type": "object"}}], "ttlMs": ttl}),
            "prompts/list" => json!({"prompts": [{"name": "p"}], "ttlMs": ttl}),
            _ => return Some(Err(ErrorObject::new(ErrorCode::METHOD_NOT_FOUND, "no"))),
        }))
    });
    let conn = connection(client, options(name, EraPreference::Legacy, &Arc::new(Sink::default())));
    conn.connect().await.unwrap();
    (fake, conn)
}

#[tokio::test(start_paused = true)]
async fn a_ttl_of_zero_waits_for_the_next_look_and_the_background_refresh_leaves_it() {
    within_for(VIRTUAL_HOUR, async {
        let (fake, conn) = legacy_with_ttl("ttl0", 0).await;
        conn.discover().await.unwrap();
        let mut changes = conn.subscribe_changes();
        let before = *changes.borrow_and_update();
        // A change of the prompts re-lists the prompts only: the tools' ttl of 0 means "ask
        // again when someone looks", not "now".
        fake.notify("notifications/prompts/list_changed", json!({})).await;
        changes.changed().await.unwrap();
        tokio::time::sleep(Duration::from_secs(10)).await;
        assert_eq!((fake.count("tools/list"), fake.count("prompts/list")), (1, 2));
        assert_eq!(*changes.borrow(), before + 1, "one refresh, one bump");
        // The next look fetches both again.
        conn.inventory().await.unwrap();
        assert_eq!((fake.count("tools/list"), fake.count("prompts/list")), (2, 3));
    })
    .await
}

#[tokio::test(start_paused = true)]
async fn a_flood_of_list_changed_is_refreshed_at_most_once_per_interval() {
    within_for(VIRTUAL_HOUR, async {
        let (fake, conn) = legacy_with_ttl("flood", 60_000).await;
        conn.discover().await.unwrap();
        // One notification every 50 ms for 5 s: 100 signals.
        for _ in 0..100 {
            fake.notify("notifications/tools/list_changed", json!({})).await;
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        tokio::time::sleep(Duration::from_secs(10)).await;
        let relists = fake.count("tools/list") - 1;
        // At most one refresh per second (the default minimum interval), and the last signal
        // is still followed.
        assert!((1..=7).contains(&relists), "{relists} re-lists for 100 signals in 5 s");
        assert_eq!(fake.count("prompts/list"), 1, "only the changed list");
    })
    .await
}

#[tokio::test(start_paused = true)]
async fn a_ttl_past_the_end_of_the_clock_never_runs_out() {
    within_for(VIRTUAL_HOUR, async {
        let (fake, conn) = legacy_with_ttl("forever", u64::MAX).await;
        conn.inventory().await.unwrap();
        tokio::time::sleep(Duration::from_secs(3600)).await;
        conn.inventory().await.unwrap();
        assert_eq!(fake.count("tools/list"), 1, "still fresh, and no overflow");
    })
    .await
}
