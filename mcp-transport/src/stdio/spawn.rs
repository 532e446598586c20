//! Starting the child so that it dies with the host.
//!
//! On Linux every server is started with a parent-death signal (`PR_SET_PDEATHSIG`, SIGTERM), set
//! in the child between fork and exec: when the host dies, even by SIGKILL or the OOM killer, the
//! kernel sends the server SIGTERM. SIGTERM rather than SIGKILL so that wrappers (`npx`, `uvx`)
//! can pass it on to the real server and clean up.
//!
//! The signal fires when the *thread* that forked the child ends, not the process. A Tokio
//! runtime starts children from whatever thread calls spawn: a blocking-pool thread ends after
//! some idle seconds, a `current_thread` runtime's thread may end long before the process. So the
//! fork never happens on the caller's thread: a few dedicated threads ([`SPAWNER_THREADS`]),
//! started on first use and never ended, fork every server, and the signal comes only when the
//! host process dies. Several, because a spawn waits for the child to exec: while one thread
//! waits, another forks. [`spawn_async`] waits for them without holding up the caller's runtime
//! thread, so a host that starts a hundred servers keeps serving the ones already started.
//!
//! What remains: the signal reaches only the server process itself. Its own children
//! (grandchildren of the host) do not get it; they die with the host only if the server ends them
//! (wrappers usually do on SIGTERM). A server that ignores SIGTERM outlives the host. The process
//! group as a whole is killed only by [`close`](crate::Transport::close) or by dropping the
//! transport, which a killed host does not do. A set-user-ID or file-capability program clears the
//! signal at exec. Other platforms get no parent-death signal.

use std::sync::{Mutex, OnceLock, mpsc};

use tokio::process::{Child, Command};

/// How many threads fork servers.
const SPAWNER_THREADS: usize = 4;

/// One child to start, and where the result goes.
struct Job {
    command: Command,
    runtime: tokio::runtime::Handle,
    reply: Reply,
}

/// Where the spawner thread sends a child: to a thread blocked on it, or to a task.
enum Reply {
    Blocking(mpsc::SyncSender<std::io::Result<Child>>),
    Task(tokio::sync::oneshot::Sender<std::io::Result<Child>>),
}

impl Reply {
    fn send(self, child: std::io::Result<Child>) {
        let unwanted = match self {
            Reply::Blocking(tx) => tx.send(child).err().map(|e| e.0),
            Reply::Task(tx) => tx.send(child).err(),
        };
        // The waiter went away (a start-up timeout dropped it): no one will own the process, so
        // it is killed now, with its group; the runtime reaps it once the `Child` is dropped.
        if let Some(Ok(child)) = unwanted
            && let Some(pid) = child.id()
        {
            super::process::signal_group(pid, nix::sys::signal::Signal::SIGKILL);
        }
    }
}

/// The queue of the threads that fork every server; `None` when none could start.
static SPAWNER: OnceLock<Option<Mutex<mpsc::Sender<Job>>>> = OnceLock::new();

/// Start `command` (with the parent-death signal where there is one) from the spawner thread, or
/// from this thread when the spawner cannot run. Must be called within a Tokio runtime.
pub(crate) fn spawn(mut command: Command) -> std::io::Result<Child> {
    die_with_parent(&mut command);
    let Some(queue) = spawner() else { return command.spawn() };
    let runtime = tokio::runtime::Handle::current();
    let (reply, result) = mpsc::sync_channel(1);
    match queue_job(queue, Job { command, runtime, reply: Reply::Blocking(reply) }) {
        // A fork and an exec: the caller waits as long as it would have spawning itself.
        Ok(()) => result.recv().unwrap_or_else(|_| Err(std::io::Error::other("the stdio spawner thread ended"))),
        Err(mut command) => command.spawn(),
    }
}

/// [`spawn`] for a task: it waits for the spawner thread without blocking its runtime thread.
pub(crate) async fn spawn_async(mut command: Command) -> std::io::Result<Child> {
    die_with_parent(&mut command);
    let Some(queue) = spawner() else { return command.spawn() };
    let runtime = tokio::runtime::Handle::current();
    let (reply, result) = tokio::sync::oneshot::channel();
    match queue_job(queue, Job { command, runtime, reply: Reply::Task(reply) }) {
        Ok(()) => result.await.unwrap_or_else(|_| Err(std::io::Error::other("the stdio spawner thread ended"))),
        Err(mut command) => command.spawn(),
    }
}

/// Hand `job` to the spawner threads; its command back if they are gone.
fn queue_job(queue: &Mutex<mpsc::Sender<Job>>, job: Job) -> Result<(), Box<Command>> {
    let sent = queue.lock().unwrap_or_else(|p| p.into_inner()).send(job);
    sent.map_err(|mpsc::SendError(job)| Box::new(job.command))
}

/// The queue of the spawner thread, started on first use; `None` when it cannot start.
fn spawner() -> Option<&'static Mutex<mpsc::Sender<Job>>> {
    let spawner = SPAWNER.get_or_init(|| {
        let (tx, rx) = mpsc::channel::<Job>();
        // One thread at a time waits for the next job; it lets go of the queue to fork.
        let rx = std::sync::Arc::new(Mutex::new(rx));
        let mut started = 0;
        for _ in 0..SPAWNER_THREADS {
            let rx = rx.clone();
            // Runs for the life of the process: the sender is in a static and never dropped.
            let thread = std::thread::Builder::new().name("mcp-stdio-spawner".into()).spawn(move || {
                loop {
                    let job = rx.lock().unwrap_or_else(|p| p.into_inner()).recv();
                    let Ok(mut job) = job else { return };
                    let _runtime = job.runtime.enter();
                    job.reply.send(job.command.spawn());
                }
            });
            match thread {
                Ok(_) => started += 1,
                Err(e) => tracing::warn!(error = %e, "could not start a stdio spawner thread"),
            }
        }
        if started == 0 {
            tracing::warn!("no stdio spawner thread could start; servers are started from the calling thread");
            return None;
        }
        Some(Mutex::new(tx))
    });
    spawner.as_ref()
}

/// Have the child get SIGTERM when its parent thread (the spawner) ends.
#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
fn die_with_parent(command: &mut Command) {
    use nix::sys::signal::Signal;
    use nix::unistd::{getpid, getppid};
    let host = getpid();
    // SAFETY: the closure runs in the child between fork and exec, where only async-signal-safe
    // functions may be called. It makes two system calls, prctl(2) and getppid(2), which are
    // async-signal-safe; it allocates nothing and takes no lock (the error is built from a raw
    // errno, without allocation).
    unsafe {
        command.pre_exec(move || {
            nix::sys::prctl::set_pdeathsig(Signal::SIGTERM).map_err(std::io::Error::from)?;
            // The host died between fork and prctl: the signal will never come, so do not run.
            if getppid() != host {
                return Err(std::io::Error::from(nix::errno::Errno::ESRCH));
            }
            Ok(())
        });
    }
}

#[cfg(not(target_os = "linux"))]
fn die_with_parent(_: &mut Command) {}
