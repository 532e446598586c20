//! [`ExposedTool`]: a tool as the [`ToolRegistry`](crate::ToolRegistry) exposes it. Its LLM
//! definitions are made in [`dialect`](crate::dialect).

use std::sync::Arc;

use crate::{SharedText, ToolSpec};

/// A tool as the registry exposes it: its LLM name, the provider that serves it, and its spec
/// (with the provider's own name in `spec.name`). Cloning one copies no string: a host that
/// lists thousands of tools at every turn allocates one vector, not two names per tool.
#[derive(Debug, Clone, PartialEq)]
pub struct ExposedTool {
    /// The name the LLM sees and calls, matching `^[a-zA-Z0-9_-]{1,64}$` (shared with the
    /// registry's name table; reads as `str`, compares with `&str` and `String`).
    pub llm_name: SharedText,
    /// The name of the provider that serves the tool (one buffer for all its tools).
    pub provider: SharedText,
    /// The tool's spec as its provider declared it (shared).
    pub spec: Arc<ToolSpec>,
}
