//! The one task that writes to the child's stdin, fed by a bounded queue of whole lines.
//!
//! `send` encodes a message to a complete line and waits for room in the queue; it never touches
//! the pipe. So a `send` dropped while it waits queues nothing, and a queued line is written whole
//! by the writer, whatever happens to the future that queued it: no half line is ever left in the
//! pipe, and no send waits behind another one's write. A writer stuck on a full pipe (a child that
//! does not read) holds nothing anyone else waits for: close and drop abort it.

use std::sync::{Arc, Mutex};

use tokio::io::AsyncWriteExt;
use tokio::process::ChildStdin;
use tokio::sync::{mpsc, watch};
use tokio::task::AbortHandle;

use super::lock;

/// How many encoded lines may wait for the writer. A full queue makes `send` wait.
pub(crate) const QUEUE_LINES: usize = 32;

/// At most how many bytes of queued lines the writer gathers into one write. Lines that wait
/// behind the one being taken go out with it: one system call (and one wake-up of the child)
/// for a burst of pipelined requests rather than one per line. A longer line goes out alone.
const BATCH_BYTES: usize = 64 * 1024;

/// The sending side: the queue, the writer's failure, and how to stop it.
pub(crate) struct Writer {
    queue: mpsc::Sender<Vec<u8>>,
    /// Set to ask the writer to take no more lines, write those queued, and close stdin.
    finish: watch::Sender<bool>,
    /// Why the writer stopped, when it failed.
    failure: Failure,
    task: AbortHandle,
}

/// The error that stopped the writer, if one did.
type Failure = Arc<Mutex<Option<Arc<std::io::Error>>>>;

/// The writer takes no more lines: it finished (close), or writing failed with this error.
pub(crate) struct Stopped(pub(crate) Option<Arc<std::io::Error>>);

impl Writer {
    /// Start the writer task on `stdin` (none when the pipe could not be set up).
    pub(crate) fn start(name: Arc<str>, stdin: Option<ChildStdin>) -> Writer {
        let (queue, rx) = mpsc::channel(QUEUE_LINES);
        let (finish, finish_rx) = watch::channel(false);
        let failure = Arc::new(Mutex::new(None));
        let task = tokio::spawn(run(name, stdin, rx, finish_rx, failure.clone())).abort_handle();
        Writer { queue, finish, failure, task }
    }

    /// Queue one whole line, waiting for room. Cancel-safe: dropped while waiting, it queued
    /// nothing; once it returns `Ok` the line is the writer's.
    pub(crate) async fn push(&self, line: Vec<u8>) -> Result<(), Stopped> {
        match self.queue.reserve().await {
            Ok(permit) => {
                permit.send(line);
                Ok(())
            }
            Err(_) => Err(Stopped(lock(&self.failure).clone())),
        }
    }

    /// Take no more lines; write those already queued, then close stdin (the polite request to
    /// exit). Returns at once: the writer may be stuck on a full pipe, which [`Writer::abort`] ends.
    pub(crate) fn finish(&self) {
        self.finish.send_replace(true);
    }

    /// Stop the writer now, closing stdin, whatever it is doing.
    pub(crate) fn abort(&self) {
        self.task.abort();
    }

    /// The handle that stops the writer (for a task that outlives this borrow).
    pub(crate) fn abort_handle(&self) -> AbortHandle {
        self.task.clone()
    }
}

async fn run(
    name: Arc<str>,
    stdin: Option<ChildStdin>,
    mut rx: mpsc::Receiver<Vec<u8>>,
    mut finish: watch::Receiver<bool>,
    failure: Failure,
) {
    let Some(mut stdin) = stdin else {
        rx.close();
        return;
    };
    // One wait for the request to finish across every line written, not a new one per line.
    let finish = finish.wait_for(|f| *f);
    tokio::pin!(finish);
    let mut finishing = false;
    // The lines gathered for one write, and a line taken from the queue that did not fit in it
    // (written next, before anything else is taken).
    let mut batch = Vec::new();
    let mut carry = None;
    loop {
        let line = match carry.take() {
            Some(line) => Some(line),
            None => tokio::select! {
                biased;
                _ = &mut finish, if !finishing => {
                    // Pending and later sends are refused; the lines already queued still go out.
                    finishing = true;
                    rx.close();
                    continue;
                }
                line = rx.recv() => line,
            },
        };
        let Some(line) = line else { break };
        let out = if gather(&mut rx, &line, &mut batch, &mut carry) { &batch } else { &line };
        // Once started, a write is whole (or the pipe fails): nothing here is cancelled.
        let written = async {
            stdin.write_all(out).await?;
            stdin.flush().await
        }
        .await;
        batch.clear();
        if let Err(e) = written {
            if e.kind() != std::io::ErrorKind::BrokenPipe {
                tracing::warn!(server = %name, error = %e, "writing to the server's stdin failed");
            }
            *lock(&failure) = Some(Arc::new(e));
            rx.close();
            break;
        }
    }
    // Dropping stdin here closes the pipe: end of file for the child.
}

/// Gathers into `batch` (empty) `line` and the lines queued behind it, in order, while they fit
/// in [`BATCH_BYTES`]; a queued line that does not fit is left in `carry`. Whether anything was
/// gathered (else `line` goes out alone, uncopied).
fn gather(rx: &mut mpsc::Receiver<Vec<u8>>, line: &[u8], batch: &mut Vec<u8>, carry: &mut Option<Vec<u8>>) -> bool {
    if line.len() >= BATCH_BYTES {
        return false;
    }
    while let Ok(next) = rx.try_recv() {
        let start = if batch.is_empty() { line.len() } else { batch.len() };
        if start + next.len() > BATCH_BYTES {
            *carry = Some(next);
            break;
        }
        if batch.is_empty() {
            batch.extend_from_slice(line);
        }
        batch.extend_from_slice(&next);
    }
    !batch.is_empty()
}
