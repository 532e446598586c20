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
use mcp_protocol::{ErrorCode, ErrorObject, Message, RequestId, Response};
use mcp_transport::{MemoryTransport, Transport, TransportEvent};
use serde_json::{Value, json};

const LIMIT: Duration = Duration::from_secs(10);

/// The server's end: sends requests, collects the client's notifications on the way.
struct FakeServer {
    transport: MemoryTransport,
    next_id: i64,
    notifications: Vec<String>,
}

impl FakeServer {
    async fn next(&self) -> Message {
        match tokio::time::timeout(LIMIT, self.transport.recv()).await.expect("the client answers") {
            TransportEvent::Message(m) => m,
            other => panic!("expected a message, got {other:?}"),
        }
    }

    /// Answer the handshake; returns the capabilities the client declared.
    async fn handshake(&mut self) -> Value {
        let Message::Request(init) = self.next().await else { panic!("expected initialize") };
        assert_eq!(init.method, "initialize");
        let params: Value = serde_json::from_str(init.params.as_ref().unwrap().get()).unwrap();
        let result = json!({"protocolVersion": "2025-11-25", "capabilities": {"logging": {}},
            "serverInfo": {"name": "fake", "version": "1"}});
        let raw = serde_json::value::to_raw_value(&result).unwrap();
        self.transport.send(Message::Response(Response::result(init.id, raw))).await.unwrap();
        let Message::Notification(n) = self.next().await else { panic!("expected initialized") };
        assert_eq!(n.method, "notifications/initialized");
        params["capabilities"].clone()
    }

    /// Send a request to the client and wait for its answer.
    async fn ask(&mut self, method: &str, params: Value) -> Result<Value, ErrorObject> {
        self.next_id += 1;
        let id = RequestId::Number(self.next_id);
        self.transport.send(Message::request(id.clone(), method, Some(&params)).unwrap()).await.unwrap();
        loop {
            match self.next().await {
                Message::Response(r) if r.id.as_ref() == Some(&id) => {
                    return r.into_result().map(|raw| serde_json::from_str(raw.get()).unwrap());
                }
                Message::Notification(n) => self.notifications.push(n.method),
                other => panic!("unexpected {other:?}"),
            }
        }
    }

    async fn notify(&self, method: &str, params: Value) {
        self.transport.send(Message::notification(method, Some(&params)).unwrap()).await.unwrap();
    }

    /// Wait for a notification from the client.
    async fn notification(&mut self) -> String {
        if !self.notifications.is_empty() {
            return self.notifications.remove(0);
        }
        match self.next().await {
            Message::Notification(n) => n.method,
            other => panic!("expected a notification, got {other:?}"),
        }
    }
}

fn sampling(messages: Value) -> Value {
    json!({"messages": messages, "maxTokens": 20, "systemPrompt": "be brief"})
}

fn user(text: &str) -> Value {
    json!([{"role": "user", "content": {"type": "text", "text": text}}])
}

#[tokio::test]
async fn a_server_asks_and_the_bridge_answers_over_a_live_connection() {
    tokio::time::timeout(Duration::from_secs(30), scenario()).await.expect("the test timed out");
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
    let connection = Arc::new(McpConnection::new(single_use_factory(Arc::new(client)), options));
    let mut server = FakeServer { transport: server, next_id: 0, notifications: Vec::new() };
    let connecting = tokio::spawn({
        let connection = connection.clone();
        async move { connection.connect().await }
    });
    let capabilities = server.handshake().await;
    connecting.await.unwrap().expect("connected");
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
    assert_eq!(server.notification().await, "notifications/roots/list_changed");
    let listed = server.ask("roots/list", json!({})).await.unwrap();
    assert_eq!(listed, json!({"roots": [{"uri": "file:///srv/elsewhere"}]}));
    assert!(server.notifications.is_empty(), "one change, one notification: {:?}", server.notifications);

    // A log message reaches the host's callback with the server's name.
    server.notify("notifications/message", json!({"level": "warning", "logger": "db", "data": "disk low"})).await;
    let deadline = tokio::time::Instant::now() + LIMIT;
    while logs.lock().unwrap().is_empty() {
        assert!(tokio::time::Instant::now() < deadline, "the log never reached the callback");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(logs.lock().unwrap().clone(), [("fake".to_owned(), json!("disk low"))]);

    connection.close().await;
}

/// A `RootsNotifier` announces the changes of roots that the connection's callbacks do not hold.
#[tokio::test]
async fn a_roots_notifier_announces_other_roots() {
    tokio::time::timeout(Duration::from_secs(30), async {
        let roots = Roots::new([file_root("/srv/one", None).unwrap()]).unwrap();
        let bridge = HostBridge::builder().build();
        let (client, server) = MemoryTransport::pair();
        let mut options = bridge.connection_options("plain");
        options.era = EraPreference::Legacy;
        let connection = Arc::new(McpConnection::new(single_use_factory(Arc::new(client)), options));
        let mut server = FakeServer { transport: server, next_id: 0, notifications: Vec::new() };
        let connecting = tokio::spawn({
            let connection = connection.clone();
            async move { connection.connect().await }
        });
        let capabilities = server.handshake().await;
        connecting.await.unwrap().expect("connected");
        assert!(capabilities.get("roots").is_none(), "no roots in the callbacks: {capabilities}");
        let notifier = roots.notify_changes(&connection);
        roots.add(file_root("/srv/two", None).unwrap()).unwrap();
        assert_eq!(server.notification().await, "notifications/roots/list_changed");
        drop(notifier);
        connection.close().await;
    })
    .await
    .expect("the test timed out");
}
