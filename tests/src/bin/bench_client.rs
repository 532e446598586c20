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
//! - `w1`: 2000 sequential `echo` calls (after 20 unmeasured ones): `total_ms`, `calls_per_s`,
//!   `p50_us`, `p99_us`.
//! - `w2`: 256 `echo` calls, 32 in flight (after 20 unmeasured ones): `total_ms`.
//! - `w3`: spawn, initialize and list all tools (10,002 in 101 pages): `total_ms`, `tools`.
//! - `w4`: one call of `big` (8 MiB of text): `total_ms`, `bytes`, and `peak_rss_kib`, the
//!   process's VmHWM read at the end.
//!
//! Every workload ends with `peak_rss_kib`. A failure prints to stderr and exits 1.

use std::process::exit;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use mcp_manager::connection::EraPreference;
use mcp_manager::{ConnectionOptions, McpConnection, RequestOptions, stdio_factory};
use mcp_protocol::types::content::ContentBlock;
use mcp_protocol::types::meta::JsonObject;
use mcp_protocol::types::mrtr::Outcome;
use mcp_transport::StdioConfig;
use serde_json::{Value, json};

const W1_CALLS: usize = 2000;
const W2_CALLS: usize = 256;
const W2_IN_FLIGHT: usize = 32;
const WARM_UP_CALLS: usize = 20;
const W3_TOOLS: usize = 10_002;

type Failure = String;

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
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("a Tokio runtime");
    match runtime.block_on(run(workload, server, server_args, era)) {
        Ok(mut report) => {
            report.insert("client".into(), json!("ours"));
            report.insert("workload".into(), json!(workload));
            report.insert("era".into(), json!(format!("{era:?}").to_ascii_lowercase()));
            report.insert("peak_rss_kib".into(), json!(peak_rss_kib()));
            println!("{}", Value::Object(report));
        }
        Err(e) => {
            eprintln!("bench-client: {workload}: {e}");
            exit(1);
        }
    }
}

async fn run(workload: &str, server: &str, server_args: &[String], era: EraPreference) -> Result<JsonObject, Failure> {
    let started = Instant::now();
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
        "w3" => w3(&connection, started).await,
        "w4" => w4(&connection).await,
        other => Err(format!("unknown workload {other:?}")),
    };
    connection.close().await;
    report
}

/// Call `echo` with `text` and check the answer.
async fn echo(connection: &McpConnection, text: String) -> Result<(), Failure> {
    let mut arguments = JsonObject::new();
    arguments.insert("text".into(), Value::String(text.clone()));
    let got = call_text(connection, "echo", Some(arguments)).await?;
    if got != text {
        return Err(format!("echo answered {got:?} to {text:?}"));
    }
    Ok(())
}

/// Call a tool and return the text of its single text block.
async fn call_text(connection: &McpConnection, tool: &str, arguments: Option<JsonObject>) -> Result<String, Failure> {
    let outcome = connection
        .call_tool(tool, arguments, RequestOptions::default())
        .await
        .map_err(|e| format!("tools/call {tool}: {e}"))?;
    let Outcome::Complete(result) = outcome else {
        return Err(format!("tools/call {tool}: not a complete result"));
    };
    match result.content.into_iter().next() {
        Some(ContentBlock::Text(t)) => Ok(t.text),
        other => Err(format!("tools/call {tool}: expected one text block, got {other:?}")),
    }
}

fn echo_text(i: usize) -> String {
    format!("echo {i:05}: the quick brown fox jumps over the lazy dog")
}

async fn warm_up(connection: &McpConnection) -> Result<(), Failure> {
    for i in 0..WARM_UP_CALLS {
        echo(connection, echo_text(i)).await?;
    }
    Ok(())
}

async fn w1(connection: &McpConnection) -> Result<JsonObject, Failure> {
    warm_up(connection).await?;
    let mut latencies = Vec::with_capacity(W1_CALLS);
    let started = Instant::now();
    for i in 0..W1_CALLS {
        let call = Instant::now();
        echo(connection, echo_text(i)).await?;
        latencies.push(call.elapsed());
    }
    let total = started.elapsed();
    latencies.sort();
    let mut report = JsonObject::new();
    report.insert("total_ms".into(), json!(ms(total)));
    report.insert("calls_per_s".into(), json!(W1_CALLS as f64 / total.as_secs_f64()));
    report.insert("p50_us".into(), json!(us(percentile(&latencies, 50))));
    report.insert("p99_us".into(), json!(us(percentile(&latencies, 99))));
    Ok(report)
}

async fn w2(connection: &Arc<McpConnection>) -> Result<JsonObject, Failure> {
    warm_up(connection).await?;
    let next = Arc::new(AtomicUsize::new(0));
    let started = Instant::now();
    let mut workers = tokio::task::JoinSet::new();
    for _ in 0..W2_IN_FLIGHT {
        let (connection, next) = (connection.clone(), next.clone());
        workers.spawn(async move {
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= W2_CALLS {
                    return Ok::<(), Failure>(());
                }
                echo(&connection, echo_text(i)).await?;
            }
        });
    }
    while let Some(done) = workers.join_next().await {
        done.map_err(|e| format!("a worker failed: {e}"))??;
    }
    let total = started.elapsed();
    let mut report = JsonObject::new();
    report.insert("total_ms".into(), json!(ms(total)));
    Ok(report)
}

async fn w3(connection: &McpConnection, started: Instant) -> Result<JsonObject, Failure> {
    let tools = connection.list_all_tools().await.map_err(|e| format!("tools/list: {e}"))?;
    let total = started.elapsed();
    if tools.len() != W3_TOOLS {
        return Err(format!("listed {} tools, expected {W3_TOOLS}", tools.len()));
    }
    let mut report = JsonObject::new();
    report.insert("total_ms".into(), json!(ms(total)));
    report.insert("tools".into(), json!(tools.len()));
    Ok(report)
}

async fn w4(connection: &McpConnection) -> Result<JsonObject, Failure> {
    let started = Instant::now();
    let text = call_text(connection, "big", None).await?;
    let total = started.elapsed();
    if text.len() != 8 * 1024 * 1024 {
        return Err(format!("big answered {} bytes, expected 8 MiB", text.len()));
    }
    let mut report = JsonObject::new();
    report.insert("total_ms".into(), json!(ms(total)));
    report.insert("bytes".into(), json!(text.len()));
    Ok(report)
}

fn percentile(sorted: &[Duration], p: usize) -> Duration {
    let index = (sorted.len() * p).div_ceil(100).saturating_sub(1);
    sorted.get(index).copied().unwrap_or_default()
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn us(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

/// The process's peak resident set (VmHWM) in KiB, 0 if `/proc` does not say.
fn peak_rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}
