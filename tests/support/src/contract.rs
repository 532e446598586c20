//! The [`Transport`] contract, checked on the two connected ends of a transport: what every
//! transport must do, whatever carries its bytes (see `mcp_transport::Transport`). A new
//! transport's tests call [`check_transport_contract`] on a fresh pair; it panics naming the
//! first rule broken.

use std::time::Duration;

use futures::FutureExt;
use mcp_protocol::codec::encode_line;
use mcp_protocol::{Message, RequestId};
use mcp_transport::{Transport, TransportError, TransportEvent};
use serde_json::{Value, json};

use crate::messages::{notification, request, response};

/// How long one step may wait for the other end.
const STEP: Duration = Duration::from_secs(10);

/// Check the contract on `a` and `b`, two connected ends: messages arrive whole and in order both
/// ways (a 256 KiB payload too), concurrent sends each arrive whole, a `send` dropped before it
/// completed leaves nothing half-written, and after `a.close()`: `send` fails with
/// [`TransportError::Closed`], every `recv` returns [`TransportEvent::Closed`], `close` may be
/// called again, and `b` sees the end. Both ends are spent afterwards.
pub async fn check_transport_contract(a: &dyn Transport, b: &dyn Transport) {
    in_order_both_ways(a, b).await;
    concurrent_sends_arrive_whole(a, b).await;
    a_dropped_send_leaves_nothing_behind(a, b).await;
    close_is_final_and_idempotent(a, b).await;
}

async fn next(end: &dyn Transport, what: &str) -> Message {
    match tokio::time::timeout(STEP, end.recv()).await {
        Ok(TransportEvent::Message(m)) => m,
        Ok(other) => panic!("transport contract: {what}: expected a message, got {other:?}"),
        Err(_) => panic!("transport contract: {what}: nothing arrived within {STEP:?}"),
    }
}

fn same(got: &Message, sent: &Message) -> bool {
    encode_line(got) == encode_line(sent)
}

async fn in_order_both_ways(a: &dyn Transport, b: &dyn Transport) {
    let sent = [
        request(RequestId::from(1), "ping", Value::Null),
        notification("notifications/initialized", Value::Null),
        request(
            RequestId::from("big"),
            "tools/call",
            json!({"payload": "x".repeat(256 * 1024), "line\nbreak": "é\u{2028}"}),
        ),
    ];
    for message in &sent {
        a.send(message.clone()).await.expect("transport contract: a send on an open transport succeeds");
    }
    for message in &sent {
        let got = next(b, "a's messages reach b").await;
        assert!(
            same(&got, message),
            "transport contract: messages arrive whole and in order: sent {message:?}, got {got:?}"
        );
    }
    let reply = response(&RequestId::from(1), Ok(json!({})));
    b.send(reply.clone()).await.expect("transport contract: the other end sends too");
    assert!(same(&next(a, "b's answer reaches a").await, &reply), "transport contract: the answer arrives whole");
}

async fn concurrent_sends_arrive_whole(a: &dyn Transport, b: &dyn Transport) {
    let sent: Vec<Message> = (0..16)
        .map(|i| request(RequestId::from(100 + i), "tools/call", json!({"n": i, "pad": "y".repeat(4096)})))
        .collect();
    let sends = sent.iter().map(|m| a.send(m.clone()));
    for result in futures::future::join_all(sends).await {
        result.expect("transport contract: concurrent sends succeed");
    }
    let mut got = Vec::new();
    for _ in 0..sent.len() {
        got.push(next(b, "concurrent sends reach b").await);
    }
    for message in &sent {
        assert!(
            got.iter().any(|g| same(g, message)),
            "transport contract: concurrent sends each arrive whole: {message:?} is missing"
        );
    }
}

async fn a_dropped_send_leaves_nothing_behind(a: &dyn Transport, b: &dyn Transport) {
    let dropped = request(RequestId::from("dropped"), "tools/call", json!({"payload": "z".repeat(1024 * 1024)}));
    // Polled once, then abandoned: it either went out whole or not at all.
    let _ = a.send(dropped.clone()).now_or_never();
    let marker = request(RequestId::from("after"), "ping", Value::Null);
    a.send(marker.clone()).await.expect("transport contract: a send after a dropped one succeeds");
    loop {
        let got = next(b, "the send after a dropped one arrives whole (a half-written line would swallow it)").await;
        if same(&got, &marker) {
            return;
        }
        assert!(same(&got, &dropped), "transport contract: only whole messages arrive: got {got:?}");
    }
}

async fn close_is_final_and_idempotent(a: &dyn Transport, b: &dyn Transport) {
    tokio::time::timeout(STEP, a.close()).await.expect("transport contract: close finishes in bounded time");
    let err = a.send(request(RequestId::from(2), "ping", Value::Null)).await;
    assert!(
        matches!(err, Err(TransportError::Closed(_))),
        "transport contract: send after close fails with Closed: {err:?}"
    );
    for _ in 0..2 {
        let event = tokio::time::timeout(STEP, a.recv()).await.expect("transport contract: recv after close returns");
        assert!(
            matches!(event, TransportEvent::Closed(_)),
            "transport contract: recv after close is Closed: {event:?}"
        );
    }
    tokio::time::timeout(STEP, a.close()).await.expect("transport contract: a second close returns");
    // The other end sees the end (after anything still in flight).
    loop {
        match tokio::time::timeout(STEP, b.recv()).await {
            Ok(TransportEvent::Closed(_)) => break,
            Ok(_) => continue,
            Err(_) => panic!("transport contract: the other end never saw the close"),
        }
    }
    b.close().await;
}

#[cfg(test)]
mod tests {
    use mcp_transport::MemoryTransport;

    use super::*;

    #[tokio::test]
    async fn the_memory_pair_keeps_the_contract() {
        crate::within(async {
            let (a, b) = MemoryTransport::pair();
            check_transport_contract(&a, &b).await;
        })
        .await
    }

    /// A transport that breaks one rule: `send` after `close` still succeeds.
    struct Leaky(MemoryTransport);

    impl Transport for Leaky {
        fn send(&self, message: Message) -> futures::future::BoxFuture<'_, Result<(), TransportError>> {
            async move {
                let _ = self.0.send(message).await;
                Ok(())
            }
            .boxed()
        }
        fn recv(&self) -> futures::future::BoxFuture<'_, TransportEvent> {
            self.0.recv()
        }
        fn close(&self) -> futures::future::BoxFuture<'_, ()> {
            self.0.close()
        }
        fn kind(&self) -> mcp_transport::TransportKind {
            mcp_transport::TransportKind::Custom
        }
    }

    #[tokio::test]
    #[should_panic(expected = "send after close fails with Closed")]
    async fn a_transport_that_sends_after_close_fails_the_check() {
        let (a, b) = MemoryTransport::pair();
        crate::within(check_transport_contract(&Leaky(a), &b)).await;
    }
}
