//! Tools that left the listing, remembered (a bounded number) so that a call of one still
//! reaches the provider that offered it, which can say why it is gone: the MCP provider answers
//! that the tool's server is reconnecting rather than the registry's "unknown tool".

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

use super::snapshot::Snapshot;
use crate::{ExposedTool, SharedText, ToolProvider};

/// The most former tools remembered; the oldest are forgotten first.
pub(super) const MAX_FORMER_TOOLS: usize = 4096;

/// Exposed name -> the tool as it was last listed and the provider that offered it.
#[derive(Default)]
pub(super) struct FormerTools {
    tools: HashMap<SharedText, (ExposedTool, Arc<dyn ToolProvider>)>,
    /// Names in the order they left, for the bound.
    order: VecDeque<SharedText>,
}

impl FormerTools {
    /// Remembers the tools of `old` that `new` no longer lists, and forgets those `new` lists.
    pub(super) fn update(&mut self, old: &Snapshot, new: &Snapshot) {
        if !self.tools.is_empty() {
            self.tools.retain(|name, _| new.exposes(name).is_none());
            let tools = &self.tools;
            self.order.retain(|name| tools.contains_key(name));
        }
        for (index, tool) in old.tools.iter().enumerate() {
            if new.exposes(&tool.llm_name).is_some() || self.tools.contains_key(tool.llm_name.as_str()) {
                continue;
            }
            self.tools.insert(tool.llm_name.clone(), (tool.clone(), Arc::clone(old.provider(index))));
            self.order.push_back(tool.llm_name.clone());
            while self.order.len() > MAX_FORMER_TOOLS {
                if let Some(oldest) = self.order.pop_front() {
                    self.tools.remove(&oldest);
                }
            }
        }
    }

    /// The tool last listed as `llm_name`, if it left and its provider is one of `providers`
    /// (a provider that was removed is closed and never called).
    pub(super) fn get(
        &self,
        llm_name: &str,
        providers: &[Arc<dyn ToolProvider>],
    ) -> Option<(ExposedTool, Arc<dyn ToolProvider>)> {
        let (tool, provider) = self.tools.get(llm_name)?;
        providers.iter().any(|p| Arc::ptr_eq(p, provider)).then(|| (tool.clone(), Arc::clone(provider)))
    }

    /// Forgets every tool.
    pub(super) fn clear(&mut self) {
        self.tools.clear();
        self.order.clear();
    }
}
