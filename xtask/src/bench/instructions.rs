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
//! server's replies happen to batch. The table shows the counts, then the issue's ratios counted
//! in instructions (its targets are for wall-clock time: shown for reference).

use std::ffi::OsStr;
use std::path::Path;
use std::process::Command;

use super::matrix::{Endpoint, client_path};
use super::procs::last_json_line;
use super::tables::{Results, VARIANTS, issue_table, runs_in};
use super::{Selection, Server, build_bins, heading};

type Result<T = ()> = std::result::Result<T, String>;

/// `cargo xtask bench instructions` with `selection` (`--runs` is ignored: one run each).
pub(crate) fn instructions(selection: &Selection) -> Result {
    let version = Command::new("valgrind").arg("--version").output();
    if !version.is_ok_and(|o| o.status.success()) {
        return Err("bench instructions: valgrind is not installed (it counts the instructions)".into());
    }
    let bins = build_bins()?;
    let mut results = Results::new();
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
                "instructions against {} server over {}: {}, every variant once under callgrind",
                server.name(),
                transport.name(),
                workloads.join(" ")
            ));
            for workload in workloads {
                let endpoint = Endpoint::open(&bins, server, transport, workload)?;
                let mut cell = vec![Vec::new(); VARIANTS.len()];
                for (v, variant) in VARIANTS.iter().enumerate() {
                    if !runs_in(v, workload, transport) {
                        continue;
                    }
                    let count = count(&client_path(&bins, variant.client), &endpoint.args(workload, variant.era))?;
                    println!("  {} {workload} {:<11} {count:>14} instructions", transport.name(), variant.label);
                    cell[v].push(format!(r#"{{"instructions":{count}}}"#));
                }
                results.insert((server, transport, workload), cell);
            }
        }
    }
    report(&results, &selection.servers)
}

fn report(results: &Results, servers: &[Server]) -> Result {
    println!("\nclient instructions, millions");
    let header: String = VARIANTS.iter().map(|v| format!(" {:>11}", v.label)).collect();
    println!("{:<22}{header}", "server transport work");
    for ((server, transport, workload), cell) in results {
        let mut line = format!("{:<22}", format!("{} {} {workload}", server.name(), transport.name()));
        for lines in cell {
            let shown = match lines.first().and_then(|l| super::stats::number(l, "instructions")) {
                Some(n) => format!("{:.1}", n / 1e6),
                None => "-".into(),
            };
            line.push_str(&format!(" {shown:>11}"));
        }
        println!("{line}");
    }
    println!("\nthe issue's ratios in client instructions (targets are for wall-clock time: for reference)\n");
    let (table, _) = issue_table(results, servers, Some("instructions"))?;
    for line in table {
        println!("{line}");
    }
    Ok(())
}

/// Run `client args` under callgrind; the instructions it ran. The client must succeed and print
/// its JSON line.
fn count(client: &Path, args: &[&OsStr]) -> Result<u64> {
    let output = Command::new("valgrind")
        .args(["--tool=callgrind", "--callgrind-out-file=/dev/null"])
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
    collected(&stderr).ok_or_else(|| format!("{what}: callgrind reported no count"))
}

/// The total from callgrind's `==PID== Collected : N` line.
fn collected(stderr: &str) -> Option<u64> {
    stderr.lines().find_map(|l| l.split_once("Collected :")).and_then(|(_, n)| n.trim().parse().ok())
}

#[cfg(test)]
mod tests {
    use super::collected;

    #[test]
    fn reads_the_collected_count() {
        let stderr = "==12== Events    : Ir\n==12== Collected : 8597377\n==12==\n==12== I   refs:      8,597,377\n";
        assert_eq!(collected(stderr), Some(8_597_377));
        assert_eq!(collected("==12== nothing here"), None);
        assert_eq!(collected("==12== Collected : lots"), None);
    }
}
