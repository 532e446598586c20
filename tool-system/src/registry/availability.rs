//! Which tools a caller may see and call: the host's [`ToolAvailability`] rule, applied per call.

use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use crate::{ExposedTool, ToolExecutionContext};

/// A host's rule of which tools are available in a context (to a user, a session, a platform).
///
/// Set it with [`ToolRegistry::set_availability`](crate::ToolRegistry::set_availability). The
/// registry applies it to every listing for a context ([`tools`](crate::ToolRegistry::tools),
/// [`llm_tools`](crate::ToolRegistry::llm_tools), the LLM definitions, `tool_search` results,
/// [`app_tools`](crate::ToolRegistry::app_tools)) and to every call: a tool the rule hides is
/// not callable, and the failed result says only that it is not available to this caller.
///
/// The rule runs for each tool of each listing, so keep it quick; it must not block. A rule that
/// panics hides the tool (with a warning): a broken rule never shows what it meant to hide.
///
/// Any `Fn(&ExposedTool, &ToolExecutionContext) -> bool + Send + Sync` is a rule:
///
/// ```
/// use tool_system::{ExposedTool, ToolExecutionContext, ToolRegistry};
///
/// let registry = ToolRegistry::new();
/// // Only admins see the `admin` server's tools.
/// registry.set_availability(|tool: &ExposedTool, ctx: &ToolExecutionContext| {
///     tool.spec.namespace.as_deref() != Some("admin") || ctx.extra.get("role").is_some_and(|r| r == "admin")
/// });
/// ```
pub trait ToolAvailability: Send + Sync + 'static {
    /// Whether `tool` is available to the caller of `ctx`.
    fn is_available(&self, tool: &ExposedTool, ctx: &ToolExecutionContext) -> bool;
}

impl<F> ToolAvailability for F
where
    F: Fn(&ExposedTool, &ToolExecutionContext) -> bool + Send + Sync + 'static,
{
    fn is_available(&self, tool: &ExposedTool, ctx: &ToolExecutionContext) -> bool {
        self(tool, ctx)
    }
}

/// The rule bound to one call's context.
pub(crate) struct Gate<'a> {
    rule: Option<Arc<dyn ToolAvailability>>,
    ctx: &'a ToolExecutionContext,
}

impl<'a> Gate<'a> {
    pub(crate) fn new(rule: Option<Arc<dyn ToolAvailability>>, ctx: &'a ToolExecutionContext) -> Self {
        Self { rule, ctx }
    }

    /// Whether every tool passes (no rule set).
    pub(crate) fn is_open(&self) -> bool {
        self.rule.is_none()
    }

    /// Whether `tool` is available to this caller.
    pub(crate) fn allows(&self, tool: &ExposedTool) -> bool {
        let Some(rule) = &self.rule else { return true };
        match std::panic::catch_unwind(AssertUnwindSafe(|| rule.is_available(tool, self.ctx))) {
            Ok(available) => available,
            Err(_) => {
                tracing::warn!(tool = %tool.llm_name, "the tool availability rule panicked; the tool is hidden");
                false
            }
        }
    }
}
