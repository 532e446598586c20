//! `bench-manager`: the host side of `cargo xtask bench manager`. One `McpManager` starts many
//! stdio servers at once, a `ToolRegistry` lists their tools through `McpToolProvider`, and the
//! process prints one JSON line with what it measured.
//!
//! ```text
//! bench-manager fake <path to fake-mcp-server> [--servers N] [--tools T]
//! bench-manager unique [--servers N] [--tools T]
//! bench-manager serve --prefix P --tools T
//! ```
//!
//! - `fake`: N copies (default 100) of `fake-mcp-server --tools T` (default 100). Every copy
//!   lists the same names (`tool-0000` ...), so the manager routes each name to the first server
//!   in config order and reports the other copies as clashes: T routed tools.
//! - `unique`: N copies of this binary in `serve` mode, server `i` naming its tools
//!   `s<i>-tool-0000` ...: N × T routed tools, as a host with many different servers has.
//! - `serve`: a minimal stdio MCP server (legacy era) with T generated tools named
//!   `<P>tool-0000` ... and shaped like the fake server's (an object input schema, a one-line
//!   description); a call of one of them answers `ok <name>`.
//!
//! The keys: `servers`, `ready` (servers in state `ready`), `routed_tools`, `conflicts`,
//! `expected_tools` (what the routing table should hold: T for `fake`, N × T for `unique`),
//! `exposed_tools` (in the registry), `ready_ms` (from `McpManager::start` to its return: every
//! server settled), `vmrss_started_kib` (this process, right after the start), `vmhwm_kib` and
//! `vmrss_kib` (this process only, read after the listing and the lookups; the servers are
//! other processes), `registry_lookup_ns` (`ToolRegistry::lookup`
//! of an LLM name), `routing_lookup_ns` (`McpManager::routing().tool(name)`, the routing table
//! snapshot included), each the mean over a tight loop through every tool, and `close_ms` (until
//! every server process is gone). A failure prints to stderr and exits 1.

use std::hint::black_box;
use std::io::{BufRead, BufWriter, Write};
use std::process::exit;
use std::time::{Duration, Instant};

use mcp_manager::ServerState;
use mcp_manager::config::{McpConfig, ServerConfig};
use mcp_manager::manager::{ManagerOptions, McpManager, McpToolProvider};
use serde_json::{Value, json};
use test_support::process::wait_until_gone;
use tool_system::{ToolExecutionContext, ToolInvocation, ToolRegistry};

/// Lookups timed per measurement (cycling through every tool).
const LOOKUPS: usize = 500_000;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.split_first() {
        Some((mode, rest)) if mode == "serve" => serve(rest),
        Some((mode, rest)) if mode == "fake" || mode == "unique" => {
            let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("a Tokio runtime");
            runtime.block_on(bench(mode, rest)).map(|report| println!("{report}"))
        }
        _ => Err("usage: bench-manager <fake PATH|unique|serve> [--servers N] [--tools T] [--prefix P]".into()),
    };
    if let Err(e) = result {
        eprintln!("bench-manager: {e}");
        exit(1);
    }
}

/// `--servers`, `--tools`, `--prefix` and, for `fake`, the leading server path.
struct Options {
    fake: Option<String>,
    servers: usize,
    tools: usize,
    prefix: String,
}

fn options(mode: &str, args: &[String]) -> Result<Options, String> {
    let mut args = args.iter();
    let fake =
        if mode == "fake" { Some(args.next().ok_or("fake: the path of fake-mcp-server is missing")?) } else { None };
    let mut o = Options { fake: fake.cloned(), servers: 100, tools: 100, prefix: String::new() };
    while let Some(flag) = args.next() {
        let value = args.next().ok_or_else(|| format!("{flag} needs a value"))?;
        let number = || value.parse::<usize>().map_err(|_| format!("{flag}: not a number: {value:?}"));
        match flag.as_str() {
            "--servers" => o.servers = number()?,
            "--tools" => o.tools = number()?,
            "--prefix" => o.prefix = value.clone(),
            _ => return Err(format!("unknown flag {flag}")),
        }
    }
    Ok(o)
}

async fn bench(mode: &str, args: &[String]) -> Result<Value, String> {
    let o = options(mode, args)?;
    let me = std::env::current_exe().map_err(|e| format!("the path of this program: {e}"))?;
    let servers = (0..o.servers)
        .map(|i| {
            let mut server = ServerConfig::new(format!("s{i:03}"));
            let tools = o.tools.to_string();
            (server.command, server.args) = match &o.fake {
                Some(fake) => (Some(fake.clone()), vec!["--tools".into(), tools]),
                None => {
                    let prefix = format!("s{i:03}-");
                    let args = vec!["serve".into(), "--prefix".into(), prefix, "--tools".into(), tools];
                    (Some(me.to_string_lossy().into_owned()), args)
                }
            };
            server.startup_timeout = Duration::from_secs(120);
            server
        })
        .collect();

    let started = Instant::now();
    let manager = McpManager::start(McpConfig { servers, client: Default::default() }, ManagerOptions::default()).await;
    let ready_ms = started.elapsed().as_secs_f64() * 1e3;
    let status = manager.status();
    let ready = status.iter().filter(|s| s.state == ServerState::Ready).count();
    if let Some(s) = status.iter().find(|s| s.state != ServerState::Ready) {
        return Err(format!("{ready} of {} servers ready; {} is {}: {:?}", o.servers, s.name, s.state, s.last_error));
    }
    let pids: Vec<u32> = status.iter().filter_map(|s| s.pid).collect();
    let vmrss_started_kib = memory_kib("VmRSS:");

    let registry = ToolRegistry::new();
    registry.register(McpToolProvider::new(manager.clone())).await;
    let ctx = ToolExecutionContext::default();
    let tools = registry.tools(&ctx).await;
    let first = tools.first().ok_or("the registry lists no tool")?;
    // One real round trip, so that the table is known to route (the fake server answers its
    // generated tools with an error: only `serve` has something to say).
    if o.fake.is_none() {
        let invocation = ToolInvocation::from_value(&first.llm_name, json!({}));
        let result = registry.invoke(invocation, ctx).await;
        if result.history_text() != format!("ok {}", first.spec.name) {
            return Err(format!("calling {}: {result:?}", first.llm_name));
        }
    }

    let llm_names: Vec<&str> = tools.iter().map(|t| t.llm_name.as_str()).collect();
    let mcp_names: Vec<&str> = tools.iter().map(|t| t.spec.name.as_str()).collect();
    let registry_ns = per_call(&llm_names, |name| registry.lookup(name).is_some());
    let routing_ns = per_call(&mcp_names, |name| manager.routing().tool(name).is_some());
    let (vmhwm_kib, vmrss_kib) = (memory_kib("VmHWM:"), memory_kib("VmRSS:"));

    let routing = manager.routing();
    let (routed_tools, conflicts) = (routing.tools().len(), routing.conflicts().len());
    let expected_tools = if o.fake.is_some() { o.tools } else { o.servers * o.tools };
    drop(routing);
    let closing = Instant::now();
    registry.close().await;
    for pid in pids {
        wait_until_gone(pid, Duration::from_secs(10)).await.map_err(|e| format!("after close: {e}"))?;
    }
    let close_ms = closing.elapsed().as_secs_f64() * 1e3;
    Ok(json!({
        "mode": mode, "servers": o.servers, "ready": ready, "routed_tools": routed_tools, "conflicts": conflicts,
        "expected_tools": expected_tools, "exposed_tools": tools.len(), "ready_ms": ready_ms,
        "vmrss_started_kib": vmrss_started_kib, "vmhwm_kib": vmhwm_kib, "vmrss_kib": vmrss_kib,
        "registry_lookup_ns": registry_ns, "routing_lookup_ns": routing_ns, "close_ms": close_ms,
    }))
}

/// The mean time of `lookup` over [`LOOKUPS`] calls cycling through `names`, after one
/// unmeasured pass. Every lookup must hit.
fn per_call(names: &[&str], lookup: impl Fn(&str) -> bool) -> f64 {
    assert!(names.iter().all(|n| lookup(n)), "every listed tool is found");
    let started = Instant::now();
    for i in 0..LOOKUPS {
        black_box(lookup(black_box(names[i % names.len()])));
    }
    started.elapsed().as_secs_f64() * 1e9 / LOOKUPS as f64
}

/// A `Vm*` line of `/proc/self/status`, in KiB (0 if it is not there).
fn memory_kib(key: &str) -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix(key))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

/// The `serve` mode: answer newline-delimited JSON-RPC on stdin until it ends.
fn serve(args: &[String]) -> Result<(), String> {
    let o = options("serve", args)?;
    let tools: Vec<Value> = (0..o.tools)
        .map(|i| {
            let name = format!("{}tool-{i:04}", o.prefix);
            json!({"name": name, "description": format!("generated tool number {i}"), "inputSchema": {"type": "object"}})
        })
        .collect();
    let tools = json!({ "tools": tools });
    let mut out = BufWriter::new(std::io::stdout().lock());
    for line in std::io::stdin().lock().lines() {
        let line = line.map_err(|e| format!("reading stdin: {e}"))?;
        let Ok(message) = serde_json::from_str::<Value>(&line) else { continue };
        let (Some(id), Some(method)) = (message.get("id"), message["method"].as_str()) else { continue };
        let answer = match method {
            "initialize" => {
                // The client's revision when it is a legacy one, else the latest legacy one.
                let asked = message["params"]["protocolVersion"].as_str().unwrap_or_default();
                let version = if ("2024-11-05"..="2025-11-25").contains(&asked) { asked } else { "2025-11-25" };
                let info = json!({"name": "bench-manager", "version": "1"});
                Ok(json!({"protocolVersion": version, "capabilities": {"tools": {}}, "serverInfo": info}))
            }
            "ping" => Ok(json!({})),
            "tools/list" => Ok(tools.clone()),
            "tools/call" => {
                let name = message["params"]["name"].as_str().unwrap_or_default();
                Ok(json!({"content": [{"type": "text", "text": format!("ok {name}")}]}))
            }
            other => Err(json!({"code": -32601, "message": format!("method not found: {other}")})),
        };
        let reply = match answer {
            Ok(result) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
            Err(error) => json!({"jsonrpc": "2.0", "id": id, "error": error}),
        };
        writeln!(out, "{reply}").and_then(|()| out.flush()).map_err(|e| format!("writing stdout: {e}"))?;
    }
    Ok(())
}
