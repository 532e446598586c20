//! `bench-client`: this stack's side of `cargo xtask bench stdio`. It runs one workload against
//! the `bench-server` binary through `McpConnection` over the stdio transport, on a
//! current-thread Tokio runtime, and prints one JSON line with the results. The official SDK's
//! client (`bench/rmcp-client`) runs the same workloads and prints the same keys.
//!
//! `bench-client <w1|w2|w3|w4> <path to bench-server> [legacy|modern|auto] [server flag...]`
//!
//! The era (default `auto`: probe with `server/discover`, fall back to `initialize`) becomes
//! `ConnectionOptions::era`; with `legacy` or `modern` the client fails unless the connection
//! settled on that era. Any further arguments are passed to the server (`--modern` makes
//! `bench-server` speak the modern era).
//!
//! - `w1`: 2000 sequential `echo` calls (after 20 unmeasured ones): `total_ms`, `cpu_ms`,
//!   `calls_per_s`, `p50_us`, `p99_us`.
//! - `w2`: 256 `echo` calls, 32 in flight (after 20 unmeasured ones): `total_ms`, `cpu_ms`.
//! - `w3`: spawn, initialize and list all tools (10,002 in 101 pages): `total_ms`, `cpu_ms`,
//!   `tools`.
//! - `w4`: one call of `big` (8 MiB of text): `total_ms`, `cpu_ms`, `bytes`, and `peak_rss_kib`,
//!   the process's VmHWM read at the end.
//!
//! `cpu_ms` is the client process's CPU time over the section `total_ms` measures (see
//! [`mcp_bench`], which holds the W1 and W2 loops both bench clients run). Every workload ends
//! with `peak_rss_kib`. A failure prints to stderr and exits 1.

use std::process::exit;
use std::sync::Arc;

use mcp_bench::{Failure, Stopwatch, call_text, run_and_report, w1, w2};
use mcp_manager::connection::EraPreference;
use mcp_manager::{ConnectionOptions, McpConnection, stdio_factory};
use mcp_protocol::types::meta::JsonObject;
use mcp_transport::StdioConfig;
use serde_json::json;

const W3_TOOLS: usize = 10_002;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [workload, server, rest @ ..] = args.as_slice() else {
        eprintln!("usage: bench-client <w1|w2|w3|w4> <path to bench-server> [legacy|modern|auto] [server flag...]");
        exit(2);
    };
    let (era, server_args) = match rest.split_first() {
        None => (EraPreference::Auto, rest),
        Some((era, server_args)) => match era.parse::<EraPreference>() {
            Ok(era) => (era, server_args),
            Err(e) => {
                eprintln!("bench-client: {e}");
                exit(2);
            }
        },
    };
    run_and_report("bench-client", workload, era, run(workload, server, server_args, era));
}

async fn run(workload: &str, server: &str, server_args: &[String], era: EraPreference) -> Result<JsonObject, Failure> {
    let watch = Stopwatch::start();
    let config = StdioConfig::new("bench", server, server_args.to_vec());
    let mut options = ConnectionOptions::new("bench");
    options.era = era;
    let connection = Arc::new(McpConnection::new(stdio_factory(config), options));
    let info = connection.connect().await.map_err(|e| format!("connect: {e}"))?;
    let wanted = match era {
        EraPreference::Modern => Some(mcp_protocol::Era::Modern),
        EraPreference::Legacy => Some(mcp_protocol::Era::Legacy),
        EraPreference::Auto => None,
    };
    if let Some(wanted) = wanted
        && info.protocol_version.era() != Some(wanted)
    {
        connection.close().await;
        return Err(format!("connected at {}, not in the {wanted:?} era", info.protocol_version.as_str()));
    }
    let report = match workload {
        "w1" => w1(&connection).await,
        "w2" => w2(&connection).await,
        "w3" => w3(&connection, watch).await,
        "w4" => w4(&connection).await,
        other => Err(format!("unknown workload {other:?}")),
    };
    connection.close().await;
    report
}

async fn w3(connection: &McpConnection, watch: Stopwatch) -> Result<JsonObject, Failure> {
    let tools = connection.list_all_tools().await.map_err(|e| format!("tools/list: {e}"))?;
    let mut report = JsonObject::new();
    watch.record(&mut report);
    if tools.len() != W3_TOOLS {
        return Err(format!("listed {} tools, expected {W3_TOOLS}", tools.len()));
    }
    report.insert("tools".into(), json!(tools.len()));
    Ok(report)
}

async fn w4(connection: &McpConnection) -> Result<JsonObject, Failure> {
    let watch = Stopwatch::start();
    let text = call_text(connection, "big", None).await?;
    let mut report = JsonObject::new();
    watch.record(&mut report);
    if text.len() != 8 * 1024 * 1024 {
        return Err(format!("big answered {} bytes, expected 8 MiB", text.len()));
    }
    report.insert("bytes".into(), json!(text.len()));
    Ok(report)
}
