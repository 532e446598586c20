//! The host's control over a call through the registry: cancellation, deadline and progress, for
//! a provider that knows nothing of them (the registry enforces them) and for a native tool that
//! reads them.

mod common;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::json;
use test_support::within;
use tool_system::{
    CancellationToken, NativeTool, NativeToolProvider, NoArgs, ToolExecutionContext, ToolInvocation, ToolProgress,
    ToolRegistry,
};

/// Sets its flag when dropped: tells whether the registry dropped the provider's future.
struct DropFlag(Arc<AtomicBool>);

impl Drop for DropFlag {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

/// A registry with `stuck` (never finishes, and flags when its future is dropped), `steps`
/// (reports three progress steps, then answers with the time it was given) and `quick`.
async fn registry(dropped: Arc<AtomicBool>) -> ToolRegistry {
    let stuck = NativeTool::new("stuck", "never finishes", move |_: NoArgs, _ctx| {
        let flag = DropFlag(Arc::clone(&dropped));
        async move {
            let _flag = flag;
            std::future::pending::<()>().await;
        }
    });
    let steps = NativeTool::new("steps", "reports progress", |_: NoArgs, ctx: ToolExecutionContext| async move {
        for step in 1..=3 {
            ctx.control.report(ToolProgress::new(f64::from(step), Some(3.0)).with_message(format!("step {step}")));
        }
        let remaining = ctx.control.remaining().map(|d| d.as_secs());
        json!({ "remaining_secs": remaining })
    });
    let quick = NativeTool::new("quick", "answers at once", |_: NoArgs, _ctx| async { "done" });
    let registry = ToolRegistry::new();
    registry.register(NativeToolProvider::new("native").with_tool(stuck).with_tool(steps).with_tool(quick)).await;
    registry
}

fn call(name: &str) -> ToolInvocation {
    ToolInvocation::from_value(name, json!({}))
}

#[tokio::test]
async fn a_cancelled_token_resolves_the_call_at_once_and_drops_the_provider_future() {
    within(async {
        let dropped = Arc::new(AtomicBool::new(false));
        let registry = registry(Arc::clone(&dropped)).await;
        let token = CancellationToken::new();
        let ctx = ToolExecutionContext::default().with_cancellation(token.clone());
        let canceller = tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(50)).await;
            token.cancel();
        });
        let result = registry.invoke(call("stuck"), ctx).await;
        canceller.await.unwrap();
        assert!(!result.success);
        assert!(result.is_cancelled(), "{result:?}");
        assert!(!result.is_timed_out());
        assert_eq!(result.error_message.as_deref(), Some("tool `stuck` was cancelled by the caller"));
        assert!(dropped.load(Ordering::SeqCst), "the provider's future was dropped");
    })
    .await;
}

#[tokio::test]
async fn a_token_cancelled_before_the_call_never_reaches_the_provider() {
    within(async {
        let registry = registry(Arc::new(AtomicBool::new(false))).await;
        let token = CancellationToken::new();
        token.cancel();
        let result = registry.invoke(call("quick"), ToolExecutionContext::default().with_cancellation(token)).await;
        assert!(result.is_cancelled(), "{result:?}");
        assert!(result.content.is_none(), "the tool did not run");
    })
    .await;
}

#[tokio::test]
async fn a_deadline_resolves_a_stuck_call_as_timed_out() {
    within(async {
        let dropped = Arc::new(AtomicBool::new(false));
        let registry = registry(Arc::clone(&dropped)).await;
        let ctx = ToolExecutionContext::default().with_timeout(Duration::from_millis(100));
        let result = registry.invoke(call("stuck"), ctx).await;
        assert!(result.is_timed_out(), "{result:?}");
        let message = result.error_message.unwrap();
        assert!(message.starts_with("tool `stuck` did not finish within its deadline"), "{message}");
        assert!(dropped.load(Ordering::SeqCst));
    })
    .await;
}

#[tokio::test]
async fn a_call_that_finishes_in_time_is_untouched_by_the_control() {
    within(async {
        let registry = registry(Arc::new(AtomicBool::new(false))).await;
        let token = CancellationToken::new();
        let ctx =
            ToolExecutionContext::default().with_timeout(Duration::from_secs(60)).with_cancellation(token.clone());
        let result = registry.invoke(call("quick"), ctx).await;
        assert!(result.success, "{result:?}");
        assert_eq!(result.content.as_deref(), Some("done"));
        token.cancel(); // after the call: nothing to do
    })
    .await;
}

#[tokio::test]
async fn a_native_tool_reads_the_deadline_and_reports_progress_to_the_sink() {
    within(async {
        let registry = registry(Arc::new(AtomicBool::new(false))).await;
        let seen = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&seen);
        let ctx = ToolExecutionContext::default()
            .with_timeout(Duration::from_secs(300))
            .with_progress(move |p| sink.lock().unwrap().push(p));
        let result = registry.invoke(call("steps"), ctx).await;
        assert!(result.success, "{result:?}");
        let remaining = result.structured_content.unwrap()["remaining_secs"].as_u64().unwrap();
        assert!((1..=300).contains(&remaining), "the tool saw the time left: {remaining}");
        let seen = seen.lock().unwrap();
        let steps: Vec<(Option<f64>, Option<&str>)> = seen.iter().map(|p| (p.progress, p.message.as_deref())).collect();
        assert_eq!(steps, [(Some(1.0), Some("step 1")), (Some(2.0), Some("step 2")), (Some(3.0), Some("step 3"))]);
        assert!(seen.iter().all(|p| p.total == Some(3.0)));
    })
    .await;
}

#[tokio::test]
async fn a_panicking_progress_sink_does_not_break_the_call() {
    within(async {
        let registry = registry(Arc::new(AtomicBool::new(false))).await;
        let ctx = ToolExecutionContext::default().with_progress(|_| panic!("the host's sink broke"));
        let result = registry.invoke(call("steps"), ctx).await;
        assert!(result.success, "{result:?}");
    })
    .await;
}

#[test]
fn the_control_is_not_serialised_and_does_not_decide_equality_of_callers() {
    let token = CancellationToken::new();
    let ctx = ToolExecutionContext::new("s", "c").with_user("u").with_cancellation(token).with_progress(|_| {});
    let json = serde_json::to_value(&ctx).unwrap();
    assert_eq!(json, json!({"session_id": "s", "chat_stream_id": "c", "user_id": "u", "platform": ""}));
    let back: ToolExecutionContext = serde_json::from_value(json).unwrap();
    assert!(back.same_caller(&ctx));
    assert!(back.control.progress.is_none() && back.control.deadline.is_none());
    assert!(!ctx.same_caller(&ToolExecutionContext::new("s", "c")), "the user differs");
    assert_eq!(format!("{:?}", ctx.control.progress.unwrap()), "ProgressSink");
}
