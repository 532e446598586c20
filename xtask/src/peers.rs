//! The real peers: MCP servers that no one here wrote, installed into `target/peers/` and run by
//! the interop tests ([`PEER_TESTS`]: `tests/tests/peers_stdio.rs`, `peers_http.rs`,
//! `peers_python.rs`, `peers_tasks.rs`, `peers_bridge.rs`, `peers_manager.rs`, `peers_control.rs`, `peers_gateway.rs`,
//! `peers_oauth.rs` and `peers_oauth_m2m.rs`, and the `mcp` command's
//! `mcp-cli/tests/peers_cli.rs` and `peers_cli_oauth.rs`).
//!
//! - `target/peers/npm`: the npm reference servers and the `oidc-provider` authorization server,
//!   at the exact versions of [`NPM_PACKAGES`];
//! - `target/peers/venv`: a Python virtual environment with [`PYTHON_PACKAGES`]: the
//!   `mcp-server-time` server, the Python `mcp` SDK and `fastmcp`, which run the test servers kept
//!   in this repository (`tests/peers/python/`);
//! - `target/peers/venv-tasks`: a second one with [`TASKS_PYTHON_PACKAGES`], FastMCP's tasks
//!   runtime `fastmcp-tasks`, which pins an older `fastmcp` than the first venv's.
//!
//! Provisioning is the only step that touches the network (the npm registry and PyPI). It is
//! idempotent: a stamp file in each directory records what was installed, and a directory whose
//! stamp names the pinned versions is left alone. Every failure stops with the command that
//! failed and the end of its output. Once provisioned, the servers run offline.
//!
//! The tests find the peers through two environment variables, set by `cargo xtask test` and
//! `cargo xtask peers`: [`PEERS_DIR_ENV`] (this directory, absolute) and [`REQUIRE_PEERS_ENV`]
//! (`1`: a missing peer fails the test instead of skipping it).

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use xtask::command::{output_tail, shown};
use xtask::project_root;

/// npm packages, pinned to exact versions.
///
/// `oidc-provider` is the OAuth authorization server of `peers_oauth.rs` and `peers_oauth_m2m.rs`
/// (run with the system `node`, as the reference servers are, through
/// `tests/peers/oauth/oidc-as.mjs` and `oidc-m2m.mjs`). 9.x declares
/// no `engines`, but warns at start-up that it wants Node 22 LTS or later; it runs on Node 20.19+
/// (its `jose` 6 dependency is loaded through `require(esm)`), and the tests pass on Node 20.
pub const NPM_PACKAGES: &[(&str, &str)] = &[
    ("@modelcontextprotocol/server-everything", "2026.8.31"),
    ("@modelcontextprotocol/server-filesystem", "2026.8.31"),
    ("@modelcontextprotocol/server-memory", "2026.8.31"),
    ("oidc-provider", "9.13.3"),
];

/// Python packages installed into the venv, pinned to exact versions.
///
/// `fastmcp` 4.2.3 is the newest release whose requirements `mcp` 2.3.0 satisfies (it runs on that
/// SDK; `pip install --dry-run` resolves the three together without changing `mcp`).
pub const PYTHON_PACKAGES: &[(&str, &str)] =
    &[("mcp-server-time", "2026.10.19"), ("mcp", "2.3.0"), ("fastmcp", "4.2.3")];

/// Python packages of the second venv: `fastmcp-tasks` (the FastMCP project's runtime of the
/// 2026-07-28 tasks extension) with the `fastmcp` it pins (`fastmcp[tasks]` 4.2.3 asks for a
/// `fastmcp-tasks` 4.2.3 that was never released, so 4.1.4 is the newest pair that installs).
pub const TASKS_PYTHON_PACKAGES: &[(&str, &str)] =
    &[("mcp", "2.3.0"), ("fastmcp", "4.1.4"), ("fastmcp-tasks", "4.1.4")];

/// The test files that run against the peers, as (package, test target) pairs.
pub const PEER_TESTS: &[(&str, &str)] = &[
    ("tests", "peers_stdio"),
    ("tests", "peers_http"),
    ("tests", "peers_python"),
    ("tests", "peers_tasks"),
    ("tests", "peers_bridge"),
    ("tests", "peers_manager"),
    ("tests", "peers_control"),
    ("tests", "peers_gateway"),
    ("tests", "peers_oauth"),
    ("tests", "peers_oauth_m2m"),
    ("mcp-cli", "peers_cli"),
    ("mcp-cli", "peers_cli_oauth"),
];

/// Where the tests find the provisioned peers (an absolute path).
pub const PEERS_DIR_ENV: &str = "MCP_PEERS_DIR";

/// Set to `1` when a missing peer must fail the tests instead of skipping them.
pub const REQUIRE_PEERS_ENV: &str = "MCP_REQUIRE_PEERS";

/// The stamp file that records a finished install, inside each peer directory.
const STAMP: &str = ".provisioned";

type Result<T = ()> = std::result::Result<T, String>;

/// `<workspace>/target/peers`.
pub fn peers_dir() -> PathBuf {
    project_root().join("target").join("peers")
}

/// Install every peer that is not installed at its pinned version yet. Returns the peers
/// directory.
pub fn provision() -> Result<PathBuf> {
    let dir = peers_dir();
    fs::create_dir_all(&dir).map_err(|e| format!("peers: cannot create {}: {e}", dir.display()))?;
    provision_npm(&dir.join("npm"))?;
    provision_venv(&dir.join("venv"), PYTHON_PACKAGES)?;
    provision_venv(&dir.join("venv-tasks"), TASKS_PYTHON_PACKAGES)?;
    Ok(dir)
}

fn provision_npm(dir: &Path) -> Result {
    let want = stamp_text(NPM_PACKAGES);
    let installed = NPM_PACKAGES.iter().all(|(name, _)| package_dir(dir, name).join("package.json").is_file());
    if installed && read_stamp(dir).as_deref() == Some(want.as_str()) {
        println!("peers: npm packages already installed in {} ({})", dir.display(), one_line(&want));
        return Ok(());
    }
    require_tool("node", &["--version"])?;
    require_tool("npm", &["--version"])?;
    fs::create_dir_all(dir).map_err(|e| format!("peers: cannot create {}: {e}", dir.display()))?;
    let _ = fs::remove_file(dir.join(STAMP));
    let mut npm = Command::new("npm");
    npm.arg("install").arg("--prefix").arg(dir).args(["--no-audit", "--no-fund", "--save-exact"]);
    npm.args(NPM_PACKAGES.iter().map(|(name, version)| format!("{name}@{version}")));
    run_captured("npm install", npm)?;
    // npm may resolve differently than asked (a stale lock file, an override): check each one.
    for (name, version) in NPM_PACKAGES {
        let manifest = package_dir(dir, name).join("package.json");
        let mut node = Command::new("node");
        node.arg("-p").arg("require(process.argv[1]).version").arg(&manifest);
        let found = capture("reading an installed version", node)?;
        let found = String::from_utf8_lossy(&found.stdout).trim().to_string();
        if found != *version {
            return Err(format!(
                "peers: npm installed {name}@{found}, but {version} is pinned (see {})",
                dir.display()
            ));
        }
    }
    write_stamp(dir, &want)?;
    println!("peers: installed {} into {}", one_line(&want), dir.display());
    Ok(())
}

fn provision_venv(dir: &Path, packages: &[(&str, &str)]) -> Result {
    let want = stamp_text(packages);
    let python = dir.join("bin").join("python");
    if python.is_file() && read_stamp(dir).as_deref() == Some(want.as_str()) {
        println!("peers: Python packages already installed in {} ({})", dir.display(), one_line(&want));
        return Ok(());
    }
    require_tool("python3", &["--version"])?;
    let _ = fs::remove_file(dir.join(STAMP));
    if !python.is_file() {
        let mut venv = Command::new("python3");
        venv.args(["-m", "venv"]).arg(dir);
        run_captured("python3 -m venv", venv)?;
    }
    let mut pip = Command::new(&python);
    pip.args(["-m", "pip", "install", "--no-input", "--disable-pip-version-check"]);
    pip.args(packages.iter().map(|(name, version)| format!("{name}=={version}")));
    run_captured("pip install", pip)?;
    for (name, version) in packages {
        let mut show = Command::new(&python);
        show.args(["-m", "pip", "show", "--disable-pip-version-check", name]);
        let out = capture("pip show", show)?;
        let text = String::from_utf8_lossy(&out.stdout);
        let found = text.lines().find_map(|l| l.strip_prefix("Version:")).map(str::trim).unwrap_or("?");
        if found != *version {
            return Err(format!(
                "peers: pip installed {name}=={found}, but {version} is pinned (see {})",
                dir.display()
            ));
        }
    }
    write_stamp(dir, &want)?;
    println!("peers: installed {} into {}", one_line(&want), dir.display());
    Ok(())
}

fn package_dir(npm_dir: &Path, name: &str) -> PathBuf {
    name.split('/').fold(npm_dir.join("node_modules"), |path, part| path.join(part))
}

fn stamp_text(packages: &[(&str, &str)]) -> String {
    packages.iter().map(|(name, version)| format!("{name}@{version}\n")).collect()
}

fn one_line(stamp: &str) -> String {
    stamp.lines().collect::<Vec<_>>().join(", ")
}

fn read_stamp(dir: &Path) -> Option<String> {
    fs::read_to_string(dir.join(STAMP)).ok()
}

fn write_stamp(dir: &Path, text: &str) -> Result {
    let path = dir.join(STAMP);
    fs::write(&path, text).map_err(|e| format!("peers: cannot write {}: {e}", path.display()))
}

fn require_tool(program: &str, args: &[&str]) -> Result {
    match Command::new(program).args(args).output() {
        Ok(out) if out.status.success() => Ok(()),
        Ok(out) => Err(format!(
            "peers: `{program} {}` failed ({}); the real peers need {program}\n{}",
            args.join(" "),
            out.status,
            output_tail(&out)
        )),
        Err(e) => Err(format!("peers: `{program}` is needed to install the real peers, but it cannot be run: {e}")),
    }
}

/// Run a command with its output captured, saying so first; on failure, the error names the
/// command and quotes the end of what it printed.
fn run_captured(title: &str, command: Command) -> Result<Output> {
    println!("peers: {title}: {}", shown(&command));
    capture(title, command)
}

/// [`run_captured`] without announcing the command (for quick queries).
fn capture(title: &str, command: Command) -> Result<Output> {
    xtask::command::capture("peers", title, command)
}
