//! Resources: listing resources and templates, reading (with the 2026-07-28 multi round-trip
//! outcome), subscribing (legacy era), and the list_changed and updated notifications.

use serde::{Deserialize, Serialize};

use super::common::{Annotations, CacheScope, EmptyResult, Icon, PaginatedParams, ResultType};
use super::content::{ResourceContents, ResourceLink};
use super::extra::Extra;
use super::meta::{JsonObject, Meta};
use super::mrtr::{InputResponses, Outcome};

/// A resource the server can read. Its members are exactly those of a `resource_link` content
/// block without the `type` tag, in every revision.
pub type Resource = ResourceLink;

/// A template of resource URIs (RFC 6570).
///
/// Its `annotations`, `_meta` and the members this crate does not model are boxed, as a tool's
/// are: a host keeps the templates of every server.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceTemplate {
    /// The URI template.
    pub uri_template: String,
    /// Programmatic name.
    pub name: String,
    /// Display name (2025-06-18+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What the resources of this template are.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// MIME type of every resource of this template, if they share one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Icons (2025-11-25+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icons: Option<Vec<Icon>>,
    /// Display hints.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Box<Annotations>>,
    /// `_meta` (2025-06-18+).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Box<Meta>>,
    /// Members this crate does not model.
    #[serde(flatten)]
    pub extra: Extra,
}

/// Params of `resources/list`.
pub type ListResourcesParams = PaginatedParams;

/// Params of `resources/templates/list`.
pub type ListResourceTemplatesParams = PaginatedParams;

crate::paginated_results! {
    /// Result of `resources/list`.
    ListResourcesResult {
        /// The resources of this page.
        resources: Vec<Resource>
    }
    /// Result of `resources/templates/list`.
    ListResourceTemplatesResult {
        /// The templates of this page.
        resource_templates: Vec<ResourceTemplate>
    }
}

/// Params of `resources/read`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReadResourceParams {
    /// The resource URI.
    pub uri: String,
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

/// Result of a completed `resources/read`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReadResourceResult {
    /// The contents: one item, or several for a resource with sub-resources.
    pub contents: Vec<ResourceContents>,
    /// Cache lifetime in milliseconds (2026-07-28).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttl_ms: Option<u64>,
    /// Cache scope (2026-07-28).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_scope: Option<CacheScope>,
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

/// What `resources/read` may answer: a result or a request for input (2026-07-28).
pub type ReadResourceOutcome = Outcome<ReadResourceResult>;

/// Params of `resources/subscribe` (legacy era; 2026-07-28 uses `subscriptions/listen`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct SubscribeParams {
    /// The resource URI.
    pub uri: String,
    /// `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Members this crate does not model.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// Params of `resources/unsubscribe` (legacy era): the same members as `resources/subscribe`.
pub type UnsubscribeParams = SubscribeParams;

/// Params of `notifications/resources/updated`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ResourceUpdatedParams {
    /// The URI of the resource that changed (possibly a sub-resource of the subscribed one).
    pub uri: String,
    /// `_meta` (2026-07-28: carries the subscription id).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Members this crate does not model.
    #[serde(flatten)]
    pub extra: JsonObject,
}

crate::request_methods! {
    /// `resources/list`.
    ListResources = "resources/list", ListResourcesParams => ListResourcesResult;
    /// `resources/templates/list`.
    ListResourceTemplates = "resources/templates/list", ListResourceTemplatesParams => ListResourceTemplatesResult;
    /// `resources/subscribe` (legacy era).
    Subscribe = "resources/subscribe", SubscribeParams => EmptyResult;
    /// `resources/unsubscribe` (legacy era).
    Unsubscribe = "resources/unsubscribe", UnsubscribeParams => EmptyResult;
}

/// `resources/read`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReadResource;
impl crate::method::RequestMethod for ReadResource {
    const METHOD: &'static str = "resources/read";
    type Params = ReadResourceParams;
    type Result = ReadResourceOutcome;
    fn decode_result(raw: &crate::RawJson) -> Result<Self::Result, serde_json::Error> {
        Outcome::decode(raw)
    }
}

crate::notification_methods! {
    /// `notifications/resources/list_changed`.
    ResourceListChanged = "notifications/resources/list_changed", super::common::NotificationParams;
    /// `notifications/resources/updated`.
    ResourceUpdated = "notifications/resources/updated", ResourceUpdatedParams;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::method::{NotificationMethod, RequestMethod};
    use serde_json::json;

    #[test]
    fn list_results_round_trip_with_unknown_members() {
        let v = json!({
            "resources": [{
                "uri": "test://static/resource/1",
                "name": "Resource 1",
                "title": "One",
                "description": "first",
                "mimeType": "text/plain",
                "size": 12,
                "annotations": {"audience": ["user"], "priority": 0.5},
                "icons": [{"src": "data:image/png;base64,AA=="}],
                "_meta": {"k": "v"},
                "color": "red"
            }],
            "nextCursor": "2",
            "cacheScope": "private",
            "ttlMs": 0,
            "resultType": "complete"
        });
        let r: ListResourcesResult = serde_json::from_value(v.clone()).unwrap();
        assert_eq!(r.resources[0].size, Some(12));
        assert_eq!(r.resources[0].extra["color"], "red");
        assert_eq!(serde_json::to_value(&r).unwrap(), v);

        let t = json!({
            "resourceTemplates": [{
                "uriTemplate": "test://dynamic/resource/{id}",
                "name": "Dynamic",
                "mimeType": "text/plain",
                "description": "by id",
                "x-y": null
            }]
        });
        let r: ListResourceTemplatesResult = serde_json::from_value(t.clone()).unwrap();
        assert_eq!(r.resource_templates[0].uri_template, "test://dynamic/resource/{id}");
        assert_eq!(serde_json::to_value(&r).unwrap(), t);
    }

    #[test]
    fn read_outcome_decodes_text_blob_and_input_required() {
        let complete = r#"{"contents":[{"uri":"a://1","mimeType":"text/plain","text":"hi"},{"uri":"a://2","blob":"AAE=","_meta":{"m":1}}],"ttlMs":5,"cacheScope":"public","resultType":"complete","extra":1}"#;
        let raw = crate::RawJson::from_string(complete.to_owned()).unwrap();
        let out = ReadResource::decode_result(&raw).unwrap();
        let Outcome::Complete(r) = &out else { panic!("{out:?}") };
        assert!(matches!(r.contents[0], ResourceContents::Text(_)));
        assert!(matches!(r.contents[1], ResourceContents::Blob(_)));
        assert_eq!(r.contents[1].uri(), "a://2");
        assert_eq!(serde_json::to_value(&out).unwrap(), serde_json::from_str::<serde_json::Value>(complete).unwrap());

        let needs = r#"{"resultType":"input_required","inputRequests":{"e":{"method":"elicitation/create","params":{}}},"requestState":"st"}"#;
        let raw = crate::RawJson::from_string(needs.to_owned()).unwrap();
        assert!(matches!(ReadResource::decode_result(&raw).unwrap(), Outcome::InputRequired(_)));
    }

    #[test]
    fn params_and_notifications_round_trip() {
        let v = json!({"uri": "file:///a", "inputResponses": {"k": {"roots": []}}, "requestState": "s", "_meta": {"progressToken": "t"}});
        let p: ReadResourceParams = serde_json::from_value(v.clone()).unwrap();
        assert_eq!(p.uri, "file:///a");
        assert_eq!(serde_json::to_value(&p).unwrap(), v);

        let v = json!({"_meta": {"io.modelcontextprotocol/subscriptionId": "sub-1"}, "uri": "demo://counter", "title": "c"});
        let n: ResourceUpdatedParams = serde_json::from_value(v.clone()).unwrap();
        assert_eq!(n.meta.as_ref().unwrap().subscription_id(), Some("sub-1".into()));
        assert_eq!(n.extra["title"], "c");
        assert_eq!(serde_json::to_value(&n).unwrap(), v);

        let s: SubscribeParams = serde_json::from_value(json!({"uri": "x://y"})).unwrap();
        assert_eq!(serde_json::to_value(&s).unwrap(), json!({"uri": "x://y"}));
    }

    #[test]
    fn markers() {
        assert_eq!(ListResources::METHOD, "resources/list");
        assert_eq!(ListResourceTemplates::METHOD, "resources/templates/list");
        assert_eq!(ReadResource::METHOD, "resources/read");
        assert_eq!(Subscribe::METHOD, "resources/subscribe");
        assert_eq!(Unsubscribe::METHOD, "resources/unsubscribe");
        assert_eq!(ResourceListChanged::METHOD, "notifications/resources/list_changed");
        assert_eq!(ResourceUpdated::METHOD, "notifications/resources/updated");
    }
}
