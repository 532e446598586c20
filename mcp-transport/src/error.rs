//! Transport errors, the reasons a transport ends, and the authorization errors a transport
//! fails a request with (defined here so that this module depends on no other of the crate).

use std::fmt;
use std::process::ExitStatus;
use std::sync::Arc;

/// Why a transport ended.
#[derive(Debug, Clone)]
pub enum CloseReason {
    /// Closed on purpose by this side.
    Closed,
    /// The peer closed the connection cleanly.
    PeerClosed,
    /// The server process exited.
    Exited {
        /// Its exit status (`None` when it could not be collected).
        status: Option<ExitStatus>,
        /// Its last stderr lines, oldest first.
        stderr_tail: Vec<String>,
    },
    /// An I/O error ended the transport.
    Io(Arc<std::io::Error>),
}

impl fmt::Display for CloseReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CloseReason::Closed => f.write_str("transport closed"),
            CloseReason::PeerClosed => f.write_str("peer closed the connection"),
            CloseReason::Exited { status, stderr_tail } => {
                match status {
                    Some(s) => write!(f, "server exited ({s})")?,
                    None => f.write_str("server exited (status unknown)")?,
                }
                if stderr_tail.is_empty() {
                    f.write_str(" — no stderr output")
                } else {
                    write!(f, " — last stderr lines: {}", stderr_tail.join(" | "))
                }
            }
            CloseReason::Io(e) => write!(f, "transport I/O error: {e}"),
        }
    }
}

/// A transport failure.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum TransportError {
    /// The transport has ended.
    #[error("{0}")]
    Closed(CloseReason),
    /// The server process could not be started.
    #[error("failed to start {:?}: {source}{}", crate::redact::mask_secrets(command), tail_suffix(stderr_tail))]
    Spawn {
        /// The command.
        command: String,
        /// The OS error.
        source: Arc<std::io::Error>,
        /// Stderr lines written before the failure.
        stderr_tail: Vec<String>,
    },
    /// An I/O error while sending.
    #[error("transport I/O error: {0}")]
    Io(Arc<std::io::Error>),
    /// A response was larger than the configured maximum message size.
    #[error("response exceeded the message size limit of {limit} bytes")]
    MessageTooLarge {
        /// The limit in bytes.
        limit: usize,
    },
    /// The server answered with an HTTP error status.
    #[error("{context}: HTTP {}: {body_excerpt}", fmt_status(*status))]
    Http {
        /// The status code.
        status: u16,
        /// The first KiB of the response body, as text (`(empty body)` when there was none).
        body_excerpt: String,
        /// What was being done: the method and request id, or the step (`opening the SSE stream`).
        context: String,
    },
    /// Authorizing the request failed (discovery, registration, the login, the token
    /// endpoint), or the server refused the credentials.
    #[error("{0}")]
    Auth(AuthError),
    /// Any other failure, described.
    #[error("{0}")]
    Other(String),
}

impl TransportError {
    /// The HTTP status that caused this failure, when the server answered with an error status.
    pub fn http_status(&self) -> Option<u16> {
        match self {
            TransportError::Http { status, .. } => Some(*status),
            _ => None,
        }
    }

    /// The same error, with `context` put in front of its description (`Other` and `Http` only;
    /// the other variants describe themselves).
    pub(crate) fn in_context(self, context: &str) -> Self {
        match self {
            TransportError::Other(text) => TransportError::Other(format!("{context}: {text}")),
            TransportError::Http { status, body_excerpt, context: inner } => {
                TransportError::Http { status, body_excerpt, context: format!("{context}: {inner}") }
            }
            other => other,
        }
    }
}

/// A status as `404 Not Found`, the way `reqwest` shows it.
fn fmt_status(status: u16) -> String {
    match reqwest::StatusCode::from_u16(status) {
        Ok(s) => s.to_string(),
        Err(_) => status.to_string(),
    }
}

fn tail_suffix(tail: &[String]) -> String {
    if tail.is_empty() { String::new() } else { format!(" — last stderr lines: {}", tail.join(" | ")) }
}

impl From<std::io::Error> for TransportError {
    fn from(e: std::io::Error) -> Self {
        TransportError::Io(Arc::new(e))
    }
}

/// The step of the authorization flow that failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum AuthStep {
    /// Finding the protected resource metadata or the authorization server's metadata.
    Discovery,
    /// Registering the client (or finding a registration to use).
    Registration,
    /// The user's authorization in the browser and the redirect back.
    Authorization,
    /// Exchanging the code, or refreshing, at the token endpoint.
    Token,
    /// Reading or writing the token store.
    Store,
    /// Authorization is needed and this run cannot ask the user (no browser step).
    LoginRequired,
    /// The server still refuses the new credentials.
    Refused,
}

impl fmt::Display for AuthStep {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            AuthStep::Discovery => "discovery",
            AuthStep::Registration => "client registration",
            AuthStep::Authorization => "authorization",
            AuthStep::Token => "token request",
            AuthStep::Store => "token store",
            AuthStep::LoginRequired => "login required",
            AuthStep::Refused => "access refused",
        })
    }
}

/// A failed authorization. Its text names the step and never holds a secret.
#[derive(Debug, Clone, thiserror::Error)]
#[error("authorization failed ({step}): {message}")]
pub struct AuthError {
    /// The step that failed.
    pub step: AuthStep,
    /// What went wrong.
    pub message: String,
}

impl AuthError {
    /// An error of `step`.
    pub fn new(step: AuthStep, message: impl Into<String>) -> Self {
        AuthError { step, message: crate::redact::mask_secrets(&message.into()).into_owned() }
    }

    /// Whether a person must log in (`mcp login`) before the server can be used.
    pub fn needs_login(&self) -> bool {
        self.step == AuthStep::LoginRequired
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn http_errors_keep_status_and_wording() {
        let e = TransportError::Http {
            status: 405,
            body_excerpt: "Method Not Allowed".into(),
            context: "initialize (request 0)".into(),
        };
        assert_eq!(e.http_status(), Some(405));
        assert_eq!(e.to_string(), "initialize (request 0): HTTP 405 Method Not Allowed: Method Not Allowed");
        let e = e.in_context("re-initializing");
        assert_eq!(e.http_status(), Some(405));
        assert!(e.to_string().starts_with("re-initializing: initialize (request 0): HTTP 405 "), "{e}");
        let odd = TransportError::Http { status: 599, body_excerpt: "x".into(), context: "c".into() };
        assert_eq!(odd.to_string(), "c: HTTP 599 <unknown status code>: x");
        assert_eq!(TransportError::Other("HTTP 404".into()).http_status(), None);
    }
}
