//! host-bridge against real servers that no one here wrote: they ask the host for sampling,
//! elicitation and roots, and send logs; the bridge answers.
//!
//! - `@modelcontextprotocol/server-everything` over stdio (legacy era): `trigger-sampling-request`
//!   is answered by the OpenAI-compatible client talking to the in-process fake LLM
//!   (`tests::fake_llm`), and the fake's reply must reach the tool result;
//!   `trigger-elicitation-request` (form) and `trigger-url-elicitation` are answered by a scripted
//!   user; `get-roots-list` returns our roots, and a change of roots reaches the server through
//!   `notifications/roots/list_changed`; `toggle-simulated-logging` delivers log messages to
//!   `tracing` with the server's name.
//! - server-everything again, under an `McpManager` started from a reference TOML config whose
//!   `[mcp.client.sampling]` sets `token_parameter = "auto"`: `trigger-sampling-request` is
//!   answered through a fake LLM as strict as OpenAI (a 400 for `tool_choice` without `tools`,
//!   and for `max_tokens`, which its current models refuse), so the request must go out without a
//!   tool choice and switch to `max_completion_tokens`.
//! - The Python SDK's `MCPServer` peer (`tests/peers/python/mcpserver_peer.py`) in the modern era:
//!   `greet_user` elicits the user's name through a multi round-trip request.
//! - `@modelcontextprotocol/server-filesystem` started with no directory: it works only inside
//!   the roots we give it, refuses paths outside them, and follows a change of roots.
//!
//! Same contract as `peers_stdio.rs`: `cargo xtask test` provisions the peers and sets
//! `MCP_PEERS_DIR` and `MCP_REQUIRE_PEERS=1`; without `MCP_PEERS_DIR` every test says it skipped.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use host_bridge::{
    Asked, FormAnswer, HostBridge, LogLevels, NotificationCallback, OpenAiClient, OpenAiConfig, Roots, SamplingOptions,
    ScriptedElicitation, Secret, UrlAnswer, file_root, tracing_level,
};
use mcp_manager::RequestOptions;
use mcp_manager::config::{ConfigFormat, McpConfig, TokenParameter};
use mcp_manager::connection::EraPreference;
use mcp_manager::manager::{ManagerOptions, McpManager};
use mcp_manager::{McpConnection, ServerState};
use mcp_protocol::messages::ServerNotification;
use mcp_protocol::types::logging::LoggingLevel;
use mcp_protocol::types::meta::JsonObject;
use mcp_protocol::{Era, ProtocolVersion};
use mcp_transport::StdioConfig;
use serde_json::{Value, json};
use tests::fake_llm::{FAKE_MODEL, FakeLlm, Reply, openai_rules, refuse_parameter};
use tests::peers::{TempDir, args, assert_gone, call, close_and_assert_reaped, peer, repo_peer_file, texts};
use tests::support::{capture_logs, recording_factory};

/// Each test's whole run, server start-up included.
const TEST_TIMEOUT: Duration = Duration::from_secs(90);

const EVERYTHING: &str = "npm/node_modules/@modelcontextprotocol/server-everything/dist/index.js";
const FILESYSTEM: &str = "npm/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js";

fn object(value: Value) -> JsonObject {
    match value {
        Value::Object(map) => map,
        other => panic!("not an object: {other}"),
    }
}

/// Call `tool` until its text contains `wanted` (10 s at most): servers apply a change of roots
/// after they have fetched the new list.
async fn wait_for_text(conn: &McpConnection, tool: &str, wanted: &str, unwanted: Option<&str>) -> String {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let result = call(conn, tool, json!({}), RequestOptions::default()).await;
        let text = texts(&result).join("\n");
        if text.contains(wanted) && unwanted.is_none_or(|u| !text.contains(u)) {
            return text;
        }
        assert!(Instant::now() < deadline, "{tool} never showed {wanted:?} (without {unwanted:?}): {text}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

// ---------------------------------------------------------------------------------------------
// server-everything

// A current-thread runtime: the `tracing` capture sees every task of the test.
/// The `file://` URI of a directory, as a root names it.
fn uri(dir: &TempDir) -> String {
    file_root(dir.path(), None).expect("an absolute path").uri
}

#[tokio::test]
async fn server_everything_asks_the_host() {
    let Some(entry) = peer(EVERYTHING) else { return };
    let started = Instant::now();
    tokio::time::timeout(TEST_TIMEOUT, everything(entry)).await.expect("server-everything: the test timed out");
    println!("server-everything with the bridge: passed in {:?}", started.elapsed());
}

async fn everything(entry: PathBuf) {
    let (logs, _guard) = capture_logs();
    let llm = FakeLlm::start().await;
    let mut llm_config = OpenAiConfig::new(llm.base_url(), "host-model");
    llm_config.api_key = Some(Secret::new("sk-peer-test"));
    let client = OpenAiClient::new(llm_config).expect("an LLM client");
    let user = ScriptedElicitation::with_url();
    let first_root = TempDir::new("everything-a");
    let second_root = TempDir::new("everything-b");
    let roots = Roots::new([file_root(first_root.path(), Some("first".into())).unwrap()]).unwrap();
    let notes: Arc<Mutex<Vec<String>>> = Arc::default();
    let record = notes.clone();
    let callback: NotificationCallback = Arc::new(move |server: &str, n: &ServerNotification| {
        record.lock().unwrap().push(format!("{server} {}", n.method()))
    });
    let bridge = HostBridge::builder()
        .llm(Arc::new(client), SamplingOptions::default())
        .elicitation(Arc::new(user.clone()))
        .roots(roots.clone())
        .on_notification(callback)
        .log_levels(LogLevels::all(LoggingLevel::Debug))
        .build();

    let config = StdioConfig::new("everything", "node", [entry.to_string_lossy().into_owned(), "stdio".into()]);
    let (factory, spawned) = recording_factory(config);
    let mut options = bridge.connection_options("everything");
    options.era = EraPreference::Auto;
    let conn = Arc::new(McpConnection::new(factory, options));
    let info = conn.connect().await.expect("connect to server-everything");
    assert_eq!(info.protocol_version.era(), Some(Era::Legacy), "server-everything speaks the legacy era");
    conn.set_logging_level(LoggingLevel::Debug).await.expect("logging/setLevel");

    // The tools that need our capabilities are registered because we declared them.
    let tools = conn.list_all_tools().await.expect("tools/list");
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    for wanted in [
        "trigger-sampling-request",
        "trigger-elicitation-request",
        "trigger-url-elicitation",
        "get-roots-list",
        "toggle-simulated-logging",
    ] {
        assert!(names.contains(&wanted), "server-everything has no tool {wanted:?}: {names:?}");
    }

    // Sampling: the server's request goes to the fake LLM, whose reply reaches the tool result.
    llm.push(Reply::text("Bonjour from the fake LLM"));
    let sampled = call(
        &conn,
        "trigger-sampling-request",
        json!({"prompt": "Say bonjour", "maxTokens": 40}),
        RequestOptions::default(),
    )
    .await;
    let text = texts(&sampled).join("\n");
    assert!(text.contains("Bonjour from the fake LLM") && text.contains(FAKE_MODEL), "{text}");
    assert!(text.contains("endTurn"), "the stop reason reaches the server: {text}");
    let asked = llm.requests();
    assert_eq!(asked.len(), 1);
    let body = &asked[0].body;
    assert_eq!(body["messages"][0], json!({"role": "system", "content": "You are a helpful test server."}));
    assert!(body["messages"][1]["content"].as_str().unwrap().contains("Say bonjour"), "{body}");
    assert_eq!((body["max_tokens"].as_u64(), body["temperature"].as_f64()), (Some(40), Some(0.7)));
    assert_eq!(asked[0].authorization.as_deref(), Some("Bearer sk-peer-test"));
    println!("sampling: answered through the fake LLM");

    // Elicitation, form mode: the scripted user gives a name and agrees; the defaults fill in
    // the rest, and the whole answer passes the server's schema.
    user.answer_form(FormAnswer::Accept(object(json!({"name": "Ada Lovelace", "check": true}))));
    let elicited = call(&conn, "trigger-elicitation-request", json!({}), RequestOptions::default()).await;
    let text = texts(&elicited).join("\n");
    for wanted in ["User provided the requested information", "- Name: Ada Lovelace", "- Agreed to terms: true"] {
        assert!(text.contains(wanted), "{wanted:?} missing: {text}");
    }
    assert!(text.contains("- Favorite Integer: 42"), "the default was applied: {text}");
    let Some(Asked::Form(form)) = user.asked().first().cloned() else { panic!("{:?}", user.asked()) };
    assert_eq!(form.server, "everything");
    assert_eq!(form.prefilled["firstLine"], "It was a dark and stormy night.");
    assert!(form.schema.is_required("name"));
    println!("elicitation (form): {} fields pre-filled", form.prefilled.len());

    // Elicitation, URL mode: the user sees the whole URL and agrees; nothing is opened here.
    user.answer_url(UrlAnswer::Accept);
    let url = "https://auth.example.com/authorize?client=peer-test";
    let arguments = json!({"url": url, "elicitationId": "peer-test-1", "message": "Authorize the demo"});
    let result = call(&conn, "trigger-url-elicitation", arguments, RequestOptions::default()).await;
    let text = texts(&result).join("\n");
    assert!(text.contains("User completed the URL elicitation flow") && text.contains("peer-test-1"), "{text}");
    let Some(Asked::Url(asked)) = user.asked().last().cloned() else { panic!("{:?}", user.asked()) };
    assert_eq!((asked.url.as_str(), asked.domain.as_str()), (url, "auth.example.com"));
    assert_eq!(asked.elicitation_id.as_deref(), Some("peer-test-1"));

    // Roots: ours, then a change, announced with notifications/roots/list_changed.
    let text = wait_for_text(&conn, "get-roots-list", &uri(&first_root), None).await;
    assert!(text.contains("first"), "{text}");
    roots.set([file_root(second_root.path(), Some("second".into())).unwrap()]).unwrap();
    wait_for_text(&conn, "get-roots-list", &uri(&second_root), Some(&uri(&first_root))).await;
    println!("roots: the change reached the server");

    // Logging: the simulated logs arrive in `tracing` with the server's name, at a mapped level.
    let toggled = call(&conn, "toggle-simulated-logging", json!({}), RequestOptions::default()).await;
    assert!(texts(&toggled).join("").contains("Started simulated"), "{:?}", toggled.content);
    let simulated = |data: &str| {
        ["Debug-", "Info-", "Notice-", "Warning-", "Error-", "Critical-", "Alert ", "Emergency-"]
            .iter()
            .any(|p| data.starts_with(p))
    };
    let deadline = Instant::now() + Duration::from_secs(15);
    let event = loop {
        let found = logs.events().into_iter().find(|e| {
            e.message == "server log"
                && e.fields.get("server").map(String::as_str) == Some("everything")
                && e.fields.get("data").is_some_and(|d| simulated(d))
        });
        if let Some(event) = found {
            break event;
        }
        assert!(Instant::now() < deadline, "no simulated log reached tracing: {:?}", logs.events());
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let level: LoggingLevel = serde_json::from_value(json!(event.fields["level"])).unwrap();
    assert_eq!(event.level, tracing_level(&level), "{event:?}");
    println!("logging: {:?} at {} ({})", event.fields["data"], event.level, event.fields["level"]);
    call(&conn, "toggle-simulated-logging", json!({}), RequestOptions::default()).await;
    let seen = notes.lock().unwrap().clone();
    assert!(seen.iter().any(|n| n == "everything notifications/message"), "{seen:?}");

    close_and_assert_reaped(&conn, &spawned).await;
}

// ---------------------------------------------------------------------------------------------
// server-everything's sampling under the manager, through an endpoint as strict as OpenAI

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_everything_samples_through_a_strict_llm_endpoint() {
    let Some(entry) = peer(EVERYTHING) else { return };
    let started = Instant::now();
    tokio::time::timeout(TEST_TIMEOUT, strict_sampling(entry)).await.expect("strict sampling: the test timed out");
    println!("server-everything sampling through a strict endpoint: passed in {:?}", started.elapsed());
}

async fn strict_sampling(entry: PathBuf) {
    let llm = FakeLlm::start().await;
    llm.check_requests(openai_rules());
    llm.check_requests(refuse_parameter("max_tokens", "max_completion_tokens"));
    llm.push(Reply::text("Bonjour from a strict endpoint"));
    let entry = serde_json::to_string(&entry.to_string_lossy()).unwrap();
    let text = format!(
        "[mcp.client.sampling]\ntoken_parameter = \"auto\"\n\n\
         [[mcp.servers]]\nname = \"everything\"\ncommand = \"node\"\nargs = [{entry}, \"stdio\"]\n"
    );
    let no_env = |_: &str| None::<String>;
    let config = McpConfig::parse(&text, Some(ConfigFormat::ReferenceToml), "strict-sampling.toml", &no_env)
        .unwrap_or_else(|e| panic!("the config: {e}"));
    assert_eq!(config.client.sampling.token_parameter, Some(TokenParameter::Auto));
    let client = OpenAiClient::new(OpenAiConfig::new(llm.base_url(), "host-model")).expect("an LLM client");
    let bridge = HostBridge::builder()
        .client_config(&config.client)
        .expect("the client settings")
        .llm_client(Arc::new(client))
        .build();
    let manager =
        McpManager::start(config, ManagerOptions { callbacks: bridge.callbacks(), ..Default::default() }).await;
    let status = manager.server_status("everything").expect("the server is known");
    assert_eq!(status.state, ServerState::Ready, "{status:#?}");
    let pid = status.pid.expect("a stdio server has a pid");

    let arguments = args(json!({"prompt": "Say bonjour", "maxTokens": 40}));
    let (_, result) = manager
        .call_tool("trigger-sampling-request", arguments, RequestOptions::default())
        .await
        .expect("trigger-sampling-request through the manager");
    let text = texts(&result).join("\n");
    assert_ne!(result.is_error, Some(true), "{text}");
    assert!(text.contains("Bonjour from a strict endpoint") && text.contains("endTurn"), "{text}");
    let asked = llm.requests();
    for request in &asked {
        assert!(request.body.get("tool_choice").is_none(), "a tool_choice without tools: {}", request.body);
    }
    // max_tokens refused for the model, then max_completion_tokens taken.
    let limits: Vec<(Option<u64>, Option<u64>)> =
        asked.iter().map(|r| (r.body["max_tokens"].as_u64(), r.body["max_completion_tokens"].as_u64())).collect();
    assert_eq!(limits, [(Some(40), None), (None, Some(40))]);
    println!("sampling: no tool_choice, and max_completion_tokens after the endpoint refused max_tokens");

    manager.close().await;
    assert_gone(pid).await;
}

// ---------------------------------------------------------------------------------------------
// Python MCPServer, modern era

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_server_elicits_in_the_modern_era() {
    let Some(python) = peer("venv/bin/python") else { return };
    let started = Instant::now();
    tokio::time::timeout(TEST_TIMEOUT, python_modern(python)).await.expect("MCPServer: the test timed out");
    println!("MCPServer with the bridge: passed in {:?}", started.elapsed());
}

async fn python_modern(python: PathBuf) {
    let script = repo_peer_file("python/mcpserver_peer.py");
    let user = ScriptedElicitation::new();
    user.answer_form(FormAnswer::Accept(object(json!({"name": "Ada Lovelace"}))));
    let bridge = HostBridge::builder().elicitation(Arc::new(user.clone())).build();
    let args = [script.display().to_string(), "--transport".into(), "stdio".into()];
    let (factory, spawned) = recording_factory(StdioConfig::new("py-mcpserver", python.to_string_lossy(), args));
    let conn = McpConnection::new(factory, bridge.connection_options("py-mcpserver"));
    let info = conn.connect().await.expect("connect to the MCPServer peer");
    assert_eq!(info.protocol_version, ProtocolVersion::LATEST_MODERN, "auto settles on the modern era");

    let result = call(&conn, "greet_user", json!({"greeting": "Welcome"}), RequestOptions::default()).await;
    assert_eq!(texts(&result), ["Welcome, Ada Lovelace!"]);
    let asked = user.asked();
    let [Asked::Form(form)] = &asked[..] else { panic!("expected one form: {asked:?}") };
    assert_eq!((form.server.as_str(), form.message.as_str()), ("py-mcpserver", "What is your name?"));
    assert!(form.schema.properties.get("name").is_some(), "{:?}", form.schema);
    println!("greet_user: elicited through a multi round-trip request");

    close_and_assert_reaped(&conn, &spawned).await;
}

// ---------------------------------------------------------------------------------------------
// server-filesystem

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_filesystem_is_restricted_by_our_roots() {
    let Some(entry) = peer(FILESYSTEM) else { return };
    let started = Instant::now();
    tokio::time::timeout(TEST_TIMEOUT, filesystem(entry)).await.expect("server-filesystem: the test timed out");
    println!("server-filesystem with the bridge: passed in {:?}", started.elapsed());
}

async fn filesystem(entry: PathBuf) {
    let inside = TempDir::new("fs-inside");
    let later = TempDir::new("fs-later");
    let kept = later.path().join("kept.txt");
    std::fs::write(&kept, "written before the server started\n").unwrap();
    let roots = Roots::new([file_root(inside.path(), Some("inside".into())).unwrap()]).unwrap();
    let bridge = HostBridge::builder().roots(roots.clone()).build();
    // No directory on the command line: the server can only work with the roots we give it.
    let config = StdioConfig::new("filesystem", "node", [entry.to_string_lossy().into_owned()]);
    let (factory, spawned) = recording_factory(config);
    let conn = Arc::new(McpConnection::new(factory, bridge.connection_options("filesystem")));
    conn.connect().await.expect("connect to server-filesystem");
    let inside_path = inside.path().to_string_lossy().into_owned();
    let later_path = later.path().to_string_lossy().into_owned();
    wait_for_text(&conn, "list_allowed_directories", &inside_path, None).await;

    let file = format!("{inside_path}/hello.txt");
    call(&conn, "write_file", json!({"path": file, "content": "inside the root\n"}), RequestOptions::default()).await;
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "inside the root\n");
    let refused = |path: String| {
        let conn = conn.clone();
        async move {
            let outcome =
                conn.call_tool("read_text_file", args(json!({"path": path})), RequestOptions::default()).await;
            outcome.expect("tools/call").complete().expect("a result").is_error == Some(true)
        }
    };
    assert!(refused("/etc/hostname".into()).await, "a path outside the roots is refused");
    assert!(refused(kept.to_string_lossy().into_owned()).await, "the other directory is not a root yet");

    // A change of roots: the server hears of it, fetches the list again and follows it.
    roots.set([file_root(later.path(), Some("later".into())).unwrap()]).unwrap();
    wait_for_text(&conn, "list_allowed_directories", &later_path, Some(&inside_path)).await;
    let read = call(&conn, "read_text_file", json!({"path": kept}), RequestOptions::default()).await;
    assert_eq!(texts(&read), ["written before the server started\n"]);
    assert!(refused(file).await, "the old root is no longer allowed");

    close_and_assert_reaped(&conn, &spawned).await;
}
