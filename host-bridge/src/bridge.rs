//! [`HostBridge`]: everything a host answers servers with, built in one place and handed to the
//! manager as its `HostCallbacks`.

use std::sync::Arc;

use mcp_manager::{ConnectionOptions, HostCallbacks};

use crate::elicitation::{AskUser, ElicitationOptions, HostElicitation};
use crate::llm::LlmClient;
use crate::logging::{HostNotificationSink, LogLevels, NotificationCallback};
use crate::roots::Roots;
use crate::sampling::{HostLlmBridge, SamplingApproval, SamplingOptions};

/// The host's answers to servers: sampling, elicitation, roots, and where notifications go.
/// Cheap to clone; clones share their state (rate limits, roots, pending URL elicitations).
#[derive(Clone, Debug)]
pub struct HostBridge {
    sampling: Option<HostLlmBridge>,
    elicitation: Option<HostElicitation>,
    roots: Option<Roots>,
    sink: HostNotificationSink,
    log_levels: LogLevels,
}

/// Builds a [`HostBridge`]; every part is optional, and what is left out is not declared.
#[derive(Default)]
pub struct HostBridgeBuilder {
    llm: Option<(Arc<dyn LlmClient>, SamplingOptions)>,
    approval: Option<Arc<dyn SamplingApproval>>,
    ask: Option<Arc<dyn AskUser>>,
    elicitation_options: ElicitationOptions,
    roots: Option<Roots>,
    callback: Option<NotificationCallback>,
    log_levels: LogLevels,
}

impl std::fmt::Debug for HostBridgeBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HostBridgeBuilder")
            .field("llm", &self.llm.as_ref().map(|(llm, options)| (llm.default_model().to_owned(), options)))
            .field("approval", &self.approval.is_some())
            .field("elicitation", &self.ask.is_some())
            .field("roots", &self.roots)
            .field("callback", &self.callback.is_some())
            .field("log_levels", &self.log_levels)
            .finish()
    }
}

impl HostBridgeBuilder {
    /// Answer sampling with `llm`. Sampling is declared only when `options.enabled`, with
    /// `sampling.tools` only when `options.tool_support`.
    pub fn llm(mut self, llm: Arc<dyn LlmClient>, options: SamplingOptions) -> Self {
        self.llm = Some((llm, options));
        self
    }

    /// Let the host review each sampling request and result.
    pub fn approval(mut self, approval: Arc<dyn SamplingApproval>) -> Self {
        self.approval = Some(approval);
        self
    }

    /// Answer elicitation through `ask` (the host's UI, or an [`ElicitationPolicy`]).
    ///
    /// [`ElicitationPolicy`]: crate::ElicitationPolicy
    pub fn elicitation(mut self, ask: Arc<dyn AskUser>) -> Self {
        self.ask = Some(ask);
        self
    }

    /// How elicitation answers are completed and checked.
    pub fn elicitation_options(mut self, options: ElicitationOptions) -> Self {
        self.elicitation_options = options;
        self
    }

    /// Offer these roots.
    pub fn roots(mut self, roots: Roots) -> Self {
        self.roots = Some(roots);
        self
    }

    /// Also give every server notification to `callback`.
    pub fn on_notification(mut self, callback: NotificationCallback) -> Self {
        self.callback = Some(callback);
        self
    }

    /// The log level to request from each server.
    pub fn log_levels(mut self, levels: LogLevels) -> Self {
        self.log_levels = levels;
        self
    }

    /// The bridge.
    pub fn build(self) -> HostBridge {
        let sampling = self
            .llm
            .filter(|(_, options)| options.enabled)
            .map(|(llm, options)| HostLlmBridge::with_approval(llm, options, self.approval));
        let elicitation = self.ask.map(|ask| HostElicitation::with_options(ask, self.elicitation_options));
        let mut sink = HostNotificationSink::new();
        if let Some(callback) = self.callback {
            sink = sink.with_callback(callback);
        }
        if let Some(elicitation) = &elicitation {
            sink = sink.with_elicitation(elicitation.clone());
        }
        HostBridge { sampling, elicitation, roots: self.roots, sink, log_levels: self.log_levels }
    }
}

impl HostBridge {
    /// Start building.
    pub fn builder() -> HostBridgeBuilder {
        HostBridgeBuilder::default()
    }

    /// The manager's callbacks. The client capabilities they declare follow what was built:
    /// sampling (with tools or not), elicitation (form, and URL when the UI supports it), roots
    /// (with list_changed).
    pub fn callbacks(&self) -> HostCallbacks {
        HostCallbacks {
            sampling: self.sampling.clone().map(|s| Arc::new(s) as _),
            elicitation: self.elicitation.clone().map(|e| Arc::new(e) as _),
            roots: self.roots.clone().map(|r| Arc::new(r) as _),
            notifications: Some(Arc::new(self.sink.clone())),
        }
    }

    /// Connection options for `server`: the defaults, with these callbacks and the server's log
    /// level.
    pub fn connection_options(&self, server: &str) -> ConnectionOptions {
        let mut options = ConnectionOptions::new(server);
        self.apply(&mut options);
        options
    }

    /// Put these callbacks, and the log level of the server the options name, into `options`.
    pub fn apply(&self, options: &mut ConnectionOptions) {
        options.callbacks = self.callbacks();
        if let Some(level) = self.log_levels.level_for(&options.session.name) {
            options.log_level = Some(level);
        }
    }

    /// The sampling handler, when sampling is enabled.
    pub fn sampling(&self) -> Option<&HostLlmBridge> {
        self.sampling.as_ref()
    }

    /// The elicitation handler, when there is one.
    pub fn elicitation(&self) -> Option<&HostElicitation> {
        self.elicitation.as_ref()
    }

    /// The roots, when there are some: change them here at run time.
    pub fn roots(&self) -> Option<&Roots> {
        self.roots.as_ref()
    }

    /// The log levels to request.
    pub fn log_levels(&self) -> &LogLevels {
        &self.log_levels
    }
}

#[cfg(test)]
mod tests {
    use mcp_protocol::types::logging::LoggingLevel;
    use mcp_protocol::types::roots::Root;

    use super::*;
    use crate::elicitation::{ElicitationPolicy, ScriptedElicitation};
    use crate::llm::ScriptedLlm;

    fn llm() -> Arc<dyn LlmClient> {
        Arc::new(ScriptedLlm::new("m"))
    }

    #[test]
    fn capabilities_follow_what_was_built() {
        let caps = HostBridge::builder().build().callbacks().capabilities();
        assert!(caps.sampling.is_none() && caps.elicitation.is_none() && caps.roots.is_none(), "{caps:?}");

        let bridge = HostBridge::builder()
            .llm(llm(), SamplingOptions::default())
            .elicitation(Arc::new(ElicitationPolicy::DeclineAll))
            .roots(Roots::new([Root::new("file:///p", None)]).unwrap())
            .build();
        let caps = bridge.callbacks().capabilities();
        let sampling = caps.sampling.expect("sampling declared");
        assert!(sampling.tools.is_none(), "tool support is off by default");
        let elicitation = caps.elicitation.expect("elicitation declared");
        assert!(elicitation.form.is_some() && elicitation.url.is_none());
        assert_eq!(caps.roots.and_then(|r| r.list_changed), Some(true));

        let bridge = HostBridge::builder()
            .llm(llm(), SamplingOptions { tool_support: true, ..Default::default() })
            .elicitation(Arc::new(ScriptedElicitation::with_url()))
            .build();
        let caps = bridge.callbacks().capabilities();
        assert!(caps.sampling.and_then(|s| s.tools).is_some(), "sampling.tools declared");
        assert!(caps.elicitation.and_then(|e| e.url).is_some(), "elicitation.url declared");

        let disabled =
            HostBridge::builder().llm(llm(), SamplingOptions { enabled: false, ..Default::default() }).build();
        assert!(disabled.callbacks().capabilities().sampling.is_none(), "disabled sampling is not declared");
        assert!(disabled.sampling().is_none());
    }

    #[test]
    fn connection_options_carry_callbacks_and_the_log_level() {
        let bridge = HostBridge::builder()
            .log_levels(LogLevels::default().with_server("chatty", LoggingLevel::Debug))
            .roots(Roots::new([]).unwrap())
            .build();
        let options = bridge.connection_options("chatty");
        assert_eq!(options.log_level, Some(LoggingLevel::Debug));
        assert!(options.callbacks.roots.is_some() && options.callbacks.notifications.is_some());
        assert_eq!(bridge.connection_options("quiet").log_level, None);
        assert!(format!("{:?}", HostBridge::builder().llm(llm(), SamplingOptions::default())).contains("\"m\""));
    }
}
