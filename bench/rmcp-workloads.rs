//! The workloads both rmcp bench clients run (`rmcp-client` over stdio, `rmcp-http-client` over
//! streamable HTTP), the mirror of the `mcp-bench` library's: warm-up, W1 and W2 with rmcp's
//! client, and the report each client prints. Each client includes this file as a module; the two
//! are cargo workspaces of their own, so that rmcp never enters the project's build.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use rmcp::model::{CallToolRequestParams, ContentBlock, JsonObject};
use rmcp::service::{Peer, RoleClient};
use serde_json::{Value, json};

const W1_CALLS: usize = 2000;
const W2_CALLS: usize = 256;
const W2_IN_FLIGHT: usize = 32;
const WARM_UP_CALLS: usize = 20;

/// Why a workload failed.
pub type Failure = String;

/// Run `work` on a current-thread Tokio runtime, then print its report as one JSON line (with the
/// client, the workload and the peak RSS added), or the failure on stderr and exit 1.
pub fn run_and_report(
    client: &str,
    workload: &str,
    work: impl std::future::Future<Output = Result<JsonObject, Failure>>,
) {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("a Tokio runtime");
    match runtime.block_on(work) {
        Ok(mut report) => {
            report.insert("client".into(), json!("rmcp"));
            report.insert("workload".into(), json!(workload));
            report.insert("peak_rss_kib".into(), json!(peak_rss_kib()));
            println!("{}", Value::Object(report));
        }
        Err(e) => {
            eprintln!("{client}: {workload}: {e}");
            std::process::exit(1);
        }
    }
}

/// Call `echo` with `text` and check the answer.
async fn echo(peer: &Peer<RoleClient>, text: String) -> Result<(), Failure> {
    let mut arguments = JsonObject::new();
    arguments.insert("text".into(), Value::String(text.clone()));
    let got = call_text(peer, "echo", Some(arguments)).await?;
    if got != text {
        return Err(format!("echo answered {got:?} to {text:?}"));
    }
    Ok(())
}

/// Call a tool and return the text of its single text block.
pub async fn call_text(
    peer: &Peer<RoleClient>,
    tool: &'static str,
    arguments: Option<JsonObject>,
) -> Result<String, Failure> {
    let mut params = CallToolRequestParams::new(tool);
    params.arguments = arguments;
    let result = peer.call_tool(params).await.map_err(|e| format!("tools/call {tool}: {e}"))?;
    match result.content.into_iter().next() {
        Some(ContentBlock::Text(t)) => Ok(t.text),
        other => Err(format!("tools/call {tool}: expected one text block, got {other:?}")),
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

/// W1: sequential echo calls, with latency percentiles.
pub async fn w1(peer: &Peer<RoleClient>) -> Result<JsonObject, Failure> {
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

/// W2: echo calls, a fixed number in flight.
pub async fn w2(peer: &Peer<RoleClient>) -> Result<JsonObject, Failure> {
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

/// A duration in milliseconds.
pub fn ms(d: Duration) -> f64 {
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
