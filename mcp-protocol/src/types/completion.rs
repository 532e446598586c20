//! Completion: argument autocompletion for prompts and resource templates.

use std::collections::BTreeMap;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use super::common::ResultType;
use super::meta::{JsonObject, Meta};

/// A reference to a prompt, by name.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct PromptReference {
    /// The prompt name.
    pub name: String,
    /// Display name (2025-06-18+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Members this crate does not model.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// A reference to a resource template (or resource), by URI.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ResourceTemplateReference {
    /// The URI or URI template.
    pub uri: String,
    /// Members this crate does not model.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// The 2024-11-05 and 2025-03-26 name of [`ResourceTemplateReference`].
pub type ResourceReference = ResourceTemplateReference;

/// What is being completed: tagged on `type`. An unknown reference type is kept as raw JSON.
#[derive(Debug, Clone, PartialEq)]
pub enum Reference {
    /// `ref/prompt`.
    Prompt(PromptReference),
    /// `ref/resource`.
    ResourceTemplate(ResourceTemplateReference),
    /// A reference type this crate does not know, kept as it arrived.
    Unknown(Value),
}

impl Reference {
    /// A reference to a prompt.
    pub fn prompt(name: impl Into<String>) -> Self {
        Reference::Prompt(PromptReference { name: name.into(), ..Default::default() })
    }

    /// A reference to a resource template.
    pub fn resource_template(uri: impl Into<String>) -> Self {
        Reference::ResourceTemplate(ResourceTemplateReference { uri: uri.into(), ..Default::default() })
    }

    /// The wire `type` of the reference.
    pub fn kind(&self) -> &str {
        match self {
            Reference::Prompt(_) => "ref/prompt",
            Reference::ResourceTemplate(_) => "ref/resource",
            Reference::Unknown(v) => v.get("type").and_then(Value::as_str).unwrap_or("unknown"),
        }
    }
}

#[derive(Serialize)]
#[serde(tag = "type")]
enum TaggedRef<'a> {
    #[serde(rename = "ref/prompt")]
    Prompt(&'a PromptReference),
    #[serde(rename = "ref/resource")]
    ResourceTemplate(&'a ResourceTemplateReference),
}

impl Serialize for Reference {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Reference::Prompt(r) => TaggedRef::Prompt(r).serialize(s),
            Reference::ResourceTemplate(r) => TaggedRef::ResourceTemplate(r).serialize(s),
            Reference::Unknown(v) => v.serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for Reference {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        let value = Value::deserialize(d)?;
        let Value::Object(mut map) = value else {
            return Err(D::Error::custom("completion reference must be an object"));
        };
        let kind = match map.get("type") {
            Some(Value::String(k)) => k.clone(),
            _ => {
                return Err(D::Error::custom("completion reference has no string \"type\""));
            }
        };
        fn typed<T: serde::de::DeserializeOwned, E: Error>(map: JsonObject, kind: &str) -> Result<T, E> {
            serde_json::from_value(Value::Object(map)).map_err(|e| E::custom(format!("invalid {kind} reference: {e}")))
        }
        match kind.as_str() {
            "ref/prompt" => {
                map.remove("type");
                typed(map, &kind).map(Reference::Prompt)
            }
            "ref/resource" => {
                map.remove("type");
                typed(map, &kind).map(Reference::ResourceTemplate)
            }
            _ => Ok(Reference::Unknown(Value::Object(map))),
        }
    }
}

/// The argument being completed.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct CompleteArgument {
    /// The argument name.
    pub name: String,
    /// What the user typed so far.
    pub value: String,
    /// Members this crate does not model.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// Context of a completion (2025-06-18+).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct CompleteContext {
    /// Values of the arguments already resolved.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<BTreeMap<String, String>>,
    /// Members this crate does not model.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// Params of `completion/complete`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CompleteParams {
    /// The prompt or resource template whose argument is completed (`ref` on the wire).
    #[serde(rename = "ref")]
    pub reference: Reference,
    /// The argument being completed.
    pub argument: CompleteArgument,
    /// Already resolved arguments (2025-06-18+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<CompleteContext>,
    /// `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Members this crate does not model.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// The completion values of a `completion/complete` result.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Completion {
    /// The values, at most 100.
    pub values: Vec<String>,
    /// How many values exist in all; may exceed `values.len()`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total: Option<u64>,
    /// Whether more values exist than were sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub has_more: Option<bool>,
    /// Members this crate does not model.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// Result of `completion/complete`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CompleteResult {
    /// The completion values.
    pub completion: Completion,
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

crate::request_methods! {
    /// `completion/complete`.
    Complete = "completion/complete", CompleteParams => CompleteResult;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::method::RequestMethod;
    use serde_json::json;

    #[test]
    fn params_round_trip_for_both_reference_types() {
        let v = json!({
            "ref": {"type": "ref/prompt", "name": "resource-prompt", "title": "R"},
            "argument": {"name": "name", "value": "A"},
            "context": {"arguments": {"department": "Engineering"}},
            "_meta": {"io.modelcontextprotocol/logLevel": "info"},
            "later": 1
        });
        let p: CompleteParams = serde_json::from_value(v.clone()).unwrap();
        assert_eq!(p.reference.kind(), "ref/prompt");
        assert!(matches!(&p.reference, Reference::Prompt(r) if r.name == "resource-prompt"));
        assert_eq!(p.context.as_ref().unwrap().arguments.as_ref().unwrap()["department"], "Engineering");
        assert_eq!(serde_json::to_value(&p).unwrap(), v);

        let v = json!({"ref": {"type": "ref/resource", "uri": "test://dynamic/resource/{id}", "x": true}, "argument": {"name": "id", "value": "1"}});
        let p: CompleteParams = serde_json::from_value(v.clone()).unwrap();
        assert!(matches!(&p.reference, Reference::ResourceTemplate(r) if r.extra["x"] == true));
        assert_eq!(serde_json::to_value(&p).unwrap(), v);
    }

    #[test]
    fn unknown_reference_is_kept_and_malformed_known_is_an_error() {
        let v = json!({"type": "ref/tool", "name": "t"});
        let r: Reference = serde_json::from_value(v.clone()).unwrap();
        assert!(matches!(r, Reference::Unknown(_)));
        assert_eq!(r.kind(), "ref/tool");
        assert_eq!(serde_json::to_value(&r).unwrap(), v);
        let err = serde_json::from_value::<Reference>(json!({"type": "ref/prompt"})).unwrap_err();
        assert!(err.to_string().contains("invalid ref/prompt reference"), "{err}");
        assert_eq!(
            serde_json::to_value(Reference::resource_template("a://{b}")).unwrap(),
            json!({"type": "ref/resource", "uri": "a://{b}"})
        );
    }

    #[test]
    fn result_round_trips() {
        let v = json!({"completion": {"values": ["Engineering", "Sales"], "total": 2, "hasMore": false}, "resultType": "complete", "_meta": {}});
        let r: CompleteResult = serde_json::from_value(v.clone()).unwrap();
        assert_eq!(r.completion.values.len(), 2);
        assert_eq!(r.completion.total, Some(2));
        assert_eq!(serde_json::to_value(&r).unwrap(), v);
        assert_eq!(Complete::METHOD, "completion/complete");
    }
}
