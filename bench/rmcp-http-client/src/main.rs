//! `rmcp-bench-http-client`: the official Rust SDK's side of `cargo xtask bench http`. It mirrors
//! `tests/src/bin/bench_http_client.rs` (this stack's side) workload for workload, with rmcp's
//! streamable HTTP client (`StreamableHttpClientTransport` over reqwest) on a current-thread Tokio
//! runtime, and prints one JSON line with the same keys.
//!
//! This crate is its own cargo workspace, so rmcp never enters the project's build; xtask builds
//! it with `--release --locked` into `target/rmcp-bench`.
//!
//! `rmcp-bench-http-client <w1|w2> <url>`

use std::process::exit;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use rmcp::model::{CallToolRequestParams, ContentBlock, JsonObject};
use rmcp::service::{Peer, RoleClient, RunningService, ServiceExt};
use rmcp::transport::StreamableHttpClientTransport;
use serde_json::{Value, json};

const W1_CALLS: usize = 2000;
const W2_CALLS: usize = 256;
const W2_IN_FLIGHT: usize = 32;
const WARM_UP_CALLS: usize = 20;

type Failure = String;
type Client = RunningService<RoleClient, ()>;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [workload, url] = args.as_slice() else {
        eprintln!("usage: rmcp-bench-http-client <w1|w2> <url>");
        exit(2);
    };
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("a Tokio runtime");
    match runtime.block_on(run(workload, url)) {
        Ok(mut report) => {
            report.insert("client".into(), json!("rmcp"));
            report.insert("workload".into(), json!(workload));
            report.insert("peak_rss_kib".into(), json!(peak_rss_kib()));
            println!("{}", Value::Object(report));
        }
        Err(e) => {
            eprintln!("rmcp-bench-http-client: {workload}: {e}");
            exit(1);
        }
    }
}

async fn run(workload: &str, url: &str) -> Result<JsonObject, Failure> {
    let transport = StreamableHttpClientTransport::from_uri(url.to_owned());
    let client: Client = ().serve(transport).await.map_err(|e| format!("connect: {e}"))?;
    let report = match workload {
        "w1" => w1(client.peer()).await,
        "w2" => w2(client.peer()).await,
        other => Err(format!("unknown workload {other:?}")),
    };
    let _ = client.cancel().await;
    report
}

/// Call `echo` with `text` and check the answer.
async fn echo(peer: &Peer<RoleClient>, text: String) -> Result<(), Failure> {
    let mut arguments = JsonObject::new();
    arguments.insert("text".into(), Value::String(text.clone()));
    let mut params = CallToolRequestParams::new("echo");
    params.arguments = Some(arguments);
    let result = peer.call_tool(params).await.map_err(|e| format!("tools/call echo: {e}"))?;
    match result.content.into_iter().next() {
        Some(ContentBlock::Text(t)) if t.text == text => Ok(()),
        other => Err(format!("echo answered {other:?} to {text:?}")),
    }
}

fn echo_text(i: usize) -> String {
    format!("echo {i:05}: the quick brown fox jumps over the lazy dog")
}

async fn warm_up(peer: &Peer<RoleClient>) -> Result<(), Failure> {
    for i in 0..WARM_UP_CALLS {
        echo(peer, echo_text(i)).await?;
    }
    Ok(())
}

async fn w1(peer: &Peer<RoleClient>) -> Result<JsonObject, Failure> {
    warm_up(peer).await?;
    let mut latencies = Vec::with_capacity(W1_CALLS);
    let started = Instant::now();
    for i in 0..W1_CALLS {
        let call = Instant::now();
        echo(peer, echo_text(i)).await?;
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

async fn w2(peer: &Peer<RoleClient>) -> Result<JsonObject, Failure> {
    warm_up(peer).await?;
    let next = Arc::new(AtomicUsize::new(0));
    let started = Instant::now();
    let mut workers = tokio::task::JoinSet::new();
    for _ in 0..W2_IN_FLIGHT {
        let (peer, next) = (peer.clone(), next.clone());
        workers.spawn(async move {
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= W2_CALLS {
                    return Ok::<(), Failure>(());
                }
                echo(&peer, echo_text(i)).await?;
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
