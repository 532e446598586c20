//! One listing of every provider, with the name table built from it.

use std::collections::hash_map::Entry;
use std::sync::Arc;

use foldhash::{HashMap, HashMapExt};

use super::availability::Gate;
use super::search::{BUILTIN_PROVIDER, TOOL_SEARCH_NAME, tool_search_spec};
use crate::names::NameAllocator;
use crate::{AppOrigin, ExposedTool, RegistryOptions, SharedText, ToolError, ToolProvider, ToolSpec};

/// The registry's view of its providers' tools at one moment: immutable, shared behind an `Arc`
/// so that a call needs no lock while it looks a name up.
pub(super) struct Snapshot {
    /// The registry generation (registrations, invalidations) the listing was started at.
    pub(super) generation: u64,
    /// The providers listed, in registration order.
    providers: Vec<Arc<dyn ToolProvider>>,
    /// Each provider's [`ToolProvider::revision`] read before listing (same order).
    revisions: Vec<u64>,
    /// Every exposed tool, visible and deferred, in registration order.
    pub(super) tools: Vec<ExposedTool>,
    /// The provider of each tool (same index as `tools`).
    pub(super) routes: Vec<Arc<dyn ToolProvider>>,
    /// Exposed LLM name -> index. The name tables hash with foldhash (seeded per process, as
    /// names come from servers), several times faster than std's SipHash on short keys: a
    /// listing of thousands of tools fills three of them.
    by_llm_name: HashMap<SharedText, usize>,
    /// Qualified and original names -> index, `None` when the name is ambiguous.
    aliases: HashMap<String, Option<usize>>,
    /// Whether any tool is deferred (then `tool_search` is offered).
    pub(super) has_deferred: bool,
}

impl Snapshot {
    /// Builds the name table from the listings of `providers` (same order). Failed listings are
    /// left out with a warning; duplicate qualified names are skipped with a warning, the first
    /// one kept; a provider tool named like the built-in `tool_search` is skipped.
    pub(super) fn build(
        options: &RegistryOptions,
        generation: u64,
        revisions: Vec<u64>,
        providers: Vec<Arc<dyn ToolProvider>>,
        listings: Vec<Result<Vec<Arc<ToolSpec>>, ToolError>>,
    ) -> Self {
        // Sized up front: with thousands of tools, growing the tables would briefly hold each
        // twice (and rehash every name at each step).
        let total: usize = listings.iter().map(|l| l.as_ref().map_or(0, Vec::len)).sum();
        let mut names = NameAllocator::with_capacity(options.max_name_len, total + 1).letter_first();
        names.reserve(TOOL_SEARCH_NAME);
        let mut tools = Vec::with_capacity(total);
        let mut routes = Vec::with_capacity(total);
        let mut by_llm_name = HashMap::with_capacity(total);
        let mut aliases: HashMap<String, Option<usize>> = HashMap::with_capacity(total);
        // The provider (its index) that first offered each qualified name.
        let mut owners: HashMap<String, usize> = HashMap::with_capacity(total);
        for (provider_index, (provider, listing)) in providers.iter().zip(listings).enumerate() {
            let provider_name = provider.name();
            // One buffer for the provider's name, shared by its tools.
            let shared_provider = SharedText::from(provider_name);
            // Its type likewise, made when a spec leaves it for the registry to fill in.
            let mut shared_type: Option<SharedText> = None;
            let specs = match listing {
                Ok(specs) => specs,
                Err(err) => {
                    tracing::warn!(provider = provider_name, error = %err, "tool provider failed to list its tools; its tools are left out");
                    continue;
                }
            };
            for mut spec in specs {
                let qualified = spec.qualified_name(&options.separator);
                if qualified == TOOL_SEARCH_NAME {
                    tracing::warn!(
                        provider = provider_name,
                        tool = %qualified,
                        "tool name is reserved for the built-in tool search; the tool is skipped"
                    );
                    continue;
                }
                // The table of owners keeps the qualified name; it is copied again only for an
                // alias (when the exposed name differs from it).
                let qualified = match owners.entry(qualified) {
                    Entry::Occupied(first) => {
                        tracing::warn!(
                            tool = %first.key(),
                            kept_from = %providers[*first.get()].name(),
                            skipped_from = provider_name,
                            "duplicate tool name; the first one registered is kept and this one is skipped"
                        );
                        continue;
                    }
                    Entry::Vacant(slot) => slot.insert_entry(provider_index),
                };
                let qualified = qualified.key();
                // Shared specs are copied only when the registry must fill them in.
                if spec.provider_name.is_empty() {
                    Arc::make_mut(&mut spec).provider_name = shared_provider.clone();
                }
                if spec.provider_type.is_empty() {
                    Arc::make_mut(&mut spec).provider_type =
                        shared_type.get_or_insert_with(|| provider.provider_type().into()).clone();
                }
                let llm_name = names.allocate_shared(qualified);
                let index = tools.len();
                by_llm_name.insert(llm_name.clone(), index);
                for alias in [qualified.as_str(), spec.name.as_str()] {
                    if llm_name == alias {
                        continue;
                    }
                    match aliases.entry(alias.to_owned()) {
                        Entry::Occupied(mut slot) => {
                            if *slot.get() != Some(index) {
                                slot.insert(None);
                            }
                        }
                        Entry::Vacant(slot) => {
                            slot.insert(Some(index));
                        }
                    }
                }
                tools.push(ExposedTool { llm_name, provider: shared_provider.clone(), spec });
                routes.push(Arc::clone(provider));
            }
        }
        let has_deferred = tools.iter().any(|tool| tool.spec.is_deferred() && tool.spec.callers.model);
        Self { generation, providers, revisions, tools, routes, by_llm_name, aliases, has_deferred }
    }

    /// Whether no provider's revision changed since the listing.
    pub(super) fn is_current(&self) -> bool {
        self.providers.iter().zip(&self.revisions).all(|(provider, seen)| provider.revision() == *seen)
    }

    /// The index of the tool called `name`: an exposed LLM name first, else a qualified or
    /// original name that only one tool has.
    /// The index of the tool exposed under the LLM name `name` (no aliases).
    pub(super) fn exposes(&self, name: &str) -> Option<usize> {
        self.by_llm_name.get(name).copied()
    }

    pub(super) fn resolve(&self, name: &str) -> Option<usize> {
        self.by_llm_name.get(name).copied().or_else(|| self.aliases.get(name).copied().flatten())
    }

    /// The index of the tool `origin`'s provider (and namespace) calls `name` (its own name).
    pub(super) fn resolve_in(&self, origin: &AppOrigin, name: &str) -> Option<usize> {
        self.tools.iter().position(|tool| {
            tool.provider == origin.provider
                && tool.spec.namespace.as_deref() == origin.namespace.as_deref()
                && tool.spec.name == name
        })
    }

    /// What the LLM is offered: the visible tools the model may call that `gate` allows, then
    /// `tool_search` when such a tool is deferred.
    pub(super) fn llm_tools(&self, gate: &Gate<'_>) -> Vec<ExposedTool> {
        let mut out = Vec::with_capacity(self.tools.len() + 1);
        let mut deferred = false;
        for tool in self.tools.iter().filter(|tool| tool.spec.callers.model) {
            if tool.spec.is_deferred() {
                // The rule is asked once at most for the deferred tools.
                deferred = deferred || (self.has_deferred && gate.allows(tool));
            } else if gate.allows(tool) {
                out.push(tool.clone());
            }
        }
        if deferred {
            out.push(ExposedTool {
                llm_name: TOOL_SEARCH_NAME.into(),
                provider: BUILTIN_PROVIDER.into(),
                spec: Arc::new(tool_search_spec()),
            });
        }
        out
    }

    /// Whether a deferred tool the model may call passes `gate` (then `tool_search` is offered).
    pub(super) fn has_deferred(&self, gate: &Gate<'_>) -> bool {
        self.has_deferred
            && (gate.is_open()
                || self
                    .tools
                    .iter()
                    .any(|tool| tool.spec.is_deferred() && tool.spec.callers.model && gate.allows(tool)))
    }
}
