//! [`ExposedTool`]: a tool as the [`ToolRegistry`](crate::ToolRegistry) exposes it. Its LLM
//! definitions are made in [`dialect`](crate::dialect).

use std::sync::Arc;

use crate::ToolSpec;

/// A tool as the registry exposes it: its LLM name, the provider that serves it, and its spec
/// (with the provider's own name in `spec.name`).
#[derive(Debug, Clone, PartialEq)]
pub struct ExposedTool {
    /// The name the LLM sees and calls, matching `^[a-zA-Z0-9_-]{1,64}$`.
    pub llm_name: String,
    /// The name of the provider that serves the tool.
    pub provider: String,
    /// The tool's spec as its provider declared it (shared: cloning an `ExposedTool` is cheap).
    pub spec: Arc<ToolSpec>,
}
