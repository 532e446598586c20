//! Lifecycle: capabilities, `initialize`, `ping`, `server/discover`, the bare result and the
//! params-only-`_meta` notifications.

use mcp_protocol::types::common::{CacheScope, EmptyResult, NotificationParams, RequestParams};
use mcp_protocol::types::discover::{DiscoverParams, DiscoverResult};
use mcp_protocol::types::lifecycle::{
    ClientCapabilities, ClientTaskRequests, ClientTasksCapability, ElicitationCapability, ElicitationTaskRequests,
    InitializeParams, InitializeResult, PromptsCapability, ResourcesCapability, RootsCapability, SamplingCapability,
    SamplingTaskRequests, ServerCapabilities, ServerTaskRequests, ServerTasksCapability, ToolsCapability,
    ToolsTaskRequests,
};
use mcp_protocol::types::meta::JsonObject;
use serde_json::json;

use super::{
    Rev, Variant, complete, implementation, notification_meta, object, progress_meta, request_meta, result_meta,
    vendor_meta,
};

fn empty() -> Option<JsonObject> {
    Some(JsonObject::new())
}

/// Client capabilities; `full` declares everything the revision knows.
pub fn client_capabilities(rev: Rev, full: bool) -> ClientCapabilities {
    if !full {
        return ClientCapabilities::default();
    }
    let mut caps = ClientCapabilities {
        experimental: Some(object(json!({"com.example/beta": {"enabled": true}}))),
        // `roots.listChanged` went away with the notification in 2026-07-28.
        roots: Some(RootsCapability { list_changed: (!rev.is_modern()).then_some(true), ..Default::default() }),
        sampling: Some(SamplingCapability::default()),
        ..Default::default()
    };
    if rev >= Rev::V2025_11_25 {
        caps.sampling = Some(SamplingCapability { context: empty(), tools: empty(), ..Default::default() });
    }
    if rev >= Rev::V2025_06_18 {
        let modes = rev >= Rev::V2025_11_25;
        caps.elicitation = Some(ElicitationCapability {
            form: modes.then(JsonObject::new),
            url: modes.then(JsonObject::new),
            ..Default::default()
        });
    }
    if rev == Rev::V2025_11_25 {
        caps.tasks = Some(ClientTasksCapability {
            list: empty(),
            cancel: empty(),
            requests: Some(ClientTaskRequests {
                sampling: Some(SamplingTaskRequests { create_message: empty(), ..Default::default() }),
                elicitation: Some(ElicitationTaskRequests { create: empty(), ..Default::default() }),
                ..Default::default()
            }),
            ..Default::default()
        });
    }
    if rev.is_modern() {
        caps.extensions = Some(object(json!({"io.modelcontextprotocol/ui": {"mimeTypes": ["text/html"]}})));
    }
    caps
}

/// Server capabilities; `full` declares everything the revision knows.
pub fn server_capabilities(rev: Rev, full: bool) -> ServerCapabilities {
    if !full {
        return ServerCapabilities::default();
    }
    let mut caps = ServerCapabilities {
        experimental: Some(object(json!({"com.example/beta": {"enabled": true}}))),
        logging: empty(),
        completions: (rev >= Rev::V2025_03_26).then(JsonObject::new),
        prompts: Some(PromptsCapability { list_changed: Some(true), ..Default::default() }),
        resources: Some(ResourcesCapability { subscribe: Some(true), list_changed: Some(true), ..Default::default() }),
        tools: Some(ToolsCapability { list_changed: Some(true), ..Default::default() }),
        ..Default::default()
    };
    if rev == Rev::V2025_11_25 {
        caps.tasks = Some(ServerTasksCapability {
            list: empty(),
            cancel: empty(),
            requests: Some(ServerTaskRequests {
                tools: Some(ToolsTaskRequests { call: empty(), ..Default::default() }),
                ..Default::default()
            }),
            ..Default::default()
        });
    }
    if rev.is_modern() {
        caps.extensions = Some(object(json!({"io.modelcontextprotocol/ui": {}})));
    }
    caps
}

/// `initialize` params (legacy era).
pub fn initialize_params(rev: Rev) -> Vec<Variant<Option<InitializeParams>>> {
    let build = |full: bool| InitializeParams {
        protocol_version: rev.as_str().to_owned(),
        capabilities: client_capabilities(rev, full),
        client_info: implementation(rev, full),
        meta: request_meta(rev, full),
        ..Default::default()
    };
    vec![Variant::min(Some(build(false))), Variant::max(Some(build(true)))]
}

/// `initialize` result (legacy era).
pub fn initialize_result(rev: Rev) -> Vec<Variant<InitializeResult>> {
    let build = |full: bool| InitializeResult {
        protocol_version: rev.as_str().to_owned(),
        capabilities: server_capabilities(rev, full),
        server_info: implementation(rev, full),
        instructions: full.then(|| "Call get_weather for forecasts.".to_owned()),
        meta: result_meta(rev, full),
        ..Default::default()
    };
    vec![Variant::min(build(false)), Variant::max(build(true))]
}

/// Params of the notifications that carry only `_meta` (initialized, list_changed): absent, or
/// with `_meta`, which every revision declares here.
pub fn notification_params(rev: Rev) -> Vec<Variant<Option<NotificationParams>>> {
    let meta = if rev >= Rev::V2025_11_25 { notification_meta(rev, true) } else { Some(vendor_meta()) };
    vec![Variant::min(None), Variant::max(Some(NotificationParams { meta, ..Default::default() }))]
}

/// `ping` params (legacy era): optional, with only `_meta`, which every revision declares here.
pub fn ping_params(rev: Rev) -> Vec<Variant<Option<RequestParams>>> {
    let meta = if rev >= Rev::V2025_11_25 { request_meta(rev, true) } else { Some(progress_meta()) };
    vec![Variant::min(None), Variant::max(Some(RequestParams { meta, ..Default::default() }))]
}

/// The bare result (`Result`, `EmptyResult`): nothing but `_meta`, and `resultType` in 2026-07-28.
pub fn empty_result(rev: Rev) -> Vec<Variant<EmptyResult>> {
    let build =
        |full: bool| EmptyResult { meta: result_meta(rev, full), result_type: complete(rev), ..Default::default() };
    vec![Variant::min(build(false)), Variant::max(build(true))]
}

/// `server/discover` params (2026-07-28): only the required request `_meta`.
pub fn discover_params(rev: Rev) -> Vec<Variant<Option<DiscoverParams>>> {
    let build = |full: bool| Some(DiscoverParams { meta: request_meta(rev, full), ..Default::default() });
    vec![Variant::min(build(false)), Variant::max(build(true))]
}

/// `server/discover` result (2026-07-28).
pub fn discover_result(rev: Rev) -> Vec<Variant<DiscoverResult>> {
    let build = |full: bool| DiscoverResult {
        supported_versions: vec![rev.as_str().to_owned()],
        capabilities: server_capabilities(rev, full),
        instructions: full.then(|| "Call get_weather for forecasts.".to_owned()),
        ttl_ms: Some(3_600_000),
        cache_scope: Some(CacheScope::Public),
        result_type: complete(rev),
        meta: result_meta(rev, full),
        ..Default::default()
    };
    vec![Variant::min(build(false)), Variant::max(build(true))]
}
