//! The deadline of a whole call: every round of a multi round-trip request, the host's answers
//! in between, URL elicitations and a task's polls share it. Progress moves it, never past the
//! hard cap.

use std::sync::Arc;
use std::time::Duration;

use tokio::time::Instant;

use super::ConnectionError;
use crate::session::{Deadline, SessionError};

/// The deadline of a whole call, all its rounds together: a request's [`Deadline`], shared with
/// the call's progress callback, which extends it.
#[derive(Clone)]
pub(crate) struct CallDeadline(Arc<std::sync::Mutex<Deadline>>);

impl CallDeadline {
    /// `timeout` from now, never past `max` from now.
    pub(crate) fn new(timeout: Duration, max: Duration) -> Self {
        CallDeadline(Arc::new(std::sync::Mutex::new(Deadline::new(Instant::now(), timeout, max))))
    }

    fn get(&self) -> Deadline {
        *self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// When the call times out.
    pub(crate) fn at(&self) -> Instant {
        self.get().at
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
        self.0.lock().unwrap_or_else(|p| p.into_inner()).extend(Instant::now());
    }

    /// How long the call has run.
    pub(crate) fn elapsed(&self) -> Duration {
        self.get().started.elapsed()
    }

    /// The error of a call whose deadline passed.
    pub(crate) fn timeout_error(&self, server: &str, method: &str) -> ConnectionError {
        SessionError::Timeout { server: Arc::from(server), method: method.to_owned(), after: self.elapsed() }.into()
    }
}
