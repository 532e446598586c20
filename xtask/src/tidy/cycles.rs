//! No module cycles but the ones ARCHITECTURE.md names.
//!
//! Every crate root of every workspace member (`src/lib.rs`, `src/main.rs`, `src/bin/*.rs`) is
//! read into a module graph ([`super::modules`]). A cycle between sibling modules is a violation
//! unless the `### Module cycles` section of ARCHITECTURE.md lists it, as a line
//!
//! ```text
//! - `crate`: `module::a` <-> `module::b`: why
//! ```
//!
//! where `crate` is the member's directory (or the root file, for a binary) and the modules are
//! the cycle's members in any order. A listed cycle that no longer exists is a violation too, so
//! the list cannot drift from the code.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

use super::modules::{Crate, Cycle};
use super::{Violation, violation, workspace_members};

/// The file that names the allowed cycles.
pub const ARCHITECTURE: &str = "ARCHITECTURE.md";

/// The heading of the section that lists them.
pub const SECTION: &str = "### Module cycles";

/// One allowed cycle: the crate and its modules.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct AllowedCycle {
    /// The member directory (or a binary's root file).
    pub krate: String,
    /// The modules, sorted.
    pub modules: BTreeSet<String>,
}

/// The cycles the [`SECTION`] of `architecture` allows.
pub fn allowed_cycles(architecture: &str) -> Vec<AllowedCycle> {
    let Some(start) = architecture.lines().position(|l| l.trim() == SECTION) else {
        return Vec::new();
    };
    architecture
        .lines()
        .skip(start + 1)
        .take_while(|l| !l.starts_with('#'))
        .filter_map(|line| parse_entry(line.trim()))
        .collect()
}

/// `` - `crate`: `a` <-> `b`: why `` into the crate and its modules.
fn parse_entry(line: &str) -> Option<AllowedCycle> {
    let rest = line.strip_prefix("- `")?;
    let (krate, rest) = rest.split_once("`: ")?;
    let mut modules = BTreeSet::new();
    let mut rest = rest;
    loop {
        let (module, after) = rest.strip_prefix('`')?.split_once('`')?;
        modules.insert(module.to_owned());
        match after.strip_prefix(" <-> ") {
            Some(next) => rest = next,
            None => break,
        }
    }
    (modules.len() > 1).then(|| AllowedCycle { krate: krate.to_owned(), modules })
}

/// The crate roots of a workspace member: its library, its main binary and `src/bin` binaries,
/// each with the label an allowed cycle names it by.
fn crate_roots(root: &Path, member: &str) -> Vec<(String, PathBuf)> {
    let src = Path::new(member).join("src");
    let mut roots = Vec::new();
    if root.join(src.join("lib.rs")).is_file() {
        roots.push((member.to_owned(), src.join("lib.rs")));
    }
    let mut binaries = vec![src.join("main.rs")];
    if let Ok(entries) = fs::read_dir(root.join(src.join("bin"))) {
        let mut found: Vec<PathBuf> = entries
            .filter_map(|e| e.ok())
            .map(|e| e.path())
            .filter_map(|path| {
                let name = path.file_name()?.to_str()?.to_owned();
                let relative = src.join("bin").join(&name);
                if name.ends_with(".rs") { Some(relative) } else { Some(relative.join("main.rs")) }
            })
            .collect();
        found.sort();
        binaries.extend(found);
    }
    for file in binaries {
        if root.join(&file).is_file() {
            let label = file.to_string_lossy().replace('\\', "/");
            roots.push((label, file));
        }
    }
    roots
}

/// Every cycle of every crate root of the workspace at `root`, labelled, plus unreadable files.
pub fn workspace_cycles(root: &Path, out: &mut Vec<Violation>) -> Vec<(String, Cycle)> {
    let manifest = fs::read_to_string(root.join("Cargo.toml")).unwrap_or_default();
    let mut found = Vec::new();
    for member in workspace_members(&manifest) {
        for (label, file) in crate_roots(root, &member) {
            let (krate, problems) = Crate::read(root, &file);
            for (file, problem) in problems {
                out.push(violation(file, problem));
            }
            found.extend(krate.cycles().into_iter().map(|cycle| (label.clone(), cycle)));
        }
    }
    found
}

/// Report each cycle ARCHITECTURE.md does not allow, and each allowed one that is gone.
pub fn check_module_cycles(root: &Path, out: &mut Vec<Violation>) {
    let architecture = fs::read_to_string(root.join(ARCHITECTURE)).unwrap_or_default();
    let allowed = allowed_cycles(&architecture);
    let mut seen = BTreeSet::new();
    for (label, cycle) in workspace_cycles(root, out) {
        let modules: BTreeSet<String> = cycle.modules.iter().cloned().collect();
        let key = AllowedCycle { krate: label.clone(), modules };
        if allowed.contains(&key) {
            seen.insert(key);
            continue;
        }
        let uses: Vec<String> = cycle
            .edges
            .iter()
            .map(|(from, to, e)| format!("{from} -> {to} ({}:{} `{}`)", e.file.display(), e.line, e.path))
            .collect();
        let file = cycle.edges.first().map(|(_, _, e)| e.file.clone()).unwrap_or_else(|| PathBuf::from(&label));
        let reason = format!(
            "module cycle in {label}: {}; break it, or name it under `{SECTION}` in {ARCHITECTURE} with why \
             (uses: {})",
            cycle.modules.join(" <-> "),
            uses.join("; ")
        );
        out.push(violation(file, reason));
    }
    for stale in allowed.into_iter().filter(|a| !seen.contains(a)) {
        let modules: Vec<&str> = stale.modules.iter().map(String::as_str).collect();
        let reason = format!(
            "`{SECTION}` allows a cycle in {} that the code no longer has: {}; remove the line",
            stale.krate,
            modules.join(" <-> ")
        );
        out.push(violation(ARCHITECTURE, reason));
    }
}
