//! Property tests of the content conversion: a `tools/call` result ([`CallToolResult`]) as the
//! host sees it ([`ToolExecutionResult`], made by [`convert::tool_result`]).
//!
//! - any JSON, and any mutation of a result's wire text, either fails to decode (an error) or
//!   converts without panicking;
//! - one item per block, of the matching kind, in order; the text is the text blocks joined
//!   with `\n`; `isError` fails the result with a message; the structured content is kept; the
//!   server cannot change where the result came from (its origin);
//! - what comes out is bounded by what went in (text, and the error message).
//!
//! Each property runs a modest number of cases (CI runs them with a fixed seed, see `cargo xtask
//! ci`); `PROPTEST_CASES` and `PROPTEST_RNG_SEED` override both (`cargo xtask fuzz convert`).

use mcp_manager::manager::convert::{self, SchemaCheck};
use mcp_protocol::types::content::ContentBlock;
use mcp_protocol::types::tools::CallToolResult;
use proptest::collection::vec;
use proptest::option;
use proptest::prelude::*;
use serde_json::{Map, Value, json};
use tool_system::{ContentItem, ResultOrigin, ToolExecutionResult};

/// This file's configuration: `cases` unless `PROPTEST_CASES` says otherwise.
fn config(cases: u32) -> ProptestConfig {
    let mut config = ProptestConfig::default();
    if std::env::var_os("PROPTEST_CASES").is_none() {
        config.cases = cases;
    }
    config
}

fn origin() -> ResultOrigin {
    ResultOrigin::new(Some("srv".into()), "tl").with_protocol_version("2025-06-18").with_session_id("sess")
}

fn text() -> impl Strategy<Value = String> {
    prop_oneof![3 => "[a-z \n]{0,12}", 1 => any::<String>(), 1 => Just(String::new())]
}

fn json_leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        (-1000i32..1000).prop_map(|n| Value::from(f64::from(n) / 8.0)),
        text().prop_map(Value::String),
    ]
}

fn json() -> impl Strategy<Value = Value> {
    json_leaf().prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            vec(inner.clone(), 0..4).prop_map(Value::Array),
            vec((prop_oneof!["[a-z_]{0,6}", Just("type".to_owned()), Just("_meta".to_owned())], inner), 0..4)
                .prop_map(|kv| Value::Object(kv.into_iter().collect())),
        ]
    })
}

/// Members a block may carry on top of its own: `_meta`, annotations, unknown ones, and the
/// names of what the conversion records about the result's origin.
fn extras() -> impl Strategy<Value = Map<String, Value>> {
    let key = prop_oneof![
        Just("_meta".to_owned()),
        Just("annotations".to_owned()),
        Just("server_name".to_owned()),
        Just("tool_name".to_owned()),
        Just("origin".to_owned()),
        "x-[a-z]{0,4}",
    ];
    vec((key, json()), 0..3).prop_map(|kv| kv.into_iter().collect())
}

/// A content block as a server might send it: every kind, well-formed or not.
fn block() -> impl Strategy<Value = Value> {
    let kind = prop_oneof![
        Just("text"),
        Just("image"),
        Just("audio"),
        Just("resource_link"),
        Just("resource"),
        Just("tool_use"),
        Just("tool_result"),
        Just("x-unknown"),
    ];
    (kind, text(), text(), extras(), any::<bool>()).prop_map(|(kind, a, b, extras, blob)| {
        let mut block = match kind {
            "text" => json!({"type": "text", "text": a}),
            "image" | "audio" => json!({"type": kind, "data": "aGk=", "mimeType": b}),
            "resource_link" => json!({"type": "resource_link", "uri": a, "name": b}),
            "resource" if blob => json!({"type": "resource", "resource": {"uri": a, "blob": "aGk="}}),
            "resource" => json!({"type": "resource", "resource": {"uri": a, "text": b}}),
            "tool_use" => json!({"type": "tool_use", "id": a, "name": b, "input": {}}),
            "tool_result" => json!({"type": "tool_result", "toolUseId": a, "content": [{"type": "text", "text": b}]}),
            _ => json!({"type": kind, "a": a}),
        };
        let members = block.as_object_mut().expect("an object");
        for (k, v) in extras {
            members.entry(k).or_insert(v);
        }
        block
    })
}

/// A `tools/call` result as JSON.
fn result_json() -> impl Strategy<Value = Value> {
    (vec(block(), 0..6), option::of(json()), option::of(any::<bool>()), option::of(json()), extras()).prop_map(
        |(content, structured, is_error, meta, extras)| {
            let mut result = Map::new();
            result.insert("content".into(), Value::Array(content));
            if let Some(structured) = structured {
                result.insert("structuredContent".into(), structured);
            }
            if let Some(is_error) = is_error {
                result.insert("isError".into(), Value::Bool(is_error));
            }
            if let Some(meta) = meta {
                result.insert("_meta".into(), meta);
            }
            for (k, v) in extras {
                result.entry(k).or_insert(v);
            }
            Value::Object(result)
        },
    )
}

fn same_kind(block: &ContentBlock, item: &ContentItem) -> bool {
    matches!(
        (block, item),
        (ContentBlock::Text(_), ContentItem::Text(_))
            | (ContentBlock::Image(_), ContentItem::Image(_))
            | (ContentBlock::Audio(_), ContentItem::Audio(_))
            | (ContentBlock::ResourceLink(_), ContentItem::ResourceLink(_))
            | (ContentBlock::Resource(_), ContentItem::EmbeddedResource(_))
            | (
                ContentBlock::ToolUse(_) | ContentBlock::ToolResult(_) | ContentBlock::Unknown(_),
                ContentItem::Unknown(_)
            )
    )
}

/// Check every property of one conversion.
fn check(result: CallToolResult, output_check: Option<&SchemaCheck>) -> Result<ToolExecutionResult, TestCaseError> {
    let texts: Vec<String> = result
        .content
        .iter()
        .filter_map(|b| if let ContentBlock::Text(t) = b { Some(t.text.clone()) } else { None })
        .collect();
    let blocks = result.content.clone();
    let structured = result.structured_content.clone();
    let is_error = result.is_error == Some(true);

    let out = convert::tool_result(result, output_check, origin());

    prop_assert_eq!(out.items.len(), blocks.len());
    for (block, item) in blocks.iter().zip(&out.items) {
        prop_assert!(same_kind(block, item), "{:?} became {:?}", block, item);
    }
    prop_assert_eq!(
        out.content.clone().map(String::from),
        if texts.is_empty() { None } else { Some(texts.join("\n")) }
    );
    let text_items: Vec<_> =
        out.items.iter().filter_map(|i| if let ContentItem::Text(t) = i { Some(&t.text) } else { None }).collect();
    if let ([only], Some(content)) = (text_items.as_slice(), &out.content) {
        prop_assert!(content.shares_buffer_with(only), "one text item: the content is its buffer, not a copy");
    }
    prop_assert_eq!(&out.structured_content, &structured);
    prop_assert_eq!(out.success, out.error_message.is_none());
    if is_error {
        prop_assert!(!out.success);
    }
    if output_check.is_none() {
        prop_assert_eq!(out.success, !is_error);
    }
    if let Some(message) = &out.error_message {
        prop_assert!(!message.trim().is_empty());
        // The server's own text, or one of our messages about it (which may quote the
        // structured content): bounded by the input.
        let text_len: usize = texts.iter().map(|t| t.len() + 1).sum();
        let structured_len = structured.as_ref().map_or(0, |s| s.to_string().len());
        let bound = text_len + structured_len + 1024;
        prop_assert!(message.len() <= bound, "a {}-byte message from {} bytes of input", message.len(), bound - 1024);
    }
    prop_assert_eq!(&out.origin, &Some(origin()));
    Ok(out)
}

/// Decode `text` as a result (an error is fine) and check the conversion of what decodes.
fn check_text(text: &str, output_check: Option<&SchemaCheck>) -> Result<(), TestCaseError> {
    match serde_json::from_str::<CallToolResult>(text) {
        Ok(result) => check(result, output_check).map(drop),
        Err(e) => {
            prop_assert!(!e.to_string().is_empty());
            Ok(())
        }
    }
}

fn object_schema() -> SchemaCheck {
    let schema = json!({"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]});
    SchemaCheck::compile(schema.as_object().expect("an object")).expect("the schema compiles")
}

proptest! {
    #![proptest_config(config(128))]

    #[test]
    fn well_formed_results_convert_faithfully(value in result_json(), with_schema in any::<bool>()) {
        let schema = object_schema();
        let output_check = with_schema.then_some(&schema);
        let text = value.to_string();
        check_text(&text, output_check)?;
        if let Ok(result) = serde_json::from_value::<CallToolResult>(value.clone()) {
            let structured_ok = result.structured_content.as_ref().is_some_and(|s| schema.is_valid(s));
            let failed_by_server = result.is_error == Some(true);
            let out = check(result, output_check)?;
            if with_schema && !failed_by_server {
                prop_assert_eq!(out.success, structured_ok, "{}", text);
            }
        }
    }

    #[test]
    fn mutated_results_never_panic(
        value in result_json(),
        edits in vec((any::<prop::sample::Index>(), any::<u8>(), 0..3u8), 1..6),
    ) {
        let mut bytes = value.to_string().into_bytes();
        for (at, byte, op) in edits {
            if bytes.is_empty() {
                bytes.push(byte);
                continue;
            }
            let i = at.index(bytes.len());
            match op {
                0 => bytes[i] = byte,
                1 => bytes.insert(i, byte),
                _ => { bytes.remove(i); }
            }
        }
        let text = String::from_utf8_lossy(&bytes);
        check_text(&text, None)?;
        check_text(&text, Some(&object_schema()))?;
    }

    #[test]
    fn any_json_never_panics(value in json()) {
        let text = value.to_string();
        check_text(&text, None)?;
        // As the content list, too.
        check_text(&json!({"content": [value]}).to_string(), None)?;
    }
}
