//! [`LineTransport`]: newline-delimited JSON-RPC over any byte stream (a TCP connection, a Unix
//! socket, a pipe), the smallest transport that keeps the whole [`Transport`] contract. It is the
//! worked example of ARCHITECTURE.md's "How to add a transport", and the `tests` crate runs a real
//! session over it (`tests/tests/it/custom_transport.rs`).
//!
//! The pieces every transport needs, and how this one does them:
//!
//! - framing: `mcp_protocol::codec` encodes one message per line and decodes a line under
//!   `DecodeLimits`; a line longer than the limit is skipped, never buffered whole;
//! - a cancel-safe `send`: the message is encoded to a whole line first, and one writer task owns
//!   the stream, fed by a bounded queue, so a `send` dropped before its line was queued writes
//!   nothing, and a queued line is written whole;
//! - `recv`: one reader task turns lines into [`TransportEvent`]s; what is not JSON-RPC is
//!   dropped with a warning; the stream's end is the transport's end, reported on every later
//!   call;
//! - `close`: idempotent and bounded: the queue is closed, the writer shuts the stream down, the
//!   reader is aborted; dropping the transport does the same without waiting.

use std::sync::{Arc, Mutex};

use futures::FutureExt;
use futures::future::BoxFuture;
use mcp_protocol::{DecodeLimits, Message, codec};
use mcp_transport::{CloseReason, Transport, TransportError, TransportEvent, TransportKind};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;
use tokio::task::AbortHandle;

/// Whole encoded lines waiting for the writer: a full queue makes `send` wait.
const QUEUE: usize = 64;

/// Newline-delimited JSON-RPC over a byte stream, read and written by tasks of its own.
pub struct LineTransport {
    /// The writer's queue; `None` once closed.
    lines: Mutex<Option<mpsc::Sender<Vec<u8>>>>,
    events: tokio::sync::Mutex<mpsc::Receiver<TransportEvent>>,
    /// Why it ended, once it has: every later `recv` and `send` reports it.
    end: Arc<Mutex<Option<CloseReason>>>,
    reader: AbortHandle,
    writer: AbortHandle,
}

impl LineTransport {
    /// A transport over the two halves of a stream, each line at most `limits.max_line_bytes`.
    pub fn new(
        read: impl AsyncRead + Send + Unpin + 'static,
        write: impl AsyncWrite + Send + Unpin + 'static,
        limits: DecodeLimits,
    ) -> LineTransport {
        let end = Arc::new(Mutex::new(None));
        let (events_tx, events) = mpsc::channel(QUEUE);
        let reader = tokio::spawn(read_lines(read, limits, events_tx)).abort_handle();
        let (lines, queued) = mpsc::channel(QUEUE);
        let writer = tokio::spawn(write_lines(write, queued, end.clone())).abort_handle();
        LineTransport { lines: Mutex::new(Some(lines)), events: tokio::sync::Mutex::new(events), end, reader, writer }
    }

    /// A transport over a TCP connection to `addr`.
    pub async fn connect_tcp(addr: std::net::SocketAddr) -> std::io::Result<LineTransport> {
        let (read, write) = tokio::net::TcpStream::connect(addr).await?.into_split();
        Ok(LineTransport::new(read, write, DecodeLimits::default()))
    }

    fn end_reason(&self) -> CloseReason {
        self.end.lock().unwrap_or_else(|p| p.into_inner()).clone().unwrap_or(CloseReason::Closed)
    }
}

/// The reader task: each line becomes messages; a line over the limit is skipped (read in
/// bounded chunks, never kept whole); noise is dropped. The stream's end ends the transport.
async fn read_lines(read: impl AsyncRead + Unpin, limits: DecodeLimits, events: mpsc::Sender<TransportEvent>) {
    let mut read = BufReader::new(read);
    let mut line = Vec::new();
    let reason = loop {
        line.clear();
        let max = limits.max_line_bytes as u64 + 1;
        match (&mut read).take(max).read_until(b'\n', &mut line).await {
            Ok(0) => break CloseReason::PeerClosed,
            Ok(_) if line.len() as u64 == max && !line.ends_with(b"\n") => {
                tracing::warn!(limit = limits.max_line_bytes, "skipped a line over the limit");
                if let Err(e) = skip_line(&mut read).await {
                    break CloseReason::Io(Arc::new(e));
                }
            }
            Ok(_) => {
                let text = line.strip_suffix(b"\n").unwrap_or(&line);
                match codec::decode_line(text, &limits) {
                    Ok(decoded) => {
                        for message in decoded.into_messages() {
                            match message {
                                Ok(m) => {
                                    if events.send(TransportEvent::Message(m)).await.is_err() {
                                        return;
                                    }
                                }
                                Err(e) => tracing::warn!(error = %e, "dropped a message that breaks JSON-RPC"),
                            }
                        }
                    }
                    Err(e) => tracing::warn!(error = %e, "dropped a line that is not JSON-RPC"),
                }
            }
            Err(e) => break CloseReason::Io(Arc::new(e)),
        }
    };
    let _ = events.send(TransportEvent::Closed(reason)).await;
}

/// Read and forget the rest of a line, a bounded chunk at a time.
async fn skip_line(read: &mut (impl AsyncBufReadExt + Unpin)) -> std::io::Result<()> {
    let mut chunk = Vec::new();
    loop {
        chunk.clear();
        if read.take(64 * 1024).read_until(b'\n', &mut chunk).await? == 0 || chunk.ends_with(b"\n") {
            return Ok(());
        }
    }
}

/// The writer task: the one owner of the stream, writing whole lines in order. A write error
/// ends the transport; the queue's end shuts the stream down.
async fn write_lines(
    mut write: impl AsyncWrite + Unpin,
    mut lines: mpsc::Receiver<Vec<u8>>,
    end: Arc<Mutex<Option<CloseReason>>>,
) {
    while let Some(line) = lines.recv().await {
        if let Err(e) = write.write_all(&line).await {
            end.lock().unwrap_or_else(|p| p.into_inner()).get_or_insert(CloseReason::Io(Arc::new(e)));
            return;
        }
    }
    let _ = write.shutdown().await;
}

impl Transport for LineTransport {
    fn send(&self, message: Message) -> BoxFuture<'_, Result<(), TransportError>> {
        // Encoded before anything is queued: what is queued is always a whole line.
        let line = codec::encode_line(&message);
        let lines = self.lines.lock().unwrap_or_else(|p| p.into_inner()).clone();
        async move {
            let Some(lines) = lines else { return Err(TransportError::Closed(self.end_reason())) };
            lines.send(line).await.map_err(|_| TransportError::Closed(self.end_reason()))
        }
        .boxed()
    }

    fn recv(&self) -> BoxFuture<'_, TransportEvent> {
        async move {
            if let Some(reason) = self.end.lock().unwrap_or_else(|p| p.into_inner()).clone() {
                return TransportEvent::Closed(reason);
            }
            match self.events.lock().await.recv().await {
                Some(TransportEvent::Closed(reason)) => {
                    let mut end = self.end.lock().unwrap_or_else(|p| p.into_inner());
                    TransportEvent::Closed(end.get_or_insert(reason).clone())
                }
                Some(event) => event,
                None => TransportEvent::Closed(self.end_reason()),
            }
        }
        .boxed()
    }

    fn close(&self) -> BoxFuture<'_, ()> {
        self.end.lock().unwrap_or_else(|p| p.into_inner()).get_or_insert(CloseReason::Closed);
        // Dropping the queue lets the writer finish what was queued and shut the stream down.
        self.lines.lock().unwrap_or_else(|p| p.into_inner()).take();
        self.reader.abort();
        futures::future::ready(()).boxed()
    }

    fn kind(&self) -> TransportKind {
        TransportKind::Custom
    }
}

impl Drop for LineTransport {
    fn drop(&mut self) {
        self.reader.abort();
        self.writer.abort();
    }
}
