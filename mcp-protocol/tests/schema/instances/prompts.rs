//! Prompts (`prompts/list`, `prompts/get`) and argument completion (`completion/complete`).

use std::collections::BTreeMap;

use mcp_protocol::types::common::Role;
use mcp_protocol::types::completion::{
    CompleteArgument, CompleteContext, CompleteParams, CompleteResult, Completion, PromptReference, Reference,
    ResourceTemplateReference,
};
use mcp_protocol::types::content::ContentBlock;
use mcp_protocol::types::prompts::{
    GetPromptParams, GetPromptResult, ListPromptsResult, Prompt, PromptArgument, PromptMessage,
};

use super::misc::input_responses;
use super::{Rev, Variant, cache_hints, complete, content, icons, item_meta, request_meta, result_meta};

/// A prompt; `full` fills every member the revision has.
pub fn prompt(rev: Rev, full: bool) -> Prompt {
    let mut prompt = Prompt { name: "summarize".to_owned(), ..Default::default() };
    if full {
        let titled = rev >= Rev::V2025_06_18;
        prompt.title = titled.then(|| "Summarize".to_owned());
        prompt.description = Some("Summarize a text".to_owned());
        prompt.arguments = Some(vec![PromptArgument {
            name: "style".to_owned(),
            title: titled.then(|| "Style".to_owned()),
            description: Some("terse or verbose".to_owned()),
            required: Some(false),
            ..Default::default()
        }]);
        prompt.icons = icons(rev, true);
        prompt.meta = item_meta(rev, true).map(Box::new);
    }
    prompt
}

/// `prompts/list` result.
pub fn list_prompts_result(rev: Rev) -> Vec<Variant<ListPromptsResult>> {
    let build = |full: bool| {
        let (ttl_ms, cache_scope) = cache_hints(rev);
        ListPromptsResult {
            prompts: vec![prompt(rev, full)],
            next_cursor: full.then(|| "page-2".to_owned()),
            ttl_ms,
            cache_scope,
            result_type: complete(rev),
            meta: result_meta(rev, full),
            ..Default::default()
        }
    };
    vec![Variant::min(build(false)), Variant::max(build(true))]
}

/// `prompts/get` params; the maximal 2026-07-28 instance is a retry with input responses.
pub fn get_prompt_params(rev: Rev) -> Vec<Variant<Option<GetPromptParams>>> {
    let build = |full: bool| {
        let mut params =
            GetPromptParams { name: "summarize".to_owned(), meta: request_meta(rev, full), ..Default::default() };
        if full {
            params.arguments = Some(BTreeMap::from([("style".to_owned(), "terse".to_owned())]));
            if rev.is_modern() {
                params.input_responses = Some(input_responses(rev));
                params.request_state = Some("state-1".to_owned());
            }
        }
        Some(params)
    };
    vec![Variant::min(build(false)), Variant::max(build(true))]
}

fn message(role: Role, content: ContentBlock) -> PromptMessage {
    PromptMessage { role, content, extra: Default::default() }
}

/// A completed `prompts/get` result: one message per content block kind of the revision.
pub fn get_prompt_result(rev: Rev) -> Vec<Variant<GetPromptResult>> {
    let build = |full: bool| {
        let messages = if full {
            let roles = [Role::User, Role::Assistant].into_iter().cycle();
            content::tool_content(rev).into_iter().zip(roles).map(|(block, role)| message(role, block)).collect()
        } else {
            vec![message(Role::User, content::text(rev, false))]
        };
        GetPromptResult {
            description: full.then(|| "A terse summary".to_owned()),
            messages,
            result_type: complete(rev),
            meta: result_meta(rev, full),
            ..Default::default()
        }
    };
    vec![Variant::min(build(false)), Variant::max(build(true))]
}

/// `completion/complete` params: a prompt reference (minimal and maximal) and a resource
/// template reference (maximal).
pub fn complete_params(rev: Rev) -> Vec<Variant<Option<CompleteParams>>> {
    let build = |full: bool, reference: Reference| {
        let context = (full && rev >= Rev::V2025_06_18).then(|| CompleteContext {
            arguments: Some(BTreeMap::from([("language".to_owned(), "en".to_owned())])),
            ..Default::default()
        });
        Some(CompleteParams {
            reference,
            argument: CompleteArgument { name: "style".to_owned(), value: "te".to_owned(), ..Default::default() },
            context,
            meta: request_meta(rev, full),
            extra: Default::default(),
        })
    };
    let prompt = PromptReference {
        name: "summarize".to_owned(),
        title: (rev >= Rev::V2025_06_18).then(|| "Summarize".to_owned()),
        ..Default::default()
    };
    let template = ResourceTemplateReference { uri: "file:///project/{path}".to_owned(), ..Default::default() };
    vec![
        Variant::min(build(false, Reference::prompt("summarize"))),
        Variant::max(build(true, Reference::Prompt(prompt))),
        Variant::max_as("maximal (resource template reference)", build(true, Reference::ResourceTemplate(template))),
    ]
}

/// `completion/complete` result.
pub fn complete_result(rev: Rev) -> Vec<Variant<CompleteResult>> {
    let build = |full: bool| {
        let mut completion = Completion { values: vec!["terse".to_owned()], ..Default::default() };
        if full {
            completion.values.push("technical".to_owned());
            completion.total = Some(2);
            completion.has_more = Some(false);
        }
        CompleteResult { completion, result_type: complete(rev), meta: result_meta(rev, full), ..Default::default() }
    };
    vec![Variant::min(build(false)), Variant::max(build(true))]
}
