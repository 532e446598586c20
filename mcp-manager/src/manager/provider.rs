//! [`McpToolProvider`]: the manager's tools as a `tool_system` provider.

use futures::future::BoxFuture;
use tool_system::{
    AppOrigin, ToolError, ToolExecutionContext, ToolExecutionResult, ToolInvocation, ToolProvider, ToolSpec,
};

use std::sync::Arc;

use super::McpManager;
use crate::session::RequestOptions;

/// Shows every tool the manager routes to a `tool_system::ToolRegistry` (provider name and type
/// `mcp`). Each spec carries its server's name as namespace, so the registry exposes
/// `server__tool`; the provider's own tool names are the MCP names, unique after the manager's
/// conflict rules. Its revision is the manager's routing revision, so the registry lists again
/// whenever a server connects, is lost or changes its lists. `close` closes the manager.
#[derive(Debug, Clone)]
pub struct McpToolProvider {
    manager: McpManager,
    name: String,
}

impl McpToolProvider {
    /// A provider named `mcp` over `manager`.
    pub fn new(manager: McpManager) -> Self {
        McpToolProvider { manager, name: "mcp".to_owned() }
    }

    /// The same provider under another name (to register several managers in one registry).
    pub fn with_name(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }

    /// The origin of the MCP Apps views of server `server` (see [`crate::apps`]): pass it to
    /// [`ToolRegistry::invoke_from_app`](tool_system::ToolRegistry::invoke_from_app) when a view
    /// that server served calls one of its tools.
    pub fn app_origin(&self, server: &str) -> AppOrigin {
        AppOrigin::new(self.name.clone(), Some(server.to_owned()))
    }

    /// The manager behind the provider.
    pub fn manager(&self) -> &McpManager {
        &self.manager
    }

    /// The specs of every routed tool, in config order. Each route makes its spec once; every
    /// listing shares it (a provider renamed with [`McpToolProvider::with_name`] gets copies
    /// naming it).
    pub fn specs(&self) -> Vec<Arc<ToolSpec>> {
        let routing = self.manager.routing();
        routing
            .tools()
            .iter()
            .map(|route| {
                let mut spec = route.spec();
                if spec.provider_name != self.name {
                    Arc::make_mut(&mut spec).provider_name = self.name.clone();
                }
                spec
            })
            .collect()
    }
}

impl ToolProvider for McpToolProvider {
    fn name(&self) -> &str {
        &self.name
    }

    fn provider_type(&self) -> &str {
        "mcp"
    }

    fn list_tools(&self, _ctx: &ToolExecutionContext) -> BoxFuture<'_, Result<Vec<Arc<ToolSpec>>, ToolError>> {
        Box::pin(async move {
            if self.manager.is_closed() {
                return Err(ToolError::closed(&self.name));
            }
            Ok(self.specs())
        })
    }

    fn invoke(&self, invocation: ToolInvocation, _ctx: ToolExecutionContext) -> BoxFuture<'_, ToolExecutionResult> {
        Box::pin(async move {
            self.manager
                .execute_tool(&invocation.tool_name, Some(invocation.arguments), RequestOptions::default())
                .await
        })
    }

    fn close(&self) -> BoxFuture<'_, ()> {
        Box::pin(self.manager.close())
    }

    fn revision(&self) -> u64 {
        self.manager.revision()
    }
}
