//! Property tests: messages and content blocks survive encode -> decode -> encode unchanged, and
//! no input, however broken, makes `decode_line` panic.
//!
//! Floats are generated as multiples of 1/8 so that their decimal text parses back to the same
//! `f64` whatever float parser serde_json is built with.

use mcp_protocol::codec::{self, DecodeError, DecodeLimits, Decoded};
use mcp_protocol::jsonrpc::to_raw;
use mcp_protocol::types::common::{Annotations, Icon, Role};
use mcp_protocol::types::content::{
    BlobResourceContents, ContentBlock, EmbeddedResource, MediaContent, ResourceContents, ResourceLink, TextContent,
    TextResourceContents, ToolResultContent, ToolUseContent,
};
use mcp_protocol::types::meta::{JsonObject, Meta};
use mcp_protocol::types::tools::{CallTool, CallToolResult};
use mcp_protocol::{
    ErrorCode, ErrorObject, Message, Notification, Request, RequestId, RequestMethod, Response, ResponsePayload,
};
use proptest::collection::vec;
use proptest::option;
use proptest::prelude::*;
use serde_json::{Map, Number, Value};

// ----- JSON -----

fn nice_f64() -> impl Strategy<Value = f64> {
    (-8_000_000i32..8_000_000).prop_map(|n| f64::from(n) / 8.0)
}

fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => any::<String>(),
        1 => "[a-z/_]{0,12}",
        1 => Just("line\nbreak \"quoted\" back\\slash \u{0} \u{1f} \u{2028} é 😀".to_owned()),
    ]
}

fn json_leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        nice_f64().prop_map(Value::from),
        text().prop_map(Value::String),
    ]
}

fn json() -> impl Strategy<Value = Value> {
    json_leaf().prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            vec(inner.clone(), 0..6).prop_map(Value::Array),
            vec((text(), inner), 0..6).prop_map(|kv| Value::Object(kv.into_iter().collect())),
        ]
    })
}

fn json_object() -> impl Strategy<Value = JsonObject> {
    vec((text(), json()), 0..6).prop_map(|kv| kv.into_iter().collect())
}

/// Members a struct does not model: their names never collide with modelled ones.
fn extra() -> impl Strategy<Value = JsonObject> {
    prop_oneof![
        2 => Just(JsonObject::new()),
        1 => vec(("x-[a-zA-Z0-9_]{0,8}", json()), 1..4).prop_map(|kv| kv.into_iter().collect()),
    ]
}

fn meta() -> impl Strategy<Value = Option<Meta>> {
    option::of(json_object().prop_map(Meta))
}

// ----- messages -----

fn request_id() -> impl Strategy<Value = RequestId> {
    prop_oneof![any::<i64>().prop_map(RequestId::Number), text().prop_map(RequestId::String)]
}

/// `None` is an absent member; `Some(Value::Null)` an explicit null.
fn params() -> impl Strategy<Value = Option<Value>> {
    prop_oneof![
        Just(None),
        Just(Some(Value::Null)),
        json_object().prop_map(|m| Some(Value::Object(m))),
        vec(json(), 0..5).prop_map(|v| Some(Value::Array(v))),
    ]
}

fn error_object() -> impl Strategy<Value = ErrorObject> {
    (any::<i32>(), text(), prop_oneof![Just(None), Just(Some(Value::Null)), json().prop_map(Some)])
        .prop_map(|(code, message, data)| ErrorObject { code: ErrorCode(code), message, data })
}

fn message() -> impl Strategy<Value = Message> {
    let raw = |p: Option<Value>| p.map(|v| to_raw(&v).unwrap());
    prop_oneof![
        (request_id(), text(), params())
            .prop_map(move |(id, method, p)| { Message::Request(Request { id, method, params: raw(p) }) }),
        (text(), params()).prop_map(move |(method, p)| Message::Notification(Notification { method, params: raw(p) })),
        (request_id(), json())
            .prop_map(|(id, result)| Message::Response(Response::result(id, to_raw(&result).unwrap()))),
        (option::of(request_id()), error_object()).prop_map(|(id, e)| Message::error_response(id, e)),
    ]
}

fn encode(m: &Message) -> String {
    String::from_utf8(codec::encode_line(m)).expect("UTF-8")
}

fn decode_one(line: &[u8]) -> Message {
    match codec::decode_line(line, &DecodeLimits::default()) {
        Ok(Decoded::Single(m)) => m,
        other => panic!("{}: {other:?}", String::from_utf8_lossy(line)),
    }
}

fn raw_text(r: &Option<mcp_protocol::RawJson>) -> Option<&str> {
    r.as_ref().map(|r| r.get())
}

/// Message has no `PartialEq` (raw payloads compare by text): compare member by member.
fn assert_same(a: &Message, b: &Message) -> Result<(), TestCaseError> {
    match (a, b) {
        (Message::Request(x), Message::Request(y)) => {
            prop_assert_eq!(&x.id, &y.id);
            prop_assert_eq!(&x.method, &y.method);
            prop_assert_eq!(raw_text(&x.params), raw_text(&y.params));
        }
        (Message::Notification(x), Message::Notification(y)) => {
            prop_assert_eq!(&x.method, &y.method);
            prop_assert_eq!(raw_text(&x.params), raw_text(&y.params));
        }
        (Message::Response(x), Message::Response(y)) => {
            prop_assert_eq!(&x.id, &y.id);
            match (&x.payload, &y.payload) {
                (ResponsePayload::Result(p), ResponsePayload::Result(q)) => prop_assert_eq!(p.get(), q.get()),
                (ResponsePayload::Error(p), ResponsePayload::Error(q)) => prop_assert_eq!(p, q),
                _ => prop_assert!(false, "payload kinds differ: {:?} / {:?}", x, y),
            }
        }
        _ => prop_assert!(false, "kinds differ: {:?} / {:?}", a, b),
    }
    Ok(())
}

fn params_value(m: &Message) -> Option<Value> {
    let p = match m {
        Message::Request(r) => &r.params,
        Message::Notification(n) => &n.params,
        Message::Response(_) => return None,
    };
    p.as_ref().map(|r| serde_json::from_str(r.get()).unwrap())
}

// ----- content blocks -----

fn annotations() -> impl Strategy<Value = Option<Annotations>> {
    option::of(
        (
            option::of(vec(prop_oneof![Just(Role::User), Just(Role::Assistant)], 0..3)),
            // Integers and floats (whole ones included) must each keep their wire form.
            option::of(prop_oneof![
                (0..=1u8).prop_map(Number::from),
                (0..=8i32).prop_map(|n| Number::from_f64(f64::from(n) / 8.0).unwrap()),
            ]),
            option::of(text()),
            extra(),
        )
            .prop_map(|(audience, priority, last_modified, extra)| Annotations {
                audience,
                priority,
                last_modified,
                extra,
            }),
    )
}

fn icon() -> impl Strategy<Value = Icon> {
    (text(), option::of(text()), option::of(vec(text(), 0..3)), option::of(text()), extra())
        .prop_map(|(src, mime_type, sizes, theme, extra)| Icon { src, mime_type, sizes, theme, extra })
}

fn media() -> impl Strategy<Value = MediaContent> {
    ("[A-Za-z0-9+/]{0,40}={0,2}", text(), annotations(), meta(), extra()).prop_map(
        |(data, mime_type, annotations, meta, extra)| MediaContent {
            data,
            mime_type,
            annotations: annotations.map(Box::new),
            meta: meta.map(Box::new),
            extra: extra.into(),
        },
    )
}

fn resource_link() -> impl Strategy<Value = ResourceLink> {
    (
        text(),
        text(),
        option::of(text()),
        option::of(text()),
        option::of(text()),
        option::of(any::<u64>()),
        option::of(vec(icon(), 0..2)),
        annotations(),
        meta(),
        extra(),
    )
        .prop_map(|(uri, name, title, description, mime_type, size, icons, annotations, meta, extra)| {
            ResourceLink {
                uri,
                name,
                title,
                description,
                mime_type,
                size,
                icons,
                annotations: annotations.map(Box::new),
                meta: meta.map(Box::new),
                extra: extra.into(),
            }
        })
}

fn resource_contents() -> impl Strategy<Value = ResourceContents> {
    prop_oneof![
        (text(), option::of(text()), text(), meta(), extra()).prop_map(|(uri, mime_type, text, meta, extra)| {
            ResourceContents::Text(TextResourceContents {
                uri,
                mime_type,
                text,
                meta: meta.map(Box::new),
                extra: extra.into(),
            })
        }),
        (text(), option::of(text()), "[A-Za-z0-9+/]{0,40}", meta(), extra()).prop_map(
            |(uri, mime_type, blob, meta, extra)| {
                ResourceContents::Blob(BlobResourceContents {
                    uri,
                    mime_type,
                    blob,
                    meta: meta.map(Box::new),
                    extra: extra.into(),
                })
            }
        ),
    ]
}

fn unknown_block() -> impl Strategy<Value = ContentBlock> {
    ("x_[a-z_]{0,10}", json_object()).prop_map(|(kind, mut members)| {
        members.insert("type".into(), Value::String(kind));
        ContentBlock::Unknown(Value::Object(members))
    })
}

fn leaf_block() -> BoxedStrategy<ContentBlock> {
    prop_oneof![
        (text(), annotations(), meta(), extra()).prop_map(|(text, annotations, meta, extra)| ContentBlock::Text(
            TextContent { text, annotations: annotations.map(Box::new), meta: meta.map(Box::new), extra: extra.into() }
        )),
        media().prop_map(ContentBlock::Image),
        media().prop_map(ContentBlock::Audio),
        resource_link().prop_map(ContentBlock::ResourceLink),
        (resource_contents(), annotations(), meta(), extra()).prop_map(|(resource, annotations, meta, extra)| {
            ContentBlock::Resource(EmbeddedResource {
                resource,
                annotations: annotations.map(Box::new),
                meta: meta.map(Box::new),
                extra: extra.into(),
            })
        }),
        (text(), text(), json_object(), meta(), extra()).prop_map(|(id, name, input, meta, extra)| {
            ContentBlock::ToolUse(ToolUseContent { id, name, input, meta: meta.map(Box::new), extra: extra.into() })
        }),
        unknown_block(),
    ]
    .boxed()
}

fn content_block() -> impl Strategy<Value = ContentBlock> {
    leaf_block().prop_recursive(2, 12, 4, |inner| {
        // `structuredContent: null` reads back as absent, so a generated structured value is never
        // a bare null.
        let structured = option::of(json().prop_filter("not null", |v| !v.is_null()));
        (text(), vec(inner, 0..4), structured, option::of(any::<bool>()), meta(), extra()).prop_map(
            |(tool_use_id, content, structured_content, is_error, meta, extra)| {
                ContentBlock::ToolResult(ToolResultContent {
                    tool_use_id,
                    content,
                    structured_content,
                    is_error,
                    meta: meta.map(Box::new),
                    extra: extra.into(),
                })
            },
        )
    })
}

// ----- JSON-ish noise -----

fn json_ish() -> impl Strategy<Value = String> {
    let fragment = prop_oneof![
        Just("{"),
        Just("}"),
        Just("["),
        Just("]"),
        Just(":"),
        Just(","),
        Just("\""),
        Just("\\"),
        Just("\\u00"),
        Just("\"jsonrpc\""),
        Just("\"2.0\""),
        Just("\"id\""),
        Just("\"method\""),
        Just("\"params\""),
        Just("\"result\""),
        Just("\"error\""),
        Just("\"code\""),
        Just("\"message\""),
        Just("\"data\""),
        Just("null"),
        Just("true"),
        Just("1"),
        Just("-0"),
        Just("1.5e308"),
        Just("18446744073709551616"),
        Just(" "),
        Just("\r"),
        Just("\n"),
        Just("\u{feff}"),
        Just("é"),
    ];
    vec(fragment, 0..48).prop_map(|f| f.concat())
}

fn has_float(v: &Value) -> bool {
    match v {
        Value::Number(n) => n.is_f64(),
        Value::Array(a) => a.iter().any(has_float),
        Value::Object(o) => o.values().any(has_float),
        _ => false,
    }
}

/// Error data is the one part of the envelope held as a `Value`; serde_json, built without its
/// `float_roundtrip` feature, may read a float one ULP off (see
/// `error_data_floats_survive_a_round_trip` in codec_bad_input.rs).
fn error_data_has_float(m: &Message) -> bool {
    matches!(m, Message::Response(r) if matches!(&r.payload, ResponsePayload::Error(e) if e.data.as_ref().is_some_and(has_float)))
}

/// Check that whatever decoded is stable when encoded again.
fn check_decoded(result: Result<Decoded, DecodeError>) -> Result<(), TestCaseError> {
    match result {
        Ok(d) => {
            for item in d.into_messages() {
                match item {
                    Ok(m) => {
                        let line = encode(&m);
                        prop_assert_eq!(line.matches('\n').count(), 1);
                        let back = decode_one(line.as_bytes());
                        prop_assert_eq!(back.id(), m.id());
                        prop_assert_eq!(back.method(), m.method());
                        if !error_data_has_float(&m) {
                            assert_same(&m, &back)?;
                            prop_assert_eq!(encode(&back), line);
                        }
                    }
                    Err(e) => prop_assert!(!e.to_string().is_empty()),
                }
            }
        }
        Err(e) => prop_assert!(!e.to_string().is_empty()),
    }
    Ok(())
}

/// Strings full of what the depth scan must see through: quotes, backslashes, brackets.
fn tricky_text() -> impl Strategy<Value = String> {
    let special = prop::sample::select(vec!["\"", "\\", "[", "{", "]", "}", "\\\"", "\\\\"]).prop_map(str::to_owned);
    vec(prop_oneof![special, "[a-z]{0,9}"], 0..24).prop_map(|parts| parts.concat())
}

fn tricky_json() -> impl Strategy<Value = Value> {
    prop_oneof![Just(Value::Null), tricky_text().prop_map(Value::String)].prop_recursive(12, 64, 4, |inner| {
        prop_oneof![
            vec(inner.clone(), 0..4).prop_map(Value::Array),
            vec((tricky_text(), inner), 0..4).prop_map(|kv| Value::Object(kv.into_iter().collect())),
        ]
    })
}

/// Nesting depth of a value: scalars 0, each array or object one more than its deepest member.
fn depth(v: &Value) -> usize {
    match v {
        Value::Array(a) => 1 + a.iter().map(depth).max().unwrap_or(0),
        Value::Object(o) => 1 + o.values().map(depth).max().unwrap_or(0),
        _ => 0,
    }
}

const SMALL: DecodeLimits = DecodeLimits { max_line_bytes: 4096, max_depth: 4 };

proptest! {
    #[test]
    fn depth_limit_matches_the_real_nesting(inner in tricky_json(), key in tricky_text(), id in tricky_text()) {
        // Params must be an object or array: wrap the generated value.
        let params = Value::Object(Map::from_iter([(key, inner)]));
        let m = Message::Request(Request {
            id: RequestId::String(id),
            method: "m[{\\\"".into(),
            params: Some(to_raw(&params).unwrap()),
        });
        let line = encode(&m);
        let body = line.trim_end().as_bytes();
        let d = 1 + depth(&params);
        let at = DecodeLimits { max_depth: d, ..DecodeLimits::default() };
        prop_assert!(codec::decode_line(body, &at).is_ok(), "depth {} rejected at limit {}: {}", d, d, line);
        let below = DecodeLimits { max_depth: d - 1, ..DecodeLimits::default() };
        prop_assert_eq!(codec::decode_line(body, &below).unwrap_err(), DecodeError::TooDeep { max: d - 1 });
    }

    #[test]
    fn message_roundtrip_is_stable(m in message()) {
        let line = encode(&m);
        prop_assert!(line.ends_with('\n'));
        prop_assert_eq!(line.matches('\n').count(), 1);
        let back = decode_one(line.as_bytes());
        assert_same(&m, &back)?;
        prop_assert_eq!(encode(&back), line);
    }

    #[test]
    fn message_params_keep_their_value(id in request_id(), method in text(), p in params()) {
        let m = Message::Request(Request { id, method, params: p.as_ref().map(|v| to_raw(v).unwrap()) });
        let back = decode_one(encode(&m).as_bytes());
        prop_assert_eq!(params_value(&back), p);
    }

    #[test]
    fn error_response_without_id_stays_without_id(e in error_object()) {
        // Only a decoded response can lack an id; build it from the wire.
        let mut wire = Map::new();
        wire.insert("jsonrpc".into(), Value::from("2.0"));
        wire.insert("error".into(), serde_json::to_value(&e).unwrap());
        let line = serde_json::to_string(&wire).unwrap();
        let m = decode_one(line.as_bytes());
        let Message::Response(r) = &m else { panic!("response expected") };
        prop_assert_eq!(&r.id, &None);
        prop_assert!(matches!(&r.payload, ResponsePayload::Error(got) if **got == e));
        prop_assert_eq!(encode(&m), format!("{line}\n"));
    }

    #[test]
    fn batch_roundtrip_keeps_order(ms in vec(message(), 1..6)) {
        let lines: Vec<String> = ms.iter().map(|m| encode(m).trim_end().to_owned()).collect();
        let batch = format!("[{}]", lines.join(","));
        let decoded = codec::decode_line(batch.as_bytes(), &DecodeLimits::default()).unwrap();
        prop_assert!(matches!(decoded, Decoded::Batch(_)));
        let items = decoded.into_messages();
        prop_assert_eq!(items.len(), ms.len());
        for (m, item) in ms.iter().zip(items) {
            assert_same(m, &item.unwrap())?;
        }
    }

    #[test]
    fn content_block_roundtrip_is_stable(block in content_block()) {
        let text = serde_json::to_string(&block).unwrap();
        let back: ContentBlock = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{text}: {e}"));
        prop_assert_eq!(&back, &block);
        prop_assert_eq!(back.kind(), block.kind());
        // The same JSON members come back, and again after a second trip. (Their order may not:
        // see `content_block_roundtrip_keeps_member_order` below.)
        let again = serde_json::to_string(&back).unwrap();
        prop_assert_eq!(serde_json::from_str::<Value>(&again).unwrap(), serde_json::from_str::<Value>(&text).unwrap());
        let third: ContentBlock = serde_json::from_str(&again).unwrap();
        prop_assert_eq!(&third, &block);
    }

    #[test]
    fn content_block_roundtrip_keeps_member_order(block in content_block()) {
        let text = serde_json::to_string(&block).unwrap();
        let back: ContentBlock = serde_json::from_str(&text).unwrap();
        prop_assert_eq!(serde_json::to_string(&back).unwrap(), text);
    }

    #[test]
    fn content_blocks_survive_the_wire_in_a_tool_result(
        id in request_id(),
        content in vec(content_block(), 0..4),
        is_error in option::of(any::<bool>()),
    ) {
        let result = CallToolResult { content, is_error, ..Default::default() };
        let line = encode(&Message::response(id.clone(), &result).unwrap());
        let Message::Response(r) = decode_one(line.as_bytes()) else { panic!("response expected") };
        prop_assert_eq!(r.id.as_ref(), Some(&id));
        let raw = r.into_result().unwrap();
        let outcome = <CallTool as RequestMethod>::decode_result(&raw).unwrap();
        prop_assert_eq!(outcome.complete(), Some(result));
    }

    #[test]
    fn arbitrary_bytes_never_panic(bytes in vec(any::<u8>(), 0..512)) {
        check_decoded(codec::decode_line(&bytes, &SMALL))?;
        check_decoded(codec::decode_line(&bytes, &DecodeLimits::default()))?;
    }

    #[test]
    fn json_ish_strings_never_panic(s in json_ish()) {
        check_decoded(codec::decode_line(s.as_bytes(), &SMALL))?;
        check_decoded(codec::decode_line(s.as_bytes(), &DecodeLimits::default()))?;
    }

    #[test]
    fn mutated_messages_never_panic(
        m in message(),
        edits in vec((any::<prop::sample::Index>(), any::<u8>(), 0..3u8), 1..6),
    ) {
        let mut bytes = codec::encode_line(&m);
        bytes.pop();
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
        check_decoded(codec::decode_line(&bytes, &SMALL))?;
        check_decoded(codec::decode_line(&bytes, &DecodeLimits::default()))?;
    }
}
