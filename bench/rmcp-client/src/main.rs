//! `rmcp-bench-client`: the official Rust SDK's side of `cargo xtask bench stdio`. It mirrors
//! `bench/mcp-bench/src/bin/bench_client.rs` (this stack's side) workload for workload, with
//! rmcp's client over `TokioChildProcess` on a current-thread Tokio runtime, and prints one JSON
//! line with the same keys. W1 and W2 are `../rmcp-workloads.rs`, shared with the HTTP client.
//!
//! This crate is its own cargo workspace, so rmcp never enters the project's build; xtask builds
//! it with `--release --locked` into `target/rmcp-bench`.
//!
//! `rmcp-bench-client <w1|w2|w3|w4> <path to bench-server>`

#[path = "../../rmcp-workloads.rs"]
mod workloads;

use std::process::exit;
use std::time::Instant;

use rmcp::model::JsonObject;
use rmcp::service::{Peer, RoleClient, RunningService, ServiceExt};
use rmcp::transport::TokioChildProcess;
use serde_json::json;
use workloads::{Failure, call_text, ms, run_and_report, w1, w2};

const W3_TOOLS: usize = 10_002;

type Client = RunningService<RoleClient, ()>;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [workload, server] = args.as_slice() else {
        eprintln!("usage: rmcp-bench-client <w1|w2|w3|w4> <path to bench-server>");
        exit(2);
    };
    run_and_report("rmcp-bench-client", workload, run(workload, server));
}

async fn run(workload: &str, server: &str) -> Result<JsonObject, Failure> {
    let started = Instant::now();
    let transport = TokioChildProcess::new(tokio::process::Command::new(server)).map_err(|e| format!("spawn: {e}"))?;
    let client: Client = ().serve(transport).await.map_err(|e| format!("connect: {e}"))?;
    let report = match workload {
        "w1" => w1(client.peer()).await,
        "w2" => w2(client.peer()).await,
        "w3" => w3(client.peer(), started).await,
        "w4" => w4(client.peer()).await,
        other => Err(format!("unknown workload {other:?}")),
    };
    let _ = client.cancel().await;
    report
}

async fn w3(peer: &Peer<RoleClient>, started: Instant) -> Result<JsonObject, Failure> {
    let tools = peer.list_all_tools().await.map_err(|e| format!("tools/list: {e}"))?;
    let total = started.elapsed();
    if tools.len() != W3_TOOLS {
        return Err(format!("listed {} tools, expected {W3_TOOLS}", tools.len()));
    }
    let mut report = JsonObject::new();
    report.insert("total_ms".into(), json!(ms(total)));
    report.insert("tools".into(), json!(tools.len()));
    Ok(report)
}

async fn w4(peer: &Peer<RoleClient>) -> Result<JsonObject, Failure> {
    let started = Instant::now();
    let text = call_text(peer, "big", None).await?;
    let total = started.elapsed();
    if text.len() != 8 * 1024 * 1024 {
        return Err(format!("big answered {} bytes, expected 8 MiB", text.len()));
    }
    let mut report = JsonObject::new();
    report.insert("total_ms".into(), json!(ms(total)));
    report.insert("bytes".into(), json!(text.len()));
    Ok(report)
}
