//! The definitions each LLM dialect gets: `$schema` cleaned everywhere, OpenAI's strict subset
//! (with the fallback to `strict: false`), Gemini's OpenAPI subset, Anthropic's `input_schema`;
//! a `$ref` cycle or a reference bomb terminates; the spec keeps the server's schema; the nulls
//! a strict model sends for skipped optional arguments never reach the provider.
//!
//! The schemas are real ones: server-everything's (zod through `zod-to-json-schema`, with
//! `$schema`, defaults and optional properties) and generator output of the kinds MCP servers
//! publish (pydantic's `$defs` and `anyOf` with null, draft-07 `definitions`, tuples, open
//! objects), plus hostile ones.

mod common;

use std::sync::Arc;

use common::TestProvider;
use serde_json::{Value, json};
use test_support::within;
use tool_system::dialect::MAX_GEMINI_NODES;
use tool_system::{LlmDialect, ToolExecutionContext, ToolInvocation, ToolRegistry, ToolSpec};

const DRAFT7: &str = "http://json-schema.org/draft-07/schema#";

fn ctx() -> ToolExecutionContext {
    ToolExecutionContext::default()
}

/// The definitions of `specs` (one provider, namespace `everything`) in `dialect`.
async fn definitions(specs: Vec<ToolSpec>, dialect: LlmDialect) -> Vec<Value> {
    let registry = ToolRegistry::new();
    let specs = specs.into_iter().map(|s| s.with_namespace("everything")).collect();
    registry.register(TestProvider::new("mcp", specs)).await;
    registry.llm_definitions_for(dialect, &ctx()).await
}

async fn one(spec: ToolSpec, dialect: LlmDialect) -> Value {
    definitions(vec![spec], dialect).await.remove(0)
}

/// server-everything's `trigger-long-running-operation` input schema, as it sends it.
fn long_running() -> Value {
    json!({"$schema": DRAFT7, "type": "object", "properties": {
        "duration": {"default": 10, "description": "Duration of the operation in seconds", "type": "number"},
        "steps": {"default": 5, "description": "Number of steps in the operation", "type": "number"}}})
}

/// server-everything's `get-structured-content`, input and output.
fn structured_content() -> ToolSpec {
    ToolSpec::new("get-structured-content")
        .with_description("Returns structured content along with an output schema")
        .with_parameters(json!({"$schema": DRAFT7, "type": "object", "properties": {
            "location": {"type": "string", "enum": ["New York", "Chicago", "Los Angeles"], "description": "Choose city"}},
            "required": ["location"]}))
        .with_output_schema(json!({"$schema": DRAFT7, "type": "object", "properties": {
            "temperature": {"type": "number", "description": "Temperature in celsius"},
            "conditions": {"type": "string", "description": "Weather conditions description"},
            "humidity": {"type": "number", "description": "Humidity percentage"}},
            "required": ["temperature", "conditions", "humidity"], "additionalProperties": false}))
}

/// A root `$ref` into a cycle (`a` -> `b` -> `a`), as in the hostile-schema tests.
fn cycle() -> Value {
    json!({"type": "object", "$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}}, "$ref": "#/$defs/a"})
}

/// A recursive tree: each node's children are nodes (a `$ref` to the root).
fn tree() -> Value {
    json!({"type": "object", "properties": {
        "name": {"type": "string"},
        "children": {"type": "array", "items": {"$ref": "#"}}},
        "required": ["name", "children"]})
}

/// 40 definitions, each referring twice to the next: inlined naively, 2^40 copies.
fn reference_bomb() -> Value {
    let mut defs = serde_json::Map::new();
    for i in 0..40 {
        let next = json!({"$ref": format!("#/$defs/d{}", i + 1)});
        defs.insert(format!("d{i}"), json!({"type": "object", "properties": {"l": next, "r": next}}));
    }
    defs.insert("d40".into(), json!({"type": "string"}));
    json!({"type": "object", "$defs": defs, "properties": {"x": {"$ref": "#/$defs/d0"}}, "required": ["x"]})
}

fn count_nodes(value: &Value) -> usize {
    match value {
        Value::Object(map) => 1 + map.values().map(count_nodes).sum::<usize>(),
        Value::Array(items) => items.iter().map(count_nodes).sum(),
        _ => 0,
    }
}

/// Whether `$schema` appears as a keyword (its value a string) anywhere in `value`.
fn has_schema_keyword(value: &Value) -> bool {
    match value {
        Value::Object(map) => map.iter().any(|(k, v)| (k == "$schema" && v.is_string()) || has_schema_keyword(v)),
        Value::Array(items) => items.iter().any(has_schema_keyword),
        _ => false,
    }
}

#[tokio::test]
async fn every_dialect_drops_schema_keywords_but_keeps_a_property_named_schema() {
    within(async {
        let with_named_property =
            ToolSpec::new("named").with_parameters(json!({"$schema": DRAFT7, "type": "object", "properties": {
                "$schema": {"type": "string", "$schema": DRAFT7, "description": "a property that is called $schema"}},
                "required": ["$schema"]}));
        for dialect in [LlmDialect::OpenAi, LlmDialect::OpenAiStrict, LlmDialect::Gemini, LlmDialect::Anthropic] {
            let defs = definitions(vec![structured_content(), with_named_property.clone()], dialect).await;
            assert_eq!(defs.len(), 2);
            for def in &defs {
                assert!(!has_schema_keyword(def), "{dialect:?}: $schema left in {def:#}");
            }
            let text = serde_json::to_string(&defs[1]).unwrap();
            assert!(text.contains("a property that is called $schema"), "{dialect:?} lost the property: {text}");
        }
        // The spec itself is the server's, unchanged: validation still uses it.
        let registry = ToolRegistry::new();
        registry.register(TestProvider::new("mcp", vec![structured_content()])).await;
        let tool = registry.tools(&ctx()).await.remove(0);
        assert_eq!(tool.spec.parameters["$schema"], DRAFT7);
        assert_eq!(tool.spec.output_schema.as_ref().unwrap()["$schema"], DRAFT7);
    })
    .await;
}

#[tokio::test]
async fn openai_is_the_function_format_with_the_schema_cleaned() {
    within(async {
        let spec = ToolSpec::new("trigger-long-running-operation")
            .with_title("Trigger Long Running Operation Tool")
            .with_parameters(json!({"$schema": DRAFT7, "$id": "urn:x", "properties": {"n": {"type": "number"}}}));
        let def = one(spec, LlmDialect::OpenAi).await;
        assert_eq!(
            def,
            json!({"type": "function", "function": {
                "name": "everything__trigger-long-running-operation",
                "description": "Trigger Long Running Operation Tool",
                "parameters": {"type": "object", "properties": {"n": {"type": "number"}}}}})
        );
    })
    .await;
}

#[tokio::test]
async fn openai_strict_closes_every_object_and_makes_optional_properties_nullable() {
    within(async {
        let spec = ToolSpec::new("trigger-long-running-operation").with_parameters(long_running());
        let def = one(spec, LlmDialect::OpenAiStrict).await;
        assert_eq!(def["function"]["strict"], true);
        assert_eq!(
            def["function"]["parameters"],
            json!({"type": "object", "properties": {
                "duration": {"description": "Duration of the operation in seconds", "type": ["number", "null"]},
                "steps": {"description": "Number of steps in the operation", "type": ["number", "null"]}},
                "required": ["duration", "steps"], "additionalProperties": false}),
            "defaults dropped, optional properties required and nullable"
        );

        let nasty = json!({
            "$schema": DRAFT7,
            "type": "object",
            "definitions": {"point": {"type": "object", "properties": {"x": {"type": "number"}, "y": {"type": "number"}},
                "required": ["x", "y"]}},
            "properties": {
                "$schema": {"type": "string", "minLength": 1},
                "mode": {"type": "string", "enum": ["fast", "slow"], "default": "fast"},
                "at": {"$ref": "#/definitions/point"},
                "tags": {"type": "array", "items": {"type": "string", "format": "uri"}, "uniqueItems": true, "maxItems": 5},
                "when": {"type": "string", "format": "date-time"},
                "limit": {"type": "integer", "minimum": 0, "exclusiveMaximum": 100},
                "maybe": {"anyOf": [{"type": "string"}, {"type": "integer"}]}
            },
            "required": ["at", "when", "limit", "ghost"]
        });
        let def = one(ToolSpec::new("nasty").with_parameters(nasty), LlmDialect::OpenAiStrict).await;
        assert_eq!(def["function"]["strict"], true, "{def:#}");
        assert_eq!(
            def["function"]["parameters"],
            json!({
                "type": "object",
                "properties": {
                    "$schema": {"type": ["string", "null"]},
                    "mode": {"type": ["string", "null"], "enum": ["fast", "slow", null]},
                    "at": {"$ref": "#/$defs/point"},
                    "tags": {"type": ["array", "null"], "items": {"type": "string"}, "maxItems": 5},
                    "when": {"type": "string", "format": "date-time"},
                    "limit": {"type": "integer", "minimum": 0, "exclusiveMaximum": 100},
                    "maybe": {"anyOf": [{"type": "string"}, {"type": "integer"}, {"type": "null"}]}
                },
                "required": ["$schema", "mode", "at", "tags", "when", "limit", "maybe"],
                "additionalProperties": false,
                "$defs": {"point": {"type": "object", "properties": {"x": {"type": "number"}, "y": {"type": "number"}},
                    "required": ["x", "y"], "additionalProperties": false}}
            })
        );
    })
    .await;
}

#[tokio::test]
async fn a_schema_strict_mode_cannot_express_falls_back_to_not_strict_unchanged() {
    within(async {
        let mut deep = json!({"type": "string"});
        for _ in 0..11 {
            deep = json!({"type": "object", "properties": {"d": deep}, "required": ["d"]});
        }
        let cases = [
            ("free-form object", json!({"type": "object", "properties": {"meta": {"type": "object"}}})),
            (
                "open object",
                json!({"type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": true}),
            ),
            (
                "oneOf",
                json!({"type": "object", "properties": {"v": {"oneOf": [{"type": "string"}, {"type": "number"}]}}}),
            ),
            ("tuple", json!({"type": "object", "properties": {"p": {"type": "array", "items": [{"type": "string"}]}}})),
            ("array of anything", json!({"type": "object", "properties": {"p": {"type": "array"}}})),
            ("any value", json!({"type": "object", "properties": {"any": {"description": "anything"}}})),
            (
                "no arguments, any object (server-everything's get-env)",
                json!({"$schema": DRAFT7, "type": "object", "properties": {}}),
            ),
            ("external reference", json!({"type": "object", "properties": {"x": {"$ref": "other.json#/a"}}})),
            ("root anyOf", json!({"anyOf": [{"type": "object", "properties": {"a": {"type": "string"}}}]})),
            ("root $ref into a cycle", cycle()),
            ("eleven levels", deep),
        ];
        for (what, schema) in cases {
            let def = one(ToolSpec::new("t").with_parameters(schema.clone()), LlmDialect::OpenAiStrict).await;
            assert_eq!(def["function"]["strict"], false, "{what}: {def:#}");
            let mut expected = tool_system::dialect::clean_schema(&schema);
            expected.as_object_mut().unwrap().entry("type").or_insert(json!("object"));
            assert_eq!(def["function"]["parameters"], expected, "{what}: the ordinary schema");
        }
        // A closed object with no properties is fine: it takes no arguments.
        let closed = json!({"type": "object", "additionalProperties": false});
        let def = one(ToolSpec::new("t").with_parameters(closed), LlmDialect::OpenAiStrict).await;
        assert_eq!(def["function"]["strict"], true);
        assert_eq!(
            def["function"]["parameters"],
            json!({"type": "object", "properties": {}, "required": [], "additionalProperties": false})
        );
    })
    .await;
}

#[tokio::test]
async fn nulls_for_skipped_optional_arguments_never_reach_the_provider() {
    within(async {
        let schema = json!({"type": "object", "properties": {
            "name": {"type": "string"},
            "duration": {"type": "number"},
            "steps": {"type": "number"},
            "note": {"anyOf": [{"type": "string"}, {"type": "null"}]},
            "nested": {"$ref": "#/$defs/inner"},
            "list": {"type": "array", "items": {"type": "object", "properties": {"k": {"type": "string"}}}}},
            "required": ["name"],
            "$defs": {"inner": {"type": "object", "properties": {"inner": {"type": "integer"}}}}});
        let registry = ToolRegistry::new();
        let provider = TestProvider::new("p", vec![ToolSpec::new("op").with_parameters(schema)]);
        registry.register(Arc::clone(&provider)).await;
        let call = ToolInvocation::from_value(
            "op",
            json!({"name": null, "duration": null, "steps": 3, "note": null, "nested": {"inner": null},
                "list": [{"k": null}, {"k": "v"}], "unknown": null}),
        );
        assert!(registry.invoke(call, ctx()).await.success);
        let (seen, _) = provider.last_call().unwrap();
        assert_eq!(
            serde_json::Value::Object(seen.arguments),
            json!({"name": null, "steps": 3, "note": null, "nested": {}, "list": [{}, {"k": "v"}], "unknown": null}),
            "optional nulls the schema refuses are gone; a required one, an accepted one and an unknown one stay"
        );
    })
    .await;
}

#[tokio::test]
async fn a_null_found_only_deep_inside_is_still_dropped_and_calls_without_one_are_untouched() {
    within(async {
        let schema = json!({"type": "object", "properties": {
            "steps": {"type": "number"},
            "list": {"type": "array", "items": {"type": "object", "properties": {"k": {"type": "string"}}}}}});
        let registry = ToolRegistry::new();
        let provider = TestProvider::new("p", vec![ToolSpec::new("op").with_parameters(schema)]);
        registry.register(Arc::clone(&provider)).await;
        for (sent, seen) in [
            (json!({"steps": 3, "list": [{"k": "v"}, {"k": null}]}), json!({"steps": 3, "list": [{"k": "v"}, {}]})),
            (json!({"steps": 3, "list": [{"k": "v"}]}), json!({"steps": 3, "list": [{"k": "v"}]})),
        ] {
            assert!(registry.invoke(ToolInvocation::from_value("op", sent.clone()), ctx()).await.success);
            let (call, _) = provider.last_call().unwrap();
            assert_eq!(serde_json::Value::Object(call.arguments), seen, "sent {sent}");
        }
    })
    .await;
}

#[tokio::test]
async fn gemini_gets_the_openapi_subset_with_references_inlined() {
    within(async {
        let nasty = json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "title": "Args",
            "$defs": {"Address": {"type": "object", "title": "Address", "properties": {
                "city": {"type": "string"},
                "zip": {"type": ["string", "null"], "pattern": "^[0-9]{5}$"}},
                "required": ["city"], "additionalProperties": false}},
            "properties": {
                "$schema": {"type": "string"},
                "home": {"$ref": "#/$defs/Address", "description": "Where you live"},
                "kind": {"const": "person"},
                "level": {"type": "integer", "enum": [1, 2, 3]},
                "id": {"oneOf": [{"type": "string", "format": "uuid"}, {"type": "integer", "format": "int64"}]},
                "note": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": null},
                "both": {"allOf": [
                    {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]},
                    {"properties": {"b": {"type": "number", "exclusiveMinimum": 0}}, "required": ["b"]}]},
                "extra": {"type": "object", "additionalProperties": {"type": "string"}},
                "when": {"type": "string", "format": "date-time"},
                "tags": {"type": "array"},
                "pair": {"type": ["integer", "string"], "minimum": 1, "maxLength": 3}
            },
            "required": ["home", "kind", "missing"],
            "additionalProperties": false
        });
        let def = one(ToolSpec::new("nasty").with_description("A nasty one").with_parameters(nasty), LlmDialect::Gemini)
            .await;
        assert_eq!(
            def,
            json!({
                "name": "everything__nasty",
                "description": "A nasty one",
                "parameters": {
                    "description": "Args",
                    "type": "object",
                    "properties": {
                        "$schema": {"type": "string"},
                        "home": {"type": "object", "description": "Where you live", "properties": {
                            "city": {"type": "string"},
                            "zip": {"type": "string", "nullable": true, "pattern": "^[0-9]{5}$"}},
                            "required": ["city"]},
                        "kind": {"type": "string", "enum": ["person"]},
                        "level": {"type": "integer", "description": "One of: 1, 2, 3."},
                        "id": {"anyOf": [{"type": "string"}, {"type": "integer", "format": "int64"}]},
                        "note": {"type": "string", "nullable": true},
                        "both": {"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "number", "minimum": 0}},
                            "required": ["a", "b"]},
                        "extra": {"type": "object"},
                        "when": {"type": "string", "format": "date-time"},
                        "tags": {"type": "array", "items": {}},
                        "pair": {"anyOf": [{"type": "integer", "minimum": 1}, {"type": "string", "maxLength": 3}]}
                    },
                    "required": ["home", "kind"]
                }
            })
        );

        // The output schema becomes `response`; a tool without arguments has no `parameters`.
        let get_env = ToolSpec::new("get-env").with_parameters(json!({"$schema": DRAFT7, "type": "object", "properties": {}}));
        let defs = definitions(vec![structured_content(), get_env], LlmDialect::Gemini).await;
        assert_eq!(
            defs[0]["response"],
            json!({"type": "object", "properties": {
                "temperature": {"type": "number", "description": "Temperature in celsius"},
                "conditions": {"type": "string", "description": "Weather conditions description"},
                "humidity": {"type": "number", "description": "Humidity percentage"}},
                "required": ["temperature", "conditions", "humidity"]})
        );
        assert_eq!(defs[0]["parameters"]["properties"]["location"]["enum"], json!(["New York", "Chicago", "Los Angeles"]));
        assert_eq!(defs[1], json!({"name": "everything__get-env"}));
    })
    .await;
}

#[tokio::test]
async fn anthropic_gets_input_schema_with_root_combinators_merged() {
    within(async {
        let echo = ToolSpec::new("echo").with_description("Echoes back the input string").with_parameters(json!({
            "$schema": DRAFT7, "type": "object",
            "properties": {"message": {"type": "string", "description": "Message to echo"}}, "required": ["message"]}));
        let either = ToolSpec::new("find").with_parameters(json!({
            "type": "object",
            "properties": {"verbose": {"type": "boolean"}},
            "required": ["verbose"],
            "oneOf": [
                {"properties": {"id": {"type": "string"}, "limit": {"type": "integer"}}, "required": ["id", "limit"]},
                {"properties": {"path": {"type": "string"}, "limit": {"type": "integer", "minimum": 1}},
                    "required": ["path", "limit"]}
            ]
        }));
        let defs = definitions(vec![echo, either], LlmDialect::Anthropic).await;
        assert_eq!(
            defs[0],
            json!({"name": "everything__echo", "description": "Echoes back the input string", "input_schema": {
                "type": "object", "properties": {"message": {"type": "string", "description": "Message to echo"}},
                "required": ["message"]}})
        );
        assert_eq!(
            defs[1],
            json!({"name": "everything__find", "input_schema": {
                "type": "object",
                "properties": {"verbose": {"type": "boolean"}, "id": {"type": "string"}, "limit": {"type": "integer"},
                    "path": {"type": "string"}},
                "required": ["verbose", "limit"]}}),
            "no oneOf at the root; only what every branch requires stays required"
        );
    })
    .await;
}

#[tokio::test]
async fn reference_cycles_and_bombs_terminate_in_every_dialect() {
    within(async {
        for dialect in [LlmDialect::OpenAi, LlmDialect::OpenAiStrict, LlmDialect::Gemini, LlmDialect::Anthropic] {
            for schema in [cycle(), tree(), reference_bomb()] {
                let def = one(ToolSpec::new("t").with_parameters(schema), dialect).await;
                assert!(count_nodes(&def) < 2 * MAX_GEMINI_NODES, "{dialect:?}: {} nodes", count_nodes(&def));
            }
        }
        // Gemini inlines: the cycle is cut where it closes, the tree after one level.
        let cut = |def: &Value| serde_json::to_string(def).unwrap().matches("cut here").count();
        let def = one(ToolSpec::new("t").with_parameters(cycle()), LlmDialect::Gemini).await;
        assert_eq!(def, json!({"name": "everything__t"}), "nothing but the cut is left of the root: no parameters");
        let def = one(ToolSpec::new("t").with_parameters(tree()), LlmDialect::Gemini).await;
        assert_eq!(cut(&def), 1, "{def:#}");
        let children = &def["parameters"]["properties"]["children"]["items"]["properties"]["children"];
        assert_eq!(children["items"], json!({"description": "(a recursive reference to #, cut here)"}));
        let def = one(ToolSpec::new("t").with_parameters(reference_bomb()), LlmDialect::Gemini).await;
        assert!(serde_json::to_string(&def).unwrap().contains("schema cut: too deep or too large"));
        // Strict mode keeps references (OpenAI resolves them, recursion included).
        let def = one(ToolSpec::new("t").with_parameters(tree()), LlmDialect::OpenAiStrict).await;
        assert_eq!(def["function"]["strict"], true);
        assert_eq!(
            def["function"]["parameters"],
            json!({"type": "object", "properties": {"name": {"type": "string"},
                "children": {"type": "array", "items": {"$ref": "#"}}},
                "required": ["name", "children"], "additionalProperties": false})
        );
        let def = one(ToolSpec::new("t").with_parameters(reference_bomb()), LlmDialect::OpenAiStrict).await;
        assert_eq!(def["function"]["strict"], true);
        assert_eq!(def["function"]["parameters"]["$defs"].as_object().unwrap().len(), 41);
    })
    .await;
}

#[tokio::test]
async fn exposed_names_start_with_a_letter_or_underscore_and_still_route() {
    within(async {
        let registry = ToolRegistry::new();
        let provider = TestProvider::new("p", vec![ToolSpec::new("1st"), ToolSpec::new("-dash")]);
        registry.register(Arc::clone(&provider)).await;
        let names: Vec<String> = registry.tools(&ctx()).await.into_iter().map(|t| t.llm_name.into_string()).collect();
        assert_eq!(names, ["_1st", "_-dash"]);
        let def = registry.llm_definitions_for(LlmDialect::Gemini, &ctx()).await;
        assert_eq!(def[0]["name"], "_1st");
        let result = registry.invoke(ToolInvocation::new("_1st", Default::default()), ctx()).await;
        assert_eq!(result.content.as_deref(), Some("p:1st"));
    })
    .await;
}
