//! `cargo xtask bench matrix`: every selected workload against every selected server and
//! transport, with every client variant of [`VARIANTS`]: our `McpConnection` in the modern era
//! (2026-07-28) and in the legacy era, the host path (`bench-host`: `McpManager` +
//! `McpToolProvider` + `ToolRegistry::invoke`), the hand-written client (legacy; the server's
//! ceiling), rmcp's client as `().serve()` runs it, and rmcp's client in the modern era.
//!
//! W3 lists the servers' 10,002 tools; every other workload runs against servers that list only
//! `echo` and `big` (`--tools 2`), so that the host path, which discovers every tool before its
//! first call, measures the calls and not an inventory the connection path never builds.
//!
//! Each cell (server, transport, workload) runs `runs` rounds; a round runs every variant once,
//! each in a fresh process, and the variant that goes first rotates from round to round. After
//! one unmeasured W1 run per variant and server (nobody pays for a cold page cache), the figures
//! are medians of the rounds and every ratio is the median of the rounds' ratios. Over HTTP one
//! server process (ours or rmcp's, `--http 0`) serves every run of its cells. W5 runs over
//! stdio only.
//!
//! The output: each run's JSON line, then per server and transport a table of medians and the
//! revision each variant negotiated, then the issue's table of ratios with its targets against
//! both servers (markdown), and any W5 run that lost a call.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

use super::placement::{Cpus, pinned};
use super::procs::{ServerProcess, run_client, start_http_server};
use super::tables::{Client, Results, VARIANTS, issue_table, lost_calls, medians_table, runs_in};
use super::{Bins, Selection, Server, Side, Transport, build_bins, heading};

type Result<T = ()> = std::result::Result<T, String>;

/// The program of a client.
pub(crate) fn client_path(bins: &Bins, client: Client) -> PathBuf {
    match client {
        Client::Ours => bins.ours_dir.join("bench-client"),
        Client::Host => bins.ours_dir.join("bench-host"),
        Client::Raw => bins.ours_dir.join("bench-raw-client"),
        Client::Rmcp => bins.rmcp_dir.join("rmcp-bench-client"),
    }
}

/// The server flags of a workload: W3 lists the default 10,002 tools, the others only `echo` and
/// `big`.
pub(crate) fn server_flags(workload: &str) -> &'static [&'static str] {
    if workload == "w3" { &[] } else { &["--tools", "2"] }
}

/// Where the clients find a server for one workload: the client arguments after the era (the
/// server's program and flags over stdio, its URL over HTTP, with the server process), and the
/// CPU the clients run on (`None`: wherever the scheduler puts them).
pub(crate) struct Endpoint {
    pub(crate) target: Vec<String>,
    client_cpu: Option<u32>,
    _process: Option<ServerProcess>,
}

impl Endpoint {
    /// The endpoint of `server` over `transport` for `workload`, its server and clients placed
    /// on `cpus` when there are some (a stdio server runs under `taskset`, started by the client
    /// like any server command).
    pub(crate) fn open(
        bins: &Bins,
        server: Server,
        transport: Transport,
        workload: &str,
        cpus: Option<Cpus>,
    ) -> Result<Endpoint> {
        let program = bins.server(server);
        let flags = server_flags(workload);
        let client_cpu = cpus.map(|c| c.client);
        Ok(match transport {
            Transport::Stdio => {
                let flags: Vec<OsString> = flags.iter().map(OsString::from).collect();
                let (program, args) = pinned(cpus.map(|c| c.server), &program, &flags);
                let target = std::iter::once(program).chain(args).map(|a| a.to_string_lossy().into_owned()).collect();
                Endpoint { target, client_cpu, _process: None }
            }
            Transport::Http => {
                let (process, url) = start_http_server(&program, flags, cpus.map(|c| c.server))?;
                Endpoint { target: vec![url], client_cpu, _process: Some(process) }
            }
        })
    }

    /// The client's arguments: the workload, the era, then the target.
    pub(crate) fn args<'a>(&'a self, workload: &'a str, era: &'a str) -> Vec<&'a OsStr> {
        [workload, era].into_iter().chain(self.target.iter().map(String::as_str)).map(OsStr::new).collect()
    }
}

/// Run variant `v` on `workload` at `endpoint` once; its JSON line.
pub(crate) fn run_variant(bins: &Bins, v: usize, workload: &str, endpoint: &Endpoint) -> Result<String> {
    let variant = &VARIANTS[v];
    let args: Vec<OsString> = endpoint.args(workload, variant.era).into_iter().map(OsString::from).collect();
    let (program, args) = pinned(endpoint.client_cpu, &client_path(bins, variant.client), &args);
    run_client(Path::new(&program), &args.iter().map(OsString::as_os_str).collect::<Vec<_>>())
}

/// `cargo xtask bench matrix` with `selection`.
pub(crate) fn matrix(selection: &Selection) -> Result {
    if selection.side != Side::Client {
        return Err(
            "--side server|both counts the servers' instructions: it is for bench instructions, not matrix".into()
        );
    }
    let cpus = selection.placement.resolve()?;
    let bins = build_bins(selection.build)?;
    let mut results = Results::new();
    let runs = selection.runs;
    for (transport, server, workloads) in selection.cells() {
        heading(&format!(
            "{} against {} server over {}: {}, {runs} rounds each, rotating which variant goes first",
            VARIANTS.iter().map(|v| v.label).collect::<Vec<_>>().join(", "),
            server.name(),
            transport.name(),
            workloads.join(" "),
        ));
        for (i, workload) in workloads.into_iter().enumerate() {
            let endpoint = Endpoint::open(&bins, server, transport, workload, cpus)?;
            if i == 0 {
                let warm = Endpoint::open(&bins, server, transport, "w1", cpus)?;
                for v in (0..VARIANTS.len()).filter(|v| runs_in(*v, "w1", transport)) {
                    run_variant(&bins, v, "w1", &warm)?;
                }
            }
            let active: Vec<usize> = (0..VARIANTS.len()).filter(|v| runs_in(*v, workload, transport)).collect();
            let mut cell = vec![Vec::new(); VARIANTS.len()];
            for round in 0..runs {
                for step in 0..active.len() {
                    let v = active[(round + step) % active.len()];
                    let line = run_variant(&bins, v, workload, &endpoint)?;
                    println!("  {} {workload} round {} {:<11} {line}", transport.name(), round + 1, VARIANTS[v].label);
                    cell[v].push(line);
                }
            }
            results.insert((server, transport, workload), cell);
        }
    }
    report(&results, selection)
}

/// Print the medians of every server and transport, the issue's table and the lost calls, all
/// measured with binaries built and placed as `selection` says.
fn report(results: &Results, selection: &Selection) -> Result {
    let servers = &selection.servers[..];
    println!("\nevery binary built with the {}; {}", selection.build.describe(), selection.placement.describe());
    for &transport in &Transport::ALL {
        for &server in servers {
            if !results.keys().any(|(s, t, _)| (*s, *t) == (server, transport)) {
                continue;
            }
            println!("\nmedians, {} server, {} (ms unless said)", server.name(), transport.name());
            for line in medians_table(results, server, transport) {
                println!("{line}");
            }
        }
    }
    println!("\nthe issue's table: each figure the median of the rounds' ratios (lower is better)\n");
    let (table, tally) = issue_table(results, servers, None)?;
    for line in table {
        println!("{line}");
    }
    println!();
    for (server, met, judged) in tally {
        println!("against {} server: {met} of {judged} targets met", server.name());
    }
    let lost = lost_calls(results);
    if lost.is_empty() {
        if results.keys().any(|(_, _, w)| *w == "w5") {
            println!("W5: every call of every run answered and checked");
        }
    } else {
        println!("\nW5 LOST CALLS:");
        for note in lost {
            println!("  {note}");
        }
    }
    Ok(())
}
