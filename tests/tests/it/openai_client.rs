//! host-bridge's OpenAI-compatible client against the in-process fake chat-completions server
//! (`tests::fake_llm`): plain answers, tool calls, malformed tool arguments, retries on 429 and
//! 5xx (and only on those), timeouts, bounded bodies, and an API key that never shows.

use std::time::Duration;

use host_bridge::{
    ChatMessage, ChatRequest, ChatResponse, FinishReason, LlmClient, LlmError, OpenAiClient, OpenAiConfig, Secret,
    TokenParameter, ToolCall, ToolChoice, ToolDefinition, Usage,
};
use serde_json::json;
use test_support::within;
use tests::fake_llm::{FAKE_MODEL, FakeLlm, Reply, openai_rules, refuse_parameter};

const KEY: &str = "sk-test-not-a-real-key";

fn config(llm: &FakeLlm) -> OpenAiConfig {
    let mut config = OpenAiConfig::new(llm.base_url(), "configured-model");
    config.api_key = Some(Secret::new(KEY));
    config.max_retries = 2;
    config.backoff_base = Duration::from_millis(1);
    config.backoff_max = Duration::from_millis(20);
    config.timeout = Duration::from_secs(10);
    config
}

fn hello() -> ChatRequest {
    ChatRequest {
        messages: vec![ChatMessage::system("be brief"), ChatMessage::user("hello")],
        max_tokens: Some(32),
        temperature: Some(0.0),
        ..Default::default()
    }
}

async fn chat(config: OpenAiConfig, request: ChatRequest) -> Result<ChatResponse, LlmError> {
    OpenAiClient::new(config).expect("a valid config").chat(request).await
}

#[tokio::test]
async fn plain_answer() {
    within(async {
        let llm = FakeLlm::start().await;
        llm.push(Reply::text("hello back"));
        let answer = chat(config(&llm), hello()).await.unwrap();
        assert_eq!(answer.text.as_deref(), Some("hello back"));
        assert_eq!((answer.finish_reason, answer.model.as_str()), (FinishReason::Stop, FAKE_MODEL));
        assert!(answer.tool_calls.is_empty());
        assert_eq!(answer.usage, Some(Usage { prompt_tokens: 1, completion_tokens: 1 }));

        let seen = llm.requests();
        assert_eq!(seen.len(), 1);
        assert_eq!((seen[0].method.as_str(), seen[0].path.as_str()), ("POST", "/v1/chat/completions"));
        assert_eq!(seen[0].authorization.as_deref(), Some(format!("Bearer {KEY}").as_str()));
        assert_eq!(
            seen[0].body,
            json!({"model": "configured-model", "messages": [
                {"role": "system", "content": "be brief"}, {"role": "user", "content": "hello"}],
                "temperature": 0.0, "max_tokens": 32})
        );
    })
    .await
}

#[tokio::test]
async fn no_key_no_authorization_header() {
    within(async {
        let llm = FakeLlm::start().await;
        llm.push(Reply::text("ok"));
        let mut config = config(&llm);
        config.api_key = None;
        chat(config, hello()).await.unwrap();
        assert_eq!(llm.requests()[0].authorization, None);
    })
    .await
}

fn weather_request() -> ChatRequest {
    ChatRequest {
        messages: vec![ChatMessage::user("weather in Paris?")],
        tools: vec![ToolDefinition {
            name: "weather".into(),
            description: Some("current weather".into()),
            parameters: json!({"type": "object", "properties": {"city": {"type": "string"}}}),
        }],
        tool_choice: Some(ToolChoice::Required),
        model: Some("tool-model".into()),
        ..Default::default()
    }
}

#[tokio::test]
async fn tool_calls() {
    within(async {
        let llm = FakeLlm::start().await;
        llm.push(Reply::tool_calls(&[("call_1", "weather", r#"{"city": "Paris"}"#)]));
        let answer = chat(config(&llm), weather_request()).await.unwrap();
        assert_eq!(answer.finish_reason, FinishReason::ToolCalls);
        assert_eq!(answer.text, None);
        assert_eq!(answer.tool_calls, [ToolCall::new("call_1", "weather", json!({"city": "Paris"}))]);
        let body = &llm.requests()[0].body;
        assert_eq!(body["model"], "tool-model");
        assert_eq!(body["tool_choice"], "required");
        assert_eq!(body["tools"][0]["function"]["name"], "weather");
        assert_eq!(body["tools"][0]["function"]["parameters"]["properties"]["city"]["type"], "string");

        // The tool's result goes back as a role "tool" message linked by id.
        llm.push(Reply::text("It is sunny in Paris."));
        let mut follow_up = weather_request();
        follow_up.tool_choice = Some(ToolChoice::Auto);
        follow_up.messages.push(ChatMessage::assistant_tool_calls(None, answer.tool_calls));
        follow_up.messages.push(ChatMessage::tool_result("call_1", "sunny, 21 °C"));
        let answer = chat(config(&llm), follow_up).await.unwrap();
        assert_eq!(answer.text.as_deref(), Some("It is sunny in Paris."));
        let messages = &llm.requests()[1].body["messages"];
        assert_eq!(messages[1]["tool_calls"][0]["function"]["arguments"], r#"{"city":"Paris"}"#);
        assert_eq!(messages[2], json!({"role": "tool", "tool_call_id": "call_1", "content": "sunny, 21 °C"}));
    })
    .await
}

#[tokio::test]
async fn malformed_tool_arguments_are_reported_not_trusted() {
    within(async {
        let llm = FakeLlm::start().await;
        llm.push(Reply::tool_calls(&[("call_1", "weather", r#"{"city": "Par"#), ("call_2", "weather", "")]));
        let answer = chat(config(&llm), weather_request()).await.unwrap();
        let invalid = answer.tool_calls[0].arguments.as_ref().unwrap_err();
        assert_eq!(invalid.raw, r#"{"city": "Par"#);
        assert!(!invalid.error.is_empty());
        assert_eq!(answer.tool_calls[1].arguments, Ok(json!({})), "empty arguments mean none");
    })
    .await
}

#[tokio::test]
async fn too_many_requests_then_success() {
    within(async {
        let llm = FakeLlm::start().await;
        llm.push(Reply::status(429, "slow down").with_header("retry-after", "0"));
        llm.push(Reply::json(503, json!({"error": {"message": "overloaded"}})));
        llm.push(Reply::text("finally"));
        let answer = chat(config(&llm), hello()).await.unwrap();
        assert_eq!(answer.text.as_deref(), Some("finally"));
        assert_eq!(llm.requests().len(), 3, "two retries");
    })
    .await
}

#[tokio::test]
async fn server_errors_exhaust_the_retries() {
    within(async {
        let llm = FakeLlm::start().await;
        llm.set_fallback(Reply::status(500, "boom"));
        match chat(config(&llm), hello()).await {
            Err(LlmError::Http { status: 500, body, attempts: 3 }) => assert_eq!(body, "boom"),
            other => panic!("expected HTTP 500 after 3 attempts, got {other:?}"),
        }
        assert_eq!(llm.requests().len(), 3, "the first try and max_retries = 2");
    })
    .await
}

#[tokio::test]
async fn other_statuses_are_not_retried_and_their_body_is_bounded() {
    within(async {
        let llm = FakeLlm::start().await;
        let huge = format!("bad request: {}", "x".repeat(50_000));
        llm.push(Reply::status(400, &huge));
        let err = chat(config(&llm), hello()).await.unwrap_err();
        let LlmError::Http { status: 400, body, attempts: 1 } = &err else { panic!("{err:?}") };
        assert!(body.starts_with("bad request: xxx") && body.len() < 1200, "{} bytes", body.len());
        assert_eq!(llm.requests().len(), 1);
        llm.push(Reply::status(401, "invalid api key"));
        let err = chat(config(&llm), hello()).await.unwrap_err();
        assert!(matches!(err, LlmError::Http { status: 401, attempts: 1, .. }), "{err:?}");
        assert!(!format!("{err} {err:?}").contains(KEY), "the key shows in {err:?}");
    })
    .await
}

#[tokio::test]
async fn a_slow_server_times_out_without_a_retry() {
    within(async {
        let llm = FakeLlm::start().await;
        llm.push(Reply::text("too late").after(Duration::from_secs(60)));
        let mut config = config(&llm);
        config.timeout = Duration::from_millis(300);
        match chat(config, hello()).await {
            Err(LlmError::Timeout { timeout }) => assert_eq!(timeout, Duration::from_millis(300)),
            other => panic!("expected a timeout, got {other:?}"),
        }
        assert_eq!(llm.requests().len(), 1);
    })
    .await
}

#[tokio::test]
async fn unreachable_server_and_oversized_answers() {
    within(async {
        // A port that was free a moment ago: nothing listens there.
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let mut config = OpenAiConfig::new(format!("http://127.0.0.1:{port}/v1"), "m");
        config.api_key = Some(Secret::new(KEY));
        let err = chat(config, hello()).await.unwrap_err();
        assert!(matches!(err, LlmError::Transport(_)), "{err:?}");
        assert!(!format!("{err} {err:?}").contains(KEY));

        let llm = FakeLlm::start().await;
        llm.push(Reply::text(&"y".repeat(10_000)));
        let mut config = self::config(&llm);
        config.max_response_bytes = 1024;
        let err = chat(config, hello()).await.unwrap_err();
        assert!(matches!(&err, LlmError::InvalidResponse(m) if m.contains("1024 bytes")), "{err:?}");

        llm.push(Reply::status(200, "<html>not json</html>"));
        let err = chat(self::config(&llm), hello()).await.unwrap_err();
        assert!(matches!(&err, LlmError::InvalidResponse(m) if m.contains("<html>")), "{err:?}");
    })
    .await
}

#[tokio::test]
async fn a_redirect_to_another_origin_is_refused() {
    within(async {
        let elsewhere = FakeLlm::start().await;
        elsewhere.set_fallback(Reply::text("the prompt leaked"));
        let llm = FakeLlm::start().await;
        let target = format!("{}/chat/completions", elsewhere.base_url());
        llm.set_fallback(Reply::status(307, "moved").with_header("location", &target));
        let err = chat(config(&llm), hello()).await.unwrap_err();
        let shown = err.to_string();
        assert!(matches!(err, LlmError::Transport(_)), "{err:?}");
        assert!(shown.contains("refused a redirect") && shown.contains("same origin"), "{shown}");
        assert!(!format!("{err} {err:?}").contains(KEY));
        assert_eq!(llm.requests().len(), 1, "no retry of a refused redirect");
        tokio::time::sleep(Duration::from_millis(200)).await;
        assert!(elsewhere.requests().is_empty(), "the other origin got {:?}", elsewhere.requests());
    })
    .await
}

#[tokio::test]
async fn errors_and_debug_show_no_url_secret() {
    within(async {
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let base = format!("http://user-secret:pass-secret@127.0.0.1:{port}/v1?api-key=query-secret");
        let mut config = OpenAiConfig::new(base, "m");
        config.api_key = Some(Secret::new(KEY));
        let client = OpenAiClient::new(config.clone()).unwrap();
        let err = client.chat(hello()).await.unwrap_err();
        for shown in [format!("{config:?}"), format!("{client:?}"), format!("{err} {err:?}")] {
            for secret in [KEY, "user-secret", "pass-secret", "query-secret"] {
                assert!(!shown.contains(secret), "{secret} shows in {shown}");
            }
        }
        assert!(err.to_string().contains(&format!("127.0.0.1:{port}")), "the error names the server: {err}");
    })
    .await
}

/// OpenAI answers 400 to a `tool_choice` without `tools` (vLLM refuses it too): none is sent
/// then, and the request goes through an endpoint that is as strict.
#[tokio::test]
async fn no_tool_choice_goes_out_without_tools() {
    within(async {
        let llm = FakeLlm::start().await;
        llm.check_requests(openai_rules());
        llm.push(Reply::text("no tools needed"));
        llm.push(Reply::text("with tools"));
        let mut request = hello();
        request.tool_choice = Some(ToolChoice::None);
        let answer = chat(config(&llm), request).await.unwrap();
        assert_eq!(answer.text.as_deref(), Some("no tools needed"));
        let seen = llm.requests();
        assert_eq!(seen[0].body.get("tool_choice"), None, "{}", seen[0].body);
        // With tools the choice still goes out.
        chat(config(&llm), weather_request()).await.unwrap();
        assert_eq!(llm.requests()[1].body["tool_choice"], "required");
    })
    .await
}

fn limit_fields(llm: &FakeLlm) -> Vec<&'static str> {
    llm.requests()
        .iter()
        .map(|r| match (r.body.get("max_tokens"), r.body.get("max_completion_tokens")) {
            (Some(_), None) => "max_tokens",
            (None, Some(_)) => "max_completion_tokens",
            _ => "neither or both",
        })
        .collect()
}

/// OpenAI's current models refuse `max_tokens` with a 400 naming it: in auto mode the client
/// sends the request once more with `max_completion_tokens`, and remembers that for the model.
#[tokio::test]
async fn auto_switches_to_max_completion_tokens_once_and_remembers_it() {
    within(async {
        let llm = FakeLlm::start().await;
        llm.check_requests(refuse_parameter("max_tokens", "max_completion_tokens"));
        llm.set_fallback(Reply::text("ok"));
        let client = OpenAiClient::new(config(&llm)).unwrap();
        let answer = client.chat(hello()).await.unwrap();
        assert_eq!(answer.text.as_deref(), Some("ok"));
        assert_eq!(llm.requests()[1].body["max_completion_tokens"], 32);
        // Remembered for the model, by the client and its clones: straight to the right one.
        client.clone().chat(hello()).await.unwrap();
        assert_eq!(limit_fields(&llm), ["max_tokens", "max_completion_tokens", "max_completion_tokens"]);
        // Another model is judged on its own.
        let mut other = hello();
        other.model = Some("local-llama".into());
        client.chat(other).await.unwrap();
        assert_eq!(limit_fields(&llm)[3..], ["max_tokens", "max_completion_tokens"]);
    })
    .await
}

/// By name: the o-series and gpt-5 go out with `max_completion_tokens` from the start.
#[tokio::test]
async fn auto_picks_max_completion_tokens_for_reasoning_models() {
    within(async {
        let llm = FakeLlm::start().await;
        llm.check_requests(refuse_parameter("max_tokens", "max_completion_tokens"));
        llm.set_fallback(Reply::text("ok"));
        for model in ["o4-mini", "gpt-5-mini"] {
            let mut config = config(&llm);
            config.model = model.into();
            chat(config, hello()).await.unwrap();
        }
        assert_eq!(limit_fields(&llm), ["max_completion_tokens", "max_completion_tokens"]);
    })
    .await
}

/// An explicit setting is kept, refused or not; a request's own setting wins over the client's;
/// a server that refuses both names gets two requests, not a loop.
#[tokio::test]
async fn explicit_token_parameters_are_never_switched() {
    within(async {
        let llm = FakeLlm::start().await;
        llm.check_requests(refuse_parameter("max_tokens", "max_completion_tokens"));
        llm.set_fallback(Reply::text("ok"));
        let mut explicit = config(&llm);
        explicit.token_parameter = TokenParameter::MaxTokens;
        let err = chat(explicit.clone(), hello()).await.unwrap_err();
        assert!(matches!(&err, LlmError::Http { status: 400, body, .. } if body.contains("unsupported_parameter")));
        assert_eq!(llm.requests().len(), 1, "no second try");
        let mut request = hello();
        request.token_parameter = Some(TokenParameter::MaxCompletionTokens);
        chat(explicit, request).await.unwrap();
        assert_eq!(limit_fields(&llm)[1..], ["max_completion_tokens"]);

        let strict = FakeLlm::start().await;
        strict.check_requests(refuse_parameter("max_tokens", "max_completion_tokens"));
        strict.check_requests(refuse_parameter("max_completion_tokens", "max_tokens"));
        let err = chat(config(&strict), hello()).await.unwrap_err();
        assert!(matches!(&err, LlmError::Http { status: 400, .. }), "{err:?}");
        assert_eq!(limit_fields(&strict), ["max_tokens", "max_completion_tokens"]);
    })
    .await
}

/// Tool calls without ids get ids unique across the turns of a conversation.
#[tokio::test]
async fn tool_calls_without_ids_get_distinct_ids_across_turns() {
    within(async {
        let llm = FakeLlm::start().await;
        let call = json!({"type": "function", "function": {"name": "weather", "arguments": "{}"}});
        let body = tests::fake_llm::completion(json!({"content": null, "tool_calls": [call]}), "tool_calls");
        llm.set_fallback(Reply::json(200, body));
        let client = OpenAiClient::new(config(&llm)).unwrap();
        let first = client.chat(weather_request()).await.unwrap().tool_calls[0].id.clone();
        let second = client.chat(weather_request()).await.unwrap().tool_calls[0].id.clone();
        assert_ne!(first, second);
        assert!(first.starts_with("call_") && second.starts_with("call_"), "{first} {second}");
    })
    .await
}
