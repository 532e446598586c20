//! Cancellation of a request in flight, by either side.

use serde::{Deserialize, Serialize};

use super::meta::{JsonObject, Meta};
use crate::jsonrpc::RequestId;

/// Params of `notifications/cancelled`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CancelledParams {
    /// The id of the request to cancel. Required in every revision except 2025-11-25, where a
    /// task is cancelled with `tasks/cancel` instead and the id may be absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<RequestId>,
    /// Why, for logging or display.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// `_meta` (2025-11-25+).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Members this crate does not model.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl CancelledParams {
    /// Cancel a request, with an optional reason.
    pub fn new(request_id: impl Into<RequestId>, reason: Option<String>) -> Self {
        CancelledParams { request_id: Some(request_id.into()), reason, ..Default::default() }
    }
}

crate::notification_methods! {
    /// `notifications/cancelled`.
    Cancelled = "notifications/cancelled", CancelledParams;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::method::NotificationMethod;
    use serde_json::json;

    #[test]
    fn round_trips_number_and_string_ids_and_unknown_members() {
        let v = json!({"requestId": 12, "reason": "Request timed out", "later": {"x": 1}});
        let p: CancelledParams = serde_json::from_value(v.clone()).unwrap();
        assert_eq!(p.request_id, Some(RequestId::Number(12)));
        assert_eq!(serde_json::to_value(&p).unwrap(), v);

        let v = json!({"requestId": "abc", "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}});
        let p: CancelledParams = serde_json::from_value(v.clone()).unwrap();
        assert_eq!(p.request_id, Some(RequestId::from("abc")));
        assert_eq!(p.meta.as_ref().unwrap().protocol_version().as_deref(), Some("2026-07-28"));
        assert_eq!(serde_json::to_value(&p).unwrap(), v);
    }

    #[test]
    fn request_id_may_be_absent() {
        let p: CancelledParams = serde_json::from_value(json!({"reason": "bye"})).unwrap();
        assert_eq!(p.request_id, None);
        assert_eq!(serde_json::to_value(&p).unwrap(), json!({"reason": "bye"}));
        assert_eq!(serde_json::to_value(CancelledParams::new(3, None)).unwrap(), json!({"requestId": 3}));
        assert_eq!(Cancelled::METHOD, "notifications/cancelled");
    }
}
