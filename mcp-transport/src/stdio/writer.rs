//! Writing whole lines to the child's stdin: at once by `send` when nothing is ahead of it, else
//! by the one writer task, fed by a bounded queue of whole lines.
//!
//! `send` encodes a message to a complete line. When the writer task holds no line and none is
//! queued, `send` offers the line to the pipe itself, in one non-blocking write made under the
//! pipe's lock (no await, so nothing can cut it short): a line the pipe takes whole is written,
//! with no queue, no wake-up of the writer and no switch to its task. A line the pipe does not
//! take whole (the child is not reading, or the pipe failed) is handed to the writer, its
//! unwritten rest first, and the writer writes it before anything else. Otherwise `send` waits
//! for room in the queue; dropped while it waits, it queued nothing. Either way a line, once
//! `send` returned, is written whole (or the pipe fails): no half line is ever left in the pipe,
//! lines one caller sent one after the other go out in that order, and no send waits behind
//! another one's write. A writer stuck on a full pipe (a child that does not read) holds nothing
//! anyone else waits for: close and drop abort it, closing stdin.

use std::future::poll_fn;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};

use tokio::io::AsyncWrite;
use tokio::process::ChildStdin;
use tokio::sync::mpsc;
use tokio::task::AbortHandle;

use super::lock;

/// How many encoded lines may wait for the writer. A full queue makes `send` wait.
pub(crate) const QUEUE_LINES: usize = 32;

/// At most how many bytes of queued lines the writer gathers into one write. Lines that wait
/// behind the one being taken go out with it: one system call (and one wake-up of the child)
/// for a burst of pipelined requests rather than one per line. A longer line goes out alone.
const BATCH_BYTES: usize = 64 * 1024;

/// What the senders and the writer task share, under one lock that is never held across an
/// await (only for a non-blocking step: a write attempt, a look at the queue).
struct Pipe {
    /// The child's stdin while it is open: dropped (closing it) when the writer ends or is
    /// aborted.
    stdin: Option<ChildStdin>,
    /// The writer task holds a line it has not yet written (taken from the queue or handed over
    /// by a sender): a sender must not write before it.
    busy: bool,
    /// A line a sender began to write and handed over, with how many of its bytes the pipe
    /// already took: the writer writes the rest before it takes anything from the queue.
    handed: Option<(Vec<u8>, usize)>,
    /// The writer is to take no more lines (close): senders write nothing more themselves.
    finishing: bool,
    /// The writer task's waker while it waits for a line.
    waker: Option<Waker>,
    /// Whether stdin was widened (at the first line longer than a default pipe, see `pipe`).
    widened: bool,
}

impl Pipe {
    fn wake_writer(&mut self) {
        if let Some(waker) = self.waker.take() {
            waker.wake();
        }
    }
}

/// The sending side: the queue, the pipe, the writer's failure, and how to stop it.
pub(crate) struct Writer {
    queue: mpsc::Sender<Vec<u8>>,
    pipe: Arc<Mutex<Pipe>>,
    /// Why the writer stopped, when it failed.
    failure: Failure,
    task: AbortHandle,
}

/// The error that stopped the writer, if one did.
type Failure = Arc<Mutex<Option<Arc<std::io::Error>>>>;

/// The writer takes no more lines: it finished (close), or writing failed with this error.
pub(crate) struct Stopped(pub(crate) Option<Arc<std::io::Error>>);

/// Stops the writer now and closes stdin, whatever it is doing (see [`Writer::abort`]); for a
/// task that outlives the transport's borrow.
pub(crate) struct WriterStop {
    pipe: Arc<Mutex<Pipe>>,
    task: AbortHandle,
}

impl WriterStop {
    pub(crate) fn abort(&self) {
        let stdin = {
            let mut pipe = lock(&self.pipe);
            pipe.finishing = true;
            pipe.stdin.take()
        };
        // Dropped outside the lock: closing the pipe is a system call.
        drop(stdin);
        self.task.abort();
    }
}

impl Writer {
    /// Start the writer task on `stdin` (none when the pipe could not be set up).
    pub(crate) fn start(name: Arc<str>, stdin: Option<ChildStdin>) -> Writer {
        let (queue, rx) = mpsc::channel(QUEUE_LINES);
        let pipe = Arc::new(Mutex::new(Pipe {
            stdin,
            busy: false,
            handed: None,
            finishing: false,
            waker: None,
            widened: false,
        }));
        let failure = Arc::new(Mutex::new(None));
        let task = tokio::spawn(run(name, Closes(pipe.clone()), rx, failure.clone())).abort_handle();
        Writer { queue, pipe, failure, task }
    }

    /// Write one whole line, or queue it, waiting for room. Cancel-safe: dropped while waiting,
    /// it queued nothing; once it returns `Ok` the line is written or the writer's.
    pub(crate) async fn push(&self, line: Vec<u8>) -> Result<(), Stopped> {
        let Some(line) = self.write_now(line) else { return Ok(()) };
        match self.queue.reserve().await {
            Ok(permit) => {
                permit.send(line);
                Ok(())
            }
            Err(_) => Err(Stopped(lock(&self.failure).clone())),
        }
    }

    /// Write one whole line, or queue it, when that needs no wait; otherwise the line comes back
    /// (the queue is full, or the writer stopped: [`Writer::push`] then waits or says why).
    pub(crate) fn try_push(&self, line: Vec<u8>) -> Result<(), Vec<u8>> {
        let Some(line) = self.write_now(line) else { return Ok(()) };
        match self.queue.try_reserve() {
            Ok(permit) => {
                permit.send(line);
                Ok(())
            }
            Err(_) => Err(line),
        }
    }

    /// Offer `line` to the pipe when nothing is ahead of it (the writer holds no line, none is
    /// queued or about to be, and the writer is not finishing): the line is then written, or
    /// handed to the writer with the rest the pipe did not take (`None`). Otherwise the line
    /// comes back, for the queue.
    fn write_now(&self, line: Vec<u8>) -> Option<Vec<u8>> {
        let mut guard = lock(&self.pipe);
        let pipe = &mut *guard;
        // The first line a default pipe cannot hold widens it, for this line and the ones after.
        if line.len() > super::pipe::DEFAULT_PIPE && !pipe.widened {
            pipe.widened = true;
            if let Some(stdin) = &pipe.stdin {
                super::pipe::widen(stdin);
            }
        }
        // A reserved slot counts as taken: its line is on its way to the queue.
        let clear = !pipe.busy && !pipe.finishing && self.queue.capacity() == self.queue.max_capacity();
        let Some(stdin) = pipe.stdin.as_mut().filter(|_| clear) else { return Some(line) };
        // One attempt, not a wait: a waker that does nothing. The writer, handed the rest,
        // registers its own when it writes.
        let mut cx = Context::from_waker(Waker::noop());
        // (A pipe has nothing to flush: a line the pipe took is the child's to read.)
        let taken = match Pin::new(stdin).poll_write(&mut cx, &line) {
            Poll::Ready(Ok(n)) => n,
            // Not writable now, or failing: the writer tries again and reports a failure.
            Poll::Ready(Err(_)) | Poll::Pending => 0,
        };
        if taken < line.len() {
            pipe.busy = true;
            pipe.handed = Some((line, taken));
            pipe.wake_writer();
        }
        None
    }

    /// Take no more lines; write those already queued or handed over, then close stdin (the
    /// polite request to exit). Returns at once: the writer may be stuck on a full pipe, which
    /// [`Writer::abort`] ends.
    pub(crate) fn finish(&self) {
        let mut pipe = lock(&self.pipe);
        pipe.finishing = true;
        pipe.wake_writer();
    }

    /// Stop the writer now, closing stdin, whatever it is doing.
    pub(crate) fn abort(&self) {
        self.stop().abort();
    }

    /// What stops the writer (for a task that outlives this borrow).
    pub(crate) fn stop(&self) -> WriterStop {
        WriterStop { pipe: self.pipe.clone(), task: self.task.clone() }
    }
}

/// Closes stdin when the writer task ends, however it ends (aborted, even before it first ran).
struct Closes(Arc<Mutex<Pipe>>);

impl Drop for Closes {
    fn drop(&mut self) {
        let stdin = lock(&self.0).stdin.take();
        drop(stdin);
    }
}

/// What the writer takes next.
enum Next {
    /// The rest of a line a sender began, from this offset.
    Handed(Vec<u8>, usize),
    /// A line from the queue (or the one carried over from the last batch).
    Line(Vec<u8>),
    /// Finishing, and nothing is left.
    End,
}

async fn run(name: Arc<str>, closes: Closes, mut rx: mpsc::Receiver<Vec<u8>>, failure: Failure) {
    let pipe = &closes.0;
    if lock(pipe).stdin.is_none() {
        rx.close();
        return;
    }
    let mut finishing = false;
    // The lines gathered for one write, and a line taken from the queue that did not fit in it
    // (written next, before anything else is taken).
    let mut batch = Vec::new();
    let mut carry = None;
    loop {
        let next = poll_fn(|cx| {
            let mut pipe = lock(pipe);
            if let Some((line, offset)) = pipe.handed.take() {
                return Poll::Ready(Next::Handed(line, offset));
            }
            if let Some(line) = carry.take() {
                return Poll::Ready(Next::Line(line));
            }
            if pipe.finishing && !finishing {
                // Pending and later sends are refused; the lines already queued still go out.
                finishing = true;
                rx.close();
            }
            match rx.poll_recv(cx) {
                Poll::Ready(Some(line)) => {
                    pipe.busy = true;
                    Poll::Ready(Next::Line(line))
                }
                Poll::Ready(None) => Poll::Ready(Next::End),
                Poll::Pending => {
                    // Nothing in hand: a sender may write itself until it queues or hands over.
                    pipe.busy = false;
                    pipe.waker = Some(cx.waker().clone());
                    Poll::Pending
                }
            }
        })
        .await;
        let written = match next {
            Next::End => break,
            Next::Handed(line, offset) => write_all(pipe, &line[offset..]).await,
            Next::Line(line) => {
                let out = if gather(&mut rx, &line, &mut batch, &mut carry) { &batch } else { &line };
                let written = write_all(pipe, out).await;
                batch.clear();
                written
            }
        };
        if let Err(e) = written {
            if e.kind() != std::io::ErrorKind::BrokenPipe {
                tracing::warn!(server = %name, error = %e, "writing to the server's stdin failed");
            }
            *lock(&failure) = Some(Arc::new(e));
            rx.close();
            break;
        }
    }
    // `closes` drops stdin here: end of file for the child.
}

/// Write all of `out` to the pipe. Once started, a write is whole (or the pipe fails): nothing
/// here is cancelled but by an abort, which closes the pipe.
async fn write_all(pipe: &Mutex<Pipe>, mut out: &[u8]) -> std::io::Result<()> {
    poll_fn(|cx| {
        let mut pipe = lock(pipe);
        let Some(stdin) = pipe.stdin.as_mut() else {
            return Poll::Ready(Err(std::io::ErrorKind::BrokenPipe.into()));
        };
        while !out.is_empty() {
            match Pin::new(&mut *stdin).poll_write(cx, out) {
                Poll::Ready(Ok(0)) => return Poll::Ready(Err(std::io::ErrorKind::WriteZero.into())),
                Poll::Ready(Ok(n)) => out = &out[n..],
                Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
                Poll::Pending => return Poll::Pending,
            }
        }
        Pin::new(stdin).poll_flush(cx)
    })
    .await
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

#[cfg(all(test, any(target_os = "linux", target_os = "android")))]
mod tests {
    use nix::fcntl::{FcntlArg, fcntl};

    use super::super::pipe;
    use super::*;

    #[tokio::test]
    async fn the_writer_widens_stdin_at_the_first_line_a_default_pipe_cannot_hold() {
        use std::os::fd::AsFd;
        test_support::within(async {
            let mut child = tokio::process::Command::new("cat")
                .stdin(std::process::Stdio::piped())
                .stdout(std::process::Stdio::null())
                .kill_on_drop(true)
                .spawn()
                .expect("cat starts");
            let stdin = child.stdin.take().expect("piped stdin");
            // The same pipe, to look at its size once the writer holds it.
            let probe = stdin.as_fd().try_clone_to_owned().expect("a second handle on the pipe");
            let size = || usize::try_from(fcntl(&probe, FcntlArg::F_GETPIPE_SZ).expect("the pipe's size")).unwrap();
            let writer = Writer::start("cat".into(), Some(stdin));
            let mut small = vec![b'a'; 100];
            small.push(b'\n');
            writer.push(small).await.map_err(|_| "the writer stopped").unwrap();
            assert_ne!(size(), pipe::WIDE_PIPE, "widened for a line of 101 bytes");
            let mut large = vec![b'b'; pipe::DEFAULT_PIPE + 1];
            large.push(b'\n');
            writer.push(large).await.map_err(|_| "the writer stopped").unwrap();
            if pipe::pipe_max_size().is_some_and(|max| max >= pipe::WIDE_PIPE) {
                assert_eq!(size(), pipe::WIDE_PIPE, "not widened for a line longer than a default pipe");
            }
            // Every byte reaches the child, which ends at the end of its input (once the second
            // handle on the pipe is closed too).
            drop(probe);
            writer.finish();
            let status = child.wait().await.expect("cat ends");
            assert!(status.success(), "{status}");
        })
        .await;
    }
}
