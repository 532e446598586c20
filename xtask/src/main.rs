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
  bench [codec|stdio|http|manager|instructions|all] [args]
                run the benchmarks (default all): the criterion codec bench (args go to
                `cargo bench`, e.g. -- --save-baseline main), the stdio client workloads,
                ours against rmcp and legacy era against modern (`bench stdio --runs N`,
                default 5), the streamable HTTP workloads, the same (`bench http --runs N`),
                and one manager over 100 servers x 100 tools (`bench manager --runs N`, default
                3); `bench instructions` counts the era comparison's instructions under
                callgrind (needs Valgrind; not part of `all`)
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
