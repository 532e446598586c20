//! Requirement-set runs: `client --requirements <revision>`.
//!
//! From 0.2 on the suite bundles requirement sets (`requirements/<revision>.yaml`): the scenarios
//! a spec revision requires, frozen at its release. `client --requirements 2026-07-28` runs
//! exactly those client scenarios, plus the ones the set runs but never scores (extensions,
//! scenarios added after the release), all at once and all at that revision's wire: every mock
//! server speaks it, and the client gets it as `MCP_CONFORMANCE_PROTOCOL_VERSION`, scenarios of
//! older revisions (`tools_call`) included. `--requirements` cannot be combined with
//! `--scenario`; the suite writes each scenario's results to `<out>/<scenario>-<timestamp>/`.
//!
//! The suite's exit status only says whether a scored scenario failed, so each scenario is
//! judged on its own: its `checks.json` (no FAILURE, no WARNING), and the client's own last line
//! `conformance-client: <scenario>: done` in its `stdout.txt` (the client finished without an
//! error). The rows are kept per set, in `results/<version>/requirements-<revision>/`.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::report::Row;
use super::{Result, capture, collect_results, conformance_dir, node_command, output_tail, run_suite};

/// The scenarios whose client is right to stop with an error (the suite's `allowClientError`):
/// the server misbehaves and the client must refuse to go on. In a set run such a client passes
/// when its checks pass and it stopped on a refused authorization (its last stderr line is an
/// `authorization failed (...)` error), not on anything else.
pub const CLIENT_MUST_REFUSE: &[&str] = &[
    "auth/scope-retry-limit",
    "auth/resource-mismatch",
    "auth/iss-supported-missing",
    "auth/iss-wrong-issuer",
    "auth/iss-unexpected",
    "auth/iss-normalized",
    "auth/metadata-issuer-mismatch",
];

/// The skills scenarios whose server tampers with a skill (SEP-2640): the client is right to stop
/// when it refuses the skill, its last stderr line the library's verification error (`... is
/// refused: the <check> check failed for <file>: ...`).
pub const CLIENT_MUST_REFUSE_SKILL: &[&str] =
    &["sep-2640-client-verify-digest", "sep-2640-client-verify-size", "sep-2640-client-verify-frontmatter"];

/// The longest a whole requirement-set run may take (its scenarios run concurrently, each bounded
/// by the suite's client timeout).
const SET_DEADLINE: Duration = Duration::from_secs(300);

/// The client scenarios of a requirement set, each with whether the set scores it.
fn list_set(node: &Path, entry: &Path, revision: &str) -> Result<Vec<(String, bool)>> {
    let mut command = node_command(node);
    command.arg(entry).args(["list", "--requirements", revision]);
    let out = capture("listing a requirement set", command)?;
    let scenarios = parse_set_list(&String::from_utf8_lossy(&out.stdout));
    if scenarios.is_empty() {
        return Err(format!(
            "conformance: `list --requirements {revision}` named no client scenario\n{}",
            output_tail(&out)
        ));
    }
    Ok(scenarios)
}

/// The client scenarios in `list --requirements` output: the `  - <name>` lines of the client
/// section (scored), and the `    - <name> [client]` lines of the never-scored section.
fn parse_set_list(text: &str) -> Vec<(String, bool)> {
    #[derive(PartialEq)]
    enum Section {
        Other,
        Client,
        NotScored,
    }
    let mut section = Section::Other;
    let mut scenarios = Vec::new();
    for line in text.lines() {
        let trimmed = line.trim();
        if !line.starts_with(' ') && !trimmed.is_empty() {
            section = if trimmed.starts_with("Client scenarios") {
                Section::Client
            } else if trimmed.starts_with("Run and reported, but never scored") {
                Section::NotScored
            } else {
                Section::Other
            };
            continue;
        }
        let Some(item) = trimmed.strip_prefix("- ") else { continue };
        match section {
            Section::Client => scenarios.push((item.split_whitespace().next().unwrap_or(item).to_owned(), true)),
            Section::NotScored => {
                if let Some(name) = item.strip_suffix("[client]") {
                    scenarios.push((name.trim().to_owned(), false));
                }
            }
            Section::Other => {}
        }
    }
    scenarios
}

/// Run the requirement set `revision` of the suite at `version` and keep each scenario's results in
/// `results/requirements-<revision>/<scenario>/` (`results` is the version's directory).
pub(super) fn run_set(
    node: &Path,
    entry: &Path,
    client: &Path,
    version: &str,
    revision: &str,
    results: &Path,
) -> Result<Vec<Row>> {
    let scenarios = list_set(node, entry, revision)?;
    let scored: Vec<&str> = scenarios.iter().filter(|(_, s)| *s).map(|(n, _)| n.as_str()).collect();
    let unscored: Vec<&str> = scenarios.iter().filter(|(_, s)| !*s).map(|(n, _)| n.as_str()).collect();
    println!("{} client scenarios scored: {}", scored.len(), scored.join(", "));
    println!("{} run but not scored: {}", unscored.len(), unscored.join(", "));

    let keep = results.join(format!("requirements-{revision}"));
    let _ = fs::remove_dir_all(&keep);
    fs::create_dir_all(&keep).map_err(|e| format!("conformance: cannot create {}: {e}", keep.display()))?;
    let out_dir = conformance_dir().join("runs").join(version).join(format!("requirements-{revision}"));
    let _ = fs::remove_dir_all(&out_dir);
    fs::create_dir_all(&out_dir).map_err(|e| format!("conformance: cannot create {}: {e}", out_dir.display()))?;

    let log_path = keep.join("suite.log");
    let started = Instant::now();
    let selector = ["--requirements", revision];
    let finished = run_suite(node, entry, client, selector, &out_dir, &log_path, SET_DEADLINE)?.is_some();
    println!("suite ran the set in {:.1?}", started.elapsed());
    // The exit status says only whether some scored scenario failed; the summary says the suite
    // got through every scenario.
    let log_text = fs::read_to_string(&log_path).unwrap_or_default();
    let summarized = log_text.contains("=== SUITE SUMMARY ===");

    let mut rows = Vec::new();
    for (scenario, is_scored) in &scenarios {
        let mut row = Row::new(version, Some(revision), scenario);
        row.scored = *is_scored;
        if !finished {
            row.problem = Some(format!("the suite did not finish the set within {SET_DEADLINE:?} and was killed"));
        } else if !summarized {
            row.problem = Some("the suite ended without its summary (see suite.log)".to_owned());
        }
        match find_scenario_dir(&out_dir, scenario) {
            Some(written) => {
                let scenario_keep = keep.join(scenario);
                fs::create_dir_all(&scenario_keep)
                    .map_err(|e| format!("conformance: cannot create {}: {e}", scenario_keep.display()))?;
                collect_results(&mut row, &written, &scenario_keep)?;
                let stdout = fs::read_to_string(written.join("stdout.txt")).unwrap_or_default();
                if row.problem.is_none() && !client_finished(&stdout, scenario) {
                    let stderr = fs::read_to_string(written.join("stderr.txt")).unwrap_or_default();
                    let last = stderr.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("(no stderr)");
                    if !refused_as_it_must(scenario, last) {
                        row.problem = Some(format!("the client did not finish: {last}"));
                    }
                }
            }
            None => {
                let problem = row.problem.take().unwrap_or_default();
                row.problem = Some(format!("no checks.json was written. {problem}").trim().to_owned());
            }
        }
        rows.push(row);
    }
    let _ = fs::remove_dir_all(&out_dir);
    Ok(rows)
}

/// Whether a client that stopped with `last_stderr_line` did what `scenario` asks: refuse the
/// authorization (see [`CLIENT_MUST_REFUSE`]) or the tampered skill ([`CLIENT_MUST_REFUSE_SKILL`]).
fn refused_as_it_must(scenario: &str, last_stderr_line: &str) -> bool {
    (CLIENT_MUST_REFUSE.contains(&scenario) && last_stderr_line.contains("authorization failed ("))
        || (CLIENT_MUST_REFUSE_SKILL.contains(&scenario) && last_stderr_line.contains(" check failed for "))
}

/// Whether the conformance client's stdout ends its run with `conformance-client: <scenario>:
/// done` (it prints that only when every step succeeded).
fn client_finished(stdout: &str, scenario: &str) -> bool {
    let done = format!("conformance-client: {scenario}: done");
    stdout.lines().any(|line| line.trim_end() == done)
}

/// The directory the suite wrote for `scenario` under `out`: `<out>/<scenario>-<timestamp>/`
/// (a scenario such as `auth/dpop` is a directory `auth` with `dpop-<timestamp>` in it). The
/// timestamp must follow the dash, so that `auth/dpop` does not pick `auth/dpop-nonce-<timestamp>`.
fn find_scenario_dir(out: &Path, scenario: &str) -> Option<PathBuf> {
    let path = out.join(scenario);
    let parent = path.parent()?;
    let base = path.file_name()?.to_str()?;
    let mut found: Vec<PathBuf> = fs::read_dir(parent)
        .ok()?
        .flatten()
        .filter(|e| {
            let name = e.file_name();
            let name = name.to_string_lossy();
            name.strip_prefix(base).and_then(|rest| rest.strip_prefix('-')).is_some_and(is_timestamp)
        })
        .map(|e| e.path())
        .filter(|p| p.join("checks.json").is_file())
        .collect();
    found.sort();
    found.pop()
}

/// `2026-11-30T10-07-29-637Z`: an ISO timestamp with `:` and `.` made `-`, as the suite names its
/// result directories.
fn is_timestamp(text: &str) -> bool {
    let shape = "dddd-dd-ddTdd-dd-dd-dddZ";
    text.len() == shape.len()
        && text.chars().zip(shape.chars()).all(|(c, s)| if s == 'd' { c.is_ascii_digit() } else { c == s })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conformance::{REQUIREMENT_SETS, requirement_sets};

    #[test]
    fn a_set_list_names_its_client_scenarios() {
        let text = "Required for 2026-07-28 (69 scenarios, frozen; run at the 2026-07-28 wire):\n\n\
                    Server scenarios (test against a server):\n  - server-stateless\n  - tools-list\n\n\
                    Client scenarios (test against a client):\n  - tools_call\n  - request-metadata\n  \
                    - auth/metadata-default\n\n\
                    Run and reported, but never scored:\n  extension (2):\n    - auth/dpop [client]\n    \
                    - tasks-lifecycle [server]\n  added-after-release (1):\n    \
                    - json-schema-2020-12-preservation [client]\n  pending (1):\n    \
                    - json-schema-2020-12 [server]\n\n";
        let parsed = parse_set_list(text);
        let expected = [
            ("tools_call", true),
            ("request-metadata", true),
            ("auth/metadata-default", true),
            ("auth/dpop", false),
            ("json-schema-2020-12-preservation", false),
        ];
        assert_eq!(parsed, expected.map(|(n, s)| (n.to_owned(), s)));
    }

    #[test]
    fn result_directories_are_matched_by_scenario_and_timestamp() {
        let out = std::env::temp_dir().join(format!("xtask-requirements-{}", std::process::id()));
        let _ = fs::remove_dir_all(&out);
        for dir in ["auth/dpop-nonce-2026-11-30T10-07-29-637Z", "auth/dpop-2026-11-30T10-07-29-634Z", "tools_call-x"] {
            fs::create_dir_all(out.join(dir)).unwrap();
            fs::write(out.join(dir).join("checks.json"), "[]").unwrap();
        }
        assert_eq!(find_scenario_dir(&out, "auth/dpop"), Some(out.join("auth/dpop-2026-11-30T10-07-29-634Z")));
        let nonce = out.join("auth/dpop-nonce-2026-11-30T10-07-29-637Z");
        assert_eq!(find_scenario_dir(&out, "auth/dpop-nonce"), Some(nonce));
        assert_eq!(find_scenario_dir(&out, "tools_call"), None, "no timestamp");
        assert_eq!(find_scenario_dir(&out, "initialize"), None);
        let _ = fs::remove_dir_all(&out);
    }

    #[test]
    fn only_the_refusing_scenarios_may_stop_and_only_on_a_refused_authorization() {
        let refused = "conformance-client: auth/iss-wrong-issuer: connect: authorization failed (authorization): the redirect names the issuer";
        assert!(refused_as_it_must("auth/iss-wrong-issuer", refused));
        assert!(!refused_as_it_must(
            "auth/iss-wrong-issuer",
            "conformance-client: auth/iss-wrong-issuer: gave up after 25s"
        ));
        assert!(!refused_as_it_must("auth/metadata-default", refused));
        let skill = "conformance-client: sep-2640-client-verify-size: skill skill://pdf-processing/SKILL.md of server \
                     \"conformance\" is refused: the size check failed for skill://pdf-processing/SKILL.md: ...";
        assert!(refused_as_it_must("sep-2640-client-verify-size", skill));
        assert!(!refused_as_it_must("sep-2640-client-no-prefetch", skill), "no-prefetch must finish");
        assert!(!refused_as_it_must("sep-2640-client-verify-size", refused));
    }

    #[test]
    fn the_client_finished_only_with_its_done_line() {
        let stdout = "scenario tools_call, server http://x\nclosed\nconformance-client: tools_call: done\n";
        assert!(client_finished(stdout, "tools_call"));
        assert!(!client_finished(stdout, "initialize"));
        assert!(!client_finished("scenario tools_call\n", "tools_call"));
        assert!(is_timestamp("2026-11-30T10-07-29-637Z"));
        assert!(!is_timestamp("nonce-2026-11-30T10-07-29-637Z"));
    }

    #[test]
    fn only_known_versions_have_sets() {
        assert_eq!(requirement_sets("0.2.0-alpha.12"), ["2026-07-28", "2025-11-25"]);
        assert!(requirement_sets("0.1.16").is_empty());
        for (version, _) in REQUIREMENT_SETS {
            assert!(super::super::SUITE_VERSIONS.contains(version), "{version}");
        }
    }
}
