//! `cargo xtask fuzz`: the property tests run as fuzzers, on the stable toolchain.
//!
//! Each target is one property-test binary (see [`TARGETS`]). CI runs them with a few cases and
//! a fixed seed; here they run round after round, each round with a fresh random seed (printed)
//! and many cases, until the time budget is spent. A failing round stops with the seed and the
//! command that replays it; proptest also records the failure in the test's
//! `proptest-regressions` file, which CI then replays first.
//!
//! cargo-fuzz targets (a `fuzz/` crate under `mcp-protocol`), if any exist, stay available to
//! nightly users through `cargo xtask fuzz --cargo-fuzz [ARGS]`.

use std::collections::hash_map::RandomState;
use std::ffi::OsString;
use std::hash::BuildHasher;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant, SystemTime};

use xtask::project_root;

/// One fuzz target: a property-test binary of the workspace.
pub struct Target {
    /// What `cargo xtask fuzz TARGET` calls it.
    pub name: &'static str,
    /// The package that holds it.
    pub package: &'static str,
    /// Its integration-test target, or `None` for the package's unit tests.
    pub test: Option<&'static str>,
    /// Which tests of the binary to run (a test-name filter; empty: all).
    pub filter: &'static str,
    /// What it exercises.
    pub what: &'static str,
}

/// Every target, in the order `cargo xtask fuzz` runs them.
pub const TARGETS: &[Target] = &[
    Target {
        name: "codec",
        package: "mcp-protocol",
        test: Some("proptest_roundtrip"),
        filter: "",
        what: "the JSON-RPC line codec: round trips, arbitrary and mutated lines",
    },
    Target {
        name: "sse",
        package: "mcp-transport",
        test: None,
        filter: "prop_tests",
        what: "SSE reading: arbitrary bytes in arbitrary chunks, event round trips, the size limit",
    },
    Target {
        name: "template",
        package: "mcp-manager",
        test: Some("prop_template"),
        filter: "",
        what: "the URI template matcher: arbitrary templates and URIs, expand-then-match",
    },
    Target {
        name: "config",
        package: "mcp-manager",
        test: Some("prop_config"),
        filter: "",
        what: "the config loaders (desktop JSON, VS Code, Codex TOML, reference TOML) and ${VAR}",
    },
    Target {
        name: "convert",
        package: "mcp-manager",
        test: Some("prop_convert"),
        filter: "",
        what: "CallToolResult -> ToolExecutionResult: arbitrary, mutated and well-formed results",
    },
];

/// The seed CI's property tests use unless `PROPTEST_RNG_SEED` names another.
pub const CI_SEED: u64 = 1313;

/// The seed for a CI run: `PROPTEST_RNG_SEED` when it is set (to replay or vary a run), else
/// [`CI_SEED`]. An unparsable value is an error rather than a silent random seed.
pub fn ci_seed() -> Result<u64, String> {
    match std::env::var("PROPTEST_RNG_SEED") {
        Ok(text) => text.trim().parse().map_err(|_| format!("PROPTEST_RNG_SEED={text:?} is not a u64")),
        Err(_) => Ok(CI_SEED),
    }
}

const DEFAULT_SECS: u64 = 30;
const DEFAULT_CASES: u32 = 1000;

const USAGE: &str = "\
usage: cargo xtask fuzz [TARGET...] [--secs N] [--cases N] [--seed S]
       cargo xtask fuzz --list
       cargo xtask fuzz --cargo-fuzz [ARGS...]   (nightly and cargo-fuzz; ARGS go to `cargo fuzz run`)

Runs each TARGET (default: all) for N seconds (default 30) in rounds of --cases cases per
property (default 1000), each round with a fresh random seed; --seed S runs one round with
seed S (to replay a failure).";

/// Options of one `cargo xtask fuzz` run.
#[derive(Debug, PartialEq)]
struct Options {
    targets: Vec<&'static Target>,
    secs: u64,
    cases: u32,
    seed: Option<u64>,
}

impl std::fmt::Debug for Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name)
    }
}

impl PartialEq for Target {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name
    }
}

/// What the command line asks for.
#[derive(Debug, PartialEq)]
enum Request {
    Help,
    List,
    CargoFuzz(Vec<String>),
    Run(Options),
}

fn parse(args: &[String]) -> Result<Request, String> {
    let mut options = Options { targets: Vec::new(), secs: DEFAULT_SECS, cases: DEFAULT_CASES, seed: None };
    let mut rest = args.iter();
    while let Some(arg) = rest.next() {
        let mut value = |flag: &str| rest.next().ok_or_else(|| format!("{flag} needs a value\n\n{USAGE}"));
        match arg.as_str() {
            "--list" => return Ok(Request::List),
            "--cargo-fuzz" => return Ok(Request::CargoFuzz(rest.cloned().collect())),
            "--secs" => options.secs = number(value("--secs")?, "--secs")?,
            "--cases" => options.cases = number(value("--cases")?, "--cases")?,
            "--seed" => options.seed = Some(number(value("--seed")?, "--seed")?),
            "-h" | "--help" => return Ok(Request::Help),
            name => match TARGETS.iter().find(|t| t.name == name) {
                Some(target) => options.targets.push(target),
                None => {
                    let names: Vec<&str> = TARGETS.iter().map(|t| t.name).collect();
                    return Err(format!("unknown fuzz target `{name}` (targets: {})\n\n{USAGE}", names.join(", ")));
                }
            },
        }
    }
    if options.targets.is_empty() {
        options.targets = TARGETS.iter().collect();
    }
    Ok(Request::Run(options))
}

fn number<T: std::str::FromStr>(text: &str, flag: &str) -> Result<T, String> {
    text.parse().map_err(|_| format!("{flag} takes a number, not `{text}`"))
}

/// `cargo xtask fuzz ARGS`.
pub fn fuzz(args: &[String]) -> Result<(), String> {
    match parse(args)? {
        Request::Help => {
            println!("{USAGE}");
            Ok(())
        }
        Request::List => {
            list();
            Ok(())
        }
        Request::CargoFuzz(args) => cargo_fuzz(&args),
        Request::Run(options) => {
            for target in &options.targets {
                run_target(target, &options)?;
            }
            println!("\nfuzz: no failure in {} target(s)", options.targets.len());
            Ok(())
        }
    }
}

fn list() {
    println!("property-test targets (stable; cargo xtask fuzz TARGET --secs N):");
    for t in TARGETS {
        let test = t.test.map_or_else(|| "--lib".to_owned(), |test| format!("--test {test}"));
        println!("  {:<10} {} ({} {test})", t.name, t.what, t.package);
    }
    let targets = cargo_fuzz_targets();
    if targets.is_empty() {
        println!("cargo-fuzz targets (nightly; cargo xtask fuzz --cargo-fuzz TARGET): none");
    } else {
        println!("cargo-fuzz targets (nightly; cargo xtask fuzz --cargo-fuzz TARGET): {}", targets.join(", "));
    }
}

fn cargo_fuzz_dir() -> PathBuf {
    project_root().join("mcp-protocol").join("fuzz")
}

/// The cargo-fuzz targets: the files of `mcp-protocol/fuzz/fuzz_targets/`.
fn cargo_fuzz_targets() -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(cargo_fuzz_dir().join("fuzz_targets")) else { return Vec::new() };
    let mut names: Vec<String> =
        entries.filter_map(|e| e.ok()?.path().file_stem().map(|s| s.to_string_lossy().into_owned())).collect();
    names.sort();
    names
}

/// cargo-fuzz on nightly, for whoever has it: `cargo +nightly fuzz run ARGS`.
fn cargo_fuzz(args: &[String]) -> Result<(), String> {
    let dir = cargo_fuzz_dir();
    if cargo_fuzz_targets().is_empty() {
        return Err(format!(
            "no cargo-fuzz targets ({} has none); the property-test targets run on stable: cargo xtask fuzz --list",
            dir.join("fuzz_targets").display()
        ));
    }
    let installed =
        Command::new("cargo").args(["+nightly", "fuzz", "--version"]).output().is_ok_and(|out| out.status.success());
    if !installed {
        return Err("cargo-fuzz (or the nightly toolchain) is not installed; install them with\n  \
             rustup toolchain install nightly\n  cargo install cargo-fuzz"
            .to_string());
    }
    let status = Command::new("cargo")
        .args(["+nightly", "fuzz", "run"])
        .args(args)
        .current_dir(&dir)
        .status()
        .map_err(|e| format!("could not start cargo fuzz: {e}"))?;
    if status.success() { Ok(()) } else { Err(format!("cargo fuzz run failed ({status})")) }
}

fn cargo() -> Command {
    Command::new(std::env::var_os("CARGO").unwrap_or_else(|| OsString::from("cargo")))
}

/// The `cargo test` arguments that select `target`'s binary.
fn selection(target: &Target) -> Vec<&'static str> {
    let mut args = vec!["-p", target.package];
    match target.test {
        Some(test) => args.extend(["--test", test]),
        None => args.push("--lib"),
    }
    args
}

/// Build `target`'s test binary and return its path.
fn build(target: &Target) -> Result<PathBuf, String> {
    let output = cargo()
        .arg("test")
        .args(selection(target))
        .args(["--no-run", "--message-format=json"])
        .current_dir(project_root())
        .stderr(Stdio::inherit())
        .output()
        .map_err(|e| format!("fuzz {}: could not start cargo: {e}", target.name))?;
    if !output.status.success() {
        return Err(format!(
            "fuzz {}: building the tests failed ({}); `cargo test {} --no-run` shows why",
            target.name,
            output.status,
            selection(target).join(" ")
        ));
    }
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(executable)
        .next_back()
        .ok_or_else(|| format!("fuzz {}: cargo named no test executable", target.name))
}

/// The `"executable"` of one line of cargo's JSON messages, when it names one.
fn executable(line: &str) -> Option<PathBuf> {
    const KEY: &str = "\"executable\":\"";
    let start = line.find(KEY)? + KEY.len();
    let mut path = String::new();
    let mut chars = line[start..].chars();
    loop {
        match chars.next()? {
            '"' => return Some(PathBuf::from(path)),
            '\\' => match chars.next()? {
                'n' => path.push('\n'),
                't' => path.push('\t'),
                c => path.push(c),
            },
            c => path.push(c),
        }
    }
}

/// A seed no earlier round used: the clock, the process and the round, hashed.
fn random_seed(round: u32) -> u64 {
    let nanos = SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
    RandomState::new().hash_one((nanos, std::process::id(), round))
}

fn run_target(target: &Target, options: &Options) -> Result<(), String> {
    println!("\n==> fuzz {}: {}", target.name, target.what);
    let exe = build(target)?;
    let budget = Duration::from_secs(options.secs);
    let started = Instant::now();
    let mut round = 0u32;
    loop {
        round += 1;
        let seed = options.seed.unwrap_or_else(|| random_seed(round));
        println!("fuzz {}: round {round}, PROPTEST_RNG_SEED={seed} PROPTEST_CASES={}", target.name, options.cases);
        // A round that has started finishes (a failure found late still shrinks and is
        // reported), unless it runs far past the budget.
        let hard_stop = started + budget * 2 + Duration::from_secs(60);
        match run_round(&exe, target, seed, options.cases, hard_stop)? {
            Round::Passed => {}
            Round::Cut => {
                println!("fuzz {}: round {round} cut short at the hard stop; no failure so far", target.name);
                break;
            }
            Round::Failed(status) => {
                let filter = if target.filter.is_empty() { String::new() } else { format!(" {}", target.filter) };
                return Err(format!(
                    "fuzz {}: round {round} failed ({status}); replay it with\n  PROPTEST_RNG_SEED={seed} \
                     PROPTEST_CASES={} cargo test {} --{filter}\n(proptest also saved the case in the test's \
                     proptest-regressions file: commit it)",
                    target.name,
                    options.cases,
                    selection(target).join(" "),
                ));
            }
        }
        if options.seed.is_some() || started.elapsed() >= budget {
            break;
        }
    }
    println!("fuzz {}: {round} round(s) in {:.0?}, no failure", target.name, started.elapsed());
    Ok(())
}

enum Round {
    Passed,
    Failed(std::process::ExitStatus),
    Cut,
}

fn run_round(exe: &Path, target: &Target, seed: u64, cases: u32, hard_stop: Instant) -> Result<Round, String> {
    let mut command = Command::new(exe);
    if !target.filter.is_empty() {
        command.arg(target.filter);
    }
    command
        .arg("-q")
        .env("PROPTEST_RNG_SEED", seed.to_string())
        .env("PROPTEST_CASES", cases.to_string())
        // Test binaries look for their fixtures relative to their package.
        .current_dir(project_root().join(target.package));
    let mut child =
        command.spawn().map_err(|e| format!("fuzz {}: could not start {}: {e}", target.name, exe.display()))?;
    loop {
        if let Some(status) = child.try_wait().map_err(|e| format!("fuzz {}: {e}", target.name))? {
            return Ok(if status.success() { Round::Passed } else { Round::Failed(status) });
        }
        if Instant::now() >= hard_stop {
            // Our own child, ended by its handle.
            let _ = child.kill();
            let _ = child.wait();
            return Ok(Round::Cut);
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn the_command_line_selects_targets_budget_and_seed() {
        let Request::Run(all) = parse(&[]).unwrap() else { panic!("a run") };
        assert_eq!(all.targets.len(), TARGETS.len());
        assert_eq!((all.secs, all.cases, all.seed), (DEFAULT_SECS, DEFAULT_CASES, None));

        let Request::Run(one) = parse(&args(&["sse", "--secs", "5", "--seed", "7", "--cases", "9"])).unwrap() else {
            panic!("a run")
        };
        assert_eq!(one.targets.iter().map(|t| t.name).collect::<Vec<_>>(), ["sse"]);
        assert_eq!((one.secs, one.cases, one.seed), (5, 9, Some(7)));

        assert_eq!(parse(&args(&["--list"])).unwrap(), Request::List);
        assert_eq!(
            parse(&args(&["--cargo-fuzz", "decode_line", "-max_total_time=5"])).unwrap(),
            Request::CargoFuzz(args(&["decode_line", "-max_total_time=5"]))
        );
        assert!(parse(&args(&["nope"])).unwrap_err().contains("unknown fuzz target `nope`"));
        assert!(parse(&args(&["--secs"])).unwrap_err().contains("--secs needs a value"));
        assert!(parse(&args(&["--secs", "x"])).unwrap_err().contains("--secs takes a number"));
    }

    #[test]
    fn every_target_names_a_test_file_that_exists() {
        for t in TARGETS {
            let package = project_root().join(t.package);
            assert!(package.join("Cargo.toml").is_file(), "{}: no package {}", t.name, t.package);
            if let Some(test) = t.test {
                assert!(package.join("tests").join(format!("{test}.rs")).is_file(), "{}: no test {test}", t.name);
            }
        }
    }

    #[test]
    fn the_executable_is_read_from_cargo_messages() {
        let line = r#"{"reason":"compiler-artifact","profile":{"test":true},"executable":"/t/deps/prop_config-0a1b","fresh":true}"#;
        assert_eq!(executable(line), Some(PathBuf::from("/t/deps/prop_config-0a1b")));
        assert_eq!(executable(r#"{"reason":"compiler-artifact","executable":null}"#), None);
        assert_eq!(executable(r#"{"executable":"C:\\t\\a.exe"}"#), Some(PathBuf::from(r"C:\t\a.exe")));
    }

    #[test]
    fn random_seeds_differ_between_rounds() {
        assert_ne!(random_seed(1), random_seed(2));
    }
}
