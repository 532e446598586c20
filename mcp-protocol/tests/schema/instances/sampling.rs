//! Sampling (`sampling/createMessage`) and roots (`roots/list`): server requests in the legacy
//! era, input requests in 2026-07-28.

use mcp_protocol::types::common::{RequestParams, Role};
use mcp_protocol::types::content::ContentBlock;
use mcp_protocol::types::meta::Meta;
use mcp_protocol::types::roots::{ListRootsParams, ListRootsResult, Root};
use mcp_protocol::types::sampling::{
    CreateMessageParams, CreateMessageResult, IncludeContext, ModelHint, ModelPreferences, SamplingContent,
    SamplingMessage, StopReason, ToolChoice, ToolChoiceMode,
};
use serde_json::json;

use super::tasks::task_metadata;
use super::tools::tool;
use super::{Rev, Variant, content, item_meta, number, object, vendor_meta};

/// The `_meta` of a server request's params: a progress token, declared in 2025-11-25 only
/// (`roots/list` declares it in every legacy revision); 2026-07-28 input requests have none.
fn server_request_meta(rev: Rev, roots: bool) -> Option<Meta> {
    (rev == Rev::V2025_11_25 || (roots && !rev.is_modern()))
        .then(|| Meta::new().with(Meta::PROGRESS_TOKEN, "progress-2"))
}

/// The conversation; `full` uses every block kind the revision has: since 2025-11-25 as block
/// arrays (a user turn, the assistant's tool call, the user's tool result), one block per message
/// before.
fn messages(rev: Rev, full: bool) -> Vec<SamplingMessage> {
    let message =
        |role: Role, content: SamplingContent| SamplingMessage { role, content, meta: None, extra: Default::default() };
    if !full {
        return vec![SamplingMessage::user_text("What is the weather in Paris?")];
    }
    if rev < Rev::V2025_11_25 {
        let blocks = content::sampling_content(rev);
        return blocks.into_iter().map(|b| message(Role::User, SamplingContent::Single(b))).collect();
    }
    let [text, image, audio, tool_use, tool_result] = <[ContentBlock; 5]>::try_from(content::sampling_content(rev))
        .unwrap_or_else(|blocks| panic!("five sampling block kinds, got {}", blocks.len()));
    vec![
        SamplingMessage {
            meta: Some(vendor_meta()),
            ..message(Role::User, SamplingContent::Multiple(vec![text, image, audio]))
        },
        message(Role::Assistant, SamplingContent::Multiple(vec![tool_use])),
        message(Role::User, SamplingContent::Single(tool_result)),
    ]
}

/// `sampling/createMessage` params.
pub fn create_message_params(rev: Rev) -> Vec<Variant<Option<CreateMessageParams>>> {
    let build = |full: bool| {
        let mut params = CreateMessageParams { messages: messages(rev, full), max_tokens: 256, ..Default::default() };
        if full {
            params.model_preferences = Some(ModelPreferences {
                hints: Some(vec![ModelHint { name: Some("sonnet".to_owned()), ..Default::default() }]),
                cost_priority: Some(number(0.25)),
                speed_priority: Some(number(0.5)),
                intelligence_priority: Some(number(0.75)),
                ..Default::default()
            });
            params.system_prompt = Some("You are terse.".to_owned());
            params.include_context = Some(IncludeContext::ThisServer);
            params.temperature = Some(number(0.2));
            params.stop_sequences = Some(vec!["\n\n".to_owned()]);
            params.metadata = Some(object(json!({"provider": {"seed": 42}})));
            if rev >= Rev::V2025_11_25 {
                params.tools = Some(vec![tool(rev, true)]);
                params.tool_choice = Some(ToolChoice { mode: Some(ToolChoiceMode::Auto), ..Default::default() });
            }
            params.task = (rev == Rev::V2025_11_25).then(task_metadata);
            params.meta = server_request_meta(rev, false);
        }
        Some(params)
    };
    vec![Variant::min(build(false)), Variant::max(build(true))]
}

/// `sampling/createMessage` result: one block (minimal, maximal) or an array of blocks
/// (maximal, 2025-11-25+).
pub fn create_message_result(rev: Rev) -> Vec<Variant<CreateMessageResult>> {
    let build = |full: bool, content: SamplingContent| CreateMessageResult {
        role: Role::Assistant,
        content,
        model: "claude-sonnet".to_owned(),
        stop_reason: full.then_some(StopReason::EndTurn),
        meta: full.then(vendor_meta),
        extra: Default::default(),
    };
    let mut variants = vec![
        Variant::min(build(false, SamplingContent::Single(content::text(rev, false)))),
        Variant::max(build(true, SamplingContent::Single(content::text(rev, true)))),
    ];
    if rev >= Rev::V2025_11_25 {
        let blocks = vec![content::text(rev, true), content::tool_use(rev, true)];
        let mut result = build(true, SamplingContent::Multiple(blocks));
        result.stop_reason = Some(StopReason::ToolUse);
        variants.push(Variant::max_as("maximal (array content)", result));
    }
    variants
}

/// `roots/list` params: optional, with only `_meta`.
pub fn list_roots_params(rev: Rev) -> Vec<Variant<Option<ListRootsParams>>> {
    let meta = if rev.is_modern() { Some(vendor_meta()) } else { server_request_meta(rev, true) };
    vec![Variant::min(None), Variant::max(Some(RequestParams { meta, ..Default::default() }))]
}

/// `roots/list` result.
pub fn list_roots_result(rev: Rev) -> Vec<Variant<ListRootsResult>> {
    let build = |full: bool| {
        let mut root = Root::new("file:///project", None);
        if full {
            root.name = Some("project".to_owned());
            root.meta = item_meta(rev, true);
        }
        ListRootsResult {
            roots: vec![root],
            // An input response (2026-07-28) has no `_meta`.
            meta: (full && !rev.is_modern()).then(vendor_meta),
            ..Default::default()
        }
    };
    vec![Variant::min(build(false)), Variant::max(build(true))]
}
