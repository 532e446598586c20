//! Tools: listing, calling, annotations, and the list_changed notification.

use std::ops::{Deref, DerefMut};
use std::sync::Arc;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use super::common::{Icon, PaginatedParams, ResultType};
use super::content::ContentBlock;
use super::meta::{JsonObject, Meta};
use super::mrtr::{InputResponses, Outcome};

/// A tool the server offers.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Tool {
    /// Programmatic name, unique within the server.
    pub name: String,
    /// Display name (2025-06-18+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What the tool does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// JSON Schema of the arguments (an object schema), shareable without a copy.
    pub input_schema: SharedSchema,
    /// JSON Schema of `structuredContent` (2025-06-18+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<JsonObject>,
    /// Behaviour hints (2025-03-26+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<ToolAnnotations>,
    /// Execution properties such as task support (2025-11-25).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub execution: Option<ToolExecution>,
    /// Icons (2025-11-25+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icons: Option<Vec<Icon>>,
    /// `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Members this crate does not model.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// A JSON Schema object held once and shared by reference count: a tool's `inputSchema`, which
/// a host's tool spec reuses ([`SharedSchema::shared`]) instead of copying, so that a host
/// listing thousands of tools keeps one copy of each schema.
///
/// Reads as a [`JsonObject`]; a write (through `DerefMut`) copies the schema first if it is
/// shared. On the wire it is the object itself; anything else is refused when decoding.
#[derive(Clone, PartialEq)]
pub struct SharedSchema(Arc<Value>);

impl SharedSchema {
    /// The schema as a shared JSON value (always an object), for a holder that wants no copy.
    pub fn shared(&self) -> Arc<Value> {
        self.0.clone()
    }
}

impl Default for SharedSchema {
    fn default() -> Self {
        SharedSchema::from(JsonObject::new())
    }
}

impl From<JsonObject> for SharedSchema {
    fn from(schema: JsonObject) -> Self {
        SharedSchema(Arc::new(Value::Object(schema)))
    }
}

impl Deref for SharedSchema {
    type Target = JsonObject;

    fn deref(&self) -> &JsonObject {
        static EMPTY: std::sync::LazyLock<JsonObject> = std::sync::LazyLock::new(JsonObject::new);
        // Always an object (every constructor makes one); the fallback only satisfies the type.
        self.0.as_object().unwrap_or(&*EMPTY)
    }
}

impl DerefMut for SharedSchema {
    fn deref_mut(&mut self) -> &mut JsonObject {
        let value = Arc::make_mut(&mut self.0);
        if !value.is_object() {
            *value = Value::Object(JsonObject::new());
        }
        match value {
            Value::Object(schema) => schema,
            _ => unreachable!("made an object just above"),
        }
    }
}

impl std::fmt::Debug for SharedSchema {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.deref().fmt(f)
    }
}

impl Serialize for SharedSchema {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for SharedSchema {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        JsonObject::deserialize(deserializer).map(SharedSchema::from)
    }
}

/// Hints about a tool's behaviour. Untrusted unless the server is.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolAnnotations {
    /// Display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The tool does not modify its environment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_only_hint: Option<bool>,
    /// The tool may perform destructive updates.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub destructive_hint: Option<bool>,
    /// Calling twice with the same arguments has no further effect.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idempotent_hint: Option<bool>,
    /// The tool interacts with an open world of external entities.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open_world_hint: Option<bool>,
    /// Members this crate does not model.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// Execution properties of a tool (2025-11-25).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolExecution {
    /// `forbidden`, `optional` or `required`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_support: Option<String>,
    /// Members this crate does not model.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// Params of `tools/list`.
pub type ListToolsParams = PaginatedParams;

crate::paginated_results! {
    /// Result of `tools/list`.
    ListToolsResult {
        /// The tools of this page.
        tools: Vec<Tool>
    }
}

/// Params of `tools/call`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CallToolParams {
    /// The tool name.
    pub name: String,
    /// The arguments.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<JsonObject>,
    /// Run as a task (2025-11-25).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task: Option<super::tasks::TaskMetadata>,
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

/// Result of a completed `tools/call`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CallToolResult {
    /// Unstructured result content.
    pub content: Vec<ContentBlock>,
    /// Structured result, matching the tool's outputSchema (2025-06-18+).
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "crate::jsonrpc::present")]
    pub structured_content: Option<Value>,
    /// Whether the tool failed (a tool error, not a protocol error).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub is_error: Option<bool>,
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

/// What `tools/call` may answer: a result, a request for input (2026-07-28) or a task
/// (2025-11-25).
pub type CallToolOutcome = Outcome<CallToolResult>;

crate::request_methods! {
    /// `tools/list`.
    ListTools = "tools/list", ListToolsParams => ListToolsResult;
}

/// `tools/call`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CallTool;
impl crate::method::RequestMethod for CallTool {
    const METHOD: &'static str = "tools/call";
    type Params = CallToolParams;
    type Result = CallToolOutcome;
    fn decode_result(raw: &serde_json::value::RawValue) -> Result<Self::Result, serde_json::Error> {
        Outcome::decode(raw)
    }
}

crate::notification_methods! {
    /// `notifications/tools/list_changed`.
    ToolListChanged = "notifications/tools/list_changed", super::common::NotificationParams;
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn an_input_schema_is_decoded_once_and_shared_and_encodes_as_it_came() {
        let wire = json!({"name": "t", "inputSchema": {"type": "object", "properties": {"a": {"type": "string"}}}});
        let tool: Tool = serde_json::from_value(wire.clone()).expect("a valid tool");
        assert!(Arc::ptr_eq(&tool.input_schema.shared(), &tool.input_schema.shared()), "shared() copies");
        assert_eq!(*tool.input_schema.shared(), wire["inputSchema"]);
        assert_eq!(tool.input_schema["properties"]["a"]["type"], "string");
        assert_eq!(serde_json::to_value(&tool).expect("encodes"), wire);
        assert_eq!(format!("{:?}", tool.input_schema), format!("{:?}", wire["inputSchema"].as_object().unwrap()));
    }

    #[test]
    fn an_input_schema_that_is_not_an_object_is_refused() {
        for schema in [json!([1]), json!("object"), json!(null), json!(true), json!(7)] {
            let error = serde_json::from_value::<Tool>(json!({"name": "t", "inputSchema": schema}))
                .expect_err("not an object schema");
            assert!(error.to_string().contains("expected a map"), "{schema}: {error}");
        }
        let error = serde_json::from_value::<Tool>(json!({"name": "t"})).expect_err("inputSchema is required");
        assert!(error.to_string().contains("inputSchema"), "{error}");
    }

    #[test]
    fn writing_to_a_shared_schema_leaves_the_other_holders_alone() {
        let mut tool = Tool { name: "t".into(), input_schema: JsonObject::new().into(), ..Default::default() };
        let held = tool.input_schema.shared();
        tool.input_schema.insert("type".into(), json!("object"));
        assert_eq!(*held, json!({}), "the other holder saw the write");
        assert_eq!(*tool.input_schema.shared(), json!({"type": "object"}));
        // Unshared, a write happens in place.
        let before = Arc::as_ptr(&tool.input_schema.shared());
        tool.input_schema.insert("properties".into(), json!({}));
        assert_eq!(Arc::as_ptr(&tool.input_schema.shared()), before);
        assert_eq!(SharedSchema::default(), SharedSchema::from(JsonObject::new()));
    }
}
