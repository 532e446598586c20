//! A minimal host: the tools of MCP servers and one native Rust tool behind one tool list.
//!
//! ```text
//! cargo run -p mcp-manager --example host -- [CONFIG] [TOOL [JSON-ARGUMENTS]]
//! MCP_BIN=target/debug/mcp cargo run -p mcp-manager --example host
//! ```
//!
//! With a config file (any format `McpConfig::load` reads: a desktop `mcpServers` JSON, VS
//! Code's `mcp.json`, a Codex or reference TOML file) the host starts those servers. Without one
//! it runs the built-in demo server of the `mcp` command (`mcp serve-demo`) when `MCP_BIN` names
//! that binary. It then lists every tool the way an LLM would see it, calls one tool (`TOOL`
//! with `JSON-ARGUMENTS`, else the demo's `echo`, else the native `word_count`) and prints the
//! text the host would put in the conversation history.

use std::error::Error;
use std::path::Path;

use mcp_manager::config::{ConfigFormat, McpConfig, ProcessEnv};
use mcp_manager::manager::{ManagerOptions, McpManager, McpToolProvider};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use tool_system::{NativeTool, NativeToolProvider, ToolExecutionContext, ToolInvocation, ToolRegistry};

/// The demo config: `${MCP_BIN}` is expanded from the environment when it is loaded.
const DEMO_CONFIG: &str = r#"{ "mcpServers": { "demo": { "command": "${MCP_BIN}", "args": ["serve-demo"] } } }"#;

/// The arguments of the native tool; the doc comments become the schema's descriptions.
#[derive(Deserialize, JsonSchema)]
struct WordCountArgs {
    /// The text whose words to count.
    text: String,
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();

    // 1. The configuration: a file, or the built-in demo server.
    let (config, default_call) = match args.first() {
        Some(path) => (McpConfig::load(Path::new(path))?, ("word_count", json!({"text": "one two three"}))),
        None if std::env::var_os("MCP_BIN").is_some() => {
            let config = McpConfig::parse(DEMO_CONFIG, Some(ConfigFormat::DesktopJson), "demo config", &ProcessEnv)?;
            (config, ("demo__echo", json!({"text": "hello from the host"})))
        }
        None => {
            eprintln!("usage: host [CONFIG] [TOOL [JSON-ARGUMENTS]]");
            eprintln!("Give a config file, or set MCP_BIN to the `mcp` binary to use its demo server:");
            eprintln!("  cargo build -p mcp-cli && MCP_BIN=target/debug/mcp cargo run -p mcp-manager --example host");
            std::process::exit(2);
        }
    };

    // 2. Start every server concurrently; a server that fails is reported, not fatal.
    let manager = McpManager::start(config, ManagerOptions::default()).await;
    for server in manager.status() {
        let error = server.last_error.map(|e| format!(" ({e})")).unwrap_or_default();
        println!(
            "server {}: {} over {}, {} tools{error}",
            server.name, server.state, server.transport, server.tool_count
        );
    }

    // 3. One registry for MCP tools and the host's own tools.
    let registry = ToolRegistry::new();
    registry.register(McpToolProvider::new(manager)).await;
    let word_count =
        NativeTool::new("word_count", "Count the words of a text", |args: WordCountArgs, _ctx| async move {
            args.text.split_whitespace().count().to_string()
        });
    registry.register(NativeToolProvider::new("host").with_tool(word_count)).await;

    // 4. What the LLM is offered: OpenAI function-tool definitions with LLM-valid names.
    let ctx = ToolExecutionContext::default();
    let definitions = registry.llm_definitions(&ctx).await;
    println!("\n{} tool definitions for the LLM:", definitions.len());
    for definition in &definitions {
        println!("{}", serde_json::to_string(definition)?);
    }

    // 5. Run one tool as if the LLM had asked for it, and show what goes into the history.
    let (name, arguments) = match (args.get(1), args.get(2)) {
        (Some(tool), Some(json)) => (tool.as_str(), serde_json::from_str::<Value>(json)?),
        (Some(tool), None) => (tool.as_str(), json!({})),
        (None, _) => (default_call.0, default_call.1),
    };
    let result = registry.invoke(ToolInvocation::from_value(name, arguments), ctx).await;
    let outcome = if result.success { "succeeded" } else { "failed" };
    println!("\n{name} {outcome}:\n{}", result.history_text());

    // 6. Closing the registry closes the manager, which stops every server process.
    registry.close().await;
    Ok(())
}
