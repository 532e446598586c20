//! The codec against bad input, one table row per [`DecodeError`] it can produce, and the
//! positive cases that sit right next to those errors (null versus absent members, error
//! responses without ids, batches with a bad element, framing).

use mcp_protocol::codec::{self, DecodeError, DecodeLimits, Decoded};
use mcp_protocol::{ErrorCode, ErrorObject, Message, RequestId, Response, ResponsePayload};
use serde_json::{Value, json};

fn limits() -> DecodeLimits {
    DecodeLimits::default()
}

fn decode(line: &[u8]) -> Result<Decoded, DecodeError> {
    codec::decode_line(line, &limits())
}

fn single(line: &str) -> Message {
    match decode(line.as_bytes()) {
        Ok(Decoded::Single(m)) => m,
        other => panic!("expected a single message from {line:?}, got {other:?}"),
    }
}

fn encoded(message: &Message) -> String {
    String::from_utf8(codec::encode_line(message)).expect("encode_line writes UTF-8")
}

fn encoded_value(message: &Message) -> Value {
    serde_json::from_str(encoded(message).trim_end_matches('\n')).expect("encode_line writes JSON")
}

/// One bad line and what must come of it.
struct Row {
    name: &'static str,
    line: Vec<u8>,
    limits: DecodeLimits,
    expect: fn(&DecodeError) -> bool,
    /// Substrings the Display text must hold (matched case-insensitively).
    display: &'static [&'static str],
}

fn row(
    name: &'static str,
    line: impl Into<Vec<u8>>,
    expect: fn(&DecodeError) -> bool,
    display: &'static [&'static str],
) -> Row {
    Row { name, line: line.into(), limits: limits(), expect, display }
}

fn nested(depth: usize) -> String {
    // {"jsonrpc":"2.0","id":1,"method":"m","params":{"a":[[[...]]]}} with `depth` levels in all.
    let inner = depth - 2;
    format!(r#"{{"jsonrpc":"2.0","id":1,"method":"m","params":{{"a":{}{}}}}}"#, "[".repeat(inner), "]".repeat(inner))
}

fn rows() -> Vec<Row> {
    let mut long = vec![b' '; 100];
    long.splice(0..0, br#"{"jsonrpc":"2.0","method":"m"}"#.iter().copied());
    vec![
        Row {
            name: "too long",
            line: long,
            limits: DecodeLimits { max_line_bytes: 64, ..limits() },
            expect: |e| matches!(e, DecodeError::TooLong { len: 130, max: 64 }),
            display: &["130 bytes", "exceeds the limit of 64 bytes"],
        },
        row(
            "invalid utf-8",
            b"{\"jsonrpc\":\"2.0\",\"method\":\"\xff\xfe\"}".to_vec(),
            |e| matches!(e, DecodeError::InvalidUtf8 { offset: 27 }),
            &["not valid UTF-8", "offset 27"],
        ),
        Row {
            name: "too deep for the configured limit",
            line: nested(9).into_bytes(),
            limits: DecodeLimits { max_depth: 8, ..limits() },
            expect: |e| matches!(e, DecodeError::TooDeep { max: 8 }),
            display: &["deeper than 8 levels"],
        },
        row(
            "too deep for the parser, whatever the configured limit",
            nested(200),
            |e| matches!(e, DecodeError::TooDeep { max: 64 }),
            &["deeper than 64 levels"],
        ),
        Row {
            name: "configured limit above 120 is capped",
            line: nested(125).into_bytes(),
            limits: DecodeLimits { max_depth: 1000, ..limits() },
            expect: |e| matches!(e, DecodeError::TooDeep { max: 120 }),
            display: &["deeper than 120 levels"],
        },
        row(
            "plain text log line",
            "Server listening on port 3000",
            |e| matches!(e, DecodeError::NotJson(_)),
            &["not JSON"],
        ),
        row("truncated object", r#"{"jsonrpc":"2.0","id":1,"#, |e| matches!(e, DecodeError::NotJson(_)), &["not JSON"]),
        row(
            "object with trailing garbage",
            r#"{"jsonrpc":"2.0","method":"m"} trailing"#,
            |e| matches!(e, DecodeError::NotJson(_)),
            &["not JSON", "trailing"],
        ),
        row("empty line", "", |e| matches!(e, DecodeError::NotJson(_)), &["not JSON"]),
        row(
            "unterminated batch",
            r#"[{"jsonrpc":"2.0","method":"m"}"#,
            |e| matches!(e, DecodeError::NotJson(_)),
            &["not JSON"],
        ),
        row(
            "structured log line",
            r#"{"level":"info","msg":"started"}"#,
            |e| matches!(e, DecodeError::NotJsonRpc(_)),
            &["not JSON-RPC", "jsonrpc"],
        ),
        row("bare number", "42", |e| matches!(e, DecodeError::NotJsonRpc(_)), &["not JSON-RPC", "a number"]),
        row("bare string", r#""hello""#, |e| matches!(e, DecodeError::NotJsonRpc(_)), &["not JSON-RPC", "a string"]),
        row("bare null", "null", |e| matches!(e, DecodeError::NotJsonRpc(_)), &["not JSON-RPC", "null"]),
        row("empty object", "{}", |e| matches!(e, DecodeError::NotJsonRpc(_)), &["not JSON-RPC", "jsonrpc"]),
        row(
            "version 1.0",
            r#"{"jsonrpc":"1.0","id":1,"method":"m"}"#,
            |e| matches!(e, DecodeError::WrongVersion(v) if v == "\"1.0\""),
            &["wrong JSON-RPC version \"1.0\"", "expected \"2.0\""],
        ),
        row(
            "version as a number",
            r#"{"jsonrpc":2,"id":1,"method":"m"}"#,
            |e| matches!(e, DecodeError::WrongVersion(v) if v == "2"),
            &["wrong JSON-RPC version 2,"],
        ),
        row(
            "request with a null id",
            r#"{"jsonrpc":"2.0","id":null,"method":"tools/list"}"#,
            |e| matches!(e, DecodeError::NullRequestId { method } if method == "tools/list"),
            &["\"tools/list\"", "null id"],
        ),
        row(
            "float id",
            r#"{"jsonrpc":"2.0","id":1.5,"method":"m"}"#,
            |e| matches!(e, DecodeError::InvalidIdType(v) if v == "1.5"),
            &["invalid id 1.5", "integers or strings"],
        ),
        row(
            "object id",
            r#"{"jsonrpc":"2.0","id":{"n":1},"method":"m"}"#,
            |e| matches!(e, DecodeError::InvalidIdType(v) if v == r#"{"n":1}"#),
            &[r#"invalid id {"n":1}"#],
        ),
        row(
            "bool id on a response",
            r#"{"jsonrpc":"2.0","id":true,"result":{}}"#,
            |e| matches!(e, DecodeError::InvalidIdType(v) if v == "true"),
            &["invalid id true"],
        ),
        row(
            "id beyond i64",
            r#"{"jsonrpc":"2.0","id":18446744073709551615,"method":"m"}"#,
            |e| matches!(e, DecodeError::InvalidIdType(v) if v == "18446744073709551615"),
            &["invalid id 18446744073709551615"],
        ),
        row(
            "array id on an error response",
            r#"{"jsonrpc":"2.0","id":[1],"error":{"code":-32600,"message":"x"}}"#,
            |e| matches!(e, DecodeError::InvalidIdType(v) if v == "[1]"),
            &["invalid id [1]"],
        ),
        row(
            "no method, result or error",
            r#"{"jsonrpc":"2.0","id":1}"#,
            |e| matches!(e, DecodeError::MissingMethod),
            &["no method, result or error"],
        ),
        row(
            "numeric method",
            r#"{"jsonrpc":"2.0","id":1,"method":7}"#,
            |e| matches!(e, DecodeError::InvalidMethod(v) if v == "7"),
            &["method must be a string", "found 7"],
        ),
        row(
            "null method",
            r#"{"jsonrpc":"2.0","method":null}"#,
            |e| matches!(e, DecodeError::InvalidMethod(v) if v == "null"),
            &["method must be a string", "found null"],
        ),
        row(
            "duplicate id",
            r#"{"jsonrpc":"2.0","id":1,"id":2,"method":"m"}"#,
            |e| matches!(e, DecodeError::DuplicateMember(m) if m.contains("`id`")),
            &["duplicate member", "id"],
        ),
        row(
            "result and error",
            r#"{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"x"}}"#,
            |e| matches!(e, DecodeError::ResultAndError),
            &["both result and error"],
        ),
        row(
            "method and result",
            r#"{"jsonrpc":"2.0","id":1,"method":"m","result":{}}"#,
            |e| matches!(e, DecodeError::MethodAndResponse("result")),
            &["has a method and a result member"],
        ),
        row(
            "method and error",
            r#"{"jsonrpc":"2.0","method":"m","error":{"code":1,"message":"x"}}"#,
            |e| matches!(e, DecodeError::MethodAndResponse("error")),
            &["has a method and a error member"],
        ),
        row(
            "result without an id",
            r#"{"jsonrpc":"2.0","result":{}}"#,
            |e| matches!(e, DecodeError::MissingResponseId),
            &["result response without an id"],
        ),
        row(
            "result with a null id",
            r#"{"jsonrpc":"2.0","id":null,"result":{}}"#,
            |e| matches!(e, DecodeError::MissingResponseId),
            &["result response without an id"],
        ),
        row(
            "string params",
            r#"{"jsonrpc":"2.0","id":1,"method":"m","params":"oops"}"#,
            |e| matches!(e, DecodeError::InvalidParams(v) if v == "\"oops\""),
            &["params must be an object or array", "\"oops\""],
        ),
        row(
            "numeric params on a notification",
            r#"{"jsonrpc":"2.0","method":"m","params":3}"#,
            |e| matches!(e, DecodeError::InvalidParams(v) if v == "3"),
            &["params must be an object or array", "found 3"],
        ),
        row(
            "boolean params",
            r#"{"jsonrpc":"2.0","method":"m","params":true}"#,
            |e| matches!(e, DecodeError::InvalidParams(v) if v == "true"),
            &["params must be an object or array", "found true"],
        ),
        row(
            "error is a string",
            r#"{"jsonrpc":"2.0","id":1,"error":"boom"}"#,
            |e| matches!(e, DecodeError::InvalidErrorObject(_)),
            &["invalid error object"],
        ),
        row(
            "error without a message",
            r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32603}}"#,
            |e| matches!(e, DecodeError::InvalidErrorObject(m) if m.contains("message")),
            &["invalid error object", "message"],
        ),
        row(
            "error with a fractional code",
            r#"{"jsonrpc":"2.0","id":1,"error":{"code":1.5,"message":"x"}}"#,
            |e| matches!(e, DecodeError::InvalidErrorObject(_)),
            &["invalid error object"],
        ),
        row("empty batch", "[]", |e| matches!(e, DecodeError::EmptyBatch), &["empty batch"]),
        row("empty batch with blanks", " [ ] \r", |e| matches!(e, DecodeError::EmptyBatch), &["empty batch"]),
    ]
}

#[test]
fn every_bad_line_yields_its_error_and_names_the_problem() {
    let mut failures = Vec::new();
    for r in rows() {
        let result = codec::decode_line(&r.line, &r.limits);
        let err = match result {
            Err(e) => e,
            Ok(d) => {
                failures.push(format!("{}: decoded to {d:?}", r.name));
                continue;
            }
        };
        if !(r.expect)(&err) {
            failures.push(format!("{}: wrong error {err:?}", r.name));
            continue;
        }
        let text = err.to_string();
        for want in r.display {
            if !text.to_lowercase().contains(&want.to_lowercase()) {
                failures.push(format!("{}: display {text:?} does not mention {want:?}", r.name));
            }
        }
    }
    assert!(failures.is_empty(), "{} failure(s):\n{}", failures.len(), failures.join("\n"));
}

#[test]
fn the_table_covers_every_variant() {
    // A change to the error enum must come with a row here.
    let mut seen: Vec<&'static str> = rows()
        .iter()
        .filter_map(|r| codec::decode_line(&r.line, &r.limits).err())
        .map(|e| match e {
            DecodeError::TooLong { .. } => "TooLong",
            DecodeError::InvalidUtf8 { .. } => "InvalidUtf8",
            DecodeError::TooDeep { .. } => "TooDeep",
            DecodeError::NotJson(_) => "NotJson",
            DecodeError::NotJsonRpc(_) => "NotJsonRpc",
            DecodeError::WrongVersion(_) => "WrongVersion",
            DecodeError::NullRequestId { .. } => "NullRequestId",
            DecodeError::InvalidIdType(_) => "InvalidIdType",
            DecodeError::MissingMethod => "MissingMethod",
            DecodeError::InvalidMethod(_) => "InvalidMethod",
            DecodeError::ResultAndError => "ResultAndError",
            DecodeError::MethodAndResponse(_) => "MethodAndResponse",
            DecodeError::MissingResponseId => "MissingResponseId",
            DecodeError::InvalidParams(_) => "InvalidParams",
            DecodeError::InvalidErrorObject(_) => "InvalidErrorObject",
            DecodeError::EmptyBatch => "EmptyBatch",
            DecodeError::DuplicateMember(_) => "DuplicateMember",
            _ => "unlisted",
        })
        .collect();
    seen.sort_unstable();
    seen.dedup();
    assert_eq!(
        seen,
        [
            "DuplicateMember",
            "EmptyBatch",
            "InvalidErrorObject",
            "InvalidIdType",
            "InvalidMethod",
            "InvalidParams",
            "InvalidUtf8",
            "MethodAndResponse",
            "MissingMethod",
            "MissingResponseId",
            "NotJson",
            "NotJsonRpc",
            "NullRequestId",
            "ResultAndError",
            "TooDeep",
            "TooLong",
            "WrongVersion",
        ]
    );
}

#[test]
fn only_not_json_and_not_json_rpc_are_noise() {
    for r in rows() {
        let err = codec::decode_line(&r.line, &r.limits).expect_err(r.name);
        let noise = matches!(err, DecodeError::NotJson(_) | DecodeError::NotJsonRpc(_));
        assert_eq!(err.is_noise(), noise, "{}: {err:?}", r.name);
    }
    assert!(DecodeError::NotJson("x".into()).is_noise());
    assert!(DecodeError::NotJsonRpc("x".into()).is_noise());
    assert!(!DecodeError::WrongVersion("1".into()).is_noise());
    assert!(!DecodeError::EmptyBatch.is_noise());
    assert!(!DecodeError::TooLong { len: 2, max: 1 }.is_noise());
}

#[test]
fn depth_at_the_limit_is_accepted_and_brackets_in_strings_do_not_count() {
    let tight = DecodeLimits { max_depth: 8, ..limits() };
    let ok = codec::decode_line(nested(8).as_bytes(), &tight).expect("8 levels within a limit of 8");
    assert!(matches!(ok, Decoded::Single(Message::Request(_))));

    // Brackets inside strings, and escaped quotes before them, are not nesting.
    let line = format!(
        r#"{{"jsonrpc":"2.0","method":"m","params":{{"s":"{}\"{}","t":"\\"}}}}"#,
        "[[[[[[[[[[{{{{{{", "]]]]{{{{[[[["
    );
    let decoded = codec::decode_line(line.as_bytes(), &tight).expect("brackets in strings are text");
    let Decoded::Single(Message::Notification(n)) = decoded else { panic!("expected a notification") };
    let params: Value = serde_json::from_str(n.params.expect("params").get()).unwrap();
    assert_eq!(params["t"], "\\");
    assert!(params["s"].as_str().unwrap().starts_with("[[[[[[[[[[{{{{{{\"]]]]"));
}

#[test]
fn length_limit_is_inclusive() {
    let line = br#"{"jsonrpc":"2.0","method":"m"}"#;
    let exact = DecodeLimits { max_line_bytes: line.len(), ..limits() };
    assert!(codec::decode_line(line, &exact).is_ok());
    let short = DecodeLimits { max_line_bytes: line.len() - 1, ..limits() };
    assert_eq!(
        codec::decode_line(line, &short).unwrap_err(),
        DecodeError::TooLong { len: line.len(), max: line.len() - 1 }
    );
}

#[test]
fn absent_and_null_params_are_kept_apart_and_reencoded_faithfully() {
    let absent = single(r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#);
    let Message::Request(r) = &absent else { panic!("request expected") };
    assert!(r.params.is_none());
    assert_eq!(encoded_value(&absent), json!({"jsonrpc":"2.0","id":1,"method":"ping"}));
    assert!(!encoded(&absent).contains("params"));

    let null = single(r#"{"jsonrpc":"2.0","id":1,"method":"ping","params":null}"#);
    let Message::Request(r) = &null else { panic!("request expected") };
    assert_eq!(r.params.as_ref().map(|p| p.get()), Some("null"));
    assert_eq!(encoded_value(&null), json!({"jsonrpc":"2.0","id":1,"method":"ping","params":null}));

    let n_absent = single(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    let Message::Notification(n) = &n_absent else { panic!("notification expected") };
    assert!(n.params.is_none());
    assert!(!encoded(&n_absent).contains("params"));

    let n_null = single(r#"{"jsonrpc":"2.0","method":"notifications/initialized","params":null}"#);
    let Message::Notification(n) = &n_null else { panic!("notification expected") };
    assert_eq!(n.params.as_ref().map(|p| p.get()), Some("null"));
    assert!(encoded(&n_null).contains(r#""params":null"#));

    let array = single(r#"{"jsonrpc":"2.0","method":"m","params":[1,{"a":null}]}"#);
    assert_eq!(encoded_value(&array)["params"], json!([1, {"a": null}]));
}

#[test]
fn error_response_ids_null_absent_and_present() {
    let null = single(r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}"#);
    let Message::Response(r) = &null else { panic!("response expected") };
    assert_eq!(r.id, None);
    assert!(matches!(&r.payload, ResponsePayload::Error(e) if e.code == ErrorCode::PARSE_ERROR));
    let v = encoded_value(&null);
    assert_eq!(v.get("id"), Some(&Value::Null), "a null id re-encodes as null: {v}");

    let absent = single(r#"{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid Request"}}"#);
    let Message::Response(r) = &absent else { panic!("response expected") };
    assert_eq!(r.id, None);
    let v = encoded_value(&absent);
    assert_eq!(v.get("id"), None, "an absent id re-encodes without an id: {v}");
    assert_eq!(v, json!({"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid Request"}}));

    let present = single(r#"{"jsonrpc":"2.0","id":"abc","error":{"code":-32601,"message":"nope"}}"#);
    assert_eq!(present.id(), Some(&RequestId::String("abc".into())));
    assert_eq!(encoded_value(&present)["id"], "abc");

    // Built here rather than decoded: Response::error(None, ..) means "id": null on the wire.
    let built = Message::error_response(None, ErrorObject::new(ErrorCode::INTERNAL_ERROR, "x"));
    assert_eq!(encoded_value(&built).get("id"), Some(&Value::Null));
}

#[test]
fn error_data_null_absent_and_structured() {
    let with_null = single(r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"x","data":null}}"#);
    let Message::Response(r) = &with_null else { panic!("response expected") };
    let ResponsePayload::Error(e) = &r.payload else { panic!("error expected") };
    assert_eq!(e.data, Some(Value::Null));
    assert_eq!(encoded_value(&with_null)["error"], json!({"code":-32603,"message":"x","data":null}));

    let without = single(r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"x"}}"#);
    let Message::Response(r) = &without else { panic!("response expected") };
    let ResponsePayload::Error(e) = &r.payload else { panic!("error expected") };
    assert_eq!(e.data, None);
    assert!(!encoded(&without).contains("data"));

    let structured =
        single(r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32042,"message":"go","data":{"url":"https://x"}}}"#);
    let Message::Response(r) = structured else { panic!("response expected") };
    let e = r.into_result().expect_err("error payload");
    assert_eq!(e.code, ErrorCode::URL_ELICITATION_REQUIRED);
    assert_eq!(e.data, Some(json!({"url": "https://x"})));
    assert!(e.to_string().contains("URL elicitation required"), "{e}");
}

#[test]
fn string_and_integer_ids() {
    for (line, id) in [
        (r#"{"jsonrpc":"2.0","id":0,"method":"m"}"#, RequestId::Number(0)),
        (r#"{"jsonrpc":"2.0","id":-7,"method":"m"}"#, RequestId::Number(-7)),
        (r#"{"jsonrpc":"2.0","id":9223372036854775807,"method":"m"}"#, RequestId::Number(i64::MAX)),
        (r#"{"jsonrpc":"2.0","id":"","method":"m"}"#, RequestId::String(String::new())),
        (r#"{"jsonrpc":"2.0","id":"42","method":"m"}"#, RequestId::String("42".into())),
        (r#"{"jsonrpc":"2.0","id":"a\"b\n","method":"m"}"#, RequestId::String("a\"b\n".into())),
        (r#"{"jsonrpc":"2.0","id":5,"result":null}"#, RequestId::Number(5)),
        (r#"{"jsonrpc":"2.0","id":"r-1","result":{"x":1}}"#, RequestId::String("r-1".into())),
    ] {
        let m = single(line);
        assert_eq!(m.id(), Some(&id), "{line}");
        let again = single(encoded(&m).trim_end());
        assert_eq!(again.id(), Some(&id), "{line} after re-encoding");
        // The string "42" stays a string, the integer 42 an integer.
        let original: Value = serde_json::from_str(line).unwrap();
        assert_eq!(encoded_value(&m)["id"], original["id"], "{line}");
    }
}

#[test]
fn result_null_is_a_result() {
    let m = single(r#"{"jsonrpc":"2.0","id":1,"result":null}"#);
    let Message::Response(Response { payload: ResponsePayload::Result(r), .. }) = &m else {
        panic!("result response expected")
    };
    assert_eq!(r.get(), "null");
    assert_eq!(encoded_value(&m), json!({"jsonrpc":"2.0","id":1,"result":null}));
}

#[test]
fn batch_with_one_bad_element_yields_the_good_messages_and_that_error() {
    let line = concat!(
        r#"[{"jsonrpc":"2.0","id":1,"method":"tools/list"},"#,
        r#"{"jsonrpc":"2.0","id":null,"method":"bad"},"#,
        r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}},"#,
        r#"{"jsonrpc":"2.0","id":"x","result":{}}]"#,
    );
    let decoded = decode(line.as_bytes()).expect("a batch decodes even with a bad element");
    assert!(matches!(decoded, Decoded::Batch(_)));
    let items = decoded.into_messages();
    assert_eq!(items.len(), 4);
    assert!(matches!(&items[0], Ok(Message::Request(r)) if r.method == "tools/list" && r.id == RequestId::Number(1)));
    assert_eq!(items[1].as_ref().unwrap_err(), &DecodeError::NullRequestId { method: "bad".into() });
    assert!(matches!(&items[2], Ok(Message::Notification(n)) if n.method == "notifications/progress"));
    assert!(matches!(&items[3], Ok(Message::Response(r)) if r.id == Some(RequestId::from("x"))));

    // Elements that are not objects are errors of their own, not of the whole line.
    let mixed = decode(br#"[1, {"jsonrpc":"2.0","method":"m"}, [], "s"]"#).unwrap().into_messages();
    assert_eq!(mixed.len(), 4);
    assert!(matches!(&mixed[0], Err(DecodeError::NotJsonRpc(m)) if m.contains("number")));
    assert!(matches!(&mixed[1], Ok(Message::Notification(_))));
    assert!(matches!(&mixed[2], Err(DecodeError::NotJsonRpc(m)) if m.contains("array")));
    assert!(matches!(&mixed[3], Err(DecodeError::NotJsonRpc(m)) if m.contains("string")));

    // A single object is Single, and into_messages gives it back alone.
    let one = decode(br#"{"jsonrpc":"2.0","method":"m"}"#).unwrap();
    assert!(matches!(one, Decoded::Single(_)));
    assert_eq!(one.into_messages().len(), 1);
}

#[test]
fn trailing_carriage_return_and_blanks_are_tolerated() {
    for line in [
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\r",
        "  {\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"} \t\r",
        "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}]\r",
    ] {
        let items = decode(line.as_bytes()).unwrap_or_else(|e| panic!("{line:?}: {e}")).into_messages();
        assert_eq!(items.len(), 1);
        let m = items.into_iter().next().unwrap().unwrap();
        assert_eq!(m.method(), Some("ping"));
        assert_eq!(m.id(), Some(&RequestId::Number(1)));
    }
    // A lone carriage return is an empty line: not JSON.
    assert!(matches!(decode(b"\r"), Err(DecodeError::NotJson(_))));
}

#[test]
fn encode_line_ends_with_exactly_one_newline_even_with_newlines_in_strings() {
    let params = json!({"text": "line one\nline two\r\nthree\u{2028}four", "k\ney": ["a\nb"]});
    let messages = [
        Message::request(RequestId::from("id\nwith\nnewlines"), "m\nx", Some(&params)).unwrap(),
        Message::notification("n", Some(&params)).unwrap(),
        Message::response(RequestId::Number(3), &params).unwrap(),
        Message::error_response(
            Some(RequestId::Number(4)),
            ErrorObject::new(ErrorCode(-1), "bad\nthing").with_data(params.clone()),
        ),
    ];
    for m in &messages {
        let bytes = codec::encode_line(m);
        assert_eq!(bytes.last(), Some(&b'\n'));
        assert_eq!(bytes.iter().filter(|&&b| b == b'\n').count(), 1, "{}", String::from_utf8_lossy(&bytes));
        assert!(!bytes.contains(&b'\r'));
        // And it decodes back to the same JSON.
        let back = single(std::str::from_utf8(&bytes).unwrap().trim_end_matches('\n'));
        assert_eq!(encoded(&back).as_bytes(), &bytes[..]);
    }
    // encode_line_into appends.
    let mut out = b"prefix\n".to_vec();
    codec::encode_line_into(&messages[1], &mut out);
    assert!(out.starts_with(b"prefix\n{"));
    assert_eq!(&out[7..], &codec::encode_line(&messages[1])[..]);
}

#[test]
fn raw_payloads_with_line_breaks_in_their_whitespace_still_encode_to_one_line() {
    // A pretty-printed body (HTTP servers send them) decodes with its whitespace kept in the raw
    // payloads, line breaks written as spaces (as the encoder writes them, so that the decoded
    // message survives a trip through a line); re-encoding it for a line-framed transport must
    // not split it.
    let pretty = "{\r\n  \"jsonrpc\": \"2.0\",\n  \"id\": 1,\n  \"result\": {\n    \"content\": [\n      {\"type\": \"text\", \"text\": \"a\\nb\"}\n    ]\r\n  }\n}";
    let m = single(pretty);
    let Message::Response(r) = &m else { panic!("response expected") };
    let ResponsePayload::Result(raw) = &r.payload else { panic!("result expected") };
    assert!(raw.get().contains("  "), "the raw payload keeps its whitespace: {}", raw.get());
    assert!(!raw.get().contains(['\n', '\r']), "line breaks are spaces: {}", raw.get());
    let bytes = codec::encode_line(&m);
    assert_eq!(bytes.iter().filter(|&&b| b == b'\n').count(), 1, "{}", String::from_utf8_lossy(&bytes));
    assert!(!bytes.contains(&b'\r'));
    assert_eq!(bytes.last(), Some(&b'\n'));
    // Same JSON, and the text inside strings is untouched.
    let expected: Value = serde_json::from_str(pretty).unwrap();
    assert_eq!(encoded_value(&m), expected);
    assert_eq!(encoded_value(&m)["result"]["content"][0]["text"], "a\nb");

    // The same for payloads built by hand.
    let params = mcp_protocol::RawJson::from_string("{\n\"a\":\r\n[1,\n2]}".into()).unwrap();
    let built =
        Message::Request(mcp_protocol::Request { id: RequestId::Number(1), method: "m".into(), params: Some(params) });
    let bytes = codec::encode_line(&built);
    assert_eq!(bytes.iter().filter(|&&b| b == b'\n' || b == b'\r').count(), 1);
    assert_eq!(encoded_value(&built)["params"], json!({"a": [1, 2]}));
}

#[test]
fn decode_message_rejects_batches() {
    assert!(codec::decode_message(r#"{"jsonrpc":"2.0","method":"m"}"#).is_ok());
    let err = codec::decode_message(r#"[{"jsonrpc":"2.0","method":"m"}]"#).unwrap_err();
    assert!(matches!(err, DecodeError::NotJsonRpc(ref m) if m.contains("array")), "{err:?}");
}

#[test]
fn error_data_floats_survive_a_round_trip() {
    // 1.0715660391465826e-75 is what serde_json itself writes for that f64, yet its default float
    // parser reads it back one ULP off, and the error re-encodes with another number.
    let line = r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"x","data":{"p":1.0715660391465826e-75}}}"#;
    let once = encoded(&single(line));
    assert_eq!(once.trim_end(), line);
    let twice = encoded(&single(once.trim_end()));
    assert_eq!(twice, once);
}
