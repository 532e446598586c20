//! `bench-http-client`: this stack's side of `cargo xtask bench http`. It runs one workload
//! against `bench-http-server` through `McpConnection::remote` over the streamable HTTP transport,
//! in the era it is told, on a current-thread Tokio runtime, and prints one JSON line with the
//! results. The official SDK's client (`bench/rmcp-http-client`) runs the same workloads and prints
//! the same keys.
//!
//! `bench-http-client <w1|w2> <url> <legacy|modern>`
//!
//! - `w1`: 2000 sequential `echo` calls (after 20 unmeasured ones): `total_ms`, `cpu_ms`,
//!   `calls_per_s`, `p50_us`, `p99_us`.
//! - `w2`: 256 `echo` calls, 32 in flight (after 20 unmeasured ones): `total_ms`, `cpu_ms`.
//!
//! The loops are [`mcp_bench`]'s, the same as `bench-client`'s. Every workload ends with
//! `peak_rss_kib`. A failure prints to stderr and exits 1.

use std::process::exit;
use std::sync::Arc;

use mcp_bench::{Failure, run_and_report, w1, w2};
use mcp_manager::connection::EraPreference;
use mcp_manager::{ConnectionOptions, McpConnection, RemoteTarget};
use mcp_protocol::types::meta::JsonObject;
use mcp_transport::TransportKind;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [workload, url, era] = args.as_slice() else {
        eprintln!("usage: bench-http-client <w1|w2> <url> <legacy|modern>");
        exit(2);
    };
    let era = match era.as_str() {
        "legacy" => EraPreference::Legacy,
        "modern" => EraPreference::Modern,
        other => {
            eprintln!("bench-http-client: unknown era {other:?}: expected legacy or modern");
            exit(2);
        }
    };
    run_and_report("bench-http-client", workload, era, run(workload, url, era));
}

async fn run(workload: &str, url: &str, era: EraPreference) -> Result<JsonObject, Failure> {
    let target = RemoteTarget::new(url).with_transport(Some(TransportKind::StreamableHttp));
    let mut options = ConnectionOptions::new("bench");
    options.era = era;
    let connection = Arc::new(McpConnection::remote(&target, options).map_err(|e| format!("remote: {e}"))?);
    let info = connection.connect().await.map_err(|e| format!("connect: {e}"))?;
    let wanted = match era {
        EraPreference::Modern => mcp_protocol::Era::Modern,
        _ => mcp_protocol::Era::Legacy,
    };
    if info.protocol_version.era() != Some(wanted) {
        return Err(format!("connected at {}, not in the {wanted:?} era", info.protocol_version.as_str()));
    }
    let report = match workload {
        "w1" => w1(&connection).await,
        "w2" => w2(&connection).await,
        other => Err(format!("unknown workload {other:?}")),
    };
    connection.close().await;
    report
}
