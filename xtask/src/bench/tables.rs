//! The tables of `cargo xtask bench matrix`, made from the clients' JSON lines: the medians of
//! every variant, and the issue's table of ratios with their targets, against both servers.
//! Pure functions of the results, so that they are tested without running anything.

use std::collections::BTreeMap;

use super::stats::{fmt, median, paired_ratio, string};
use super::{Server, Transport};

type Result<T = ()> = std::result::Result<T, String>;

/// A client binary.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Client {
    /// `bench-client`: `McpConnection` alone.
    Ours,
    /// `bench-host`: `McpManager` + `McpToolProvider` + `ToolRegistry::invoke`.
    Host,
    /// `bench-raw-client`: no library, the server's ceiling.
    Raw,
    /// `rmcp-bench-client`: the official Rust SDK.
    Rmcp,
}

/// A client and the era it asks for: one column of the tables.
pub(crate) struct Variant {
    pub(crate) label: &'static str,
    pub(crate) client: Client,
    pub(crate) era: &'static str,
}

/// Every variant; the indexes below name them.
pub(crate) const VARIANTS: [Variant; 6] = [
    Variant { label: "ours", client: Client::Ours, era: "modern" },
    Variant { label: "ours-legacy", client: Client::Ours, era: "legacy" },
    Variant { label: "host", client: Client::Host, era: "modern" },
    Variant { label: "raw", client: Client::Raw, era: "legacy" },
    Variant { label: "rmcp", client: Client::Rmcp, era: "default" },
    Variant { label: "rmcp-modern", client: Client::Rmcp, era: "modern" },
];
pub(crate) const OURS: usize = 0;
pub(crate) const OURS_LEGACY: usize = 1;
pub(crate) const HOST: usize = 2;
pub(crate) const RAW: usize = 3;
pub(crate) const RMCP: usize = 4;
pub(crate) const RMCP_MODERN: usize = 5;

/// Whether variant `v` runs `workload` over `transport`: W5 (stdio only) is the connection path,
/// the host path and rmcp, each in its newest era; the hand-written client speaks W1-W4.
pub(crate) fn runs_in(v: usize, workload: &str, transport: Transport) -> bool {
    match workload {
        "w5" => transport == Transport::Stdio && matches!(v, OURS | HOST | RMCP_MODERN),
        _ => true,
    }
}

/// One cell of the matrix: a server, a transport, a workload.
pub(crate) type Cell = (Server, Transport, &'static str);
/// Each cell's runs: `results[cell][variant]` holds one JSON line per round (empty when the
/// variant does not run there).
pub(crate) type Results = BTreeMap<Cell, Vec<Vec<String>>>;

/// A row of the medians table: a metric of a workload, shown divided by `scale`.
struct Metric(&'static str, &'static str, &'static str, f64);

const METRICS: &[Metric] = &[
    Metric("W1 2000 sequential calls (ms)", "w1", "total_ms", 1.0),
    Metric("W1 client CPU (ms)", "w1", "cpu_ms", 1.0),
    Metric("W1 p50 latency (us)", "w1", "p50_us", 1.0),
    Metric("W1 p99 latency (us)", "w1", "p99_us", 1.0),
    Metric("W2 256 calls, 32 in flight (ms)", "w2", "total_ms", 1.0),
    Metric("W2 client CPU (ms)", "w2", "cpu_ms", 1.0),
    Metric("W3 spawn+init+list 10,002 (ms)", "w3", "total_ms", 1.0),
    Metric("W3 client CPU (ms)", "w3", "cpu_ms", 1.0),
    Metric("W3 client peak RSS (MiB)", "w3", "peak_rss_kib", 1024.0),
    Metric("W4 8 MiB result (ms)", "w4", "total_ms", 1.0),
    Metric("W4 client CPU (ms)", "w4", "cpu_ms", 1.0),
    Metric("W4 client peak RSS (MiB)", "w4", "peak_rss_kib", 1024.0),
    Metric("W5 1000 calls, 10 servers (ms)", "w5", "total_ms", 1.0),
    Metric("W5 client CPU (ms)", "w5", "cpu_ms", 1.0),
    Metric("W5 calls/s (higher is better)", "w5", "calls_per_s", 1.0),
    Metric("W5 p50 latency (us)", "w5", "p50_us", 1.0),
    Metric("W5 p99 latency (us)", "w5", "p99_us", 1.0),
    Metric("W5 calls answered (of 1000)", "w5", "answered", 1.0),
];

/// The medians table of one server and transport, then the revision each variant settled on.
pub(crate) fn medians_table(results: &Results, server: Server, transport: Transport) -> Vec<String> {
    let mut out = vec![format!("{:<34}{}", "median of the runs", header())];
    for Metric(label, workload, key, scale) in METRICS {
        let Some(cell) = results.get(&(server, transport, *workload)) else { continue };
        let mut line = format!("{label:<34}");
        for lines in cell {
            // "-": the variant did not run here; "?": a run did not report this key.
            let shown = match median(lines, key) {
                _ if lines.is_empty() => "-".to_owned(),
                Ok(m) => fmt(m / scale),
                Err(_) => "?".to_owned(),
            };
            line.push_str(&format!(" {shown:>11}"));
        }
        out.push(line);
    }
    let mut versions = Vec::new();
    for (v, variant) in VARIANTS.iter().enumerate() {
        let first =
            results.iter().filter(|((s, t, _), _)| (*s, *t) == (server, transport)).find_map(|(_, c)| c[v].first());
        if let Some(version) = first.and_then(|line| string(line, "protocol_version")) {
            versions.push(format!("{} {version}", variant.label));
        }
    }
    out.push(format!("negotiated: {}", versions.join(", ")));
    out
}

fn header() -> String {
    VARIANTS.iter().map(|v| format!(" {:>11}", v.label)).collect()
}

/// A row of the issue's table: variant `num` over variant `den` in `key`, on one workload and
/// transport, with the highest acceptable ratio if the issue sets one.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Ratio {
    pub(crate) label: String,
    pub(crate) transport: Transport,
    pub(crate) workload: &'static str,
    pub(crate) key: &'static str,
    pub(crate) num: usize,
    pub(crate) den: usize,
    pub(crate) target: Option<f64>,
}

/// What a workload does, for the issue's table.
fn describe(workload: &str) -> &'static str {
    match workload {
        "w1" => "2000 sequential echo calls",
        "w2" => "256 calls with 32 in flight",
        "w3" => "spawn + initialize + list 10,002 tools in 101 pages of 100",
        "w4" => "one 8 MiB text result",
        _ => "1,000 calls across 10 servers, 100 in flight each",
    }
}

/// The issue's target for ours/rmcp on a workload and transport, in `key`.
fn rmcp_target(transport: Transport, workload: &str, key: &str) -> Option<f64> {
    match (transport, workload, key) {
        (Transport::Http, "w1", "total_ms") => Some(0.50),
        (Transport::Http, "w2", "total_ms") => Some(0.36),
        (Transport::Stdio, "w3", "total_ms") => Some(0.45),
        (Transport::Stdio, "w4", "total_ms") => Some(0.60),
        (Transport::Stdio, "w4", "peak_rss_kib") => Some(0.70),
        _ => None,
    }
}

/// Every row of the issue's table, in its order: ours against rmcp (with the hand-written client
/// beside it), the host path against the connection path, the modern era against the legacy
/// one, then W5.
pub(crate) fn issue_rows() -> Vec<Ratio> {
    let mut rows = Vec::new();
    let mut row = |t: Transport, w: &'static str, key: &'static str, (num, den): (usize, usize), what: &str, target| {
        let metric = match (w, key) {
            ("w4", "total_ms") => ": time",
            (_, "peak_rss_kib") => ": client peak RSS",
            (_, "cpu_ms") => ": client CPU time",
            _ => "",
        };
        let t_name = if t == Transport::Http { "HTTP" } else { "stdio" };
        let label = format!("{} {t_name}, {}{metric}: {what}", w.to_uppercase(), describe(w));
        rows.push(Ratio { label, transport: t, workload: w, key, num, den, target });
    };
    for w in ["w1", "w2", "w3", "w4"] {
        for t in Transport::ALL {
            for key in if w == "w4" { &["total_ms", "peak_rss_kib"][..] } else { &["total_ms"][..] } {
                row(t, w, key, (OURS, RMCP), "ours / rmcp", rmcp_target(t, w, key));
                row(t, w, key, (OURS, RMCP_MODERN), "ours / rmcp, both modern", None);
                // The hand-written client speaks the legacy era: the ceiling is judged in that
                // era (the modern era's own cost is the "ours modern / ours legacy" row), and the
                // modern pairing is shown beside it.
                let ceiling = (t == Transport::Stdio && matches!(w, "w1" | "w2")).then_some(1.05);
                row(t, w, key, (OURS_LEGACY, RAW), "ours / hand-written, both legacy", ceiling);
                row(t, w, key, (OURS, RAW), "ours modern / hand-written (legacy)", None);
                row(t, w, key, (RAW, RMCP), "hand-written / rmcp", None);
            }
        }
    }
    for (w, key) in
        [("w1", "total_ms"), ("w2", "total_ms"), ("w3", "total_ms"), ("w4", "total_ms"), ("w4", "peak_rss_kib")]
    {
        for t in Transport::ALL {
            row(t, w, key, (HOST, OURS), "host path / McpConnection", Some(1.05));
        }
    }
    for w in ["w1", "w2", "w3", "w4"] {
        for t in Transport::ALL {
            row(t, w, "total_ms", (OURS, OURS_LEGACY), "ours modern / ours legacy", Some(1.05));
        }
    }
    row(Transport::Stdio, "w5", "total_ms", (HOST, RMCP_MODERN), "host path / rmcp's 10 clients", Some(0.80));
    row(Transport::Stdio, "w5", "total_ms", (OURS, RMCP_MODERN), "10 McpConnections / rmcp's 10 clients", None);
    row(Transport::Stdio, "w5", "total_ms", (HOST, OURS), "host path / McpConnection", Some(1.05));
    // The client's own CPU time, which a loaded machine disturbs far less than the wall clock:
    // the same comparisons, for reading the time rows (no targets of their own).
    for w in ["w1", "w2", "w3", "w4", "w5"] {
        for t in Transport::ALL {
            if w == "w5" && t == Transport::Http {
                continue;
            }
            let rmcp = if w == "w5" { RMCP_MODERN } else { RMCP };
            row(t, w, "cpu_ms", (OURS, rmcp), "ours / rmcp", None);
            row(t, w, "cpu_ms", (HOST, OURS), "host path / McpConnection", None);
            row(t, w, "cpu_ms", (OURS, OURS_LEGACY), "ours modern / ours legacy", None);
        }
    }
    rows
}

/// The ratio of `row` against `server`, if both its variants ran there.
fn ratio(results: &Results, row: &Ratio, server: Server) -> Option<Result<f64>> {
    let cell = results.get(&(server, row.transport, row.workload))?;
    let (a, b) = (&cell[row.num], &cell[row.den]);
    if a.is_empty() || b.is_empty() {
        return None;
    }
    Some(paired_ratio(a, b, row.key))
}

/// Per server: the targets met and the targets judged.
pub(crate) type Tally = (Server, usize, usize);

/// The issue's table (markdown) over the servers in `servers`, and per server how many targets
/// it met out of how many it could be judged on. With `instead_of_time`, the time rows read that
/// key instead (e.g. instruction counts) and the other rows are left out.
pub(crate) fn issue_table(
    results: &Results,
    servers: &[Server],
    instead_of_time: Option<&'static str>,
) -> Result<(Vec<String>, Vec<Tally>)> {
    let mut out = vec![format!(
        "| workload | {} | target |",
        servers.iter().map(|s| format!("against {} server", s.name())).collect::<Vec<_>>().join(" | ")
    )];
    out.push(format!("|---|{}---|", "---|".repeat(servers.len())));
    let mut tally: Vec<Tally> = servers.iter().map(|s| (*s, 0, 0)).collect();
    for mut row in issue_rows() {
        match instead_of_time {
            Some(key) if row.key == "total_ms" => row.key = key,
            // The other rows (memory, CPU time) mean nothing in the counts' units.
            Some(_) => continue,
            None => {}
        }
        let figures = servers.iter().map(|s| ratio(results, &row, *s).transpose()).collect::<Result<Vec<_>>>()?;
        if figures.iter().all(Option::is_none) {
            continue;
        }
        let mut cells = Vec::new();
        for (figure, (_, met, judged)) in figures.iter().zip(tally.iter_mut()) {
            cells.push(match (figure, row.target) {
                (None, _) => "-".to_owned(),
                (Some(r), None) => format!("{r:.2}"),
                (Some(r), Some(t)) => {
                    *judged += 1;
                    let ok = *r <= t;
                    *met += usize::from(ok);
                    format!("{r:.2} {}", if ok { "met" } else { "**MISSED**" })
                }
            });
        }
        let target = row.target.map(|t| format!("<= {t:.2}")).unwrap_or_default();
        out.push(format!("| {} | {} | {target} |", row.label, cells.join(" | ")));
    }
    Ok((out, tally))
}

/// W5 runs that lost calls: (server, round, answered, calls, the first error).
pub(crate) fn lost_calls(results: &Results) -> Vec<String> {
    let mut notes = Vec::new();
    for ((server, _, workload), cell) in results {
        if *workload != "w5" {
            continue;
        }
        for (v, lines) in cell.iter().enumerate() {
            for (round, line) in lines.iter().enumerate() {
                let answered = super::stats::number(line, "answered");
                let calls = super::stats::number(line, "calls");
                if answered.is_none() || answered != calls {
                    let error = string(line, "first_error").unwrap_or_default();
                    notes.push(format!(
                        "W5 against {} server, {} round {}: {} of {} calls answered {error}",
                        server.name(),
                        VARIANTS[v].label,
                        round + 1,
                        answered.map_or("?".into(), |a| a.to_string()),
                        calls.map_or("?".into(), |c| c.to_string()),
                    ));
                }
            }
        }
    }
    notes
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(total: f64, rss: f64) -> String {
        format!(r#"{{"total_ms":{total},"cpu_ms":{total},"peak_rss_kib":{rss},"protocol_version":"2026-07-28"}}"#)
    }

    /// A cell where variant v took `totals[v]` ms in every one of three rounds.
    fn cell(totals: [f64; 6]) -> Vec<Vec<String>> {
        totals.iter().map(|t| if t.is_nan() { Vec::new() } else { vec![line(*t, 1024.0 * t); 3] }).collect()
    }

    #[test]
    fn the_issue_table_judges_each_server_against_the_target() {
        let mut results = Results::new();
        // ours, ours-legacy, host, raw, rmcp, rmcp-modern
        results.insert((Server::Rmcp, Transport::Stdio, "w3"), cell([131.0, 120.0, 140.0, 32.0, 100.0, 100.0]));
        results.insert((Server::Ours, Transport::Stdio, "w3"), cell([40.0, 40.0, 40.8, 20.0, 100.0, 100.0]));
        let (table, tally) = issue_table(&results, &[Server::Rmcp, Server::Ours], None).unwrap();
        let w3 = table.iter().find(|l| l.contains("W3 stdio") && l.contains(": ours / rmcp |")).unwrap();
        assert!(w3.contains("| 1.31 **MISSED** | 0.40 met | <= 0.45 |"), "{w3}");
        let host = table.iter().find(|l| l.contains("W3 stdio") && l.contains("host path")).unwrap();
        assert!(host.contains("1.07 **MISSED**") && host.contains("1.02 met"), "{host}");
        let raw = table.iter().find(|l| l.contains("W3 stdio") && l.contains("hand-written / rmcp")).unwrap();
        assert!(raw.contains("| 0.32 | 0.20 |  |"), "{raw}");
        // No W1 or HTTP rows: those cells did not run.
        assert!(!table.iter().any(|l| l.contains("W1") || l.contains("HTTP")), "{table:?}");
        // Judged: ours/rmcp, host/ours, modern/legacy (ours/rmcp-modern and the raw rows have
        // no target).
        assert_eq!(tally, vec![(Server::Rmcp, 0, 3), (Server::Ours, 3, 3)]);
    }

    #[test]
    fn the_hand_written_ceiling_is_judged_against_ours_in_the_same_era() {
        let mut results = Results::new();
        // ours (modern), ours-legacy, host, raw (legacy), rmcp, rmcp-modern
        results.insert((Server::Rmcp, Transport::Stdio, "w1"), cell([130.0, 104.0, 130.0, 100.0, 200.0, 200.0]));
        let (table, _) = issue_table(&results, &[Server::Rmcp], None).unwrap();
        let row = |label: &str| table.iter().find(|l| l.contains("W1 stdio") && l.contains(label)).unwrap().clone();
        let legacy = row(": ours / hand-written, both legacy |");
        assert!(legacy.contains("| 1.04 met | <= 1.05 |"), "{legacy}");
        let modern = row(": ours modern / hand-written (legacy) |");
        assert!(modern.contains("| 1.30 |  |"), "{modern}");
    }

    #[test]
    fn a_variant_that_did_not_run_shows_a_dash_and_is_not_judged() {
        let mut results = Results::new();
        results.insert((Server::Rmcp, Transport::Stdio, "w5"), cell([50.0, f64::NAN, 60.0, f64::NAN, f64::NAN, 100.0]));
        let (table, tally) = issue_table(&results, &[Server::Rmcp, Server::Ours], None).unwrap();
        let w5 = table.iter().find(|l| l.contains("host path / rmcp's 10 clients")).unwrap();
        assert!(w5.contains("| 0.60 met | - | <= 0.80 |"), "{w5}");
        // host / McpConnection is 60 / 50: missed.
        assert_eq!(tally, vec![(Server::Rmcp, 1, 2), (Server::Ours, 0, 0)]);
        let medians = medians_table(&results, Server::Rmcp, Transport::Stdio);
        let total = medians.iter().find(|l| l.starts_with("W5 1000 calls")).unwrap();
        let figures: Vec<&str> = total.split_whitespace().rev().take(6).collect();
        assert_eq!(figures, vec!["100", "-", "-", "60.00", "-", "50.00"], "{total}");
        assert!(medians.last().unwrap().contains("ours 2026-07-28"), "{medians:?}");
        // The fixture's lines carry no calls/s: shown as unknown, not as a number.
        let rate = medians.iter().find(|l| l.starts_with("W5 calls/s")).unwrap();
        assert_eq!(rate.split_whitespace().filter(|f| *f == "?").count(), 3, "{rate}");
    }

    #[test]
    fn a_broken_line_is_an_error_not_a_figure() {
        let mut results = Results::new();
        let mut broken = cell([1.0, 1.0, 1.0, 1.0, 1.0, 1.0]);
        broken[OURS][1] = r#"{"cpu_ms":3}"#.into();
        results.insert((Server::Ours, Transport::Http, "w1"), broken);
        let err = issue_table(&results, &[Server::Ours], None).unwrap_err();
        assert!(err.contains("\"total_ms\"") && err.contains("cpu_ms"), "{err}");
    }

    #[test]
    fn instruction_counts_replace_the_time_rows_and_drop_the_others() {
        let counts = [200.0, 100.0, 210.0, 50.0, 400.0, 400.0];
        let cell = counts.iter().map(|n| vec![format!(r#"{{"instructions":{n}}}"#)]).collect();
        let results = Results::from([((Server::Rmcp, Transport::Stdio, "w4"), cell)]);
        let (table, _) = issue_table(&results, &[Server::Rmcp], Some("instructions")).unwrap();
        let time = table.iter().find(|l| l.contains("W4 stdio, one 8 MiB text result: time: ours / rmcp |")).unwrap();
        assert!(time.contains("0.50 met"), "{time}");
        let era = table.iter().find(|l| l.contains("ours modern / ours legacy")).unwrap();
        assert!(era.contains("2.00 **MISSED**"), "{era}");
        assert!(!table.iter().any(|l| l.contains("peak RSS")), "{table:?}");
    }

    #[test]
    fn lost_w5_calls_are_reported_per_run() {
        let mut results = Results::new();
        let ok = r#"{"calls":1000,"answered":1000,"total_ms":5}"#.to_owned();
        let lost = r#"{"calls":1000,"answered":998,"total_ms":5,"first_error":"s3-echo: closed"}"#.to_owned();
        let mut w5 = vec![Vec::new(); VARIANTS.len()];
        (w5[OURS], w5[HOST]) = (vec![ok.clone(), ok.clone()], vec![ok, lost]);
        results.insert((Server::Ours, Transport::Stdio, "w5"), w5);
        let notes = lost_calls(&results);
        assert_eq!(notes.len(), 1, "{notes:?}");
        assert!(notes[0].contains("host round 2: 998 of 1000") && notes[0].contains("s3-echo: closed"), "{notes:?}");
    }

    #[test]
    fn only_w5_is_limited_to_stdio_and_three_variants() {
        assert!(runs_in(RAW, "w3", Transport::Http));
        assert!(runs_in(HOST, "w5", Transport::Stdio));
        assert!(!runs_in(RAW, "w5", Transport::Stdio));
        assert!(!runs_in(OURS_LEGACY, "w5", Transport::Stdio));
        assert!(!runs_in(OURS, "w5", Transport::Http));
    }
}
