//! `sampling/createMessage` params to a [`ChatRequest`], and a [`ChatResponse`] back to a
//! `CreateMessageResult`.
//!
//! Nothing is dropped silently: content the LLM cannot take becomes a visible placeholder such
//! as `[audio: audio/wav, 12 KB]`, and embedded text resources become text. A conversation that
//! breaks the protocol's rules (a `tool_use` in a user message, a `tool_result` that answers no
//! call, ...) is refused with -32602.
//!
//! Tool names go to the LLM as names it accepts (`^[a-zA-Z0-9_-]{1,64}$`), by the tool
//! registry's rule (`tool_system::names::NameAllocator`): a valid name is kept, others are
//! sanitised (and cut with a hash suffix), and names that collide get distinct suffixes. The
//! LLM's calls are mapped back to the MCP names; a call of a tool the request did not offer is an
//! LLM failure (-32603) naming it.

use std::collections::HashMap;

use mcp_protocol::types::common::Role;
use mcp_protocol::types::content::{
    ContentBlock, EmbeddedResource, ResourceContents, ResourceLink, TextContent, ToolResultContent, ToolUseContent,
};
use mcp_protocol::types::meta::JsonObject;
use mcp_protocol::types::sampling::{
    CreateMessageParams, CreateMessageResult, ModelPreferences, SamplingContent, StopReason, ToolChoiceMode,
};
use mcp_protocol::{ErrorCode, ErrorObject};
use serde_json::Value;
use tool_system::names::{MAX_NAME_LEN, NameAllocator, is_valid_name};

use crate::llm::{ChatMessage, ChatRequest, ChatResponse, ContentPart, FinishReason, LlmClient, ToolChoice};
use crate::llm::{ToolCall, ToolDefinition};

/// What the answer must respect, taken from the request.
#[derive(Debug, Clone, Default)]
pub(crate) struct Expectations {
    /// The offered tools: the name the LLM knows each by, and its MCP name.
    pub(crate) tools: HashMap<String, String>,
    /// `toolChoice.mode`.
    pub(crate) choice: Option<ToolChoice>,
    /// The model asked for (`None`: the client's default).
    pub(crate) model: Option<String>,
}

fn invalid(message: impl Into<String>) -> ErrorObject {
    ErrorObject::new(ErrorCode::INVALID_PARAMS, message)
}

fn llm_failure(message: impl Into<String>) -> ErrorObject {
    ErrorObject::new(ErrorCode::INTERNAL_ERROR, message)
}

/// Whether the request uses tools in any way: a `tools` member (even an empty list: the spec
/// says "provided"), a tool choice, or tool_use and tool_result blocks in its messages.
pub(crate) fn uses_tools(params: &CreateMessageParams) -> bool {
    params.tools.is_some()
        || params.tool_choice.is_some()
        || params
            .messages
            .iter()
            .flat_map(|m| m.content.blocks())
            .any(|b| matches!(b, ContentBlock::ToolUse(_) | ContentBlock::ToolResult(_)))
}

/// The model of the first hint that a configured model name contains (case-insensitively, as
/// the spec treats hints as substrings), in hint order.
pub(crate) fn pick_model(preferences: Option<&ModelPreferences>, models: &[String]) -> Option<String> {
    let hints = preferences?.hints.as_ref()?;
    hints
        .iter()
        .filter_map(|h| h.name.as_deref())
        .map(str::to_lowercase)
        .filter(|h| !h.is_empty())
        .find_map(|hint| models.iter().find(|m| m.to_lowercase().contains(&hint)).cloned())
}

/// The names the LLM knows tools by, and back.
struct ToolNames {
    allocator: NameAllocator,
    /// MCP name -> LLM name, offered tools and the tools the history names.
    to_llm: HashMap<String, String>,
    /// LLM name -> MCP name, offered tools only.
    offered: HashMap<String, String>,
}

impl ToolNames {
    /// Names for the offered tools: valid names first, so that they are kept as they are, then
    /// the others, in order. A tool offered twice is refused.
    fn offer(tools: &[&str]) -> Result<Self, ErrorObject> {
        let mut names =
            ToolNames { allocator: NameAllocator::new(MAX_NAME_LEN), to_llm: HashMap::new(), offered: HashMap::new() };
        for (index, name) in tools.iter().enumerate() {
            if tools[..index].contains(name) {
                return Err(invalid(format!("tool {name:?} is offered twice")));
            }
        }
        let (valid, others): (Vec<&str>, Vec<&str>) = tools.iter().partition(|n| is_valid_name(n, MAX_NAME_LEN));
        for name in valid.into_iter().chain(others) {
            let llm_name = names.allocator.allocate(name);
            names.offered.insert(llm_name.clone(), name.to_owned());
            names.to_llm.insert(name.to_owned(), llm_name);
        }
        Ok(names)
    }

    /// The LLM's name for `name`: an offered tool's, or one more name for a tool the history
    /// names (distinct from all others).
    fn llm_name(&mut self, name: &str) -> String {
        if let Some(known) = self.to_llm.get(name) {
            return known.clone();
        }
        let llm_name = self.allocator.allocate(name);
        self.to_llm.insert(name.to_owned(), llm_name.clone());
        llm_name
    }
}

/// Convert the params. `max_tokens` is the limit already settled by the caller.
pub(crate) fn to_chat_request(
    params: &CreateMessageParams,
    llm: &dyn LlmClient,
    models: &[String],
    max_tokens: u64,
) -> Result<(ChatRequest, Expectations), ErrorObject> {
    if params.messages.is_empty() {
        return Err(invalid("sampling/createMessage: messages is empty"));
    }
    let offered: Vec<&str> = params.tools.iter().flatten().map(|t| t.name.as_str()).collect();
    let mut names = ToolNames::offer(&offered)?;
    let mut messages = Vec::with_capacity(params.messages.len() + 1);
    if let Some(system) = params.system_prompt.as_deref().filter(|s| !s.is_empty()) {
        messages.push(ChatMessage::system(system));
    }
    // The tool_use ids of the previous assistant message that still wait for their result.
    let mut pending: Vec<String> = Vec::new();
    for (index, message) in params.messages.iter().enumerate() {
        let blocks = message.content.blocks();
        let at = |what: &str| format!("messages[{index}]: {what}");
        if blocks.is_empty() {
            return Err(invalid(at("the message has no content")));
        }
        let answers_tool_use = message.role == Role::User && blocks.iter().any(is_tool_result);
        if !answers_tool_use && !pending.is_empty() {
            return Err(invalid(at(&format!(
                "tool_use {} has no tool_result in the next message",
                pending.join(", ")
            ))));
        }
        match message.role {
            Role::User if blocks.iter().any(is_tool_result) => {
                if !blocks.iter().all(is_tool_result) {
                    return Err(invalid(at(
                        "a user message with tool_result blocks must hold only tool_result blocks",
                    )));
                }
                for block in blocks {
                    let ContentBlock::ToolResult(result) = block else { continue };
                    let Some(at_pending) = pending.iter().position(|id| *id == result.tool_use_id) else {
                        return Err(invalid(at(&format!(
                            "tool_result {:?} answers no tool_use of the previous assistant message",
                            result.tool_use_id
                        ))));
                    };
                    pending.remove(at_pending);
                    messages.push(ChatMessage::tool_result(result.tool_use_id.clone(), tool_result_text(result)));
                }
                if !pending.is_empty() {
                    return Err(invalid(at(&format!("tool_use {} has no tool_result", pending.join(", ")))));
                }
            }
            Role::User => {
                let mut parts = Vec::with_capacity(blocks.len());
                for block in blocks {
                    if let ContentBlock::ToolUse(_) = block {
                        return Err(invalid(at("tool_use blocks belong in assistant messages")));
                    }
                    parts.push(user_part(block, llm));
                }
                messages.push(ChatMessage::user_parts(merge_text(parts)));
            }
            Role::Assistant => {
                let mut text = Vec::new();
                let mut calls = Vec::new();
                for block in blocks {
                    match block {
                        ContentBlock::ToolUse(use_) => {
                            pending.push(use_.id.clone());
                            calls.push(ToolCall::new(
                                use_.id.clone(),
                                names.llm_name(&use_.name),
                                Value::Object(use_.input.clone()),
                            ));
                        }
                        ContentBlock::ToolResult(_) => {
                            return Err(invalid(at("tool_result blocks belong in user messages")));
                        }
                        other => text.push(block_text(other)),
                    }
                }
                let text = text.join("\n");
                messages.push(if calls.is_empty() {
                    ChatMessage::assistant(text)
                } else {
                    ChatMessage::assistant_tool_calls((!text.is_empty()).then_some(text), calls)
                });
            }
        }
    }
    if !pending.is_empty() {
        return Err(invalid(format!("the last message's tool_use {} has no tool_result", pending.join(", "))));
    }

    let tools: Vec<ToolDefinition> = params
        .tools
        .iter()
        .flatten()
        .map(|t| ToolDefinition {
            name: names.llm_name(&t.name),
            description: t.description.clone(),
            parameters: Value::Object((*t.input_schema).clone()),
        })
        .collect();
    let choice = match params.tool_choice.as_ref().and_then(|c| c.mode.as_ref()) {
        None if params.tool_choice.is_some() => Some(ToolChoice::Auto),
        None => None,
        Some(ToolChoiceMode::Auto) => Some(ToolChoice::Auto),
        Some(ToolChoiceMode::Required) => Some(ToolChoice::Required),
        Some(ToolChoiceMode::None) => Some(ToolChoice::None),
        Some(ToolChoiceMode::Unknown(mode)) => {
            return Err(invalid(format!("toolChoice.mode {mode:?} is not auto, required or none")));
        }
    };
    if choice == Some(ToolChoice::Required) && tools.is_empty() {
        return Err(invalid("toolChoice.mode is required but the request offers no tools"));
    }
    let temperature = params.temperature_f64();
    let model = pick_model(params.model_preferences.as_ref(), models);
    let request = ChatRequest {
        messages,
        // No tool_choice without tools: OpenAI and vLLM refuse it.
        tool_choice: choice.clone().filter(|_| !tools.is_empty()),
        tools,
        temperature,
        max_tokens: Some(max_tokens),
        stop: params.stop_sequences.clone().unwrap_or_default(),
        model: model.clone(),
        token_parameter: None,
    };
    Ok((request, Expectations { tools: names.offered, choice, model }))
}

fn is_tool_result(block: &ContentBlock) -> bool {
    matches!(block, ContentBlock::ToolResult(_))
}

/// Adjacent text parts joined into one, so that a text-only message stays a plain string.
fn merge_text(parts: Vec<ContentPart>) -> Vec<ContentPart> {
    let mut merged: Vec<ContentPart> = Vec::with_capacity(parts.len());
    for part in parts {
        match (merged.last_mut(), part) {
            (Some(ContentPart::Text(previous)), ContentPart::Text(next)) => {
                previous.push('\n');
                previous.push_str(&next);
            }
            (_, part) => merged.push(part),
        }
    }
    merged
}

/// A block of a user message: images and audio the LLM takes pass through, everything else
/// becomes text.
fn user_part(block: &ContentBlock, llm: &dyn LlmClient) -> ContentPart {
    match block {
        ContentBlock::Image(m) if llm.accepts_image(&m.mime_type) => {
            ContentPart::Image { mime_type: m.mime_type.clone(), data: m.data.clone() }
        }
        ContentBlock::Audio(m) if llm.accepts_audio(&m.mime_type) => {
            ContentPart::Audio { mime_type: m.mime_type.clone(), data: m.data.clone() }
        }
        ContentBlock::Resource(EmbeddedResource { resource: ResourceContents::Blob(b), .. })
            if b.mime_type.as_deref().is_some_and(|t| llm.accepts_image(t)) =>
        {
            ContentPart::Image { mime_type: b.mime_type.clone().unwrap_or_default(), data: b.blob.clone() }
        }
        other => ContentPart::Text(block_text(other)),
    }
}

/// A block as text: its text, or a placeholder that says what it was.
pub(crate) fn block_text(block: &ContentBlock) -> String {
    match block {
        ContentBlock::Text(t) => t.text.clone(),
        ContentBlock::Image(m) => media_placeholder("image", &m.mime_type, &m.data),
        ContentBlock::Audio(m) => media_placeholder("audio", &m.mime_type, &m.data),
        ContentBlock::Resource(r) => match &r.resource {
            ResourceContents::Text(t) => match &t.mime_type {
                Some(mime) => format!("[resource: {} ({mime})]\n{}", t.uri, t.text),
                None => format!("[resource: {}]\n{}", t.uri, t.text),
            },
            ResourceContents::Blob(b) => {
                let mime = b.mime_type.as_deref().unwrap_or("application/octet-stream");
                format!("[resource: {}, {mime}, {}]", b.uri, size_text(base64_len(&b.blob)))
            }
        },
        ContentBlock::ResourceLink(link) => link_text(link),
        ContentBlock::ToolUse(u) => format!("[tool call: {} {}]", u.name, Value::Object(u.input.clone())),
        ContentBlock::ToolResult(r) => format!("[tool result for {}]\n{}", r.tool_use_id, tool_result_text(r)),
        ContentBlock::Unknown(_) => format!("[unsupported content: {}]", block.kind()),
    }
}

fn link_text(link: &ResourceLink) -> String {
    let mut details = vec![format!("<{}>", link.uri)];
    details.extend(link.mime_type.clone());
    details.extend(link.size.map(size_text));
    let name = link.title.as_deref().unwrap_or(&link.name);
    let mut text = format!("[resource link: {name} {}]", details.join(", "));
    if let Some(d) = &link.description {
        text.push_str(&format!(" {d}"));
    }
    text
}

/// `[image: image/png, 3 KB]`.
fn media_placeholder(kind: &str, mime_type: &str, base64: &str) -> String {
    format!("[{kind}: {mime_type}, {}]", size_text(base64_len(base64)))
}

/// The decoded size of base64 text, without decoding it.
fn base64_len(data: &str) -> u64 {
    let data = data.trim_end();
    let padding = data.bytes().rev().take_while(|b| *b == b'=').count().min(2) as u64;
    (data.len() as u64 / 4 * 3 + (data.len() as u64 % 4) * 3 / 4).saturating_sub(padding)
}

fn size_text(bytes: u64) -> String {
    const KB: u64 = 1024;
    match bytes {
        b if b < KB => format!("{b} bytes"),
        b if b < KB * KB => format!("{} KB", b.div_ceil(KB)),
        b => format!("{:.1} MB", b as f64 / (KB * KB) as f64),
    }
}

/// A tool result as the text of a tool message: its blocks as text (placeholders for media),
/// else its structured content as JSON; an error is marked as one.
fn tool_result_text(result: &ToolResultContent) -> String {
    let mut text = result.content.iter().map(block_text).collect::<Vec<_>>().join("\n");
    if text.is_empty()
        && let Some(structured) = &result.structured_content
    {
        text = structured.to_string();
    }
    if result.is_error == Some(true) { format!("[tool error] {text}") } else { text }
}

/// The LLM's answer as a `CreateMessageResult`; an answer that breaks what the request asked
/// for (arguments that are not a JSON object, a tool that was not offered, no call when one was
/// required) is an LLM failure (-32603).
pub(crate) fn to_result(response: ChatResponse, expected: &Expectations) -> Result<CreateMessageResult, ErrorObject> {
    let mut uses = Vec::with_capacity(response.tool_calls.len());
    for call in response.tool_calls {
        let Some(name) = expected.tools.get(&call.name) else {
            return Err(llm_failure(format!("the LLM called tool {:?}, which the request did not offer", call.name)));
        };
        let input = match call.arguments {
            Ok(Value::Object(map)) => map,
            Ok(other) => {
                return Err(llm_failure(format!(
                    "the LLM called tool {:?} with arguments that are not a JSON object: {}",
                    call.name,
                    crate::llm::excerpt(&other.to_string(), 200)
                )));
            }
            Err(invalid) => return Err(llm_failure(format!("the LLM called tool {:?}: {invalid}", call.name))),
        };
        uses.push(ToolUseContent { id: call.id, name: name.clone(), input, ..Default::default() });
    }
    match (&expected.choice, uses.is_empty()) {
        (Some(ToolChoice::Required), true) => {
            return Err(llm_failure("toolChoice.mode is required but the LLM answered without a tool call"));
        }
        (Some(ToolChoice::None), false) => {
            return Err(llm_failure("toolChoice.mode is none but the LLM called a tool"));
        }
        _ => {}
    }
    let stop_reason = if !uses.is_empty() {
        StopReason::ToolUse
    } else {
        match response.finish_reason {
            FinishReason::Stop => StopReason::EndTurn,
            FinishReason::StopSequence(_) => StopReason::StopSequence,
            FinishReason::Length => StopReason::MaxTokens,
            // A finish reason of tool calls without a call (the tool-call parser of vLLM or
            // llama.cpp failed): the model ended its turn with text, and a server waiting for
            // tool_use blocks must not be told there are some.
            FinishReason::ToolCalls => {
                tracing::debug!("the LLM's finish reason is tool_calls but it called no tool: endTurn");
                StopReason::EndTurn
            }
            FinishReason::ContentFilter => StopReason::Unknown("contentFilter".into()),
            FinishReason::Other(other) => StopReason::Unknown(other),
        }
    };
    let text = response.text.unwrap_or_default();
    let content = if uses.is_empty() {
        SamplingContent::Single(ContentBlock::Text(TextContent::new(text)))
    } else {
        let mut blocks = Vec::with_capacity(uses.len() + 1);
        if !text.is_empty() {
            blocks.push(ContentBlock::Text(TextContent::new(text)));
        }
        blocks.extend(uses.into_iter().map(ContentBlock::ToolUse));
        SamplingContent::Multiple(blocks)
    };
    let model = if response.model.is_empty() { expected.model.clone().unwrap_or_default() } else { response.model };
    Ok(CreateMessageResult {
        role: Role::Assistant,
        content,
        model,
        stop_reason: Some(stop_reason),
        meta: None,
        extra: JsonObject::new(),
    })
}

#[cfg(test)]
#[path = "convert_tests.rs"]
mod tests;
