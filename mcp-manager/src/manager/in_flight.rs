//! [`InFlight`]: the calls in flight on one server, and the stop that waits for them.
//!
//! Every call enters, which is one atomic update when no drain is under way (a tokio `RwLock`
//! read, which it replaces, also took and released a waiter queue's lock on every call); a
//! drain stops new calls from entering and waits until those in flight have left. Calls that
//! come while a drain is under way wait for its end, as they waited for a write lock.

use std::pin::pin;
use std::sync::atomic::{AtomicUsize, Ordering};

use tokio::sync::Notify;

/// Set in [`InFlight::state`] while a drain is under way; the other bits count the calls.
const DRAINING: usize = 1 << (usize::BITS - 1);

/// The calls in flight on one server (see the module's documentation).
#[derive(Debug, Default)]
pub(crate) struct InFlight {
    /// How many calls are in flight, with [`DRAINING`] set during a drain.
    state: AtomicUsize,
    /// Woken when the last call leaves during a drain, and when a drain ends.
    changed: Notify,
    /// One drain at a time.
    drains: tokio::sync::Mutex<()>,
}

/// A call in flight: it leaves when this is dropped.
#[must_use = "the call leaves when the guard is dropped"]
pub(crate) struct Call<'a>(&'a InFlight);

/// A drain under way: calls enter again when this is dropped.
#[must_use = "the drain ends when the guard is dropped"]
pub(crate) struct Drain<'a> {
    gate: &'a InFlight,
    _exclusive: tokio::sync::MutexGuard<'a, ()>,
}

impl InFlight {
    /// Enter as a call: at once, unless a drain is under way (then once it has ended).
    pub(crate) async fn enter(&self) -> Call<'_> {
        loop {
            let mut now = self.state.load(Ordering::Acquire);
            while now & DRAINING == 0 {
                match self.state.compare_exchange_weak(now, now + 1, Ordering::AcqRel, Ordering::Acquire) {
                    Ok(_) => return Call(self),
                    Err(actual) => now = actual,
                }
            }
            // Registered before the drain is looked at again, so that its end is not missed.
            let mut changed = pin!(self.changed.notified());
            changed.as_mut().enable();
            if self.state.load(Ordering::Acquire) & DRAINING != 0 {
                changed.await;
            }
        }
    }

    /// Stop calls from entering and wait until every call in flight has left.
    pub(crate) async fn drain(&self) -> Drain<'_> {
        let exclusive = self.drains.lock().await;
        self.state.fetch_or(DRAINING, Ordering::AcqRel);
        loop {
            let mut changed = pin!(self.changed.notified());
            changed.as_mut().enable();
            if self.state.load(Ordering::Acquire) == DRAINING {
                return Drain { gate: self, _exclusive: exclusive };
            }
            changed.await;
        }
    }
}

impl Drop for Call<'_> {
    fn drop(&mut self) {
        // The last call to leave during a drain wakes the drain.
        if self.0.state.fetch_sub(1, Ordering::AcqRel) == DRAINING | 1 {
            self.0.changed.notify_waiters();
        }
    }
}

impl Drop for Drain<'_> {
    fn drop(&mut self) {
        self.gate.state.fetch_and(!DRAINING, Ordering::AcqRel);
        self.gate.changed.notify_waiters();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::time::Duration;

    use futures::FutureExt;
    use tokio::task::JoinHandle;

    /// Runs `test` under a limit, so that a gate that never opens fails instead of hanging.
    async fn within(test: impl Future<Output = ()>) {
        tokio::time::timeout(Duration::from_secs(10), test).await.expect("the test hung");
    }

    /// Spawns `wait` on the test's runtime and checks that it is still waiting once it has had
    /// its turn (the runtime runs it while the test sleeps); its handle.
    async fn still_waiting(wait: impl Future<Output = ()> + Send + 'static, what: &str) -> JoinHandle<()> {
        let waiting = tokio::spawn(wait);
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert!(!waiting.is_finished(), "{what}");
        waiting
    }

    #[tokio::test]
    async fn calls_enter_together_and_a_drain_waits_until_the_last_has_left() {
        within(async {
            let gate = InFlight::default();
            let (first, second) = (gate.enter().await, gate.enter().await);
            let mut drain = pin!(gate.drain());
            assert!(drain.as_mut().now_or_never().is_none(), "two calls are in flight");
            drop(first);
            assert!(drain.as_mut().now_or_never().is_none(), "one call is still in flight");
            drop(second);
            let drained = drain.await;
            drop(drained);
            // The gate is open again, and counts from zero.
            let again = gate.enter().now_or_never().expect("calls enter once the drain has ended");
            drop(again);
            assert_eq!(gate.state.load(Ordering::Acquire), 0);
        })
        .await;
    }

    #[tokio::test]
    async fn a_call_that_comes_during_a_drain_waits_for_its_end() {
        within(async {
            let gate = Arc::new(InFlight::default());
            let drained = gate.drain().now_or_never().expect("nothing is in flight");
            let entering = gate.clone();
            let late =
                still_waiting(async move { drop(entering.enter().await) }, "a call entered during a drain").await;
            drop(drained);
            late.await.expect("the call entered once the drain ended");
            assert_eq!(gate.state.load(Ordering::Acquire), 0);
        })
        .await;
    }

    #[tokio::test]
    async fn drains_take_turns() {
        within(async {
            let gate = Arc::new(InFlight::default());
            let first = gate.drain().await;
            let draining = gate.clone();
            let second = still_waiting(async move { drop(draining.drain().await) }, "two drains at once").await;
            drop(first);
            second.await.expect("the second drain ran once the first ended");
            drop(gate.enter().now_or_never().expect("calls enter after both drains"));
        })
        .await;
    }
}
