//! The pieces of a tool's output: [`ContentItem`] and its readable [`summary`](ContentItem::summary).

use std::borrow::Cow;
use std::fmt::Write as _;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::{Metadata, SharedText};

/// One piece of a tool's output.
///
/// The variants carry what protocol content blocks carry (base64 data stays base64), plus the
/// block's `annotations` and free-form `metadata`. A block of a type no variant models becomes
/// [`ContentItem::Unknown`], which keeps the raw JSON.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum ContentItem {
    /// Plain text.
    Text(TextContent),
    /// An image, base64-encoded.
    Image(MediaContent),
    /// Audio, base64-encoded.
    Audio(MediaContent),
    /// A link to a resource the tool did not inline.
    ResourceLink(ResourceLink),
    /// A resource inlined in the output, as text or as a base64 blob.
    EmbeddedResource(EmbeddedResource),
    /// Other binary data, base64-encoded.
    Binary(BinaryContent),
    /// A block of a type this model does not know, kept as it came.
    Unknown(UnknownContent),
}

/// A text block.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TextContent {
    /// The text (shared with the result's `content` when that is this text).
    pub text: SharedText,
    /// The block's annotations (audience, priority, ...), as they came.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Value>,
    /// Free-form metadata.
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub metadata: Metadata,
}

/// An image or audio block.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct MediaContent {
    /// The base64-encoded bytes.
    pub data: String,
    /// The media's MIME type, such as `image/png`.
    pub mime_type: String,
    /// The block's annotations, as they came.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Value>,
    /// Free-form metadata.
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub metadata: Metadata,
}

/// A link to a resource.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ResourceLink {
    /// The resource's URI.
    pub uri: String,
    /// The resource's name.
    pub name: String,
    /// A human-readable title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What the resource is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The resource's MIME type, if known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// The resource's size in bytes, if known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
    /// The block's annotations, as they came.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Value>,
    /// Free-form metadata.
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub metadata: Metadata,
}

/// A resource inlined in the output.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EmbeddedResource {
    /// The resource's URI.
    pub uri: String,
    /// The resource's MIME type, if known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// The resource's contents.
    pub body: ResourceBody,
    /// The block's annotations, as they came.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Value>,
    /// Free-form metadata.
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub metadata: Metadata,
}

/// The contents of an embedded resource.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ResourceBody {
    /// Text contents.
    Text(String),
    /// Binary contents, base64-encoded.
    Blob(String),
}

/// Binary data that is neither image nor audio.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct BinaryContent {
    /// The base64-encoded bytes.
    pub data: String,
    /// The data's MIME type, if known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Where the data comes from, if known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uri: Option<String>,
    /// A name for the data, if known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The block's annotations, as they came.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Value>,
    /// Free-form metadata.
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub metadata: Metadata,
}

/// A block of a type this model does not know.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct UnknownContent {
    /// The block's type name, as it came (empty when it had none).
    pub type_name: String,
    /// The whole block, as it came.
    pub raw: Value,
    /// The block's annotations, as they came.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Value>,
    /// Free-form metadata.
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub metadata: Metadata,
}

impl ContentItem {
    /// The most bytes of an embedded text resource's text (and of a resource link's description)
    /// that a [`summary`](ContentItem::summary) holds: longer text is cut on a character boundary
    /// at or below this bound and followed by a line saying how many bytes were left out, such as
    /// `[... 1200 more bytes left out, of 66736]`.
    pub const MAX_SUMMARY_TEXT: usize = 64 * 1024;

    /// A text item.
    pub fn text(text: impl Into<SharedText>) -> Self {
        Self::Text(TextContent { text: text.into(), ..TextContent::default() })
    }

    /// An image item from base64 `data`.
    pub fn image(data: impl Into<String>, mime_type: impl Into<String>) -> Self {
        Self::Image(MediaContent { data: data.into(), mime_type: mime_type.into(), ..MediaContent::default() })
    }

    /// An audio item from base64 `data`.
    pub fn audio(data: impl Into<String>, mime_type: impl Into<String>) -> Self {
        Self::Audio(MediaContent { data: data.into(), mime_type: mime_type.into(), ..MediaContent::default() })
    }

    /// The item's text, for a text item.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            Self::Text(text) => Some(&text.text),
            _ => None,
        }
    }

    /// The item's MIME type, where it has one.
    pub fn mime_type(&self) -> Option<&str> {
        match self {
            Self::Text(_) => None,
            Self::Image(media) | Self::Audio(media) => Some(&media.mime_type),
            Self::ResourceLink(link) => link.mime_type.as_deref(),
            Self::EmbeddedResource(resource) => resource.mime_type.as_deref(),
            Self::Binary(binary) => binary.mime_type.as_deref(),
            Self::Unknown(unknown) => raw_str(&unknown.raw, "mimeType"),
        }
    }

    /// The item's URI, where it has one.
    pub fn uri(&self) -> Option<&str> {
        match self {
            Self::Text(_) | Self::Image(_) | Self::Audio(_) => None,
            Self::ResourceLink(link) => Some(&link.uri),
            Self::EmbeddedResource(resource) => Some(&resource.uri),
            Self::Binary(binary) => binary.uri.as_deref(),
            Self::Unknown(unknown) => raw_str(&unknown.raw, "uri"),
        }
    }

    /// The item's name, where it has one.
    pub fn name(&self) -> Option<&str> {
        match self {
            Self::Text(_) | Self::Image(_) | Self::Audio(_) | Self::EmbeddedResource(_) => None,
            Self::ResourceLink(link) => Some(&link.name),
            Self::Binary(binary) => binary.name.as_deref(),
            Self::Unknown(unknown) => raw_str(&unknown.raw, "name"),
        }
    }

    /// The item's annotations, as they came.
    pub fn annotations(&self) -> Option<&Value> {
        match self {
            Self::Text(c) => c.annotations.as_ref(),
            Self::Image(c) | Self::Audio(c) => c.annotations.as_ref(),
            Self::ResourceLink(c) => c.annotations.as_ref(),
            Self::EmbeddedResource(c) => c.annotations.as_ref(),
            Self::Binary(c) => c.annotations.as_ref(),
            Self::Unknown(c) => c.annotations.as_ref(),
        }
    }

    /// The item's metadata.
    pub fn metadata(&self) -> &Map<String, Value> {
        match self {
            Self::Text(c) => &c.metadata,
            Self::Image(c) | Self::Audio(c) => &c.metadata,
            Self::ResourceLink(c) => &c.metadata,
            Self::EmbeddedResource(c) => &c.metadata,
            Self::Binary(c) => &c.metadata,
            Self::Unknown(c) => &c.metadata,
        }
    }

    /// The item as history text: a text item's text, or a readable placeholder for any other
    /// item:
    ///
    /// - media: `[image: image/png, 12 KB]`, `[audio: ...]`, `[binary: ...]`;
    /// - a resource link: `[resource link: NAME <URI>, title "TITLE", MIME, SIZE]` (the parts
    ///   it has), then its description on the next line;
    /// - an embedded resource: `[resource: URI, MIME]`, then its text on the next line (up to
    ///   [`MAX_SUMMARY_TEXT`](ContentItem::MAX_SUMMARY_TEXT) bytes), or for a blob
    ///   `[resource: URI, MIME, SIZE]`;
    /// - a block of an unknown type: `[unknown content: TYPE]`.
    pub fn summary(&self) -> String {
        match self {
            Self::Text(text) => text.text.to_string(),
            Self::Image(media) => format!("[image: {}, {}]", or_unknown(&media.mime_type), base64_size(&media.data)),
            Self::Audio(media) => format!("[audio: {}, {}]", or_unknown(&media.mime_type), base64_size(&media.data)),
            Self::ResourceLink(link) => {
                let mut out = format!("[resource link: {} <{}>", or_unknown(&link.name), link.uri);
                if let Some(title) = link.title.as_deref().filter(|t| !t.trim().is_empty() && *t != link.name) {
                    let _ = write!(out, ", title {title:?}");
                }
                if let Some(mime) = &link.mime_type {
                    let _ = write!(out, ", {mime}");
                }
                if let Some(size) = link.size {
                    let _ = write!(out, ", {}", human_size(size));
                }
                out.push(']');
                if let Some(description) = link.description.as_deref().filter(|d| !d.trim().is_empty()) {
                    out.push('\n');
                    out.push_str(&bounded(description, Self::MAX_SUMMARY_TEXT));
                }
                out
            }
            Self::EmbeddedResource(resource) => {
                let mime = resource.mime_type.as_deref().map(|m| format!(", {m}")).unwrap_or_default();
                match &resource.body {
                    ResourceBody::Text(text) => {
                        format!("[resource: {}{mime}]\n{}", resource.uri, bounded(text, Self::MAX_SUMMARY_TEXT))
                    }
                    ResourceBody::Blob(blob) => format!("[resource: {}{mime}, {}]", resource.uri, base64_size(blob)),
                }
            }
            Self::Binary(binary) => {
                let mime = binary.mime_type.as_deref().unwrap_or("application/octet-stream");
                format!("[binary: {mime}, {}]", base64_size(&binary.data))
            }
            Self::Unknown(unknown) => format!("[unknown content: {}]", or_unknown(&unknown.type_name)),
        }
    }
}

/// `text` if it is at most `max` bytes long; else its longest prefix of at most `max` bytes that
/// ends on a character boundary, then a line saying how many bytes were left out.
pub(crate) fn bounded(text: &str, max: usize) -> Cow<'_, str> {
    if text.len() <= max {
        return Cow::Borrowed(text);
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    Cow::Owned(format!("{}\n[... {} more bytes left out, of {}]", &text[..end], text.len() - end, text.len()))
}

fn raw_str<'a>(raw: &'a Value, key: &str) -> Option<&'a str> {
    raw.get(key).and_then(Value::as_str)
}

fn or_unknown(text: &str) -> &str {
    if text.is_empty() { "unknown" } else { text }
}

/// The number of bytes that base64 `data` decodes to, counted without decoding: whitespace and
/// padding are ignored.
pub fn base64_decoded_len(data: &str) -> u64 {
    let symbols = data.bytes().filter(|b| !b.is_ascii_whitespace() && *b != b'=').count() as u64;
    symbols * 3 / 4
}

fn base64_size(data: &str) -> String {
    human_size(base64_decoded_len(data))
}

/// A byte count for people: `512 B`, `12 KB`, `3.4 MB`, `1.2 GB` (binary multiples).
pub fn human_size(bytes: u64) -> String {
    const KIB: u64 = 1024;
    const MIB: u64 = KIB * 1024;
    const GIB: u64 = MIB * 1024;
    if bytes < KIB {
        format!("{bytes} B")
    } else if bytes < MIB {
        format!("{} KB", (bytes + KIB / 2) / KIB)
    } else if bytes < GIB {
        format!("{:.1} MB", bytes as f64 / MIB as f64)
    } else {
        format!("{:.1} GB", bytes as f64 / GIB as f64)
    }
}
