//! The routing table: which server owns each tool, prompt, resource and resource template.
//!
//! It is rebuilt from every ready server's inventory, in config order, whenever one changes, so
//! the outcome never depends on which server answered first. The rules:
//!
//! - a tool whose name the host reserved is never routed (reported);
//! - a name a server lists twice is kept once, the first (reported);
//! - a name several servers offer goes to the first server in config order (the others are
//!   reported as losing the clash);
//! - a server's allow/deny lists (`enabled_tools`, `disabled_tools`) drop tools before any of
//!   this: a dropped tool is not a conflict (it never hides another server's tool of the same
//!   name), but the table remembers it, so a call of it says that the config disables it; a name
//!   in `enabled_tools` that the server does not have is warned about once per manager.
//!
//! Lookups are one hash probe; input and output schema checks are compiled on first use and
//! kept with the route. A route is a handle into the block of its server's inventory (see
//! [`route`]), so a table of thousands of tools allocates a block per server, not a route per
//! tool. A rebuild keeps the block (with the specs and compiled checks its routes made) of
//! every server that lists its tools from the same inventory, so a server that connects or
//! changes its lists costs the others nothing but a hash probe per tool. The tool index holds
//! no name: each is read from its route, so no tool name is copied into the table. A conflict
//! is logged by the first table that has it, not by every rebuild.

use std::collections::HashSet;
use std::hash::BuildHasher;
use std::sync::{Arc, Mutex};

// foldhash (randomly seeded) rather than SipHash: a rebuild hashes every routed name a few
// times, and each server that connects rebuilds the table.
use foldhash::{HashMap, HashMapExt};
use hashbrown::HashTable;

use mcp_protocol::types::prompts::Prompt;
use mcp_protocol::types::resources::{Resource, ResourceTemplate};
use tool_system::{SharedText, ToolVisibility};

use self::route::RouteBlock;
pub use self::route::RoutedTool;
use super::ManagerError;
use super::template::UriTemplate;
use crate::config::ToolFilter;
use crate::connection::{Inventory, ToolCompanion, ToolCompanions};

/// What one ready server contributes to the table.
pub(crate) struct RoutingInput<'a> {
    pub(crate) server: &'a Arc<str>,
    pub(crate) inventory: &'a Arc<Inventory>,
    pub(crate) filter: &'a ToolFilter,
    pub(crate) visibility: ToolVisibility,
}

/// The companions that make each tool's host spec as the tools of `server` are listed, for
/// [`ConnectionOptions::tool_companions`](crate::ConnectionOptions::tool_companions): a route
/// takes its tool's spec from there (when it was made for the route's server and visibility),
/// so a listing of thousands of tools converts them while the server prepares its next page,
/// not after the last one. A tool that `filter` drops is never routed: it gets no spec (one
/// shared empty companion), so a server whose config enables a few of its many tools does not
/// keep a spec for each of the others. (A tool that loses a name clash to an earlier server
/// keeps the spec it was listed with: which tools clash is known only once every server has
/// listed its tools.)
pub(crate) fn spec_companions(server: &str, visibility: ToolVisibility, filter: &ToolFilter) -> ToolCompanions {
    static DROPPED: std::sync::LazyLock<ToolCompanion> = std::sync::LazyLock::new(|| Arc::new(()));
    let namespace = SharedText::from(server);
    let filter = filter.clone();
    ToolCompanions::new(move |tool| -> ToolCompanion {
        if !filter.allows(&tool.name) {
            return Arc::clone(&DROPPED);
        }
        Arc::new(super::convert::tool_spec(namespace.clone(), tool, visibility))
    })
}

/// A prompt and its server.
#[derive(Debug, Clone)]
pub struct RoutedPrompt {
    /// The server's name.
    pub server: Arc<str>,
    /// The prompt.
    pub prompt: Prompt,
}

/// A resource and its server.
#[derive(Debug, Clone)]
pub struct RoutedResource {
    /// The server's name.
    pub server: Arc<str>,
    /// The resource.
    pub resource: Resource,
}

/// A resource template and its server.
#[derive(Debug, Clone)]
pub struct RoutedTemplate {
    /// The server's name.
    pub server: Arc<str>,
    /// The template.
    pub template: ResourceTemplate,
    parsed: Option<Arc<UriTemplate>>,
}

/// Why a name was not routed to a server that offers it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum ConflictKind {
    /// The host reserved the tool name.
    Reserved,
    /// The same server lists the name more than once; the first is kept.
    DuplicateInServer,
    /// An earlier server (in config order) offers the same name and keeps it.
    TakenBy(String),
}

/// A name that was not routed to a server that offers it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Conflict {
    /// `tool`, `prompt`, `resource` or `template`.
    pub what: &'static str,
    /// The name (for resources: the URI; for templates: the URI template).
    pub name: String,
    /// The server that does not get it.
    pub server: String,
    /// Why.
    pub kind: ConflictKind,
}

impl std::fmt::Display for Conflict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let Conflict { what, name, server, kind } = self;
        match kind {
            ConflictKind::Reserved => {
                write!(f, "{what} {name:?} of server {server:?} is skipped: the host reserves that name")
            }
            ConflictKind::DuplicateInServer => {
                write!(f, "server {server:?} lists {what} {name:?} more than once; the first is kept")
            }
            ConflictKind::TakenBy(winner) => write!(
                f,
                "{what} {name:?} of server {server:?} is skipped: server {winner:?}, earlier in the config, offers it too"
            ),
        }
    }
}

/// A name in a server's `enabled_tools` that the server does not have (a typo, or a tool the
/// server no longer offers).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct FilterWarning {
    /// The server.
    pub server: String,
    /// The name in its `enabled_tools`.
    pub tool: String,
}

impl std::fmt::Display for FilterWarning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "server {:?}: enabled_tools names tool {:?}, which the server does not have", self.server, self.tool)
    }
}

/// The most filter warnings a manager remembers having logged (so each is logged once).
const MAX_WARNED: usize = 4096;

/// Who owns what, built from the servers' inventories in config order.
#[derive(Debug, Default)]
pub struct Routing {
    tools: Vec<RoutedTool>,
    /// The block of each server's routes, in config order.
    blocks: Vec<Arc<RouteBlock>>,
    /// Tool name -> route.
    tool_index: ToolIndex,
    /// What each server has in the table: tools, prompts, resources, templates.
    counts: HashMap<Arc<str>, [usize; 4]>,
    /// How many routes of the table this one replaced it kept.
    kept: usize,
    /// Tool name -> the first server (config order) whose config drops it.
    disabled: HashMap<String, Arc<str>>,
    filter_warnings: Vec<FilterWarning>,
    /// The filter warnings logged so far, shared by every table of one manager.
    warned: Arc<Mutex<HashSet<FilterWarning>>>,
    prompts: Vec<RoutedPrompt>,
    prompt_index: HashMap<String, usize>,
    resources: Vec<RoutedResource>,
    resource_index: HashMap<String, usize>,
    templates: Vec<RoutedTemplate>,
    conflicts: Vec<Conflict>,
}

/// Tool names -> routes: indices into the table's routes, keyed by the name each route's tool
/// has (read from the route: the index holds no copy of any name). Its hasher (foldhash, seeded
/// at random) passes from each table to the next, so a rebuild hashes a name once to look it up
/// in both.
#[derive(Debug, Default)]
struct ToolIndex {
    hasher: foldhash::fast::RandomState,
    slots: HashTable<ToolSlot>,
}

#[derive(Debug)]
struct ToolSlot {
    /// The route (an index into the table's tools).
    route: usize,
    /// The place (in config order) of the last server that offered the name: a repeat within
    /// one server is told from a clash between servers by it.
    last: usize,
}

impl ToolIndex {
    fn with_capacity(hasher: foldhash::fast::RandomState, tools: usize) -> Self {
        ToolIndex { hasher, slots: HashTable::with_capacity(tools) }
    }

    fn hash(&self, name: &str) -> u64 {
        self.hasher.hash_one(name)
    }

    /// The route of the tool `name`, whose hash is `hash`.
    fn find(&self, tools: &[RoutedTool], hash: u64, name: &str) -> Option<usize> {
        self.slots.find(hash, |slot| tools[slot.route].tool().name == name).map(|slot| slot.route)
    }
}

/// Why a name that was claimed already is not routed to the server at `place` (in config order)
/// that offers it again: a repeat within that server, or a name an earlier server (`winner`)
/// took. `last` is the place of the last server that offered the name, now `place`.
fn lost_claim(last: &mut usize, place: usize, winner: &str) -> ConflictKind {
    if std::mem::replace(last, place) == place {
        ConflictKind::DuplicateInServer
    } else {
        ConflictKind::TakenBy(winner.to_owned())
    }
}

/// Keeps the first of each name: a repeat within one server or a name an earlier server took is
/// reported as a conflict.
struct Claims<'a> {
    what: &'static str,
    /// Each name's owner, and the place (in config order) of the last server that offered it:
    /// one probe tells a repeat within a server from a clash. Borrowed from the inventories: a
    /// rebuild copies no name to claim it.
    owner: HashMap<&'a str, (&'a Arc<str>, usize)>,
}

impl<'a> Claims<'a> {
    fn new(what: &'static str) -> Self {
        Claims { what, owner: HashMap::new() }
    }

    /// Whether `server`, at `place` in config order, gets `name`.
    fn claim(&mut self, place: usize, server: &'a Arc<str>, name: &'a str, conflicts: &mut Vec<Conflict>) -> bool {
        use std::collections::hash_map::Entry;
        let kind = match self.owner.entry(name) {
            Entry::Vacant(slot) => {
                slot.insert((server, place));
                return true;
            }
            Entry::Occupied(mut slot) => {
                let (winner, last) = slot.get_mut();
                lost_claim(last, place, winner)
            }
        };
        conflicts.push(Conflict { what: self.what, name: name.to_owned(), server: server.to_string(), kind });
        false
    }
}

impl Routing {
    /// Build the table from `inputs` (config order) with the host's reserved tool names;
    /// `previous` is the table this one replaces (what was already warned about).
    pub(crate) fn build<'a>(
        inputs: impl IntoIterator<Item = RoutingInput<'a>>,
        reserved: &[String],
        previous: &Routing,
    ) -> Routing {
        let reserved: HashSet<&str> = reserved.iter().map(String::as_str).collect();
        let inputs: Vec<RoutingInput<'a>> = inputs.into_iter().collect();
        // Sized up front: a table of thousands of tools would otherwise be rehashed a dozen times.
        let offered: usize = inputs.iter().map(|input| input.inventory.tools.len()).sum();
        let mut r = Routing {
            warned: previous.warned.clone(),
            tools: Vec::with_capacity(offered),
            tool_index: ToolIndex::with_capacity(previous.tool_index.hasher.clone(), offered),
            ..Routing::default()
        };
        // The place (in config order) of the server whose names are claimed now.
        let mut place = 0;
        let mut prompts = Claims::new("prompt");
        let mut resources = Claims::new("resource");
        let mut templates = Claims::new("template");
        for input in inputs {
            let server = input.server;
            // The block of the table this one replaces when it routed the same inventory: the
            // routes keep their specs and compiled checks.
            let block = previous.blocks.iter().find(|b| b.is_for(server, input.inventory, input.visibility));
            let block = match block {
                Some(block) => block.clone(),
                None => Arc::new(RouteBlock::new(server.clone(), input.visibility, input.inventory.clone())),
            };
            r.blocks.push(block.clone());
            place += 1;
            if let Some(enabled) = &input.filter.allow {
                let offered: HashSet<&str> = input.inventory.tools.iter().map(|t| t.name.as_str()).collect();
                for name in enabled.iter().filter(|name| !offered.contains(name.as_str())) {
                    r.filter_warnings.push(FilterWarning { server: server.to_string(), tool: name.clone() });
                }
            }
            // Every name hashed first, in a loop of its own: the names have left the cache since
            // their pages were decoded, and this loop fetches many at once where the one below,
            // with a route to make between two names, would wait for each in turn.
            let hashes: Vec<u64> = input.inventory.tools.iter().map(|tool| r.tool_index.hash(&tool.name)).collect();
            for ((index, tool), &hash) in input.inventory.tools.iter().enumerate().zip(&hashes) {
                if !input.filter.allows(&tool.name) {
                    r.disabled.entry(tool.name.clone()).or_insert_with(|| server.clone());
                    continue;
                }
                if reserved.contains(tool.name.as_str()) {
                    r.conflicts.push(Conflict {
                        what: "tool",
                        name: tool.name.clone(),
                        server: server.to_string(),
                        kind: ConflictKind::Reserved,
                    });
                    continue;
                }
                // One hash of the name, for this table and the one it replaces.
                let routes = &r.tools;
                if let Some(slot) =
                    r.tool_index.slots.find_mut(hash, |slot| routes[slot.route].tool().name == tool.name)
                {
                    let kind = lost_claim(&mut slot.last, place, routes[slot.route].server());
                    r.conflicts.push(Conflict {
                        what: "tool",
                        name: tool.name.clone(),
                        server: server.to_string(),
                        kind,
                    });
                    continue;
                }
                if previous.routes(hash, &tool.name, &block, index) {
                    r.kept += 1;
                }
                let route = RoutedTool::new(block.clone(), index);
                let ToolIndex { hasher, slots } = &mut r.tool_index;
                let routes = &r.tools;
                slots.insert_unique(hash, ToolSlot { route: routes.len(), last: place }, |slot| {
                    hasher.hash_one(routes[slot.route].tool().name.as_str())
                });
                r.tools.push(route);
            }
            for prompt in input.inventory.prompts.iter() {
                if prompts.claim(place, server, &prompt.name, &mut r.conflicts) {
                    r.prompt_index.insert(prompt.name.clone(), r.prompts.len());
                    r.prompts.push(RoutedPrompt { server: server.clone(), prompt: prompt.clone() });
                }
            }
            for resource in input.inventory.resources.iter() {
                if resources.claim(place, server, &resource.uri, &mut r.conflicts) {
                    r.resource_index.insert(resource.uri.clone(), r.resources.len());
                    r.resources.push(RoutedResource { server: server.clone(), resource: resource.clone() });
                }
            }
            for template in input.inventory.resource_templates.iter() {
                if templates.claim(place, server, &template.uri_template, &mut r.conflicts) {
                    let parsed = match UriTemplate::parse(&template.uri_template) {
                        Ok(t) => Some(Arc::new(t)),
                        Err(error) => {
                            tracing::warn!(server = %server, template = %template.uri_template, %error, "a resource template does not parse; reads are not routed by it");
                            None
                        }
                    };
                    r.templates.push(RoutedTemplate { server: server.clone(), template: template.clone(), parsed });
                }
            }
        }
        r.count();
        r.warn_conflicts(previous);
        r.warn_filters();
        r
    }

    /// Whether this table routes tool `name` (whose hash is `hash`) to tool `index` of
    /// `block`'s inventory.
    fn routes(&self, hash: u64, name: &str, block: &Arc<RouteBlock>, index: usize) -> bool {
        self.tool_index.find(&self.tools, hash, name).is_some_and(|route| self.tools[route].is(block, index))
    }

    /// The routes of `previous` (the table this one replaced) whose tools this table does not
    /// route. Nothing to look through when this table kept every route of `previous` (a server
    /// connected, and no other lost a tool to it).
    pub(crate) fn lost_tools<'a>(&'a self, previous: &'a Routing) -> impl Iterator<Item = &'a RoutedTool> {
        let all_kept = self.kept == previous.tools.len();
        previous.tools.iter().filter(move |route| !all_kept && self.tool(&route.tool().name).is_none())
    }

    /// Count what each server has in the table.
    fn count(&mut self) {
        let servers = (self.tools.iter().map(|t| (0, t.server())))
            .chain(self.prompts.iter().map(|p| (1, &p.server)))
            .chain(self.resources.iter().map(|r| (2, &r.server)))
            .chain(self.templates.iter().map(|t| (3, &t.server)));
        let mut counts: HashMap<Arc<str>, [usize; 4]> = HashMap::new();
        let mut add = |server: &Arc<str>, kind: usize, n: usize| match counts.get_mut(&**server) {
            Some(count) => count[kind] += n,
            None => counts.entry(server.clone()).or_default()[kind] = n,
        };
        // Consecutive entries mostly share a server (its one name): a run of them is counted
        // here and added with one hash of the name, not one for each of thousands of tools.
        let mut run: Option<(usize, &Arc<str>, usize)> = None;
        for (kind, server) in servers {
            match &mut run {
                Some((k, s, n)) if *k == kind && Arc::ptr_eq(s, server) => *n += 1,
                _ => {
                    if let Some((k, s, n)) = run.replace((kind, server, 1)) {
                        add(s, k, n);
                    }
                }
            }
        }
        if let Some((k, s, n)) = run {
            add(s, k, n);
        }
        self.counts = counts;
    }

    /// Log the conflicts that `previous` did not have: a clash is logged once, not at every
    /// rebuild of the table (each server that connects rebuilds it).
    fn warn_conflicts(&self, previous: &Routing) {
        if self.conflicts.is_empty() || !tracing::enabled!(tracing::Level::WARN) {
            return;
        }
        let known: HashSet<&Conflict> = previous.conflicts.iter().collect();
        for conflict in self.conflicts.iter().filter(|c| !known.contains(c)) {
            tracing::warn!("{conflict}");
        }
    }

    /// Logs each filter warning the first time a table of this manager has it.
    fn warn_filters(&self) {
        if self.filter_warnings.is_empty() {
            return;
        }
        let mut warned = self.warned.lock().unwrap_or_else(|p| p.into_inner());
        for warning in &self.filter_warnings {
            if warned.len() < MAX_WARNED && warned.insert(warning.clone()) {
                tracing::warn!(server = %warning.server, tool = %warning.tool, "{warning}");
            }
        }
    }

    /// Names in the servers' `enabled_tools` that the servers do not have, in config order.
    pub fn filter_warnings(&self) -> &[FilterWarning] {
        &self.filter_warnings
    }

    /// The server (the first in config order) whose config disables tool `name`, when no
    /// server routes it.
    pub fn disabled_by(&self, name: &str) -> Option<&Arc<str>> {
        if self.tool(name).is_some() {
            return None;
        }
        self.disabled.get(name)
    }

    /// The error for a call of tool `name` that has no route: [`ManagerError::DisabledTool`]
    /// when a server's config disables it, else [`ManagerError::UnknownTool`].
    pub fn missing_tool(&self, name: &str) -> ManagerError {
        match self.disabled_by(name) {
            Some(server) => ManagerError::DisabledTool { tool: name.to_owned(), server: server.to_string() },
            None => ManagerError::UnknownTool(name.to_owned()),
        }
    }

    /// Every routed tool, in config order.
    pub fn tools(&self) -> &[RoutedTool] {
        &self.tools
    }

    /// The route of tool `name`.
    pub fn tool(&self, name: &str) -> Option<&RoutedTool> {
        self.tool_index.find(&self.tools, self.tool_index.hash(name), name).map(|i| &self.tools[i])
    }

    /// Every routed prompt, in config order.
    pub fn prompts(&self) -> &[RoutedPrompt] {
        &self.prompts
    }

    /// The route of prompt `name`.
    pub fn prompt(&self, name: &str) -> Option<&RoutedPrompt> {
        self.prompt_index.get(name).map(|&i| &self.prompts[i])
    }

    /// Every routed resource, in config order.
    pub fn resources(&self) -> &[RoutedResource] {
        &self.resources
    }

    /// Every routed resource template, in config order.
    pub fn templates(&self) -> &[RoutedTemplate] {
        &self.templates
    }

    /// What was not routed, and why.
    pub fn conflicts(&self) -> &[Conflict] {
        &self.conflicts
    }

    /// The server that serves `uri`: the one listing it as a resource, else the one whose
    /// template matches it most specifically (the first in config order on a tie).
    pub fn resource_server(&self, uri: &str) -> Option<&Arc<str>> {
        if let Some(&i) = self.resource_index.get(uri) {
            return Some(&self.resources[i].server);
        }
        let mut best: Option<(super::template::Specificity, &Arc<str>)> = None;
        for t in &self.templates {
            let Some(parsed) = &t.parsed else { continue };
            if parsed.matches(uri).is_some() {
                let score = parsed.specificity();
                if best.is_none_or(|(s, _)| score > s) {
                    best = Some((score, &t.server));
                }
            }
        }
        best.map(|(_, server)| server)
    }

    /// How many tools, prompts, resources and templates `server` has in the table.
    pub fn counts(&self, server: &str) -> [usize; 4] {
        self.counts.get(server).copied().unwrap_or_default()
    }

    /// [`Routing::counts`] of every server with something routed (counted once, when the
    /// table was built).
    pub fn all_counts(&self) -> std::collections::HashMap<&str, [usize; 4]> {
        self.counts.iter().map(|(server, counts)| (&**server, *counts)).collect()
    }
}

mod route;
#[cfg(test)]
mod tests;
