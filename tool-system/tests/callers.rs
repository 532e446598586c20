//! Who may call a tool (`ToolCallers`): app-only tools never reach the LLM (not in its
//! definitions, not through `tool_search`, not by name), and an app calls only its own origin's
//! tools that apps may call.

mod common;

use std::sync::Arc;

use common::TestProvider;
use serde_json::json;
use test_support::within;
use tool_system::{
    AppOrigin, TOOL_SEARCH_NAME, ToolCallers, ToolExecutionContext, ToolInvocation, ToolRegistry, ToolSpec,
};

fn ctx() -> ToolExecutionContext {
    ToolExecutionContext::default()
}

fn call(name: &str) -> ToolInvocation {
    ToolInvocation::from_value(name, json!({}))
}

fn names(definitions: &[serde_json::Value]) -> Vec<String> {
    definitions.iter().map(|d| d["function"]["name"].as_str().unwrap().to_owned()).collect()
}

async fn registry() -> (ToolRegistry, Arc<TestProvider>) {
    let registry = ToolRegistry::new();
    let specs = vec![
        ToolSpec::new("both").with_namespace("srv"),
        ToolSpec::new("app_only").with_namespace("srv").with_callers(ToolCallers::APP_ONLY),
        ToolSpec::new("model_only").with_namespace("srv").with_callers(ToolCallers::MODEL_ONLY),
        ToolSpec::new("hidden_app").with_namespace("srv").with_callers(ToolCallers::APP_ONLY).deferred(),
        ToolSpec::new("both").with_namespace("other"),
    ];
    let provider = TestProvider::new("p", specs);
    registry.register(Arc::clone(&provider)).await;
    (registry, provider)
}

#[tokio::test]
async fn app_only_tools_are_not_offered_searched_or_called_for_the_llm() {
    within(async {
        let (registry, provider) = registry().await;
        let offered = names(&registry.llm_definitions(&ctx()).await);
        assert_eq!(
            offered,
            ["srv__both", "srv__model_only", "other__both"],
            "no tool_search: only an app tool is deferred"
        );
        assert!(!registry.has_deferred(&ctx()).await);
        assert_eq!(registry.tools(&ctx()).await.len(), 5, "every tool is still a host tool");

        let search =
            registry.invoke(ToolInvocation::from_value(TOOL_SEARCH_NAME, json!({"query": "hidden"})), ctx()).await;
        assert!(!search.content.unwrap_or_default().contains("hidden_app"));

        let refused = registry.invoke(call("srv__app_only"), ctx()).await;
        assert!(!refused.success);
        assert!(refused.error_message.unwrap().contains("may only be called by its app"));
        assert!(provider.last_call().is_none(), "nothing reached the provider");
    })
    .await;
}

#[tokio::test]
async fn an_app_calls_only_its_origins_tools_that_apps_may_call() {
    within(async {
        let (registry, provider) = registry().await;
        let origin = AppOrigin::new("p", Some("srv".to_owned()));
        let listed: Vec<String> =
            registry.app_tools(&origin, &ctx()).await.iter().map(|t| t.spec.name.clone()).collect();
        assert_eq!(listed, ["both", "app_only", "hidden_app"]);

        let ran = registry.invoke_from_app(&origin, call("app_only"), ctx()).await;
        assert_eq!(ran.content.as_deref(), Some("p:app_only"));
        assert_eq!(provider.last_call().unwrap().0.tool_name, "app_only");

        let model_only = registry.invoke_from_app(&origin, call("model_only"), ctx()).await;
        assert!(model_only.error_message.unwrap().contains("may not be called by an app"));
        // By its LLM name the app finds nothing: apps use their server's names.
        let by_llm_name = registry.invoke_from_app(&origin, call("srv__both"), ctx()).await;
        assert!(by_llm_name.error_message.unwrap().contains("has no tool `srv__both`"));
        // The same tool name under another namespace is not this app's.
        let elsewhere = AppOrigin::new("p", Some("third".to_owned()));
        assert!(!registry.invoke_from_app(&elsewhere, call("both"), ctx()).await.success);
        let wrong_provider = AppOrigin::new("q", Some("srv".to_owned()));
        assert!(!registry.invoke_from_app(&wrong_provider, call("both"), ctx()).await.success);
    })
    .await;
}

#[test]
fn callers_default_to_both_and_round_trip() {
    let spec = ToolSpec::new("t");
    assert_eq!(spec.callers, ToolCallers::BOTH);
    let encoded = serde_json::to_value(&spec).unwrap();
    assert!(encoded.get("callers").is_none(), "the default is not written");
    let app: ToolSpec = serde_json::from_value(json!({"name": "t", "callers": {"model": false, "app": true}})).unwrap();
    assert_eq!(app.callers, ToolCallers::APP_ONLY);
}
