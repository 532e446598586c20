//! A whole host in about twenty lines (the body of `main`): MCP servers answered by the host's
//! own LLM (sampling) and UI (elicitation), their tools next to a native Rust tool in one
//! `ToolRegistry`, offered to the LLM and called the way an LLM would call them.
//!
//! ```text
//! cargo build -p mcp-cli && cargo run -p mcp-manager --example host [-- path/to/mcp]
//! ```
//!
//! It runs the built-in demo server of the `mcp` command (see `common/mod.rs` for how the binary
//! is found) and asks its `summarize` tool for a summary, which the server gets from the host's
//! LLM: here a small `LlmClient` of our own, where a real host would plug in
//! `host_bridge::OpenAiClient` or its own model. Exits 0 only if the summary came back from that
//! LLM and the native tool ran.

mod common;

use std::sync::Arc;

use futures::future::BoxFuture;
use host_bridge::{
    AskUser, ChatRequest, ChatResponse, FinishReason, FormAnswer, FormRequest, HostBridge, LlmClient, LlmError,
    SamplingOptions,
};
use mcp_manager::{McpManager, McpToolProvider};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use tool_system::{NativeTool, NativeToolProvider, ToolExecutionContext, ToolInvocation, ToolRegistry};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    // What servers may ask of the host: its LLM (sampling) and its UI (elicitation).
    let bridge = HostBridge::builder()
        .llm(Arc::new(ShoutingLlm), SamplingOptions::default())
        .elicitation(Arc::new(AcceptDefaults))
        .build();
    let manager = McpManager::builder().server(common::demo_server()).callbacks(&bridge).start().await?;

    // MCP tools and the host's own tools, behind one registry.
    let tools = ToolRegistry::new();
    tools.register(McpToolProvider::new(manager)).await;
    let word_count = NativeTool::new("word_count", "Count the words of a text", |args: Text, _ctx| async move {
        args.text.split_whitespace().count().to_string()
    });
    tools.register(NativeToolProvider::new("host").with_tool(word_count)).await;

    // What the LLM is offered, and two calls as the LLM would make them.
    let ctx = ToolExecutionContext::default().with_user("ann");
    let offered = tools.llm_definitions(&ctx).await;
    let text = json!({"text": "MCP servers become tools of the host."});
    let summary = tools.invoke(ToolInvocation::from_value("demo__summarize", text.clone()), ctx.clone()).await;
    let words = tools.invoke(ToolInvocation::from_value("word_count", text), ctx).await;
    tools.close().await; // closes the manager, which stops the server

    println!("{} tools offered; summary: {}; words: {}", offered.len(), summary.history_text(), words.history_text());
    common::check(offered.len() > 8, "the demo's tools and the native one are offered")?;
    common::check(summary.history_text().contains("MCP SERVERS BECOME TOOLS"), "the host's LLM wrote the summary")?;
    common::check(words.history_text() == "7", "the native tool counted the words")?;
    Ok(())
}

/// The native tool's arguments; the doc comment becomes the schema's description.
#[derive(Deserialize, JsonSchema)]
struct Text {
    /// The text whose words to count.
    text: String,
}

/// The host's LLM: it answers every request with the last message, shouted.
struct ShoutingLlm;

impl LlmClient for ShoutingLlm {
    fn chat(&self, request: ChatRequest) -> BoxFuture<'static, Result<ChatResponse, LlmError>> {
        let last = request.messages.last().map(|m| m.text()).unwrap_or_default();
        Box::pin(async move {
            Ok(ChatResponse {
                text: Some(last.to_uppercase()),
                tool_calls: Vec::new(),
                finish_reason: FinishReason::Stop,
                model: "shouting-1".into(),
                usage: None,
            })
        })
    }

    fn default_model(&self) -> &str {
        "shouting-1"
    }
}

/// The host's UI for forms a server asks the user to fill in: here it shows the question and
/// accepts what the form proposes (a real host would ask the user).
struct AcceptDefaults;

impl AskUser for AcceptDefaults {
    fn ask_form(&self, request: FormRequest) -> BoxFuture<'static, FormAnswer> {
        println!("server {} asks: {}", request.server, request.message);
        Box::pin(async move { FormAnswer::Accept(request.prefilled) })
    }
}
