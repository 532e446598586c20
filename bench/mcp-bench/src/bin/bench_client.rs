//! `bench-client`: the connection path of `cargo xtask bench`. It runs one workload through
//! `McpConnection`, over stdio or streamable HTTP, on a current-thread Tokio runtime, and prints
//! one JSON line with the results. rmcp's client (`bench/rmcp/client`) runs the same workloads
//! and prints the same keys; `bench-host` runs them through the host path.
//!
//! ```text
//! bench-client <w1|w2|w3|w4|w5> <legacy|modern|auto> <server command | http://url> [server flag...]
//! ```
//!
//! (see [`mcp_bench::cli`]). With `legacy` or `modern` the client fails unless the connection
//! settled on that era; the report's `protocol_version` says which revision it did.
//!
//! - `w1`, `w2`, `w5`: see [`mcp_bench::workloads`]. W5 opens one connection to each of ten
//!   servers.
//! - `w3`: spawn (or reach), initialize and list every tool (10,002 in 101 pages): `total_ms`,
//!   `cpu_ms`, `tools`.
//! - `w4`: one call of `big` (8 MiB of text): `total_ms`, `cpu_ms`, `bytes`.
//!
//! Every workload ends with `peak_rss_kib`, the process's VmHWM. A failure prints to stderr and
//! exits 1.

use std::process::exit;
use std::sync::Arc;

use mcp_bench::Failure;
use mcp_bench::cli::{Invocation, Target};
use mcp_bench::measure::{Stopwatch, run_and_report};
use mcp_bench::workloads::{Caller, W5_SERVERS, w1, w2, w5};
use mcp_manager::{ConnectionOptions, McpConnection, RemoteTarget, stdio_factory};
use mcp_protocol::types::meta::JsonObject;
use mcp_transport::{StdioConfig, TransportKind};
use serde_json::json;

const W3_TOOLS: usize = 10_002;
const W4_BYTES: usize = 8 * 1024 * 1024;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let run = Invocation::parse(&args).unwrap_or_else(|e| {
        eprintln!(
            "bench-client: {e}\nusage: bench-client <w1..w5> <legacy|modern|auto> <server command | url> [flag...]"
        );
        exit(2);
    });
    run_and_report("bench-client", "ours", run.workload, &run.era_name, work(&run));
}

async fn work(run: &Invocation) -> Result<JsonObject, Failure> {
    if run.workload == "w5" {
        return run_w5(run).await;
    }
    let watch = Stopwatch::start();
    let (connection, version) = connect(run, &run.target).await?;
    let connection = Arc::new(connection);
    let report = match run.workload {
        "w1" => w1(connection.as_ref(), "echo").await,
        "w2" => w2(&connection, "echo").await,
        "w3" => w3(&connection, watch).await,
        _ => w4(connection.as_ref()).await,
    };
    connection.close().await;
    report.map(|mut report| {
        report.insert("protocol_version".into(), json!(version));
        report
    })
}

/// A connection to `target` in the era `run` asks for, and the revision it settled on.
async fn connect(run: &Invocation, target: &Target) -> Result<(McpConnection, String), Failure> {
    let mut options = ConnectionOptions::new("bench");
    options.era = run.era;
    let connection = match target {
        Target::Stdio { command, args } => {
            McpConnection::new(stdio_factory(StdioConfig::new("bench", command, args.clone())), options)
        }
        Target::Http(url) => {
            let target = RemoteTarget::new(url).with_transport(Some(TransportKind::StreamableHttp));
            McpConnection::remote(&target, options).map_err(|e| format!("remote: {e}"))?
        }
    };
    let info = connection.connect().await.map_err(|e| format!("connect: {e}"))?;
    if let Some(wanted) = run.wanted_era()
        && info.protocol_version.era() != Some(wanted)
    {
        connection.close().await;
        return Err(format!("connected at {}, not in the {wanted:?} era", info.protocol_version.as_str()));
    }
    Ok((connection, info.protocol_version.as_str().to_owned()))
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
    let text = connection.call_text("big", None).await?;
    let mut report = JsonObject::new();
    watch.record(&mut report);
    if text.len() != W4_BYTES || text.bytes().any(|b| b != b'x') {
        return Err(format!("big answered {} bytes, expected {W4_BYTES} bytes of x", text.len()));
    }
    report.insert("bytes".into(), json!(text.len()));
    Ok(report)
}

/// W5: one connection to each of ten servers.
async fn run_w5(run: &Invocation) -> Result<JsonObject, Failure> {
    let mut targets = Vec::with_capacity(W5_SERVERS);
    let mut version = String::new();
    for k in 0..W5_SERVERS {
        let (target, prefix) = run.target.w5_copy(k)?;
        let (connection, v) = connect(run, &target).await?;
        version = v;
        targets.push((Arc::new(connection), format!("{prefix}echo")));
    }
    let report = w5(&targets).await;
    for (connection, _) in &targets {
        connection.close().await;
    }
    report.map(|mut report| {
        report.insert("protocol_version".into(), json!(version));
        report
    })
}
