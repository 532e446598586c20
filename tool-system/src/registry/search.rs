//! The built-in `tool_search` tool: finds deferred tools by name and description.

use serde_json::{Map, Value, json};

use super::availability::Gate;
use crate::{ExposedTool, ToolExecutionResult, ToolSpec};

/// The name of the built-in search tool. It is reserved: a provider's tool whose qualified name
/// is `tool_search` is skipped with a warning.
pub const TOOL_SEARCH_NAME: &str = "tool_search";
/// The provider name and type the registry gives the built-in search tool.
pub const BUILTIN_PROVIDER: &str = "builtin";
/// How many tools `tool_search` returns when the call gives no `limit`.
pub const DEFAULT_SEARCH_LIMIT: usize = 10;
/// The most tools one search returns, whatever `limit` says.
pub const MAX_SEARCH_LIMIT: usize = 50;

/// The spec of the built-in `tool_search` tool (arguments `{"query": string, "limit"?: integer}`).
pub fn tool_search_spec() -> ToolSpec {
    ToolSpec::new(TOOL_SEARCH_NAME)
        .with_title("Search tools")
        .with_description(
            "Search for more tools by keywords. Matches tool names and descriptions and returns \
             the matching tools with their names, descriptions and parameter schemas; call a \
             found tool by the name given.",
        )
        .with_parameters(json!({
            "type": "object",
            "properties": {
                "query": { "type": "string", "description": "Keywords to look for in tool names and descriptions." },
                "limit": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": MAX_SEARCH_LIMIT,
                    "description": format!("The most tools to return (default {DEFAULT_SEARCH_LIMIT}).")
                }
            },
            "required": ["query"]
        }))
        .with_provider(BUILTIN_PROVIDER, BUILTIN_PROVIDER)
}

/// The parsed arguments of a `tool_search` call.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct SearchArgs {
    pub(crate) query: String,
    pub(crate) limit: usize,
}

impl SearchArgs {
    /// Parses `{"query": string, "limit"?: integer}`; an error names the argument at fault.
    pub(crate) fn parse(arguments: &Map<String, Value>) -> Result<Self, String> {
        let query = match arguments.get("query") {
            Some(Value::String(query)) => query.clone(),
            Some(other) => return Err(format!("argument `query`: expected a string, found {}", kind(other))),
            None => return Err("invalid arguments: missing field `query`".to_owned()),
        };
        let limit = match arguments.get("limit") {
            None | Some(Value::Null) => DEFAULT_SEARCH_LIMIT,
            Some(Value::Number(n)) => match n.as_u64() {
                Some(0) | None => return Err(format!("argument `limit`: expected a positive integer, found {n}")),
                Some(limit) => usize::try_from(limit).unwrap_or(MAX_SEARCH_LIMIT).min(MAX_SEARCH_LIMIT),
            },
            Some(other) => return Err(format!("argument `limit`: expected a positive integer, found {}", kind(other))),
        };
        Ok(Self { query, limit })
    }
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// How well `tool` matches the lower-cased query `terms`: 0 is no match. Every term must match
/// somewhere; a match in the name weighs more than one in the description.
fn score(tool: &ExposedTool, phrase: &str, terms: &[String]) -> u32 {
    let name = tool.llm_name.to_lowercase();
    let original = tool.spec.name.to_lowercase();
    let title = tool.spec.title.as_deref().unwrap_or_default().to_lowercase();
    let description = tool.spec.description.as_deref().unwrap_or_default().to_lowercase();
    let mut total = 0;
    for term in terms {
        let term_score = if name == *term || original == *term {
            10
        } else if name.contains(term.as_str()) || original.contains(term.as_str()) {
            5
        } else if title.contains(term.as_str()) {
            3
        } else if description.contains(term.as_str()) {
            2
        } else {
            return 0;
        };
        total += term_score;
    }
    if terms.len() > 1 && (name.contains(phrase) || description.contains(phrase)) {
        total += 5;
    }
    total
}

/// The deferred tools matching `query` that `gate` allows, best first (ties keep registration
/// order), at most `limit` (clamped to [`MAX_SEARCH_LIMIT`]). A blank query matches every
/// deferred tool.
pub(crate) fn search_deferred<'a>(
    tools: &'a [ExposedTool],
    query: &str,
    limit: usize,
    gate: &Gate<'_>,
) -> Vec<&'a ExposedTool> {
    let limit = limit.min(MAX_SEARCH_LIMIT);
    let phrase = query.trim().to_lowercase();
    let terms: Vec<String> = phrase.split_whitespace().map(str::to_owned).collect();
    let mut hits: Vec<(u32, usize)> = tools
        .iter()
        .enumerate()
        .filter(|(_, tool)| tool.spec.is_deferred() && tool.spec.callers.model)
        .filter_map(|(index, tool)| {
            let score = if terms.is_empty() { 1 } else { score(tool, &phrase, &terms) };
            (score > 0 && gate.allows(tool)).then_some((score, index))
        })
        .collect();
    hits.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    hits.into_iter().take(limit).map(|(_, index)| &tools[index]).collect()
}

/// The result of a `tool_search` call: the found tools in the function format (`name`,
/// `description`, `parameters`, the schema cleaned as in every LLM definition) as structured
/// content `{"tools": [...]}`, with the same JSON as
/// the content text so the LLM reads it from the history.
pub(crate) fn search_result(found: &[&ExposedTool], query: &str) -> ToolExecutionResult {
    let tools: Vec<Value> = found.iter().map(|tool| crate::registry::function_body(tool)).collect();
    let structured = json!({ "tools": tools });
    let text = if found.is_empty() { format!("No tools match {query:?}.") } else { structured.to_string() };
    ToolExecutionResult::ok_text(text).with_structured(structured).with_metadata("match_count", json!(found.len()))
}
