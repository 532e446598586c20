//! The commands that run other tools: `ci`, `test`, `tidy`, `bench` and `fuzz`.
//!
//! Each returns `Err` with a one-line reason on the first failure; `main` prints it and exits 1.

use std::ffi::OsString;
use std::path::Path;
use std::process::Command;

use xtask::project_root;

type Result = std::result::Result<(), String>;

/// The first command of the README's quick start (the main job: `mcp` on its built-in demo
/// server), run exactly as written from the project root; it must succeed and list the demo
/// server's tools under their LLM-facing names.
pub fn quickstart() -> Result {
    let root = project_root();
    let readme = std::fs::read_to_string(root.join("README.md")).map_err(|e| format!("reading README.md: {e}"))?;
    let command = quickstart_command(&readme).ok_or("README.md has no `cargo run` line in its quick start")?;
    heading(&format!("quick start: {command}"));
    let words: Vec<&str> = command.split_whitespace().collect();
    let output = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| OsString::from("cargo")))
        .args(&words[1..])
        .current_dir(&root)
        .output()
        .map_err(|e| format!("quick start: cannot run `{command}`: {e}"))?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    print!("{stdout}");
    if !output.status.success() {
        return Err(format!(
            "quick start: `{command}` failed ({}): {}",
            output.status,
            String::from_utf8_lossy(&output.stderr).lines().last().unwrap_or_default()
        ));
    }
    for expected in ["demo__echo", "demo__add"] {
        if !stdout.contains(expected) {
            return Err(format!("quick start: `{command}` printed no `{expected}`"));
        }
    }
    Ok(())
}

/// The first `cargo run` line inside the README's `## Quick start` section.
fn quickstart_command(readme: &str) -> Option<&str> {
    let section = &readme[readme.find("## Quick start")?..];
    section.lines().map(str::trim).find(|l| l.starts_with("cargo run "))
}

/// Formatting, lints, the API docs (rustdoc warnings are errors), tests and tidy, in that order.
pub fn ci() -> Result {
    cargo("formatting", &["fmt", "--all", "--", "--check"])?;
    cargo("lints", &["clippy", "--workspace", "--all-targets", "--", "-D", "warnings"])?;
    // The libraries alone, without Tokio's multi-thread scheduler (the workspace does not ask
    // for it; the `mcp` command and the tests do): a host on a current-thread runtime must not
    // have to link it, so no library may use what only it offers.
    cargo(
        "libraries without the multi-thread scheduler",
        &[
            "check",
            "--lib",
            "-p",
            "mcp-protocol",
            "-p",
            "mcp-transport",
            "-p",
            "mcp-manager",
            "-p",
            "tool-system",
            "-p",
            "host-bridge",
        ],
    )?;
    let mut docs = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| OsString::from("cargo")));
    docs.args(["doc", "--workspace", "--no-deps"]).env("RUSTDOCFLAGS", "-D warnings");
    run("docs (RUSTDOCFLAGS=-D warnings)", docs, &project_root())?;
    // The property tests run with one fixed seed, printed, so that a red run is never luck
    // and can be replayed; `cargo xtask fuzz` explores fresh seeds.
    let seed = crate::fuzz::ci_seed()?;
    println!(
        "\nproperty tests: PROPTEST_RNG_SEED={seed} (the default is {}; set PROPTEST_RNG_SEED to replay another run)",
        crate::fuzz::CI_SEED
    );
    let mut tests = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| OsString::from("cargo")));
    tests.args(["test", "--workspace"]).env("PROPTEST_RNG_SEED", seed.to_string());
    run(&format!("tests (PROPTEST_RNG_SEED={seed})"), tests, &project_root())?;
    tidy()?;
    println!("\nci: all steps passed");
    Ok(())
}

/// Everything `ci` does, the chaos soak for a minute, the README's main-job command, the host
/// examples, then the runs against peers that no one here wrote.
pub fn test() -> Result {
    ci()?;
    chaos()?;
    quickstart()?;
    examples()?;
    peers()?;
    crate::conformance::conformance()
}

/// Every example of `mcp-manager/examples/` (each a host, or one extension point of one), run
/// against the built-in demo server of the `mcp` binary, built first; each exits 0 only if it
/// did its job.
pub fn examples() -> Result {
    let root = project_root();
    cargo("examples: the demo server", &["build", "-p", "mcp-cli", "--bin", "mcp"])?;
    let target = std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| root.join("target"), std::path::PathBuf::from);
    let mcp = target.join("debug").join("mcp");
    let names = example_names(&root.join("mcp-manager/examples"))?;
    if names.is_empty() {
        return Err("examples: mcp-manager/examples holds no example".into());
    }
    for name in &names {
        let mut command = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| OsString::from("cargo")));
        command.args(["run", "-p", "mcp-manager", "--example", name]).env("MCP_BIN", &mcp);
        run(&format!("example {name} (MCP_BIN={})", mcp.display()), command, &root)?;
    }
    println!("\nexamples: {} ran and did their job", names.len());
    Ok(())
}

/// The examples in `dir`: its `.rs` files (subfolders hold what they share), sorted.
fn example_names(dir: &Path) -> std::result::Result<Vec<String>, String> {
    let entries = std::fs::read_dir(dir).map_err(|e| format!("examples: reading {}: {e}", dir.display()))?;
    let mut names: Vec<String> =
        entries.filter_map(|entry| entry.ok()?.file_name().to_str()?.strip_suffix(".rs").map(str::to_owned)).collect();
    names.sort();
    Ok(names)
}

/// The chaos soak test (`tests/tests/chaos.rs`) for 60 s instead of the short run of a plain
/// `cargo test`; its seed is printed, and `CHAOS_SEED` set in the environment replays one.
pub fn chaos() -> Result {
    let mut command = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| OsString::from("cargo")));
    command.args(["test", "-p", "tests", "--test", "chaos", "--", "--nocapture"]).env("CHAOS_SECS", "60");
    run("chaos soak (CHAOS_SECS=60)", command, &project_root())
}

/// Install the real peers into `target/peers/` (see `peers.rs`), then run the interop tests
/// against them with the peers required: a peer that is missing fails, it is not skipped.
pub fn peers() -> Result {
    heading("real peers: provisioning");
    let dir = crate::peers::provision()?;
    let mut command = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| OsString::from("cargo")));
    command.arg("test");
    let mut packages: Vec<&str> = crate::peers::PEER_TESTS.iter().map(|(package, _)| *package).collect();
    packages.sort_unstable();
    packages.dedup();
    for package in packages {
        command.args(["-p", package]);
    }
    for (_, test) in crate::peers::PEER_TESTS {
        command.args(["--test", test]);
    }
    command
        .args(["--", "--nocapture"])
        .env(crate::peers::PEERS_DIR_ENV, &dir)
        .env(crate::peers::REQUIRE_PEERS_ENV, "1");
    println!("\n{}={} {}=1", crate::peers::PEERS_DIR_ENV, dir.display(), crate::peers::REQUIRE_PEERS_ENV);
    run("peer tests", command, &project_root())
}

/// The architecture invariants; every violation is printed before failing.
pub fn tidy() -> Result {
    heading("tidy: architecture invariants");
    let violations = xtask::tidy(&project_root());
    if violations.is_empty() {
        println!("tidy: ok");
        return Ok(());
    }
    for violation in &violations {
        eprintln!("  {violation}");
    }
    Err(format!("tidy found {} violation(s)", violations.len()))
}

/// The benchmarks; `args` are passed to `cargo bench` as they are.
pub fn bench(args: &[String]) -> Result {
    let mut cargo_args = vec!["bench", "-p", "mcp-protocol", "--bench", "codec"];
    cargo_args.extend(args.iter().map(String::as_str));
    cargo("benchmarks", &cargo_args)
}

/// The property tests as fuzzers on stable, or cargo-fuzz on nightly (see `fuzz.rs`).
pub fn fuzz(args: &[String]) -> Result {
    crate::fuzz::fuzz(args)
}

/// Run `cargo <args>` at the workspace root with the cargo that runs xtask.
fn cargo(title: &str, args: &[&str]) -> Result {
    let mut command = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| OsString::from("cargo")));
    command.args(args);
    run(title, command, &project_root())
}

fn run(title: &str, mut command: Command, dir: &Path) -> Result {
    let shown = shown(&command);
    heading(&format!("{title}: {shown}"));
    let status =
        command.current_dir(dir).status().map_err(|err| format!("{title}: could not start `{shown}`: {err}"))?;
    if status.success() { Ok(()) } else { Err(format!("{title} failed: `{shown}` ({status})")) }
}

/// The command as a person would type it (`cargo ...`, whatever path runs it).
fn shown(command: &Command) -> String {
    let mut words = vec!["cargo".to_string()];
    words.extend(command.get_args().map(|arg| arg.to_string_lossy().into_owned()));
    words.join(" ")
}

fn heading(text: &str) {
    println!("\n==> {text}");
}

#[cfg(test)]
mod tests {
    use super::{example_names, quickstart_command};

    #[test]
    fn the_examples_are_the_rs_files_of_the_examples_folder() {
        let names = example_names(&xtask::project_root().join("mcp-manager/examples")).unwrap();
        for expected in ["audit_hook", "custom_transport", "host", "native_tool"] {
            assert!(names.iter().any(|n| n == expected), "{expected} missing from {names:?}");
        }
        assert!(!names.iter().any(|n| n == "common"), "a shared folder is not an example: {names:?}");
        assert!(example_names(std::path::Path::new("/nonexistent/examples")).unwrap_err().contains("/nonexistent"));
    }

    #[test]
    fn the_quick_start_command_is_the_first_cargo_run_line_of_its_section() {
        let readme = "# x\n```sh\ncargo run -p other\n```\n## Quick start\n\n```sh\ncargo run --release -p mcp-cli -- tools\ncargo xtask test\n```\n";
        assert_eq!(quickstart_command(readme), Some("cargo run --release -p mcp-cli -- tools"));
        assert_eq!(quickstart_command("## Quick start\ncargo xtask test\n"), None);
        let real = std::fs::read_to_string(xtask::project_root().join("README.md")).unwrap();
        assert_eq!(quickstart_command(&real), Some("cargo run --release -p mcp-cli -- tools"));
    }
}
