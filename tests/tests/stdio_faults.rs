//! One-server connections over stdio against the scriptable fake server, one test per fault:
//! pagination, noise on stdout, crashes, hangs, slow and huge answers, wrong and duplicate ids,
//! progress, notifications, the server's requests, stderr in errors, handshake failures, a
//! declared-but-missing list, and concurrent connect and close.
//!
//! Every test runs under [`within`]; timeouts are hang guards, never timing assertions.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::future::BoxFuture;
use mcp_manager::callbacks::{NotificationSink, RootsProvider, SamplingHandler};
use mcp_manager::connection::PaginationError;
use mcp_manager::session::ProgressCallback;
use mcp_manager::{ConnectionError, ConnectionOptions, McpConnection, RequestOptions, SessionError, TransportFactory};
use mcp_manager::{single_use_factory, stdio_factory};
use mcp_protocol::messages::ServerNotification;
use mcp_protocol::types::content::ContentBlock;
use mcp_protocol::types::logging::LoggingLevel;
use mcp_protocol::types::meta::JsonObject;
use mcp_protocol::types::progress::ProgressParams;
use mcp_protocol::types::prompts::GetPromptParams;
use mcp_protocol::types::roots::Root;
use mcp_protocol::types::sampling::{CreateMessageParams, CreateMessageResult};
use mcp_protocol::types::tools::CallToolOutcome;
use mcp_protocol::{ErrorCode, ErrorObject, ProtocolVersion};
use mcp_transport::{CloseReason, StdioConfig, StdioTransport, TransportError};
use serde_json::{Value, json};
use test_support::process::wait_until_gone;
use test_support::within;
use tests::support::{capture_logs, recording_factory};
use tracing::Level;

fn stdio(name: &str, flags: &[&str]) -> StdioConfig {
    StdioConfig::new(name, env!("CARGO_BIN_EXE_fake-mcp-server"), flags.iter().copied())
}

fn options(name: &str) -> ConnectionOptions {
    let mut options = ConnectionOptions::new(name);
    options.session.request_timeout = Duration::from_secs(10);
    // The fake server is a legacy server and these tests count request ids from the handshake;
    // the era probe is covered by mcp-manager's modern tests and the auto-mode peer tests.
    options.era = mcp_manager::connection::EraPreference::Legacy;
    options
}

fn connection(name: &str, flags: &[&str]) -> McpConnection {
    McpConnection::new(stdio_factory(stdio(name, flags)), options(name))
}

fn args(value: Value) -> Option<JsonObject> {
    value.as_object().cloned()
}

fn texts(outcome: CallToolOutcome) -> Vec<String> {
    let result = outcome.complete().expect("a completed tool call");
    result.content.iter().map(|c| c.as_text().expect("text content").to_owned()).collect()
}

async fn echo(conn: &McpConnection, text: &str) -> Result<Vec<String>, ConnectionError> {
    conn.call_tool("echo", args(json!({"text": text})), RequestOptions::default()).await.map(texts)
}

/// What the fake server has seen (its `stats` tool).
async fn stats(conn: &McpConnection) -> Value {
    let text = conn.call_tool("stats", None, RequestOptions::default()).await.map(texts).unwrap();
    serde_json::from_str(&text[0]).unwrap()
}

fn short(timeout: Duration) -> RequestOptions {
    RequestOptions { timeout: Some(timeout), ..Default::default() }
}

#[tokio::test]
async fn pagination_follows_every_page() {
    within(async {
        let conn = connection("paged", &["--tools", "2500", "--page-size", "100"]);
        conn.connect().await.unwrap();
        let inventory = conn.discover().await.unwrap();
        let names: Vec<String> = inventory.tools.iter().map(|t| t.name.clone()).collect();
        let expected: Vec<String> = (0..2500).map(|i| format!("tool-{i:04}")).collect();
        assert_eq!(names, expected, "every tool of every page, in order, once");
        assert!(inventory.warnings.is_empty(), "{:?}", inventory.warnings);
        assert_eq!(stats(&conn).await["requests"]["tools/list"], 25, "25 pages of 100");
        conn.close().await;
    })
    .await
}

#[tokio::test]
async fn repeated_cursor_is_an_error_naming_server_and_cursor() {
    within(async {
        let conn = connection("looping", &["--tools", "50", "--page-size", "10", "--repeat-cursor"]);
        conn.connect().await.unwrap();
        let err = conn.list_all_tools().await.unwrap_err();
        let ConnectionError::Pagination(PaginationError::RepeatedCursor { server, cursor, .. }) = &err else {
            panic!("expected a repeated cursor error, got {err}");
        };
        assert_eq!((server.as_str(), cursor.as_str()), ("looping", "page-1"));
        let message = err.to_string();
        assert!(message.contains("\"looping\"") && message.contains("\"page-1\""), "{message}");
        assert_eq!(stats(&conn).await["requests"]["tools/list"], 2, "stopped at the repeat, no loop");
        conn.close().await;
    })
    .await
}

#[tokio::test]
async fn page_cap_stops_a_listing() {
    within(async {
        let mut options = options("endless");
        options.max_pages = 5;
        let factory = stdio_factory(stdio("endless", &["--tools", "2500", "--page-size", "10"]));
        let conn = McpConnection::new(factory, options);
        conn.connect().await.unwrap();
        let err = conn.discover().await.unwrap_err();
        assert!(
            matches!(&err, ConnectionError::Pagination(PaginationError::TooManyPages { max: 5, .. })),
            "expected the page cap, got {err}"
        );
        assert!(err.to_string().contains("more than 5 pages of tools"), "{err}");
        assert_eq!(stats(&conn).await["requests"]["tools/list"], 5);
        conn.close().await;
    })
    .await
}

#[tokio::test]
async fn banner_and_junk_lines_are_dropped_with_warnings() {
    let (logs, _guard) = capture_logs();
    within(async {
        let conn = connection("noisy", &["--banner", "--prompts"]);
        let info = conn.connect().await.unwrap();
        assert_eq!(info.implementation.name, "fake-mcp-server");
        let inventory = conn.discover().await.unwrap();
        assert_eq!(inventory.tools.len(), 6);
        assert_eq!(inventory.prompts.len(), 2);
        for text in ["one", "two", "three"] {
            assert_eq!(echo(&conn, text).await.unwrap(), [text]);
        }
        conn.ping().await.unwrap();
        conn.close().await;
    })
    .await;
    let noise = logs.find(Level::WARN, "not JSON-RPC");
    assert!(noise.iter().all(|e| e.fields["server"] == "noisy"), "{noise:?}");
    for junk in
        ["fake-mcp-server 1.0 starting up", r#"{"level":"info","msg":"listening on stdio"}"#, "debug: about to answer"]
    {
        assert!(noise.iter().any(|e| e.fields["line"] == junk), "no warning for {junk:?}: {noise:?}");
    }
    let invalid = logs.find(Level::WARN, "invalid JSON-RPC message");
    assert!(invalid.iter().any(|e| e.fields["line"] == r#"{"jsonrpc":"2.0"}"#), "{invalid:?}");
}

#[tokio::test]
async fn crash_fails_the_pending_call_with_exit_status_and_stderr() {
    within(async {
        let conn = connection("crashy", &["--crash-after", "2"]);
        conn.connect().await.unwrap();
        let session = conn.session().await.unwrap();
        assert_eq!(echo(&conn, "1").await.unwrap(), ["1"]);
        assert_eq!(echo(&conn, "2").await.unwrap(), ["2"]);
        let err = echo(&conn, "3").await.unwrap_err();
        let message = err.to_string();
        assert!(message.contains("server exited"), "{message}");
        assert!(message.contains("exit status: 3"), "{message}");
        assert!(message.contains("crashing on tools/call #3 (--crash-after 2)"), "the stderr tail: {message}");
        assert!(matches!(session.close_reason(), Some(CloseReason::Exited { .. })), "{:?}", session.close_reason());
        // The next call fails at once, with the same reason.
        let next = echo(&conn, "4").await.unwrap_err();
        assert!(matches!(next, ConnectionError::Session(SessionError::Closed { .. })), "{next}");
        assert!(next.to_string().contains("server exited"), "{next}");
        assert!(conn.session().await.is_err(), "the connection reports its session closed");
        conn.close().await;
    })
    .await
}

#[tokio::test]
async fn hang_times_out_and_the_session_keeps_answering() {
    within(async {
        let conn = connection("hangs", &["--hang"]);
        conn.connect().await.unwrap();
        for _ in 0..2 {
            let err = conn
                .call_tool("echo", args(json!({"text": "x"})), short(Duration::from_millis(300)))
                .await
                .unwrap_err();
            assert!(matches!(&err, ConnectionError::Session(e) if e.is_timeout()), "{err}");
            assert!(err.to_string().contains("tools/call timed out"), "{err}");
        }
        conn.ping().await.unwrap();
        assert_eq!(conn.list_all_tools().await.unwrap().len(), 6);
        assert!(conn.session().await.unwrap().close_reason().is_none());
        conn.close().await;
    })
    .await
}

#[tokio::test]
async fn slow_answer_arrives_within_a_longer_timeout() {
    within(async {
        let conn = Arc::new(connection("slow", &["--slow-ms", "300"]));
        conn.connect().await.unwrap();
        // Too slow for its timeout: the client gives up and tells the server.
        let err =
            conn.call_tool("slow", args(json!({"ms": 5000})), short(Duration::from_millis(100))).await.unwrap_err();
        assert!(matches!(&err, ConnectionError::Session(e) if e.is_timeout()), "{err}");
        let call = tokio::spawn({
            let conn = conn.clone();
            async move { conn.call_tool("echo", args(json!({"text": "late"})), short(Duration::from_secs(15))).await }
        });
        // Other requests are answered while the call is pending.
        conn.ping().await.unwrap();
        assert_eq!(texts(call.await.unwrap().unwrap()), ["late"]);
        assert_eq!(stats(&conn).await["cancelled"], json!([1]), "notifications/cancelled for request 1");
        conn.close().await;
    })
    .await
}

#[tokio::test]
async fn huge_line_fails_only_its_call() {
    within(async {
        let mut config = stdio("huge", &["--huge-mib", "100"]);
        config.max_message_bytes = 32 * 1024 * 1024;
        let conn = McpConnection::new(stdio_factory(config), options("huge"));
        conn.connect().await.unwrap();
        let err = conn.call_tool("huge", None, RequestOptions::default()).await.unwrap_err();
        assert!(err.to_string().contains("exceeded the message size limit of 33554432 bytes"), "{err}");
        assert!(
            matches!(
                &err,
                ConnectionError::Session(SessionError::Transport { error: TransportError::MessageTooLarge { .. }, .. })
            ),
            "{err:?}"
        );
        assert_eq!(echo(&conn, "still here").await.unwrap(), ["still here"]);
        conn.close().await;
    })
    .await
}

#[tokio::test]
async fn wrong_id_times_out_with_a_warning() {
    let (logs, _guard) = capture_logs();
    within(async {
        let conn = connection("wrong-id", &["--wrong-id"]);
        conn.connect().await.unwrap();
        let err =
            conn.call_tool("echo", args(json!({"text": "x"})), short(Duration::from_millis(500))).await.unwrap_err();
        assert!(matches!(&err, ConnectionError::Session(e) if e.is_timeout()), "{err}");
        // A round trip after the stray answer: the reader has handled it.
        conn.ping().await.unwrap();
        conn.close().await;
    })
    .await;
    let warnings = logs.find(Level::WARN, "never sent");
    assert_eq!(warnings.len(), 1, "{:?}", logs.events());
    assert_eq!(warnings[0].fields["server"], "wrong-id");
    assert_eq!(warnings[0].fields["id"], "1000001", "the id the fake server made up for request 1");
}

#[tokio::test]
async fn duplicate_answer_is_ignored() {
    let (logs, _guard) = capture_logs();
    within(async {
        let conn = connection("twice", &["--duplicate-id"]);
        conn.connect().await.unwrap();
        assert_eq!(echo(&conn, "first").await.unwrap(), ["first"]);
        assert_eq!(echo(&conn, "second").await.unwrap(), ["second"]);
        conn.ping().await.unwrap();
        conn.close().await;
    })
    .await;
    let ignored = logs.find(Level::DEBUG, "ignored an answer to no pending request");
    let ids: Vec<&str> = ignored.iter().map(|e| e.fields["id"].as_str()).collect();
    assert_eq!(ids, ["1", "2"], "each second answer was seen and ignored");
    assert!(logs.find(Level::WARN, "never sent").is_empty());
}

#[tokio::test]
async fn progress_reaches_the_callback_and_extends_the_deadline() {
    within(async {
        let conn = connection("progress", &["--progress"]);
        conn.connect().await.unwrap();
        let seen: Arc<Mutex<Vec<ProgressParams>>> = Arc::default();
        let callback: ProgressCallback = {
            let seen = seen.clone();
            Arc::new(move |p| seen.lock().unwrap().push(p))
        };
        // The tool takes 3 s; the timeout is 1 s, but progress every 100 ms keeps pushing it back.
        let slow = || args(json!({"ms": 3000}));
        let with_progress = RequestOptions { timeout: Some(Duration::from_secs(1)), progress: Some(callback) };
        let outcome = conn.call_tool("slow", slow(), with_progress).await.unwrap();
        assert_eq!(texts(outcome), ["slept 3000 ms"]);
        let seen = seen.lock().unwrap().clone();
        assert_eq!(seen.len(), 30, "one per 100 ms");
        assert!(seen.windows(2).all(|w| w[0].progress_f64() < w[1].progress_f64()));
        assert_eq!(seen[0].total_f64(), Some(30.0));
        assert_eq!(seen[0].message.as_deref(), Some("step 1 of 30"));
        // Without progress the same call hits the 1 s timeout.
        let err = conn.call_tool("slow", slow(), short(Duration::from_secs(1))).await.unwrap_err();
        assert!(matches!(&err, ConnectionError::Session(e) if e.is_timeout()), "{err}");
        conn.close().await;
    })
    .await
}

type Received = tokio::sync::mpsc::UnboundedReceiver<(String, ServerNotification)>;

struct Sink(tokio::sync::mpsc::UnboundedSender<(String, ServerNotification)>);

impl NotificationSink for Sink {
    fn on_notification(&self, server: &str, notification: &ServerNotification) {
        let _ = self.0.send((server.to_owned(), notification.clone()));
    }
}

fn with_sink(options: &mut ConnectionOptions) -> Received {
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    options.callbacks.notifications = Some(Arc::new(Sink(tx)));
    rx
}

#[tokio::test]
async fn log_and_list_changed_notifications_reach_the_sink() {
    within(async {
        let mut options = options("chatty");
        let mut received = with_sink(&mut options);
        let conn = McpConnection::new(stdio_factory(stdio("chatty", &["--log", "--list-changed"])), options);
        let info = conn.connect().await.unwrap();
        assert!(info.capabilities.has_logging() && info.capabilities.tools_list_changed());
        conn.set_logging_level(LoggingLevel::Debug).await.unwrap();
        assert_eq!(echo(&conn, "hi").await.unwrap(), ["hi"]);
        let (server, first) = received.recv().await.unwrap();
        assert_eq!(server, "chatty");
        let ServerNotification::LoggingMessage(Some(log)) = first else { panic!("expected a log message: {first:?}") };
        assert_eq!(
            (log.level, log.logger.as_deref(), log.data),
            (LoggingLevel::Info, Some("fake"), json!({"tool": "echo"}))
        );
        let (_, second) = received.recv().await.unwrap();
        assert!(matches!(second, ServerNotification::ToolListChanged(_)), "{second:?}");
        conn.close().await;
    })
    .await
}

struct Roots;

impl RootsProvider for Roots {
    fn list_roots(&self, server: &str) -> BoxFuture<'static, Result<Vec<Root>, ErrorObject>> {
        let name = format!("workspace of {server}");
        Box::pin(async move { Ok(vec![Root::new("file:///workspace", Some(name))]) })
    }
}

#[derive(Default)]
struct Sampler {
    asked: Mutex<Vec<(String, CreateMessageParams)>>,
}

impl SamplingHandler for Sampler {
    fn create_message(
        &self,
        server: &str,
        params: CreateMessageParams,
    ) -> BoxFuture<'static, Result<CreateMessageResult, ErrorObject>> {
        self.asked.lock().unwrap().push((server.to_owned(), params));
        Box::pin(async { Ok(CreateMessageResult::assistant_text("test-model", "four")) })
    }
}

#[tokio::test]
async fn server_requests_are_answered_by_the_host_callbacks() {
    within(async {
        let mut options = options("asking");
        let sampler = Arc::new(Sampler::default());
        options.callbacks.roots = Some(Arc::new(Roots));
        options.callbacks.sampling = Some(sampler.clone());
        let flags = ["--ask-roots", "--ask-sampling", "--ask-unknown"];
        let conn = McpConnection::new(stdio_factory(stdio("asking", &flags)), options);
        conn.connect().await.unwrap();
        let reply = echo(&conn, "hi").await.unwrap();
        assert_eq!(reply.len(), 4, "{reply:?}");
        assert_eq!(reply[0], "hi");
        assert_eq!(
            reply[1],
            r#"client answered roots/list => {"roots":[{"uri":"file:///workspace","name":"workspace of asking"}]}"#
        );
        assert!(reply[2].starts_with("client answered sampling/createMessage => {"), "{}", reply[2]);
        assert!(reply[2].contains(r#""model":"test-model""#) && reply[2].contains(r#""text":"four""#), "{}", reply[2]);
        assert_eq!(reply[3], "client answered foo/bar => error -32601 (method not found): method not found: foo/bar");
        let asked = sampler.asked.lock().unwrap().clone();
        assert_eq!(asked.len(), 1);
        assert_eq!(asked[0].0, "asking");
        assert_eq!(asked[0].1.messages[0].content.text(), "What is 2+2?");
        conn.close().await;
    })
    .await
}

#[tokio::test]
async fn stderr_tail_appears_in_errors() {
    within(async {
        let conn = connection("stderr", &["--stderr-lines", "100", "--crash-after", "0"]);
        conn.connect().await.unwrap();
        let session = conn.session().await.unwrap();
        let err = echo(&conn, "x").await.unwrap_err().to_string();
        assert!(err.contains("last stderr lines: "), "{err}");
        assert!(err.contains("fake-mcp-server: stderr line 099"), "{err}");
        assert!(err.ends_with("fake-mcp-server: crashing on tools/call #1 (--crash-after 0)"), "{err}");
        assert!(!err.contains("stderr line 000"), "the ring keeps only the last lines: {err}");
        let tail = session.transport().diagnostics_tail();
        assert_eq!(tail.len(), 64, "the default ring size");
        assert_eq!(tail[0], "fake-mcp-server: stderr line 037");
        conn.close().await;
    })
    .await
}

#[tokio::test]
async fn initialize_failure_is_a_clear_error_and_leaves_no_process() {
    within(async {
        let (factory, spawned) = recording_factory(stdio("refuses", &["--fail-initialize"]));
        let conn = McpConnection::new(factory, options("refuses"));
        let err = conn.connect().await.unwrap_err();
        let rpc = match &err {
            ConnectionError::Session(e) => e.rpc_error().expect("the server's error"),
            other => panic!("expected the server's error, got {other}"),
        };
        assert_eq!(rpc.code, ErrorCode::INTERNAL_ERROR);
        let message = err.to_string();
        assert!(message.contains("\"refuses\"") && message.contains("initialize failed"), "{message}");
        assert!(message.contains("--fail-initialize"), "{message}");
        assert!(conn.session().await.is_err());
        wait_until_gone(spawned.pids()[0], Duration::from_secs(5)).await.unwrap();
    })
    .await
}

#[tokio::test]
async fn unsupported_protocol_version_names_both_versions() {
    within(async {
        for answered in ["1999-01-01", "2026-07-28"] {
            let (factory, spawned) = recording_factory(stdio("future", &["--protocol", answered]));
            let conn = McpConnection::new(factory, options("future"));
            let err = conn.connect().await.unwrap_err();
            let ConnectionError::UnsupportedVersion { offered, answered: got, .. } = &err else {
                panic!("expected an unsupported version, got {err}");
            };
            assert_eq!((offered.as_str(), got.as_str()), ("2025-11-25", answered));
            let message = err.to_string();
            assert!(message.contains(answered) && message.contains("2025-11-25"), "{message}");
            wait_until_gone(spawned.pids()[0], Duration::from_secs(5)).await.unwrap();
        }
        // An older legacy revision than offered is fine.
        let mut options = options("older");
        options.protocol_version = ProtocolVersion::V2025_06_18;
        let conn = McpConnection::new(stdio_factory(stdio("older", &["--protocol", "2024-11-05"])), options);
        assert_eq!(conn.connect().await.unwrap().protocol_version, ProtocolVersion::V2024_11_05);
        conn.close().await;
    })
    .await
}

#[tokio::test]
async fn declared_prompts_without_the_method_are_a_warning() {
    within(async {
        let conn = connection("no-prompts", &["--no-method-prompts"]);
        let info = conn.connect().await.unwrap();
        assert!(info.capabilities.has_prompts());
        let inventory = conn.discover().await.unwrap();
        assert!(inventory.prompts.is_empty());
        assert_eq!(inventory.warnings.len(), 1, "{:?}", inventory.warnings);
        assert!(inventory.warnings[0].contains("prompts"), "{:?}", inventory.warnings);
        assert_eq!(inventory.tools.len(), 6);
        assert_eq!(echo(&conn, "still usable").await.unwrap(), ["still usable"]);
        conn.close().await;
    })
    .await
}

#[tokio::test]
async fn prompts_and_resources_are_discovered_and_used() {
    within(async {
        let conn = connection("full", &["--prompts", "--resources"]);
        conn.connect().await.unwrap();
        let inventory = conn.discover().await.unwrap();
        assert_eq!(inventory.prompts.iter().map(|p| p.name.as_str()).collect::<Vec<_>>(), ["greet", "static"]);
        assert_eq!(
            inventory.resources.iter().map(|r| r.uri.as_str()).collect::<Vec<_>>(),
            ["fake://readme", "fake://notes"]
        );
        assert_eq!(inventory.resource_templates[0].uri_template, "fake://items/{id}");
        let params = GetPromptParams {
            name: "greet".into(),
            arguments: Some([("name".to_owned(), "Ada".to_owned())].into()),
            ..Default::default()
        };
        let prompt = conn.get_prompt(params).await.unwrap().complete().unwrap();
        assert_eq!(prompt.messages[0].content, ContentBlock::text("Hello, Ada!"));
        let read = conn.read_resource("fake://items/7").await.unwrap().complete().unwrap();
        assert_eq!(serde_json::to_value(&read.contents[0]).unwrap()["text"], "item 7");
        let missing = conn.read_resource("fake://nothing").await.unwrap_err();
        assert!(missing.to_string().contains("no resource fake://nothing"), "{missing}");
        conn.subscribe("fake://readme").await.unwrap();
        conn.unsubscribe("fake://readme").await.unwrap();
        let add = conn.call_tool("add", args(json!({"a": 2, "b": 3})), RequestOptions::default()).await.unwrap();
        assert_eq!(add.complete().unwrap().structured_content, Some(json!({"sum": 5.0})));
        conn.close().await;
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_connect_spawns_one_process_and_concurrent_close_is_safe() {
    within(async {
        let (inner, spawned) = recording_factory(stdio("shared", &[]));
        let calls = Arc::new(AtomicUsize::new(0));
        let factory: TransportFactory = {
            let calls = calls.clone();
            Arc::new(move || {
                calls.fetch_add(1, Ordering::SeqCst);
                inner()
            })
        };
        let conn = Arc::new(McpConnection::new(factory, options("shared")));
        let connects: Vec<_> = (0..8)
            .map(|_| {
                let conn = conn.clone();
                tokio::spawn(async move { conn.connect().await })
            })
            .collect();
        for c in connects {
            assert_eq!(c.await.unwrap().unwrap().implementation.name, "fake-mcp-server");
        }
        assert_eq!(calls.load(Ordering::SeqCst), 1, "one process for eight concurrent connects");
        assert_eq!(spawned.pids().len(), 1);
        let session = conn.session().await.unwrap();
        let closes: Vec<_> = (0..8)
            .map(|_| {
                let (conn, session) = (conn.clone(), session.clone());
                tokio::spawn(async move {
                    conn.close().await;
                    // Every caller returns only once the close is done.
                    assert!(session.close_reason().is_some(), "close() returned before the session ended");
                })
            })
            .collect();
        for c in closes {
            c.await.unwrap();
        }
        wait_until_gone(spawned.pids()[0], Duration::from_secs(5)).await.unwrap();
        assert!(matches!(conn.session().await, Err(ConnectionError::NotConnected(_))));
        // A closed connection opens again, with a new process.
        conn.connect().await.unwrap();
        assert_eq!(calls.load(Ordering::SeqCst), 2);
        conn.close().await;
    })
    .await
}

#[tokio::test]
async fn single_use_factory_hands_out_its_transport_once() {
    within(async {
        let transport = StdioTransport::spawn(stdio("once", &[])).unwrap();
        let conn = McpConnection::new(single_use_factory(Arc::new(transport)), options("once"));
        conn.connect().await.unwrap();
        conn.close().await;
        let err = conn.connect().await.unwrap_err();
        assert!(err.to_string().contains("already used once"), "{err}");
    })
    .await
}

#[tokio::test]
async fn a_timed_out_large_call_leaves_no_half_line_and_the_next_call_is_answered() {
    within(async {
        // Once initialized, the server reads nothing for 2 s: a 2 MiB argument fills the pipe.
        let conn = connection("slow-reader", &["--stall-stdin-ms", "2000"]);
        conn.connect().await.unwrap();
        let large = "z".repeat(2 * 1024 * 1024);
        let err = conn.call_tool("echo", args(json!({"text": large})), short(Duration::from_millis(300))).await;
        let err = err.unwrap_err();
        assert!(matches!(&err, ConnectionError::Session(e) if e.is_timeout()), "{err}");
        // The next call goes out whole behind it and is answered once the server reads again.
        assert_eq!(echo(&conn, "after").await.unwrap(), ["after"]);
        let seen = stats(&conn).await;
        assert_eq!(seen["requests"]["tools/call"], 3, "the large call, the echo and stats: {seen}");
        assert_eq!(seen["cancelled"], json!([1]), "the cancellation of the large call arrived whole: {seen}");
        let tail = conn.session().await.unwrap().transport().diagnostics_tail();
        assert!(!tail.iter().any(|l| l.contains("bad line")), "the server saw a broken line: {tail:?}");
        conn.close().await;
    })
    .await
}

#[tokio::test]
async fn an_exited_server_whose_child_holds_stdout_fails_the_call_with_its_status() {
    within(async {
        // A wrapper leaves `sleep` behind with the server's stdout, then becomes the server.
        let fake = env!("CARGO_BIN_EXE_fake-mcp-server");
        let script = format!("sleep 1000 & echo sleeper-pid=$! >&2; exec '{fake}' --crash-after 0");
        let (factory, _) = recording_factory(StdioConfig::new("wrapped", "/bin/sh", ["-c".to_owned(), script]));
        let conn = McpConnection::new(factory, options("wrapped"));
        conn.connect().await.unwrap();
        let session = conn.session().await.unwrap();
        // The call fails with the exit, long before its 10 s timeout would.
        let err = echo(&conn, "x").await.unwrap_err();
        let message = err.to_string();
        assert!(message.contains("server exited") && message.contains("exit status: 3"), "{message}");
        assert!(message.contains("crashing on tools/call #1"), "the stderr tail: {message}");
        assert!(matches!(session.close_reason(), Some(CloseReason::Exited { .. })), "{:?}", session.close_reason());
        let tail = session.transport().diagnostics_tail();
        let sleeper = test_support::process::value_after(&tail, "sleeper-pid").expect("the sleeper's pid");
        conn.close().await;
        drop(session);
        // Killed with the group. Not this process's child, so whoever adopted it reaps it.
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        while test_support::process::process_state(sleeper).is_some_and(|s| s != 'Z') {
            assert!(tokio::time::Instant::now() < deadline, "the sleeper {sleeper} outlived the closed connection");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
}

#[tokio::test]
async fn a_server_failing_at_start_always_shows_its_stderr() {
    // Thirty servers: a longer hang guard than one test's.
    let thirty = tokio::time::timeout(Duration::from_secs(90), async {
        for run in 0..30 {
            let config = StdioConfig::new("failing", "/bin/sh", ["-c", "echo cannot-start-here >&2; exit 3"]);
            let conn = McpConnection::new(stdio_factory(config), options("failing"));
            let err = conn.connect().await.unwrap_err().to_string();
            assert!(err.contains("cannot-start-here"), "run {run}: the stderr tail is missing: {err}");
            assert!(err.contains("exit status: 3"), "run {run}: {err}");
        }
    });
    thirty.await.expect("test timed out");
}
