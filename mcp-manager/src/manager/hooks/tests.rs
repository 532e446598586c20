use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::json;

use super::*;

/// 2024-01-01T00:00:00Z, 1704067200 s after the epoch.
fn new_year() -> SystemTime {
    UNIX_EPOCH + Duration::from_secs(1_704_067_200)
}

fn connected(name: &str) -> ManagerEvent {
    ManagerEvent::ServerConnected(ServerConnected {
        server_name: name.into(),
        transport: "stdio".into(),
        protocol_version: "2025-11-25".into(),
        tool_count: 3,
        prompt_count: 1,
        resource_count: 0,
        resource_template_count: 2,
        at: new_year(),
    })
}

fn disconnected() -> ManagerEvent {
    ServerDisconnected {
        server_name: "web".into(),
        transport: "streamable_http".into(),
        reason: "closed".into(),
        had_session: true,
        protocol_version: Some("2025-06-18".into()),
        session_id: Some("s-1".into()),
        at: new_year() + Duration::from_millis(1),
    }
    .into()
}

#[test]
fn event_names_and_json_shape() {
    assert_eq!(connected("a").name(), "mcp.server_connected");
    assert_eq!(disconnected().name(), "mcp.server_disconnected");
    let executed = ToolExecuted::new(
        "math",
        "add",
        &json!({"a": 1}),
        &ToolExecutionResult::ok_text("3"),
        Duration::from_millis(1500),
    );
    let at = executed.at;
    assert!(at <= SystemTime::now() && at > new_year(), "stamped when made");
    let executed = ToolExecuted { at: new_year() + Duration::from_millis(2), ..executed };
    let event = ManagerEvent::from(executed);
    assert_eq!(event.at(), new_year() + Duration::from_millis(2));
    assert_eq!(event.name(), "mcp.tool_executed");
    assert_eq!(event.server_name(), "math");

    assert_eq!(
        serde_json::to_value(connected("a")).unwrap(),
        json!({
            "event": "mcp.server_connected", "server_name": "a", "transport": "stdio",
            "protocol_version": "2025-11-25", "tool_count": 3, "prompt_count": 1,
            "resource_count": 0, "resource_template_count": 2, "timestamp_ms": 1_704_067_200_000_u64
        })
    );
    assert_eq!(
        serde_json::to_value(disconnected()).unwrap(),
        json!({
            "event": "mcp.server_disconnected", "server_name": "web", "transport": "streamable_http",
            "reason": "closed", "had_session": true, "protocol_version": "2025-06-18", "session_id": "s-1",
            "timestamp_ms": 1_704_067_200_001_u64
        })
    );
    assert_eq!(
        serde_json::to_value(&event).unwrap(),
        json!({
            "event": "mcp.tool_executed", "server_name": "math", "tool_name": "add", "arguments": {"a": 1},
            "success": true, "duration_ms": 1500, "content_length": 1, "error_message": null, "metadata": {},
            "caller": {"user_id": "", "session_id": "", "chat_stream_id": "", "platform": ""},
            "timestamp_ms": 1_704_067_200_002_u64
        })
    );
}

#[test]
fn tool_executed_redacts_arguments_and_metadata() {
    let result = ToolExecutionResult::failed("boom")
        .with_metadata("server_name", json!("s"))
        .with_metadata("_meta", json!({"authToken": "t0p", "trace": "x"}));
    let event =
        ToolExecuted::new("s", "login", &json!({"user": "ann", "password": "hunter2"}), &result, Duration::ZERO);
    assert_eq!(event.arguments, json!({"user": "ann", "password": REDACTED}));
    assert_eq!(event.metadata["_meta"], json!({"authToken": REDACTED, "trace": "x"}));
    assert_eq!(event.metadata["server_name"], "s");
    assert!(!event.success);
    assert_eq!(event.error_message.as_deref(), Some("boom"));
    assert_eq!(event.content_length, "Error: boom".len(), "the length of the history text");
    assert!(!serde_json::to_string(&event).unwrap().contains("hunter2"));
    assert!(!format!("{event:?}").contains("t0p"));
}

#[test]
fn typed_observers_see_only_their_event_and_cannot_break_the_others() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let (a, b, c, d) = (seen.clone(), seen.clone(), seen.clone(), seen.clone());
    let hooks = Hooks::new()
        .on_server_connected(move |e| a.lock().unwrap().push(format!("connected {} {}", e.server_name, e.tool_count)))
        .on_server_disconnected(move |e| b.lock().unwrap().push(format!("lost {}: {}", e.server_name, e.reason)))
        .on_tool_executed(|_| panic!("a typed observer that panics"))
        .on_tool_executed(move |e| c.lock().unwrap().push(format!("ran {} for {:?}", e.tool_name, e.caller.user_id)))
        .on_event(move |e| d.lock().unwrap().push(format!("any {}", e.name())));
    let caller = Caller { user_id: "ann".into(), ..Caller::default() };
    let executed =
        ToolExecuted::new("s", "t", &json!({}), &ToolExecutionResult::ok_text("x"), Duration::ZERO).with_caller(caller);
    for event in [connected("a"), disconnected(), executed.into()] {
        hooks.emit(event);
    }
    assert_eq!(
        *seen.lock().unwrap(),
        [
            "connected a 3",
            "any mcp.server_connected",
            "lost web: closed",
            "any mcp.server_disconnected",
            "ran t for \"ann\"",
            "any mcp.tool_executed",
        ]
    );
}

#[test]
fn emit_calls_every_observer_in_order() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let mut hooks = Hooks::new();
    for id in 0..3 {
        let seen = Arc::clone(&seen);
        hooks.add(move |event: &ManagerEvent| {
            seen.lock().unwrap().push(format!("{id}:{}", event.server_name()));
            Ok(())
        });
    }
    assert_eq!(hooks.len(), 3);
    hooks.emit(connected("one"));
    hooks.clone().emit(connected("two"));
    assert_eq!(*seen.lock().unwrap(), ["0:one", "1:one", "2:one", "0:two", "1:two", "2:two"]);
}

struct Counter(AtomicUsize);

impl ManagerObserver for Counter {
    fn on_event(&self, _event: &ManagerEvent) -> Result<(), String> {
        self.0.fetch_add(1, Ordering::SeqCst);
        Ok(())
    }
}

#[test]
fn failing_and_panicking_observers_do_not_stop_the_others() {
    let counter = Arc::new(Counter(AtomicUsize::new(0)));
    let hooks = Hooks::new()
        .with(|_: &ManagerEvent| Err("observer refused".to_owned()))
        .with(|event: &ManagerEvent| -> Result<(), String> { panic!("observer exploded on {}", event.name()) })
        .with(|_: &ManagerEvent| -> Result<(), String> { std::panic::panic_any(42_u8) });
    let mut hooks = hooks;
    hooks.add_shared(counter.clone());
    hooks.emit(connected("a"));
    hooks.emit(disconnected());
    assert_eq!(counter.0.load(Ordering::SeqCst), 2);
}

#[test]
fn no_observers_means_no_event_is_built() {
    let hooks = Hooks::default();
    assert!(hooks.is_empty());
    let built = AtomicUsize::new(0);
    hooks.emit_with(|| {
        built.fetch_add(1, Ordering::SeqCst);
        connected("a")
    });
    assert_eq!(built.load(Ordering::SeqCst), 0);

    let hooks = Hooks::new().with(|_: &ManagerEvent| Ok(()));
    hooks.emit_with(|| {
        built.fetch_add(1, Ordering::SeqCst);
        connected("a")
    });
    assert_eq!(built.load(Ordering::SeqCst), 1);
    assert_eq!(format!("{hooks:?}"), "Hooks { observers: 1 }");
}

#[test]
fn panic_messages_are_read() {
    assert_eq!(panic_message(&"text"), "text");
    assert_eq!(panic_message(&String::from("owned")), "owned");
    assert_eq!(panic_message(&7_i32), "a non-text panic payload");
}

#[test]
fn secret_keys() {
    for key in [
        "password",
        "passwd",
        "secret",
        "token",
        "api_key",
        "apikey",
        "apiKey",
        "APIKey",
        "x-api-key",
        "authorization",
        "Authorization",
        "auth",
        "credential",
        "credentials",
        "private_key",
        "privateKey",
        "cookie",
        "Set-Cookie",
        "session",
        "session_id",
        "SESSION_ID",
        "sessionId",
        "X-Auth-Token",
        "access_token",
        "accessToken",
        "refreshtoken",
        "client_secret",
        "db.password",
        "userPassword",
        "AWS_SECRET_ACCESS_KEY",
        "bearer",
        "key",
    ] {
        assert!(is_secret_key(key), "{key} should be secret");
        assert!(crate::config::looks_secret(key) || key == "bearer", "{key}: the shared rule disagrees");
    }
    for key in ["author", "keyword", "keywords", "monkey", "max_tokens", "tokens", "name", "query", "path", "sessions"]
    {
        assert!(!is_secret_key(key), "{key} should not be secret");
    }
}

#[test]
fn redact_walks_objects_and_arrays() {
    let value = json!({
        "query": "weather",
        "api_key": "sk-1",
        "nested": {"config": [{"token": {"deep": 1}}, {"plain": "Bearer abc.def"}, "Basic dXNlcjpwYXNz"]},
        "note": "Bearer of bad news",
        "list": [1, true, null, "ok"],
    });
    let redacted = redact(&value);
    assert_eq!(
        redacted,
        json!({
            "query": "weather",
            "api_key": REDACTED,
            "nested": {"config": [{"token": REDACTED}, {"plain": REDACTED}, REDACTED]},
            "note": "Bearer of bad news",
            "list": [1, true, null, "ok"],
        })
    );
    assert_eq!(redact(&json!("plain")), json!("plain"));
    assert_eq!(redact(&json!(3)), json!(3));
}

#[test]
fn redact_caps_depth() {
    let mut value = json!({"leaf": "visible"});
    for _ in 0..100 {
        value = json!({ "level": value });
    }
    let redacted = redact(&value);
    let mut cursor = &redacted;
    let mut depth = 0;
    while let Some(inner) = cursor.get("level") {
        cursor = inner;
        depth += 1;
    }
    assert_eq!(*cursor, json!(REDACTED));
    assert_eq!(depth, MAX_REDACT_DEPTH);
}
