//! A scriptable fake MCP server (legacy era, stdio), built on `mcp_protocol`: the
//! `fake-mcp-server` binary runs [`run`] with the [`Config`] its flags describe. Each flag scripts
//! one fault (noise on stdout, crashes, hangs, huge lines, wrong ids, ...); the binary's docs list
//! them.
//!
//! The server is synchronous: one loop reads stdin and answers in order, and threads deliver the
//! answers that come late (`--slow-ms`, `--progress`, the `slow` tool). It exits when stdin ends.

mod chaos;
mod config;
mod out;
mod server;
mod tools;

pub use config::Config;
pub use server::run;

/// A manager config entry that runs the fake server at `program` (a test finds it with
/// `env!("CARGO_BIN_EXE_fake-mcp-server")`) with `flags`, named `name`, given 20 s to start.
pub fn server_config(name: &str, program: &str, flags: &[&str]) -> mcp_manager::config::ServerConfig {
    let mut server = mcp_manager::config::ServerConfig::new(name);
    server.command = Some(program.to_owned());
    server.args = flags.iter().map(|f| f.to_string()).collect();
    server.startup_timeout = std::time::Duration::from_secs(20);
    server
}
