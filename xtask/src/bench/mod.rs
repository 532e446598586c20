//! `cargo xtask bench [codec|stdio|http|manager|cli|instructions|all] [args]`: the criterion codec
//! bench, and the stdio and streamable HTTP client workloads that compare this stack's client with
//! the official Rust SDK's (rmcp). The HTTP workloads live in [`http`], the many-server manager's
//! in [`manager`], the era comparison in instructions in [`instructions`]. The benchmark clients
//! and servers are the binaries of the `mcp-bench` package (`bench/mcp-bench`).
//!
//! - `codec`: `cargo bench -p mcp-protocol --bench codec`, with `args` passed on.
//! - `stdio`: builds `bench-client` and `bench-server` (`mcp-bench`) and rmcp's client
//!   (`bench/rmcp-client`, a workspace of its own so that rmcp never enters the project's build,
//!   built into `target/rmcp-bench`), all in release mode. Each workload runs `--runs N` times
//!   (default 5) in a fresh process per client, alternating which client goes first; the table
//!   shows the medians, the ratio ours/rmcp (the median of each round's ratio: a round runs both
//!   back to back, under the same load) and the target ratio. Benchmarks report, they do not
//!   fail on a missed target. Then the era comparison: ours in the legacy era (`bench-server` as
//!   above, client era `legacy`) against ours in the modern era (2026-07-28: `bench-server
//!   --modern`, client era `modern`), the same workloads and runs, alternating which goes first,
//!   in wall clock and in the client's CPU time (`cpu_ms`); the modern era may cost at most 1.1
//!   times the legacy era.
//! - `http`: the streamable HTTP workloads (W1, W2), ours against rmcp and our legacy era against
//!   our modern era; see [`http`]. `--runs N` as for `stdio`.
//! - `manager`: one manager over 100 servers of 100 tools (start-up, host memory, routing
//!   overhead); see [`manager`]. `--runs N` (default 3).
//! - `cli`: a one-shot `mcp tools` against the server's own start-up; see [`cli`]. Not part of
//!   `all` (it provisions the npm peers). `--runs N` (default 5).
//! - `instructions`: the era comparison counted in instructions under callgrind (needs Valgrind);
//!   see [`instructions`]. Not part of `all`.
//! - `all` (the default): `codec`, `stdio`, `http`, then `manager`; `args` go to the codec bench.
//!
//! The workloads, on a current-thread Tokio runtime in both clients, against the same server:
//! W1 2000 sequential echo calls; W2 256 calls with 32 in flight; W3 spawn, initialize and list
//! 10,002 tools in 101 pages; W4 one call returning 8 MiB of text, with the client's peak RSS.

mod cli;
mod http;
mod instructions;
mod manager;

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::process::Command;

use xtask::project_root;

type Result<T = ()> = std::result::Result<T, String>;

/// Where rmcp's client lives and builds, relative to the workspace root.
const RMCP_DIR: &str = "bench/rmcp-client";
/// Where both rmcp clients are built.
pub(crate) const RMCP_TARGET: &str = "target/rmcp-bench";
const DEFAULT_RUNS: usize = 5;
const WORKLOADS: [&str; 4] = ["w1", "w2", "w3", "w4"];
/// The modern era may cost this many times the legacy era.
pub(crate) const ERA_BUDGET: f64 = 1.1;

/// One row of a comparison table (the stdio and the HTTP benches): a metric of a workload.
pub(crate) struct Row {
    pub(crate) label: &'static str,
    pub(crate) workload: &'static str,
    pub(crate) key: &'static str,
    /// The highest acceptable ratio (ours/rmcp, or modern/legacy), if this row has a target
    /// (lower is better).
    pub(crate) target: Option<f64>,
    /// Shown value = metric / scale.
    pub(crate) scale: f64,
}

const ROWS: &[Row] = &[
    Row { label: "W1 2000 sequential calls (ms)", workload: "w1", key: "total_ms", target: Some(0.90), scale: 1.0 },
    Row { label: "W1 calls/s (higher is better)", workload: "w1", key: "calls_per_s", target: None, scale: 1.0 },
    Row { label: "W1 p50 latency (us)", workload: "w1", key: "p50_us", target: None, scale: 1.0 },
    Row { label: "W1 p99 latency (us)", workload: "w1", key: "p99_us", target: None, scale: 1.0 },
    Row { label: "W2 256 calls, 32 in flight (ms)", workload: "w2", key: "total_ms", target: Some(0.95), scale: 1.0 },
    Row {
        label: "W3 spawn+init+list 10,002 tools (ms)",
        workload: "w3",
        key: "total_ms",
        target: Some(0.45),
        scale: 1.0,
    },
    Row { label: "W4 8 MiB result (ms)", workload: "w4", key: "total_ms", target: Some(0.65), scale: 1.0 },
    Row { label: "W4 peak RSS (MiB)", workload: "w4", key: "peak_rss_kib", target: Some(0.75), scale: 1024.0 },
];

const ERA_ROWS: &[Row] = &[
    era_row("W1 2000 sequential calls (ms)", "w1", "total_ms"),
    era_row("W1 client CPU time (ms)", "w1", "cpu_ms"),
    Row { label: "W1 p50 latency (us)", workload: "w1", key: "p50_us", target: None, scale: 1.0 },
    Row { label: "W1 p99 latency (us)", workload: "w1", key: "p99_us", target: None, scale: 1.0 },
    era_row("W2 256 calls, 32 in flight (ms)", "w2", "total_ms"),
    era_row("W2 client CPU time (ms)", "w2", "cpu_ms"),
    era_row("W3 spawn+init+list 10,002 tools (ms)", "w3", "total_ms"),
    era_row("W3 client CPU time (ms)", "w3", "cpu_ms"),
    era_row("W4 8 MiB result (ms)", "w4", "total_ms"),
    era_row("W4 client CPU time (ms)", "w4", "cpu_ms"),
    Row { label: "W4 peak RSS (MiB)", workload: "w4", key: "peak_rss_kib", target: Some(ERA_BUDGET), scale: 1024.0 },
];

impl Row {
    /// A row shown as measured (scale 1).
    pub(crate) const fn new(
        label: &'static str,
        workload: &'static str,
        key: &'static str,
        target: Option<f64>,
    ) -> Row {
        Row { label, workload, key, target, scale: 1.0 }
    }
}

/// A row of the era table held to the era budget.
pub(crate) const fn era_row(label: &'static str, workload: &'static str, key: &'static str) -> Row {
    Row::new(label, workload, key, Some(ERA_BUDGET))
}

/// `cargo xtask bench [codec|stdio|http|manager|cli|instructions|all] [args]`.
pub fn bench(args: &[String]) -> Result {
    let (mode, rest) = match args.first().map(String::as_str) {
        Some(mode @ ("codec" | "stdio" | "http" | "manager" | "cli" | "instructions" | "all")) => (mode, &args[1..]),
        _ => ("all", args),
    };
    match mode {
        "codec" => crate::ci::bench(rest),
        "stdio" => stdio(rest),
        "http" => http::http(parse_runs(rest)?),
        "manager" => manager::manager(rest),
        "cli" => cli::cli(rest),
        "instructions" => instructions::instructions(rest),
        _ => {
            crate::ci::bench(rest)?;
            stdio(&[])?;
            http::http(DEFAULT_RUNS)?;
            manager::manager(&[])
        }
    }
}

/// The stdio client workloads, ours against rmcp's.
fn stdio(args: &[String]) -> Result {
    let runs = parse_runs(args)?;
    let root = project_root();
    let ours_dir = target_dir(&root).join("release");
    heading("stdio bench: building bench-client and bench-server (release)");
    let mut build = cargo_command();
    build.args(["build", "--release", "-p", "mcp-bench", "--bin", "bench-client", "--bin", "bench-server"]);
    run_status("build", build, &root)?;

    heading(&format!("stdio bench: building rmcp's client ({RMCP_DIR}, release, into {RMCP_TARGET})"));
    let mut build = cargo_command();
    build.args(["build", "--release", "--locked"]).env("CARGO_TARGET_DIR", root.join(RMCP_TARGET));
    run_status("build rmcp client", build, &root.join(RMCP_DIR))?;

    let server = ours_dir.join("bench-server");
    let ours = ours_dir.join("bench-client");
    let clients = [("ours", ours.clone()), ("rmcp", root.join(RMCP_TARGET).join("release").join("rmcp-bench-client"))];
    heading(&format!(
        "stdio bench: {runs} runs per workload, alternating clients; medians below, ratios are the median of each round's ratio"
    ));
    // One unmeasured run each, so that neither client pays for a cold page cache.
    for (_, client) in &clients {
        run_client(client, &["w1".as_ref(), server.as_os_str()])?;
    }
    // results[client][workload] = the JSON line of every run.
    let mut results: Vec<Vec<Vec<String>>> = vec![vec![Vec::new(); WORKLOADS.len()]; clients.len()];
    for (w, workload) in WORKLOADS.iter().enumerate() {
        for run in 0..runs {
            for step in 0..clients.len() {
                let c = if run % 2 == 0 { step } else { clients.len() - 1 - step };
                let line = run_client(&clients[c].1, &[workload.as_ref(), server.as_os_str()])?;
                println!("  {workload} run {} {:<4} {line}", run + 1, clients[c].0);
                results[c][w].push(line);
            }
        }
    }
    println!();
    let (met, targets) = print_table(&results, &WORKLOADS, (0, 1), ROWS, ("ours", "rmcp", "ours/rmcp"))?;
    println!("\nstdio bench: {met} of {targets} targets met");
    eras(runs, &ours, &server)
}

/// Ours in the legacy era against ours in the modern era, on every workload.
fn eras(runs: usize, client: &Path, server: &Path) -> Result {
    // (label, the client's arguments after the server's path): the era, then the server's flags.
    // Modern first, as print_table takes the ratio results[0] / results[1].
    const VARIANTS: [(&str, &[&str]); 2] = [("modern", &["modern", "--modern"]), ("legacy", &["legacy"])];
    let run_variant = |v: usize, workload: &str| -> Result<String> {
        let mut args: Vec<&OsStr> = vec![workload.as_ref(), server.as_os_str()];
        args.extend(VARIANTS[v].1.iter().map(OsStr::new));
        run_client(client, &args)
    };
    heading(&format!(
        "stdio bench, eras: {runs} runs per workload, alternating eras; medians below, ratios are the median of each round's ratio"
    ));
    for v in 0..VARIANTS.len() {
        run_variant(v, "w1")?;
    }
    // results[variant][workload] = the JSON line of every run.
    let mut results: Vec<Vec<Vec<String>>> = vec![vec![Vec::new(); WORKLOADS.len()]; VARIANTS.len()];
    for (w, workload) in WORKLOADS.iter().enumerate() {
        for run in 0..runs {
            for step in 0..VARIANTS.len() {
                let v = if run % 2 == 0 { step } else { VARIANTS.len() - 1 - step };
                let line = run_variant(v, workload)?;
                println!("  {workload} run {} {:<6} {line}", run + 1, VARIANTS[v].0);
                results[v][w].push(line);
            }
        }
    }
    println!("\nours: modern era (2026-07-28, server/discover, _meta on every request) against legacy era, stdio");
    let (met, targets) = print_table(&results, &WORKLOADS, (0, 1), ERA_ROWS, ("modern", "legacy", "mod/legacy"))?;
    println!("\nera comparison: {met} of {targets} budgets met (modern <= {ERA_BUDGET:.1}x legacy)");
    Ok(())
}

fn parse_runs(args: &[String]) -> Result<usize> {
    match args {
        [] => Ok(DEFAULT_RUNS),
        [flag, n] if flag == "--runs" => match n.parse::<usize>() {
            Ok(n) if n > 0 => Ok(n),
            _ => Err(format!("--runs takes a positive number, not {n:?}")),
        },
        _ => Err(format!("bench stdio: unexpected arguments {args:?} (usage: bench stdio [--runs N])")),
    }
}

/// Print `rows` comparing the runs of variant `a` with those of variant `b` (ratio a/b);
/// `results[variant][workload]` holds each run's JSON line, in the order of `workloads`.
/// Returns (met, targets).
pub(crate) fn print_table(
    results: &[Vec<Vec<String>>],
    workloads: &[&str],
    (a, b): (usize, usize),
    rows: &[Row],
    (a_label, b_label, ratio_label): (&str, &str, &str),
) -> Result<(usize, usize)> {
    println!("{:<38} {:>11} {:>11} {:>10} {:>8}  result", "workload (median)", a_label, b_label, ratio_label, "target");
    println!("{}", "-".repeat(90));
    let (mut met, mut targets) = (0, 0);
    for row in rows {
        let w = workloads.iter().position(|w| *w == row.workload).expect("a known workload");
        let va = median(&results[a][w], row.key)? / row.scale;
        let vb = median(&results[b][w], row.key)? / row.scale;
        let ratio = paired_ratio(&results[a][w], &results[b][w], row.key)?;
        let (target, verdict) = match row.target {
            Some(t) => {
                targets += 1;
                let ok = ratio <= t;
                met += usize::from(ok);
                (format!("<= {t:.2}"), if ok { "met" } else { "MISSED" })
            }
            None => (String::new(), ""),
        };
        println!("{:<38} {:>11} {:>11} {:>10.3} {:>8}  {verdict}", row.label, fmt(va), fmt(vb), ratio, target);
    }
    Ok((met, targets))
}

pub(crate) fn fmt(value: f64) -> String {
    if value >= 100.0 { format!("{value:.0}") } else { format!("{value:.2}") }
}

/// The median of `key` over the JSON lines of a workload's runs.
pub(crate) fn median(lines: &[String], key: &str) -> Result<f64> {
    let values = lines.iter().map(|line| value(line, key)).collect::<Result<Vec<f64>>>()?;
    middle(values).ok_or_else(|| format!("no runs for {key:?}"))
}

/// The median of the ratios a/b of `key` run by run. The two variants run back to back in each
/// round, so a round's ratio compares them under the same load on a shared machine; the median of
/// those ratios is steadier than the ratio of the two medians.
pub(crate) fn paired_ratio(a: &[String], b: &[String], key: &str) -> Result<f64> {
    if a.len() != b.len() {
        return Err(format!("{} runs against {} for {key:?}", a.len(), b.len()));
    }
    let ratios = a.iter().zip(b).map(|(a, b)| Ok(value(a, key)? / value(b, key)?)).collect::<Result<Vec<f64>>>()?;
    middle(ratios).ok_or_else(|| format!("no runs for {key:?}"))
}

fn value(line: &str, key: &str) -> Result<f64> {
    number(line, key).ok_or_else(|| format!("no number {key:?} in {line}"))
}

/// The median of `values`, if there are any.
fn middle(mut values: Vec<f64>) -> Option<f64> {
    values.sort_by(f64::total_cmp);
    let n = values.len();
    match n {
        0 => None,
        _ if n % 2 == 1 => Some(values[n / 2]),
        _ => Some((values[n / 2 - 1] + values[n / 2]) / 2.0),
    }
}

/// The number under `"key":` in a flat JSON object (the clients print nothing nested).
fn number(line: &str, key: &str) -> Option<f64> {
    let at = line.find(&format!("\"{key}\":"))? + key.len() + 3;
    let rest = line[at..].trim_start();
    let end = rest.find([',', '}']).unwrap_or(rest.len());
    rest[..end].trim().parse().ok()
}

/// Run one client (arguments: the workload, the server, then the rest); its stdout's last line is
/// the JSON result.
pub(crate) fn run_client(client: &Path, args: &[&OsStr]) -> Result<String> {
    let workload = args.iter().map(|a| a.to_string_lossy()).collect::<Vec<_>>().join(" ");
    let output =
        Command::new(client).args(args).output().map_err(|e| format!("could not start {}: {e}", client.display()))?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        return Err(format!("{} {workload} failed ({}): {}", client.display(), output.status, stderr.trim()));
    }
    stdout
        .lines()
        .rev()
        .find(|l| l.trim_start().starts_with('{'))
        .map(|l| l.trim().to_owned())
        .ok_or_else(|| format!("{} {workload} printed no JSON line", client.display()))
}

/// The project's target directory: `CARGO_TARGET_DIR` if set, else `target` at the root.
pub(crate) fn target_dir(root: &Path) -> PathBuf {
    match std::env::var_os("CARGO_TARGET_DIR") {
        Some(dir) if !dir.is_empty() => root.join(dir),
        _ => root.join("target"),
    }
}

pub(crate) fn cargo_command() -> Command {
    Command::new(std::env::var_os("CARGO").unwrap_or_else(|| OsString::from("cargo")))
}

pub(crate) fn run_status(title: &str, mut command: Command, dir: &Path) -> Result {
    let status = command.current_dir(dir).status().map_err(|e| format!("{title}: could not start cargo: {e}"))?;
    if status.success() { Ok(()) } else { Err(format!("{title} failed ({status})")) }
}

pub(crate) fn heading(text: &str) {
    println!("\n==> {text}");
}
