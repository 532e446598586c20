//! `server/discover` (2026-07-28): the modern era's replacement for the `initialize` handshake,
//! and the typed `data` of the modern era's protocol errors.

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use super::common::{CacheScope, Implementation, RequestParams, ResultType};
use super::lifecycle::{ClientCapabilities, ServerCapabilities};
use super::meta::{JsonObject, Meta};
use crate::jsonrpc::{ErrorCode, ErrorObject};

/// Params of `server/discover`: only `_meta` (protocol version, client info and capabilities).
pub type DiscoverParams = RequestParams;

/// Result of `server/discover`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DiscoverResult {
    /// The revisions the server supports; the client picks one for its requests.
    pub supported_versions: Vec<String>,
    /// What the server supports.
    pub capabilities: ServerCapabilities,
    /// How to use the server, e.g. for a system prompt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
    /// How long the client may cache this result, in milliseconds (required on the wire).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttl_ms: Option<u64>,
    /// Who may cache this result (required on the wire).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_scope: Option<CacheScope>,
    /// `resultType` (required on the wire; always `complete`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_type: Option<ResultType>,
    /// `_meta`; carries `io.modelcontextprotocol/serverInfo`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Members this crate does not model.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl DiscoverResult {
    /// Who the server is, from `_meta["io.modelcontextprotocol/serverInfo"]`.
    pub fn server_info(&self) -> Option<Implementation> {
        self.meta.as_ref()?.server_info()
    }

    /// Whether the server lists a revision.
    pub fn supports_version(&self, version: &str) -> bool {
        self.supported_versions.iter().any(|v| v == version)
    }
}

crate::request_methods! {
    /// `server/discover` (2026-07-28).
    Discover = "server/discover", DiscoverParams => DiscoverResult;
}

/// Decode the `data` of an error whose code is `code`.
fn typed_data<T: DeserializeOwned>(error: &ErrorObject, code: ErrorCode) -> Option<T> {
    if error.code != code {
        return None;
    }
    T::deserialize(error.data.as_ref()?).ok()
}

/// `data` of the unsupported-protocol-version error (-32022, 2026-07-28).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UnsupportedProtocolVersionData {
    /// The revisions the server supports; the client should retry with one of them.
    pub supported: Vec<String>,
    /// The revision the client asked for (required on the wire).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requested: Option<String>,
    /// Members this crate does not model.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl UnsupportedProtocolVersionData {
    /// The typed data of an error with code -32022; `None` for another code or shape.
    pub fn from_error(error: &ErrorObject) -> Option<Self> {
        typed_data(error, ErrorCode::UNSUPPORTED_PROTOCOL_VERSION)
    }
}

/// `data` of the missing-required-client-capability error (-32021, 2026-07-28).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MissingRequiredClientCapabilityData {
    /// The capabilities the server needs from the client for this request.
    pub required_capabilities: ClientCapabilities,
    /// Members this crate does not model.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl MissingRequiredClientCapabilityData {
    /// The typed data of an error with code -32021; `None` for another code or shape.
    pub fn from_error(error: &ErrorObject) -> Option<Self> {
        typed_data(error, ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY)
    }
}

/// `data` of the header-mismatch error (-32020, 2026-07-28). The schema defines no member: the
/// object is kept open for whatever a server reports.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct HeaderMismatchData {
    /// The members the server sent.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl HeaderMismatchData {
    /// The data of an error with code -32020 when it is an object; `None` for another code, no
    /// data, or data that is not an object.
    pub fn from_error(error: &ErrorObject) -> Option<Self> {
        typed_data(error, ErrorCode::HEADER_MISMATCH)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::method::RequestMethod;
    use serde_json::{Value, json};

    #[test]
    fn discover_result_round_trips_and_exposes_server_info() {
        let v = json!({
            "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "fastmcp-demo", "version": "4.2.3"}},
            "ttlMs": 0, "cacheScope": "private", "supportedVersions": ["2026-07-28"],
            "capabilities": {"logging": {}, "tools": {"listChanged": false},
                "extensions": {"io.modelcontextprotocol/ui": {}}},
            "resultType": "complete", "instructions": "hi", "vendor": [1]
        });
        let r: DiscoverResult = serde_json::from_value(v.clone()).unwrap();
        assert_eq!(r.server_info().unwrap().name, "fastmcp-demo");
        assert!(r.supports_version("2026-07-28") && !r.supports_version("2025-11-25"));
        assert_eq!(r.cache_scope, Some(CacheScope::Private));
        assert_eq!(r.result_type, Some(ResultType::Complete));
        assert_eq!(r.ttl_ms, Some(0));
        assert!(r.capabilities.has_logging());
        assert_eq!(serde_json::to_value(&r).unwrap(), v);
        assert_eq!(Discover::METHOD, "server/discover");
    }

    #[test]
    fn discover_params_carry_request_meta() {
        let v = json!({"_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": {"name": "c", "version": "1"},
            "io.modelcontextprotocol/clientCapabilities": {"roots": {"listChanged": true},
                "elicitation": {"form": {}, "url": {}}}
        }});
        let p: DiscoverParams = serde_json::from_value(v.clone()).unwrap();
        let meta = p.meta.as_ref().unwrap();
        assert_eq!(meta.protocol_version().as_deref(), Some("2026-07-28"));
        assert!(meta.client_capabilities().unwrap().supports_elicitation_url());
        assert_eq!(serde_json::to_value(&p).unwrap(), v);
    }

    #[test]
    fn modern_error_data() {
        let err = ErrorObject::new(ErrorCode::UNSUPPORTED_PROTOCOL_VERSION, "unsupported")
            .with_data(json!({"supported": ["2026-07-28"], "requested": "2027-01-01"}));
        let d = UnsupportedProtocolVersionData::from_error(&err).unwrap();
        assert_eq!(d.supported, ["2026-07-28"]);
        assert_eq!(d.requested.as_deref(), Some("2027-01-01"));
        assert!(MissingRequiredClientCapabilityData::from_error(&err).is_none());

        let data = json!({"requiredCapabilities": {"sampling": {"tools": {}}}});
        let err =
            ErrorObject::new(ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY, "needs sampling").with_data(data.clone());
        let d = MissingRequiredClientCapabilityData::from_error(&err).unwrap();
        assert!(d.required_capabilities.supports_sampling_tools());
        assert_eq!(serde_json::to_value(&d).unwrap(), data);

        let err = ErrorObject::new(ErrorCode::HEADER_MISMATCH, "Mcp-Method mismatch")
            .with_data(json!({"header": "Mcp-Method"}));
        assert_eq!(HeaderMismatchData::from_error(&err).unwrap().extra["header"], "Mcp-Method");
        let err = ErrorObject::new(ErrorCode::HEADER_MISMATCH, "x").with_data(Value::Null);
        assert!(HeaderMismatchData::from_error(&err).is_none());
    }
}
