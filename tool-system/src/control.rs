//! What a host controls per call, beside who the call is for: a deadline, a sink for progress
//! and a cancellation token ([`CallControl`], carried in
//! [`ToolExecutionContext::control`](crate::ToolExecutionContext::control)).
//!
//! The [`ToolRegistry`](crate::ToolRegistry) enforces the deadline and the token for every
//! provider: a call whose token is cancelled, or whose deadline passes, resolves at once with a
//! failed result ([`ToolExecutionResult::is_cancelled`](crate::ToolExecutionResult::is_cancelled),
//! [`is_timed_out`](crate::ToolExecutionResult::is_timed_out)), and the provider's future is
//! dropped, which is how a provider learns of it (the MCP provider then sends the protocol's
//! cancellation). Providers that can do better read the same values: the MCP provider gives the
//! server the time that remains and forwards its progress notifications to the sink.

use std::fmt;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Map, Value};

pub use tokio_util::sync::CancellationToken;

/// One progress report of a running call: how far it is, what it is doing, or both.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ToolProgress {
    /// How far the call is (increases with each report; units are the provider's); `None` for
    /// a report of status only.
    pub progress: Option<f64>,
    /// The total, when known.
    pub total: Option<f64>,
    /// What the call is doing now, if the provider says.
    pub message: Option<String>,
    /// What else the provider says about the call (the MCP provider: `task_id` and
    /// `task_status` of a call that runs as a task, so a host can cancel or resume it later).
    pub metadata: Map<String, Value>,
}

impl ToolProgress {
    /// A report of `progress` out of `total`, with no message.
    pub fn new(progress: f64, total: Option<f64>) -> Self {
        Self { progress: Some(progress), total, ..Self::default() }
    }

    /// A report of status only: what the call is doing now.
    pub fn status(message: impl Into<String>) -> Self {
        Self { message: Some(message.into()), ..Self::default() }
    }

    /// Sets the message.
    pub fn with_message(mut self, message: impl Into<String>) -> Self {
        self.message = Some(message.into());
        self
    }

    /// Adds one metadata entry.
    pub fn with_metadata(mut self, key: impl Into<String>, value: Value) -> Self {
        self.metadata.insert(key.into(), value);
        self
    }
}

/// Where a call's progress reports go: a function the host gives, called on the provider's
/// task for each report (keep it quick; a panic in it is caught and logged).
#[derive(Clone)]
pub struct ProgressSink(Arc<dyn Fn(ToolProgress) + Send + Sync>);

impl ProgressSink {
    /// A sink that calls `report` with each report.
    pub fn new(report: impl Fn(ToolProgress) + Send + Sync + 'static) -> Self {
        Self(Arc::new(report))
    }

    /// Hands `progress` to the host's function; a panic in it is caught and logged, never
    /// passed on to the call.
    pub fn report(&self, progress: ToolProgress) {
        let report = &self.0;
        if std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| report(progress))).is_err() {
            tracing::warn!("a progress sink panicked; the report was dropped");
        }
    }
}

impl fmt::Debug for ProgressSink {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ProgressSink")
    }
}

/// The host's control over one call. The default has no deadline, no sink and a token that is
/// never cancelled (unless the host keeps a clone and cancels it).
#[derive(Debug, Clone, Default)]
pub struct CallControl {
    /// When the call must have finished. Progress does not move it.
    pub deadline: Option<Instant>,
    /// Where progress reports go.
    pub progress: Option<ProgressSink>,
    /// Cancelling it ends the call at once.
    pub cancellation: CancellationToken,
}

impl CallControl {
    /// The time left before the deadline (zero once it passed); `None` without a deadline.
    pub fn remaining(&self) -> Option<Duration> {
        self.deadline.map(|deadline| deadline.saturating_duration_since(Instant::now()))
    }

    /// Whether the host cancelled the call.
    pub fn is_cancelled(&self) -> bool {
        self.cancellation.is_cancelled()
    }

    /// Reports progress to the host's sink, if it gave one.
    pub fn report(&self, progress: ToolProgress) {
        if let Some(sink) = &self.progress {
            sink.report(progress);
        }
    }
}
