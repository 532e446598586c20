//! What a request handler of the demo server knows about its request (its era, the client's
//! capabilities, progress and log level: [`Ctx`]) and the tool results it builds.

use mcp_protocol::types::content::ContentBlock;
use mcp_protocol::types::lifecycle::ClientCapabilities;
use mcp_protocol::types::logging::LoggingLevel;
use mcp_protocol::types::meta::ProgressToken;
use mcp_protocol::types::tools::CallToolResult;

/// What a request handler needs to know about the request's era and client.
#[derive(Debug, Clone)]
pub(crate) struct Ctx {
    /// A 2026-07-28 request.
    pub(crate) modern: bool,
    /// What the client declared (in `initialize`, or in this request's `_meta`).
    pub(crate) capabilities: ClientCapabilities,
    /// The request's progress token, if it asked for progress.
    pub(crate) progress: Option<ProgressToken>,
    /// The least severe log level the client wants, if it wants logs.
    pub(crate) log_level: Option<LoggingLevel>,
}

impl Ctx {
    /// Whether the client wants log messages of `level`.
    pub(crate) fn wants_log(&self, level: &LoggingLevel) -> bool {
        match (&self.log_level, level.severity()) {
            (Some(min), Some(severity)) => min.severity().is_some_and(|m| severity >= m),
            _ => false,
        }
    }
}

/// A successful result with one text block.
pub(crate) fn text(text: impl Into<String>) -> CallToolResult {
    CallToolResult { content: vec![ContentBlock::text(text)], ..Default::default() }
}

/// A failed result whose text says why.
pub(crate) fn failed(why: impl Into<String>) -> CallToolResult {
    CallToolResult { content: vec![ContentBlock::text(why)], is_error: Some(true), ..Default::default() }
}
