//! Captures the `tracing` spans a test's code closes, with their fields and parents, and the
//! events it logs, so a test checks what a host's subscriber would see.
//!
//! The capture is the thread's default subscriber while its guard lives: run the code under test
//! on a current-thread runtime (the default of `#[tokio::test]`) so every task sees it.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing_subscriber::layer::{Context, Layer, SubscriberExt};
use tracing_subscriber::registry::LookupSpan;

/// One closed span.
#[derive(Debug, Clone)]
pub struct ClosedSpan {
    /// The span's static name (`mcp.request`).
    pub name: &'static str,
    /// The span's target (`mcp`).
    pub target: &'static str,
    /// A number unique within the capture (tracing reuses its own ids).
    pub id: u64,
    /// The [`id`](ClosedSpan::id) of its parent, if any.
    pub parent: Option<u64>,
    /// Every field that was given a value, as text (strings unquoted).
    pub fields: BTreeMap<String, String>,
}

impl ClosedSpan {
    /// The value of field `name`, if it was recorded.
    pub fn field(&self, name: &str) -> Option<&str> {
        self.fields.get(name).map(String::as_str)
    }
}

/// The spans captured so far; cheap to clone.
#[derive(Debug, Clone, Default)]
pub struct SpanCapture {
    closed: Arc<Mutex<Vec<ClosedSpan>>>,
    events: Arc<Mutex<Vec<String>>>,
}

impl SpanCapture {
    /// Start capturing on this thread; the capture ends when the guard drops.
    pub fn start() -> (SpanCapture, tracing::subscriber::DefaultGuard) {
        let capture = SpanCapture::default();
        let layer =
            CaptureLayer { closed: capture.closed.clone(), events: capture.events.clone(), next: AtomicU64::new(1) };
        let subscriber = tracing_subscriber::registry().with(layer);
        (capture, tracing::subscriber::set_default(subscriber))
    }

    /// Every span closed so far, in the order they closed.
    pub fn closed(&self) -> Vec<ClosedSpan> {
        self.closed.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Every event logged so far, in order, each as `LEVEL message field=value ...` (fields in
    /// name order).
    pub fn events(&self) -> Vec<String> {
        self.events.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// The closed spans named `name`.
    pub fn named(&self, name: &str) -> Vec<ClosedSpan> {
        self.closed().into_iter().filter(|s| s.name == name).collect()
    }

    /// Every value of every field of every span, and every span name, as one text: a test
    /// checks that a secret appears nowhere in it.
    pub fn all_text(&self) -> String {
        let mut text = String::new();
        for span in self.closed() {
            text.push_str(span.name);
            for (k, v) in &span.fields {
                text.push_str(&format!("\n{k}={v}"));
            }
            text.push('\n');
        }
        text
    }
}

struct CaptureLayer {
    closed: Arc<Mutex<Vec<ClosedSpan>>>,
    events: Arc<Mutex<Vec<String>>>,
    next: AtomicU64,
}

struct Open {
    id: u64,
    parent: Option<u64>,
    fields: BTreeMap<String, String>,
}

struct Fields<'a>(&'a mut BTreeMap<String, String>);

impl Visit for Fields<'_> {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().to_owned(), value.to_owned());
    }

    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        self.0.insert(field.name().to_owned(), format!("{value:?}"));
    }
}

impl<S: tracing::Subscriber + for<'a> LookupSpan<'a>> Layer<S> for CaptureLayer {
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        let Some(span) = ctx.span(id) else { return };
        let parent = span.parent().and_then(|p| p.extensions().get::<Open>().map(|o| o.id));
        let mut fields = BTreeMap::new();
        attrs.record(&mut Fields(&mut fields));
        let open = Open { id: self.next.fetch_add(1, Ordering::Relaxed), parent, fields };
        span.extensions_mut().insert(open);
    }

    fn on_record(&self, id: &Id, values: &Record<'_>, ctx: Context<'_, S>) {
        if let Some(span) = ctx.span(id)
            && let Some(open) = span.extensions_mut().get_mut::<Open>()
        {
            values.record(&mut Fields(&mut open.fields));
        }
    }

    fn on_event(&self, event: &tracing::Event<'_>, _ctx: Context<'_, S>) {
        let mut fields = BTreeMap::new();
        event.record(&mut Fields(&mut fields));
        let mut line = event.metadata().level().to_string();
        if let Some(message) = fields.remove("message") {
            line.push(' ');
            line.push_str(&message);
        }
        for (name, value) in fields {
            line.push_str(&format!(" {name}={value}"));
        }
        self.events.lock().unwrap_or_else(|p| p.into_inner()).push(line);
    }

    fn on_close(&self, id: Id, ctx: Context<'_, S>) {
        let Some(span) = ctx.span(&id) else { return };
        let Some(open) = span.extensions_mut().remove::<Open>() else { return };
        let closed = ClosedSpan {
            name: span.metadata().name(),
            target: span.metadata().target(),
            id: open.id,
            parent: open.parent,
            fields: open.fields,
        };
        self.closed.lock().unwrap_or_else(|p| p.into_inner()).push(closed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn captures_fields_recorded_later_and_parents() {
        let (capture, _guard) = SpanCapture::start();
        {
            let outer = tracing::info_span!("outer", a = 1, b = tracing::field::Empty);
            outer.record("b", "later");
            let _in = outer.enter();
            let inner = tracing::info_span!("inner", c = %"shown");
            drop(inner);
        }
        let closed = capture.closed();
        assert_eq!(closed.len(), 2);
        let (inner, outer) = (&closed[0], &closed[1]);
        assert_eq!(inner.name, "inner");
        assert_eq!(inner.parent, Some(outer.id));
        assert_eq!(inner.field("c"), Some("shown"));
        assert_eq!(outer.field("a"), Some("1"));
        assert_eq!(outer.field("b"), Some("later"));
        assert_eq!(outer.parent, None);
    }

    #[test]
    fn captures_events_with_their_level_message_and_fields() {
        let (capture, _guard) = SpanCapture::start();
        tracing::warn!(server = "s", count = 2, "something {}", "happened");
        tracing::info!("plain");
        assert_eq!(capture.events(), ["WARN something happened count=2 server=s", "INFO plain"]);
    }
}
