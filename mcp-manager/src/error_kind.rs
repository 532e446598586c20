//! The `kind()` of this crate's errors: one [`ErrorKind`] per failure, so that a host (and the
//! `mcp` command's exit codes) branches on a few stable cases instead of walking the session's,
//! the connection's and the transport's error trees.
//!
//! The rules, layer by layer:
//!
//! | error | kind |
//! |-------|------|
//! | a JSON-RPC error from the server | -32601 and -32002 [`NotFound`](ErrorKind::NotFound), -32602 [`InvalidArguments`](ErrorKind::InvalidArguments), -32042 [`AuthRequired`](ErrorKind::AuthRequired), any other [`ServerError`](ErrorKind::ServerError) |
//! | no answer in time (a request, a task) | [`Timeout`](ErrorKind::Timeout) |
//! | the transport ended | [`Closed`](ErrorKind::Closed) when this side closed it, else [`Unreachable`](ErrorKind::Unreachable) |
//! | a transport failure | [`TransportError::kind`](mcp_transport::TransportError::kind) |
//! | a fallback that failed too | [`AuthRequired`](ErrorKind::AuthRequired) if either attempt needed it, else the fallback's kind |
//! | a URL elicitation the user did not get through | [`AuthRequired`](ErrorKind::AuthRequired) |
//! | a task that failed / was cancelled | [`ToolFailed`](ErrorKind::ToolFailed) / [`Cancelled`](ErrorKind::Cancelled) |
//! | versions, capabilities, headers, pagination, input rounds, result shapes, skills or views that do not match their listing | [`Protocol`](ErrorKind::Protocol) |
//! | an unknown tool, prompt, resource, server or skill | [`NotFound`](ErrorKind::NotFound) |
//! | a tool whose server is starting or reconnecting | [`Unavailable`](ErrorKind::Unavailable) |
//! | a call an interceptor vetoed | [`Denied`](ErrorKind::Denied) |
//! | an invalid configuration | [`Config`](ErrorKind::Config) |

use mcp_protocol::ErrorCode;
pub use mcp_transport::ErrorKind;

use crate::ServerState;
use crate::apps::AppViewError;
use crate::config::ConfigError;
use crate::connection::skills::SkillError;
use crate::connection::{ConnectionError, PaginationError, TaskError};
use crate::manager::ManagerError;
use crate::session::SessionError;

/// The kind of a JSON-RPC error code a server answered with.
pub fn rpc_kind(code: ErrorCode) -> ErrorKind {
    match code {
        ErrorCode::METHOD_NOT_FOUND | ErrorCode::RESOURCE_NOT_FOUND => ErrorKind::NotFound,
        ErrorCode::INVALID_PARAMS => ErrorKind::InvalidArguments,
        ErrorCode::URL_ELICITATION_REQUIRED => ErrorKind::AuthRequired,
        _ => ErrorKind::ServerError,
    }
}

impl SessionError {
    /// The kind of failure (see the [module](crate::error_kind) for the rules).
    pub fn kind(&self) -> ErrorKind {
        match self {
            SessionError::Rpc { error, .. } => rpc_kind(error.code),
            SessionError::Timeout { .. } => ErrorKind::Timeout,
            SessionError::Closed { reason, .. } => reason.kind(),
            SessionError::Transport { error, .. } => error.kind(),
            SessionError::InvalidResult { .. } => ErrorKind::Protocol,
            SessionError::Encode { .. } => ErrorKind::Internal,
        }
    }
}

impl ConnectionError {
    /// The kind of failure (see the [module](crate::error_kind) for the rules).
    pub fn kind(&self) -> ErrorKind {
        match self {
            ConnectionError::Transport { error, .. } => error.kind(),
            ConnectionError::Session(e) => e.kind(),
            ConnectionError::NotConnected(_) => ErrorKind::Unreachable,
            ConnectionError::FallbackFailed { first, fallback, .. } => {
                let kinds = [first.kind(), fallback.kind()];
                if kinds.contains(&ErrorKind::AuthRequired) { ErrorKind::AuthRequired } else { kinds[1] }
            }
            // The server needs the user at a URL, and the user did not get through it.
            ConnectionError::UrlElicitationFailed { .. }
            | ConnectionError::UrlElicitationTimeout { .. }
            | ConnectionError::UrlElicitationStillRequired { .. } => ErrorKind::AuthRequired,
            ConnectionError::Task(e) => e.kind(),
            ConnectionError::Pagination(e) => e.kind(),
            // Versions, capabilities, headers and input rounds the two sides disagree on; an
            // input the host could not give is the server asking for what was not offered.
            ConnectionError::UnsupportedVersion { .. }
            | ConnectionError::NoMutualVersion { .. }
            | ConnectionError::MissingClientCapability { .. }
            | ConnectionError::HeaderMismatch { .. }
            | ConnectionError::TooManyInputRounds { .. }
            | ConnectionError::TooManyInputRequests { .. }
            | ConnectionError::InputRequestFailed { .. }
            | ConnectionError::TooManyUrlElicitations { .. } => ErrorKind::Protocol,
        }
    }
}

impl TaskError {
    /// [`ToolFailed`](ErrorKind::ToolFailed), [`Cancelled`](ErrorKind::Cancelled),
    /// [`Timeout`](ErrorKind::Timeout) or [`Protocol`](ErrorKind::Protocol).
    pub fn kind(&self) -> ErrorKind {
        match self {
            TaskError::Failed { .. } => ErrorKind::ToolFailed,
            TaskError::Cancelled { .. } => ErrorKind::Cancelled,
            TaskError::Timeout { .. } => ErrorKind::Timeout,
            TaskError::Protocol { .. } => ErrorKind::Protocol,
        }
    }
}

impl PaginationError {
    /// Always [`Protocol`](ErrorKind::Protocol): the server's listing broke a bound.
    pub fn kind(&self) -> ErrorKind {
        ErrorKind::Protocol
    }
}

impl SkillError {
    /// [`NotFound`](ErrorKind::NotFound) for a skill (or the extension) the server does not
    /// have, [`InvalidArguments`](ErrorKind::InvalidArguments) for an ambiguous name,
    /// [`Protocol`](ErrorKind::Protocol) for a skill that does not match its listing, else the
    /// connection's kind.
    pub fn kind(&self) -> ErrorKind {
        match self {
            SkillError::NotSupported { .. } | SkillError::UnknownSkill { .. } => ErrorKind::NotFound,
            SkillError::Ambiguous { .. } => ErrorKind::InvalidArguments,
            SkillError::Invalid { .. } | SkillError::Verification { .. } | SkillError::BadAnswer { .. } => {
                ErrorKind::Protocol
            }
            SkillError::Connection(e) => e.kind(),
        }
    }
}

impl AppViewError {
    /// [`InvalidArguments`](ErrorKind::InvalidArguments) for a URI that is not `ui://`, else
    /// [`Protocol`](ErrorKind::Protocol): the server's view is not one a host can render.
    pub fn kind(&self) -> ErrorKind {
        match self {
            AppViewError::NotUiUri { .. } => ErrorKind::InvalidArguments,
            AppViewError::NoContents { .. } | AppViewError::WrongMimeType { .. } | AppViewError::Unreadable { .. } => {
                ErrorKind::Protocol
            }
        }
    }
}

impl ConfigError {
    /// Always [`Config`](ErrorKind::Config).
    pub fn kind(&self) -> ErrorKind {
        ErrorKind::Config
    }
}

impl ManagerError {
    /// The kind of failure (see the [module](crate::error_kind) for the rules).
    pub fn kind(&self) -> ErrorKind {
        match self {
            ManagerError::UnknownTool(_)
            | ManagerError::UnknownPrompt(_)
            | ManagerError::UnknownResource(_)
            | ManagerError::UnknownServer(_) => ErrorKind::NotFound,
            ManagerError::InvalidArguments(_) => ErrorKind::InvalidArguments,
            ManagerError::UnexpectedShape { .. } => ErrorKind::Protocol,
            ManagerError::Connection(e) => e.kind(),
            ManagerError::AppView(e) => e.kind(),
            ManagerError::Closed => ErrorKind::Closed,
            ManagerError::Skill(e) => e.kind(),
            ManagerError::ServerUnavailable { state, .. } => match state {
                ServerState::Failed => ErrorKind::Unreachable,
                ServerState::Stopped => ErrorKind::Closed,
                _ => ErrorKind::Unavailable,
            },
            ManagerError::Vetoed { .. } | ManagerError::DisabledTool { .. } => ErrorKind::Denied,
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::time::Duration;

    use mcp_protocol::ErrorObject;
    use mcp_transport::{CloseReason, TransportError};

    use super::*;

    fn rpc(code: ErrorCode) -> SessionError {
        SessionError::Rpc {
            server: Arc::from("s"),
            method: "tools/call".into(),
            error: Box::new(ErrorObject::new(code, "x")),
        }
    }

    #[test]
    fn each_layer_says_its_kind() {
        assert_eq!(rpc(ErrorCode::METHOD_NOT_FOUND).kind(), ErrorKind::NotFound);
        assert_eq!(rpc(ErrorCode::INVALID_PARAMS).kind(), ErrorKind::InvalidArguments);
        assert_eq!(rpc(ErrorCode::INTERNAL_ERROR).kind(), ErrorKind::ServerError);
        assert_eq!(rpc(ErrorCode(-1)).kind(), ErrorKind::ServerError, "a code no one listed");
        let closed = |reason| SessionError::Closed { server: Arc::from("s"), reason };
        assert_eq!(closed(CloseReason::Closed).kind(), ErrorKind::Closed);
        assert_eq!(closed(CloseReason::PeerClosed).kind(), ErrorKind::Unreachable);
        let timeout = SessionError::Timeout { server: Arc::from("s"), method: "m".into(), after: Duration::ZERO };
        assert_eq!(ConnectionError::Session(timeout).kind(), ErrorKind::Timeout);
        let http = |status| ConnectionError::Transport {
            server: "s".into(),
            error: TransportError::Http { status, body_excerpt: String::new(), context: "c".into() },
        };
        let fallback = ConnectionError::FallbackFailed {
            tried: mcp_transport::TransportKind::StreamableHttp,
            first: Box::new(http(401)),
            fallback: Box::new(http(404)),
        };
        assert_eq!(fallback.kind(), ErrorKind::AuthRequired, "either attempt needing authorization says so");
        let task = TaskError::Cancelled { server: "s".into(), task_id: "t".into(), message: None };
        assert_eq!(ManagerError::Connection(task.into()).kind(), ErrorKind::Cancelled);
        let skill = SkillError::UnknownSkill { server: "s".into(), name: "n".into() };
        assert_eq!(ManagerError::Skill(skill).kind(), ErrorKind::NotFound);
        let view = AppViewError::NotUiUri { uri: "https://x".into() };
        assert_eq!(ManagerError::AppView(view).kind(), ErrorKind::InvalidArguments);
        let unavailable =
            |state| ManagerError::ServerUnavailable { server: "s".into(), tool: "t".into(), state }.kind();
        assert_eq!(unavailable(ServerState::Starting), ErrorKind::Unavailable);
        assert_eq!(unavailable(ServerState::Reconnecting), ErrorKind::Unavailable);
        assert_eq!(unavailable(ServerState::Failed), ErrorKind::Unreachable);
        assert_eq!(unavailable(ServerState::Stopped), ErrorKind::Closed);
        assert_eq!(ManagerError::UnknownServer("s".into()).kind(), ErrorKind::NotFound);
        assert_eq!(ManagerError::Closed.kind(), ErrorKind::Closed);
        let config = ConfigError::Invalid(vec![]);
        assert_eq!(config.kind(), ErrorKind::Config);
    }
}
