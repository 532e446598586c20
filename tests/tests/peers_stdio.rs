//! Interop over stdio with real servers that no one here wrote: the npm reference servers
//! `@modelcontextprotocol/server-everything`, `server-filesystem` and `server-memory`, and the
//! Python `mcp-server-time`.
//!
//! `cargo xtask test` (or `cargo xtask peers`) installs them into `target/peers/` and runs this
//! file with `MCP_PEERS_DIR` set to that directory and `MCP_REQUIRE_PEERS=1`. Without
//! `MCP_PEERS_DIR` every test says it skipped and passes, so a plain `cargo test` stays offline
//! and fast; with `MCP_REQUIRE_PEERS=1` a missing peer fails instead.
//!
//! The servers get the transport's default environment (an allow-list without proxies or
//! credentials) and need no network: everything they do here is local.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mcp_manager::connection::EraPreference;
use mcp_manager::{ConnectionError, ConnectionOptions, HostCallbacks, McpConnection, RequestOptions, SessionError};
use mcp_protocol::ErrorCode;
use mcp_protocol::ProtocolVersion;
use mcp_protocol::types::completion::{CompleteArgument, CompleteContext, CompleteParams, Reference};
use mcp_protocol::types::content::{ContentBlock, ResourceContents};
use mcp_protocol::types::logging::LoggingLevel;
use mcp_protocol::types::meta::JsonObject;
use mcp_protocol::types::progress::ProgressParams;
use mcp_transport::{CloseReason, StdioConfig};
use serde_json::{Value, json};
use tests::peers::{
    Notes, TempDir, TestRoots, args, assert_gone, call, close_and_assert_reaped, get_every_prompt, peer, texts,
};
use tests::support::recording_factory;

/// Each test's whole run, server start-up included.
const TEST_TIMEOUT: Duration = Duration::from_secs(60);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_everything_over_stdio() {
    let Some(entry) = peer("npm/node_modules/@modelcontextprotocol/server-everything/dist/index.js") else {
        return;
    };
    let started = Instant::now();
    tokio::time::timeout(TEST_TIMEOUT, everything(entry)).await.expect("server-everything: the test timed out");
    println!("server-everything: passed in {:?}", started.elapsed());
}

async fn everything(entry: PathBuf) {
    let config = StdioConfig::new("everything", "node", [entry.to_string_lossy().into_owned(), "stdio".into()]);
    let roots = TestRoots::new("file:///tmp/mcp-peer-interop-root");
    let notes = Arc::new(Notes::default());
    let mut options = ConnectionOptions::new("everything");
    options.callbacks =
        HostCallbacks { roots: Some(roots.clone()), notifications: Some(notes.clone()), ..Default::default() };
    // Era negotiation as a host leaves it (the default): probe with server/discover, fall back.
    options.era = EraPreference::Auto;
    let (factory, spawned) = recording_factory(config);
    let conn = McpConnection::new(factory, options);

    // Handshake. server-everything speaks only the legacy era: the modern probe is refused, and
    // auto mode falls back to the initialize handshake.
    let t = Instant::now();
    let info = conn.connect().await.expect("connect to server-everything");
    println!("initialize: {:?} ({} {})", t.elapsed(), info.implementation.name, info.implementation.version);
    assert_eq!(info.protocol_version, ProtocolVersion::LATEST_LEGACY, "auto mode falls back to the legacy era");
    let caps = &info.capabilities;
    assert!(caps.tools.is_some() && caps.prompts.is_some() && caps.resources.is_some(), "{caps:?}");
    assert!(caps.completions.is_some(), "server-everything declares completions: {caps:?}");

    // The client declared roots, so the server asks for them after `initialized`.
    roots.wait_called("server-everything").await;

    // Discovery: every list, every page.
    let inventory = conn.discover().await.expect("discover");
    assert!(inventory.warnings.is_empty(), "{:?}", inventory.warnings);
    let tools: Vec<&str> = inventory.tools.iter().map(|t| t.name.as_str()).collect();
    println!("tools ({}): {tools:?}", tools.len());
    for wanted in [
        "echo",
        "get-sum",
        "get-tiny-image",
        "get-structured-content",
        "get-annotated-message",
        "get-resource-links",
        "trigger-long-running-operation",
        "get-roots-list",
    ] {
        assert!(tools.contains(&wanted), "server-everything has no tool {wanted:?}: {tools:?}");
    }
    for tool in inventory.tools.iter() {
        assert_eq!(tool.input_schema.get("type"), Some(&json!("object")), "{}: inputSchema", tool.name);
    }
    assert_eq!(conn.list_all_tools().await.expect("tools/list").len(), inventory.tools.len());
    let prompts: Vec<&str> = inventory.prompts.iter().map(|p| p.name.as_str()).collect();
    println!("prompts ({}): {prompts:?}", prompts.len());
    assert!(prompts.contains(&"simple-prompt") && prompts.contains(&"completable-prompt"), "{prompts:?}");
    println!("resources: {}, templates: {}", inventory.resources.len(), inventory.resource_templates.len());
    assert!(!inventory.resources.is_empty(), "server-everything lists resources");
    let templates: Vec<&str> = inventory.resource_templates.iter().map(|t| t.uri_template.as_str()).collect();
    let text_template = "demo://resource/dynamic/text/{resourceId}";
    let blob_template = "demo://resource/dynamic/blob/{resourceId}";
    assert!(templates.contains(&text_template) && templates.contains(&blob_template), "{templates:?}");

    tools_round(&conn, &inventory.tools).await;
    prompts_round(&conn, &inventory.prompts).await;
    resources_round(&conn, &inventory.resources).await;

    // Completion of a prompt argument, then of a second one in the context of the first.
    let mut params = CompleteParams {
        reference: Reference::prompt("completable-prompt"),
        argument: CompleteArgument { name: "department".into(), value: "E".into(), ..Default::default() },
        context: None,
        meta: None,
        extra: JsonObject::new(),
    };
    let result = conn.complete(params.clone()).await.expect("completion/complete");
    assert!(result.completion.values.iter().any(|v| v == "Engineering"), "{:?}", result.completion);
    params.argument = CompleteArgument { name: "name".into(), value: "A".into(), ..Default::default() };
    params.context = Some(CompleteContext {
        arguments: Some(BTreeMap::from([("department".into(), "Engineering".into())])),
        ..Default::default()
    });
    let result = conn.complete(params).await.expect("completion/complete with context");
    assert!(result.completion.values.iter().any(|v| v == "Alice"), "{:?}", result.completion);
    let template_ref = CompleteParams {
        reference: Reference::resource_template(text_template),
        argument: CompleteArgument { name: "resourceId".into(), value: "1".into(), ..Default::default() },
        context: None,
        meta: None,
        extra: JsonObject::new(),
    };
    let result = conn.complete(template_ref).await.expect("completion/complete on a template");
    assert!(result.completion.values.iter().any(|v| v.starts_with('1')), "{:?}", result.completion);

    // Errors from the peer: a JSON-RPC error for an unknown resource, a failed tool result for an
    // unknown tool; the connection stays usable after both.
    match conn.read_resource("demo://does-not-exist").await {
        Err(ConnectionError::Session(SessionError::Rpc { error, .. })) => {
            assert_eq!(error.code, ErrorCode::INVALID_PARAMS, "{error:?}")
        }
        other => panic!("reading an unknown resource: expected a JSON-RPC error, got {other:?}"),
    }
    let unknown = conn.call_tool("no-such-tool", None, RequestOptions::default()).await.expect("tools/call");
    assert_eq!(unknown.complete().expect("a result").is_error, Some(true));
    conn.set_logging_level(LoggingLevel::Debug).await.expect("logging/setLevel");
    conn.ping().await.expect("ping");

    // The server runs with the transport's reduced environment: nothing of ours leaks into it.
    let env = call(&conn, "get-env", json!({}), RequestOptions::default()).await;
    let env: JsonObject = serde_json::from_str(texts(&env)[0]).expect("get-env returns a JSON object");
    for key in env.keys() {
        let upper = key.to_ascii_uppercase();
        assert!(
            !upper.contains("PROXY") && !upper.starts_with("MCP_") && !upper.starts_with("CARGO"),
            "the server inherited {key}: {:?}",
            env.keys().collect::<Vec<_>>()
        );
    }

    // Roots: the server saw ours.
    let listed = call(&conn, "get-roots-list", json!({}), RequestOptions::default()).await;
    let text = texts(&listed).join("\n");
    assert!(text.contains(&roots.uri), "get-roots-list does not show our root: {text}");
    assert!(roots.calls.load(Ordering::SeqCst) >= 1);
    println!("roots/list answered {} time(s)", roots.calls.load(Ordering::SeqCst));
    let seen = notes.0.lock().unwrap().clone();
    assert!(seen.iter().any(|m| m == "notifications/message"), "no log notification arrived: {seen:?}");

    close_and_assert_reaped(&conn, &spawned).await;
    assert!(conn.session().await.is_err(), "the connection is closed");
}

async fn tools_round(conn: &McpConnection, tools: &[mcp_protocol::types::tools::Tool]) {
    let none = RequestOptions::default;

    let echo = call(conn, "echo", json!({"message": "hello from rust"}), none()).await;
    assert_eq!(texts(&echo), ["Echo: hello from rust"]);

    let sum = call(conn, "get-sum", json!({"a": 2, "b": 3}), none()).await;
    assert!(texts(&sum).iter().any(|t| t.contains('5')), "{:?}", sum.content);

    let image = call(conn, "get-tiny-image", json!({}), none()).await;
    let png = image.content.iter().find_map(|b| match b {
        ContentBlock::Image(i) => Some(i),
        _ => None,
    });
    let png = png.unwrap_or_else(|| panic!("get-tiny-image returned no image: {:?}", image.content));
    assert_eq!(png.mime_type, "image/png");
    assert!(png.data.starts_with("iVBORw0KGgo"), "not a base64 PNG: {}…", &png.data[..png.data.len().min(20)]);

    let structured = call(conn, "get-structured-content", json!({"location": "New York"}), none()).await;
    let value = structured.structured_content.as_ref().expect("get-structured-content has structuredContent");
    let schema = tools.iter().find(|t| t.name == "get-structured-content").and_then(|t| t.output_schema.as_ref());
    let required = schema.and_then(|s| s.get("required")).and_then(Value::as_array).expect("an outputSchema");
    for key in required {
        let key = key.as_str().unwrap();
        assert!(value.get(key).is_some(), "structuredContent lacks {key:?}: {value}");
    }

    let annotated =
        call(conn, "get-annotated-message", json!({"messageType": "error", "includeImage": true}), none()).await;
    let annotations = annotated.content.iter().find_map(|b| match b {
        ContentBlock::Text(t) => t.annotations.as_ref(),
        _ => None,
    });
    let annotations = annotations.unwrap_or_else(|| panic!("no annotated text: {:?}", annotated.content));
    assert!(annotations.priority.is_some() && annotations.audience.is_some(), "{annotations:?}");
    assert!(annotated.content.iter().any(|b| matches!(b, ContentBlock::Image(_))), "includeImage: true");

    let links = call(conn, "get-resource-links", json!({"count": 3}), none()).await;
    let links: Vec<_> = links
        .content
        .iter()
        .filter_map(|b| match b {
            ContentBlock::ResourceLink(l) => Some(l),
            _ => None,
        })
        .collect();
    assert_eq!(links.len(), 3, "{links:?}");
    for link in &links {
        let read = conn.read_resource(&link.uri).await.expect("read a linked resource").complete().unwrap();
        assert!(!read.contents.is_empty(), "{} is empty", link.uri);
    }

    // Progress: 4 steps over 2 s, each reported to the callback before the result. Each one also
    // extends the 1.5 s timeout, which the whole operation outlasts.
    let progress: Arc<Mutex<Vec<ProgressParams>>> = Arc::default();
    let sink = progress.clone();
    let options = RequestOptions {
        progress: Some(Arc::new(move |p: ProgressParams| sink.lock().unwrap().push(p))),
        timeout: Some(Duration::from_millis(1500)),
    };
    let t = Instant::now();
    let long = call(conn, "trigger-long-running-operation", json!({"duration": 2, "steps": 4}), options).await;
    assert!(texts(&long).iter().any(|t| t.contains("completed")), "{:?}", long.content);
    let progress = progress.lock().unwrap().clone();
    println!(
        "long-running operation: {:?}, progress {:?}",
        t.elapsed(),
        progress.iter().map(|p| p.progress.to_string()).collect::<Vec<_>>()
    );
    assert_eq!(progress.len(), 4, "{progress:?}");
    for (i, p) in progress.iter().enumerate() {
        // Compared as JSON: the wire values, whatever number type the params use.
        let p = serde_json::to_value(p).unwrap();
        assert_eq!(p["progress"].as_f64(), Some((i + 1) as f64), "{p}");
        assert_eq!(p["total"].as_f64(), Some(4.0), "{p}");
    }

    // A request that times out (no progress asked, so nothing extends it) fails with Timeout and
    // sends notifications/cancelled; whatever the server sends later is ignored, and the
    // connection stays usable.
    let options = RequestOptions { timeout: Some(Duration::from_millis(300)), ..Default::default() };
    let slow = args(json!({"duration": 1, "steps": 1}));
    match conn.call_tool("trigger-long-running-operation", slow, options).await {
        Err(ConnectionError::Session(SessionError::Timeout { .. })) => {}
        other => panic!("expected a timeout, got {other:?}"),
    }
    let echo = call(conn, "echo", json!({"message": "after a timeout"}), none()).await;
    assert_eq!(texts(&echo), ["Echo: after a timeout"]);
}

async fn prompts_round(conn: &McpConnection, prompts: &[mcp_protocol::types::prompts::Prompt]) {
    get_every_prompt(conn, prompts).await;
    println!("prompts/get: all {} prompts", prompts.len());
}

async fn resources_round(conn: &McpConnection, resources: &[mcp_protocol::types::resources::Resource]) {
    // A text resource from the list.
    let listed = &resources[0];
    let read = conn.read_resource(&listed.uri).await.expect("resources/read").complete().unwrap();
    match &read.contents[..] {
        [ResourceContents::Text(t)] => {
            assert_eq!(t.uri, listed.uri);
            assert!(!t.text.is_empty());
        }
        other => panic!("{}: expected one text content, got {other:?}", listed.uri),
    }
    // A text and a blob resource from the templates.
    let uri = "demo://resource/dynamic/text/1";
    let read = conn.read_resource(uri).await.expect("resources/read text").complete().unwrap();
    assert!(matches!(&read.contents[..], [ResourceContents::Text(t)] if t.text.contains("Resource 1")), "{read:?}");
    let uri = "demo://resource/dynamic/blob/2";
    let read = conn.read_resource(uri).await.expect("resources/read blob").complete().unwrap();
    let [ResourceContents::Blob(blob)] = &read.contents[..] else { panic!("{uri}: expected one blob: {read:?}") };
    assert!(!blob.blob.is_empty() && blob.blob.len() % 4 == 0, "not base64: {}", blob.blob);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcp_server_time_over_stdio() {
    let Some(program) = peer("venv/bin/mcp-server-time") else { return };
    let started = Instant::now();
    // mcp-server-time is dual-era: auto negotiates the modern era, legacy forces the handshake.
    for (era, expected) in
        [(EraPreference::Auto, ProtocolVersion::LATEST_MODERN), (EraPreference::Legacy, ProtocolVersion::LATEST_LEGACY)]
    {
        tokio::time::timeout(TEST_TIMEOUT, time_server(program.clone(), era, expected))
            .await
            .expect("mcp-server-time: the test timed out");
    }
    println!("mcp-server-time: passed in {:?}", started.elapsed());
}

async fn time_server(program: PathBuf, era: EraPreference, expected: ProtocolVersion) {
    let config = StdioConfig::new("time", program.to_string_lossy(), Vec::<String>::new());
    let mut options = ConnectionOptions::new("time");
    options.era = era;
    let (factory, spawned) = recording_factory(config);
    let conn = McpConnection::new(factory, options);
    let t = Instant::now();
    let info = conn.connect().await.expect("connect to mcp-server-time");
    println!("initialize: {:?} ({} {})", t.elapsed(), info.implementation.name, info.implementation.version);
    assert_eq!(info.protocol_version, expected, "{era:?}");

    let tools = conn.list_all_tools().await.expect("tools/list");
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    assert!(names.contains(&"get_current_time") && names.contains(&"convert_time"), "{names:?}");
    let inventory = conn.discover().await.expect("discover");
    assert!(inventory.warnings.is_empty(), "{:?}", inventory.warnings);

    let now = call(&conn, "get_current_time", json!({"timezone": "UTC"}), RequestOptions::default()).await;
    let value = now.structured_content.clone().expect("structuredContent");
    assert_eq!(value["timezone"], "UTC");
    let datetime = value["datetime"].as_str().expect("datetime");
    assert!(datetime.ends_with("+00:00"), "{datetime}");
    assert!(texts(&now).iter().any(|t| t.contains(datetime)), "{:?}", now.content);

    let converted = call(
        &conn,
        "convert_time",
        json!({"source_timezone": "UTC", "time": "12:00", "target_timezone": "Asia/Tokyo"}),
        RequestOptions::default(),
    )
    .await;
    let value = converted.structured_content.clone().expect("structuredContent");
    let source = value["source"]["datetime"].as_str().expect("source datetime");
    let target = value["target"]["datetime"].as_str().expect("target datetime");
    assert!(source.contains("T12:00:00") && source.ends_with("+00:00"), "{source}");
    assert!(target.contains("T21:00:00") && target.ends_with("+09:00"), "{target}");
    assert_eq!(value["time_difference"], "+9.0h");

    // A bad time zone is a failed tool result, not a protocol error.
    let bad = conn
        .call_tool("get_current_time", args(json!({"timezone": "Bad/Zone"})), RequestOptions::default())
        .await
        .expect("tools/call")
        .complete()
        .unwrap();
    assert_eq!(bad.is_error, Some(true), "{bad:?}");

    close_and_assert_reaped(&conn, &spawned).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_filesystem_over_stdio_with_roots() {
    let Some(entry) = peer("npm/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js") else {
        return;
    };
    let started = Instant::now();
    tokio::time::timeout(TEST_TIMEOUT, filesystem(entry)).await.expect("server-filesystem: the test timed out");
    println!("server-filesystem: passed in {:?}", started.elapsed());
}

async fn filesystem(entry: PathBuf) {
    // No directory on the command line: the server can only work with the roots we give it.
    let dir = TempDir::new("fs");
    let root = dir.0.to_string_lossy().into_owned();
    let config = StdioConfig::new("filesystem", "node", [entry.to_string_lossy().into_owned()]);
    let roots = TestRoots::new(format!("file://{root}"));
    let mut options = ConnectionOptions::new("filesystem");
    options.callbacks.roots = Some(roots.clone());
    let (factory, spawned) = recording_factory(config);
    let conn = McpConnection::new(factory, options);
    conn.connect().await.expect("connect to server-filesystem");
    roots.wait_called("server-filesystem").await;
    let inventory = conn.discover().await.expect("discover");
    let names: Vec<&str> = inventory.tools.iter().map(|t| t.name.as_str()).collect();
    for wanted in ["list_allowed_directories", "write_file", "read_text_file", "list_directory"] {
        assert!(names.contains(&wanted), "server-filesystem has no tool {wanted:?}: {names:?}");
    }

    // The server applies the roots after our answer arrives: wait until it lists our root.
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let allowed = call(&conn, "list_allowed_directories", json!({}), RequestOptions::default()).await;
        if texts(&allowed).iter().any(|t| t.contains(&root)) {
            break;
        }
        assert!(Instant::now() < deadline, "our root never became an allowed directory: {:?}", allowed.content);
        tokio::time::sleep(Duration::from_millis(100)).await;
    }

    let file = format!("{root}/hello.txt");
    call(&conn, "write_file", json!({"path": file, "content": "hello\nfrom rust\n"}), RequestOptions::default()).await;
    assert_eq!(std::fs::read_to_string(&file).expect("the server wrote the file"), "hello\nfrom rust\n");
    let read = call(&conn, "read_text_file", json!({"path": file}), RequestOptions::default()).await;
    assert_eq!(texts(&read), ["hello\nfrom rust\n"]);
    let listing = call(&conn, "list_directory", json!({"path": root}), RequestOptions::default()).await;
    assert!(texts(&listing).iter().any(|t| t.contains("[FILE] hello.txt")), "{:?}", listing.content);
    // Outside the roots: a failed tool result.
    let outside = conn
        .call_tool("read_text_file", args(json!({"path": "/etc/hostname"})), RequestOptions::default())
        .await
        .expect("tools/call")
        .complete()
        .unwrap();
    assert_eq!(outside.is_error, Some(true), "{outside:?}");

    close_and_assert_reaped(&conn, &spawned).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_memory_over_stdio() {
    let Some(entry) = peer("npm/node_modules/@modelcontextprotocol/server-memory/dist/index.js") else {
        return;
    };
    let started = Instant::now();
    tokio::time::timeout(TEST_TIMEOUT, memory(entry)).await.expect("server-memory: the test timed out");
    println!("server-memory: passed in {:?}", started.elapsed());
}

async fn memory(entry: PathBuf) {
    let dir = TempDir::new("memory");
    let memory_file = dir.0.join("memory.jsonl");
    let mut config = StdioConfig::new("memory", "node", [entry.to_string_lossy().into_owned()]);
    config.env.insert("MEMORY_FILE_PATH".into(), memory_file.to_string_lossy().into_owned());
    let (factory, spawned) = recording_factory(config);
    let conn = McpConnection::new(factory, ConnectionOptions::new("memory"));
    conn.connect().await.expect("connect to server-memory");
    let inventory = conn.discover().await.expect("discover");
    assert!(inventory.warnings.is_empty(), "{:?}", inventory.warnings);
    let names: Vec<&str> = inventory.tools.iter().map(|t| t.name.as_str()).collect();
    assert!(names.contains(&"create_entities") && names.contains(&"read_graph"), "{names:?}");

    let entities = json!({"entities": [
        {"name": "Ada_Lovelace", "entityType": "person", "observations": ["Wrote the first program"]},
        {"name": "Analytical_Engine", "entityType": "machine", "observations": ["Designed by Babbage"]},
    ]});
    call(&conn, "create_entities", entities, RequestOptions::default()).await;
    let relations =
        json!({"relations": [{"from": "Ada_Lovelace", "to": "Analytical_Engine", "relationType": "programmed"}]});
    call(&conn, "create_relations", relations, RequestOptions::default()).await;
    let graph = call(&conn, "read_graph", json!({}), RequestOptions::default()).await;
    let graph = graph.structured_content.expect("read_graph has structuredContent");
    assert_eq!(graph["entities"].as_array().map(Vec::len), Some(2), "{graph}");
    assert_eq!(graph["relations"][0]["relationType"], "programmed", "{graph}");
    let found = call(&conn, "search_nodes", json!({"query": "program"}), RequestOptions::default()).await;
    let found = found.structured_content.expect("search_nodes has structuredContent");
    assert_eq!(found["entities"][0]["name"], "Ada_Lovelace", "{found}");
    let stored = std::fs::read_to_string(&memory_file).expect("the server wrote its memory file");
    assert!(stored.contains("Ada_Lovelace"), "{stored}");

    close_and_assert_reaped(&conn, &spawned).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn killed_server_fails_its_pending_request() {
    let Some(entry) = peer("npm/node_modules/@modelcontextprotocol/server-everything/dist/index.js") else {
        return;
    };
    let started = Instant::now();
    tokio::time::timeout(TEST_TIMEOUT, killed_server(entry)).await.expect("the test timed out");
    println!("killed server-everything: passed in {:?}", started.elapsed());
}

/// The server dies (SIGKILL) while a request is pending: the request fails with the exit, the
/// connection is no longer connected, and nothing is left running.
async fn killed_server(entry: PathBuf) {
    let config = StdioConfig::new("everything-killed", "node", [entry.to_string_lossy().into_owned(), "stdio".into()]);
    let (factory, spawned) = recording_factory(config);
    let conn = Arc::new(McpConnection::new(factory, ConnectionOptions::new("everything-killed")));
    conn.connect().await.expect("connect to server-everything");
    let pid = spawned.pids().last().copied().unwrap_or(0);

    let (first_progress, progressed) = tokio::sync::oneshot::channel::<()>();
    let first_progress = Mutex::new(Some(first_progress));
    let options = RequestOptions {
        progress: Some(Arc::new(move |_| {
            if let Some(tx) = first_progress.lock().unwrap().take() {
                let _ = tx.send(());
            }
        })),
        ..Default::default()
    };
    let pending = tokio::spawn({
        let conn = conn.clone();
        let slow = args(json!({"duration": 30, "steps": 60}));
        async move { conn.call_tool("trigger-long-running-operation", slow, options).await }
    });
    progressed.await.expect("the operation reported progress");
    let killed = std::process::Command::new("kill").args(["-KILL", &pid.to_string()]).status().expect("run kill");
    assert!(killed.success());

    let result = tokio::time::timeout(Duration::from_secs(10), pending).await.expect("the request resolves");
    match result.expect("the task") {
        Err(ConnectionError::Session(SessionError::Closed { reason: CloseReason::Exited { status, .. }, .. })) => {
            use std::os::unix::process::ExitStatusExt;
            assert_eq!(status.and_then(|s| s.signal()), Some(9), "{status:?}");
        }
        other => panic!("expected the pending request to fail with the exit, got {other:?}"),
    }
    match conn.session().await {
        Err(ConnectionError::NotConnected(_)) => {}
        Err(ConnectionError::Session(SessionError::Closed { reason: CloseReason::Exited { .. }, .. })) => {}
        other => panic!("the connection after the server died: {other:?}"),
    }
    conn.close().await;
    assert_gone(pid).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_everything_resources_reach_the_history_text() {
    let Some(entry) = peer("npm/node_modules/@modelcontextprotocol/server-everything/dist/index.js") else {
        return;
    };
    let started = Instant::now();
    tokio::time::timeout(TEST_TIMEOUT, resources_in_history(entry)).await.expect("the test timed out");
    println!("server-everything resources in the history text: passed in {:?}", started.elapsed());
}

/// What the LLM is given for results that mix text with resources: server-everything's
/// `get-resource-reference` (text, an embedded text resource, text) and `get-resource-links`
/// (text, then resource links), called as a host calls them, through `ToolRegistry::invoke` over
/// the manager's `McpToolProvider`. Every block is in the history text, in order.
async fn resources_in_history(entry: PathBuf) {
    use mcp_manager::config::{McpConfig, ProcessEnv};
    use mcp_manager::manager::{ManagerOptions, McpManager, McpToolProvider};
    use tool_system::{ToolExecutionContext, ToolInvocation, ToolRegistry};

    let config = json!({"mcpServers": {"everything": {"command": "node", "args": [entry, "stdio"]}}});
    let config = McpConfig::parse(&config.to_string(), None, "mcp.json", &ProcessEnv).expect("the config parses");
    let manager = McpManager::start(config, ManagerOptions::default()).await;
    let status = manager.status();
    assert_eq!(status[0].state, mcp_manager::ServerState::Ready, "{status:#?}");
    let pid = status[0].pid.expect("a stdio server has a pid");
    let registry = ToolRegistry::new();
    registry.register(McpToolProvider::new(manager.clone())).await;
    let ctx = ToolExecutionContext::default();
    let invoke = |name: &'static str, arguments: Value| {
        let (registry, ctx) = (&registry, ctx.clone());
        async move {
            let result = registry.invoke(ToolInvocation::from_value(name, arguments), ctx).await;
            assert!(result.success, "{name}: {result:?}");
            result.history_text()
        }
    };

    // The resource's text, as the server makes it (`textResource` in its resources/templates.js):
    // "Resource 1: This is a plaintext resource created at <local time>".
    let uri = "demo://resource/dynamic/text/1";
    let text = invoke("everything__get-resource-reference", json!({"resourceType": "Text", "resourceId": 1})).await;
    println!("get-resource-reference: {text:?}");
    let head = format!("Returning resource reference for Resource 1:\n[resource: {uri}, text/plain]\n");
    let rest = text.strip_prefix(&head).unwrap_or_else(|| panic!("the text, then the resource: {text:?}"));
    let (resource_text, last) = rest.split_once('\n').unwrap_or_else(|| panic!("three blocks: {text:?}"));
    assert!(resource_text.starts_with("Resource 1: This is a plaintext resource created at "), "{text:?}");
    assert_eq!(last, format!("You can access this resource using the URI: {uri}"), "{text:?}");

    // Links: each with its name, URI, MIME type and description (`get-resource-links.js`; every
    // resource there is `text/plain`, odd ids are blobs).
    let links = invoke("everything__get-resource-links", json!({"count": 2})).await;
    assert_eq!(
        links,
        "Here are 2 resource links to resources available in this server:\n\
         [resource link: Blob Resource 1 <demo://resource/dynamic/blob/1>, text/plain]\n\
         Resource 1: plaintext resource\n\
         [resource link: Text Resource 2 <demo://resource/dynamic/text/2>, text/plain]\n\
         Resource 2: plaintext resource"
    );

    // The registry closes its providers, and McpToolProvider closes the manager.
    registry.close().await;
    assert!(manager.is_closed());
    test_support::process::wait_until_gone(pid, Duration::from_secs(10))
        .await
        .unwrap_or_else(|e| panic!("after close: {e}"));
    assert_gone(pid).await;
}
