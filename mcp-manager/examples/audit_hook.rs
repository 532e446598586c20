//! Extension point: hooks. An observer writes an audit line for every tool call (who, what,
//! when, how it went); a before-call interceptor enforces a policy (no images for this user);
//! an after-call interceptor redacts what the host should not keep (e-mail addresses).
//! Observers only watch; interceptors may act, each bounded in time, and one that fails never
//! breaks the call (see `mcp_manager::manager::interceptors`).
//!
//! ```text
//! cargo build -p mcp-cli && cargo run -p mcp-manager --example audit_hook [-- path/to/mcp]
//! ```
//!
//! Exits 0 only if the audit log holds the three calls, the image was refused without being
//! made, and the address in the result reached neither the host nor the observer.

mod common;

use std::sync::{Arc, Mutex};

use mcp_manager::{Decision, McpManager, McpToolProvider, ToolCall};
use serde_json::json;
use tool_system::{ToolExecutionContext, ToolExecutionResult, ToolInvocation, ToolRegistry};

/// Hides every word with an `@` in it.
fn redact_addresses(text: &str) -> String {
    text.split(' ').map(|word| if word.contains('@') { "[address]" } else { word }).collect::<Vec<_>>().join(" ")
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let audit: Arc<Mutex<Vec<String>>> = Arc::default();
    let log = audit.clone();
    let manager = McpManager::builder()
        .server(common::demo_server())
        // Observer: one JSON line per call (the event serialises with its name and timestamp;
        // secret-looking arguments are already redacted).
        .on_tool_executed(move |event| {
            let line = serde_json::to_string(event).unwrap_or_default();
            log.lock().unwrap_or_else(|p| p.into_inner()).push(line);
        })
        // Policy: a veto keeps the call off the wire; the host gets a failed result saying why.
        .before_call("policy", |call: ToolCall| async move {
            if call.tool == "image" && call.caller.user_id == "guest" {
                Decision::Veto("guests may not make images".into())
            } else {
                Decision::Allow
            }
        })
        // Redaction: the host, its history and the observers see the redacted result.
        .after_call("redact", |_call: ToolCall, mut result: ToolExecutionResult| async move {
            result.content = result.content.as_deref().map(|c| redact_addresses(c).into());
            for item in &mut result.items {
                if let tool_system::ContentItem::Text(text) = item {
                    text.text = redact_addresses(&text.text).into();
                }
            }
            result
        })
        .start()
        .await?;

    let tools = ToolRegistry::new();
    tools.register(McpToolProvider::new(manager)).await;
    let guest = ToolExecutionContext::new("session-1", "chat-1").with_user("guest");
    let call = |name: &str, args| ToolInvocation::from_value(name, args);
    let echoed = tools.invoke(call("demo__echo", json!({"text": "write to ann@example.com"})), guest.clone()).await;
    let image = tools.invoke(call("demo__image", json!({"size": 8})), guest.clone()).await;
    let sum = tools.invoke(call("demo__add", json!({"a": 1, "b": 2})), guest).await;
    tools.close().await;

    let audit = audit.lock().unwrap_or_else(|p| p.into_inner()).clone();
    for line in &audit {
        println!("audit: {line}");
    }
    println!("echo: {}\nimage: {}", echoed.history_text(), image.history_text());
    common::check(audit.len() == 3, "one audit line per call")?;
    common::check(
        audit.iter().all(|l| l.contains("\"user_id\":\"guest\"") && l.contains("timestamp_ms")),
        "who and when",
    )?;
    common::check(echoed.history_text() == "write to [address]", "the result was redacted")?;
    let redacted_length = format!("\"content_length\":{}", "write to [address]".len());
    common::check(audit[0].contains(&redacted_length), "the observer saw the redacted result")?;
    common::check(!image.success && image.history_text().contains("guests may not make images"), "the veto")?;
    common::check(sum.success, "other calls are not affected")?;
    Ok(())
}
