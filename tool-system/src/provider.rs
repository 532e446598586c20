//! The [`ToolProvider`] trait: a source of tools (native functions, an MCP server, a plugin) and
//! its [`ToolError`].

use std::sync::Arc;

use futures::future::BoxFuture;

use crate::{ToolExecutionContext, ToolExecutionResult, ToolInvocation, ToolSpec};

/// Why a provider could not list its tools.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ToolError {
    /// The provider cannot serve right now (a server that is down, still starting, ...).
    #[error("tool provider `{provider}` is unavailable: {reason}")]
    Unavailable {
        /// The provider's name.
        provider: String,
        /// Why.
        reason: String,
    },
    /// Listing failed.
    #[error("tool provider `{provider}` could not list its tools: {message}")]
    List {
        /// The provider's name.
        provider: String,
        /// What went wrong.
        message: String,
    },
    /// The provider was closed.
    #[error("tool provider `{provider}` is closed")]
    Closed {
        /// The provider's name.
        provider: String,
    },
}

impl ToolError {
    /// An [`Unavailable`](Self::Unavailable) error.
    pub fn unavailable(provider: impl Into<String>, reason: impl Into<String>) -> Self {
        Self::Unavailable { provider: provider.into(), reason: reason.into() }
    }

    /// A [`List`](Self::List) error.
    pub fn list(provider: impl Into<String>, message: impl Into<String>) -> Self {
        Self::List { provider: provider.into(), message: message.into() }
    }

    /// A [`Closed`](Self::Closed) error.
    pub fn closed(provider: impl Into<String>) -> Self {
        Self::Closed { provider: provider.into() }
    }
}

/// A source of tools. The trait is object-safe: a [`ToolRegistry`](crate::ToolRegistry) holds
/// `Arc<dyn ToolProvider>`s of mixed kinds.
///
/// Implementations report failures as data: `invoke` returns a failed [`ToolExecutionResult`]
/// rather than panicking, and `list_tools` returns a [`ToolError`].
pub trait ToolProvider: Send + Sync + 'static {
    /// The provider's name, unique within a registry (registering another provider under the
    /// same name replaces this one).
    fn name(&self) -> &str;

    /// The kind of provider, such as `native` or `mcp`.
    fn provider_type(&self) -> &str;

    /// The tools the provider offers in `ctx`. Names are the provider's own; the registry
    /// derives the names the LLM sees. Specs are shared: a provider that keeps its specs hands
    /// out the same `Arc`s on every listing, and the registry copies none of them.
    fn list_tools(&self, ctx: &ToolExecutionContext) -> BoxFuture<'_, Result<Vec<Arc<ToolSpec>>, ToolError>>;

    /// Runs one tool. `invocation.tool_name` is the provider's own name of the tool. An unknown
    /// tool, bad arguments or a failure of the tool give a failed result.
    fn invoke(&self, invocation: ToolInvocation, ctx: ToolExecutionContext) -> BoxFuture<'_, ToolExecutionResult>;

    /// Releases what the provider holds (connections, processes). The registry calls it when
    /// the provider is replaced, unregistered or the registry is closed. The default does nothing.
    fn close(&self) -> BoxFuture<'_, ()> {
        Box::pin(std::future::ready(()))
    }

    /// A number that changes whenever the provider's tool list may have changed (the MCP adapter
    /// returns its inventory's change counter). The registry compares it with the value seen at
    /// its last listing and lists again when it differs, so a provider need not tell the
    /// registry about changes. It must be cheap: the registry reads it on every call. The default
    /// is a constant (the list never changes unless
    /// [`ToolRegistry::invalidate`](crate::ToolRegistry::invalidate) is called).
    fn revision(&self) -> u64 {
        0
    }

    /// A signal that changes with [`revision`](Self::revision), for providers whose list
    /// changes on its own (the MCP adapter: a server connected, was lost or changed its lists),
    /// so that [`ToolRegistry::subscribe_changes`](crate::ToolRegistry::subscribe_changes) wakes
    /// without polling. Called when the provider is registered; it must be cheap and must not
    /// call the registry. The default is `None`: no changes of its own to report.
    fn revision_changes(&self) -> Option<tokio::sync::watch::Receiver<u64>> {
        None
    }
}

impl<P: ToolProvider + ?Sized> ToolProvider for Arc<P> {
    fn name(&self) -> &str {
        (**self).name()
    }

    fn provider_type(&self) -> &str {
        (**self).provider_type()
    }

    fn list_tools(&self, ctx: &ToolExecutionContext) -> BoxFuture<'_, Result<Vec<Arc<ToolSpec>>, ToolError>> {
        (**self).list_tools(ctx)
    }

    fn invoke(&self, invocation: ToolInvocation, ctx: ToolExecutionContext) -> BoxFuture<'_, ToolExecutionResult> {
        (**self).invoke(invocation, ctx)
    }

    fn close(&self) -> BoxFuture<'_, ()> {
        (**self).close()
    }

    fn revision(&self) -> u64 {
        (**self).revision()
    }

    fn revision_changes(&self) -> Option<tokio::sync::watch::Receiver<u64>> {
        (**self).revision_changes()
    }
}
