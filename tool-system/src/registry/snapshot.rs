//! One listing of every provider, with the name table built from it.

use std::hash::BuildHasher;
use std::sync::Arc;

use foldhash::fast::RandomState;
use hashbrown::HashTable;
use hashbrown::hash_table::Entry;

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
    /// The names that lead to a tool.
    names: Names,
    /// Whether any tool is deferred (then `tool_search` is offered).
    pub(super) has_deferred: bool,
}

/// The name tables of a [`Snapshot`]. They hold indices into its tools, not names: a name is
/// read from the tool it names, so a listing of thousands of tools copies no name into them.
/// Hashed with foldhash (seeded per process, as names come from servers), several times faster
/// than std's SipHash on short keys.
struct Names {
    hasher: RandomState,
    /// Between a namespace and a name in a qualified name.
    separator: String,
    /// Exposed LLM name -> tool.
    by_llm_name: HashTable<usize>,
    /// Qualified and original names that differ from the tool's LLM name -> tool, `None` when
    /// the name is ambiguous.
    aliases: HashTable<Alias>,
}

/// A name that leads to a tool other than by its LLM name.
struct Alias {
    /// The tool whose qualified or original name this is (the first one that has it).
    named_by: usize,
    qualified: bool,
    /// The tool the name leads to; `None` when several tools have it.
    target: Option<usize>,
}

/// Whether `name` is `spec`'s qualified name (`namespace` + `separator` + name).
fn is_qualified_name(spec: &ToolSpec, separator: &str, name: &str) -> bool {
    match &spec.namespace {
        Some(namespace) => name
            .strip_prefix(namespace.as_str())
            .and_then(|rest| rest.strip_prefix(separator))
            .is_some_and(|rest| rest == spec.name),
        None => name == spec.name,
    }
}

impl Names {
    fn new(separator: &str, tools: usize) -> Self {
        Names {
            hasher: RandomState::default(),
            separator: separator.to_owned(),
            by_llm_name: HashTable::with_capacity(tools),
            aliases: HashTable::with_capacity(tools),
        }
    }

    fn hash(&self, name: &str) -> u64 {
        self.hasher.hash_one(name)
    }

    /// Whether `alias` is called `name`.
    fn alias_is(&self, tools: &[ExposedTool], alias: &Alias, name: &str) -> bool {
        alias_is(&self.separator, tools, alias, name)
    }

    /// Makes `name` (the qualified or original name of tool `index`) lead to it, unless another
    /// tool has the name too (then it leads to none).
    fn add_alias(&mut self, tools: &[ExposedTool], index: usize, qualified: bool, name: &str) {
        let hash = self.hash(name);
        let Names { hasher, separator, aliases, .. } = self;
        let entry = aliases.entry(
            hash,
            |alias| alias_is(separator, tools, alias, name),
            |alias| {
                let spec = &tools[alias.named_by].spec;
                // The alias's own name, rebuilt only when the table grows (it is sized for one
                // alias a tool; a tool has two when its LLM name is neither of its names).
                if alias.qualified {
                    hasher.hash_one(spec.qualified_name(separator))
                } else {
                    hasher.hash_one(&spec.name)
                }
            },
        );
        match entry {
            Entry::Occupied(mut slot) => {
                if slot.get().target != Some(index) {
                    slot.get_mut().target = None;
                }
            }
            Entry::Vacant(slot) => {
                slot.insert(Alias { named_by: index, qualified, target: Some(index) });
            }
        }
    }
}

/// Whether `alias` is called `name`.
fn alias_is(separator: &str, tools: &[ExposedTool], alias: &Alias, name: &str) -> bool {
    let spec = &tools[alias.named_by].spec;
    if alias.qualified { is_qualified_name(spec, separator, name) } else { spec.name == name }
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
        let mut allocator = NameAllocator::with_capacity(options.max_name_len, total + 1).letter_first();
        allocator.reserve(TOOL_SEARCH_NAME);
        let separator = options.separator.as_str();
        let mut tools: Vec<ExposedTool> = Vec::with_capacity(total);
        let mut routes = Vec::with_capacity(total);
        let mut names = Names::new(separator, total);
        // The first tool of each qualified name (a later one of the same name is skipped).
        let mut owners: HashTable<usize> = HashTable::with_capacity(total);
        for (provider, listing) in providers.iter().zip(listings) {
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
                let qualified = spec.qualified_name(separator);
                if qualified == TOOL_SEARCH_NAME {
                    tracing::warn!(
                        provider = provider_name,
                        tool = %qualified,
                        "tool name is reserved for the built-in tool search; the tool is skipped"
                    );
                    continue;
                }
                let index = tools.len();
                let hash = names.hash(&qualified);
                let first = owners.find(hash, |&i| is_qualified_name(&tools[i].spec, separator, &qualified));
                if let Some(&first) = first {
                    tracing::warn!(
                        tool = %qualified,
                        kept_from = %tools[first].provider,
                        skipped_from = provider_name,
                        "duplicate tool name; the first one registered is kept and this one is skipped"
                    );
                    continue;
                }
                owners.insert_unique(hash, index, |&i| names.hash(&tools[i].spec.qualified_name(separator)));
                // Shared specs are copied only when the registry must fill them in.
                if spec.provider_name.is_empty() {
                    Arc::make_mut(&mut spec).provider_name = shared_provider.clone();
                }
                if spec.provider_type.is_empty() {
                    Arc::make_mut(&mut spec).provider_type =
                        shared_type.get_or_insert_with(|| provider.provider_type().into()).clone();
                }
                // The qualified name itself becomes the LLM name when it is valid and free.
                let llm_name = allocator.allocate_owned(qualified);
                let qualified_is_llm = is_qualified_name(&spec, separator, &llm_name);
                let original_is_llm = spec.name == *llm_name;
                // The LLM name is most often the qualified name itself, hashed already.
                let llm_hash = if qualified_is_llm { hash } else { names.hash(&llm_name) };
                tools.push(ExposedTool { llm_name, provider: shared_provider.clone(), spec });
                routes.push(Arc::clone(provider));
                names
                    .by_llm_name
                    .insert_unique(llm_hash, index, |&i| names.hasher.hash_one(tools[i].llm_name.as_str()));
                let spec = &tools[index].spec;
                if !qualified_is_llm {
                    let qualified = spec.qualified_name(separator);
                    names.add_alias(&tools, index, true, &qualified);
                }
                if !original_is_llm {
                    names.add_alias(&tools, index, false, &spec.name);
                }
            }
        }
        let has_deferred = tools.iter().any(|tool| tool.spec.is_deferred() && tool.spec.callers.model);
        Self { generation, providers, revisions, tools, routes, names, has_deferred }
    }

    /// Whether no provider's revision changed since the listing.
    pub(super) fn is_current(&self) -> bool {
        self.providers.iter().zip(&self.revisions).all(|(provider, seen)| provider.revision() == *seen)
    }

    /// The index of the tool called `name`: an exposed LLM name first, else a qualified or
    /// original name that only one tool has.
    /// The index of the tool exposed under the LLM name `name` (no aliases).
    pub(super) fn exposes(&self, name: &str) -> Option<usize> {
        self.exposes_hashed(self.names.hash(name), name)
    }

    fn exposes_hashed(&self, hash: u64, name: &str) -> Option<usize> {
        self.names.by_llm_name.find(hash, |&i| self.tools[i].llm_name == *name).copied()
    }

    pub(super) fn resolve(&self, name: &str) -> Option<usize> {
        let hash = self.names.hash(name);
        self.exposes_hashed(hash, name).or_else(|| {
            let alias = self.names.aliases.find(hash, |alias| self.names.alias_is(&self.tools, alias, name))?;
            alias.target
        })
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
