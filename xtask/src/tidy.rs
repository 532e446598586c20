//! Architecture invariants, checked by reading files (nothing is built).
//!
//! - Dependency rules, read from each crate's `Cargo.toml` (see [`DEPENDENCY_RULES`]).
//! - No `.rs` file is longer than [`MAX_LINES`] lines (`target` directories are skipped).
//! - Every library crate's `src/lib.rs` starts with crate documentation (`//!`).
//! - No crate's modules form a cycle other than those ARCHITECTURE.md names (see [`cycles`]
//!   for the rule and [`modules`] for how the graph is read).
//!
//! `Cargo.toml` files are read line by line, not with a TOML parser: the rules need only the
//! names under `[dependencies]`, `[build-dependencies]`, their `[target.'…'.…]` forms and
//! `[dependencies.name]` tables. A renamed dependency counts under its `package` name.
//! Dev-dependencies are not checked: tests may use anything.

use std::fmt;
use std::fs;
use std::path::{Path, PathBuf};

pub mod cycles;
mod lex;
pub mod modules;

/// The longest allowed `.rs` file, in lines.
pub const MAX_LINES: usize = 800;

/// A dependency rule: `krate` may not depend on any crate matching `forbidden`.
#[derive(Debug)]
pub struct DependencyRule {
    /// The crate (its directory under the workspace root).
    pub krate: &'static str,
    /// Forbidden dependency names; a trailing `*` matches any suffix.
    pub forbidden: &'static [&'static str],
    /// Why, as printed with a violation.
    pub why: &'static str,
}

/// The dependency graph's invariants (see ARCHITECTURE.md).
pub const DEPENDENCY_RULES: &[DependencyRule] = &[
    DependencyRule {
        krate: "mcp-protocol",
        forbidden: &["tokio", "tokio-*", "reqwest", "hyper", "hyper-*", "mcp-*"],
        why: "mcp-protocol is sans-IO and depends on no other workspace crate",
    },
    DependencyRule { krate: "tool-system", forbidden: &["mcp-*"], why: "tool-system knows nothing of MCP" },
    DependencyRule {
        krate: "mcp-manager",
        forbidden: &["host-bridge"],
        why: "mcp-manager defines the host callback traits and host-bridge implements them, not the reverse",
    },
];

/// One broken invariant: the file at fault (relative to the workspace root) and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// The file at fault.
    pub file: PathBuf,
    /// What is wrong with it.
    pub reason: String,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.file.display(), self.reason)
    }
}

/// Run every check on the workspace at `root`. An empty list means every invariant holds.
pub fn tidy(root: &Path) -> Vec<Violation> {
    let mut violations = Vec::new();
    check_dependencies(root, &mut violations);
    check_crate_docs(root, &mut violations);
    check_file_lengths(root, root, &mut violations);
    cycles::check_module_cycles(root, &mut violations);
    violations
}

fn violation(file: impl Into<PathBuf>, reason: impl Into<String>) -> Violation {
    Violation { file: file.into(), reason: reason.into() }
}

fn check_dependencies(root: &Path, out: &mut Vec<Violation>) {
    for rule in DEPENDENCY_RULES {
        let file = Path::new(rule.krate).join("Cargo.toml");
        let manifest = match fs::read_to_string(root.join(&file)) {
            Ok(text) => text,
            Err(err) => {
                out.push(violation(file, format!("cannot read ({err}), so its dependency rule is unchecked")));
                continue;
            }
        };
        for (line, name) in dependencies(&manifest) {
            if rule.forbidden.iter().any(|pattern| matches(pattern, &name)) {
                let reason = format!("line {line}: depends on `{name}`, but {}", rule.why);
                out.push(violation(&file, reason));
            }
        }
    }
}

fn matches(pattern: &str, name: &str) -> bool {
    match pattern.strip_suffix('*') {
        Some(prefix) => name.starts_with(prefix),
        None => name == pattern,
    }
}

/// The normal and build dependencies a manifest names, each with its 1-based line number.
fn dependencies(manifest: &str) -> Vec<(usize, String)> {
    enum Section {
        Other,
        /// `[dependencies]`: every `name = ...` line is a dependency.
        List,
        /// `[dependencies.name]`: one dependency, the entry at this index of the output.
        Table(usize),
    }
    let mut section = Section::Other;
    let mut found: Vec<(usize, String)> = Vec::new();
    for (index, raw) in manifest.lines().enumerate() {
        let line = raw.split('#').next().unwrap_or_default().trim();
        if let Some(header) = line.strip_prefix('[') {
            section = match dependency_table(header.trim_end_matches(']').trim()) {
                None => Section::Other,
                Some(None) => Section::List,
                Some(Some(name)) => {
                    found.push((index + 1, name.to_string()));
                    Section::Table(found.len() - 1)
                }
            };
            continue;
        }
        let Some((key, value)) = line.split_once('=') else {
            continue;
        };
        match section {
            Section::Other => {}
            Section::List => {
                let key = unquote(key.trim().split('.').next().unwrap_or_default());
                let name = package_rename(value).unwrap_or(key);
                found.push((index + 1, name.to_string()));
            }
            Section::Table(entry) => {
                if let Some(name) = package_rename(line) {
                    found[entry].1 = name.to_string();
                }
            }
        }
    }
    found
}

/// For a table header (without brackets): `None` if it is not a dependency table,
/// `Some(None)` for a list of dependencies, `Some(Some(name))` for one dependency's table.
fn dependency_table(header: &str) -> Option<Option<&str>> {
    let mut rest = header;
    if let Some(target) = header.strip_prefix("target.") {
        // The target is `'cfg(...)'`, `"cfg(...)"` or a bare triple without dots.
        rest = match target.chars().next() {
            Some(quote @ ('\'' | '"')) => target[1..].split_once(quote)?.1.strip_prefix('.')?,
            _ => target.split_once('.')?.1,
        };
    }
    for table in ["dependencies", "build-dependencies"] {
        if rest == table {
            return Some(None);
        }
        if let Some(name) = rest.strip_prefix(table).and_then(|r| r.strip_prefix('.')) {
            return Some(Some(unquote(name)));
        }
    }
    None
}

/// The `package = "real-name"` of a renamed dependency, if any.
fn package_rename(text: &str) -> Option<&str> {
    let after = text.split_once("package")?.1.trim_start().strip_prefix('=')?;
    let quoted = after.trim_start().strip_prefix('"')?;
    quoted.split_once('"').map(|(name, _)| name)
}

fn unquote(text: &str) -> &str {
    text.trim().trim_matches(|c| c == '"' || c == '\'')
}

fn check_crate_docs(root: &Path, out: &mut Vec<Violation>) {
    let manifest = match fs::read_to_string(root.join("Cargo.toml")) {
        Ok(text) => text,
        Err(err) => {
            return out.push(violation("Cargo.toml", format!("cannot read the workspace manifest ({err})")));
        }
    };
    for member in workspace_members(&manifest) {
        let file = Path::new(&member).join("src").join("lib.rs");
        let Ok(text) = fs::read_to_string(root.join(&file)) else {
            continue;
        }; // not a library
        if !text.starts_with("//!") {
            out.push(violation(file, "a library's lib.rs must start with crate documentation (`//!`)"));
        }
    }
}

/// The quoted entries of the workspace's `members = [...]` array (globs are not expanded).
fn workspace_members(manifest: &str) -> Vec<String> {
    let text: String =
        manifest.lines().map(|line| line.split('#').next().unwrap_or_default()).collect::<Vec<_>>().join("\n");
    let Some(start) = text.find("members") else {
        return Vec::new();
    };
    let list = &text[start..];
    let (Some(open), Some(close)) = (list.find('['), list.find(']')) else {
        return Vec::new();
    };
    list[open + 1..close].split(',').map(unquote).filter(|m| !m.is_empty()).map(String::from).collect()
}

fn check_file_lengths(root: &Path, dir: &Path, out: &mut Vec<Violation>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return out.push(violation(relative(root, dir), "cannot read directory"));
    };
    let mut paths: Vec<PathBuf> = entries.filter_map(|entry| entry.ok().map(|e| e.path())).collect();
    paths.sort();
    for path in paths {
        let name = path.file_name().unwrap_or_default().to_string_lossy();
        if path.is_dir() {
            if name != "target" && name != "node_modules" && !name.starts_with('.') {
                check_file_lengths(root, &path, out);
            }
        } else if name.ends_with(".rs") {
            match fs::read_to_string(&path) {
                Ok(text) if text.lines().count() > MAX_LINES => {
                    let reason =
                        format!("{} lines, more than {MAX_LINES}: split it into modules", text.lines().count());
                    out.push(violation(relative(root, &path), reason));
                }
                Ok(_) => {}
                Err(err) => out.push(violation(relative(root, &path), format!("cannot read ({err})"))),
            }
        }
    }
}

fn relative(root: &Path, path: &Path) -> PathBuf {
    path.strip_prefix(root).unwrap_or(path).to_path_buf()
}

#[cfg(test)]
mod tests;
