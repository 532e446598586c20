//! The host's availability rule: applied per context to every listing (tools, LLM tools and
//! definitions in every dialect, `tool_search`, app tools) and to every call, over one shared
//! cached listing; a hidden tool is not callable and the error says no more than that.

mod common;

use std::sync::Arc;

use common::{TestProvider, capture_events};
use serde_json::{Value, json};
use test_support::within;
use tool_system::{
    AppOrigin, ExposedTool, LlmDialect, TOOL_SEARCH_NAME, ToolCallers, ToolExecutionContext, ToolInvocation,
    ToolRegistry, ToolSpec,
};

fn user(name: &str) -> ToolExecutionContext {
    ToolExecutionContext::default().with_user(name)
}

/// `admin_*` tools only for the user `root`.
fn admin_rule(tool: &ExposedTool, ctx: &ToolExecutionContext) -> bool {
    !tool.spec.name.starts_with("admin") || ctx.user_id == "root"
}

async fn registry() -> (ToolRegistry, Arc<TestProvider>) {
    let registry = ToolRegistry::new();
    let provider = TestProvider::new(
        "ops",
        vec![
            ToolSpec::new("status").with_description("Show the status"),
            ToolSpec::new("admin_reboot").with_description("Reboot the machine"),
            ToolSpec::new("admin_wipe").with_description("Wipe the disk").deferred(),
            ToolSpec::new("admin_view").with_description("The admin view's action").with_callers(ToolCallers::APP_ONLY),
        ],
    );
    registry.register(Arc::clone(&provider)).await;
    registry.set_availability(admin_rule);
    (registry, provider)
}

fn names(tools: &[ExposedTool]) -> Vec<&str> {
    tools.iter().map(|t| t.llm_name.as_str()).collect()
}

fn definition_names(definitions: &[Value]) -> Vec<String> {
    definitions
        .iter()
        .map(|d| d["function"]["name"].as_str().or(d["name"].as_str()).unwrap_or_default().to_owned())
        .collect()
}

#[tokio::test]
async fn every_listing_shows_each_caller_only_what_the_rule_allows() {
    within(async {
        let (registry, provider) = registry().await;
        let (ann, root) = (user("ann"), user("root"));
        assert_eq!(names(&registry.tools(&ann).await), ["status"]);
        assert_eq!(names(&registry.tools(&root).await), ["status", "admin_reboot", "admin_wipe", "admin_view"]);

        // The only deferred tool is hidden from ann: no tool_search for her.
        assert_eq!(names(&registry.llm_tools(&ann).await), ["status"]);
        assert!(!registry.has_deferred(&ann).await);
        assert_eq!(names(&registry.llm_tools(&root).await), ["status", "admin_reboot", TOOL_SEARCH_NAME]);
        assert!(registry.has_deferred(&root).await);
        for dialect in [LlmDialect::OpenAi, LlmDialect::OpenAiStrict, LlmDialect::Gemini, LlmDialect::Anthropic] {
            assert_eq!(definition_names(&registry.llm_definitions_for(dialect, &ann).await), ["status"], "{dialect:?}");
            assert_eq!(
                definition_names(&registry.llm_definitions_for(dialect, &root).await),
                ["status", "admin_reboot", TOOL_SEARCH_NAME],
                "{dialect:?}"
            );
        }

        // tool_search and the host's search find only what the caller may see.
        let search = || ToolInvocation::from_value(TOOL_SEARCH_NAME, json!({"query": "wipe"}));
        let found = registry.invoke(search(), ann.clone()).await;
        assert!(found.success);
        assert_eq!(found.structured_content, Some(json!({"tools": []})));
        let found = registry.invoke(search(), root.clone()).await;
        assert_eq!(found.structured_content.unwrap()["tools"][0]["name"], "admin_wipe");
        assert!(registry.search("wipe", 10, &ann).is_empty());
        assert_eq!(names(&registry.search("wipe", 10, &root)), ["admin_wipe"]);

        let origin = AppOrigin::new("ops", None);
        assert!(registry.app_tools(&origin, &ann).await.iter().all(|t| t.spec.name != "admin_view"));
        assert!(registry.app_tools(&origin, &root).await.iter().any(|t| t.spec.name == "admin_view"));

        // One listing served every context: the rule filters per call, nothing was listed again
        // and no spec was copied.
        assert_eq!(provider.list_calls(), 1);
        let (a, b) = (registry.tools(&ann).await, registry.tools(&root).await);
        assert!(Arc::ptr_eq(&a[0].spec, &b[0].spec));
        assert_eq!(names(&registry.refresh(&ann).await), ["status"], "a fresh listing is filtered too");
    })
    .await;
}

#[tokio::test]
async fn a_hidden_tool_is_not_callable_and_the_error_says_only_that() {
    within(async {
        let (registry, provider) = registry().await;
        let result = registry.invoke(ToolInvocation::from_value("admin_reboot", json!({})), user("ann")).await;
        assert!(!result.success);
        let message = result.error_message.unwrap();
        assert_eq!(message, "tool `admin_reboot` is not available to this caller");
        assert!(provider.calls.lock().unwrap().is_empty(), "the provider never saw the call");

        let origin = AppOrigin::new("ops", None);
        let from_app =
            registry.invoke_from_app(&origin, ToolInvocation::new("admin_view", Default::default()), user("ann"));
        assert_eq!(from_app.await.error_message.as_deref(), Some("tool `admin_view` is not available to this caller"));

        let allowed = registry.invoke(ToolInvocation::from_value("admin_reboot", json!({})), user("root")).await;
        assert_eq!(allowed.content.as_deref(), Some("ops:admin_reboot"));
        let (_, ctx) = provider.last_call().unwrap();
        assert_eq!(ctx.user_id, "root", "the provider gets the caller's context");
    })
    .await;
}

#[tokio::test]
async fn a_panicking_rule_hides_the_tool_and_the_registry_keeps_working() {
    within(async {
        let captured = capture_events();
        let (registry, _) = registry().await;
        registry.set_availability(|tool: &ExposedTool, _: &ToolExecutionContext| {
            assert!(tool.spec.name != "admin_reboot", "the rule itself is broken");
            true
        });
        let ctx = user("root");
        assert_eq!(names(&registry.llm_tools(&ctx).await), ["status", TOOL_SEARCH_NAME]);
        let result = registry.invoke(ToolInvocation::from_value("admin_reboot", json!({})), ctx.clone()).await;
        assert_eq!(result.error_message.as_deref(), Some("tool `admin_reboot` is not available to this caller"));
        assert!(registry.invoke(ToolInvocation::from_value("status", json!({})), ctx).await.success);
        assert!(
            captured.lines().iter().any(|l| l.starts_with("WARN") && l.contains("availability rule panicked")),
            "{:?}",
            captured.lines()
        );
    })
    .await;
}

#[tokio::test]
async fn clearing_the_rule_shows_every_tool_again() {
    within(async {
        let (registry, provider) = registry().await;
        let ann = user("ann");
        assert_eq!(registry.tools(&ann).await.len(), 1);
        registry.clear_availability();
        assert_eq!(registry.tools(&ann).await.len(), 4);
        assert!(registry.invoke(ToolInvocation::from_value("admin_reboot", json!({})), ann).await.success);
        assert_eq!(provider.list_calls(), 1, "changing the rule needs no new listing");
    })
    .await;
}
