//! The child process: environment, its own process group, and how it is ended.

use std::collections::BTreeMap;
use std::time::Duration;

use nix::errno::Errno;
use nix::sys::signal::{Signal, killpg};
use nix::sys::wait::{WaitPidFlag, WaitStatus, waitpid};
use nix::unistd::Pid;
use tokio::sync::watch;

/// Variables inherited from the host when the environment is not inherited whole.
const SAFE_ENV: [&str; 9] = ["PATH", "HOME", "USER", "LOGNAME", "SHELL", "TERM", "LANG", "TMPDIR", "TZ"];

/// The environment the child starts with.
pub(crate) fn child_env(inherit_all: bool, configured: &BTreeMap<String, String>) -> BTreeMap<String, String> {
    let mut env: BTreeMap<String, String> = std::env::vars()
        .filter(|(k, _)| inherit_all || SAFE_ENV.contains(&k.as_str()) || k.starts_with("LC_"))
        .collect();
    env.extend(configured.iter().map(|(k, v)| (k.clone(), v.clone())));
    env
}

/// Signal the whole process group; a group that no longer exists is not an error.
pub(crate) fn signal_group(pgid: u32, signal: Signal) {
    // Group 0 would be this process's own group.
    let Some(pgid) = group(pgid) else { return };
    let _ = killpg(pgid, signal);
}

fn group(pgid: u32) -> Option<Pid> {
    i32::try_from(pgid).ok().filter(|&p| p > 0).map(Pid::from_raw)
}

/// Reap the members of the server's process group that became children of this process after
/// their parent exited. That happens when this process is PID 1 (a host in a container) or a
/// child subreaper: no one else reaps them, and a killed grandchild would stay a zombie. Call it
/// once the leader has been reaped. Returns when no child of this process is left in the group,
/// at once when there is none.
pub(crate) async fn reap_orphans(pgid: u32) {
    let Some(pgid) = group(pgid) else { return };
    let any_in_group = Pid::from_raw(-pgid.as_raw());
    let mut pause = Duration::from_millis(10);
    loop {
        match waitpid(any_in_group, Some(WaitPidFlag::WNOHANG)) {
            Ok(WaitStatus::StillAlive) => {
                tokio::time::sleep(pause).await;
                pause = (pause * 2).min(Duration::from_millis(500));
            }
            Ok(status) => {
                tracing::debug!(pgid = pgid.as_raw(), ?status, "reaped an orphan of the server's process group")
            }
            Err(Errno::EINTR) => {}
            // ECHILD: no child of this process is left in the group.
            Err(_) => return,
        }
    }
}

/// The exit status as published by the task that waits for the child.
pub(crate) type ExitWatch = watch::Receiver<Option<Option<std::process::ExitStatus>>>;

/// Wait until the child has exited, for at most `limit`. Returns whether it exited.
pub(crate) async fn wait_exit(exit: &mut ExitWatch, limit: Duration) -> bool {
    matches!(tokio::time::timeout(limit, exit.wait_for(|s| s.is_some())).await, Ok(Ok(_)))
}

/// The close sequence after stdin was closed: wait, SIGTERM the group, wait, SIGKILL the group,
/// then wait for the reap. Stragglers left in the group by a leader that exited are killed too.
pub(crate) async fn terminate(pgid: u32, exit: &mut ExitWatch, grace: Duration) {
    if !wait_exit(exit, grace).await {
        tracing::debug!(pgid, "server did not exit after stdin closed; sending SIGTERM to its process group");
        signal_group(pgid, Signal::SIGTERM);
        if !wait_exit(exit, grace).await {
            tracing::debug!(pgid, "server ignored SIGTERM; sending SIGKILL to its process group");
            signal_group(pgid, Signal::SIGKILL);
            wait_exit(exit, grace).await;
        }
    }
    signal_group(pgid, Signal::SIGKILL);
}
