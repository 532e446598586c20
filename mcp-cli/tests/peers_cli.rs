//! The built `mcp` binary against two real peers named in one desktop `mcpServers` config file:
//! the npm `server-everything` over stdio (a legacy-era server) and the Python SDK's server
//! (`tests/peers/python/http_server.py`) over streamable HTTP (dual-era, so auto mode settles on
//! the modern era). `tools --json` lists both servers' tools under valid LLM names, `call` with
//! `key=value` arguments reaches each server and prints what it really answered, and
//! `status --json` shows both ready with the revision each negotiated. Every run of the binary
//! must leave none of its server processes behind.
//!
//! Same contract as the `tests` crate's `peers_*.rs`: `cargo xtask peers` installs the peers into
//! `target/peers/` and runs this test with `MCP_PEERS_DIR` set and `MCP_REQUIRE_PEERS=1` (a
//! missing peer fails instead of skipping). Without `MCP_PEERS_DIR` it says it skipped and passes.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tests::peers::{HttpPeer, free_port, peer, repo_peer_file};

/// The whole test, the Python server's start-up included.
const TEST_TIMEOUT: Duration = Duration::from_secs(180);

/// One run of the binary: starting both servers, the command, closing them.
const RUN_TIMEOUT: Duration = Duration::from_secs(60);

/// How long a server process may outlive the `mcp` run that started it.
const REAP_TIMEOUT: Duration = Duration::from_secs(5);

const EVERYTHING: &str = "npm/node_modules/@modelcontextprotocol/server-everything/dist/index.js";

/// An environment variable given to the stdio server, so that its processes can be found.
const MARKER: &str = "MCP_CLI_PEER_TEST";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcp_lists_and_calls_the_tools_of_two_real_servers() {
    let Some(everything) = peer(EVERYTHING) else { return };
    let Some(python) = peer("venv/bin/python") else { return };
    let started = Instant::now();
    tokio::time::timeout(TEST_TIMEOUT, run(&everything, &python)).await.expect("the mcp peer test timed out");
    println!("mcp against server-everything and the Python server: passed in {:?}", started.elapsed());
}

/// The config file and what identifies the processes it starts.
struct Setup {
    dir: tempfile::TempDir,
    config: PathBuf,
    marker: String,
}

async fn run(everything: &Path, python: &Path) {
    let script = repo_peer_file("python/http_server.py");
    assert!(script.is_file(), "{} is missing", script.display());
    let port = free_port();
    let argv = [script.display().to_string(), "--port".to_owned(), port.to_string()];
    let server = HttpPeer::start("python mcp server", python, &argv, &[], port).await;
    server.assert_loopback_only();

    let dir = tempfile::tempdir().expect("a temporary directory");
    let marker = format!("peers-cli-{}-{port}", std::process::id());
    let config = dir.path().join("claude_desktop_config.json");
    let text = json!({
        "mcpServers": {
            "everything": {
                "command": "node",
                "args": [everything.display().to_string(), "stdio"],
                "env": { MARKER: marker }
            },
            "python": { "type": "http", "url": server.url("/mcp") }
        }
    });
    std::fs::write(&config, serde_json::to_string_pretty(&text).unwrap()).expect("write the config file");
    let setup = Setup { dir, config, marker };

    list_tools(&setup).await;
    call_tools(&setup).await;
    show_status(&setup).await;
    server.stop().await;
}

/// `mcp --config FILE tools --json`: both servers' tools, each under a unique LLM-valid name
/// qualified by its server.
async fn list_tools(setup: &Setup) {
    let tools = json_of(&mcp(setup, &["tools", "--json"]).await);
    let tools = tools["tools"].as_array().unwrap_or_else(|| panic!("no tools array in {tools}"));
    let valid =
        |n: &str| (1..=64).contains(&n.len()) && n.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    let mut names = HashSet::new();
    let mut llm_names = HashSet::new();
    for tool in tools {
        let (Some(server), Some(name), Some(llm_name)) =
            (tool["server"].as_str(), tool["name"].as_str(), tool["llmName"].as_str())
        else {
            panic!("a tool without server, name or llmName: {tool}");
        };
        assert!(valid(llm_name), "not a valid LLM tool name: {llm_name:?}");
        assert!(llm_name.starts_with(&format!("{server}__")), "{llm_name:?} is not qualified by {server}");
        assert!(llm_names.insert(llm_name.to_owned()), "{llm_name:?} is listed twice");
        assert!(tool["inputSchema"].is_object(), "{name} has no input schema: {tool}");
        names.insert((server.to_owned(), name.to_owned()));
    }
    for (server, name) in [("everything", "echo"), ("everything", "get-sum"), ("python", "add"), ("python", "greet")] {
        assert!(names.contains(&(server.to_owned(), name.to_owned())), "{server}'s {name} is not listed: {names:?}");
    }
    for server in ["everything", "python"] {
        println!("{server}: {} tools listed", names.iter().filter(|(s, _)| s == server).count());
    }
}

/// `mcp --config FILE call TOOL key=value...` on each server, by plain and by LLM-facing name,
/// with the arguments typed by the tool's input schema.
async fn call_tools(setup: &Setup) {
    let echo = json_of(&mcp(setup, &["call", "echo", "message=hello from the mcp command", "--json"]).await);
    assert_eq!((echo["server"].as_str(), echo["isError"].as_bool()), (Some("everything"), Some(false)), "{echo}");
    assert_eq!(echo["content"][0]["text"], "Echo: hello from the mcp command", "{echo}");

    let sum = json_of(&mcp(setup, &["call", "everything__get-sum", "a=2", "b=40", "--json"]).await);
    assert_eq!(sum["server"], "everything", "{sum}");
    let text = sum["content"][0]["text"].as_str().unwrap_or_else(|| panic!("no text in {sum}"));
    assert!(text.contains("42"), "2 + 40 as numbers: {sum}");

    // The server runs with the config's `env`: the marker the leak check looks for is real.
    let env = mcp(setup, &["call", "get-env"]).await;
    assert_eq!(env.status.code(), Some(0), "stderr: {}", stderr(&env));
    assert!(String::from_utf8_lossy(&env.stdout).contains(&setup.marker), "{MARKER} is not in the server's env");

    // `a=2` and `b=40` become integers (the Python tool rejects strings), and the SDK returns
    // its result as structured content too.
    let add = json_of(&mcp(setup, &["call", "add", "a=2", "b=40", "--json"]).await);
    assert_eq!((add["server"].as_str(), add["isError"].as_bool()), (Some("python"), Some(false)), "{add}");
    assert_eq!(add["structuredContent"], json!({"result": 42}), "{add}");

    // Without --json: the text as it is, for people.
    let greet = mcp(setup, &["call", "python__greet", "name=Ann"]).await;
    assert_eq!(greet.status.code(), Some(0), "stderr: {}", stderr(&greet));
    assert_eq!(String::from_utf8_lossy(&greet.stdout).trim(), "Hello, Ann!");
}

/// `mcp --config FILE status --json`: both servers ready, each on the revision it negotiated.
async fn show_status(setup: &Setup) {
    let status = json_of(&mcp(setup, &["status", "--json"]).await);
    let servers = status["servers"].as_array().unwrap_or_else(|| panic!("no servers array in {status}"));
    let rows: Vec<(&str, &str, &str, &str, &str)> = servers
        .iter()
        .map(|s| {
            let field = |key: &str| s[key].as_str().unwrap_or_else(|| panic!("{key} missing from {s}"));
            (field("name"), field("state"), field("transport"), field("protocolVersion"), field("era"))
        })
        .collect();
    assert_eq!(
        rows,
        [
            ("everything", "ready", "stdio", "2025-11-25", "legacy"),
            ("python", "ready", "streamable_http", "2026-07-28", "modern"),
        ],
        "{status}"
    );
    for server in servers {
        assert!(server["tools"].as_u64().is_some_and(|n| n > 0), "{server}");
        assert!(server["lastError"].is_null(), "{server}");
        // Neither asked for a login: no AUTH to show (not "oauth: not logged in").
        assert!(server["auth"].is_null(), "{server}");
    }
}

/// Run the built `mcp` with `--config` and `args` in the temporary directory (60 s at most),
/// then check that no process of the stdio server is left.
async fn mcp(setup: &Setup, args: &[&str]) -> Output {
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_mcp"));
    command
        .arg("--config")
        .arg(&setup.config)
        .args(args)
        .current_dir(setup.dir.path())
        .env_remove("OPENAI_API_KEY")
        .stdin(Stdio::null())
        .kill_on_drop(true);
    let shown = args.join(" ");
    let output = tokio::time::timeout(RUN_TIMEOUT, command.output())
        .await
        .unwrap_or_else(|_| panic!("`mcp {shown}` did not finish within {RUN_TIMEOUT:?}"))
        .unwrap_or_else(|e| panic!("`mcp {shown}` could not run: {e}"));
    assert!(!stderr(&output).contains("panicked"), "`mcp {shown}` panicked: {}", stderr(&output));
    assert_no_server_left(&setup.marker, &shown).await;
    output
}

/// Wait (5 s at most) until no process carries `marker` in its environment.
async fn assert_no_server_left(marker: &str, shown: &str) {
    let deadline = Instant::now() + REAP_TIMEOUT;
    loop {
        let left = marked_processes(marker);
        if left.is_empty() {
            return;
        }
        assert!(Instant::now() < deadline, "`mcp {shown}` left server processes behind: {left:?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The processes whose environment has `MARKER=marker` (read from `/proc/<pid>/environ`).
fn marked_processes(marker: &str) -> Vec<u32> {
    let wanted = format!("{MARKER}={marker}");
    let Ok(entries) = std::fs::read_dir("/proc") else { return Vec::new() };
    entries
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/environ"))
                .is_ok_and(|env| env.split(|b| *b == 0).any(|var| var == wanted.as_bytes()))
        })
        .collect()
}

fn json_of(output: &Output) -> Value {
    assert_eq!(output.status.code(), Some(0), "stderr: {}", stderr(output));
    serde_json::from_slice(&output.stdout).unwrap_or_else(|e| {
        panic!("stdout is not one JSON document ({e}): {}", String::from_utf8_lossy(&output.stdout))
    })
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// `mcp call` answers server-everything's sampling request with the LLM the environment names
/// (the fake OpenAI-compatible server), whose reply reaches the tool's result.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcp_call_answers_server_everythings_sampling_with_the_configured_llm() {
    let Some(everything) = peer(EVERYTHING) else { return };
    tokio::time::timeout(TEST_TIMEOUT, async {
        let llm = tests::fake_llm::FakeLlm::start().await;
        llm.push(tests::fake_llm::Reply::text("Bonjour from the fake LLM"));
        let dir = tempfile::tempdir().expect("a temporary directory");
        let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_mcp"));
        command
            .current_dir(dir.path())
            .args(["--stdio", "call", "trigger-sampling-request", "prompt=Say hello", "--", "node"])
            .arg(&everything)
            .arg("stdio")
            .env("OPENAI_BASE_URL", llm.base_url())
            .env("OPENAI_MODEL", "fake-model")
            .env_remove("OPENAI_API_KEY")
            .stdin(Stdio::null())
            .kill_on_drop(true);
        let output = tokio::time::timeout(RUN_TIMEOUT, command.output()).await.expect("mcp ran in time").unwrap();
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert_eq!(output.status.code(), Some(0), "{stdout}\n{}", String::from_utf8_lossy(&output.stderr));
        assert!(stdout.contains("Bonjour from the fake LLM"), "the LLM's reply reached the result: {stdout}");
        let requests = llm.requests();
        assert_eq!(requests.len(), 1, "one sampling request");
        assert!(requests[0].body["messages"].to_string().contains("Say hello"), "{:?}", requests[0].body);
    })
    .await
    .expect("the test timed out");
}
