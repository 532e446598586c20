//! What the examples share: the built-in demo server of the `mcp` command, and a check that
//! makes an example fail (exit 1) when it did not do its job.

use std::path::PathBuf;

use mcp_manager::ServerConfig;

/// The demo server (`mcp serve-demo`) as a server named `demo`. The `mcp` binary is the first
/// argument, else `$MCP_BIN`, else this workspace's `target/debug/mcp`
/// (`cargo build -p mcp-cli` builds it).
pub fn demo_server() -> ServerConfig {
    let built = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/debug/mcp");
    let binary = std::env::args()
        .nth(1)
        .or_else(|| std::env::var("MCP_BIN").ok())
        .unwrap_or_else(|| built.display().to_string());
    ServerConfig::stdio("demo", binary).arg("serve-demo")
}

/// Fails the example with `what` unless `ok`.
pub fn check(ok: bool, what: &str) -> Result<(), String> {
    if ok { Ok(()) } else { Err(format!("the example did not do its job: {what}")) }
}
