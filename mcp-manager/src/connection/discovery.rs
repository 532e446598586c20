//! Capability-driven discovery: tools, prompts, resources and templates, all pages, each list
//! bounded in pages, items, bytes and cursor length (see [`super::pagination`]).

use std::any::Any;
use std::sync::Arc;

use mcp_protocol::types::common::{Paginated, PaginatedParams};
use mcp_protocol::types::lifecycle::ServerCapabilities;
use mcp_protocol::types::prompts::{ListPrompts, Prompt};
use mcp_protocol::types::resources::{ListResourceTemplates, ListResources, Resource, ResourceTemplate};
use mcp_protocol::types::tools::{ListTools, Tool};
use mcp_protocol::{Era, RequestMethod};
use mcp_transport::http::params::{ANNOTATION, tool_param_headers};

use super::pagination::{CursorGuard, ListLimits, for_each_page};
use super::{ConnectionError, McpConnection};
use crate::session::{Session, SessionError};

/// A list shared by reference count: cloning one copies no item. It reads as a slice. The
/// `Vec` the pages were decoded into is kept as it is: an `Arc<[T]>` would copy every item into
/// an allocation of its own (for 10,000 tools, two mebibytes written again and their pages
/// faulted in, while the `Vec` is still held).
pub type SharedList<T> = Arc<Vec<T>>;

/// What the owner of a connection makes of one tool while the tools are listed: the manager
/// makes each tool's host spec. Any type, shared; see [`ToolCompanions`].
pub type ToolCompanion = Arc<dyn Any + Send + Sync>;

/// Makes a [`ToolCompanion`] for each tool as its page arrives
/// ([`ConnectionOptions::tool_companions`](super::ConnectionOptions::tool_companions)): a listing
/// asks for its next page before it decodes this one, so that the server prepares the next page
/// while the client works, and the companions are made in that time too. A host that converts
/// every tool it discovers (the manager makes each one's `ToolSpec`) does so while the server is
/// busy, not after the last page. The inventory keeps them, one per tool, in the tools' order
/// ([`Inventory::tool_companions`]).
#[derive(Clone)]
pub struct ToolCompanions(Arc<dyn Fn(&Tool) -> ToolCompanion + Send + Sync>);

impl ToolCompanions {
    /// Companions made by `make`.
    pub fn new(make: impl Fn(&Tool) -> ToolCompanion + Send + Sync + 'static) -> Self {
        ToolCompanions(Arc::new(make))
    }

    /// The companion of `tool`.
    pub fn make(&self, tool: &Tool) -> ToolCompanion {
        (self.0)(tool)
    }
}

impl std::fmt::Debug for ToolCompanions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ToolCompanions(..)")
    }
}

/// Everything a server offers, as discovered.
#[derive(Debug, Clone, Default)]
pub struct Inventory {
    /// Tools. The lists are shared with the connection's cache: an inventory is cheap to take
    /// and to clone.
    pub tools: SharedList<Tool>,
    /// The [`ToolCompanion`] of each tool, same order, when the connection's options make them
    /// (else empty).
    pub tool_companions: SharedList<ToolCompanion>,
    /// Prompts.
    pub prompts: SharedList<Prompt>,
    /// Resources.
    pub resources: SharedList<Resource>,
    /// Resource templates.
    pub resource_templates: SharedList<ResourceTemplate>,
    /// Problems with optional lists: each left its list empty, the connection stays usable.
    pub warnings: Vec<String>,
}

/// A whole list, and how long the server said it may be cached.
#[derive(Debug, Clone)]
pub(crate) struct Listed<T> {
    pub(crate) items: Vec<T>,
    /// The smallest `ttlMs` of its pages, if any page had one.
    pub(crate) ttl_ms: Option<u64>,
    /// The companion of each item (tools only, when the options make them; else empty).
    pub(crate) companions: Vec<ToolCompanion>,
}

impl<T> Listed<T> {
    pub(crate) fn empty() -> Self {
        Listed { items: Vec::new(), ttl_ms: None, companions: Vec::new() }
    }
}

/// Lists what one session's server offers; cheap to clone, usable from background tasks.
#[derive(Clone)]
pub(crate) struct Lister {
    pub(crate) session: Session,
    pub(crate) name: Arc<str>,
    /// The bounds of each list.
    pub(crate) limits: ListLimits,
    pub(crate) modern: bool,
    pub(crate) capabilities: Arc<ServerCapabilities>,
    /// The connection epoch of the session (see `Freshness::begin`).
    pub(crate) epoch: u64,
    /// What is made of each tool as its page arrives.
    pub(crate) companions: Option<ToolCompanions>,
}

impl Lister {
    /// Every page of a list; `sift` sees each page's items as it arrives (while they are still
    /// in the cache) and may drop some.
    async fn list_all<M>(
        &self,
        what: &'static str,
        mut sift: impl FnMut(&mut Vec<<M::Result as Paginated>::Item>),
    ) -> Result<Listed<<M::Result as Paginated>::Item>, ConnectionError>
    where
        M: RequestMethod<Params = PaginatedParams>,
        M::Result: Paginated,
    {
        let guard = CursorGuard::new(&self.name, what, self.limits);
        let mut listed = Listed::empty();
        for_each_page::<M>(&self.session, guard, |page| {
            if let Some(ttl) = page.ttl_ms() {
                listed.ttl_ms = Some(listed.ttl_ms.map_or(ttl, |t| t.min(ttl)));
            }
            let mut items = page.into_items();
            sift(&mut items);
            listed.items.extend(items);
        })
        .await?;
        Ok(listed)
    }

    /// Every tool; in the modern era without the tools whose `x-mcp-header` annotations are
    /// invalid. Each tool kept gets its companion, when the options make them.
    pub(crate) async fn tools(&self) -> Result<Listed<Tool>, ConnectionError> {
        let mut companions = Vec::new();
        let mut listed = self
            .list_all::<ListTools>("tools", |tools| {
                if self.modern {
                    // Most schemas cannot hold an annotation: their text never says
                    // `x-mcp-header`, and they stay unparsed.
                    tools.retain(|tool| {
                        if !tool.input_schema.may_contain(ANNOTATION) {
                            return true;
                        }
                        match tool_param_headers(&tool.input_schema) {
                            Ok(_) => true,
                            Err(why) => {
                                tracing::warn!(server = %self.name, tool = %tool.name, "left out a tool: {why}");
                                false
                            }
                        }
                    });
                }
                if let Some(make) = &self.companions {
                    companions.extend(tools.iter().map(|tool| make.make(tool)));
                }
            })
            .await?;
        listed.companions = companions;
        Ok(listed)
    }

    pub(crate) async fn prompts(&self) -> Result<Listed<Prompt>, ConnectionError> {
        self.list_all::<ListPrompts>("prompts", |_| {}).await
    }

    pub(crate) async fn resources(&self) -> Result<Listed<Resource>, ConnectionError> {
        self.list_all::<ListResources>("resources", |_| {}).await
    }

    pub(crate) async fn templates(&self) -> Result<Listed<ResourceTemplate>, ConnectionError> {
        self.list_all::<ListResourceTemplates>("resource templates", |_| {}).await
    }

    /// The warning for an optional list that failed.
    pub(crate) fn failure(&self, what: &str, error: &ConnectionError) -> String {
        let not_found = matches!(error, ConnectionError::Session(SessionError::Rpc { error, .. }) if error.code == mcp_protocol::ErrorCode::METHOD_NOT_FOUND);
        if not_found {
            format!("server {:?} declares {what} but does not implement listing them", &*self.name)
        } else {
            format!("listing {what} failed: {error}")
        }
    }
}

impl McpConnection {
    /// A lister for the open session.
    pub(crate) async fn lister(&self) -> Result<Lister, ConnectionError> {
        let live = self.live.lock().await;
        let Some(l) = live.as_ref() else {
            return Err(ConnectionError::NotConnected(self.name.clone()));
        };
        if let Some(reason) = l.session.close_reason() {
            return Err(SessionError::Closed { server: Arc::from(self.name.as_str()), reason }.into());
        }
        Ok(self.lister_for(l))
    }

    pub(super) fn lister_for(&self, live: &super::Live) -> Lister {
        Lister {
            session: live.session.clone(),
            name: Arc::from(self.name.as_str()),
            limits: ListLimits {
                max_pages: self.options.max_pages,
                max_items: self.options.max_list_items,
                max_bytes: self.options.max_list_bytes,
            },
            modern: live.server.protocol_version.era() == Some(Era::Modern),
            capabilities: Arc::new(live.server.capabilities.clone()),
            epoch: live.epoch,
            companions: self.options.tool_companions.clone(),
        }
    }

    /// Every tool, across all pages. In the modern era a tool whose `x-mcp-header` annotations
    /// are invalid is left out, with a warning: clients must not use such a tool.
    pub async fn list_all_tools(&self) -> Result<Vec<Tool>, ConnectionError> {
        let mut lister = self.lister().await?;
        // The tools alone: no companions, which only an inventory keeps.
        lister.companions = None;
        Ok(lister.tools().await?.items)
    }

    /// Every prompt, across all pages.
    pub async fn list_all_prompts(&self) -> Result<Vec<Prompt>, ConnectionError> {
        Ok(self.lister().await?.prompts().await?.items)
    }

    /// Every resource, across all pages.
    pub async fn list_all_resources(&self) -> Result<Vec<Resource>, ConnectionError> {
        Ok(self.lister().await?.resources().await?.items)
    }

    /// Every resource template, across all pages.
    pub async fn list_all_resource_templates(&self) -> Result<Vec<ResourceTemplate>, ConnectionError> {
        Ok(self.lister().await?.templates().await?.items)
    }
}
