//! `cargo xtask bench instructions`: the era comparison counted in instructions, which a shared
//! machine cannot disturb the way it disturbs the wall clock.
//!
//! Each workload runs once per era with the client under `valgrind --tool=callgrind` (Valgrind
//! must be installed; nothing else in the project needs it): the stdio workloads W1-W4 against
//! `bench-server` (`--modern` for the modern era) and the streamable HTTP workloads W1-W2 against
//! one `bench-http-server`. The count is every instruction the client process ran, from start-up
//! to exit (spawning the server, the handshake or `server/discover`, the warm-up calls and the
//! workload), so it is the era's whole cost to the client. It is deterministic up to how the
//! server's replies happen to batch. The modern era may cost at most 1.1 times the legacy era.

use std::ffi::OsStr;
use std::path::Path;
use std::process::Command;

use xtask::project_root;

use super::{ERA_BUDGET, cargo_command, heading, run_status, target_dir};

type Result<T = ()> = std::result::Result<T, String>;

/// `cargo xtask bench instructions`.
pub(crate) fn instructions(args: &[String]) -> Result {
    if !args.is_empty() {
        return Err(format!("bench instructions: unexpected arguments {args:?} (it takes none)"));
    }
    let version = Command::new("valgrind").arg("--version").output();
    if !version.is_ok_and(|o| o.status.success()) {
        return Err("bench instructions: valgrind is not installed (it counts the instructions)".into());
    }
    let root = project_root();
    let bin = target_dir(&root).join("release");
    heading("instruction counts: building the bench clients and servers (release)");
    let mut build = cargo_command();
    build.args(["build", "--release", "-p", "mcp-bench"]);
    for name in ["bench-client", "bench-server", "bench-http-client", "bench-http-server"] {
        build.args(["--bin", name]);
    }
    run_status("build", build, &root)?;

    heading("instruction counts: each workload once per era, the client under callgrind");
    let (client, server) = (bin.join("bench-client"), bin.join("bench-server"));
    let mut rows = Vec::new();
    for workload in ["w1", "w2", "w3", "w4"] {
        let modern = count(&client, &[workload.as_ref(), server.as_os_str(), "modern".as_ref(), "--modern".as_ref()])?;
        let legacy = count(&client, &[workload.as_ref(), server.as_os_str(), "legacy".as_ref()])?;
        rows.push((format!("stdio {workload}"), modern, legacy));
    }
    let (http_server, url) = super::http::start_server(&bin.join("bench-http-server"))?;
    let http_client = bin.join("bench-http-client");
    for workload in ["w1", "w2"] {
        let modern = count(&http_client, &[workload.as_ref(), url.as_ref(), "modern".as_ref()])?;
        let legacy = count(&http_client, &[workload.as_ref(), url.as_ref(), "legacy".as_ref()])?;
        rows.push((format!("http {workload}"), modern, legacy));
    }
    drop(http_server);

    println!("\n{:<12} {:>16} {:>16} {:>10} {:>8}  result", "workload", "modern", "legacy", "mod/legacy", "target");
    println!("{}", "-".repeat(74));
    let mut met = 0;
    for (label, modern, legacy) in &rows {
        let ratio = *modern as f64 / *legacy as f64;
        let ok = ratio <= ERA_BUDGET;
        met += usize::from(ok);
        let verdict = if ok { "met" } else { "MISSED" };
        println!("{label:<12} {modern:>16} {legacy:>16} {ratio:>10.3} {:>8}  {verdict}", format!("<= {ERA_BUDGET:.2}"));
    }
    println!(
        "\nera comparison in instructions: {met} of {} budgets met (modern <= {ERA_BUDGET:.1}x legacy)",
        rows.len()
    );
    Ok(())
}

/// Run `client args` under callgrind; the instructions it ran. The client must succeed.
fn count(client: &Path, args: &[&OsStr]) -> Result<u64> {
    let output = Command::new("valgrind")
        .args(["--tool=callgrind", "--callgrind-out-file=/dev/null"])
        .arg(client)
        .args(args)
        .output()
        .map_err(|e| format!("could not start valgrind: {e}"))?;
    let stderr = String::from_utf8_lossy(&output.stderr);
    let text: Vec<String> = args.iter().map(|a| a.to_string_lossy().into_owned()).collect();
    let what = format!("{} {}", client.display(), text.join(" "));
    if !output.status.success() {
        return Err(format!("{what} failed under callgrind ({}): {}", output.status, stderr.trim()));
    }
    let collected = collected(&stderr).ok_or_else(|| format!("{what}: callgrind reported no count"))?;
    println!(
        "  {:<40} {collected:>14} instructions",
        // The workload and the era, without the server's path or URL.
        text.iter().take(1).chain(text.iter().skip(2)).cloned().collect::<Vec<_>>().join(" ")
    );
    Ok(collected)
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
    }
}
