//! Content blocks: text, image, audio, resource links, embedded resources, and the sampling
//! blocks tool_use and tool_result. An unknown block type is kept as raw JSON instead of failing
//! the message that carries it.

use std::fmt;

use serde::de::value::MapAccessDeserializer;
use serde::de::{Error, MapAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use super::common::{Annotations, Icon};
use super::extra::Extra;
use super::meta::{JsonObject, Meta};
use super::open_enum::open_enum;

/// Text content.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct TextContent {
    /// The text.
    pub text: String,
    /// Display hints.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Box<Annotations>>,
    /// `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Box<Meta>>,
    /// Members this crate does not model.
    #[serde(flatten)]
    pub extra: Extra,
}

impl TextContent {
    /// Plain text without annotations.
    pub fn new(text: impl Into<String>) -> Self {
        TextContent { text: text.into(), ..Default::default() }
    }
}

/// Base64-encoded image or audio data with its MIME type.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MediaContent {
    /// Base64-encoded bytes.
    pub data: String,
    /// MIME type, e.g. `image/png`.
    pub mime_type: String,
    /// Display hints.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Box<Annotations>>,
    /// `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Box<Meta>>,
    /// Members this crate does not model.
    #[serde(flatten)]
    pub extra: Extra,
}

/// Image content.
pub type ImageContent = MediaContent;
/// Audio content (2025-03-26+).
pub type AudioContent = MediaContent;

/// A link to a resource the server can read (2025-06-18+); also the shape of a listed resource.
///
/// Its `annotations`, `_meta` and the members this crate does not model are boxed, as a tool's
/// are: a host keeps the resources of every server, thousands of them for some.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceLink {
    /// The resource URI.
    pub uri: String,
    /// Programmatic name.
    pub name: String,
    /// Display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// MIME type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Size in bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
    /// Icons.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icons: Option<Vec<Icon>>,
    /// Display hints.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Box<Annotations>>,
    /// `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Box<Meta>>,
    /// Members this crate does not model.
    #[serde(flatten)]
    pub extra: Extra,
}

/// Contents of a text resource.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TextResourceContents {
    /// The resource URI.
    pub uri: String,
    /// MIME type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// The text.
    pub text: String,
    /// `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Box<Meta>>,
    /// Members this crate does not model.
    #[serde(flatten)]
    pub extra: Extra,
}

/// Contents of a binary resource.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BlobResourceContents {
    /// The resource URI.
    pub uri: String,
    /// MIME type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Base64-encoded bytes.
    pub blob: String,
    /// `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Box<Meta>>,
    /// Members this crate does not model.
    #[serde(flatten)]
    pub extra: Extra,
}

/// The contents of a resource: text or blob.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ResourceContents {
    /// Text contents.
    Text(TextResourceContents),
    /// Binary contents.
    Blob(BlobResourceContents),
}

impl ResourceContents {
    /// The resource URI.
    pub fn uri(&self) -> &str {
        match self {
            ResourceContents::Text(t) => &t.uri,
            ResourceContents::Blob(b) => &b.uri,
        }
    }
}

/// A resource embedded in a message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EmbeddedResource {
    /// The contents.
    pub resource: ResourceContents,
    /// Display hints.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Box<Annotations>>,
    /// `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Box<Meta>>,
    /// Members this crate does not model.
    #[serde(flatten)]
    pub extra: Extra,
}

/// A request from the LLM to call a tool (sampling with tools, 2025-11-25+).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ToolUseContent {
    /// Id that the matching tool_result refers to.
    pub id: String,
    /// The tool name.
    pub name: String,
    /// The arguments.
    pub input: JsonObject,
    /// `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Box<Meta>>,
    /// Members this crate does not model.
    #[serde(flatten)]
    pub extra: Extra,
}

/// The result of a tool call, given back to the LLM (sampling with tools, 2025-11-25+).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolResultContent {
    /// The id of the tool_use this answers.
    pub tool_use_id: String,
    /// The result content.
    pub content: Vec<ContentBlock>,
    /// Structured result.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "crate::jsonrpc::present")]
    pub structured_content: Option<Value>,
    /// Whether the call failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub is_error: Option<bool>,
    /// `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Box<Meta>>,
    /// Members this crate does not model.
    #[serde(flatten)]
    pub extra: Extra,
}

/// One content block. Tool results and prompt messages use the first five kinds; sampling
/// messages also use `tool_use` and `tool_result`.
///
/// Every kind keeps its `annotations`, `_meta` and the members this crate does not model in
/// boxes, absent for most blocks: a call's result is moved through several layers on its way to
/// the host, and a block the size of its largest kind with those maps inline was 504 bytes.
#[derive(Debug, Clone, PartialEq)]
pub enum ContentBlock {
    /// `text`.
    Text(TextContent),
    /// `image`.
    Image(ImageContent),
    /// `audio`.
    Audio(AudioContent),
    /// `resource_link`.
    ResourceLink(ResourceLink),
    /// `resource` (embedded).
    Resource(EmbeddedResource),
    /// `tool_use`.
    ToolUse(ToolUseContent),
    /// `tool_result`.
    ToolResult(ToolResultContent),
    /// A block type this crate does not know, kept as it arrived.
    Unknown(Value),
}

impl ContentBlock {
    /// A text block.
    pub fn text(text: impl Into<String>) -> Self {
        ContentBlock::Text(TextContent::new(text))
    }

    /// The wire `type` of the block.
    pub fn kind(&self) -> &str {
        match self {
            ContentBlock::Text(_) => "text",
            ContentBlock::Image(_) => "image",
            ContentBlock::Audio(_) => "audio",
            ContentBlock::ResourceLink(_) => "resource_link",
            ContentBlock::Resource(_) => "resource",
            ContentBlock::ToolUse(_) => "tool_use",
            ContentBlock::ToolResult(_) => "tool_result",
            ContentBlock::Unknown(v) => v.get("type").and_then(Value::as_str).unwrap_or("unknown"),
        }
    }

    /// The text of a text block.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            ContentBlock::Text(t) => Some(&t.text),
            _ => None,
        }
    }
}

#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum TaggedRef<'a> {
    Text(&'a TextContent),
    Image(&'a ImageContent),
    Audio(&'a AudioContent),
    ResourceLink(&'a ResourceLink),
    Resource(&'a EmbeddedResource),
    ToolUse(&'a ToolUseContent),
    ToolResult(&'a ToolResultContent),
}

impl Serialize for ContentBlock {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            ContentBlock::Text(c) => TaggedRef::Text(c).serialize(s),
            ContentBlock::Image(c) => TaggedRef::Image(c).serialize(s),
            ContentBlock::Audio(c) => TaggedRef::Audio(c).serialize(s),
            ContentBlock::ResourceLink(c) => TaggedRef::ResourceLink(c).serialize(s),
            ContentBlock::Resource(c) => TaggedRef::Resource(c).serialize(s),
            ContentBlock::ToolUse(c) => TaggedRef::ToolUse(c).serialize(s),
            ContentBlock::ToolResult(c) => TaggedRef::ToolResult(c).serialize(s),
            ContentBlock::Unknown(v) => v.serialize(s),
        }
    }
}

open_enum! {
    /// The `type` of a content block.
    enum BlockType as "a content block type (a string)" {
        Text = "text",
        Image = "image",
        Audio = "audio",
        ResourceLink = "resource_link",
        Resource = "resource",
        ToolUse = "tool_use",
        ToolResult = "tool_result",
    }
}

const NO_TYPE: &str = "content block has no string \"type\"";

impl<'de> Deserialize<'de> for ContentBlock {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_map(BlockVisitor)
    }
}

/// Decodes a block straight into its typed form when `type` is its first member (as every SDK
/// writes it); otherwise it reads the block as a map first and dispatches on its `type`.
struct BlockVisitor;

impl<'de> Visitor<'de> for BlockVisitor {
    type Value = ContentBlock;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a content block object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<ContentBlock, A::Error> {
        let kind = match map.next_key::<FirstKey>()? {
            None => return Err(A::Error::custom(NO_TYPE)),
            Some(FirstKey::Type) => map.next_value::<BlockType>()?,
            Some(FirstKey::Other(key)) => {
                let value = map.next_value()?;
                return from_members(members((key, value), map)?);
            }
        };
        if let BlockType::Unknown(kind) = kind {
            return Ok(ContentBlock::Unknown(Value::Object(members(("type".into(), Value::String(kind)), map)?)));
        }
        let block = typed_block(kind, MapAccessDeserializer::new(map))?;
        if block_extra(&block).is_some_and(|extra| extra.contains_key("type")) {
            return Err(A::Error::custom("content block has the member \"type\" twice"));
        }
        Ok(block)
    }
}

/// `first`, then the members left in `map`, in their order.
fn members<'de, A: MapAccess<'de>>((key, value): (String, Value), mut map: A) -> Result<JsonObject, A::Error> {
    let mut members = JsonObject::new();
    members.insert(key, value);
    while let Some((k, v)) = map.next_entry::<String, Value>()? {
        members.insert(k, v);
    }
    Ok(members)
}

/// The first key of a block: `type`, or any other.
enum FirstKey {
    Type,
    Other(String),
}

impl<'de> Deserialize<'de> for FirstKey {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl Visitor<'_> for KeyVisitor {
            type Value = FirstKey;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a member name")
            }
            fn visit_str<E: Error>(self, v: &str) -> Result<FirstKey, E> {
                Ok(if v == "type" { FirstKey::Type } else { FirstKey::Other(v.to_owned()) })
            }
            fn visit_string<E: Error>(self, v: String) -> Result<FirstKey, E> {
                Ok(if v == "type" { FirstKey::Type } else { FirstKey::Other(v) })
            }
        }
        d.deserialize_str(KeyVisitor)
    }
}

/// Decode the members after `type` as the typed block `kind`.
fn typed_block<'de, D: Deserializer<'de>>(kind: BlockType, d: D) -> Result<ContentBlock, D::Error> {
    fn typed<'de, T: Deserialize<'de>, D: Deserializer<'de>>(d: D, kind: &BlockType) -> Result<T, D::Error> {
        T::deserialize(d).map_err(|e| D::Error::custom(format!("invalid {} content block: {e}", kind.as_str())))
    }
    Ok(match kind {
        BlockType::Text => ContentBlock::Text(typed(d, &kind)?),
        BlockType::Image => ContentBlock::Image(typed(d, &kind)?),
        BlockType::Audio => ContentBlock::Audio(typed(d, &kind)?),
        BlockType::ResourceLink => ContentBlock::ResourceLink(typed(d, &kind)?),
        BlockType::Resource => ContentBlock::Resource(typed(d, &kind)?),
        BlockType::ToolUse => ContentBlock::ToolUse(typed(d, &kind)?),
        BlockType::ToolResult => ContentBlock::ToolResult(typed(d, &kind)?),
        // The callers keep blocks of unknown types untyped.
        BlockType::Unknown(other) => return Err(D::Error::custom(format!("unknown content block type {other:?}"))),
    })
}

/// A block read as members in any order: dispatch on its `type`; an unknown type keeps the
/// members whole.
fn from_members<E: Error>(mut members: JsonObject) -> Result<ContentBlock, E> {
    let kind = match members.get("type") {
        Some(Value::String(k)) => BlockType::from_wire(k),
        _ => return Err(E::custom(NO_TYPE)),
    };
    let Some(kind) = kind else { return Ok(ContentBlock::Unknown(Value::Object(members))) };
    // shift_remove keeps the order of the members left in `extra`.
    members.shift_remove("type");
    typed_block(kind, Value::Object(members)).map_err(E::custom)
}

/// The members a typed block does not model.
fn block_extra(block: &ContentBlock) -> Option<&JsonObject> {
    match block {
        ContentBlock::Text(c) => Some(&c.extra),
        ContentBlock::Image(c) => Some(&c.extra),
        ContentBlock::Audio(c) => Some(&c.extra),
        ContentBlock::ResourceLink(c) => Some(&c.extra),
        ContentBlock::Resource(c) => Some(&c.extra),
        ContentBlock::ToolUse(c) => Some(&c.extra),
        ContentBlock::ToolResult(c) => Some(&c.extra),
        ContentBlock::Unknown(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn unknown_block_type_is_kept_whole() {
        let v = json!({"type": "hologram", "frames": [1, 2], "_meta": {"x": 1}});
        let block: ContentBlock = serde_json::from_value(v.clone()).unwrap();
        assert!(matches!(block, ContentBlock::Unknown(_)));
        assert_eq!(block.kind(), "hologram");
        assert_eq!(serde_json::to_value(&block).unwrap(), v);
    }

    #[test]
    fn known_blocks_round_trip_with_unknown_members() {
        let v = json!({"type": "text", "text": "hi", "annotations": {"priority": 0.5}, "future": true});
        let block: ContentBlock = serde_json::from_value(v.clone()).unwrap();
        assert_eq!(block.as_text(), Some("hi"));
        assert_eq!(serde_json::to_value(&block).unwrap(), v);
        // A whole priority keeps its wire form: `1` stays an integer, `1.0` a float.
        for text in [
            r#"{"type":"text","text":"x","annotations":{"priority":1}}"#,
            r#"{"type":"text","text":"x","annotations":{"priority":1.0}}"#,
        ] {
            let block: ContentBlock = serde_json::from_str(text).unwrap();
            let ContentBlock::Text(t) = &block else { panic!("{block:?}") };
            assert_eq!(t.annotations.as_ref().unwrap().priority_f64(), Some(1.0));
            assert_eq!(serde_json::to_string(&block).unwrap(), text);
        }
        let r = json!({"type": "resource", "resource": {"uri": "file:///a", "blob": "AAA="}});
        let block: ContentBlock = serde_json::from_value(r.clone()).unwrap();
        assert!(matches!(&block, ContentBlock::Resource(e) if matches!(e.resource, ResourceContents::Blob(_))));
        assert_eq!(serde_json::to_value(&block).unwrap(), r);
    }

    #[test]
    fn blocks_decode_the_same_whatever_the_position_of_type() {
        for text in [
            r#"{"type":"text","text":"hi","annotations":{"priority":0.5},"future":true}"#,
            r#"{"text":"hi","type":"text","annotations":{"priority":0.5},"future":true}"#,
            r#"{"annotations":{"priority":0.5},"text":"hi","future":true,"type":"text"}"#,
        ] {
            let block: ContentBlock = serde_json::from_str(text).unwrap();
            let ContentBlock::Text(t) = &block else { panic!("{block:?}") };
            assert_eq!((t.text.as_str(), t.extra.get("future")), ("hi", Some(&json!(true))), "{text}");
            assert!(!t.extra.contains_key("type"), "{text}");
        }
        for text in [r#"{"type":"hologram","frames":[1]}"#, r#"{"frames":[1],"type":"hologram"}"#] {
            let block: ContentBlock = serde_json::from_str(text).unwrap();
            assert_eq!(serde_json::to_value(&block).unwrap(), serde_json::from_str::<Value>(text).unwrap());
        }
    }

    #[test]
    fn blocks_without_a_string_type_or_with_two_are_errors() {
        for (text, expected) in [
            (r#"{"text":"hi"}"#, "no string \"type\""),
            (r#"{}"#, "no string \"type\""),
            (r#"{"text":"hi","type":7}"#, "no string \"type\""),
            (r#"{"type":7,"text":"hi"}"#, "expected a content block type (a string)"),
            (r#"{"type":"text","text":"hi","type":"image"}"#, "\"type\" twice"),
            (r#""text""#, "expected a content block object"),
            (r#"{"type":"text"}"#, "invalid text content block: missing field `text`"),
        ] {
            let err = serde_json::from_str::<ContentBlock>(text).unwrap_err();
            assert!(err.to_string().contains(expected), "{text}: {err}");
        }
    }

    #[test]
    fn blocks_and_call_results_hold_a_pointer_for_what_they_rarely_have() {
        use crate::types::tools::{CallToolParams, CallToolResult};
        // With the annotations, `_meta` and unmodelled members inline, a text block was 304
        // bytes and every block 504 (the size of the largest kind), a call's result 272 and its
        // params 384: each call's result is moved through several layers, and a host holds
        // the blocks of many. A task's metadata inline in the params took 88 bytes of them (256).
        let sizes = [
            ("TextContent", size_of::<TextContent>(), 48),
            ("MediaContent", size_of::<MediaContent>(), 72),
            ("EmbeddedResource", size_of::<EmbeddedResource>(), 120),
            ("ContentBlock", size_of::<ContentBlock>(), 184),
            ("CallToolResult", size_of::<CallToolResult>(), 144),
            ("CallToolParams", size_of::<CallToolParams>(), 192),
        ];
        crate::types::extra::assert_sizes_at_most(&sizes);
        // What the boxes hold still arrives and leaves as it came.
        let text = r#"{"type":"text","text":"hi","annotations":{"priority":0.5},"_meta":{"k":1},"later":[2]}"#;
        let block: ContentBlock = serde_json::from_str(text).unwrap();
        let ContentBlock::Text(t) = &block else { panic!("{block:?}") };
        assert_eq!(t.annotations.as_ref().and_then(|a| a.priority_f64()), Some(0.5));
        assert_eq!(t.meta.as_ref().map(|m| m.0.get("k")), Some(Some(&json!(1))));
        assert_eq!(t.extra.get("later"), Some(&json!([2])));
        assert_eq!(serde_json::to_string(&block).unwrap(), text);
        let plain: ContentBlock = serde_json::from_str(r#"{"type":"text","text":"hi"}"#).unwrap();
        let ContentBlock::Text(t) = &plain else { panic!("{plain:?}") };
        assert!(t.annotations.is_none() && t.meta.is_none() && t.extra.is_empty());
        let result = r#"{"content":[],"isError":false,"_meta":{"m":true},"later":"x"}"#;
        let decoded: CallToolResult = serde_json::from_str(result).unwrap();
        assert_eq!(decoded.extra.get("later"), Some(&json!("x")));
        assert_eq!(serde_json::to_string(&decoded).unwrap(), result);
        let params = r#"{"name":"t","task":{"ttl":5,"later":[1]}}"#;
        let decoded: CallToolParams = serde_json::from_str(params).unwrap();
        let task = decoded.task.as_ref().unwrap();
        assert_eq!((task.ttl, task.extra.get("later")), (Some(5), Some(&json!([1]))));
        assert_eq!(serde_json::to_string(&decoded).unwrap(), params);
    }

    #[test]
    fn malformed_known_block_is_an_error() {
        let err = serde_json::from_value::<ContentBlock>(json!({"type": "image", "data": "x"})).unwrap_err();
        assert!(err.to_string().contains("invalid image content block"), "{err}");
    }
}
