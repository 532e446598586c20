use futures::future::BoxFuture;
use mcp_protocol::types::sampling::{SamplingMessage, ToolChoice as McpToolChoice};
use mcp_protocol::types::tools::Tool;
use serde_json::json;

use super::*;
use crate::llm::{ChatRole, LlmError};

/// An LLM that is never called: it only says which media it takes.
struct Media {
    images: bool,
    audio: bool,
}

impl LlmClient for Media {
    fn chat(&self, _: ChatRequest) -> BoxFuture<'static, Result<ChatResponse, LlmError>> {
        unreachable!("conversion never calls the LLM")
    }
    fn default_model(&self) -> &str {
        "default-model"
    }
    fn accepts_image(&self, mime_type: &str) -> bool {
        self.images && mime_type == "image/png"
    }
    fn accepts_audio(&self, mime_type: &str) -> bool {
        self.audio && mime_type == "audio/wav"
    }
}

const ALL: Media = Media { images: true, audio: true };
const TEXT_ONLY: Media = Media { images: false, audio: false };

fn params(messages: Value) -> CreateMessageParams {
    serde_json::from_value(json!({"messages": messages, "maxTokens": 100})).unwrap()
}

fn convert(p: &CreateMessageParams, llm: &Media) -> Result<ChatRequest, ErrorObject> {
    to_chat_request(p, llm, &[], 100).map(|(r, _)| r)
}

fn block(v: Value) -> ContentBlock {
    serde_json::from_value(v).unwrap()
}

/// `n` decoded bytes as base64 (`n` a multiple of 3).
fn b64(n: usize) -> String {
    "A".repeat(n / 3 * 4)
}

#[test]
fn every_content_block_converts_into_the_chat_model() {
    let user = json!([
        {"type": "text", "text": "look:"},
        {"type": "image", "data": "iVBO", "mimeType": "image/png"},
        {"type": "image", "data": b64(3 * 1024), "mimeType": "image/svg+xml"},
        {"type": "audio", "data": "UklG", "mimeType": "audio/wav"},
        {"type": "audio", "data": b64(12 * 1024), "mimeType": "audio/ogg"},
        {"type": "resource", "resource": {"uri": "file:///notes.txt", "mimeType": "text/plain", "text": "buy milk"}},
        {"type": "resource", "resource": {"uri": "file:///a.bin", "blob": b64(600)}},
        {"type": "resource", "resource": {"uri": "file:///pic.png", "mimeType": "image/png", "blob": "iVBO"}},
        {"type": "resource_link", "uri": "file:///r.pdf", "name": "report", "mimeType": "application/pdf", "size": 2048},
        {"type": "hologram", "frames": 3}
    ]);
    let p = params(json!([{"role": "user", "content": user}]));
    let r = convert(&p, &ALL).unwrap();
    assert_eq!(r.messages.len(), 1);
    let parts = &r.messages[0].content;
    let expected = vec![
        ContentPart::text("look:"),
        ContentPart::Image { mime_type: "image/png".into(), data: "iVBO".into() },
        ContentPart::text("[image: image/svg+xml, 3 KB]"),
        ContentPart::Audio { mime_type: "audio/wav".into(), data: "UklG".into() },
        ContentPart::text(
            "[audio: audio/ogg, 12 KB]\n[resource: file:///notes.txt (text/plain)]\nbuy milk\n\
             [resource: file:///a.bin, application/octet-stream, 600 bytes]",
        ),
        ContentPart::Image { mime_type: "image/png".into(), data: "iVBO".into() },
        ContentPart::text(
            "[resource link: report <file:///r.pdf>, application/pdf, 2 KB]\n[unsupported content: hologram]",
        ),
    ];
    assert_eq!(parts, &expected);

    // An LLM that takes neither images nor audio gets placeholders for both.
    let r = convert(&p, &TEXT_ONLY).unwrap();
    let text = r.messages[0].text();
    assert_eq!(r.messages[0].content.len(), 1, "all text: {:?}", r.messages[0].content);
    for needle in
        ["[image: image/png, 3 bytes]", "[audio: audio/wav, 3 bytes]", "[resource: file:///pic.png, image/png"]
    {
        assert!(text.contains(needle), "{needle} missing from {text}");
    }
}

#[test]
fn placeholder_sizes() {
    assert_eq!(
        block_text(&block(json!({"type": "audio", "data": b64(12 * 1024), "mimeType": "audio/wav"}))),
        "[audio: audio/wav, 12 KB]"
    );
    // Padding and unpadded base64 count exactly.
    assert_eq!(base64_len("QQ=="), 1);
    assert_eq!(base64_len("QUI="), 2);
    assert_eq!(base64_len("QUI"), 2);
    assert_eq!(size_text(3 * 1024 * 1024 + 512 * 1024), "3.5 MB");
    assert_eq!(size_text(1025), "2 KB");
}

#[test]
fn system_prompt_settings_and_assistant_text() {
    let mut p = params(json!([
        {"role": "user", "content": {"type": "text", "text": "hi"}},
        {"role": "assistant", "content": [{"type": "text", "text": "hello"},
            {"type": "image", "data": "iVBO", "mimeType": "image/png"}]},
        {"role": "user", "content": {"type": "text", "text": "again"}}
    ]));
    p.system_prompt = Some("You are terse.".into());
    p.temperature = Some(serde_json::Number::from_f64(0.25).unwrap());
    p.stop_sequences = Some(vec!["\n\n".into()]);
    let (r, expected) = to_chat_request(&p, &ALL, &[], 333).unwrap();
    let roles: Vec<_> = r.messages.iter().map(|m| m.role).collect();
    assert_eq!(roles, [ChatRole::System, ChatRole::User, ChatRole::Assistant, ChatRole::User]);
    assert_eq!(r.messages[0].text(), "You are terse.");
    // The assistant's image cannot go back to the LLM as an image: it is named instead.
    assert_eq!(r.messages[2].text(), "hello\n[image: image/png, 3 bytes]");
    assert_eq!((r.temperature, r.max_tokens, r.stop.clone()), (Some(0.25), Some(333), vec!["\n\n".to_owned()]));
    assert_eq!((r.tools.len(), r.tool_choice.clone(), r.model.clone()), (0, None, None));
    assert!(expected.tools.is_empty());
}

fn tool(name: &str) -> Tool {
    serde_json::from_value(json!({"name": name, "description": format!("the {name} tool"),
        "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}}}}))
    .unwrap()
}

fn with_tools(messages: Value, mode: Option<&str>) -> CreateMessageParams {
    let mut p = params(messages);
    p.tools = Some(vec![tool("weather"), tool("time")]);
    p.tool_choice = mode.map(|m| serde_json::from_value::<McpToolChoice>(json!({"mode": m})).unwrap());
    p
}

#[test]
fn tool_use_and_tool_result_become_calls_and_tool_messages() {
    let p = with_tools(
        json!([
            {"role": "user", "content": {"type": "text", "text": "weather in Paris and the time?"}},
            {"role": "assistant", "content": [
                {"type": "text", "text": "checking"},
                {"type": "tool_use", "id": "u1", "name": "weather", "input": {"city": "Paris"}},
                {"type": "tool_use", "id": "u2", "name": "time", "input": {}}
            ]},
            {"role": "user", "content": [
                {"type": "tool_result", "toolUseId": "u2", "content": [{"type": "text", "text": "noon"}]},
                {"type": "tool_result", "toolUseId": "u1", "content": [
                    {"type": "text", "text": "sunny"}, {"type": "image", "data": "iVBO", "mimeType": "image/png"}]}
            ]},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "u3", "name": "weather", "input": {}}]},
            {"role": "user", "content": [
                {"type": "tool_result", "toolUseId": "u3", "content": [], "structuredContent": {"t": 21}, "isError": true}
            ]}
        ]),
        Some("auto"),
    );
    let (r, expected) = to_chat_request(&p, &ALL, &[], 100).unwrap();
    let m = &r.messages;
    assert_eq!(m.len(), 6);
    assert_eq!(m[1].role, ChatRole::Assistant);
    assert_eq!(m[1].text(), "checking");
    assert_eq!(
        m[1].tool_calls,
        [ToolCall::new("u1", "weather", json!({"city": "Paris"})), ToolCall::new("u2", "time", json!({}))]
    );
    // Tool results are tool messages linked by id, in the order they came; media in a result
    // becomes a placeholder (tool messages carry text only).
    assert_eq!((m[2].role, m[2].tool_call_id.as_deref(), m[2].text().as_str()), (ChatRole::Tool, Some("u2"), "noon"));
    assert_eq!(
        (m[3].tool_call_id.as_deref(), m[3].text().as_str()),
        (Some("u1"), "sunny\n[image: image/png, 3 bytes]")
    );
    assert_eq!(m[4].content, []);
    assert_eq!(m[5].text(), "[tool error] {\"t\":21}");
    assert_eq!(r.tools.len(), 2);
    assert_eq!(r.tools[0].name, "weather");
    assert_eq!(r.tools[0].description.as_deref(), Some("the weather tool"));
    assert_eq!(r.tools[0].parameters["properties"]["city"]["type"], "string");
    assert_eq!(r.tool_choice, Some(ToolChoice::Auto));
    assert_eq!(expected.tools.len(), 2);
}

#[test]
fn every_tool_choice_mode() {
    let hi = json!([{"role": "user", "content": {"type": "text", "text": "hi"}}]);
    for (mode, expected) in [
        (Some("auto"), Some(ToolChoice::Auto)),
        (Some("required"), Some(ToolChoice::Required)),
        (Some("none"), Some(ToolChoice::None)),
        (None, None),
    ] {
        let r = convert(&with_tools(hi.clone(), mode), &ALL).unwrap();
        assert_eq!(r.tool_choice, expected, "{mode:?}");
    }
    // A toolChoice without a mode is auto.
    let mut p = with_tools(hi.clone(), None);
    p.tool_choice = Some(McpToolChoice::default());
    assert_eq!(convert(&p, &ALL).unwrap().tool_choice, Some(ToolChoice::Auto));
    let err = convert(&with_tools(hi.clone(), Some("sometimes")), &ALL).unwrap_err();
    assert_eq!(err.code, ErrorCode::INVALID_PARAMS);
    assert!(err.message.contains("\"sometimes\""), "{err:?}");
    let mut p = with_tools(hi.clone(), Some("required"));
    p.tools = None;
    assert!(convert(&p, &ALL).unwrap_err().message.contains("offers no tools"));
    // Without tools, no tool choice goes to the LLM (OpenAI and vLLM refuse one).
    for mode in ["auto", "none"] {
        let mut p = with_tools(hi.clone(), Some(mode));
        p.tools = Some(Vec::new());
        let (r, expected) = to_chat_request(&p, &ALL, &[], 100).unwrap();
        assert_eq!((r.tools.len(), r.tool_choice.as_ref()), (0, None), "{mode}");
        assert!(expected.choice.is_some(), "the answer is still checked against it");
    }
}

/// MCP allows tool names LLM APIs refuse (`github.search`, up to 128 characters): they go to
/// the LLM sanitised by the registry's rule, distinct after sanitising, valid names unchanged;
/// the LLM's calls come back under the MCP names, and the history's tool_use names are mapped
/// too.
#[test]
fn tool_names_are_made_valid_for_the_llm_and_mapped_back() {
    let long = format!("server.{}", "x".repeat(120));
    let mut p = params(json!([
        {"role": "user", "content": {"type": "text", "text": "search"}},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "u1", "name": "github.search", "input": {}},
            {"type": "tool_use", "id": "u2", "name": "old.tool", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "toolUseId": "u1", "content": []},
            {"type": "tool_result", "toolUseId": "u2", "content": []}]}
    ]));
    p.tools = Some(vec![tool("github.search"), tool("github_search"), tool(&long), tool("plain-name")]);
    let (r, expected) = to_chat_request(&p, &ALL, &[], 100).unwrap();
    let names: Vec<&str> = r.tools.iter().map(|t| t.name.as_str()).collect();
    for name in &names {
        assert!(tool_system::names::is_valid_name(name, 64), "{name:?} is not a valid LLM name");
    }
    assert_eq!(names.iter().collect::<std::collections::HashSet<_>>().len(), 4, "distinct: {names:?}");
    // The valid names are kept; `github.search` collides with `github_search` once sanitised.
    assert_eq!((names[1], names[3]), ("github_search", "plain-name"));
    assert!(names[0].starts_with("github_search_") && names[2].starts_with("server_xxx"), "{names:?}");
    assert_eq!(r.messages[1].tool_calls[0].name, names[0], "the history uses the LLM's names");
    assert_eq!(r.messages[1].tool_calls[1].name, "old_tool");

    let calls = vec![
        ToolCall::new("c1", names[0], json!({})),
        ToolCall::new("c2", names[1], json!({})),
        ToolCall::new("c3", names[2], json!({})),
    ];
    let result = to_result(answer(None, calls, FinishReason::ToolCalls), &expected).unwrap();
    let back: Vec<String> = result
        .content
        .blocks()
        .iter()
        .filter_map(|b| match b {
            ContentBlock::ToolUse(u) => Some(u.name.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(back, ["github.search", "github_search", long.as_str()]);
    // A name the LLM made up, or the original MCP name it was not given, or a tool only the
    // history names: an LLM failure naming it.
    for unknown in ["github.search", "old_tool", "launch"] {
        let calls = vec![ToolCall::new("c", unknown, json!({}))];
        let err = to_result(answer(None, calls, FinishReason::ToolCalls), &expected).unwrap_err();
        assert_eq!(err.code, ErrorCode::INTERNAL_ERROR);
        assert!(err.message.contains(&format!("{unknown:?}")), "{err:?}");
    }
}

#[test]
fn conversations_that_break_the_rules_are_invalid_params() {
    let cases = [
        (json!([]), "messages is empty"),
        (json!([{"role": "user", "content": []}]), "messages[0]: the message has no content"),
        (
            json!([{"role": "user", "content": {"type": "tool_use", "id": "x", "name": "weather", "input": {}}}]),
            "messages[0]: tool_use blocks belong in assistant messages",
        ),
        (
            json!([{"role": "assistant", "content": {"type": "tool_result", "toolUseId": "x", "content": []}}]),
            "messages[0]: tool_result blocks belong in user messages",
        ),
        (
            json!([{"role": "user", "content": {"type": "tool_result", "toolUseId": "x", "content": []}}]),
            "tool_result \"x\" answers no tool_use",
        ),
        (
            json!([{"role": "assistant", "content": {"type": "tool_use", "id": "a", "name": "weather", "input": {}}}]),
            "the last message's tool_use a has no tool_result",
        ),
        (
            json!([
                {"role": "assistant", "content": {"type": "tool_use", "id": "a", "name": "weather", "input": {}}},
                {"role": "user", "content": {"type": "text", "text": "never mind"}}
            ]),
            "messages[1]: tool_use a has no tool_result in the next message",
        ),
        (
            json!([
                {"role": "assistant", "content": [{"type": "tool_use", "id": "a", "name": "weather", "input": {}},
                    {"type": "tool_use", "id": "b", "name": "time", "input": {}}]},
                {"role": "user", "content": {"type": "tool_result", "toolUseId": "a", "content": []}}
            ]),
            "messages[1]: tool_use b has no tool_result",
        ),
        (
            json!([
                {"role": "assistant", "content": {"type": "tool_use", "id": "a", "name": "weather", "input": {}}},
                {"role": "user", "content": [{"type": "tool_result", "toolUseId": "a", "content": []},
                    {"type": "text", "text": "and also"}]}
            ]),
            "must hold only tool_result blocks",
        ),
    ];
    for (messages, needle) in cases {
        let err = convert(&with_tools(messages.clone(), None), &ALL).unwrap_err();
        assert_eq!(err.code, ErrorCode::INVALID_PARAMS, "{messages}");
        assert!(err.message.contains(needle), "{needle:?} not in {:?}", err.message);
    }
    let mut p = with_tools(json!([{"role": "user", "content": {"type": "text", "text": "x"}}]), None);
    p.tools = Some(vec![tool("weather"), tool("weather")]);
    assert!(convert(&p, &ALL).unwrap_err().message.contains("offered twice"));
}

#[test]
fn model_hints_pick_a_configured_model() {
    let models = ["gpt-4o-mini".to_owned(), "claude-3-5-sonnet".to_owned(), "llama3.1:8b".to_owned()];
    let prefs = |hints: Value| serde_json::from_value::<ModelPreferences>(json!({"hints": hints})).unwrap();
    assert_eq!(pick_model(Some(&prefs(json!([{"name": "Sonnet"}]))), &models).as_deref(), Some("claude-3-5-sonnet"));
    let ordered = prefs(json!([{"name": "gemini"}, {"name": "llama"}, {"name": "gpt"}]));
    assert_eq!(pick_model(Some(&ordered), &models).as_deref(), Some("llama3.1:8b"), "the first hint that matches wins");
    assert_eq!(pick_model(Some(&prefs(json!([{"name": "gemini"}, {}]))), &models), None);
    assert_eq!(pick_model(Some(&prefs(json!([{"name": ""}]))), &models), None);
    assert_eq!(pick_model(None, &models), None);
    let mut p = params(json!([{"role": "user", "content": {"type": "text", "text": "x"}}]));
    p.model_preferences = Some(prefs(json!([{"name": "sonnet"}])));
    let (r, expected) = to_chat_request(&p, &ALL, &models, 1).unwrap();
    assert_eq!((r.model.as_deref(), expected.model.as_deref()), (Some("claude-3-5-sonnet"), Some("claude-3-5-sonnet")));
}

fn answer(text: Option<&str>, calls: Vec<ToolCall>, finish: FinishReason) -> ChatResponse {
    ChatResponse {
        text: text.map(String::from),
        tool_calls: calls,
        finish_reason: finish,
        model: "m-1".into(),
        usage: None,
    }
}

fn expecting(choice: Option<ToolChoice>) -> Expectations {
    Expectations { tools: [("weather".to_owned(), "weather".to_owned())].into(), choice, model: None }
}

#[test]
fn stop_reasons_map_from_finish_reasons() {
    for (finish, stop) in [
        (FinishReason::Stop, StopReason::EndTurn),
        (FinishReason::StopSequence("END".into()), StopReason::StopSequence),
        (FinishReason::Length, StopReason::MaxTokens),
        // tool_calls without a call (a tool-call parser failed): the turn ended, with text.
        (FinishReason::ToolCalls, StopReason::EndTurn),
        (FinishReason::ContentFilter, StopReason::Unknown("contentFilter".into())),
        (FinishReason::Other("eos".into()), StopReason::Unknown("eos".into())),
    ] {
        let r = to_result(answer(Some("hi"), vec![], finish.clone()), &expecting(None)).unwrap();
        assert_eq!(r.stop_reason, Some(stop), "{finish:?}");
        assert_eq!(serde_json::to_value(&r).unwrap()["content"], json!({"type": "text", "text": "hi"}));
        assert_eq!((r.role, r.model.as_str()), (Role::Assistant, "m-1"));
    }
}

#[test]
fn tool_calls_become_the_with_tools_result() {
    let calls = vec![ToolCall::new("c1", "weather", json!({"city": "Paris"}))];
    let r = to_result(answer(Some("let me check"), calls.clone(), FinishReason::Stop), &expecting(None)).unwrap();
    assert_eq!(r.stop_reason, Some(StopReason::ToolUse), "a tool call means toolUse whatever the finish reason");
    assert_eq!(
        serde_json::to_value(&r.content).unwrap(),
        json!([{"type": "text", "text": "let me check"},
               {"type": "tool_use", "id": "c1", "name": "weather", "input": {"city": "Paris"}}])
    );
    let r = to_result(answer(None, calls.clone(), FinishReason::ToolCalls), &expecting(Some(ToolChoice::Required)))
        .unwrap();
    assert_eq!(r.content.blocks().len(), 1, "no empty text block");
    // An empty answer is an empty text, not a missing content.
    let r = to_result(answer(None, vec![], FinishReason::Stop), &expecting(None)).unwrap();
    assert_eq!(r.content.text(), "");
}

#[test]
fn answers_that_break_the_request_are_llm_failures() {
    let bad_json = ToolCall::parse("c", "weather", "{oops");
    let cases = [
        (answer(Some("no"), vec![], FinishReason::Stop), Some(ToolChoice::Required), "answered without a tool call"),
        (
            answer(None, vec![ToolCall::new("c", "weather", json!({}))], FinishReason::ToolCalls),
            Some(ToolChoice::None),
            "mode is none but the LLM called a tool",
        ),
        (answer(None, vec![ToolCall::new("c", "launch", json!({}))], FinishReason::ToolCalls), None, "\"launch\""),
        (answer(None, vec![bad_json], FinishReason::ToolCalls), None, "not valid JSON"),
        (
            answer(None, vec![ToolCall::new("c", "weather", json!([1]))], FinishReason::ToolCalls),
            None,
            "not a JSON object",
        ),
    ];
    for (response, choice, needle) in cases {
        let err = to_result(response, &expecting(choice)).unwrap_err();
        assert_eq!(err.code, ErrorCode::INTERNAL_ERROR);
        assert!(err.message.contains(needle), "{needle:?} not in {:?}", err.message);
    }
}

#[test]
fn uses_tools_sees_tools_choices_and_blocks() {
    let plain = params(json!([{"role": "user", "content": {"type": "text", "text": "x"}}]));
    assert!(!uses_tools(&plain));
    assert!(uses_tools(&with_tools(json!([{"role": "user", "content": {"type": "text", "text": "x"}}]), None)));
    let mut empty_tools = plain.clone();
    empty_tools.tools = Some(Vec::new());
    assert!(uses_tools(&empty_tools), "tools: [] is present, so it counts");
    let mut choice_only = plain.clone();
    choice_only.tool_choice = Some(McpToolChoice::default());
    assert!(uses_tools(&choice_only));
    let mut history = plain;
    history.messages.push(SamplingMessage {
        role: Role::User,
        content: SamplingContent::Single(block(json!({"type": "tool_result", "toolUseId": "a", "content": []}))),
        meta: None,
        extra: JsonObject::new(),
    });
    assert!(uses_tools(&history));
}
