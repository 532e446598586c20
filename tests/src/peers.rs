//! Helpers for the interop tests against real peers (`tests/tests/peers_*.rs`): finding the
//! provisioned peers (the `MCP_PEERS_DIR` / `MCP_REQUIRE_PEERS` contract), stdio servers that
//! must be reaped with their process group, HTTP servers started on a free loopback port in a
//! process group of their own, host callbacks that record what they are asked, and tool calls.

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::future::BoxFuture;
use mcp_manager::callbacks::{NotificationSink, RootsProvider};
use mcp_manager::{McpConnection, RequestOptions};
use mcp_protocol::ErrorObject;
use mcp_protocol::messages::ServerNotification;
use mcp_protocol::types::content::ContentBlock;
use mcp_protocol::types::meta::JsonObject;
use mcp_protocol::types::roots::Root;
use mcp_protocol::types::tools::CallToolResult;
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, BufReader};

use crate::support::Spawned;

/// How long an HTTP server may take to accept connections.
const START_TIMEOUT: Duration = Duration::from_secs(30);
/// How long [`HttpPeer::output_count_at_least`] waits for a line.
const OUTPUT_WAIT: Duration = Duration::from_secs(10);

const SKIPPED: &str = "skipped: real peers not provisioned; run `cargo xtask test`";

fn peers_required() -> bool {
    std::env::var("MCP_REQUIRE_PEERS").is_ok_and(|v| v == "1")
}

/// The file of a provisioned peer, relative to `MCP_PEERS_DIR`. `None` means: skip the test
/// (it says so). With `MCP_REQUIRE_PEERS=1` a missing directory or file fails instead.
pub fn peer(relative: &str) -> Option<PathBuf> {
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

/// A file of this repository's `tests/peers/` directory.
pub fn repo_peer_file(relative: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("peers").join(relative)
}

// ---------------------------------------------------------------------------------------------
// Stdio servers

/// Close the connection, then assert that the stdio server the factory of `spawned` started
/// last, and its whole process group, are gone within 5 s.
pub async fn close_and_assert_reaped(conn: &McpConnection, spawned: &Spawned) {
    let pid = spawned.pids().last().copied().unwrap_or(0);
    assert_ne!(pid, 0, "the factory did not record the server's pid");
    assert!(Path::new(&format!("/proc/{pid}")).exists(), "the server {pid} was already gone before close");
    let started = Instant::now();
    conn.close().await;
    assert_gone(pid).await;
    println!("closed; process {pid} and its group gone after {:?}", started.elapsed());
}

/// Assert that the process `pid` is reaped and its process group (`pid` leads it) empty within
/// 5 s.
pub async fn assert_gone(pid: u32) {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let alive = Path::new(&format!("/proc/{pid}")).exists();
        let members = group_members(pid);
        if !alive && members.is_empty() {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "after 5 s: server process {pid} alive (or unreaped): {alive}; its group still has {members:?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
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

// ---------------------------------------------------------------------------------------------
// HTTP servers

/// A port of 127.0.0.1 that was free a moment ago: bound with port 0, then released.
pub fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
    listener.local_addr().expect("local address").port()
}

/// A server process started by a test, in its own process group. [`HttpPeer::stop`] ends it and
/// checks it is gone; dropping it (a failed test) kills the whole group.
pub struct HttpPeer {
    name: &'static str,
    child: tokio::process::Child,
    pid: u32,
    port: u16,
    output: Arc<Mutex<VecDeque<String>>>,
    /// Set once `stop` has reaped the group: its id may then belong to someone else.
    stopped: bool,
}

impl HttpPeer {
    /// Start `program args` with an empty environment plus `PATH`, `HOME` and `env`, and wait
    /// until it accepts connections on 127.0.0.1:`port` (30 s at most).
    pub async fn start(
        name: &'static str,
        program: &Path,
        args: &[String],
        env: &[(&str, String)],
        port: u16,
    ) -> HttpPeer {
        let mut command = tokio::process::Command::new(program);
        command
            .args(args)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", std::env::temp_dir())
            .envs(env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .kill_on_drop(true);
        let mut child = command.spawn().unwrap_or_else(|e| panic!("{name}: cannot start {}: {e}", program.display()));
        let pid = child.id().expect("a running child has a pid");
        let output: Arc<Mutex<VecDeque<String>>> = Arc::default();
        let stdout = child.stdout.take().expect("piped stdout");
        let stderr = child.stderr.take().expect("piped stderr");
        tokio::spawn(keep_tail(BufReader::new(stdout), output.clone()));
        tokio::spawn(keep_tail(BufReader::new(stderr), output.clone()));
        let mut peer = HttpPeer { name, child, pid, port, output, stopped: false };
        peer.wait_ready().await;
        peer
    }

    async fn wait_ready(&mut self) {
        let started = Instant::now();
        loop {
            if tokio::net::TcpStream::connect(("127.0.0.1", self.port)).await.is_ok() {
                println!("{}: listening on 127.0.0.1:{} after {:?}", self.name, self.port, started.elapsed());
                return;
            }
            if let Ok(Some(status)) = self.child.try_wait() {
                panic!("{} exited ({status}) before listening; its output:\n{}", self.name, self.output_tail());
            }
            assert!(
                started.elapsed() < START_TIMEOUT,
                "{} did not listen on port {} within {START_TIMEOUT:?}; its output:\n{}",
                self.name,
                self.port,
                self.output_tail()
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// `http://127.0.0.1:<port><path>`.
    pub fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    /// How many of the last 100 lines the server printed (stdout and stderr) contain `needle`.
    pub fn output_count(&self, needle: &str) -> usize {
        self.output.lock().unwrap().iter().filter(|line| line.contains(needle)).count()
    }

    /// [`HttpPeer::output_count`] once it reaches `at_least`, or after 10 s: what a server prints
    /// about a request may be read after the test has its response, so a test that expects a
    /// line waits for it rather than counting at once.
    pub async fn output_count_at_least(&self, needle: &str, at_least: usize) -> usize {
        let started = Instant::now();
        loop {
            let count = self.output_count(needle);
            if count >= at_least || started.elapsed() >= OUTPUT_WAIT {
                return count;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    fn output_tail(&self) -> String {
        self.output.lock().unwrap().iter().cloned().collect::<Vec<_>>().join("\n")
    }

    /// Assert that every socket listening on the server's port is bound to 127.0.0.1 (and that
    /// there is one).
    pub fn assert_loopback_only(&self) {
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
    pub async fn stop(mut self) {
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

// ---------------------------------------------------------------------------------------------
// Host callbacks

/// Answers `roots/list` with one root and counts the calls.
pub struct TestRoots {
    /// The URI of the one root.
    pub uri: String,
    /// How many times `roots/list` was answered.
    pub calls: AtomicUsize,
    called: tokio::sync::Notify,
}

impl TestRoots {
    /// A provider of the one root `uri`.
    pub fn new(uri: impl Into<String>) -> Arc<Self> {
        Arc::new(TestRoots { uri: uri.into(), calls: AtomicUsize::new(0), called: tokio::sync::Notify::new() })
    }

    /// Wait until the server has asked for the roots at least once (15 s at most).
    pub async fn wait_called(&self, server: &str) {
        let waited = tokio::time::timeout(Duration::from_secs(15), async {
            while self.calls.load(Ordering::SeqCst) == 0 {
                self.called.notified().await;
            }
        })
        .await;
        assert!(waited.is_ok(), "{server} never sent roots/list");
    }
}

impl RootsProvider for TestRoots {
    fn list_roots(&self, _server: &str) -> BoxFuture<'static, Result<Vec<Root>, ErrorObject>> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        self.called.notify_one();
        let root = Root { uri: self.uri.clone(), name: Some("peer-root".into()), ..Default::default() };
        Box::pin(async move { Ok(vec![root]) })
    }
}

/// Records the method of every server notification.
#[derive(Default)]
pub struct Notes(pub Mutex<Vec<String>>);

impl NotificationSink for Notes {
    fn on_notification(&self, _server: &str, notification: &ServerNotification) {
        self.0.lock().unwrap().push(notification.method().to_owned());
    }
}

// ---------------------------------------------------------------------------------------------
// Tools and prompts

/// Tool arguments from a JSON object; panics on anything else.
pub fn args(value: Value) -> Option<JsonObject> {
    match value {
        Value::Object(map) => Some(map),
        other => panic!("tool arguments must be an object, not {other}"),
    }
}

/// Call a tool that must complete without `isError`.
pub async fn call(conn: &McpConnection, tool: &str, arguments: Value, options: RequestOptions) -> CallToolResult {
    let outcome = conn.call_tool(tool, args(arguments), options).await.unwrap_or_else(|e| panic!("{tool}: {e}"));
    let result = outcome.complete().unwrap_or_else(|| panic!("{tool} did not complete"));
    assert_ne!(result.is_error, Some(true), "{tool} failed: {:?}", result.content);
    result
}

/// The text blocks of a tool result, in order.
pub fn texts(result: &CallToolResult) -> Vec<&str> {
    result
        .content
        .iter()
        .filter_map(|block| match block {
            ContentBlock::Text(t) => Some(t.text.as_str()),
            _ => None,
        })
        .collect()
}

/// Plausible values for the arguments of server-everything's prompts.
pub fn prompt_argument(name: &str) -> &'static str {
    match name {
        "city" => "Portland",
        "state" => "Oregon",
        "department" => "Engineering",
        "name" => "Alice",
        "resourceType" => "Text",
        "resourceId" => "3",
        _ => "1",
    }
}

/// A fresh directory under the system's temp dir, removed on drop. Its path is the real one: the
/// servers resolve symlinks (a `/tmp` that links elsewhere), and tests compare their paths.
pub struct TempDir(pub PathBuf);

impl TempDir {
    /// A directory named after `what`, this process and the time.
    pub fn new(what: &str) -> TempDir {
        let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default().as_nanos();
        let dir = std::env::temp_dir().join(format!("mcp-peers-{what}-{}-{nanos}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("create a temp dir");
        TempDir(dir.canonicalize().expect("canonical temp dir"))
    }

    /// Its path.
    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Get every prompt of `prompts` with plausible arguments ([`prompt_argument`]); each must
/// complete with messages.
pub async fn get_every_prompt(conn: &McpConnection, prompts: &[mcp_protocol::types::prompts::Prompt]) {
    for prompt in prompts {
        let arguments: std::collections::BTreeMap<String, String> =
            prompt.arguments.iter().flatten().map(|a| (a.name.clone(), prompt_argument(&a.name).to_owned())).collect();
        let params = mcp_protocol::types::prompts::GetPromptParams {
            name: prompt.name.clone(),
            arguments: (!arguments.is_empty()).then_some(arguments),
            ..Default::default()
        };
        let result = conn.get_prompt(params).await.unwrap_or_else(|e| panic!("prompts/get {}: {e}", prompt.name));
        let result = result.complete().unwrap_or_else(|| panic!("prompts/get {} did not complete", prompt.name));
        assert!(!result.messages.is_empty(), "prompt {} has no messages", prompt.name);
    }
}
