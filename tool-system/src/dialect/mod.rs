//! The tool definitions LLM APIs take ([`LlmDialect`]), made from an [`ExposedTool`].
//!
//! Every dialect starts from the cleaned schema ([`clean_schema`]: no `$schema`, no root `$id`);
//! the [`ToolSpec`](crate::ToolSpec) keeps the server's schema unchanged, so validation still
//! uses it. Server schemas are untrusted: every rewrite is bounded in depth and size.
//!
//! | dialect | shape | schema |
//! |---|---|---|
//! | [`OpenAi`](LlmDialect::OpenAi) | `{"type": "function", "function": {"name", "description", "parameters"}}` | cleaned, root `type: object` |
//! | [`OpenAiStrict`](LlmDialect::OpenAiStrict) | the same, with `"strict": true` | rewritten for strict mode (see [`strict`]); `"strict": false` and the cleaned schema when it cannot be |
//! | [`Gemini`](LlmDialect::Gemini) | a function declaration `{"name", "description", "parameters", "response"}` (put them in `tools: [{"functionDeclarations": [...]}]`) | the OpenAPI 3.0 subset (see [`gemini`]); `parameters` left out when there are none, `response` from the output schema |
//! | [`Anthropic`](LlmDialect::Anthropic) | `{"name", "description", "input_schema"}` | cleaned; `anyOf`/`oneOf`/`allOf` at the root (which the API refuses) merged into one object |
//!
//! Names are the registry's exposed names, which every dialect accepts (`^[a-zA-Z_][a-zA-Z0-9_-]{0,63}$`).

pub mod gemini;
pub(crate) mod keywords;
pub(crate) mod nulls;
pub mod strict;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

pub use gemini::{MAX_GEMINI_DEPTH, MAX_GEMINI_NODES};
pub use keywords::{MAX_CLEAN_DEPTH, MAX_CLEAN_NODES, clean_schema};
pub use strict::{MAX_STRICT_CHARS, MAX_STRICT_ENUM_VALUES, MAX_STRICT_NESTING, MAX_STRICT_PROPERTIES};

use crate::ExposedTool;
use keywords::{required_of, resolve_local};

/// The tool definition format of an LLM API. See the [module docs](self) for each shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum LlmDialect {
    /// OpenAI function tools (also what OpenAI-compatible servers take): the default.
    #[default]
    OpenAi,
    /// OpenAI function tools with `strict: true` (Structured Outputs), where the schema allows.
    OpenAiStrict,
    /// Gemini function declarations (an OpenAPI 3.0 schema subset).
    Gemini,
    /// Anthropic tools (`input_schema`).
    Anthropic,
}

impl ExposedTool {
    /// The OpenAI function-tool definition:
    /// `{"type": "function", "function": {"name", "description", "parameters"}}`, the
    /// parameters cleaned (see [`LlmDialect`]).
    pub fn to_llm_definition(&self) -> Value {
        self.to_llm_definition_for(LlmDialect::OpenAi)
    }

    /// The definition of this tool in `dialect`.
    pub fn to_llm_definition_for(&self, dialect: LlmDialect) -> Value {
        let name = Value::String(self.llm_name.to_string());
        let description = self.spec.description.as_ref().or(self.spec.title.as_ref()).cloned().map(Value::String);
        let parameters = parameters(&self.spec.parameters);
        let mut out = Map::new();
        match dialect {
            LlmDialect::OpenAi | LlmDialect::OpenAiStrict => {
                let mut function = Map::new();
                function.insert("name".into(), name);
                function.extend(description.map(|d| ("description".to_owned(), d)));
                if dialect == LlmDialect::OpenAiStrict {
                    match strict::to_strict(&parameters) {
                        Ok(strict) => {
                            function.insert("parameters".into(), strict);
                            function.insert("strict".into(), Value::Bool(true));
                        }
                        Err(reason) => {
                            tracing::debug!(tool = %self.llm_name, %reason, "not strict: the definition falls back to strict: false");
                            function.insert("parameters".into(), parameters);
                            function.insert("strict".into(), Value::Bool(false));
                        }
                    }
                } else {
                    function.insert("parameters".into(), parameters);
                }
                out.insert("type".into(), Value::String("function".into()));
                out.insert("function".into(), Value::Object(function));
            }
            LlmDialect::Gemini => {
                out.insert("name".into(), name);
                out.extend(description.map(|d| ("description".to_owned(), d)));
                let flat = flatten_root(parameters);
                let converted = gemini::to_gemini(&flat, &flat);
                if converted.get("properties").and_then(Value::as_object).is_some_and(|p| !p.is_empty()) {
                    out.insert("parameters".into(), converted);
                }
                if let Some(output) = &self.spec.output_schema {
                    let output = clean_schema(output);
                    out.insert("response".into(), gemini::to_gemini(&output, &output));
                }
            }
            LlmDialect::Anthropic => {
                out.insert("name".into(), name);
                out.extend(description.map(|d| ("description".to_owned(), d)));
                out.insert("input_schema".into(), flatten_root(parameters));
            }
        }
        Value::Object(out)
    }
}

/// The cleaned parameters, always an object schema (`type: object` added when absent; anything
/// that is not a JSON object becomes the empty object schema).
pub(crate) fn parameters(schema: &Value) -> Value {
    match clean_schema(schema) {
        Value::Object(mut schema) => {
            schema.entry("type").or_insert_with(|| Value::String("object".into()));
            Value::Object(schema)
        }
        _ => crate::spec::empty_object_schema(),
    }
}

/// How many root branches [`flatten_root`] merges.
const MAX_ROOT_BRANCHES: usize = 64;

/// `schema` with `allOf`, `anyOf` and `oneOf` at the root merged into one object schema, for
/// APIs that refuse them there: the branches' properties are united (the first definition of a
/// name wins); `allOf` members' required names all stay required, `anyOf`/`oneOf` branches'
/// only when every branch requires them. A local `$ref` branch is followed once. The result
/// accepts every argument object the original accepts (the server still checks the rest).
pub(crate) fn flatten_root(schema: Value) -> Value {
    let Value::Object(mut root) = schema else { return schema };
    let all_of = root.remove("allOf");
    let one_of = root.remove("oneOf");
    let any_of = root.remove("anyOf");
    if all_of.is_none() && one_of.is_none() && any_of.is_none() {
        return Value::Object(root);
    }
    let whole = Value::Object(root.clone());
    let branch_of = |branch: &Value| -> Option<Map<String, Value>> {
        let map = branch.as_object()?;
        match map.get("$ref").and_then(Value::as_str) {
            Some(reference) => resolve_local(&whole, reference).and_then(Value::as_object).cloned(),
            None => Some(map.clone()),
        }
    };
    let mut properties = match root.remove("properties") {
        Some(Value::Object(properties)) => properties,
        _ => Map::new(),
    };
    let mut required: Vec<String> = required_of(&root).into_iter().map(str::to_owned).collect();
    let mut absorb = |branch: &Map<String, Value>| {
        if let Some(Value::Object(theirs)) = branch.get("properties") {
            for (name, schema) in theirs {
                properties.entry(name.clone()).or_insert_with(|| schema.clone());
            }
        }
    };
    for member in all_of.iter().filter_map(Value::as_array).flatten().take(MAX_ROOT_BRANCHES) {
        let Some(member) = branch_of(member) else { continue };
        absorb(&member);
        for name in required_of(&member) {
            if !required.iter().any(|r| r == name) {
                required.push(name.to_owned());
            }
        }
    }
    for branches in [one_of, any_of].iter().flatten().filter_map(Value::as_array) {
        let branches: Vec<Map<String, Value>> = branches.iter().take(MAX_ROOT_BRANCHES).filter_map(branch_of).collect();
        for branch in &branches {
            absorb(branch);
        }
        if let Some((first, rest)) = branches.split_first() {
            for name in required_of(first) {
                if rest.iter().all(|b| required_of(b).contains(&name)) && !required.iter().any(|r| r == name) {
                    required.push(name.to_owned());
                }
            }
        }
    }
    root.insert("type".into(), Value::String("object".into()));
    root.insert("properties".into(), Value::Object(properties));
    if required.is_empty() {
        root.remove("required");
    } else {
        root.insert("required".into(), Value::Array(required.into_iter().map(Value::String).collect()));
    }
    Value::Object(root)
}
