//! A server run as a child process, speaking newline-delimited JSON-RPC on stdin/stdout.
//!
//! The child runs in its own process group, so that wrappers (`npx`, `uvx`, `sh -c`) cannot
//! leave grandchildren behind: closing or dropping the transport ends the whole group, and the
//! members that this process adopts (when it is PID 1 or a child subreaper) are reaped. Stdout is
//! read line by line under a size limit; lines that are not JSON-RPC are dropped with a warning
//! naming the server. Stderr is kept in a bounded ring and attached to exit errors.

mod lines;
mod process;
mod stderr;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::FutureExt;
use futures::future::BoxFuture;
use mcp_protocol::Message;
use mcp_protocol::codec::{self, DecodeLimits};
use nix::sys::signal::Signal;
use tokio::io::AsyncWriteExt;
use tokio::process::{ChildStdin, Command};
use tokio::sync::{mpsc, watch};

use self::lines::{Line, LineReader, sniff_id};
use self::process::ExitWatch;
use self::stderr::StderrRing;
use crate::{CloseReason, Transport, TransportError, TransportEvent, TransportKind};

/// How to start a stdio server.
#[derive(Clone)]
pub struct StdioConfig {
    /// The server's name, used in logs and errors.
    pub name: String,
    /// The program.
    pub command: String,
    /// Its arguments.
    pub args: Vec<String>,
    /// Variables set for the child, on top of the inherited ones.
    pub env: BTreeMap<String, String>,
    /// Inherit the host's whole environment instead of the safe allow-list (PATH, HOME, USER,
    /// LOGNAME, SHELL, TERM, LANG, LC_*, TMPDIR, TZ).
    pub inherit_env: bool,
    /// Working directory.
    pub cwd: Option<PathBuf>,
    /// Largest accepted message in bytes (default 32 MiB).
    pub max_message_bytes: usize,
    /// How long each step of the close sequence waits (default 2 s).
    pub close_grace: Duration,
    /// How many stderr lines are kept (default 64).
    pub stderr_lines: usize,
    /// How many stderr bytes are kept (default 16 KiB).
    pub stderr_bytes: usize,
}

impl std::fmt::Debug for StdioConfig {
    // The environment may hold secrets: show only its keys. Arguments lose the values of
    // secret-looking flags, and every remembered secret (an interpolated value) is masked
    // (see `crate::redact`).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let cwd = self.cwd.as_ref().map(|cwd| cwd.display().to_string());
        f.debug_struct("StdioConfig")
            .field("name", &self.name)
            .field("command", &crate::redact::Masked(&self.command))
            .field("args", &crate::redact::redact_args(&self.args))
            .field("env_keys", &self.env.keys().collect::<Vec<_>>())
            .field("inherit_env", &self.inherit_env)
            .field("cwd", &cwd.as_deref().map(crate::redact::Masked))
            .field("max_message_bytes", &self.max_message_bytes)
            .finish_non_exhaustive()
    }
}

impl StdioConfig {
    /// A config for `command args...` with the defaults.
    pub fn new(
        name: impl Into<String>,
        command: impl Into<String>,
        args: impl IntoIterator<Item = impl Into<String>>,
    ) -> Self {
        StdioConfig {
            name: name.into(),
            command: command.into(),
            args: args.into_iter().map(Into::into).collect(),
            env: BTreeMap::new(),
            inherit_env: false,
            cwd: None,
            max_message_bytes: 32 * 1024 * 1024,
            close_grace: Duration::from_secs(2),
            stderr_lines: 64,
            stderr_bytes: 16 * 1024,
        }
    }
}

/// A running stdio server. See the module docs.
pub struct StdioTransport {
    name: Arc<str>,
    pgid: u32,
    stdin: tokio::sync::Mutex<Option<ChildStdin>>,
    events: tokio::sync::Mutex<mpsc::Receiver<TransportEvent>>,
    end: Arc<Mutex<Option<CloseReason>>>,
    exit: ExitWatch,
    stderr: Arc<Mutex<StderrRing>>,
    close_grace: Duration,
    closing: tokio::sync::Mutex<bool>,
}

impl std::fmt::Debug for StdioTransport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StdioTransport").field("name", &self.name).field("pgid", &self.pgid).finish_non_exhaustive()
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl StdioTransport {
    /// Start the server. Must be called within a Tokio runtime.
    pub fn spawn(config: StdioConfig) -> Result<StdioTransport, TransportError> {
        let mut cmd = Command::new(&config.command);
        cmd.args(&config.args)
            .env_clear()
            .envs(process::child_env(config.inherit_env, &config.env))
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .process_group(0)
            .kill_on_drop(false);
        if let Some(cwd) = &config.cwd {
            cmd.current_dir(cwd);
        }
        let mut child = cmd.spawn().map_err(|e| TransportError::Spawn {
            command: config.command.clone(),
            source: Arc::new(e),
            stderr_tail: Vec::new(),
        })?;
        let pgid = child.id().unwrap_or(0);
        let name: Arc<str> = Arc::from(config.name.as_str());
        let (stdin, stdout, stderr_pipe) = (
            child.stdin.take(),
            child.stdout.take().expect("piped stdout"),
            child.stderr.take().expect("piped stderr"),
        );

        let (exit_tx, exit_rx) = watch::channel(None);
        tokio::spawn(async move {
            let status = child.wait().await.ok();
            exit_tx.send_replace(Some(status));
            process::reap_orphans(pgid).await;
        });

        let stderr = Arc::new(Mutex::new(StderrRing::new(config.stderr_lines, config.stderr_bytes)));
        let (stderr_done_tx, stderr_done_rx) = watch::channel(false);
        tokio::spawn(read_stderr(name.clone(), stderr_pipe, stderr.clone(), config.stderr_bytes, stderr_done_tx));

        let (tx, rx) = mpsc::channel(64);
        let end = Arc::new(Mutex::new(None));
        let reader = StdoutReader {
            name: name.clone(),
            limits: DecodeLimits { max_line_bytes: config.max_message_bytes, ..DecodeLimits::default() },
            tx,
            end: end.clone(),
            exit: exit_rx.clone(),
            stderr: stderr.clone(),
            stderr_done: stderr_done_rx,
        };
        tokio::spawn(reader.run(stdout));

        Ok(StdioTransport {
            name,
            pgid,
            stdin: tokio::sync::Mutex::new(stdin),
            events: tokio::sync::Mutex::new(rx),
            end,
            exit: exit_rx,
            stderr,
            close_grace: config.close_grace,
            closing: tokio::sync::Mutex::new(false),
        })
    }

    /// The process id of the server (also its process group id).
    pub fn pid(&self) -> u32 {
        self.pgid
    }

    /// The server's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    fn end_reason(&self) -> CloseReason {
        lock(&self.end).clone().unwrap_or(CloseReason::Closed)
    }
}

impl Transport for StdioTransport {
    fn send(&self, message: Message) -> BoxFuture<'_, Result<(), TransportError>> {
        async move {
            let line = codec::encode_line(&message);
            let mut stdin = self.stdin.lock().await;
            let Some(pipe) = stdin.as_mut() else {
                return Err(TransportError::Closed(self.end_reason()));
            };
            let written = async {
                pipe.write_all(&line).await?;
                pipe.flush().await
            }
            .await;
            written.map_err(|e| {
                if e.kind() == std::io::ErrorKind::BrokenPipe {
                    TransportError::Closed(lock(&self.end).clone().unwrap_or(CloseReason::PeerClosed))
                } else {
                    TransportError::from(e)
                }
            })
        }
        .boxed()
    }

    fn recv(&self) -> BoxFuture<'_, TransportEvent> {
        async move {
            match self.events.lock().await.recv().await {
                Some(event) => event,
                None => TransportEvent::Closed(self.end_reason()),
            }
        }
        .boxed()
    }

    fn close(&self) -> BoxFuture<'_, ()> {
        async move {
            let mut closing = self.closing.lock().await;
            if *closing {
                return;
            }
            *closing = true;
            lock(&self.end).get_or_insert(CloseReason::Closed);
            // Closing stdin is the polite request to exit.
            self.stdin.lock().await.take();
            let mut exit = self.exit.clone();
            process::terminate(self.pgid, &mut exit, self.close_grace).await;
        }
        .boxed()
    }

    fn kind(&self) -> TransportKind {
        TransportKind::Stdio
    }

    fn diagnostics_tail(&self) -> Vec<String> {
        lock(&self.stderr).tail()
    }

    fn process_id(&self) -> Option<u32> {
        Some(self.pid())
    }
}

impl Drop for StdioTransport {
    fn drop(&mut self) {
        // No waiting in drop: the group is killed at once; the runtime reaps the leader.
        process::signal_group(self.pgid, Signal::SIGKILL);
    }
}

struct StdoutReader {
    name: Arc<str>,
    limits: DecodeLimits,
    tx: mpsc::Sender<TransportEvent>,
    end: Arc<Mutex<Option<CloseReason>>>,
    exit: ExitWatch,
    stderr: Arc<Mutex<StderrRing>>,
    stderr_done: watch::Receiver<bool>,
}

impl StdoutReader {
    async fn run(mut self, stdout: tokio::process::ChildStdout) {
        let mut reader = LineReader::new(stdout, self.limits.max_line_bytes);
        let io_error = loop {
            match reader.next_line().await {
                Ok(Some(line)) => {
                    if !self.handle(line).await {
                        return; // nobody listens any more
                    }
                }
                Ok(None) => break None,
                Err(e) => break Some(e),
            }
        };
        let reason = self.final_reason(io_error).await;
        lock(&self.end).get_or_insert(reason.clone());
        let reason = lock(&self.end).clone().unwrap_or(reason);
        let _ = self.tx.send(TransportEvent::Closed(reason)).await;
    }

    /// Returns false when the receiving side is gone.
    async fn handle(&mut self, line: Line<'_>) -> bool {
        match line {
            Line::Full(bytes) if bytes.iter().all(u8::is_ascii_whitespace) => true,
            Line::Full(bytes) => match codec::decode_line(bytes, &self.limits) {
                Ok(decoded) => {
                    for item in decoded.into_messages() {
                        match item {
                            Ok(m) => {
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
            },
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

    fn warn_bad_line(&self, bytes: &[u8], e: &codec::DecodeError) {
        let text = String::from_utf8_lossy(bytes);
        let quote: String = text.chars().take(200).collect();
        if e.is_noise() {
            tracing::warn!(server = %self.name, line = %quote, "dropped a stdout line that is not JSON-RPC");
        } else {
            tracing::warn!(server = %self.name, line = %quote, error = %e, "dropped an invalid JSON-RPC message");
        }
    }

    async fn final_reason(&mut self, io_error: Option<std::io::Error>) -> CloseReason {
        if let Some(e) = io_error {
            return CloseReason::Io(Arc::new(e));
        }
        // Stdout ended: normally the process is exiting. Give it and its stderr a moment so the
        // error carries the status and the last lines.
        let exited = process::wait_exit(&mut self.exit, Duration::from_secs(2)).await;
        let _ = tokio::time::timeout(Duration::from_millis(500), self.stderr_done.wait_for(|d| *d)).await;
        if !exited {
            return CloseReason::PeerClosed;
        }
        let status = (*self.exit.borrow()).flatten();
        CloseReason::Exited { status, stderr_tail: lock(&self.stderr).tail() }
    }
}

async fn read_stderr(
    name: Arc<str>,
    pipe: tokio::process::ChildStderr,
    ring: Arc<Mutex<StderrRing>>,
    max_line: usize,
    done: watch::Sender<bool>,
) {
    let mut reader = LineReader::new(pipe, max_line);
    while let Ok(Some(line)) = reader.next_line().await {
        let text = match line {
            Line::Full(b) => String::from_utf8_lossy(b).into_owned(),
            Line::TooLong { head, len } => format!("{}… ({len} bytes)", String::from_utf8_lossy(&head)),
        };
        tracing::debug!(server = %name, "stderr: {text}");
        lock(&ring).push(text);
    }
    done.send_replace(true);
}
