//! `bench-host`: the host path of `cargo xtask bench`, what a host application runs. One
//! `McpManager` starts the server(s), an `McpToolProvider` over it is registered in a
//! `ToolRegistry`, the tools are listed through the registry and every call is
//! `ToolRegistry::invoke` with the tool's LLM name (default manager options: arguments are
//! checked against the tool's schema, as a host has them). One workload, on a current-thread
//! Tokio runtime, and one JSON line with the keys `bench-client` prints, which runs the same
//! workloads through `McpConnection` alone.
//!
//! ```text
//! bench-host <w1|w2|w3|w4|w5> <legacy|modern|auto> <server command | http://url> [server flag...]
//! ```
//!
//! (see [`mcp_bench::cli`]). The era is the server's `era` setting; with `legacy` or `modern` the
//! run fails unless the server settled on that era.
//!
//! - `w1`, `w2`: see [`mcp_bench::workloads`], each call through the registry.
//! - `w3`: from `McpManager::start` (spawn, initialize, list every tool, build the routing table)
//!   through the registry's listing of the 10,002 tools: `total_ms`, `cpu_ms`, `tools`.
//! - `w4`: one `invoke` of `big`, whose host result carries the 8 MiB text: `total_ms`, `cpu_ms`,
//!   `bytes`.
//! - `w5`: ten servers under the one manager (server K's tools named `sK-...`), every call
//!   through the one registry.
//!
//! Every workload ends with `peak_rss_kib`. A failure prints to stderr and exits 1.

use std::process::exit;
use std::sync::Arc;

use mcp_bench::Failure;
use mcp_bench::cli::{Invocation, Target};
use mcp_bench::measure::{Stopwatch, run_and_report};
use mcp_bench::workloads::{Caller, HostCaller, W5_SERVERS, w1, w2, w5};
use mcp_manager::ServerState;
use mcp_manager::config::{McpConfig, ServerConfig, TransportChoice};
use mcp_manager::manager::{ManagerOptions, McpManager, McpToolProvider};
use mcp_protocol::ProtocolVersion;
use mcp_protocol::types::meta::JsonObject;
use serde_json::json;
use tool_system::{ExposedTool, ToolExecutionContext, ToolRegistry};

const W3_TOOLS: usize = 10_002;
const W4_BYTES: usize = 8 * 1024 * 1024;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let run = Invocation::parse(&args).unwrap_or_else(|e| {
        eprintln!("bench-host: {e}\nusage: bench-host <w1..w5> <legacy|modern|auto> <server command | url> [flag...]");
        exit(2);
    });
    run_and_report("bench-host", "host", run.workload, &run.era_name, work(&run));
}

/// The config of a server named `name` at `target`, in the era `run` asks for.
fn server_config(run: &Invocation, name: String, target: &Target) -> ServerConfig {
    let mut server = ServerConfig::new(name);
    server.era = run.era;
    match target {
        Target::Stdio { command, args } => (server.command, server.args) = (Some(command.clone()), args.clone()),
        Target::Http(url) => (server.transport, server.url) = (TransportChoice::StreamableHttp, Some(url.clone())),
    }
    server
}

async fn work(run: &Invocation) -> Result<JsonObject, Failure> {
    let watch = Stopwatch::start();
    let (servers, echo_names) = if run.workload == "w5" {
        let mut servers = Vec::with_capacity(W5_SERVERS);
        let mut echo_names = Vec::with_capacity(W5_SERVERS);
        for k in 0..W5_SERVERS {
            let (target, prefix) = run.target.w5_copy(k)?;
            servers.push(server_config(run, format!("s{k}"), &target));
            echo_names.push(format!("{prefix}echo"));
        }
        (servers, echo_names)
    } else {
        (vec![server_config(run, "bench".into(), &run.target)], vec!["echo".to_owned()])
    };
    let manager = McpManager::start(McpConfig { servers, client: Default::default() }, ManagerOptions::default()).await;
    let registry = Arc::new(ToolRegistry::new());
    registry.register(McpToolProvider::new(manager.clone())).await;
    let report = match settled_version(run, &manager) {
        Ok(version) => run_workload(run, &registry, watch, &echo_names).await.map(|mut report| {
            report.insert("protocol_version".into(), json!(version));
            report
        }),
        Err(e) => Err(e),
    };
    registry.close().await;
    report
}

/// The revision every server settled on; an error if one is not ready or not in the era asked for.
fn settled_version(run: &Invocation, manager: &McpManager) -> Result<String, Failure> {
    let mut version = String::new();
    for status in manager.status() {
        if status.state != ServerState::Ready {
            return Err(format!("server {} is {}: {:?}", status.name, status.state, status.last_error));
        }
        version = status.protocol_version.unwrap_or_default();
        if let Some(wanted) = run.wanted_era()
            && ProtocolVersion::parse(&version).era() != Some(wanted)
        {
            return Err(format!("server {} settled on {version}, not in the {wanted:?} era", status.name));
        }
    }
    Ok(version)
}

async fn run_workload(
    run: &Invocation,
    registry: &Arc<ToolRegistry>,
    watch: Stopwatch,
    echo_names: &[String],
) -> Result<JsonObject, Failure> {
    let ctx = ToolExecutionContext::default();
    let tools = registry.tools(&ctx).await;
    if run.workload == "w3" {
        let mut report = JsonObject::new();
        watch.record(&mut report);
        if tools.len() != W3_TOOLS {
            return Err(format!("the registry lists {} tools, expected {W3_TOOLS}", tools.len()));
        }
        report.insert("tools".into(), json!(tools.len()));
        return Ok(report);
    }
    let caller = Arc::new(HostCaller { registry: registry.clone(), ctx });
    match run.workload {
        "w1" => w1(caller.as_ref(), &llm_name(&tools, "echo")?).await,
        "w2" => w2(&caller, &llm_name(&tools, "echo")?).await,
        "w4" => w4(caller.as_ref(), &llm_name(&tools, "big")?).await,
        _ => {
            let targets = echo_names
                .iter()
                .map(|name| Ok((caller.clone(), llm_name(&tools, name)?)))
                .collect::<Result<Vec<_>, Failure>>()?;
            w5(&targets).await
        }
    }
}

/// The name the LLM calls the MCP tool `name` by.
fn llm_name(tools: &[ExposedTool], name: &str) -> Result<String, Failure> {
    tools
        .iter()
        .find(|t| t.spec.name == name)
        .map(|t| t.llm_name.to_string())
        .ok_or_else(|| format!("the registry does not list {name:?} ({} tools)", tools.len()))
}

async fn w4(caller: &HostCaller, big: &str) -> Result<JsonObject, Failure> {
    let watch = Stopwatch::start();
    let text = caller.call_text(big, None).await?;
    let mut report = JsonObject::new();
    watch.record(&mut report);
    if text.len() != W4_BYTES || text.bytes().any(|b| b != b'x') {
        return Err(format!("big answered {} bytes, expected {W4_BYTES} bytes of x", text.len()));
    }
    report.insert("bytes".into(), json!(text.len()));
    Ok(report)
}
