//! `rmcp-bench-http-client`: the official Rust SDK's side of `cargo xtask bench http`. It mirrors
//! `bench/mcp-bench/src/bin/bench_http_client.rs` (this stack's side) workload for workload, with
//! rmcp's streamable HTTP client (`StreamableHttpClientTransport` over reqwest) on a
//! current-thread Tokio runtime, and prints one JSON line with the same keys. W1 and W2 are
//! `../rmcp-workloads.rs`, shared with the stdio client.
//!
//! This crate is its own cargo workspace, so rmcp never enters the project's build; xtask builds
//! it with `--release --locked` into `target/rmcp-bench`.
//!
//! `rmcp-bench-http-client <w1|w2> <url>`

#[path = "../../rmcp-workloads.rs"]
mod workloads;

use std::process::exit;

use rmcp::model::JsonObject;
use rmcp::service::{RoleClient, RunningService, ServiceExt};
use rmcp::transport::StreamableHttpClientTransport;
use workloads::{Failure, run_and_report, w1, w2};

type Client = RunningService<RoleClient, ()>;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [workload, url] = args.as_slice() else {
        eprintln!("usage: rmcp-bench-http-client <w1|w2> <url>");
        exit(2);
    };
    run_and_report("rmcp-bench-http-client", workload, run(workload, url));
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
