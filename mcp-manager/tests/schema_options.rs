//! `SchemaCheck::compile_with` and `SchemaCheck::problems`, the API that elicitation forms use
//! to check an answer as tool schemas are checked: the same screening and dialect fallback, with
//! `format` checked on request and every problem listed.

use mcp_manager::manager::convert::{SchemaCheck, SchemaError, SchemaOptions};
use mcp_protocol::types::meta::JsonObject;
use serde_json::{Value, json};

fn object(value: Value) -> JsonObject {
    match value {
        Value::Object(map) => map,
        other => panic!("not an object: {other}"),
    }
}

const FORMATS: SchemaOptions = SchemaOptions { check_formats: true };

#[test]
fn formats_are_checked_only_when_asked() {
    let schema = object(json!({"type": "object", "properties": {"mail": {"type": "string", "format": "email"}}}));
    let bad = json!({"mail": "not-an-email"});
    assert!(SchemaCheck::compile(&schema).unwrap().is_valid(&bad), "tool schemas: format is an annotation");
    let check = SchemaCheck::compile_with(&schema, FORMATS).unwrap();
    let problems = check.problems(&bad, 10);
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert!(problems[0].starts_with("/mail: ") && problems[0].contains("email"), "{problems:?}");
    assert!(check.problems(&json!({"mail": "ada@example.com"}), 10).is_empty());
}

#[test]
fn problems_are_listed_up_to_the_limit_with_their_paths() {
    let schema = object(json!({"type": "object", "required": ["a"], "properties": {
        "b": {"type": "integer"}, "c": {"type": "string", "maxLength": 1}}}));
    let check = SchemaCheck::compile_with(&schema, SchemaOptions::default()).unwrap();
    let value = json!({"b": "x", "c": "long"});
    let all = check.problems(&value, 10);
    assert_eq!(all.len(), 3, "{all:?}");
    assert!(all.iter().any(|p| p.contains("\"a\"") && !p.starts_with('/')), "the root's problem has no path: {all:?}");
    assert!(all.iter().any(|p| p.starts_with("/b: ")) && all.iter().any(|p| p.starts_with("/c: ")), "{all:?}");
    assert_eq!(check.problems(&value, 2).len(), 2);
}

#[test]
fn refused_and_invalid_schemas_are_told_apart() {
    let cycle = object(json!({"$defs": {"a": {"$ref": "#/$defs/a"}}, "$ref": "#/$defs/a"}));
    match SchemaCheck::compile_with(&cycle, FORMATS) {
        Err(SchemaError::Refused(reason)) => assert!(reason.contains("cycle"), "{reason}"),
        other => panic!("expected a refusal, got {other:?}"),
    }
    let invalid = object(json!({"type": "strin"}));
    match SchemaCheck::compile_with(&invalid, FORMATS) {
        Err(e @ SchemaError::Invalid(_)) => assert!(e.to_string().starts_with("invalid JSON Schema"), "{e}"),
        other => panic!("expected an invalid schema, got {other:?}"),
    }
    let err = SchemaCheck::compile(&cycle).unwrap_err();
    assert!(err.starts_with("refused: "), "compile keeps its message: {err}");
}

#[test]
fn an_unknown_dialect_is_checked_as_the_default_one() {
    let schema =
        object(json!({"$schema": "https://example.com/mine", "type": "object", "properties": {"n": {"minLength": 2}}}));
    let check = SchemaCheck::compile_with(&schema, FORMATS).expect("compiles without fetching the dialect");
    assert_eq!(check.problems(&json!({"n": "x"}), 10).len(), 1);
}
