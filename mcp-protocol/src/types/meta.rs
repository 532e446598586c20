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
/// reserves; setters write them.
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
