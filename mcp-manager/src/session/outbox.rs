//! Bounded background sends: the replies to the server's requests (ping, error replies,
//! refusals, handler results) and `notifications/cancelled`.
//!
//! The session never waits for these sends, so a server that stops reading must not make them
//! pile up: at most [`MAX_SENDS_IN_FLIGHT`] run at once (beyond it a message is dropped, with a
//! warning naming its method), each under a timeout, and all of them stop when the session closes
//! or is dropped. A send holds only the transport, never a lock of the session or the connection,
//! and never the session itself: dropping the last session clone releases the transport even
//! while sends are stuck.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_protocol::Message;
use mcp_transport::Transport;
use tokio::task::JoinHandle;

/// Most background sends of one session in flight at once.
pub(crate) const MAX_SENDS_IN_FLIGHT: usize = 64;

/// How long the background send of a reply may take.
pub(crate) const REPLY_SEND_TIMEOUT: Duration = Duration::from_secs(30);

/// How long [`Outbox::close`] lets the sends in flight finish before it stops them.
const FLUSH_WAIT: Duration = Duration::from_millis(200);

/// How long [`Outbox::close`] waits for the stopped sends to be dropped.
const STOP_WAIT: Duration = Duration::from_secs(1);

#[derive(Default)]
struct State {
    tasks: HashMap<u64, JoinHandle<()>>,
    next: u64,
    closed: bool,
}

pub(crate) struct Outbox {
    name: Arc<str>,
    transport: Arc<dyn Transport>,
    state: Arc<Mutex<State>>,
    dropped: AtomicU64,
}

fn lock(state: &Mutex<State>) -> std::sync::MutexGuard<'_, State> {
    state.lock().unwrap_or_else(|p| p.into_inner())
}

impl Outbox {
    pub(crate) fn new(name: Arc<str>, transport: Arc<dyn Transport>) -> Self {
        Outbox { name, transport, state: Arc::default(), dropped: AtomicU64::new(0) }
    }

    /// Send `message` in the background, for at most `timeout`; `method` names it in logs.
    /// Returns whether it was taken: not when [`MAX_SENDS_IN_FLIGHT`] sends are in flight (the
    /// message is dropped with a warning), after [`Outbox::close`], or outside a runtime.
    /// Never blocks.
    pub(crate) fn send(&self, method: &str, message: Message, timeout: Duration) -> bool {
        if tokio::runtime::Handle::try_current().is_err() {
            return false;
        }
        let mut state = lock(&self.state);
        if state.closed {
            return false;
        }
        if state.tasks.len() >= MAX_SENDS_IN_FLIGHT {
            drop(state);
            let dropped = self.dropped.fetch_add(1, Ordering::Relaxed) + 1;
            // A flood would flood the log too: warn on the 1st, 2nd, 4th, 8th... drop.
            if dropped.is_power_of_two() {
                tracing::warn!(
                    server = %self.name,
                    method,
                    dropped,
                    limit = MAX_SENDS_IN_FLIGHT,
                    "too many messages to the server are still being sent (is it reading?); dropped a {method} message"
                );
            }
            return false;
        }
        let key = state.next;
        state.next += 1;
        let (transport, tasks, name, method) =
            (self.transport.clone(), self.state.clone(), self.name.clone(), method.to_owned());
        // Spawned under the lock: the task removes itself under it, so never before it is in.
        let task = tokio::spawn(async move {
            match tokio::time::timeout(timeout, transport.send(message)).await {
                Ok(Ok(())) => {}
                Ok(Err(error)) => tracing::debug!(server = %name, method, %error, "could not send a message"),
                Err(_) => tracing::warn!(
                    server = %name,
                    method,
                    "sending a {method} message did not finish within {timeout:?}; dropped it"
                ),
            }
            lock(&tasks).tasks.remove(&key);
        });
        state.tasks.insert(key, task);
        true
    }

    /// Take no more sends, give those in flight [`FLUSH_WAIT`] to finish (a
    /// `notifications/cancelled` for a request dropped just before the close should reach the
    /// server), then stop the rest. Returns once the stopped sends are dropped (so a transport
    /// that waits for them can close), waiting at most a short bound.
    pub(crate) async fn close(&self) {
        let mut tasks: Vec<JoinHandle<()>> = {
            let mut state = lock(&self.state);
            state.closed = true;
            state.tasks.drain().map(|(_, task)| task).collect()
        };
        if !tasks.is_empty() {
            let flush = async {
                for task in tasks.iter_mut() {
                    let _ = task.await;
                }
            };
            let _ = tokio::time::timeout(FLUSH_WAIT, flush).await;
            // A finished handle must not be polled again.
            tasks.retain(|task| !task.is_finished());
        }
        for task in &tasks {
            task.abort();
        }
        let _ = tokio::time::timeout(STOP_WAIT, futures::future::join_all(tasks)).await;
    }
}

impl Drop for Outbox {
    fn drop(&mut self) {
        for (_, task) in lock(&self.state).tasks.drain() {
            task.abort();
        }
    }
}

#[cfg(test)]
mod tests {
    use mcp_transport::{MemoryTransport, TransportEvent};

    use super::*;

    fn note(method: &str) -> Message {
        Message::notification::<()>(method, None).expect("a notification encodes")
    }

    /// A send taken just before the close (here: not even started yet, on a current-thread
    /// runtime) still reaches the peer: the close lets it finish instead of stopping it.
    #[tokio::test]
    async fn a_send_taken_just_before_the_close_is_delivered() {
        let (ours, theirs) = MemoryTransport::pair();
        let outbox = Outbox::new("s".into(), Arc::new(ours));
        assert!(outbox.send("notifications/cancelled", note("notifications/cancelled"), Duration::from_secs(5)));
        tokio::time::timeout(Duration::from_secs(10), outbox.close()).await.expect("close returns");
        assert!(!outbox.send("notifications/late", note("notifications/late"), Duration::from_secs(5)), "closed");
        let event = tokio::time::timeout(Duration::from_secs(10), theirs.recv()).await.expect("the peer hears it");
        match event {
            TransportEvent::Message(message) => {
                assert!(format!("{message:?}").contains("notifications/cancelled"), "{message:?}")
            }
            other => panic!("expected the notification, got {other:?}"),
        }
    }
}
