//! `mcp serve-demo`, the built binary, driven through `mcp_manager::McpConnection` in both eras:
//! the legacy initialize handshake and the 2026-07-28 era that auto mode negotiates with it.
//! Every tool is called and its real result checked; `ask_roots` and `summarize` are answered by
//! test handlers (as server requests in the legacy era, as input requests in the modern one), and
//! fail cleanly when the client lacks the capability. Closing the connection ends the process.

use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use base64::Engine as _;
use futures::future::BoxFuture;
use mcp_manager::callbacks::{RootsProvider, SamplingHandler};
use mcp_manager::connection::EraPreference;
use mcp_manager::{
    ConnectionError, ConnectionOptions, HostCallbacks, McpConnection, RequestOptions, SessionError, TransportFactory,
};
use mcp_protocol::types::content::{ContentBlock, ResourceContents};
use mcp_protocol::types::meta::JsonObject;
use mcp_protocol::types::progress::ProgressParams;
use mcp_protocol::types::prompts::GetPromptParams;
use mcp_protocol::types::roots::Root;
use mcp_protocol::types::sampling::{CreateMessageParams, CreateMessageResult};
use mcp_protocol::types::tools::CallToolResult;
use mcp_protocol::{ErrorCode, ErrorObject, ProtocolVersion};
use mcp_transport::{StdioConfig, StdioTransport, Transport};
use serde_json::{Value, json};

/// Each test's whole run, server start-up included.
const TEST_TIMEOUT: Duration = Duration::from_secs(60);
const ROOT: &str = "file:///tmp/mcp-demo-test-root";

#[derive(Default)]
struct Roots {
    calls: AtomicUsize,
}

impl RootsProvider for Roots {
    fn list_roots(&self, _server: &str) -> BoxFuture<'static, Result<Vec<Root>, ErrorObject>> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        Box::pin(async { Ok(vec![Root::new(ROOT, Some("test root".into()))]) })
    }
}

#[derive(Default)]
struct Sampler {
    prompts: Mutex<Vec<String>>,
}

impl SamplingHandler for Sampler {
    fn create_message(
        &self,
        _server: &str,
        params: CreateMessageParams,
    ) -> BoxFuture<'static, Result<CreateMessageResult, ErrorObject>> {
        let prompt: String = params.messages.iter().map(|m| m.content.text()).collect();
        self.prompts.lock().unwrap().push(prompt);
        Box::pin(async { Ok(CreateMessageResult::assistant_text("test-llm", "A short summary.")) })
    }
}

/// A stdio factory for `mcp serve-demo` that records the pid of each process it starts.
fn demo_factory() -> (TransportFactory, Arc<Mutex<Vec<u32>>>) {
    let config = StdioConfig::new("demo", env!("CARGO_BIN_EXE_mcp"), ["serve-demo"]);
    let pids = Arc::new(Mutex::new(Vec::new()));
    let log = pids.clone();
    let factory: TransportFactory = Arc::new(move || {
        let result = StdioTransport::spawn(config.clone()).map(|t| {
            log.lock().unwrap().push(t.pid());
            Arc::new(t) as Arc<dyn Transport>
        });
        Box::pin(async move { result })
    });
    (factory, pids)
}

fn options(era: EraPreference, callbacks: HostCallbacks) -> ConnectionOptions {
    let mut options = ConnectionOptions::new("demo");
    options.era = era;
    options.callbacks = callbacks;
    options
}

fn args(value: Value) -> Option<JsonObject> {
    match value {
        Value::Object(map) => Some(map),
        _ => None,
    }
}

async fn call(conn: &McpConnection, tool: &str, arguments: Value) -> CallToolResult {
    let outcome = conn.call_tool(tool, args(arguments), RequestOptions::default()).await;
    let outcome = outcome.unwrap_or_else(|e| panic!("tools/call {tool}: {e}"));
    outcome.complete().unwrap_or_else(|| panic!("tools/call {tool} did not complete"))
}

fn texts(result: &CallToolResult) -> Vec<&str> {
    result.content.iter().filter_map(ContentBlock::as_text).collect()
}

async fn assert_gone(pid: u32) {
    let deadline = Instant::now() + Duration::from_secs(5);
    while Path::new(&format!("/proc/{pid}")).exists() {
        assert!(Instant::now() < deadline, "the demo server {pid} still runs 5 s after close");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn legacy_era() {
    tokio::time::timeout(TEST_TIMEOUT, everything(EraPreference::Legacy, ProtocolVersion::LATEST_LEGACY))
        .await
        .expect("the legacy-era test timed out");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn modern_era_negotiated_by_auto() {
    tokio::time::timeout(TEST_TIMEOUT, everything(EraPreference::Auto, ProtocolVersion::V2026_07_28))
        .await
        .expect("the modern-era test timed out");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_the_capabilities_the_two_way_tools_fail_cleanly() {
    tokio::time::timeout(TEST_TIMEOUT, async {
        for era in [EraPreference::Legacy, EraPreference::Auto] {
            let (factory, pids) = demo_factory();
            let conn = McpConnection::new(factory, options(era, HostCallbacks::default()));
            conn.connect().await.expect("connect");
            for (tool, arguments, capability) in
                [("ask_roots", json!({}), "roots"), ("summarize", json!({"text": "x"}), "sampling")]
            {
                let result = call(&conn, tool, arguments).await;
                assert_eq!(result.is_error, Some(true), "{era:?} {tool}: {result:?}");
                let text = texts(&result).join(" ");
                assert!(text.contains(&format!("{capability} capability")), "{era:?} {tool}: {text}");
            }
            let pid = pids.lock().unwrap()[0];
            conn.close().await;
            assert_gone(pid).await;
        }
    })
    .await
    .expect("the test timed out");
}

async fn everything(era: EraPreference, expected: ProtocolVersion) {
    let roots = Arc::new(Roots::default());
    let sampler = Arc::new(Sampler::default());
    let callbacks = HostCallbacks { roots: Some(roots.clone()), sampling: Some(sampler.clone()), ..Default::default() };
    let (factory, pids) = demo_factory();
    let conn = McpConnection::new(factory, options(era, callbacks));
    let info = conn.connect().await.expect("connect to mcp serve-demo");
    assert_eq!(info.protocol_version, expected, "{era:?}");
    assert_eq!(info.implementation.name, "mcp-demo");
    assert!(info.capabilities.has_tools() && info.capabilities.has_prompts() && info.capabilities.has_resources());

    let inventory = conn.discover().await.expect("discover");
    assert!(inventory.warnings.is_empty(), "{:?}", inventory.warnings);
    let tools: Vec<&str> = inventory.tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(tools, ["echo", "add", "current_time", "stats", "image", "slow", "ask_roots", "summarize"]);
    let stats_tool = inventory.tools.iter().find(|t| t.name == "stats").unwrap();
    assert!(stats_tool.output_schema.is_some(), "stats declares an outputSchema");
    let prompts: Vec<&str> = inventory.prompts.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(prompts, ["review_code"]);
    let resources: Vec<&str> = inventory.resources.iter().map(|r| r.uri.as_str()).collect();
    assert_eq!(resources, ["demo://readme", "demo://logo.png"]);
    let templates: Vec<&str> = inventory.resource_templates.iter().map(|t| t.uri_template.as_str()).collect();
    assert_eq!(templates, ["demo://greeting/{name}"]);

    tools_round(&conn, &roots, &sampler).await;
    prompt_and_resources(&conn).await;

    // A call that times out is cancelled, and the connection stays usable.
    let timeout = RequestOptions { timeout: Some(Duration::from_millis(200)), ..Default::default() };
    let slow = conn.call_tool("slow", args(json!({"duration_ms": 30000, "steps": 1})), timeout).await;
    assert!(matches!(slow, Err(ConnectionError::Session(SessionError::Timeout { .. }))), "{slow:?}");
    assert_eq!(texts(&call(&conn, "echo", json!({"text": "after a timeout"})).await), ["after a timeout"]);
    conn.ping().await.expect("ping");

    let pid = pids.lock().unwrap()[0];
    assert!(Path::new(&format!("/proc/{pid}")).exists(), "the server runs until close");
    conn.close().await;
    assert_gone(pid).await;
    assert!(conn.session().await.is_err(), "the connection is closed");
}

async fn tools_round(conn: &McpConnection, roots: &Roots, sampler: &Sampler) {
    assert_eq!(texts(&call(conn, "echo", json!({"text": "hello, demo"})).await), ["hello, demo"]);
    assert_eq!(texts(&call(conn, "add", json!({"a": 2, "b": 3.5})).await), ["2 + 3.5 = 5.5"]);

    let time = call(conn, "current_time", json!({"utc_offset": "+01:00"})).await;
    let structured = time.structured_content.as_ref().expect("current_time has structuredContent");
    assert_eq!(structured["utc_offset"], "+01:00");
    assert!(structured["iso"].as_str().unwrap().ends_with("+01:00"), "{structured}");
    assert!(structured["unix"].as_i64().unwrap() > 1_700_000_000, "{structured}");
    assert_eq!(texts(&time), [structured["iso"].as_str().unwrap()]);

    let stats = call(conn, "stats", json!({"numbers": [3, 1, 4, 1, 5]})).await;
    let value = stats.structured_content.clone().expect("stats has structuredContent");
    assert_eq!(value, json!({"count": 5, "sum": 14.0, "mean": 2.8, "median": 3.0, "min": 1.0, "max": 5.0}));
    let text: Value = serde_json::from_str(texts(&stats)[0]).expect("the text is JSON");
    assert_eq!(text, value, "the text holds the same as the structured content");

    let image = call(conn, "image", json!({"size": 16})).await;
    let ContentBlock::Image(png) = &image.content[0] else { panic!("no image: {:?}", image.content) };
    assert_eq!(png.mime_type, "image/png");
    let bytes = base64::engine::general_purpose::STANDARD.decode(&png.data).expect("base64");
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
    assert_eq!(&bytes[16..24], &[0, 0, 0, 16, 0, 0, 0, 16], "16x16");

    // Progress: one notification per step, in order, before the result.
    let progress: Arc<Mutex<Vec<ProgressParams>>> = Arc::default();
    let sink = progress.clone();
    let options = RequestOptions {
        progress: Some(Arc::new(move |p: ProgressParams| sink.lock().unwrap().push(p))),
        ..Default::default()
    };
    let slow = conn.call_tool("slow", args(json!({"duration_ms": 300, "steps": 3})), options).await;
    let slow = slow.expect("slow").complete().expect("complete");
    assert_eq!(texts(&slow), ["Finished 3 steps in 300 ms."]);
    let seen: Vec<(f64, Option<f64>)> =
        progress.lock().unwrap().iter().map(|p| (p.progress_f64(), p.total_f64())).collect();
    assert_eq!(seen, [(1.0, Some(3.0)), (2.0, Some(3.0)), (3.0, Some(3.0))]);

    // The two-way tools: the test handlers answer.
    let listed = call(conn, "ask_roots", json!({})).await;
    assert_eq!(listed.is_error, None, "{listed:?}");
    assert_eq!(texts(&listed), [format!("The client shares 1 root:\n- {ROOT} (test root)").as_str()]);
    assert!(roots.calls.load(Ordering::SeqCst) >= 1);
    let summary = call(conn, "summarize", json!({"text": "MCP connects LLM hosts to tools."})).await;
    assert_eq!(texts(&summary), ["A short summary."], "{summary:?}");
    let prompts = sampler.prompts.lock().unwrap().clone();
    assert!(prompts.iter().any(|p| p.contains("MCP connects LLM hosts to tools.")), "{prompts:?}");

    // Bad arguments are a tool error; an unknown tool is a protocol error naming it.
    let bad = call(conn, "add", json!({"a": 1, "b": "two"})).await;
    assert_eq!(bad.is_error, Some(true));
    assert!(texts(&bad)[0].contains(r#"argument "b" of add must be a number, got "two""#), "{bad:?}");
    match conn.call_tool("no_such_tool", None, RequestOptions::default()).await {
        Err(ConnectionError::Session(SessionError::Rpc { error, .. })) => {
            assert_eq!(error.code, ErrorCode::INVALID_PARAMS);
            assert!(error.message.contains("\"no_such_tool\""), "{}", error.message);
        }
        other => panic!("an unknown tool: expected a JSON-RPC error, got {other:?}"),
    }
}

async fn prompt_and_resources(conn: &McpConnection) {
    let params = GetPromptParams {
        name: "review_code".into(),
        arguments: Some([("code".into(), "fn main() {}".into()), ("language".into(), "rust".into())].into()),
        ..Default::default()
    };
    let prompt = conn.get_prompt(params).await.expect("prompts/get").complete().expect("complete");
    let text = prompt.messages[0].content.as_text().expect("a text message");
    assert!(text.contains("```rust\nfn main() {}\n```"), "{text}");
    let missing = GetPromptParams { name: "review_code".into(), ..Default::default() };
    match conn.get_prompt(missing).await {
        Err(ConnectionError::Session(SessionError::Rpc { error, .. })) => {
            assert_eq!(error.code, ErrorCode::INVALID_PARAMS);
            assert!(error.message.contains("\"code\""), "{}", error.message);
        }
        other => panic!("a prompt without its argument: expected invalid params, got {other:?}"),
    }

    let read = |uri: &'static str| async move {
        let outcome = conn.read_resource(uri).await.unwrap_or_else(|e| panic!("read {uri}: {e}"));
        outcome.complete().expect("complete").contents
    };
    let readme = read("demo://readme").await;
    let ResourceContents::Text(readme) = &readme[0] else { panic!("{readme:?}") };
    assert!(readme.text.starts_with("# The mcp demo server"));
    let greeting = read("demo://greeting/Ada").await;
    let ResourceContents::Text(greeting) = &greeting[0] else { panic!("{greeting:?}") };
    assert!(greeting.text.starts_with("Hello, Ada!"), "{}", greeting.text);
    assert_eq!(greeting.uri, "demo://greeting/Ada");
    let logo = read("demo://logo.png").await;
    let ResourceContents::Blob(logo) = &logo[0] else { panic!("{logo:?}") };
    assert_eq!(logo.mime_type.as_deref(), Some("image/png"));
    assert!(conn.read_resource("demo://nothing").await.is_err(), "an unknown resource is an error");
}
