//! A server's schemas are untrusted input: a `$ref` cycle, hostile depth or size in a tool's
//! `inputSchema` or `outputSchema` is refused with a message naming the server, the tool and
//! the problem, and the call fails with it (before the fix, validating against the cycle
//! recursed for ever: the test process died of memory exhaustion or a stack overflow).
//!
//! The checks also run on a thread with a 256 KiB stack, to show that screening, compiling and
//! checking do not recurse with the schema's shape.

use std::sync::Arc;

use mcp_manager::config::{McpConfig, ServerConfig};
use mcp_manager::connection::{EraPreference, single_use_factory};
use mcp_manager::manager::convert::{MAX_SCHEMA_DEPTH, SchemaCheck, check_arguments, screen_schema};
use mcp_manager::manager::{ManagerError, ManagerOptions, McpManager};
use mcp_manager::{RequestOptions, TransportPlan};
use mcp_protocol::types::meta::JsonObject;
use mcp_transport::{MemoryTransport, Transport};
use serde_json::{Value, json};
use test_support::{ScriptedServer, within};

const SMALL_STACK: usize = 256 * 1024;

fn object(value: Value) -> JsonObject {
    match value {
        Value::Object(map) => map,
        other => panic!("not an object: {other}"),
    }
}

/// The schema of the issue: `a` refers to `b`, `b` to `a`, the root to `a`.
fn cycle() -> Value {
    json!({"type": "object", "$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}}, "$ref": "#/$defs/a"})
}

/// Runs `f` on a thread with a 256 KiB stack and returns its result (a stack overflow would
/// abort the test process).
fn on_small_stack<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    std::thread::Builder::new().stack_size(SMALL_STACK).spawn(f).unwrap().join().expect("the check panicked")
}

/// Serves the other end: a legacy server with three tools; records every request.
fn serve(server: MemoryTransport) -> ScriptedServer {
    ScriptedServer::start(server, |request, _| {
        Some(Ok(match request.method.as_str() {
            "initialize" => json!({"protocolVersion": "2025-06-18", "capabilities": {"tools": {}},
                    "serverInfo": {"name": "evil", "version": "1"}}),
            "tools/list" => json!({"tools": [
                {"name": "cycle_in", "inputSchema": cycle()},
                {"name": "cycle_out", "inputSchema": {"type": "object"}, "outputSchema": cycle()},
                {"name": "fine", "inputSchema": {"type": "object", "properties": {"x": {"type": "number"}}}},
            ]}),
            "tools/call" => json!({"content": [{"type": "text", "text": "done"}], "structuredContent": {"v": 1}}),
            _ => json!({}),
        }))
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tool_schemas_with_a_ref_cycle_fail_the_call_with_a_clear_message() {
    within(async {
        let (manager, seen) = evil_manager(ManagerOptions::default()).await;

        let arguments = object(json!({"x": 1}));
        let err = manager.call_tool("cycle_in", Some(arguments.clone()), RequestOptions::default()).await.unwrap_err();
        let ManagerError::InvalidArguments(message) = &err else { panic!("not an argument error: {err:?}") };
        for part in ["server `evil`", "the inputSchema of tool `cycle_in` is refused", "cycle", "#/$defs/a", "not sent"]
        {
            assert!(message.contains(part), "{part:?} is missing from: {message}");
        }

        let result = manager.execute_tool("cycle_out", Some(arguments.clone()), RequestOptions::default()).await;
        assert!(!result.success, "a result cannot be accepted against a refused outputSchema");
        let message = result.error_message.unwrap_or_default();
        for part in ["server `evil`", "the outputSchema of tool `cycle_out` is refused", "cycle"] {
            assert!(message.contains(part), "{part:?} is missing from: {message}");
        }
        assert_eq!(result.content.as_deref(), Some("done"), "the content stays in the failed result");

        let (_, fine) = manager.call_tool("fine", Some(arguments), RequestOptions::default()).await.unwrap();
        assert_eq!(fine.structured_content, Some(json!({"v": 1})), "the server's other tools still work");
        assert_eq!(
            seen.called_tools(),
            ["cycle_out", "fine"],
            "the refused input schema kept its call from being sent"
        );
        manager.close().await;
    })
    .await
}

/// A manager whose only server is [`serve`]'s, over a memory pair; the options are `options`
/// with that transport.
async fn evil_manager(options: ManagerOptions) -> (McpManager, ScriptedServer) {
    let (client, server) = MemoryTransport::pair();
    let seen = serve(server);
    let transport: Arc<dyn Transport> = Arc::new(client);
    let factory = single_use_factory(transport);
    let options = ManagerOptions {
        transport_override: Some(Arc::new(move |_: &ServerConfig| Some(TransportPlan::single(factory.clone())))),
        ..options
    };
    let mut evil = ServerConfig::new("evil");
    evil.era = EraPreference::Legacy;
    let manager = McpManager::start(McpConfig { servers: vec![evil], ..McpConfig::default() }, options).await;
    assert!(manager.routing().tool("cycle_in").is_some(), "the tools are listed: {:?}", manager.status());
    (manager, seen)
}

#[tokio::test]
async fn with_argument_validation_skipped_calls_are_sent_unchecked_and_no_schema_is_compiled() {
    // Current-thread runtime: the capture is this thread's subscriber, which every task sees.
    let (logs, _guard) = test_support::spans::SpanCapture::start();
    within(async {
        let (manager, seen) =
            evil_manager(ManagerOptions { skip_argument_validation: true, ..ManagerOptions::default() }).await;
        let not_a_number = object(json!({"x": "not a number"}));
        let (_, result) = manager.call_tool("fine", Some(not_a_number), RequestOptions::default()).await.unwrap();
        assert_eq!(result.structured_content, Some(json!({"v": 1})), "the server answered the unchecked call");
        manager.call_tool("cycle_in", Some(object(json!({"x": 1}))), RequestOptions::default()).await.unwrap();
        assert_eq!(seen.called_tools(), ["fine", "cycle_in"], "both calls were sent");
        manager.close().await;
    })
    .await;
    // Compiling `cycle_in`'s inputSchema would have refused it with a warning.
    let events = logs.events();
    assert!(!events.iter().any(|e| e.contains("inputSchema")), "an inputSchema was compiled: {events:?}");
}

#[tokio::test]
async fn a_refused_input_schema_is_logged_once_when_arguments_are_checked() {
    // The other side of the test above: with the check on, the refusal is logged (once).
    let (logs, _guard) = test_support::spans::SpanCapture::start();
    within(async {
        let (manager, _seen) = evil_manager(ManagerOptions::default()).await;
        for _ in 0..2 {
            let err = manager.call_tool("cycle_in", Some(object(json!({"x": 1}))), RequestOptions::default()).await;
            assert!(matches!(err, Err(ManagerError::InvalidArguments(_))), "{err:?}");
        }
        manager.close().await;
    })
    .await;
    let refusals: Vec<_> =
        logs.events().into_iter().filter(|e| e.contains("the inputSchema of tool `cycle_in` is refused")).collect();
    assert_eq!(refusals.len(), 1, "{refusals:?}");
    assert!(refusals[0].starts_with("WARN "), "{refusals:?}");
}

#[test]
fn screening_compiling_and_checking_stay_on_a_small_stack() {
    on_small_stack(|| {
        let cycle = object(cycle());
        assert!(SchemaCheck::compile(&cycle).unwrap_err().starts_with("refused: its references form a cycle"));
        let check = SchemaCheck::untrusted("evil", "the inputSchema of tool `t`", &cycle).expect("a refusing check");
        assert!(check.refusal().is_some());
        assert!(!check.is_valid(&json!({"x": 1})));
        let err = check_arguments(&check, "t", &object(json!({"x": 1}))).unwrap_err();
        assert!(err.contains("server `evil`") && err.contains("tool `t`"), "{err}");

        // A legitimate recursive schema (recursion through `properties` consumes the instance)
        // compiles, and checks a deep instance on this small stack.
        let tree = object(json!({"type": "object", "properties": {
            "name": {"type": "string"},
            "children": {"type": "array", "items": {"$ref": "#"}}
        }}));
        let check = SchemaCheck::compile(&tree).expect("a tree schema is fine");
        let mut value = json!({"name": "leaf"});
        for _ in 0..20 {
            value = json!({"name": "node", "children": [value]});
        }
        assert!(check.check(&value).is_ok());
        value = json!({"children": [{"name": 7}]});
        assert!(check.check(&value).unwrap_err().contains("/children/0/name"));
    });
}

#[test]
fn every_shape_of_reference_cycle_is_refused() {
    let cycles = [
        // Self reference at the root, through allOf, through not / if / then, anchors, an `$id`.
        json!({"$ref": "#"}),
        json!({"allOf": [{"$ref": "#"}]}),
        json!({"$defs": {"a": {"anyOf": [{"type": "string"}, {"$ref": "#/$defs/b"}]},
            "b": {"oneOf": [{"not": {"$ref": "#/$defs/a"}}]}}, "$ref": "#/$defs/a"}),
        json!({"$defs": {"a": {"if": {"$ref": "#/$defs/a"}, "then": {}}}, "properties": {"p": {"$ref": "#/$defs/a"}}}),
        json!({"$defs": {"a": {"$anchor": "here", "allOf": [{"$ref": "#here"}]}}, "$ref": "#/$defs/a"}),
        json!({"$id": "https://schema.invalid/root.json", "$defs": {"a": {"$ref": "root.json#/$defs/a"}},
            "$ref": "#/$defs/a"}),
        json!({"dependentSchemas": {"x": {"$ref": "#"}}}),
        json!({"definitions": {"a~b/c": {"$ref": "#/definitions/a~0b~1c"}}, "$ref": "#/definitions/a~0b~1c"}),
        json!({"$defs": {"a b": {"$ref": "#/$defs/a%20b"}}, "$ref": "#/$defs/a%20b"}),
    ];
    for schema in cycles {
        let reason = screen_schema(&object(schema.clone())).expect_err(&schema.to_string());
        assert!(reason.contains("cycle that consumes no input"), "{schema}: {reason}");
        assert!(SchemaCheck::compile(&object(schema.clone())).is_err(), "{schema}");
    }
    // Recursion that consumes the instance, and references that merely repeat, are fine.
    for schema in [
        json!({"properties": {"next": {"$ref": "#"}}}),
        json!({"items": {"$ref": "#"}}),
        json!({"$defs": {"a": {"type": "string"}}, "allOf": [{"$ref": "#/$defs/a"}, {"$ref": "#/$defs/a"}]}),
        json!({"additionalProperties": {"$ref": "#"}, "propertyNames": {"$ref": "#/$defs/n"}, "$defs": {"n": {}}}),
    ] {
        assert_eq!(screen_schema(&object(schema.clone())), Ok(()), "{schema}");
        assert!(SchemaCheck::compile(&object(schema.clone())).is_ok(), "{schema}");
    }
}

/// `{"allOf": [{"$ref": "#/$defs/d1"}, {"$ref": "#/$defs/d1"}]}` where each `dN` names `dN+1`
/// twice: 2^40 subschemas for one value, without any cycle.
#[test]
fn an_exponential_unfolding_is_refused() {
    let mut defs = serde_json::Map::new();
    for n in 1..40 {
        let next = format!("#/$defs/d{}", n + 1);
        defs.insert(format!("d{n}"), json!({"allOf": [{"$ref": next}, {"$ref": next}]}));
    }
    defs.insert("d40".into(), json!({"type": "string"}));
    let schema = object(json!({"$defs": defs, "$ref": "#/$defs/d1"}));
    let reason = on_small_stack(move || screen_schema(&schema)).unwrap_err();
    assert!(reason.contains("applies more than 10000 subschemas"), "{reason}");
}

#[test]
fn deep_wide_and_huge_schemas_are_refused() {
    // Deeper than any decoder lets through (serde_json stops at 128), built on this thread
    // (dropping a deep value recurses) and screened on a small stack.
    let mut deep = json!({"type": "string"});
    for _ in 0..200 {
        deep = json!({"type": "object", "properties": {"p": deep}});
    }
    let deep = object(deep);
    let huge_enum = object(json!({"enum": (0..200_000).collect::<Vec<u32>>()}));
    let long_text = object(json!({"description": "x".repeat(5 << 20)}));
    let (reasons, refused, values) = on_small_stack(move || {
        let reasons = (screen_schema(&deep), screen_schema(&huge_enum), screen_schema(&long_text));
        let refused = SchemaCheck::untrusted("s", "the inputSchema of tool `t`", &deep)
            .and_then(|c| c.refusal().map(str::to_owned));
        // The values go back to be dropped on the big stack.
        (reasons, refused, (deep, huge_enum, long_text))
    });
    drop(values);
    let (deep, huge_enum, long_text) = reasons;
    assert!(refused.is_some_and(|r| r.contains("server `s`") && r.contains("nests deeper")));
    assert!(deep.unwrap_err().contains(&format!("nests deeper than {MAX_SCHEMA_DEPTH} levels")));
    assert!(huge_enum.unwrap_err().contains("more than 100000 JSON values"));
    assert!(long_text.unwrap_err().contains("MiB of text"));

    // The deepest schema allowed still compiles and checks.
    let mut ok = json!({"type": "number"});
    for _ in 0..(MAX_SCHEMA_DEPTH / 2 - 1) {
        ok = json!({"type": "object", "properties": {"p": ok}});
    }
    let ok = object(ok);
    on_small_stack(move || {
        let check = SchemaCheck::compile(&ok).expect("a deep but allowed schema compiles");
        assert!(check.is_valid(&json!({"p": {"p": {}}})));
        assert!(!check.is_valid(&json!({"p": {"p": 1}})), "levels below the top are objects");
    });
}

/// `pattern` uses a regex engine with a backtracking budget: a catastrophic pattern against a
/// long string ends (with a refusal or a mismatch) instead of taking exponential time.
#[test]
fn a_catastrophic_pattern_ends() {
    let schema = object(json!({"type": "object", "properties": {"s": {"type": "string", "pattern": "^(a+)+$"}}}));
    let check = SchemaCheck::compile(&schema).expect("the pattern compiles");
    let value = json!({"s": format!("{}!", "a".repeat(5_000))});
    let check_on_small_stack = check.clone();
    let outcome = on_small_stack(move || check_on_small_stack.check(&value));
    assert!(outcome.is_err(), "the value does not match, whatever the engine");
    assert!(check.is_valid(&json!({"s": "aaaa"})));
}

/// Recursion that multiplies per level of the instance: the root applies itself twice to `a`,
/// so a value forty levels deep would be checked 2^40 times (no cycle, no single unfolding
/// over the limit). Legitimate recursive schemas (trees, a JSON-value schema, two different
/// definitions that share a member name) stay accepted.
#[test]
fn recursion_that_multiplies_per_level_is_refused() {
    for schema in [
        json!({"allOf": [{"properties": {"a": {"$ref": "#"}}}, {"properties": {"a": {"$ref": "#"}}}]}),
        json!({"properties": {"a": {"allOf": [{"$ref": "#"}, {"$ref": "#"}]}}}),
        json!({"items": {"anyOf": [{"$ref": "#"}, {"$ref": "#"}, {"type": "string"}]}}),
        json!({"patternProperties": {"^x": {"$ref": "#"}, "y$": {"$ref": "#"}}}),
    ] {
        let reason = on_small_stack({
            let schema = object(schema.clone());
            move || screen_schema(&schema)
        })
        .expect_err(&schema.to_string());
        assert!(reason.contains("recursion multiplies"), "{schema}: {reason}");
    }
    for schema in [
        json!({"properties": {"name": {"type": "string"}, "children": {"type": "array", "items": {"$ref": "#"}}}}),
        json!({"properties": {"left": {"$ref": "#"}, "right": {"$ref": "#"}}}),
        json!({"$defs": {"json": {"anyOf": [{"type": ["null", "boolean", "number", "string"]},
            {"type": "array", "items": {"$ref": "#/$defs/json"}},
            {"type": "object", "additionalProperties": {"$ref": "#/$defs/json"}}]}}, "$ref": "#/$defs/json"}),
        json!({"$defs": {"A": {"properties": {"x": {"$ref": "#"}}}, "B": {"properties": {"x": {"$ref": "#"}}}},
            "properties": {"a": {"$ref": "#/$defs/A"}, "b": {"$ref": "#/$defs/B"}}}),
        json!({"additionalProperties": {"$ref": "#"}, "patternProperties": {"^x": {"$ref": "#"}}}),
    ] {
        assert_eq!(screen_schema(&object(schema.clone())), Ok(()), "{schema}");
    }
}

/// A large, ordinary schema (a thousand members, each an object of a few nested members, with
/// shared definitions) passes the screening.
#[test]
fn a_large_ordinary_schema_passes() {
    let mut properties = serde_json::Map::new();
    for i in 0..1_000 {
        properties.insert(
            format!("field_{i}"),
            json!({"type": "object", "properties": {
                "id": {"$ref": "#/$defs/id"},
                "tags": {"type": "array", "items": {"type": "string", "enum": ["a", "b", "c"]}},
                "inner": {"type": "object", "properties": {"x": {"type": "number"}, "y": {"$ref": "#/$defs/id"}}}
            }}),
        );
    }
    let schema = object(json!({"type": "object", "properties": properties,
        "$defs": {"id": {"type": "string", "pattern": "^[a-z0-9-]+$"}}}));
    assert_eq!(screen_schema(&schema), Ok(()));
    assert!(SchemaCheck::compile(&schema).is_ok());
}
