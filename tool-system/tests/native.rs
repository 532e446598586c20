//! Native tools: schema from the argument type, calls, argument errors, context.

mod common;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;
use test_support::within;
use tool_system::{
    NativeTool, NativeToolProvider, NoArgs, ToolExecutionContext, ToolExecutionResult, ToolInvocation, ToolProvider,
    ToolRegistry,
};

#[derive(Deserialize, JsonSchema)]
struct AddArgs {
    /// The first number.
    a: i64,
    /// The second number.
    b: i64,
}

#[derive(Deserialize, JsonSchema)]
#[allow(dead_code)] // read through the schema only
struct Filter {
    tag: String,
    min_score: Option<f64>,
}

#[derive(Deserialize, JsonSchema)]
#[allow(dead_code)]
struct SearchArgs {
    query: String,
    filters: Vec<Filter>,
}

#[derive(Serialize, JsonSchema)]
struct Sum {
    sum: i64,
}

fn add_tool() -> NativeTool {
    NativeTool::new("add", "Add two numbers", |args: AddArgs, _ctx| async move { (args.a + args.b).to_string() })
}

async fn registry() -> ToolRegistry {
    let registry = ToolRegistry::new();
    let search = NativeTool::new("search", "Search", |args: SearchArgs, _ctx| async move {
        format!("{} with {} filters", args.query, args.filters.len())
    });
    let sum = NativeTool::new("sum", "Add, structured", |args: AddArgs, _ctx| async move {
        ToolExecutionResult::ok_json(&Sum { sum: args.a + args.b })
    })
    .with_output::<Sum>();
    let divide = NativeTool::new("divide", "Divide", |args: AddArgs, _ctx| async move {
        if args.b == 0 { Err("division by zero") } else { Ok((args.a / args.b).to_string()) }
    });
    let whoami = NativeTool::new("whoami", "Tell the context", |_: NoArgs, ctx: ToolExecutionContext| async move {
        json!({"user": ctx.user_id, "platform": ctx.platform, "anchor": ctx.anchor_message_id, "extra": ctx.extra})
    });
    let provider =
        NativeToolProvider::new("native").with_tool(add_tool()).with_tool(search).with_tool(sum).with_tool(divide);
    registry.register(provider.with_tool(whoami)).await;
    registry
}

fn call(name: &str, arguments: serde_json::Value) -> ToolInvocation {
    ToolInvocation::from_value(name, arguments)
}

#[test]
fn the_schema_is_generated_from_the_argument_type() {
    let tool = add_tool();
    let spec = tool.spec();
    assert_eq!(spec.name, "add");
    assert_eq!(spec.description.as_deref(), Some("Add two numbers"));
    let schema = &spec.parameters;
    assert_eq!(schema["type"], "object");
    assert_eq!(schema["properties"]["a"]["type"], "integer");
    assert_eq!(schema["properties"]["b"]["description"], "The second number.");
    assert_eq!(schema["required"], json!(["a", "b"]));
    assert!(schema.get("$schema").is_none(), "no meta-schema member for LLM APIs");
    assert!(schema.get("title").is_none(), "no Rust type name");
}

#[test]
fn nested_types_are_inlined() {
    let tool = NativeTool::new("search", "Search", |_: SearchArgs, _ctx| async { "" });
    let schema = &tool.spec().parameters;
    assert!(schema.get("$defs").is_none(), "{schema}");
    let filter = &schema["properties"]["filters"]["items"];
    assert_eq!(filter["properties"]["tag"]["type"], "string");
    assert_eq!(filter["required"], json!(["tag"]));
}

#[test]
fn the_provider_lists_its_tools_in_order_with_its_name() {
    let provider = NativeToolProvider::new("math").with_tool(add_tool()).with_tool(NativeTool::new(
        "noop",
        "Nothing",
        |_: NoArgs, _ctx| async {},
    ));
    let specs = futures::executor::block_on(provider.list_tools(&ToolExecutionContext::default())).unwrap();
    let names: Vec<&str> = specs.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["add", "noop"]);
    assert!(specs.iter().all(|s| s.provider_name == "math" && s.provider_type == "native"));
    assert_eq!(specs[1].parameters["type"], "object");
    // Every listing shares the provider's specs.
    let again = futures::executor::block_on(provider.list_tools(&ToolExecutionContext::default())).unwrap();
    assert!(specs.iter().zip(&again).all(|(a, b)| std::sync::Arc::ptr_eq(a, b)));
}

#[tokio::test]
async fn a_call_succeeds() {
    within(async {
        let registry = registry().await;
        let ctx = ToolExecutionContext::default();
        let result = registry.invoke(call("add", json!({"a": 40, "b": 2})), ctx.clone()).await;
        assert!(result.success, "{result:?}");
        assert_eq!(result.content.as_deref(), Some("42"));

        let result = registry.invoke(call("sum", json!({"a": 1, "b": 2})), ctx.clone()).await;
        assert_eq!(result.structured_content, Some(json!({"sum": 3})));
        assert_eq!(result.history_text(), r#"{"sum":3}"#);
        let tools = registry.tools(&ctx).await;
        let sum = tools.iter().find(|t| t.llm_name == "sum").unwrap();
        assert_eq!(sum.spec.output_schema.as_ref().unwrap()["properties"]["sum"]["type"], "integer");

        let nested = json!({"query": "rust", "filters": [{"tag": "a"}, {"tag": "b", "min_score": 0.5}]});
        let result = registry.invoke(call("search", nested), ctx).await;
        assert_eq!(result.content.as_deref(), Some("rust with 2 filters"));
    })
    .await;
}

#[tokio::test]
async fn a_bad_argument_gives_a_failed_result_naming_the_field() {
    within(async {
        let registry = registry().await;
        let ctx = ToolExecutionContext::default();
        let result = registry.invoke(call("add", json!({"a": 1, "b": "x"})), ctx.clone()).await;
        assert!(!result.success);
        assert_eq!(result.error_message.as_deref(), Some("argument `b`: invalid type: string \"x\", expected i64"));

        let result = registry.invoke(call("add", json!({"a": 1})), ctx.clone()).await;
        assert_eq!(result.error_message.as_deref(), Some("invalid arguments: missing field `b`"));

        let bad_nested = json!({"query": "q", "filters": [{"tag": "ok"}, {"tag": 7}]});
        let result = registry.invoke(call("search", bad_nested), ctx.clone()).await;
        assert_eq!(
            result.error_message.as_deref(),
            Some("argument `filters[1].tag`: invalid type: integer `7`, expected a string")
        );

        let result = registry.invoke(call("divide", json!({"a": 1, "b": 0})), ctx).await;
        assert_eq!(result.error_message.as_deref(), Some("division by zero"), "an Err of the tool is a failure");
    })
    .await;
}

#[tokio::test]
async fn the_context_is_carried_to_the_native_tool() {
    within(async {
        let registry = registry().await;
        let ctx = ToolExecutionContext::new("s", "c")
            .with_user("alice")
            .with_platform("irc")
            .with_anchor_message("m1")
            .with_extra("tz", json!("UTC"));
        let result = registry.invoke(call("whoami", json!({"ignored": true})), ctx).await;
        assert!(result.success, "{result:?}");
        assert_eq!(
            result.structured_content,
            Some(json!({"user": "alice", "platform": "irc", "anchor": "m1", "extra": {"tz": "UTC"}}))
        );
    })
    .await;
}

#[tokio::test]
async fn an_unknown_tool_of_the_native_provider_is_a_failed_result() {
    within(async {
        let provider = NativeToolProvider::new("native").with_tool(add_tool());
        let result = provider.invoke(call("nope", json!({})), ToolExecutionContext::default()).await;
        assert_eq!(result.error_message.as_deref(), Some("provider `native` has no tool `nope`"));
    })
    .await;
}

#[test]
fn adding_a_tool_of_the_same_name_replaces_it() {
    let mut provider = NativeToolProvider::new("native").with_tool(add_tool());
    let replaced = provider.add(NativeTool::new("add", "Another add", |_: NoArgs, _ctx| async { "0" }));
    assert_eq!(replaced.unwrap().spec().description.as_deref(), Some("Add two numbers"));
    assert_eq!(provider.tools().len(), 1);
    assert_eq!(provider.get("add").unwrap().spec().description.as_deref(), Some("Another add"));
}
