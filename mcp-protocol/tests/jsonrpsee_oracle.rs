//! jsonrpsee-types as an independent oracle for the hand-written envelope: what this crate encodes
//! must decode with jsonrpsee-types' `Request`, `Notification`, `Response` and `ErrorObject`, and
//! what jsonrpsee-types serialises must decode here to the same id, method, params and error.
//!
//! jsonrpsee ids are `null`, `u64` or strings, so numeric ids here stay non-negative.

use std::borrow::Cow;

use jsonrpsee_types as rpsee;
use mcp_protocol::codec::{self, DecodeLimits, Decoded};
use mcp_protocol::{ErrorCode, ErrorObject, Message, RequestId, ResponsePayload};
use serde_json::value::RawValue;
use serde_json::{Value, json};

fn encode(message: &Message) -> String {
    let line = String::from_utf8(codec::encode_line(message)).expect("UTF-8");
    line.strip_suffix('\n').expect("terminated by a newline").to_owned()
}

fn decode(text: &str) -> Message {
    match codec::decode_line(text.as_bytes(), &DecodeLimits::default()) {
        Ok(Decoded::Single(m)) => m,
        other => panic!("{text}: expected one message, got {other:?}"),
    }
}

fn raw(v: &Value) -> Box<RawValue> {
    serde_json::value::to_raw_value(v).unwrap()
}

fn parse(raw: Option<&RawValue>) -> Option<Value> {
    raw.map(|r| serde_json::from_str(r.get()).expect("raw JSON"))
}

fn parse_ours(raw: &Option<mcp_protocol::RawJson>) -> Option<Value> {
    raw.as_ref().map(|r| serde_json::from_str(r.get()).expect("raw JSON"))
}

fn rpsee_id(id: &RequestId) -> rpsee::Id<'static> {
    match id {
        RequestId::Number(n) => rpsee::Id::Number(u64::try_from(*n).expect("non-negative id")),
        RequestId::String(s) => rpsee::Id::Str(Cow::Owned(s.clone())),
    }
}

fn ids() -> Vec<RequestId> {
    vec![
        RequestId::Number(0),
        RequestId::Number(1),
        RequestId::Number(i64::MAX),
        RequestId::String(String::new()),
        RequestId::String("req-42".into()),
        RequestId::String("7".into()),
        RequestId::String("uni\u{e9}code \"quoted\" \\ \n".into()),
    ]
}

fn params_cases() -> Vec<Option<Value>> {
    vec![
        None,
        Some(json!({})),
        Some(json!({"name": "echo", "arguments": {"text": "hi\nthere", "n": 3, "f": 1.5, "list": [1, null, true]}})),
        Some(json!([1, "two", {"three": 3}])),
        Some(json!({"_meta": {"progressToken": "p1"}, "nested": {"a": {"b": {"c": []}}}})),
    ]
}

// ----- ours -> jsonrpsee -----

#[test]
fn our_requests_decode_with_jsonrpsee() {
    for id in ids() {
        for params in params_cases() {
            let msg = Message::request(id.clone(), "tools/call", params.as_ref()).unwrap();
            let line = encode(&msg);
            let req: rpsee::Request<'_> =
                serde_json::from_str(&line).unwrap_or_else(|e| panic!("jsonrpsee rejects {line}: {e}"));
            assert_eq!(req.id, rpsee_id(&id), "{line}");
            assert_eq!(req.method_name(), "tools/call");
            assert_eq!(parse(req.params.as_deref()), params, "{line}");
            // jsonrpsee's own params accessor sees the same text.
            assert_eq!(req.params().as_str().is_some(), params.is_some());
        }
    }
}

#[test]
fn our_notifications_decode_with_jsonrpsee() {
    for params in params_cases() {
        let msg = Message::notification("notifications/progress", params.as_ref()).unwrap();
        let line = encode(&msg);
        let n: rpsee::Notification<'_, Option<Value>> =
            serde_json::from_str(&line).unwrap_or_else(|e| panic!("jsonrpsee rejects {line}: {e}"));
        assert_eq!(n.method_name(), "notifications/progress");
        assert_eq!(n.params, params, "{line}");
        // A notification has no id at all, which jsonrpsee's Request then refuses.
        assert!(serde_json::from_str::<rpsee::Request<'_>>(&line).is_err(), "{line}");
    }
}

#[test]
fn our_result_responses_decode_with_jsonrpsee() {
    let results = [
        json!({}),
        json!(null),
        json!({"content": [{"type": "text", "text": "ok"}], "isError": false}),
        json!({"tools": [{"name": "t", "inputSchema": {"type": "object"}}], "nextCursor": "c2"}),
        json!([1, 2, 3]),
        json!("just a string"),
    ];
    for id in ids() {
        for result in &results {
            let msg = Message::response(id.clone(), result).unwrap();
            let line = encode(&msg);
            let resp: rpsee::Response<'_, Value> =
                serde_json::from_str(&line).unwrap_or_else(|e| panic!("jsonrpsee rejects {line}: {e}"));
            assert_eq!(resp.jsonrpc, Some(rpsee::TwoPointZero));
            assert_eq!(resp.id, rpsee_id(&id), "{line}");
            match resp.payload {
                rpsee::ResponsePayload::Success(v) => assert_eq!(&*v, result, "{line}"),
                rpsee::ResponsePayload::Error(e) => panic!("{line}: jsonrpsee saw an error {e:?}"),
            }
        }
    }
}

#[test]
fn our_error_responses_decode_with_jsonrpsee() {
    let errors = [
        ErrorObject::new(ErrorCode::METHOD_NOT_FOUND, "Method not found"),
        ErrorObject::new(ErrorCode::INVALID_PARAMS, "bad \"args\"\n").with_data(json!({"field": "name"})),
        ErrorObject::new(ErrorCode(-32000), "custom").with_data(json!(["a", 1])),
        ErrorObject::new(ErrorCode::URL_ELICITATION_REQUIRED, "go").with_data(json!("text data")),
        ErrorObject::new(ErrorCode(i32::MIN), "extreme"),
    ];
    let mut all_ids: Vec<Option<RequestId>> = ids().into_iter().map(Some).collect();
    all_ids.push(None);
    for id in &all_ids {
        for error in &errors {
            let msg = Message::error_response(id.clone(), error.clone());
            let line = encode(&msg);
            let resp: rpsee::Response<'_, Value> =
                serde_json::from_str(&line).unwrap_or_else(|e| panic!("jsonrpsee rejects {line}: {e}"));
            let want_id = id.as_ref().map_or(rpsee::Id::Null, rpsee_id);
            assert_eq!(resp.id, want_id, "{line}");
            let rpsee::ResponsePayload::Error(e) = resp.payload else { panic!("{line}: not an error") };
            assert_eq!(e.code(), error.code.0, "{line}");
            assert_eq!(e.message(), error.message, "{line}");
            assert_eq!(parse(e.data()), error.data, "{line}");
        }
    }
}

// ----- jsonrpsee -> ours -----

#[test]
fn jsonrpsee_requests_decode_here() {
    for id in ids() {
        for params in params_cases() {
            let req = rpsee::Request::owned("resources/read".into(), params.as_ref().map(raw), rpsee_id(&id));
            let line = serde_json::to_string(&req).unwrap();
            let Message::Request(ours) = decode(&line) else { panic!("{line}: not a request") };
            assert_eq!(ours.id, id, "{line}");
            assert_eq!(ours.method, "resources/read");
            assert_eq!(parse_ours(&ours.params), params, "{line}");
            // And re-encoding what we decoded gives jsonrpsee's JSON back.
            let again: Value = serde_json::from_str(&encode(&Message::Request(ours))).unwrap();
            assert_eq!(again, serde_json::from_str::<Value>(&line).unwrap());
        }
    }
}

#[test]
fn jsonrpsee_notifications_decode_here() {
    // jsonrpsee always writes `params`, so `None` goes out as `"params":null`: kept as null here.
    let n = rpsee::Notification::new(Cow::Borrowed("notifications/cancelled"), None::<Value>);
    let line = serde_json::to_string(&n).unwrap();
    assert!(line.contains(r#""params":null"#), "{line}");
    let Message::Notification(ours) = decode(&line) else { panic!("{line}: not a notification") };
    assert_eq!(ours.method, "notifications/cancelled");
    assert_eq!(ours.params.as_ref().map(mcp_protocol::RawJson::get), Some("null"));
    assert!(encode(&Message::Notification(ours)).contains(r#""params":null"#));

    for params in params_cases().into_iter().flatten() {
        let n = rpsee::Notification::new(Cow::Borrowed("notifications/message"), params.clone());
        let line = serde_json::to_string(&n).unwrap();
        let Message::Notification(ours) = decode(&line) else { panic!("{line}: not a notification") };
        assert_eq!(ours.method, "notifications/message");
        assert_eq!(parse_ours(&ours.params), Some(params), "{line}");
    }
}

#[test]
fn jsonrpsee_result_responses_decode_here() {
    let results = [json!({"ok": true}), json!(null), json!([]), json!({"content": [{"type": "text", "text": "x"}]})];
    for id in ids() {
        for result in &results {
            let resp = rpsee::Response::new(rpsee::ResponsePayload::success(result.clone()), rpsee_id(&id));
            let line = serde_json::to_string(&resp).unwrap();
            let Message::Response(ours) = decode(&line) else { panic!("{line}: not a response") };
            assert_eq!(ours.id.as_ref(), Some(&id), "{line}");
            let ResponsePayload::Result(r) = &ours.payload else { panic!("{line}: not a result") };
            assert_eq!(&serde_json::from_str::<Value>(r.get()).unwrap(), result, "{line}");
            let again: Value = serde_json::from_str(&encode(&Message::Response(ours))).unwrap();
            assert_eq!(again, serde_json::from_str::<Value>(&line).unwrap());
        }
    }
}

#[test]
fn jsonrpsee_error_responses_decode_here() {
    let errors: Vec<rpsee::ErrorObjectOwned> = vec![
        rpsee::ErrorCode::MethodNotFound.into(),
        rpsee::ErrorCode::ParseError.into(),
        rpsee::ErrorObject::owned(-32602, "Invalid params", Some(json!({"path": ["a", 0], "why": "line\nbreak"}))),
        rpsee::ErrorObject::owned(-32002, "Resource not found", Some("file:///missing")),
        rpsee::ErrorObject::owned(42, "app error", None::<()>),
    ];
    let mut all_ids: Vec<rpsee::Id<'static>> = ids().iter().map(rpsee_id).collect();
    all_ids.push(rpsee::Id::Null);
    for id in &all_ids {
        for error in &errors {
            let resp = rpsee::Response::<()>::new(rpsee::ResponsePayload::error(error.clone()), id.clone());
            let line = serde_json::to_string(&resp).unwrap();
            let Message::Response(ours) = decode(&line) else { panic!("{line}: not a response") };
            let want_id = match id {
                rpsee::Id::Null => None,
                rpsee::Id::Number(n) => Some(RequestId::Number(i64::try_from(*n).unwrap())),
                rpsee::Id::Str(s) => Some(RequestId::String(s.to_string())),
            };
            assert_eq!(ours.id, want_id, "{line}");
            let ResponsePayload::Error(e) = &ours.payload else { panic!("{line}: not an error") };
            assert_eq!(e.code, ErrorCode(error.code()), "{line}");
            assert_eq!(e.message, error.message(), "{line}");
            assert_eq!(e.data, parse(error.data()), "{line}");
            // A null id goes back out as null, not dropped.
            let again: Value = serde_json::from_str(&encode(&Message::Response(ours))).unwrap();
            assert_eq!(again, serde_json::from_str::<Value>(&line).unwrap(), "{line}");
        }
    }
}

#[test]
fn both_sides_agree_on_what_is_a_request() {
    // Lines both parsers read as requests must agree on every member.
    let lines = [
        r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#,
        r#"{"jsonrpc":"2.0","id":"a","method":"tools/list","params":{"cursor":"x"}}"#,
        r#"{"id":9,"params":[1,2],"method":"m","jsonrpc":"2.0"}"#,
        r#"  {"jsonrpc":"2.0","id":18446744073709551615,"method":"big"}"#,
    ];
    for line in lines {
        let theirs: Result<rpsee::Request<'_>, _> = serde_json::from_str(line);
        let ours = codec::decode_line(line.as_bytes(), &DecodeLimits::default());
        match (theirs, ours) {
            (Ok(t), Ok(Decoded::Single(Message::Request(o)))) => {
                assert_eq!(rpsee_id(&o.id), t.id, "{line}");
                assert_eq!(o.method, t.method_name(), "{line}");
                assert_eq!(parse_ours(&o.params), parse(t.params.as_deref()), "{line}");
            }
            // u64 ids beyond i64 are a deliberate difference: this crate allocates i64 ids and
            // reports a foreign id it cannot represent instead of wrapping it.
            (Ok(t), Err(e)) => {
                assert_eq!(t.id, rpsee::Id::Number(u64::MAX), "{line}: {e}");
                assert!(matches!(e, codec::DecodeError::InvalidIdType(_)), "{line}: {e}");
            }
            (t, o) => panic!("{line}: jsonrpsee {t:?}, ours {o:?}"),
        }
    }
}
