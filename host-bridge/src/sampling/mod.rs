//! Sampling: `sampling/createMessage` answered by the host's LLM ([`HostLlmBridge`]), in both
//! eras (a legacy server request or a modern input request reach the same handler).
//!
//! Each request goes through, in order: the per-server rate limit, the tool-support check (a
//! request that uses tools while [`SamplingOptions::tool_support`] is off is refused, before the
//! user is asked anything; `tools` counts even when empty), the host's [`SamplingApproval`] of
//! the request (and the tool-support check again when it edits the request), the conversion,
//! the LLM, the conversion back, and the approval of the result. Errors are JSON-RPC errors of that one
//! request; the connection is never affected.
//!
//! | failure | code |
//! |---|---|
//! | invalid role or content, tools while tool support is off | -32602 |
//! | the LLM failed, or its answer breaks the request | -32603 |
//! | the user (approval hook) denied | -1 |
//! | the rate limit | [`RATE_LIMITED`] (-32000) |

mod convert;
mod limits;

use std::sync::Arc;

use futures::future::BoxFuture;
use mcp_manager::callbacks::SamplingHandler;
use mcp_manager::config::{
    DEFAULT_MAX_TOKENS, DEFAULT_SAMPLING_MAX_TOKENS_CAP, DEFAULT_SAMPLING_REQUESTS_PER_MINUTE, SamplingSettings,
    TokenParameter,
};
use mcp_protocol::types::sampling::{CreateMessageParams, CreateMessageResult, IncludeContext};
use mcp_protocol::{ErrorCode, ErrorObject};

pub use limits::RATE_LIMITED;

use crate::llm::LlmClient;
use limits::RateLimiter;

/// How sampling behaves.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SamplingOptions {
    /// Whether sampling is offered at all (the `sampling` capability; default true).
    pub enabled: bool,
    /// Whether requests may carry tools (the `sampling.tools` capability; default false).
    pub tool_support: bool,
    /// Most requests per server in any 60-second window (`None`: no limit; default 30).
    pub requests_per_minute: Option<u32>,
    /// The token limit used when a request asks for 0 tokens (default 1024; the cap applies to
    /// it too).
    pub default_max_tokens: u64,
    /// The most tokens any request may ask for: a larger `maxTokens` is lowered to it (`None`: no
    /// cap; default 4096, as a config file's default).
    pub max_tokens_cap: Option<u64>,
    /// Models that `modelPreferences.hints` may pick from; a request whose hints match none
    /// uses the LLM client's default model.
    pub models: Vec<String>,
    /// How the LLM requests name the token limit (`None`, the default: as the LLM client is set).
    pub token_parameter: Option<TokenParameter>,
}

impl Default for SamplingOptions {
    fn default() -> Self {
        SamplingOptions {
            enabled: true,
            tool_support: false,
            requests_per_minute: Some(DEFAULT_SAMPLING_REQUESTS_PER_MINUTE),
            default_max_tokens: u64::from(DEFAULT_MAX_TOKENS),
            max_tokens_cap: Some(u64::from(DEFAULT_SAMPLING_MAX_TOKENS_CAP)),
            models: Vec::new(),
            token_parameter: None,
        }
    }
}

/// The `[mcp.client.sampling]` settings of a config file as options: each setting maps to the
/// option of the same name. A config that says nothing gets the settings' safe defaults: at most
/// 30 requests per minute and server, and at most 4096 tokens per request.
impl From<&SamplingSettings> for SamplingOptions {
    fn from(settings: &SamplingSettings) -> Self {
        SamplingOptions {
            enabled: settings.enabled,
            tool_support: settings.tool_support,
            requests_per_minute: settings.requests_per_minute,
            default_max_tokens: u64::from(settings.default_max_tokens),
            max_tokens_cap: Some(u64::from(settings.max_tokens_cap)),
            models: settings.models.clone(),
            token_parameter: settings.token_parameter,
        }
    }
}

/// What the host (its user) decides about a sampling request or its result.
#[derive(Debug, Clone, PartialEq)]
pub enum Approval<T> {
    /// Go on unchanged.
    Approve,
    /// Go on with this edited version.
    Edit(T),
    /// Stop: the server gets a user-rejected error (-1) with this reason, if any.
    Deny(Option<String>),
}

/// The host's review of sampling: show the request (and the answer) to the user, who may
/// approve, edit or deny. Without one, every request is approved.
pub trait SamplingApproval: Send + Sync + 'static {
    /// Review a request before the LLM sees it.
    fn review_request(
        &self,
        server: &str,
        request: &CreateMessageParams,
    ) -> BoxFuture<'static, Approval<CreateMessageParams>>;

    /// Review the LLM's answer before the server gets it (default: approve).
    fn review_result(
        &self,
        server: &str,
        result: &CreateMessageResult,
    ) -> BoxFuture<'static, Approval<CreateMessageResult>> {
        let _ = (server, result);
        Box::pin(async { Approval::Approve })
    }
}

/// Answers `sampling/createMessage` with the host's LLM. Implements the manager's
/// [`SamplingHandler`]. Cheap to clone.
#[derive(Clone)]
pub struct HostLlmBridge {
    inner: Arc<Inner>,
}

struct Inner {
    llm: Arc<dyn LlmClient>,
    options: SamplingOptions,
    approval: Option<Arc<dyn SamplingApproval>>,
    limiter: RateLimiter,
}

impl std::fmt::Debug for HostLlmBridge {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HostLlmBridge")
            .field("model", &self.inner.llm.default_model())
            .field("options", &self.inner.options)
            .field("approval", &self.inner.approval.is_some())
            .finish()
    }
}

fn user_rejected(what: &str, reason: Option<String>) -> ErrorObject {
    let message = match reason {
        Some(r) => format!("the user rejected the sampling {what}: {r}"),
        None => format!("the user rejected the sampling {what}"),
    };
    ErrorObject::new(ErrorCode::USER_REJECTED, message)
}

impl HostLlmBridge {
    /// A bridge to `llm` with `options` and no approval hook.
    pub fn new(llm: Arc<dyn LlmClient>, options: SamplingOptions) -> Self {
        HostLlmBridge::with_approval(llm, options, None)
    }

    /// A bridge whose requests and results go through `approval` first.
    pub fn with_approval(
        llm: Arc<dyn LlmClient>,
        options: SamplingOptions,
        approval: Option<Arc<dyn SamplingApproval>>,
    ) -> Self {
        let limiter = RateLimiter::new(options.requests_per_minute);
        HostLlmBridge { inner: Arc::new(Inner { llm, options, approval, limiter }) }
    }

    /// The options in use.
    pub fn options(&self) -> &SamplingOptions {
        &self.inner.options
    }

    /// Answer one request of `server`. Cancel-safe: dropping the future abandons the LLM call.
    pub async fn sample(&self, server: &str, params: CreateMessageParams) -> Result<CreateMessageResult, ErrorObject> {
        let inner = &self.inner;
        let options = &inner.options;
        if !options.enabled {
            return Err(ErrorObject::new(ErrorCode::METHOD_NOT_FOUND, "sampling is disabled on this host"));
        }
        inner.limiter.admit(server)?;
        // Checked before the review, so that the user is never asked about a request that will
        // be refused, and again after an edit, which must not slip tools past the setting.
        self.check_tool_support(&params)?;
        let mut params = params;
        if let Some(approval) = &inner.approval {
            match approval.review_request(server, &params).await {
                Approval::Approve => {}
                Approval::Edit(edited) => {
                    self.check_tool_support(&edited)?;
                    params = edited;
                }
                Approval::Deny(reason) => return Err(user_rejected("request", reason)),
            }
        }
        if let Some(context @ (IncludeContext::ThisServer | IncludeContext::AllServers)) = &params.include_context {
            tracing::debug!(server, ?context, "sampling includeContext is deprecated; answered as none");
        }
        let max_tokens = match params.max_tokens {
            0 => options.default_max_tokens,
            n => n,
        };
        let max_tokens = options.max_tokens_cap.map_or(max_tokens, |cap| max_tokens.min(cap));
        let (mut request, expected) =
            convert::to_chat_request(&params, inner.llm.as_ref(), &options.models, max_tokens)?;
        request.token_parameter = options.token_parameter;
        tracing::debug!(
            server,
            messages = request.messages.len(),
            tools = request.tools.len(),
            model = request.model.as_deref().unwrap_or(inner.llm.default_model()),
            "sampling with the host's LLM"
        );
        let response = inner.llm.chat(request).await.map_err(|e| {
            tracing::warn!(server, error = %e, "sampling: the host's LLM failed");
            ErrorObject::new(ErrorCode::INTERNAL_ERROR, format!("the host's LLM failed: {e}"))
        })?;
        let mut result = convert::to_result(response, &expected)?;
        if let Some(approval) = &inner.approval {
            match approval.review_result(server, &result).await {
                Approval::Approve => {}
                Approval::Edit(edited) => result = edited,
                Approval::Deny(reason) => return Err(user_rejected("result", reason)),
            }
        }
        Ok(result)
    }
}

impl HostLlmBridge {
    /// Refuse a request that uses tools (even `tools: []`) when tool support is off: the spec
    /// says a client that did not declare `sampling.tools` MUST.
    fn check_tool_support(&self, params: &CreateMessageParams) -> Result<(), ErrorObject> {
        if self.inner.options.tool_support || !convert::uses_tools(params) {
            return Ok(());
        }
        Err(ErrorObject::new(
            ErrorCode::INVALID_PARAMS,
            "this host does not support tools in sampling (it did not declare sampling.tools): the request \
             carries tools (even an empty list), a toolChoice, or tool_use/tool_result blocks",
        ))
    }
}

impl SamplingHandler for HostLlmBridge {
    fn create_message(
        &self,
        server: &str,
        params: CreateMessageParams,
    ) -> BoxFuture<'static, Result<CreateMessageResult, ErrorObject>> {
        let bridge = self.clone();
        let server = server.to_owned();
        Box::pin(async move { bridge.sample(&server, params).await })
    }

    fn supports_tools(&self) -> bool {
        self.inner.options.tool_support
    }
}

#[cfg(test)]
#[path = "bridge_tests.rs"]
mod tests;
