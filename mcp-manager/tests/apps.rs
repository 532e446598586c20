//! MCP Apps through the host tool model, against a fake apps server on an in-memory transport:
//! the extension is declared only when the host renders apps; an app-only tool never reaches
//! the LLM but its app can call it; a model-only tool cannot be called by an app; a `ui://`
//! view comes back with its HTML, CSP origins and permissions.

use std::sync::Arc;

use mcp_manager::config::{McpConfig, ServerConfig};
use mcp_manager::connection::{EraPreference, single_use_factory};
use mcp_manager::manager::convert::UI_KEY;
use mcp_manager::manager::{ManagerError, ManagerOptions, McpManager, McpToolProvider};
use mcp_manager::{HostCallbacks, TransportPlan};
use mcp_protocol::types::ui::{MCP_APP_MIME_TYPE, UI_EXTENSION, UiClientCapabilities};
use mcp_transport::{MemoryTransport, Transport};
use serde_json::{Value, json};
use test_support::{ScriptedServer, within};
use tool_system::{AppOrigin, ToolExecutionContext, ToolInvocation, ToolRegistry};

const VIEW: &str = "ui://weather/view";

/// A legacy server with a view, four tools of each visibility and two unlisted resources.
fn serve(server: MemoryTransport) -> ScriptedServer {
    ScriptedServer::start(server, |request, params| {
        Some(Ok(match request.method.as_str() {
            "initialize" => json!({"protocolVersion": "2025-11-25",
                    "capabilities": {"tools": {}, "resources": {}, "extensions": {UI_EXTENSION: {}}},
                    "serverInfo": {"name": "weather", "version": "1"}}),
            "tools/list" => json!({"tools": [
                {"name": "show_weather", "inputSchema": {"type": "object"},
                    "_meta": {"ui": {"resourceUri": VIEW}}},
                {"name": "refresh_weather", "inputSchema": {"type": "object"},
                    "_meta": {"ui": {"resourceUri": VIEW, "visibility": ["app"]}}},
                {"name": "admin_reset", "inputSchema": {"type": "object"},
                    "_meta": {"ui": {"visibility": ["model"]}}},
                {"name": "plain", "inputSchema": {"type": "object"}},
            ]}),
            "resources/list" => json!({"resources": [
                {"uri": VIEW, "name": "weather view", "mimeType": MCP_APP_MIME_TYPE,
                    "_meta": {"ui": {"prefersBorder": true, "csp": {"connectDomains": ["https://listed.example"]}}}}
            ]}),
            "resources/read" => match params["uri"].as_str() {
                Some(VIEW) => json!({"contents": [{"uri": VIEW, "mimeType": MCP_APP_MIME_TYPE,
                        "text": "<!doctype html><p>sunny</p>",
                        "_meta": {"ui": {
                            "csp": {"connectDomains": ["https://api.weather.example"],
                                    "resourceDomains": ["https://cdn.weather.example"]},
                            "permissions": {"geolocation": {}},
                            "domain": "weather.apps.example"}}}]}),
                Some("ui://weather/unlisted") => json!({"contents": [{"uri": "ui://weather/unlisted",
                        "mimeType": MCP_APP_MIME_TYPE, "text": "<p>unlisted</p>"}]}),
                Some(uri) => json!({"contents": [{"uri": uri, "mimeType": "text/plain", "text": "not a view"}]}),
                None => json!({"contents": []}),
            },
            "tools/call" => json!({"content": [{"type": "text",
                    "text": format!("ran {}", params["name"].as_str().unwrap_or_default())}]}),
            _ => json!({}),
        }))
    })
}

async fn start(apps: Option<UiClientCapabilities>) -> (McpManager, ScriptedServer) {
    let (client, server) = MemoryTransport::pair();
    let seen = serve(server);
    let transport: Arc<dyn Transport> = Arc::new(client);
    let factory = single_use_factory(transport);
    let options = ManagerOptions {
        transport_override: Some(Arc::new(move |_: &ServerConfig| Some(TransportPlan::single(factory.clone())))),
        callbacks: HostCallbacks { apps, ..HostCallbacks::default() },
        ..ManagerOptions::default()
    };
    let mut weather = ServerConfig::new("weather");
    weather.era = EraPreference::Legacy;
    let manager = McpManager::start(McpConfig { servers: vec![weather], ..McpConfig::default() }, options).await;
    assert!(manager.routing().tool("plain").is_some(), "the tools are listed: {:?}", manager.status());
    (manager, seen)
}

fn initialize_capabilities(seen: &ScriptedServer) -> Value {
    let seen = seen.requests();
    let (_, params) = seen.iter().find(|(r, _)| r.method == "initialize").expect("an initialize request");
    params["capabilities"].clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_extension_is_declared_only_when_the_host_renders_apps() {
    within(async {
        let (manager, seen) = start(Some(UiClientCapabilities::html())).await;
        let caps = initialize_capabilities(&seen);
        assert_eq!(caps["extensions"][UI_EXTENSION], json!({"mimeTypes": [MCP_APP_MIME_TYPE]}), "{caps}");
        manager.close().await;

        let (manager, seen) = start(None).await;
        let caps = initialize_capabilities(&seen);
        assert!(caps.get("extensions").and_then(|e| e.get(UI_EXTENSION)).is_none(), "claimed without apps: {caps}");
        manager.close().await;
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn app_only_tools_stay_away_from_the_llm_and_apps_call_only_what_they_may() {
    within(async {
        let (manager, seen) = start(Some(UiClientCapabilities::html())).await;
        let provider = McpToolProvider::new(manager.clone());
        let origin = provider.app_origin("weather");
        let registry = ToolRegistry::new();
        registry.register(provider).await;
        let ctx = ToolExecutionContext::default();

        let definitions = registry.llm_definitions(&ctx).await;
        let offered: Vec<&str> = definitions.iter().filter_map(|d| d["function"]["name"].as_str()).collect();
        assert_eq!(offered, ["weather__show_weather", "weather__admin_reset", "weather__plain"]);
        let all: Vec<String> = registry.tools(&ctx).await.into_iter().map(|t| t.spec.name.clone()).collect();
        assert!(all.contains(&"refresh_weather".to_owned()), "the app-only tool is still a host tool: {all:?}");
        let app_tools: Vec<String> =
            registry.app_tools(&origin, &ctx).await.into_iter().map(|t| t.spec.name.clone()).collect();
        assert_eq!(app_tools, ["show_weather", "refresh_weather", "plain"]);
        let show = registry.lookup("weather__show_weather").unwrap();
        assert_eq!(show.spec.metadata[UI_KEY]["resourceUri"], VIEW, "the view travels with the spec");

        // The LLM cannot reach the app-only tool, even by its exact name.
        let refused =
            registry.invoke(ToolInvocation::new("weather__refresh_weather", Default::default()), ctx.clone()).await;
        assert!(!refused.success);
        assert!(refused.error_message.as_deref().unwrap_or_default().contains("only be called by its app"));

        // Its app can, by the server's own name.
        let ran = registry
            .invoke_from_app(&origin, ToolInvocation::new("refresh_weather", Default::default()), ctx.clone())
            .await;
        assert!(ran.success, "{:?}", ran.error_message);
        assert_eq!(ran.content.as_deref(), Some("ran refresh_weather"));

        // A model-only tool, and a tool of another origin, are refused to the app.
        let model_only = registry
            .invoke_from_app(&origin, ToolInvocation::new("admin_reset", Default::default()), ctx.clone())
            .await;
        let message = model_only.error_message.unwrap_or_default();
        assert!(message.contains("may not be called by an app"), "{message}");
        let stranger = AppOrigin::new("mcp", Some("elsewhere".to_owned()));
        let foreign =
            registry.invoke_from_app(&stranger, ToolInvocation::new("refresh_weather", Default::default()), ctx).await;
        let message = foreign.error_message.unwrap_or_default();
        assert!(message.contains("has no tool `refresh_weather`") && message.contains("elsewhere"), "{message}");

        assert_eq!(seen.called_tools(), ["refresh_weather"], "refused calls were never sent");
        registry.close().await;
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_view_round_trips_with_its_sandbox_metadata() {
    within(async {
        let (manager, _seen) = start(Some(UiClientCapabilities::html())).await;
        let view = manager.read_app_view("weather", VIEW).await.unwrap();
        assert_eq!(view.html, "<!doctype html><p>sunny</p>");
        assert_eq!(view.mime_type, MCP_APP_MIME_TYPE);
        let csp = view.ui.csp.clone().unwrap();
        assert_eq!(csp.connect_domains.unwrap(), ["https://api.weather.example"], "the contents' CSP wins");
        assert_eq!(csp.resource_domains.unwrap(), ["https://cdn.weather.example"]);
        assert!(view.ui.permissions.as_ref().unwrap().geolocation.is_some());
        assert_eq!(view.ui.domain.as_deref(), Some("weather.apps.example"));
        assert_eq!(view.ui.prefers_border, Some(true), "the listing's members the contents do not set are kept");
        assert!(view.meta.as_ref().is_some_and(|m| m.contains_key("ui")), "the whole _meta is kept");

        let unlisted = manager.read_app_view("weather", "ui://weather/unlisted").await.unwrap();
        assert_eq!(unlisted.html, "<p>unlisted</p>");
        assert_eq!(unlisted.ui, Default::default(), "no sandbox declared: the host applies its defaults");

        let wrong = manager.read_app_view("weather", "ui://weather/text").await.unwrap_err();
        assert!(matches!(wrong, ManagerError::AppView(_)), "{wrong:?}");
        assert!(wrong.to_string().contains("\"text/plain\""), "{wrong}");
        let not_ui = manager.read_app_view("weather", "file:///etc/passwd").await.unwrap_err();
        assert!(not_ui.to_string().contains("not ui://"), "{not_ui}");
        let nowhere = manager.read_app_view("nowhere", VIEW).await.unwrap_err();
        assert!(matches!(nowhere, ManagerError::UnknownServer(_)), "{nowhere:?}");
        manager.close().await;
    })
    .await
}
