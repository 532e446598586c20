//! [`ErrorKind`]: the stable kind of a failure, for hosts (and the `mcp` command) that branch on
//! what went wrong without walking every layer's error tree.
//!
//! Each layer's error enum keeps its detail for people (`Display`) and for the code that knows it;
//! its `kind()` (here [`TransportError::kind`], in `mcp-manager` `SessionError::kind`,
//! `ConnectionError::kind` and `ManagerError::kind`, in `host-bridge` `LlmError::kind`) says which
//! of these few cases it is. The kinds are few on purpose and only grow: a new one is added
//! where hosts would branch differently, never to mirror a variant.

use std::fmt;

use crate::{CloseReason, TransportError};

/// What kind of failure an error is. `#[non_exhaustive]`: match with a `_` arm.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The server could not be reached, did not start, or went away: a spawn that failed, a
    /// refused connection, a process that exited, an HTTP error status other than 401/403.
    Unreachable,
    /// Authorization is missing or was refused: HTTP 401 or 403, an OAuth step or grant that
    /// failed, a URL the user must open first.
    AuthRequired,
    /// No answer in time.
    Timeout,
    /// The connection or the manager was closed by this side.
    Closed,
    /// The server broke the protocol, or the two sides disagree on it: a revision, a capability,
    /// a result's shape, a size limit, pagination.
    Protocol,
    /// The server answered with an error of its own (a JSON-RPC error not covered by a more
    /// precise kind).
    ServerError,
    /// What was named does not exist: a tool, prompt, resource, server, skill or method.
    NotFound,
    /// The arguments were refused, by the tool's schema here or by the server (-32602).
    InvalidArguments,
    /// The server that owns it is starting or reconnecting: try again once it is ready.
    Unavailable,
    /// The host refused it: an interceptor vetoed the call.
    Denied,
    /// The call was cancelled.
    Cancelled,
    /// A tool that ran as a task ended failed.
    ToolFailed,
    /// The configuration is wrong (a server the host described in code, say).
    Config,
    /// A local failure that is no peer's doing (a request that could not be encoded).
    Internal,
}

impl ErrorKind {
    /// The kind's name: `unreachable`, `auth_required`, `timeout`, `closed`, `protocol`,
    /// `server_error`, `not_found`, `invalid_arguments`, `unavailable`, `denied`, `cancelled`,
    /// `tool_failed`, `config` or `internal`.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorKind::Unreachable => "unreachable",
            ErrorKind::AuthRequired => "auth_required",
            ErrorKind::Timeout => "timeout",
            ErrorKind::Closed => "closed",
            ErrorKind::Protocol => "protocol",
            ErrorKind::ServerError => "server_error",
            ErrorKind::NotFound => "not_found",
            ErrorKind::InvalidArguments => "invalid_arguments",
            ErrorKind::Unavailable => "unavailable",
            ErrorKind::Denied => "denied",
            ErrorKind::Cancelled => "cancelled",
            ErrorKind::ToolFailed => "tool_failed",
            ErrorKind::Config => "config",
            ErrorKind::Internal => "internal",
        }
    }

    /// Whether the same request may succeed later without anyone changing anything: the server
    /// was unreachable, slow, or is reconnecting.
    pub fn is_transient(self) -> bool {
        matches!(self, ErrorKind::Unreachable | ErrorKind::Timeout | ErrorKind::Unavailable)
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl CloseReason {
    /// [`ErrorKind::Closed`] when this side closed the transport, else
    /// [`ErrorKind::Unreachable`]: the peer went away.
    pub fn kind(&self) -> ErrorKind {
        match self {
            CloseReason::Closed => ErrorKind::Closed,
            CloseReason::PeerClosed | CloseReason::Exited { .. } | CloseReason::Io(_) => ErrorKind::Unreachable,
        }
    }
}

impl TransportError {
    /// The kind of failure: HTTP 401 and 403 and every authorization error are
    /// [`ErrorKind::AuthRequired`], a response over the size limit is [`ErrorKind::Protocol`], a
    /// transport this side closed is [`ErrorKind::Closed`], and everything else means the server
    /// cannot be reached or did not start ([`ErrorKind::Unreachable`]).
    pub fn kind(&self) -> ErrorKind {
        match self {
            TransportError::Http { status: 401 | 403, .. } | TransportError::Auth(_) => ErrorKind::AuthRequired,
            TransportError::MessageTooLarge { .. } => ErrorKind::Protocol,
            TransportError::Closed(reason) => reason.kind(),
            TransportError::Spawn { .. }
            | TransportError::Io(_)
            | TransportError::Http { .. }
            | TransportError::Other(_) => ErrorKind::Unreachable,
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::auth::{AuthError, AuthStep};

    fn http(status: u16) -> TransportError {
        TransportError::Http { status, body_excerpt: String::new(), context: "initialize".into() }
    }

    #[test]
    fn transport_errors_have_the_documented_kinds() {
        assert_eq!(http(401).kind(), ErrorKind::AuthRequired);
        assert_eq!(http(403).kind(), ErrorKind::AuthRequired);
        assert_eq!(http(404).kind(), ErrorKind::Unreachable);
        assert_eq!(http(502).kind(), ErrorKind::Unreachable);
        let auth = TransportError::Auth(AuthError::new(AuthStep::Token, "invalid_client"));
        assert_eq!(auth.kind(), ErrorKind::AuthRequired);
        assert_eq!(TransportError::MessageTooLarge { limit: 1 }.kind(), ErrorKind::Protocol);
        let spawn = TransportError::Spawn {
            command: "nope".into(),
            source: Arc::new(std::io::Error::from(std::io::ErrorKind::NotFound)),
            stderr_tail: vec![],
        };
        assert_eq!(spawn.kind(), ErrorKind::Unreachable);
        assert_eq!(TransportError::Closed(CloseReason::Closed).kind(), ErrorKind::Closed, "closed by this side");
        let exited = CloseReason::Exited { status: None, stderr_tail: vec!["boom".into()] };
        assert_eq!(TransportError::Closed(exited).kind(), ErrorKind::Unreachable, "the server went away");
        assert_eq!(TransportError::Closed(CloseReason::PeerClosed).kind(), ErrorKind::Unreachable);
        assert_eq!(TransportError::Other("x".into()).kind(), ErrorKind::Unreachable);
    }

    #[test]
    fn kinds_have_stable_names_and_only_some_are_transient() {
        assert_eq!(ErrorKind::AuthRequired.to_string(), "auth_required");
        assert_eq!(ErrorKind::InvalidArguments.as_str(), "invalid_arguments");
        assert!(ErrorKind::Unavailable.is_transient() && ErrorKind::Timeout.is_transient());
        assert!(!ErrorKind::AuthRequired.is_transient() && !ErrorKind::Protocol.is_transient());
    }
}
