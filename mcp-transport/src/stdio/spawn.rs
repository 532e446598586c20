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
//! fork never happens on the caller's thread: one dedicated thread, started on first use and never
//! ended, forks every server, and the signal comes only when the host process dies.
//!
//! What remains: the signal reaches only the server process itself. Its own children
//! (grandchildren of the host) do not get it; they die with the host only if the server ends them
//! (wrappers usually do on SIGTERM). A server that ignores SIGTERM outlives the host. The process
//! group as a whole is killed only by [`close`](crate::Transport::close) or by dropping the
//! transport, which a killed host does not do. A set-user-ID or file-capability program clears the
//! signal at exec. Other platforms get no parent-death signal.

use std::sync::{Mutex, OnceLock, mpsc};

use tokio::process::{Child, Command};

/// One child to start, and where the result goes.
struct Job {
    command: Command,
    runtime: tokio::runtime::Handle,
    reply: mpsc::SyncSender<std::io::Result<Child>>,
}

/// The queue of the thread that forks every server; `None` when that thread could not start.
static SPAWNER: OnceLock<Option<Mutex<mpsc::Sender<Job>>>> = OnceLock::new();

/// Start `command` (with the parent-death signal where there is one) from the spawner thread, or
/// from this thread when the spawner cannot run. Must be called within a Tokio runtime.
pub(crate) fn spawn(mut command: Command) -> std::io::Result<Child> {
    die_with_parent(&mut command);
    let spawner = SPAWNER.get_or_init(|| {
        let (tx, rx) = mpsc::channel::<Job>();
        let started = std::thread::Builder::new().name("mcp-stdio-spawner".into()).spawn(move || {
            // Runs for the life of the process: the sender is in a static and never dropped.
            for mut job in rx {
                let _runtime = job.runtime.enter();
                let _ = job.reply.send(job.command.spawn());
            }
        });
        match started {
            Ok(_) => Some(Mutex::new(tx)),
            Err(e) => {
                tracing::warn!(error = %e, "could not start the stdio spawner thread; servers are started from the calling thread");
                None
            }
        }
    });
    let Some(queue) = spawner else { return command.spawn() };
    let runtime = tokio::runtime::Handle::current();
    let (reply, result) = mpsc::sync_channel(1);
    let job = Job { command, runtime, reply };
    let sent = queue.lock().unwrap_or_else(|p| p.into_inner()).send(job);
    match sent {
        // A fork and an exec: the caller waits as long as it would have spawning itself.
        Ok(()) => result.recv().unwrap_or_else(|_| Err(std::io::Error::other("the stdio spawner thread ended"))),
        Err(mpsc::SendError(mut job)) => job.command.spawn(),
    }
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
