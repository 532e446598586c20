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
