//! Answers what MCP servers ask of the host: sampling through the host's LLM, elicitation,
//! roots and logging.
//!
//! Main types (arriving with their issue): `HostLlmBridge`, the `LlmClient` trait and its
//! OpenAI-compatible implementation. Today only [`FinishReason`] exists.

/// Why the host's LLM stopped generating.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FinishReason {
    /// The model ended its turn.
    Stop,
    /// The token limit was reached.
    Length,
    /// The model asked for tool calls.
    ToolCalls,
}
