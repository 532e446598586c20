//! The chat-completions wire format: a [`ChatRequest`] as the JSON body OpenAI-compatible
//! servers take, and their JSON answer as a [`ChatResponse`].

use std::hash::{BuildHasher, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};

use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::{
    ChatMessage, ChatRequest, ChatResponse, ChatRole, ContentPart, FinishReason, InvalidArguments, LlmError, ToolCall,
    ToolChoice, Usage, excerpt,
};

/// How the body names the token limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TokenLimitField {
    /// `max_tokens`: what vLLM, llama.cpp, Ollama and older OpenAI models take.
    MaxTokens,
    /// `max_completion_tokens`: what newer OpenAI models require.
    MaxCompletionTokens,
}

impl TokenLimitField {
    /// The field's name in the body.
    pub(crate) fn name(self) -> &'static str {
        match self {
            TokenLimitField::MaxTokens => "max_tokens",
            TokenLimitField::MaxCompletionTokens => "max_completion_tokens",
        }
    }

    /// The other one.
    pub(crate) fn other(self) -> Self {
        match self {
            TokenLimitField::MaxTokens => TokenLimitField::MaxCompletionTokens,
            TokenLimitField::MaxCompletionTokens => TokenLimitField::MaxTokens,
        }
    }

    /// By the model's name: `max_completion_tokens` for OpenAI's o-series (`o1`, `o3-mini`,
    /// `o4-mini`, ...) and `gpt-5` and later (`gpt-5`, `gpt-5.1`, `gpt-5-mini`, `gpt-6`, ...),
    /// `max_tokens` for every other model. A provider prefix (`openai/gpt-5`) is ignored.
    pub(crate) fn for_model(model: &str) -> Self {
        let name = model.rsplit('/').next().unwrap_or(model).trim().to_ascii_lowercase();
        let o_series = name.strip_prefix('o').is_some_and(|rest| rest.starts_with(|c: char| c.is_ascii_digit()));
        let gpt_5_or_later = name.strip_prefix("gpt-").is_some_and(|rest| {
            let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
            digits.parse::<u32>().is_ok_and(|major| major >= 5)
        });
        if o_series || gpt_5_or_later { TokenLimitField::MaxCompletionTokens } else { TokenLimitField::MaxTokens }
    }
}

/// The JSON body of a chat-completions request.
pub(crate) fn encode(request: &ChatRequest, model: &str, limit_field: TokenLimitField) -> Result<Value, LlmError> {
    let mut body = Map::new();
    body.insert("model".into(), Value::from(request.model.as_deref().unwrap_or(model)));
    let messages = request.messages.iter().enumerate().map(|(i, m)| encode_message(i, m)).collect::<Result<_, _>>()?;
    body.insert("messages".into(), Value::Array(messages));
    if !request.tools.is_empty() {
        let tools = request
            .tools
            .iter()
            .map(|t| {
                let mut function = Map::new();
                function.insert("name".into(), Value::from(t.name.as_str()));
                if let Some(d) = &t.description {
                    function.insert("description".into(), Value::from(d.as_str()));
                }
                function.insert("parameters".into(), t.parameters.clone());
                json!({"type": "function", "function": function})
            })
            .collect();
        body.insert("tools".into(), Value::Array(tools));
    }
    // `tool_choice` goes only with tools: OpenAI answers 400 to a choice without them, and vLLM
    // refuses it too.
    if let Some(choice) = request.tool_choice.as_ref().filter(|_| !request.tools.is_empty()) {
        let choice = match choice {
            ToolChoice::Auto => json!("auto"),
            ToolChoice::Required => json!("required"),
            ToolChoice::None => json!("none"),
            ToolChoice::Tool(name) => json!({"type": "function", "function": {"name": name}}),
        };
        body.insert("tool_choice".into(), choice);
    }
    if let Some(t) = request.temperature {
        let t = serde_json::Number::from_f64(t)
            .ok_or_else(|| LlmError::InvalidRequest(format!("temperature {t} is not a finite number")))?;
        body.insert("temperature".into(), Value::Number(t));
    }
    if let Some(n) = request.max_tokens {
        body.insert(limit_field.name().into(), Value::from(n));
    }
    if !request.stop.is_empty() {
        body.insert("stop".into(), Value::from(request.stop.clone()));
    }
    Ok(Value::Object(body))
}

fn encode_message(index: usize, message: &ChatMessage) -> Result<Value, LlmError> {
    let role = message.role.as_str();
    let text_only = || -> Result<String, LlmError> {
        let mut text = String::new();
        for part in &message.content {
            match part {
                ContentPart::Text(t) => text.push_str(t),
                _ => {
                    return Err(LlmError::InvalidRequest(format!(
                        "message {index}: {role} messages carry text only, not images or audio"
                    )));
                }
            }
        }
        Ok(text)
    };
    if message.role != ChatRole::Assistant && !message.tool_calls.is_empty() {
        return Err(LlmError::InvalidRequest(format!("message {index}: only assistant messages carry tool calls")));
    }
    Ok(match message.role {
        ChatRole::System => json!({"role": role, "content": text_only()?}),
        ChatRole::User => json!({"role": role, "content": encode_user_content(index, &message.content)?}),
        ChatRole::Assistant => {
            let text = text_only()?;
            let mut m = Map::new();
            m.insert("role".into(), Value::from(role));
            let empty = text.is_empty() && !message.tool_calls.is_empty();
            m.insert("content".into(), if empty { Value::Null } else { Value::from(text) });
            if !message.tool_calls.is_empty() {
                let calls = message
                    .tool_calls
                    .iter()
                    .map(|c| {
                        // Invalid arguments go back as the model wrote them: the history must
                        // show what it said, not a repaired version.
                        let arguments = match &c.arguments {
                            Ok(v) => v.to_string(),
                            Err(invalid) => invalid.raw.clone(),
                        };
                        json!({"id": c.id, "type": "function", "function": {"name": c.name, "arguments": arguments}})
                    })
                    .collect();
                m.insert("tool_calls".into(), Value::Array(calls));
            }
            Value::Object(m)
        }
        ChatRole::Tool => {
            let Some(id) = &message.tool_call_id else {
                return Err(LlmError::InvalidRequest(format!(
                    "message {index}: a tool message needs its tool call id"
                )));
            };
            json!({"role": role, "tool_call_id": id, "content": text_only()?})
        }
    })
}

fn encode_user_content(index: usize, parts: &[ContentPart]) -> Result<Value, LlmError> {
    if let [ContentPart::Text(t)] = parts {
        return Ok(Value::from(t.as_str()));
    }
    let parts = parts
        .iter()
        .map(|part| {
            Ok(match part {
                ContentPart::Text(t) => json!({"type": "text", "text": t}),
                ContentPart::Image { mime_type, data } => {
                    json!({"type": "image_url", "image_url": {"url": format!("data:{mime_type};base64,{data}")}})
                }
                ContentPart::Audio { mime_type, data } => {
                    let Some(format) = audio_format(mime_type) else {
                        return Err(LlmError::InvalidRequest(format!(
                            "message {index}: audio of type {mime_type} cannot be sent (wav or mp3 only)"
                        )));
                    };
                    json!({"type": "input_audio", "input_audio": {"data": data, "format": format}})
                }
            })
        })
        .collect::<Result<_, LlmError>>()?;
    Ok(Value::Array(parts))
}

/// The `input_audio.format` of an audio MIME type.
pub(crate) fn audio_format(mime_type: &str) -> Option<&'static str> {
    match mime_type {
        "audio/wav" | "audio/x-wav" | "audio/wave" => Some("wav"),
        "audio/mpeg" | "audio/mp3" => Some("mp3"),
        _ => None,
    }
}

#[derive(Deserialize)]
struct Completion {
    #[serde(default)]
    model: Option<String>,
    #[serde(default)]
    choices: Option<Vec<Choice>>,
    #[serde(default)]
    usage: Option<WireUsage>,
    #[serde(default)]
    error: Option<Value>,
}

#[derive(Deserialize)]
struct Choice {
    #[serde(default)]
    message: Option<WireMessage>,
    #[serde(default)]
    finish_reason: Option<String>,
    /// vLLM: the stop string (or token id) that ended generation.
    #[serde(default)]
    stop_reason: Option<Value>,
}

#[derive(Deserialize)]
struct WireMessage {
    #[serde(default)]
    content: Option<Value>,
    #[serde(default)]
    tool_calls: Option<Vec<WireToolCall>>,
    #[serde(default)]
    refusal: Option<String>,
}

#[derive(Deserialize)]
struct WireToolCall {
    #[serde(default)]
    id: Option<String>,
    function: WireFunction,
}

#[derive(Deserialize)]
struct WireFunction {
    name: String,
    #[serde(default)]
    arguments: Option<Value>,
}

#[derive(Deserialize)]
struct WireUsage {
    #[serde(default)]
    prompt_tokens: u64,
    #[serde(default)]
    completion_tokens: u64,
}

/// Ids for the tool calls a server gives none: `call_<prefix>_<n>`, where the prefix is random
/// for each client (and the time it was made) and `n` counts the client's calls, so that ids are
/// unique across turns (a conversation of several answers never holds `call_0` twice).
#[derive(Debug)]
pub(crate) struct CallIds {
    prefix: String,
    next: AtomicU64,
}

impl CallIds {
    pub(crate) fn new() -> Self {
        // `RandomState` is seeded randomly per process, and differs for each one made.
        let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
        let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default().as_nanos();
        hasher.write_u128(nanos);
        CallIds { prefix: format!("{:012x}", hasher.finish() & 0xffff_ffff_ffff), next: AtomicU64::new(0) }
    }

    fn next(&self) -> String {
        format!("call_{}_{}", self.prefix, self.next.fetch_add(1, Ordering::Relaxed))
    }
}

/// Read a chat-completions answer. `fallback_model` names the model when the answer does not;
/// `ids` gives ids to tool calls that have none.
pub(crate) fn decode(body: &[u8], fallback_model: &str, ids: &CallIds) -> Result<ChatResponse, LlmError> {
    let completion: Completion = serde_json::from_slice(body).map_err(|e| {
        LlmError::InvalidResponse(format!(
            "{e}; the body starts with: {}",
            excerpt(&String::from_utf8_lossy(body), 200)
        ))
    })?;
    if let Some(error) = completion.error {
        return Err(LlmError::InvalidResponse(format!("an error object: {}", excerpt(&error.to_string(), 500))));
    }
    let Some(choice) = completion.choices.and_then(|c| c.into_iter().next()) else {
        return Err(LlmError::InvalidResponse("no choices".into()));
    };
    let message = choice.message.ok_or_else(|| LlmError::InvalidResponse("the first choice has no message".into()))?;
    let text = match message.content {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s),
        // Some servers answer with content parts: keep their text.
        Some(Value::Array(parts)) => {
            Some(parts.iter().filter_map(|p| p.get("text").and_then(Value::as_str)).collect::<String>())
        }
        Some(other) => {
            return Err(LlmError::InvalidResponse(format!(
                "message content is neither text nor parts: {}",
                excerpt(&other.to_string(), 200)
            )));
        }
    };
    // A refusal is the model's answer too: never drop it.
    let text = text.filter(|t| !t.is_empty()).or(message.refusal);
    let tool_calls: Vec<ToolCall> =
        message.tool_calls.unwrap_or_default().into_iter().map(|c| decode_tool_call(c, ids)).collect();
    let stop_string = match choice.stop_reason {
        Some(Value::String(s)) => Some(s),
        _ => None,
    };
    let finish_reason = match choice.finish_reason.as_deref() {
        _ if !tool_calls.is_empty() => FinishReason::ToolCalls,
        Some("stop") | None => stop_string.map_or(FinishReason::Stop, FinishReason::StopSequence),
        Some("length") => FinishReason::Length,
        Some("tool_calls" | "function_call") => FinishReason::ToolCalls,
        Some("content_filter") => FinishReason::ContentFilter,
        Some(other) => FinishReason::Other(other.to_owned()),
    };
    Ok(ChatResponse {
        text,
        tool_calls,
        finish_reason,
        model: completion.model.filter(|m| !m.is_empty()).unwrap_or_else(|| fallback_model.to_owned()),
        usage: completion
            .usage
            .map(|u| Usage { prompt_tokens: u.prompt_tokens, completion_tokens: u.completion_tokens }),
    })
}

fn decode_tool_call(call: WireToolCall, ids: &CallIds) -> ToolCall {
    let id = call.id.filter(|id| !id.is_empty()).unwrap_or_else(|| ids.next());
    let name = call.function.name;
    match call.function.arguments {
        Some(Value::String(raw)) => ToolCall::parse(id, name, &raw),
        // Some servers send the arguments as an object rather than as JSON text.
        Some(v @ Value::Object(_)) => ToolCall::new(id, name, v),
        None | Some(Value::Null) => ToolCall::new(id, name, Value::Object(Map::new())),
        Some(other) => ToolCall {
            id,
            name,
            arguments: Err(InvalidArguments {
                raw: other.to_string(),
                error: "arguments must be JSON text or an object".into(),
            }),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::ToolDefinition;

    fn request() -> ChatRequest {
        ChatRequest {
            messages: vec![
                ChatMessage::system("be terse"),
                ChatMessage::user_parts(vec![
                    ContentPart::text("what is this?"),
                    ContentPart::Image { mime_type: "image/png".into(), data: "iVBO".into() },
                    ContentPart::Audio { mime_type: "audio/wav".into(), data: "UklG".into() },
                ]),
                ChatMessage::assistant_tool_calls(None, vec![ToolCall::parse("c1", "look", "{\"x\":")]),
                ChatMessage::tool_result("c1", "a cat"),
            ],
            tools: vec![ToolDefinition {
                name: "look".into(),
                description: None,
                parameters: json!({"type": "object"}),
            }],
            tool_choice: Some(ToolChoice::Tool("look".into())),
            temperature: Some(0.5),
            max_tokens: Some(64),
            stop: vec!["END".into()],
            model: None,
            token_parameter: None,
        }
    }

    #[test]
    fn request_body_has_the_openai_shape() {
        let body = encode(&request(), "m1", TokenLimitField::MaxTokens).unwrap();
        assert_eq!(body["model"], "m1");
        assert_eq!(body["messages"][0], json!({"role": "system", "content": "be terse"}));
        let parts = &body["messages"][1]["content"];
        assert_eq!(parts[0], json!({"type": "text", "text": "what is this?"}));
        assert_eq!(parts[1]["image_url"]["url"], "data:image/png;base64,iVBO");
        assert_eq!(parts[2], json!({"type": "input_audio", "input_audio": {"data": "UklG", "format": "wav"}}));
        let assistant = &body["messages"][2];
        assert_eq!(assistant["content"], Value::Null);
        // The invalid arguments go back exactly as the model wrote them.
        assert_eq!(assistant["tool_calls"][0]["function"], json!({"name": "look", "arguments": "{\"x\":"}));
        assert_eq!(body["messages"][3], json!({"role": "tool", "tool_call_id": "c1", "content": "a cat"}));
        assert_eq!(
            body["tools"][0],
            json!({"type": "function", "function": {"name": "look", "parameters": {"type": "object"}}})
        );
        assert_eq!(body["tool_choice"], json!({"type": "function", "function": {"name": "look"}}));
        assert_eq!((body["temperature"].as_f64(), body["max_tokens"].as_u64()), (Some(0.5), Some(64)));
        assert_eq!(body["stop"], json!(["END"]));
        let body = encode(&request(), "m1", TokenLimitField::MaxCompletionTokens).unwrap();
        assert_eq!((body.get("max_tokens"), body["max_completion_tokens"].as_u64()), (None, Some(64)));
    }

    #[test]
    fn tool_choice_modes_and_a_plain_user_text() {
        for (choice, wire) in
            [(ToolChoice::Auto, "auto"), (ToolChoice::Required, "required"), (ToolChoice::None, "none")]
        {
            let mut r = ChatRequest {
                messages: vec![ChatMessage::user("hi")],
                tool_choice: Some(choice),
                ..Default::default()
            };
            // Without tools, no tool_choice: OpenAI and vLLM refuse one.
            let body = encode(&r, "m", TokenLimitField::MaxTokens).unwrap();
            assert_eq!(body.get("tool_choice"), None, "{wire}: {body}");
            assert_eq!(body["messages"][0]["content"], "hi");
            assert!(body.get("tools").is_none() && body.get("stop").is_none() && body.get("temperature").is_none());
            r.tools = request().tools;
            let body = encode(&r, "m", TokenLimitField::MaxTokens).unwrap();
            assert_eq!(body["tool_choice"], wire);
        }
    }

    #[test]
    fn the_token_parameter_follows_the_model_name() {
        for model in
            ["o1", "o1-preview", "o3-mini", "o4-mini", "gpt-5", "GPT-5.1", "gpt-5-mini", "openai/gpt-5", "gpt-6"]
        {
            assert_eq!(TokenLimitField::for_model(model), TokenLimitField::MaxCompletionTokens, "{model}");
        }
        for model in ["gpt-4o", "gpt-4.1-mini", "gpt-3.5-turbo", "gpt-oss-20b", "llama3", "omni", "olmo-2", "qwen3", ""]
        {
            assert_eq!(TokenLimitField::for_model(model), TokenLimitField::MaxTokens, "{model}");
        }
        assert_eq!(TokenLimitField::MaxTokens.other().name(), "max_completion_tokens");
    }

    #[test]
    fn malformed_requests_are_refused_before_sending() {
        let mut r = request();
        r.messages.push(ChatMessage { tool_call_id: None, ..ChatMessage::tool_result("x", "y") });
        let err = encode(&r, "m", TokenLimitField::MaxTokens).unwrap_err();
        assert!(err.to_string().contains("message 4: a tool message needs its tool call id"), "{err}");
        let mut r = request();
        r.messages[0].content.push(ContentPart::Image { mime_type: "image/png".into(), data: "x".into() });
        assert!(encode(&r, "m", TokenLimitField::MaxTokens).unwrap_err().to_string().contains("text only"));
        let mut r = request();
        r.messages[1].content[2] = ContentPart::Audio { mime_type: "audio/ogg".into(), data: "x".into() };
        assert!(encode(&r, "m", TokenLimitField::MaxTokens).unwrap_err().to_string().contains("audio/ogg"));
        let r =
            ChatRequest { messages: vec![ChatMessage::user("x")], temperature: Some(f64::NAN), ..Default::default() };
        assert!(encode(&r, "m", TokenLimitField::MaxTokens).is_err());
    }

    fn answer(choice: Value) -> Vec<u8> {
        serde_json::to_vec(&json!({"id": "x", "model": "served-model", "choices": [choice],
            "usage": {"prompt_tokens": 7, "completion_tokens": 3, "total_tokens": 10}}))
        .unwrap()
    }

    #[test]
    fn finish_reasons_map() {
        for (wire, stop_reason, expected) in [
            (json!("stop"), Value::Null, FinishReason::Stop),
            (json!("stop"), json!("END"), FinishReason::StopSequence("END".into())),
            (json!("stop"), json!(151643), FinishReason::Stop),
            (json!("length"), Value::Null, FinishReason::Length),
            (json!("tool_calls"), Value::Null, FinishReason::ToolCalls),
            (json!("function_call"), Value::Null, FinishReason::ToolCalls),
            (json!("content_filter"), Value::Null, FinishReason::ContentFilter),
            (json!("eos"), Value::Null, FinishReason::Other("eos".into())),
            (Value::Null, Value::Null, FinishReason::Stop),
        ] {
            let body = answer(json!({"message": {"role": "assistant", "content": "hi"}, "finish_reason": wire,
                "stop_reason": stop_reason}));
            let r = decode(&body, "fallback", &CallIds::new()).unwrap();
            assert_eq!(r.finish_reason, expected, "{wire} / {stop_reason}");
            assert_eq!((r.text.as_deref(), r.model.as_str()), (Some("hi"), "served-model"));
            assert_eq!(r.usage, Some(Usage { prompt_tokens: 7, completion_tokens: 3 }));
        }
    }

    #[test]
    fn tool_calls_decode_with_bad_arguments_reported() {
        let body = answer(json!({"message": {"role": "assistant", "content": null, "tool_calls": [
            {"id": "a", "type": "function", "function": {"name": "f", "arguments": "{\"q\": 1}"}},
            {"id": "b", "type": "function", "function": {"name": "g", "arguments": "{not json"}},
            {"type": "function", "function": {"name": "h", "arguments": {"as": "object"}}},
            {"id": "", "type": "function", "function": {"name": "k", "arguments": 5}}
        ]}, "finish_reason": "stop"}));
        let ids = CallIds::new();
        let r = decode(&body, "m", &ids).unwrap();
        assert_eq!(r.text, None);
        assert_eq!(r.finish_reason, FinishReason::ToolCalls, "tool calls win over a finish_reason of stop");
        assert_eq!(r.tool_calls[0], ToolCall::new("a", "f", json!({"q": 1})));
        let bad = r.tool_calls[1].arguments.as_ref().unwrap_err();
        assert_eq!(bad.raw, "{not json");
        let given = &r.tool_calls[2].id;
        assert!(given.starts_with("call_") && given.ends_with("_0"), "{given}");
        assert_eq!(r.tool_calls[2], ToolCall::new(given.clone(), "h", json!({"as": "object"})));
        assert!(r.tool_calls[3].id.starts_with("call_") && r.tool_calls[3].id.ends_with("_1"));
        assert!(r.tool_calls[3].arguments.is_err());
    }

    /// Ids the server did not give are unique across turns (the next answer does not start again
    /// at `call_0`), and across clients.
    #[test]
    fn missing_tool_call_ids_are_unique_across_turns_and_clients() {
        let body = answer(json!({"message": {"content": null, "tool_calls": [
            {"type": "function", "function": {"name": "f", "arguments": "{}"}}]}, "finish_reason": "tool_calls"}));
        let (one, other) = (CallIds::new(), CallIds::new());
        let mut seen = std::collections::HashSet::new();
        for ids in [&one, &one, &one, &other, &other] {
            let id = decode(&body, "m", ids).unwrap().tool_calls[0].id.clone();
            assert!(id.len() <= 40 && id.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'), "{id}");
            assert!(seen.insert(id.clone()), "{id} given twice: {seen:?}");
        }
    }

    #[test]
    fn odd_answers() {
        let parts =
            answer(json!({"message": {"content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}}));
        assert_eq!(decode(&parts, "m", &CallIds::new()).unwrap().text.as_deref(), Some("ab"));
        let refusal = answer(json!({"message": {"content": null, "refusal": "I can't"}, "finish_reason": "stop"}));
        assert_eq!(decode(&refusal, "m", &CallIds::new()).unwrap().text.as_deref(), Some("I can't"));
        let no_model = br#"{"choices": [{"message": {"content": "x"}}]}"#;
        assert_eq!(decode(no_model, "fallback", &CallIds::new()).unwrap().model, "fallback");
        for (body, needle) in [
            (&br#"{"choices": []}"#[..], "no choices"),
            (br#"{"choices": [{}]}"#, "has no message"),
            (br#"{"error": {"message": "overloaded"}}"#, "overloaded"),
            (b"<html>busy</html>", "<html>busy"),
            (br#"{"choices": [{"message": {"content": 5}}]}"#, "neither text nor parts"),
        ] {
            let err = decode(body, "m", &CallIds::new()).unwrap_err();
            assert!(matches!(err, LlmError::InvalidResponse(_)) && err.to_string().contains(needle), "{err}");
        }
    }
}
