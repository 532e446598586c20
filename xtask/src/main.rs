//! `cargo xtask`: the project's automation. Run `cargo xtask help` for the commands.

mod bench;
mod ci;
mod conformance;
mod fuzz;
mod peers;

use std::process::ExitCode;

const USAGE: &str = "\
usage: cargo xtask <command> [args]

commands:
  ci            cargo fmt --check, clippy -D warnings, docs, tests, tidy; stops at the first failure
  test          everything `ci` does, then the chaos soak, the quick start, the examples, the
                real-peer and conformance runs
  chaos         the chaos soak test for 60 s (CHAOS_SEED, CHAOS_SECS, CHAOS_CALLS,
                CHAOS_CONCURRENCY tune it; the seed is printed)
  quickstart    run the README's main-job command (cargo run --release -p mcp-cli -- tools) as written
  examples      build the `mcp` binary and run every example of mcp-manager/examples against its
                demo server; each must do its job
  peers         install the real peers into target/peers (npm, Python venv) and run the peer tests
  conformance   install Node 22 and the official MCP conformance suite into target/conformance, run
                every client scenario against our client, print the summary table
  tidy          check the architecture invariants (dependency rules, file length, crate docs)
  bench [all|matrix|stdio|http|w5|manager|instructions|codec] [flags]
                the benchmarks of issue 19 (default all: codec, then matrix with W1-W5,
                then manager). matrix: W1-W4 against our server and rmcp's, over stdio and
                streamable HTTP, with our McpConnection (modern and legacy era), the host path,
                a hand-written client and rmcp's client; tables of medians and the issue's
                ratios with their targets. Flags: --server ours|rmcp, --transport stdio|http,
                --workload w1..w5 (each may repeat), --runs N (default 5). stdio, http and w5
                are matrix over one transport or W5. manager [--runs N]: 100 servers x 100
                tools under one manager. instructions [the same flags]: the matrix counted in
                instructions under callgrind (needs Valgrind; one workload at a time is wise).
                codec [args]: the criterion codec bench (args go to `cargo bench`)
  fuzz [TARGET...] [--secs N] [--cases N] [--seed S] | --list | --cargo-fuzz [ARGS]
                run the property tests as fuzzers on stable (codec, sse, template, config,
                convert; default all, 30 s each): rounds of many cases, each with a fresh
                random seed, printed; `--seed S` replays one round; `--cargo-fuzz` runs
                cargo-fuzz targets on nightly; not part of ci
";

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let command = args.next();
    let rest: Vec<String> = args.collect();

    let takes_args = matches!(command.as_deref(), Some("bench" | "fuzz"));
    if !rest.is_empty() && !takes_args {
        eprint!("xtask: `{}` takes no arguments\n\n{USAGE}", command.unwrap_or_default());
        return ExitCode::from(2);
    }

    let result = match command.as_deref() {
        Some("ci") => ci::ci(),
        Some("test") => ci::test(),
        Some("peers") => ci::peers(),
        Some("quickstart") => ci::quickstart(),
        Some("examples") => ci::examples(),
        Some("chaos") => ci::chaos(),
        Some("conformance") => conformance::conformance(),
        Some("tidy") => ci::tidy(),
        Some("bench") => bench::bench(&rest),
        Some("fuzz") => ci::fuzz(&rest),
        Some("help" | "-h" | "--help") => {
            print!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Some(other) => {
            eprint!("xtask: unknown command `{other}`\n\n{USAGE}");
            return ExitCode::from(2);
        }
        None => {
            eprint!("{USAGE}");
            return ExitCode::from(2);
        }
    };

    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("\nxtask: error: {message}");
            ExitCode::FAILURE
        }
    }
}
