//! The workspace keeps its architecture invariants: the checks of `cargo xtask tidy`, run as a
//! test so that `cargo test` alone catches a broken rule.

#[test]
fn workspace_is_tidy() {
    let violations = xtask::tidy(&xtask::project_root());
    let report: Vec<String> = violations.iter().map(ToString::to_string).collect();
    assert!(report.is_empty(), "tidy found {} violation(s):\n  {}", report.len(), report.join("\n  "));
}
