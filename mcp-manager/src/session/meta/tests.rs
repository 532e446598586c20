use super::*;
use mcp_protocol::types::tools::CallToolParams;
use serde_json::json;

fn meta() -> RequestMeta {
    RequestMeta::new(
        json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28", "k": [1, {"a": "}"}]})
            .as_object()
            .unwrap()
            .clone(),
    )
    .unwrap()
}

fn raw(params: Option<&str>, meta: Option<&RequestMeta>, token: Option<&RequestId>) -> Value {
    let params = params.map(|p| mcp_protocol::RawJson::from_string(p.to_owned()).unwrap());
    serde_json::from_str(raw_params(params, meta, token).unwrap().get()).unwrap()
}

fn typed<P: Serialize + ?Sized>(params: &P, meta: Option<&RequestMeta>, token: Option<&RequestId>) -> Value {
    let (out, _) = typed_params(Some("x-test/method"), params, meta, token).unwrap();
    // The text must be one valid JSON object with no member twice.
    let decoded: Value = serde_json::from_str(out.get()).unwrap();
    assert_eq!(out.get().matches("\"_meta\":{").count(), 1, "{}", out.get());
    decoded
}

#[test]
fn meta_is_spliced_into_raw_params_of_every_shape() {
    let m = meta();
    let id = RequestId::Number(7);
    assert_eq!(
        raw(None, Some(&m), None),
        json!({"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "k": [1, {"a": "}"}]}})
    );
    assert_eq!(raw(Some(" { } "), None, Some(&id)), json!({"_meta": {"progressToken": 7}}));
    assert_eq!(
        raw(Some(r#"{"name":"x","arguments":{"s":"{\"_m\":1}"}}"#), Some(&m), Some(&id)),
        json!({"name": "x", "arguments": {"s": "{\"_m\":1}"}, "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28", "k": [1, {"a": "}"}], "progressToken": 7}})
    );
}

#[test]
fn members_the_caller_set_win_over_the_session_defaults() {
    let m = meta();
    let got = raw(Some(r#"{"_meta":{"k":"mine","x":true},"name":"t"}"#), Some(&m), None);
    assert_eq!(
        got,
        json!({"name": "t", "_meta": {"k": "mine", "x": true, "io.modelcontextprotocol/protocolVersion": "2026-07-28"}})
    );
}

#[test]
fn typed_params_get_meta_in_one_pass() {
    let m = meta();
    let id = RequestId::String("r-1".into());
    let params = CallToolParams {
        name: "echo".into(),
        arguments: Some(json!({"text": "hi", "_meta": "inside arguments is not ours"}).as_object().unwrap().clone()),
        ..Default::default()
    };
    assert_eq!(
        typed(&params, Some(&m), Some(&id)),
        json!({"name": "echo", "arguments": {"text": "hi", "_meta": "inside arguments is not ours"}, "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28", "k": [1, {"a": "}"}], "progressToken": "r-1"}})
    );
    // Plain structs (no flattened members), maps, `Value`s and absent params.
    #[derive(serde::Serialize)]
    struct Plain {
        cursor: &'static str,
    }
    assert_eq!(
        typed(&Plain { cursor: "c" }, None, Some(&id)),
        json!({"cursor": "c", "_meta": {"progressToken": "r-1"}})
    );
    assert_eq!(typed(&json!({"uri": "x"}), None, Some(&id)), json!({"uri": "x", "_meta": {"progressToken": "r-1"}}));
    assert_eq!(typed(&None::<Plain>, Some(&m), None)["_meta"]["k"], json!([1, {"a": "}"}]));
    assert_eq!(typed(&(), None, Some(&id)), json!({"_meta": {"progressToken": "r-1"}}));
}

#[test]
fn typed_params_with_their_own_meta_are_merged() {
    let m = meta();
    let mut params = CallToolParams { name: "t".into(), ..Default::default() };
    params.meta = Some(serde_json::from_value(json!({"k": "mine"})).unwrap());
    let got: Value =
        serde_json::from_str(typed_params(Some("tools/call"), &params, Some(&m), None).unwrap().0.get()).unwrap();
    assert_eq!(
        got,
        json!({"name": "t", "_meta": {"k": "mine", "io.modelcontextprotocol/protocolVersion": "2026-07-28"}})
    );
    let map = json!({"_meta": {"x": 1}, "a": 2});
    let got: Value =
        serde_json::from_str(typed_params(Some("tools/call"), &map, Some(&m), None).unwrap().0.get()).unwrap();
    assert_eq!(got["_meta"]["x"], 1);
    assert_eq!(got["_meta"]["k"], json!([1, {"a": "}"}]));
    assert_eq!(got["a"], 2);
}

#[test]
fn params_that_are_not_objects_are_an_error_not_a_panic() {
    let m = meta();
    for params in [json!([1, 2]), json!("s"), json!(3)] {
        let e = typed_params(Some("tools/call"), &params, Some(&m), None).unwrap_err();
        assert!(e.to_string().contains("JSON object"), "{e}");
    }
    // Without anything to add, params go out as they are (the caller's business).
    assert_eq!(typed_params(Some("tools/call"), &json!([1]), None, None).unwrap().0.get(), "[1]");
}

#[test]
fn typed_params_tell_the_transport_their_revision_and_target() {
    let m = meta();
    fn hints<P: Serialize>(method: &str, params: &P, meta: Option<&RequestMeta>) -> Option<SendHints> {
        typed_params(Some(method), params, meta, Some(&RequestId::Number(3))).unwrap().1
    }
    let call = CallToolParams {
        name: "echo".into(),
        // A `name` inside the arguments is not the call's.
        arguments: Some(json!({"name": "inner"}).as_object().unwrap().clone()),
        ..Default::default()
    };
    // A session whose transport reads no hints gathers none.
    assert_eq!(typed_params(None, &call, Some(&m), None).unwrap().1, None);
    let modern = Some(ProtocolVersion::V2026_07_28);
    assert_eq!(
        hints("tools/call", &call, Some(&m)),
        Some(SendHints { revision: modern.clone(), target: Some("echo".into()) })
    );
    // A map's member is found as a struct's is; a method without a target member has none.
    assert_eq!(
        hints("resources/read", &json!({"uri": "demo://a"}), Some(&m)),
        Some(SendHints { revision: modern.clone(), target: Some("demo://a".into()) })
    );
    assert_eq!(
        hints("tools/list", &json!({"name": "x"}), Some(&m)),
        Some(SendHints { revision: modern, target: None })
    );
    // A target member that is not a string names nothing; without the session's members the
    // params name no revision.
    assert_eq!(hints("tools/call", &json!({"name": 7}), None), Some(SendHints { revision: None, target: None }));
    // Params with their own `_meta` may name a revision of their own: nothing is promised.
    let mut own = call.clone();
    own.meta = Some(serde_json::from_value(json!({"io.modelcontextprotocol/protocolVersion": "2025-11-25"})).unwrap());
    assert_eq!(hints("tools/call", &own, Some(&m)), None);
}
