//! A routed tool: [`RoutedTool`], a handle into the [`RouteBlock`] of its server's inventory.
//!
//! A table routes every tool of every server, right after the last page of a listing, when
//! the tools have left the cache: one allocation per tool there (a route of its own) cost more
//! than the rest of the table. So the routes of one inventory share one block, which holds what
//! they have in common and a slot for each tool's state; the state (compiled schema checks, the
//! origin of the last result, a spec made here) is made when the tool is first called, and
//! most of the tools a host routes never are.

use std::fmt;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use mcp_protocol::ProtocolVersion;
use mcp_protocol::types::meta::JsonObject;
use mcp_protocol::types::tools::Tool;
use tool_system::{ResultOrigin, SharedText, ToolSpec, ToolVisibility};

use super::super::convert::{SchemaCheck, tool_spec};
use crate::connection::Inventory;

/// The routes of one server's inventory: what they share, and a slot for each tool's state. A
/// rebuild of the table keeps the block of an inventory it routes again from the same server
/// with the same visibility, and with it every state made so far.
pub(super) struct RouteBlock {
    /// The server's name.
    server: Arc<str>,
    /// The server's name as its tools' specs hold it (their namespace): one buffer for all of
    /// them.
    namespace: SharedText,
    /// Offered directly or through tool search (the server's setting).
    visibility: ToolVisibility,
    /// The inventory the tools are in (shared, not copied: a rebuild of the table clones no
    /// tool).
    inventory: Arc<Inventory>,
    /// Whether the specs made as the inventory's tools were listed are this block's: made for
    /// its server (as namespace) and visibility (a config reload may have changed either
    /// since). One maker made them all, with the same server and visibility, so the first says
    /// it for every one.
    takes_made_specs: bool,
    /// One slot per tool of the inventory, routed or not, filled at the tool's first call; the
    /// slots themselves are made at the first call of any of the inventory's tools (a server
    /// whose tools all lose their names to an earlier server's never gets any).
    states: OnceLock<Box<[OnceLock<Box<RouteState>>]>>,
}

/// The size of a tool's slot in its block.
#[cfg(test)]
pub(super) const STATE_SLOT_SIZE: usize = size_of::<OnceLock<Box<RouteState>>>();

/// What a route keeps once its tool is called.
#[derive(Debug, Default)]
struct RouteState {
    input_check: OnceLock<Option<Arc<SchemaCheck>>>,
    output_check: OnceLock<Option<Arc<SchemaCheck>>>,
    /// The host-side spec, when the listing made none for this route (see
    /// [`RoutedTool::spec`]).
    spec: OnceLock<Arc<ToolSpec>>,
    /// The origin of the tool's last result: its texts are shared by the next results of the
    /// same session, so that a call's origin costs no allocation.
    origin: Mutex<Option<ResultOrigin>>,
}

impl RouteBlock {
    pub(super) fn new(server: Arc<str>, visibility: ToolVisibility, inventory: Arc<Inventory>) -> Self {
        let companions = &inventory.tool_companions;
        let takes_made_specs = companions.len() == inventory.tools.len()
            && companions
                .iter()
                .find_map(|companion| companion.downcast_ref::<ToolSpec>())
                .is_some_and(|made| made.visibility == visibility && made.namespace.as_deref() == Some(&*server));
        RouteBlock {
            namespace: SharedText::from(&*server),
            server,
            visibility,
            inventory,
            takes_made_specs,
            states: OnceLock::new(),
        }
    }

    /// Whether this block routes `inventory` for `server` with `visibility`.
    pub(super) fn is_for(&self, server: &str, inventory: &Arc<Inventory>, visibility: ToolVisibility) -> bool {
        Arc::ptr_eq(&self.inventory, inventory) && self.visibility == visibility && *self.server == *server
    }
}

impl fmt::Debug for RouteBlock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Not the inventory: a table's Debug would print every tool of every server.
        let states = self.states.get().map_or(&[][..], |states| &states[..]);
        let called = states.iter().filter(|state| state.get().is_some()).count();
        f.debug_struct("RouteBlock")
            .field("server", &self.server)
            .field("visibility", &self.visibility)
            .field("tools", &self.inventory.tools.len())
            .field("takes_made_specs", &self.takes_made_specs)
            .field("called", &called)
            .finish()
    }
}

/// A tool and the server that owns it: a handle (a reference to the block of its server's
/// inventory and the tool's place in it), cheap to clone.
#[derive(Clone)]
pub struct RoutedTool {
    block: Arc<RouteBlock>,
    /// The tool's place in the inventory (32 bits: a host keeps a route for every tool).
    index: u32,
}

impl fmt::Debug for RoutedTool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RoutedTool")
            .field("server", &self.block.server)
            .field("tool", &self.tool().name)
            .field("visibility", &self.block.visibility)
            .finish()
    }
}

impl RoutedTool {
    /// The route of tool `index` of `block`'s inventory.
    pub(super) fn new(block: Arc<RouteBlock>, index: usize) -> Self {
        RoutedTool { block, index: u32::try_from(index).expect("an inventory holds fewer than 2^32 tools") }
    }

    /// Whether this is the route of tool `index` of `block`'s inventory.
    pub(super) fn is(&self, block: &Arc<RouteBlock>, index: usize) -> bool {
        Arc::ptr_eq(&self.block, block) && self.index as usize == index
    }

    /// Whether `self` and `other` are the same route: the same tool of the same block.
    #[cfg(test)]
    pub(crate) fn same_as(&self, other: &RoutedTool) -> bool {
        other.is(&self.block, self.index as usize)
    }

    /// Whether the slots of the block's states were made (at the first call of any of its
    /// tools).
    #[cfg(test)]
    pub(crate) fn block_has_slots(&self) -> bool {
        self.block.states.get().is_some()
    }

    /// Whether the tool's state was made (by a call, or a spec made here).
    #[cfg(test)]
    pub(crate) fn has_state(&self) -> bool {
        self.block.states.get().is_some_and(|states| states[self.index as usize].get().is_some())
    }

    /// The name of the tool's server.
    pub fn server(&self) -> &Arc<str> {
        &self.block.server
    }

    /// Whether the tool is offered directly or through tool search (its server's setting).
    pub fn visibility(&self) -> ToolVisibility {
        self.block.visibility
    }

    /// The tool as the server described it.
    pub fn tool(&self) -> &Tool {
        &self.block.inventory.tools[self.index as usize]
    }

    /// The tool's state, made at the first ask.
    fn state(&self) -> &RouteState {
        let tools = self.block.inventory.tools.len();
        let states = self.block.states.get_or_init(|| std::iter::repeat_with(OnceLock::new).take(tools).collect());
        states[self.index as usize].get_or_init(Box::default)
    }

    /// The tool as a host-side `ToolSpec` (provider `mcp`, namespace: the server): the one made
    /// as the tool was listed, when the connection made specs then (the manager's do), else
    /// one made here at the first ask and kept.
    ///
    /// The spec made at listing is looked up here, not when the table is built: a table of
    /// thousands of routes is built right after the last page, when the specs have left the
    /// cache, and the registry's listing that asks for them reads them anyway.
    pub fn spec(&self) -> Arc<ToolSpec> {
        if let Some(made) = self.made_spec() {
            return made;
        }
        let RouteBlock { namespace, visibility, .. } = &*self.block;
        self.state().spec.get_or_init(|| Arc::new(tool_spec(namespace.clone(), self.tool(), *visibility))).clone()
    }

    /// The spec made as the tool was listed, when it is this route's (see
    /// [`RouteBlock::takes_made_specs`]).
    fn made_spec(&self) -> Option<Arc<ToolSpec>> {
        let block = &*self.block;
        let companion = block.inventory.tool_companions.get(self.index as usize)?;
        block.takes_made_specs.then(|| Arc::clone(companion).downcast::<ToolSpec>().ok()).flatten()
    }

    /// The origin of a result of this tool: the server (as namespace) and the tool's name, with
    /// the protocol revision and session of the connection that `served` it, when one did. Kept
    /// for the session that served the last result, whose next results share its texts (one
    /// lock and no allocation a call).
    pub(crate) fn origin(&self, served: Option<(&ProtocolVersion, Option<&str>)>) -> ResultOrigin {
        let mut last = self.state().origin.lock().unwrap_or_else(PoisonError::into_inner);
        let tool = match (last.as_ref(), served) {
            (Some(origin), Some((version, session_id)))
                if origin.protocol_version.as_deref() == Some(version.as_str())
                    && origin.session_id.as_deref() == session_id =>
            {
                return origin.clone();
            }
            (Some(origin), _) => origin.tool.clone(),
            (None, _) => SharedText::from(self.tool().name.as_str()),
        };
        let mut origin = ResultOrigin::new(Some(self.block.namespace.clone()), tool);
        if let Some((version, session_id)) = served {
            origin.protocol_version = Some(SharedText::from(version.as_str()));
            origin.session_id = session_id.map(SharedText::from);
            *last = Some(origin.clone());
        }
        origin
    }

    /// The compiled check of the tool's `inputSchema`; `None` when the schema does not compile
    /// (then arguments are not checked here: the server still checks them). A schema refused as
    /// hostile (see [`SchemaCheck::untrusted`]) gives a check that fails every call.
    pub(crate) fn input_check(&self) -> Option<Arc<SchemaCheck>> {
        self.state()
            .input_check
            .get_or_init(|| compile(self.server(), &self.tool().name, "inputSchema", &self.tool().input_schema))
            .clone()
    }

    /// The compiled check of the tool's `outputSchema`, when it has one that compiles.
    pub(crate) fn output_check(&self) -> Option<Arc<SchemaCheck>> {
        self.state()
            .output_check
            .get_or_init(|| {
                let schema = self.tool().output_schema.as_ref()?;
                compile(self.server(), &self.tool().name, "outputSchema", schema)
            })
            .clone()
    }
}

fn compile(server: &str, tool: &str, which: &str, schema: &JsonObject) -> Option<Arc<SchemaCheck>> {
    // A schema the screening refuses gives a check that fails every value with the reason.
    SchemaCheck::untrusted(server, &format!("the {which} of tool `{tool}`"), schema).map(Arc::new)
}
