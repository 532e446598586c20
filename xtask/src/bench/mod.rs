//! `cargo xtask bench [all|matrix|stdio|http|w5|manager|cli|instructions|codec] [flags]`: the
//! benchmarks of issue 19. Every workload runs against two servers, ours (`bench-server`) and one
//! built on the official Rust SDK (`rmcp-bench-server`), with our clients (the `McpConnection`
//! path, the host path, a hand-written client) and rmcp's. The clients and our server are the
//! binaries of the `mcp-bench` package (`bench/mcp-bench`); rmcp's client and server live in
//! `bench/rmcp`, a cargo workspace of its own (one `Cargo.lock`, rmcp pinned), built with
//! `--release --locked` into `target/rmcp-bench`, so rmcp never enters the project's build.
//!
//! - `matrix` ([`matrix`]): W1-W4 (W5 if asked) over stdio and streamable HTTP; the tables of
//!   medians and the table of ratios with their targets. `stdio` and `http` are `matrix`
//!   over one transport; `w5` is `matrix --workload w5`.
//! - `manager` ([`manager`]): one manager over 100 servers of 100 tools.
//! - `instructions` ([`instructions`]): the matrix counted in instructions under callgrind.
//! - `cli` ([`cli`]): a one-shot `mcp tools` against the server's own start-up. Not part of
//!   `all` (it provisions the npm peers). `--runs N` (default 5).
//! - `codec`: `cargo bench -p mcp-protocol --bench codec`, with the flags passed on.
//! - `all` (the default): `codec`, then `matrix` with W1-W5 on every server and transport, then
//!   `manager`.
//!
//! The flags of `matrix` and `instructions` (see [`Selection::parse`]): `--server ours|rmcp`,
//! `--transport stdio|http`, `--workload w1..w5` (each may repeat; default: every server and
//! transport, W1-W4), `--runs N` (default 5) and `--build release|lto` (see [`Build`]); `matrix`
//! also takes `--placement free|split|shared` (see [`placement`]). Benchmarks report; they do not
//! fail on a missed target.

mod cli;
mod instructions;
mod manager;
mod matrix;
mod placement;
mod procs;
mod server_side;
mod stats;
mod tables;

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;

use placement::Placement;
use xtask::project_root;

type Result<T = ()> = std::result::Result<T, String>;

/// Where the rmcp workspace lives, relative to the project's root.
const RMCP_DIR: &str = "bench/rmcp";
/// Where the rmcp workspace is built.
const RMCP_TARGET: &str = "target/rmcp-bench";
const DEFAULT_RUNS: usize = 5;
/// Every workload, in the order the tables show them.
const WORKLOADS: [&str; 5] = ["w1", "w2", "w3", "w4", "w5"];

/// The server a workload runs against.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Server {
    /// `rmcp-bench-server` (`bench/rmcp/server`), the reference: first in every table.
    Rmcp,
    /// `bench-server` (`mcp-bench`).
    Ours,
}

impl Server {
    pub(crate) const ALL: [Server; 2] = [Server::Rmcp, Server::Ours];

    pub(crate) fn name(self) -> &'static str {
        match self {
            Server::Ours => "ours",
            Server::Rmcp => "rmcp",
        }
    }
}

/// How a client reaches the server.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Transport {
    Stdio,
    Http,
}

impl Transport {
    pub(crate) const ALL: [Transport; 2] = [Transport::Stdio, Transport::Http];

    pub(crate) fn name(self) -> &'static str {
        match self {
            Transport::Stdio => "stdio",
            Transport::Http => "http",
        }
    }
}

/// How every benchmark binary is built, ours and rmcp's alike.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Build {
    /// The workspaces' own release profiles (what a host gets by default): the table.
    Release,
    /// The release profiles with fat link-time optimisation and one codegen unit, for both
    /// workspaces, each into a target directory of its own (the default build stays as it is):
    /// what a host that builds its binary that way gets.
    Lto,
}

impl Build {
    /// What the build adds to cargo's environment.
    fn env(self) -> &'static [(&'static str, &'static str)] {
        match self {
            Build::Release => &[],
            Build::Lto => &[("CARGO_PROFILE_RELEASE_LTO", "fat"), ("CARGO_PROFILE_RELEASE_CODEGEN_UNITS", "1")],
        }
    }

    /// Where our binaries and rmcp's are built, under the project's target directory `target`
    /// and its root `root`.
    fn dirs(self, root: &Path, target: &Path) -> (PathBuf, PathBuf) {
        match self {
            Build::Release => (target.to_path_buf(), root.join(RMCP_TARGET)),
            Build::Lto => (target.join("bench-lto"), root.join(format!("{RMCP_TARGET}-lto"))),
        }
    }

    pub(crate) fn describe(self) -> &'static str {
        match self {
            Build::Release => "release profile",
            Build::Lto => "release profile with fat LTO and one codegen unit (ours and rmcp's)",
        }
    }
}

/// What `matrix` and `instructions` run: the servers, transports and workloads asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Selection {
    pub(crate) servers: Vec<Server>,
    pub(crate) transports: Vec<Transport>,
    pub(crate) workloads: Vec<&'static str>,
    pub(crate) runs: usize,
    pub(crate) build: Build,
    /// Where the clients and servers run (`matrix` only).
    pub(crate) placement: Placement,
    /// Whose instructions `instructions` counts (the clients' unless `--side server|both`).
    pub(crate) side: Side,
}

/// Whose instructions `cargo xtask bench instructions` counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Side {
    /// Each client's, the server running natively (the default).
    Client,
    /// The server's, for each client: what that client costs the server.
    Server,
    /// Both, in the same run: the client's, the server's and their sum.
    Both,
}

impl Selection {
    /// Parse `--server ours|rmcp`, `--transport stdio|http`, `--workload w1..w5` (each may
    /// repeat; an absent one means all, W1-W4 for workloads), `--runs N`, `--build
    /// release|lto` (default release), `--placement free|split|shared` (default free, see
    /// [`placement`]) and `--side client|server|both` (default client, see [`server_side`]).
    pub(crate) fn parse(args: &[String]) -> Result<Selection> {
        let (mut servers, mut transports, mut workloads, mut runs) = (Vec::new(), Vec::new(), Vec::new(), None);
        let (mut build, mut placement, mut side) = (Build::Release, Placement::Free, Side::Client);
        let mut args = args.iter();
        while let Some(flag) = args.next() {
            let value = args.next().ok_or_else(|| format!("{flag} needs a value"))?;
            match flag.as_str() {
                "--server" => servers.push(match value.as_str() {
                    "ours" => Server::Ours,
                    "rmcp" => Server::Rmcp,
                    _ => return Err(format!("--server: expected ours or rmcp, not {value:?}")),
                }),
                "--transport" => transports.push(match value.as_str() {
                    "stdio" => Transport::Stdio,
                    "http" => Transport::Http,
                    _ => return Err(format!("--transport: expected stdio or http, not {value:?}")),
                }),
                "--workload" => {
                    workloads.push(WORKLOADS.into_iter().find(|w| w.eq_ignore_ascii_case(value)).ok_or_else(|| {
                        format!("--workload: expected one of {}, not {value:?}", WORKLOADS.join(", "))
                    })?)
                }
                "--runs" => match value.parse::<usize>() {
                    Ok(n) if n > 0 => runs = Some(n),
                    _ => return Err(format!("--runs takes a positive number, not {value:?}")),
                },
                "--build" => {
                    build = match value.as_str() {
                        "release" => Build::Release,
                        "lto" => Build::Lto,
                        _ => return Err(format!("--build: expected release or lto, not {value:?}")),
                    }
                }
                "--placement" => placement = Placement::parse(value)?,
                "--side" => {
                    side = match value.as_str() {
                        "client" => Side::Client,
                        "server" => Side::Server,
                        "both" => Side::Both,
                        _ => return Err(format!("--side: expected client, server or both, not {value:?}")),
                    }
                }
                _ => {
                    return Err(format!(
                        "unknown flag {flag:?} (expected --server, --transport, --workload, --runs, --build, \
                         --placement, --side)"
                    ));
                }
            }
        }
        let mut workloads = all_or(workloads, &WORKLOADS[..4]);
        workloads.sort_by_key(|w| WORKLOADS.iter().position(|x| x == w));
        Ok(Selection {
            servers: all_or(servers, &Server::ALL),
            transports: all_or(transports, &Transport::ALL),
            workloads,
            runs: runs.unwrap_or(DEFAULT_RUNS),
            build,
            placement,
            side,
        })
    }
}

impl Selection {
    /// The selected workloads that some variant runs over `transport` (W5 runs over stdio only).
    pub(crate) fn workloads_over(&self, transport: Transport) -> Vec<&'static str> {
        self.workloads
            .iter()
            .copied()
            .filter(|w| (0..tables::VARIANTS.len()).any(|v| tables::runs_in(v, w, transport)))
            .collect()
    }

    /// The cells a run goes through, in order: each selected transport, then each selected
    /// server, with the workloads some variant runs there; a transport none of them runs over is
    /// left out (W5 alone over HTTP).
    pub(crate) fn cells(&self) -> impl Iterator<Item = (Transport, Server, Vec<&'static str>)> + '_ {
        self.transports.iter().flat_map(move |&transport| {
            let workloads = self.workloads_over(transport);
            let servers = if workloads.is_empty() { &[][..] } else { &self.servers[..] };
            servers.iter().map(move |&server| (transport, server, workloads.clone()))
        })
    }
}

/// `chosen`, sorted and without repeats; `all` when nothing was chosen.
fn all_or<T: Clone + Ord>(mut chosen: Vec<T>, all: &[T]) -> Vec<T> {
    if chosen.is_empty() {
        chosen = all.to_vec();
    }
    chosen.sort();
    chosen.dedup();
    chosen
}

/// `cargo xtask bench [mode] [flags]`.
pub fn bench(args: &[String]) -> Result {
    let (mode, rest) = match args.first().map(String::as_str) {
        Some(mode @ ("all" | "matrix" | "stdio" | "http" | "w5" | "manager" | "cli" | "instructions" | "codec")) => {
            (mode, &args[1..])
        }
        _ => ("all", args),
    };
    let with =
        |extra: &[&str]| -> Vec<String> { extra.iter().map(|s| (*s).to_owned()).chain(rest.iter().cloned()).collect() };
    match mode {
        "codec" => crate::ci::bench(rest),
        "matrix" => matrix::matrix(&Selection::parse(rest)?),
        "stdio" => matrix::matrix(&Selection::parse(&with(&["--transport", "stdio"]))?),
        "http" => matrix::matrix(&Selection::parse(&with(&["--transport", "http"]))?),
        "w5" => matrix::matrix(&Selection::parse(&with(&["--workload", "w5"]))?),
        "manager" => manager::manager(rest),
        "cli" => cli::cli(rest),
        "instructions" => {
            let selection = Selection::parse(rest)?;
            match selection.side {
                Side::Client => instructions::instructions(&selection),
                Side::Server | Side::Both => server_side::instructions(&selection),
            }
        }
        _ => {
            crate::ci::bench(rest)?;
            let every: Vec<String> =
                WORKLOADS.iter().flat_map(|w| ["--workload".to_owned(), (*w).to_owned()]).collect();
            matrix::matrix(&Selection::parse(&every)?)?;
            manager::manager(&[])
        }
    }
}

/// The benchmark binaries, built.
pub(crate) struct Bins {
    /// `bench-client`, `bench-host`, `bench-raw-client`, `bench-server` (ours), in release mode.
    pub(crate) ours_dir: PathBuf,
    /// `rmcp-bench-client`, `rmcp-bench-server`.
    pub(crate) rmcp_dir: PathBuf,
}

impl Bins {
    pub(crate) fn server(&self, server: Server) -> PathBuf {
        match server {
            Server::Ours => self.ours_dir.join("bench-server"),
            Server::Rmcp => self.rmcp_dir.join("rmcp-bench-server"),
        }
    }
}

/// Build our clients and server, and the rmcp workspace, in release mode, as `how` says.
pub(crate) fn build_bins(how: Build) -> Result<Bins> {
    let root = project_root();
    let (ours, rmcp) = how.dirs(&root, &target_dir(&root));
    heading(&format!(
        "building bench-client, bench-host, bench-raw-client and bench-server ({}, into {})",
        how.describe(),
        ours.display()
    ));
    let mut build = cargo_command();
    // Without the multi-thread scheduler (only bench-manager needs it): the clients run on a
    // current-thread runtime and link what a host on one links.
    build.args(["build", "--release", "-p", "mcp-bench", "--no-default-features"]);
    for bin in ["bench-client", "bench-host", "bench-raw-client", "bench-server"] {
        build.args(["--bin", bin]);
    }
    build.env("CARGO_TARGET_DIR", &ours).envs(how.env().iter().copied());
    run_status("build", build, &root)?;
    heading(&format!(
        "building rmcp's client and server ({RMCP_DIR}, {}, locked, into {})",
        how.describe(),
        rmcp.display()
    ));
    let mut build = cargo_command();
    build.args(["build", "--release", "--locked"]).env("CARGO_TARGET_DIR", &rmcp).envs(how.env().iter().copied());
    run_status("build the rmcp workspace", build, &root.join(RMCP_DIR))?;
    Ok(Bins { ours_dir: ours.join("release"), rmcp_dir: rmcp.join("release") })
}

/// The project's target directory: `CARGO_TARGET_DIR` if set, else `target` at the root.
pub(crate) fn target_dir(root: &Path) -> PathBuf {
    match std::env::var_os("CARGO_TARGET_DIR") {
        Some(dir) if !dir.is_empty() => root.join(dir),
        _ => root.join("target"),
    }
}

pub(crate) fn cargo_command() -> Command {
    Command::new(std::env::var_os("CARGO").unwrap_or_else(|| OsString::from("cargo")))
}

pub(crate) fn run_status(title: &str, mut command: Command, dir: &Path) -> Result {
    let status = command.current_dir(dir).status().map_err(|e| format!("{title}: could not start cargo: {e}"))?;
    if status.success() { Ok(()) } else { Err(format!("{title} failed ({status})")) }
}

pub(crate) fn heading(text: &str) {
    println!("\n==> {text}");
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(words: &[&str]) -> Result<Selection> {
        Selection::parse(&words.iter().map(|w| (*w).to_owned()).collect::<Vec<_>>())
    }

    #[test]
    fn no_flags_select_every_server_and_transport_and_w1_to_w4() {
        let all = parse(&[]).unwrap();
        assert_eq!(all.servers, vec![Server::Rmcp, Server::Ours]);
        assert_eq!(all.transports, vec![Transport::Stdio, Transport::Http]);
        assert_eq!(all.workloads, vec!["w1", "w2", "w3", "w4"]);
        assert_eq!(all.runs, DEFAULT_RUNS);
        assert_eq!(all.build, Build::Release);
        assert_eq!(all.placement, Placement::Free);
        assert_eq!(all.side, Side::Client);
        assert_eq!(all.workloads_over(Transport::Stdio), ["w1", "w2", "w3", "w4"]);
        let w5 = parse(&["--workload", "w5", "--workload", "w1"]).unwrap();
        assert_eq!(w5.workloads_over(Transport::Stdio), ["w1", "w5"]);
        assert_eq!(w5.workloads_over(Transport::Http), ["w1"], "W5 runs over stdio only");
        let cells: Vec<_> = w5.cells().collect();
        assert_eq!(
            cells,
            [
                (Transport::Stdio, Server::Rmcp, vec!["w1", "w5"]),
                (Transport::Stdio, Server::Ours, vec!["w1", "w5"]),
                (Transport::Http, Server::Rmcp, vec!["w1"]),
                (Transport::Http, Server::Ours, vec!["w1"]),
            ]
        );
        let only_w5 = parse(&["--workload", "w5", "--server", "ours"]).unwrap();
        assert_eq!(
            only_w5.cells().collect::<Vec<_>>(),
            [(Transport::Stdio, Server::Ours, vec!["w5"])],
            "no cell over HTTP"
        );
    }

    #[test]
    fn an_lto_build_sets_both_workspaces_profiles_and_keeps_the_default_build_apart() {
        assert_eq!(parse(&["--build", "lto"]).unwrap().build, Build::Lto);
        assert_eq!(parse(&["--build", "release"]).unwrap().build, Build::Release);
        assert!(Build::Release.env().is_empty(), "the default build is the workspaces' own profile");
        let env: Vec<_> = Build::Lto.env().to_vec();
        assert_eq!(env, [("CARGO_PROFILE_RELEASE_LTO", "fat"), ("CARGO_PROFILE_RELEASE_CODEGEN_UNITS", "1")]);
        let (root, target) = (Path::new("/p"), Path::new("/p/target"));
        let (ours, rmcp) = Build::Release.dirs(root, target);
        assert_eq!((ours.as_path(), rmcp.as_path()), (target, Path::new("/p/target/rmcp-bench")));
        let (ours_lto, rmcp_lto) = Build::Lto.dirs(root, target);
        assert_eq!(
            (ours_lto.as_path(), rmcp_lto.as_path()),
            (Path::new("/p/target/bench-lto"), Path::new("/p/target/rmcp-bench-lto"))
        );
    }

    #[test]
    fn flags_pick_one_table_and_repeat() {
        let one = parse(&["--workload", "W5", "--server", "rmcp", "--workload", "w3", "--runs", "2"]).unwrap();
        assert_eq!(one.servers, vec![Server::Rmcp]);
        assert_eq!(one.workloads, vec!["w3", "w5"]);
        assert_eq!(one.runs, 2);
        assert_eq!(parse(&["--placement", "split"]).unwrap().placement, Placement::Split);
        assert_eq!(parse(&["--side", "server"]).unwrap().side, Side::Server);
        assert_eq!(parse(&["--side", "client"]).unwrap().side, Side::Client);
        assert_eq!(parse(&["--side", "both"]).unwrap().side, Side::Both);
        // Only `instructions` counts the server's side: `matrix` says so before building anything.
        let err = matrix::matrix(&parse(&["--side", "server"]).unwrap()).unwrap_err();
        assert!(err.contains("bench instructions, not matrix"), "{err}");
        let http = parse(&["--transport", "http", "--transport", "http"]).unwrap();
        assert_eq!(http.transports, vec![Transport::Http]);
    }

    #[test]
    fn bad_flags_say_what_is_wrong() {
        for (words, expect) in [
            (&["--server", "node"][..], "\"node\""),
            (&["--transport", "sse"], "\"sse\""),
            (&["--workload", "w9"], "w1, w2"),
            (&["--runs", "0"], "positive"),
            (&["--runs"], "needs a value"),
            (&["--fast", "yes"], "unknown flag \"--fast\""),
            (&["--build", "debug"], "release or lto"),
            (&["--placement", "pinned"], "free, split or shared"),
            (&["--side", "all"], "client, server or both"),
        ] {
            let err = parse(words).unwrap_err();
            assert!(err.contains(expect), "{words:?}: {err}");
        }
    }
}
