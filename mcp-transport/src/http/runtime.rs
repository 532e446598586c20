//! What the HTTP transports share at run time: the queue of events for `recv`, and the set of
//! spawned tasks that closing or dropping a transport aborts.

use std::future::Future;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

// foldhash (randomly seeded) rather than SipHash: the keys are a counter of ours.
use foldhash::{HashMap, HashMapExt};
use tokio::sync::{mpsc, watch};
use tokio::task::AbortHandle;

use crate::{CloseReason, TransportEvent};

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// Events waiting for `recv`, and the transport's end.
pub(crate) struct EventQueue {
    tx: mpsc::Sender<TransportEvent>,
    rx: tokio::sync::Mutex<mpsc::Receiver<TransportEvent>>,
    end: watch::Sender<Option<End>>,
}

#[derive(Clone)]
struct End {
    reason: CloseReason,
    /// Closed by this side: queued events are dropped. Otherwise they are delivered first.
    local: bool,
}

impl EventQueue {
    pub(crate) fn new(capacity: usize) -> Self {
        let (tx, rx) = mpsc::channel(capacity);
        EventQueue { tx, rx: tokio::sync::Mutex::new(rx), end: watch::Sender::new(None) }
    }

    /// Queue an event; waits while the queue is full. Dropped once the transport has ended.
    pub(crate) async fn push(&self, event: TransportEvent) {
        if self.end.borrow().is_some() {
            return;
        }
        let mut end = self.end.subscribe();
        tokio::select! {
            _ = self.tx.send(event) => {}
            _ = end.wait_for(Option::is_some) => {}
        }
    }

    /// End the transport. The first reason given wins.
    pub(crate) fn end(&self, reason: CloseReason, local: bool) {
        self.end.send_if_modified(|e| {
            if e.is_none() {
                *e = Some(End { reason, local });
                true
            } else {
                false
            }
        });
    }

    /// Queue an event if there is room now: `None`, or the event back when the queue is full.
    /// Dropped once the transport has ended.
    pub(crate) fn try_push(&self, event: TransportEvent) -> Option<TransportEvent> {
        if self.end.borrow().is_some() {
            return None;
        }
        match self.tx.try_send(event) {
            Err(mpsc::error::TrySendError::Full(event)) => Some(event),
            // The receiver lives as long as the queue: never closed.
            Ok(()) | Err(mpsc::error::TrySendError::Closed(_)) => None,
        }
    }

    /// Resolves with the reason when the transport ends.
    pub(crate) async fn until_end(&self) -> CloseReason {
        let mut end = self.end.subscribe();
        match end.wait_for(Option::is_some).await {
            Ok(end) => end.as_ref().map_or(CloseReason::Closed, |e| e.reason.clone()),
            Err(_) => CloseReason::Closed,
        }
    }

    /// Why the transport ended, if it has.
    pub(crate) fn ended(&self) -> Option<CloseReason> {
        self.end.borrow().as_ref().map(|e| e.reason.clone())
    }

    /// The next event. Cancel-safe.
    pub(crate) async fn recv(&self) -> TransportEvent {
        let mut end = self.end.subscribe();
        let mut rx = self.rx.lock().await;
        loop {
            let ended = end.borrow_and_update().clone();
            match ended {
                Some(End { reason, local: true }) => return TransportEvent::Closed(reason),
                Some(End { reason, local: false }) => {
                    return rx.try_recv().unwrap_or(TransportEvent::Closed(reason));
                }
                None => {}
            }
            tokio::select! {
                biased;
                event = rx.recv() => {
                    // The sender lives as long as the queue, so `None` cannot happen.
                    return event.unwrap_or(TransportEvent::Closed(CloseReason::Closed));
                }
                changed = end.changed() => {
                    if changed.is_err() {
                        return TransportEvent::Closed(CloseReason::Closed);
                    }
                }
            }
        }
    }
}

/// A task of the transport, boxed.
pub(crate) type BoxedTask = std::pin::Pin<Box<dyn Future<Output = ()> + Send>>;

/// A task run by the future that awaits it, in its caller's task, rather than in a task of its
/// own: no spawn and no switch between tasks. Dropped before the task ends (its caller timed out
/// or was cancelled), it hands the task to the transport's [`TaskSet`], where it goes on (unless
/// the set was aborted: the transport is closing). So dropping the caller never cuts the task
/// short, as with a task spawned from the start.
pub(crate) struct Inline {
    task: Option<BoxedTask>,
    tasks: std::sync::Arc<TaskSet>,
}

impl Inline {
    pub(crate) fn new(task: BoxedTask, tasks: std::sync::Arc<TaskSet>) -> Self {
        Inline { task: Some(task), tasks }
    }

    /// Drop the task where it is, unfinished: the transport is closing.
    pub(crate) fn abandon(&mut self) {
        self.task = None;
    }
}

impl Future for Inline {
    type Output = ();

    fn poll(mut self: std::pin::Pin<&mut Self>, cx: &mut std::task::Context<'_>) -> std::task::Poll<()> {
        let Some(task) = self.task.as_mut() else { return std::task::Poll::Ready(()) };
        std::task::ready!(task.as_mut().poll(cx));
        self.task = None;
        std::task::Poll::Ready(())
    }
}

impl Drop for Inline {
    fn drop(&mut self) {
        // Outside a runtime (it is shutting down) no task can run it: it is dropped.
        if let Some(task) = self.task.take()
            && tokio::runtime::Handle::try_current().is_ok()
        {
            self.tasks.spawn_boxed(task);
        }
    }
}

/// Spawned tasks, aborted together.
pub(crate) struct TaskSet {
    next: AtomicU64,
    tasks: Mutex<Option<HashMap<u64, AbortHandle>>>,
}

impl TaskSet {
    pub(crate) fn new() -> Self {
        TaskSet { next: AtomicU64::new(0), tasks: Mutex::new(Some(HashMap::new())) }
    }

    /// Spawn `task`; it is forgotten when it ends. After [`TaskSet::abort_all`] nothing is
    /// spawned any more.
    pub(crate) fn spawn<F>(self: &std::sync::Arc<Self>, task: F)
    where
        F: Future<Output = ()> + Send + 'static,
    {
        // Boxed once here: an exchange's future runs to kilobytes, and the wrapper below and
        // tokio's task cell would otherwise each move (and the wrapper double) all of it.
        self.spawn_boxed(Box::pin(task));
    }

    /// [`TaskSet::spawn`] for a task boxed where it was made: a future of kilobytes that is
    /// boxed at once is moved once, not again on its way here.
    pub(crate) fn spawn_boxed(self: &std::sync::Arc<Self>, task: BoxedTask) {
        let key = self.next.fetch_add(1, Ordering::Relaxed);
        let mut tasks = lock(&self.tasks);
        let Some(map) = tasks.as_mut() else { return };
        let set = std::sync::Arc::downgrade(self);
        let handle = tokio::spawn(async move {
            task.await;
            if let Some(set) = set.upgrade()
                && let Some(map) = lock(&set.tasks).as_mut()
            {
                map.remove(&key);
            }
        });
        // The lock is held, so the task cannot remove its entry before it is inserted.
        map.insert(key, handle.abort_handle());
    }

    /// Abort every task, and refuse new ones.
    pub(crate) fn abort_all(&self) {
        let tasks = lock(&self.tasks).take();
        for (_, task) in tasks.into_iter().flatten() {
            task.abort();
        }
    }
}
