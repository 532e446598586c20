//! How the session cancels an abandoned request (timed out, or its future dropped): the
//! transport's own way when it has one ([`Transport::cancel_request`]: streamable HTTP in the
//! 2026-07-28 era closes the response stream), otherwise with `notifications/cancelled`.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::response::Response;
use futures::StreamExt;
use futures::future::BoxFuture;
use mcp_manager::session::{NoHandler, RequestOptions, Session, SessionOptions};
use mcp_protocol::{Message, RequestId};
use mcp_transport::{
    CancelHandling, StreamableHttpConfig, StreamableHttpTransport, Transport, TransportError, TransportEvent,
    TransportKind,
};
use serde_json::{Value, json};
use test_support::within;
use tokio::sync::mpsc;

/// A transport that records what is sent and which requests it was asked to cancel, and says
/// `handled` to every cancellation. The peer never answers.
struct Recording {
    handled: bool,
    sent: mpsc::UnboundedSender<Message>,
    cancelled: Mutex<Vec<RequestId>>,
}

impl Transport for Recording {
    fn send(&self, message: Message) -> BoxFuture<'_, Result<(), TransportError>> {
        let _ = self.sent.send(message);
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
    fn cancel_request(&self, id: &RequestId) -> CancelHandling {
        self.cancelled.lock().unwrap().push(id.clone());
        if self.handled { CancelHandling::Handled } else { CancelHandling::NotHandled }
    }
}

/// A session over a [`Recording`] transport with a 1 s timeout.
fn start(handled: bool) -> (Session, Arc<Recording>, mpsc::UnboundedReceiver<Message>) {
    let (tx, rx) = mpsc::unbounded_channel();
    let transport = Arc::new(Recording { handled, sent: tx, cancelled: Mutex::default() });
    let mut options = SessionOptions::new("fake");
    options.request_timeout = Duration::from_secs(1);
    (Session::start(transport.clone(), Arc::new(NoHandler), options), transport, rx)
}

/// How the test abandons its request.
#[derive(Clone, Copy)]
enum Abandon {
    TimeOut,
    DropFuture,
}

/// Abandon one request; the id the transport was asked to cancel, and the methods sent after the
/// request (within 10 s, on paused time).
async fn abandon(handled: bool, how: Abandon) -> (Vec<RequestId>, Vec<String>) {
    let (session, transport, mut sent) = start(handled);
    let call = tokio::spawn({
        let session = session.clone();
        async move { session.request_raw("tools/call", None, RequestOptions::default()).await }
    });
    let Some(Message::Request(request)) = sent.recv().await else { panic!("expected the request") };
    match how {
        Abandon::TimeOut => assert!(call.await.unwrap().unwrap_err().is_timeout()),
        Abandon::DropFuture => call.abort(),
    }
    tokio::time::sleep(Duration::from_secs(10)).await;
    let mut after = Vec::new();
    while let Ok(message) = sent.try_recv() {
        after.push(message.method().unwrap_or("response").to_owned());
    }
    let cancelled = transport.cancelled.lock().unwrap().clone();
    assert!(cancelled.iter().all(|id| *id == request.id), "{cancelled:?}");
    (cancelled, after)
}

#[tokio::test(start_paused = true)]
async fn a_transport_that_handles_cancellation_gets_no_cancelled_notification() {
    for how in [Abandon::TimeOut, Abandon::DropFuture] {
        let (cancelled, after) = abandon(true, how).await;
        assert_eq!(cancelled.len(), 1, "the transport was asked once");
        assert!(after.is_empty(), "nothing sent after the request: {after:?}");
    }
}

#[tokio::test(start_paused = true)]
async fn otherwise_notifications_cancelled_is_sent() {
    for how in [Abandon::TimeOut, Abandon::DropFuture] {
        let (cancelled, after) = abandon(false, how).await;
        assert_eq!(cancelled.len(), 1, "the transport was asked first");
        assert_eq!(after, ["notifications/cancelled"]);
    }
}

/// Signals when the server drops a response body: the client closed the stream.
struct DropSignal(mpsc::UnboundedSender<()>);

impl Drop for DropSignal {
    fn drop(&mut self) {
        let _ = self.0.send(());
    }
}

/// A streamable HTTP server on 127.0.0.1:0 whose `tools/call` replies are SSE streams that stay
/// open. It reports every POSTed method, and every reply stream it sees closed.
async fn hanging_server() -> (String, mpsc::UnboundedReceiver<String>, mpsc::UnboundedReceiver<()>) {
    let (posts_tx, posts) = mpsc::unbounded_channel();
    let (closed_tx, closed) = mpsc::unbounded_channel();
    let app = axum::Router::new().fallback(move |body: Bytes| {
        let message: Value = serde_json::from_slice(&body).unwrap_or_default();
        let method = message["method"].as_str().unwrap_or_default().to_owned();
        let _ = posts_tx.send(method.clone());
        let closed_tx = closed_tx.clone();
        async move {
            if method != "tools/call" {
                return Response::builder().status(202).body(Body::empty()).unwrap();
            }
            let signal = DropSignal(closed_tx);
            let stream = futures::stream::once(async { Ok::<_, std::io::Error>(Bytes::from("id: e-1\ndata:\n\n")) })
                .chain(futures::stream::pending())
                .map(move |chunk| {
                    let _signal = &signal;
                    chunk
                });
            Response::builder()
                .status(200)
                .header("content-type", "text/event-stream")
                .body(Body::from_stream(stream))
                .unwrap()
        }
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (url, posts, closed)
}

/// A session over streamable HTTP to `url`, in the modern era when `modern`.
fn http_session(url: &str, modern: bool) -> Session {
    let mut config = StreamableHttpConfig::new("remote", url);
    config.read_timeout = Duration::from_secs(10);
    let transport = StreamableHttpTransport::new(config).unwrap();
    let mut options = SessionOptions::new("remote");
    options.request_timeout = Duration::from_millis(300);
    let session = Session::start(Arc::new(transport), Arc::new(NoHandler), options);
    if modern {
        let meta = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28"});
        session.set_request_meta(Some(meta.as_object().unwrap().clone()));
    }
    session
}

fn call_params() -> Option<mcp_protocol::RawJson> {
    Some(mcp_protocol::to_raw(&json!({"name": "slow"})).unwrap())
}

#[tokio::test]
async fn over_modern_http_a_timed_out_request_closes_its_stream_and_sends_nothing() {
    within(async {
        let (url, mut posts, mut closed) = hanging_server().await;
        let session = http_session(&url, true);
        let error = session.request_raw("tools/call", call_params(), RequestOptions::default()).await.unwrap_err();
        assert!(error.is_timeout(), "{error}");
        tokio::time::timeout(Duration::from_secs(5), closed.recv())
            .await
            .expect("the server saw the response stream closed")
            .unwrap();
        assert_eq!(posts.recv().await.unwrap(), "tools/call");
        tokio::time::sleep(Duration::from_millis(300)).await;
        assert!(posts.try_recv().is_err(), "no notifications/cancelled was POSTed");
    })
    .await
}

#[tokio::test]
async fn over_legacy_http_a_timed_out_request_sends_notifications_cancelled() {
    within(async {
        let (url, mut posts, mut closed) = hanging_server().await;
        let session = http_session(&url, false);
        let error = session.request_raw("tools/call", call_params(), RequestOptions::default()).await.unwrap_err();
        assert!(error.is_timeout(), "{error}");
        assert_eq!(posts.recv().await.unwrap(), "tools/call");
        assert_eq!(posts.recv().await.unwrap(), "notifications/cancelled");
        assert!(closed.try_recv().is_err(), "the legacy response stream is left open");
    })
    .await
}
