//! `mcp --trace FILE`: the spans of `mcp_manager::telemetry` (connections, requests, tool calls),
//! each written as one JSON line when it closes.
//!
//! A line holds the span's name (the convention's `otel.name`, such as `tools/call echo`), its
//! kind, trace, span and parent ids (hex, in the OpenTelemetry widths; a trace is a tree of
//! spans under one root), start and end times (Unix nanoseconds), duration, status (`unset` or
//! `error` with a description) and attributes. Each line is written whole as the span closes,
//! so the file is complete up to the last closed span even when `mcp` exits at once. The file
//! is bounded ([`DEFAULT_CAP`]): past it, later spans are dropped and stderr says so once.

use std::collections::BTreeMap;
use std::fs::File;
use std::hash::{BuildHasher, Hasher};
use std::io::Write;
use std::path::Path;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Instant, SystemTime};

use serde_json::{Map, Value, json};
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::subscriber::Interest;
use tracing::{Metadata, Subscriber};
use tracing_subscriber::layer::{Context, Layer, SubscriberExt};
use tracing_subscriber::registry::LookupSpan;

use crate::exit::CliError;

/// The most a trace file grows to: 64 MiB.
pub const DEFAULT_CAP: u64 = 64 * 1024 * 1024;

/// Create (or truncate) `path` and make a [`JsonLines`] layer writing to it the process's
/// subscriber. A file that cannot be opened is a usage error naming it.
pub fn install(path: &Path) -> Result<(), CliError> {
    let file = File::create(path)
        .map_err(|e| CliError::usage(format!("--trace {}: cannot open the file: {e}", path.display())))?;
    let layer = JsonLines::new(file, DEFAULT_CAP, path.display().to_string());
    tracing::subscriber::set_global_default(tracing_subscriber::registry().with(layer))
        .map_err(|e| CliError::usage(format!("--trace: cannot install the trace subscriber: {e}")))
}

/// A layer that writes each closed span of target `mcp` as one JSON line, at most `cap` bytes
/// in all.
pub struct JsonLines<W> {
    out: Mutex<W>,
    cap: u64,
    written: AtomicU64,
    full: AtomicBool,
    /// What to call the output in the one message that says it is full.
    label: String,
    /// Mixed into every id so that two runs' ids differ.
    seed: u64,
    next: AtomicU64,
}

impl<W: Write> JsonLines<W> {
    /// Write to `out`, at most `cap` bytes; `label` names it in the message that says it is full.
    pub fn new(out: W, cap: u64, label: String) -> Self {
        let seed = std::collections::hash_map::RandomState::new().build_hasher().finish();
        JsonLines {
            out: Mutex::new(out),
            cap,
            written: AtomicU64::new(0),
            full: AtomicBool::new(false),
            label,
            seed,
            next: AtomicU64::new(1),
        }
    }

    /// A fresh 64-bit id: the counter spread by a keyed hash, never 0.
    fn id(&self) -> u64 {
        let n = self.next.fetch_add(1, Ordering::Relaxed);
        let mut hasher = std::hash::DefaultHasher::new();
        hasher.write_u64(self.seed);
        hasher.write_u64(n);
        hasher.finish().max(1)
    }

    fn write_line(&self, line: &str) {
        if self.full.load(Ordering::Relaxed) {
            return;
        }
        let len = line.len() as u64 + 1;
        let mut out = self.out.lock().unwrap_or_else(|p| p.into_inner());
        if self.written.load(Ordering::Relaxed) + len > self.cap {
            if !self.full.swap(true, Ordering::Relaxed) {
                let cap = self.cap;
                crate::output::terminal::errln(&format!(
                    "mcp: the trace file {} reached its limit of {cap} bytes; later spans are not written",
                    self.label
                ));
            }
            return;
        }
        // A failed write (a full disk) loses the span, never the command.
        if out.write_all(format!("{line}\n").as_bytes()).and_then(|()| out.flush()).is_ok() {
            self.written.fetch_add(len, Ordering::Relaxed);
        }
    }
}

/// What the layer keeps of an open span.
struct Open {
    trace_id: String,
    span_id: String,
    parent_id: Option<String>,
    start: SystemTime,
    started: Instant,
    fields: Map<String, Value>,
}

struct Fields<'a>(&'a mut Map<String, Value>);

impl Visit for Fields<'_> {
    fn record_i64(&mut self, field: &Field, value: i64) {
        self.0.insert(field.name().to_owned(), json!(value));
    }

    fn record_u64(&mut self, field: &Field, value: u64) {
        self.0.insert(field.name().to_owned(), json!(value));
    }

    fn record_bool(&mut self, field: &Field, value: bool) {
        self.0.insert(field.name().to_owned(), json!(value));
    }

    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().to_owned(), json!(value));
    }

    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0.insert(field.name().to_owned(), json!(format!("{value:?}")));
    }
}

fn wanted(metadata: &Metadata<'_>) -> bool {
    metadata.is_span() && metadata.target() == mcp_manager::telemetry::TARGET
}

fn unix_nanos(time: SystemTime) -> u128 {
    time.duration_since(SystemTime::UNIX_EPOCH).map_or(0, |d| d.as_nanos())
}

impl<S, W> Layer<S> for JsonLines<W>
where
    S: Subscriber + for<'a> LookupSpan<'a>,
    W: Write + Send + 'static,
{
    fn register_callsite(&self, metadata: &'static Metadata<'static>) -> Interest {
        // Other spans and every event cost nothing: they are never enabled.
        if wanted(metadata) { Interest::always() } else { Interest::never() }
    }

    fn enabled(&self, metadata: &Metadata<'_>, _: Context<'_, S>) -> bool {
        wanted(metadata)
    }

    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        let Some(span) = ctx.span(id) else { return };
        let parent =
            span.parent().and_then(|p| p.extensions().get::<Open>().map(|o| (o.trace_id.clone(), o.span_id.clone())));
        let (trace_id, parent_id) = match parent {
            Some((trace, parent)) => (trace, Some(parent)),
            None => (format!("{:016x}{:016x}", self.id(), self.id()), None),
        };
        let mut fields = Map::new();
        attrs.record(&mut Fields(&mut fields));
        let open = Open {
            trace_id,
            span_id: format!("{:016x}", self.id()),
            parent_id,
            start: SystemTime::now(),
            started: Instant::now(),
            fields,
        };
        span.extensions_mut().insert(open);
    }

    fn on_record(&self, id: &Id, values: &Record<'_>, ctx: Context<'_, S>) {
        if let Some(span) = ctx.span(id)
            && let Some(open) = span.extensions_mut().get_mut::<Open>()
        {
            values.record(&mut Fields(&mut open.fields));
        }
    }

    fn on_close(&self, id: Id, ctx: Context<'_, S>) {
        let Some(span) = ctx.span(&id) else { return };
        let Some(open) = span.extensions_mut().remove::<Open>() else { return };
        let line = span_line(span.metadata().name(), open);
        self.write_line(&line.to_string());
    }
}

/// The JSON line of a closed span.
fn span_line(static_name: &str, open: Open) -> Value {
    let mut attributes = BTreeMap::new();
    let mut special = BTreeMap::new();
    for (key, value) in open.fields {
        match key.strip_prefix("otel.") {
            Some(name) => special.insert(name.to_owned(), value),
            None => attributes.insert(key, value),
        };
    }
    let text = |v: Option<&Value>| v.and_then(Value::as_str).map(str::to_owned);
    let name = text(special.get("name")).unwrap_or_else(|| static_name.to_owned());
    let mut status = json!({ "code": text(special.get("status_code")).unwrap_or_else(|| "unset".into()) });
    if let Some(description) = text(special.get("status_description")) {
        status["description"] = json!(description);
    }
    let end = SystemTime::now();
    json!({
        "name": name,
        "span": static_name,
        "kind": text(special.get("kind")).unwrap_or_else(|| "internal".into()),
        "trace_id": open.trace_id,
        "span_id": open.span_id,
        "parent_span_id": open.parent_id,
        "start_time_unix_nano": unix_nanos(open.start),
        "end_time_unix_nano": unix_nanos(end),
        "duration_ns": open.started.elapsed().as_nanos(),
        "status": status,
        "attributes": attributes,
    })
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;

    /// A shared in-memory output.
    #[derive(Clone, Default)]
    struct Buffer(Arc<Mutex<Vec<u8>>>);

    impl Write for Buffer {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(bytes);
            Ok(bytes.len())
        }

        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    fn lines(buffer: &Buffer) -> Vec<Value> {
        let text = String::from_utf8(buffer.0.lock().unwrap().clone()).unwrap();
        text.lines().map(|l| serde_json::from_str(l).expect("each line is JSON")).collect()
    }

    #[test]
    fn each_closed_mcp_span_is_one_line_with_its_parent_and_status() {
        let buffer = Buffer::default();
        let layer = JsonLines::new(buffer.clone(), DEFAULT_CAP, "test".into());
        let _guard = tracing::subscriber::set_default(tracing_subscriber::registry().with(layer));
        {
            let outer = tracing::info_span!(target: "mcp", "execute_tool", otel.name = "execute_tool echo", gen_ai.tool.name = "echo");
            let _in = outer.enter();
            let inner = tracing::info_span!(target: "mcp", "mcp.request", otel.kind = "client",
                otel.status_code = tracing::field::Empty, error.type = tracing::field::Empty, jsonrpc.request.id = 7);
            inner.record("error.type", "-32602");
            inner.record("otel.status_code", "error");
            // Not an `mcp` span: never written.
            let _other = tracing::info_span!(target: "hyper", "connect");
        }
        let lines = lines(&buffer);
        assert_eq!(lines.len(), 2, "{lines:?}");
        let (inner, outer) = (&lines[0], &lines[1]);
        assert_eq!(outer["name"], "execute_tool echo");
        assert_eq!(outer["parent_span_id"], Value::Null);
        assert_eq!(outer["attributes"]["gen_ai.tool.name"], "echo");
        assert_eq!(outer["status"]["code"], "unset");
        assert_eq!(inner["name"], "mcp.request", "no otel.name: the static name");
        assert_eq!(inner["kind"], "client");
        assert_eq!(inner["parent_span_id"], outer["span_id"]);
        assert_eq!(inner["trace_id"], outer["trace_id"]);
        assert_eq!(inner["status"]["code"], "error");
        assert_eq!(inner["attributes"]["error.type"], "-32602");
        assert_eq!(inner["attributes"]["jsonrpc.request.id"], 7);
        assert!(inner["attributes"].get("otel.kind").is_none(), "otel.* fields are not attributes");
        assert!(inner["end_time_unix_nano"].as_u64() >= inner["start_time_unix_nano"].as_u64());
    }

    #[test]
    fn the_output_stops_at_its_cap() {
        let buffer = Buffer::default();
        let layer = JsonLines::new(buffer.clone(), 600, "test".into());
        let _guard = tracing::subscriber::set_default(tracing_subscriber::registry().with(layer));
        for _ in 0..50 {
            drop(tracing::info_span!(target: "mcp", "mcp.request", mcp.method.name = "tools/list"));
        }
        let written = buffer.0.lock().unwrap().len();
        assert!(written <= 600, "{written} bytes");
        let lines = lines(&buffer);
        assert!(!lines.is_empty() && lines.len() < 50, "{} lines", lines.len());
    }
}
