//! One call of a tool ([`ToolInvocation`]) and the host context it runs in
//! ([`ToolExecutionContext`]).

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// A request to run one tool.
///
/// When it goes through [`ToolRegistry::invoke`](crate::ToolRegistry::invoke), the registry sets
/// `tool_name` to the provider's own name of the tool before handing it over, so a provider
/// always sees its original names, never the exposed LLM names.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ToolInvocation {
    /// The tool to run.
    pub tool_name: String,
    /// The arguments object.
    #[serde(default)]
    pub arguments: Map<String, Value>,
    /// The LLM's id for this call, if it gave one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call_id: Option<String>,
    /// The host session the call belongs to (empty when unknown).
    #[serde(default)]
    pub session_id: String,
    /// The host chat stream the call belongs to (empty when unknown).
    #[serde(default)]
    pub stream_id: String,
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

    /// Sets the session and stream ids.
    pub fn with_session(mut self, session_id: impl Into<String>, stream_id: impl Into<String>) -> Self {
        self.session_id = session_id.into();
        self.stream_id = stream_id.into();
        self
    }

    /// Sets the LLM's reasoning.
    pub fn with_reasoning(mut self, reasoning: impl Into<String>) -> Self {
        self.reasoning = Some(reasoning.into());
        self
    }
}

/// Who and where a tool runs for: the host's context, carried unchanged to the provider.
///
/// Empty strings mean "unknown". `extra` holds anything else the host wants a provider to see.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
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
}
