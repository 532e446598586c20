//! Credentials over plain http to a host that is not loopback are warned about once per
//! transport, however many requests carry them. A small subscriber counts the warnings.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use mcp_protocol::{Message, RequestId};
use mcp_transport::{Secret, SseConfig, SseTransport, StreamableHttpConfig, StreamableHttpTransport, Transport};
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Level, Metadata, Subscriber};

/// Counts the warnings about plain http.
#[derive(Clone, Default)]
struct Counter(Arc<AtomicUsize>);

struct MessageText(String);

impl Visit for MessageText {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        if field.name() == "message" {
            self.0 = format!("{value:?}");
        }
    }
}

impl Subscriber for Counter {
    fn enabled(&self, _: &Metadata<'_>) -> bool {
        true
    }
    fn new_span(&self, _: &Attributes<'_>) -> Id {
        Id::from_u64(1)
    }
    fn record(&self, _: &Id, _: &Record<'_>) {}
    fn record_follows_from(&self, _: &Id, _: &Id) {}
    fn event(&self, event: &Event<'_>) {
        if *event.metadata().level() == Level::WARN {
            let mut message = MessageText(String::new());
            event.record(&mut message);
            if message.0.contains("plain http") {
                self.0.fetch_add(1, Ordering::SeqCst);
            }
        }
    }
    fn enter(&self, _: &Id) {}
    fn exit(&self, _: &Id) {}
}

fn ping(id: i64) -> Message {
    Message::request::<()>(RequestId::Number(id), "ping", None).unwrap()
}

/// Two requests through a transport to `url`, which fail (nothing listens there).
async fn two_requests(url: &str, bearer: bool) {
    let mut config = StreamableHttpConfig::new("s", url);
    config.connect_timeout = Duration::from_secs(5);
    config.read_timeout = Duration::from_secs(5);
    if bearer {
        config.bearer_token = Some(Secret::new("t"));
    }
    let transport = StreamableHttpTransport::new(config).unwrap();
    for id in 0..2 {
        transport.send(ping(id)).await.unwrap();
        let event = tokio::time::timeout(Duration::from_secs(10), transport.recv()).await.expect("no failure");
        assert!(matches!(event, mcp_transport::TransportEvent::RequestFailed { .. }), "{event:?}");
    }
    transport.close().await;
}

// The current-thread runtime runs every task on this thread, under the default subscriber.
#[tokio::test(flavor = "current_thread")]
async fn credentials_over_plain_http_are_warned_about_once_per_transport() {
    let counter = Counter::default();
    let _guard = tracing::subscriber::set_default(counter.clone());
    tokio::time::timeout(Duration::from_secs(30), async {
        // 0.0.0.0 is not loopback by name; connecting to it fails at once here.
        two_requests("http://0.0.0.0:1/mcp", true).await;
        assert_eq!(counter.0.load(Ordering::SeqCst), 1, "one warning for two requests");
        two_requests("http://0.0.0.0:1/mcp", true).await;
        assert_eq!(counter.0.load(Ordering::SeqCst), 2, "one warning per transport");
        two_requests("http://0.0.0.0:1/mcp", false).await;
        two_requests("http://127.0.0.1:1/mcp", true).await;
        assert_eq!(counter.0.load(Ordering::SeqCst), 2, "no credentials, or loopback: no warning");

        let mut sse = SseConfig::new("s", "http://0.0.0.0:1/sse");
        sse.headers.push(("X-Api-Key".into(), "k".into()));
        sse.connect_timeout = Duration::from_secs(5);
        assert!(SseTransport::connect(sse).await.is_err());
        assert_eq!(counter.0.load(Ordering::SeqCst), 3, "the legacy transport warns too");
    })
    .await
    .expect("the test hung");
}
