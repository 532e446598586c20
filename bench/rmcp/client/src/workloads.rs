//! The workloads rmcp's bench client runs, the mirror of the `mcp-bench` library's (ours): the
//! warm-up, W1, W2 and W5 loops, the stopwatch and the report. Same calls, same texts, same keys.

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
/// W5: servers, and calls in flight on each (every call of the workload at once).
pub const W5_SERVERS: usize = 10;
const W5_IN_FLIGHT: usize = 100;

/// Why a workload failed.
pub type Failure = String;

/// A W5 target: a client and the name of its server's echo tool.
pub type Target = (Peer<RoleClient>, String);

/// Wall clock and process CPU time from a start.
pub struct Stopwatch {
    wall: Instant,
    cpu: Duration,
}

impl Stopwatch {
    /// Start now.
    pub fn start() -> Self {
        Stopwatch { wall: Instant::now(), cpu: process_cpu_time() }
    }

    /// Put `total_ms` and `cpu_ms` since the start into `report`; returns the wall clock time.
    pub fn record(&self, report: &mut JsonObject) -> Duration {
        let (wall, cpu) = (self.wall.elapsed(), process_cpu_time().saturating_sub(self.cpu));
        report.insert("total_ms".into(), json!(ms(wall)));
        report.insert("cpu_ms".into(), json!(ms(cpu)));
        wall
    }
}

/// The CPU time (user and system) of every thread of this process so far.
fn process_cpu_time() -> Duration {
    use nix::time::{ClockId, clock_gettime};
    clock_gettime(ClockId::CLOCK_PROCESS_CPUTIME_ID).map(Duration::from).unwrap_or_default()
}

/// Run `work` on a current-thread Tokio runtime, then print its report as one JSON line (with the
/// client, the workload, the era asked for and the peak RSS added), or the failure on stderr and
/// exit 1.
pub fn run_and_report(
    client: &str,
    workload: &str,
    era: &str,
    work: impl std::future::Future<Output = Result<JsonObject, Failure>>,
) {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("a Tokio runtime");
    match runtime.block_on(work) {
        Ok(mut report) => {
            report.insert("client".into(), json!("rmcp"));
            report.insert("workload".into(), json!(workload));
            report.insert("era".into(), json!(era));
            report.insert("peak_rss_kib".into(), json!(peak_rss_kib()));
            println!("{}", Value::Object(report));
        }
        Err(e) => {
            eprintln!("{client}: {workload}: {e}");
            std::process::exit(1);
        }
    }
}

/// Call `tool` (an echo tool) with `text` and check the answer.
async fn echo(peer: &Peer<RoleClient>, tool: &str, text: String) -> Result<(), Failure> {
    let mut arguments = JsonObject::new();
    arguments.insert("text".into(), Value::String(text.clone()));
    let got = call_text(peer, tool, Some(arguments)).await?;
    if got != text {
        return Err(format!("{tool} answered {got:?} to {text:?}"));
    }
    Ok(())
}

/// Call a tool and return the text of its single text block.
pub async fn call_text(peer: &Peer<RoleClient>, tool: &str, arguments: Option<JsonObject>) -> Result<String, Failure> {
    let mut params = CallToolRequestParams::new(tool.to_owned());
    params.arguments = arguments;
    let result = peer.call_tool(params).await.map_err(|e| format!("tools/call {tool}: {e}"))?;
    match result.content.into_iter().next() {
        Some(ContentBlock::Text(t)) => Ok(t.text),
        other => Err(format!("tools/call {tool}: expected one text block, got {other:?}")),
    }
}

/// The text of call `i` (the same as ours).
fn echo_text(i: usize) -> String {
    format!("echo {i:05}: the quick brown fox jumps over the lazy dog")
}

async fn warm_up(peer: &Peer<RoleClient>, tool: &str, calls: usize) -> Result<(), Failure> {
    for i in 0..calls {
        echo(peer, tool, echo_text(i)).await?;
    }
    Ok(())
}

/// W1: sequential echo calls, with latency percentiles.
pub async fn w1(peer: &Peer<RoleClient>) -> Result<JsonObject, Failure> {
    warm_up(peer, "echo", WARM_UP_CALLS).await?;
    let mut latencies = Vec::with_capacity(W1_CALLS);
    let watch = Stopwatch::start();
    for i in 0..W1_CALLS {
        let call = Instant::now();
        echo(peer, "echo", echo_text(i)).await?;
        latencies.push(call.elapsed());
    }
    let mut report = JsonObject::new();
    let total = watch.record(&mut report);
    latencies.sort();
    report.insert("calls_per_s".into(), json!(W1_CALLS as f64 / total.as_secs_f64()));
    report.insert("p50_us".into(), json!(us(percentile(&latencies, 50))));
    report.insert("p99_us".into(), json!(us(percentile(&latencies, 99))));
    Ok(report)
}

/// W2: echo calls, a fixed number in flight.
pub async fn w2(peer: &Peer<RoleClient>) -> Result<JsonObject, Failure> {
    warm_up(peer, "echo", WARM_UP_CALLS).await?;
    let next = Arc::new(AtomicUsize::new(0));
    let watch = Stopwatch::start();
    let mut workers = tokio::task::JoinSet::new();
    for _ in 0..W2_IN_FLIGHT {
        let (peer, next) = (peer.clone(), next.clone());
        workers.spawn(async move {
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= W2_CALLS {
                    return Ok::<(), Failure>(());
                }
                echo(&peer, "echo", echo_text(i)).await?;
            }
        });
    }
    while let Some(done) = workers.join_next().await {
        done.map_err(|e| format!("a worker failed: {e}"))??;
    }
    let mut report = JsonObject::new();
    watch.record(&mut report);
    Ok(report)
}

/// W5: every call at once, [`W5_IN_FLIGHT`] on each target. Every answer is checked; a call that
/// fails or answers wrongly is counted, not retried: `calls`, `answered` (correct answers),
/// `total_ms`, `cpu_ms`, `calls_per_s`, `p50_us`, `p99_us`, and `first_error` if any failed.
pub async fn w5(targets: Vec<Target>) -> Result<JsonObject, Failure> {
    for (peer, tool) in &targets {
        warm_up(peer, tool, 5).await?;
    }
    let calls = targets.len() * W5_IN_FLIGHT;
    let watch = Stopwatch::start();
    let mut set = tokio::task::JoinSet::new();
    for (k, (peer, tool)) in targets.iter().enumerate() {
        for j in 0..W5_IN_FLIGHT {
            let (peer, tool, text) = (peer.clone(), tool.clone(), echo_text(k * W5_IN_FLIGHT + j));
            let issued = Instant::now();
            set.spawn(async move { echo(&peer, &tool, text).await.map(|()| issued.elapsed()) });
        }
    }
    let (mut latencies, mut first_error) = (Vec::with_capacity(calls), None);
    while let Some(done) = set.join_next().await {
        match done.map_err(|e| format!("a call's task failed: {e}")).and_then(|r| r) {
            Ok(latency) => latencies.push(latency),
            Err(e) => {
                first_error.get_or_insert(e);
            }
        }
    }
    let mut report = JsonObject::new();
    let total = watch.record(&mut report);
    latencies.sort();
    report.insert("calls".into(), json!(calls));
    report.insert("answered".into(), json!(latencies.len()));
    report.insert("calls_per_s".into(), json!(latencies.len() as f64 / total.as_secs_f64()));
    report.insert("p50_us".into(), json!(us(percentile(&latencies, 50))));
    report.insert("p99_us".into(), json!(us(percentile(&latencies, 99))));
    if let Some(e) = first_error {
        report.insert("first_error".into(), json!(e));
    }
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
