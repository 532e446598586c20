//! The `mcp` command: see `mcp --help`, and the `mcp_cli` library for its parts.

// Everything printed goes through `mcp_cli::output::terminal`, which sanitizes it.
#![deny(clippy::print_stdout, clippy::print_stderr)]

use mcp_cli::cli::{self, Command};
use mcp_cli::exit;

fn main() {
    exit::install_panic_hook();
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    let cli = match cli::parse(&args) {
        Ok(cli) => cli,
        Err(error) => {
            let verbose = args.iter().any(|a| a == "--verbose" || a == "-v");
            // Before a `--`: after it, the words are the stdio server's.
            let json = args.iter().take_while(|a| *a != "--").any(|a| a == "--json");
            std::process::exit(exit::report_clap_error(&error, verbose, json));
        }
    };
    // `--trace FILE` records the spans of every command, the shell's too.
    if let Some(path) = &cli.global.trace
        && let Err(e) = mcp_cli::trace::install(path)
    {
        std::process::exit(e.report_as(cli.global.json, cli.global.verbose));
    }
    let code = match &cli.command {
        Command::ServeDemo => mcp_cli::demo::run_stdio(),
        Command::Shell => mcp_cli::shell::run(&cli),
        _ => mcp_cli::commands::run(&cli),
    };
    std::process::exit(code);
}
