use std::io::ErrorKind;
use std::net::TcpListener;

use mcp_protocol::types::content::ContentBlock;
use serde_json::json;
use tool_system::{ContentItem, ResourceBody};

use super::*;

fn object(value: Value) -> JsonObject {
    match value {
        Value::Object(map) => map,
        other => panic!("not an object: {other}"),
    }
}

fn tool(value: Value) -> Tool {
    serde_json::from_value(value).unwrap()
}

fn call_result(value: Value) -> CallToolResult {
    serde_json::from_value(value).unwrap()
}

fn cx() -> ResultOrigin {
    ResultOrigin::new(Some("weather".into()), "forecast").with_protocol_version("2025-06-18").with_session_id("s-9")
}

fn compile(schema: Value) -> Result<SchemaCheck, String> {
    SchemaCheck::compile(&object(schema))
}

#[test]
fn tool_spec_maps_every_field() {
    let mcp = tool(json!({
        "name": "forecast",
        "description": "Weather forecast",
        "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}}},
        "outputSchema": {"type": "object", "properties": {"temperature": {"type": "number"}}},
        "annotations": {
            "title": "Forecast (annotation)",
            "readOnlyHint": true,
            "destructiveHint": false,
            "idempotentHint": true,
            "openWorldHint": true,
            "audience": ["user", "assistant"],
            "priority": 0.5,
            "vendorHint": "x"
        },
        "execution": {"taskSupport": "optional"},
        "icons": [{"src": "https://example.org/i.png", "mimeType": "image/png", "sizes": ["48x48"], "theme": "dark"}],
        "_meta": {"server_name": "evil", "vendor/id": 7}
    }));
    let spec = tool_spec("weather", &mcp, ToolVisibility::Deferred);
    assert_eq!(spec.name, "forecast");
    assert_eq!(spec.title.as_deref(), Some("Forecast (annotation)"));
    assert_eq!(spec.description.as_deref(), Some("Weather forecast"));
    // Building the spec neither copied nor parsed the schema: a host listing thousands of tools
    // keeps each once, and parses only those it reads.
    assert!(!mcp.input_schema.is_parsed(), "building the spec parsed the schema");
    assert_eq!(*spec.parameters, json!({"type": "object", "properties": {"city": {"type": "string"}}}));
    assert!(mcp.input_schema.is_parsed());
    assert!(std::ptr::eq(&*spec.parameters, mcp.input_schema.as_value()), "the schema was copied");
    // And the spec holds the schema's own cell, not a wrapper of its own around a clone (one
    // allocation less for each of a host's thousands of tools).
    let cell = tool_system::ToolParameters::from_source(mcp.input_schema.value_source());
    assert!(spec.parameters.ptr_eq(&cell), "the spec wrapped the schema in an allocation of its own");
    assert_eq!(
        spec.output_schema.as_deref(),
        Some(&json!({"type": "object", "properties": {"temperature": {"type": "number"}}}))
    );
    assert_eq!(
        spec.icons,
        vec![ToolIcon {
            src: "https://example.org/i.png".into(),
            mime_type: Some("image/png".into()),
            sizes: vec!["48x48".into()]
        }]
    );
    let annotation = spec.annotation.clone().unwrap();
    assert_eq!(annotation.title.as_deref(), Some("Forecast (annotation)"));
    assert_eq!(annotation.read_only_hint, Some(true));
    assert_eq!(annotation.destructive_hint, Some(false));
    assert_eq!(annotation.idempotent_hint, Some(true));
    assert_eq!(annotation.open_world_hint, Some(true));
    assert_eq!(annotation.audience, ["user", "assistant"]);
    assert_eq!(annotation.priority, Some(0.5));
    assert_eq!(Value::Object(annotation.metadata), json!({"vendorHint": "x"}));
    assert_eq!((spec.provider_name.as_str(), spec.provider_type.as_str()), ("mcp", "mcp"));
    assert_eq!(spec.namespace.as_deref(), Some("weather"));
    // The specs of one server share its name's buffer (the routing table hands each route the
    // server's), and every MCP spec shares one buffer for "mcp".
    let server = tool_system::SharedText::from("weather");
    let (one, two) = (
        tool_spec(server.clone(), &mcp, ToolVisibility::Visible),
        tool_spec(server.clone(), &mcp, ToolVisibility::Visible),
    );
    assert!(one.namespace.as_ref().is_some_and(|n| n.shares_buffer_with(&server)));
    assert!(two.namespace.as_ref().is_some_and(|n| n.shares_buffer_with(&server)));
    assert!(one.provider_name.shares_buffer_with(&spec.provider_name));
    assert!(one.provider_type.shares_buffer_with(&two.provider_name));
    assert_eq!(spec.visibility, ToolVisibility::Deferred);
    assert_eq!(
        Value::Object(spec.metadata.into_map()),
        json!({
            "_meta": {"server_name": "evil", "vendor/id": 7},
            "execution": {"taskSupport": "optional"}
        }),
        "the server is the namespace, not repeated in the metadata; a server's own _meta stays under _meta"
    );
}

#[test]
fn tool_spec_of_a_minimal_tool() {
    let mcp = tool(json!({"name": "ping", "title": "Ping", "inputSchema": {"type": "object"}}));
    let spec = tool_spec("net", &mcp, ToolVisibility::Visible);
    assert_eq!(spec.title.as_deref(), Some("Ping"));
    assert_eq!(spec.description, None);
    assert_eq!(spec.output_schema, None);
    assert!(spec.icons.is_empty());
    assert_eq!(spec.annotation, None);
    assert_eq!(spec.namespace.as_deref(), Some("net"));
    assert!(spec.metadata.is_empty(), "{:?}", spec.metadata);
}

#[test]
fn annotation_audience_and_priority_from_nested_meta() {
    let mcp = tool(json!({
        "name": "t",
        "inputSchema": {"type": "object"},
        "annotations": {"_meta": {"audience": ["user"], "priority": 1}, "audience": "not-a-list"}
    }));
    let annotation = tool_spec("s", &mcp, ToolVisibility::Visible).annotation.unwrap();
    assert_eq!(annotation.audience, ["user"]);
    assert_eq!(annotation.priority, Some(1.0));
    assert_eq!(annotation.title, None);
    // A member of the wrong shape is kept where it was, not lost.
    assert_eq!(annotation.metadata["audience"], "not-a-list");
    assert!(annotation.metadata.contains_key("_meta"));
}

#[test]
fn every_content_block_is_kept() {
    let result = call_result(json!({
        "content": [
            {"type": "text", "text": "first", "annotations": {"audience": ["user"]}, "_meta": {"k": 1}},
            {"type": "image", "data": "aGVsbG8=", "mimeType": "image/png"},
            {"type": "audio", "data": "AAAA", "mimeType": "audio/wav"},
            {"type": "resource_link", "uri": "file:///a.txt", "name": "a", "size": 3, "icons": [{"src": "i.png"}]},
            {"type": "resource", "resource": {"uri": "file:///b.txt", "mimeType": "text/plain", "text": "bee", "_meta": {"r": 1}}},
            {"type": "resource", "resource": {"uri": "file:///c.bin", "blob": "AAEC"}},
            {"type": "tool_use", "id": "u1", "name": "x", "input": {}},
            {"type": "hologram", "beam": 3, "annotations": {"priority": 1}},
            {"type": "text", "text": "second"}
        ],
        "structuredContent": {"ok": true},
        "_meta": {"trace": "t-1"},
        "vendorExtra": 5
    }));
    let out = tool_result(result, None, cx());
    assert!(out.success);
    assert_eq!(out.content.as_deref(), Some("first\nsecond"));
    assert_eq!(out.structured_content, Some(json!({"ok": true})));
    assert_eq!(out.items.len(), 9);

    let ContentItem::Text(text) = &out.items[0] else { panic!("{:?}", out.items[0]) };
    assert_eq!(text.annotations, Some(json!({"audience": ["user"]})));
    assert_eq!(Value::Object(text.metadata.clone().into_map()), json!({"_meta": {"k": 1}}));
    assert_eq!(out.items[1], ContentItem::image("aGVsbG8=", "image/png"));
    assert_eq!(out.items[2], ContentItem::audio("AAAA", "audio/wav"));
    let ContentItem::ResourceLink(link) = &out.items[3] else { panic!("{:?}", out.items[3]) };
    assert_eq!((link.uri.as_str(), link.name.as_str(), link.size), ("file:///a.txt", "a", Some(3)));
    assert_eq!(link.metadata["icons"], json!([{"src": "i.png"}]));
    let ContentItem::EmbeddedResource(text_resource) = &out.items[4] else { panic!("{:?}", out.items[4]) };
    assert_eq!(text_resource.body, ResourceBody::Text("bee".into()));
    assert_eq!(text_resource.mime_type.as_deref(), Some("text/plain"));
    assert_eq!(text_resource.metadata["resource_meta"], json!({"r": 1}));
    let ContentItem::EmbeddedResource(blob) = &out.items[5] else { panic!("{:?}", out.items[5]) };
    assert_eq!((blob.uri.as_str(), &blob.body), ("file:///c.bin", &ResourceBody::Blob("AAEC".into())));
    let ContentItem::Unknown(tool_use) = &out.items[6] else { panic!("{:?}", out.items[6]) };
    assert_eq!(tool_use.type_name, "tool_use");
    assert_eq!(tool_use.raw, json!({"type": "tool_use", "id": "u1", "name": "x", "input": {}}));
    let ContentItem::Unknown(unknown) = &out.items[7] else { panic!("{:?}", out.items[7]) };
    assert_eq!(unknown.type_name, "hologram");
    assert_eq!(unknown.raw, json!({"type": "hologram", "beam": 3, "annotations": {"priority": 1}}));
    assert_eq!(unknown.annotations, Some(json!({"priority": 1})));

    assert_eq!(Value::Object(out.metadata.into_map()), json!({"_meta": {"trace": "t-1"}, "extra": {"vendorExtra": 5}}));
    assert_eq!(out.origin, Some(cx()), "where the result came from is its origin, not metadata keys");
    // Either alone is kept too.
    let only_extra = tool_result(call_result(json!({"content": [], "vendorExtra": 5})), None, cx());
    assert_eq!(Value::Object(only_extra.metadata.into_map()), json!({"extra": {"vendorExtra": 5}}));
    let only_meta = tool_result(call_result(json!({"content": [], "_meta": {"trace": "t-2"}})), None, cx());
    assert_eq!(Value::Object(only_meta.metadata.into_map()), json!({"_meta": {"trace": "t-2"}}));
}

#[test]
fn a_tool_result_block_becomes_unknown() {
    let block = ContentBlock::ToolResult(serde_json::from_value(json!({"toolUseId": "u1", "content": []})).unwrap());
    let out = tool_result(CallToolResult { content: vec![block], ..Default::default() }, None, cx());
    let ContentItem::Unknown(item) = &out.items[0] else { panic!("{:?}", out.items[0]) };
    assert_eq!(item.type_name, "tool_result");
    assert_eq!(item.raw["toolUseId"], "u1");
    assert_eq!(out.content, None);
}

#[test]
fn is_error_gives_a_failed_result_with_the_text() {
    let result = call_result(json!({"content": [{"type": "text", "text": "city not found"}], "isError": true}));
    let out = tool_result(result, None, cx());
    assert!(!out.success);
    assert_eq!(out.error_message.as_deref(), Some("city not found"));
    assert_eq!(out.content.as_deref(), Some("city not found"));

    let silent =
        call_result(json!({"content": [{"type": "image", "data": "", "mimeType": "image/png"}], "isError": true}));
    let out = tool_result(silent, None, ResultOrigin { session_id: None, ..cx() });
    assert!(!out.success);
    assert_eq!(
        out.error_message.as_deref(),
        Some("tool `forecast` on server `weather` reported an error without a message")
    );
    assert_eq!(out.items.len(), 1);
    let origin = out.origin.expect("an origin");
    assert_eq!((origin.session_id, origin.protocol_version.as_deref()), (None, Some("2025-06-18")));
    assert!(out.metadata.is_empty(), "{:?}", out.metadata);
}

#[test]
fn structured_content_is_checked_against_the_output_schema() {
    let check = compile(json!({
        "type": "object",
        "properties": {"temperature": {"type": "number"}},
        "required": ["temperature"]
    }))
    .unwrap();
    let good = call_result(json!({"content": [], "structuredContent": {"temperature": 21.5}}));
    assert!(tool_result(good, Some(&check), cx()).success);

    let bad =
        call_result(json!({"content": [{"type": "text", "text": "hot"}], "structuredContent": {"temperature": "hot"}}));
    let out = tool_result(bad, Some(&check), ResultOrigin { tool: "x".into(), ..cx() });
    assert!(!out.success);
    assert_eq!(
        out.error_message.as_deref(),
        Some(
            "structured content of tool `x` on server `weather` does not match its outputSchema at /temperature: \"hot\" is \
             not of type \"number\""
        )
    );
    assert_eq!(out.structured_content, Some(json!({"temperature": "hot"})));
    assert_eq!(out.content.as_deref(), Some("hot"));

    let missing = call_result(json!({"content": [{"type": "text", "text": "21.5"}]}));
    let out = tool_result(missing, Some(&check), cx());
    assert!(!out.success);
    assert_eq!(
        out.error_message.as_deref(),
        Some("tool `forecast` on server `weather` declares an outputSchema but returned no structuredContent")
    );

    // A tool error is not held to the output schema.
    let error = call_result(json!({"content": [{"type": "text", "text": "upstream down"}], "isError": true}));
    assert_eq!(tool_result(error, Some(&check), cx()).error_message.as_deref(), Some("upstream down"));
}

#[test]
fn history_text_holds_text_and_an_embedded_resource() {
    let result = call_result(json!({"content": [
        {"type": "text", "text": "Here it is:"},
        {"type": "resource", "resource": {"uri": "file:///n.txt", "text": "KEY=42"}}
    ]}));
    let out = tool_result(result, None, cx());
    assert!(out.success);
    assert_eq!(out.history_text(), "Here it is:\n[resource: file:///n.txt]\nKEY=42");
}

#[test]
fn history_text_skips_blank_text_blocks() {
    let result = call_result(json!({"content": [
        {"type": "text", "text": " \n "},
        {"type": "resource_link", "uri": "file:///r.csv", "name": "r.csv", "mimeType": "text/csv"},
        {"type": "text", "text": ""},
        {"type": "text", "text": "done"}
    ]}));
    let out = tool_result(result, None, cx());
    assert_eq!(out.history_text(), "[resource link: r.csv <file:///r.csv>, text/csv]\ndone");

    // The same for an error: its message is the text that is there.
    let result = call_result(json!({"content": [
        {"type": "text", "text": "  "},
        {"type": "text", "text": "quota exceeded"}
    ], "isError": true}));
    let out = tool_result(result, None, cx());
    assert_eq!(out.error_message.as_deref(), Some("quota exceeded"));
    assert_eq!(out.history_text(), "Error: quota exceeded");
}

#[test]
fn an_error_without_text_gives_its_structured_content() {
    let result =
        call_result(json!({"content": [], "structuredContent": {"code": 429, "retryAfter": 30}, "isError": true}));
    let out = tool_result(result, None, cx());
    assert!(!out.success);
    let message = "tool `forecast` on server `weather` reported an error with structured content but no text";
    assert_eq!(out.error_message.as_deref(), Some(message));
    assert_eq!(out.history_text(), format!("Error: {message}\n{{\"code\":429,\"retryAfter\":30}}"));

    // With text, the text is the message and the structured content follows it.
    let result = call_result(json!({
        "content": [{"type": "text", "text": "rate limited"}],
        "structuredContent": {"code": 429},
        "isError": true
    }));
    assert_eq!(tool_result(result, None, cx()).history_text(), "Error: rate limited\n{\"code\":429}");
}

#[test]
fn an_output_schema_failure_says_what_failed_with_the_structured_content() {
    let check = compile(json!({"type": "object", "required": ["temperature"]})).unwrap();
    let result = call_result(json!({
        "content": [{"type": "text", "text": "It is warm."}],
        "structuredContent": {"temp": 21}
    }));
    let out = tool_result(result, Some(&check), cx());
    assert!(!out.success);
    assert_eq!(
        out.history_text(),
        "Error: structured content of tool `forecast` on server `weather` does not match its outputSchema at the \
         root: \"temperature\" is a required property\nIt is warm.\n{\"temp\":21}"
    );
}

#[test]
fn check_arguments_names_the_tool_and_path() {
    let check = compile(json!({
        "type": "object",
        "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
        "required": ["a", "b"]
    }))
    .unwrap();
    assert_eq!(check_arguments(&check, "add", &object(json!({"a": 1, "b": 2}))), Ok(()));
    assert_eq!(
        check_arguments(&check, "add", &object(json!({"a": 1, "b": "x"}))),
        Err("arguments of tool `add` do not match its inputSchema at /b: \"x\" is not of type \"number\"".into())
    );
    let missing = check_arguments(&check, "add", &object(json!({"a": 1}))).unwrap_err();
    assert_eq!(
        missing,
        "arguments of tool `add` do not match its inputSchema at the root: \"b\" is a required property"
    );
}

#[test]
fn a_check_reports_the_first_problems_and_counts_the_rest() {
    let check = compile(json!({"type": "array", "items": {"type": "string"}})).unwrap();
    let error = check.check(&json!([1, 2, 3, 4, 5])).unwrap_err();
    assert!(error.starts_with("at /0: 1 is not of type \"string\"; at /1: "), "{error}");
    assert!(error.ends_with(" (and 2 more problems)"), "{error}");
    assert!(!check.is_valid(&json!([1])));
    assert!(check.is_valid(&json!(["a"])));

    let long = "y".repeat(10_000);
    let error = compile(json!({"type": "number"})).unwrap().check(&json!(long)).unwrap_err();
    assert!(error.len() < 400, "a long value is cut: {} bytes", error.len());
    assert!(error.ends_with("..."));
}

#[test]
fn invalid_schemas_do_not_compile() {
    let error = compile(json!({"type": "object", "properties": {"a": {"type": "strin"}}})).unwrap_err();
    assert!(error.starts_with("invalid JSON Schema at /properties/a/type: "), "{error}");
    let error = compile(json!({"$ref": "#/$defs/missing"})).unwrap_err();
    assert!(error.contains("#/$defs/missing") || error.contains("missing"), "{error}");
    let error = compile(json!({"type": "string", "pattern": "(unclosed"})).unwrap_err();
    assert!(error.starts_with("invalid JSON Schema"), "{error}");
    // Each dialect's schemas are checked against its own meta-schema (jsonschema's validators of
    // the meta-schemas are generated at build time): draft-07 and 2019-09 as well as 2020-12.
    for dialect in ["http://json-schema.org/draft-07/schema#", "https://json-schema.org/draft/2019-09/schema"] {
        let error = compile(json!({"$schema": dialect, "properties": {"n": {"minimum": "one"}}})).unwrap_err();
        assert!(error.starts_with("invalid JSON Schema at /properties/n/minimum: "), "{dialect}: {error}");
    }
    let error = compile(json!({"properties": {"n": {"required": "x"}}})).unwrap_err();
    assert!(error.starts_with("invalid JSON Schema at /properties/n/required: "), "{error}");
}

#[test]
fn local_references_and_dialects_work() {
    let check = compile(json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$defs": {"point": {"type": "object", "required": ["x"]}},
        "type": "object",
        "properties": {"p": {"$ref": "#/$defs/point"}}
    }))
    .unwrap();
    assert!(check.is_valid(&json!({"p": {"x": 1}})));
    assert_eq!(check.check(&json!({"p": {}})), Err("at /p: \"x\" is a required property".into()));

    let draft7 = compile(json!({
        "$schema": "http://json-schema.org/draft-07/schema#",
        "definitions": {"n": {"type": "integer"}},
        "properties": {"n": {"$ref": "#/definitions/n"}}
    }))
    .unwrap();
    assert!(!draft7.is_valid(&json!({"n": 1.5})));

    // An unknown dialect is not fetched: the MCP default (2020-12) applies.
    let unknown = compile(json!({"$schema": "http://127.0.0.1:1/dialect", "type": "integer"})).unwrap();
    assert!(unknown.is_valid(&json!(3)));
    assert!(!unknown.is_valid(&json!("3")));
}

#[test]
fn external_references_are_never_fetched() {
    // A listener that records whether anyone connected: nothing may.
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    for reference in [
        "http://127.0.0.1:1/x.json".to_owned(),
        format!("http://127.0.0.1:{port}/schema.json"),
        format!("https://127.0.0.1:{port}/schema.json#/$defs/a"),
        "file:///etc/hostname".to_owned(),
        "other.json".to_owned(),
    ] {
        let error = compile(json!({"type": "object", "properties": {"a": {"$ref": reference}}})).unwrap_err();
        assert!(error.starts_with("invalid JSON Schema"), "{reference}: {error}");
        let document = reference.split('#').next().unwrap();
        let shown = error.contains(document) || error.contains(&format!("urn:{document}"));
        assert!(shown || error.contains("not fetched"), "{reference}: {error}");
    }
    match listener.accept() {
        Err(err) if err.kind() == ErrorKind::WouldBlock => {}
        other => panic!("a schema reference reached the network: {other:?}"),
    }
}

#[test]
fn hostile_patterns_are_bounded() {
    let check = compile(json!({"type": "string", "pattern": "^(a+)+$"})).unwrap();
    let hostile = format!("{}!", "a".repeat(64));
    // fancy-regex gives up after its backtracking budget; the value is then not accepted.
    assert!(!check.is_valid(&json!(hostile)));
    assert!(check.is_valid(&json!("aaaa")));
}

#[test]
fn schema_checks_are_shareable() {
    fn assert_send_sync<T: Send + Sync + Clone + 'static>() {}
    assert_send_sync::<SchemaCheck>();
    let check = compile(json!({"type": "string"})).unwrap();
    assert_eq!(format!("{check:?}"), "SchemaCheck { .. }");
}

#[test]
fn a_schema_every_object_matches_checks_as_its_validator_does() {
    let every_object = [
        json!({"type": "object"}),
        json!({"properties": {}, "type": "object"}),
        json!({"type": "object", "properties": {}, "title": "NoArguments", "description": "none"}),
        json!({"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object", "properties": {}}),
        // What server-everything lists for each of its tools without parameters.
        json!({"$schema": "http://json-schema.org/draft-07/schema#", "properties": {}, "type": "object"}),
        json!({"$schema": "http://json-schema.org/draft-04/schema#", "type": "object"}),
        json!({"$schema": "https://example.org/a-dialect-we-do-not-know", "type": "object"}),
    ];
    // Schemas that look alike but constrain more, or are not valid: checked by the validator.
    let others = [
        json!({"type": "object", "properties": {}, "additionalProperties": false}),
        json!({"type": "object", "properties": {"a": {"type": "string"}}}),
        json!({"type": "object", "required": ["a"]}),
        json!({"type": "object", "maxProperties": 1}),
        json!({"type": ["object", "null"]}),
        json!({"properties": {}}),
        json!({"type": "object", "title": 5}),
    ];
    let values = [
        json!({}),
        json!({"a": 1}),
        json!({"a": "x", "b": {"c": [1, 2]}}),
        json!(null),
        json!(1.5),
        json!("text"),
        json!([{}]),
        json!(true),
    ];
    for schema in every_object.iter().chain(&others) {
        let mut plain = schema.clone();
        if let Some(map) = plain.as_object_mut()
            && map.get("$schema").is_some_and(|s| s.as_str().is_some_and(|s| s.contains("example.org")))
        {
            map.remove("$schema");
        }
        let validator = jsonschema::validator_for(&plain);
        let check = compile(schema.clone());
        let (validator, check) = match (validator, check) {
            (Ok(validator), Ok(check)) => (validator, check),
            (Err(_), Err(error)) => {
                assert!(error.starts_with("invalid JSON Schema"), "{schema}: {error}");
                continue;
            }
            (validator, check) => {
                panic!("{schema}: the validator {:?}, our check {:?}", validator.is_ok(), check.is_ok())
            }
        };
        for value in &values {
            let errors: Vec<(String, String)> =
                validator.iter_errors(value).map(|e| (e.instance_path().as_str().to_owned(), e.to_string())).collect();
            let problems: Vec<String> = errors
                .iter()
                .map(|(path, e)| if path.is_empty() { e.clone() } else { format!("{path}: {e}") })
                .collect();
            assert_eq!(check.is_valid(value), errors.is_empty(), "{schema} {value}");
            assert_eq!(check.problems(value, 10), problems, "{schema} {value}");
            match (check.check(value), errors.first()) {
                (Ok(()), None) => {}
                (Err(problem), Some((path, e))) => {
                    let at = if path.is_empty() { "the root" } else { path };
                    assert!(problem.starts_with(&format!("at {at}: {e}")), "{schema} {value}: {problem}");
                }
                (outcome, first) => panic!("{schema} {value}: {outcome:?} where the validator gives {first:?}"),
            }
        }
    }
    // Every object matches the first schemas, and nothing else does.
    let check = compile(every_object[1].clone()).unwrap();
    assert!(values.iter().all(|value| check.is_valid(value) == value.is_object()));
    assert_eq!(
        check.check(&json!([1])).unwrap_err(),
        r#"at the root: [1] is not of type "object""#,
        "a value that is not an object is described as the validator describes it"
    );
}
