//! The `mcp` command. Its subcommands arrive with the CLI issue; until then it says so.

fn main() {
    eprintln!("mcp: no subcommands yet (the CLI issue adds them)");
    std::process::exit(1);
}
