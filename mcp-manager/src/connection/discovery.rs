//! Capability-driven discovery: tools, prompts, resources and templates, all pages.

use mcp_protocol::types::common::PaginatedParams;
use mcp_protocol::types::prompts::{ListPrompts, Prompt};
use mcp_protocol::types::resources::{ListResourceTemplates, ListResources, Resource, ResourceTemplate};
use mcp_protocol::types::tools::{ListTools, Tool};
use mcp_protocol::{Era, ErrorCode, RequestMethod};
use mcp_transport::http::params::tool_param_headers;

use super::pagination::{CursorGuard, Page};
use super::{ConnectionError, McpConnection};
use crate::session::{RequestOptions, SessionError};

/// Everything a server offers, as discovered.
#[derive(Debug, Clone, Default)]
pub struct Inventory {
    /// Tools.
    pub tools: Vec<Tool>,
    /// Prompts.
    pub prompts: Vec<Prompt>,
    /// Resources.
    pub resources: Vec<Resource>,
    /// Resource templates.
    pub resource_templates: Vec<ResourceTemplate>,
    /// Problems with optional lists: each left its list empty, the connection stays usable.
    pub warnings: Vec<String>,
}

impl McpConnection {
    async fn list_all<M>(&self, what: &'static str) -> Result<Vec<<M::Result as Page>::Item>, ConnectionError>
    where
        M: RequestMethod<Params = PaginatedParams>,
        M::Result: Page,
    {
        let session = self.session().await?;
        let mut guard = CursorGuard::new(self.name(), what, self.options.max_pages);
        let mut items = Vec::new();
        let mut cursor = None;
        loop {
            let params = PaginatedParams { cursor: cursor.take(), ..Default::default() };
            let page = session.request::<M>(&params, RequestOptions::default()).await?;
            let next = guard.next(page.next_cursor())?;
            items.extend(page.into_items());
            match next {
                Some(c) => cursor = Some(c),
                None => return Ok(items),
            }
        }
    }

    /// Every tool, across all pages. In the modern era a tool whose `x-mcp-header` annotations
    /// are invalid is left out, with a warning: clients must not use such a tool.
    pub async fn list_all_tools(&self) -> Result<Vec<Tool>, ConnectionError> {
        let mut tools = self.list_all::<ListTools>("tools").await?;
        let modern = self.server_info().await.is_some_and(|s| s.protocol_version.era() == Some(Era::Modern));
        if modern {
            tools.retain(|tool| match tool_param_headers(&tool.input_schema) {
                Ok(_) => true,
                Err(why) => {
                    tracing::warn!(server = %self.name(), tool = %tool.name, "left out a tool: {why}");
                    false
                }
            });
        }
        Ok(tools)
    }

    /// Every prompt, across all pages.
    pub async fn list_all_prompts(&self) -> Result<Vec<Prompt>, ConnectionError> {
        self.list_all::<ListPrompts>("prompts").await
    }

    /// Every resource, across all pages.
    pub async fn list_all_resources(&self) -> Result<Vec<Resource>, ConnectionError> {
        self.list_all::<ListResources>("resources").await
    }

    /// Every resource template, across all pages.
    pub async fn list_all_resource_templates(&self) -> Result<Vec<ResourceTemplate>, ConnectionError> {
        self.list_all::<ListResourceTemplates>("resource templates").await
    }

    /// Discover what the server offers, as its capabilities declare: tools first (a failure
    /// there is an error), then prompts, resources and templates concurrently. A failed optional
    /// list is empty and reported in [`Inventory::warnings`]; METHOD_NOT_FOUND on one is only a
    /// warning too.
    pub async fn discover(&self) -> Result<Inventory, ConnectionError> {
        let server = self.server_info().await.ok_or_else(|| ConnectionError::NotConnected(self.name.clone()))?;
        let caps = &server.capabilities;
        let mut inventory = Inventory::default();
        if caps.tools.is_some() {
            inventory.tools = self.list_all_tools().await?;
        }
        let (prompts, resources, templates) = tokio::join!(
            optional(caps.prompts.is_some(), self.list_all_prompts()),
            optional(caps.resources.is_some(), self.list_all_resources()),
            optional(caps.resources.is_some(), self.list_all_resource_templates()),
        );
        inventory.prompts = self.keep(prompts, "prompts", &mut inventory.warnings);
        inventory.resources = self.keep(resources, "resources", &mut inventory.warnings);
        inventory.resource_templates = self.keep(templates, "resource templates", &mut inventory.warnings);
        Ok(inventory)
    }

    fn keep<T>(&self, result: Result<Vec<T>, ConnectionError>, what: &str, warnings: &mut Vec<String>) -> Vec<T> {
        match result {
            Ok(items) => items,
            Err(e) => {
                let not_found = matches!(&e, ConnectionError::Session(SessionError::Rpc { error, .. }) if error.code == ErrorCode::METHOD_NOT_FOUND);
                let message = if not_found {
                    format!("server {:?} declares {what} but does not implement listing them", self.name())
                } else {
                    format!("listing {what} failed: {e}")
                };
                tracing::warn!(server = %self.name(), "{message}");
                warnings.push(message);
                Vec::new()
            }
        }
    }
}

async fn optional<T>(
    wanted: bool,
    list: impl std::future::Future<Output = Result<Vec<T>, ConnectionError>>,
) -> Result<Vec<T>, ConnectionError> {
    if wanted { list.await } else { Ok(Vec::new()) }
}
