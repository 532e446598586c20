//! Sampling: a server asks the client's LLM for a completion (`sampling/createMessage`), either
//! as a server request (legacy era) or as an input request of a multi round-trip request
//! (2026-07-28).

use crate::types::open_enum::open_enum;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Number, Value};

use super::common::Role;
use super::content::ContentBlock;
use super::meta::{JsonObject, Meta};
use super::mrtr::Outcome;
use super::tasks::TaskMetadata;
use super::tools::Tool;

/// The content of a sampling message: one block, or (2025-11-25+) an array of blocks.
///
/// The wire form is kept: a single block re-encodes as an object, an array as an array.
// `Single` is the common wire form; boxing it would cost an allocation per message.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq)]
pub enum SamplingContent {
    /// One block (every revision).
    Single(ContentBlock),
    /// Several blocks (2025-11-25+), e.g. text with tool_use blocks.
    Multiple(Vec<ContentBlock>),
}

impl SamplingContent {
    /// The blocks, whichever the wire form.
    pub fn blocks(&self) -> &[ContentBlock] {
        match self {
            SamplingContent::Single(b) => std::slice::from_ref(b),
            SamplingContent::Multiple(v) => v,
        }
    }

    /// The blocks, owned.
    pub fn into_blocks(self) -> Vec<ContentBlock> {
        match self {
            SamplingContent::Single(b) => vec![b],
            SamplingContent::Multiple(v) => v,
        }
    }

    /// The text of all text blocks, concatenated.
    pub fn text(&self) -> String {
        self.blocks().iter().filter_map(ContentBlock::as_text).collect()
    }
}

impl Default for SamplingContent {
    fn default() -> Self {
        SamplingContent::Multiple(Vec::new())
    }
}

impl From<ContentBlock> for SamplingContent {
    fn from(block: ContentBlock) -> Self {
        SamplingContent::Single(block)
    }
}

impl From<Vec<ContentBlock>> for SamplingContent {
    fn from(blocks: Vec<ContentBlock>) -> Self {
        SamplingContent::Multiple(blocks)
    }
}

impl Serialize for SamplingContent {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            SamplingContent::Single(b) => b.serialize(s),
            SamplingContent::Multiple(v) => v.serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for SamplingContent {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        // Dispatch on the JSON kind by hand so that a malformed block reports its own error
        // instead of an untagged "did not match any variant".
        match Value::deserialize(d)? {
            Value::Array(items) => items
                .into_iter()
                .map(|v| ContentBlock::deserialize(v).map_err(D::Error::custom))
                .collect::<Result<Vec<_>, _>>()
                .map(SamplingContent::Multiple),
            v => ContentBlock::deserialize(v).map(SamplingContent::Single).map_err(D::Error::custom),
        }
    }
}

/// One message of a sampling conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SamplingMessage {
    /// Who speaks.
    pub role: Role,
    /// What is said.
    pub content: SamplingContent,
    /// `_meta` (2025-11-25+).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Members this crate does not model.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl SamplingMessage {
    /// A user message with one text block.
    pub fn user_text(text: impl Into<String>) -> Self {
        SamplingMessage {
            role: Role::User,
            content: SamplingContent::Single(ContentBlock::text(text)),
            meta: None,
            extra: JsonObject::new(),
        }
    }
}

/// The server's preferences for model selection. The client may ignore them.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelPreferences {
    /// Model name hints, in order of preference.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hints: Option<Vec<ModelHint>>,
    /// How much cost matters, 0 to 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_priority: Option<Number>,
    /// How much latency matters, 0 to 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub speed_priority: Option<Number>,
    /// How much capability matters, 0 to 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub intelligence_priority: Option<Number>,
    /// Members this crate does not model.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl ModelPreferences {
    /// `costPriority` as `f64`, if given.
    pub fn cost_priority_f64(&self) -> Option<f64> {
        self.cost_priority.as_ref().and_then(Number::as_f64)
    }

    /// `speedPriority` as `f64`, if given.
    pub fn speed_priority_f64(&self) -> Option<f64> {
        self.speed_priority.as_ref().and_then(Number::as_f64)
    }

    /// `intelligencePriority` as `f64`, if given.
    pub fn intelligence_priority_f64(&self) -> Option<f64> {
        self.intelligence_priority.as_ref().and_then(Number::as_f64)
    }
}

/// A hint for model selection.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelHint {
    /// A full or partial model name, e.g. `claude-3-5-sonnet` or `sonnet`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Members this crate does not model.
    #[serde(flatten)]
    pub extra: JsonObject,
}

open_enum! {
    /// Which MCP servers' context to include in the prompt.
    pub enum IncludeContext {
        /// No context (the default).
        None = "none",
        /// Context of the requesting server (deprecated in 2026-07-28).
        ThisServer = "thisServer",
        /// Context of every connected server (deprecated in 2026-07-28).
        AllServers = "allServers",
    }
}

/// How the model may use the offered tools (2025-11-25+).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolChoice {
    /// `auto` (the default), `required` or `none`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<ToolChoiceMode>,
    /// Members this crate does not model.
    #[serde(flatten)]
    pub extra: JsonObject,
}

open_enum! {
    /// `toolChoice.mode`.
    pub enum ToolChoiceMode {
        /// The model decides.
        Auto = "auto",
        /// The model must call at least one tool.
        Required = "required",
        /// The model must not call tools.
        None = "none",
    }
}

/// Params of `sampling/createMessage`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CreateMessageParams {
    /// The conversation.
    pub messages: Vec<SamplingMessage>,
    /// Model selection preferences.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_preferences: Option<ModelPreferences>,
    /// A system prompt the client may modify or omit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_prompt: Option<String>,
    /// Context to include.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub include_context: Option<IncludeContext>,
    /// Sampling temperature, kept as the JSON number that arrived (`1` and `1.0` each re-encode
    /// unchanged); read it with [`CreateMessageParams::temperature_f64`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<Number>,
    /// Maximum number of tokens to sample.
    pub max_tokens: u64,
    /// Sequences that stop sampling.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_sequences: Option<Vec<String>>,
    /// Provider-specific metadata passed through to the LLM.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<JsonObject>,
    /// Tools the model may call (2025-11-25+; needs the `sampling.tools` capability).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<Vec<Tool>>,
    /// How the model may use the tools (2025-11-25+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_choice: Option<ToolChoice>,
    /// Run as a task (2025-11-25).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task: Option<TaskMetadata>,
    /// `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Members this crate does not model.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl CreateMessageParams {
    /// The sampling temperature as `f64`, if given.
    pub fn temperature_f64(&self) -> Option<f64> {
        self.temperature.as_ref().and_then(Number::as_f64)
    }
}

open_enum! {
    /// Why sampling stopped. An open string on the wire: `Unknown` holds provider-specific reasons.
    pub enum StopReason {
        /// Natural end of the assistant's turn.
        EndTurn = "endTurn",
        /// A stop sequence was met.
        StopSequence = "stopSequence",
        /// The token limit was reached.
        MaxTokens = "maxTokens",
        /// The model wants to call tools (2025-11-25+).
        ToolUse = "toolUse",
    }
}

/// Result of `sampling/createMessage`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CreateMessageResult {
    /// Who speaks: normally `assistant`.
    pub role: Role,
    /// The sampled content.
    pub content: SamplingContent,
    /// The model that produced it.
    pub model: String,
    /// Why sampling stopped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_reason: Option<StopReason>,
    /// `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Members this crate does not model.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl CreateMessageResult {
    /// An assistant reply with one text block.
    pub fn assistant_text(model: impl Into<String>, text: impl Into<String>) -> Self {
        CreateMessageResult {
            role: Role::Assistant,
            content: SamplingContent::Single(ContentBlock::text(text)),
            model: model.into(),
            stop_reason: Some(StopReason::EndTurn),
            meta: None,
            extra: JsonObject::new(),
        }
    }
}

/// What `sampling/createMessage` may answer: the message, or (2025-11-25) a task.
pub type CreateMessageOutcome = Outcome<CreateMessageResult>;

/// `sampling/createMessage`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CreateMessage;
impl crate::method::RequestMethod for CreateMessage {
    const METHOD: &'static str = "sampling/createMessage";
    type Params = CreateMessageParams;
    type Result = CreateMessageOutcome;
    fn decode_result(raw: &crate::RawJson) -> Result<Self::Result, serde_json::Error> {
        Outcome::decode(raw)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::method::RequestMethod;
    use serde_json::json;

    #[test]
    fn single_and_array_content_keep_their_wire_form() {
        let single = json!({"role": "user", "content": {"type": "text", "text": "hi"}});
        let m: SamplingMessage = serde_json::from_value(single.clone()).unwrap();
        assert!(matches!(m.content, SamplingContent::Single(_)));
        assert_eq!(m.content.text(), "hi");
        assert_eq!(serde_json::to_value(&m).unwrap(), single);

        let multi = json!({"role": "assistant", "content": [
            {"type": "text", "text": "let me check"},
            {"type": "tool_use", "id": "t1", "name": "weather", "input": {"city": "Paris"}}
        ], "_meta": {"k": 1}});
        let m: SamplingMessage = serde_json::from_value(multi.clone()).unwrap();
        assert_eq!(m.content.blocks().len(), 2);
        assert_eq!(m.content.blocks()[1].kind(), "tool_use");
        assert_eq!(serde_json::to_value(&m).unwrap(), multi);
    }

    #[test]
    fn malformed_block_reports_its_error() {
        let v = json!({"role": "user", "content": [{"type": "image", "data": "x"}]});
        let err = serde_json::from_value::<SamplingMessage>(v).unwrap_err();
        assert!(err.to_string().contains("invalid image content block"), "{err}");
    }

    #[test]
    fn create_message_params_round_trip() {
        let v = json!({
            "messages": [{"role": "user", "content": {"type": "text", "text": "Summarize"}}],
            "modelPreferences": {"hints": [{"name": "sonnet"}], "speedPriority": 0.5, "costPriority": 0.25},
            "systemPrompt": "You are terse.",
            "includeContext": "thisServer",
            "temperature": 0.2,
            "maxTokens": 24,
            "stopSequences": ["\n\n"],
            "metadata": {"provider": {"x": 1}},
            "tools": [{"name": "weather", "inputSchema": {"type": "object"}}],
            "toolChoice": {"mode": "required"},
            "task": {"ttl": 60000},
            "_meta": {"progressToken": "p1"},
            "vendorExtension": true
        });
        let p: CreateMessageParams = serde_json::from_value(v.clone()).unwrap();
        assert_eq!(p.max_tokens, 24);
        assert_eq!(p.include_context, Some(IncludeContext::ThisServer));
        assert_eq!(p.tool_choice.as_ref().unwrap().mode, Some(ToolChoiceMode::Required));
        assert_eq!(p.tools.as_ref().unwrap()[0].name, "weather");
        assert_eq!(p.task.as_ref().unwrap().ttl, Some(60000));
        assert_eq!(serde_json::to_value(&p).unwrap(), v);
        let odd = json!({"messages": [], "maxTokens": 1, "includeContext": "someServers"});
        let p: CreateMessageParams = serde_json::from_value(odd.clone()).unwrap();
        assert_eq!(p.include_context, Some(IncludeContext::Unknown("someServers".into())));
        assert_eq!(serde_json::to_value(&p).unwrap(), odd);
        assert_eq!(p.temperature_f64(), None);
        // Integers stay integers and floats stay floats, whole or not.
        let text = r#"{"messages":[],"modelPreferences":{"costPriority":1,"speedPriority":0.0},"temperature":1,"maxTokens":8}"#;
        let p: CreateMessageParams = serde_json::from_str(text).unwrap();
        assert_eq!(p.temperature_f64(), Some(1.0));
        let prefs = p.model_preferences.as_ref().unwrap();
        assert_eq!((prefs.cost_priority_f64(), prefs.speed_priority_f64()), (Some(1.0), Some(0.0)));
        assert_eq!(prefs.intelligence_priority_f64(), None);
        assert_eq!(serde_json::to_string(&p).unwrap(), text);
    }

    #[test]
    fn stop_reason_is_open() {
        let v = json!({"role": "assistant", "content": {"type": "text", "text": "x"}, "model": "m",
            "stopReason": "content_filter"});
        let r: CreateMessageResult = serde_json::from_value(v.clone()).unwrap();
        assert_eq!(r.stop_reason, Some(StopReason::Unknown("content_filter".into())));
        assert_eq!(serde_json::to_value(&r).unwrap(), v);
        let r = CreateMessageResult::assistant_text("m", "hello");
        assert_eq!(serde_json::to_value(&r).unwrap()["stopReason"], "endTurn");
    }

    #[test]
    fn create_message_result_or_task() {
        let raw = crate::jsonrpc::to_raw(&json!({
            "role": "assistant", "model": "host", "stopReason": "toolUse",
            "content": [{"type": "tool_use", "id": "a", "name": "t", "input": {}}]
        }))
        .unwrap();
        let Outcome::Complete(r) = CreateMessage::decode_result(&raw).unwrap() else { panic!() };
        assert_eq!(r.stop_reason, Some(StopReason::ToolUse));
        let raw = crate::jsonrpc::to_raw(&json!({"task": {
            "taskId": "t1", "status": "working", "ttl": null,
            "createdAt": "2025-11-25T00:00:00Z", "lastUpdatedAt": "2025-11-25T00:00:00Z"
        }}))
        .unwrap();
        let Outcome::Task(t) = CreateMessage::decode_result(&raw).unwrap() else { panic!() };
        assert_eq!(t.task.task_id, "t1");
        assert_eq!(CreateMessage::METHOD, "sampling/createMessage");
    }
}
