//! The scripted server against a bare client end: what it answers, records, sends and waits for.

use mcp_protocol::{ErrorCode, Message, RequestId};
use mcp_transport::{MemoryTransport, Transport, TransportEvent};
use serde_json::{Value, json};

use super::*;
use crate::messages::{method_not_found, notification, request, response};
use crate::within;

async fn next(client: &MemoryTransport) -> Message {
    match client.recv().await {
        TransportEvent::Message(m) => m,
        other => panic!("expected a message, got {other:?}"),
    }
}

fn answer(message: Message) -> Reply {
    let Message::Response(r) = message else { panic!("expected a response, got {message:?}") };
    r.into_result().map(|raw| serde_json::from_str(raw.get()).unwrap())
}

#[tokio::test]
async fn requests_are_answered_by_the_script_and_recorded_in_order() {
    within(async {
        let (client, server) = MemoryTransport::pair();
        let server = ScriptedServer::start(server, |request, params| match request.method.as_str() {
            "echo" => Some(Ok(params.clone())),
            "silent" => None,
            other => Some(Err(method_not_found(other))),
        });
        client.send(request(RequestId::from(1), "echo", json!({"a": 1}))).await.unwrap();
        assert_eq!(answer(next(&client).await).unwrap(), json!({"a": 1}));
        client.send(request(RequestId::from(2), "nope", Value::Null)).await.unwrap();
        let error = answer(next(&client).await).unwrap_err();
        assert_eq!(error.code, ErrorCode::METHOD_NOT_FOUND);
        client.send(notification("notifications/initialized", Value::Null)).await.unwrap();
        client.send(request(RequestId::from(3), "silent", json!([1]))).await.unwrap();
        let (late, params) = server.nth("silent", 1).await;
        assert_eq!(params, json!([1]));
        server.reply(&late.id, Ok(json!("late"))).await;
        assert_eq!(answer(next(&client).await).unwrap(), json!("late"));
        client.send(request(RequestId::from(4), "tools/call", json!({"name": "upper"}))).await.unwrap();
        assert_eq!(answer(next(&client).await).unwrap_err().code, ErrorCode::METHOD_NOT_FOUND);
        assert_eq!(server.called_tools(), ["upper"]);
        assert_eq!(server.count("echo"), 1);
        assert_eq!(server.requests_of("nope"), [Value::Null]);
        assert_eq!(server.notifications(), ["notifications/initialized"]);
        let methods: Vec<Option<String>> = server.events().iter().map(|e| e.method().map(str::to_owned)).collect();
        let expected =
            ["echo", "nope", "notifications/initialized", "silent", "tools/call"].map(|m| Some(m.to_owned()));
        assert_eq!(methods, expected);
    })
    .await
}

#[tokio::test]
async fn the_server_asks_and_notifies_the_client() {
    within(async {
        let (client, server) = MemoryTransport::pair();
        let server = ScriptedServer::start(server, |_, _| None);
        let asking = tokio::spawn(async move {
            let answer = server.ask("roots/list", json!({})).await;
            server.notify("notifications/message", json!({"level": "info"})).await;
            (server, answer)
        });
        let Message::Request(asked) = next(&client).await else { panic!("expected a request") };
        assert_eq!(asked.method, "roots/list");
        client.send(response(&asked.id, Ok(json!({"roots": []})))).await.unwrap();
        let Message::Notification(note) = next(&client).await else { panic!("expected a notification") };
        assert_eq!(note.method, "notifications/message");
        let (server, answer) = asking.await.unwrap();
        assert_eq!(answer.unwrap(), json!({"roots": []}));
        assert_eq!(server.answers().len(), 1);
        assert!(matches!(&server.events()[..], [Event::Sent(_), Event::Answer(_), Event::Sent(_)]));
    })
    .await
}

#[tokio::test]
async fn the_outbox_sends_after_the_reply_and_the_script_sees_answers() {
    within(async {
        let (client, server) = MemoryTransport::pair();
        let server = ScriptedServer::start_with(server, |got, outbox| match got {
            Got::Request(request, _) => {
                outbox.notify("notifications/progress", json!({"progress": 1}));
                outbox.send(request_to_client());
                Some(Ok(json!({"for": request.method})))
            }
            Got::Answer(response) => {
                assert_eq!(response.id, Some(RequestId::from(99)));
                outbox.notify("notifications/answered", Value::Null);
                None
            }
        });
        client.send(request(RequestId::from(1), "tools/call", Value::Null)).await.unwrap();
        assert_eq!(answer(next(&client).await).unwrap(), json!({"for": "tools/call"}), "the reply comes first");
        assert_eq!(next(&client).await.method(), Some("notifications/progress"));
        let Message::Request(asked) = next(&client).await else { panic!("expected a request") };
        client.send(response(&asked.id, Ok(json!({})))).await.unwrap();
        assert_eq!(next(&client).await.method(), Some("notifications/answered"));
        // From outside the script too.
        server.outbox().notify("notifications/tools/list_changed", Value::Null);
        assert_eq!(next(&client).await.method(), Some("notifications/tools/list_changed"));
    })
    .await
}

fn request_to_client() -> Message {
    request(RequestId::from(99), "sampling/createMessage", json!({}))
}

#[tokio::test]
async fn the_server_ends_with_its_transport() {
    within(async {
        let (client, server) = MemoryTransport::pair();
        let server = ScriptedServer::start(server, |_, _| Some(Ok(json!({}))));
        let outbox = server.outbox();
        assert!(!outbox.0.is_closed(), "serving");
        client.close().await;
        // The loop ends (it drops the outbox's receiver): a late message is dropped, not sent.
        server.ended().await;
        assert!(outbox.0.is_closed());
        outbox.notify("notifications/ignored", Value::Null);
        assert!(server.events().is_empty());
    })
    .await
}
