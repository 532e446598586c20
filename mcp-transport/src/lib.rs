//! Transports that move MCP JSON-RPC messages between a host and a server.
//!
//! This crate will hold the [`Transport`] abstraction and its implementations (stdio child
//! process, streamable HTTP, legacy HTTP+SSE, an in-memory pair for tests). Issue 3 and 4 fill it;
//! today it only names the kinds of transport the stack supports.

/// The kinds of transport a server connection can use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TransportKind {
    /// A child process speaking newline-delimited JSON-RPC on stdin/stdout.
    Stdio,
    /// Streamable HTTP (revisions 2025-03-26 and later, both eras).
    StreamableHttp,
    /// The legacy HTTP+SSE transport of revision 2024-11-05.
    Sse,
}

/// Marker for the transport abstraction that the stdio issue defines.
pub trait Transport {}
