//! `cargo xtask bench manager [--runs N]`: one `McpManager` over 100 stdio servers of 100 tools
//! each, measured from the host's side by the `bench-manager` binary of the `mcp-bench` package
//! (`bench/mcp-bench`); the servers are the `tests` crate's `fake-mcp-server`.
//!
//! It builds `bench-manager` and `fake-mcp-server` in release mode and runs two variants, `runs`
//! times each (default 3), alternating which goes first; the table shows the medians.
//!
//! - `fake`: 100 × `fake-mcp-server --tools 100`. Every copy lists the same 100 names, so the
//!   manager routes each to the first server in config order and reports 9,900 clashes.
//! - `unique`: 100 servers whose 100 tools have names of their own (`bench-manager serve`, the
//!   same tool shapes as the fake's): 10,000 routed tools, as a host with many servers has.
//!
//! Measured, with issue 19's targets: the time until every server is ready (`McpManager::start`
//! returns once each one settled; target below 0.5 s), the peak resident memory of the host
//! process alone (the servers are other processes; target below 40 MiB), and the host-side overhead of routing a call: `ToolRegistry::lookup`
//! of the LLM name plus `McpManager::routing().tool(name)`, in a tight loop without any server
//! round trip (target below 2 µs). Benchmarks report, they do not fail on a missed target; a
//! run whose routing table lacks tools it should hold is flagged.

use std::ffi::OsStr;

use xtask::project_root;

use super::procs::run_client;
use super::stats::{fmt, median};
use super::{cargo_command, heading, run_status, target_dir};

type Result<T = ()> = std::result::Result<T, String>;

const DEFAULT_RUNS: usize = 3;
/// The variants, in the table's column order.
const VARIANTS: [&str; 2] = ["fake", "unique"];
/// The host's peak resident memory must stay below this (MiB; issue 19).
const MEMORY_TARGET_MIB: f64 = 40.0;
/// Every server must be ready within this (ms; issue 19).
const READY_TARGET_MS: f64 = 500.0;
/// Registry lookup plus routing lookup must stay below this (ns per call).
const LOOKUP_TARGET_NS: f64 = 2000.0;

/// One row: a key of the JSON line, shown divided by `scale` (a whole number when `count`),
/// with an optional upper bound.
struct Row {
    label: &'static str,
    key: &'static str,
    scale: f64,
    target: Option<f64>,
    count: bool,
}

const ROWS: &[Row] = &[
    Row { label: "servers ready", key: "ready", scale: 1.0, target: None, count: true },
    Row { label: "tools routed", key: "routed_tools", scale: 1.0, target: None, count: true },
    Row { label: "name clashes reported", key: "conflicts", scale: 1.0, target: None, count: true },
    Row { label: "time to all ready (ms)", key: "ready_ms", scale: 1.0, target: Some(READY_TARGET_MS), count: false },
    Row { label: "host RSS once started (MiB)", key: "vmrss_started_kib", scale: 1024.0, target: None, count: false },
    Row {
        label: "host VmHWM, peak (MiB)",
        key: "vmhwm_kib",
        scale: 1024.0,
        target: Some(MEMORY_TARGET_MIB),
        count: false,
    },
    Row { label: "host VmRSS at the end (MiB)", key: "vmrss_kib", scale: 1024.0, target: None, count: false },
    Row { label: "ToolRegistry::lookup (ns)", key: "registry_lookup_ns", scale: 1.0, target: None, count: false },
    Row { label: "routing().tool(name) (ns)", key: "routing_lookup_ns", scale: 1.0, target: None, count: false },
    Row { label: "close, every process gone (ms)", key: "close_ms", scale: 1.0, target: None, count: false },
];

/// `cargo xtask bench manager [--runs N]`.
pub(crate) fn manager(args: &[String]) -> Result {
    let runs = match args {
        [] => DEFAULT_RUNS,
        [flag, n] if flag == "--runs" => {
            n.parse().ok().filter(|n| *n > 0).ok_or_else(|| format!("--runs takes a positive number, not {n:?}"))?
        }
        _ => return Err(format!("bench manager: unexpected arguments {args:?} (usage: bench manager [--runs N])")),
    };
    let root = project_root();
    let dir = target_dir(&root).join("release");
    heading("manager bench: building bench-manager and fake-mcp-server (release)");
    let mut build = cargo_command();
    build.args([
        "build",
        "--release",
        "-p",
        "mcp-bench",
        "--bin",
        "bench-manager",
        "-p",
        "tests",
        "--bin",
        "fake-mcp-server",
    ]);
    run_status("build", build, &root)?;

    let bench = dir.join("bench-manager");
    let fake = dir.join("fake-mcp-server");
    let run_variant = |v: usize| -> Result<String> {
        match VARIANTS[v] {
            "fake" => run_client(&bench, &["fake".as_ref(), fake.as_os_str()]),
            _ => run_client(&bench, &[OsStr::new("unique")]),
        }
    };
    heading(&format!("manager bench: 100 servers x 100 tools, {runs} runs per variant, alternating; medians below"));
    // One small unmeasured run, so that no variant pays for a cold page cache.
    run_client(&bench, &["unique", "--servers", "10"].map(OsStr::new))?;
    let mut results: Vec<Vec<String>> = vec![Vec::new(); VARIANTS.len()];
    for run in 0..runs {
        for step in 0..VARIANTS.len() {
            let v = if run % 2 == 0 { step } else { VARIANTS.len() - 1 - step };
            let line = run_variant(v)?;
            println!("  run {} {:<6} {line}", run + 1, VARIANTS[v]);
            results[v].push(line);
        }
    }
    println!();
    print_table(&results)
}

fn print_table(results: &[Vec<String>]) -> Result {
    println!("{:<34} {:>11} {:>11} {:>9}  result", "metric (median)", "fake x100", "unique x100", "target");
    println!("{}", "-".repeat(80));
    let (mut met, mut targets) = (0, 0);
    let mut verdict = |values: &[f64], target: Option<f64>| match target {
        None => (String::new(), String::new()),
        Some(t) => {
            targets += values.len();
            let missed: Vec<&str> =
                values.iter().zip(VARIANTS).filter(|(v, _)| **v >= t).map(|(_, name)| name).collect();
            met += values.len() - missed.len();
            let result = if missed.is_empty() { "met".into() } else { format!("MISSED ({})", missed.join(", ")) };
            (format!("< {}", fmt(t)), result)
        }
    };
    for row in ROWS {
        let values = results.iter().map(|lines| Ok(median(lines, row.key)? / row.scale)).collect::<Result<Vec<_>>>()?;
        let (target, result) = verdict(&values, row.target);
        let shown = |v: f64| if row.count { format!("{v:.0}") } else { fmt(v) };
        println!("{:<34} {:>11} {:>11} {target:>9}  {result}", row.label, shown(values[0]), shown(values[1]));
    }
    // The overhead of one call: the two lookups together.
    let sums = results
        .iter()
        .map(|lines| Ok(median(lines, "registry_lookup_ns")? + median(lines, "routing_lookup_ns")?))
        .collect::<Result<Vec<_>>>()?;
    let (target, result) = verdict(&sums, Some(LOOKUP_TARGET_NS));
    println!(
        "{:<34} {:>11} {:>11} {target:>9}  {result}",
        "lookup + routing per call (ns)",
        fmt(sums[0]),
        fmt(sums[1])
    );
    println!("\nmanager bench: {met} of {targets} targets met");

    for (v, lines) in results.iter().enumerate() {
        for (run, line) in lines.iter().enumerate() {
            let one = std::slice::from_ref(line);
            let (routed, expected) = (median(one, "routed_tools")?, median(one, "expected_tools")?);
            if routed != expected {
                println!(
                    "NOTE: {} run {}: the routing table holds {routed} tools, not {expected}",
                    VARIANTS[v],
                    run + 1
                );
            }
        }
    }
    Ok(())
}
