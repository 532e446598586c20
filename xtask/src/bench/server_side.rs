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
//!
//! `--side both` runs the client under callgrind too, in the same run, and adds its counts, the
//! sum of the two and the issue's ratios in that sum: the user-space work of a workload on both
//! sides, which is what the wall clock measures when the client and its server share one CPU
//! (less the kernel's part, which callgrind does not see).

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use super::matrix::{client_path, server_flags};
use super::procs::{run_client, start_http_server_under};
use super::stats::fmt;
use super::tables::{HOST, OURS, OURS_LEGACY, RAW, RMCP, RMCP_MODERN, Results, VARIANTS, issue_table, runs_in};
use super::{Bins, Selection, Server, Side, Transport, heading};

type Result<T = ()> = std::result::Result<T, String>;

/// How many servers W5 starts (one per connection; `mcp-bench`'s `W5_SERVERS`).
const W5_SERVERS: usize = 10;

/// How long the server's counts may take to appear once its client is done (callgrind writes
/// them when the server exits, and a stdio client need not wait for that).
const COUNTS_DEADLINE: Duration = Duration::from_secs(120);

/// What one run counted: the server's instructions, and the client's with `--side both`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Run {
    server: u64,
    client: Option<u64>,
}

/// Each cell's runs, one per variant (`None` where the variant does not run).
type Counts = Vec<((Server, Transport, &'static str), Vec<Option<Run>>)>;

/// `cargo xtask bench instructions --side server|both` with `selection`.
pub(crate) fn instructions(selection: &Selection) -> Result {
    let bins = &super::instructions::prepare(selection)?;
    let with_client = selection.side == Side::Both;
    let mut counts: Counts = Vec::new();
    for (transport, server, workloads) in selection.cells() {
        heading(&format!(
            "{} instructions: {} server over {}, {}, every variant once with the server{} under callgrind",
            if with_client { "client and server" } else { "server" },
            server.name(),
            transport.name(),
            workloads.join(" "),
            if with_client { " and the client" } else { "" },
        ));
        for workload in workloads {
            let mut cell = vec![None; VARIANTS.len()];
            for (v, slot) in cell.iter_mut().enumerate().filter(|(v, _)| runs_in(*v, workload, transport)) {
                let run = count_run(bins, server, transport, workload, v, with_client)?;
                let client = run.client.map(|n| format!(" {n:>14} client instructions")).unwrap_or_default();
                println!(
                    "  {} {workload} {:<11} {:>14} server instructions{client}",
                    transport.name(),
                    VARIANTS[v].label,
                    run.server
                );
                *slot = Some(run);
            }
            counts.push(((server, transport, workload), cell));
        }
    }
    println!("\nevery binary built with the {}", selection.build.describe());
    for line in report(&counts, &selection.servers)? {
        println!("{line}");
    }
    Ok(())
}

/// Run variant `v` on `workload` once with its server(s) under callgrind, and the client too
/// when `with_client`; their instructions.
fn count_run(
    bins: &Bins,
    server: Server,
    transport: Transport,
    workload: &'static str,
    v: usize,
    with_client: bool,
) -> Result<Run> {
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
    // The client natively, or under callgrind for its own count.
    let run_one = |args: &[OsString]| -> Result<Option<u64>> {
        let args: Vec<&OsStr> = args.iter().map(OsString::as_os_str).collect();
        if with_client {
            Ok(Some(super::instructions::count(&client, &args)?.instructions))
        } else {
            run_client(&client, &args).map(|_| None)
        }
    };
    let client = match transport {
        Transport::Stdio => {
            let target = wrapper.into_iter().chain([program.into_os_string()]).chain(flags.iter().map(OsString::from));
            run_one(&head.into_iter().chain(target).collect::<Vec<_>>())?
        }
        Transport::Http => {
            let (process, url) = start_http_server_under(&wrapper, &program, flags)?;
            let ran = run_one(&head.into_iter().chain([OsString::from(url)]).collect::<Vec<_>>());
            // Stopped before the outcome is looked at: a failed run leaves no server behind.
            let stopped = process.terminate(COUNTS_DEADLINE);
            let client = ran?;
            stopped?;
            client
        }
    };
    let servers = if workload == "w5" { W5_SERVERS } else { 1 };
    Ok(Run { server: scratch.totals(servers, COUNTS_DEADLINE)?, client })
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

/// The report's lines: the server's counts in millions and what each client or era costs the
/// server; with the clients' counts too, those, the sums and the issue's ratios in the sums.
fn report(counts: &Counts, servers: &[Server]) -> Result<Vec<String>> {
    let cell_name = |(server, transport, workload): &(Server, Transport, &str)| {
        format!("{} {} {workload}", server.name(), transport.name())
    };
    let with_client = counts.iter().flat_map(|(_, row)| row.iter().flatten()).any(|run| run.client.is_some());
    let mut lines = Vec::new();
    let mut table = |title: &str, count: &dyn Fn(&Run) -> Option<u64>| {
        lines.push(String::new());
        lines.push(format!("{title}, millions (whole runs)"));
        let header: String = VARIANTS.iter().map(|v| format!(" {:>11}", v.label)).collect();
        lines.push(format!("{:<22}{header}", "server transport work"));
        for (cell, row) in counts {
            let shown: String = row
                .iter()
                .map(|run| {
                    run.as_ref().and_then(count).map_or_else(|| "-".to_owned(), |n| format!("{:.1}", n as f64 / 1e6))
                })
                .map(|shown| format!(" {shown:>11}"))
                .collect();
            lines.push(format!("{:<22}{shown}", cell_name(cell)));
        }
    };
    table("server instructions", &|run| Some(run.server));
    if with_client {
        table("client instructions", &|run| run.client);
        table("client + server instructions", &|run| run.client.map(|c| c + run.server));
    }
    lines.push(String::new());
    lines.push("what a client or an era costs the server (ratios of the server's counts)".to_owned());
    let header: String = counts.iter().map(|(cell, _)| format!(" | {}", cell_name(cell))).collect();
    lines.push(format!("| ratio{header} |"));
    lines.push(format!("|---{}|", "|---".repeat(counts.len())));
    for (name, top, below) in RATIOS {
        let shown: String = counts
            .iter()
            .map(|(_, row)| match (row[top], row[below]) {
                (Some(a), Some(b)) if b.server > 0 => format!(" | {}", fmt(a.server as f64 / b.server as f64)),
                _ => " | -".to_owned(),
            })
            .collect();
        lines.push(format!("| {name}{shown} |"));
    }
    if with_client {
        // The sums as the JSON lines the issue's table reads, one run per variant.
        let sums: Results = counts
            .iter()
            .map(|(cell, row)| {
                let lines = row
                    .iter()
                    .map(|run| match run.and_then(|r| r.client.map(|c| c + r.server)) {
                        Some(sum) => vec![format!(r#"{{"instructions":{sum}}}"#)],
                        None => Vec::new(),
                    })
                    .collect();
                (*cell, lines)
            })
            .collect();
        lines.push(String::new());
        lines.push(
            "the issue's ratios in client + server instructions (targets are for wall-clock time: for reference)"
                .to_owned(),
        );
        lines.push(String::new());
        lines.extend(issue_table(&sums, servers, Some("instructions"))?.0);
    }
    Ok(lines)
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

    /// A row of runs from `(variant, server count, client count)`.
    fn row(runs: &[(usize, u64, Option<u64>)]) -> Vec<Option<Run>> {
        let mut row = vec![None; VARIANTS.len()];
        for &(v, server, client) in runs {
            row[v] = Some(Run { server: server * 1_000_000, client: client.map(|c| c * 1_000_000) });
        }
        row
    }

    fn find(lines: &[String], start: &str) -> String {
        lines.iter().find(|l| l.starts_with(start)).cloned().unwrap_or_default()
    }

    #[test]
    fn the_report_shows_the_server_counts_and_each_ratio_where_both_ran() {
        let w1 = row(&[
            (OURS, 200, None),
            (OURS_LEGACY, 164, None),
            (HOST, 199, None),
            (RAW, 164, None),
            (RMCP, 174, None),
            (RMCP_MODERN, 203, None),
        ]);
        let w5 = row(&[(OURS, 90, None), (HOST, 91, None), (RMCP_MODERN, 100, None)]);
        let counts: Counts =
            vec![((Server::Rmcp, Transport::Stdio, "w1"), w1), ((Server::Rmcp, Transport::Stdio, "w5"), w5)];
        let lines = report(&counts, &[Server::Rmcp]).unwrap();
        let words = |start: &str| find(&lines, start).split_whitespace().map(str::to_owned).collect::<Vec<_>>();
        assert_eq!(
            words("rmcp stdio w1"),
            ["rmcp", "stdio", "w1", "200.0", "164.0", "199.0", "164.0", "174.0", "203.0"]
        );
        assert_eq!(words("rmcp stdio w5"), ["rmcp", "stdio", "w5", "90.0", "-", "91.0", "-", "-", "100.0"]);
        assert_eq!(find(&lines, "| ratio"), "| ratio | rmcp stdio w1 | rmcp stdio w5 |");
        assert_eq!(find(&lines, "| ours / rmcp, both legacy"), "| ours / rmcp, both legacy | 0.94 | - |");
        assert_eq!(find(&lines, "| ours / rmcp, both modern"), "| ours / rmcp, both modern | 0.99 | 0.90 |");
        assert_eq!(find(&lines, "| ours modern / ours legacy"), "| ours modern / ours legacy | 1.22 | - |");
        assert_eq!(find(&lines, "| host path / McpConnection"), "| host path / McpConnection | 0.99 | 1.01 |");
        // Without the clients' counts, no client tables and no issue table.
        assert!(!lines.iter().any(|l| l.starts_with("client") || l.starts_with("| workload")), "{lines:#?}");
    }

    #[test]
    fn with_the_clients_counted_the_report_adds_them_their_sums_and_the_issues_ratios_in_them() {
        let w1 = row(&[
            (OURS, 200, Some(60)),
            (OURS_LEGACY, 160, Some(55)),
            (HOST, 200, Some(90)),
            (RAW, 160, Some(30)),
            (RMCP, 175, Some(160)),
            (RMCP_MODERN, 205, Some(170)),
        ]);
        let counts: Counts = vec![((Server::Rmcp, Transport::Stdio, "w1"), w1)];
        let lines = report(&counts, &[Server::Rmcp]).unwrap();
        let at = |title: &str| lines.iter().position(|l| l.starts_with(title)).unwrap_or_else(|| panic!("{title}"));
        let row_after = |title: &str| lines[at(title) + 2].split_whitespace().map(str::to_owned).collect::<Vec<_>>();
        assert_eq!(
            row_after("server instructions"),
            ["rmcp", "stdio", "w1", "200.0", "160.0", "200.0", "160.0", "175.0", "205.0"]
        );
        assert_eq!(
            row_after("client instructions"),
            ["rmcp", "stdio", "w1", "60.0", "55.0", "90.0", "30.0", "160.0", "170.0"]
        );
        assert_eq!(
            row_after("client + server"),
            ["rmcp", "stdio", "w1", "260.0", "215.0", "290.0", "190.0", "335.0", "375.0"]
        );
        // The issue's W1 rows read the sums: ours (modern) / rmcp 260 / 335, modern / legacy 260 / 215.
        let issue = &lines[at("the issue's ratios")..];
        let line = |label: &str| issue.iter().find(|l| l.contains(label)).cloned().unwrap_or_default();
        assert!(line("W1 stdio, 2000 sequential echo calls: ours / rmcp |").contains("| 0.78 |"), "{issue:#?}");
        assert!(
            line("W1 stdio, 2000 sequential echo calls: ours modern / ours legacy").contains("1.21 **MISSED**"),
            "{issue:#?}"
        );
    }
}
