//! Extension point: a native tool. A typed async Rust function whose argument struct derives
//! `JsonSchema` becomes a tool (`tool_system::NativeTool`); it sits next to the MCP servers'
//! tools in one `ToolRegistry`, gets the same LLM-valid names and definitions, and receives the
//! host's context (who calls, the deadline, a progress sink) like every provider.
//!
//! ```text
//! cargo build -p mcp-cli && cargo run -p mcp-manager --example native_tool [-- path/to/mcp]
//! ```
//!
//! Exits 0 only if the native tool's schema came from its argument type, bad arguments were
//! refused with a message naming the argument, and both kinds of tool ran.

mod common;

use mcp_manager::{McpManager, McpToolProvider};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use tool_system::{
    NativeTool, NativeToolProvider, ToolExecutionContext, ToolExecutionResult, ToolInvocation, ToolProgress,
    ToolRegistry,
};

/// How to convert a temperature.
#[derive(Deserialize, JsonSchema)]
struct Convert {
    /// The temperature in degrees Celsius.
    celsius: f64,
    /// How many decimals to keep (default 1).
    #[serde(default)]
    decimals: Option<u8>,
}

/// The tool itself: a plain async function of its typed arguments and the host's context.
async fn to_fahrenheit(args: Convert, ctx: ToolExecutionContext) -> ToolExecutionResult {
    ctx.control.report(ToolProgress::status(format!("converting for {}", ctx.user_id)));
    let fahrenheit = args.celsius * 9.0 / 5.0 + 32.0;
    let decimals = usize::from(args.decimals.unwrap_or(1));
    ToolExecutionResult::ok_text(format!("{fahrenheit:.decimals$} °F"))
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let manager = McpManager::builder().server(common::demo_server()).start().await?;
    let tools = ToolRegistry::new();
    tools.register(McpToolProvider::new(manager)).await;
    let convert = NativeTool::new("to_fahrenheit", "Convert degrees Celsius to Fahrenheit", to_fahrenheit);
    tools.register(NativeToolProvider::new("units").with_tool(convert)).await;

    let ctx = ToolExecutionContext::default().with_user("ann").with_progress(|p| println!("progress: {:?}", p.message));
    let definitions = tools.llm_definitions(&ctx).await;
    let ours = definitions.iter().find(|d| d["function"]["name"] == "to_fahrenheit").cloned().unwrap_or_default();
    println!("{}", serde_json::to_string_pretty(&ours)?);

    let warm = tools.invoke(ToolInvocation::from_value("to_fahrenheit", json!({"celsius": 21.5})), ctx.clone()).await;
    let bad = tools.invoke(ToolInvocation::from_value("to_fahrenheit", json!({"celsius": "hot"})), ctx.clone()).await;
    let echo = tools.invoke(ToolInvocation::from_value("demo__echo", json!({"text": "from MCP"})), ctx).await;
    tools.close().await;

    println!(
        "to_fahrenheit: {}\nbad arguments: {}\ndemo__echo: {}",
        warm.history_text(),
        bad.history_text(),
        echo.history_text()
    );
    let parameters = &ours["function"]["parameters"];
    common::check(parameters["required"] == json!(["celsius"]), "the schema comes from the argument type")?;
    common::check(parameters["properties"]["celsius"]["description"].is_string(), "doc comments describe arguments")?;
    common::check(warm.history_text() == "70.7 °F", "the native tool ran")?;
    common::check(!bad.success && bad.history_text().contains("celsius"), "bad arguments are refused by name")?;
    common::check(echo.history_text() == "from MCP", "the MCP tool ran next to it")?;
    Ok(())
}
