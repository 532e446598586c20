//! `_meta` objects and the reserved keys of revision 2026-07-28.

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::jsonrpc::RequestId;

/// A JSON object of open members: `_meta`, `experimental`, unknown future fields.
pub type JsonObject = serde_json::Map<String, Value>;

/// The `_meta` object of a request, notification, result or content item.
///
/// Kept open: every member survives a round trip. Typed accessors read the keys the protocol
/// reserves; setters write them. The accessors of a domain's keys live with the domain's types
/// (`lifecycle` for capabilities and client and server info, `logging` for the log level,
/// `tasks` for the related task), so that this module depends on none of them.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Meta(pub JsonObject);

impl Meta {
    /// `io.modelcontextprotocol/protocolVersion` (2026-07-28 requests).
    pub const PROTOCOL_VERSION: &'static str = "io.modelcontextprotocol/protocolVersion";
    /// `io.modelcontextprotocol/clientCapabilities` (2026-07-28 requests).
    pub const CLIENT_CAPABILITIES: &'static str = "io.modelcontextprotocol/clientCapabilities";
    /// `io.modelcontextprotocol/clientInfo` (2026-07-28 requests).
    pub const CLIENT_INFO: &'static str = "io.modelcontextprotocol/clientInfo";
    /// `io.modelcontextprotocol/serverInfo` (2026-07-28 results).
    pub const SERVER_INFO: &'static str = "io.modelcontextprotocol/serverInfo";
    /// `io.modelcontextprotocol/logLevel` (2026-07-28 requests: opt-in logging).
    pub const LOG_LEVEL: &'static str = "io.modelcontextprotocol/logLevel";
    /// `io.modelcontextprotocol/subscriptionId` (2026-07-28 notifications and listen results).
    pub const SUBSCRIPTION_ID: &'static str = "io.modelcontextprotocol/subscriptionId";
    /// `io.modelcontextprotocol/related-task` (2025-11-25 task messages).
    pub const RELATED_TASK: &'static str = "io.modelcontextprotocol/related-task";
    /// `progressToken` (requests that want progress notifications).
    pub const PROGRESS_TOKEN: &'static str = "progressToken";

    /// An empty `_meta`.
    pub fn new() -> Self {
        Meta::default()
    }

    /// A member, decoded to `T`; `None` when absent or of another shape.
    pub fn get<T: DeserializeOwned>(&self, key: &str) -> Option<T> {
        self.0.get(key).and_then(|v| T::deserialize(v).ok())
    }

    /// Set a member; a value that fails to serialise is stored as `null`.
    pub fn set<T: Serialize>(&mut self, key: &str, value: T) -> &mut Self {
        self.0.insert(key.to_owned(), serde_json::to_value(value).unwrap_or(Value::Null));
        self
    }

    /// Builder form of [`Meta::set`].
    pub fn with<T: Serialize>(mut self, key: &str, value: T) -> Self {
        self.set(key, value);
        self
    }

    /// The progress token, if the request asked for progress.
    pub fn progress_token(&self) -> Option<ProgressToken> {
        self.get(Self::PROGRESS_TOKEN)
    }

    /// The protocol version of a 2026-07-28 request.
    pub fn protocol_version(&self) -> Option<String> {
        self.get(Self::PROTOCOL_VERSION)
    }

    /// The subscription id of a 2026-07-28 notification.
    pub fn subscription_id(&self) -> Option<RequestId> {
        self.get(Self::SUBSCRIPTION_ID)
    }

    /// Whether `_meta` holds no member.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// A progress token: a string or an integer chosen by the requester.
pub type ProgressToken = RequestId;

/// A pagination cursor, opaque to the client.
pub type Cursor = String;

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::types::common::Implementation;
    use crate::types::lifecycle::ClientCapabilities;
    use crate::types::logging::LoggingLevel;

    #[test]
    fn reserved_keys_read_typed() {
        let meta: Meta = serde_json::from_value(json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": {"name": "corpus-py-client", "version": "2.3.0"},
            "io.modelcontextprotocol/clientCapabilities": {"sampling": {}, "roots": {"listChanged": true}},
            "io.modelcontextprotocol/logLevel": "debug",
            "io.modelcontextprotocol/serverInfo": {"name": "s", "version": ""},
            "io.modelcontextprotocol/related-task": {"taskId": "t-1"},
            "progressToken": 5
        }))
        .unwrap();
        assert_eq!(meta.client_info().unwrap().name, "corpus-py-client");
        assert!(meta.client_capabilities().unwrap().supports_sampling());
        assert_eq!(meta.log_level(), Some(LoggingLevel::Debug));
        assert_eq!(meta.server_info().unwrap().version, "");
        assert_eq!(meta.related_task().unwrap().task_id, "t-1");
        assert_eq!(meta.progress_token(), Some(RequestId::from(5)));
        assert!(Meta::new().client_capabilities().is_none());
    }

    #[test]
    fn request_meta_builder() {
        let caps: ClientCapabilities = serde_json::from_value(json!({"elicitation": {"form": {}}})).unwrap();
        let meta = Meta::for_request("2026-07-28", &caps, Some(&Implementation::new("host", "0.1")));
        assert_eq!(
            serde_json::to_value(&meta).unwrap(),
            json!({
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientInfo": {"name": "host", "version": "0.1"},
                "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}}
            })
        );
        assert_eq!(meta.protocol_version().as_deref(), Some("2026-07-28"));
    }
}
