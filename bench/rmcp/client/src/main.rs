//! `rmcp-bench-client`: the official Rust SDK's side of `cargo xtask bench`. It runs one workload
//! with rmcp's client on a current-thread Tokio runtime, over stdio (`TokioChildProcess`) or
//! streamable HTTP (`StreamableHttpClientTransport` over reqwest), and prints one JSON line with
//! the keys our clients print (`bench/mcp-bench`), so that xtask reads both alike.
//!
//! ```text
//! rmcp-bench-client <w1|w2|w3|w4|w5> <legacy|modern|default> <server path | http://url> [server flag...]
//! ```
//!
//! The era picks rmcp's lifecycle: `legacy` is the `initialize` handshake at 2025-11-25, `modern`
//! is `server/discover` at 2026-07-28, `default` is what `().serve(transport)` does (an
//! `initialize` that offers rmcp's newest revision). The report's `protocol_version` says what was
//! negotiated. A target starting with `http://` is a streamable HTTP endpoint; anything else is a
//! server command, spawned with the flags that follow. W5 spawns ten servers, each with
//! `--prefix sK-` added, and calls `sK-echo` on server K.
//!
//! The workloads live in [`workloads`]; this crate is a member of `bench/rmcp`, a cargo workspace
//! of its own, so rmcp never enters the project's build.

mod workloads;

use std::process::exit;

use rmcp::model::{ClientConfig, JsonObject, ProtocolVersion};
use rmcp::service::{ClientLifecycleMode, ClientServiceExt, RoleClient, RunningService};
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use serde_json::json;
use workloads::{Failure, Stopwatch, Target, W5_SERVERS, call_text, run_and_report, w1, w2, w5};

const W3_TOOLS: usize = 10_002;
const W4_BYTES: usize = 8 * 1024 * 1024;

type Client = RunningService<RoleClient, ClientConfig>;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [workload, era, target, server_args @ ..] = args.as_slice() else {
        eprintln!(
            "usage: rmcp-bench-client <w1|w2|w3|w4|w5> <legacy|modern|default> <server path | http://url> [server flag...]"
        );
        exit(2);
    };
    if !matches!(era.as_str(), "legacy" | "modern" | "default") {
        eprintln!("rmcp-bench-client: unknown era {era:?}: expected legacy, modern or default");
        exit(2);
    }
    run_and_report("rmcp-bench-client", workload, era, run(workload, era, target, server_args));
}

async fn run(workload: &str, era: &str, target: &str, server_args: &[String]) -> Result<JsonObject, Failure> {
    if workload == "w5" {
        return run_w5(era, target, server_args).await;
    }
    let watch = Stopwatch::start();
    let client = connect(era, target, server_args).await?;
    let mut report = match workload {
        "w1" => w1(client.peer()).await,
        "w2" => w2(client.peer()).await,
        "w3" => w3(&client, watch).await,
        "w4" => w4(&client).await,
        other => Err(format!("unknown workload {other:?}")),
    };
    if let Ok(report) = &mut report {
        report.insert("protocol_version".into(), json!(negotiated(&client)));
    }
    let _ = client.cancel().await;
    report
}

/// Connect to `target` (a URL or a server command) in `era`.
async fn connect(era: &str, target: &str, server_args: &[String]) -> Result<Client, Failure> {
    let mut config = ClientConfig::default();
    let lifecycle = match era {
        "legacy" => {
            config = config.with_protocol_version(ProtocolVersion::V_2025_11_25);
            ClientLifecycleMode::Initialize
        }
        "modern" => ClientLifecycleMode::Discover { preferred_versions: vec![ProtocolVersion::V_2026_07_28] },
        _ => ClientLifecycleMode::Initialize,
    };
    let client = if target.starts_with("http://") {
        let transport = StreamableHttpClientTransport::from_uri(target.to_owned());
        config.serve_with_lifecycle(transport, lifecycle).await
    } else {
        let mut command = tokio::process::Command::new(target);
        command.args(server_args);
        let transport = TokioChildProcess::new(command).map_err(|e| format!("spawn {target}: {e}"))?;
        config.serve_with_lifecycle(transport, lifecycle).await
    };
    client.map_err(|e| format!("connect: {e}"))
}

/// The revision the client settled on.
fn negotiated(client: &Client) -> String {
    client.peer().peer_info().map(|info| info.protocol_version.to_string()).unwrap_or_default()
}

async fn w3(client: &Client, watch: Stopwatch) -> Result<JsonObject, Failure> {
    let tools = client.peer().list_all_tools().await.map_err(|e| format!("tools/list: {e}"))?;
    let mut report = JsonObject::new();
    watch.record(&mut report);
    if tools.len() != W3_TOOLS {
        return Err(format!("listed {} tools, expected {W3_TOOLS}", tools.len()));
    }
    report.insert("tools".into(), json!(tools.len()));
    Ok(report)
}

async fn w4(client: &Client) -> Result<JsonObject, Failure> {
    let watch = Stopwatch::start();
    let text = call_text(client.peer(), "big", None).await?;
    let mut report = JsonObject::new();
    watch.record(&mut report);
    if text.len() != W4_BYTES || text.bytes().any(|b| b != b'x') {
        return Err(format!("big answered {} bytes, expected {W4_BYTES} bytes of x", text.len()));
    }
    report.insert("bytes".into(), json!(text.len()));
    Ok(report)
}

/// W5: ten clients, one server each (stdio only).
async fn run_w5(era: &str, target: &str, server_args: &[String]) -> Result<JsonObject, Failure> {
    if target.starts_with("http://") {
        return Err("w5 runs over stdio only".into());
    }
    let mut clients = Vec::with_capacity(W5_SERVERS);
    for k in 0..W5_SERVERS {
        let mut args = server_args.to_vec();
        args.extend(["--prefix".to_owned(), format!("s{k}-")]);
        clients.push(connect(era, target, &args).await?);
    }
    let targets: Vec<Target> = clients.iter().enumerate().map(|(k, c)| (c.peer().clone(), format!("s{k}-echo"))).collect();
    let report = w5(targets).await.map(|mut report| {
        report.insert("protocol_version".into(), json!(negotiated(&clients[0])));
        report
    });
    for client in clients {
        let _ = client.cancel().await;
    }
    report
}
