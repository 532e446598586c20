//! Answers what MCP servers ask of the host: sampling through the host's LLM, elicitation,
//! roots, and logs and progress. This crate implements the host-callback traits of
//! `mcp_manager::callbacks`; legacy server requests and modern-era input requests reach the same
//! handlers, so both eras are covered.
//!
//! - [`HostBridge`] (built with [`HostBridge::builder`]): the whole set, turned into the
//!   manager's `HostCallbacks` ([`HostBridge::callbacks`]) or into connection options
//!   ([`HostBridge::connection_options`]). [`HostBridgeBuilder::client_config`] applies the
//!   `[mcp.client]` settings of a config file (sampling, elicitation, roots).
//! - [`llm`]: the [`LlmClient`] trait (object-safe; [`ChatRequest`] -> [`ChatResponse`]), its
//!   OpenAI-compatible implementation [`OpenAiClient`] ([`OpenAiConfig::from_env`] reads
//!   `OPENAI_BASE_URL`, `OPENAI_API_KEY`, `OPENAI_MODEL` and `OPENAI_TOKEN_PARAMETER`; the token
//!   limit goes out as `max_tokens` or `max_completion_tokens`, by [`TokenParameter`]), and
//!   [`ScriptedLlm`] for tests.
//! - [`sampling`]: [`HostLlmBridge`] answers `sampling/createMessage` with the LLM, under
//!   [`SamplingOptions`] (tool support, rate limit, token limits, model list) and an optional
//!   [`SamplingApproval`] hook.
//! - [`elicitation`]: [`HostElicitation`] around the host's UI ([`AskUser`]): forms pre-filled
//!   with defaults and answers validated against the schema, URL mode, and the
//!   [`ElicitationPolicy`] for unattended hosts ([`ScriptedElicitation`] for tests).
//! - [`roots`]: [`Roots`], a checked list of `file://` roots, changeable at run time; a
//!   connection given them in its callbacks sends `notifications/roots/list_changed` after each
//!   change in the legacy era ([`RootsNotifier`] does it for other connections).
//! - [`logging`]: [`HostNotificationSink`] sends server logs and progress to `tracing` and to an
//!   optional callback; [`LogLevels`] holds the level to request from each server.
//!
//! ```
//! use std::sync::Arc;
//!
//! use host_bridge::{ElicitationPolicy, HostBridge, LogLevels, Roots, SamplingOptions, ScriptedLlm, file_root};
//! use mcp_protocol::types::logging::LoggingLevel;
//!
//! // A real host would use `OpenAiClient::new(OpenAiConfig::from_env()?)?`.
//! let llm = Arc::new(ScriptedLlm::new("demo-model"));
//! let roots = Roots::new([file_root("/srv/project", Some("project".into()))?])?;
//! let bridge = HostBridge::builder()
//!     .llm(llm, SamplingOptions { tool_support: true, ..Default::default() })
//!     .elicitation(Arc::new(ElicitationPolicy::AcceptDefaults))
//!     .roots(roots)
//!     .log_levels(LogLevels::all(LoggingLevel::Info))
//!     .build();
//!
//! let options = bridge.connection_options("my-server");
//! let capabilities = options.callbacks.capabilities();
//! assert!(capabilities.sampling.is_some_and(|s| s.tools.is_some()));
//! assert_eq!(options.log_level, Some(LoggingLevel::Info));
//! // Later, at run time: every server connected in the legacy era with these callbacks hears of
//! // the change (`notifications/roots/list_changed`).
//! bridge.roots().unwrap().set([file_root("/srv/other", None)?])?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod bridge;
pub mod elicitation;
pub mod llm;
pub mod logging;
pub mod roots;
pub mod sampling;

pub use bridge::{HostBridge, HostBridgeBuilder};
pub use elicitation::{
    AskUser, Asked, ElicitationOptions, ElicitationPolicy, FormAnswer, FormRequest, HostElicitation,
    ScriptedElicitation, UrlAnswer, UrlRequest,
};
pub use llm::{
    ChatMessage, ChatRequest, ChatResponse, ChatRole, ContentPart, FinishReason, InvalidArguments, LlmClient, LlmError,
    OpenAiClient, OpenAiConfig, ScriptedLlm, TokenParameter, ToolCall, ToolChoice, ToolDefinition, Usage,
};
pub use logging::{HostNotificationSink, LogLevels, NotificationCallback, TRACING_TARGET, tracing_level};
pub use roots::{Roots, RootsError, RootsNotifier, file_root};
pub use sampling::{Approval, HostLlmBridge, RATE_LIMITED, SamplingApproval, SamplingOptions};
// The API key of `OpenAiConfig` is the workspace's one secret type.
pub use mcp_transport::Secret;
