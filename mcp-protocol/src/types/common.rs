//! Building blocks shared by every domain: implementation info, icons, annotations, roles,
//! the generic params and results, cache hints.

use crate::types::open_enum::open_enum;
use serde::{Deserialize, Serialize};
use serde_json::Number;

use super::meta::{Cursor, JsonObject, Meta};

/// Name and version of an MCP implementation (`clientInfo`, `serverInfo`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Implementation {
    /// Programmatic name.
    pub name: String,
    /// Display name (2025-06-18+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Version string.
    pub version: String,
    /// Human-readable description (2025-11-25+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Icons (2025-11-25+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icons: Option<Vec<Icon>>,
    /// Website (2025-11-25+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub website_url: Option<String>,
    /// Members this crate does not model.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl Implementation {
    /// An implementation with a name and version.
    pub fn new(name: impl Into<String>, version: impl Into<String>) -> Self {
        Implementation { name: name.into(), version: version.into(), ..Default::default() }
    }
}

/// An icon for display (2025-11-25+).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Icon {
    /// URI of the icon: https or a data: URI.
    pub src: String,
    /// MIME type override.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Sizes such as `48x48` or `any`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sizes: Option<Vec<String>>,
    /// `light` or `dark`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub theme: Option<String>,
    /// Members this crate does not model.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// The sender or recipient of messages and data in a conversation.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// The user.
    User,
    /// The assistant (the LLM).
    Assistant,
}

/// Hints for clients about how to use or display an object.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Annotations {
    /// Who the object is meant for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub audience: Option<Vec<Role>>,
    /// Importance from 0 (least) to 1 (most), kept as the JSON number that arrived so that `1`
    /// and `1.0` each re-encode unchanged; read it with [`Annotations::priority_f64`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority: Option<Number>,
    /// ISO 8601 time of last modification (2025-06-18+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_modified: Option<String>,
    /// Members this crate does not model.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl Annotations {
    /// The priority as `f64`, if given.
    pub fn priority_f64(&self) -> Option<f64> {
        self.priority.as_ref().and_then(Number::as_f64)
    }
}

/// Params that hold only `_meta` (ping, discover, roots/list, list_changed notifications).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct RequestParams {
    /// `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Members this crate does not model.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// Params of a notification that carries nothing but `_meta`.
pub type NotificationParams = RequestParams;

/// Params of the `*/list` requests.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct PaginatedParams {
    /// `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Where to continue: the `nextCursor` of the previous page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cursor: Option<Cursor>,
    /// Members this crate does not model.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// A result without content (ping, subscribe, setLevel): only `_meta` and open members.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct EmptyResult {
    /// `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// `resultType` (2026-07-28).
    #[serde(rename = "resultType", default, skip_serializing_if = "Option::is_none")]
    pub result_type: Option<ResultType>,
    /// Members this crate does not model.
    #[serde(flatten)]
    pub extra: JsonObject,
}

open_enum! {
    /// `resultType` of a 2026-07-28 result: absent means complete; a connection treats an unknown
    /// value as an error.
    pub enum ResultType {
        /// The request is complete.
        Complete = "complete",
        /// The server needs input first (an `InputRequiredResult`).
        InputRequired = "input_required",
        /// A task handle of the tasks extension (2026-07-28, `io.modelcontextprotocol/tasks`).
        Task = "task",
    }
}

open_enum! {
    /// `cacheScope` of a cacheable 2026-07-28 result.
    pub enum CacheScope {
        /// Cacheable for this client only.
        Private = "private",
        /// Cacheable by shared caches.
        Public = "public",
    }
}
