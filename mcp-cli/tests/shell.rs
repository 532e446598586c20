//! `mcp shell` as a person and as a script use it: driven through a pseudo-terminal (every wait
//! bounded by the session's timeout; a hung shell fails the test and is killed with it), and
//! with its lines piped to stdin.
//!
//! The server is the demo behind `sh`, which prints its pid on stderr first (so the test can
//! check it is gone after `exit`) and, in the terminal test, prints a line with an escape
//! sequence on stderr a moment later, when nothing is running: the shell shows it as it comes,
//! escaped.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use rexpect::session::PtySession;

mod support;

/// Longest wait for any one thing the shell should print.
const WAIT_MS: u64 = 30_000;

fn alive(pid: i32) -> bool {
    // A zombie is gone for every purpose but its table entry: only count processes that run.
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => stat.rsplit(')').next().is_some_and(|rest| !rest.trim_start().starts_with('Z')),
        Err(_) => false,
    }
}

fn wait_gone(pid: i32) -> bool {
    let started = Instant::now();
    while started.elapsed() < Duration::from_secs(10) {
        if !alive(pid) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    false
}

/// `mcp --stdio --name demo ARGS -- sh -c SCRIPT`, where the script prints the pid, runs
/// `before` and then becomes the demo server.
fn shell_command(dir: &Path, args: &[&str], before: &str) -> Command {
    let mcp = env!("CARGO_BIN_EXE_mcp");
    let mut command = Command::new(mcp);
    let script = format!("echo pid=$$ >&2; {before} exec \"$0\" serve-demo");
    command
        .current_dir(dir)
        .env("XDG_STATE_HOME", dir.join("state"))
        .env("TERM", "xterm")
        .env_remove("OPENAI_API_KEY")
        .args(["--stdio", "--name", "demo"])
        .args(args)
        .args(["--", "sh", "-c", &script, mcp]);
    command
}

/// The server's pid, from the live stderr line `[demo] stderr: pid=N`.
fn server_pid(p: &mut PtySession) -> i32 {
    p.exp_string("[demo] stderr: pid=").expect("the server's first stderr line, shown live");
    let (_, digits) = p.exp_regex(r"\d+").expect("its pid");
    digits.parse().unwrap()
}

#[test]
fn the_shell_on_a_terminal_completes_shows_live_lines_survives_errors_and_ends_clean() {
    let dir = tempfile::tempdir().unwrap();
    let late = r"(sleep 1; printf 'late \033[2J line\n' >&2) &";
    let mut p = rexpect::session::spawn_command(shell_command(dir.path(), &["shell"], late), Some(WAIT_MS))
        .expect("mcp shell starts in a terminal");
    let pid = server_pid(&mut p);
    p.exp_string("mcp> ").expect("a prompt");
    // A line the server wrote while nothing ran, shown as it came, its escape made visible.
    p.exp_string(r"[demo] stderr: late \u{1b}[2J line").expect("the late stderr line, escaped");

    p.send_line("tools").unwrap();
    p.exp_string("demo__current_time").expect("the tools are listed");
    p.exp_string("mcp> ").unwrap();

    // Tab completes the tool name (`ad` is no tool), then an argument key of its schema.
    p.send("call ad\t").unwrap();
    p.send(" a=100 \t").unwrap();
    p.send_line("23").unwrap();
    let before = p.exp_string("123").expect("add a=100 b=23, with `add` and `b=` completed");
    // The demo's log message about the call, shown live (before or after the result).
    let log = r#"[demo] info mcp-demo: {"tool":"add"}"#;
    if !before.contains(log) {
        p.exp_string(log).expect("the log notification");
    }
    p.exp_string("mcp> ").unwrap();

    // A failing line is shown and the shell goes on.
    p.send_line("call nope").unwrap();
    p.exp_string("unknown tool \"nope\"").expect("the error of the line");
    p.exp_string("mcp> ").unwrap();
    p.send_line("call echo 'text=unclosed").unwrap();
    p.exp_string("unclosed quote").unwrap();
    p.exp_string("mcp> ").unwrap();

    // Ctrl-C cancels the running call; the shell stays.
    p.send_line("call slow duration_ms=120000 steps=120").unwrap();
    p.exp_string("progress").expect("the slow call runs and reports progress");
    p.send_control('c').unwrap();
    // The shell's own line and the server's stderr line race each other: either may come first
    // (and the prompt between them), so wait for both in any order.
    let (mut cancelled, mut told) = (false, false);
    while !(cancelled && told) {
        let (_, found) = p
            .exp_regex(r"`call` cancelled \(Ctrl-C\)|\[demo\] stderr: mcp serve-demo: cancel request")
            .expect("the call is cancelled and the server is told");
        if found.contains("Ctrl-C") {
            cancelled = true;
        } else {
            told = true;
        }
    }

    p.send_line("status --json").unwrap();
    p.exp_string("\"state\": \"ready\"").expect("--json per line, the server still ready");
    p.exp_string("mcp> ").unwrap();
    p.send_line("exit").unwrap();
    p.exp_eof().expect("exit ends the shell");
    let status = p.process().wait().unwrap();
    let status = format!("{status:?}");
    assert!(status.starts_with("Exited(") && status.ends_with(", 0)"), "the last line's code, 0: {status}");
    assert!(wait_gone(pid), "the server (pid {pid}) outlived the shell");

    // The history keeps the lines as run (completed), readable by the user only.
    let history = dir.path().join("state/mcp/history");
    let kept = std::fs::read_to_string(&history).expect("a history file");
    assert!(kept.contains("call add a=100 b=23"), "{kept}");
    use std::os::unix::fs::PermissionsExt as _;
    assert_eq!(std::fs::metadata(&history).unwrap().permissions().mode() & 0o777, 0o600);
}

#[test]
fn ctrl_d_ends_the_shell_and_the_server() {
    let dir = tempfile::tempdir().unwrap();
    let mut p = rexpect::session::spawn_command(shell_command(dir.path(), &["shell"], ""), Some(WAIT_MS)).unwrap();
    let pid = server_pid(&mut p);
    p.exp_string("mcp> ").unwrap();
    p.send_control('d').unwrap();
    p.exp_eof().expect("Ctrl-D ends the shell");
    assert!(wait_gone(pid), "the server (pid {pid}) outlived the shell");
}

#[test]
fn piped_lines_run_one_by_one_and_the_last_exit_code_is_the_shells() {
    let dir = tempfile::tempdir().unwrap();
    let run = |lines: &str| {
        let mut command = shell_command(dir.path(), &["shell"], "");
        command.stdin(Stdio::piped());
        support::run_bounded(command, Some(lines.as_bytes()), Duration::from_secs(60))
    };
    let too_long = "x".repeat(100 * 1024);
    let output = run(&format!("tools\n\ncall nope\n{too_long}\ncall echo \"text=piped line\"\nhelp\nprompts --json\n"));
    let (stdout, stderr) = (String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert!(stdout.contains("demo__echo") && stdout.contains("piped line"), "{stdout}");
    assert!(stdout.contains("Commands (each takes"), "help: {stdout}");
    assert!(stdout.contains("\"review_code\""), "--json on a line: {stdout}");
    assert!(stderr.contains("unknown tool \"nope\""), "{stderr}");
    assert!(stderr.contains("longer than"), "a line over the limit is refused: {stderr}");
    assert!(!stdout.contains("mcp> "), "no prompt when stdin is not a terminal: {stdout}");
    let pid: i32 = stderr.split("pid=").nth(1).and_then(|s| s.split_whitespace().next()).unwrap().parse().unwrap();
    assert!(wait_gone(pid), "the server (pid {pid}) outlived the shell");

    // The exit code is the last line's; a line may not pick other servers.
    let output = run("status\ntools --server other\n");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("--server is chosen when the shell starts"), "{stderr}");
    let output = run("call echo text=x --timeout 0\nchat\n");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("--timeout") && stderr.contains("`chat` does not run inside the shell"), "{stderr}");
}

#[test]
fn the_shells_timeout_bounds_each_line_not_the_session() {
    let dir = tempfile::tempdir().unwrap();
    let mut command = shell_command(dir.path(), &["shell", "--timeout", "5s"], "");
    command.stdin(Stdio::piped());
    let lines = "call slow duration_ms=120000\ncall slow duration_ms=200 steps=1 --timeout 1m\n";
    let output = support::run_bounded(command, Some(lines.as_bytes()), Duration::from_secs(60));
    let (stdout, stderr) = (String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    assert!(stderr.contains("timed out after 5s (--timeout) while running `call`"), "{stderr}");
    assert!(stdout.contains("Finished 1 steps"), "the next line runs: {stdout}");
    assert_eq!(output.status.code(), Some(0), "{stderr}");
}
