//! The host's LLM: a provider-neutral chat model ([`ChatRequest`] -> [`ChatResponse`]) behind
//! the object-safe [`LlmClient`] trait, an OpenAI-compatible implementation ([`OpenAiClient`]),
//! and [`ScriptedLlm`], which answers from a script (tests, demos).
//!
//! The model is what chat-completions APIs share: messages with roles and content parts, tool
//! definitions, a tool choice, sampling settings, and an answer made of text, tool calls and a
//! finish reason. Tool-call arguments that are not valid JSON are kept as [`InvalidArguments`]
//! (the raw text and the parse error) and never passed on as if they were.

mod openai;
mod scripted;
mod wire;

use std::fmt;
use std::time::Duration;

use futures::future::BoxFuture;
use mcp_manager::ErrorKind;
use serde_json::Value;

pub use mcp_manager::config::TokenParameter;
pub use openai::{OpenAiClient, OpenAiConfig};
pub use scripted::ScriptedLlm;

/// The host's LLM. Object-safe: hosts hold it as `Arc<dyn LlmClient>`.
pub trait LlmClient: Send + Sync + 'static {
    /// Send one chat request and wait for the whole answer.
    ///
    /// Cancel-safe: dropping the future abandons the request (and any retry still to come).
    fn chat(&self, request: ChatRequest) -> BoxFuture<'static, Result<ChatResponse, LlmError>>;

    /// The model used when a request names none.
    fn default_model(&self) -> &str;

    /// Whether the model takes images of this MIME type as input (`image/png`, ...). What it
    /// cannot take becomes a visible text placeholder instead.
    fn accepts_image(&self, mime_type: &str) -> bool {
        matches!(mime_type, "image/png" | "image/jpeg" | "image/gif" | "image/webp")
    }

    /// Whether the model takes audio of this MIME type as input (`audio/wav`, ...).
    fn accepts_audio(&self, mime_type: &str) -> bool {
        let _ = mime_type;
        false
    }
}

/// Who speaks in a [`ChatMessage`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ChatRole {
    /// Instructions for the model.
    System,
    /// The user (or the MCP server that asks through sampling).
    User,
    /// The model.
    Assistant,
    /// The result of a tool call, linked to it by [`ChatMessage::tool_call_id`].
    Tool,
}

impl ChatRole {
    /// The wire name: `system`, `user`, `assistant` or `tool`.
    pub fn as_str(self) -> &'static str {
        match self {
            ChatRole::System => "system",
            ChatRole::User => "user",
            ChatRole::Assistant => "assistant",
            ChatRole::Tool => "tool",
        }
    }
}

/// One part of a message's content.
#[derive(Clone, PartialEq)]
pub enum ContentPart {
    /// Text.
    Text(String),
    /// An image, base64-encoded.
    Image {
        /// MIME type, e.g. `image/png`.
        mime_type: String,
        /// Base64-encoded bytes.
        data: String,
    },
    /// Audio, base64-encoded.
    Audio {
        /// MIME type, e.g. `audio/wav`.
        mime_type: String,
        /// Base64-encoded bytes.
        data: String,
    },
}

impl ContentPart {
    /// A text part.
    pub fn text(text: impl Into<String>) -> Self {
        ContentPart::Text(text.into())
    }

    /// The text of a text part.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            ContentPart::Text(t) => Some(t),
            _ => None,
        }
    }
}

// Media data can be megabytes of base64: show its size, not its bytes.
impl fmt::Debug for ContentPart {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ContentPart::Text(t) => f.debug_tuple("Text").field(t).finish(),
            ContentPart::Image { mime_type, data } => {
                f.debug_struct("Image").field("mime_type", mime_type).field("base64_len", &data.len()).finish()
            }
            ContentPart::Audio { mime_type, data } => {
                f.debug_struct("Audio").field("mime_type", mime_type).field("base64_len", &data.len()).finish()
            }
        }
    }
}

/// One message of a conversation.
#[derive(Debug, Clone, PartialEq)]
pub struct ChatMessage {
    /// Who speaks.
    pub role: ChatRole,
    /// What is said. Assistant, system and tool messages carry text parts only.
    pub content: Vec<ContentPart>,
    /// The tool calls of an assistant message.
    pub tool_calls: Vec<ToolCall>,
    /// The call a [`ChatRole::Tool`] message answers.
    pub tool_call_id: Option<String>,
}

impl ChatMessage {
    fn new(role: ChatRole, content: Vec<ContentPart>) -> Self {
        ChatMessage { role, content, tool_calls: Vec::new(), tool_call_id: None }
    }

    /// A system message.
    pub fn system(text: impl Into<String>) -> Self {
        ChatMessage::new(ChatRole::System, vec![ContentPart::text(text)])
    }

    /// A user message with one text part.
    pub fn user(text: impl Into<String>) -> Self {
        ChatMessage::new(ChatRole::User, vec![ContentPart::text(text)])
    }

    /// A user message with several parts (text, images, audio).
    pub fn user_parts(parts: Vec<ContentPart>) -> Self {
        ChatMessage::new(ChatRole::User, parts)
    }

    /// An assistant message with text only.
    pub fn assistant(text: impl Into<String>) -> Self {
        ChatMessage::new(ChatRole::Assistant, vec![ContentPart::text(text)])
    }

    /// An assistant message that calls tools, with optional text.
    pub fn assistant_tool_calls(text: Option<String>, tool_calls: Vec<ToolCall>) -> Self {
        let content = text.map(ContentPart::Text).into_iter().collect();
        ChatMessage { tool_calls, ..ChatMessage::new(ChatRole::Assistant, content) }
    }

    /// The result of the tool call `call_id`.
    pub fn tool_result(call_id: impl Into<String>, text: impl Into<String>) -> Self {
        ChatMessage { tool_call_id: Some(call_id.into()), ..ChatMessage::new(ChatRole::Tool, vec![text.into().into()]) }
    }

    /// The text parts, concatenated.
    pub fn text(&self) -> String {
        self.content.iter().filter_map(ContentPart::as_text).collect()
    }
}

impl From<String> for ContentPart {
    fn from(text: String) -> Self {
        ContentPart::Text(text)
    }
}

/// A tool the model may call.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolDefinition {
    /// The name the model calls it by.
    pub name: String,
    /// What it does.
    pub description: Option<String>,
    /// The JSON Schema of its arguments (an object schema).
    pub parameters: Value,
}

/// How the model may use the offered tools.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum ToolChoice {
    /// The model decides (the default).
    Auto,
    /// The model must call at least one tool.
    Required,
    /// The model must not call tools.
    None,
    /// The model must call this tool.
    Tool(String),
}

/// Tool-call arguments that are not valid JSON: the model's text, kept for reporting.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("tool-call arguments are not valid JSON ({error}): {}", excerpt(raw, 200))]
pub struct InvalidArguments {
    /// The arguments exactly as the model wrote them.
    pub raw: String,
    /// Why they do not parse.
    pub error: String,
}

/// A tool call the model asked for.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCall {
    /// The id that the tool's result refers to.
    pub id: String,
    /// The tool's name.
    pub name: String,
    /// The parsed arguments, or why they could not be parsed. Never trusted when invalid.
    pub arguments: Result<Value, InvalidArguments>,
}

impl ToolCall {
    /// A call with valid arguments.
    pub fn new(id: impl Into<String>, name: impl Into<String>, arguments: Value) -> Self {
        ToolCall { id: id.into(), name: name.into(), arguments: Ok(arguments) }
    }

    /// Parse the model's argument text. An empty text means no arguments (`{}`), as several
    /// servers send for tools without parameters.
    pub fn parse(id: impl Into<String>, name: impl Into<String>, raw: &str) -> Self {
        let arguments = if raw.trim().is_empty() {
            Ok(Value::Object(Default::default()))
        } else {
            serde_json::from_str(raw).map_err(|e| InvalidArguments { raw: raw.to_owned(), error: e.to_string() })
        };
        ToolCall { id: id.into(), name: name.into(), arguments }
    }
}

/// Why the model stopped.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum FinishReason {
    /// The model ended its turn.
    Stop,
    /// A stop sequence was met (reported by servers that say which one, such as vLLM).
    StopSequence(String),
    /// The token limit was reached.
    Length,
    /// The model asked for tool calls.
    ToolCalls,
    /// The provider's content filter stopped it.
    ContentFilter,
    /// A reason this crate does not know, as the provider named it.
    Other(String),
}

/// A request to the LLM.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ChatRequest {
    /// The conversation, oldest first.
    pub messages: Vec<ChatMessage>,
    /// The tools the model may call.
    pub tools: Vec<ToolDefinition>,
    /// How it may use them (`None`: the provider's default, which is auto when tools are given).
    pub tool_choice: Option<ToolChoice>,
    /// Sampling temperature.
    pub temperature: Option<f64>,
    /// Most tokens to generate.
    pub max_tokens: Option<u64>,
    /// Sequences that stop generation.
    pub stop: Vec<String>,
    /// The model (`None`: the client's default model).
    pub model: Option<String>,
    /// How the token limit is named on the wire (`None`: as the client is set). Clients
    /// without such a choice ignore it.
    pub token_parameter: Option<TokenParameter>,
}

/// Token counts, when the provider reports them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Usage {
    /// Tokens of the prompt.
    pub prompt_tokens: u64,
    /// Tokens generated.
    pub completion_tokens: u64,
}

/// The LLM's answer.
#[derive(Debug, Clone, PartialEq)]
pub struct ChatResponse {
    /// The text of the answer, if any.
    pub text: Option<String>,
    /// The tool calls, in order.
    pub tool_calls: Vec<ToolCall>,
    /// Why the model stopped.
    pub finish_reason: FinishReason,
    /// The model that answered.
    pub model: String,
    /// Token counts, if reported.
    pub usage: Option<Usage>,
}

/// Why a chat request failed. Never carries the API key.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum LlmError {
    /// The configuration is unusable (a missing model, a bad URL, ...).
    #[error("LLM configuration: {0}")]
    Config(String),
    /// The request cannot be sent as built (e.g. a tool message without its call id).
    #[error("invalid LLM request: {0}")]
    InvalidRequest(String),
    /// The server answered with an HTTP error status (after `attempts` tries).
    #[error("the LLM server answered HTTP {status} after {attempts} attempt(s): {body}")]
    Http {
        /// The HTTP status code.
        status: u16,
        /// The start of the response body (bounded).
        body: String,
        /// How many times the request was sent.
        attempts: u32,
    },
    /// No answer within the timeout.
    #[error("the LLM server did not answer within {timeout:?}")]
    Timeout {
        /// The configured timeout.
        timeout: Duration,
    },
    /// The request could not be sent or the answer could not be read (connection refused,
    /// reset, ...).
    #[error("cannot reach the LLM server: {0}")]
    Transport(String),
    /// The answer is not a chat completion this crate can read.
    #[error("the LLM server's answer is not a valid chat completion: {0}")]
    InvalidResponse(String),
}

impl LlmError {
    /// The kind of failure, for a host that branches on it: HTTP 401 and 403 are
    /// [`AuthRequired`](ErrorKind::AuthRequired), 429 and other 5xx answers
    /// [`Unavailable`](ErrorKind::Unavailable) (retried already; try again later), any other
    /// HTTP error [`ServerError`](ErrorKind::ServerError), no answer in time
    /// [`Timeout`](ErrorKind::Timeout), a server that cannot be reached
    /// [`Unreachable`](ErrorKind::Unreachable), an answer that is not a chat completion
    /// [`Protocol`](ErrorKind::Protocol), a request that cannot be sent as built
    /// [`InvalidArguments`](ErrorKind::InvalidArguments) and a bad configuration
    /// [`Config`](ErrorKind::Config).
    pub fn kind(&self) -> ErrorKind {
        match self {
            LlmError::Config(_) => ErrorKind::Config,
            LlmError::InvalidRequest(_) => ErrorKind::InvalidArguments,
            LlmError::Http { status: 401 | 403, .. } => ErrorKind::AuthRequired,
            LlmError::Http { status: 429 | 500..=599, .. } => ErrorKind::Unavailable,
            LlmError::Http { .. } => ErrorKind::ServerError,
            LlmError::Timeout { .. } => ErrorKind::Timeout,
            LlmError::Transport(_) => ErrorKind::Unreachable,
            LlmError::InvalidResponse(_) => ErrorKind::Protocol,
        }
    }
}

/// At most `max` characters of `text`, with an ellipsis and the full length when cut.
pub(crate) fn excerpt(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        None => text.to_owned(),
        Some((cut, _)) => format!("{}… ({} bytes in all)", &text[..cut], text.len()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn llm_errors_have_kinds() {
        let http = |status| LlmError::Http { status, body: String::new(), attempts: 1 };
        assert_eq!(http(401).kind(), ErrorKind::AuthRequired);
        assert_eq!(http(429).kind(), ErrorKind::Unavailable);
        assert_eq!(http(503).kind(), ErrorKind::Unavailable);
        assert_eq!(http(400).kind(), ErrorKind::ServerError);
        assert_eq!(LlmError::Timeout { timeout: Duration::from_secs(1) }.kind(), ErrorKind::Timeout);
        assert_eq!(LlmError::Transport("refused".into()).kind(), ErrorKind::Unreachable);
        assert_eq!(LlmError::InvalidResponse("x".into()).kind(), ErrorKind::Protocol);
        assert_eq!(LlmError::Config("no model".into()).kind(), ErrorKind::Config);
        assert_eq!(LlmError::InvalidRequest("x".into()).kind(), ErrorKind::InvalidArguments);
    }

    #[test]
    fn arguments_that_do_not_parse_are_kept_and_reported() {
        let call = ToolCall::parse("c1", "weather", r#"{"city": "Paris""#);
        let invalid = call.arguments.clone().unwrap_err();
        assert_eq!(invalid.raw, r#"{"city": "Paris""#);
        assert!(invalid.to_string().contains("not valid JSON"), "{invalid}");
        assert!(invalid.to_string().contains(r#"{"city": "Paris""#), "{invalid}");
        assert_eq!(ToolCall::parse("c2", "t", r#"{"a": 1}"#).arguments, Ok(json!({"a": 1})));
        assert_eq!(ToolCall::parse("c3", "t", "  ").arguments, Ok(json!({})));
    }

    #[test]
    fn excerpt_cuts_on_a_char_boundary_and_says_so() {
        assert_eq!(excerpt("short", 10), "short");
        let long = "é".repeat(50);
        let cut = excerpt(&long, 10);
        assert!(cut.starts_with(&"é".repeat(10)) && cut.contains("100 bytes in all"), "{cut}");
    }

    #[test]
    fn media_debug_shows_size_not_bytes() {
        let part = ContentPart::Image { mime_type: "image/png".into(), data: "A".repeat(10_000) };
        let shown = format!("{part:?}");
        assert!(shown.contains("base64_len: 10000") && !shown.contains("AAAA"), "{shown}");
    }

    #[test]
    fn constructors_set_roles_and_links() {
        let m = ChatMessage::tool_result("call-1", "42");
        assert_eq!((m.role, m.tool_call_id.as_deref(), m.text().as_str()), (ChatRole::Tool, Some("call-1"), "42"));
        let m = ChatMessage::assistant_tool_calls(None, vec![ToolCall::new("c", "t", json!({}))]);
        assert_eq!((m.role, m.content.len(), m.tool_calls.len()), (ChatRole::Assistant, 0, 1));
        assert_eq!(ChatRole::Tool.as_str(), "tool");
    }
}
