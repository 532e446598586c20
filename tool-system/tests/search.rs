//! Deferred tools: kept out of the LLM definitions, found by the built-in `tool_search`.

mod common;

use std::sync::Arc;

use common::TestProvider;
use serde_json::{Value, json};
use test_support::within;
use tool_system::{TOOL_SEARCH_NAME, ToolExecutionContext, ToolInvocation, ToolRegistry, ToolSpec};

fn ctx() -> ToolExecutionContext {
    ToolExecutionContext::default()
}

fn names(definitions: &[Value]) -> Vec<&str> {
    definitions.iter().map(|d| d["function"]["name"].as_str().unwrap()).collect()
}

fn search(query: Value) -> ToolInvocation {
    ToolInvocation::from_value(TOOL_SEARCH_NAME, query)
}

async fn registry_with_deferred() -> (ToolRegistry, Arc<TestProvider>) {
    let registry = ToolRegistry::new();
    let provider = TestProvider::new(
        "github",
        vec![
            ToolSpec::new("get_me").with_namespace("gh").with_description("Who am I"),
            ToolSpec::new("create_issue").with_namespace("gh").with_description("Open a new issue").deferred(),
            ToolSpec::new("list_issues").with_namespace("gh").with_description("List the issues of a repo").deferred(),
            ToolSpec::new("merge_pull_request")
                .with_namespace("gh")
                .with_description("Merge a pull request")
                .deferred(),
        ],
    );
    registry.register(Arc::clone(&provider)).await;
    (registry, provider)
}

#[tokio::test]
async fn deferred_tools_stay_out_of_the_definitions_and_tool_search_is_offered() {
    within(async {
        let (registry, _) = registry_with_deferred().await;
        let definitions = registry.llm_definitions(&ctx()).await;
        assert_eq!(names(&definitions), ["gh__get_me", TOOL_SEARCH_NAME]);
        assert_eq!(definitions[1]["function"]["parameters"]["required"], json!(["query"]));
        assert!(registry.has_deferred(&ctx()).await);
        assert_eq!(registry.tools(&ctx()).await.len(), 4, "tools() lists deferred tools too");
    })
    .await;
}

#[tokio::test]
async fn tool_search_is_absent_without_deferred_tools() {
    within(async {
        let registry = ToolRegistry::new();
        registry.register(TestProvider::with_tools("p", &["visible"])).await;
        assert_eq!(names(&registry.llm_definitions(&ctx()).await), ["visible"]);
        assert!(!registry.has_deferred(&ctx()).await);
    })
    .await;
}

#[tokio::test]
async fn tool_search_finds_deferred_tools_by_name_and_description() {
    within(async {
        let (registry, provider) = registry_with_deferred().await;
        let result = registry.invoke(search(json!({"query": "issue"})), ctx()).await;
        assert!(result.success, "{result:?}");
        let found = result.structured_content.as_ref().unwrap()["tools"].as_array().unwrap().clone();
        let found_names: Vec<&str> = found.iter().map(|t| t["name"].as_str().unwrap()).collect();
        assert_eq!(found_names, ["gh__create_issue", "gh__list_issues"]);
        assert_eq!(found[0]["description"], "Open a new issue");
        assert_eq!(found[0]["parameters"]["type"], "object");
        assert!(result.history_text().contains("gh__create_issue"), "the LLM reads the result from the history");

        // By description only.
        let result = registry.invoke(search(json!({"query": "Merge PULL"})), ctx()).await;
        let found = &result.structured_content.unwrap()["tools"];
        assert_eq!(found[0]["name"], "gh__merge_pull_request");

        // Visible tools are not search results; no match is a success with a clear text.
        let result = registry.invoke(search(json!({"query": "get_me"})), ctx()).await;
        assert!(result.success);
        assert_eq!(result.structured_content.unwrap()["tools"], json!([]));
        assert_eq!(result.content.as_deref(), Some("No tools match \"get_me\"."));

        // A found tool is then called by the name the search gave.
        let result = registry.invoke(ToolInvocation::new("gh__list_issues", Default::default()), ctx()).await;
        assert_eq!(result.content.as_deref(), Some("github:list_issues"));
        assert_eq!(provider.last_call().unwrap().0.tool_name, "list_issues");
    })
    .await;
}

#[tokio::test]
async fn tool_search_respects_the_limit_and_checks_its_arguments() {
    within(async {
        let (registry, _) = registry_with_deferred().await;
        let result = registry.invoke(search(json!({"query": "", "limit": 2})), ctx()).await;
        assert_eq!(result.structured_content.unwrap()["tools"].as_array().unwrap().len(), 2);

        let result = registry.invoke(search(json!({"limit": 2})), ctx()).await;
        assert!(!result.success);
        assert!(result.error_message.unwrap().contains("missing field `query`"));

        let result = registry.invoke(search(json!({"query": 3})), ctx()).await;
        assert_eq!(
            result.error_message.as_deref(),
            Some("tool `tool_search`: argument `query`: expected a string, found a number")
        );

        let result = registry.invoke(search(json!({"query": "x", "limit": 0})), ctx()).await;
        assert!(result.error_message.unwrap().contains("argument `limit`"));
    })
    .await;
}

#[tokio::test]
async fn registry_search_ranks_name_matches_first() {
    within(async {
        let registry = ToolRegistry::new();
        registry
            .register(TestProvider::new(
                "p",
                vec![
                    ToolSpec::new("notes").with_description("Uses the weather service").deferred(),
                    ToolSpec::new("weather").with_description("Forecast").deferred(),
                    ToolSpec::new("unrelated").with_description("Nothing").deferred(),
                ],
            ))
            .await;
        assert!(registry.search("weather", 10, &ctx()).is_empty(), "no listing yet");
        registry.refresh(&ctx()).await;
        let found: Vec<String> =
            registry.search("weather", 10, &ctx()).into_iter().map(|t| t.llm_name.into_string()).collect();
        assert_eq!(found, ["weather", "notes"]);
        assert_eq!(registry.search("weather", 1, &ctx()).len(), 1);
    })
    .await;
}
