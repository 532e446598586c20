//! Transport errors and the reasons a transport ends.

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
    #[error("failed to start {command:?}: {source}{}", tail_suffix(stderr_tail))]
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
    /// Any other failure, described.
    #[error("{0}")]
    Other(String),
}

fn tail_suffix(tail: &[String]) -> String {
    if tail.is_empty() { String::new() } else { format!(" — last stderr lines: {}", tail.join(" | ")) }
}

impl From<std::io::Error> for TransportError {
    fn from(e: std::io::Error) -> Self {
        TransportError::Io(Arc::new(e))
    }
}
