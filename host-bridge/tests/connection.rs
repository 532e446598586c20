//! The bridge behind a real `McpConnection`, over an in-memory transport, with the test playing
//! a legacy-era server that asks the host for sampling, elicitation and roots and sends logs.
//! Errors must reach the server as JSON-RPC errors of the one request, with the connection
//! still working afterwards.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use host_bridge::{
    FormAnswer, HostBridge, LlmError, NotificationCallback, Roots, SamplingOptions, ScriptedElicitation, ScriptedLlm,
    file_root,
};
use mcp_manager::connection::EraPreference;
use mcp_manager::{McpConnection, single_use_factory};
use mcp_protocol::ErrorCode;
use mcp_transport::MemoryTransport;
use serde_json::{Value, json};
use test_support::{Event, ScriptedServer, messages, within};

/// A legacy-era server that answers the handshake (declaring `logging`) and records the rest.
fn fake(transport: MemoryTransport) -> ScriptedServer {
    ScriptedServer::start(transport, |request, _| match request.method.as_str() {
        "initialize" => Some(Ok(messages::initialize_result("fake", json!({"logging": {}})))),
        _ => None,
    })
}

/// The capabilities the client declared in `initialize`.
fn declared(server: &ScriptedServer) -> Value {
    server.requests_of("initialize")[0]["capabilities"].clone()
}

/// The notifications the server received, once there are `n` of them.
async fn notifications(server: &ScriptedServer, n: usize) -> Vec<String> {
    server.until(|events| events.iter().filter(|e| matches!(e, Event::Notification { .. })).count() >= n).await;
    server.notifications()
}

fn sampling(messages: Value) -> Value {
    json!({"messages": messages, "maxTokens": 20, "systemPrompt": "be brief"})
}

fn user(text: &str) -> Value {
    json!([{"role": "user", "content": {"type": "text", "text": text}}])
}

#[tokio::test]
async fn a_server_asks_and_the_bridge_answers_over_a_live_connection() {
    within(scenario()).await;
}

async fn scenario() {
    let llm = ScriptedLlm::new("host-model");
    let elicitation = ScriptedElicitation::new();
    let dir = std::env::temp_dir();
    let roots = Roots::new([file_root(&dir, Some("tmp".into())).unwrap()]).unwrap();
    let logs: Arc<Mutex<Vec<(String, Value)>>> = Arc::default();
    let record = logs.clone();
    let callback: NotificationCallback = Arc::new(move |server, n| {
        if let mcp_protocol::messages::ServerNotification::LoggingMessage(Some(m)) = n {
            record.lock().unwrap().push((server.to_owned(), m.data.clone()));
        }
    });
    let bridge = HostBridge::builder()
        .llm(Arc::new(llm.clone()), SamplingOptions::default())
        .elicitation(Arc::new(elicitation.clone()))
        .roots(roots.clone())
        .on_notification(callback)
        .build();

    let (client, server) = MemoryTransport::pair();
    let mut options = bridge.connection_options("fake");
    options.era = EraPreference::Legacy;
    let server = fake(server);
    let connection = Arc::new(McpConnection::new(single_use_factory(Arc::new(client)), options));
    connection.connect().await.expect("connected");
    let capabilities = declared(&server);
    assert_eq!(notifications(&server, 1).await, ["notifications/initialized"]);
    assert_eq!(capabilities["sampling"], json!({}), "sampling without tools: {capabilities}");
    assert_eq!(capabilities["elicitation"], json!({"form": {}}), "{capabilities}");
    assert_eq!(capabilities["roots"], json!({"listChanged": true}), "{capabilities}");

    // Sampling: answered by the host's LLM.
    llm.push_text("a short answer");
    let result = server.ask("sampling/createMessage", sampling(user("say something"))).await.unwrap();
    assert_eq!(
        result,
        json!({"role": "assistant", "content": {"type": "text", "text": "a short answer"},
            "model": "host-model", "stopReason": "endTurn"})
    );
    let seen = &llm.requests()[0];
    assert_eq!((seen.messages[0].text(), seen.max_tokens), ("be brief".to_owned(), Some(20)));

    // A bad role never reaches the LLM: -32602.
    let bad_role = json!([{"role": "system", "content": {"type": "text", "text": "x"}}]);
    let err = server.ask("sampling/createMessage", sampling(bad_role)).await.unwrap_err();
    assert_eq!(err.code, ErrorCode::INVALID_PARAMS, "{err:?}");
    // Tools while tool support is off: -32602.
    let mut with_tools = sampling(user("weather?"));
    with_tools["tools"] = json!([{"name": "weather", "inputSchema": {"type": "object"}}]);
    let err = server.ask("sampling/createMessage", with_tools).await.unwrap_err();
    assert_eq!(err.code, ErrorCode::INVALID_PARAMS);
    assert!(err.message.contains("does not support tools"), "{err:?}");
    // An LLM failure is -32603 with its cause, and the next request works.
    llm.push(Err(LlmError::Timeout { timeout: Duration::from_secs(3) })).push_text("back again");
    let err = server.ask("sampling/createMessage", sampling(user("one"))).await.unwrap_err();
    assert_eq!(err.code, ErrorCode::INTERNAL_ERROR);
    assert!(err.message.contains("did not answer within 3s"), "{err:?}");
    let result = server.ask("sampling/createMessage", sampling(user("two"))).await.unwrap();
    assert_eq!(result["content"]["text"], "back again");
    assert_eq!(llm.requests().len(), 3, "only the valid requests reached the LLM");

    // Elicitation: the scripted user answers; the default fills the rest.
    let mut answer = serde_json::Map::new();
    answer.insert("name".into(), json!("Ada"));
    elicitation.answer_form(FormAnswer::Accept(answer));
    let form = json!({"message": "Your name?", "requestedSchema": {"type": "object", "properties": {
        "name": {"type": "string"}, "tea": {"type": "boolean", "default": true}}, "required": ["name"]}});
    let result = server.ask("elicitation/create", form).await.unwrap();
    assert_eq!(result, json!({"action": "accept", "content": {"name": "Ada", "tea": true}}));

    // Roots, then a change announced with notifications/roots/list_changed: the connection
    // watches the roots of its callbacks by itself.
    let listed = server.ask("roots/list", json!({})).await.unwrap();
    assert_eq!(listed["roots"][0]["name"], "tmp");
    assert!(listed["roots"][0]["uri"].as_str().unwrap().starts_with("file:///"), "{listed}");
    roots.set([file_root("/srv/elsewhere", None).unwrap()]).unwrap();
    assert_eq!(notifications(&server, 2).await[1], "notifications/roots/list_changed");
    let listed = server.ask("roots/list", json!({})).await.unwrap();
    assert_eq!(listed, json!({"roots": [{"uri": "file:///srv/elsewhere"}]}));
    assert_eq!(server.notifications().len(), 2, "one change, one notification: {:?}", server.notifications());

    // A log message reaches the host's callback with the server's name.
    server.notify("notifications/message", json!({"level": "warning", "logger": "db", "data": "disk low"})).await;
    while logs.lock().unwrap().is_empty() {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(logs.lock().unwrap().clone(), [("fake".to_owned(), json!("disk low"))]);

    connection.close().await;
}

/// A `RootsNotifier` announces the changes of roots that the connection's callbacks do not hold.
#[tokio::test]
async fn a_roots_notifier_announces_other_roots() {
    within(async {
        let roots = Roots::new([file_root("/srv/one", None).unwrap()]).unwrap();
        let bridge = HostBridge::builder().build();
        let (client, server) = MemoryTransport::pair();
        let mut options = bridge.connection_options("plain");
        options.era = EraPreference::Legacy;
        let server = fake(server);
        let connection = Arc::new(McpConnection::new(single_use_factory(Arc::new(client)), options));
        connection.connect().await.expect("connected");
        let capabilities = declared(&server);
        assert!(capabilities.get("roots").is_none(), "no roots in the callbacks: {capabilities}");
        let notifier = roots.notify_changes(&connection);
        roots.add(file_root("/srv/two", None).unwrap()).unwrap();
        let heard = notifications(&server, 2).await;
        assert_eq!(heard, ["notifications/initialized", "notifications/roots/list_changed"]);
        drop(notifier);
        connection.close().await;
    })
    .await
}
