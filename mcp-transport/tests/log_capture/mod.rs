//! A tracing subscriber for the tests that check what is logged: every event's and span's
//! fields, written into a buffer (tracing-subscriber is no dependency of this crate).

#![allow(dead_code)]

use std::sync::{Arc, Mutex};

/// Capture this thread's tracing output until the guard drops. A test that uses it must be
/// alone in its binary: a thread's subscriber misses events whose callsite another test
/// registered at the same moment (tracing caches interest per callsite).
pub fn capture() -> (Arc<Mutex<String>>, tracing::subscriber::DefaultGuard) {
    let log = Arc::new(Mutex::new(String::new()));
    let guard = tracing::subscriber::set_default(Capture { text: log.clone(), next_span: 1.into() });
    (log, guard)
}

/// A tracing subscriber that writes every event's and span's fields into a buffer
/// (tracing-subscriber is no dependency of this crate).
pub struct Capture {
    text: Arc<Mutex<String>>,
    next_span: std::sync::atomic::AtomicU64,
}

struct Fields<'a>(&'a mut String);

impl tracing::field::Visit for Fields<'_> {
    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
        self.0.push_str(&format!("{}={value:?} ", field.name()));
    }

    fn record_str(&mut self, field: &tracing::field::Field, value: &str) {
        self.0.push_str(&format!("{}={value} ", field.name()));
    }
}

impl tracing::Subscriber for Capture {
    fn enabled(&self, _: &tracing::Metadata<'_>) -> bool {
        true
    }

    fn new_span(&self, span: &tracing::span::Attributes<'_>) -> tracing::span::Id {
        span.record(&mut Fields(&mut self.text.lock().unwrap()));
        tracing::span::Id::from_u64(self.next_span.fetch_add(1, std::sync::atomic::Ordering::Relaxed))
    }

    fn record(&self, _: &tracing::span::Id, values: &tracing::span::Record<'_>) {
        values.record(&mut Fields(&mut self.text.lock().unwrap()));
    }

    fn record_follows_from(&self, _: &tracing::span::Id, _: &tracing::span::Id) {}

    fn event(&self, event: &tracing::Event<'_>) {
        let mut text = self.text.lock().unwrap();
        text.push_str(event.metadata().target());
        text.push(' ');
        event.record(&mut Fields(&mut text));
        text.push('\n');
    }

    fn enter(&self, _: &tracing::span::Id) {}

    fn exit(&self, _: &tracing::span::Id) {}
}
