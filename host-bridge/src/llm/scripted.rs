//! [`ScriptedLlm`]: an in-process [`LlmClient`] that answers from a script, for tests and demos.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use futures::future::BoxFuture;

use super::{ChatRequest, ChatResponse, FinishReason, LlmClient, LlmError, ToolCall};

/// Answers each request with the next scripted answer and records the requests. When the script
/// is used up, it fails with [`LlmError::InvalidResponse`]. Cheap to clone; clones share the
/// script and the record.
#[derive(Clone, Default)]
pub struct ScriptedLlm {
    state: Arc<Mutex<State>>,
    model: Arc<str>,
    images: bool,
}

#[derive(Default)]
struct State {
    script: VecDeque<Result<ChatResponse, LlmError>>,
    requests: Vec<ChatRequest>,
}

impl std::fmt::Debug for ScriptedLlm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let state = self.lock();
        f.debug_struct("ScriptedLlm")
            .field("model", &self.model)
            .field("scripted", &state.script.len())
            .field("requests", &state.requests.len())
            .finish()
    }
}

impl ScriptedLlm {
    /// An empty script; `model` is the default model and the model of every answer. It takes
    /// png, jpeg, gif and webp images, and no audio.
    pub fn new(model: &str) -> Self {
        ScriptedLlm { state: Arc::default(), model: Arc::from(model), images: true }
    }

    /// The same, taking no images either.
    pub fn text_only(model: &str) -> Self {
        ScriptedLlm { images: false, ..ScriptedLlm::new(model) }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Add an answer, or a failure, to the script.
    pub fn push(&self, answer: Result<ChatResponse, LlmError>) -> &Self {
        self.lock().script.push_back(answer);
        self
    }

    /// Add a text answer that ends the turn.
    pub fn push_text(&self, text: &str) -> &Self {
        self.push(Ok(ChatResponse {
            text: Some(text.to_owned()),
            tool_calls: Vec::new(),
            finish_reason: FinishReason::Stop,
            model: self.model.to_string(),
            usage: None,
        }))
    }

    /// Add an answer that calls tools.
    pub fn push_tool_calls(&self, text: Option<&str>, calls: Vec<ToolCall>) -> &Self {
        self.push(Ok(ChatResponse {
            text: text.map(str::to_owned),
            tool_calls: calls,
            finish_reason: FinishReason::ToolCalls,
            model: self.model.to_string(),
            usage: None,
        }))
    }

    /// The requests received so far.
    pub fn requests(&self) -> Vec<ChatRequest> {
        self.lock().requests.clone()
    }
}

impl LlmClient for ScriptedLlm {
    fn chat(&self, request: ChatRequest) -> BoxFuture<'static, Result<ChatResponse, LlmError>> {
        let mut state = self.lock();
        state.requests.push(request);
        let answer = state
            .script
            .pop_front()
            .unwrap_or_else(|| Err(LlmError::InvalidResponse("the scripted LLM has no answer left".into())));
        Box::pin(async move { answer })
    }

    fn default_model(&self) -> &str {
        &self.model
    }

    fn accepts_image(&self, mime_type: &str) -> bool {
        self.images && matches!(mime_type, "image/png" | "image/jpeg" | "image/gif" | "image/webp")
    }
}
