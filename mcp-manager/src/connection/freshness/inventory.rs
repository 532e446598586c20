//! The cached inventory of a connection: each list with when it was fetched, its `ttlMs` and
//! whether a notification made it stale; and the `resources/read` results kept for their
//! `ttlMs`.
//!
//! A list is fetched again when [`McpConnection::inventory`] finds it stale: a change
//! notification marked it (the background refresher usually gets there first), or its `ttlMs`
//! has run out. A list without `ttlMs` stays fresh until a change notification. While an
//! acknowledged `subscriptions/listen` reports a list's changes, its `ttlMs` is not needed and
//! is ignored: modern servers commonly send `ttlMs: 0` on every list, and re-listing each time
//! the host looks would cost a round trip per look for nothing the subscription does not tell.
//! A refresh that fails keeps the previous list and reports a warning.

use std::collections::HashMap;
use std::time::Duration;

use mcp_protocol::types::mrtr::Outcome;
use mcp_protocol::types::resources::{ReadResource, ReadResourceOutcome, ReadResourceParams, ReadResourceResult};
use tokio::sync::watch;
use tokio::time::Instant;

use super::{Freshness, PROMPTS, RESOURCES, TOOLS};
use crate::connection::discovery::{Inventory, Listed, Lister, SharedList, ToolCompanion};
use crate::connection::{ConnectionError, McpConnection};
use crate::session::RequestOptions;

/// One cached list.
struct Slot<T> {
    /// `None`: never fetched in this epoch.
    items: Option<SharedList<T>>,
    /// The companion of each item (tools only, when made), fetched with them.
    companions: SharedList<ToolCompanion>,
    fetched_at: Instant,
    ttl: Option<Duration>,
    /// A change notification arrived since it was fetched.
    stale: bool,
    /// Why the last refresh failed.
    warning: Option<String>,
}

impl<T> Default for Slot<T> {
    fn default() -> Self {
        Slot {
            items: None,
            companions: SharedList::default(),
            fetched_at: Instant::now(),
            ttl: None,
            stale: false,
            warning: None,
        }
    }
}

impl<T: Clone> Slot<T> {
    fn cached(&self) -> bool {
        self.items.is_some()
    }

    /// Whether the next look needs a fetch. A `ttlMs` of 0 is stale at once, unless a
    /// subscription reports the list's changes (`covered`): then only a change makes it stale.
    fn due(&self, now: Instant, covered: bool) -> bool {
        // A `ttlMs` too large for the clock never runs out.
        let expired = |ttl| self.fetched_at.checked_add(ttl).is_some_and(|end| now >= end);
        !self.cached() || self.stale || (!covered && self.ttl.is_some_and(expired))
    }

    fn mark_stale(&mut self) {
        if self.cached() {
            self.stale = true;
        }
    }

    fn store(&mut self, mut listed: Listed<T>, now: Instant) {
        // The items stay where the pages were decoded; only the room the `Vec`s grew into and
        // did not use is given back (in place).
        listed.items.shrink_to_fit();
        listed.companions.shrink_to_fit();
        *self = Slot {
            items: Some(std::sync::Arc::new(listed.items)),
            companions: std::sync::Arc::new(listed.companions),
            fetched_at: now,
            ttl: listed.ttl_ms.map(Duration::from_millis),
            stale: false,
            warning: None,
        };
    }

    /// A failed refresh: the previous items stay (none: empty) until the next notification,
    /// `ttlMs` or forced discovery.
    fn fail(&mut self, warning: String, now: Instant) {
        self.items.get_or_insert_with(Default::default);
        self.fetched_at = now;
        self.stale = false;
        self.warning = Some(warning);
    }

    /// The items, shared: a snapshot copies no item.
    fn items(&self) -> SharedList<T> {
        self.items.clone().unwrap_or_default()
    }
}

/// The cached lists of one epoch.
#[derive(Default)]
pub(crate) struct Cache {
    epoch: u64,
    tools: Slot<mcp_protocol::types::tools::Tool>,
    prompts: Slot<mcp_protocol::types::prompts::Prompt>,
    resources: Slot<mcp_protocol::types::resources::Resource>,
    templates: Slot<mcp_protocol::types::resources::ResourceTemplate>,
}

/// Which lists a refresh fetches.
#[derive(Debug, Clone, Copy, Default)]
struct Due {
    tools: bool,
    prompts: bool,
    resources: bool,
    templates: bool,
}

impl Due {
    const ALL: Due = Due { tools: true, prompts: true, resources: true, templates: true };

    fn any(self) -> bool {
        self.tools || self.prompts || self.resources || self.templates
    }
}

/// Who asks for a refresh, which decides what a failure of the tools list is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// [`McpConnection::discover`]: an error.
    Discover,
    /// [`McpConnection::inventory`]: an error unless a previous list can be shown.
    Inventory,
    /// The background refresher: a warning.
    Background,
}

impl Cache {
    fn mark_stale(&mut self, dirty: u8) {
        if dirty & TOOLS != 0 {
            self.tools.mark_stale();
        }
        if dirty & PROMPTS != 0 {
            self.prompts.mark_stale();
        }
        if dirty & RESOURCES != 0 {
            self.resources.mark_stale();
            self.templates.mark_stale();
        }
    }

    fn due(&self, now: Instant, covered: u8) -> Due {
        Due {
            tools: self.tools.due(now, covered & TOOLS != 0),
            prompts: self.prompts.due(now, covered & PROMPTS != 0),
            resources: self.resources.due(now, covered & RESOURCES != 0),
            templates: self.templates.due(now, covered & RESOURCES != 0),
        }
    }

    /// The cached lists a change notification made stale.
    fn marked(&self) -> Due {
        let marked = |cached: bool, stale: bool| cached && stale;
        Due {
            tools: marked(self.tools.cached(), self.tools.stale),
            prompts: marked(self.prompts.cached(), self.prompts.stale),
            resources: marked(self.resources.cached(), self.resources.stale),
            templates: marked(self.templates.cached(), self.templates.stale),
        }
    }

    fn snapshot(&self) -> Inventory {
        let warnings = [&self.tools.warning, &self.prompts.warning, &self.resources.warning, &self.templates.warning];
        Inventory {
            tools: self.tools.items(),
            tool_companions: self.tools.companions.clone(),
            prompts: self.prompts.items(),
            resources: self.resources.items(),
            resource_templates: self.templates.items(),
            warnings: warnings.into_iter().flatten().cloned().collect(),
        }
    }
}

/// Run `list` when `wanted`, else `None`.
async fn maybe<T>(wanted: bool, list: impl Future<Output = T>) -> Option<T> {
    if wanted { Some(list.await) } else { None }
}

impl Freshness {
    /// Forget a cache of an earlier epoch.
    fn sync(&self, cache: &mut Cache) {
        let epoch = self.epoch();
        if cache.epoch != epoch {
            *cache = Cache { epoch, ..Default::default() };
        }
    }

    /// Fetch the `due` lists with `lister` into `cache`. A list the server's capabilities do not
    /// offer is empty without a request.
    async fn refresh(&self, cache: &mut Cache, lister: &Lister, due: Due, mode: Mode) -> Result<(), ConnectionError> {
        let caps = &lister.capabilities;
        let stale_lister = || ConnectionError::NotConnected(self.name.to_string());
        if lister.epoch != cache.epoch {
            return Err(stale_lister());
        }
        let mut stored = false;
        // The four lists are asked for at once: a server that offers them all answers in one
        // round trip's time, not four. A tools listing whose failure fails the refresh ends it
        // at once (the other requests are dropped, which cancels them).
        let tools_fatal = mode == Mode::Discover || (mode == Mode::Inventory && !cache.tools.cached());
        let tools = async {
            match maybe(due.tools, async { if caps.has_tools() { lister.tools().await } else { Ok(Listed::empty()) } })
                .await
            {
                Some(Err(e)) if tools_fatal => Err(e),
                listed => Ok(listed),
            }
        };
        let others = async {
            Ok(tokio::join!(
                maybe(due.prompts, async {
                    if caps.has_prompts() { lister.prompts().await } else { Ok(Listed::empty()) }
                }),
                maybe(due.resources, async {
                    if caps.has_resources() { lister.resources().await } else { Ok(Listed::empty()) }
                }),
                maybe(due.templates, async {
                    if caps.has_resources() { lister.templates().await } else { Ok(Listed::empty()) }
                }),
            ))
        };
        let (tools, (prompts, resources, templates)) = tokio::try_join!(tools, others)?;
        let now = Instant::now();
        if self.epoch() != lister.epoch {
            return Err(stale_lister());
        }
        match tools {
            None => {}
            Some(Ok(listed)) => {
                cache.tools.store(listed, now);
                stored = true;
            }
            Some(Err(e)) => {
                let message = format!("refreshing tools failed, keeping the previous list: {e}");
                tracing::warn!(server = %self.name, "{message}");
                cache.tools.fail(message, now);
            }
        }
        macro_rules! keep {
            ($result:expr, $slot:expr, $what:literal) => {
                match $result {
                    None => {}
                    Some(Ok(listed)) => {
                        $slot.store(listed, now);
                        stored = true;
                    }
                    Some(Err(e)) => {
                        let message = lister.failure($what, &e);
                        tracing::warn!(server = %self.name, "{message}");
                        $slot.fail(message, now);
                    }
                }
            };
        }
        keep!(prompts, cache.prompts, "prompts");
        keep!(resources, cache.resources, "resources");
        keep!(templates, cache.templates, "resource templates");
        if stored {
            self.publish(cache.epoch, cache.snapshot());
            self.changed();
        }
        Ok(())
    }

    /// The background refresh: re-list the cached lists that notifications marked stale. Only
    /// those: a list past its `ttlMs` (a `ttlMs` of 0 is at once) is fetched again when someone
    /// looks at it ([`McpConnection::inventory`]), not by itself; a list never fetched waits
    /// for someone to ask for it.
    pub(crate) async fn refresh_marked(&self, lister: &Lister) {
        let mut cache = self.cache.lock().await;
        self.sync(&mut cache);
        cache.mark_stale(self.take_dirty());
        let due = cache.marked();
        if due.any()
            && let Err(e) = self.refresh(&mut cache, lister, due, Mode::Background).await
        {
            tracing::debug!(server = %self.name, error = %e, "background refresh stopped");
        }
    }
}

impl McpConnection {
    /// Everything the server offers, from the cache: lists never fetched, marked stale by a
    /// change notification or past their `ttlMs` are fetched first (all pages); the others are
    /// not asked for again. Lists the server's capabilities do not offer are empty.
    ///
    /// Fails when the tools cannot be listed and no earlier list can be shown, or when a list
    /// must be fetched and the connection is not open. A failed optional list, or a failed
    /// refresh of a list fetched before, is reported in [`Inventory::warnings`] and keeps the
    /// previous items. Cancel-safe: a dropped call leaves the cache consistent.
    pub async fn inventory(&self) -> Result<Inventory, ConnectionError> {
        let lister = self.lister().await;
        let mut cache = self.fresh.cache.lock().await;
        self.fresh.sync(&mut cache);
        cache.mark_stale(self.fresh.take_dirty());
        let due = cache.due(Instant::now(), self.fresh.covered());
        if due.any() {
            self.fresh.refresh(&mut cache, &lister?, due, Mode::Inventory).await?;
        }
        Ok(cache.snapshot())
    }

    /// Discover what the server offers now, as its capabilities declare, and cache it for
    /// [`McpConnection::inventory`]: tools first (a failure there is an error), then prompts,
    /// resources and templates concurrently. A failed optional list is empty and reported in
    /// [`Inventory::warnings`]; METHOD_NOT_FOUND on one is only a warning too.
    pub async fn discover(&self) -> Result<Inventory, ConnectionError> {
        let lister = self.lister().await?;
        let mut cache = self.fresh.cache.lock().await;
        self.fresh.sync(&mut cache);
        self.fresh.take_dirty();
        self.fresh.refresh(&mut cache, &lister, Due::ALL, Mode::Discover).await?;
        Ok(cache.snapshot())
    }

    /// The lists as the last refresh stored them, without asking the server (whatever their
    /// `ttlMs`) and without waiting for a refresh under way; `None` before the first listing of
    /// the current session, or once it has ended.
    pub(crate) fn cached_inventory(&self) -> Option<Inventory> {
        self.fresh.latest()
    }

    /// A generation counter, bumped after each successful refresh of any list (by
    /// [`McpConnection::inventory`], [`McpConnection::discover`] or the background refresh that
    /// follows a change notification). Call [`McpConnection::inventory`] for the lists.
    pub fn subscribe_changes(&self) -> watch::Receiver<u64> {
        self.fresh.subscribe_changes()
    }

    /// Read a resource. A completed result with a positive `ttlMs` is kept for that long and
    /// served again without asking the server, until a `notifications/resources/updated` for
    /// its URI or the connection's end.
    pub async fn read_resource(&self, uri: &str) -> Result<ReadResourceOutcome, ConnectionError> {
        let generation = {
            let mut reads = self.fresh.reads.lock().unwrap_or_else(|p| p.into_inner());
            if let Some(hit) = reads.get(uri, Instant::now()) {
                return Ok(Outcome::Complete(hit));
            }
            reads.generation
        };
        let params = ReadResourceParams { uri: uri.to_owned(), ..Default::default() };
        let outcome = self.request_with_input::<ReadResource, _>(params, RequestOptions::default()).await?;
        if let Outcome::Complete(result) = &outcome
            && let Some(ttl) = result.ttl_ms.filter(|t| *t > 0)
        {
            let mut reads = self.fresh.reads.lock().unwrap_or_else(|p| p.into_inner());
            // Not when an update (or the connection's end) came while the read was under way.
            if reads.generation == generation {
                let max = self.fresh.options.max_cached_reads;
                reads.put(uri, result.clone(), saturating_add(Instant::now(), Duration::from_millis(ttl)), max);
            }
        }
        Ok(outcome)
    }
}

/// `now + duration`, or a time about 30 years ahead when that is past what the clock can hold
/// (a server's `ttlMs`, a host's timeout): never a panic.
pub(crate) fn saturating_add(now: Instant, duration: Duration) -> Instant {
    const FAR: Duration = Duration::from_secs(86_400 * 365 * 30);
    now.checked_add(duration).or_else(|| now.checked_add(FAR)).unwrap_or(now)
}

/// `resources/read` results kept for their `ttlMs`.
#[derive(Default)]
pub(crate) struct ReadCache {
    entries: HashMap<String, (ReadResourceResult, Instant)>,
    /// Bumped by every forget, so that a read that raced with one is not kept.
    generation: u64,
}

impl ReadCache {
    fn get(&mut self, uri: &str, now: Instant) -> Option<ReadResourceResult> {
        match self.entries.get(uri) {
            Some((result, expires)) if now < *expires => Some(result.clone()),
            Some(_) => {
                self.entries.remove(uri);
                None
            }
            None => None,
        }
    }

    fn put(&mut self, uri: &str, result: ReadResourceResult, expires: Instant, max: usize) {
        if max == 0 {
            return;
        }
        if self.entries.len() >= max && !self.entries.contains_key(uri) {
            let now = Instant::now();
            self.entries.retain(|_, (_, e)| *e > now);
            if self.entries.len() >= max
                && let Some(first) = self.entries.iter().min_by_key(|(_, (_, e))| *e).map(|(k, _)| k.clone())
            {
                self.entries.remove(&first);
            }
        }
        self.entries.insert(uri.to_owned(), (result, expires));
    }

    pub(crate) fn forget(&mut self, uri: &str) {
        self.generation += 1;
        self.entries.remove(uri);
    }

    pub(crate) fn clear(&mut self) {
        self.generation += 1;
        self.entries.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn slots_follow_ttl_and_notifications() {
        let mut slot: Slot<u8> = Slot::default();
        let now = Instant::now();
        assert!(slot.due(now, false), "never fetched");
        slot.mark_stale();
        assert!(!slot.stale, "only a cached list is marked");
        slot.store(Listed { items: vec![1], ttl_ms: Some(1000), companions: Vec::new() }, now);
        assert!(!slot.due(now + Duration::from_millis(999), false));
        assert!(slot.due(now + Duration::from_millis(1000), false));
        slot.store(Listed { items: vec![2], ttl_ms: None, companions: Vec::new() }, now);
        assert!(!slot.due(now + Duration::from_secs(3600), false), "no ttl: fresh until a notification");
        slot.mark_stale();
        assert!(slot.due(now, false));
        slot.fail("boom".into(), now);
        assert_eq!(
            (&slot.items()[..], slot.warning.as_deref(), slot.due(now, false)),
            (&[2u8][..], Some("boom"), false)
        );
        slot.store(Listed { items: vec![3], ttl_ms: Some(0), companions: Vec::new() }, now);
        assert!(slot.due(now, false), "a ttl of 0 is stale at once");
        assert!(!slot.due(now, true), "unless a subscription reports the list's changes");
        slot.mark_stale();
        assert!(slot.due(now, true), "and then a change makes it stale");
        slot.store(Listed { items: vec![4], ttl_ms: Some(u64::MAX), companions: Vec::new() }, now);
        assert!(!slot.due(now + Duration::from_secs(3600), false), "a ttl past the clock's end never runs out");
    }

    #[test]
    fn a_stored_list_keeps_its_items_where_they_were_decoded() {
        // A listing of thousands of tools is not copied into a new allocation when it is cached,
        // and every snapshot shares the cached list.
        let items: Vec<String> = (0..1000).map(|i| format!("tool-{i}")).collect();
        let at = items.as_ptr();
        let mut slot = Slot::default();
        slot.store(Listed { items, ttl_ms: None, companions: Vec::new() }, Instant::now());
        let (first, second) = (slot.items(), slot.items());
        assert_eq!(first.as_ptr(), at, "the decoded items are the cached ones");
        assert!(std::sync::Arc::ptr_eq(&first, &second), "snapshots share the list");
        assert_eq!((first.len(), first[999].as_str()), (1000, "tool-999"));
    }

    #[tokio::test(start_paused = true)]
    async fn huge_durations_saturate() {
        let now = Instant::now();
        assert_eq!(saturating_add(now, Duration::from_secs(1)), now + Duration::from_secs(1));
        let far = saturating_add(now, Duration::MAX);
        assert!(far > now + Duration::from_secs(86_400 * 365), "far ahead, no panic");
        let mut reads = ReadCache::default();
        reads.put("a", ReadResourceResult::default(), saturating_add(now, Duration::from_millis(u64::MAX)), 2);
        assert!(reads.get("a", now + Duration::from_secs(3600)).is_some(), "kept, no panic");
    }

    #[tokio::test(start_paused = true)]
    async fn the_read_cache_is_bounded_and_expires() {
        let mut reads = ReadCache::default();
        let now = Instant::now();
        let result = |n: u64| ReadResourceResult { ttl_ms: Some(n), ..Default::default() };
        reads.put("a", result(1), now + Duration::from_secs(1), 2);
        reads.put("b", result(2), now + Duration::from_secs(2), 2);
        reads.put("c", result(3), now + Duration::from_secs(3), 2);
        assert!(reads.get("a", now).is_none(), "the entry expiring first made room");
        assert_eq!(reads.get("b", now).unwrap().ttl_ms, Some(2));
        assert!(reads.get("b", now + Duration::from_secs(2)).is_none(), "expired");
        let before = reads.generation;
        reads.forget("c");
        assert!(reads.get("c", now).is_none());
        assert!(reads.generation > before);
    }
}
