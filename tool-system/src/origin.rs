//! Where a tool result came from: [`ResultOrigin`].

use serde::{Deserialize, Serialize};

use crate::SharedText;

/// Where a result came from, as its provider tells it: the tool's namespace and its own name
/// there, and for a tool behind a protocol (an MCP server) the protocol revision and the session
/// the call went by.
///
/// A host that called the tool knows most of this already; an observer, a log or an audit that
/// sees only the result reads it here. Every part is a [`SharedText`], so a provider that keeps
/// a tool's origin gives each result a copy without allocating (the MCP adapter keeps one per
/// tool and connection).
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ResultOrigin {
    /// The tool's namespace, as [`ToolSpec::namespace`](crate::ToolSpec::namespace) (for an MCP
    /// tool, the server's configured name).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<SharedText>,
    /// The provider's own name of the tool, as [`ToolSpec::name`](crate::ToolSpec::name).
    pub tool: SharedText,
    /// The protocol revision the call went by (for MCP, such as `2025-11-25`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protocol_version: Option<SharedText>,
    /// The session the call went through, when the transport has one (MCP's legacy streamable
    /// HTTP).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<SharedText>,
}

impl ResultOrigin {
    /// The origin of a result of `tool` in `namespace`, with no protocol or session.
    pub fn new(namespace: Option<SharedText>, tool: impl Into<SharedText>) -> Self {
        Self { namespace, tool: tool.into(), protocol_version: None, session_id: None }
    }

    /// Sets the protocol revision.
    pub fn with_protocol_version(mut self, version: impl Into<SharedText>) -> Self {
        self.protocol_version = Some(version.into());
        self
    }

    /// Sets the session.
    pub fn with_session_id(mut self, session_id: impl Into<SharedText>) -> Self {
        self.session_id = Some(session_id.into());
        self
    }
}
