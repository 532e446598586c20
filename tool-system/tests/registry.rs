//! ToolRegistry: provider order and replacement, duplicates, routing, caching, definitions.

mod common;

use std::sync::Arc;
use std::sync::atomic::Ordering;

use common::{TestProvider, capture_events};
use futures::future::BoxFuture;
use serde_json::json;
use test_support::within;
use tool_system::{
    GENERIC_FAILURE, RegistryOptions, TOOL_SEARCH_NAME, ToolError, ToolExecutionContext, ToolExecutionResult,
    ToolInvocation, ToolProvider, ToolRegistry, ToolSpec,
};

fn ctx() -> ToolExecutionContext {
    ToolExecutionContext::default()
}

fn call(name: &str) -> ToolInvocation {
    ToolInvocation::from_value(name, json!({}))
}

fn llm_names(definitions: &[serde_json::Value]) -> Vec<String> {
    definitions.iter().map(|d| d["function"]["name"].as_str().unwrap().to_owned()).collect()
}

#[tokio::test]
async fn providers_keep_registration_order() {
    within(async {
        let registry = ToolRegistry::new();
        assert!(!registry.register(TestProvider::with_tools("b", &["second"])).await);
        assert!(!registry.register(TestProvider::with_tools("a", &["first"])).await);
        assert_eq!(registry.provider_names(), ["b", "a"]);
        let tools = registry.tools(&ctx()).await;
        let names: Vec<&str> = tools.iter().map(|t| t.llm_name.as_str()).collect();
        assert_eq!(names, ["second", "first"]);
        assert_eq!(tools[0].provider, "b");
        assert_eq!(tools[0].spec.provider_name, "b", "the registry fills in an empty provider name");
        assert_eq!(tools[0].spec.provider_type, "test");
    })
    .await;
}

#[tokio::test]
async fn listings_share_the_registry_names_instead_of_copying_them() {
    within(async {
        let registry = ToolRegistry::new();
        registry.register(TestProvider::with_tools("files", &["read", "write"])).await;
        let first = registry.tools(&ctx()).await;
        let again = registry.tools(&ctx()).await;
        let offered = registry.llm_tools(&ctx()).await;
        assert_eq!(first.len(), 2);
        for (i, tool) in first.iter().enumerate() {
            // The same name table: every listing hands out the names it holds.
            assert!(tool.llm_name.shares_buffer_with(&again[i].llm_name), "{}", tool.llm_name);
            assert!(tool.llm_name.shares_buffer_with(&offered[i].llm_name), "{}", tool.llm_name);
            // One buffer for the provider's name, whatever the tool: the listing's, and the one
            // the registry filled into the spec; one for the provider's type too.
            assert!(tool.provider.shares_buffer_with(&first[0].provider));
            assert!(tool.spec.provider_name.shares_buffer_with(&tool.provider));
            assert!(tool.spec.provider_type.shares_buffer_with(&first[0].spec.provider_type));
        }
        assert_eq!(first[0].spec.provider_type, "test");
        // Still a name like any other to the host.
        assert_eq!(first[1].llm_name, "write");
        assert_eq!(String::from(&first[1].llm_name), "write");
        assert!(registry.lookup(&first[0].llm_name).is_some());
    })
    .await;
}

#[tokio::test]
async fn a_provider_of_the_same_name_replaces_the_old_one_which_is_closed() {
    within(async {
        let registry = ToolRegistry::new();
        let old = TestProvider::with_tools("files", &["read_old"]);
        registry.register(Arc::clone(&old)).await;
        registry.register(TestProvider::with_tools("other", &["other_tool"])).await;
        assert_eq!(registry.tools(&ctx()).await.len(), 2);

        let new = TestProvider::with_tools("files", &["read_new"]);
        assert!(registry.register(Arc::clone(&new)).await, "reported as a replacement");
        assert!(old.is_closed(), "the replaced provider is closed");
        assert!(!new.is_closed());
        assert_eq!(registry.provider_names(), ["files", "other"], "the new provider takes the old one's place");

        let names: Vec<String> = registry.tools(&ctx()).await.into_iter().map(|t| t.llm_name.into_string()).collect();
        assert_eq!(names, ["read_new", "other_tool"]);
        let result = registry.invoke(call("read_old"), ctx()).await;
        assert!(!result.success, "the old provider's tools are gone");
        let result = registry.invoke(call("read_new"), ctx()).await;
        assert_eq!(result.content.as_deref(), Some("files:read_new"));
    })
    .await;
}

#[tokio::test]
async fn registering_the_same_shared_provider_again_does_not_close_it() {
    within(async {
        let registry = ToolRegistry::new();
        let provider = TestProvider::with_tools("p", &["t"]);
        let shared: Arc<dyn ToolProvider> = provider.clone();
        assert!(!registry.register_arc(Arc::clone(&shared)).await);
        assert!(registry.register_arc(shared).await);
        assert!(!provider.is_closed());
        assert_eq!(registry.provider_names(), ["p"]);
        assert!(registry.invoke(call("t"), ctx()).await.success);
    })
    .await;
}

#[tokio::test]
async fn duplicate_names_are_skipped_with_a_warning_and_the_first_wins() {
    within(async {
        let events = capture_events();
        let registry = ToolRegistry::new();
        registry.register(TestProvider::with_tools("first", &["echo", "only_first"])).await;
        registry.register(TestProvider::with_tools("second", &["echo", "only_second"])).await;
        let tools = registry.tools(&ctx()).await;
        let pairs: Vec<(&str, &str)> = tools.iter().map(|t| (t.llm_name.as_str(), t.provider.as_str())).collect();
        assert_eq!(pairs, [("echo", "first"), ("only_first", "first"), ("only_second", "second")]);

        let result = registry.invoke(call("echo"), ctx()).await;
        assert_eq!(result.content.as_deref(), Some("first:echo"));

        let warnings: Vec<String> =
            events.lines().into_iter().filter(|l| l.starts_with("WARN") && l.contains("duplicate")).collect();
        assert_eq!(warnings.len(), 1, "one warning: {warnings:?}");
        assert!(warnings[0].contains("tool=echo"), "{}", warnings[0]);
        assert!(warnings[0].contains("skipped_from=\"second\""), "{}", warnings[0]);
        assert!(warnings[0].contains("kept_from=first"), "{}", warnings[0]);
    })
    .await;
}

#[tokio::test]
async fn duplicates_within_one_provider_are_skipped_too() {
    within(async {
        let registry = ToolRegistry::new();
        let specs = vec![ToolSpec::new("dup").with_description("one"), ToolSpec::new("dup").with_description("two")];
        registry.register(TestProvider::new("p", specs)).await;
        let tools = registry.tools(&ctx()).await;
        assert_eq!(tools.len(), 1);
        assert_eq!(tools[0].spec.description.as_deref(), Some("one"));
    })
    .await;
}

#[tokio::test]
async fn a_duplicate_is_found_whether_its_name_was_valid_or_sanitised_and_before_or_after_the_first_that_was_not() {
    within(async {
        // `a` and `d` are valid names, handed out as they are; `b.c` is sanitised. Repeats of
        // each, before and after the first sanitised name, are skipped; `b_c` is no repeat of
        // `b.c` (it gets a suffix) and `x.y` after it is new.
        let names = ["a", "d", "a", "b.c", "d", "b.c", "b_c", "a", "x.y"];
        let specs = names.iter().enumerate().map(|(i, name)| ToolSpec::new(*name).with_description(i.to_string()));
        let registry = ToolRegistry::new();
        registry.register(TestProvider::new("p", specs.collect())).await;
        let tools = registry.tools(&ctx()).await;
        let kept: Vec<(&str, &str, &str)> = tools
            .iter()
            .map(|t| (t.spec.name.as_str(), t.spec.description.as_deref().unwrap(), t.llm_name.as_str()))
            .collect();
        let suffixed = format!("b_c_{:08x}", tool_system::names::fnv1a_32(b"b_c"));
        assert_eq!(
            kept,
            [("a", "0", "a"), ("d", "1", "d"), ("b.c", "3", "b_c"), ("b_c", "6", &*suffixed), ("x.y", "8", "x_y")]
        );
        // Each original name leads to its first tool, the sanitised one too.
        for (name, description) in [("a", "0"), ("b.c", "3"), ("b_c", "3"), ("x.y", "8"), (&*suffixed, "6")] {
            let found = registry.lookup(name).unwrap_or_else(|| panic!("{name} leads nowhere"));
            assert_eq!(found.spec.description.as_deref(), Some(description), "{name}");
        }
    })
    .await;
}

#[tokio::test]
async fn an_unknown_tool_gives_a_failed_result() {
    within(async {
        let registry = ToolRegistry::new();
        let result = registry.invoke(call("nothing_here"), ctx()).await;
        assert!(!result.success);
        assert_eq!(result.error_message.as_deref(), Some("unknown tool `nothing_here`"));

        registry.register(TestProvider::with_tools("p", &["known"])).await;
        let long = "x".repeat(10_000);
        let result = registry.invoke(call(&long), ctx()).await;
        assert!(!result.success);
        assert!(result.error_message.unwrap().len() < 200, "a huge name is not echoed whole");
    })
    .await;
}

#[tokio::test]
async fn namespaced_tools_are_qualified_and_routed_through_the_table() {
    within(async {
        let registry = ToolRegistry::new();
        let specs_a =
            vec![ToolSpec::new("read").with_namespace("files"), ToolSpec::new("only_a").with_namespace("files")];
        let specs_b = vec![ToolSpec::new("read").with_namespace("my.server")];
        let a = TestProvider::new("a", specs_a);
        let b = TestProvider::new("b", specs_b);
        registry.register(Arc::clone(&a)).await;
        registry.register(Arc::clone(&b)).await;
        let names = llm_names(&registry.llm_definitions(&ctx()).await);
        assert_eq!(names, ["files__read", "files__only_a", "my_server__read"]);

        let result = registry.invoke(call("my_server__read"), ctx()).await;
        assert_eq!(result.content.as_deref(), Some("b:read"));
        assert_eq!(b.last_call().unwrap().0.tool_name, "read", "the provider sees its own name");

        // Convenience names: a qualified name, and an original name only one tool has.
        let result = registry.invoke(call("my.server__read"), ctx()).await;
        assert_eq!(result.content.as_deref(), Some("b:read"));
        let result = registry.invoke(call("only_a"), ctx()).await;
        assert_eq!(result.content.as_deref(), Some("a:only_a"));
        let result = registry.invoke(call("read"), ctx()).await;
        assert!(!result.success, "`read` is ambiguous between two servers");

        let found = registry.lookup("my_server__read").unwrap();
        assert_eq!((found.provider.as_str(), found.spec.name.as_str()), ("b", "read"));
    })
    .await;
}

#[tokio::test]
async fn every_name_of_every_tool_leads_to_it_in_a_large_listing() {
    within(async {
        // 300 tools whose LLM name is neither their qualified nor their original name (the
        // namespace is sanitised): each has two aliases, more than the alias table is sized for
        // up front, so it grows while it is filled.
        let specs: Vec<ToolSpec> = (0..300).map(|i| ToolSpec::new(format!("t{i}")).with_namespace("a.b")).collect();
        // A tool whose original name is another tool's qualified name: that name leads to
        // neither; and one tool whose original name is free.
        let native = vec![ToolSpec::new("a.b__t7").with_namespace("other"), ToolSpec::new("plain")];
        let registry = ToolRegistry::new();
        registry.register(TestProvider::new("mcp", specs)).await;
        registry.register(TestProvider::new("native", native)).await;
        let names = llm_names(&registry.llm_definitions(&ctx()).await);
        assert_eq!(names.len(), 302);
        assert_eq!((names[0].as_str(), names[299].as_str()), ("a_b__t0", "a_b__t299"));
        for i in (0..300).filter(|i| *i != 7) {
            for name in [format!("a_b__t{i}"), format!("a.b__t{i}"), format!("t{i}")] {
                let found = registry.lookup(&name).unwrap_or_else(|| panic!("{name} leads nowhere"));
                assert_eq!((found.provider.as_str(), found.spec.name.as_str()), ("mcp", format!("t{i}").as_str()));
            }
        }
        assert!(registry.lookup("a.b__t7").is_none(), "a qualified name that is another tool's name is ambiguous");
        assert_eq!(registry.lookup("a_b__t7").unwrap().spec.name, "t7", "the LLM name still leads to it");
        assert_eq!(registry.lookup("t7").unwrap().spec.name, "t7");
        assert_eq!(registry.lookup("other__a_b__t7").unwrap().provider.as_str(), "native");
        assert_eq!(registry.lookup("other__a.b__t7").unwrap().provider.as_str(), "native");
        assert_eq!(registry.lookup("plain").unwrap().provider.as_str(), "native");
        assert!(
            registry.lookup("t300").is_none() && registry.lookup("a_b__").is_none() && registry.lookup("a.b").is_none()
        );
    })
    .await;
}

#[tokio::test]
async fn the_separator_is_configurable() {
    within(async {
        let options = RegistryOptions { separator: "-".to_owned(), ..RegistryOptions::default() };
        let registry = ToolRegistry::with_options(options);
        registry.register(TestProvider::new("p", vec![ToolSpec::new("tool").with_namespace("srv")])).await;
        let names = llm_names(&registry.llm_definitions(&ctx()).await);
        assert_eq!(names, ["srv-tool"]);
    })
    .await;
}

#[tokio::test]
async fn llm_definitions_use_the_openai_function_format() {
    within(async {
        let registry = ToolRegistry::new();
        let schema = json!({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]});
        let specs = vec![
            ToolSpec::new("read").with_description("Read a file").with_parameters(schema.clone()),
            ToolSpec::new("titled").with_title("Only a title").with_parameters(json!({"properties": {}})),
            ToolSpec::new("bare").with_parameters(json!(null)),
        ];
        registry.register(TestProvider::new("p", specs)).await;
        let definitions = registry.llm_definitions(&ctx()).await;
        assert_eq!(
            definitions[0],
            json!({"type": "function", "function": {"name": "read", "description": "Read a file", "parameters": schema}})
        );
        assert_eq!(definitions[1]["function"]["description"], "Only a title");
        assert_eq!(definitions[1]["function"]["parameters"]["type"], "object", "a missing type is added");
        assert!(definitions[2]["function"].get("description").is_none());
        assert_eq!(definitions[2]["function"]["parameters"], json!({"type": "object", "properties": {}}));
    })
    .await;
}

#[tokio::test]
async fn the_listing_is_cached_until_something_changes() {
    within(async {
        let registry = ToolRegistry::new();
        let provider = TestProvider::with_tools("p", &["one"]);
        registry.register(Arc::clone(&provider)).await;
        registry.tools(&ctx()).await;
        registry.llm_definitions(&ctx()).await;
        registry.invoke(call("one"), ctx()).await;
        assert_eq!(provider.list_calls(), 1, "one listing serves every call");

        provider.specs.lock().unwrap().push(ToolSpec::new("two"));
        assert_eq!(registry.tools(&ctx()).await.len(), 1, "still the cached listing");
        provider.revision.store(1, Ordering::SeqCst);
        assert_eq!(registry.tools(&ctx()).await.len(), 2, "a new revision makes the registry list again");
        assert_eq!(provider.list_calls(), 2);

        provider.specs.lock().unwrap().push(ToolSpec::new("three"));
        registry.invalidate();
        let result = registry.invoke(call("three"), ctx()).await;
        assert!(result.success, "invoke lists again after invalidate: {result:?}");
        assert_eq!(registry.refresh(&ctx()).await.len(), 3);
        assert_eq!(provider.list_calls(), 4);
    })
    .await;
}

#[tokio::test]
async fn a_provider_that_fails_to_list_contributes_no_tools() {
    within(async {
        let events = capture_events();
        let registry = ToolRegistry::new();
        let broken = TestProvider::with_tools("broken", &["lost"]);
        broken.fail_listing.store(true, Ordering::SeqCst);
        registry.register(Arc::clone(&broken)).await;
        registry.register(TestProvider::with_tools("fine", &["kept"])).await;
        let names: Vec<String> = registry.tools(&ctx()).await.into_iter().map(|t| t.llm_name.into_string()).collect();
        assert_eq!(names, ["kept"]);
        assert!(events.lines().iter().any(|l| l.starts_with("WARN") && l.contains("server is down")));

        broken.fail_listing.store(false, Ordering::SeqCst);
        registry.invalidate();
        assert_eq!(registry.tools(&ctx()).await.len(), 2, "back after the next listing");
    })
    .await;
}

#[tokio::test]
async fn unregister_and_close_close_the_providers() {
    within(async {
        let registry = ToolRegistry::new();
        let a = TestProvider::with_tools("a", &["ta"]);
        let b = TestProvider::with_tools("b", &["tb"]);
        registry.register(Arc::clone(&a)).await;
        registry.register(Arc::clone(&b)).await;
        assert!(registry.unregister("a").await);
        assert!(a.is_closed());
        assert!(!registry.unregister("a").await, "already gone");
        assert!(!registry.invoke(call("ta"), ctx()).await.success);

        registry.close().await;
        assert!(b.is_closed());
        assert!(registry.provider_names().is_empty());
        assert!(registry.tools(&ctx()).await.is_empty());
    })
    .await;
}

#[tokio::test]
async fn a_provider_named_tool_like_the_builtin_search_is_skipped() {
    within(async {
        let registry = ToolRegistry::new();
        registry.register(TestProvider::with_tools("p", &[TOOL_SEARCH_NAME, "tool.search"])).await;
        let tools = registry.tools(&ctx()).await;
        assert_eq!(tools.len(), 1, "the reserved name is skipped");
        assert_eq!(tools[0].spec.name, "tool.search");
        assert_ne!(tools[0].llm_name, TOOL_SEARCH_NAME, "a sanitised collision gets a hash suffix");
        assert!(tools[0].llm_name.starts_with("tool_search_"));
    })
    .await;
}

/// Answers with a failed result that has no message, or panics.
struct Misbehaving;

impl ToolProvider for Misbehaving {
    fn name(&self) -> &str {
        "misbehaving"
    }

    fn provider_type(&self) -> &str {
        "test"
    }

    fn list_tools(
        &self,
        _ctx: &ToolExecutionContext,
    ) -> BoxFuture<'_, Result<Vec<std::sync::Arc<ToolSpec>>, ToolError>> {
        Box::pin(std::future::ready(Ok(vec![ToolSpec::new("silent_failure").into(), ToolSpec::new("panics").into()])))
    }

    fn invoke(&self, invocation: ToolInvocation, _ctx: ToolExecutionContext) -> BoxFuture<'_, ToolExecutionResult> {
        Box::pin(async move {
            if invocation.tool_name == "panics" {
                panic!("the tool broke");
            }
            ToolExecutionResult { success: false, error_message: Some(String::new()), ..ToolExecutionResult::ok() }
        })
    }
}

#[tokio::test]
async fn results_are_normalised_and_panics_become_failed_results() {
    within(async {
        let registry = ToolRegistry::new();
        registry.register(Misbehaving).await;
        let result = registry.invoke(call("silent_failure"), ctx()).await;
        assert!(!result.success);
        assert_eq!(result.error_message.as_deref(), Some(GENERIC_FAILURE));

        let result = registry.invoke(call("panics"), ctx()).await;
        assert!(!result.success);
        assert_eq!(result.error_message.as_deref(), Some("tool `panics` of provider `misbehaving` panicked"));
        // The registry still works afterwards.
        assert!(!registry.invoke(call("silent_failure"), ctx()).await.success);
        assert_eq!(registry.tools(&ctx()).await.len(), 2);
    })
    .await;
}

#[tokio::test]
async fn the_context_and_invocation_reach_the_provider_unchanged() {
    within(async {
        let registry = ToolRegistry::new();
        let provider = TestProvider::new("p", vec![ToolSpec::new("where").with_namespace("srv")]);
        registry.register(Arc::clone(&provider)).await;
        let ctx = ToolExecutionContext::new("session-1", "stream-7")
            .with_user("user-42")
            .with_platform("matrix")
            .with_anchor_message("msg-9")
            .with_extra("locale", json!("fr"));
        let invocation = ToolInvocation::from_value("srv__where", json!({"q": 1}))
            .with_call_id("call-3")
            .with_reasoning("the user asked");
        let result = registry.invoke(invocation.clone(), ctx.clone()).await;
        assert!(result.success);
        let (seen_invocation, seen_ctx) = provider.last_call().unwrap();
        assert!(seen_ctx.same_caller(&ctx), "{seen_ctx:?}");
        assert_eq!(seen_invocation, ToolInvocation { tool_name: "where".into(), ..invocation });
    })
    .await;
}

#[tokio::test]
async fn the_registry_is_shared_across_tasks() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<ToolRegistry>();
    within(async {
        let registry = Arc::new(ToolRegistry::new());
        registry.register(TestProvider::with_tools("p", &["t"])).await;
        let tasks: Vec<_> = (0..4)
            .map(|_| {
                let registry = Arc::clone(&registry);
                tokio::spawn(async move { registry.invoke(call("t"), ctx()).await })
            })
            .collect();
        for task in tasks {
            assert_eq!(task.await.unwrap().content.as_deref(), Some("p:t"));
        }
        let refresh = tokio::spawn({
            let registry = Arc::clone(&registry);
            async move { registry.refresh(&ctx()).await.len() }
        });
        assert_eq!(refresh.await.unwrap(), 1);
    })
    .await;
}

#[tokio::test]
async fn a_tool_that_left_the_listing_still_reaches_its_provider_which_can_say_why() {
    within(async {
        let registry = ToolRegistry::new();
        let provider = TestProvider::with_tools("p", &["kept", "gone"]);
        registry.register(Arc::clone(&provider)).await;
        assert_eq!(registry.tools(&ctx()).await.len(), 2);

        provider.specs.lock().unwrap().retain(|s| s.name != "gone");
        provider.revision.store(1, Ordering::SeqCst);
        let names: Vec<String> =
            registry.llm_tools(&ctx()).await.into_iter().map(|t| t.llm_name.into_string()).collect();
        assert_eq!(names, ["kept"], "it is no longer offered");
        let result = registry.invoke(call("gone"), ctx()).await;
        assert_eq!(result.content.as_deref(), Some("p:gone"), "the provider answered: {result:?}");
        assert_eq!(provider.last_call().unwrap().0.tool_name, "gone");

        // Back in the listing: an ordinary tool again; gone again after the provider is removed.
        provider.specs.lock().unwrap().push(ToolSpec::new("gone"));
        provider.revision.store(2, Ordering::SeqCst);
        assert_eq!(registry.tools(&ctx()).await.len(), 2);
        registry.unregister("p").await;
        let result = registry.invoke(call("gone"), ctx()).await;
        assert_eq!(result.error_message.as_deref(), Some("unknown tool `gone`"), "a removed provider is never called");
    })
    .await;
}

#[tokio::test]
async fn former_tools_are_bounded_and_the_oldest_are_forgotten() {
    within(async {
        let registry = ToolRegistry::new();
        let names: Vec<String> = (0..5000).map(|i| format!("t{i}")).collect();
        let refs: Vec<&str> = names.iter().map(String::as_str).collect();
        let provider = TestProvider::with_tools("p", &refs);
        registry.register(Arc::clone(&provider)).await;
        assert_eq!(registry.tools(&ctx()).await.len(), 5000);
        provider.specs.lock().unwrap().clear();
        provider.revision.store(1, Ordering::SeqCst);
        assert!(registry.tools(&ctx()).await.is_empty());
        let oldest = registry.invoke(call("t0"), ctx()).await;
        assert_eq!(oldest.error_message.as_deref(), Some("unknown tool `t0`"), "forgotten past the bound");
        let newest = registry.invoke(call("t4999"), ctx()).await;
        assert_eq!(newest.content.as_deref(), Some("p:t4999"), "still remembered");
    })
    .await;
}

/// Every call in flight holds its registry future (a host with a thousand calls in flight holds a
/// thousand): the invocation and the context are in it once, as the call's, and not again in the
/// state of the provider's call awaited in it, which hands them to the provider before it is
/// awaited (1,208 bytes when they were in both; 1,992 when each `async fn` layer held them as
/// given and again as moved into its body).
#[test]
fn a_calls_registry_future_holds_the_invocation_and_the_context_once() {
    let registry = ToolRegistry::new();
    let pair = std::mem::size_of::<ToolInvocation>() + std::mem::size_of::<ToolExecutionContext>();
    let future = registry.invoke(call("echo"), ctx());
    let size = std::mem::size_of_val(&future);
    println!("invoke future: {size} bytes; invocation + context: {pair} bytes");
    assert!(size < 2 * pair + 200, "{size} bytes: the invocation and context ({pair} bytes) are held twice");
}
