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

/// A page of a paginated `*/list` result: its items, the cursor of the next page and how long it
/// may be cached. Every list result declared by [`paginated_results!`](crate::paginated_results)
/// implements it, so a client follows the pages of any of them with one loop.
pub trait Paginated {
    /// What the list holds.
    type Item;
    /// The items of this page.
    fn items(&self) -> &[Self::Item];
    /// The items of this page, taken.
    fn into_items(self) -> Vec<Self::Item>;
    /// The cursor of the next page; `None` on the last page.
    fn next_cursor(&self) -> Option<&str>;
    /// How long this page may be cached, in milliseconds (2026-07-28 `ttlMs`).
    fn ttl_ms(&self) -> Option<u64>;
}

/// Declare the results of paginated `*/list` requests: each is its list of items plus the members
/// every page has (`nextCursor`, the 2026-07-28 cache hints `ttlMs` and `cacheScope`,
/// `resultType`, `_meta` and the members this crate does not model), and implements
/// [`Paginated`].
///
/// `paginated_results! { /// docs
///     ListToolsResult { /// The tools of this page.
///         tools: Vec<Tool> } }`
#[macro_export]
#[doc(hidden)]
macro_rules! paginated_results {
    ($( $(#[$doc:meta])* $name:ident { $(#[$field_attr:meta])* $field:ident: Vec<$item:ty> } )*) => {
        $(
            $(#[$doc])*
            #[derive(Debug, Clone, PartialEq, Default, ::serde::Serialize, ::serde::Deserialize)]
            #[serde(rename_all = "camelCase")]
            pub struct $name {
                $(#[$field_attr])*
                pub $field: Vec<$item>,
                /// Cursor of the next page, if any.
                #[serde(default, skip_serializing_if = "Option::is_none")]
                pub next_cursor: Option<$crate::types::meta::Cursor>,
                /// Cache lifetime in milliseconds (2026-07-28).
                #[serde(default, skip_serializing_if = "Option::is_none")]
                pub ttl_ms: Option<u64>,
                /// Cache scope (2026-07-28).
                #[serde(default, skip_serializing_if = "Option::is_none")]
                pub cache_scope: Option<$crate::types::common::CacheScope>,
                /// `resultType` (2026-07-28).
                #[serde(default, skip_serializing_if = "Option::is_none")]
                pub result_type: Option<$crate::types::common::ResultType>,
                /// `_meta`.
                #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
                pub meta: Option<$crate::types::meta::Meta>,
                /// Members this crate does not model.
                #[serde(flatten)]
                pub extra: $crate::types::meta::JsonObject,
            }

            impl $crate::types::common::Paginated for $name {
                type Item = $item;
                fn items(&self) -> &[$item] {
                    &self.$field
                }
                fn into_items(self) -> Vec<$item> {
                    self.$field
                }
                fn next_cursor(&self) -> Option<&str> {
                    self.next_cursor.as_deref()
                }
                fn ttl_ms(&self) -> Option<u64> {
                    self.ttl_ms
                }
            }
        )*
    };
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

#[cfg(test)]
mod tests {
    use serde::Serialize;
    use serde::de::DeserializeOwned;
    use serde_json::{Value, json};

    use super::Paginated;
    use crate::types::prompts::ListPromptsResult;
    use crate::types::resources::{ListResourceTemplatesResult, ListResourcesResult};
    use crate::types::skills::ListSkillsResult;
    use crate::types::tools::ListToolsResult;

    /// A page of `key` holding `item` twice, with every member a page has and one unknown.
    fn page(key: &str, item: Value) -> Value {
        json!({key: [item.clone(), item], "nextCursor": "c-2", "ttlMs": 1500, "cacheScope": "private",
            "resultType": "complete", "_meta": {"k": 1}, "x-unknown": true})
    }

    fn check<T: Paginated + Serialize + DeserializeOwned>(key: &str, item: Value) {
        let wire = page(key, item);
        let page: T = serde_json::from_value(wire.clone()).unwrap_or_else(|e| panic!("{key}: {e}"));
        assert_eq!(page.items().len(), 2, "{key}");
        assert_eq!(page.next_cursor(), Some("c-2"), "{key}");
        assert_eq!(page.ttl_ms(), Some(1500), "{key}");
        // Every member of the page but its items (whose own types decide) comes back as it was.
        let (mut back, mut wire) = (serde_json::to_value(&page).unwrap(), wire);
        assert_eq!(back[key].as_array().map(Vec::len), Some(2), "{key}");
        back.as_object_mut().unwrap().remove(key);
        wire.as_object_mut().unwrap().remove(key);
        assert_eq!(back, wire, "{key}: the page's members round-trip");
        assert_eq!(page.into_items().len(), 2, "{key}");
        // The last page: no cursor, no hints.
        let last: T = serde_json::from_value(json!({key: []})).unwrap();
        assert_eq!((last.next_cursor(), last.ttl_ms(), last.items().len()), (None, None, 0), "{key}");
    }

    #[test]
    fn every_list_result_is_a_page() {
        check::<ListToolsResult>("tools", json!({"name": "t", "inputSchema": {"type": "object"}}));
        check::<ListPromptsResult>("prompts", json!({"name": "p"}));
        check::<ListResourcesResult>("resources", json!({"uri": "file:///a", "name": "a"}));
        check::<ListResourceTemplatesResult>("resourceTemplates", json!({"uriTemplate": "file:///{x}", "name": "t"}));
        check::<ListSkillsResult>(
            "skills",
            json!({"name": "s", "uri": "skill://s/SKILL.md", "description": "d", "digest": "sha256:00", "size": 1}),
        );
    }

    #[test]
    fn a_page_without_its_items_is_refused_except_for_skills() {
        assert!(serde_json::from_value::<ListToolsResult>(json!({"nextCursor": "c"})).is_err());
        assert!(serde_json::from_value::<ListResourceTemplatesResult>(json!({})).is_err());
        let skills: ListSkillsResult = serde_json::from_value(json!({"nextCursor": "c"})).unwrap();
        assert!(skills.items().is_empty());
    }
}
