//! Helpers for tests: a `tracing` subscriber that records events, and a stdio transport factory
//! that records what it spawned. (Process checks that read `/proc` are `test_support::process`.)

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use mcp_manager::TransportFactory;
use mcp_transport::{StdioConfig, StdioTransport, Transport};
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Level, Metadata};

/// One recorded `tracing` event.
#[derive(Debug, Clone)]
pub struct CapturedEvent {
    /// Its level.
    pub level: Level,
    /// Its `message` field.
    pub message: String,
    /// Its other fields, formatted (strings without quotes).
    pub fields: BTreeMap<String, String>,
}

impl CapturedEvent {
    /// Whether the message or any field holds `needle`.
    pub fn mentions(&self, needle: &str) -> bool {
        self.message.contains(needle) || self.fields.values().any(|v| v.contains(needle))
    }
}

/// The events recorded by [`capture_logs`].
#[derive(Debug, Clone, Default)]
pub struct LogCapture {
    events: Arc<Mutex<Vec<CapturedEvent>>>,
}

impl LogCapture {
    /// Every event so far.
    pub fn events(&self) -> Vec<CapturedEvent> {
        self.events.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// The events at `level` whose message contains `message`.
    pub fn find(&self, level: Level, message: &str) -> Vec<CapturedEvent> {
        self.events().into_iter().filter(|e| e.level == level && e.message.contains(message)).collect()
    }
}

/// Record every `tracing` event of the current thread until the guard drops. With a
/// current-thread Tokio runtime (the `#[tokio::test]` default) that is every task of the test.
pub fn capture_logs() -> (LogCapture, tracing::subscriber::DefaultGuard) {
    let capture = LogCapture::default();
    let subscriber = Recorder { events: capture.events.clone(), next_span: AtomicU64::new(1) };
    (capture, tracing::subscriber::set_default(subscriber))
}

struct Recorder {
    events: Arc<Mutex<Vec<CapturedEvent>>>,
    next_span: AtomicU64,
}

#[derive(Default)]
struct Fields {
    message: String,
    fields: BTreeMap<String, String>,
}

impl Visit for Fields {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.put(field, value.to_owned());
    }

    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.put(field, format!("{value:?}"));
    }
}

impl Fields {
    fn put(&mut self, field: &Field, value: String) {
        if field.name() == "message" {
            self.message = value;
        } else {
            self.fields.insert(field.name().to_owned(), value);
        }
    }
}

impl tracing::Subscriber for Recorder {
    fn enabled(&self, _: &Metadata<'_>) -> bool {
        true
    }

    fn new_span(&self, _: &Attributes<'_>) -> Id {
        Id::from_u64(self.next_span.fetch_add(1, Ordering::Relaxed))
    }

    fn record(&self, _: &Id, _: &Record<'_>) {}

    fn record_follows_from(&self, _: &Id, _: &Id) {}

    fn event(&self, event: &Event<'_>) {
        let mut fields = Fields::default();
        event.record(&mut fields);
        let captured =
            CapturedEvent { level: *event.metadata().level(), message: fields.message, fields: fields.fields };
        self.events.lock().unwrap_or_else(|p| p.into_inner()).push(captured);
    }

    fn enter(&self, _: &Id) {}

    fn exit(&self, _: &Id) {}
}

/// What a [`recording_factory`] spawned: the process id of each transport, in order.
#[derive(Debug, Clone, Default)]
pub struct Spawned {
    pids: Arc<Mutex<Vec<u32>>>,
}

impl Spawned {
    /// The process ids, oldest first.
    pub fn pids(&self) -> Vec<u32> {
        self.pids.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }
}

/// A stdio factory like `mcp_manager::stdio_factory` that records each process it starts.
pub fn recording_factory(config: StdioConfig) -> (TransportFactory, Spawned) {
    let spawned = Spawned::default();
    let log = spawned.clone();
    let factory: TransportFactory = Arc::new(move || {
        let result = StdioTransport::spawn(config.clone()).map(|t| {
            log.pids.lock().unwrap_or_else(|p| p.into_inner()).push(t.pid());
            Arc::new(t) as Arc<dyn Transport>
        });
        Box::pin(async move { result })
    });
    (factory, spawned)
}
