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
//! Same contract as `peers_stdio.rs`: `cargo xtask test` (or `cargo xtask peers`) installs the
//! venv into `target/peers/` and runs this file with `MCP_PEERS_DIR` set and
//! `MCP_REQUIRE_PEERS=1`. Without `MCP_PEERS_DIR` every test says it skipped and passes.
//!
//! Stdio servers run through this stack's `StdioTransport` and must be gone, with their process
//! group, after the connection closes. HTTP servers listen on a free port of 127.0.0.1 only
//! (checked in `/proc/net`), in a process group of their own that is stopped at the end of the
//! test and killed if the test fails first.

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::future::BoxFuture;
use mcp_manager::callbacks::ElicitationHandler;
use mcp_manager::connection::EraPreference;
use mcp_manager::{ConnectionOptions, McpConnection, RemoteTarget, RequestOptions, TransportFactory};
use mcp_protocol::types::content::{ContentBlock, ResourceContents};
use mcp_protocol::types::elicitation::{ElicitParams, ElicitResult};
use mcp_protocol::types::meta::JsonObject;
use mcp_protocol::types::mrtr::{InputRequest, Outcome};
use mcp_protocol::types::prompts::GetPromptParams;
use mcp_protocol::types::tools::{CallTool, CallToolParams, CallToolResult};
use mcp_protocol::{Era, ErrorObject, ProtocolVersion};
use mcp_transport::{StdioConfig, StdioTransport, Transport, TransportKind};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};

/// Each test's whole run, server start-up included.
const TEST_TIMEOUT: Duration = Duration::from_secs(90);

/// How long an HTTP server may take to accept connections.
const START_TIMEOUT: Duration = Duration::from_secs(30);

const SKIPPED: &str = "skipped: real peers not provisioned; run `cargo xtask test`";

/// What the host's elicitation handler answers when asked for a name.
const GIVEN_NAME: &str = "Ada Lovelace";

fn peers_required() -> bool {
    std::env::var("MCP_REQUIRE_PEERS").is_ok_and(|v| v == "1")
}

/// The file of a provisioned peer, relative to `MCP_PEERS_DIR`. `None` means: skip the test.
fn peer(relative: &str) -> Option<PathBuf> {
    let Some(dir) = std::env::var_os("MCP_PEERS_DIR").filter(|d| !d.is_empty()) else {
        assert!(!peers_required(), "MCP_REQUIRE_PEERS=1 but MCP_PEERS_DIR is not set; run `cargo xtask test`");
        println!("{SKIPPED}");
        return None;
    };
    let path = Path::new(&dir).join(relative);
    if path.exists() {
        return Some(path);
    }
    assert!(
        !peers_required(),
        "MCP_REQUIRE_PEERS=1 but the peer {} is missing; run `cargo xtask test`",
        path.display()
    );
    println!("{SKIPPED} ({} is missing)", path.display());
    None
}

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
            let pid = Arc::new(AtomicU32::new(0));
            let conn = McpConnection::new(recording_factory(config, pid.clone()), options);
            exercise(&conn, flavor, via, era, &giver).await;
            close_and_assert_reaped(&conn, pid.load(Ordering::SeqCst)).await;
        }
        Via::StreamableHttp => {
            let port = free_port();
            let args = [script, "--transport".into(), "streamable-http".into(), "--port".into(), port.to_string()];
            let server = HttpPeer::start(name, python, &args, port).await;
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
    let sum = call(conn, "add", json!({"a": 40, "b": 2})).await;
    assert_eq!(texts(&sum), ["42"]);
    assert_eq!(sum.structured_content, Some(json!({"result": 42})));
    match flavor {
        Flavor::McpServer => greet_user(conn, modern, giver).await,
        Flavor::FastMcp => {
            let shouted = call(conn, "shout", json!({"text": "hi", "times": 2})).await;
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
    let result = call(conn, "greet_user", Value::Object(arguments.unwrap_or_default())).await;
    assert_eq!(texts(&result), [greeting.as_str()]);
    assert_eq!(result.structured_content, Some(json!({"result": greeting})));
    assert_eq!(giver.asked().len(), before + 1, "the handler was asked once more: {:?}", giver.asked());
}

fn args(value: Value) -> Option<JsonObject> {
    match value {
        Value::Object(map) => Some(map),
        other => panic!("tool arguments must be an object, not {other}"),
    }
}

/// Call a tool that must complete without `isError`.
async fn call(conn: &McpConnection, tool: &str, arguments: Value) -> CallToolResult {
    let outcome = conn
        .call_tool(tool, args(arguments), RequestOptions::default())
        .await
        .unwrap_or_else(|e| panic!("{tool}: {e}"));
    let result = outcome.complete().unwrap_or_else(|| panic!("{tool} did not complete"));
    assert_ne!(result.is_error, Some(true), "{tool} failed: {:?}", result.content);
    result
}

fn texts(result: &CallToolResult) -> Vec<&str> {
    result
        .content
        .iter()
        .filter_map(|block| match block {
            ContentBlock::Text(t) => Some(t.text.as_str()),
            _ => None,
        })
        .collect()
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
// Processes

/// Spawns the stdio server through this stack's transport and records its pid (also its process
/// group id).
fn recording_factory(config: StdioConfig, pid: Arc<AtomicU32>) -> TransportFactory {
    Arc::new(move || {
        let (config, pid) = (config.clone(), pid.clone());
        Box::pin(async move {
            let transport = StdioTransport::spawn(config)?;
            pid.store(transport.pid(), Ordering::SeqCst);
            Ok(Arc::new(transport) as Arc<dyn Transport>)
        })
    })
}

/// The processes in the process group `pgid` (read from `/proc/<pid>/stat`).
fn group_members(pgid: u32) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else { return Vec::new() };
    entries
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else { return false };
            // After the command name in parentheses: state, ppid, pgrp.
            let after = stat.rsplit_once(')').map(|(_, rest)| rest).unwrap_or_default();
            after.split_whitespace().nth(2).and_then(|g| g.parse::<u32>().ok()) == Some(pgid)
        })
        .collect()
}

/// Close the connection, then assert that the stdio server and its whole group are gone within
/// 5 s.
async fn close_and_assert_reaped(conn: &McpConnection, pid: u32) {
    assert_ne!(pid, 0, "the factory did not record the server's pid");
    assert!(Path::new(&format!("/proc/{pid}")).exists(), "the server {pid} was already gone before close");
    conn.close().await;
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let alive = Path::new(&format!("/proc/{pid}")).exists();
        let members = group_members(pid);
        if !alive && members.is_empty() {
            println!("closed; process {pid} and its group gone");
            return;
        }
        assert!(Instant::now() < deadline, "5 s after close: server {pid} alive: {alive}; its group: {members:?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// A port of 127.0.0.1 that was free a moment ago: bound with port 0, then released.
fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
    listener.local_addr().expect("local address").port()
}

/// An HTTP server started by a test, in its own process group. [`HttpPeer::stop`] ends it and
/// checks it is gone; dropping it (a failed test) kills the whole group.
struct HttpPeer {
    name: &'static str,
    child: tokio::process::Child,
    pid: u32,
    port: u16,
    output: Arc<Mutex<VecDeque<String>>>,
    /// Set once `stop` has reaped the group: its id may then belong to someone else.
    stopped: bool,
}

impl HttpPeer {
    /// Start `program args` with an empty environment plus `PATH` and `HOME`, and wait until it
    /// accepts connections on 127.0.0.1:`port`.
    async fn start(name: &'static str, program: &Path, args: &[String], port: u16) -> HttpPeer {
        let mut command = tokio::process::Command::new(program);
        command
            .args(args)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", std::env::temp_dir())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .kill_on_drop(true);
        let mut child = command.spawn().unwrap_or_else(|e| panic!("{name}: cannot start {}: {e}", program.display()));
        let pid = child.id().expect("a running child has a pid");
        let output: Arc<Mutex<VecDeque<String>>> = Arc::default();
        tokio::spawn(keep_tail(BufReader::new(child.stdout.take().expect("piped stdout")), output.clone()));
        tokio::spawn(keep_tail(BufReader::new(child.stderr.take().expect("piped stderr")), output.clone()));
        let mut peer = HttpPeer { name, child, pid, port, output, stopped: false };
        let started = Instant::now();
        loop {
            if tokio::net::TcpStream::connect(("127.0.0.1", port)).await.is_ok() {
                println!("{name}: listening on 127.0.0.1:{port} after {:?}", started.elapsed());
                return peer;
            }
            if let Ok(Some(status)) = peer.child.try_wait() {
                panic!("{name} exited ({status}) before listening; its output:\n{}", peer.output_tail());
            }
            assert!(
                started.elapsed() < START_TIMEOUT,
                "{name} did not listen on port {port} within {START_TIMEOUT:?}; its output:\n{}",
                peer.output_tail()
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    fn output_tail(&self) -> String {
        self.output.lock().unwrap().iter().cloned().collect::<Vec<_>>().join("\n")
    }

    /// Every socket listening on the server's port is bound to 127.0.0.1.
    fn assert_loopback_only(&self) {
        let sockets = listening_sockets(self.port);
        assert!(!sockets.is_empty(), "{}: nothing listens on port {} in /proc/net", self.name, self.port);
        assert!(
            sockets.iter().all(|address| address == "0100007F"),
            "{} listens beyond the loopback interface on port {}: {sockets:?} (hex addresses from /proc/net)",
            self.name,
            self.port
        );
    }

    /// SIGTERM to the process group, SIGKILL after 5 s; then assert the server was reaped, its
    /// group is empty and its port closed.
    async fn stop(mut self) {
        let group = nix::unistd::Pid::from_raw(self.pid as i32);
        let _ = nix::sys::signal::killpg(group, nix::sys::signal::Signal::SIGTERM);
        if tokio::time::timeout(Duration::from_secs(5), self.child.wait()).await.is_err() {
            println!("{}: still running 5 s after SIGTERM; killing it", self.name);
            let _ = nix::sys::signal::killpg(group, nix::sys::signal::Signal::SIGKILL);
            let _ = self.child.wait().await;
        }
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            let members = group_members(self.pid);
            if members.is_empty() && !Path::new(&format!("/proc/{}", self.pid)).exists() {
                break;
            }
            assert!(Instant::now() < deadline, "{}: its process group still has {members:?} after 5 s", self.name);
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        self.stopped = true;
        assert!(listening_sockets(self.port).is_empty(), "{}: port {} still listens", self.name, self.port);
        println!("{}: stopped; process group {} gone", self.name, self.pid);
    }
}

impl Drop for HttpPeer {
    fn drop(&mut self) {
        // After a failed test this is what ends the server (`kill_on_drop` only reaches the
        // direct child).
        if !self.stopped {
            let group = nix::unistd::Pid::from_raw(self.pid as i32);
            let _ = nix::sys::signal::killpg(group, nix::sys::signal::Signal::SIGKILL);
        }
    }
}

/// Keep the last 100 lines of a server's output, for failure reports.
async fn keep_tail<R: tokio::io::AsyncBufRead + Unpin>(reader: R, tail: Arc<Mutex<VecDeque<String>>>) {
    let mut lines = reader.lines();
    while let Ok(Some(line)) = lines.next_line().await {
        let mut tail = tail.lock().unwrap();
        if tail.len() == 100 {
            tail.pop_front();
        }
        tail.push_back(line);
    }
}

/// The local addresses (hex, as `/proc/net/tcp{,6}` shows them) of the sockets listening on
/// `port`.
fn listening_sockets(port: u16) -> Vec<String> {
    let port = format!("{port:04X}");
    let mut found = Vec::new();
    for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
        let Ok(text) = std::fs::read_to_string(table) else { continue };
        for line in text.lines().skip(1) {
            let fields: Vec<&str> = line.split_whitespace().collect();
            // sl, local_address, rem_address, st (0A: LISTEN), ...
            let (Some(local), Some(state)) = (fields.get(1), fields.get(3)) else { continue };
            if *state == "0A"
                && let Some((address, p)) = local.split_once(':')
                && p == port
            {
                found.push(address.to_owned());
            }
        }
    }
    found
}
