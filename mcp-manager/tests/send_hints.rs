//! What the session tells its transport of each request it sends ([`Transport::send_hinted`]):
//! a typed request's revision and target come with it, so that streamable HTTP writes its
//! modern-era headers without parsing the request back; raw params, which the session did not
//! write, go out with plain `send`.

use std::sync::Arc;

use futures::future::BoxFuture;
use mcp_manager::session::{NoHandler, RequestOptions, Session, SessionOptions};
use mcp_protocol::types::meta::JsonObject;
use mcp_protocol::types::tools::{CallTool, CallToolParams};
use mcp_protocol::{Message, ProtocolVersion};
use mcp_transport::{SendHints, Transport, TransportError, TransportEvent, TransportKind};
use serde_json::json;
use test_support::within;
use tokio::sync::mpsc;

/// Records each message with the hints it came with (`None`: sent with plain `send`), and says
/// whether it wants hints. The peer never answers.
struct Recording(mpsc::UnboundedSender<(Message, Option<SendHints>)>, bool);

impl Transport for Recording {
    fn send(&self, message: Message) -> BoxFuture<'_, Result<(), TransportError>> {
        let _ = self.0.send((message, None));
        Box::pin(async { Ok(()) })
    }
    fn send_hinted(&self, message: Message, hints: SendHints) -> BoxFuture<'_, Result<(), TransportError>> {
        let _ = self.0.send((message, Some(hints)));
        Box::pin(async { Ok(()) })
    }
    fn recv(&self) -> BoxFuture<'_, TransportEvent> {
        Box::pin(futures::future::pending())
    }
    fn close(&self) -> BoxFuture<'_, ()> {
        Box::pin(async {})
    }
    fn kind(&self) -> TransportKind {
        TransportKind::Custom
    }
    fn wants_send_hints(&self) -> bool {
        self.1
    }
}

/// Send one request of each kind on a session with `meta`, over a transport that wants hints or
/// not, and return what the transport got.
async fn sent_with(meta: Option<JsonObject>, wants_hints: bool) -> Vec<(Message, Option<SendHints>)> {
    let (tx, mut rx) = mpsc::unbounded_channel();
    let transport = Arc::new(Recording(tx, wants_hints));
    let session = Session::start(transport, Arc::new(NoHandler), SessionOptions::new("fake"));
    session.set_request_meta(meta);
    let call = CallToolParams { name: "echo".into(), ..Default::default() };
    let typed = {
        let session = session.clone();
        tokio::spawn(async move { session.request::<CallTool>(&call, RequestOptions::default()).await })
    };
    let raw = {
        let session = session.clone();
        let params = mcp_protocol::to_raw(&json!({"name": "echo"})).unwrap();
        tokio::spawn(async move { session.request_raw("tools/call", Some(params), RequestOptions::default()).await })
    };
    let got = within(async { vec![rx.recv().await.unwrap(), rx.recv().await.unwrap()] }).await;
    typed.abort();
    raw.abort();
    session.close().await;
    got
}

#[tokio::test]
async fn typed_requests_come_with_their_revision_and_target() {
    let sent = sent_with(Some(modern()), true).await;
    let hinted: Vec<_> = sent.iter().filter_map(|(_, hints)| hints.clone()).collect();
    assert_eq!(
        hinted,
        [SendHints { revision: Some(ProtocolVersion::V2026_07_28), target: Some("echo".into()) }],
        "only the typed request is hinted: {sent:?}"
    );
    // The hints are true of the message: its params name that revision and that tool.
    let (Message::Request(request), _) = sent.iter().find(|(_, hints)| hints.is_some()).unwrap() else {
        panic!("a request")
    };
    let params: serde_json::Value = serde_json::from_str(request.params.as_ref().unwrap().get()).unwrap();
    assert_eq!(params["_meta"]["io.modelcontextprotocol/protocolVersion"], "2026-07-28");
    assert_eq!(params["name"], "echo");
}

#[tokio::test]
async fn without_session_members_or_for_a_transport_that_reads_none_nothing_is_gathered() {
    for (meta, wants_hints) in [(None, true), (Some(modern()), false)] {
        let sent = sent_with(meta, wants_hints).await;
        assert!(sent.iter().all(|(_, hints)| hints.is_none()), "{sent:?}");
    }
}

fn modern() -> JsonObject {
    json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28"}).as_object().unwrap().clone()
}
