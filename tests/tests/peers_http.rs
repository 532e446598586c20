//! Interop over HTTP with real servers that no one here wrote: the npm reference server
//! `@modelcontextprotocol/server-everything` in its `streamableHttp` and `sse` modes, and a small
//! server on the Python `mcp` SDK's public API (`tests/peers/python/http_server.py`) over
//! streamable HTTP.
//!
//! Same contract as `peers_stdio.rs`: `cargo xtask test` (or `cargo xtask peers`) installs the
//! peers into `target/peers/` and runs this file with `MCP_PEERS_DIR` set and
//! `MCP_REQUIRE_PEERS=1`. Without `MCP_PEERS_DIR` every test says it skipped and passes.
//!
//! Each server is started on a free port of 127.0.0.1 (found by binding port 0 and releasing it)
//! with an empty environment, and listens on the loopback interface only: node servers run with
//! `tests/peers/loopback.cjs` preloaded, which moves a host-less `listen()` onto 127.0.0.1, and
//! each test checks the listening sockets in `/proc/net`. Every server's whole process group is
//! stopped at the end of its test, and killed if the test fails first.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::future::BoxFuture;
use mcp_manager::callbacks::{ElicitationHandler, SamplingHandler};
use mcp_manager::connection::EraPreference;
use mcp_manager::{
    ConnectionError, ConnectionOptions, HostCallbacks, McpConnection, RemoteTarget, RequestOptions, SessionError,
};
use mcp_protocol::types::completion::{CompleteArgument, CompleteContext, CompleteParams, Reference};
use mcp_protocol::types::content::ResourceContents;
use mcp_protocol::types::elicitation::{ElicitParams, ElicitResult};
use mcp_protocol::types::meta::JsonObject;
use mcp_protocol::types::progress::ProgressParams;
use mcp_protocol::types::prompts::GetPromptParams;
use mcp_protocol::types::sampling::{CreateMessageParams, CreateMessageResult};
use mcp_protocol::{ErrorCode, ErrorObject, ProtocolVersion};
use mcp_transport::TransportKind;
use serde_json::{Value, json};
use tests::peers::{HttpPeer, Notes, TestRoots, args, call, free_port, get_every_prompt, peer, repo_peer_file, texts};

/// Each test's whole run, server start-up included.
const TEST_TIMEOUT: Duration = Duration::from_secs(90);

const EVERYTHING: &str = "npm/node_modules/@modelcontextprotocol/server-everything/dist/index.js";

/// What the sampling handler answers, whatever it is asked.
const SAMPLED: &str = "a fixed reply from the test's sampling handler";

/// Answers every sampling request with [`SAMPLED`] and records the prompts it was given.
#[derive(Default)]
struct FixedSampler(Mutex<Vec<CreateMessageParams>>);

impl SamplingHandler for FixedSampler {
    fn create_message(
        &self,
        _server: &str,
        params: CreateMessageParams,
    ) -> BoxFuture<'static, Result<CreateMessageResult, ErrorObject>> {
        self.0.lock().unwrap().push(params);
        Box::pin(async { Ok(CreateMessageResult::assistant_text("test-model", SAMPLED)) })
    }
}

/// Accepts every form elicitation with a name (and, where asked, the terms), recording the
/// messages shown.
#[derive(Default)]
struct FormFiller(Mutex<Vec<String>>);

impl ElicitationHandler for FormFiller {
    fn elicit(&self, _server: &str, params: ElicitParams) -> BoxFuture<'static, Result<ElicitResult, ErrorObject>> {
        self.0.lock().unwrap().push(params.message().unwrap_or_default().to_owned());
        let content = json!({"name": "Ada", "check": true, "email": "ada@example.com", "integer": 7});
        let Value::Object(content) = content else { unreachable!() };
        Box::pin(async move { Ok(ElicitResult::accept(content)) })
    }
}

/// The host side of a test: every callback, recording what it was asked.
struct Host {
    roots: Arc<TestRoots>,
    sampler: Arc<FixedSampler>,
    filler: Arc<FormFiller>,
    notes: Arc<Notes>,
}

impl Host {
    fn new() -> Host {
        Host {
            roots: TestRoots::new("file:///tmp/mcp-peer-http-root"),
            sampler: Arc::default(),
            filler: Arc::default(),
            notes: Arc::default(),
        }
    }

    fn options(&self, name: &str) -> ConnectionOptions {
        let mut options = ConnectionOptions::new(name);
        options.callbacks = HostCallbacks {
            sampling: Some(self.sampler.clone()),
            elicitation: Some(self.filler.clone()),
            roots: Some(self.roots.clone()),
            notifications: Some(self.notes.clone()),
            apps: None,
        };
        options
    }
}

/// Progress callbacks that collect what they get.
fn progress_recorder() -> (RequestOptions, Arc<Mutex<Vec<ProgressParams>>>) {
    let progress: Arc<Mutex<Vec<ProgressParams>>> = Arc::default();
    let sink = progress.clone();
    let options = RequestOptions {
        progress: Some(Arc::new(move |p: ProgressParams| sink.lock().unwrap().push(p))),
        timeout: Some(Duration::from_secs(10)),
    };
    (options, progress)
}

/// Start server-everything in `mode` (`streamableHttp` or `sse`) on a free loopback port.
async fn start_everything(entry: &Path, mode: &str) -> HttpPeer {
    let port = free_port();
    let loopback = repo_peer_file("loopback.cjs");
    assert!(loopback.is_file(), "{} is missing", loopback.display());
    let argv = ["--require".to_owned(), loopback.display().to_string(), entry.display().to_string(), mode.to_owned()];
    let name = if mode == "sse" { "server-everything (sse)" } else { "server-everything (streamableHttp)" };
    let peer = HttpPeer::start(name, Path::new("node"), &argv, &[("PORT", port.to_string())], port).await;
    peer.assert_loopback_only();
    peer
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_everything_over_streamable_http() {
    let Some(entry) = peer(EVERYTHING) else { return };
    let started = Instant::now();
    tokio::time::timeout(TEST_TIMEOUT, async {
        let server = start_everything(&entry, "streamableHttp").await;
        // The transport is implied: streamable HTTP answers, so there is no fallback.
        everything(&server.url("/mcp"), None, TransportKind::StreamableHttp).await;
        server.stop().await;
    })
    .await
    .expect("server-everything over streamable HTTP: the test timed out");
    println!("server-everything (streamableHttp): passed in {:?}", started.elapsed());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_everything_over_sse() {
    let Some(entry) = peer(EVERYTHING) else { return };
    let started = Instant::now();
    tokio::time::timeout(TEST_TIMEOUT, async {
        let server = start_everything(&entry, "sse").await;
        let url = server.url("/sse");

        // Explicitly streamable HTTP: express answers the POST on /sse with 404, and nothing
        // falls back.
        let target = RemoteTarget::new(&url).with_transport(Some(TransportKind::StreamableHttp));
        let conn = McpConnection::remote(&target, ConnectionOptions::new("everything-sse-as-http")).unwrap();
        let error = conn.connect().await.expect_err("server-everything's sse mode does not speak streamable HTTP");
        match &error {
            ConnectionError::Session(SessionError::Transport { method, error, .. }) => {
                assert_eq!((method.as_str(), error.http_status()), ("initialize", Some(404)), "{error}")
            }
            other => panic!("expected initialize to fail with HTTP 404, got {other:?}"),
        }

        // Explicitly HTTP+SSE: straight to the stream.
        let target = RemoteTarget::new(&url).with_transport(Some(TransportKind::Sse));
        let conn = McpConnection::remote(&target, ConnectionOptions::new("everything-sse")).unwrap();
        let info = conn.connect().await.expect("connect over HTTP+SSE");
        assert_eq!(info.transport, TransportKind::Sse);
        let echo = call(&conn, "echo", json!({"message": "over sse"}), RequestOptions::default()).await;
        assert_eq!(texts(&echo), ["Echo: over sse"]);
        conn.close().await;

        // Implied: streamable HTTP is refused (HTTP 404), and the connection falls back to the
        // legacy transport on the same URL; then the whole round.
        everything(&url, None, TransportKind::Sse).await;
        server.stop().await;
    })
    .await
    .expect("server-everything over HTTP+SSE: the test timed out");
    println!("server-everything (sse): passed in {:?}", started.elapsed());
}

/// The operations of the stdio interop test, over a remote transport: handshake, discovery,
/// tools with progress, prompts, resources, completion, errors, and the server's requests
/// (roots, sampling, elicitation) answered by the host's handlers.
async fn everything(url: &str, transport: Option<TransportKind>, expected: TransportKind) {
    let host = Host::new();
    let target = RemoteTarget::new(url).with_transport(transport);
    let mut options = host.options("everything");
    // Era negotiation as a host leaves it (the default): probe with server/discover, fall back.
    options.era = EraPreference::Auto;
    let conn = McpConnection::remote(&target, options).expect("a remote target");

    let t = Instant::now();
    let info = conn.connect().await.expect("connect to server-everything");
    println!(
        "connect: {:?} over {} ({} {})",
        t.elapsed(),
        info.transport,
        info.implementation.name,
        info.implementation.version
    );
    assert_eq!(info.transport, expected);
    // server-everything speaks only the legacy era: the modern probe is refused (over HTTP+SSE
    // too), and auto mode falls back to the initialize handshake.
    assert_eq!(info.protocol_version, ProtocolVersion::LATEST_LEGACY, "auto mode falls back to the legacy era");
    let caps = &info.capabilities;
    assert!(caps.tools.is_some() && caps.prompts.is_some() && caps.resources.is_some(), "{caps:?}");
    assert!(caps.completions.is_some(), "server-everything declares completions: {caps:?}");

    // The client declared roots, so the server asks for them after `initialized`; by then its
    // tools that depend on client capabilities are registered too.
    host.roots.wait_called("server-everything").await;

    let inventory = conn.discover().await.expect("discover");
    assert!(inventory.warnings.is_empty(), "{:?}", inventory.warnings);
    let tools: Vec<&str> = inventory.tools.iter().map(|t| t.name.as_str()).collect();
    println!("tools ({}): {tools:?}", tools.len());
    for wanted in [
        "echo",
        "get-sum",
        "trigger-long-running-operation",
        "get-roots-list",
        "trigger-sampling-request",
        "trigger-elicitation-request",
    ] {
        assert!(tools.contains(&wanted), "server-everything has no tool {wanted:?}: {tools:?}");
    }
    let prompts: Vec<&str> = inventory.prompts.iter().map(|p| p.name.as_str()).collect();
    assert!(prompts.contains(&"simple-prompt") && prompts.contains(&"completable-prompt"), "{prompts:?}");
    let templates: Vec<&str> = inventory.resource_templates.iter().map(|t| t.uri_template.as_str()).collect();
    let text_template = "demo://resource/dynamic/text/{resourceId}";
    assert!(templates.contains(&text_template), "{templates:?}");
    assert!(!inventory.resources.is_empty(), "server-everything lists resources");

    // Tools.
    let none = RequestOptions::default;
    let echo = call(&conn, "echo", json!({"message": "hello over http"}), none()).await;
    assert_eq!(texts(&echo), ["Echo: hello over http"]);
    let sum = call(&conn, "get-sum", json!({"a": 2, "b": 3}), none()).await;
    assert!(texts(&sum).iter().any(|t| t.contains('5')), "{:?}", sum.content);
    let structured = call(&conn, "get-structured-content", json!({"location": "New York"}), none()).await;
    assert!(structured.structured_content.is_some(), "{structured:?}");

    // Progress: 4 steps over 2 s, each reported before the result.
    let (options, progress) = progress_recorder();
    let long = call(&conn, "trigger-long-running-operation", json!({"duration": 2, "steps": 4}), options).await;
    assert!(texts(&long).iter().any(|t| t.contains("completed")), "{:?}", long.content);
    let progress = progress.lock().unwrap().clone();
    assert_eq!(progress.len(), 4, "{progress:?}");
    for (i, p) in progress.iter().enumerate() {
        let p = serde_json::to_value(p).unwrap();
        assert_eq!(p["progress"].as_f64(), Some((i + 1) as f64), "{p}");
        assert_eq!(p["total"].as_f64(), Some(4.0), "{p}");
    }

    // Prompts: every one, with plausible arguments.
    get_every_prompt(&conn, &inventory.prompts).await;

    // Resources: one listed, one text and one blob from the templates.
    let listed = &inventory.resources[0];
    let read = conn.read_resource(&listed.uri).await.expect("resources/read").complete().unwrap();
    assert!(!read.contents.is_empty(), "{} is empty", listed.uri);
    let read = conn.read_resource("demo://resource/dynamic/text/1").await.expect("read text").complete().unwrap();
    assert!(matches!(&read.contents[..], [ResourceContents::Text(t)] if t.text.contains("Resource 1")), "{read:?}");
    let read = conn.read_resource("demo://resource/dynamic/blob/2").await.expect("read blob").complete().unwrap();
    assert!(matches!(&read.contents[..], [ResourceContents::Blob(b)] if !b.blob.is_empty()), "{read:?}");

    // Completion, with the context of an earlier argument.
    let params = CompleteParams {
        reference: Reference::prompt("completable-prompt"),
        argument: CompleteArgument { name: "name".into(), value: "A".into(), ..Default::default() },
        context: Some(CompleteContext {
            arguments: Some(BTreeMap::from([("department".into(), "Engineering".into())])),
            ..Default::default()
        }),
        meta: None,
        extra: JsonObject::new(),
    };
    let result = conn.complete(params).await.expect("completion/complete");
    assert!(result.completion.values.iter().any(|v| v == "Alice"), "{:?}", result.completion);

    // The server's requests, answered by the host's handlers.
    let listed = call(&conn, "get-roots-list", json!({}), none()).await;
    assert!(texts(&listed).join("\n").contains(&host.roots.uri), "get-roots-list: {:?}", listed.content);
    let sampled =
        call(&conn, "trigger-sampling-request", json!({"prompt": "say something", "maxTokens": 20}), none()).await;
    assert!(texts(&sampled).join("\n").contains(SAMPLED), "the sampled text did not come back: {:?}", sampled.content);
    let asked = host.sampler.0.lock().unwrap().clone();
    assert_eq!(asked.len(), 1, "{asked:?}");
    assert_eq!(asked[0].max_tokens, 20);
    let elicited = call(&conn, "trigger-elicitation-request", json!({}), none()).await;
    let shown = texts(&elicited).join("\n");
    assert!(shown.contains("- Name: Ada") && shown.contains("Agreed to terms: true"), "{shown}");
    assert_eq!(host.filler.0.lock().unwrap().len(), 1);

    // Errors from the peer; the connection stays usable.
    match conn.read_resource("demo://does-not-exist").await {
        Err(ConnectionError::Session(SessionError::Rpc { error, .. })) => {
            assert_eq!(error.code, ErrorCode::INVALID_PARAMS, "{error:?}")
        }
        other => panic!("reading an unknown resource: expected a JSON-RPC error, got {other:?}"),
    }
    let unknown = conn.call_tool("no-such-tool", None, none()).await.expect("tools/call");
    assert_eq!(unknown.complete().expect("a result").is_error, Some(true));
    conn.ping().await.expect("ping");
    println!("roots/list answered {} time(s); notifications: {:?}", host.roots.calls.load(Ordering::SeqCst), {
        let mut seen = host.notes.0.lock().unwrap().clone();
        seen.dedup();
        seen
    });

    conn.close().await;
    assert!(conn.session().await.is_err(), "the connection is closed");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_sdk_server_over_streamable_http() {
    let Some(python) = peer("venv/bin/python") else { return };
    let started = Instant::now();
    tokio::time::timeout(TEST_TIMEOUT, python_server(python))
        .await
        .expect("the Python SDK server over streamable HTTP: the test timed out");
    println!("Python mcp server (streamable HTTP): passed in {:?}", started.elapsed());
}

async fn python_server(python: PathBuf) {
    let script = repo_peer_file("python/http_server.py");
    assert!(script.is_file(), "{} is missing", script.display());
    let port = free_port();
    let argv = [script.display().to_string(), "--port".to_owned(), port.to_string()];
    let server = HttpPeer::start("python mcp server", &python, &argv, &[], port).await;
    server.assert_loopback_only();

    let host = Host::new();
    let mut options = host.options("python");
    // The SDK is dual-era; this test is about the legacy handshake over streamable HTTP.
    options.era = EraPreference::Legacy;
    let target = RemoteTarget::new(server.url("/mcp")).with_transport(Some(TransportKind::StreamableHttp));
    let conn = McpConnection::remote(&target, options).expect("a remote target");
    let info = conn.connect().await.expect("connect to the Python server");
    println!("initialize: {} {} over {}", info.implementation.name, info.implementation.version, info.transport);
    assert_eq!(info.transport, TransportKind::StreamableHttp);
    assert_eq!(info.protocol_version, ProtocolVersion::LATEST_LEGACY);
    assert_eq!((info.implementation.name.as_str(), info.implementation.version.as_str()), ("py-http-peer", "1.0.0"));
    assert_eq!(info.instructions.as_deref(), Some("A test peer for the Rust client's HTTP interop tests."));

    // Tools.
    let tools = conn.list_all_tools().await.expect("tools/list");
    let mut names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    names.sort_unstable();
    assert_eq!(names, ["add", "ask_name", "greet", "slow"]);
    let none = RequestOptions::default;
    let sum = call(&conn, "add", json!({"a": 40, "b": 2}), none()).await;
    assert_eq!(texts(&sum), ["42"]);
    assert_eq!(sum.structured_content, Some(json!({"result": 42})));
    let greeting = call(&conn, "greet", json!({"name": "Rust"}), none()).await;
    assert_eq!(texts(&greeting), ["Hello, Rust!"]);
    let (options, progress) = progress_recorder();
    let slow = call(&conn, "slow", json!({"steps": 3}), options).await;
    assert_eq!(texts(&slow), ["done"]);
    let progress: Vec<Value> = progress.lock().unwrap().iter().map(|p| serde_json::to_value(p).unwrap()).collect();
    assert_eq!(progress.len(), 3, "{progress:?}");
    assert_eq!(progress[2]["message"], "step 3", "{progress:?}");
    // Elicitation: the server asks on the tool call's stream, our handler answers.
    let asked = call(&conn, "ask_name", json!({}), none()).await;
    assert_eq!(texts(&asked), ["Hello, Ada!"]);
    assert_eq!(host.filler.0.lock().unwrap().as_slice(), ["What is your name?"]);
    // Invalid arguments and unknown tools are failed results, not protocol errors.
    let bad = conn.call_tool("add", args(json!({"a": "x", "b": 1})), none()).await.expect("tools/call");
    assert_eq!(bad.complete().expect("a result").is_error, Some(true));
    let unknown = conn.call_tool("no_such_tool", None, none()).await.expect("tools/call");
    assert_eq!(unknown.complete().expect("a result").is_error, Some(true));

    // Prompts.
    let prompts = conn.list_all_prompts().await.expect("prompts/list");
    assert_eq!(prompts.iter().map(|p| p.name.as_str()).collect::<Vec<_>>(), ["greet"]);
    let params = GetPromptParams {
        name: "greet".into(),
        arguments: Some(BTreeMap::from([("who".into(), "the Rust client".into())])),
        ..Default::default()
    };
    let prompt = conn.get_prompt(params).await.expect("prompts/get").complete().expect("a prompt");
    let text = serde_json::to_value(&prompt.messages).unwrap();
    assert_eq!(text[0]["content"]["text"], "Say hello to the Rust client", "{text}");

    // Resources.
    let resources = conn.list_all_resources().await.expect("resources/list");
    assert_eq!(resources.iter().map(|r| r.uri.as_str()).collect::<Vec<_>>(), ["demo://hello"]);
    let read = conn.read_resource("demo://hello").await.expect("resources/read").complete().unwrap();
    assert!(matches!(&read.contents[..], [ResourceContents::Text(t)] if t.text == "hello resource"), "{read:?}");
    let templates = conn.list_all_resource_templates().await.expect("resources/templates/list");
    assert_eq!(templates.iter().map(|t| t.uri_template.as_str()).collect::<Vec<_>>(), ["demo://greeting/{name}"]);
    let read = conn.read_resource("demo://greeting/Ada").await.expect("read a template").complete().unwrap();
    assert!(matches!(&read.contents[..], [ResourceContents::Text(t)] if t.text == "Greetings, Ada."), "{read:?}");
    match conn.read_resource("demo://nope").await {
        Err(ConnectionError::Session(SessionError::Rpc { error, .. })) => {
            assert_eq!(error.code, ErrorCode::INVALID_PARAMS, "{error:?}")
        }
        other => panic!("reading an unknown resource: expected a JSON-RPC error, got {other:?}"),
    }
    conn.ping().await.expect("ping");

    conn.close().await;
    assert!(conn.session().await.is_err(), "the connection is closed");
    server.stop().await;
}
