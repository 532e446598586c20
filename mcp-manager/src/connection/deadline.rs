//! The deadline of a whole call: every round of a multi round-trip request, the host's answers
//! in between, URL elicitations and a task's polls share it. Progress moves it, never past the
//! hard cap.

use std::sync::Arc;
use std::time::Duration;

use tokio::time::Instant;

use super::ConnectionError;
use crate::session::{SessionError, deadline_after};

/// The deadline of a whole call, all its rounds together.
#[derive(Clone)]
pub(crate) struct CallDeadline(Arc<DeadlineState>);

struct DeadlineState {
    started: Instant,
    timeout: Duration,
    hard_stop: Instant,
    at: std::sync::Mutex<Instant>,
}

impl CallDeadline {
    /// `timeout` from now, never past `max` from now.
    pub(crate) fn new(timeout: Duration, max: Duration) -> Self {
        let started = Instant::now();
        let hard_stop = deadline_after(started, max);
        let at = deadline_after(started, timeout).min(hard_stop);
        CallDeadline(Arc::new(DeadlineState { started, timeout, hard_stop, at: std::sync::Mutex::new(at) }))
    }

    /// When the call times out.
    pub(crate) fn at(&self) -> Instant {
        *self.0.at.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The time left, zero once the deadline has passed.
    pub(crate) fn remaining_or_zero(&self) -> Duration {
        self.remaining().unwrap_or_default()
    }

    /// The time left, `None` once the deadline has passed.
    pub(crate) fn remaining(&self) -> Option<Duration> {
        let left = self.at().saturating_duration_since(Instant::now());
        (!left.is_zero()).then_some(left)
    }

    /// Progress arrived: the deadline moves to a full timeout from now (never earlier, never
    /// past the hard cap).
    pub(crate) fn extend(&self) {
        let later = deadline_after(Instant::now(), self.0.timeout).min(self.0.hard_stop);
        let mut at = self.0.at.lock().unwrap_or_else(|p| p.into_inner());
        *at = (*at).max(later);
    }

    /// How long the call has run.
    pub(crate) fn elapsed(&self) -> Duration {
        self.0.started.elapsed()
    }

    /// The error of a call whose deadline passed.
    pub(crate) fn timeout_error(&self, server: &str, method: &str) -> ConnectionError {
        SessionError::Timeout { server: Arc::from(server), method: method.to_owned(), after: self.elapsed() }.into()
    }
}
