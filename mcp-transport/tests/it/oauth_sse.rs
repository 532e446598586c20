//! OAuth over the legacy HTTP+SSE transport: the GET of the stream and the POSTs to the
//! announced endpoint are authorized through the same seam as streamable HTTP.

use std::sync::Arc;
use std::time::Duration;

use crate::oauth_support::Fake;
use mcp_protocol::{Message, RequestId};
use mcp_transport::auth::store::MemoryStore;
use mcp_transport::{SseConfig, SseTransport, Transport, TransportEvent};
use test_support::within;

async fn answer(t: &SseTransport, id: i64) -> Message {
    loop {
        match tokio::time::timeout(Duration::from_secs(10), t.recv()).await.expect("an answer in time") {
            TransportEvent::Message(m @ Message::Response(_)) if m.id() == Some(&RequestId::Number(id)) => return m,
            TransportEvent::Message(_) => continue,
            other => panic!("unexpected event {other:?}"),
        }
    }
}

#[tokio::test]
async fn the_stream_and_the_posts_are_authorized() {
    within(async {
        let fake = Fake::start().await;
        let client = fake.client(Arc::new(MemoryStore::new()), |_| {});
        let mut config = SseConfig::new("fake", fake.url("/sse"));
        config.authorization = Some(client.clone());
        // The stream's GET is refused, authorized, and sent again.
        let t = SseTransport::connect(config.clone()).await.expect("connects after authorizing");
        fake.with(|s| {
            assert_eq!(s.sse_401, 1, "one refused GET");
            assert_eq!((s.registrations.len(), s.code_exchanges), (1, 1), "one flow");
        });
        t.send(Message::request::<()>(RequestId::Number(1), "tools/list", None).unwrap()).await.unwrap();
        let listed = answer(&t, 1).await;
        assert!(serde_json::to_string(&listed).unwrap().contains("echo"));

        // The access token is revoked: a POST is refused, the client refreshes (the fake issued a
        // refresh token) and the POST is sent once more, transparently.
        fake.with(|s| s.revoke_access());
        t.send(Message::request::<()>(RequestId::Number(2), "tools/list", None).unwrap()).await.unwrap();
        answer(&t, 2).await;
        fake.with(|s| {
            assert!(s.mcp_401 >= 1, "the POST was refused first");
            assert_eq!((s.refreshes, s.code_exchanges), (1, 1), "a refresh, no second login");
            assert_eq!(s.registrations.len(), 1, "the registration is reused");
        });
        t.close().await;
    })
    .await;
}
