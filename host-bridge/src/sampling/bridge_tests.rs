use std::sync::Mutex;
use std::time::Duration;

use mcp_protocol::types::sampling::StopReason;
use serde_json::json;

use super::*;
use crate::llm::{ChatRole, LlmError, ScriptedLlm, ToolCall};

const LIMIT: Duration = Duration::from_secs(5);

fn params(v: serde_json::Value) -> CreateMessageParams {
    serde_json::from_value(v).unwrap()
}

fn hello(max_tokens: u64) -> CreateMessageParams {
    params(json!({"messages": [{"role": "user", "content": {"type": "text", "text": "hello"}}],
        "systemPrompt": "be brief", "maxTokens": max_tokens, "includeContext": "thisServer"}))
}

fn bridge(llm: &ScriptedLlm, options: SamplingOptions) -> HostLlmBridge {
    HostLlmBridge::new(Arc::new(llm.clone()), options)
}

async fn sample(b: &HostLlmBridge, p: CreateMessageParams) -> Result<CreateMessageResult, ErrorObject> {
    tokio::time::timeout(LIMIT, b.create_message("srv", p)).await.expect("sampling answers")
}

#[tokio::test]
async fn a_text_request_is_answered_by_the_llm() {
    let llm = ScriptedLlm::new("local-model");
    llm.push_text("hi there");
    let b = bridge(&llm, SamplingOptions::default());
    assert!(!b.supports_tools());
    let r = sample(&b, hello(50)).await.unwrap();
    assert_eq!((r.content.text().as_str(), r.model.as_str()), ("hi there", "local-model"));
    assert_eq!(r.stop_reason, Some(StopReason::EndTurn));
    let seen = llm.requests();
    assert_eq!(seen[0].messages[0].role, ChatRole::System);
    assert_eq!(seen[0].messages[1].text(), "hello");
    assert_eq!(seen[0].max_tokens, Some(50));
}

#[tokio::test]
async fn max_tokens_default_and_cap() {
    let llm = ScriptedLlm::new("m");
    llm.push_text("a").push_text("b");
    let options = SamplingOptions { default_max_tokens: 1024, max_tokens_cap: Some(300), ..Default::default() };
    let b = bridge(&llm, options);
    sample(&b, hello(0)).await.unwrap();
    sample(&b, hello(5000)).await.unwrap();
    let limits: Vec<_> = llm.requests().iter().map(|r| r.max_tokens).collect();
    assert_eq!(limits, [Some(300), Some(300)]);
    let llm = ScriptedLlm::new("m");
    llm.push_text("a");
    sample(&bridge(&llm, SamplingOptions::default()), hello(0)).await.unwrap();
    assert_eq!(llm.requests()[0].max_tokens, Some(1024));
}

fn with_tools() -> CreateMessageParams {
    params(json!({"messages": [{"role": "user", "content": {"type": "text", "text": "weather?"}}], "maxTokens": 10,
        "tools": [{"name": "weather", "inputSchema": {"type": "object"}}], "toolChoice": {"mode": "required"}}))
}

#[tokio::test]
async fn tools_are_refused_unless_tool_support_is_on() {
    let llm = ScriptedLlm::new("m");
    let err = sample(&bridge(&llm, SamplingOptions::default()), with_tools()).await.unwrap_err();
    assert_eq!(err.code, ErrorCode::INVALID_PARAMS);
    assert!(err.message.contains("does not support tools"), "{err:?}");
    assert!(llm.requests().is_empty(), "the LLM was not asked");

    llm.push_tool_calls(None, vec![ToolCall::new("c1", "weather", json!({"city": "Oslo"}))]);
    let b = bridge(&llm, SamplingOptions { tool_support: true, ..Default::default() });
    assert!(b.supports_tools());
    let r = sample(&b, with_tools()).await.unwrap();
    assert_eq!(r.stop_reason, Some(StopReason::ToolUse));
    assert_eq!(serde_json::to_value(&r.content).unwrap()[0]["input"], json!({"city": "Oslo"}));
    assert_eq!(llm.requests()[0].tools[0].name, "weather");
}

#[tokio::test]
async fn llm_failures_are_internal_errors_and_the_next_request_works() {
    let llm = ScriptedLlm::new("m");
    llm.push(Err(LlmError::Http { status: 503, body: "overloaded".into(), attempts: 4 })).push_text("recovered");
    let b = bridge(&llm, SamplingOptions::default());
    let err = sample(&b, hello(5)).await.unwrap_err();
    assert_eq!(err.code, ErrorCode::INTERNAL_ERROR);
    assert!(err.message.contains("HTTP 503") && err.message.contains("overloaded"), "{err:?}");
    assert_eq!(sample(&b, hello(5)).await.unwrap().content.text(), "recovered");
}

#[tokio::test]
async fn invalid_content_is_invalid_params() {
    let llm = ScriptedLlm::new("m");
    let p = params(json!({"messages": [{"role": "assistant", "content":
        {"type": "tool_result", "toolUseId": "x", "content": []}}], "maxTokens": 5}));
    let b = bridge(&llm, SamplingOptions { tool_support: true, ..Default::default() });
    assert_eq!(sample(&b, p).await.unwrap_err().code, ErrorCode::INVALID_PARAMS);
}

#[tokio::test(start_paused = true)]
async fn the_rate_limit_refuses_with_a_clear_error() {
    let llm = ScriptedLlm::new("m");
    llm.push_text("1").push_text("2").push_text("3");
    let b = bridge(&llm, SamplingOptions { requests_per_minute: Some(2), ..Default::default() });
    sample(&b, hello(5)).await.unwrap();
    sample(&b, hello(5)).await.unwrap();
    let err = sample(&b, hello(5)).await.unwrap_err();
    assert_eq!(err.code, RATE_LIMITED);
    assert!(err.message.contains("rate limit") && err.message.contains("\"srv\""), "{err:?}");
    assert_eq!(llm.requests().len(), 2, "a refused request never reaches the LLM");
    // Another server is not affected.
    b.create_message("other", hello(5)).await.unwrap();
}

/// A config that says nothing about sampling still bounds it: the bridge built from the default
/// settings lowers a huge `maxTokens` to 4096 and refuses the 31st request of a server within a
/// minute (before the fix, `From<&SamplingSettings>` gave no cap and no limit).
#[tokio::test(start_paused = true)]
async fn a_config_that_says_nothing_gets_a_token_cap_and_a_rate_limit() {
    let llm = ScriptedLlm::new("m");
    for _ in 0..31 {
        llm.push_text("ok");
    }
    let b = bridge(&llm, SamplingOptions::from(&SamplingSettings::default()));
    sample(&b, hello(u64::from(u32::MAX))).await.unwrap();
    assert_eq!(llm.requests()[0].max_tokens, Some(4096), "a server's huge maxTokens is lowered to the cap");
    for _ in 1..30 {
        sample(&b, hello(5)).await.unwrap();
    }
    let err = sample(&b, hello(5)).await.unwrap_err();
    assert_eq!(err.code, RATE_LIMITED, "{err:?}");
    assert!(err.message.contains("at most 30 request(s) per minute"), "{err:?}");
    assert_eq!(llm.requests().len(), 30, "the refused request never reached the LLM");

    // Both are settings: a config can raise the limit and lower (or raise) the cap.
    let llm = ScriptedLlm::new("m");
    llm.push_text("a").push_text("b");
    let settings = SamplingSettings { requests_per_minute: Some(1), max_tokens_cap: 64, ..Default::default() };
    let b = bridge(&llm, SamplingOptions::from(&settings));
    sample(&b, hello(1000)).await.unwrap();
    assert_eq!(llm.requests()[0].max_tokens, Some(64));
    assert_eq!(sample(&b, hello(5)).await.unwrap_err().code, RATE_LIMITED);
}

#[tokio::test]
async fn disabled_sampling_refuses() {
    let llm = ScriptedLlm::new("m");
    let b = bridge(&llm, SamplingOptions { enabled: false, ..Default::default() });
    assert_eq!(sample(&b, hello(5)).await.unwrap_err().code, ErrorCode::METHOD_NOT_FOUND);
}

/// Reviews by script: what to answer to the request and to the result; records what it saw.
struct Reviewer {
    request: Approval<CreateMessageParams>,
    result: Approval<CreateMessageResult>,
    seen: Mutex<Vec<String>>,
}

impl SamplingApproval for Reviewer {
    fn review_request(
        &self,
        server: &str,
        request: &CreateMessageParams,
    ) -> BoxFuture<'static, Approval<CreateMessageParams>> {
        self.seen.lock().unwrap().push(format!("{server}: {}", request.messages[0].content.text()));
        let answer = self.request.clone();
        Box::pin(async move { answer })
    }

    fn review_result(
        &self,
        _: &str,
        result: &CreateMessageResult,
    ) -> BoxFuture<'static, Approval<CreateMessageResult>> {
        self.seen.lock().unwrap().push(format!("result: {}", result.content.text()));
        let answer = self.result.clone();
        Box::pin(async move { answer })
    }
}

fn reviewed(llm: &ScriptedLlm, reviewer: Reviewer) -> (HostLlmBridge, Arc<Reviewer>) {
    let reviewer = Arc::new(reviewer);
    let approval: Arc<dyn SamplingApproval> = reviewer.clone();
    (HostLlmBridge::with_approval(Arc::new(llm.clone()), SamplingOptions::default(), Some(approval)), reviewer)
}

#[tokio::test]
async fn approval_deny_is_user_rejected_and_the_llm_is_not_asked() {
    let llm = ScriptedLlm::new("m");
    let (b, reviewer) = reviewed(
        &llm,
        Reviewer { request: Approval::Deny(Some("not now".into())), result: Approval::Approve, seen: Mutex::default() },
    );
    let err = sample(&b, hello(5)).await.unwrap_err();
    assert_eq!(err.code, ErrorCode::USER_REJECTED);
    assert_eq!(err.code.0, -1);
    assert!(err.message.contains("not now"), "{err:?}");
    assert!(llm.requests().is_empty());
    assert_eq!(reviewer.seen.lock().unwrap().clone(), ["srv: hello"]);
}

#[tokio::test]
async fn approval_edits_the_request_and_reviews_the_result() {
    let llm = ScriptedLlm::new("m");
    llm.push_text("raw answer").push_text("second");
    let mut edited = hello(5);
    edited.messages[0] = mcp_protocol::types::sampling::SamplingMessage::user_text("edited by the user");
    let mut replaced = CreateMessageResult::assistant_text("m", "checked answer");
    replaced.stop_reason = Some(StopReason::EndTurn);
    let (b, reviewer) = reviewed(
        &llm,
        Reviewer { request: Approval::Edit(edited), result: Approval::Edit(replaced), seen: Mutex::default() },
    );
    let r = sample(&b, hello(5)).await.unwrap();
    assert_eq!(r.content.text(), "checked answer");
    assert_eq!(llm.requests()[0].messages[1].text(), "edited by the user");
    assert_eq!(reviewer.seen.lock().unwrap().clone(), ["srv: hello", "result: raw answer"]);

    let (b, _) =
        reviewed(&llm, Reviewer { request: Approval::Approve, result: Approval::Deny(None), seen: Mutex::default() });
    let err = sample(&b, hello(5)).await.unwrap_err();
    assert_eq!(err.code, ErrorCode::USER_REJECTED);
    assert_eq!(err.message, "the user rejected the sampling result");
}

#[tokio::test]
async fn an_edit_cannot_slip_tools_past_the_setting() {
    let llm = ScriptedLlm::new("m");
    let (b, _) = reviewed(
        &llm,
        Reviewer { request: Approval::Edit(with_tools()), result: Approval::Approve, seen: Mutex::default() },
    );
    assert_eq!(sample(&b, hello(5)).await.unwrap_err().code, ErrorCode::INVALID_PARAMS);
    assert!(llm.requests().is_empty());
}

/// `tools: []` is a `tools` member all the same: without `sampling.tools` the spec says the
/// client MUST refuse it (before the fix it was accepted as a plain request).
#[tokio::test]
async fn an_empty_tools_list_is_refused_without_tool_support() {
    let llm = ScriptedLlm::new("m");
    let mut p = hello(5);
    p.tools = Some(Vec::new());
    let err = sample(&bridge(&llm, SamplingOptions::default()), p.clone()).await.unwrap_err();
    assert_eq!(err.code, ErrorCode::INVALID_PARAMS);
    assert!(err.message.contains("sampling.tools"), "{err:?}");
    assert!(llm.requests().is_empty(), "the LLM was not asked");
    // With tool support it is a request without tools, and no tool choice goes out.
    llm.push_text("fine");
    let b = bridge(&llm, SamplingOptions { tool_support: true, ..Default::default() });
    assert_eq!(sample(&b, p).await.unwrap().content.text(), "fine");
    assert_eq!((llm.requests()[0].tools.len(), llm.requests()[0].tool_choice.as_ref()), (0, None));
}

/// The user is never asked about a request that will be refused for its tools.
#[tokio::test]
async fn tools_are_refused_before_the_user_is_asked() {
    let llm = ScriptedLlm::new("m");
    let (b, reviewer) =
        reviewed(&llm, Reviewer { request: Approval::Approve, result: Approval::Approve, seen: Mutex::default() });
    let err = sample(&b, with_tools()).await.unwrap_err();
    assert_eq!(err.code, ErrorCode::INVALID_PARAMS, "{err:?}");
    assert!(reviewer.seen.lock().unwrap().is_empty(), "the user was asked: {:?}", reviewer.seen.lock().unwrap());
    assert!(llm.requests().is_empty());
}

/// The sampling options' token parameter goes with each request to the LLM.
#[tokio::test]
async fn the_token_parameter_reaches_the_llm() {
    let llm = ScriptedLlm::new("m");
    llm.push_text("a").push_text("b");
    sample(&bridge(&llm, SamplingOptions::default()), hello(5)).await.unwrap();
    let options = SamplingOptions { token_parameter: Some(TokenParameter::MaxCompletionTokens), ..Default::default() };
    sample(&bridge(&llm, options), hello(5)).await.unwrap();
    let seen: Vec<_> = llm.requests().iter().map(|r| r.token_parameter).collect();
    assert_eq!(seen, [None, Some(TokenParameter::MaxCompletionTokens)]);
}
