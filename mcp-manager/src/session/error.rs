//! Errors of the session engine: the peer's error kept apart from local failures.

use std::sync::Arc;
use std::time::Duration;

use mcp_protocol::ErrorObject;
use mcp_transport::{CloseReason, TransportError};

/// Why a request failed.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum SessionError {
    /// The server answered with a JSON-RPC error.
    #[error("server {server:?}: {method} failed: {error}")]
    Rpc {
        /// The server's name.
        server: Arc<str>,
        /// The method called.
        method: String,
        /// The server's error object (boxed, as it arrived: a session's results are moved through
        /// its layers by value, inline only up to 128 bytes).
        error: Box<ErrorObject>,
    },
    /// No answer in time.
    #[error("server {server:?}: {method} timed out after {}", fmt_duration(*after))]
    Timeout {
        /// The server's name.
        server: Arc<str>,
        /// The method called.
        method: String,
        /// How long the request waited.
        after: Duration,
    },
    /// The transport ended before the answer came.
    #[error("server {server:?}: {reason}")]
    Closed {
        /// The server's name.
        server: Arc<str>,
        /// Why the transport ended.
        reason: CloseReason,
    },
    /// The transport failed this request.
    #[error("server {server:?}: {method}: {error}")]
    Transport {
        /// The server's name.
        server: Arc<str>,
        /// The method called.
        method: String,
        /// The transport's error.
        error: TransportError,
    },
    /// The answer did not match the method's result type.
    #[error("server {server:?}: invalid {method} result: {error}")]
    InvalidResult {
        /// The server's name.
        server: Arc<str>,
        /// The method called.
        method: String,
        /// The decoding error.
        error: Arc<serde_json::Error>,
    },
    /// The request could not be encoded.
    #[error("could not encode {method} params: {error}")]
    Encode {
        /// The method called.
        method: String,
        /// The encoding error.
        error: Arc<serde_json::Error>,
    },
}

impl SessionError {
    /// The server's error object, when the server answered with one.
    pub fn rpc_error(&self) -> Option<&ErrorObject> {
        match self {
            SessionError::Rpc { error, .. } => Some(error),
            _ => None,
        }
    }

    /// Whether the request timed out.
    pub fn is_timeout(&self) -> bool {
        matches!(self, SessionError::Timeout { .. })
    }

    /// Whether the transport ended.
    pub fn is_closed(&self) -> bool {
        matches!(self, SessionError::Closed { .. })
    }
}

fn fmt_duration(d: Duration) -> String {
    if d.as_secs() >= 1 { format!("{:.1} s", d.as_secs_f64()) } else { format!("{} ms", d.as_millis()) }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every request's answer (`Result<RawJson, SessionError>`) goes through the session's
    /// layers by value, and a move of more than 128 bytes is a `memcpy` call: the error object
    /// inline made a `SessionError` 144 bytes.
    #[test]
    fn a_requests_answer_is_moved_inline() {
        let error = size_of::<SessionError>();
        let answer = size_of::<Result<mcp_protocol::RawJson, SessionError>>();
        println!("SessionError {error} bytes, an answer {answer}");
        assert!(error <= 128 && answer <= 128, "SessionError {error} bytes, an answer {answer}");
    }
}
