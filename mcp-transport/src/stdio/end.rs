//! Why the transport ended, decided once and awaited by whoever needs it.

use std::time::Duration;

use tokio::sync::watch;

use crate::CloseReason;

/// The transport's end: unset while it runs, then the first reason set, for good.
#[derive(Clone)]
pub(crate) struct End(watch::Sender<Option<CloseReason>>);

impl End {
    pub(crate) fn new() -> End {
        End(watch::channel(None).0)
    }

    /// Set the reason unless one is set already; returns the reason in force.
    pub(crate) fn set(&self, reason: CloseReason) -> CloseReason {
        self.0.send_if_modified(|current| {
            if current.is_some() {
                return false;
            }
            *current = Some(reason);
            true
        });
        self.get().unwrap_or(CloseReason::Closed)
    }

    /// The reason, once the transport has ended.
    pub(crate) fn get(&self) -> Option<CloseReason> {
        self.0.borrow().clone()
    }

    /// The reason, waiting for it at most `limit`.
    pub(crate) async fn wait(&self, limit: Duration) -> Option<CloseReason> {
        let mut rx = self.0.subscribe();
        let _ = tokio::time::timeout(limit, rx.wait_for(Option::is_some)).await;
        self.get()
    }
}
