//! The host-side tool model, independent of MCP.
//!
//! Main types (arriving with their issue): `ToolSpec`, `ToolInvocation`, `ToolExecutionResult`,
//! the `ToolProvider` trait and the `ToolRegistry`. Today only [`ToolVisibility`] exists.

/// Whether a tool is offered to the LLM directly or only through tool search.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum ToolVisibility {
    /// Listed in the LLM's tool definitions.
    #[default]
    Visible,
    /// Reachable only through the built-in `tool_search` tool.
    Deferred,
}
