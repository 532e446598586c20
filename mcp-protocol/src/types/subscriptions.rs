//! `subscriptions/listen` (2026-07-28): a long-lived request on which the server sends the
//! notifications the client opted in to, first acknowledging which ones it will honour.

use serde::{Deserialize, Serialize};

use super::common::ResultType;
use super::meta::{JsonObject, Meta};
use crate::jsonrpc::RequestId;

/// The notification types a client opts in to (and a server agrees to honour).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SubscriptionFilter {
    /// `notifications/tools/list_changed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools_list_changed: Option<bool>,
    /// `notifications/prompts/list_changed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompts_list_changed: Option<bool>,
    /// `notifications/resources/list_changed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources_list_changed: Option<bool>,
    /// `notifications/resources/updated` for these resource URIs (replaces `resources/subscribe`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_subscriptions: Option<Vec<String>>,
    /// Members this crate does not model.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl SubscriptionFilter {
    /// Whether tools list changes are included.
    pub fn tools(&self) -> bool {
        self.tools_list_changed.unwrap_or(false)
    }

    /// Whether prompts list changes are included.
    pub fn prompts(&self) -> bool {
        self.prompts_list_changed.unwrap_or(false)
    }

    /// Whether resources list changes are included.
    pub fn resources(&self) -> bool {
        self.resources_list_changed.unwrap_or(false)
    }

    /// The subscribed resource URIs (empty when none).
    pub fn resource_uris(&self) -> &[String] {
        self.resource_subscriptions.as_deref().unwrap_or_default()
    }
}

/// Params of `subscriptions/listen`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SubscriptionsListenParams {
    /// What the client opts in to.
    pub notifications: SubscriptionFilter,
    /// `_meta` (required on the wire: protocol version and client capabilities).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Members this crate does not model.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// Result of `subscriptions/listen`: sent only when the server ends the subscription gracefully.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SubscriptionsListenResult {
    /// `_meta`: required, carries `io.modelcontextprotocol/subscriptionId` (and normally
    /// `serverInfo`). Decoded as empty when a peer omits it.
    #[serde(rename = "_meta", default)]
    pub meta: Meta,
    /// `resultType` (required on the wire; `complete`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_type: Option<ResultType>,
    /// Members this crate does not model.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl SubscriptionsListenResult {
    /// The id of the subscription this result closes (the id of the listen request).
    pub fn subscription_id(&self) -> Option<RequestId> {
        self.meta.subscription_id()
    }
}

/// Params of `notifications/subscriptions/acknowledged`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SubscriptionsAcknowledgedParams {
    /// The subset of the requested notifications the server will send.
    pub notifications: SubscriptionFilter,
    /// `_meta`: carries `io.modelcontextprotocol/subscriptionId`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Members this crate does not model.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl SubscriptionsAcknowledgedParams {
    /// The id of the subscription acknowledged.
    pub fn subscription_id(&self) -> Option<RequestId> {
        self.meta.as_ref()?.subscription_id()
    }
}

crate::request_methods! {
    /// `subscriptions/listen` (2026-07-28).
    SubscriptionsListen = "subscriptions/listen", SubscriptionsListenParams => SubscriptionsListenResult;
}

crate::notification_methods! {
    /// `notifications/subscriptions/acknowledged` (2026-07-28).
    SubscriptionsAcknowledged = "notifications/subscriptions/acknowledged", SubscriptionsAcknowledgedParams;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::method::{NotificationMethod, RequestMethod};
    use serde_json::json;

    #[test]
    fn listen_params_round_trip() {
        let v = json!({
            "notifications": {"toolsListChanged": true, "promptsListChanged": false,
                "resourceSubscriptions": ["demo://counter"], "tasksStatus": true},
            "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {}, "io.modelcontextprotocol/logLevel": "debug"}
        });
        let p: SubscriptionsListenParams = serde_json::from_value(v.clone()).unwrap();
        assert!(p.notifications.tools() && !p.notifications.prompts() && !p.notifications.resources());
        assert_eq!(p.notifications.resource_uris(), ["demo://counter"]);
        assert_eq!(p.notifications.extra["tasksStatus"], true);
        assert_eq!(serde_json::to_value(&p).unwrap(), v);
        assert_eq!(SubscriptionsListen::METHOD, "subscriptions/listen");
    }

    #[test]
    fn acknowledged_and_result_carry_the_subscription_id() {
        let v = json!({"_meta": {"io.modelcontextprotocol/subscriptionId": "listen:0"},
            "notifications": {"toolsListChanged": true}});
        let n: SubscriptionsAcknowledgedParams = serde_json::from_value(v.clone()).unwrap();
        assert_eq!(n.subscription_id(), Some(RequestId::from("listen:0")));
        assert_eq!(serde_json::to_value(&n).unwrap(), v);
        assert_eq!(SubscriptionsAcknowledged::METHOD, "notifications/subscriptions/acknowledged");

        let r = json!({"_meta": {"io.modelcontextprotocol/subscriptionId": 7,
            "io.modelcontextprotocol/serverInfo": {"name": "s", "version": "1"}}, "resultType": "complete"});
        let res: SubscriptionsListenResult = serde_json::from_value(r.clone()).unwrap();
        assert_eq!(res.subscription_id(), Some(RequestId::from(7)));
        assert_eq!(res.meta.server_info().unwrap().name, "s");
        assert_eq!(serde_json::to_value(&res).unwrap(), r);
    }
}
