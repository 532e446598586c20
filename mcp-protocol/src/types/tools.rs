//! Tools: listing, calling, annotations, and the list_changed notification.

use std::borrow::Borrow;
use std::ops::{Deref, DerefMut};
use std::sync::{Arc, OnceLock};

use serde::de::{Error as _, Unexpected};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;
use serde_json::value::RawValue;

use super::common::{Icon, PaginatedParams, ResultType};
use super::content::ContentBlock;
use super::extra::Extra;
use super::meta::{JsonObject, Meta};
use super::mrtr::{InputResponses, Outcome};

mod page;

/// A tool the server offers.
///
/// The members a tool rarely has (`outputSchema`, `annotations`, `execution`, `_meta`, members
/// this crate does not model) are boxed: a host keeps every tool of every server, and inline they
/// would more than triple the size of each one.
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
    pub output_schema: Option<Box<JsonObject>>,
    /// Behaviour hints (2025-03-26+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Box<ToolAnnotations>>,
    /// Execution properties such as task support (2025-11-25).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub execution: Option<Box<ToolExecution>>,
    /// Icons (2025-11-25+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icons: Option<Vec<Icon>>,
    /// `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Box<Meta>>,
    /// Members this crate does not model.
    #[serde(flatten)]
    pub extra: Extra,
}

/// A JSON Schema object held once, shared by reference count and parsed only when read: a
/// tool's `inputSchema`. A host listing thousands of tools keeps each schema as the JSON text
/// it came as (one allocation) until something reads it (a call's argument check, an LLM
/// definition); a host's tool spec shares it instead of copying it.
///
/// Reads as a [`JsonObject`] (the first read parses the text, once); a write (through
/// `DerefMut`) copies the schema first if it is shared. On the wire it is the object itself,
/// encoded as the text it came as until written; anything but an object is refused when
/// decoding.
#[derive(Clone)]
pub struct SharedSchema(Arc<SchemaCell>);

#[derive(Clone)]
struct SchemaCell {
    /// The JSON text of an object the schema was decoded from, while no write has changed the
    /// tree: JSON text (a `RawValue`'s, or part of a page's result, which the codec checked or
    /// serde_json parsed; see [`SharedSchema::from_object_text`]).
    raw: Option<Box<str>>,
    /// The tree, built from `raw` by the first read (or given when built in memory). Boxed: a
    /// host keeps a schema for every tool and reads few of them, and a `Value` inline would be
    /// most of the cell.
    tree: OnceLock<Box<Value>>,
}

impl SchemaCell {
    /// The schema as a JSON value (always an object), parsed from its text on the first read.
    fn value(&self) -> &Value {
        self.tree.get_or_init(|| {
            let parsed = self.raw.as_deref().and_then(|raw| serde_json::from_str::<Value>(raw).ok());
            // The text was checked to be a JSON object when it was decoded, within the codec's
            // depth limit, so it parses; an empty object only satisfies the type.
            Box::new(parsed.filter(Value::is_object).unwrap_or_else(|| Value::Object(JsonObject::new())))
        })
    }
}

/// The cell lends the schema as [`SharedSchema::as_value`] reads it: see
/// [`SharedSchema::value_source`].
impl Borrow<Value> for SchemaCell {
    fn borrow(&self) -> &Value {
        self.value()
    }
}

impl SharedSchema {
    /// The schema as a JSON value (always an object), parsed from its text on the first read.
    pub fn as_value(&self) -> &Value {
        self.0.value()
    }

    /// The schema's own shared cell, as something that lends the schema as a JSON value
    /// (`Borrow<Value>`, parsed on the first borrow and then shared with this schema and its
    /// clones, as [`as_value`](Self::as_value) reads it): for a model that keeps a schema behind
    /// an `Arc` of its own trait (a host's tool parameters) without a second allocation (a
    /// wrapper around a clone) for each of thousands of tools.
    pub fn value_source(&self) -> Arc<impl Borrow<Value> + Send + Sync + use<>> {
        Arc::clone(&self.0)
    }

    /// The JSON text the schema was decoded from, unless a write has changed it since.
    pub fn raw_json(&self) -> Option<&str> {
        self.0.raw.as_deref()
    }

    /// The schema whose text is `text`, which the caller knows to be the JSON text of an
    /// object: the value of a member that starts with `{`, cut by its structure out of JSON text
    /// (a page's result; see [`ListTools`]). Not checked again.
    pub(crate) fn from_object_text(text: &str) -> Self {
        SharedSchema(Arc::new(SchemaCell { raw: Some(text.into()), tree: OnceLock::new() }))
    }

    /// Make this the schema whose text is `text`, as [`from_object_text`](Self::from_object_text)
    /// makes one, in this schema's own cell when no clone shares it (a page's decoder fills the
    /// schemas it decoded as `{}`).
    pub(crate) fn set_object_text(&mut self, text: &str) {
        match Arc::get_mut(&mut self.0) {
            Some(cell) => *cell = SchemaCell { raw: Some(text.into()), tree: OnceLock::new() },
            None => *self = Self::from_object_text(text),
        }
    }

    /// Whether the schema has been parsed into a tree (by a read, a write, or by being built
    /// from one).
    pub fn is_parsed(&self) -> bool {
        self.0.tree.get().is_some()
    }

    /// Whether `self` and `other` are the same shared schema (not a copy).
    pub fn ptr_eq(&self, other: &SharedSchema) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }

    /// False when the schema's text proves that `needle` (plain text without a quote or a
    /// backslash, such as a keyword) occurs nowhere in it, neither as it is nor behind a JSON
    /// escape; true otherwise. Lets a reader skip parsing the many schemas that cannot hold
    /// what it looks for.
    pub fn may_contain(&self, needle: &str) -> bool {
        match self.raw_json() {
            // Discovery asks this of every tool: one memchr pass (SIMD, and nothing to set up,
            // unlike a substring searcher) finds each backslash and each place of the needle's
            // first byte; a backslash ends it, and each place is compared.
            Some(raw) => {
                let (text, needle) = (raw.as_bytes(), needle.as_bytes());
                let Some(&first) = needle.first() else { return true };
                memchr::memchr2_iter(b'\\', first, text).any(|at| text[at] == b'\\' || text[at..].starts_with(needle))
            }
            None => true,
        }
    }
}

impl Default for SharedSchema {
    fn default() -> Self {
        SharedSchema::from(JsonObject::new())
    }
}

impl From<JsonObject> for SharedSchema {
    fn from(schema: JsonObject) -> Self {
        SharedSchema(Arc::new(SchemaCell { raw: None, tree: OnceLock::from(Box::new(Value::Object(schema))) }))
    }
}

impl PartialEq for SharedSchema {
    fn eq(&self, other: &Self) -> bool {
        self.ptr_eq(other)
            || matches!((self.raw_json(), other.raw_json()), (Some(a), Some(b)) if a == b)
            || self.as_value() == other.as_value()
    }
}

impl Deref for SharedSchema {
    type Target = JsonObject;

    fn deref(&self) -> &JsonObject {
        // Always an object (every constructor makes one); the fallback only satisfies the type.
        self.as_value().as_object().unwrap_or_else(|| super::extra::empty_object())
    }
}

impl DerefMut for SharedSchema {
    fn deref_mut(&mut self) -> &mut JsonObject {
        self.as_value();
        let cell = Arc::make_mut(&mut self.0);
        // The tree is about to change: the text no longer describes it.
        cell.raw = None;
        let value = &mut **cell.tree.get_mut().expect("parsed just above");
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
        match &self.0.raw {
            // Written as the text it came as. The text is JSON, so it borrows as a `RawValue`
            // (the one way to hand serde_json raw text).
            Some(raw) => match serde_json::from_str::<&RawValue>(raw) {
                Ok(raw) => raw.serialize(serializer),
                Err(e) => Err(serde::ser::Error::custom(format!("a schema's text is not JSON: {e}"))),
            },
            None => self.as_value().serialize(serializer),
        }
    }
}

thread_local! {
    /// Set while [`page::decode_tool_page`] decodes a page whose every input schema it cut out
    /// and replaced with `{}` (see [`SchemasCutOut`]).
    static SCHEMAS_CUT_OUT: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// While one is held, on its thread, [`SharedSchema`]'s decoder takes each schema as an empty
/// cell for the page's decoder to fill with the schema's text ([`SharedSchema::set_object_text`]),
/// and skips the value it meets there (the `{}` put in the schema's place) without keeping it as
/// text: no allocation for a placeholder. Only a page decoder that has cut out every schema of
/// the page it decodes holds one, for that decode.
struct SchemasCutOut;

impl SchemasCutOut {
    fn hold() -> Self {
        SCHEMAS_CUT_OUT.set(true);
        SchemasCutOut
    }
}

impl Drop for SchemasCutOut {
    fn drop(&mut self) {
        SCHEMAS_CUT_OUT.set(false);
    }
}

impl<'de> Deserialize<'de> for SharedSchema {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        if SCHEMAS_CUT_OUT.get() {
            serde::de::IgnoredAny::deserialize(deserializer)?;
            return Ok(SharedSchema(Arc::new(SchemaCell { raw: None, tree: OnceLock::new() })));
        }
        let raw = Box::<RawValue>::deserialize(deserializer)?;
        let found = match raw.get().trim_start().as_bytes().first() {
            Some(b'{') => {
                // The text as it is, without a copy.
                return Ok(SharedSchema(Arc::new(SchemaCell { raw: Some(raw.into()), tree: OnceLock::new() })));
            }
            Some(b'[') => Unexpected::Seq,
            Some(b'"') => Unexpected::Other("a string"),
            Some(b'n') => Unexpected::Unit,
            Some(b't' | b'f') => Unexpected::Other("a boolean"),
            _ => Unexpected::Other("a number"),
        };
        Err(D::Error::invalid_type(found, &"a map"))
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
    pub meta: Option<Box<Meta>>,
    /// Members this crate does not model.
    #[serde(flatten)]
    pub extra: Extra,
}

/// Result of a completed `tools/call`. Its `_meta` and unmodelled members are boxed (absent for
/// most results), as are a call's params', which every call moves through several layers.
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
    pub meta: Option<Box<Meta>>,
    /// Members this crate does not model.
    #[serde(flatten)]
    pub extra: Extra,
}

/// What `tools/call` may answer: a result, a request for input (2026-07-28) or a task
/// (2025-11-25).
pub type CallToolOutcome = Outcome<CallToolResult>;

/// `tools/list`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ListTools;
impl crate::method::RequestMethod for ListTools {
    const METHOD: &'static str = "tools/list";
    type Params = ListToolsParams;
    type Result = ListToolsResult;
    /// Each tool's input schema (most of a page) is taken as text by its place in the result,
    /// not parsed a second time.
    fn decode_result(raw: &crate::RawJson) -> Result<Self::Result, serde_json::Error> {
        page::decode_tool_page(raw)
    }
}

/// `tools/call`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CallTool;
impl crate::method::RequestMethod for CallTool {
    const METHOD: &'static str = "tools/call";
    type Params = CallToolParams;
    type Result = CallToolOutcome;
    fn decode_result(raw: &crate::RawJson) -> Result<Self::Result, serde_json::Error> {
        Outcome::decode(raw)
    }
    /// A result that is one large text keeps the text where it arrived.
    fn decode_owned(raw: crate::RawJson) -> Result<Self::Result, serde_json::Error> {
        super::large_text::decode_keeping_large_text(raw, Outcome::decode, |outcome: &mut CallToolOutcome, index| {
            match outcome {
                Outcome::Complete(result) => match result.content.get_mut(index) {
                    Some(super::content::ContentBlock::Text(block)) => Some(&mut block.text),
                    _ => None,
                },
                _ => None,
            }
        })
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
    fn an_unread_schema_holds_its_text_and_a_pointer() {
        // With the tree inline the cell was 96 bytes (a `Value` is 72), for a tree most schemas
        // a host keeps never get.
        let size = size_of::<SchemaCell>();
        assert!(size <= 32, "a schema's cell is {size} bytes");
    }

    #[test]
    fn an_input_schema_stays_text_until_read_then_is_parsed_once_and_encodes_as_it_came() {
        let text = r#"{"name":"t","inputSchema":{"type":"object", "properties":{"a":{"type":"string"}}}}"#;
        let tool: Tool = serde_json::from_str(text).expect("a valid tool");
        assert!(!tool.input_schema.is_parsed(), "decoding parsed the schema");
        assert_eq!(tool.input_schema.raw_json(), Some(r#"{"type":"object", "properties":{"a":{"type":"string"}}}"#));
        // Encoding writes the text as it came, without parsing it.
        assert_eq!(serde_json::to_string(&tool).expect("encodes"), text);
        assert!(!tool.input_schema.is_parsed());
        let shared = tool.input_schema.clone();
        assert_eq!(tool.input_schema["properties"]["a"]["type"], "string");
        assert!(shared.is_parsed() && shared.ptr_eq(&tool.input_schema), "a clone is not the one shared schema");
        assert!(std::ptr::eq(shared.as_value(), tool.input_schema.as_value()), "parsed twice");
        let wire: Value = serde_json::from_str(text).unwrap();
        assert_eq!(serde_json::to_value(&tool).expect("encodes"), wire);
        assert_eq!(format!("{:?}", tool.input_schema), format!("{:?}", wire["inputSchema"].as_object().unwrap()));
        // Decoded from a tree (not text) it works the same.
        let from_tree: Tool = serde_json::from_value(wire.clone()).expect("a valid tool");
        assert_eq!(from_tree, tool);
        assert_eq!(*from_tree.input_schema.as_value(), wire["inputSchema"]);
    }

    #[test]
    fn a_value_source_lends_the_schema_from_its_own_cell() {
        let mut schema: SharedSchema = serde_json::from_str(r#"{"type":"object"}"#).unwrap();
        let source = schema.value_source();
        assert!(!schema.is_parsed(), "making the source parsed the schema");
        let lent: &Value = (*source).borrow();
        assert_eq!(*lent, json!({"type": "object"}));
        // Parsed once, for the schema and the source alike: they are one cell.
        assert!(schema.is_parsed());
        assert!(std::ptr::eq(lent, schema.as_value()), "the source holds a copy");
        // A write to the schema copies it first (the source shares the cell) and leaves the
        // source's value as it was.
        schema.insert("required".into(), json!(["a"]));
        let lent: &Value = (*source).borrow();
        assert_eq!(*lent, json!({"type": "object"}));
        assert_eq!(*schema.as_value(), json!({"type": "object", "required": ["a"]}));
    }

    #[test]
    fn may_contain_is_false_only_when_the_text_proves_absence() {
        let decode = |schema: &str| -> SharedSchema { serde_json::from_str(schema).unwrap() };
        assert!(!decode(r#"{"properties":{"a":{"type":"string"}}}"#).may_contain("x-mcp-header"));
        assert!(decode(r#"{"properties":{"a":{"x-mcp-header":"A"}}}"#).may_contain("x-mcp-header"));
        // The name behind an escape is the same name: the text proves nothing.
        assert!(decode(r#"{"properties":{"a":{"x\u002dmcp-header":"A"}}}"#).may_contain("x-mcp-header"));
        // Any escape, even one far from anything like the needle, and before or after a near miss.
        assert!(decode(r#"{"a":"q\n"}"#).may_contain("x-mcp-header"));
        assert!(decode(r#"{"maximum":1,"b":"\t","x-mcp-heade":2}"#).may_contain("x-mcp-header"));
        assert!(decode(r#"{"x-mcp-heade":2,"b":"\t"}"#).may_contain("x-mcp-header"));
        // Near misses (the first byte found, the rest not) prove absence; the needle as the last
        // bytes of a value is found.
        let near = decode(r#"{"maximum":1,"x-mcp-heade":"A","x":"x-mcp-headers"}"#);
        assert!(near.may_contain("x-mcp-header"), "a longer word holds it");
        assert!(!decode(r#"{"maximum":1,"x-mcp-heade":"A","x":"xx-mcp-heade"}"#).may_contain("x-mcp-header"));
        assert!(decode(r#"{"a":"..x-mcp-header"}"#).may_contain("x-mcp-header"));
        assert!(decode(r#"{"a":1}"#).may_contain(""), "the empty needle is everywhere");
        // Built in memory, there is no text to prove anything with.
        assert!(SharedSchema::default().may_contain("x-mcp-header"));
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
        let held = tool.input_schema.clone();
        tool.input_schema.insert("type".into(), json!("object"));
        assert_eq!(*held.as_value(), json!({}), "the other holder saw the write");
        assert_eq!(*tool.input_schema.as_value(), json!({"type": "object"}));
        // Unshared, a write happens in place.
        let before = tool.input_schema.as_value() as *const Value;
        tool.input_schema.insert("properties".into(), json!({}));
        assert!(std::ptr::eq(tool.input_schema.as_value(), before));
        assert_eq!(SharedSchema::default(), SharedSchema::from(JsonObject::new()));
    }

    #[test]
    fn a_write_to_a_decoded_schema_drops_its_text() {
        let mut schema: SharedSchema = serde_json::from_str(r#"{"type":"object"}"#).unwrap();
        let held = schema.clone();
        schema.insert("required".into(), json!(["a"]));
        assert_eq!(schema.raw_json(), None);
        assert_eq!(serde_json::to_value(&schema).unwrap(), json!({"type": "object", "required": ["a"]}));
        assert_eq!(held.raw_json(), Some(r#"{"type":"object"}"#), "the other holder lost its text");
        assert_ne!(held, schema);
    }
}
