//! Per-server tool filters (`enabled_tools`, `disabled_tools`) and tool visibility: read from
//! every config format, validated, and enforced by the manager's routing (a dropped tool is in
//! no listing, not callable even by its MCP name, and hides no other server's tool), with a
//! once-only warning for an enabled name the server lacks; the default visibility of MCP tools
//! is a manager setting a server's `tool_visibility` overrides, and the registry honours it.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use mcp_manager::config::{ConfigFormat, McpConfig, ServerConfig, ToolFilter};
use mcp_manager::connection::{EraPreference, single_use_factory};
use mcp_manager::manager::{ManagerError, ManagerOptions, McpManager, McpToolProvider};
use mcp_manager::{RequestOptions, TransportPlan};
use mcp_transport::{MemoryTransport, Transport};
use serde_json::{Value, json};
use test_support::ScriptedServer;
use test_support::within;
use tool_system::{TOOL_SEARCH_NAME, ToolExecutionContext, ToolInvocation, ToolRegistry, ToolVisibility};

fn strings(names: &[&str]) -> Vec<String> {
    names.iter().map(|s| s.to_string()).collect()
}

fn parse(text: &str, format: ConfigFormat) -> Result<McpConfig, Vec<String>> {
    McpConfig::parse(text, Some(format), "test", &BTreeMap::<String, String>::new())
        .map_err(|e| e.problems().iter().map(ToString::to_string).collect())
}

#[test]
fn every_format_reads_enabled_and_disabled_tools_and_visibility() {
    let cases = [
        (
            ConfigFormat::CodexToml,
            "[mcp_servers.a]\ncommand = \"x\"\nenabled_tools = [\"read\", \"list\"]\ntool_visibility = \"deferred\"\n\
             [mcp_servers.b]\ncommand = \"x\"\ndisabled_tools = [\"delete\"]\n",
        ),
        (
            ConfigFormat::ReferenceToml,
            "[[mcp.servers]]\nname = \"a\"\ncommand = \"x\"\nenabled_tools = [\"read\", \"list\"]\ntool_visibility = \"deferred\"\n\
             [[mcp.servers]]\nname = \"b\"\ncommand = \"x\"\ndisabled_tools = [\"delete\"]\n",
        ),
        (
            ConfigFormat::DesktopJson,
            r#"{"mcpServers": {"a": {"command": "x", "enabledTools": ["read", "list"], "toolVisibility": "deferred"},
                               "b": {"command": "x", "disabledTools": ["delete"]}}}"#,
        ),
        (
            ConfigFormat::VsCodeJson,
            r#"{"servers": {"a": {"command": "x", "enabled_tools": ["read", "list"], "tool_visibility": "deferred"},
                            "b": {"command": "x", "disabled_tools": ["delete"]}}}"#,
        ),
        // The reference format's older spellings still work.
        (
            ConfigFormat::ReferenceToml,
            "[[mcp.servers]]\nname = \"a\"\ncommand = \"x\"\nallowed_tools = [\"read\", \"list\"]\nvisibility = \"deferred\"\n\
             [[mcp.servers]]\nname = \"b\"\ncommand = \"x\"\ndenied_tools = [\"delete\"]\n",
        ),
    ];
    for (format, text) in cases {
        let config = parse(text, format).unwrap_or_else(|problems| panic!("{format:?}: {problems:?}"));
        let [a, b] = config.servers.as_slice() else { panic!("{format:?}: two servers expected") };
        assert_eq!(a.tools, ToolFilter { allow: Some(strings(&["read", "list"])), deny: vec![] }, "{format:?}");
        assert_eq!(a.tool_visibility, Some(ToolVisibility::Deferred), "{format:?}");
        assert_eq!(b.tools, ToolFilter { allow: None, deny: strings(&["delete"]) }, "{format:?}");
        assert_eq!(b.tool_visibility, None, "{format:?}: unset means the manager's default");
    }
}

#[test]
fn bad_filters_are_config_errors_naming_server_and_field() {
    let cases: [(ConfigFormat, &str, &[&str]); 6] = [
        (
            ConfigFormat::CodexToml,
            "[mcp_servers.files]\ncommand = \"x\"\nenabled_tools = [\"read\", \"write\"]\ndisabled_tools = [\"write\"]\n",
            &[
                r#"server "files": field "disabled_tools[0]": tool "write" is also enabled (enabled_tools[1]): a tool cannot be both enabled and disabled"#,
            ],
        ),
        (
            ConfigFormat::DesktopJson,
            r#"{"mcpServers": {"files": {"command": "x", "enabledTools": ["read"], "disabledTools": ["read"]}}}"#,
            &[
                r#"server "files": field "disabledTools[0]": tool "read" is also enabled (enabledTools[0]): a tool cannot be both enabled and disabled"#,
            ],
        ),
        (
            ConfigFormat::ReferenceToml,
            "[[mcp.servers]]\nname = \"files\"\ncommand = \"x\"\nenabled_tools = \"read\"\ndisabled_tools = [1, \" \"]\n",
            &[
                r#"server "files": field "enabled_tools": expected an array of strings, found a string"#,
                r#"server "files": field "disabled_tools[0]": expected a string, found a number"#,
                r#"server "files": field "disabled_tools[1]": blank (a tool name is needed)"#,
            ],
        ),
        (
            ConfigFormat::VsCodeJson,
            r#"{"servers": {"files": {"command": "x", "enabledTools": ["a"], "enabled_tools": ["b"]}}}"#,
            &[r#"server "files": field "enabled_tools": the same setting as "enabledTools": give one of them"#],
        ),
        (
            ConfigFormat::ReferenceToml,
            "[[mcp.servers]]\nname = \"files\"\ncommand = \"x\"\nvisibility = \"deferred\"\ntool_visibility = \"hidden\"\n",
            &[
                r#"server "files": field "visibility": the same setting as "tool_visibility": give one of them"#,
                r#"server "files": field "tool_visibility": unknown visibility "hidden": expected "visible" or "deferred""#,
            ],
        ),
        (
            ConfigFormat::CodexToml,
            "[mcp_servers.files]\ncommand = \"x\"\ntool_visibility = 3\n",
            &[r#"server "files": field "tool_visibility": expected a string, found a number"#],
        ),
    ];
    for (format, text, expected) in cases {
        let problems = parse(text, format).expect_err("a bad filter is an error");
        assert_eq!(problems, expected.iter().map(|s| s.to_string()).collect::<Vec<_>>(), "{format:?}: {text}");
    }
}

/// Serves `tools` on the far end of `transport` as a legacy server; answers every call with
/// `"<server>:<tool>"` and counts calls per tool.
fn serve(server: MemoryTransport, name: &'static str, tools: Vec<&'static str>) -> ScriptedServer {
    ScriptedServer::start(server, move |request, params| {
        Some(Ok(match request.method.as_str() {
            "initialize" => json!({"protocolVersion": "2025-06-18", "capabilities": {"tools": {}},
                    "serverInfo": {"name": name, "version": "1"}}),
            "tools/list" => {
                json!({"tools": tools.iter().map(|t| json!({"name": t, "description": format!("{t} of {name}"),
                    "inputSchema": {"type": "object"}})).collect::<Vec<_>>()})
            }
            "tools/call" => {
                let tool = params["name"].as_str().unwrap_or_default();
                json!({"content": [{"type": "text", "text": format!("{name}:{tool}")}]})
            }
            _ => json!({}),
        }))
    })
}

/// A manager over in-memory servers: each `(config, tools)` is served as above.
async fn manager(
    servers: Vec<(ServerConfig, Vec<&'static str>)>,
    options: ManagerOptions,
) -> (McpManager, Vec<ScriptedServer>) {
    let mut plans = BTreeMap::new();
    let mut seen = Vec::new();
    let mut configs = Vec::new();
    for (mut config, tools) in servers {
        let (client, server) = MemoryTransport::pair();
        let name: &'static str = Box::leak(config.name.clone().into_boxed_str());
        seen.push(serve(server, name, tools));
        let transport: Arc<dyn Transport> = Arc::new(client);
        plans.insert(config.name.clone(), single_use_factory(transport));
        config.era = EraPreference::Legacy;
        configs.push(config);
    }
    let options = ManagerOptions {
        transport_override: Some(Arc::new(move |c: &ServerConfig| {
            plans.get(&c.name).map(|factory| TransportPlan::single(factory.clone()))
        })),
        ..options
    };
    let manager = McpManager::start(McpConfig { servers: configs, ..McpConfig::default() }, options).await;
    (manager, seen)
}

fn with_filter(name: &str, allow: Option<&[&str]>, deny: &[&str]) -> ServerConfig {
    let mut config = ServerConfig::new(name);
    config.tools = ToolFilter { allow: allow.map(strings), deny: strings(deny) };
    config
}

fn calls(seen: &ScriptedServer) -> Vec<String> {
    seen.called_tools()
}

fn llm_names(definitions: &[Value]) -> Vec<&str> {
    definitions.iter().map(|d| d["function"]["name"].as_str().unwrap()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn disabled_tools_are_neither_listed_nor_callable_and_hide_nothing() {
    within(async {
        let (manager, seen) = manager(
            vec![
                (with_filter("a", None, &["secret", "hidden"]), vec!["x", "secret", "hidden"]),
                (ServerConfig::new("b"), vec!["secret", "z"]),
            ],
            ManagerOptions::default(),
        )
        .await;
        let routing = manager.routing();
        let owners: Vec<(&str, &str)> =
            routing.tools().iter().map(|t| (t.tool().name.as_str(), &**t.server())).collect();
        assert_eq!(owners, [("x", "a"), ("secret", "b"), ("z", "b")], "a's disabled `secret` leaves the name to b");
        assert!(routing.conflicts().is_empty(), "a disabled tool is no conflict: {:?}", routing.conflicts());

        let registry = ToolRegistry::new();
        registry.register(McpToolProvider::new(manager.clone())).await;
        let ctx = ToolExecutionContext::default();
        assert_eq!(llm_names(&registry.llm_definitions(&ctx).await), ["a__x", "b__secret", "b__z"]);

        // Not callable: not through the registry, not by its MCP name through the manager.
        let result = registry.invoke(ToolInvocation::from_value("a__hidden", json!({})), ctx.clone()).await;
        assert_eq!(result.error_message.as_deref(), Some("unknown tool `a__hidden`"));
        let err = manager.call_tool("hidden", None, RequestOptions::default()).await.unwrap_err();
        assert!(
            matches!(&err, ManagerError::DisabledTool { tool, server } if tool == "hidden" && server == "a"),
            "{err:?}"
        );
        let executed = manager.execute_tool("hidden", None, RequestOptions::default()).await;
        assert_eq!(
            executed.error_message.as_deref(),
            Some(r#"tool "hidden" is disabled by the config of server "a" (enabled_tools / disabled_tools)"#)
        );
        let err = manager.call_tool("nothing", None, RequestOptions::default()).await.unwrap_err();
        assert!(matches!(err, ManagerError::UnknownTool(_)), "an unknown tool stays unknown: {err:?}");

        // `secret` goes to b, whose own tool it is.
        let result = registry.invoke(ToolInvocation::from_value("b__secret", json!({})), ctx).await;
        assert_eq!(result.content.as_deref(), Some("b:secret"));
        let (_, result) = manager.call_tool("secret", None, RequestOptions::default()).await.unwrap();
        assert_eq!(serde_json::to_value(&result.content).unwrap()[0]["text"], "b:secret");
        assert!(calls(&seen[0]).is_empty(), "server a got no call at all: {:?}", calls(&seen[0]));
        manager.close().await;
    })
    .await;
}

/// Counts the warnings that mention `needle` (events of this thread).
struct CountWarnings {
    needle: &'static str,
    count: Arc<AtomicUsize>,
    lines: Arc<Mutex<Vec<String>>>,
}

struct Message(String);

impl tracing::field::Visit for Message {
    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
        self.0.push_str(&format!(" {}={value:?}", field.name()));
    }
}

impl tracing::Subscriber for CountWarnings {
    fn enabled(&self, _: &tracing::Metadata<'_>) -> bool {
        true
    }
    fn new_span(&self, _: &tracing::span::Attributes<'_>) -> tracing::span::Id {
        tracing::span::Id::from_u64(1)
    }
    fn record(&self, _: &tracing::span::Id, _: &tracing::span::Record<'_>) {}
    fn record_follows_from(&self, _: &tracing::span::Id, _: &tracing::span::Id) {}
    fn event(&self, event: &tracing::Event<'_>) {
        let mut message = Message(String::new());
        event.record(&mut message);
        if *event.metadata().level() == tracing::Level::WARN && message.0.contains(self.needle) {
            self.count.fetch_add(1, Ordering::SeqCst);
            self.lines.lock().unwrap().push(message.0);
        }
    }
    fn enter(&self, _: &tracing::span::Id) {}
    fn exit(&self, _: &tracing::span::Id) {}
}

#[tokio::test]
async fn enabled_tools_keeps_only_the_listed_ones_and_warns_once_of_a_missing_name() {
    let count = Arc::new(AtomicUsize::new(0));
    let lines = Arc::new(Mutex::new(Vec::new()));
    let subscriber = CountWarnings { needle: "enabled_tools names tool", count: count.clone(), lines: lines.clone() };
    let _guard = tracing::subscriber::set_default(subscriber);
    within(async {
        let (manager, seen) = manager(
            vec![(with_filter("a", Some(&["x", "nope"]), &[]), vec!["x", "y"]), (ServerConfig::new("b"), vec!["w"])],
            ManagerOptions::default(),
        )
        .await;
        let registry = ToolRegistry::new();
        registry.register(McpToolProvider::new(manager.clone())).await;
        let ctx = ToolExecutionContext::default();
        assert_eq!(llm_names(&registry.llm_definitions(&ctx).await), ["a__x", "b__w"]);
        let err = manager.call_tool("y", None, RequestOptions::default()).await.unwrap_err();
        assert!(matches!(&err, ManagerError::DisabledTool { server, .. } if server == "a"), "{err:?}");
        let warnings: Vec<String> = manager.routing().filter_warnings().iter().map(ToString::to_string).collect();
        assert_eq!(warnings, [r#"server "a": enabled_tools names tool "nope", which the server does not have"#]);
        // The host sees it in the server's status, which it does not degrade.
        let a = manager.server_status("a").unwrap();
        assert_eq!(a.notices, warnings);
        assert_eq!(a.state, mcp_manager::ServerState::Ready);
        assert!(manager.server_status("b").unwrap().notices.is_empty());

        // Rebuilding the table (here: b restarts) keeps the warning in the table but logs it no more.
        manager.restart("b").await.unwrap();
        manager.restart("b").await.unwrap();
        assert_eq!(manager.routing().filter_warnings().len(), 1);
        assert!(registry.invoke(ToolInvocation::from_value("a__x", json!({})), ctx).await.success);
        assert_eq!(calls(&seen[0]), ["x"]);
        manager.close().await;
    })
    .await;
    assert_eq!(count.load(Ordering::SeqCst), 1, "logged once: {:?}", lines.lock().unwrap());
    assert!(lines.lock().unwrap()[0].contains(r#"server="a""#) || lines.lock().unwrap()[0].contains("server=a"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tool_visibility_is_a_manager_default_that_a_server_overrides() {
    within(async {
        let mut visible = ServerConfig::new("shown");
        visible.tool_visibility = Some(ToolVisibility::Visible);
        let options = ManagerOptions { tool_visibility: ToolVisibility::Deferred, ..ManagerOptions::default() };
        let (manager, _) =
            manager(vec![(ServerConfig::new("quiet"), vec!["archive_mail"]), (visible, vec!["read_mail"])], options)
                .await;
        let registry = ToolRegistry::new();
        registry.register(McpToolProvider::new(manager.clone())).await;
        let ctx = ToolExecutionContext::default();
        assert_eq!(
            llm_names(&registry.llm_definitions(&ctx).await),
            ["shown__read_mail", TOOL_SEARCH_NAME],
            "quiet's tools are deferred by the manager's default"
        );
        let found = registry
            .invoke(ToolInvocation::from_value(TOOL_SEARCH_NAME, json!({"query": "archive"})), ctx.clone())
            .await;
        assert_eq!(found.structured_content.unwrap()["tools"][0]["name"], "quiet__archive_mail");
        let result = registry.invoke(ToolInvocation::from_value("quiet__archive_mail", json!({})), ctx).await;
        assert_eq!(result.content.as_deref(), Some("quiet:archive_mail"), "a deferred tool is callable once found");
        manager.close().await;

        // The default default is visible.
        let (manager, _) =
            self::manager(vec![(ServerConfig::new("plain"), vec!["t"])], ManagerOptions::default()).await;
        let spec = manager.routing().tools()[0].spec();
        assert_eq!(spec.visibility, ToolVisibility::Visible);
        manager.close().await;
    })
    .await;
}
