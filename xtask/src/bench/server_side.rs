//! `cargo xtask bench instructions --side server`: what each client costs the server, counted
//! in the server's instructions under callgrind. A client's wall-clock time includes the
//! server's work on its requests, and two clients that send the same calls can cost a server
//! different amounts (what their requests carry, which of the server's paths they take: rmcp's
//! server checks a modern request's `Mcp-*` headers against its body, for one). This shows how
//! much of a ratio is the server's.
//!
//! Each selected workload runs once per variant, the client natively and its server under
//! `valgrind --tool=callgrind`: over stdio through the command the client is given (the client
//! starts valgrind, which runs the server; W5's ten servers each write their own counts), over
//! HTTP as a server of its own for that one run, stopped with SIGTERM when the client is done.
//! The count is every instruction the server process(es) ran, start-up and shutdown included.
//! The tables show the counts and the ratios that say what a client or an era costs the server.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use super::matrix::{client_path, server_flags};
use super::procs::{run_client, start_http_server_under};
use super::stats::fmt;
use super::tables::{HOST, OURS, OURS_LEGACY, RAW, RMCP, RMCP_MODERN, VARIANTS, runs_in};
use super::{Bins, Selection, Server, Transport, heading};

type Result<T = ()> = std::result::Result<T, String>;

/// How many servers W5 starts (one per connection; `mcp-bench`'s `W5_SERVERS`).
const W5_SERVERS: usize = 10;

/// How long the server's counts may take to appear once its client is done (callgrind writes
/// them when the server exits, and a stdio client need not wait for that).
const COUNTS_DEADLINE: Duration = Duration::from_secs(120);

/// Each cell's server counts, one per variant (`None` where the variant does not run).
type Counts = Vec<((Server, Transport, &'static str), Vec<Option<u64>>)>;

/// `cargo xtask bench instructions --side server` with `selection`, the binaries built.
pub(crate) fn instructions(selection: &Selection, bins: &Bins) -> Result {
    let mut counts: Counts = Vec::new();
    for &transport in &selection.transports {
        for &server in &selection.servers {
            let workloads: Vec<&'static str> = selection
                .workloads
                .iter()
                .copied()
                .filter(|w| (0..VARIANTS.len()).any(|v| runs_in(v, w, transport)))
                .collect();
            if workloads.is_empty() {
                continue;
            }
            heading(&format!(
                "server instructions: {} server over {}, {}, every variant once with the server under callgrind",
                server.name(),
                transport.name(),
                workloads.join(" ")
            ));
            for workload in workloads {
                let mut cell = vec![None; VARIANTS.len()];
                for (v, slot) in cell.iter_mut().enumerate().filter(|(v, _)| runs_in(*v, workload, transport)) {
                    let n = count_run(bins, server, transport, workload, v)?;
                    println!("  {} {workload} {:<11} {n:>14} server instructions", transport.name(), VARIANTS[v].label);
                    *slot = Some(n);
                }
                counts.push(((server, transport, workload), cell));
            }
        }
    }
    println!("\nevery binary built with the {}", selection.build.describe());
    for line in report(&counts) {
        println!("{line}");
    }
    Ok(())
}

/// Run variant `v` on `workload` once with its server(s) under callgrind; their instructions.
fn count_run(bins: &Bins, server: Server, transport: Transport, workload: &'static str, v: usize) -> Result<u64> {
    let scratch = Scratch::new()?;
    let wrapper: Vec<OsString> = ["valgrind", "-q", "--tool=callgrind"]
        .map(OsString::from)
        .into_iter()
        .chain([OsString::from(format!("--callgrind-out-file={}", scratch.0.join("callgrind.%p").display()))])
        .collect();
    let variant = &VARIANTS[v];
    let client = client_path(bins, variant.client);
    let program = bins.server(server);
    let flags = server_flags(workload);
    let head = [workload, variant.era].map(OsString::from);
    match transport {
        Transport::Stdio => {
            let target = wrapper.into_iter().chain([program.into_os_string()]).chain(flags.iter().map(OsString::from));
            let args: Vec<OsString> = head.into_iter().chain(target).collect();
            run_client(&client, &args.iter().map(OsString::as_os_str).collect::<Vec<_>>())?;
        }
        Transport::Http => {
            let (process, url) = start_http_server_under(&wrapper, &program, flags)?;
            let args: Vec<OsString> = head.into_iter().chain([OsString::from(url)]).collect();
            let ran = run_client(&client, &args.iter().map(OsString::as_os_str).collect::<Vec<_>>());
            // Stopped before the outcome is looked at: a failed run leaves no server behind.
            let stopped = process.terminate(COUNTS_DEADLINE);
            ran?;
            stopped?;
        }
    }
    let servers = if workload == "w5" { W5_SERVERS } else { 1 };
    scratch.totals(servers, COUNTS_DEADLINE)
}

/// A directory of its own for one run's callgrind files, removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new() -> Result<Scratch> {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("xtask-server-instructions-{}-{n}", std::process::id()));
        std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        Ok(Scratch(dir))
    }

    /// The sum of the instructions in the `servers` callgrind files of this directory, once
    /// each is complete (its `totals:` line written), waiting up to `deadline` for them.
    fn totals(&self, servers: usize, deadline: Duration) -> Result<u64> {
        let started = Instant::now();
        loop {
            let found = read_totals(&self.0)?;
            let complete: Vec<u64> = found.iter().filter_map(|(_, n)| *n).collect();
            if complete.len() >= servers {
                if complete.len() > servers {
                    return Err(format!(
                        "{} callgrind files in {}, expected {servers}",
                        complete.len(),
                        self.0.display()
                    ));
                }
                return Ok(complete.iter().sum());
            }
            if started.elapsed() > deadline {
                let incomplete: Vec<String> =
                    found.iter().filter(|(_, n)| n.is_none()).map(|(p, _)| p.display().to_string()).collect();
                return Err(format!(
                    "the server's callgrind counts: {} of {servers} complete after {} s in {} (incomplete: {})",
                    complete.len(),
                    deadline.as_secs(),
                    self.0.display(),
                    if incomplete.is_empty() { "none".into() } else { incomplete.join(", ") }
                ));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Each file of `dir` and its total, `None` while the file has no `totals:` line yet.
fn read_totals(dir: &Path) -> Result<Vec<(PathBuf, Option<u64>)>> {
    let entries = std::fs::read_dir(dir).map_err(|e| format!("cannot read {}: {e}", dir.display()))?;
    let mut found = Vec::new();
    for entry in entries {
        let path = entry.map_err(|e| format!("cannot read {}: {e}", dir.display()))?.path();
        let text = std::fs::read_to_string(&path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        found.push((path, totals_line(&text)));
    }
    found.sort();
    Ok(found)
}

/// The first number of a callgrind file's `totals:` line (the instructions, the first event),
/// which callgrind writes last.
fn totals_line(text: &str) -> Option<u64> {
    text.lines()
        .rev()
        .find_map(|l| l.strip_prefix("totals:"))
        .and_then(|rest| rest.split_whitespace().next()?.parse().ok())
}

/// The ratios of the report: a name, the variant on top and the one below.
const RATIOS: [(&str, usize, usize); 6] = [
    ("ours / rmcp, both legacy", OURS_LEGACY, RMCP),
    ("ours / rmcp, both modern", OURS, RMCP_MODERN),
    ("ours modern / ours legacy", OURS, OURS_LEGACY),
    ("rmcp modern / rmcp legacy", RMCP_MODERN, RMCP),
    ("host path / McpConnection", HOST, OURS),
    ("hand-written / rmcp, both legacy", RAW, RMCP),
];

/// The report's lines: the counts in millions, then each ratio for every cell that has both.
fn report(counts: &Counts) -> Vec<String> {
    let mut lines = vec![String::new(), "server instructions, millions (the whole server run)".to_owned()];
    let header: String = VARIANTS.iter().map(|v| format!(" {:>11}", v.label)).collect();
    lines.push(format!("{:<22}{header}", "server transport work"));
    let cell_name = |(server, transport, workload): &(Server, Transport, &str)| {
        format!("{} {} {workload}", server.name(), transport.name())
    };
    for (cell, row) in counts {
        let shown: String = row
            .iter()
            .map(|n| format!(" {:>11}", n.map_or_else(|| "-".to_owned(), |n| format!("{:.1}", n as f64 / 1e6))))
            .collect();
        lines.push(format!("{:<22}{shown}", cell_name(cell)));
    }
    lines.push(String::new());
    lines.push("what a client or an era costs the server (ratios of the counts above)".to_owned());
    let header: String = counts.iter().map(|(cell, _)| format!(" | {}", cell_name(cell))).collect();
    lines.push(format!("| ratio{header} |"));
    lines.push(format!("|---{}|", "|---".repeat(counts.len())));
    for (name, top, below) in RATIOS {
        let shown: String = counts
            .iter()
            .map(|(_, row)| match (row[top], row[below]) {
                (Some(a), Some(b)) if b > 0 => format!(" | {}", fmt(a as f64 / b as f64)),
                _ => " | -".to_owned(),
            })
            .collect();
        lines.push(format!("| {name}{shown} |"));
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_total_is_the_first_number_of_the_last_totals_line() {
        let file =
            "version: 1\ncreator: callgrind\nevents: Ir\nsummary: 164573695\nfn=main\n12 40\ntotals: 164573695\n";
        assert_eq!(totals_line(file), Some(164_573_695));
        assert_eq!(totals_line("events: Ir Dr\ntotals: 12 7\n"), Some(12));
        // Still being written: no totals yet.
        assert_eq!(totals_line("version: 1\nsummary: 5\nfn=main\n"), None);
        assert_eq!(totals_line("totals: lots\n"), None);
        assert_eq!(totals_line(""), None);
    }

    #[test]
    fn the_counts_are_summed_once_every_server_has_written_them() {
        let scratch = Scratch::new().unwrap();
        let write = |name: &str, text: &str| std::fs::write(scratch.0.join(name), text).unwrap();
        write("callgrind.1", "events: Ir\ntotals: 100\n");
        write("callgrind.2", "events: Ir\nsummary: 50\n");
        let err = scratch.totals(2, Duration::from_millis(200)).unwrap_err();
        assert!(err.contains("1 of 2 complete") && err.contains("callgrind.2"), "{err}");
        write("callgrind.2", "events: Ir\nsummary: 50\ntotals: 50\n");
        assert_eq!(scratch.totals(2, Duration::from_millis(200)), Ok(150));
        let err = scratch.totals(1, Duration::from_millis(200)).unwrap_err();
        assert!(err.contains("2 callgrind files") && err.contains("expected 1"), "{err}");
        let dir = scratch.0.clone();
        drop(scratch);
        assert!(!dir.exists(), "the scratch directory is removed");
    }

    #[test]
    fn the_report_shows_the_counts_and_each_ratio_where_both_ran() {
        let mut w1 = vec![None; VARIANTS.len()];
        (w1[OURS], w1[OURS_LEGACY], w1[HOST], w1[RAW]) =
            (Some(200_000_000), Some(164_000_000), Some(199_000_000), Some(164_000_000));
        (w1[RMCP], w1[RMCP_MODERN]) = (Some(174_000_000), Some(203_000_000));
        let mut w5 = vec![None; VARIANTS.len()];
        (w5[OURS], w5[HOST], w5[RMCP_MODERN]) = (Some(90_000_000), Some(91_000_000), Some(100_000_000));
        let counts: Counts =
            vec![((Server::Rmcp, Transport::Stdio, "w1"), w1), ((Server::Rmcp, Transport::Stdio, "w5"), w5)];
        let lines = report(&counts);
        let row = |start: &str| lines.iter().find(|l| l.starts_with(start)).cloned().unwrap_or_default();
        assert!(
            row("rmcp stdio w1")
                .split_whitespace()
                .eq(["rmcp", "stdio", "w1", "200.0", "164.0", "199.0", "164.0", "174.0", "203.0"])
        );
        assert!(
            row("rmcp stdio w5").split_whitespace().eq(["rmcp", "stdio", "w5", "90.0", "-", "91.0", "-", "-", "100.0"])
        );
        assert_eq!(row("| ratio"), "| ratio | rmcp stdio w1 | rmcp stdio w5 |");
        assert_eq!(row("| ours / rmcp, both legacy"), "| ours / rmcp, both legacy | 0.94 | - |");
        assert_eq!(row("| ours / rmcp, both modern"), "| ours / rmcp, both modern | 0.99 | 0.90 |");
        assert_eq!(row("| ours modern / ours legacy"), "| ours modern / ours legacy | 1.22 | - |");
        assert_eq!(row("| host path / McpConnection"), "| host path / McpConnection | 0.99 | 1.01 |");
    }
}
