//! The readers of the child's stdout and stderr, and how the transport's end is decided.
//!
//! The transport ends when stdout ends, when reading it fails, or when the server's main process
//! exits: a child it started (a wrapper's helper, a `sleep`) may keep stdout open for ever, so the
//! exit is watched too. After the exit, what is already in the pipe is still read, for at most
//! [`EXIT_DRAIN`]. Before the exit is reported, stderr is drained too (until its end of file, for
//! at most [`STDERR_DRAIN`]) so that the error carries the server's last lines.

use std::future::Future;
use std::sync::{Arc, Mutex};
use std::task::Poll;
use std::time::Duration;

use mcp_protocol::codec::{self, DecodeLimits};
use tokio::sync::{mpsc, watch};

use super::end::End;
use super::lines::{Line, LineReader, sniff_id};
use super::lock;
use super::process::{self, ExitWatch};
use super::stderr::StderrRing;
use crate::{CloseReason, RouterSlot, TransportError, TransportEvent};

/// How many characters of a dropped line a warning quotes.
const QUOTE_CHARS: usize = 200;
/// The bytes that hold them at most.
const QUOTE_BYTES: usize = 4 * QUOTE_CHARS;

/// How long stdout is still read after the main process exited.
pub(crate) const EXIT_DRAIN: Duration = Duration::from_millis(500);

/// How long the end of stderr is awaited before an exit is reported.
pub(crate) const STDERR_DRAIN: Duration = Duration::from_secs(1);

/// How long a process whose stdout ended is given to exit, so that its status is reported.
const EXIT_AFTER_EOF: Duration = Duration::from_secs(2);

pub(crate) struct StdoutReader {
    pub(crate) name: Arc<str>,
    /// Takes messages before `tx` does.
    pub(crate) router: Arc<RouterSlot>,
    pub(crate) limits: DecodeLimits,
    pub(crate) tx: mpsc::Sender<TransportEvent>,
    pub(crate) end: End,
    pub(crate) exit: ExitWatch,
    pub(crate) stderr: Arc<Mutex<StderrRing>>,
    pub(crate) stderr_done: watch::Receiver<bool>,
}

/// How reading stdout stopped.
enum Stop {
    /// End of file.
    Eof,
    /// Reading failed.
    Failed(std::io::Error),
    /// The main process exited and the pipe was drained (or the drain time ran out).
    Exited,
}

impl StdoutReader {
    pub(crate) async fn run(mut self, stdout: tokio::process::ChildStdout) {
        // A server that sends a line past 64 KiB gets a wider pipe (see `pipe`).
        let mut reader = LineReader::new(stdout, self.limits.max_line_bytes).widening(|stdout| {
            super::pipe::widen(stdout);
        });
        let mut exit = self.exit.clone();
        // One wait for the exit across every line read, not a new one (registered with the watch,
        // then dropped) for each line. It resolves once: with the exit, or with the task that
        // waits for the exit gone without a status (its runtime is ending).
        let exited = exit.wait_for(|s| s.is_some());
        tokio::pin!(exited);
        // The wait is polled once, which registers it with the watch (from then on the exit
        // wakes this task, however quiet the pipe), and again only once the watch has changed or
        // closed: a load of its version, where a poll of the wait costs a few hundred
        // instructions for every line read, for an event that comes once.
        let probe = self.exit.clone();
        let mut exit_registered = false;
        let mut exit_resolved = false;
        let mut drain_until: Option<tokio::time::Instant> = None;
        let stop = loop {
            let next = match drain_until {
                Some(deadline) => match tokio::time::timeout_at(deadline, reader.next_line()).await {
                    Ok(next) => next,
                    Err(_) => break Stop::Exited,
                },
                None => {
                    let line = reader.next_line();
                    tokio::pin!(line);
                    let polled = std::future::poll_fn(|cx| {
                        // Decided at every poll: the exit's wake-up polls this same future again.
                        // The exit first: a flood on stdout must not hide it.
                        if !exit_resolved && (!exit_registered || probe.has_changed().unwrap_or(true)) {
                            exit_registered = true;
                            if let Poll::Ready(exited) = exited.as_mut().poll(cx) {
                                return Poll::Ready(Err(exited.is_ok()));
                            }
                        }
                        line.as_mut().poll(cx).map(Ok)
                    })
                    .await;
                    match polled {
                        Ok(next) => next,
                        Err(with_status) => {
                            exit_resolved = true;
                            if with_status {
                                drain_until = Some(tokio::time::Instant::now() + EXIT_DRAIN);
                            }
                            continue;
                        }
                    }
                }
            };
            match next {
                Ok(Some(line)) => {
                    if !self.handle(line).await {
                        return; // nobody listens any more
                    }
                }
                Ok(None) => break Stop::Eof,
                Err(e) => break Stop::Failed(e),
            }
        };
        if matches!(stop, Stop::Exited) {
            tracing::debug!(server = %self.name, "the server's main process exited; its stdout is still open");
        }
        let reason = self.final_reason(stop).await;
        let reason = self.end.set(reason);
        let _ = self.tx.send(TransportEvent::Closed(reason)).await;
    }

    /// Returns false when the receiving side is gone.
    async fn handle(&mut self, line: Line<'_>) -> bool {
        match line {
            Line::Full(bytes) if bytes.iter().all(u8::is_ascii_whitespace) => true,
            Line::Full(bytes) => {
                let decoded = codec::decode_line(bytes, &self.limits);
                self.deliver(decoded, bytes).await
            }
            Line::Owned(bytes) => {
                // The line's buffer becomes the message's payload: keep its head for a warning.
                let head = bytes[..bytes.len().min(QUOTE_BYTES)].to_vec();
                let decoded = codec::decode_owned_line(bytes, &self.limits);
                self.deliver(decoded, &head).await
            }
            Line::TooLong { head, len } => {
                let id = sniff_id(&head);
                tracing::warn!(
                    server = %self.name,
                    len,
                    limit = self.limits.max_line_bytes,
                    id = ?id,
                    "discarded a stdout line over the message size limit"
                );
                match id {
                    Some(id) => self
                        .tx
                        .send(TransportEvent::RequestFailed {
                            id,
                            error: TransportError::MessageTooLarge { limit: self.limits.max_line_bytes },
                        })
                        .await
                        .is_ok(),
                    None => true,
                }
            }
        }
    }

    /// Send the messages of a decoded line on, with a warning for what did not decode (quoting
    /// the line from `bytes`, its start). Returns false when the receiving side is gone.
    async fn deliver(&mut self, decoded: Result<codec::Decoded, codec::DecodeError>, bytes: &[u8]) -> bool {
        match decoded {
            Ok(decoded) => {
                for item in decoded {
                    match item {
                        Ok(m) => {
                            let Some(m) = self.router.route(&self.name, m) else { continue };
                            if self.tx.send(TransportEvent::Message(m)).await.is_err() {
                                return false;
                            }
                        }
                        Err(e) => self.warn_bad_line(bytes, &e),
                    }
                }
                true
            }
            Err(e) => {
                self.warn_bad_line(bytes, &e);
                true
            }
        }
    }

    fn warn_bad_line(&self, bytes: &[u8], e: &codec::DecodeError) {
        // The quote is cut to whole characters; a cut inside one shows as a replacement mark.
        let text = String::from_utf8_lossy(&bytes[..bytes.len().min(QUOTE_BYTES)]);
        let quote: String = text.chars().take(QUOTE_CHARS).collect();
        if e.is_noise() {
            tracing::warn!(server = %self.name, line = %quote, "dropped a stdout line that is not JSON-RPC");
        } else {
            tracing::warn!(server = %self.name, line = %quote, error = %e, "dropped an invalid JSON-RPC message");
        }
    }

    async fn final_reason(&mut self, stop: Stop) -> CloseReason {
        let exited = match stop {
            Stop::Failed(e) => return CloseReason::Io(Arc::new(e)),
            Stop::Exited => true,
            // Stdout ended: normally the process is exiting. Give it a moment so the error
            // carries the status.
            Stop::Eof => process::wait_exit(&mut self.exit, EXIT_AFTER_EOF).await,
        };
        if !exited {
            return CloseReason::PeerClosed;
        }
        // The last stderr lines explain the exit: read them before reporting it.
        let _ = tokio::time::timeout(STDERR_DRAIN, self.stderr_done.wait_for(|d| *d)).await;
        let status = (*self.exit.borrow()).flatten();
        CloseReason::Exited { status, stderr_tail: lock(&self.stderr).tail() }
    }
}

pub(crate) async fn read_stderr(
    name: Arc<str>,
    pipe: tokio::process::ChildStderr,
    (ring, sink): (Arc<Mutex<StderrRing>>, Option<super::StderrSink>),
    max_line: usize,
    done: watch::Sender<bool>,
) {
    let mut reader = LineReader::new(pipe, max_line);
    while let Ok(Some(line)) = reader.next_line().await {
        let text = match line {
            Line::Full(b) => String::from_utf8_lossy(b).into_owned(),
            Line::Owned(b) => {
                String::from_utf8(b).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
            }
            Line::TooLong { head, len } => format!("{}… ({len} bytes)", String::from_utf8_lossy(&head)),
        };
        tracing::debug!(server = %name, "stderr: {text}");
        if let Some(sink) = &sink {
            sink(&text);
        }
        lock(&ring).push(text);
    }
    done.send_replace(true);
}
