//! The map of requests waiting for their answer.

use std::sync::{Arc, Mutex};

// foldhash (randomly seeded) rather than SipHash: every request inserts its id and every answer
// removes it, and the server chooses no key of this map (it can only name ids in answers).
use foldhash::HashMap;

use mcp_protocol::{RawJson, RequestId};
use mcp_transport::CloseReason;
use tokio::sync::{Notify, oneshot};

use super::{ProgressCallback, SessionError};

pub(crate) struct Pending {
    pub(crate) method: String,
    pub(crate) tx: oneshot::Sender<Result<RawJson, SessionError>>,
    /// The request's progress callback, and what wakes its wait to extend its deadline: only a
    /// request that asked for progress has them.
    pub(crate) progress: Option<(ProgressCallback, Arc<Notify>)>,
}

#[derive(Default)]
pub(crate) struct PendingMap {
    map: Mutex<HashMap<RequestId, Pending>>,
}

impl PendingMap {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<RequestId, Pending>> {
        self.map.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub(crate) fn insert(&self, id: RequestId, pending: Pending) {
        self.lock().insert(id, pending);
    }

    pub(crate) fn remove(&self, id: &RequestId) -> Option<Pending> {
        self.lock().remove(id)
    }

    /// Progress for the request whose token is `id`: call its callback and extend its deadline.
    /// Only a request that asked for progress has a token (its id); progress naming any other
    /// request changes nothing. Returns whether a request with this token is pending.
    pub(crate) fn progress(&self, id: &RequestId, params: mcp_protocol::types::progress::ProgressParams) -> bool {
        let callback = {
            let map = self.lock();
            let Some(p) = map.get(id) else { return false };
            let Some((callback, bump)) = &p.progress else { return false };
            bump.notify_one();
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
        let drained: Vec<Pending> = self.lock().drain().map(|(_, p)| p).collect();
        for p in drained {
            let _ = p.tx.send(Err(SessionError::Closed { server: server.clone(), reason: reason.clone() }));
        }
    }
}
