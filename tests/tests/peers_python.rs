//! Interop with dual-era Python servers, in both eras, over stdio and streamable HTTP: a server on
//! the Python SDK's `MCPServer` (`mcp` 2.3.0, `tests/peers/python/mcpserver_peer.py`) and one on
//! FastMCP (`fastmcp` 4.2.3, `tests/peers/python/fastmcp_peer.py`).
//!
//! The matrix: {MCPServer, FastMCP} × {stdio, streamable HTTP} × {auto, legacy}. In auto mode the
//! client probes with `server/discover` and must settle on the modern era (2026-07-28); in legacy
//! mode it runs the `initialize` handshake and must settle on 2025-11-25. Each case lists and calls
//! tools, gets a prompt and reads a resource and a resource template. On the MCPServer, the tool
//! `greet_user` asks for the user's name, and the host's elicitation handler answers it: in the
//! modern era through a multi round-trip request (the first attempt comes back as an
//! `InputRequiredResult` with an `elicitation/create` input request, and the retry carries the
//! answer), in the legacy era through an `elicitation/create` request the server sends in the
//! middle of the call. Both ways, the answer must reach the tool's result.
//!
//! A third server (`tests/peers/python/mrtr_peer.py`, also `mcp` 2.3.0) covers the rest of the
//! multi round-trip and URL elicitation behaviour: input requests that carry `"jsonrpc": "2.0"`,
//! a job that answers "still working" twice before it completes (and checks the client paused
//! before each retry), and a tool that raises -32042 until the user has opened its URL, in both
//! eras over streamable HTTP (the URL is a route of the server itself; the test's handler opens
//! it, the server completes the elicitation, and the client retries the call on its own).
//!
//! Same contract as `peers_stdio.rs`: `cargo xtask test` (or `cargo xtask peers`) installs the
//! venv into `target/peers/` and runs this file with `MCP_PEERS_DIR` set and
//! `MCP_REQUIRE_PEERS=1`. Without `MCP_PEERS_DIR` every test says it skipped and passes.
//!
//! Stdio servers run through this stack's `StdioTransport` and must be gone, with their process
//! group, after the connection closes. HTTP servers listen on a free port of 127.0.0.1 only
//! (checked in `/proc/net`), in a process group of their own that is stopped at the end of the
//! test and killed if the test fails first.

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::future::BoxFuture;
use mcp_manager::callbacks::ElicitationHandler;
use mcp_manager::connection::EraPreference;
use mcp_manager::{ConnectionOptions, McpConnection, RemoteTarget, RequestOptions};
use mcp_protocol::types::content::ResourceContents;
use mcp_protocol::types::elicitation::{ElicitParams, ElicitResult};
use mcp_protocol::types::meta::JsonObject;
use mcp_protocol::types::mrtr::{InputRequest, Outcome};
use mcp_protocol::types::prompts::GetPromptParams;
use mcp_protocol::types::tools::{CallTool, CallToolParams};
use mcp_protocol::{Era, ErrorObject, ProtocolVersion};
use mcp_transport::{StdioConfig, TransportKind};
use serde_json::{Value, json};
use tests::peers::{HttpPeer, args, call, close_and_assert_reaped, free_port, peer, texts};
use tests::support::recording_factory;

/// Each test's whole run, server start-up included.
const TEST_TIMEOUT: Duration = Duration::from_secs(90);

/// What the host's elicitation handler answers when asked for a name.
const GIVEN_NAME: &str = "Ada Lovelace";

/// Which server.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Flavor {
    /// `mcp` 2.3.0 `MCPServer`.
    McpServer,
    /// `fastmcp` 4.2.3.
    FastMcp,
}

/// What each server offers, as its script defines it.
struct Expected {
    script: &'static str,
    name: &'static str,
    version: &'static str,
    instructions: &'static str,
    tools: &'static [&'static str],
    /// A prompt, its one argument with a value, and the text it renders.
    prompt: (&'static str, &'static str, &'static str, &'static str),
    /// A resource and its text.
    resource: (&'static str, &'static str),
    /// A resource template, a URI made from it, and that URI's text.
    template: (&'static str, &'static str, &'static str),
}

impl Flavor {
    fn expected(self) -> Expected {
        match self {
            Flavor::McpServer => Expected {
                script: "python/mcpserver_peer.py",
                name: "py-mcpserver-peer",
                version: "2.3.0-peer",
                instructions: "A dual-era test peer for the Rust client.",
                tools: &["add", "greet_user"],
                prompt: ("greet", "who", "the Rust client", "Say hello to the Rust client"),
                resource: ("demo://hello", "hello resource"),
                template: ("demo://greeting/{name}", "demo://greeting/Ada", "Greetings, Ada."),
            },
            Flavor::FastMcp => Expected {
                script: "python/fastmcp_peer.py",
                name: "py-fastmcp-peer",
                version: "4.2.3-peer",
                instructions: "A FastMCP test peer for the Rust client.",
                tools: &["add", "shout"],
                prompt: ("summarize", "topic", "the Rust client", "Summarize the Rust client in one sentence."),
                resource: ("fastmcp://motd", "message of the day"),
                template: ("fastmcp://square/{n}", "fastmcp://square/7", "49"),
            },
        }
    }
}

/// Which transport.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Via {
    Stdio,
    StreamableHttp,
}

/// Answers every form elicitation with [`GIVEN_NAME`], recording the messages it was shown.
#[derive(Default)]
struct NameGiver(Mutex<Vec<String>>);

impl NameGiver {
    fn asked(&self) -> Vec<String> {
        self.0.lock().unwrap().clone()
    }
}

impl ElicitationHandler for NameGiver {
    fn elicit(&self, _server: &str, params: ElicitParams) -> BoxFuture<'static, Result<ElicitResult, ErrorObject>> {
        self.0.lock().unwrap().push(params.message().unwrap_or_default().to_owned());
        let mut content = JsonObject::new();
        content.insert("name".into(), Value::from(GIVEN_NAME));
        Box::pin(async move { Ok(ElicitResult::accept(content)) })
    }
}

/// Run one case of the matrix under [`TEST_TIMEOUT`].
async fn case(flavor: Flavor, via: Via, era: EraPreference) {
    let Some(python) = peer("venv/bin/python") else { return };
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("peers").join(flavor.expected().script);
    assert!(script.is_file(), "{} is missing", script.display());
    let label = format!("{flavor:?} over {via:?}, era {era:?}");
    let started = Instant::now();
    tokio::time::timeout(TEST_TIMEOUT, run(&python, &script, flavor, via, era))
        .await
        .unwrap_or_else(|_| panic!("{label}: the test timed out"));
    println!("{label}: passed in {:?}", started.elapsed());
}

async fn run(python: &Path, script: &Path, flavor: Flavor, via: Via, era: EraPreference) {
    let name = match flavor {
        Flavor::McpServer => "py-mcpserver",
        Flavor::FastMcp => "py-fastmcp",
    };
    let giver = Arc::new(NameGiver::default());
    let mut options = ConnectionOptions::new(name);
    options.era = era;
    options.callbacks.elicitation = Some(giver.clone());
    let script = script.display().to_string();
    match via {
        Via::Stdio => {
            let args = [script, "--transport".into(), "stdio".into()];
            let config = StdioConfig::new(name, python.to_string_lossy(), args);
            let (factory, spawned) = recording_factory(config);
            let conn = McpConnection::new(factory, options);
            exercise(&conn, flavor, via, era, &giver).await;
            close_and_assert_reaped(&conn, &spawned).await;
        }
        Via::StreamableHttp => {
            let port = free_port();
            let args = [script, "--transport".into(), "streamable-http".into(), "--port".into(), port.to_string()];
            let server = HttpPeer::start(name, python, &args, &[], port).await;
            server.assert_loopback_only();
            let target = RemoteTarget::new(server.url("/mcp")).with_transport(Some(TransportKind::StreamableHttp));
            let conn = McpConnection::remote(&target, options).expect("a remote target");
            exercise(&conn, flavor, via, era, &giver).await;
            conn.close().await;
            assert!(conn.session().await.is_err(), "the connection is closed");
            server.stop().await;
        }
    }
}

/// Connect, check the era, and use everything the server offers.
async fn exercise(conn: &McpConnection, flavor: Flavor, via: Via, era: EraPreference, giver: &NameGiver) {
    let expected = flavor.expected();
    // Auto must settle on the modern era: both servers speak it.
    let want_version =
        if era == EraPreference::Legacy { ProtocolVersion::LATEST_LEGACY } else { ProtocolVersion::LATEST_MODERN };
    let started = Instant::now();
    let info = conn.connect().await.unwrap_or_else(|e| panic!("connect to {}: {e}", expected.name));
    println!(
        "connected in {:?}: {} {} over {}, protocol {}",
        started.elapsed(),
        info.implementation.name,
        info.implementation.version,
        info.transport,
        info.protocol_version
    );
    assert_eq!(info.protocol_version, want_version, "era {era:?} over {via:?}");
    let kind = match via {
        Via::Stdio => TransportKind::Stdio,
        Via::StreamableHttp => TransportKind::StreamableHttp,
    };
    assert_eq!(info.transport, kind);
    assert_eq!(
        (info.implementation.name.as_str(), info.implementation.version.as_str()),
        (expected.name, expected.version)
    );
    assert_eq!(info.instructions.as_deref(), Some(expected.instructions));
    let caps = &info.capabilities;
    assert!(caps.tools.is_some() && caps.prompts.is_some() && caps.resources.is_some(), "{caps:?}");
    let modern = info.protocol_version.era() == Some(Era::Modern);

    // Discovery: every list.
    let inventory = conn.discover().await.expect("discover");
    assert!(inventory.warnings.is_empty(), "{:?}", inventory.warnings);
    let mut tools: Vec<&str> = inventory.tools.iter().map(|t| t.name.as_str()).collect();
    tools.sort_unstable();
    assert_eq!(tools, expected.tools);
    let prompts: Vec<&str> = inventory.prompts.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(prompts, [expected.prompt.0]);
    let resources: Vec<&str> = inventory.resources.iter().map(|r| r.uri.as_str()).collect();
    assert_eq!(resources, [expected.resource.0]);
    let templates: Vec<&str> = inventory.resource_templates.iter().map(|t| t.uri_template.as_str()).collect();
    assert_eq!(templates, [expected.template.0]);

    // Tools.
    let sum = call(conn, "add", json!({"a": 40, "b": 2}), RequestOptions::default()).await;
    assert_eq!(texts(&sum), ["42"]);
    assert_eq!(sum.structured_content, Some(json!({"result": 42})));
    match flavor {
        Flavor::McpServer => greet_user(conn, modern, giver).await,
        Flavor::FastMcp => {
            let shouted = call(conn, "shout", json!({"text": "hi", "times": 2}), RequestOptions::default()).await;
            assert_eq!(texts(&shouted), ["HI HI"]);
        }
    }
    // Invalid arguments and unknown tools are failed results, not protocol errors.
    let bad =
        conn.call_tool("add", args(json!({"a": "x", "b": 1})), RequestOptions::default()).await.expect("tools/call");
    assert_eq!(bad.complete().expect("a result").is_error, Some(true));
    let unknown = conn.call_tool("no_such_tool", None, RequestOptions::default()).await.expect("tools/call");
    assert_eq!(unknown.complete().expect("a result").is_error, Some(true));

    // A prompt.
    let (prompt, argument, value, text) = expected.prompt;
    let params = GetPromptParams {
        name: prompt.into(),
        arguments: Some([(argument.to_owned(), value.to_owned())].into()),
        ..Default::default()
    };
    let got = conn.get_prompt(params).await.expect("prompts/get").complete().expect("a prompt");
    let messages = serde_json::to_value(&got.messages).unwrap();
    assert_eq!(messages[0]["content"]["text"], text, "{messages}");

    // A resource, and one from the template.
    let (uri, text) = expected.resource;
    let read = conn.read_resource(uri).await.expect("resources/read").complete().expect("a resource");
    assert!(matches!(&read.contents[..], [ResourceContents::Text(t)] if t.text == text && t.uri == uri), "{read:?}");
    let (_, uri, text) = expected.template;
    let read = conn.read_resource(uri).await.expect("resources/read a template").complete().expect("a resource");
    assert!(matches!(&read.contents[..], [ResourceContents::Text(t)] if t.text == text), "{read:?}");
}

/// `greet_user` needs the user's name: the host's handler gives it, and the greeting must carry
/// it. The first attempt goes straight through the session, to see how the server asks.
async fn greet_user(conn: &McpConnection, modern: bool, giver: &NameGiver) {
    let arguments = args(json!({"greeting": "Welcome"}));
    let greeting = format!("Welcome, {GIVEN_NAME}!");
    let params = CallToolParams { name: "greet_user".into(), arguments: arguments.clone(), ..Default::default() };
    let session = conn.session().await.expect("the session");
    let first = session.request::<CallTool>(&params, RequestOptions::default()).await.expect("tools/call greet_user");
    match (modern, first) {
        (true, Outcome::InputRequired(input)) => {
            // Multi round-trip: nothing was asked on a back channel; the question is in the result.
            assert!(giver.asked().is_empty(), "{:?}", giver.asked());
            let requests = input.input_requests.expect("inputRequests");
            let asked: Vec<(&str, Option<&str>)> = requests
                .values()
                .map(|r| match r {
                    InputRequest::Elicit(p) => ("elicitation/create", p.message()),
                    other => (other.method(), None),
                })
                .collect();
            assert_eq!(asked, [("elicitation/create", Some("What is your name?"))]);
            assert!(input.request_state.is_some_and(|s| !s.is_empty()), "the server keeps its state with us");
            println!("greet_user: input_required with {:?}", requests.keys().collect::<Vec<_>>());
        }
        (false, Outcome::Complete(result)) => {
            // Legacy: the server sent elicitation/create during the call, the handler answered it.
            assert_eq!(texts(&result), [greeting.as_str()]);
            assert_eq!(giver.asked(), ["What is your name?"]);
            println!("greet_user: answered through elicitation/create during the call");
        }
        (modern, other) => panic!("greet_user (modern era: {modern}): unexpected first outcome {other:?}"),
    }
    // The connection answers and retries as needed: the handler's answer reaches the result.
    let before = giver.asked().len();
    let result =
        call(conn, "greet_user", Value::Object(arguments.unwrap_or_default()), RequestOptions::default()).await;
    assert_eq!(texts(&result), [greeting.as_str()]);
    assert_eq!(result.structured_content, Some(json!({"result": greeting})));
    assert_eq!(giver.asked().len(), before + 1, "the handler was asked once more: {:?}", giver.asked());
}

// ---------------------------------------------------------------------------------------------
// The matrix

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcpserver_over_stdio_auto_is_modern() {
    case(Flavor::McpServer, Via::Stdio, EraPreference::Auto).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcpserver_over_stdio_legacy() {
    case(Flavor::McpServer, Via::Stdio, EraPreference::Legacy).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcpserver_over_streamable_http_auto_is_modern() {
    case(Flavor::McpServer, Via::StreamableHttp, EraPreference::Auto).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcpserver_over_streamable_http_legacy() {
    case(Flavor::McpServer, Via::StreamableHttp, EraPreference::Legacy).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fastmcp_over_stdio_auto_is_modern() {
    case(Flavor::FastMcp, Via::Stdio, EraPreference::Auto).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fastmcp_over_stdio_legacy() {
    case(Flavor::FastMcp, Via::Stdio, EraPreference::Legacy).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fastmcp_over_streamable_http_auto_is_modern() {
    case(Flavor::FastMcp, Via::StreamableHttp, EraPreference::Auto).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fastmcp_over_streamable_http_legacy() {
    case(Flavor::FastMcp, Via::StreamableHttp, EraPreference::Legacy).await;
}

// ---------------------------------------------------------------------------------------------
// Multi round-trip and URL elicitation (`tests/peers/python/mrtr_peer.py`)

/// The elicitation handler of the URL tests: answers forms with [`GIVEN_NAME`]; "opens" every
/// URL it is shown (an HTTP GET, which is how the server learns the user was there) and accepts.
#[derive(Default)]
struct UrlOpener {
    /// The URLs shown, with their elicitation ids.
    opened: Mutex<Vec<(String, Option<String>)>>,
}

impl ElicitationHandler for UrlOpener {
    fn elicit(&self, _server: &str, params: ElicitParams) -> BoxFuture<'static, Result<ElicitResult, ErrorObject>> {
        let url = match params {
            ElicitParams::Url(url) => url,
            _ => {
                let mut content = JsonObject::new();
                content.insert("name".into(), Value::from(GIVEN_NAME));
                return Box::pin(async move { Ok(ElicitResult::accept(content)) });
            }
        };
        self.opened.lock().unwrap().push((url.url.clone(), url.elicitation_id.clone()));
        Box::pin(async move {
            let page = reqwest::get(&url.url).await.and_then(|r| r.error_for_status());
            let page = page.map_err(|e| ErrorObject::new(mcp_protocol::ErrorCode::INTERNAL_ERROR, e.to_string()))?;
            let text = page.text().await.unwrap_or_default();
            assert!(text.starts_with("authorized "), "{text}");
            Ok(ElicitResult { action: mcp_protocol::types::elicitation::ElicitAction::Accept, ..Default::default() })
        })
    }

    fn supports_url(&self) -> bool {
        true
    }
}

/// Start `mrtr_peer.py` over `via`, connect in `era` with `opener` as the elicitation handler,
/// run `body`, then close and reap the server.
async fn with_mrtr_peer<F>(via: Via, era: EraPreference, opener: Arc<UrlOpener>, body: F)
where
    F: for<'a> FnOnce(&'a McpConnection) -> BoxFuture<'a, ()>,
{
    let Some(python) = peer("venv/bin/python") else { return };
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("peers/python/mrtr_peer.py");
    assert!(script.is_file(), "{} is missing", script.display());
    let script = script.display().to_string();
    let mut options = ConnectionOptions::new("py-mrtr");
    options.era = era;
    options.callbacks.elicitation = Some(opener);
    let run = async {
        match via {
            Via::Stdio => {
                let config = StdioConfig::new(
                    "py-mrtr",
                    python.to_string_lossy(),
                    [script, "--transport".into(), "stdio".into()],
                );
                let (factory, spawned) = recording_factory(config);
                let conn = McpConnection::new(factory, options);
                body(&conn).await;
                close_and_assert_reaped(&conn, &spawned).await;
            }
            Via::StreamableHttp => {
                let port = free_port();
                let args = [script, "--transport".into(), "streamable-http".into(), "--port".into(), port.to_string()];
                let server = HttpPeer::start("py-mrtr", &python, &args, &[], port).await;
                server.assert_loopback_only();
                let target = RemoteTarget::new(server.url("/mcp")).with_transport(Some(TransportKind::StreamableHttp));
                let conn = McpConnection::remote(&target, options).expect("a remote target");
                body(&conn).await;
                conn.close().await;
                server.stop().await;
            }
        }
    };
    tokio::time::timeout(TEST_TIMEOUT, run)
        .await
        .unwrap_or_else(|_| panic!("mrtr peer over {via:?}: the test timed out"));
}

/// The SDK's multi round-trip with `"jsonrpc": "2.0"` in each input request (the peer's
/// middleware writes it): the request is typed, answered, and the tool gets the answer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mrtr_input_requests_with_a_jsonrpc_member_are_answered() {
    with_mrtr_peer(Via::Stdio, EraPreference::Auto, Arc::default(), |conn| {
        Box::pin(async move {
            let info = conn.connect().await.expect("connect");
            assert_eq!(info.protocol_version, ProtocolVersion::LATEST_MODERN);
            let session = conn.session().await.expect("the session");
            // The wire form: the member is there.
            let params = mcp_protocol::to_raw(&json!({"name": "greet_user", "arguments": {}})).unwrap();
            let raw =
                session.request_raw("tools/call", Some(params), RequestOptions::default()).await.expect("tools/call");
            let wire: Value = serde_json::from_str(raw.get()).unwrap();
            let requests = wire["inputRequests"].as_object().expect("inputRequests");
            assert!(requests.values().all(|r| r["jsonrpc"] == "2.0" && r["method"] == "elicitation/create"), "{wire}");
            // Typed all the same, and answered.
            let typed = CallToolParams { name: "greet_user".into(), ..Default::default() };
            let Outcome::InputRequired(input) =
                session.request::<CallTool>(&typed, RequestOptions::default()).await.unwrap()
            else {
                panic!("greet_user asks first")
            };
            assert!(input.input_requests.unwrap().values().all(|r| matches!(r, InputRequest::Elicit(_))));
            let result = call(conn, "greet_user", json!({"greeting": "Welcome"}), RequestOptions::default()).await;
            assert_eq!(texts(&result), [format!("Welcome, {GIVEN_NAME}!").as_str()]);
        })
    })
    .await;
}

/// A job that answers "still working" (a state and no input requests) twice before it is done:
/// the client retries with the state until it completes, pausing before each such retry (the
/// server checks the retries did not come at once).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mrtr_still_working_twice_then_done() {
    with_mrtr_peer(Via::Stdio, EraPreference::Auto, Arc::default(), |conn| {
        Box::pin(async move {
            conn.connect().await.expect("connect");
            let result = call(conn, "slow_job", json!({"job": "j7"}), RequestOptions::default()).await;
            assert_eq!(texts(&result), ["job j7 done after 3 retries, paced"]);
        })
    })
    .await;
}

/// -32042 in `era` over streamable HTTP: the host "opens" the URL (the server's own route), the
/// server completes the elicitation (legacy era: `notifications/elicitation/complete` with its
/// id), and the client's automatic retry of the tool call succeeds.
async fn url_elicitation_case(era: EraPreference) {
    let opener = Arc::new(UrlOpener::default());
    let seen = opener.clone();
    with_mrtr_peer(Via::StreamableHttp, era, opener, move |conn| {
        Box::pin(async move {
            let info = conn.connect().await.expect("connect");
            let modern = info.protocol_version.era() == Some(Era::Modern);
            assert_eq!(modern, era != EraPreference::Legacy);
            let result = call(conn, "read_files", json!({"account": "ada"}), RequestOptions::default()).await;
            assert_eq!(texts(&result), ["files of ada: notes.txt"]);
            let opened = seen.opened.lock().unwrap().clone();
            assert_eq!(opened.len(), 1, "{opened:?}");
            let (url, id) = &opened[0];
            assert!(url.contains("/authorize/auth-"), "{url}");
            // Legacy: the id the completion names; modern: none (the revision has no ids).
            assert_eq!(id.is_some(), !modern, "{opened:?}");
        })
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn url_elicitation_required_is_completed_and_retried_legacy() {
    url_elicitation_case(EraPreference::Legacy).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn url_elicitation_required_is_completed_and_retried_modern() {
    url_elicitation_case(EraPreference::Auto).await;
}
