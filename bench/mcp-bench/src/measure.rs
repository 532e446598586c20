//! What the bench clients measure and how they report it: wall clock and process CPU time,
//! latency percentiles, peak memory, and the one JSON line each run prints.
//!
//! Every measured section reports `total_ms` (wall clock) and `cpu_ms` (the client process's CPU
//! time, user and system, over the same section): on a shared machine the wall clock also measures
//! the scheduler, while CPU time is what the client itself spent.

use std::time::{Duration, Instant};

use mcp_protocol::types::meta::JsonObject;
use serde_json::{Value, json};

use crate::Failure;

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

/// The nearest-rank percentile `p` of `sorted` (zero when it is empty).
pub fn percentile(sorted: &[Duration], p: usize) -> Duration {
    let index = (sorted.len() * p).div_ceil(100).saturating_sub(1);
    sorted.get(index).copied().unwrap_or_default()
}

/// Sort `latencies` and put `p50_us` and `p99_us` into `report`.
pub fn record_latencies(report: &mut JsonObject, latencies: &mut [Duration]) {
    latencies.sort();
    report.insert("p50_us".into(), json!(us(percentile(latencies, 50))));
    report.insert("p99_us".into(), json!(us(percentile(latencies, 99))));
}

/// A duration in milliseconds.
pub fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// A duration in microseconds.
pub fn us(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

/// The process's peak resident set (VmHWM) in KiB, 0 if `/proc` does not say.
pub fn peak_rss_kib() -> u64 {
    memory_kib("VmHWM:")
}

/// A `Vm*` line of `/proc/self/status` (`key` with its colon), in KiB; 0 if it is not there.
pub fn memory_kib(key: &str) -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status_kib(&status, key).unwrap_or(0)
}

/// The value of `key` (e.g. `VmHWM:`) in the text of `/proc/self/status`, in KiB.
fn status_kib(status: &str, key: &str) -> Option<u64> {
    status.lines().find_map(|l| l.strip_prefix(key)).and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

/// Run one workload on a current-thread Tokio runtime, as every bench client does, then print
/// its report as one JSON line (with `client`, the workload, the era asked for and the peak RSS
/// added), or the failure on stderr and exit 1. `client` is `ours`, `host` or `raw`; `program`
/// names the binary in a failure.
pub fn run_and_report(
    program: &str,
    client: &str,
    workload: &str,
    era: &str,
    work: impl std::future::Future<Output = Result<JsonObject, Failure>>,
) {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("a Tokio runtime");
    match runtime.block_on(work) {
        Ok(mut report) => {
            report.insert("client".into(), json!(client));
            report.insert("workload".into(), json!(workload));
            report.insert("era".into(), json!(era));
            report.insert("peak_rss_kib".into(), json!(peak_rss_kib()));
            println!("{}", Value::Object(report));
        }
        Err(e) => {
            eprintln!("{program}: {workload}: {e}");
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
        let mut shuffled = vec![Duration::from_micros(300), Duration::from_micros(100), Duration::from_micros(200)];
        let mut report = JsonObject::new();
        record_latencies(&mut report, &mut shuffled);
        assert_eq!(report["p50_us"], json!(200.0));
        assert_eq!(report["p99_us"], json!(300.0));
    }

    #[test]
    fn memory_lines_are_read_in_kib_and_a_missing_or_broken_one_is_none() {
        let status = "Name:\tx\nVmHWM:\t   12345 kB\nVmRSS:\t  999 kB\nVmBad:\tlots kB\n";
        assert_eq!(status_kib(status, "VmHWM:"), Some(12_345));
        assert_eq!(status_kib(status, "VmRSS:"), Some(999));
        assert_eq!(status_kib(status, "VmBad:"), None);
        assert_eq!(status_kib(status, "VmSwap:"), None);
        // This process has a peak resident set.
        assert!(peak_rss_kib() > 0);
    }
}
