//! `mcp` against servers that attack the host rather than merely fail: one that floods pings and
//! never reads its input, one whose schema is a `$ref` cycle. Each must end `mcp` with a clear
//! error, within its timeouts, with no process left behind.

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

mod support;

/// Run `mcp` with `args` in `dir`, killed if it is still running after `limit` (a hang is a
/// failure, reported as such, not a test that never ends); also how long it ran.
fn run_bounded(dir: &Path, args: &[&str], limit: Duration) -> (Output, Duration) {
    let mut command = Command::new(env!("CARGO_BIN_EXE_mcp"));
    command.current_dir(dir).args(args).env_remove("OPENAI_API_KEY").stdin(Stdio::null());
    let started = Instant::now();
    let output = support::run_bounded(command, None, limit);
    (output, started.elapsed())
}

fn alive(pid: i32) -> bool {
    // A zombie is gone for every purpose but its table entry: only count processes that run.
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => stat.rsplit(')').next().is_some_and(|rest| !rest.trim_start().starts_with('Z')),
        Err(_) => false,
    }
}

fn wait_gone(pid: i32, limit: Duration) -> bool {
    let started = Instant::now();
    while started.elapsed() < limit {
        if !alive(pid) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    !alive(pid)
}

/// A legacy-era server that answers the handshake (and, in mode `after-list`, `tools/list`),
/// then sends 5,000 pings and never reads its input again: the replies fill the pipe.
const FLOODER: &str = r##"
import json, os, sys, time
mode = sys.argv[1]
open(sys.argv[2], "w").write(str(os.getpid()))
def send(msg):
    sys.stdout.write(json.dumps(msg) + "\n")
    sys.stdout.flush()
def flood():
    for i in range(5000):
        send({"jsonrpc": "2.0", "id": "p%d" % i, "method": "ping"})
    while True:
        time.sleep(1000)
for line in sys.stdin:
    msg = json.loads(line)
    if "id" not in msg or "method" not in msg:
        continue
    method, rid = msg["method"], msg["id"]
    if method == "initialize":
        send({"jsonrpc": "2.0", "id": rid, "result": {"protocolVersion": "2025-11-25",
              "capabilities": {"tools": {}}, "serverInfo": {"name": "flooder", "version": "1"}}})
        if mode == "after-initialize":
            flood()
    elif method == "tools/list":
        send({"jsonrpc": "2.0", "id": rid, "result": {"tools": [{"name": "listed_tool",
              "inputSchema": {"type": "object"}}]}})
        if mode == "after-list":
            flood()
    else:
        send({"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": "no"}})
"##;

/// Run `mcp tools` on the flooder in `mode`: `mcp` must end within a bound and take the server
/// along.
fn tools_on_a_flooder(mode: &str) -> Output {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("flooder.py");
    std::fs::write(&script, FLOODER).unwrap();
    let pid_file = dir.path().join("server.pid");
    let config = dir.path().join("mcp.toml");
    let toml = format!(
        "[[mcp.servers]]\nname = \"flood\"\ncommand = \"python3\"\nargs = [{}, {}, {}]\nstartup_timeout_sec = 3\n",
        toml_string(script.to_str().unwrap()),
        toml_string(mode),
        toml_string(pid_file.to_str().unwrap()),
    );
    std::fs::write(&config, toml).unwrap();
    let (output, elapsed) =
        run_bounded(dir.path(), &["--config", config.to_str().unwrap(), "tools"], Duration::from_secs(60));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    let pid: i32 = std::fs::read_to_string(&pid_file).unwrap().trim().parse().unwrap();
    assert!(wait_gone(pid, Duration::from_secs(10)), "the flooding server (pid {pid}) outlived mcp");
    eprintln!("mcp tools on the {mode} flooder ended after {elapsed:?}");
    output
}

#[test]
fn a_flood_of_pings_after_the_listing_does_not_keep_mcp_from_exiting() {
    let output = tools_on_a_flooder("after-list");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stderr));
    assert!(stdout.contains("listed_tool"), "the tools were listed before the flood: {stdout}");
}

#[test]
fn a_flood_of_pings_right_after_initialize_still_ends_at_the_startup_timeout() {
    let output = tools_on_a_flooder("after-initialize");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(4), "a server that never finishes starting is exit 4: {stderr}");
    assert!(stderr.contains("flood"), "the error names the server: {stderr}");
}

#[test]
fn a_tool_whose_schema_is_a_ref_cycle_fails_the_call_and_mcp_lives() {
    let dir = tempfile::tempdir().unwrap();
    // A legacy-era server (it refuses the modern probe) with one tool whose inputSchema is a
    // `$ref` cycle; before the schema screening, `mcp call` grew without bound and aborted.
    let server = r##"
import json, sys
cycle = {"type": "object", "$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}}, "$ref": "#/$defs/a"}
for line in sys.stdin:
    msg = json.loads(line)
    if "id" not in msg or "method" not in msg:
        continue
    method, rid = msg["method"], msg["id"]
    if method == "initialize":
        result = {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                  "serverInfo": {"name": "cyclic", "version": "1"}}
    elif method == "tools/list":
        result = {"tools": [{"name": "t", "inputSchema": cycle}]}
    elif method == "tools/call":
        result = {"content": [{"type": "text", "text": "the call was sent"}]}
    else:
        print(json.dumps({"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": "no"}}), flush=True)
        continue
    print(json.dumps({"jsonrpc": "2.0", "id": rid, "result": result}), flush=True)
"##;
    let script = dir.path().join("cyclic.py");
    std::fs::write(&script, server).unwrap();
    let (output, _) = run_bounded(
        dir.path(),
        &["--stdio", "call", "t", "x=1", "--", "python3", script.to_str().unwrap()],
        Duration::from_secs(60),
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(!stderr.contains("panicked") && !stderr.contains("memory allocation"), "{stderr}");
    assert_ne!(output.status.code(), Some(0), "a refused schema does not pass: {stdout} {stderr}");
    assert!(!stdout.contains("the call was sent"), "the call must not be sent: {stdout}");
    let all = format!("{stdout}{stderr}");
    assert!(all.contains("cycle"), "the message says what was wrong: {all}");
}

/// `s` as a TOML string.
fn toml_string(s: &str) -> String {
    toml::Value::String(s.to_owned()).to_string()
}

/// A legacy-era server that logs each method it gets to a file and answers nothing (mode
/// `silent`), or answers the handshake and `tools/list` but never `tools/call` (mode `no-call`).
const STALLER: &str = r##"
import json, sys
mode, log_file = sys.argv[1], sys.argv[2]
log = open(log_file, "a")
def send(msg):
    sys.stdout.write(json.dumps(msg) + "\n")
    sys.stdout.flush()
for line in sys.stdin:
    msg = json.loads(line)
    log.write(msg.get("method", "(answer)") + "\n")
    log.flush()
    if mode == "silent" or "id" not in msg or "method" not in msg:
        continue
    method, rid = msg["method"], msg["id"]
    if method == "initialize":
        send({"jsonrpc": "2.0", "id": rid, "result": {"protocolVersion": "2025-11-25",
              "capabilities": {"tools": {}}, "serverInfo": {"name": "staller", "version": "1"}}})
    elif method == "tools/list":
        send({"jsonrpc": "2.0", "id": rid, "result": {"tools": [{"name": "hang",
              "inputSchema": {"type": "object"}}]}})
    elif method != "tools/call":
        send({"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": "no"}})
"##;

/// Run `mcp ARGS` on the staller in `mode`, with start-up and request timeouts far longer than
/// the run's bound: only `--timeout` can end `mcp` in time. The output, and the methods the
/// server got; the server must be gone.
fn on_a_staller(mode: &str, args: &[&str]) -> (Output, String) {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("staller.py");
    std::fs::write(&script, STALLER).unwrap();
    let (pid_file, log_file) = (dir.path().join("server.pid"), dir.path().join("methods.log"));
    let config = dir.path().join("mcp.toml");
    let toml = format!(
        "[[mcp.servers]]\nname = \"staller\"\ncommand = \"sh\"\nargs = [\"-c\", {}, {}, {}, {}, {}]\n\
         startup_timeout_sec = 600\nrequest_timeout_sec = 600\n",
        // The pid first, from a shell that starts at once and then becomes the server (`$$$$`:
        // the config reads `$$` as a `$`).
        toml_string("echo $$$$ > \"$0\"; exec python3 \"$1\" \"$2\" \"$3\""),
        toml_string(pid_file.to_str().unwrap()),
        toml_string(script.to_str().unwrap()),
        toml_string(mode),
        toml_string(log_file.to_str().unwrap()),
    );
    std::fs::write(&config, toml).unwrap();
    let mut all = vec!["--config", config.to_str().unwrap()];
    all.extend_from_slice(args);
    let (output, elapsed) = run_bounded(dir.path(), &all, Duration::from_secs(60));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_ne!(output.status.code(), None, "mcp hung past --timeout and was killed: {stderr}");
    let pid = std::fs::read_to_string(&pid_file).unwrap_or_else(|e| panic!("no pid ({e}): {stderr}"));
    let pid: i32 = pid.trim().parse().unwrap();
    assert!(wait_gone(pid, Duration::from_secs(10)), "the server (pid {pid}) outlived mcp");
    eprintln!("mcp {args:?} on the {mode} staller ended after {elapsed:?}");
    (output, std::fs::read_to_string(&log_file).unwrap_or_default())
}

#[test]
fn timeout_ends_a_start_that_never_completes_with_code_7() {
    let (output, _) = on_a_staller("silent", &["--timeout", "3s", "tools"]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(7), "{stderr}");
    assert!(
        stderr.contains("timed out after 3s (--timeout) while starting the servers"),
        "the error says what ran out: {stderr}"
    );
}

#[test]
fn timeout_cancels_a_call_that_never_answers_and_reports_it_in_json() {
    // Long enough for python to start on a busy machine: the call is what must time out.
    let (output, methods) = on_a_staller("no-call", &["call", "hang", "--timeout", "5s", "--json"]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(7), "{stderr}");
    assert!(stderr.contains("while running `call`"), "{stderr}");
    let error: serde_json::Value = serde_json::from_slice(&output.stdout).expect("one JSON document");
    assert_eq!(error["error"]["exitCode"], 7, "{error}");
    assert_eq!(error["error"]["kind"], "timeout", "{error}");
    assert!(methods.contains("tools/call"), "the call was sent: {methods}");
    assert!(methods.contains("notifications/cancelled"), "the call was cancelled: {methods}");
}

#[test]
fn a_bad_timeout_is_a_usage_error_that_names_it() {
    let dir = tempfile::tempdir().unwrap();
    for bad in ["0", "soon", "-5s", "8d"] {
        let flag = format!("--timeout={bad}");
        let (output, _) = run_bounded(dir.path(), &[&flag, "tools"], Duration::from_secs(30));
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(1), "{bad}: {stderr}");
        assert!(stderr.contains("--timeout") && stderr.contains(bad), "{bad}: {stderr}");
    }
}
