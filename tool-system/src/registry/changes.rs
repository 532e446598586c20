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
