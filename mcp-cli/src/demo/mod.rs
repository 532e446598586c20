//! The demo MCP server behind `mcp serve-demo`: newline-delimited JSON-RPC on stdin and stdout,
//! built on `mcp_protocol`'s codec and message types.
//!
//! It speaks both eras: the legacy `initialize` handshake (2024-11-05 to 2025-11-25; the client's
//! revision when it offers a legacy one, else 2025-11-25) and the stateless 2026-07-28 revision
//! (`server/discover`, `_meta` on every request, input-required results). It offers the tools
//! `echo`, `add`, `current_time`, `stats`, `image`, `slow`, `ask_roots` and `summarize`, the prompt
//! `review_code`, the resources `demo://readme` and `demo://logo.png`, and the template
//! `demo://greeting/{name}`.
//!
//! Each request runs as its own task, so a slow tool does not hold up the others, and
//! `notifications/cancelled` stops one. A line longer than [`MAX_LINE_BYTES`] is skipped and
//! answered with a parse error. Logs go to stderr. When stdin closes, the requests in flight get
//! two seconds to finish (so `echo '{...}' | mcp serve-demo` gets its answer), then the server
//! exits.

mod args;
mod asks;
mod catalog;
mod clock;
mod context;
mod dispatch;
mod png;
mod skills;
mod state;
mod tools;

use std::sync::Arc;

use mcp_protocol::codec::{self, DecodeLimits};
use mcp_protocol::messages::ClientNotification;
use mcp_protocol::{ErrorCode, ErrorObject, Message, Notification, Request, Response};
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;

use self::state::State;

/// Longest accepted input line, in bytes.
pub const MAX_LINE_BYTES: usize = 4 * 1024 * 1024;

/// Messages waiting to be written to stdout.
const OUTPUT_QUEUE: usize = 256;

/// How long the requests in flight may take to finish once the input has ended.
const GRACE: std::time::Duration = std::time::Duration::from_secs(2);

/// How long the answers already queued may take to go out once the input has ended.
const FLUSH_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(2);

/// Run the demo server on this process's stdin and stdout until stdin closes. Returns the
/// process exit code: 0 after a clean end of input, 1 when stdout or the runtime failed.
pub fn run_stdio() -> i32 {
    let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            crate::output::terminal::errln(&format!("mcp serve-demo: could not start the async runtime: {e}"));
            return 1;
        }
    };
    crate::output::terminal::errln("mcp serve-demo: ready on stdio (protocol revisions 2024-11-05 to 2026-07-28)");
    match runtime.block_on(serve(tokio::io::stdin(), tokio::io::stdout())) {
        Ok(()) => 0,
        Err(e) => {
            crate::output::terminal::errln(&format!("mcp serve-demo: {e}"));
            1
        }
    }
}

/// Serve one client on `input` and `output` until `input` ends (or `output` fails, which is
/// returned as the error). Cancel-safe in the sense that dropping the future stops the server;
/// its in-flight requests go unanswered.
pub async fn serve<R, W>(input: R, output: W) -> std::io::Result<()>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (tx, rx) = mpsc::channel(OUTPUT_QUEUE);
    let state = Arc::new(State::new(tx));
    let mut writer = tokio::spawn(write_all(rx, output));
    let reader = read_all(BufReader::new(input), state.clone());
    let read = tokio::select! {
        read = reader => read,
        written = &mut writer => {
            state.cancel_all();
            return match written {
                Ok(result) => result,
                Err(e) => Err(std::io::Error::other(format!("the output task failed: {e}"))),
            };
        }
    };
    // The input ended: the requests in flight get a moment to finish (a piped script expects its
    // answers), then the rest is stopped. The writer ends once the last sender (held by the state
    // the tasks share) is gone, after writing what was queued.
    state.fail_asks();
    if !state.idle(GRACE).await {
        crate::output::terminal::errln("mcp serve-demo: the input ended; stopping the requests still running");
    }
    state.cancel_all();
    drop(state);
    match tokio::time::timeout(FLUSH_TIMEOUT, &mut writer).await {
        Ok(Ok(written)) => read.and(written),
        Ok(Err(e)) => read.and(Err(std::io::Error::other(format!("the output task failed: {e}")))),
        Err(_) => {
            writer.abort();
            read
        }
    }
}

async fn write_all<W: AsyncWrite + Unpin>(mut rx: mpsc::Receiver<Message>, mut output: W) -> std::io::Result<()> {
    let mut line = Vec::new();
    while let Some(message) = rx.recv().await {
        line.clear();
        codec::encode_line_into(&message, &mut line);
        output.write_all(&line).await?;
        // Flush once the queue is drained: a burst of messages goes out in one write.
        if rx.is_empty() {
            output.flush().await?;
        }
    }
    output.flush().await
}

async fn read_all<R: AsyncBufRead + Unpin>(mut input: R, state: Arc<State>) -> std::io::Result<()> {
    let limits = DecodeLimits { max_line_bytes: MAX_LINE_BYTES, ..DecodeLimits::default() };
    let mut line = Vec::new();
    loop {
        match read_line(&mut input, &mut line, MAX_LINE_BYTES).await? {
            Line::End => return Ok(()),
            Line::TooLong(len) => {
                crate::output::terminal::errln(&format!(
                    "mcp serve-demo: skipped a line of {len} bytes (the limit is {MAX_LINE_BYTES})"
                ));
                let error = ErrorObject::new(
                    ErrorCode::PARSE_ERROR,
                    format!("message of {len} bytes exceeds the limit of {MAX_LINE_BYTES} bytes"),
                );
                state.send(Message::error_response(None, error)).await;
            }
            Line::Complete if line.iter().all(u8::is_ascii_whitespace) => {}
            Line::Complete => match codec::decode_line(&line, &limits) {
                Ok(decoded) => {
                    for message in decoded.into_messages() {
                        match message {
                            Ok(m) => handle(&state, m).await,
                            Err(e) => {
                                let error = ErrorObject::new(ErrorCode::INVALID_REQUEST, e.to_string());
                                state.send(Message::error_response(None, error)).await;
                            }
                        }
                    }
                }
                Err(e) => {
                    crate::output::terminal::errln(&format!("mcp serve-demo: bad input line: {e}"));
                    let code = if e.is_noise() { ErrorCode::PARSE_ERROR } else { ErrorCode::INVALID_REQUEST };
                    state.send(Message::error_response(None, ErrorObject::new(code, e.to_string()))).await;
                }
            },
        }
    }
}

/// What [`read_line`] read.
#[derive(Debug, PartialEq, Eq)]
enum Line {
    /// A line (without its terminator) is in the buffer.
    Complete,
    /// A line longer than the limit was skipped; its length.
    TooLong(usize),
    /// The input ended.
    End,
}

/// Read one line into `buf` (cleared first), keeping at most `max` bytes: a longer line is read
/// to its end and dropped. A last line without a terminator counts.
async fn read_line<R: AsyncBufRead + Unpin>(input: &mut R, buf: &mut Vec<u8>, max: usize) -> std::io::Result<Line> {
    buf.clear();
    let mut len = 0usize;
    loop {
        let available = input.fill_buf().await?;
        if available.is_empty() {
            return Ok(match len {
                0 => Line::End,
                n if n > max => Line::TooLong(n),
                _ => Line::Complete,
            });
        }
        let (chunk, done) = match available.iter().position(|&b| b == b'\n') {
            Some(i) => (&available[..i], true),
            None => (available, false),
        };
        len = len.saturating_add(chunk.len());
        if len <= max {
            buf.extend_from_slice(chunk);
        } else {
            buf.clear();
        }
        let used = chunk.len() + usize::from(done);
        input.consume(used);
        if done {
            return Ok(if len > max { Line::TooLong(len) } else { Line::Complete });
        }
    }
}

async fn handle(state: &Arc<State>, message: Message) {
    match message {
        Message::Request(request) => start_request(state, request).await,
        Message::Notification(n) => notification(state, n),
        Message::Response(r) => state.answered(r),
    }
}

async fn start_request(state: &Arc<State>, request: Request) {
    let id = request.id.clone();
    let task_state = state.clone();
    let task = async move {
        let answer = dispatch::answer(&task_state, &request).await;
        // The answer goes out only while the request is still in flight (not cancelled).
        task_state.finished(&request.id);
        let message = match answer {
            Ok(raw) => Message::Response(Response::result(request.id, raw)),
            Err(error) => Message::error_response(Some(request.id), error),
        };
        task_state.send(message).await;
    };
    if let Err(error) = state.spawn_request(id.clone(), task) {
        state.send(Message::error_response(Some(id), error)).await;
    }
}

fn notification(state: &State, notification: Notification) {
    match ClientNotification::from_notification(&notification) {
        Ok(ClientNotification::Cancelled(Some(params))) => {
            if let Some(id) = params.request_id {
                let stopped = state.cancel(&id);
                let reason = params.reason.unwrap_or_default();
                crate::output::terminal::errln(&format!(
                    "mcp serve-demo: cancel request {id} ({reason}): {}",
                    if stopped { "stopped" } else { "not running" }
                ));
            }
        }
        Ok(ClientNotification::Initialized(_)) => {
            crate::output::terminal::errln("mcp serve-demo: the client is initialized")
        }
        Ok(ClientNotification::RootsListChanged(_)) => {
            crate::output::terminal::errln("mcp serve-demo: the client's roots changed")
        }
        Ok(_) => {}
        Err(e) => crate::output::terminal::errln(&format!(
            "mcp serve-demo: ignored notification {} with bad params: {e}",
            notification.method
        )),
    }
}

#[cfg(test)]
mod tests;
