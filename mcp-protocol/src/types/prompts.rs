//! Prompts: listing, getting (with the 2026-07-28 multi round-trip outcome), and the
//! list_changed notification.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::common::{Icon, PaginatedParams, ResultType, Role};
use super::content::ContentBlock;
use super::extra::Extra;
use super::meta::{JsonObject, Meta};
use super::mrtr::{InputResponses, Outcome};

/// A prompt or prompt template the server offers.
///
/// Its `_meta` and the members this crate does not model are boxed, as a tool's are: a host keeps
/// the prompts of every server.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Prompt {
    /// Programmatic name, unique within the server.
    pub name: String,
    /// Display name (2025-06-18+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What the prompt provides.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The arguments the prompt template accepts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<Vec<PromptArgument>>,
    /// Icons (2025-11-25+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icons: Option<Vec<Icon>>,
    /// `_meta` (2025-06-18+).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Box<Meta>>,
    /// Members this crate does not model.
    #[serde(flatten)]
    pub extra: Extra,
}

/// An argument a prompt template accepts.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PromptArgument {
    /// Programmatic name.
    pub name: String,
    /// Display name (2025-06-18+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What the argument is for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Whether the argument must be given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub required: Option<bool>,
    /// Members this crate does not model.
    #[serde(flatten)]
    pub extra: Extra,
}

/// One message of a prompt. Unlike a sampling message it carries a single content block.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PromptMessage {
    /// Who says it.
    pub role: Role,
    /// What is said: text, image, audio (2025-03-26+), resource_link (2025-06-18+) or an
    /// embedded resource.
    pub content: ContentBlock,
    /// Members this crate does not model.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// Params of `prompts/list`.
pub type ListPromptsParams = PaginatedParams;

crate::paginated_results! {
    /// Result of `prompts/list`.
    ListPromptsResult {
        /// The prompts of this page.
        prompts: Vec<Prompt>
    }
}

/// Params of `prompts/get`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GetPromptParams {
    /// The prompt name.
    pub name: String,
    /// Values of the template arguments (strings only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<BTreeMap<String, String>>,
    /// Answers to the server's input requests (2026-07-28 retry).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_responses: Option<InputResponses>,
    /// The opaque state the server returned with its input requests (2026-07-28 retry).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_state: Option<String>,
    /// `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Members this crate does not model.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// Result of a completed `prompts/get`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GetPromptResult {
    /// Description of the prompt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The prompt's messages.
    pub messages: Vec<PromptMessage>,
    /// `resultType` (2026-07-28).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_type: Option<ResultType>,
    /// `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Members this crate does not model.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// What `prompts/get` may answer: a result or a request for input (2026-07-28).
pub type GetPromptOutcome = Outcome<GetPromptResult>;

crate::request_methods! {
    /// `prompts/list`.
    ListPrompts = "prompts/list", ListPromptsParams => ListPromptsResult;
}

/// `prompts/get`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GetPrompt;
impl crate::method::RequestMethod for GetPrompt {
    const METHOD: &'static str = "prompts/get";
    type Params = GetPromptParams;
    type Result = GetPromptOutcome;
    fn decode_result(raw: &crate::RawJson) -> Result<Self::Result, serde_json::Error> {
        Outcome::decode(raw)
    }
}

crate::notification_methods! {
    /// `notifications/prompts/list_changed`.
    PromptListChanged = "notifications/prompts/list_changed", super::common::NotificationParams;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::method::RequestMethod;
    use crate::types::common::CacheScope;
    use serde_json::json;

    #[test]
    fn list_result_round_trips_with_cache_hints_and_unknown_members() {
        let v = json!({
            "cacheScope": "public",
            "prompts": [{
                "name": "greet",
                "title": "Greeting",
                "description": "Say hello",
                "arguments": [{"name": "who", "description": "Whom", "required": true, "hint": 1}],
                "icons": [{"src": "https://example.com/i.png"}],
                "_meta": {"x": 1}
            }],
            "resultType": "complete",
            "ttlMs": 60000,
            "nextCursor": "p2",
            "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "s", "version": "1"}},
            "future": [1, 2]
        });
        let r: ListPromptsResult = serde_json::from_value(v.clone()).unwrap();
        assert_eq!(r.cache_scope, Some(CacheScope::Public));
        assert_eq!(r.ttl_ms, Some(60000));
        assert_eq!(r.prompts[0].arguments.as_ref().unwrap()[0].required, Some(true));
        assert_eq!(r.extra["future"], json!([1, 2]));
        assert_eq!(serde_json::to_value(&r).unwrap(), v);
    }

    #[test]
    fn get_params_round_trip() {
        let v = json!({
            "name": "complex_prompt",
            "arguments": {"temperature": "0.7", "style": "terse"},
            "inputResponses": {"r1": {"action": "accept", "content": {"name": "Ada"}}},
            "requestState": "opaque",
            "_meta": {"progressToken": 3},
            "extra": true
        });
        let p: GetPromptParams = serde_json::from_value(v.clone()).unwrap();
        assert_eq!(p.arguments.as_ref().unwrap()["style"], "terse");
        assert_eq!(p.request_state.as_deref(), Some("opaque"));
        assert_eq!(serde_json::to_value(&p).unwrap(), v);
    }

    #[test]
    fn get_outcome_decodes_complete_and_input_required() {
        let complete = r#"{"description":"d","messages":[{"role":"user","content":{"type":"text","text":"hi"}},{"role":"assistant","content":{"type":"resource","resource":{"uri":"test://1","mimeType":"text/plain","text":"x"}}}],"resultType":"complete"}"#;
        let raw = crate::RawJson::from_string(complete.to_owned()).unwrap();
        let out = GetPrompt::decode_result(&raw).unwrap();
        let Outcome::Complete(r) = &out else { panic!("{out:?}") };
        assert_eq!(r.messages.len(), 2);
        assert_eq!(r.messages[0].content.as_text(), Some("hi"));
        assert_eq!(r.messages[1].role, Role::Assistant);
        let back: serde_json::Value = serde_json::to_value(&out).unwrap();
        assert_eq!(back, serde_json::from_str::<serde_json::Value>(complete).unwrap());

        let needs =
            r#"{"resultType":"input_required","inputRequests":{"a":{"method":"roots/list"}},"requestState":"s1"}"#;
        let raw = crate::RawJson::from_string(needs.to_owned()).unwrap();
        let out = GetPrompt::decode_result(&raw).unwrap();
        let Outcome::InputRequired(ir) = out else { panic!() };
        assert_eq!(ir.request_state.as_deref(), Some("s1"));
    }

    #[test]
    fn markers() {
        assert_eq!(ListPrompts::METHOD, "prompts/list");
        assert_eq!(GetPrompt::METHOD, "prompts/get");
        assert_eq!(
            <PromptListChanged as crate::method::NotificationMethod>::METHOD,
            "notifications/prompts/list_changed"
        );
    }
}
