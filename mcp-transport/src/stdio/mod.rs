//! A server run as a child process, speaking newline-delimited JSON-RPC on stdin/stdout.
//!
//! The child runs in its own process group, so that wrappers (`npx`, `uvx`, `sh -c`) cannot
//! leave grandchildren behind: closing or dropping the transport ends the whole group, and the
//! members that this process adopts (when it is PID 1 or a child subreaper) are reaped. Stdout is
//! read line by line under a size limit; lines that are not JSON-RPC are dropped with a warning
//! naming the server. Stderr is kept in a bounded ring and attached to exit errors, and each line
//! is also handed to [`StdioConfig::stderr_sink`] when the host set one (to show it live).
//!
//! `send` writes a whole encoded line to the child's stdin itself when nothing is ahead of it, in
//! one non-blocking write; otherwise one writer task does, fed by a bounded queue of whole lines,
//! and `send` only waits for room in the queue. So it is cancel-safe (a dropped `send` wrote
//! nothing, a completed one is written whole) and no send waits behind another's write. The
//! transport ends at the end of stdout or when the server's main process exits (after a short
//! drain of the pipe: a child the server left behind may hold stdout open); the exit is reported
//! with its status and the stderr tail, drained first. `close` closes stdin, then signals the
//! group (SIGTERM, then SIGKILL), each step bounded by [`StdioConfig::close_grace`], in a task of
//! its own: it finishes whatever is stuck (a writer on a full pipe, sends waiting for the queue,
//! a cancelled `close`). On Linux the server also gets SIGTERM when the host dies (see the
//! `spawn` module's notes on what that does not cover).

mod end;
mod lines;
mod pipe;
mod process;
mod reader;
mod spawn;
mod stderr;
mod writer;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::task::Poll;
use std::time::Duration;

use futures::FutureExt;
use futures::future::BoxFuture;
use mcp_protocol::Message;
use mcp_protocol::codec::{self, DecodeLimits};
use nix::sys::signal::Signal;
use tokio::process::Command;
use tokio::sync::{mpsc, watch};
use tokio::task::AbortHandle;

use self::end::End;
use self::process::ExitWatch;
use self::reader::{StdoutReader, read_stderr};
use self::stderr::StderrRing;
use self::writer::{Stopped, Writer};
use crate::{CloseReason, MessageRouter, RouterSlot, Transport, TransportError, TransportEvent, TransportKind};

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
    /// Called with each stderr line as it arrives (one over `stderr_bytes` as its first 4 KiB and
    /// its length), for a host that shows it live; it runs on the stderr reader, so it must not
    /// block. `None` (default): lines are only kept.
    pub stderr_sink: Option<StderrSink>,
}

/// A host's receiver of a stdio server's stderr lines (see [`StdioConfig::stderr_sink`]).
pub type StderrSink = Arc<dyn Fn(&str) + Send + Sync>;

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
            .field("stderr_sink", &self.stderr_sink.is_some())
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
            stderr_sink: None,
        }
    }
}

/// A running stdio server. See the module docs.
pub struct StdioTransport {
    name: Arc<str>,
    pgid: u32,
    writer: Writer,
    /// Held only while `recv` polls it, never across an await: `recv` is called by one task at a
    /// time (the trait's contract), so no async lock is needed to take turns.
    events: Mutex<mpsc::Receiver<TransportEvent>>,
    /// Takes decoded messages before `events` does (see [`Transport::set_router`]).
    router: Arc<RouterSlot>,
    end: End,
    exit: ExitWatch,
    stderr: Arc<Mutex<StderrRing>>,
    stderr_task: AbortHandle,
    close_grace: Duration,
    /// Set by the first `close`: turns true when the close sequence is over.
    closed: Mutex<Option<watch::Receiver<bool>>>,
}

impl std::fmt::Debug for StdioTransport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StdioTransport").field("name", &self.name).field("pgid", &self.pgid).finish_non_exhaustive()
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// How long a `send` refused by a stopped writer waits for the transport's end reason (the exit
/// status and stderr tail that explain the broken pipe).
const REASON_WAIT: Duration = Duration::from_secs(5);

impl StdioTransport {
    /// Start the server. Must be called within a Tokio runtime. It blocks the calling thread
    /// for the fork and exec; a task that starts servers uses [`StdioTransport::start`].
    pub fn spawn(config: StdioConfig) -> Result<StdioTransport, TransportError> {
        let child = spawn::spawn(Self::command(&config));
        Self::adopt(config, child)
    }

    /// [`StdioTransport::spawn`] without blocking the runtime's thread while the process is
    /// forked: many servers start at once while those already started are served.
    pub async fn start(config: StdioConfig) -> Result<StdioTransport, TransportError> {
        let child = spawn::spawn_async(Self::command(&config)).await;
        Self::adopt(config, child)
    }

    /// The command that runs the server of `config`.
    fn command(config: &StdioConfig) -> Command {
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
        cmd
    }

    /// The transport over a `child` just started (or the error of starting it).
    fn adopt(config: StdioConfig, child: std::io::Result<tokio::process::Child>) -> Result<Self, TransportError> {
        let mut child = child.map_err(|e| TransportError::Spawn {
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
        let stderr_task = tokio::spawn(read_stderr(
            name.clone(),
            stderr_pipe,
            (stderr.clone(), config.stderr_sink.clone()),
            config.stderr_bytes,
            stderr_done_tx,
        ))
        .abort_handle();

        let (tx, rx) = mpsc::channel(64);
        let end = End::new();
        let router = Arc::new(RouterSlot::default());
        let reader = StdoutReader {
            name: name.clone(),
            router: router.clone(),
            limits: DecodeLimits { max_line_bytes: config.max_message_bytes, ..DecodeLimits::default() },
            tx,
            end: end.clone(),
            exit: exit_rx.clone(),
            stderr: stderr.clone(),
            stderr_done: stderr_done_rx,
        };
        tokio::spawn(reader.run(stdout));

        Ok(StdioTransport {
            writer: Writer::start(name.clone(), stdin),
            name,
            pgid,
            events: Mutex::new(rx),
            router,
            end,
            exit: exit_rx,
            stderr,
            stderr_task,
            close_grace: config.close_grace,
            closed: Mutex::new(None),
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
        self.end.get().unwrap_or(CloseReason::Closed)
    }

    /// Start the close sequence unless it runs already; returns what turns true when it is over.
    ///
    /// The sequence runs in a task of its own, so that it completes even when the `close` future
    /// that started it is dropped, and it waits on nothing a stuck writer or reader holds: each of
    /// its steps is bounded by the grace period.
    fn start_close(&self) -> watch::Receiver<bool> {
        let mut closed = lock(&self.closed);
        if let Some(done) = &*closed {
            return done.clone();
        }
        self.end.set(CloseReason::Closed);
        // Closing stdin (once the queued lines are out) is the polite request to exit.
        self.writer.finish();
        let (done_tx, done_rx) = watch::channel(false);
        let (pgid, mut exit, grace, writer) = (self.pgid, self.exit.clone(), self.close_grace, self.writer.stop());
        tokio::spawn(async move {
            process::terminate(pgid, &mut exit, grace).await;
            // A writer still stuck on a pipe someone outside the group holds lets go of it now.
            writer.abort();
            done_tx.send_replace(true);
        });
        *closed = Some(done_rx.clone());
        done_rx
    }
}

impl Transport for StdioTransport {
    fn send(&self, message: Message) -> BoxFuture<'_, Result<(), TransportError>> {
        async move {
            if let Some(reason) = self.end.get() {
                return Err(TransportError::Closed(reason));
            }
            // Encoded whole before it is queued: the writer only ever writes complete lines.
            let line = codec::encode_line(&message);
            let Stopped(failure) = match self.writer.push(line).await {
                Ok(()) => return Ok(()),
                Err(stopped) => stopped,
            };
            // The pipe broke or the transport is closing: the reader is about to tell why (the
            // exit status and the stderr tail), so wait for that, briefly.
            if let Some(reason) = self.end.wait(REASON_WAIT).await {
                return Err(TransportError::Closed(reason));
            }
            Err(match failure {
                Some(e) if e.kind() != std::io::ErrorKind::BrokenPipe => TransportError::Io(e),
                _ => TransportError::Closed(CloseReason::PeerClosed),
            })
        }
        .boxed()
    }

    fn send_now(&self, message: &Message) -> Option<Result<(), TransportError>> {
        // An ended transport's error carries the reason, which `send` waits for.
        if self.end.get().is_some() {
            return None;
        }
        // Encoded again by `send` when the queue is full: rare, and no worse than waiting.
        self.writer.try_push(codec::encode_line(message)).ok().map(Ok)
    }

    fn recv(&self) -> BoxFuture<'_, TransportEvent> {
        Box::pin(std::future::poll_fn(move |cx| {
            let polled = lock(&self.events).poll_recv(cx);
            match polled {
                Poll::Ready(Some(event)) => Poll::Ready(event),
                Poll::Ready(None) => Poll::Ready(TransportEvent::Closed(self.end_reason())),
                Poll::Pending => Poll::Pending,
            }
        }))
    }

    fn close(&self) -> BoxFuture<'_, ()> {
        async move {
            let mut done = self.start_close();
            let _ = done.wait_for(|d| *d).await;
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

    fn set_router(&self, router: MessageRouter) -> bool {
        self.router.set(router)
    }
}

impl Drop for StdioTransport {
    fn drop(&mut self) {
        // No waiting in drop: the group is killed at once; the runtime reaps the leader.
        process::signal_group(self.pgid, Signal::SIGKILL);
        self.writer.abort();
        self.stderr_task.abort();
    }
}
