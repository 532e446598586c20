//! Shared test support: a scriptable provider and a tracing capture.

#![allow(dead_code)] // each test binary uses a different part

use std::collections::HashMap;
use std::fmt::{self, Write as _};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, Once, OnceLock};
use std::thread::ThreadId;

use futures::future::BoxFuture;
use serde_json::json;
use tool_system::{ToolError, ToolExecutionContext, ToolExecutionResult, ToolInvocation, ToolProvider, ToolSpec};
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Metadata, Subscriber};

/// A provider whose tool list is set by the test. Every call answers
/// `"<provider>:<tool>"` and is recorded with its context.
pub struct TestProvider {
    pub name: String,
    pub specs: Mutex<Vec<ToolSpec>>,
    pub fail_listing: AtomicBool,
    pub closed: AtomicBool,
    pub revision: AtomicU64,
    pub list_calls: AtomicUsize,
    pub calls: Mutex<Vec<(ToolInvocation, ToolExecutionContext)>>,
}

impl TestProvider {
    pub fn new(name: &str, specs: Vec<ToolSpec>) -> Arc<Self> {
        Arc::new(Self {
            name: name.to_owned(),
            specs: Mutex::new(specs),
            fail_listing: AtomicBool::new(false),
            closed: AtomicBool::new(false),
            revision: AtomicU64::new(0),
            list_calls: AtomicUsize::new(0),
            calls: Mutex::new(Vec::new()),
        })
    }

    /// A provider with plain visible tools of these names.
    pub fn with_tools(name: &str, tools: &[&str]) -> Arc<Self> {
        Self::new(
            name,
            tools.iter().map(|tool| ToolSpec::new(*tool).with_description(format!("{tool} tool"))).collect(),
        )
    }

    pub fn is_closed(&self) -> bool {
        self.closed.load(Ordering::SeqCst)
    }

    pub fn list_calls(&self) -> usize {
        self.list_calls.load(Ordering::SeqCst)
    }

    pub fn last_call(&self) -> Option<(ToolInvocation, ToolExecutionContext)> {
        self.calls.lock().unwrap().last().cloned()
    }
}

impl ToolProvider for TestProvider {
    fn name(&self) -> &str {
        &self.name
    }

    fn provider_type(&self) -> &str {
        "test"
    }

    fn list_tools(
        &self,
        _ctx: &ToolExecutionContext,
    ) -> BoxFuture<'_, Result<Vec<std::sync::Arc<ToolSpec>>, ToolError>> {
        self.list_calls.fetch_add(1, Ordering::SeqCst);
        let result = if self.fail_listing.load(Ordering::SeqCst) {
            Err(ToolError::unavailable(&self.name, "server is down"))
        } else {
            Ok(self.specs.lock().unwrap().iter().cloned().map(std::sync::Arc::new).collect())
        };
        Box::pin(std::future::ready(result))
    }

    fn invoke(&self, invocation: ToolInvocation, ctx: ToolExecutionContext) -> BoxFuture<'_, ToolExecutionResult> {
        let text = format!("{}:{}", self.name, invocation.tool_name);
        self.calls.lock().unwrap().push((invocation, ctx));
        Box::pin(std::future::ready(ToolExecutionResult::ok_text(text).with_metadata("provider", json!(self.name))))
    }

    fn close(&self) -> BoxFuture<'_, ()> {
        self.closed.store(true, Ordering::SeqCst);
        Box::pin(std::future::ready(()))
    }

    fn revision(&self) -> u64 {
        self.revision.load(Ordering::SeqCst)
    }
}

/// Events captured by [`capture_events`] on one thread, one line each: `LEVEL field=value ...`.
pub struct Captured(ThreadId);

impl Captured {
    pub fn lines(&self) -> Vec<String> {
        events().lock().unwrap().get(&self.0).cloned().unwrap_or_default()
    }
}

fn events() -> &'static Mutex<HashMap<ThreadId, Vec<String>>> {
    static EVENTS: OnceLock<Mutex<HashMap<ThreadId, Vec<String>>>> = OnceLock::new();
    EVENTS.get_or_init(Mutex::default)
}

/// Captures the tracing events of this thread from now on (a current-thread tokio test runs
/// on its own thread). The capturing subscriber is the process-wide default: a scoped one would
/// race with other tests over tracing's per-callsite interest cache.
pub fn capture_events() -> Captured {
    static INSTALL: Once = Once::new();
    INSTALL.call_once(|| {
        tracing::subscriber::set_global_default(CaptureSubscriber).expect("no other global subscriber in tests");
    });
    let thread = std::thread::current().id();
    events().lock().unwrap().remove(&thread);
    Captured(thread)
}

struct CaptureSubscriber;

struct Line(String);

impl Visit for Line {
    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        let _ = write!(self.0, " {}={:?}", field.name(), value);
    }
}

impl Subscriber for CaptureSubscriber {
    fn enabled(&self, _metadata: &Metadata<'_>) -> bool {
        true
    }

    fn new_span(&self, _span: &Attributes<'_>) -> Id {
        Id::from_u64(1)
    }

    fn record(&self, _span: &Id, _values: &Record<'_>) {}

    fn record_follows_from(&self, _span: &Id, _follows: &Id) {}

    fn event(&self, event: &Event<'_>) {
        let mut line = Line(event.metadata().level().to_string());
        event.record(&mut line);
        events().lock().unwrap().entry(std::thread::current().id()).or_default().push(line.0);
    }

    fn enter(&self, _span: &Id) {}

    fn exit(&self, _span: &Id) {}
}
