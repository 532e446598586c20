//! The registry's change signal: [`RegistryChanges`] wakes a host when the tool list may have
//! changed, so it relists (and re-sends the LLM its tools) without polling.

use std::sync::Arc;

use tokio::sync::watch;

use crate::ToolProvider;

use tokio::sync::watch::error::RecvError;

/// The providers' own change signals, replaced whenever the providers change.
type Watches = Arc<[watch::Receiver<u64>]>;

/// What the registry keeps: the current providers' signals, sent to every subscriber.
pub(crate) struct Signal(watch::Sender<Watches>);

impl Signal {
    pub(crate) fn new() -> Self {
        Signal(watch::Sender::new(Arc::from(Vec::new())))
    }

    /// The providers are now `providers`: subscribers wake, and watch their signals from now on.
    pub(crate) fn providers_changed(&self, providers: &[Arc<dyn ToolProvider>]) {
        let watches: Vec<_> = providers.iter().filter_map(|p| p.revision_changes()).collect();
        self.0.send_replace(Arc::from(watches));
    }

    /// Wake the subscribers.
    pub(crate) fn bump(&self) {
        self.0.send_modify(|_| {});
    }

    pub(crate) fn subscribe(&self) -> RegistryChanges {
        let mut changes = RegistryChanges { registry: self.0.subscribe(), providers: Vec::new() };
        changes.follow_providers();
        changes
    }
}

/// Wakes when the registry's tool list may have changed: a provider was registered, replaced
/// or unregistered, the registry was closed or [invalidated](super::ToolRegistry::invalidate),
/// or a provider reported a change of its own
/// ([`ToolProvider::revision_changes`]; the MCP provider does, whenever a server connects, is
/// lost or changes its lists). From [`ToolRegistry::subscribe_changes`](super::ToolRegistry::subscribe_changes).
///
/// Changes are coalesced: one wake-up may stand for several. A host relists
/// ([`ToolRegistry::llm_definitions`](super::ToolRegistry::llm_definitions)) after each.
pub struct RegistryChanges {
    registry: watch::Receiver<Watches>,
    providers: Vec<watch::Receiver<u64>>,
}

impl std::fmt::Debug for RegistryChanges {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RegistryChanges").field("providers_watched", &self.providers.len()).finish()
    }
}

/// Which signal woke [`RegistryChanges::changed`].
enum Woken {
    Registry(Result<(), RecvError>),
    Provider(usize, Result<(), RecvError>),
}

impl RegistryChanges {
    /// Watch the current providers' signals, as of now.
    fn follow_providers(&mut self) {
        self.providers = self.registry.borrow_and_update().iter().cloned().collect();
        for provider in &mut self.providers {
            provider.borrow_and_update();
        }
    }

    /// Waits for the next change since the last call (or since subscribing). `Err` once the
    /// registry is gone. Cancel-safe.
    pub async fn changed(&mut self) -> Result<(), RecvError> {
        loop {
            let registry = &mut self.registry;
            let woken = if self.providers.is_empty() {
                Woken::Registry(registry.changed().await)
            } else {
                let providers = futures::future::select_all(self.providers.iter_mut().map(|p| Box::pin(p.changed())));
                tokio::select! {
                    changed = registry.changed() => Woken::Registry(changed),
                    (changed, index, _) = providers => Woken::Provider(index, changed),
                }
            };
            match woken {
                Woken::Registry(changed) => {
                    changed?;
                    self.follow_providers();
                    return Ok(());
                }
                Woken::Provider(_, Ok(())) => return Ok(()),
                // That provider can no longer change (its source is gone): stop watching it.
                Woken::Provider(index, Err(_)) => {
                    self.providers.swap_remove(index);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use futures::future::BoxFuture;

    use super::*;
    use crate::{ToolError, ToolExecutionContext, ToolExecutionResult, ToolInvocation, ToolRegistry, ToolSpec};

    /// A provider whose list changes when the test's sender says so.
    struct Changing(&'static str, watch::Receiver<u64>);

    impl ToolProvider for Changing {
        fn name(&self) -> &str {
            self.0
        }

        fn provider_type(&self) -> &str {
            "test"
        }

        fn list_tools(&self, _ctx: &ToolExecutionContext) -> BoxFuture<'_, Result<Vec<Arc<ToolSpec>>, ToolError>> {
            Box::pin(async { Ok(Vec::new()) })
        }

        fn invoke(&self, _: ToolInvocation, _: ToolExecutionContext) -> BoxFuture<'_, ToolExecutionResult> {
            Box::pin(async { ToolExecutionResult::failed("no tools") })
        }

        fn revision(&self) -> u64 {
            *self.1.borrow()
        }

        fn revision_changes(&self) -> Option<watch::Receiver<u64>> {
            Some(self.1.clone())
        }
    }

    /// Whether `changes` wakes within a moment (long enough for a wake-up that is due; a
    /// wake-up that is not due never comes, so the test does not depend on the bound).
    async fn wakes(changes: &mut RegistryChanges) -> bool {
        tokio::time::timeout(Duration::from_millis(200), changes.changed()).await.is_ok()
    }

    /// Every test under one bound, so a wake-up that never comes fails it instead of hanging.
    async fn within<F: std::future::Future>(test: F) -> F::Output {
        tokio::time::timeout(Duration::from_secs(20), test).await.expect("test timed out")
    }

    #[tokio::test]
    async fn wakes_on_registration_provider_changes_invalidation_and_close_only() {
        within(wakes_on_changes()).await;
    }

    async fn wakes_on_changes() {
        let registry = ToolRegistry::new();
        let mut changes = registry.subscribe_changes();
        assert!(!wakes(&mut changes).await, "nothing happened yet");

        let (tx_again, rx) = watch::channel(0);
        registry.register(Changing("live", rx)).await;
        assert!(wakes(&mut changes).await, "a provider was registered");
        assert!(!wakes(&mut changes).await, "one wake-up per change");

        tx_again.send_replace(1);
        assert!(wakes(&mut changes).await, "the provider's list changed");
        tx_again.send_replace(2);
        tx_again.send_replace(3);
        assert!(wakes(&mut changes).await, "changes coalesce");
        assert!(!wakes(&mut changes).await);

        registry.invalidate();
        assert!(wakes(&mut changes).await, "invalidated");
        registry.close().await;
        assert!(wakes(&mut changes).await, "closed");
        tx_again.send_replace(4);
        assert!(!wakes(&mut changes).await, "a provider no longer registered is not watched");
    }

    #[tokio::test]
    async fn a_provider_whose_signal_is_gone_is_dropped_not_spun_on_and_a_gone_registry_ends_it() {
        within(gone_signals()).await;
    }

    async fn gone_signals() {
        let registry = ToolRegistry::new();
        let (gone, rx) = watch::channel(0);
        registry.register(Changing("gone", rx)).await;
        let (live, rx) = watch::channel(0);
        registry.register(Changing("live", rx)).await;
        let mut changes = registry.subscribe_changes();
        drop(gone);
        assert!(!wakes(&mut changes).await, "a signal that ends is not a change");
        live.send_replace(1);
        assert!(wakes(&mut changes).await, "the other provider is still watched");
        drop(registry);
        assert!(changes.changed().await.is_err(), "the registry is gone");
    }
}
