//! One client request in, one result or error out: the era of the request, its typed params, and
//! the method's answer.
//!
//! A request whose `_meta` names `io.modelcontextprotocol/protocolVersion` is a modern-era
//! (2026-07-28) request: it is served statelessly with the capabilities its own `_meta` declares,
//! and its result carries `resultType` and the server's info. Any other request belongs to the
//! legacy session that `initialize` set up (a request before `initialize` is served too, as if
//! the client declared no capability).

use std::sync::Arc;

use mcp_protocol::messages::ClientRequest;
use mcp_protocol::types::common::{CacheScope, EmptyResult, Implementation, PaginatedParams};
use mcp_protocol::types::discover::{DiscoverResult, UnsupportedProtocolVersionData};
use mcp_protocol::types::lifecycle::{
    InitializeParams, InitializeResult, PromptsCapability, ResourcesCapability, ServerCapabilities, ToolsCapability,
};
use mcp_protocol::types::meta::{JsonObject, Meta};
use mcp_protocol::types::prompts::ListPromptsResult;
use mcp_protocol::types::resources::{ListResourceTemplatesResult, ListResourcesResult, ReadResourceResult};
use mcp_protocol::types::tools::ListToolsResult;
use mcp_protocol::{Era, ErrorCode, ErrorObject, ProtocolVersion, RawJson, Request};
use serde::Deserialize;
use serde_json::Value;

use super::context::Ctx;
use super::state::{State, encode, internal, invalid_params};
use super::{catalog, tools};

/// The revisions this server speaks, newest first.
pub(crate) const SUPPORTED_VERSIONS: [&str; 5] = ["2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];

/// How long a client may cache the lists and reads of this server, which never change.
const TTL_MS: u64 = 3_600_000;

/// Who this server is.
pub(crate) fn server_info() -> Implementation {
    Implementation {
        title: Some("MCP demo server".into()),
        ..Implementation::new("mcp-demo", env!("CARGO_PKG_VERSION"))
    }
}

const INSTRUCTIONS: &str = "The demo server of the mcp command. Tools: echo, add, current_time, stats, image, \
slow (reports progress), ask_roots and summarize (ask the client for roots and for an LLM completion). \
Prompt: review_code. Resources: demo://readme, demo://logo.png and the template demo://greeting/{name}.";

fn capabilities() -> ServerCapabilities {
    ServerCapabilities {
        tools: Some(ToolsCapability::default()),
        prompts: Some(PromptsCapability::default()),
        resources: Some(ResourcesCapability::default()),
        logging: Some(JsonObject::new()),
        completions: Some(JsonObject::new()),
        extensions: Some(JsonObject::from_iter([(
            mcp_protocol::types::skills::SKILLS_EXTENSION.to_owned(),
            Value::Object(JsonObject::new()),
        )])),
        ..Default::default()
    }
}

#[derive(Deserialize)]
struct MetaPeek {
    #[serde(rename = "_meta", default)]
    meta: Option<Meta>,
}

/// The request's `_meta`, read before its params are typed.
fn peek_meta(request: &Request) -> Result<Option<Meta>, ErrorObject> {
    let Some(raw) = request.params.as_ref() else { return Ok(None) };
    let text = raw.get().trim_start();
    if text == "null" {
        return Ok(None);
    }
    if !text.starts_with('{') {
        return Err(invalid_params(format!("the params of {} must be an object", request.method)));
    }
    serde_json::from_str::<MetaPeek>(text)
        .map(|p| p.meta)
        .map_err(|e| invalid_params(format!("invalid _meta in the params of {}: {e}", request.method)))
}

/// The context of a request, or the modern era's error for a revision this server lacks.
fn context(state: &State, meta: Option<&Meta>) -> Result<Ctx, ErrorObject> {
    let progress = meta.and_then(Meta::progress_token);
    if let Some(meta) = meta
        && let Some(version) = meta.protocol_version()
    {
        if ProtocolVersion::parse(&version).era() != Some(Era::Modern) {
            let data = UnsupportedProtocolVersionData {
                supported: SUPPORTED_VERSIONS.iter().map(|v| v.to_string()).collect(),
                requested: Some(version.clone()),
                ..Default::default()
            };
            let data = serde_json::to_value(data).unwrap_or(Value::Null);
            return Err(ErrorObject::new(
                ErrorCode::UNSUPPORTED_PROTOCOL_VERSION,
                format!("protocol version {version:?} is not supported in _meta; this server speaks 2026-07-28 there (and the legacy revisions through initialize)"),
            )
            .with_data(data));
        }
        return Ok(Ctx {
            modern: true,
            capabilities: meta.client_capabilities().unwrap_or_default(),
            progress,
            log_level: meta.log_level(),
        });
    }
    let legacy = state.legacy();
    Ok(Ctx { modern: false, capabilities: legacy.capabilities, progress, log_level: legacy.log_level })
}

/// Answer one client request.
pub(crate) async fn answer(state: &Arc<State>, request: &Request) -> Result<RawJson, ErrorObject> {
    let meta = peek_meta(request)?;
    let ctx = context(state, meta.as_ref())?;
    let typed = ClientRequest::from_request(request)
        .map_err(|e| invalid_params(format!("invalid params of {}: {e}", request.method)))?;
    let mut result = route(state, &ctx, typed).await?;
    if ctx.modern {
        finish_modern(&mut result);
    }
    encode(&result)
}

fn missing(method: &str) -> ErrorObject {
    invalid_params(format!("{method} needs params"))
}

fn to_value<T: serde::Serialize>(value: &T) -> Result<Value, ErrorObject> {
    serde_json::to_value(value).map_err(|e| internal(format!("could not encode the result: {e}")))
}

fn single_page(params: Option<PaginatedParams>) -> Result<(), ErrorObject> {
    match params.and_then(|p| p.cursor) {
        Some(cursor) => {
            Err(invalid_params(format!("unknown cursor {cursor:?}: this server lists everything on one page")))
        }
        None => Ok(()),
    }
}

/// Cache hints of a modern list or read result; nothing in the legacy era.
fn cache(ctx: &Ctx) -> (Option<u64>, Option<CacheScope>) {
    if ctx.modern { (Some(TTL_MS), Some(CacheScope::Public)) } else { (None, None) }
}

async fn route(state: &Arc<State>, ctx: &Ctx, request: ClientRequest) -> Result<Value, ErrorObject> {
    let (ttl_ms, cache_scope) = cache(ctx);
    match request {
        ClientRequest::Initialize(Some(params)) => to_value(&initialize(state, params)),
        ClientRequest::Initialize(None) => Err(missing("initialize")),
        ClientRequest::Discover(_) => to_value(&DiscoverResult {
            supported_versions: SUPPORTED_VERSIONS.iter().map(|v| v.to_string()).collect(),
            capabilities: capabilities(),
            instructions: Some(INSTRUCTIONS.into()),
            ttl_ms: Some(TTL_MS),
            cache_scope: Some(CacheScope::Public),
            ..Default::default()
        }),
        ClientRequest::Ping(_) => to_value(&EmptyResult::default()),
        ClientRequest::ListTools(params) => {
            single_page(params)?;
            to_value(&ListToolsResult { tools: tools::list(), ttl_ms, cache_scope, ..Default::default() })
        }
        ClientRequest::CallTool(Some(params)) => tools::call(state, ctx, params).await,
        ClientRequest::CallTool(None) => Err(missing("tools/call")),
        ClientRequest::ListPrompts(params) => {
            single_page(params)?;
            to_value(&ListPromptsResult { prompts: catalog::prompts(), ttl_ms, cache_scope, ..Default::default() })
        }
        ClientRequest::GetPrompt(Some(params)) => to_value(&catalog::get_prompt(&params)?),
        ClientRequest::GetPrompt(None) => Err(missing("prompts/get")),
        ClientRequest::ListResources(params) => {
            single_page(params)?;
            let resources = catalog::resources();
            to_value(&ListResourcesResult { resources, ttl_ms, cache_scope, ..Default::default() })
        }
        ClientRequest::ListResourceTemplates(params) => {
            single_page(params)?;
            let resource_templates = catalog::templates();
            to_value(&ListResourceTemplatesResult { resource_templates, ttl_ms, cache_scope, ..Default::default() })
        }
        ClientRequest::Other { method, params } if method == "skills/list" => {
            single_page(params.and_then(|p| serde_json::from_value(p).ok()))?;
            to_value(&super::skills::list())
        }
        ClientRequest::ReadResource(Some(params)) => {
            let skill_file = super::skills::read(&params.uri).ok_or_else(String::new);
            let contents = skill_file.or_else(|_| catalog::read(&params.uri)).map_err(|why| {
                // 2025-11-25 and before name a code of their own; the modern era uses invalid params.
                let code = if ctx.modern { ErrorCode::INVALID_PARAMS } else { ErrorCode::RESOURCE_NOT_FOUND };
                ErrorObject::new(code, why).with_data(serde_json::json!({"uri": params.uri}))
            })?;
            to_value(&ReadResourceResult { contents: vec![contents], ttl_ms, cache_scope, ..Default::default() })
        }
        ClientRequest::ReadResource(None) => Err(missing("resources/read")),
        ClientRequest::Complete(Some(params)) => to_value(&catalog::complete(&params)),
        ClientRequest::Complete(None) => Err(missing("completion/complete")),
        ClientRequest::SetLevel(Some(params)) => {
            if params.level.severity().is_none() {
                return Err(invalid_params(format!("unknown log level {:?}", params.level.as_str())));
            }
            state.legacy.lock().unwrap_or_else(|p| p.into_inner()).log_level = Some(params.level);
            to_value(&EmptyResult::default())
        }
        ClientRequest::SetLevel(None) => Err(missing("logging/setLevel")),
        other => Err(ErrorObject::new(ErrorCode::METHOD_NOT_FOUND, format!("method not found: {}", other.method()))),
    }
}

/// The legacy handshake: the client's revision when this server knows it as a legacy one, else
/// the newest legacy revision.
fn initialize(state: &State, params: InitializeParams) -> InitializeResult {
    let offered = ProtocolVersion::parse(&params.protocol_version);
    let version = if offered.era() == Some(Era::Legacy) { offered } else { ProtocolVersion::LATEST_LEGACY };
    crate::output::terminal::errln(&format!(
        "mcp serve-demo: initialize from {} {} (offered {}, answered {})",
        params.client_info.name,
        params.client_info.version,
        params.protocol_version,
        version.as_str()
    ));
    {
        let mut legacy = state.legacy.lock().unwrap_or_else(|p| p.into_inner());
        legacy.version = Some(version.clone());
        legacy.capabilities = params.capabilities;
    }
    InitializeResult {
        protocol_version: version.as_str().to_owned(),
        capabilities: capabilities(),
        server_info: server_info(),
        instructions: Some(INSTRUCTIONS.into()),
        ..Default::default()
    }
}

/// Add what every modern result carries: `resultType` (unless the result set it, as an
/// input-required result does) and the server's info in `_meta`.
fn finish_modern(result: &mut Value) {
    let Value::Object(map) = result else { return };
    map.entry("resultType").or_insert_with(|| Value::from("complete"));
    let info = serde_json::to_value(server_info()).unwrap_or(Value::Null);
    let meta = map.entry("_meta").or_insert_with(|| Value::Object(JsonObject::new()));
    if let Value::Object(meta) = meta {
        meta.insert(Meta::SERVER_INFO.to_owned(), info);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcp_protocol::types::logging::LoggingLevel;
    use serde_json::json;

    fn request(method: &str, params: Value) -> Request {
        Request { id: 1.into(), method: method.into(), params: Some(mcp_protocol::jsonrpc::to_raw(&params).unwrap()) }
    }

    #[test]
    fn meta_decides_the_era() {
        let (tx, _rx) = tokio::sync::mpsc::channel(1);
        let state = State::new(tx);
        let modern = request(
            "tools/list",
            json!({"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {"roots": {}}, "progressToken": 4}}),
        );
        let ctx = context(&state, peek_meta(&modern).unwrap().as_ref()).unwrap();
        assert!(ctx.modern && ctx.capabilities.supports_roots());
        assert_eq!(ctx.progress, Some(4.into()));

        let legacy = request("tools/list", json!({}));
        let ctx = context(&state, peek_meta(&legacy).unwrap().as_ref()).unwrap();
        assert!(!ctx.modern && !ctx.capabilities.supports_roots());

        let old = request("tools/list", json!({"_meta": {"io.modelcontextprotocol/protocolVersion": "2025-06-18"}}));
        let err = context(&state, peek_meta(&old).unwrap().as_ref()).unwrap_err();
        assert_eq!(err.code, ErrorCode::UNSUPPORTED_PROTOCOL_VERSION);
        let data = UnsupportedProtocolVersionData::from_error(&err).unwrap();
        assert_eq!(data.requested.as_deref(), Some("2025-06-18"));
        assert!(data.supported.iter().any(|v| v == "2026-07-28"));

        let array = request("tools/list", json!([1]));
        assert!(peek_meta(&array).unwrap_err().message.contains("must be an object"));
    }

    #[test]
    fn log_levels_filter_by_severity() {
        let ctx = Ctx {
            modern: false,
            capabilities: Default::default(),
            progress: None,
            log_level: Some(LoggingLevel::Warning),
        };
        assert!(ctx.wants_log(&LoggingLevel::Error) && !ctx.wants_log(&LoggingLevel::Info));
        assert!(!Ctx { log_level: None, ..ctx }.wants_log(&LoggingLevel::Emergency));
    }

    #[test]
    fn modern_results_carry_result_type_and_server_info() {
        let mut v = json!({"tools": []});
        finish_modern(&mut v);
        assert_eq!(v["resultType"], "complete");
        assert_eq!(v["_meta"][Meta::SERVER_INFO]["name"], "mcp-demo");
        let mut input = json!({"resultType": "input_required"});
        finish_modern(&mut input);
        assert_eq!(input["resultType"], "input_required");
    }
}
