//! Requests in flight whose cancellation closes their HTTP exchange: in the modern era
//! (2026-07-28) "HTTP closes the response stream" instead of sending `notifications/cancelled`.
//! Cancelling one aborts its exchange, which drops the POST or its response body, and so closes
//! the connection that carried it.
//!
//! An entry lives exactly as long as its exchange: the map holds at most one per request in
//! flight.

use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

// foldhash (randomly seeded) rather than SipHash: the ids are this client's own requests'.
use foldhash::HashMap;
use futures::future::{AbortHandle, Abortable};
use mcp_protocol::RequestId;

use super::lock;
use super::runtime::BoxedTask;

/// The cancellable exchanges, by request id.
#[derive(Default)]
pub(crate) struct InFlight {
    next: AtomicU64,
    /// The key tells an entry apart from a later one under the same id.
    map: Mutex<HashMap<RequestId, (u64, AbortHandle)>>,
}

impl InFlight {
    /// Track the exchange of request `id` until it ends: run the returned future in its place.
    /// The entry goes when that future ends or is dropped (never polled, or its task aborted).
    /// The exchange comes boxed: the async block would otherwise hold it twice (captured and
    /// awaited).
    pub(crate) fn track(self: &Arc<Self>, id: RequestId, exchange: BoxedTask) -> impl Future<Output = ()> + use<> {
        let (handle, registration) = AbortHandle::new_pair();
        let key = self.next.fetch_add(1, Ordering::Relaxed);
        lock(&self.map).insert(id.clone(), (key, handle));
        let entry = Entry { set: self.clone(), id, key };
        async move {
            let _entry = entry;
            // Aborted: the exchange is dropped here, with whatever connection it holds.
            let _ = Abortable::new(exchange, registration).await;
        }
    }

    /// Abort the exchange of request `id`; false when none is in flight.
    pub(crate) fn cancel(&self, id: &RequestId) -> bool {
        let Some((_, handle)) = lock(&self.map).remove(id) else { return false };
        handle.abort();
        true
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        lock(&self.map).len()
    }
}

/// Removes its exchange's entry when dropped.
struct Entry {
    set: Arc<InFlight>,
    id: RequestId,
    key: u64,
}

impl Drop for Entry {
    fn drop(&mut self) {
        let mut map = lock(&self.set.map);
        if map.get(&self.id).is_some_and(|(key, _)| *key == self.key) {
            map.remove(&self.id);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn entries_live_as_long_as_their_exchange() {
        let set = Arc::new(InFlight::default());
        let id = RequestId::Number(1);
        set.track(id.clone(), Box::pin(async {})).await;
        assert_eq!(set.len(), 0, "an ended exchange is forgotten");
        drop(set.track(id.clone(), Box::pin(async {})));
        assert_eq!(set.len(), 0, "a dropped exchange is forgotten");
        assert!(!set.cancel(&id));

        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        let task = tokio::spawn(set.track(
            id.clone(),
            Box::pin(async move {
                let _tx = tx;
                futures::future::pending::<()>().await;
            }),
        ));
        assert_eq!(set.len(), 1);
        assert!(set.cancel(&id));
        assert!(rx.await.is_err(), "the aborted exchange was dropped");
        task.await.unwrap();
        assert_eq!(set.len(), 0);
        assert!(!set.cancel(&id));
    }

    #[tokio::test]
    async fn a_later_exchange_under_the_same_id_keeps_its_entry() {
        let set = Arc::new(InFlight::default());
        let id = RequestId::Number(7);
        let first = set.track(id.clone(), Box::pin(async {}));
        let second = set.track(id.clone(), Box::pin(futures::future::pending()));
        first.await;
        assert_eq!(set.len(), 1);
        assert!(set.cancel(&id));
        second.await;
        assert_eq!(set.len(), 0);
    }
}
