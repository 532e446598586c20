//! MCP content blocks to host content items.

use mcp_protocol::types::common::Annotations;
use mcp_protocol::types::content::{ContentBlock, ResourceContents};
use mcp_protocol::types::extra::Extra;
use mcp_protocol::types::meta::Meta;
use serde::Serialize;
use serde_json::Value;
use tool_system::{
    ContentItem, EmbeddedResource, MediaContent, Metadata, ResourceBody, ResourceLink, TextContent, UnknownContent,
};

/// One block as a host item. Nothing is dropped: members the item has no field for go to its
/// `metadata` (`_meta`, unmodelled members, a link's `icons`, an embedded resource's own `_meta`
/// under `resource_meta`), and `tool_use`, `tool_result` and unknown blocks keep their raw JSON.
pub(super) fn content_item(block: ContentBlock) -> ContentItem {
    match block {
        ContentBlock::Text(text) => ContentItem::Text(TextContent {
            text: text.text.into(),
            annotations: annotations(text.annotations),
            metadata: metadata(text.meta, text.extra),
        }),
        ContentBlock::Image(media) => ContentItem::Image(media_item(media)),
        ContentBlock::Audio(media) => ContentItem::Audio(media_item(media)),
        ContentBlock::ResourceLink(link) => {
            let mut metadata = metadata(link.meta, link.extra);
            if let Some(icons) = link.icons {
                metadata.insert("icons".into(), to_value(&icons));
            }
            ContentItem::ResourceLink(ResourceLink {
                uri: link.uri,
                name: link.name,
                title: link.title,
                description: link.description,
                mime_type: link.mime_type,
                size: link.size,
                annotations: annotations(link.annotations),
                metadata,
            })
        }
        ContentBlock::Resource(embedded) => {
            let mut metadata = metadata(embedded.meta, embedded.extra);
            let (uri, mime_type, body, resource_meta, resource_extra) = match embedded.resource {
                ResourceContents::Text(t) => (t.uri, t.mime_type, ResourceBody::Text(t.text), t.meta, t.extra),
                ResourceContents::Blob(b) => (b.uri, b.mime_type, ResourceBody::Blob(b.blob), b.meta, b.extra),
            };
            if let Some(meta) = resource_meta {
                metadata.insert("resource_meta".into(), Value::Object(meta.0));
            }
            if !resource_extra.is_empty() {
                metadata.insert("resource_extra".into(), Value::Object(resource_extra.into_inner()));
            }
            ContentItem::EmbeddedResource(EmbeddedResource {
                uri,
                mime_type,
                body,
                annotations: annotations(embedded.annotations),
                metadata,
            })
        }
        block @ (ContentBlock::ToolUse(_) | ContentBlock::ToolResult(_)) => {
            let type_name = block.kind().to_owned();
            let raw = to_value(&block);
            ContentItem::Unknown(UnknownContent { type_name, raw, annotations: None, metadata: Metadata::new() })
        }
        ContentBlock::Unknown(raw) => {
            let type_name = raw.get("type").and_then(Value::as_str).unwrap_or_default().to_owned();
            let annotations = raw.get("annotations").cloned();
            ContentItem::Unknown(UnknownContent { type_name, raw, annotations, metadata: Metadata::new() })
        }
    }
}

fn media_item(media: mcp_protocol::types::content::MediaContent) -> MediaContent {
    MediaContent {
        data: media.data,
        mime_type: media.mime_type,
        annotations: annotations(media.annotations),
        metadata: metadata(media.meta, media.extra),
    }
}

fn annotations(annotations: Option<Box<Annotations>>) -> Option<Value> {
    annotations.map(|a| to_value(&*a))
}

/// A block's unmodelled members, plus its `_meta` under `_meta`.
fn metadata(meta: Option<Box<Meta>>, extra: Extra) -> Metadata {
    // Most blocks have neither: no map is made to be found empty.
    if meta.is_none() && extra.is_empty() {
        return Metadata::new();
    }
    let mut metadata = extra.into_inner();
    if let Some(meta) = meta {
        metadata.insert("_meta".into(), Value::Object(meta.0));
    }
    metadata.into()
}

/// Protocol values always serialise (they came from JSON); `null` stands in if one ever does not.
fn to_value<T: Serialize + ?Sized>(value: &T) -> Value {
    serde_json::to_value(value).unwrap_or(Value::Null)
}
