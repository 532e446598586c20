//! Keeping a connection's lists fresh, in both eras.
//!
//! The session's notification handler tells the connection about list changes: in the legacy era
//! every `notifications/*/list_changed` counts; in the modern era only those whose `_meta`
//! names the connection's open `subscriptions/listen` request. A change marks its list dirty and
//! wakes the refresher task, which waits a short debounce (a burst causes one refresh), and at
//! least [`FreshnessOptions::min_refresh_interval`] after the previous refresh began (a server
//! that never stops announcing changes is re-listed at most that often), and re-lists the
//! cached lists that were marked: only those, not the lists past their `ttlMs` (a `ttlMs` of 0
//! means "ask again when someone looks"). A list past its `ttlMs`, and a list never fetched,
//! are left for the next [`McpConnection::inventory`](super::McpConnection::inventory) call, so
//! that a connection nobody asked for lists never lists anything by itself.
//!
//! In the modern era a second task keeps `subscriptions/listen` open for the list changes the
//! server's capabilities offer. The server ending it with a result is final. An abrupt end (an
//! error, a transport failure of the request) re-opens it after a capped exponential backoff,
//! a bounded number of times in a row; an acknowledged listen resets the count, and after a
//! re-opened listen is acknowledged the lists it covers are re-listed (changes may have been
//! missed in between). The connection's end stops both tasks.

mod inventory;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU64, Ordering};
use std::time::Duration;

use mcp_protocol::ErrorCode;
use mcp_protocol::messages::ServerNotification;
use mcp_protocol::types::common::NotificationParams;
use mcp_protocol::types::lifecycle::ServerCapabilities;
use mcp_protocol::types::subscriptions::{
    SubscriptionFilter, SubscriptionsAcknowledgedParams, SubscriptionsListen, SubscriptionsListenParams,
};
use mcp_protocol::{RequestId, types::meta::Meta};
use tokio::sync::{Mutex, Notify, watch};

use self::inventory::{Cache, ReadCache};
use super::discovery::{Inventory, Lister};
use crate::session::SessionError;

/// How a connection keeps its lists fresh.
#[derive(Debug, Clone)]
pub struct FreshnessOptions {
    /// How long a refresh waits after the first list_changed notification, so that a burst of
    /// them causes one refresh (default 100 ms).
    pub debounce: Duration,
    /// Modern era: keep a `subscriptions/listen` request open for list changes (default true).
    pub listen: bool,
    /// The delay before re-opening a listen that ended abruptly; doubled after each further
    /// failure in a row (default 1 s).
    pub listen_backoff: Duration,
    /// The longest such delay (default 60 s).
    pub listen_backoff_max: Duration,
    /// Listens that may fail in a row (never acknowledged) before giving up (default 8).
    pub listen_max_failures: u32,
    /// Most `resources/read` results kept for their `ttlMs` (default 256).
    pub max_cached_reads: usize,
    /// The shortest time between the starts of two background refreshes (default 1 s): a server
    /// that keeps announcing changes is re-listed at most this often. Every change is still
    /// followed: a change announced meanwhile is refreshed once the interval is over.
    pub min_refresh_interval: Duration,
}

impl Default for FreshnessOptions {
    fn default() -> Self {
        FreshnessOptions {
            debounce: Duration::from_millis(100),
            listen: true,
            listen_backoff: Duration::from_secs(1),
            listen_backoff_max: Duration::from_secs(60),
            listen_max_failures: 8,
            max_cached_reads: 256,
            min_refresh_interval: Duration::from_secs(1),
        }
    }
}

/// Dirty bits: which lists a notification changed.
pub(crate) const TOOLS: u8 = 1;
pub(crate) const PROMPTS: u8 = 2;
/// Resources and resource templates.
pub(crate) const RESOURCES: u8 = 4;

/// The state shared by a connection, its notification handler and its background tasks.
pub(crate) struct Freshness {
    pub(crate) name: Arc<str>,
    pub(crate) options: FreshnessOptions,
    /// Bumped whenever the session changes (connect, close): older results are discarded.
    epoch: AtomicU64,
    /// Whether the current session speaks the modern era.
    modern: AtomicBool,
    dirty: AtomicU8,
    wake: Notify,
    /// The id of the open `subscriptions/listen` request.
    subscription: std::sync::Mutex<Option<RequestId>>,
    /// The last subscription the server acknowledged.
    acknowledged: watch::Sender<Option<RequestId>>,
    /// The lists whose changes the open, acknowledged subscription reports: their `ttlMs`
    /// hints are not needed to stay fresh.
    covered: AtomicU8,
    /// The generation counter: bumped after each successful refresh.
    changes: watch::Sender<u64>,
    pub(crate) cache: Mutex<Cache>,
    /// The lists as the last refresh stored them, with its epoch (readable while a refresh holds
    /// the cache).
    latest: std::sync::Mutex<Option<(u64, Inventory)>>,
    pub(crate) reads: std::sync::Mutex<ReadCache>,
}

fn lock<T>(m: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Freshness {
    pub(crate) fn new(name: &str, options: FreshnessOptions) -> Self {
        Freshness {
            name: Arc::from(name),
            options,
            epoch: AtomicU64::new(0),
            modern: AtomicBool::new(false),
            dirty: AtomicU8::new(0),
            wake: Notify::new(),
            subscription: std::sync::Mutex::new(None),
            acknowledged: watch::Sender::new(None),
            covered: AtomicU8::new(0),
            changes: watch::Sender::new(0),
            cache: Mutex::new(Cache::default()),
            latest: std::sync::Mutex::new(None),
            reads: std::sync::Mutex::new(ReadCache::default()),
        }
    }

    /// Start a new epoch: a session was opened (`modern`: in which era) or ended. Everything
    /// cached so far is forgotten.
    pub(crate) fn begin(&self, modern: bool) -> u64 {
        let epoch = self.epoch.fetch_add(1, Ordering::SeqCst) + 1;
        self.modern.store(modern, Ordering::SeqCst);
        self.dirty.store(0, Ordering::SeqCst);
        *lock(&self.subscription) = None;
        self.covered.store(0, Ordering::SeqCst);
        lock(&self.reads).clear();
        *lock(&self.latest) = None;
        epoch
    }

    /// Keep `inventory`, stored by a refresh in `epoch`, for [`Freshness::latest`].
    pub(crate) fn publish(&self, epoch: u64, inventory: Inventory) {
        let mut latest = lock(&self.latest);
        if epoch == self.epoch() {
            *latest = Some((epoch, inventory));
        }
    }

    /// The lists the last refresh of the current epoch stored.
    pub(crate) fn latest(&self) -> Option<Inventory> {
        let epoch = self.epoch();
        lock(&self.latest).as_ref().filter(|(e, _)| *e == epoch).map(|(_, inventory)| inventory.clone())
    }

    pub(crate) fn epoch(&self) -> u64 {
        self.epoch.load(Ordering::SeqCst)
    }

    /// Mark lists dirty and wake the refresher.
    pub(crate) fn mark(&self, bits: u8) {
        self.dirty.fetch_or(bits, Ordering::SeqCst);
        self.wake.notify_one();
    }

    /// The lists an acknowledged subscription keeps fresh (bits as in [`Freshness::mark`]).
    pub(crate) fn covered(&self) -> u8 {
        self.covered.load(Ordering::SeqCst)
    }

    pub(crate) fn take_dirty(&self) -> u8 {
        self.dirty.swap(0, Ordering::SeqCst)
    }

    /// Bump the generation counter.
    pub(crate) fn changed(&self) {
        self.changes.send_modify(|g| *g = g.wrapping_add(1));
    }

    pub(crate) fn subscribe_changes(&self) -> watch::Receiver<u64> {
        self.changes.subscribe()
    }

    /// A notification from the server, as the session's handler receives it.
    pub(crate) fn on_notification(&self, notification: &ServerNotification) {
        let (bit, params) = match notification {
            ServerNotification::ToolListChanged(p) => (TOOLS, p),
            ServerNotification::PromptListChanged(p) => (PROMPTS, p),
            ServerNotification::ResourceListChanged(p) => (RESOURCES, p),
            ServerNotification::SubscriptionsAcknowledged(Some(p)) => return self.acknowledge(p),
            ServerNotification::ResourceUpdated(Some(p)) => return lock(&self.reads).forget(&p.uri),
            _ => return,
        };
        if self.modern.load(Ordering::SeqCst) && !self.ours(params) {
            tracing::debug!(server = %self.name, method = notification.method(), "ignored a list change that names no open subscription of this connection");
            return;
        }
        self.mark(bit);
    }

    /// Whether a modern notification belongs to the open subscription.
    fn ours(&self, params: &Option<NotificationParams>) -> bool {
        let id = params.as_ref().and_then(|p| p.meta.as_ref()).and_then(Meta::subscription_id);
        id.is_some() && *lock(&self.subscription) == id
    }

    fn acknowledge(&self, params: &SubscriptionsAcknowledgedParams) {
        let id = params.subscription_id();
        if id.is_none() || *lock(&self.subscription) != id {
            tracing::debug!(server = %self.name, subscription = ?id, "ignored the acknowledgement of another subscription");
            return;
        }
        tracing::debug!(server = %self.name, subscription = ?id, notifications = ?params.notifications, "subscription acknowledged");
        self.covered.store(filter_bits(&params.notifications), Ordering::SeqCst);
        self.acknowledged.send_replace(id);
    }

    /// The background refresher of one session: re-lists the cached lists that notifications
    /// marked dirty, a debounce after the first of them and at least
    /// [`FreshnessOptions::min_refresh_interval`] after the start of the previous refresh. Each
    /// wake-up is one refresh: changes announced while one runs cause one more, not one each.
    pub(crate) async fn run_refresher(self: Arc<Self>, lister: Lister) {
        let mut last: Option<tokio::time::Instant> = None;
        loop {
            self.wake.notified().await;
            let mut wait = self.options.debounce;
            if let Some(last) = last {
                wait = wait.max(self.options.min_refresh_interval.saturating_sub(last.elapsed()));
            }
            tokio::time::sleep(wait).await;
            if self.epoch() != lister.epoch {
                return;
            }
            last = Some(tokio::time::Instant::now());
            // Boxed: a refresh is the largest state of this task, which waits idle most of its life.
            Box::pin(self.refresh_marked(&lister)).await;
        }
    }

    /// Keep `subscriptions/listen` open on the session of `lister` (modern era).
    pub(crate) async fn run_listener(self: Arc<Self>, lister: Lister, filter: SubscriptionFilter) {
        let session = &lister.session;
        let mut failures = 0u32;
        let mut reopened = false;
        let mut acknowledged = self.acknowledged.subscribe();
        loop {
            let params = SubscriptionsListenParams { notifications: filter.clone(), ..Default::default() };
            let (id, mut answer) = session.request_unbounded::<SubscriptionsListen>(&params);
            *lock(&self.subscription) = Some(id.clone());
            let outcome = loop {
                tokio::select! {
                    outcome = &mut answer => break outcome,
                    Ok(()) = acknowledged.changed() => {
                        if acknowledged.borrow_and_update().as_ref() == Some(&id) {
                            failures = 0;
                            if reopened {
                                // Changes may have been missed while no listen was open.
                                self.mark(filter_bits(&filter));
                            }
                        }
                    }
                }
            };
            {
                let mut current = lock(&self.subscription);
                if current.as_ref() == Some(&id) {
                    *current = None;
                    self.covered.store(0, Ordering::SeqCst);
                }
            }
            let error = match outcome {
                Ok(_) => {
                    tracing::debug!(server = %self.name, subscription = %id, "the server ended the subscription");
                    return;
                }
                Err(e) if e.is_closed() => return,
                Err(SessionError::Rpc { error, .. })
                    if [ErrorCode::METHOD_NOT_FOUND, ErrorCode::INVALID_PARAMS].contains(&error.code) =>
                {
                    tracing::warn!(server = %self.name, %error, "the server refuses subscriptions/listen; list changes are not followed");
                    return;
                }
                Err(e) => e,
            };
            failures += 1;
            if failures > self.options.listen_max_failures {
                tracing::warn!(server = %self.name, %error, failures, "subscriptions/listen keeps failing; giving up, list changes are not followed");
                return;
            }
            let delay = backoff(&self.options, failures);
            tracing::warn!(server = %self.name, %error, ?delay, "subscriptions/listen ended abruptly; re-opening it");
            tokio::select! {
                _ = tokio::time::sleep(delay) => {}
                _ = session.closed() => return,
            }
            if self.epoch() != lister.epoch {
                return;
            }
            reopened = true;
        }
    }
}

/// The delay before the `failures`-th re-open: the base, doubled per further failure, capped.
pub(crate) fn backoff(options: &FreshnessOptions, failures: u32) -> Duration {
    let factor = 2u32.saturating_pow(failures.saturating_sub(1));
    options.listen_backoff.saturating_mul(factor).min(options.listen_backoff_max)
}

/// The list changes a listen asks for: those the server's capabilities offer.
pub(crate) fn listen_filter(caps: &ServerCapabilities) -> Option<SubscriptionFilter> {
    let filter = SubscriptionFilter {
        tools_list_changed: caps.tools_list_changed().then_some(true),
        prompts_list_changed: caps.prompts_list_changed().then_some(true),
        resources_list_changed: caps.resources_list_changed().then_some(true),
        ..Default::default()
    };
    (filter.tools() || filter.prompts() || filter.resources()).then_some(filter)
}

fn filter_bits(filter: &SubscriptionFilter) -> u8 {
    (if filter.tools() { TOOLS } else { 0 })
        | (if filter.prompts() { PROMPTS } else { 0 })
        | (if filter.resources() { RESOURCES } else { 0 })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_up_to_the_cap() {
        let options = FreshnessOptions {
            listen_backoff: Duration::from_secs(1),
            listen_backoff_max: Duration::from_secs(10),
            ..Default::default()
        };
        let delays: Vec<u64> = (1..=6).map(|f| backoff(&options, f).as_secs()).collect();
        assert_eq!(delays, [1, 2, 4, 8, 10, 10]);
        assert_eq!(backoff(&options, 200), Duration::from_secs(10), "no overflow");
    }

    #[test]
    fn the_filter_follows_the_capabilities() {
        let caps: ServerCapabilities = serde_json::from_value(serde_json::json!({
            "tools": {"listChanged": true}, "prompts": {}, "resources": {"listChanged": true, "subscribe": true}
        }))
        .unwrap();
        let filter = listen_filter(&caps).unwrap();
        assert_eq!(
            serde_json::to_value(&filter).unwrap(),
            serde_json::json!({"toolsListChanged": true, "resourcesListChanged": true})
        );
        assert_eq!(filter_bits(&filter), TOOLS | RESOURCES);
        let quiet: ServerCapabilities = serde_json::from_value(serde_json::json!({"tools": {}})).unwrap();
        assert!(listen_filter(&quiet).is_none(), "nothing to listen for");
    }
}
