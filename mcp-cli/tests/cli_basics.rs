//! The built `mcp` binary as a person or a script meets it: help, usage errors with exit code 1
//! on one line, and `mcp serve-demo` answering piped requests and ending with its input.

use std::io::{Read, Write};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

const LIMIT: Duration = Duration::from_secs(30);

fn mcp() -> Command {
    Command::new(env!("CARGO_BIN_EXE_mcp"))
}

/// Wait for `child` at most [`LIMIT`] (killing it then), and return its status code, stdout and
/// stderr.
fn finish(mut child: Child) -> (Option<i32>, String, String) {
    let deadline = Instant::now() + LIMIT;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("mcp did not end within {LIMIT:?}");
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let mut out = String::new();
    let mut err = String::new();
    child.stdout.take().unwrap().read_to_string(&mut out).unwrap();
    child.stderr.take().unwrap().read_to_string(&mut err).unwrap();
    (status.code(), out, err)
}

fn run(args: &[&str]) -> (Option<i32>, String, String) {
    let child = mcp().args(args).stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    finish(child)
}

#[test]
fn help_and_version_succeed() {
    let (code, out, _) = run(&["--help"]);
    assert_eq!(code, Some(0));
    for needed in ["serve-demo", "Exit codes:", "2  the tool returned an error result"] {
        assert!(out.contains(needed), "--help lacks {needed:?}:\n{out}");
    }
    let (code, out, _) = run(&["--version"]);
    assert_eq!(code, Some(0));
    assert!(out.starts_with("mcp "), "{out}");
}

#[test]
fn usage_errors_are_one_line_and_exit_1() {
    for args in [&["frobnicate"][..], &["call"], &["--stdio", "tools"], &["tools", "--no-such-flag"]] {
        let (code, out, err) = run(args);
        assert_eq!(code, Some(1), "{args:?}: {err}");
        assert!(out.is_empty(), "{args:?}: nothing on stdout: {out}");
        assert_eq!(err.lines().count(), 1, "{args:?}: one line: {err}");
        assert!(err.starts_with("mcp: "), "{args:?}: {err}");
    }
    let (code, _, err) = run(&["--stdio", "--", "npx", "-y", "some-server", "tools"]);
    assert_eq!(code, Some(1), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("try: mcp --stdio tools -- npx -y some-server"), "the right order is shown: {err}");
    let (_, _, err) = run(&["--verbose", "frobnicate"]);
    assert!(err.lines().count() > 1 && err.contains("exit code 1"), "--verbose explains: {err}");
}

#[test]
fn serve_demo_answers_piped_requests_and_ends_with_its_input() {
    let mut child =
        mcp().arg("serve-demo").stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    let requests = concat!(
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"sh","version":"1"}}}"#,
        "\n",
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"add","arguments":{"a":2,"b":3}}}"#,
        "\n",
        "not json\n",
        r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"slow","arguments":{"duration_ms":100,"steps":2},"_meta":{"progressToken":"p"}}}"#,
    );
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(requests.as_bytes()).unwrap();
    drop(stdin);
    let (code, out, err) = finish(child);
    assert_eq!(code, Some(0), "{err}");
    let lines: Vec<Value> = out.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let by_id = |id: i64| lines.iter().find(|m| m["id"] == id).unwrap_or_else(|| panic!("no answer {id}: {out}"));
    assert_eq!(by_id(1)["result"]["protocolVersion"], "2025-06-18");
    assert_eq!(by_id(2)["result"]["content"][0]["text"], "2 + 3 = 5");
    assert_eq!(by_id(3)["result"]["content"][0]["text"], "Finished 2 steps in 100 ms.");
    assert!(lines.iter().any(|m| m["error"]["code"] == -32700), "a parse error for the bad line: {out}");
    let progress = lines.iter().filter(|m| m["method"] == "notifications/progress").count();
    assert_eq!(progress, 2, "{out}");
    assert!(err.contains("mcp serve-demo: ready"), "logs go to stderr: {err}");
}
