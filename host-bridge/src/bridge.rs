//! [`HostBridge`]: everything a host answers servers with, built in one place and handed to the
//! manager as its `HostCallbacks`.

use std::sync::Arc;

use mcp_manager::config::ClientConfig;
use mcp_manager::{ConnectionOptions, HostCallbacks};
use mcp_protocol::types::roots::Root;
use mcp_protocol::types::ui::UiClientCapabilities;

use crate::elicitation::{AskUser, ElicitationOptions, HostElicitation};
use crate::llm::LlmClient;
use crate::logging::{HostNotificationSink, LogLevels, NotificationCallback};
use crate::roots::{Roots, RootsError};
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
    apps: Option<UiClientCapabilities>,
}

/// Builds a [`HostBridge`]; every part is optional, and what is left out is not declared.
/// When a setter is called twice, the last call wins.
pub struct HostBridgeBuilder {
    llm: Option<Arc<dyn LlmClient>>,
    sampling_options: SamplingOptions,
    approval: Option<Arc<dyn SamplingApproval>>,
    ask: Option<Arc<dyn AskUser>>,
    elicitation_options: ElicitationOptions,
    /// False when the host's settings turn elicitation off, whatever handler is given.
    elicitation_enabled: bool,
    roots: Option<Roots>,
    callback: Option<NotificationCallback>,
    log_levels: LogLevels,
    apps: Option<UiClientCapabilities>,
}

impl Default for HostBridgeBuilder {
    fn default() -> Self {
        HostBridgeBuilder {
            llm: None,
            sampling_options: SamplingOptions::default(),
            approval: None,
            ask: None,
            elicitation_options: ElicitationOptions::default(),
            elicitation_enabled: true,
            roots: None,
            callback: None,
            log_levels: LogLevels::default(),
            apps: None,
        }
    }
}

impl std::fmt::Debug for HostBridgeBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HostBridgeBuilder")
            .field("llm", &self.llm.as_ref().map(|llm| llm.default_model().to_owned()))
            .field("sampling_options", &self.sampling_options)
            .field("approval", &self.approval.is_some())
            .field("elicitation", &self.ask.is_some())
            .field("elicitation_options", &self.elicitation_options)
            .field("elicitation_enabled", &self.elicitation_enabled)
            .field("roots", &self.roots)
            .field("callback", &self.callback.is_some())
            .field("log_levels", &self.log_levels)
            .field("apps", &self.apps)
            .finish()
    }
}

impl HostBridgeBuilder {
    /// Answer sampling with `llm`. Sampling is declared only when `options.enabled`, with
    /// `sampling.tools` only when `options.tool_support`.
    pub fn llm(mut self, llm: Arc<dyn LlmClient>, options: SamplingOptions) -> Self {
        self.llm = Some(llm);
        self.sampling_options = options;
        self
    }

    /// Answer sampling with `llm`, under the sampling options set so far (by
    /// [`HostBridgeBuilder::client_config`] or [`HostBridgeBuilder::sampling_options`]; the
    /// defaults otherwise).
    pub fn llm_client(mut self, llm: Arc<dyn LlmClient>) -> Self {
        self.llm = Some(llm);
        self
    }

    /// How sampling behaves; it is offered only once an LLM is given too.
    pub fn sampling_options(mut self, options: SamplingOptions) -> Self {
        self.sampling_options = options;
        self
    }

    /// Apply the host's client settings (`[mcp.client]` of a config file):
    ///
    /// - the sampling settings become the sampling options (see
    ///   [`SamplingOptions`]'s `From<&SamplingSettings>`); an LLM is still needed
    ///   ([`HostBridgeBuilder::llm_client`]) for sampling to be offered;
    /// - the elicitation settings: `url_mode` becomes [`ElicitationOptions::allow_url`], and
    ///   `enabled = false` leaves elicitation out, even when a handler is given before or after;
    /// - the roots, when the settings list some, replace the roots given so far (with none
    ///   listed, the roots are left as they are, so a host can offer its own default).
    ///
    /// The sampling token cap is the smaller of the one set so far and the settings' one (a
    /// config can lower a host's cap, never raise it). The settings' `token_parameter`, when
    /// they name one, replaces the host's (see [`crate::TokenParameter`]; it reaches the LLM with
    /// each sampling request). Options the settings do not have (how
    /// elicitation answers are completed and checked) keep their values. Fails when a root is not an absolute `file://` URI
    /// (the error names it). The client's name and version are the manager's business (the
    /// `clientInfo` it sends), not the bridge's.
    pub fn client_config(mut self, config: &ClientConfig) -> Result<Self, RootsError> {
        if !config.roots.is_empty() {
            self.roots = Some(Roots::new(config.roots.iter().map(|uri| Root::new(uri.as_str(), None)))?);
        }
        let from_config = SamplingOptions::from(&config.sampling);
        let max_tokens_cap = match (self.sampling_options.max_tokens_cap, from_config.max_tokens_cap) {
            (Some(host), Some(config)) => Some(host.min(config)),
            (host, config) => host.or(config),
        };
        // A config that names no token parameter leaves the host's choice.
        let token_parameter = from_config.token_parameter.or(self.sampling_options.token_parameter);
        self.sampling_options = SamplingOptions { max_tokens_cap, token_parameter, ..from_config };
        self.elicitation_options.allow_url = config.elicitation.url_mode;
        self.elicitation_enabled = config.elicitation.enabled;
        Ok(self)
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

    /// Declare that the host renders MCP Apps views of `capabilities`' MIME types (usually
    /// [`UiClientCapabilities::html`]). Without it the extension is not claimed; see
    /// `mcp_manager::apps`.
    pub fn apps(mut self, capabilities: UiClientCapabilities) -> Self {
        self.apps = Some(capabilities);
        self
    }

    /// The bridge.
    pub fn build(self) -> HostBridge {
        let options = self.sampling_options;
        let sampling =
            self.llm.filter(|_| options.enabled).map(|llm| HostLlmBridge::with_approval(llm, options, self.approval));
        let elicitation = self
            .ask
            .filter(|_| self.elicitation_enabled)
            .map(|ask| HostElicitation::with_options(ask, self.elicitation_options));
        let mut sink = HostNotificationSink::new();
        if let Some(callback) = self.callback {
            sink = sink.with_callback(callback);
        }
        if let Some(elicitation) = &elicitation {
            sink = sink.with_elicitation(elicitation.clone());
        }
        HostBridge { sampling, elicitation, roots: self.roots, sink, log_levels: self.log_levels, apps: self.apps }
    }
}

impl HostBridge {
    /// Start building.
    pub fn builder() -> HostBridgeBuilder {
        HostBridgeBuilder::default()
    }

    /// The manager's callbacks. The client capabilities they declare follow what was built:
    /// sampling (with tools or not), elicitation (form, and URL when the UI supports it), roots
    /// (with list_changed), MCP Apps when the host renders them.
    pub fn callbacks(&self) -> HostCallbacks {
        HostCallbacks {
            sampling: self.sampling.clone().map(|s| Arc::new(s) as _),
            elicitation: self.elicitation.clone().map(|e| Arc::new(e) as _),
            roots: self.roots.clone().map(|r| Arc::new(r) as _),
            notifications: Some(Arc::new(self.sink.clone())),
            apps: self.apps.clone(),
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

/// The bridge as the manager's callbacks (see [`HostBridge::callbacks`]), so that a host plugs it
/// in with one call: `McpManager::builder().callbacks(&bridge)`.
impl From<&HostBridge> for HostCallbacks {
    fn from(bridge: &HostBridge) -> Self {
        bridge.callbacks()
    }
}

/// See the `From<&HostBridge>` conversion.
impl From<HostBridge> for HostCallbacks {
    fn from(bridge: HostBridge) -> Self {
        bridge.callbacks()
    }
}

#[cfg(test)]
mod tests {
    use mcp_manager::config::{ElicitationSettings, SamplingSettings, TokenParameter};
    use mcp_protocol::types::logging::LoggingLevel;

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
        assert!(caps.extensions.is_none(), "MCP Apps are not claimed by default: {caps:?}");
        let apps = HostBridge::builder().apps(UiClientCapabilities::html()).build().callbacks().capabilities();
        let declared = apps.extensions.and_then(|e| e.get(mcp_protocol::types::ui::UI_EXTENSION).cloned());
        assert_eq!(declared, Some(serde_json::json!({"mimeTypes": [mcp_protocol::types::ui::MCP_APP_MIME_TYPE]})));

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
    fn a_bridge_converts_into_the_callbacks_it_declares() {
        let bridge = HostBridge::builder()
            .llm(llm(), SamplingOptions::default())
            .elicitation(Arc::new(ElicitationPolicy::DeclineAll))
            .build();
        let callbacks: HostCallbacks = (&bridge).into();
        assert!(callbacks.sampling.is_some() && callbacks.elicitation.is_some() && callbacks.roots.is_none());
        assert_eq!(callbacks.capabilities(), bridge.callbacks().capabilities());
        let owned: HostCallbacks = bridge.into();
        assert!(owned.capabilities().sampling.is_some());
    }

    #[test]
    fn sampling_settings_map_onto_options() {
        let settings = SamplingSettings {
            enabled: false,
            tool_support: true,
            requests_per_minute: Some(5),
            default_max_tokens: 77,
            max_tokens_cap: 500,
            models: vec!["a".into(), "b".into()],
            token_parameter: Some(TokenParameter::MaxCompletionTokens),
            ..SamplingSettings::default()
        };
        assert_eq!(
            SamplingOptions::from(&settings),
            SamplingOptions {
                enabled: false,
                tool_support: true,
                requests_per_minute: Some(5),
                default_max_tokens: 77,
                max_tokens_cap: Some(500),
                models: vec!["a".into(), "b".into()],
                token_parameter: Some(TokenParameter::MaxCompletionTokens),
            }
        );
        let defaults = SamplingOptions::from(&SamplingSettings::default());
        assert!(defaults.enabled && !defaults.tool_support);
        assert_eq!(
            (defaults.requests_per_minute, defaults.default_max_tokens, defaults.max_tokens_cap),
            (Some(30), 1024, Some(4096)),
            "a config that says nothing gets a rate limit and a token cap"
        );
        assert_eq!(defaults, SamplingOptions::default(), "the same safe defaults as the options'");
        assert!(defaults.models.is_empty());
    }

    #[test]
    fn elicitation_settings_map_onto_options() {
        let url = ElicitationOptions::from(&ElicitationSettings { enabled: true, url_mode: true });
        assert_eq!(url, ElicitationOptions { allow_url: true, ..Default::default() });
        let form_only = ElicitationOptions::from(&ElicitationSettings::default());
        assert!(!form_only.allow_url, "URL mode is off unless the settings turn it on");
        assert_eq!((form_only.apply_defaults, form_only.max_attempts), (true, 3));
    }

    fn client(roots: &[&str]) -> ClientConfig {
        ClientConfig { roots: roots.iter().map(|r| r.to_string()).collect(), ..Default::default() }
    }

    #[test]
    fn client_config_applies_sampling_elicitation_and_roots() {
        let mut config = client(&["file:///srv/a", "file:///srv/b"]);
        config.sampling.tool_support = true;
        config.sampling.requests_per_minute = Some(3);
        let earlier = Roots::new([Root::new("file:///earlier", None)]).unwrap();
        let bridge = HostBridge::builder()
            .roots(earlier)
            .sampling_options(SamplingOptions { max_tokens_cap: Some(100), ..Default::default() })
            .client_config(&config)
            .unwrap()
            .llm_client(llm())
            .elicitation(Arc::new(ScriptedElicitation::with_url()))
            .build();
        let roots: Vec<String> = bridge.roots().unwrap().list().into_iter().map(|r| r.uri).collect();
        assert_eq!(roots, ["file:///srv/a", "file:///srv/b"], "the configured roots replace earlier ones");
        let options = bridge.sampling().expect("sampling with the LLM").options();
        assert_eq!((options.tool_support, options.requests_per_minute), (true, Some(3)));
        assert_eq!(options.max_tokens_cap, Some(100), "the host's lower cap is kept");
        config.sampling.max_tokens_cap = 50;
        let lowered = HostBridge::builder()
            .sampling_options(SamplingOptions { max_tokens_cap: Some(100), ..Default::default() })
            .client_config(&config)
            .unwrap()
            .llm_client(llm())
            .build();
        let options = lowered.sampling().expect("sampling with the LLM").options();
        assert_eq!(options.max_tokens_cap, Some(50), "the config's lower cap wins");
        // The token parameter: the config's when it names one, else the host's.
        let host = SamplingOptions { token_parameter: Some(TokenParameter::MaxTokens), ..Default::default() };
        let kept = HostBridge::builder().sampling_options(host.clone()).client_config(&config).unwrap();
        assert_eq!(kept.sampling_options.token_parameter, Some(TokenParameter::MaxTokens));
        config.sampling.token_parameter = Some(TokenParameter::MaxCompletionTokens);
        let set = HostBridge::builder().sampling_options(host).client_config(&config).unwrap();
        assert_eq!(set.sampling_options.token_parameter, Some(TokenParameter::MaxCompletionTokens));
        let caps = bridge.callbacks().capabilities();
        assert!(caps.sampling.and_then(|s| s.tools).is_some(), "sampling.tools declared");
        let elicitation = caps.elicitation.expect("elicitation declared");
        assert!(elicitation.url.is_none(), "url_mode is off in the settings, though the UI supports it");

        let fallback = Roots::new([Root::new("file:///cwd", None)]).unwrap();
        let bridge = HostBridge::builder().roots(fallback).client_config(&client(&[])).unwrap().build();
        assert_eq!(bridge.roots().unwrap().list(), [Root::new("file:///cwd", None)], "no roots configured");
        assert!(bridge.sampling().is_none(), "no LLM, no sampling");
    }

    #[test]
    fn disabled_settings_leave_the_capability_out_whatever_the_order() {
        let mut config = client(&[]);
        config.elicitation.enabled = false;
        config.sampling.enabled = false;
        let before = HostBridge::builder()
            .elicitation(Arc::new(ElicitationPolicy::DeclineAll))
            .llm_client(llm())
            .client_config(&config)
            .unwrap()
            .build();
        let after = HostBridge::builder()
            .client_config(&config)
            .unwrap()
            .elicitation(Arc::new(ElicitationPolicy::DeclineAll))
            .llm_client(llm())
            .build();
        for bridge in [before, after] {
            assert!(bridge.elicitation().is_none() && bridge.sampling().is_none(), "{bridge:?}");
            let caps = bridge.callbacks().capabilities();
            assert!(caps.elicitation.is_none() && caps.sampling.is_none(), "{caps:?}");
        }
    }

    #[test]
    fn a_root_that_is_not_a_file_uri_is_refused_by_name() {
        let Err(err) = HostBridge::builder().client_config(&client(&["file:///ok", "https://h.example/x"])) else {
            panic!("an https root was accepted");
        };
        assert_eq!(err, RootsError::NotFile { uri: "https://h.example/x".into(), scheme: "https".into() });
        assert!(err.to_string().contains("https://h.example/x"), "{err}");
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
