//! The W1, W2 and W5 loops every bench client of ours runs, over a [`Caller`]: the connection path
//! ([`McpConnection`]) and the host path ([`HostCaller`]: `ToolRegistry::invoke` over
//! `McpToolProvider`) run exactly the same calls. rmcp's client runs the same loops
//! (`bench/rmcp/client/src/workloads.rs`), with the same texts and keys.
//!
//! - W1: [`W1_CALLS`] sequential echo calls (after [`WARM_UP_CALLS`] unmeasured ones):
//!   `total_ms`, `cpu_ms`, `calls_per_s`, `p50_us`, `p99_us`.
//! - W2: [`W2_CALLS`] echo calls, [`W2_IN_FLIGHT`] in flight: `total_ms`, `cpu_ms`.
//! - W5: [`W5_IN_FLIGHT`] calls on each of [`W5_SERVERS`] servers, every one issued at once;
//!   every answer is checked, and one that fails is counted rather than ending the run:
//!   `calls`, `answered`, `total_ms`, `cpu_ms`, `calls_per_s`, `p50_us`, `p99_us` (from each
//!   call's issue to its answer) and `first_error` if any call failed.

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use mcp_manager::{McpConnection, RequestOptions};
use mcp_protocol::types::content::ContentBlock;
use mcp_protocol::types::meta::JsonObject;
use mcp_protocol::types::mrtr::Outcome;
use serde_json::{Value, json};
use tool_system::{ToolExecutionContext, ToolExecutionResult, ToolInvocation, ToolRegistry};

use crate::Failure;
use crate::measure::{Stopwatch, record_latencies};

/// W1: sequential calls.
pub const W1_CALLS: usize = 2000;
/// W2: calls in all...
pub const W2_CALLS: usize = 256;
/// ...and how many are in flight at once.
pub const W2_IN_FLIGHT: usize = 32;
/// Unmeasured calls before W1 and W2.
pub const WARM_UP_CALLS: usize = 20;
/// W5: the servers...
pub const W5_SERVERS: usize = 10;
/// ...and the calls in flight on each (W5 issues every call at once).
pub const W5_IN_FLIGHT: usize = 100;
/// Unmeasured calls on each server before W5.
const W5_WARM_UP_CALLS: usize = 5;

/// Something that calls a tool and gives back the text of its answer.
pub trait Caller: Send + Sync + 'static {
    /// Call `tool` with `arguments`; the text of its single text block, or why there is none.
    fn call_text(
        &self,
        tool: &str,
        arguments: Option<JsonObject>,
    ) -> impl Future<Output = Result<String, Failure>> + Send;
}

impl Caller for McpConnection {
    async fn call_text(&self, tool: &str, arguments: Option<JsonObject>) -> Result<String, Failure> {
        let outcome = self
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
}

/// The host path: each call is `ToolRegistry::invoke` with the tool's LLM name, as a host's
/// reasoning loop makes it (the registry routes it to `McpToolProvider`, which calls through
/// `McpManager`).
pub struct HostCaller {
    /// The registry the manager's provider is registered in.
    pub registry: Arc<ToolRegistry>,
    /// The context of every call.
    pub ctx: ToolExecutionContext,
}

impl Caller for HostCaller {
    async fn call_text(&self, tool: &str, arguments: Option<JsonObject>) -> Result<String, Failure> {
        let invocation = ToolInvocation::new(tool, arguments.unwrap_or_default());
        result_text(tool, self.registry.invoke(invocation, self.ctx.clone()).await)
    }
}

/// The text of a host result: its `content`, else its one text item. The items are let go
/// before the content is taken, so when `content` holds the item's own buffer (one text item, as
/// the MCP adapter makes it) it is taken without a copy, as a host that keeps the text would.
pub fn result_text(tool: &str, result: ToolExecutionResult) -> Result<String, Failure> {
    let ToolExecutionResult { success, content, items, error_message, .. } = result;
    if !success {
        return Err(format!("{tool} failed: {}", error_message.unwrap_or_default()));
    }
    if let Some(text) = content {
        drop(items);
        return Ok(text.into_string());
    }
    match items.first().and_then(|item| item.as_text()) {
        Some(text) => Ok(text.to_owned()),
        None => Err(format!("{tool}: no text in {items:?}")),
    }
}

/// The text call `i` of W1, W2 and W5 sends (and expects back).
pub fn echo_text(i: usize) -> String {
    format!("echo {i:05}: the quick brown fox jumps over the lazy dog")
}

/// Call `tool` (an echo tool) with `text` and check the answer.
pub async fn echo(caller: &impl Caller, tool: &str, text: String) -> Result<(), Failure> {
    let mut arguments = JsonObject::new();
    arguments.insert("text".into(), Value::String(text.clone()));
    let got = caller.call_text(tool, Some(arguments)).await?;
    if got != text {
        return Err(format!("{tool} answered {got:?} to {text:?}"));
    }
    Ok(())
}

async fn warm_up(caller: &impl Caller, tool: &str, calls: usize) -> Result<(), Failure> {
    for i in 0..calls {
        echo(caller, tool, echo_text(i)).await?;
    }
    Ok(())
}

/// W1 through `caller`, whose echo tool is `tool`.
pub async fn w1(caller: &impl Caller, tool: &str) -> Result<JsonObject, Failure> {
    warm_up(caller, tool, WARM_UP_CALLS).await?;
    let mut latencies = Vec::with_capacity(W1_CALLS);
    let watch = Stopwatch::start();
    for i in 0..W1_CALLS {
        let call = Instant::now();
        echo(caller, tool, echo_text(i)).await?;
        latencies.push(call.elapsed());
    }
    let mut report = JsonObject::new();
    let total = watch.record(&mut report);
    report.insert("calls_per_s".into(), json!(W1_CALLS as f64 / total.as_secs_f64()));
    record_latencies(&mut report, &mut latencies);
    Ok(report)
}

/// W2 through `caller`, whose echo tool is `tool`.
pub async fn w2<C: Caller>(caller: &Arc<C>, tool: &str) -> Result<JsonObject, Failure> {
    warm_up(caller.as_ref(), tool, WARM_UP_CALLS).await?;
    let next = Arc::new(AtomicUsize::new(0));
    let watch = Stopwatch::start();
    let mut workers = tokio::task::JoinSet::new();
    for _ in 0..W2_IN_FLIGHT {
        let (caller, next, tool) = (caller.clone(), next.clone(), tool.to_owned());
        workers.spawn(async move {
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= W2_CALLS {
                    return Ok::<(), Failure>(());
                }
                echo(caller.as_ref(), &tool, echo_text(i)).await?;
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

/// W5 over `targets`: (a caller, the name of its server's echo tool) for each server.
pub async fn w5<C: Caller>(targets: &[(Arc<C>, String)]) -> Result<JsonObject, Failure> {
    for (caller, tool) in targets {
        warm_up(caller.as_ref(), tool, W5_WARM_UP_CALLS).await?;
    }
    let calls = targets.len() * W5_IN_FLIGHT;
    let watch = Stopwatch::start();
    let mut set = tokio::task::JoinSet::new();
    for (k, (caller, tool)) in targets.iter().enumerate() {
        for j in 0..W5_IN_FLIGHT {
            let (caller, tool, text) = (caller.clone(), tool.clone(), echo_text(k * W5_IN_FLIGHT + j));
            let issued = Instant::now();
            set.spawn(async move { echo(caller.as_ref(), &tool, text).await.map(|()| issued.elapsed()) });
        }
    }
    let (mut latencies, mut first_error) = (Vec::with_capacity(calls), None);
    while let Some(done) = set.join_next().await {
        match done.map_err(|e| format!("a call's task failed: {e}")).and_then(|answer| answer) {
            Ok(latency) => latencies.push(latency),
            Err(e) => {
                first_error.get_or_insert(e);
            }
        }
    }
    let mut report = JsonObject::new();
    let total = watch.record(&mut report);
    report.insert("calls".into(), json!(calls));
    report.insert("answered".into(), json!(latencies.len()));
    report.insert("calls_per_s".into(), json!(latencies.len() as f64 / total.as_secs_f64()));
    record_latencies(&mut report, &mut latencies);
    if let Some(e) = first_error {
        report.insert("first_error".into(), json!(e));
    }
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    /// A caller that echoes, except for the texts it is told to garble or fail.
    struct Script {
        garble: Vec<String>,
        fail: Vec<String>,
        seen: Mutex<Vec<String>>,
    }

    impl Caller for Script {
        async fn call_text(&self, tool: &str, arguments: Option<JsonObject>) -> Result<String, Failure> {
            let text = arguments.and_then(|a| a.get("text").and_then(|t| t.as_str().map(str::to_owned)));
            let text = text.ok_or_else(|| format!("{tool}: no text"))?;
            self.seen.lock().unwrap().push(text.clone());
            if self.fail.contains(&text) {
                return Err(format!("{tool}: the server went away"));
            }
            Ok(if self.garble.contains(&text) { format!("{text}!") } else { text })
        }
    }

    fn script(garble: &[usize], fail: &[usize]) -> Arc<Script> {
        Arc::new(Script {
            garble: garble.iter().map(|i| echo_text(*i)).collect(),
            fail: fail.iter().map(|i| echo_text(*i)).collect(),
            seen: Mutex::new(Vec::new()),
        })
    }

    fn run<T>(work: impl Future<Output = T>) -> T {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        runtime.block_on(async { tokio::time::timeout(std::time::Duration::from_secs(30), work).await.unwrap() })
    }

    #[test]
    fn w1_and_w2_make_every_call_once_and_report_their_keys() {
        let caller = script(&[], &[]);
        let report = run(w1(caller.as_ref(), "echo")).unwrap();
        for key in ["total_ms", "cpu_ms", "calls_per_s", "p50_us", "p99_us"] {
            assert!(report[key].as_f64().is_some(), "{key} in {report:?}");
        }
        assert_eq!(caller.seen.lock().unwrap().len(), WARM_UP_CALLS + W1_CALLS);

        let caller = script(&[], &[]);
        run(w2(&caller, "echo")).unwrap();
        let mut seen = caller.seen.lock().unwrap().split_off(WARM_UP_CALLS);
        seen.sort();
        let expected: Vec<String> = (0..W2_CALLS).map(echo_text).collect();
        assert_eq!(seen, expected, "every W2 text exactly once");
    }

    #[test]
    fn a_wrong_echo_fails_w1_and_w2_with_both_texts() {
        let err = run(w1(script(&[7], &[]).as_ref(), "echo")).unwrap_err();
        assert!(err.contains(&echo_text(7)) && err.contains('!'), "{err}");
        let err = run(w2(&script(&[100], &[]), "echo")).unwrap_err();
        assert!(err.contains(&echo_text(100)), "{err}");
    }

    #[test]
    fn w5_counts_lost_and_wrong_answers_instead_of_hiding_them() {
        // Texts past the warm-up's (0..W5_WARM_UP_CALLS on every server), which must succeed.
        let targets: Vec<(Arc<Script>, String)> = (0..W5_SERVERS)
            .map(|k| (script(&[k * W5_IN_FLIGHT + 10], &[k * W5_IN_FLIGHT + 11]), format!("s{k}-echo")))
            .collect();
        let report = run(w5(&targets)).unwrap();
        assert_eq!(report["calls"], json!(W5_SERVERS * W5_IN_FLIGHT));
        assert_eq!(report["answered"], json!(W5_SERVERS * (W5_IN_FLIGHT - 2)));
        let first = report["first_error"].as_str().unwrap_or_default();
        assert!(first.contains("went away") || first.contains("answered"), "{report:?}");

        let clean: Vec<(Arc<Script>, String)> = (0..2).map(|k| (script(&[], &[]), format!("s{k}-echo"))).collect();
        let report = run(w5(&clean)).unwrap();
        assert_eq!(report["answered"], json!(2 * W5_IN_FLIGHT));
        assert!(report.get("first_error").is_none());
    }

    #[test]
    fn a_host_result_gives_its_content_else_its_text_item_else_an_error() {
        assert_eq!(result_text("t", ToolExecutionResult::ok_text("hi")).unwrap(), "hi");
        let items = ToolExecutionResult::ok_items(vec![tool_system::ContentItem::text("from an item")]);
        assert_eq!(result_text("t", items).unwrap(), "from an item");
        let err = result_text("t", ToolExecutionResult::failed("boom")).unwrap_err();
        assert!(err.contains("t failed: boom"), "{err}");
        let err = result_text("t", ToolExecutionResult::ok()).unwrap_err();
        assert!(err.contains("no text"), "{err}");
    }
}
