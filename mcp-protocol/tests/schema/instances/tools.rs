//! Tools: `tools/list` and `tools/call`.

use mcp_protocol::types::tools::{
    CallToolParams, CallToolResult, ListToolsResult, Tool, ToolAnnotations, ToolExecution,
};
use serde_json::json;

use super::misc::input_responses;
use super::tasks::task_metadata;
use super::{Rev, Variant, cache_hints, complete, content, icons, item_meta, object, request_meta, result_meta};

/// A tool; `full` fills every member the revision has.
pub fn tool(rev: Rev, full: bool) -> Tool {
    let mut tool = Tool {
        name: "get_weather".to_owned(),
        input_schema: object(json!({"type": "object"})).into(),
        ..Default::default()
    };
    if !full {
        return tool;
    }
    tool.input_schema = object(json!({
        "type": "object",
        "properties": {"city": {"type": "string"}},
        "required": ["city"]
    }))
    .into();
    tool.description = Some("Current weather of a city".to_owned());
    if rev >= Rev::V2025_03_26 {
        tool.annotations = Some(Box::new(ToolAnnotations {
            title: Some("Weather".to_owned()),
            read_only_hint: Some(true),
            destructive_hint: Some(false),
            idempotent_hint: Some(true),
            open_world_hint: Some(true),
            ..Default::default()
        }));
    }
    if rev >= Rev::V2025_06_18 {
        tool.title = Some("Get weather".to_owned());
        tool.output_schema = Some(Box::new(object(json!({
            "type": "object",
            "properties": {"temperature": {"type": "number"}},
            "required": ["temperature"]
        }))));
        if rev >= Rev::V2025_11_25 {
            let dialect = json!("https://json-schema.org/draft/2020-12/schema");
            tool.input_schema.insert("$schema".to_owned(), dialect.clone());
            tool.output_schema.as_mut().expect("set above").insert("$schema".to_owned(), dialect);
        }
        tool.meta = item_meta(rev, true).map(Box::new);
    }
    if rev == Rev::V2025_11_25 {
        tool.execution =
            Some(Box::new(ToolExecution { task_support: Some("optional".to_owned()), ..Default::default() }));
    }
    tool.icons = icons(rev, true);
    tool
}

/// `tools/list` result.
pub fn list_tools_result(rev: Rev) -> Vec<Variant<ListToolsResult>> {
    let build = |full: bool| {
        let (ttl_ms, cache_scope) = cache_hints(rev);
        ListToolsResult {
            tools: vec![tool(rev, full)],
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

/// `tools/call` params; the maximal 2026-07-28 instance is a retry with input responses.
pub fn call_tool_params(rev: Rev) -> Vec<Variant<Option<CallToolParams>>> {
    let build = |full: bool| {
        let mut params = CallToolParams {
            name: "get_weather".to_owned(),
            meta: request_meta(rev, full).map(Box::new),
            ..Default::default()
        };
        if full {
            params.arguments = Some(object(json!({"city": "Paris"})));
            params.task = (rev == Rev::V2025_11_25).then(task_metadata);
            if rev.is_modern() {
                params.input_responses = Some(input_responses(rev));
                params.request_state = Some("state-1".to_owned());
            }
        }
        Some(params)
    };
    vec![Variant::min(build(false)), Variant::max(build(true))]
}

/// A completed `tools/call` result.
pub fn call_tool_result(rev: Rev) -> Vec<Variant<CallToolResult>> {
    let build = |full: bool| {
        let mut result = CallToolResult {
            content: vec![content::text(rev, false)],
            result_type: complete(rev),
            meta: result_meta(rev, full).map(Box::new),
            ..Default::default()
        };
        if full {
            result.content = content::tool_content(rev);
            result.structured_content =
                (rev >= Rev::V2025_06_18).then(|| json!({"temperature": 22, "conditions": "sunny"}));
            result.is_error = Some(false);
        }
        result
    };
    vec![Variant::min(build(false)), Variant::max(build(true))]
}
