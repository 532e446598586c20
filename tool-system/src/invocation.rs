//! One call of a tool ([`ToolInvocation`]) and the host context it runs in
//! ([`ToolExecutionContext`]).

use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::control::{CallControl, CancellationToken, ProgressSink, ToolProgress};

/// A request to run one tool: what the LLM asked for. Who asked, and the host's control over
/// the call, are in the [`ToolExecutionContext`].
///
/// [`ToolRegistry::invoke`](crate::ToolRegistry::invoke) reads `tool_name` as the exposed (LLM)
/// name and sets it to the provider's own name of the tool before handing the call over, so a
/// provider always sees its original names, never the exposed LLM names.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ToolInvocation {
    /// The tool to run: the exposed name when given to the registry, the provider's own name
    /// when a provider receives it.
    pub tool_name: String,
    /// The arguments object.
    #[serde(default)]
    pub arguments: Map<String, Value>,
    /// The LLM's id for this call, if it gave one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call_id: Option<String>,
    /// The LLM's stated reason for the call, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning: Option<String>,
}

impl ToolInvocation {
    /// A call of `tool_name` with `arguments` and nothing else set.
    pub fn new(tool_name: impl Into<String>, arguments: Map<String, Value>) -> Self {
        Self { tool_name: tool_name.into(), arguments, ..Self::default() }
    }

    /// A call of `tool_name` whose arguments are `arguments` if it is a JSON object. Any other
    /// value (including `null`) gives an empty arguments object.
    pub fn from_value(tool_name: impl Into<String>, arguments: Value) -> Self {
        let arguments = match arguments {
            Value::Object(map) => map,
            _ => Map::new(),
        };
        Self::new(tool_name, arguments)
    }

    /// Sets the call id.
    pub fn with_call_id(mut self, call_id: impl Into<String>) -> Self {
        self.call_id = Some(call_id.into());
        self
    }

    /// Sets the LLM's reasoning.
    pub fn with_reasoning(mut self, reasoning: impl Into<String>) -> Self {
        self.reasoning = Some(reasoning.into());
        self
    }
}

/// Who and where a tool runs for, and the host's control over the call: the host's context,
/// carried unchanged to the provider.
///
/// Empty strings mean "unknown"; providers that scope by user read `user_id` and `session_id`.
/// `extra` holds anything else the host wants a provider to see. `control` (a deadline, a
/// progress sink, a cancellation token; see [`CallControl`]) is not serialised.
///
/// ```
/// use std::time::Duration;
/// use tool_system::{CancellationToken, ToolExecutionContext};
///
/// let cancel = CancellationToken::new();
/// let ctx = ToolExecutionContext::new("session-1", "chat-7")
///     .with_user("ann")
///     .with_timeout(Duration::from_secs(30))
///     .with_progress(|p| println!("{:?} of {:?}: {:?}", p.progress, p.total, p.message))
///     .with_cancellation(cancel.clone());
/// assert!(ctx.control.remaining().unwrap() <= Duration::from_secs(30));
/// cancel.cancel(); // a call running with `ctx` now resolves at once, as cancelled
/// assert!(ctx.control.is_cancelled());
/// ```
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct ToolExecutionContext {
    /// The host session.
    #[serde(default)]
    pub session_id: String,
    /// The chat stream (conversation, channel) the call comes from.
    #[serde(default)]
    pub chat_stream_id: String,
    /// The user the call acts for.
    #[serde(default)]
    pub user_id: String,
    /// The platform the user is on (a chat network, an IDE, ...).
    #[serde(default)]
    pub platform: String,
    /// The message that triggered the call, if known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub anchor_message_id: Option<String>,
    /// Anything else the host passes along.
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub extra: Map<String, Value>,
    /// The deadline, progress sink and cancellation token of the call.
    #[serde(skip)]
    pub control: CallControl,
}

impl ToolExecutionContext {
    /// A context with only the session and chat stream set.
    pub fn new(session_id: impl Into<String>, chat_stream_id: impl Into<String>) -> Self {
        Self { session_id: session_id.into(), chat_stream_id: chat_stream_id.into(), ..Self::default() }
    }

    /// Sets the user.
    pub fn with_user(mut self, user_id: impl Into<String>) -> Self {
        self.user_id = user_id.into();
        self
    }

    /// Sets the platform.
    pub fn with_platform(mut self, platform: impl Into<String>) -> Self {
        self.platform = platform.into();
        self
    }

    /// Sets the anchor message.
    pub fn with_anchor_message(mut self, message_id: impl Into<String>) -> Self {
        self.anchor_message_id = Some(message_id.into());
        self
    }

    /// Adds one extra entry.
    pub fn with_extra(mut self, key: impl Into<String>, value: Value) -> Self {
        self.extra.insert(key.into(), value);
        self
    }

    /// Sets the deadline to `timeout` from now (a timeout too large to add saturates to none).
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.control.deadline = Instant::now().checked_add(timeout);
        self
    }

    /// Sets the deadline.
    pub fn with_deadline(mut self, deadline: Instant) -> Self {
        self.control.deadline = Some(deadline);
        self
    }

    /// Sends the call's progress reports to `report`.
    pub fn with_progress(mut self, report: impl Fn(ToolProgress) + Send + Sync + 'static) -> Self {
        self.control.progress = Some(ProgressSink::new(report));
        self
    }

    /// Sends the call's progress reports to `sink`.
    pub fn with_progress_sink(mut self, sink: ProgressSink) -> Self {
        self.control.progress = Some(sink);
        self
    }

    /// Ends the call at once, as cancelled, when `token` is cancelled (keep a clone to cancel).
    pub fn with_cancellation(mut self, token: CancellationToken) -> Self {
        self.control.cancellation = token;
        self
    }

    /// Whether the host-facing parts (session, stream, user, platform, anchor, extra) equal
    /// `other`'s; the call control is not compared.
    pub fn same_caller(&self, other: &Self) -> bool {
        self.session_id == other.session_id
            && self.chat_stream_id == other.chat_stream_id
            && self.user_id == other.user_id
            && self.platform == other.platform
            && self.anchor_message_id == other.anchor_message_id
            && self.extra == other.extra
    }
}
