//! One listing of every provider, with the name table built from it.

use std::hash::BuildHasher;
use std::sync::{Arc, OnceLock};

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
    /// The provider of each tool, as its place in `providers` (same index as `tools`).
    provider_of: Vec<u32>,
    /// The names that lead to a tool.
    names: Names,
    /// Whether any tool is deferred (then `tool_search` is offered).
    pub(super) has_deferred: bool,
}

/// A tool's place in a [`Snapshot`]'s tools: 32 bits, so that the name tables hold 4 bytes a
/// tool, not 8.
type Index = u32;

/// The name tables of a [`Snapshot`]. They hold indices into its tools, not names: a name is
/// read from the tool it names, so a listing of thousands of tools copies no name into them.
/// Hashed with foldhash (seeded per process, as names come from servers), several times faster
/// than std's SipHash on short keys.
struct Names {
    hasher: RandomState,
    /// Between a namespace and a name in a qualified name.
    separator: String,
    /// Exposed LLM name -> tool.
    by_llm_name: HashTable<Index>,
    /// Qualified and original names that differ from the tool's LLM name -> tool, made when a
    /// name is first looked up that no tool is exposed under: calls use LLM names, and a listing
    /// of thousands of tools (most with an original name of their own) should not pay for a
    /// table hardly any call reads.
    aliases: OnceLock<HashTable<Alias>>,
}

/// A name that leads to a tool other than by its LLM name.
struct Alias {
    /// The tool whose qualified or original name this is (the first one that has it).
    named_by: Index,
    /// The tool the name leads to; [`AMBIGUOUS`] when several tools have it.
    target: Index,
    qualified: bool,
}

/// The target of an alias that several tools have.
const AMBIGUOUS: Index = Index::MAX;

/// `index` as an [`Index`]: a registry holds fewer than 2^32 - 1 tools (its listings are
/// `Vec`s of specs of a few hundred bytes each).
fn index_of(index: usize) -> Index {
    Index::try_from(index).ok().filter(|&i| i != AMBIGUOUS).expect("fewer than 2^32 - 1 tools")
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
    /// Names hashed by `hasher` (the name allocator's: a name is hashed once for both).
    fn new(hasher: RandomState, separator: &str, tools: usize) -> Self {
        Names {
            hasher,
            separator: separator.to_owned(),
            by_llm_name: HashTable::with_capacity(tools),
            aliases: OnceLock::new(),
        }
    }

    fn hash(&self, name: &str) -> u64 {
        self.hasher.hash_one(name)
    }

    /// Whether one of `tools` is exposed under `name`, hashed as `hash`.
    fn exposes(&self, tools: &[ExposedTool], hash: u64, name: &str) -> bool {
        self.by_llm_name.find(hash, |&i| tools[i as usize].llm_name == *name).is_some()
    }

    /// The aliases of `tools`: each tool's qualified and original names that are not its LLM
    /// name, each leading to the tool, or to none when several tools have it.
    fn aliases(&self, tools: &[ExposedTool]) -> &HashTable<Alias> {
        self.aliases.get_or_init(|| {
            // Room for one alias a tool (its original name), so that the table is not rehashed
            // as it fills (a tool has two when its LLM name is neither of its names).
            let mut aliases = HashTable::with_capacity(tools.len());
            for (index, tool) in tools.iter().enumerate() {
                let spec = &tool.spec;
                if !is_qualified_name(spec, &self.separator, &tool.llm_name) {
                    self.add_alias(&mut aliases, tools, index_of(index), true, &spec.qualified_name(&self.separator));
                }
                if spec.name != *tool.llm_name {
                    self.add_alias(&mut aliases, tools, index_of(index), false, &spec.name);
                }
            }
            aliases
        })
    }

    /// Makes `name` (the qualified or original name of tool `index`) lead to it, unless another
    /// tool has the name too (then it leads to none).
    fn add_alias(
        &self,
        aliases: &mut HashTable<Alias>,
        tools: &[ExposedTool],
        index: Index,
        qualified: bool,
        name: &str,
    ) {
        let Names { hasher, separator, .. } = self;
        let entry = aliases.entry(
            hasher.hash_one(name),
            |alias| alias_is(separator, tools, alias, name),
            |alias| {
                let spec = &tools[alias.named_by as usize].spec;
                // The alias's own name, rebuilt only when the table grows.
                if alias.qualified {
                    hasher.hash_one(spec.qualified_name(separator))
                } else {
                    hasher.hash_one(&spec.name)
                }
            },
        );
        match entry {
            Entry::Occupied(mut slot) => {
                if slot.get().target != index {
                    slot.get_mut().target = AMBIGUOUS;
                }
            }
            Entry::Vacant(slot) => {
                slot.insert(Alias { named_by: index, target: index, qualified });
            }
        }
    }
}

/// Whether `alias` is called `name`.
fn alias_is(separator: &str, tools: &[ExposedTool], alias: &Alias, name: &str) -> bool {
    let spec = &tools[alias.named_by as usize].spec;
    if alias.qualified { is_qualified_name(spec, separator, name) } else { spec.name == name }
}

/// The name allocator of a listing, and whether it knows the names given out so far.
///
/// Most listings hand every tool its qualified name unchanged (valid, and no other tool's): the
/// listing's table of LLM names tells whether a name is free, and a second table of the same
/// names, in the allocator, would be filled and dropped for nothing. The allocator learns the
/// names given out (and `tool_search`) when a name is first invalid or taken, and from then on
/// takes every name itself.
struct Allocator {
    names: NameAllocator,
    /// Whether `names` has taken every LLM name given out so far.
    seeded: bool,
}

impl Allocator {
    /// `qualified` (hashed as `hash`) as the LLM name of the next tool after `tools` when it is
    /// valid and free, else `qualified` back: [`NameAllocator::take_unchanged`]. At most `more`
    /// tools follow.
    fn take_unchanged(
        &mut self,
        names: &Names,
        tools: &[ExposedTool],
        qualified: String,
        hash: u64,
        more: usize,
    ) -> Result<SharedText, String> {
        if !self.seeded {
            // Valid, and no tool's LLM name yet (nor `tool_search`: the build skips that name).
            if self.names.keeps(&qualified) && !names.exposes(tools, hash, &qualified) {
                return Ok(SharedText::from(qualified));
            }
            self.seed(names, tools, more);
        }
        self.names.take_unchanged_hashed(qualified, hash)
    }

    /// Gives the allocator `tools`' LLM names (hashed by `names`' hasher, the allocator's own)
    /// and `tool_search`, with room for `more` names after them.
    fn seed(&mut self, names: &Names, tools: &[ExposedTool], more: usize) {
        self.names.reserve_names(tools.len() + 1 + more);
        self.names.reserve(TOOL_SEARCH_NAME);
        for tool in tools {
            self.names.take_hashed(names.hash(&tool.llm_name), tool.llm_name.clone());
        }
        self.seeded = true;
    }
}

/// The first tool of each qualified name, for the rare listing that needs it.
///
/// A qualified name that the allocator hands out unchanged (valid and free) cannot be an
/// earlier tool's: that tool would have taken the name, or found it taken, and names are never
/// given back. Only a qualified name that is invalid or taken needs this table, which is made
/// then, from every tool kept so far, and kept up to date from then on.
struct Owners {
    table: Option<HashTable<Index>>,
    /// How many tools the listing has: the table is made with room for all of them.
    capacity: usize,
}

impl Owners {
    /// The table, made from `tools` (the tools kept so far) the first time it is needed.
    fn table(&mut self, names: &Names, tools: &[ExposedTool]) -> &mut HashTable<Index> {
        self.table.get_or_insert_with(|| {
            let mut owners = HashTable::with_capacity(self.capacity);
            for index in 0..tools.len() {
                let index = index_of(index);
                owners.insert_unique(qualified_hash(names, tools, index), index, |&i| qualified_hash(names, tools, i));
            }
            owners
        })
    }

    /// Records that tool `index` (in `tools`) has the qualified name hashed as `hash`, once the
    /// table exists (it does after [`table`](Self::table)).
    fn add(&mut self, names: &Names, tools: &[ExposedTool], hash: u64, index: Index) {
        if let Some(owners) = &mut self.table {
            owners.insert_unique(hash, index, |&i| qualified_hash(names, tools, i));
        }
    }
}

/// The hash of tool `index`'s qualified name (made again: the table holds no names).
fn qualified_hash(names: &Names, tools: &[ExposedTool], index: Index) -> u64 {
    names.hash(&tools[index as usize].spec.qualified_name(&names.separator))
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
        // Its table of taken names is filled only once a name needs it: see `Allocator`.
        let mut allocator = Allocator { names: NameAllocator::new(options.max_name_len).letter_first(), seeded: false };
        let separator = options.separator.as_str();
        let mut tools: Vec<ExposedTool> = Vec::with_capacity(total);
        let mut provider_of = Vec::with_capacity(total);
        let mut names = Names::new(allocator.names.hasher().clone(), separator, total);
        let mut owners = Owners { table: None, capacity: total };
        let mut has_deferred = false;
        for (place, (provider, listing)) in providers.iter().zip(listings).enumerate() {
            let provider_name = provider.name();
            let place = index_of(place);
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
                let index = index_of(tools.len());
                let hash = names.hash(&qualified);
                // The qualified name itself becomes the LLM name when it is valid and free; then
                // no earlier tool has it. Otherwise it may be a duplicate.
                let unchanged = allocator.take_unchanged(&names, &tools, qualified, hash, total - tools.len());
                let (llm_name, llm_hash) = match unchanged {
                    Ok(llm_name) => {
                        owners.add(&names, &tools, hash, index);
                        (llm_name, hash)
                    }
                    Err(qualified) => {
                        let first = owners
                            .table(&names, &tools)
                            .find(hash, |&i| is_qualified_name(&tools[i as usize].spec, separator, &qualified))
                            .copied();
                        if let Some(first) = first {
                            tracing::warn!(
                                tool = %qualified,
                                kept_from = %tools[first as usize].provider,
                                skipped_from = provider_name,
                                "duplicate tool name; the first one registered is kept and this one is skipped"
                            );
                            continue;
                        }
                        owners.add(&names, &tools, hash, index);
                        let llm_name = allocator.names.allocate_owned(qualified);
                        let llm_hash = names.hash(&llm_name);
                        (llm_name, llm_hash)
                    }
                };
                // Shared specs are copied only when the registry must fill them in.
                if spec.provider_name.is_empty() {
                    Arc::make_mut(&mut spec).provider_name = shared_provider.clone();
                }
                if spec.provider_type.is_empty() {
                    Arc::make_mut(&mut spec).provider_type =
                        shared_type.get_or_insert_with(|| provider.provider_type().into()).clone();
                }
                // Read while the spec is in the cache: a pass over every spec afterwards would
                // fetch each again.
                has_deferred |= spec.is_deferred() && spec.callers.model;
                tools.push(ExposedTool { llm_name, provider: shared_provider.clone(), spec });
                provider_of.push(place);
                names
                    .by_llm_name
                    .insert_unique(llm_hash, index, |&i| names.hasher.hash_one(tools[i as usize].llm_name.as_str()));
            }
        }
        Self { generation, providers, revisions, tools, provider_of, names, has_deferred }
    }

    /// The provider of tool `index`.
    pub(super) fn provider(&self, index: usize) -> &Arc<dyn ToolProvider> {
        &self.providers[self.provider_of[index] as usize]
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
        self.names.by_llm_name.find(hash, |&i| self.tools[i as usize].llm_name == *name).map(|&i| i as usize)
    }

    pub(super) fn resolve(&self, name: &str) -> Option<usize> {
        let hash = self.names.hash(name);
        self.exposes_hashed(hash, name).or_else(|| {
            let aliases = self.names.aliases(&self.tools);
            let alias = aliases.find(hash, |alias| alias_is(&self.names.separator, &self.tools, alias, name))?;
            (alias.target != AMBIGUOUS).then_some(alias.target as usize)
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
