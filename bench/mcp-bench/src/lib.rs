//! The workloads our bench clients share (`bench-client` over stdio, `bench-http-client` over
//! streamable HTTP), so that both transports run exactly the same calls.
//!
//! Every measured section reports `total_ms` (wall clock) and `cpu_ms` (the client process's CPU
//! time, user and system, over the same section): on a shared machine the wall clock also measures
//! the scheduler, while CPU time is what the client itself spent.
//!
//! ```
//! // Every call of W1 and W2 sends a distinct text of the same length.
//! assert_ne!(mcp_bench::echo_text(1), mcp_bench::echo_text(2));
//! assert_eq!(mcp_bench::echo_text(1).len(), mcp_bench::echo_text(99_999).len());
//! ```

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use mcp_manager::connection::EraPreference;
use mcp_manager::{McpConnection, RequestOptions};
use mcp_protocol::types::content::ContentBlock;
use mcp_protocol::types::meta::JsonObject;
use mcp_protocol::types::mrtr::Outcome;
use serde_json::{Value, json};

/// W1: sequential calls.
pub const W1_CALLS: usize = 2000;
/// W2: calls in all...
pub const W2_CALLS: usize = 256;
/// ...and how many are in flight at once.
pub const W2_IN_FLIGHT: usize = 32;
/// Unmeasured calls before W1 and W2.
pub const WARM_UP_CALLS: usize = 20;

/// A workload's failure, printed by the client.
pub type Failure = String;

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

    /// The wall clock time since the start.
    pub fn elapsed(&self) -> Duration {
        self.wall.elapsed()
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

/// The text W1 and W2 send in call `i`.
pub fn echo_text(i: usize) -> String {
    format!("echo {i:05}: the quick brown fox jumps over the lazy dog")
}

/// Call `echo` with `text` and check the answer.
pub async fn echo(connection: &McpConnection, text: String) -> Result<(), Failure> {
    let mut arguments = JsonObject::new();
    arguments.insert("text".into(), Value::String(text.clone()));
    let got = call_text(connection, "echo", Some(arguments)).await?;
    if got != text {
        return Err(format!("echo answered {got:?} to {text:?}"));
    }
    Ok(())
}

/// Call a tool and return the text of its single text block.
pub async fn call_text(
    connection: &McpConnection,
    tool: &str,
    arguments: Option<JsonObject>,
) -> Result<String, Failure> {
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

async fn warm_up(connection: &McpConnection) -> Result<(), Failure> {
    for i in 0..WARM_UP_CALLS {
        echo(connection, echo_text(i)).await?;
    }
    Ok(())
}

/// W1: [`W1_CALLS`] sequential echo calls: `total_ms`, `cpu_ms`, `calls_per_s`, `p50_us`, `p99_us`.
pub async fn w1(connection: &McpConnection) -> Result<JsonObject, Failure> {
    warm_up(connection).await?;
    let mut latencies = Vec::with_capacity(W1_CALLS);
    let watch = Stopwatch::start();
    for i in 0..W1_CALLS {
        let call = Instant::now();
        echo(connection, echo_text(i)).await?;
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

/// W2: [`W2_CALLS`] echo calls, [`W2_IN_FLIGHT`] in flight: `total_ms`, `cpu_ms`.
pub async fn w2(connection: &Arc<McpConnection>) -> Result<JsonObject, Failure> {
    warm_up(connection).await?;
    let next = Arc::new(AtomicUsize::new(0));
    let watch = Stopwatch::start();
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
    let mut report = JsonObject::new();
    watch.record(&mut report);
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
pub fn peak_rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

/// Run one workload of client `client` (`bench-client`, `bench-http-client`) on a
/// current-thread Tokio runtime, as every bench client does, then print its report as one JSON
/// line (with the workload, the era and the peak RSS added), or the failure on stderr and exit 1.
pub fn run_and_report(
    client: &str,
    workload: &str,
    era: EraPreference,
    work: impl std::future::Future<Output = Result<JsonObject, Failure>>,
) {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("a Tokio runtime");
    match runtime.block_on(work) {
        Ok(mut report) => {
            report.insert("client".into(), json!("ours"));
            report.insert("workload".into(), json!(workload));
            report.insert("era".into(), json!(format!("{era:?}").to_ascii_lowercase()));
            report.insert("peak_rss_kib".into(), json!(peak_rss_kib()));
            println!("{}", Value::Object(report));
        }
        Err(e) => {
            eprintln!("{client}: {workload}: {e}");
            std::process::exit(1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stopwatch_reports_wall_and_cpu_time_in_milliseconds() {
        let watch = Stopwatch::start();
        // Wall clock without CPU time, then CPU time (other test threads may add to the
        // process's, so only lower bounds and the units are checked).
        std::thread::sleep(Duration::from_millis(30));
        let mut x = 0u64;
        while process_cpu_time().saturating_sub(watch.cpu) < Duration::from_millis(5)
            && watch.elapsed() < Duration::from_secs(10)
        {
            x = std::hint::black_box(x.wrapping_add(1));
        }
        let mut report = JsonObject::new();
        watch.record(&mut report);
        let cpu = report["cpu_ms"].as_f64().unwrap();
        let wall = report["total_ms"].as_f64().unwrap();
        assert!((5.0..10_000.0).contains(&cpu), "cpu_ms {cpu}");
        assert!((30.0..20_000.0).contains(&wall), "total_ms {wall}");
    }

    #[test]
    fn percentiles_take_the_nearest_rank() {
        let sorted: Vec<Duration> = (1..=100).map(Duration::from_millis).collect();
        assert_eq!(percentile(&sorted, 50), Duration::from_millis(50));
        assert_eq!(percentile(&sorted, 99), Duration::from_millis(99));
        assert_eq!(percentile(&[], 50), Duration::ZERO);
    }
}
