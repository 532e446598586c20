//! Lifecycle: capabilities of both sides, the `initialize` handshake of the legacy era, `ping` and
//! the `initialized` notification.
//!
//! The capability types are the union of all five revisions. Every sub-capability is an object
//! whose presence means "supported"; sub-capabilities without members of their own are kept as
//! [`JsonObject`]s so that settings this crate does not know survive a round trip.

use serde::{Deserialize, Serialize};

use super::common::{EmptyResult, Implementation, NotificationParams, RequestParams};
use super::meta::{JsonObject, Meta};

/// What a client supports.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClientCapabilities {
    /// Non-standard capabilities, keyed by name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub experimental: Option<JsonObject>,
    /// MCP extensions the client supports, keyed by extension id (2026-07-28; some 2025-11-25
    /// clients send it too). An empty object means support without settings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extensions: Option<JsonObject>,
    /// The client can list roots.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub roots: Option<RootsCapability>,
    /// The client can sample an LLM.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sampling: Option<SamplingCapability>,
    /// The client can elicit input from the user (2025-06-18+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub elicitation: Option<ElicitationCapability>,
    /// The client runs task-augmented requests (2025-11-25).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tasks: Option<ClientTasksCapability>,
    /// Members this crate does not model.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl ClientCapabilities {
    /// Whether the client declares sampling.
    pub fn supports_sampling(&self) -> bool {
        self.sampling.is_some()
    }

    /// Whether the client declares sampling with `tools` (2025-11-25+).
    pub fn supports_sampling_tools(&self) -> bool {
        self.sampling.as_ref().is_some_and(|s| s.tools.is_some())
    }

    /// Whether the client accepts form elicitation. An `elicitation` object without `form` or
    /// `url` (the 2025-06-18 shape) means form mode.
    pub fn supports_elicitation_form(&self) -> bool {
        self.elicitation.as_ref().is_some_and(|e| e.form.is_some() || e.url.is_none())
    }

    /// Whether the client accepts URL elicitation (2025-11-25+).
    pub fn supports_elicitation_url(&self) -> bool {
        self.elicitation.as_ref().is_some_and(|e| e.url.is_some())
    }

    /// Whether the client can list roots.
    pub fn supports_roots(&self) -> bool {
        self.roots.is_some()
    }

    /// Whether the client sends `notifications/roots/list_changed`.
    pub fn roots_list_changed(&self) -> bool {
        self.roots.as_ref().and_then(|r| r.list_changed).unwrap_or(false)
    }
}

/// `roots` capability of a client.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RootsCapability {
    /// The client notifies when its roots change (legacy era).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub list_changed: Option<bool>,
    /// Members this crate does not model.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// `sampling` capability of a client.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SamplingCapability {
    /// The client honours `includeContext` values other than `none` (2025-11-25+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<JsonObject>,
    /// The client accepts `tools` and `toolChoice` (2025-11-25+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<JsonObject>,
    /// Members this crate does not model.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// `elicitation` capability of a client (2025-06-18+).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ElicitationCapability {
    /// Form mode (2025-11-25+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub form: Option<JsonObject>,
    /// URL mode (2025-11-25+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<JsonObject>,
    /// Members this crate does not model.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// `tasks` capability of a client (2025-11-25).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClientTasksCapability {
    /// The client answers `tasks/list`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub list: Option<JsonObject>,
    /// The client answers `tasks/cancel`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cancel: Option<JsonObject>,
    /// Which server requests the client runs as tasks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requests: Option<ClientTaskRequests>,
    /// Members this crate does not model.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// `tasks.requests` of a client: the server requests it accepts as tasks.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClientTaskRequests {
    /// Task-augmented `sampling/*` requests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sampling: Option<SamplingTaskRequests>,
    /// Task-augmented `elicitation/*` requests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub elicitation: Option<ElicitationTaskRequests>,
    /// Members this crate does not model.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// `tasks.requests.sampling` of a client.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SamplingTaskRequests {
    /// `sampling/createMessage` as a task.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub create_message: Option<JsonObject>,
    /// Members this crate does not model.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// `tasks.requests.elicitation` of a client.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ElicitationTaskRequests {
    /// `elicitation/create` as a task.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub create: Option<JsonObject>,
    /// Members this crate does not model.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// What a server supports.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ServerCapabilities {
    /// Non-standard capabilities, keyed by name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub experimental: Option<JsonObject>,
    /// MCP extensions the server supports, keyed by extension id (2026-07-28).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extensions: Option<JsonObject>,
    /// The server sends log messages.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logging: Option<JsonObject>,
    /// The server answers `completion/complete` (2025-03-26+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completions: Option<JsonObject>,
    /// The server offers prompts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompts: Option<PromptsCapability>,
    /// The server offers resources.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources: Option<ResourcesCapability>,
    /// The server offers tools.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<ToolsCapability>,
    /// The server runs task-augmented requests (2025-11-25).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tasks: Option<ServerTasksCapability>,
    /// Members this crate does not model.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl ServerCapabilities {
    /// Whether the server offers tools.
    pub fn has_tools(&self) -> bool {
        self.tools.is_some()
    }

    /// Whether the server offers prompts.
    pub fn has_prompts(&self) -> bool {
        self.prompts.is_some()
    }

    /// Whether the server offers resources.
    pub fn has_resources(&self) -> bool {
        self.resources.is_some()
    }

    /// Whether the server sends log messages.
    pub fn has_logging(&self) -> bool {
        self.logging.is_some()
    }

    /// Whether the server answers `completion/complete`.
    pub fn has_completions(&self) -> bool {
        self.completions.is_some()
    }

    /// Whether the server sends `notifications/tools/list_changed`.
    pub fn tools_list_changed(&self) -> bool {
        self.tools.as_ref().and_then(|t| t.list_changed).unwrap_or(false)
    }

    /// Whether the server sends `notifications/prompts/list_changed`.
    pub fn prompts_list_changed(&self) -> bool {
        self.prompts.as_ref().and_then(|p| p.list_changed).unwrap_or(false)
    }

    /// Whether the server sends `notifications/resources/list_changed`.
    pub fn resources_list_changed(&self) -> bool {
        self.resources.as_ref().and_then(|r| r.list_changed).unwrap_or(false)
    }

    /// Whether the server supports resource subscriptions.
    pub fn resources_subscribe(&self) -> bool {
        self.resources.as_ref().and_then(|r| r.subscribe).unwrap_or(false)
    }

    /// Whether the server accepts `tools/call` as a task (2025-11-25).
    pub fn supports_tool_call_tasks(&self) -> bool {
        self.tasks
            .as_ref()
            .and_then(|t| t.requests.as_ref())
            .and_then(|r| r.tools.as_ref())
            .is_some_and(|t| t.call.is_some())
    }
}

/// `prompts` capability of a server.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PromptsCapability {
    /// The server notifies when its prompt list changes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub list_changed: Option<bool>,
    /// Members this crate does not model.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// `resources` capability of a server.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourcesCapability {
    /// The server supports subscribing to resource updates.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subscribe: Option<bool>,
    /// The server notifies when its resource list changes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub list_changed: Option<bool>,
    /// Members this crate does not model.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// `tools` capability of a server.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolsCapability {
    /// The server notifies when its tool list changes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub list_changed: Option<bool>,
    /// Members this crate does not model.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// `tasks` capability of a server (2025-11-25).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ServerTasksCapability {
    /// The server answers `tasks/list`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub list: Option<JsonObject>,
    /// The server answers `tasks/cancel`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cancel: Option<JsonObject>,
    /// Which client requests the server runs as tasks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requests: Option<ServerTaskRequests>,
    /// Members this crate does not model.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// `tasks.requests` of a server: the client requests it accepts as tasks.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ServerTaskRequests {
    /// Task-augmented `tools/*` requests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<ToolsTaskRequests>,
    /// Members this crate does not model.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// `tasks.requests.tools` of a server.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolsTaskRequests {
    /// `tools/call` as a task.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call: Option<JsonObject>,
    /// Members this crate does not model.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// Params of `initialize` (legacy era).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InitializeParams {
    /// The newest revision the client supports; kept as a string because a peer may send one
    /// this crate does not know.
    pub protocol_version: String,
    /// What the client supports.
    pub capabilities: ClientCapabilities,
    /// Who the client is.
    pub client_info: Implementation,
    /// `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Members this crate does not model.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// Result of `initialize` (legacy era).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InitializeResult {
    /// The revision the server chose.
    pub protocol_version: String,
    /// What the server supports.
    pub capabilities: ServerCapabilities,
    /// Who the server is.
    pub server_info: Implementation,
    /// How to use the server, e.g. for a system prompt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
    /// `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Members this crate does not model.
    #[serde(flatten)]
    pub extra: JsonObject,
}

crate::request_methods! {
    /// `initialize` (legacy era).
    Initialize = "initialize", InitializeParams => InitializeResult;
    /// `ping` (either side; legacy era).
    Ping = "ping", RequestParams => EmptyResult;
}

crate::notification_methods! {
    /// `notifications/initialized` (legacy era).
    Initialized = "notifications/initialized", NotificationParams;
}

/// The reserved `_meta` members of the 2026-07-28 lifecycle: who the client and server are and
/// what the client can do.
impl Meta {
    /// The client capabilities of a 2026-07-28 request.
    pub fn client_capabilities(&self) -> Option<ClientCapabilities> {
        self.get(Self::CLIENT_CAPABILITIES)
    }

    /// The client info of a 2026-07-28 request.
    pub fn client_info(&self) -> Option<Implementation> {
        self.get(Self::CLIENT_INFO)
    }

    /// The server info of a 2026-07-28 result.
    pub fn server_info(&self) -> Option<Implementation> {
        self.get(Self::SERVER_INFO)
    }

    /// The reserved members of a 2026-07-28 request: protocol version, client capabilities and,
    /// when given, client info.
    pub fn for_request(
        protocol_version: &str,
        capabilities: &ClientCapabilities,
        client_info: Option<&Implementation>,
    ) -> Self {
        let mut meta = Meta::new();
        meta.set(Self::PROTOCOL_VERSION, protocol_version);
        if let Some(info) = client_info {
            meta.set(Self::CLIENT_INFO, info);
        }
        meta.set(Self::CLIENT_CAPABILITIES, capabilities);
        meta
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::method::{NotificationMethod, RequestMethod};
    use serde_json::{Value, json};

    fn round_trip<T: Serialize + serde::de::DeserializeOwned>(v: &Value) -> T {
        let t: T = serde_json::from_value(v.clone()).unwrap();
        assert_eq!(&serde_json::to_value(&t).unwrap(), v);
        t
    }

    #[test]
    fn client_capabilities_of_every_revision_round_trip() {
        let v = json!({
            "roots": {"listChanged": true},
            "sampling": {"context": {}, "tools": {}},
            "elicitation": {"form": {}, "url": {}},
            "tasks": {
                "list": {}, "cancel": {},
                "requests": {"sampling": {"createMessage": {}}, "elicitation": {"create": {"x": 1}}}
            },
            "experimental": {"fancy": {"level": 2}},
            "extensions": {"io.modelcontextprotocol/tasks": {}},
            "future": {"a": true}
        });
        let caps: ClientCapabilities = round_trip(&v);
        assert!(caps.supports_sampling_tools());
        assert!(caps.supports_elicitation_form() && caps.supports_elicitation_url());
        assert!(caps.roots_list_changed());
        let requests = caps.tasks.unwrap().requests.unwrap();
        assert!(requests.sampling.unwrap().create_message.is_some());
        assert_eq!(requests.elicitation.unwrap().create.unwrap()["x"], 1);
        assert!(caps.extra.contains_key("future"));
    }

    #[test]
    fn bare_elicitation_means_form_mode() {
        let caps: ClientCapabilities = round_trip(&json!({"elicitation": {}, "sampling": {}}));
        assert!(caps.supports_elicitation_form());
        assert!(!caps.supports_elicitation_url());
        assert!(caps.supports_sampling() && !caps.supports_sampling_tools());
        assert!(!caps.supports_roots());
    }

    #[test]
    fn server_capabilities_round_trip() {
        let v = json!({
            "tools": {"listChanged": true},
            "prompts": {"listChanged": false},
            "resources": {"subscribe": true, "listChanged": true, "templates": true},
            "logging": {},
            "completions": {},
            "tasks": {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}},
            "extensions": {"io.modelcontextprotocol/ui": {}}
        });
        let caps: ServerCapabilities = round_trip(&v);
        assert!(caps.tools_list_changed() && !caps.prompts_list_changed());
        assert!(caps.resources_subscribe() && caps.resources_list_changed());
        assert!(caps.has_logging() && caps.has_completions());
        assert!(caps.supports_tool_call_tasks());
        assert_eq!(caps.resources.unwrap().extra["templates"], true);
    }

    #[test]
    fn initialize_round_trip() {
        let params = json!({
            "protocolVersion": "2025-11-25",
            "capabilities": {"roots": {"listChanged": true}, "sampling": {}},
            "clientInfo": {"name": "corpus-ts-client", "version": "1.0.0"},
            "_meta": {"progressToken": 1}
        });
        let p: InitializeParams = round_trip(&params);
        assert_eq!(p.client_info.name, "corpus-ts-client");
        let result = json!({
            "protocolVersion": "2024-11-05",
            "capabilities": {"tools": {"listChanged": true}},
            "serverInfo": {"name": "s", "title": "S", "version": "2.0.0"},
            "instructions": "be nice",
            "vendor": 7
        });
        let r: InitializeResult = round_trip(&result);
        assert_eq!(r.instructions.as_deref(), Some("be nice"));
        assert_eq!(r.extra["vendor"], 7);
        assert_eq!(Initialize::METHOD, "initialize");
        assert_eq!(Ping::METHOD, "ping");
        assert_eq!(Initialized::METHOD, "notifications/initialized");
    }

    #[test]
    fn initialize_requires_client_info() {
        let v = json!({"protocolVersion": "2025-06-18", "capabilities": {}});
        assert!(serde_json::from_value::<InitializeParams>(v).is_err());
    }
}
