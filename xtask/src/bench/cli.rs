//! `cargo xtask bench cli [--runs N]`: how long a one-shot `mcp` command takes next to the
//! server's own start-up, the time a user waits beyond what the server needs.
//!
//! It builds `mcp` in release mode, provisions the real peers (`target/peers`, see
//! [`crate::peers`]) and, for each server — server-everything over stdio (a reference server that
//! does not exit when its input ends, so `mcp` must stop it) and `mcp`'s built-in demo server —
//! measures in alternating order, `runs` times (default 5):
//!
//! - **server**: the server's own start-up, seen by a client with no library: spawn it, write the
//!   `initialize` request, the `initialized` notification and `tools/list` as pre-formatted lines,
//!   and stop the clock when the `tools/list` answer arrives (the process is then killed);
//! - **mcp tools**: `mcp --stdio tools -- <server>` from start to exit (its output discarded,
//!   exit code 0 checked), start-up, listing, printing and shutting the server down included.
//!
//! The table shows both medians and the overhead (the median of each round's difference); the
//! target is an overhead of at most 300 ms (issue 20: `mcp tools` within 0.3 s of the server's
//! start-up). Benchmarks report, they do not fail on a missed target.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use xtask::project_root;

use super::stats::fmt;
use super::{cargo_command, heading, run_status, target_dir};

type Result<T = ()> = std::result::Result<T, String>;

const DEFAULT_RUNS: usize = 5;

/// The overhead `mcp tools` may add to the server's own start-up (ms).
const OVERHEAD_TARGET_MS: f64 = 300.0;

/// How long the raw client waits for a server's `tools/list` answer before giving up.
const SERVER_TIMEOUT: Duration = Duration::from_secs(30);

/// What the raw client writes: the handshake and one listing, one JSON-RPC message per line.
const HANDSHAKE: &str = concat!(
    r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"xtask-bench","version":"1"}}}"#,
    "\n",
    r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    "\n",
    r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#,
    "\n",
);

/// A server to measure: its label and command line.
struct Server {
    label: &'static str,
    argv: Vec<String>,
}

/// `cargo xtask bench cli [--runs N]`.
pub(crate) fn cli(args: &[String]) -> Result {
    let runs = parse_runs(args)?;
    let root = project_root();
    heading("building mcp (release)");
    let mut build = cargo_command();
    build.args(["build", "--release", "--locked", "-p", "mcp-cli", "--bin", "mcp"]);
    run_status("cargo build --release -p mcp-cli", build, &root)?;
    let mcp = target_dir(&root).join("release").join("mcp");
    let peers = crate::peers::provision()?;
    let everything = peers.join("npm/node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    if !everything.is_file() {
        return Err(format!("server-everything is not provisioned: {} is missing", everything.display()));
    }
    let servers = [
        Server { label: "server-everything (stdio)", argv: vec!["node".into(), path(&everything), "stdio".into()] },
        Server { label: "mcp's demo server", argv: vec![path(&mcp), "serve-demo".into()] },
    ];
    let scratch = std::env::temp_dir().join(format!("xtask-bench-cli-{}", std::process::id()));
    std::fs::create_dir_all(&scratch).map_err(|e| format!("cannot create {}: {e}", scratch.display()))?;
    let outcome = measure_all(&mcp, &servers, runs, &scratch);
    let _ = std::fs::remove_dir_all(&scratch);
    outcome
}

fn measure_all(mcp: &Path, servers: &[Server], runs: usize, scratch: &Path) -> Result {
    heading(&format!("mcp tools against the server's own start-up ({runs} runs each, alternating)"));
    println!("{:<28} {:>12} {:>12} {:>12} {:>10}  verdict", "server", "server ms", "mcp ms", "overhead", "target");
    for server in servers {
        let (mut alone, mut whole, mut overhead) = (Vec::new(), Vec::new(), Vec::new());
        for round in 0..runs {
            let (a, w) = if round % 2 == 0 {
                let a = server_startup(&server.argv)?;
                (a, mcp_tools(mcp, &server.argv, scratch)?)
            } else {
                let w = mcp_tools(mcp, &server.argv, scratch)?;
                (server_startup(&server.argv)?, w)
            };
            let (a, w) = (ms(a), ms(w));
            alone.push(a);
            whole.push(w);
            overhead.push(w - a);
        }
        let over = median(overhead);
        let verdict = if over <= OVERHEAD_TARGET_MS { "met" } else { "MISSED" };
        println!(
            "{:<28} {:>12} {:>12} {:>12} {:>10}  {verdict}",
            server.label,
            fmt(median(alone)),
            fmt(median(whole)),
            fmt(over),
            format!("≤ {}", fmt(OVERHEAD_TARGET_MS))
        );
    }
    Ok(())
}

/// The server's own start-up: spawn, handshake and `tools/list`, by a client with no library.
fn server_startup(argv: &[String]) -> Result<Duration> {
    let started = Instant::now();
    let mut child = Command::new(&argv[0])
        .args(&argv[1..])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("cannot start {}: {e}", argv.join(" ")))?;
    let mut stdin = child.stdin.take().expect("piped stdin");
    let stdout = child.stdout.take().expect("piped stdout");
    let written = stdin.write_all(HANDSHAKE.as_bytes()).and_then(|()| stdin.flush());
    // The reader thread ends when the child's stdout closes (the child is killed below).
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if is_answer_to(&line, 2) {
                let _ = tx.send(Instant::now());
                break;
            }
        }
    });
    let answered = rx.recv_timeout(SERVER_TIMEOUT);
    // Only this process started it: kill it by its own handle, then reap it.
    let _ = child.kill();
    let _ = child.wait();
    written.map_err(|e| format!("{}: cannot write the handshake: {e}", argv.join(" ")))?;
    let at = answered.map_err(|_| format!("{} did not answer tools/list within {SERVER_TIMEOUT:?}", argv.join(" ")))?;
    Ok(at - started)
}

/// `mcp --timeout 60s --stdio tools -- <server>`, start to exit; exit code 0 required.
fn mcp_tools(mcp: &Path, argv: &[String], scratch: &Path) -> Result<Duration> {
    let started = Instant::now();
    let output = Command::new(mcp)
        // `mcp`'s own bound on the whole command: a hang fails the bench instead of stalling it.
        .args(["--timeout", "60s", "--stdio", "tools", "--"])
        .args(argv)
        .current_dir(scratch)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output()
        .map_err(|e| format!("cannot start {}: {e}", mcp.display()))?;
    let took = started.elapsed();
    if !output.status.success() {
        return Err(format!(
            "mcp --stdio tools -- {} failed ({}): {}",
            argv.join(" "),
            output.status,
            String::from_utf8_lossy(&output.stderr).trim()
        ));
    }
    Ok(took)
}

fn parse_runs(args: &[String]) -> Result<usize> {
    match args {
        [] => Ok(DEFAULT_RUNS),
        [flag, n] if flag == "--runs" => match n.parse::<usize>() {
            Ok(n) if n > 0 => Ok(n),
            _ => Err(format!("--runs takes a positive number, not {n:?}")),
        },
        _ => Err(format!("bench cli: unexpected arguments {args:?} (usage: bench cli [--runs N])")),
    }
}

/// Whether `line` is a JSON-RPC response with this numeric id (a result or an error), its `id`
/// the first member after `jsonrpc` or the last one (the orders the servers measured here use),
/// so that an `id` nested in a result is not taken for it.
fn is_answer_to(line: &str, id: u64) -> bool {
    let compact: String = line.chars().filter(|c| !c.is_whitespace()).collect();
    compact.starts_with(&format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},"))
        || compact.starts_with(&format!("{{\"id\":{id},"))
        || compact.ends_with(&format!(",\"id\":{id}}}"))
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    let n = values.len();
    match n {
        0 => f64::NAN,
        _ if n % 2 == 1 => values[n / 2],
        _ => (values[n / 2 - 1] + values[n / 2]) / 2.0,
    }
}

fn path(p: &Path) -> String {
    PathBuf::from(p).to_string_lossy().into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_are_told_by_their_id() {
        assert!(is_answer_to(r#"{"jsonrpc":"2.0","id":2,"result":{"tools":[]}}"#, 2));
        assert!(is_answer_to(r#"{"jsonrpc":"2.0","result":{},"id": 2}"#, 2));
        assert!(!is_answer_to(r#"{"jsonrpc":"2.0","id":12,"result":{}}"#, 2));
        assert!(!is_answer_to(r#"{"jsonrpc":"2.0","id":1,"result":{"x":{"a":0,"id":2}}}"#, 2));
        assert!(!is_answer_to(r#"{"jsonrpc":"2.0","method":"notifications/message"}"#, 2));
    }

    #[test]
    fn medians_of_odd_and_even_counts() {
        assert_eq!(median(vec![3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(vec![4.0, 1.0, 3.0, 2.0]), 2.5);
        assert!(median(vec![]).is_nan());
    }
}
