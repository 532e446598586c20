//! `cargo xtask bench http`: the streamable HTTP client workloads. This stack's client against
//! the official Rust SDK's (rmcp), and this stack's client in the legacy era against itself in the
//! modern era (2026-07-28).
//!
//! It builds `bench-http-server` and `bench-http-client` (`mcp-bench`) and rmcp's streamable
//! HTTP client (`bench/rmcp-http-client`, a workspace of its own so that rmcp never enters the
//! project's build, built into `target/rmcp-bench`), all in release mode. One server process on
//! 127.0.0.1 serves every run. Each workload runs `runs` times in a fresh client process per
//! variant (ours legacy, ours modern, rmcp), rotating which variant goes first; the tables show
//! the medians, and ratios that are the median of each round's ratio.
//!
//! - Table 1, ours (legacy era, which is what rmcp speaks) against rmcp: the ratio ours/rmcp and
//!   its target.
//! - Table 2, ours in the modern era against ours in the legacy era, in wall clock and in the
//!   client's CPU time: the modern era may cost at most 1.1 times the legacy era.
//!
//! The workloads, on a current-thread Tokio runtime in every client, against the same server:
//! W1 2000 sequential echo calls; W2 256 calls with 32 in flight. Benchmarks report, they do not
//! fail on a missed target.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};

use xtask::project_root;

use super::{
    ERA_BUDGET, RMCP_TARGET, Row, cargo_command, era_row, heading, print_table, run_client, run_status, target_dir,
};

type Result<T = ()> = std::result::Result<T, String>;

/// Where rmcp's HTTP client lives and builds, relative to the workspace root.
const RMCP_DIR: &str = "bench/rmcp-http-client";
const WORKLOADS: [&str; 2] = ["w1", "w2"];

/// The variants run on every workload: (label, index in `results`).
const OURS_LEGACY: usize = 0;
const OURS_MODERN: usize = 1;
const RMCP: usize = 2;
const VARIANTS: [&str; 3] = ["ours legacy", "ours modern", "rmcp"];

const ROWS: &[Row] = &[
    Row::new("W1 2000 sequential calls (ms)", "w1", "total_ms", Some(0.50)),
    Row::new("W1 calls/s (higher is better)", "w1", "calls_per_s", None),
    Row::new("W1 p50 latency (us)", "w1", "p50_us", None),
    Row::new("W1 p99 latency (us)", "w1", "p99_us", None),
    Row::new("W2 256 calls, 32 in flight (ms)", "w2", "total_ms", Some(0.45)),
];

const ERA_ROWS: &[Row] = &[
    era_row("W1 2000 sequential calls (ms)", "w1", "total_ms"),
    era_row("W1 client CPU time (ms)", "w1", "cpu_ms"),
    Row::new("W1 p50 latency (us)", "w1", "p50_us", None),
    Row::new("W1 p99 latency (us)", "w1", "p99_us", None),
    era_row("W2 256 calls, 32 in flight (ms)", "w2", "total_ms"),
    era_row("W2 client CPU time (ms)", "w2", "cpu_ms"),
];

/// The server process, killed when dropped.
pub(crate) struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Build everything, run every workload `runs` times per variant, print both tables.
pub(crate) fn http(runs: usize) -> Result {
    let root = project_root();
    let ours_dir = target_dir(&root).join("release");
    heading("http bench: building bench-http-client and bench-http-server (release)");
    let mut build = cargo_command();
    build.args(["build", "--release", "-p", "mcp-bench", "--bin", "bench-http-client", "--bin", "bench-http-server"]);
    run_status("build", build, &root)?;

    heading(&format!("http bench: building rmcp's HTTP client ({RMCP_DIR}, release, into {RMCP_TARGET})"));
    let mut build = cargo_command();
    build.args(["build", "--release", "--locked"]).env("CARGO_TARGET_DIR", root.join(RMCP_TARGET));
    run_status("build rmcp HTTP client", build, &root.join(RMCP_DIR))?;

    let (server, url) = start_server(&ours_dir.join("bench-http-server"))?;
    let ours = ours_dir.join("bench-http-client");
    let rmcp = root.join(RMCP_TARGET).join("release").join("rmcp-bench-http-client");
    let run_variant = |variant: usize, workload: &str| -> Result<String> {
        match variant {
            OURS_LEGACY => run_client(&ours, &[workload.as_ref(), url.as_ref(), "legacy".as_ref()]),
            OURS_MODERN => run_client(&ours, &[workload.as_ref(), url.as_ref(), "modern".as_ref()]),
            _ => run_client(&rmcp, &[workload.as_ref(), url.as_ref()]),
        }
    };

    heading(&format!("http bench: server at {url}; {runs} runs per workload, rotating clients; medians below"));
    // One unmeasured run each: neither client pays for a cold page cache or a cold server.
    for variant in 0..VARIANTS.len() {
        run_variant(variant, "w1")?;
    }
    // results[variant][workload] = the JSON line of every run.
    let mut results: Vec<Vec<Vec<String>>> = vec![vec![Vec::new(); WORKLOADS.len()]; VARIANTS.len()];
    for (w, workload) in WORKLOADS.iter().enumerate() {
        for run in 0..runs {
            for step in 0..VARIANTS.len() {
                let variant = (run + step) % VARIANTS.len();
                let line = run_variant(variant, workload)?;
                println!("  {workload} run {} {:<11} {line}", run + 1, VARIANTS[variant]);
                results[variant][w].push(line);
            }
        }
    }
    drop(server);

    println!("\nours (legacy era) against rmcp, streamable HTTP, JSON replies");
    let (met, targets) = print_table(&results, &WORKLOADS, (OURS_LEGACY, RMCP), ROWS, ("ours", "rmcp", "ours/rmcp"))?;
    println!("\nhttp bench: {met} of {targets} targets met");
    println!("\nours: modern era (2026-07-28, server/discover, _meta on every request) against legacy era");
    let (met, targets) =
        print_table(&results, &WORKLOADS, (OURS_MODERN, OURS_LEGACY), ERA_ROWS, ("modern", "legacy", "mod/legacy"))?;
    println!("\nera comparison: {met} of {targets} budgets met (modern <= {ERA_BUDGET:.1}x legacy)");
    Ok(())
}

/// Start the server on a free port; its first line of stdout is the port.
pub(crate) fn start_server(binary: &Path) -> Result<(Server, String)> {
    let mut child = Command::new(binary)
        .arg("0")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .spawn()
        .map_err(|e| format!("could not start {}: {e}", binary.display()))?;
    let stdout = child.stdout.take().expect("stdout is piped");
    let server = Server(child);
    let mut line = String::new();
    BufReader::new(stdout).read_line(&mut line).map_err(|e| format!("reading the server's port: {e}"))?;
    let port: u16 = line.trim().parse().map_err(|_| format!("the server printed {line:?}, not a port"))?;
    Ok((server, format!("http://127.0.0.1:{port}/mcp")))
}
