use serde_json::json;

use super::*;

fn schema() -> JsonObject {
    json!({"type": "object", "properties": {
        "count": {"type": "integer"},
        "ratio": {"type": "number"},
        "on": {"type": "boolean"},
        "tags": {"type": "array", "items": {"type": "string"}},
        "scores": {"type": "array", "items": {"type": "number"}},
        "opts": {"type": "object"},
        "name": {"type": "string"},
        "maybe": {"type": ["integer", "null"]},
        "either": {"anyOf": [{"type": "string"}, {"type": "boolean"}]},
        "mode": {"enum": ["fast", 3]}
    }, "required": ["name"], "additionalProperties": false})
    .as_object()
    .unwrap()
    .clone()
}

fn pairs(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| s.to_string()).collect()
}

fn coerce(items: &[&str]) -> Result<Value, CoerceError> {
    coerce_pairs(&pairs(items), &schema()).map(Value::Object)
}

#[test]
fn each_type_is_coerced() {
    let v = coerce(&[
        "count=42",
        "ratio=2.5",
        "on=yes",
        "tags=a, b,c",
        "scores=1,2.5",
        r#"opts={"deep": [1]}"#,
        "name=007",
        "maybe=null",
        "either=true",
        "mode=3",
    ])
    .unwrap();
    assert_eq!(
        v,
        json!({"count": 42, "ratio": 2.5, "on": true, "tags": ["a", "b", "c"], "scores": [1, 2.5],
            "opts": {"deep": [1]}, "name": "007", "maybe": null, "either": true, "mode": 3})
    );
    // Whole numbers stay integers for number properties; JSON arrays pass as they are.
    assert_eq!(coerce(&["ratio=3", "tags=[\"x,y\"]"]).unwrap(), json!({"ratio": 3, "tags": ["x,y"]}));
    assert_eq!(coerce(&["tags="]).unwrap(), json!({"tags": []}));
    assert_eq!(coerce(&["on=OFF", "maybe=7", "either=text", "mode=fast"]).unwrap()["on"], false);
    assert_eq!(coerce(&["maybe=7"]).unwrap()["maybe"], 7);
    assert_eq!(coerce(&["either=text"]).unwrap()["either"], "text");
    assert_eq!(coerce(&["mode=fast"]).unwrap()["mode"], "fast");
    assert_eq!(coerce(&["count=-5"]).unwrap()["count"], -5, "negative numbers are values, not flags");
}

#[test]
fn raw_json_pairs_pass_as_they_are() {
    assert_eq!(coerce(&["opts:={\"a\": null}", "name:=\"x\""]).unwrap(), json!({"opts": {"a": null}, "name": "x"}));
    let err = coerce(&["opts:={oops"]).unwrap_err();
    assert!(
        matches!(&err, CoerceError::Json { source_name, line: 1, .. } if source_name == "argument \"opts\""),
        "{err}"
    );
}

#[test]
fn a_wrong_value_names_the_key_the_type_and_the_value() {
    let cases = [
        ("count=1.5", "count", "an integer", "1.5"),
        ("count=many", "count", "an integer", "many"),
        ("ratio=fast", "ratio", "a number", "fast"),
        ("ratio=inf", "ratio", "a number", "inf"),
        ("on=maybe", "on", "a boolean (true or false)", "maybe"),
        ("scores=1,x", "scores", "an array (JSON, or a comma-separated list)", "1,x"),
        ("opts=[1]", "opts", "a JSON object", "[1]"),
        ("maybe=x", "maybe", "null or an integer", "x"),
    ];
    for (pair, key, expected, value) in cases {
        let err = coerce(&[pair]).unwrap_err();
        assert_eq!(
            err,
            CoerceError::WrongType { key: key.into(), expected: expected.into(), value: value.into() },
            "{pair}"
        );
        let text = err.to_string();
        assert!(text.contains(key) && text.contains(expected) && text.contains(value), "{text}");
    }
}

#[test]
fn keys_outside_the_schema() {
    let err = coerce(&["colour=red"]).unwrap_err();
    assert!(
        matches!(&err, CoerceError::UnknownKey { key, known } if key == "colour" && known.starts_with("count, ratio"))
    );
    let open = json!({"type": "object", "properties": {"n": {"type": "integer"}}}).as_object().unwrap().clone();
    let v = coerce_pairs(&pairs(&["n=1", "extra=2"]), &open).unwrap();
    assert_eq!(Value::Object(v), json!({"n": 1, "extra": "2"}), "unknown keys pass as strings");
    let none = json!({"type": "object", "additionalProperties": false}).as_object().unwrap().clone();
    let err = coerce_pairs(&pairs(&["x=1"]), &none).unwrap_err();
    assert_eq!(err.to_string(), r#"unknown argument "x" (the tool takes: no arguments)"#);
}

#[test]
fn malformed_pairs() {
    assert_eq!(coerce(&["name"]).unwrap_err(), CoerceError::NotAPair("name".into()));
    assert_eq!(coerce(&["=x"]).unwrap_err(), CoerceError::EmptyKey("=x".into()));
    assert_eq!(coerce(&["name=a", "name=b"]).unwrap_err(), CoerceError::DuplicateKey("name".into()));
    // Only the first '=' splits: the value keeps the others.
    assert_eq!(coerce(&["name=a=b"]).unwrap()["name"], "a=b");
}

#[test]
fn args_come_inline_from_a_file_or_from_stdin() {
    let empty: &[u8] = b"";
    assert_eq!(ArgsSource::parse(r#"{"a": 1}"#).load(empty).unwrap()["a"], 1);
    assert_eq!(ArgsSource::parse("-").load(&b"{\"b\": [true]}"[..]).unwrap()["b"], json!([true]));

    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("args.json");
    std::fs::write(&file, "{\n  \"c\": \"x\"\n}\n").unwrap();
    let spec = format!("@{}", file.display());
    assert_eq!(ArgsSource::parse(&spec).load(empty).unwrap()["c"], "x");

    let missing = format!("@{}", dir.path().join("nope.json").display());
    let err = ArgsSource::parse(&missing).load(empty).unwrap_err();
    assert!(err.to_string().contains("no such file") && err.to_string().contains("nope.json"), "{err}");
}

#[test]
fn bad_args_json_names_line_and_column() {
    let empty: &[u8] = b"";
    let err = ArgsSource::parse("{\"a\": 1,\n  \"b\": }").load(empty).unwrap_err();
    let CoerceError::Json { source_name, line, column, message } = &err else { panic!("{err:?}") };
    assert_eq!((source_name.as_str(), *line, *column), ("--args", 2, 8));
    assert!(!message.contains("at line"), "the position is not repeated: {message}");
    assert_eq!(err.to_string(), format!("--args: JSON does not parse at line 2, column 8: {message}"));

    let err = ArgsSource::parse("[1, 2]").load(empty).unwrap_err();
    assert_eq!(err.to_string(), "--args must be a JSON object, got an array");
    let err = ArgsSource::parse("-").load(&b"\"text\""[..]).unwrap_err();
    assert_eq!(err.to_string(), "--args - (stdin) must be a JSON object, got a string");
    let err = ArgsSource::parse("-").load(&[0xff, 0xfe][..]).unwrap_err();
    assert!(err.to_string().contains("not UTF-8"), "{err}");
}

#[test]
fn build_merges_args_and_pairs_and_checks_required_keys() {
    let empty: &[u8] = b"";
    let built = build_arguments(Some(r#"{"name": "a", "count": 1}"#), &pairs(&["count=2"]), &schema(), empty).unwrap();
    assert_eq!(Value::Object(built), json!({"name": "a", "count": 2}), "pairs win over --args");
    let err = build_arguments(None, &pairs(&["count=2"]), &schema(), empty).unwrap_err();
    assert_eq!(err, CoerceError::MissingRequired { key: "name".into() });
    assert_eq!(err.to_string(), "missing required argument \"name\" (give it as name=VALUE)");
}

#[test]
fn prompt_arguments_stay_strings() {
    let args = string_pairs(&pairs(&["code=fn main() {}", "language=rust"])).unwrap();
    assert_eq!(args["code"], "fn main() {}");
    assert!(string_pairs(&pairs(&["oops"])).is_err());
}
