//! Content blocks: text, image, audio, resource links, embedded resources, and the sampling
//! blocks tool_use and tool_result. An unknown block type is kept as raw JSON instead of failing
//! the message that carries it.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use super::common::{Annotations, Icon};
use super::meta::{JsonObject, Meta};

/// Text content.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct TextContent {
    /// The text.
    pub text: String,
    /// Display hints.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Members this crate does not model.
    #[serde(flatten)]
    pub extra: JsonObject,
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
    pub annotations: Option<Annotations>,
    /// `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Members this crate does not model.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// Image content.
pub type ImageContent = MediaContent;
/// Audio content (2025-03-26+).
pub type AudioContent = MediaContent;

/// A link to a resource the server can read (2025-06-18+); also the shape of a listed resource.
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
    pub annotations: Option<Annotations>,
    /// `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Members this crate does not model.
    #[serde(flatten)]
    pub extra: JsonObject,
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
    pub meta: Option<Meta>,
    /// Members this crate does not model.
    #[serde(flatten)]
    pub extra: JsonObject,
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
    pub meta: Option<Meta>,
    /// Members this crate does not model.
    #[serde(flatten)]
    pub extra: JsonObject,
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
    pub annotations: Option<Annotations>,
    /// `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Members this crate does not model.
    #[serde(flatten)]
    pub extra: JsonObject,
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
    pub meta: Option<Meta>,
    /// Members this crate does not model.
    #[serde(flatten)]
    pub extra: JsonObject,
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
    pub meta: Option<Meta>,
    /// Members this crate does not model.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// One content block. Tool results and prompt messages use the first five kinds; sampling
/// messages also use `tool_use` and `tool_result`.
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

impl<'de> Deserialize<'de> for ContentBlock {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        // Read the block as a value (strings are moved, not copied, into the typed block below),
        // then dispatch on its type. An unknown type keeps the value whole.
        let value = Value::deserialize(d)?;
        let Value::Object(mut map) = value else {
            return Err(D::Error::custom("content block must be an object"));
        };
        let kind = match map.get("type") {
            Some(Value::String(k)) => k.clone(),
            _ => return Err(D::Error::custom("content block has no string \"type\"")),
        };
        fn typed<T: serde::de::DeserializeOwned, E: Error>(
            map: serde_json::Map<String, Value>,
            kind: &str,
        ) -> Result<T, E> {
            serde_json::from_value(Value::Object(map))
                .map_err(|e| E::custom(format!("invalid {kind} content block: {e}")))
        }
        let known = matches!(
            kind.as_str(),
            "text" | "image" | "audio" | "resource_link" | "resource" | "tool_use" | "tool_result"
        );
        if !known {
            return Ok(ContentBlock::Unknown(Value::Object(map)));
        }
        // shift_remove keeps the order of the members left in `extra`.
        map.shift_remove("type");
        Ok(match kind.as_str() {
            "text" => ContentBlock::Text(typed(map, &kind)?),
            "image" => ContentBlock::Image(typed(map, &kind)?),
            "audio" => ContentBlock::Audio(typed(map, &kind)?),
            "resource_link" => ContentBlock::ResourceLink(typed(map, &kind)?),
            "resource" => ContentBlock::Resource(typed(map, &kind)?),
            "tool_use" => ContentBlock::ToolUse(typed(map, &kind)?),
            _ => ContentBlock::ToolResult(typed(map, &kind)?),
        })
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
    fn malformed_known_block_is_an_error() {
        let err = serde_json::from_value::<ContentBlock>(json!({"type": "image", "data": "x"})).unwrap_err();
        assert!(err.to_string().contains("invalid image content block"), "{err}");
    }
}
