//! The checkers on small fake workspaces in temporary directories.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use super::*;

/// A temporary directory, removed on drop.
pub(super) struct TempDir(pub(super) PathBuf);

impl TempDir {
    pub(super) fn new() -> TempDir {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("xtask-tidy-{}-{n}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }

    pub(super) fn write(&self, file: &str, text: &str) {
        let path = self.0.join(file);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, text).unwrap();
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

/// A workspace that keeps every invariant: the crates the rules name, each a documented library.
fn fake_workspace() -> TempDir {
    let dir = TempDir::new();
    dir.write(
        "Cargo.toml",
        "[workspace]\nmembers = [\n    \"mcp-protocol\", # the core\n    \"tool-system\",\n    \"mcp-manager\",\n]\n",
    );
    for krate in ["mcp-protocol", "tool-system", "mcp-manager"] {
        dir.write(&format!("{krate}/Cargo.toml"), &format!("[package]\nname = \"{krate}\"\n\n[dependencies]\n"));
        dir.write(&format!("{krate}/src/lib.rs"), "//! Docs.\n");
    }
    dir
}

fn violations(dir: &TempDir) -> Vec<String> {
    tidy(&dir.0).iter().map(ToString::to_string).collect()
}

fn lines(n: usize) -> String {
    "// line\n".repeat(n)
}

#[test]
fn a_clean_workspace_has_no_violations() {
    assert_eq!(violations(&fake_workspace()), Vec::<String>::new());
}

#[test]
fn protocol_depending_on_tokio_is_flagged() {
    let dir = fake_workspace();
    dir.write(
        "mcp-protocol/Cargo.toml",
        "[package]\nname = \"mcp-protocol\"\n\n[dependencies]\nserde = \"1\"\ntokio = { workspace = true }\n",
    );
    let found = violations(&dir);
    assert_eq!(found.len(), 1, "{found:?}");
    let expected = Path::new("mcp-protocol").join("Cargo.toml").display().to_string();
    assert!(found[0].starts_with(&format!("{expected}: line 6: depends on `tokio`")), "{found:?}");
}

#[test]
fn protocol_may_use_tokio_in_tests_only() {
    let dir = fake_workspace();
    dir.write(
        "mcp-protocol/Cargo.toml",
        "[dependencies]\nserde = \"1\"\n\n[dev-dependencies]\ntokio = \"1\"\nmcp-transport = \"0\"\n",
    );
    assert_eq!(violations(&dir), Vec::<String>::new());
}

#[test]
fn renamed_target_and_table_dependencies_are_seen() {
    let dir = fake_workspace();
    let manifest = "[target.'cfg(unix)'.dependencies]\nrt = { package = \"tokio\", version = \"1\" }\n\n\
                    [dependencies.hyper-util]\nversion = \"0.1\"\n\n[build-dependencies]\nmcp-transport.workspace = true\n";
    dir.write("mcp-protocol/Cargo.toml", manifest);
    let found = violations(&dir);
    assert_eq!(found.len(), 3, "{found:?}");
    assert!(found[0].contains("`tokio`") && found[1].contains("`hyper-util`") && found[2].contains("`mcp-transport`"));
}

#[test]
fn tool_system_depending_on_mcp_is_flagged() {
    let dir = fake_workspace();
    dir.write("tool-system/Cargo.toml", "[dependencies]\nmcp-protocol = { path = \"../mcp-protocol\" }\n");
    let found = violations(&dir);
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(found[0].contains("tool-system knows nothing of MCP"));
}

#[test]
fn manager_depending_on_host_bridge_is_flagged() {
    let dir = fake_workspace();
    dir.write(
        "mcp-manager/Cargo.toml",
        "[dependencies]\nmcp-protocol = \"0\"\n\n[dependencies.host-bridge]\npath = \"../host-bridge\"\n",
    );
    let found = violations(&dir);
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(found[0].contains("line 4: depends on `host-bridge`"), "{found:?}");
}

#[test]
fn a_missing_manifest_is_flagged() {
    let dir = fake_workspace();
    fs::remove_file(dir.0.join("tool-system/Cargo.toml")).unwrap();
    let found = violations(&dir);
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(found[0].contains("dependency rule is unchecked"));
}

#[test]
fn files_over_the_line_limit_are_flagged() {
    let dir = fake_workspace();
    dir.write("mcp-protocol/src/fine.rs", &lines(MAX_LINES));
    dir.write("mcp-protocol/src/long.rs", &lines(MAX_LINES + 1));
    dir.write("mcp-protocol/fuzz/target/generated.rs", &lines(5000));
    dir.write("target/debug/build/out.rs", &lines(5000));
    let found = violations(&dir);
    assert_eq!(found.len(), 1, "{found:?}");
    let expected = Path::new("mcp-protocol").join("src").join("long.rs").display().to_string();
    assert_eq!(found[0], format!("{expected}: 801 lines, more than 800: split it into modules"));
}

#[test]
fn a_library_without_crate_docs_is_flagged() {
    let dir = fake_workspace();
    dir.write("tool-system/src/lib.rs", "// a plain comment\n//! Docs too late.\n");
    dir.write("mcp-manager/src/main.rs", "fn main() {}\n"); // binaries are not checked
    let found = violations(&dir);
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(found[0].contains("lib.rs: a library's lib.rs must start with crate documentation"));
}

#[test]
fn dependency_parsing() {
    let manifest = "[package]\nname = \"x\" # not a dependency\n\n[dependencies]\nserde = \"1\"\n\
                    \"quoted\" = \"1\"\nalias = { package = \"real\" }\n\n[dev-dependencies]\nproptest = \"1\"\n\n\
                    [target.x86_64-unknown-linux-gnu.build-dependencies]\ncc = \"1\"\n\n[features]\ndefault = []\n";
    let names: Vec<(usize, String)> = dependencies(manifest);
    let expected = [(5, "serde"), (6, "quoted"), (7, "real"), (13, "cc")];
    assert_eq!(names, expected.map(|(line, name)| (line, name.to_string())));
}

#[test]
fn members_parsing() {
    assert_eq!(workspace_members("[workspace]\nmembers = [\"a\", \"b\"] # c\n"), ["a", "b"]);
    assert_eq!(workspace_members("[package]\nname = \"a\"\n"), Vec::<String>::new());
}
