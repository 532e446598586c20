//! The map of requests waiting for their answer, and the session's one timer over their
//! deadlines.
//!
//! A request does not arm a timer of its own: its entry carries its deadline, and one task per
//! session ([`watch_deadlines`]) sleeps until the earliest deadline it knows of, fails what has
//! passed it, and sleeps again. A request sets that task's alarm only when its deadline comes
//! before the one set (the first request after a quiet spell, or one with a shorter timeout);
//! progress only moves deadlines later, which the task finds when it wakes. Requests that come
//! and go in less than their timeout, as most do, cost no timer at all: arming a timer and
//! clearing it again was about a thousand instructions a request (the timer wheel's insertion and
//! removal, and the runtime's look for the next expiration each time it parks).

use std::borrow::Cow;
use std::sync::{Arc, Mutex};
use std::time::Duration;

// foldhash (randomly seeded) rather than SipHash: every request inserts its id and every answer
// removes it, and the server chooses no key of this map (it can only name ids in answers).
use foldhash::HashMap;

use mcp_protocol::{RawJson, RequestId};
use mcp_transport::CloseReason;
use tokio::sync::{Notify, oneshot};
use tokio::time::Instant;

use super::{ProgressCallback, SessionError, Shared, cancel, deadline_after};

pub(crate) struct Pending {
    /// The method, for errors.
    pub(crate) method: Cow<'static, str>,
    pub(crate) tx: oneshot::Sender<Result<RawJson, SessionError>>,
    /// When the request times out; `None` for a request without a deadline.
    pub(crate) deadline: Option<Deadline>,
    /// The request's progress callback: only a request that asked for progress has one, and
    /// only its deadline is extended by progress.
    pub(crate) progress: Option<ProgressCallback>,
}

/// When a request (or a whole call, all its rounds: `connection::deadline`) times out, and
/// what progress may move that to.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Deadline {
    pub(crate) at: Instant,
    pub(crate) started: Instant,
    /// The request's timeout, counted again from each progress report.
    pub(crate) timeout: Duration,
    /// The cap no progress extends the deadline past.
    pub(crate) hard_stop: Instant,
}

impl Deadline {
    /// The deadline of a request started at `started` with `timeout` and the session's cap.
    pub(crate) fn new(started: Instant, timeout: Duration, max: Duration) -> Deadline {
        let hard_stop = deadline_after(started, max);
        Deadline { at: deadline_after(started, timeout).min(hard_stop), started, timeout, hard_stop }
    }

    /// Progress arrived at `now`: the deadline moves to a full timeout from then, never earlier
    /// and never past the cap.
    pub(crate) fn extend(&mut self, now: Instant) {
        self.at = self.at.max(deadline_after(now, self.timeout).min(self.hard_stop));
    }
}

#[derive(Default)]
pub(crate) struct PendingMap {
    inner: Mutex<Inner>,
    /// Wakes [`watch_deadlines`] when a request's deadline comes before its alarm.
    rearm: Notify,
}

#[derive(Default)]
struct Inner {
    map: HashMap<RequestId, Pending>,
    /// The deadline [`watch_deadlines`] sleeps until (`None`: it waits for a request).
    alarm: Option<Instant>,
}

impl PendingMap {
    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub(crate) fn insert(&self, id: RequestId, pending: Pending) {
        let earlier = {
            let mut inner = self.lock();
            let earlier = pending.deadline.map(|d| d.at).filter(|at| inner.alarm.is_none_or(|alarm| *at < alarm));
            if earlier.is_some() {
                inner.alarm = earlier;
            }
            inner.map.insert(id, pending);
            earlier.is_some()
        };
        if earlier {
            self.rearm.notify_one();
        }
    }

    pub(crate) fn remove(&self, id: &RequestId) -> Option<Pending> {
        self.lock().map.remove(id)
    }

    /// Progress for the request whose token is `id`: call its callback and extend its deadline
    /// (its timeout counted from now, never past its cap). Only a request that asked for
    /// progress has a token (its id); progress naming any other request changes nothing.
    /// Returns whether a request with this token is pending.
    pub(crate) fn progress(&self, id: &RequestId, params: mcp_protocol::types::progress::ProgressParams) -> bool {
        let callback = {
            let mut inner = self.lock();
            let Some(p) = inner.map.get_mut(id) else { return false };
            let Some(callback) = &p.progress else { return false };
            if let Some(d) = &mut p.deadline {
                d.extend(Instant::now());
            }
            callback.clone()
        };
        // The host's function: a panic in it loses this report, not the session's reader.
        if std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| callback(params))).is_err() {
            tracing::warn!(request = %id, "a progress callback panicked; the report was dropped");
        }
        true
    }

    /// Fail every pending request with the transport's end.
    pub(crate) fn fail_all(&self, server: &Arc<str>, reason: &CloseReason) {
        let drained: Vec<Pending> = self.lock().map.drain().map(|(_, p)| p).collect();
        for p in drained {
            let _ = p.tx.send(Err(SessionError::Closed { server: server.clone(), reason: reason.clone() }));
        }
    }

    /// Set the alarm to the earliest deadline pending, and return it.
    fn arm(&self) -> Option<Instant> {
        let mut inner = self.lock();
        inner.alarm = inner.map.values().filter_map(|p| p.deadline.map(|d| d.at)).min();
        inner.alarm
    }

    /// Take out the requests whose deadline is `now` or before.
    fn expired(&self, now: Instant) -> Vec<(RequestId, Pending)> {
        self.lock().map.extract_if(|_, p| p.deadline.is_some_and(|d| d.at <= now)).collect()
    }
}

/// The session's one timer: sleeps until the earliest deadline of the requests waiting for their
/// answer, fails each request whose deadline has passed with [`SessionError::Timeout`] and
/// cancels it, and sleeps again. Runs as long as the session; stopped with its reader.
pub(super) async fn watch_deadlines(shared: Arc<Shared>) {
    loop {
        let Some(alarm) = shared.pending.arm() else {
            shared.pending.rearm.notified().await;
            continue;
        };
        tokio::select! {
            () = tokio::time::sleep_until(alarm) => {}
            () = shared.pending.rearm.notified() => continue,
        }
        for (id, pending) in shared.pending.expired(Instant::now()) {
            let after = pending.deadline.map(|d| d.started.elapsed()).unwrap_or_default();
            let error =
                SessionError::Timeout { server: shared.name.clone(), method: pending.method.into_owned(), after };
            // The caller may have gone meanwhile: then no one hears of it.
            let _ = pending.tx.send(Err(error));
            cancel(shared.clone(), id, "request timed out");
        }
    }
}
