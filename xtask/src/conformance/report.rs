//! The outcome of a conformance run: one [`Row`] per scenario run, compared with the expected
//! failures of [`EXPECTED_FAILURES`], and the summary table.

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

use xtask::project_root;

use super::{REQUIRED, Result, SUITE_VERSIONS, heading, requirement_sets};

/// The expected-failures file, relative to the workspace root.
pub(super) const EXPECTED_FAILURES: &str = "xtask/conformance/expected-failures.txt";

/// What identifies one scenario's run: the suite version, the requirement set it ran under
/// (`None`: the scenario alone, with `--scenario`), and the scenario.
pub(super) type Key = (String, Option<String>, String);

/// How a scenario's run is judged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Outcome {
    /// Checks ran and none failed or warned.
    Pass,
    /// It passes, but [`EXPECTED_FAILURES`] still lists it (the line should go).
    PassListed,
    /// It fails, as [`EXPECTED_FAILURES`] says it does.
    ExpectedFailure,
    /// It fails, and it must pass or is not listed: the run fails.
    Fail,
    /// Every check was skipped in a scenario we claim (scored, not listed): the run fails.
    NotExercised,
    /// Every check was skipped, in a scenario a requirement set runs but never scores.
    NotExercisedUnscored,
    /// Every check was skipped, in a scenario [`EXPECTED_FAILURES`] lists.
    NotExercisedListed,
}

impl Outcome {
    /// Whether the run as a whole fails on it.
    #[cfg(test)]
    pub fn fails_the_run(self) -> bool {
        matches!(self, Outcome::Fail | Outcome::NotExercised)
    }

    /// The summary table's text.
    pub fn label(self) -> &'static str {
        match self {
            Outcome::Pass => "pass",
            Outcome::PassListed => "pass (listed as expected failure)",
            Outcome::ExpectedFailure => "expected failure",
            Outcome::Fail => "FAIL",
            Outcome::NotExercised => "NOT EXERCISED (every check skipped)",
            Outcome::NotExercisedUnscored => "not exercised (every check skipped)",
            Outcome::NotExercisedListed => "not exercised (listed as expected failure)",
        }
    }
}

/// One scenario's outcome.
pub(super) struct Row {
    pub version: String,
    /// The requirement set of the run (`--requirements <revision>`), or `None` for a scenario run
    /// alone.
    pub requirements: Option<String>,
    pub scenario: String,
    /// Whether the requirement set scores the scenario (always true for a scenario run alone).
    pub scored: bool,
    pub passed: usize,
    pub failed: usize,
    pub warnings: usize,
    /// Checks the suite reported as SKIPPED.
    pub skipped: usize,
    /// Why the run itself failed (the suite's exit status, no checks.json, a client that did not
    /// finish), if it did.
    pub problem: Option<String>,
    /// `id: message` of every FAILURE and WARNING.
    pub bad_checks: Vec<String>,
}

impl Row {
    pub fn new(version: &str, requirements: Option<&str>, scenario: &str) -> Row {
        Row {
            version: version.to_owned(),
            requirements: requirements.map(str::to_owned),
            scenario: scenario.to_owned(),
            scored: true,
            passed: 0,
            failed: 0,
            warnings: 0,
            skipped: 0,
            problem: None,
            bad_checks: Vec::new(),
        }
    }

    pub fn key(&self) -> Key {
        (self.version.clone(), self.requirements.clone(), self.scenario.clone())
    }

    /// `0.2.0-alpha.12` or `0.2.0-alpha.12 --requirements 2026-07-28`.
    pub fn run(&self) -> String {
        show_run(&self.version, self.requirements.as_deref())
    }

    /// Where its files are kept, below `results/`.
    pub fn results_dir(&self, results: &Path) -> std::path::PathBuf {
        let dir = results.join(&self.version);
        let dir = match &self.requirements {
            Some(revision) => dir.join(format!("requirements-{revision}")),
            None => dir,
        };
        dir.join(&self.scenario)
    }

    /// Whether the run went wrong: a problem with the run itself, or a check that failed or warned.
    pub fn is_bad(&self) -> bool {
        self.problem.is_some() || self.failed > 0 || self.warnings > 0
    }

    /// Whether a check ran in it: one passed, failed or warned. A scenario whose every check was
    /// skipped (or that has no check) proves nothing about the client: it is not exercised.
    pub fn exercised(&self) -> bool {
        self.passed + self.failed + self.warnings > 0
    }

    /// Whether the suite passed it: the run had no problem, no check failed or warned, and at
    /// least one check passed (a scenario whose checks were all skipped is not a pass).
    pub fn passes(&self) -> bool {
        !self.is_bad() && self.passed > 0
    }

    /// What the run says about this scenario, given whether [`EXPECTED_FAILURES`] lists it.
    pub fn outcome(&self, listed: bool) -> Outcome {
        let required = REQUIRED.contains(&self.scenario.as_str());
        match (self.is_bad(), self.exercised(), listed) {
            (true, _, true) if !required => Outcome::ExpectedFailure,
            (true, _, _) => Outcome::Fail,
            // Listed: it is not claimed (a required scenario is always claimed).
            (false, false, true) if !required => Outcome::NotExercisedListed,
            // Claimed (scored and not listed as an expected failure), yet nothing was checked.
            (false, false, _) if self.scored => Outcome::NotExercised,
            (false, false, _) => Outcome::NotExercisedUnscored,
            (false, true, true) => Outcome::PassListed,
            (false, true, false) => Outcome::Pass,
        }
    }

    /// The progress line printed as soon as the scenario has run.
    pub fn print_progress(&self, expected: &BTreeMap<Key, String>) {
        let outcome = self.outcome(expected.contains_key(&self.key()));
        let note = match outcome {
            Outcome::Pass | Outcome::PassListed => "",
            Outcome::ExpectedFailure => " — FAILS (expected)",
            Outcome::Fail => " — FAILS",
            Outcome::NotExercised => " — NOT EXERCISED (every check skipped; FAILS)",
            Outcome::NotExercisedUnscored | Outcome::NotExercisedListed => " — not exercised",
        };
        println!(
            "  {} {}: {} passed, {} failed, {} warnings, {} skipped{note}",
            self.run(),
            self.scenario,
            self.passed,
            self.failed,
            self.warnings,
            self.skipped,
        );
    }
}

fn show_run(version: &str, requirements: Option<&str>) -> String {
    match requirements {
        Some(revision) => format!("{version} --requirements {revision}"),
        None => version.to_owned(),
    }
}

/// Print the summary table and the notices; fail when a scenario failed that must pass or is not
/// listed in [`EXPECTED_FAILURES`].
pub(super) fn report(rows: &[Row], expected: &BTreeMap<Key, String>, results: &Path) -> Result {
    heading("conformance: summary");
    let mut table = vec![
        ["version", "requirements", "scenario", "passed", "failed", "warnings", "skipped", "outcome"]
            .map(str::to_owned)
            .to_vec(),
    ];
    let mut unexpected = Vec::new();
    let mut not_exercised = Vec::new();
    let mut stale = Vec::new();
    for row in rows {
        let outcome = row.outcome(expected.contains_key(&row.key()));
        match outcome {
            Outcome::PassListed => stale.push(expected_line(&row.key())),
            Outcome::Fail => unexpected.push(row),
            Outcome::NotExercised => not_exercised.push(row),
            _ => {}
        }
        let outcome = outcome.label();
        let outcome = if row.scored { outcome.to_owned() } else { format!("{outcome} (not scored)") };
        table.push(vec![
            row.version.clone(),
            row.requirements.clone().unwrap_or_else(|| "-".to_owned()),
            row.scenario.clone(),
            row.passed.to_string(),
            row.failed.to_string(),
            row.warnings.to_string(),
            row.skipped.to_string(),
            outcome,
        ]);
    }
    print_table(&table);
    println!(
        "\nchecks.json of each scenario: {0}/<version>/<scenario>/ (run alone) and \
         {0}/<version>/requirements-<revision>/<scenario>/ (requirement sets)",
        results.display()
    );

    let ran: Vec<Key> = rows.iter().map(Row::key).collect();
    for key in expected.keys() {
        if !ran.contains(key) {
            println!(
                "\nnotice: {EXPECTED_FAILURES} lists `{}`, which the suite did not run; remove the line",
                expected_line(key)
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
    let misplaced: Vec<String> =
        expected.keys().filter(|(_, _, scenario)| REQUIRED.contains(&scenario.as_str())).map(expected_line).collect();
    if !misplaced.is_empty() {
        return Err(format!("{EXPECTED_FAILURES} lists required scenarios, which must pass: {}", misplaced.join(", ")));
    }
    if unexpected.is_empty() && not_exercised.is_empty() {
        let passed = rows.iter().filter(|r| r.passes()).count();
        let unexercised = rows.iter().filter(|r| !r.is_bad() && !r.exercised()).count();
        println!(
            "\nconformance: {passed} scenario runs passed, {unexercised} not exercised (not claimed), {} failed as expected",
            rows.len() - passed - unexercised
        );
        return Ok(());
    }
    if !not_exercised.is_empty() {
        let names: Vec<String> = not_exercised.iter().map(|r| format!("{} {}", r.run(), r.scenario)).collect();
        eprintln!(
            "\nnot exercised (every check skipped, so nothing was verified), though claimed: {}\n  \
             make the client exercise them, or list them in {EXPECTED_FAILURES} with the reason",
            names.join(", ")
        );
    }
    for row in &unexpected {
        eprintln!("\n{} {} failed:", row.run(), row.scenario);
        if let Some(problem) = &row.problem {
            eprintln!("  {problem}");
        }
        for check in &row.bad_checks {
            eprintln!("  {check}");
        }
        eprintln!("  see {}", row.results_dir(results).display());
    }
    let names: Vec<String> =
        unexpected.iter().chain(&not_exercised).map(|r| format!("{} {}", r.run(), r.scenario)).collect();
    Err(format!(
        "{} conformance scenario run(s) failed or were not exercised that must pass or are not listed in \
         {EXPECTED_FAILURES}: {}",
        names.len(),
        names.join(", ")
    ))
}

/// A key as its line in [`EXPECTED_FAILURES`] starts.
fn expected_line((version, requirements, scenario): &Key) -> String {
    match requirements {
        Some(revision) => format!("{version} {revision} {scenario}"),
        None => format!("{version} {scenario}"),
    }
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
                    if (3..7).contains(&c) { format!("{cell:>width$}") } else { format!("{cell:<width$}") }
                },
            )
            .collect();
        println!("{}", cells.join("  ").trim_end());
        if i == 0 {
            println!("{}", widths.iter().map(|w| "-".repeat(*w)).collect::<Vec<_>>().join("  "));
        }
    }
}

/// `(version, requirements, scenario) -> reason`, from [`EXPECTED_FAILURES`].
pub(super) fn read_expected_failures() -> Result<BTreeMap<Key, String>> {
    let path = project_root().join(EXPECTED_FAILURES);
    let text = fs::read_to_string(&path).map_err(|e| format!("conformance: cannot read {}: {e}", path.display()))?;
    parse_expected_failures(&text).map_err(|e| format!("conformance: {EXPECTED_FAILURES}: {e}"))
}

/// Lines `<version> <scenario>  # reason` (the scenario run alone) or `<version> <requirements>
/// <scenario>  # reason` (the scenario in the run of a requirement set, e.g. `2026-07-28`);
/// blank lines and lines starting with `#` are skipped.
pub(super) fn parse_expected_failures(text: &str) -> Result<BTreeMap<Key, String>> {
    let mut entries = BTreeMap::new();
    for (n, line) in text.lines().enumerate() {
        let (entry, reason) = line.split_once('#').unwrap_or((line, ""));
        let words: Vec<&str> = entry.split_whitespace().collect();
        let (version, requirements, scenario) = match words.as_slice() {
            [] => continue,
            [version, scenario] => (*version, None, *scenario),
            [version, requirements, scenario] => (*version, Some(*requirements), *scenario),
            _ => {
                return Err(format!(
                    "line {}: expected `<version> [<requirements>] <scenario>  # reason`, got {line:?}",
                    n + 1
                ));
            }
        };
        if !SUITE_VERSIONS.contains(&version) {
            return Err(format!("line {}: unknown suite version {version:?}", n + 1));
        }
        if let Some(revision) = requirements
            && !requirement_sets(version).contains(&revision)
        {
            return Err(format!("line {}: suite {version} runs no requirement set {revision:?}", n + 1));
        }
        let shown = show_run(version, requirements);
        if reason.trim().is_empty() {
            return Err(format!("line {}: `{shown} {scenario}` needs a `# reason`", n + 1));
        }
        let key = (version.to_owned(), requirements.map(str::to_owned), scenario.to_owned());
        if entries.insert(key, reason.trim().to_owned()).is_some() {
            return Err(format!("line {}: `{shown} {scenario}` is listed twice", n + 1));
        }
    }
    Ok(entries)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expected_failures_need_a_known_version_and_a_reason() {
        let text = "# comment\n\n0.1.16 auth/basic-cimd  # no OAuth yet\n\
                    0.2.0-alpha.12 2026-07-28 auth/basic-cimd  # no OAuth yet either\n";
        let parsed = parse_expected_failures(text).unwrap();
        assert_eq!(parsed[&("0.1.16".to_owned(), None, "auth/basic-cimd".to_owned())], "no OAuth yet");
        let in_set = ("0.2.0-alpha.12".to_owned(), Some("2026-07-28".to_owned()), "auth/basic-cimd".to_owned());
        assert_eq!(parsed[&in_set], "no OAuth yet either");
        assert!(parse_expected_failures("0.1.16 auth/basic-cimd\n").is_err());
        assert!(parse_expected_failures("9.9.9 x  # why\n").is_err());
        assert!(parse_expected_failures("0.1.16 x y  # why\n").is_err(), "0.1.16 runs no requirement set");
        assert!(parse_expected_failures("0.2.0-alpha.12 2024-11-05 x  # why\n").is_err(), "not a set we run");
        assert!(parse_expected_failures("0.2.0-alpha.12 2026-07-28 x y  # why\n").is_err());
        assert!(parse_expected_failures("0.1.16 x  # a\n0.1.16 x  # b\n").is_err());
        let twice = "0.2.0-alpha.12 2025-11-25 x  # a\n0.2.0-alpha.12 2025-11-25 x  # b\n";
        assert!(parse_expected_failures(twice).is_err());
        let apart = "0.2.0-alpha.12 x  # a\n0.2.0-alpha.12 2025-11-25 x  # b\n0.2.0-alpha.12 2026-07-28 x  # c\n";
        assert_eq!(parse_expected_failures(apart).unwrap().len(), 3, "each run is its own entry");
    }

    #[test]
    fn rows_keep_their_run_apart() {
        let alone = Row::new("0.2.0-alpha.12", None, "auth/dpop");
        let in_set = Row::new("0.2.0-alpha.12", Some("2026-07-28"), "auth/dpop");
        assert_ne!(alone.key(), in_set.key());
        assert_eq!(in_set.run(), "0.2.0-alpha.12 --requirements 2026-07-28");
        let results = Path::new("/r");
        assert_eq!(alone.results_dir(results), Path::new("/r/0.2.0-alpha.12/auth/dpop"));
        assert_eq!(in_set.results_dir(results), Path::new("/r/0.2.0-alpha.12/requirements-2026-07-28/auth/dpop"));
        assert_eq!(expected_line(&in_set.key()), "0.2.0-alpha.12 2026-07-28 auth/dpop");
    }

    #[test]
    fn a_required_scenario_must_pass_a_check() {
        let mut row = Row::new("0.1.16", None, "initialize");
        assert!(!row.passes(), "no check passed");
        assert_eq!(row.outcome(false), Outcome::NotExercised);
        row.passed = 1;
        assert!(row.passes());
        row.problem = Some("the client did not finish".into());
        assert!(!row.passes());
        assert_eq!(row.outcome(false), Outcome::Fail);
    }

    #[test]
    fn a_scenario_whose_every_check_was_skipped_is_not_exercised() {
        let mut row = Row::new("0.2.0-alpha.12", None, "sep-2640-client-verify-digest");
        row.skipped = 1;
        assert!(!row.exercised());
        assert!(!row.passes(), "all skipped is not a pass");
        assert_eq!(row.outcome(false), Outcome::NotExercised, "claimed: scored and not listed");
        assert!(row.outcome(false).fails_the_run());
        assert_eq!(row.outcome(true), Outcome::NotExercisedListed, "listed: not claimed");
        assert!(!row.outcome(true).fails_the_run());
        row.scored = false;
        assert_eq!(row.outcome(false), Outcome::NotExercisedUnscored, "a set runs it but never scores it");
        assert!(!row.outcome(false).fails_the_run());

        row.scored = true;
        row.passed = 1;
        assert_eq!(row.outcome(false), Outcome::Pass, "one passed check among skipped ones exercises it");
        assert_eq!(row.outcome(true), Outcome::PassListed);
        row.failed = 1;
        assert_eq!(row.outcome(false), Outcome::Fail);
        assert_eq!(row.outcome(true), Outcome::ExpectedFailure);
        let mut skipped_with_problem = Row::new("0.1.16", None, "x");
        skipped_with_problem.skipped = 2;
        skipped_with_problem.problem = Some("the suite exited with 1".into());
        assert_eq!(skipped_with_problem.outcome(false), Outcome::Fail, "a broken run is a failure, not unexercised");
        let required = Row::new("0.1.16", None, "tools_call");
        assert_eq!(required.outcome(true), Outcome::NotExercised, "a required scenario is always claimed");
    }
}
