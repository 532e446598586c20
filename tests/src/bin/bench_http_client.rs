//! `bench-http-client`: this stack's side of `cargo xtask bench http`. It runs one workload
//! against `bench-http-server` through `McpConnection::remote` over the streamable HTTP transport,
//! in the era it is told, on a current-thread Tokio runtime, and prints one JSON line with the
//! results. The official SDK's client (`bench/rmcp-http-client`) runs the same workloads and prints
//! the same keys.
//!
//! `bench-http-client <w1|w2> <url> <legacy|modern>`
//!
//! - `w1`: 2000 sequential `echo` calls (after 20 unmeasured ones): `total_ms`, `calls_per_s`,
//!   `p50_us`, `p99_us`.
//! - `w2`: 256 `echo` calls, 32 in flight (after 20 unmeasured ones): `total_ms`.
//!
//! Every workload ends with `peak_rss_kib`. A failure prints to stderr and exits 1.

use std::process::exit;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use mcp_manager::connection::EraPreference;
use mcp_manager::{ConnectionOptions, McpConnection, RemoteTarget, RequestOptions};
use mcp_protocol::types::content::ContentBlock;
use mcp_protocol::types::meta::JsonObject;
use mcp_protocol::types::mrtr::Outcome;
use mcp_transport::TransportKind;
use serde_json::{Value, json};

const W1_CALLS: usize = 2000;
const W2_CALLS: usize = 256;
const W2_IN_FLIGHT: usize = 32;
const WARM_UP_CALLS: usize = 20;

type Failure = String;

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
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("a Tokio runtime");
    match runtime.block_on(run(workload, url, era)) {
        Ok(mut report) => {
            report.insert("client".into(), json!("ours"));
            report.insert("workload".into(), json!(workload));
            report.insert("era".into(), json!(format!("{era:?}").to_ascii_lowercase()));
            report.insert("peak_rss_kib".into(), json!(peak_rss_kib()));
            println!("{}", Value::Object(report));
        }
        Err(e) => {
            eprintln!("bench-http-client: {workload}: {e}");
            exit(1);
        }
    }
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

/// Call `echo` with `text` and check the answer.
async fn echo(connection: &McpConnection, text: String) -> Result<(), Failure> {
    let mut arguments = JsonObject::new();
    arguments.insert("text".into(), Value::String(text.clone()));
    let outcome = connection
        .call_tool("echo", Some(arguments), RequestOptions::default())
        .await
        .map_err(|e| format!("tools/call echo: {e}"))?;
    let Outcome::Complete(result) = outcome else {
        return Err("tools/call echo: not a complete result".to_owned());
    };
    match result.content.into_iter().next() {
        Some(ContentBlock::Text(t)) if t.text == text => Ok(()),
        other => Err(format!("echo answered {other:?} to {text:?}")),
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
