//! Roots: the directories and files a client exposes to servers, `roots/list` (a server
//! request in the legacy era, an input request in 2026-07-28) and its list_changed
//! notification (legacy era).

use serde::{Deserialize, Serialize};

use super::common::{NotificationParams, RequestParams};
use super::meta::{JsonObject, Meta};

/// A root directory or file a server may operate on.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Root {
    /// The root URI; `file://` for now.
    pub uri: String,
    /// Display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// `_meta` (2025-06-18+).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Members this crate does not model.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl Root {
    /// A root with a URI and an optional display name.
    pub fn new(uri: impl Into<String>, name: Option<String>) -> Self {
        Root { uri: uri.into(), name, ..Default::default() }
    }
}

/// Params of `roots/list`.
pub type ListRootsParams = RequestParams;

/// Result of `roots/list`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ListRootsResult {
    /// The roots.
    pub roots: Vec<Root>,
    /// `_meta` (not in 2026-07-28, where this result is an input response).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Members this crate does not model.
    #[serde(flatten)]
    pub extra: JsonObject,
}

crate::request_methods! {
    /// `roots/list`.
    ListRoots = "roots/list", ListRootsParams => ListRootsResult;
}

crate::notification_methods! {
    /// `notifications/roots/list_changed` (legacy era).
    RootsListChanged = "notifications/roots/list_changed", NotificationParams;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::method::{NotificationMethod, RequestMethod};
    use serde_json::json;

    #[test]
    fn result_round_trips_with_and_without_names() {
        let v = json!({
            "roots": [
                {"uri": "file:///data/project-a", "name": "project-a", "_meta": {"k": 1}},
                {"uri": "file:///data/project-b", "readOnly": true}
            ],
            "_meta": {"m": true},
            "future": 1
        });
        let r: ListRootsResult = serde_json::from_value(v.clone()).unwrap();
        assert_eq!(r.roots[0].name.as_deref(), Some("project-a"));
        assert_eq!(r.roots[1].name, None);
        assert_eq!(r.roots[1].extra["readOnly"], true);
        assert_eq!(serde_json::to_value(&r).unwrap(), v);
        let built = ListRootsResult { roots: vec![Root::new("file:///x", None)], ..Default::default() };
        assert_eq!(serde_json::to_value(&built).unwrap(), json!({"roots": [{"uri": "file:///x"}]}));
    }

    #[test]
    fn markers() {
        assert_eq!(ListRoots::METHOD, "roots/list");
        assert_eq!(RootsListChanged::METHOD, "notifications/roots/list_changed");
        let p: ListRootsParams = serde_json::from_value(json!({})).unwrap();
        assert_eq!(serde_json::to_value(&p).unwrap(), json!({}));
    }
}
