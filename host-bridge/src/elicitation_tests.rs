use std::time::Duration;

use serde_json::json;

use super::*;

const LIMIT: Duration = Duration::from_secs(5);

fn form(schema: Value) -> ElicitParams {
    serde_json::from_value(json!({"message": "Who are you?", "requestedSchema": schema})).unwrap()
}

fn person() -> ElicitParams {
    form(json!({"type": "object", "properties": {
        "name": {"type": "string", "minLength": 1},
        "age": {"type": "integer", "minimum": 0, "default": 30},
        "color": {"type": "string", "enum": ["red", "blue"], "default": "red"},
        "email": {"type": "string", "format": "email"},
        "subscribed": {"type": "boolean", "default": false}
    }, "required": ["name"]}))
}

fn object(v: Value) -> JsonObject {
    match v {
        Value::Object(m) => m,
        other => panic!("not an object: {other}"),
    }
}

async fn answer(h: &HostElicitation, params: ElicitParams) -> Result<ElicitResult, ErrorObject> {
    tokio::time::timeout(LIMIT, h.elicit("srv", params)).await.expect("elicitation answers")
}

fn forms(script: &ScriptedElicitation) -> Vec<FormRequest> {
    script.asked().into_iter().filter_map(|a| if let Asked::Form(f) = a { Some(f) } else { None }).collect()
}

#[tokio::test]
async fn form_is_prefilled_with_defaults_and_the_answer_completed_by_them() {
    let script = ScriptedElicitation::new();
    script.answer_form(FormAnswer::Accept(object(json!({"name": "Ada", "color": "blue"}))));
    let h = HostElicitation::new(Arc::new(script.clone()));
    assert!(!h.supports_url());
    let r = answer(&h, person()).await.unwrap();
    assert_eq!(r.action, ElicitAction::Accept);
    assert_eq!(
        Value::Object(r.content.unwrap()),
        json!({"name": "Ada", "color": "blue", "age": 30, "subscribed": false}),
        "the user's color wins; the untouched fields keep their defaults"
    );
    let asked = forms(&script);
    assert_eq!(asked.len(), 1);
    assert_eq!((asked[0].server.as_str(), asked[0].message.as_str()), ("srv", "Who are you?"));
    assert_eq!(Value::Object(asked[0].prefilled.clone()), json!({"age": 30, "color": "red", "subscribed": false}));
    assert!(asked[0].problems.is_empty());
    assert!(asked[0].schema.is_required("name"));
}

#[tokio::test]
async fn without_apply_defaults_the_answer_is_sent_as_given() {
    let script = ScriptedElicitation::new();
    script.answer_form(FormAnswer::Accept(object(json!({"name": "Ada"}))));
    let options = ElicitationOptions { apply_defaults: false, ..Default::default() };
    let h = HostElicitation::with_options(Arc::new(script), options);
    assert_eq!(Value::Object(answer(&h, person()).await.unwrap().content.unwrap()), json!({"name": "Ada"}));
}

#[tokio::test]
async fn an_invalid_answer_is_shown_again_with_its_problems() {
    let script = ScriptedElicitation::new();
    script
        .answer_form(FormAnswer::Accept(object(json!({"name": "", "email": "not-an-email", "age": -1}))))
        .answer_form(FormAnswer::Accept(object(json!({"name": "Ada", "email": "ada@example.com", "age": 36}))));
    let h = HostElicitation::new(Arc::new(script.clone()));
    let r = answer(&h, person()).await.unwrap();
    assert_eq!(r.content.unwrap()["email"], "ada@example.com");
    let asked = forms(&script);
    assert_eq!(asked.len(), 2);
    let problems = asked[1].problems.join("\n");
    for path in ["/name", "/email", "/age"] {
        assert!(problems.contains(path), "{path} missing from:\n{problems}");
    }
    // The second time, the form shows what the user typed.
    assert_eq!(asked[1].prefilled["email"], "not-an-email");
}

#[tokio::test]
async fn an_answer_that_never_fits_cancels() {
    let script = ScriptedElicitation::new();
    for _ in 0..3 {
        script.answer_form(FormAnswer::Accept(object(json!({"age": "old"}))));
    }
    let h = HostElicitation::new(Arc::new(script.clone()));
    assert_eq!(answer(&h, person()).await.unwrap().action, ElicitAction::Cancel);
    assert_eq!(forms(&script).len(), 3, "max_attempts");
    let problems = forms(&script)[2].problems.join("\n");
    assert!(problems.contains("name") && problems.contains("/age"), "{problems}");
}

#[tokio::test]
async fn decline_and_cancel_pass_through() {
    let script = ScriptedElicitation::new();
    script.answer_form(FormAnswer::Decline).answer_form(FormAnswer::Cancel);
    let h = HostElicitation::new(Arc::new(script.clone()));
    let declined = answer(&h, person()).await.unwrap();
    assert_eq!((declined.action, declined.content), (ElicitAction::Decline, None));
    assert_eq!(answer(&h, person()).await.unwrap().action, ElicitAction::Cancel);
    // The script is used up: it declines.
    assert_eq!(answer(&h, person()).await.unwrap().action, ElicitAction::Decline);
}

#[tokio::test]
async fn a_schema_that_does_not_compile_is_invalid_params() {
    let h = HostElicitation::new(Arc::new(ScriptedElicitation::new()));
    let bad = form(json!({"type": "object", "properties": {"n": {"type": "strin"}}}));
    let err = answer(&h, bad).await.unwrap_err();
    assert_eq!(err.code, ErrorCode::INVALID_PARAMS);
    assert!(err.message.contains("not a valid JSON Schema"), "{err:?}");
    let not_object = form(json!({"type": "array", "properties": {}}));
    assert!(answer(&h, not_object).await.unwrap_err().message.contains("\"array\""));
}

fn url(id: Option<&str>, url: &str) -> ElicitParams {
    let mut v = json!({"mode": "url", "message": "Authorize the demo", "url": url});
    if let Some(id) = id {
        v["elicitationId"] = json!(id);
    }
    serde_json::from_value(v).unwrap()
}

#[tokio::test]
async fn url_mode_shows_the_full_url_and_tracks_completion() {
    let script = ScriptedElicitation::with_url();
    script.answer_url(UrlAnswer::Accept).answer_url(UrlAnswer::Cancel);
    let h = HostElicitation::new(Arc::new(script.clone()));
    assert!(h.supports_url());
    let full = "https://auth.example.com/authorize?client=demo&state=xyz";
    let r = answer(&h, url(Some("e-1"), full)).await.unwrap();
    assert_eq!((r.action, r.content), (ElicitAction::Accept, None));
    let Asked::Url(asked) = &script.asked()[0] else { panic!("{:?}", script.asked()) };
    assert_eq!((asked.url.as_str(), asked.domain.as_str()), (full, "auth.example.com"));
    assert_eq!((asked.message.as_str(), asked.elicitation_id.as_deref()), ("Authorize the demo", Some("e-1")));

    assert!(!h.on_complete("other-server", "e-1"), "another server's id is unknown");
    assert!(h.on_complete("srv", "e-1"));
    assert!(!h.on_complete("srv", "e-1"), "a completion counts once");
    assert_eq!(script.completed(), [("srv".to_owned(), "e-1".to_owned())]);

    // Cancelled: nothing waits for a completion.
    assert_eq!(answer(&h, url(Some("e-2"), full)).await.unwrap().action, ElicitAction::Cancel);
    assert!(!h.on_complete("srv", "e-2"));
}

#[tokio::test]
async fn url_mode_refusals() {
    let h = HostElicitation::new(Arc::new(ScriptedElicitation::new()));
    let err = answer(&h, url(None, "https://example.com")).await.unwrap_err();
    assert!(err.message.contains("does not support URL-mode"), "{err:?}");
    // A UI that could, but the host's settings say no.
    let options = ElicitationOptions { allow_url: false, ..Default::default() };
    let h = HostElicitation::with_options(Arc::new(ScriptedElicitation::with_url()), options);
    assert!(!ElicitationHandler::supports_url(&h));
    assert!(answer(&h, url(None, "https://example.com")).await.is_err());
    let h = HostElicitation::new(Arc::new(ScriptedElicitation::with_url()));
    for (bad, needle) in
        [("javascript:alert(1)", "\"javascript\""), ("file:///etc/passwd", "\"file\""), ("::", "invalid")]
    {
        let err = answer(&h, url(None, bad)).await.unwrap_err();
        assert_eq!(err.code, ErrorCode::INVALID_PARAMS);
        assert!(err.message.contains(needle), "{bad}: {err:?}");
    }
}

#[tokio::test]
async fn pending_urls_are_bounded() {
    let script = ScriptedElicitation::with_url();
    let h = HostElicitation::new(Arc::new(script.clone()));
    for i in 0..=MAX_PENDING_URLS {
        script.answer_url(UrlAnswer::Accept);
        answer(&h, url(Some(&format!("e-{i}")), "https://example.com")).await.unwrap();
    }
    assert!(!h.on_complete("srv", "e-0"), "the oldest was forgotten");
    assert!(h.on_complete("srv", &format!("e-{MAX_PENDING_URLS}")));
}

#[tokio::test]
async fn an_unknown_mode_is_declined() {
    let h = HostElicitation::new(Arc::new(ScriptedElicitation::with_url()));
    let other: ElicitParams = serde_json::from_value(json!({"mode": "oauth", "message": "sign in"})).unwrap();
    assert_eq!(answer(&h, other).await.unwrap().action, ElicitAction::Decline);
}

#[tokio::test]
async fn policies_for_unattended_hosts() {
    let decline = HostElicitation::new(Arc::new(ElicitationPolicy::DeclineAll));
    assert_eq!(answer(&decline, person()).await.unwrap().action, ElicitAction::Decline);

    let defaults = HostElicitation::new(Arc::new(ElicitationPolicy::AcceptDefaults));
    assert!(!defaults.supports_url());
    // `name` is required and has no default: nothing sensible to send.
    assert_eq!(answer(&defaults, person()).await.unwrap().action, ElicitAction::Decline);
    let all_defaulted = form(json!({"type": "object", "properties": {
        "size": {"type": "string", "enum": ["S", "M"], "default": "M"},
        "count": {"type": "number", "default": 2}}, "required": ["size"]}));
    let r = answer(&defaults, all_defaulted).await.unwrap();
    assert_eq!((r.action, Value::Object(r.content.unwrap())), (ElicitAction::Accept, json!({"size": "M", "count": 2})));
    // A default that breaks its own schema is declined, not sent again and again.
    let broken = form(json!({"type": "object", "properties": {"n": {"type": "integer", "minimum": 5, "default": 1}}}));
    assert_eq!(answer(&defaults, broken).await.unwrap().action, ElicitAction::Decline);
    // URLs are never accepted unattended.
    assert_eq!(
        ElicitationPolicy::AcceptDefaults
            .ask_url(UrlRequest {
                server: "s".into(),
                message: "m".into(),
                url: "https://example.com".into(),
                domain: "example.com".into(),
                elicitation_id: None,
            })
            .await,
        UrlAnswer::Decline
    );
}

/// A requestedSchema with a `$ref` cycle (before the fix, validating the answer recursed for
/// ever: memory exhaustion, or a stack overflow on a small stack) fails the request with a
/// message naming the server and the problem, and the user is never asked. Run on a thread
/// with a 256 KiB stack, to show that nothing recurses with the schema's shape.
#[test]
fn a_requested_schema_with_a_ref_cycle_is_refused_without_asking() {
    let run = || {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap();
        runtime.block_on(async {
            let script = ScriptedElicitation::new();
            script.answer_form(FormAnswer::Accept(object(json!({"name": "Ada"}))));
            let h = HostElicitation::new(Arc::new(script.clone()));
            let cycle = form(json!({"type": "object", "properties": {"name": {"type": "string"}},
                "$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}}, "$ref": "#/$defs/a"}));
            let err = answer(&h, cycle).await.unwrap_err();
            assert_eq!(err.code, ErrorCode::INVALID_PARAMS);
            for part in ["server `srv`", "requestedSchema", "refused", "cycle", "#/$defs/a"] {
                assert!(err.message.contains(part), "{part:?} is missing from {err:?}");
            }
            assert!(forms(&script).is_empty(), "the user was not asked");
            // The same host still answers a sound form.
            assert_eq!(answer(&h, person()).await.unwrap().action, ElicitAction::Accept);
        });
    };
    std::thread::Builder::new().stack_size(256 * 1024).spawn(run).unwrap().join().expect("no panic, no overflow");
}

/// A requestedSchema whose `$schema` names a dialect nobody knows (before the fix: the validator
/// tried to fetch its meta-schema, failed, and the form was never shown) is checked as the MCP
/// default dialect, as tool output schemas are: the user is asked and a fitting answer is sent.
#[tokio::test]
async fn an_unknown_schema_dialect_falls_back_to_the_default() {
    for dialect in ["https://example.com/no-such-dialect", "urn:unknown", "not a uri"] {
        let script = ScriptedElicitation::new();
        script
            .answer_form(FormAnswer::Accept(object(json!({"name": ""}))))
            .answer_form(FormAnswer::Accept(object(json!({"name": "Ada"}))));
        let h = HostElicitation::new(Arc::new(script.clone()));
        let params = form(json!({"$schema": dialect, "type": "object",
            "properties": {"name": {"type": "string", "minLength": 1}}, "required": ["name"]}));
        let r = answer(&h, params).await.unwrap_or_else(|e| panic!("{dialect}: {e:?}"));
        assert_eq!((r.action, r.content.unwrap()["name"].clone()), (ElicitAction::Accept, json!("Ada")), "{dialect}");
        let asked = forms(&script);
        assert_eq!(asked.len(), 2, "{dialect}: the empty name is still refused by the fallback dialect");
        assert!(asked[1].problems.join("\n").contains("/name"), "{:?}", asked[1].problems);
    }
}

/// A known dialect is still honoured: draft-07 reads `dependencies`, which 2020-12 ignores.
#[tokio::test]
async fn a_known_schema_dialect_is_used() {
    let script = ScriptedElicitation::new();
    script
        .answer_form(FormAnswer::Accept(object(json!({"card": "4111"}))))
        .answer_form(FormAnswer::Accept(object(json!({"card": "4111", "cvc": "123"}))));
    let h = HostElicitation::new(Arc::new(script.clone()));
    let params = form(json!({"$schema": "http://json-schema.org/draft-07/schema#", "type": "object",
        "properties": {"card": {"type": "string"}, "cvc": {"type": "string"}},
        "dependencies": {"card": ["cvc"]}}));
    assert_eq!(answer(&h, params).await.unwrap().action, ElicitAction::Accept);
    assert_eq!(forms(&script).len(), 2, "the draft-07 dependency refused the first answer");
}

/// A pattern that backtracks catastrophically is cut off by the same budget as tool schemas: the
/// answer is refused with a problem rather than the host spinning.
#[tokio::test]
async fn a_hostile_pattern_runs_within_the_regex_budget() {
    let script = ScriptedElicitation::new();
    for _ in 0..3 {
        script.answer_form(FormAnswer::Accept(object(json!({"code": format!("{}!", "a".repeat(40))}))));
    }
    let h = HostElicitation::new(Arc::new(script.clone()));
    let params = form(json!({"type": "object", "properties": {"code": {"type": "string", "pattern": "^(a|a)*$"}}}));
    let r = tokio::time::timeout(Duration::from_secs(30), h.elicit("srv", params)).await.expect("bounded").unwrap();
    assert_eq!(r.action, ElicitAction::Cancel, "never accepted: the answer does not match (or the budget ran out)");
    assert_eq!(forms(&script).len(), 3);
}

/// Keys the form does not have are refused (before the fix they were sent to the server): the
/// user is asked again, told which key, and a later answer without it is sent.
#[tokio::test]
async fn answer_keys_outside_the_schema_are_refused() {
    let script = ScriptedElicitation::new();
    script
        .answer_form(FormAnswer::Accept(object(json!({"name": "Ada", "is_admin": true}))))
        .answer_form(FormAnswer::Accept(object(json!({"name": "Ada"}))));
    let h = HostElicitation::new(Arc::new(script.clone()));
    let r = answer(&h, person()).await.unwrap();
    let content = r.content.unwrap();
    assert!(!content.contains_key("is_admin"), "{content:?}");
    let asked = forms(&script);
    assert_eq!(asked.len(), 2);
    let problems = asked[1].problems.join("\n");
    assert!(problems.contains("is_admin") && problems.contains("not a field"), "{problems}");
}
