//! A POST exchange runs in the task of the `send` that started it, up to the delivery of a JSON
//! reply: no task is started for it, and the reply is delivered when `send` returns. What that
//! must not cost: a `send` dropped half-way still has its reply delivered (the exchange goes on
//! in a task), a `send` whose transport closes returns at once, and a `send` never waits for
//! room in the event queue (a caller that reads the queue only after sending does not hang).

use std::time::Duration;

use crate::http_support::*;
use axum::body::{Body, Bytes};
use axum::response::Response;
use futures::FutureExt;
use mcp_protocol::RequestId;
use mcp_transport::{CloseReason, StreamableHttpTransport, Transport, TransportError, TransportEvent};
use serde_json::{Value, json};
use test_support::within;

/// A JSON reply whose headers come at once and whose body comes `delay` later (never, without
/// one).
fn slow_json(delay: Option<Duration>, body: &Value) -> Response {
    let text = Bytes::from(body.to_string());
    let body = futures::stream::once(async move {
        match delay {
            Some(delay) => tokio::time::sleep(delay).await,
            None => futures::future::pending().await,
        }
        Ok::<_, std::io::Error>(text)
    });
    Response::builder().status(200).header("content-type", "application/json").body(Body::from_stream(body)).unwrap()
}

fn call(id: i64) -> mcp_protocol::Message {
    request(id, "tools/call", json!({"name": "echo"}))
}

/// A server whose every reply's body comes 300 ms after its headers, and a transport to it.
async fn late_bodies() -> (Server, StreamableHttpTransport) {
    let server = Server::start(|req| slow_json(Some(Duration::from_millis(300)), &result_for(req, json!({})))).await;
    let transport = StreamableHttpTransport::new(config(&server.url("/mcp"))).unwrap();
    (server, transport)
}

#[tokio::test]
async fn a_json_exchange_runs_in_the_senders_task_and_is_delivered_when_send_returns() {
    within(async {
        let (_server, t) = late_bodies().await;
        // The first exchange opens the connection (and the task that drives it).
        t.send(call(1)).await.unwrap();
        assert_eq!(response_id(&next_message(&t).await), RequestId::Number(1));

        let metrics = tokio::runtime::Handle::current().metrics();
        let tasks = metrics.num_alive_tasks();
        let send = t.send(call(2));
        tokio::pin!(send);
        assert!(tokio::time::timeout(Duration::from_millis(100), &mut send).await.is_err(), "the body is late");
        assert_eq!(metrics.num_alive_tasks(), tasks, "no task was started for the exchange");
        send.await.unwrap();
        match t.recv().now_or_never() {
            Some(TransportEvent::Message(message)) => assert_eq!(response_id(&message), RequestId::Number(2)),
            other => panic!("the reply was not delivered when send returned: {other:?}"),
        }
    })
    .await
}

#[tokio::test]
async fn a_send_dropped_half_way_still_has_its_reply_delivered() {
    within(async {
        let (server, t) = late_bodies().await;
        assert!(tokio::time::timeout(Duration::from_millis(50), t.send(call(1))).await.is_err());
        // The exchange went on in a task of the transport: the POST was not cut.
        assert_eq!(response_id(&next_message(&t).await), RequestId::Number(1));
        assert_eq!(server.posts(), ["POST tools/call"]);
    })
    .await
}

#[tokio::test]
async fn a_send_whose_transport_closes_returns_at_once() {
    within(async {
        let server = Server::start(|req| match req.rpc_method() {
            Some("tools/call") => slow_json(None, &json!({})),
            _ => status(202),
        })
        .await;
        let t = StreamableHttpTransport::new(config(&server.url("/mcp"))).unwrap();
        let (sent, ()) = tokio::join!(t.send(call(1)), async {
            server.wait_for(|log| !log.is_empty()).await;
            t.close().await;
        });
        assert!(matches!(sent, Err(TransportError::Closed(CloseReason::Closed))), "{sent:?}");
    })
    .await
}

#[tokio::test]
async fn a_send_never_waits_for_room_in_the_event_queue() {
    within(async {
        let server = Server::start(|req| json_response(200, &[], &result_for(req, json!({})))).await;
        let t = StreamableHttpTransport::new(config(&server.url("/mcp"))).unwrap();
        // More replies than the queue holds, none read while sending: each send still returns.
        let count = 300;
        for id in 0..count {
            t.send(call(id)).await.unwrap();
        }
        let mut ids: Vec<RequestId> = Vec::new();
        for _ in 0..count {
            ids.push(response_id(&next_message(&t).await));
        }
        ids.sort_by_key(|id| match id {
            RequestId::Number(n) => *n,
            other => panic!("unexpected id {other:?}"),
        });
        assert_eq!(ids, (0..count).map(RequestId::Number).collect::<Vec<_>>(), "every reply once");
        no_event(&t, 100).await;
    })
    .await
}
