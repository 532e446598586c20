//! Root changes reach servers by themselves: a connection whose callbacks carry a roots provider
//! that announces changes (`RootsProvider::changes`, which `host_bridge::Roots` implements) sends
//! `notifications/roots/list_changed` after each change while it is open in the legacy era.
//! Modern-era connections send nothing (those servers ask for roots with each request), and a
//! closed connection leaves no task behind.
//!
//! Over the in-memory transport with scripted servers (where the watchers can be counted), then
//! over `fake-mcp-server` processes (whose `stats` tool counts the notifications it received),
//! one by one and under an `McpManager`.

use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use host_bridge::{HostBridge, Roots, file_root};
use mcp_manager::callbacks::{HostCallbacks, RootsProvider};
use mcp_manager::config::{McpConfig, ServerConfig};
use mcp_manager::connection::{ConnectionOptions, EraPreference, McpConnection, single_use_factory, stdio_factory};
use mcp_manager::manager::{ManagerOptions, McpManager};
use mcp_manager::{RequestOptions, ServerState};
use mcp_protocol::types::roots::Root;
use mcp_protocol::{Era, ErrorObject, Message, Response};
use mcp_transport::{MemoryTransport, StdioConfig, Transport, TransportEvent};
use serde_json::{Value, json};
use test_support::{Event, ScriptedServer, messages, within};
use tokio::sync::watch;

const ROOTS_CHANGED: &str = "notifications/roots/list_changed";

/// Roots whose change announcements the test makes, and whose watchers it can count.
struct Watched {
    version: watch::Sender<u64>,
}

impl Watched {
    fn new() -> Arc<Self> {
        Arc::new(Watched { version: watch::Sender::new(0) })
    }

    fn change(&self) {
        self.version.send_modify(|v| *v += 1);
    }

    /// How many receivers (connection tasks) watch the roots.
    fn watchers(&self) -> usize {
        self.version.receiver_count()
    }

    /// Wait until exactly `n` receivers are left (an aborted task lets go of its receiver soon,
    /// not at once).
    async fn wait_for_watchers(&self, n: usize) {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        while self.watchers() != n {
            assert!(tokio::time::Instant::now() < deadline, "{} watchers left, expected {n}", self.watchers());
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }
}

impl RootsProvider for Watched {
    fn list_roots(&self, _server: &str) -> BoxFuture<'static, Result<Vec<Root>, ErrorObject>> {
        Box::pin(async { Ok(vec![Root::new("file:///srv/project", None)]) })
    }

    fn changes(&self) -> Option<watch::Receiver<u64>> {
        Some(self.version.subscribe())
    }
}

/// What a scripted server of `era` heard: its notifications, read in order.
struct Heard {
    server: ScriptedServer,
    read: usize,
}

impl Heard {
    /// A scripted server on the other end of an in-memory pair, speaking `era`: it answers the
    /// handshake and pings (anything else with -32601) and records every notification.
    fn serve(server: MemoryTransport, era: Era) -> Heard {
        let server = ScriptedServer::start(server, move |request, _| {
            Some(match (request.method.as_str(), era) {
                ("initialize", Era::Legacy) => Ok(messages::initialize_result("legacy-fake", json!({}))),
                ("server/discover", Era::Modern) => Ok(messages::discover_result("modern-fake", json!({}))),
                ("ping", _) => Ok(json!({})),
                (method, _) => Err(messages::method_not_found(method)),
            })
        });
        Heard { server, read: 0 }
    }

    /// The next notification not read yet, waiting at most 10 s for it.
    async fn next(&mut self, server: &str) -> String {
        let read = self.read;
        let arrived = self
            .server
            .until(|events| events.iter().filter(|e| matches!(e, Event::Notification { .. })).count() > read);
        tokio::time::timeout(Duration::from_secs(10), arrived)
            .await
            .unwrap_or_else(|_| panic!("{server} heard nothing"));
        self.read += 1;
        self.server.notifications().swap_remove(read)
    }

    /// Every notification not read yet, once a ping has made the round trip (the session sends
    /// in order, so what it sent before the ping has arrived).
    async fn so_far(&mut self, connection: &McpConnection) -> Vec<String> {
        connection.ping().await.expect("ping");
        self.unread()
    }

    /// Every notification not read yet.
    fn unread(&mut self) -> Vec<String> {
        let all = self.server.notifications();
        let unread = all[self.read..].to_vec();
        self.read = all.len();
        unread
    }
}

/// A connection over the in-memory pair to a scripted server of `era`, with `callbacks`.
async fn open(name: &str, era: Era, callbacks: &HostCallbacks) -> (McpConnection, Heard) {
    let (client, server) = MemoryTransport::pair();
    let heard = Heard::serve(server, era);
    let mut options = ConnectionOptions::new(name);
    options.callbacks = callbacks.clone();
    options.era = match era {
        Era::Legacy => EraPreference::Legacy,
        Era::Modern => EraPreference::Modern,
    };
    let connection = McpConnection::new(single_use_factory(Arc::new(client)), options);
    let info = connection.connect().await.expect("connected");
    assert_eq!(info.protocol_version.era(), Some(era), "{name}");
    (connection, heard)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_change_reaches_every_legacy_connection_once_and_no_modern_one() {
    within(async {
        let roots = Watched::new();
        let callbacks = HostCallbacks { roots: Some(roots.clone() as Arc<dyn RootsProvider>), ..Default::default() };
        let (one, mut heard_one) = open("legacy-one", Era::Legacy, &callbacks).await;
        let (two, mut heard_two) = open("legacy-two", Era::Legacy, &callbacks).await;
        let (modern, mut heard_modern) = open("modern", Era::Modern, &callbacks).await;
        assert_eq!(roots.watchers(), 2, "one watcher per legacy connection, none for the modern one");
        for (connection, heard) in [(&one, &mut heard_one), (&two, &mut heard_two)] {
            assert_eq!(heard.so_far(connection).await, ["notifications/initialized"], "{}", connection.name());
        }

        roots.change();
        assert_eq!(heard_one.next("legacy-one").await, ROOTS_CHANGED);
        assert_eq!(heard_two.next("legacy-two").await, ROOTS_CHANGED);
        assert_eq!(heard_one.so_far(&one).await, Vec::<String>::new(), "one change, one notification");
        assert_eq!(heard_modern.so_far(&modern).await, Vec::<String>::new(), "the modern server");

        // A closed connection lets go of the roots; the others still hear of changes.
        one.close().await;
        roots.wait_for_watchers(1).await;
        roots.change();
        assert_eq!(heard_two.next("legacy-two").await, ROOTS_CHANGED);
        heard_one.server.ended().await;
        assert_eq!(heard_one.unread(), Vec::<String>::new(), "the closed connection's server heard nothing more");

        two.close().await;
        modern.close().await;
        roots.wait_for_watchers(0).await;
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_provider_without_changes_and_a_change_during_the_handshake() {
    within(async {
        // No roots provider that announces changes: no watcher (and nothing to announce).
        let (plain, mut heard) = open("plain", Era::Legacy, &HostCallbacks::default()).await;
        assert_eq!(heard.so_far(&plain).await, ["notifications/initialized"]);
        plain.close().await;

        // A change while the handshake runs: the server may have listed the old roots, so it
        // hears of the change once the session is open.
        let roots = Watched::new();
        let callbacks = HostCallbacks { roots: Some(roots.clone() as Arc<dyn RootsProvider>), ..Default::default() };
        let (client, server) = MemoryTransport::pair();
        let mut options = ConnectionOptions::new("racing");
        options.callbacks = callbacks;
        options.era = EraPreference::Legacy;
        let connection = Arc::new(McpConnection::new(single_use_factory(Arc::new(client)), options));
        let connecting = tokio::spawn({
            let connection = connection.clone();
            async move { connection.connect().await }
        });
        // The connection subscribes before it sends initialize.
        let TransportEvent::Message(Message::Request(init)) = server.recv().await else { panic!("no initialize") };
        assert_eq!(init.method, "initialize");
        assert_eq!(roots.watchers(), 1);
        roots.change();
        let result = json!({"protocolVersion": "2025-11-25", "capabilities": {},
            "serverInfo": {"name": "legacy-fake", "version": "1"}});
        let raw = mcp_protocol::to_raw(&result).unwrap();
        server.send(Message::Response(Response::result(init.id, raw))).await.unwrap();
        connecting.await.unwrap().expect("connected");
        let mut methods = Vec::new();
        while methods.len() < 2 {
            match server.recv().await {
                TransportEvent::Message(Message::Notification(n)) => methods.push(n.method),
                other => panic!("expected notifications, got {other:?}"),
            }
        }
        assert_eq!(methods, ["notifications/initialized", ROOTS_CHANGED]);
        connection.close().await;
        roots.wait_for_watchers(0).await;
    })
    .await
}

fn fake(name: &str, flags: &[&str]) -> ServerConfig {
    tests::fake::server_config(name, env!("CARGO_BIN_EXE_fake-mcp-server"), flags)
}

fn stats_of(result: &mcp_protocol::types::tools::CallToolResult) -> Value {
    let text = serde_json::to_value(&result.content[0]).unwrap()["text"].as_str().unwrap().to_owned();
    serde_json::from_str(&text).unwrap()
}

/// How many `notifications/roots/list_changed` the server has received, once it reaches `want`
/// (the notification is sent by a background task, so it may arrive after a tool call).
async fn wait_for_count(mut stats: impl AsyncFnMut() -> Value, want: u64, server: &str) -> Value {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    loop {
        let stats = stats().await;
        let count = stats["requests"][ROOTS_CHANGED].as_u64().unwrap_or(0);
        assert!(count <= want, "{server} heard {count} root changes, expected {want}: {stats}");
        if count == want {
            return stats;
        }
        assert!(tokio::time::Instant::now() < deadline, "{server} never heard of the change: {stats}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn processes_hear_each_change_of_the_bridge_roots_once() {
    within(async {
        let roots = Roots::new([file_root("/srv/first", None).unwrap()]).unwrap();
        let bridge = HostBridge::builder().roots(roots.clone()).build();
        let mut connections = Vec::new();
        for (name, protocol) in [("old", "2024-11-05"), ("new", "2025-11-25")] {
            let args = ["--protocol".to_owned(), protocol.to_owned()];
            let config = StdioConfig::new(name, env!("CARGO_BIN_EXE_fake-mcp-server"), args);
            let connection = McpConnection::new(stdio_factory(config), bridge.connection_options(name));
            connection.connect().await.expect("connected");
            connections.push(connection);
        }
        for round in 1..=2 {
            roots.set([file_root(format!("/srv/round-{round}"), None).unwrap()]).unwrap();
            for connection in &connections {
                let stats = async || {
                    let outcome = connection.call_tool("stats", None, RequestOptions::default()).await.unwrap();
                    stats_of(&outcome.complete().expect("a complete result"))
                };
                wait_for_count(stats, round, connection.name()).await;
            }
        }
        for connection in &connections {
            connection.close().await;
        }
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_manager_s_servers_hear_of_changes_without_being_told() {
    within(async {
        let roots = Roots::new([file_root("/srv/first", None).unwrap()]).unwrap();
        let bridge = HostBridge::builder().roots(roots.clone()).build();
        let options = ManagerOptions { callbacks: bridge.callbacks(), ..Default::default() };
        let config = McpConfig { servers: vec![fake("watched", &[])], client: Default::default() };
        let manager = McpManager::start(config, options).await;
        assert_eq!(manager.server_status("watched").map(|s| s.state), Some(ServerState::Ready));
        let stats = async || {
            let (_, result) = manager.call_tool("stats", None, RequestOptions::default()).await.unwrap();
            stats_of(&result)
        };
        let before = stats().await;
        assert!(before["requests"][ROOTS_CHANGED].is_null(), "nothing changed yet: {before}");
        roots.add(file_root("/srv/second", None).unwrap()).unwrap();
        wait_for_count(stats, 1, "watched").await;
        manager.close().await;
    })
    .await
}
