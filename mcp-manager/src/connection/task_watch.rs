//! What the session's notification handler hands to the tasks a connection is following: task
//! status pushes (`notifications/tasks/status` in 2025-11-25, `notifications/tasks` of the
//! 2026-07-28 extension) and progress notifications whose token a task call chose.
//!
//! Both tables are bounded ([`MAX_WATCHED`] entries each): a task beyond that is followed by
//! polling alone, and its progress is not reported. The last [`MAX_RECENT`] pushes for tasks no
//! one watches yet are kept, so that a push that comes before its call has seen the task's id
//! (a server that finishes at once) still counts.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use mcp_protocol::NotificationMethod;
use mcp_protocol::RequestId;
use mcp_protocol::messages::ServerNotification;
use mcp_protocol::types::tasks::Task;
use mcp_protocol::types::tasks_ext::{DetailedTask, ExtTaskStatus};
use tokio::sync::watch;

use crate::session::ProgressCallback;

/// Longest task id accepted from a server.
pub const MAX_TASK_ID_BYTES: usize = 1024;

/// Most tasks (and progress tokens) watched at once on one connection.
pub const MAX_WATCHED: usize = 256;

/// Most pushes kept for tasks no one watches yet.
const MAX_RECENT: usize = 32;

/// A status pushed by the server.
#[derive(Debug, Clone)]
pub(crate) enum Pushed {
    /// 2025-11-25: the task's fields.
    Legacy(Box<Task>),
    /// 2026-07-28: the whole task, payloads inlined.
    Modern(Box<DetailedTask>),
}

#[derive(Default)]
struct Tables {
    tasks: HashMap<String, (u64, watch::Sender<Option<Pushed>>)>,
    progress: HashMap<RequestId, (u64, ProgressCallback)>,
    recent: std::collections::VecDeque<(String, Pushed)>,
    serial: u64,
}

/// The tasks and progress tokens the connection's calls are following.
#[derive(Default)]
pub(crate) struct TaskWatchers {
    tables: Mutex<Tables>,
}

impl TaskWatchers {
    fn lock(&self) -> std::sync::MutexGuard<'_, Tables> {
        self.tables.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Follow the pushes of task `id` until the returned guard drops; `None` when the table is
    /// full.
    pub(crate) fn watch(self: &Arc<Self>, id: &str) -> Option<(WatchGuard, watch::Receiver<Option<Pushed>>)> {
        let mut t = self.lock();
        if t.tasks.len() >= MAX_WATCHED && !t.tasks.contains_key(id) {
            return None;
        }
        t.serial += 1;
        let serial = t.serial;
        let (tx, mut rx) = watch::channel(None);
        if let Some(at) = t.recent.iter().rposition(|(task, _)| task == id)
            && let Some((_, pushed)) = t.recent.remove(at)
        {
            tx.send_replace(Some(pushed));
            t.recent.retain(|(task, _)| task != id);
        } else {
            rx.mark_unchanged();
        }
        t.tasks.insert(id.to_owned(), (serial, tx));
        Some((WatchGuard { watchers: self.clone(), key: Key::Task(id.to_owned()), serial }, rx))
    }

    /// Report the progress notifications with `token` to `callback` until the guard drops;
    /// `None` when the table is full.
    pub(crate) fn progress(self: &Arc<Self>, token: RequestId, callback: ProgressCallback) -> Option<WatchGuard> {
        let mut t = self.lock();
        if t.progress.len() >= MAX_WATCHED {
            return None;
        }
        t.serial += 1;
        let serial = t.serial;
        t.progress.insert(token.clone(), (serial, callback));
        Some(WatchGuard { watchers: self.clone(), key: Key::Progress(token), serial })
    }

    /// A notification from the server: a push for a watched task, or progress for a watched
    /// token. Everything else is left alone (the host's sink sees every notification anyway).
    pub(crate) fn on_notification(&self, notification: &ServerNotification) {
        let (id, pushed) = match notification {
            ServerNotification::TaskStatus(Some(p)) => {
                (p.task.task_id.clone(), Pushed::Legacy(Box::new(p.task.clone())))
            }
            ServerNotification::Progress(Some(p)) => {
                let callback = self.lock().progress.get(&p.progress_token).map(|(_, c)| c.clone());
                if let Some(callback) = callback {
                    callback(p.clone());
                }
                return;
            }
            ServerNotification::Other { method, params } if method == ExtTaskStatus::METHOD => {
                let Some(task) = params.as_ref().and_then(|p| serde_json::from_value::<DetailedTask>(p.clone()).ok())
                else {
                    tracing::debug!(method, "dropped a task notification whose params do not decode");
                    return;
                };
                (task.task_id.clone(), Pushed::Modern(Box::new(task)))
            }
            _ => return,
        };
        let mut t = self.lock();
        if let Some((_, tx)) = t.tasks.get(&id) {
            tx.send_replace(Some(pushed));
        } else if id.len() <= MAX_TASK_ID_BYTES {
            if t.recent.len() == MAX_RECENT {
                t.recent.pop_front();
            }
            t.recent.push_back((id, pushed));
        }
    }
}

enum Key {
    Task(String),
    Progress(RequestId),
}

/// Stops a watch when dropped.
pub(crate) struct WatchGuard {
    watchers: Arc<TaskWatchers>,
    key: Key,
    serial: u64,
}

impl Drop for WatchGuard {
    fn drop(&mut self) {
        let mut t = self.watchers.lock();
        match &self.key {
            Key::Task(id) => {
                if t.tasks.get(id).is_some_and(|(s, _)| *s == self.serial) {
                    t.tasks.remove(id);
                }
            }
            Key::Progress(token) => {
                if t.progress.get(token).is_some_and(|(s, _)| *s == self.serial) {
                    t.progress.remove(token);
                }
            }
        }
    }
}
