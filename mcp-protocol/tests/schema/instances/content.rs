//! Content blocks and resource contents, one of each kind the revision has.

use mcp_protocol::types::content::{
    BlobResourceContents, ContentBlock, EmbeddedResource, MediaContent, ResourceContents, ResourceLink, TextContent,
    TextResourceContents, ToolResultContent, ToolUseContent,
};
use serde_json::json;

use super::{Rev, annotations, icons, item_meta, object};

/// A 1x1 PNG, base64.
const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGNgYGD4DwABBAEAghDEoAAAAABJRU5ErkJggg==";
/// A few bytes of WAV, base64.
const WAV: &str = "UklGRiQAAABXQVZFZm10IBAAAAABAAEAQB8AAEAfAAABAAgAZGF0YQAAAAA=";

/// A text block.
pub fn text(rev: Rev, full: bool) -> ContentBlock {
    ContentBlock::Text(TextContent {
        annotations: annotations(rev, full).map(Box::new),
        meta: item_meta(rev, full).map(Box::new),
        ..TextContent::new("The weather in Paris is sunny.")
    })
}

/// An image block.
pub fn image(rev: Rev, full: bool) -> ContentBlock {
    ContentBlock::Image(media(rev, full, PNG, "image/png"))
}

/// An audio block (2025-03-26+).
pub fn audio(rev: Rev, full: bool) -> ContentBlock {
    ContentBlock::Audio(media(rev, full, WAV, "audio/wav"))
}

fn media(rev: Rev, full: bool, data: &str, mime_type: &str) -> MediaContent {
    MediaContent {
        data: data.to_owned(),
        mime_type: mime_type.to_owned(),
        annotations: annotations(rev, full).map(Box::new),
        meta: item_meta(rev, full).map(Box::new),
        ..Default::default()
    }
}

/// A resource link (2025-06-18+); also the shape of a listed resource.
pub fn resource_link(rev: Rev, full: bool) -> ResourceLink {
    let mut link = ResourceLink {
        uri: "file:///project/src/main.rs".to_owned(),
        name: "main.rs".to_owned(),
        ..Default::default()
    };
    if full {
        link.title = (rev >= Rev::V2025_06_18).then(|| "Main source file".to_owned());
        link.description = Some("The program's entry point".to_owned());
        link.mime_type = Some("text/x-rust".to_owned());
        link.size = Some(1024);
        link.icons = icons(rev, true);
        link.annotations = annotations(rev, true).map(Box::new);
        link.meta = item_meta(rev, true).map(Box::new);
    }
    link
}

/// Text or blob contents of a resource.
pub fn resource_contents(rev: Rev, full: bool, blob: bool) -> ResourceContents {
    let uri = "file:///project/README.md".to_owned();
    let mime_type = full.then(|| if blob { "application/octet-stream" } else { "text/markdown" }.to_owned());
    let meta = item_meta(rev, full);
    if blob {
        ResourceContents::Blob(BlobResourceContents {
            uri,
            mime_type,
            blob: PNG.to_owned(),
            meta: meta.map(Box::new),
            ..Default::default()
        })
    } else {
        ResourceContents::Text(TextResourceContents {
            uri,
            mime_type,
            text: "# Readme".to_owned(),
            meta: meta.map(Box::new),
            ..Default::default()
        })
    }
}

/// An embedded resource block.
pub fn embedded(rev: Rev, full: bool, blob: bool) -> ContentBlock {
    ContentBlock::Resource(EmbeddedResource {
        resource: resource_contents(rev, full, blob),
        annotations: annotations(rev, full).map(Box::new),
        meta: item_meta(rev, full).map(Box::new),
        extra: Default::default(),
    })
}

/// Every block a tool result (and, since 2025-06-18, a prompt message) may carry in `rev`.
pub fn tool_content(rev: Rev) -> Vec<ContentBlock> {
    let mut blocks = vec![text(rev, true), image(rev, true)];
    if rev >= Rev::V2025_03_26 {
        blocks.push(audio(rev, true));
    }
    if rev >= Rev::V2025_06_18 {
        blocks.push(ContentBlock::ResourceLink(resource_link(rev, true)));
    }
    blocks.push(embedded(rev, true, false));
    blocks.push(embedded(rev, true, true));
    blocks
}

/// A tool_use block (sampling with tools, 2025-11-25+).
pub fn tool_use(rev: Rev, full: bool) -> ContentBlock {
    ContentBlock::ToolUse(ToolUseContent {
        id: "call-1".to_owned(),
        name: "get_weather".to_owned(),
        input: object(json!({"city": "Paris"})),
        meta: item_meta(rev, full).map(Box::new),
        ..Default::default()
    })
}

/// A tool_result block (sampling with tools, 2025-11-25+).
pub fn tool_result(rev: Rev, full: bool) -> ContentBlock {
    let mut block =
        ToolResultContent { tool_use_id: "call-1".to_owned(), content: vec![text(rev, full)], ..Default::default() };
    if full {
        block.content.push(image(rev, true));
        block.structured_content = Some(json!({"temperature": 22, "conditions": "sunny"}));
        block.is_error = Some(false);
        block.meta = item_meta(rev, true).map(Box::new);
    }
    ContentBlock::ToolResult(block)
}

/// Every block a sampling message may carry in `rev`.
pub fn sampling_content(rev: Rev) -> Vec<ContentBlock> {
    let mut blocks = vec![text(rev, true), image(rev, true)];
    if rev >= Rev::V2025_03_26 {
        blocks.push(audio(rev, true));
    }
    if rev >= Rev::V2025_11_25 {
        blocks.push(tool_use(rev, true));
        blocks.push(tool_result(rev, true));
    }
    blocks
}
