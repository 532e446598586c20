//! `cargo xtask bench instructions [--server S] [--transport T] [--workload W] ...`: the matrix of
//! [`matrix`](super::matrix) counted in instructions under callgrind, which a shared machine
//! cannot disturb the way it disturbs the wall clock. Valgrind must be installed (nothing else in
//! the project needs it). Callgrind is slow: pick one workload at a time (`--workload w3`).
//!
//! Each selected workload runs once per variant with the client under `valgrind
//! --tool=callgrind` (the server runs natively: over stdio it is the client's child, which
//! callgrind does not follow). The count is every instruction the client process ran, from
//! start-up to exit: spawning or reaching the server, the handshake, the warm-up calls and the
//! workload, so it is each variant's whole cost to the client. It is deterministic up to how the
//! server's replies happen to batch. Callgrind also simulates the caches (`--cache-sim=yes`, with
//! the geometry of the machine it runs on): the L1 instruction and L1 data misses show what the
//! instruction count does not, how much code and data a call runs through (a client whose call
//! runs through more code than the L1 instruction cache holds fetches it again on every call).
//! The tables show the counts and the misses, then the issue's ratios counted in instructions
//! (its targets are for wall-clock time: shown for reference).
//!
//! `--side server` counts the other side, the server under callgrind for each client, and `--side
//! both` both in the same run: see the `server_side` module, which uses this one's count.

use std::ffi::OsStr;
use std::path::Path;
use std::process::Command;

use super::matrix::{Endpoint, client_path};
use super::placement::Placement;
use super::procs::last_json_line;
use super::tables::{Results, VARIANTS, issue_table, runs_in};
use super::{Bins, Build, Selection, Server, build_bins, heading};

type Result<T = ()> = std::result::Result<T, String>;

/// `cargo xtask bench instructions` with `selection` (`--runs` is ignored: one run each), the
/// clients' side (`--side client`).
pub(crate) fn instructions(selection: &Selection) -> Result {
    let bins = prepare(selection)?;
    let mut results = Results::new();
    for (transport, server, workloads) in selection.cells() {
        heading(&format!(
            "instructions against {} server over {}: {}, every variant once under callgrind",
            server.name(),
            transport.name(),
            workloads.join(" ")
        ));
        for workload in workloads {
            let endpoint = Endpoint::open(&bins, server, transport, workload, None)?;
            let mut cell = vec![Vec::new(); VARIANTS.len()];
            for (v, variant) in VARIANTS.iter().enumerate() {
                if !runs_in(v, workload, transport) {
                    continue;
                }
                let counts = count(&client_path(&bins, variant.client), &endpoint.args(workload, variant.era))?;
                println!(
                    "  {} {workload} {:<11} {:>14} instructions {:>11} L1i misses {:>11} L1d misses",
                    transport.name(),
                    variant.label,
                    counts.instructions,
                    counts.l1i_misses,
                    counts.l1d_misses
                );
                cell[v].push(format!(
                    r#"{{"instructions":{},"l1i_misses":{},"l1d_misses":{}}}"#,
                    counts.instructions, counts.l1i_misses, counts.l1d_misses
                ));
            }
            results.insert((server, transport, workload), cell);
        }
    }
    report(&results, &selection.servers, selection.build)
}

/// What every side of `bench instructions` needs first: no `--placement`, valgrind installed,
/// the binaries built.
pub(crate) fn prepare(selection: &Selection) -> Result<Bins> {
    if selection.placement != Placement::Free {
        return Err(
            "bench instructions counts instructions, which do not depend on the CPUs: --placement is for matrix".into(),
        );
    }
    let version = Command::new("valgrind").arg("--version").output();
    if !version.is_ok_and(|o| o.status.success()) {
        return Err("bench instructions: valgrind is not installed (it counts the instructions)".into());
    }
    build_bins(selection.build)
}

fn report(results: &Results, servers: &[Server], build: Build) -> Result {
    println!("\nevery binary built with the {}", build.describe());
    for (title, key, unit) in [
        ("client instructions, millions", "instructions", 1e6),
        ("simulated L1 instruction cache misses, thousands", "l1i_misses", 1e3),
        ("simulated L1 data cache misses (reads and writes), thousands", "l1d_misses", 1e3),
    ] {
        println!("\n{title}");
        let header: String = VARIANTS.iter().map(|v| format!(" {:>11}", v.label)).collect();
        println!("{:<22}{header}", "server transport work");
        for ((server, transport, workload), cell) in results {
            let mut line = format!("{:<22}", format!("{} {} {workload}", server.name(), transport.name()));
            for lines in cell {
                let shown = match lines.first().and_then(|l| super::stats::number(l, key)) {
                    Some(n) => format!("{:.1}", n / unit),
                    None => "-".into(),
                };
                line.push_str(&format!(" {shown:>11}"));
            }
            println!("{line}");
        }
    }
    println!("\nthe issue's ratios in client instructions (targets are for wall-clock time: for reference)\n");
    let (table, _) = issue_table(results, servers, Some("instructions"))?;
    for line in table {
        println!("{line}");
    }
    Ok(())
}

/// What callgrind counted for one client run.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Counts {
    pub(crate) instructions: u64,
    /// Simulated L1 instruction cache misses.
    l1i_misses: u64,
    /// Simulated L1 data cache misses, reads and writes.
    l1d_misses: u64,
}

/// Run `client args` under callgrind with its cache simulation; what it counted. The client must
/// succeed and print its JSON line.
pub(crate) fn count(client: &Path, args: &[&OsStr]) -> Result<Counts> {
    let output = Command::new("valgrind")
        .args(["--tool=callgrind", "--cache-sim=yes", "--callgrind-out-file=/dev/null"])
        .arg(client)
        .args(args)
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|e| format!("could not start valgrind: {e}"))?;
    let stderr = String::from_utf8_lossy(&output.stderr);
    let what =
        format!("{} {}", client.display(), args.iter().map(|a| a.to_string_lossy()).collect::<Vec<_>>().join(" "));
    if !output.status.success() || last_json_line(&String::from_utf8_lossy(&output.stdout)).is_none() {
        return Err(format!("{what} failed under callgrind ({}): {}", output.status, stderr.trim()));
    }
    collected(&stderr).ok_or_else(|| format!("{what}: callgrind reported no counts of Ir, I1mr, D1mr and D1mw"))
}

/// The counts from callgrind's `==PID== Events : Ir Dr ...` and `==PID== Collected : N N ...`
/// lines (one number for each event, in that order).
fn collected(stderr: &str) -> Option<Counts> {
    let after = |marker: &str| stderr.lines().find_map(|l| l.split_once(marker)).map(|(_, rest)| rest);
    let events: Vec<&str> = after("Events    :")?.split_whitespace().collect();
    let values: Vec<u64> =
        after("Collected :")?.split_whitespace().map(str::parse).collect::<std::result::Result<_, _>>().ok()?;
    if values.len() != events.len() {
        return None;
    }
    let event = |name: &str| events.iter().position(|e| *e == name).map(|i| values[i]);
    Some(Counts { instructions: event("Ir")?, l1i_misses: event("I1mr")?, l1d_misses: event("D1mr")? + event("D1mw")? })
}

#[cfg(test)]
mod tests {
    use super::{Counts, collected};

    #[test]
    fn reads_the_collected_counts() {
        let stderr = "==12== Events    : Ir Dr Dw I1mr D1mr D1mw ILmr DLmr DLmw\n\
                      ==12== Collected : 8597377 2000 1000 300 40 2 5 1 0\n==12==\n\
                      ==12== I   refs:      8,597,377\n";
        assert_eq!(collected(stderr), Some(Counts { instructions: 8_597_377, l1i_misses: 300, l1d_misses: 42 }));
        assert_eq!(collected("==12== nothing here"), None);
        assert_eq!(collected("==12== Events    : Ir I1mr D1mr D1mw\n==12== Collected : lots 1 2 3"), None);
        // Without the cache simulation there are no misses to read.
        assert_eq!(collected("==12== Events    : Ir\n==12== Collected : 8597377\n"), None);
        // One number short of the events named.
        assert_eq!(collected("==12== Events    : Ir I1mr D1mr D1mw\n==12== Collected : 1 2 3\n"), None);
    }
}
