//! An [`LlmClient`] for any server that speaks the OpenAI chat-completions format (OpenAI,
//! vLLM, the llama.cpp server, Ollama, ...): `POST {base_url}/chat/completions`.
//!
//! Retries happen only on HTTP 429 and 5xx, with exponential backoff (honouring `Retry-After`
//! up to a cap) and a limit. Timeouts, refused connections and other statuses fail at once.
//!
//! The HTTP client follows the workspace's policy (`mcp_transport::http_policy`): redirects only
//! within the endpoint's origin, and a warning (once per client) when the API key would go over
//! plain http to a host that is not loopback. URLs in errors and `Debug` output are redacted.
//!
//! The token limit goes out as `max_tokens` or `max_completion_tokens`
//! ([`OpenAiConfig::token_parameter`], or a request's own [`ChatRequest::token_parameter`]). In
//! [`TokenParameter::Auto`] (the default) the model's name decides: `max_completion_tokens` for
//! OpenAI's o-series (`o1`, `o3-mini`, `o4-mini`, ...) and `gpt-5` and later, `max_tokens` for
//! any other model (vLLM, llama.cpp and Ollama take that one). When the endpoint answers 400
//! naming the parameter sent as unsupported (OpenAI's `unsupported_parameter`), the request is
//! sent once more with the other one, and a success is remembered for that model by this client
//! (and its clones). A parameter set explicitly is never switched.

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::future::BoxFuture;
use mcp_transport::http_policy::{PlainHttpWarning, client_builder};
use mcp_transport::redact::{Secret, describe, redact_url, redact_url_str};
use reqwest::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE, HeaderMap, HeaderValue, RETRY_AFTER};

use super::wire::{self, CallIds, TokenLimitField};
use super::{ChatRequest, ChatResponse, LlmClient, LlmError, TokenParameter, excerpt};

/// How an [`OpenAiClient`] reaches its server.
///
/// [`OpenAiConfig::from_env`] reads:
///
/// - `OPENAI_BASE_URL`: the API root, such as `http://127.0.0.1:8000/v1` for a local vLLM or
///   llama.cpp server (default [`OpenAiConfig::DEFAULT_BASE_URL`]);
/// - `OPENAI_API_KEY`: the bearer token (optional: local servers often need none);
/// - `OPENAI_MODEL`: the model to use when a request names none (required);
/// - `OPENAI_TOKEN_PARAMETER`: how the token limit is named, `auto` (the default),
///   `max_tokens` or `max_completion_tokens` ([`OpenAiConfig::token_parameter`]).
///
/// Its `Debug` shows the base URL redacted (no credentials, no query values) and no API key.
#[derive(Clone)]
pub struct OpenAiConfig {
    /// The API root; `/chat/completions` is appended (unless it is already there).
    pub base_url: String,
    /// Sent as `Authorization: Bearer …` when present.
    pub api_key: Option<Secret>,
    /// The default model.
    pub model: String,
    /// How long one attempt may take, from connecting to the end of the body (default 120 s).
    pub timeout: Duration,
    /// How long connecting may take (default 10 s).
    pub connect_timeout: Duration,
    /// Retries after a 429 or 5xx answer (default 3; 0 disables retries).
    pub max_retries: u32,
    /// The first retry's delay; each further retry doubles it (default 500 ms).
    pub backoff_base: Duration,
    /// The longest delay between attempts, also the cap on `Retry-After` (default 30 s).
    pub backoff_max: Duration,
    /// Image MIME types the model takes (default png, jpeg, gif and webp).
    pub image_types: Vec<String>,
    /// Audio MIME types the model takes as `input_audio` (wav and mp3 only; default none).
    pub audio_types: Vec<String>,
    /// How the token limit is named: by the model and what the endpoint accepts
    /// ([`TokenParameter::Auto`], the default), or always `max_tokens` or
    /// `max_completion_tokens`. A request's own [`ChatRequest::token_parameter`] wins.
    pub token_parameter: TokenParameter,
    /// The largest answer body read (default 8 MiB).
    pub max_response_bytes: usize,
}

impl fmt::Debug for OpenAiConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OpenAiConfig")
            .field("base_url", &redact_url_str(&self.base_url))
            .field("api_key", &self.api_key)
            .field("model", &self.model)
            .field("timeout", &self.timeout)
            .field("connect_timeout", &self.connect_timeout)
            .field("max_retries", &self.max_retries)
            .field("backoff_base", &self.backoff_base)
            .field("backoff_max", &self.backoff_max)
            .field("image_types", &self.image_types)
            .field("audio_types", &self.audio_types)
            .field("token_parameter", &self.token_parameter)
            .field("max_response_bytes", &self.max_response_bytes)
            .finish()
    }
}

impl OpenAiConfig {
    /// The default API root.
    pub const DEFAULT_BASE_URL: &'static str = "https://api.openai.com/v1";

    /// A configuration for `model` at `base_url`, with the defaults above.
    pub fn new(base_url: impl Into<String>, model: impl Into<String>) -> Self {
        OpenAiConfig {
            base_url: base_url.into(),
            api_key: None,
            model: model.into(),
            timeout: Duration::from_secs(120),
            connect_timeout: Duration::from_secs(10),
            max_retries: 3,
            backoff_base: Duration::from_millis(500),
            backoff_max: Duration::from_secs(30),
            image_types: ["image/png", "image/jpeg", "image/gif", "image/webp"].map(String::from).to_vec(),
            audio_types: Vec::new(),
            token_parameter: TokenParameter::Auto,
            max_response_bytes: 8 * 1024 * 1024,
        }
    }

    /// Read `OPENAI_BASE_URL`, `OPENAI_API_KEY`, `OPENAI_MODEL` and `OPENAI_TOKEN_PARAMETER` from
    /// the environment.
    pub fn from_env() -> Result<Self, LlmError> {
        OpenAiConfig::from_lookup(|name| std::env::var(name).ok())
    }

    /// Like [`OpenAiConfig::from_env`], reading the variables through `lookup`. Empty values
    /// count as unset; a token parameter that is not `auto`, `max_tokens` or
    /// `max_completion_tokens` is a configuration error naming the variable.
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Result<Self, LlmError> {
        let get = |name: &str| lookup(name).map(|v| v.trim().to_owned()).filter(|v| !v.is_empty());
        let model = get("OPENAI_MODEL")
            .ok_or_else(|| LlmError::Config("OPENAI_MODEL is not set: name the model to use".into()))?;
        let base_url = get("OPENAI_BASE_URL").unwrap_or_else(|| OpenAiConfig::DEFAULT_BASE_URL.to_owned());
        let mut config = OpenAiConfig::new(base_url, model);
        config.api_key = get("OPENAI_API_KEY").map(Secret::new);
        if let Some(parameter) = get("OPENAI_TOKEN_PARAMETER") {
            config.token_parameter =
                parameter.parse().map_err(|e| LlmError::Config(format!("OPENAI_TOKEN_PARAMETER: {e}")))?;
        }
        Ok(config)
    }

    /// The `/chat/completions` URL, checked.
    fn endpoint(&self) -> Result<reqwest::Url, LlmError> {
        let base = self.base_url.trim();
        let url = if base.trim_end_matches('/').ends_with("/chat/completions") {
            base.trim_end_matches('/').to_owned()
        } else {
            format!("{}/chat/completions", base.trim_end_matches('/'))
        };
        let parsed = reqwest::Url::parse(&url)
            .map_err(|e| LlmError::Config(format!("invalid base URL {:?}: {e}", redact_url_str(base))))?;
        match parsed.scheme() {
            "http" | "https" => Ok(parsed),
            other => Err(LlmError::Config(format!(
                "unsupported URL scheme {other:?} in the base URL {} (http or https)",
                redact_url(&parsed)
            ))),
        }
    }
}

/// A chat-completions client. Cheap to clone; clones share one connection pool.
#[derive(Clone)]
pub struct OpenAiClient {
    inner: Arc<Inner>,
}

struct Inner {
    config: OpenAiConfig,
    endpoint: reqwest::Url,
    http: reqwest::Client,
    plain_http: PlainHttpWarning,
    /// Ids for tool calls the server gives none.
    call_ids: CallIds,
    /// In auto mode: the parameter each model was found to take (after a 400 refusing the
    /// other). At most [`MAX_LEARNED_MODELS`] models.
    learned: Mutex<HashMap<String, TokenLimitField>>,
}

/// The most models whose token parameter a client remembers (model names come from the host's
/// configuration; the bound keeps memory fixed whatever they are).
const MAX_LEARNED_MODELS: usize = 256;

impl fmt::Debug for OpenAiClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OpenAiClient")
            .field("endpoint", &redact_url(&self.inner.endpoint))
            .field("model", &self.inner.config.model)
            .field("api_key", &self.inner.config.api_key)
            .finish()
    }
}

impl OpenAiClient {
    /// A client for `config`. Fails on an unusable base URL, an empty model, or an API key that
    /// cannot be sent in a header.
    pub fn new(config: OpenAiConfig) -> Result<Self, LlmError> {
        let endpoint = config.endpoint()?;
        if config.model.trim().is_empty() {
            return Err(LlmError::Config("the model name is empty".into()));
        }
        if let Some(key) = &config.api_key {
            bearer(key)?;
        }
        let http = client_builder(config.connect_timeout)
            .build()
            .map_err(|e| LlmError::Config(format!("cannot build the HTTP client: {}", describe(&e))))?;
        let plain_http = PlainHttpWarning::new();
        let inner =
            Inner { config, endpoint, http, plain_http, call_ids: CallIds::new(), learned: Mutex::new(HashMap::new()) };
        Ok(OpenAiClient { inner: Arc::new(inner) })
    }

    /// The configuration in use.
    pub fn config(&self) -> &OpenAiConfig {
        &self.inner.config
    }
}

impl LlmClient for OpenAiClient {
    fn chat(&self, request: ChatRequest) -> BoxFuture<'static, Result<ChatResponse, LlmError>> {
        let inner = self.inner.clone();
        Box::pin(async move { inner.chat(request).await })
    }

    fn default_model(&self) -> &str {
        &self.inner.config.model
    }

    fn accepts_image(&self, mime_type: &str) -> bool {
        self.inner.config.image_types.iter().any(|t| t.eq_ignore_ascii_case(mime_type))
    }

    fn accepts_audio(&self, mime_type: &str) -> bool {
        wire::audio_format(mime_type).is_some()
            && self.inner.config.audio_types.iter().any(|t| t.eq_ignore_ascii_case(mime_type))
    }
}

/// How much of an error body is kept.
const ERROR_BODY_EXCERPT: usize = 1024;

impl Inner {
    async fn chat(&self, request: ChatRequest) -> Result<ChatResponse, LlmError> {
        let config = &self.config;
        let model = request.model.as_deref().unwrap_or(&config.model);
        let setting = request.token_parameter.unwrap_or(config.token_parameter);
        let mut field = match setting {
            TokenParameter::MaxTokens => TokenLimitField::MaxTokens,
            TokenParameter::MaxCompletionTokens => TokenLimitField::MaxCompletionTokens,
            TokenParameter::Auto => self.learned(model).unwrap_or_else(|| TokenLimitField::for_model(model)),
        };
        // Only a request that carries a limit can be refused for its name.
        let mut may_switch = setting == TokenParameter::Auto && request.max_tokens.is_some();
        let mut switched = false;
        loop {
            let body = wire::encode(&request, &config.model, field)?;
            let body = serde_json::to_vec(&body).map_err(|e| LlmError::InvalidRequest(e.to_string()))?;
            match self.send(body).await {
                Ok(bytes) => {
                    if switched {
                        self.learn(model, field);
                    }
                    return wire::decode(&bytes, model, &self.call_ids);
                }
                Err(LlmError::Http { status: 400, body, .. }) if may_switch && refuses(&body, field) => {
                    let other = field.other();
                    tracing::info!(
                        model,
                        refused = field.name(),
                        retry_with = other.name(),
                        "the LLM endpoint does not take this token parameter for the model; retrying with the other"
                    );
                    (field, may_switch, switched) = (other, false, true);
                }
                Err(e) => return Err(e),
            }
        }
    }

    /// The parameter `model` was found to take.
    fn learned(&self, model: &str) -> Option<TokenLimitField> {
        self.learned.lock().unwrap_or_else(|p| p.into_inner()).get(model).copied()
    }

    fn learn(&self, model: &str, field: TokenLimitField) {
        let mut learned = self.learned.lock().unwrap_or_else(|p| p.into_inner());
        if learned.len() < MAX_LEARNED_MODELS || learned.contains_key(model) {
            learned.insert(model.to_owned(), field);
        }
    }

    /// Send `body`, retrying on 429 and 5xx; the answer's body when it succeeds.
    async fn send(&self, body: Vec<u8>) -> Result<Vec<u8>, LlmError> {
        let config = &self.config;
        let mut attempts = 0;
        loop {
            attempts += 1;
            let mut builder = self
                .http
                .post(self.endpoint.clone())
                .timeout(config.timeout)
                .header(CONTENT_TYPE, "application/json")
                .header(ACCEPT, "application/json")
                .body(body.clone());
            if let Some(key) = &config.api_key {
                builder = builder.header(AUTHORIZATION, bearer(key)?);
            }
            self.plain_http.check("llm", &self.endpoint, config.api_key.is_some());
            let response = builder.send().await.map_err(|e| self.failure(e))?;
            let status = response.status();
            if status.is_success() {
                let bytes = read_bounded(response, config.max_response_bytes).await.map_err(|e| match e {
                    ReadError::Http(e) => self.failure(e),
                    ReadError::TooLarge => LlmError::InvalidResponse(format!(
                        "the answer is larger than {} bytes",
                        config.max_response_bytes
                    )),
                })?;
                return Ok(bytes);
            }
            let retry_after = retry_after(response.headers());
            let body = read_excerpt(response).await;
            let retryable = status.as_u16() == 429 || status.is_server_error();
            if !retryable || attempts > config.max_retries {
                return Err(LlmError::Http { status: status.as_u16(), body, attempts });
            }
            let delay = backoff(config, attempts, retry_after);
            tracing::warn!(
                status = status.as_u16(),
                attempt = attempts,
                delay_ms = delay.as_millis() as u64,
                "the LLM server is busy or failing; retrying"
            );
            tokio::time::sleep(delay).await;
        }
    }

    fn failure(&self, error: reqwest::Error) -> LlmError {
        if error.is_timeout() {
            LlmError::Timeout { timeout: self.config.timeout }
        } else {
            // `describe` names the URL of the failure, redacted.
            LlmError::Transport(describe(&error))
        }
    }
}

/// Whether an error body (of a 400) says that `field` is not supported: OpenAI's
/// `{"error": {"param": "max_tokens", "code": "unsupported_parameter", ...}}`, or a message such as
/// `Unsupported parameter: 'max_tokens' is not supported with this model.` (a body cut short
/// may not parse as JSON).
fn refuses(body: &str, field: TokenLimitField) -> bool {
    let name = field.name();
    if let Ok(value) = serde_json::from_str::<serde_json::Value>(body) {
        let error = value.get("error").unwrap_or(&value);
        let text = |key: &str| error.get(key).and_then(serde_json::Value::as_str);
        if text("param") == Some(name) && text("code") == Some("unsupported_parameter") {
            return true;
        }
    }
    let body = body.to_ascii_lowercase();
    [format!("unsupported parameter: '{name}'"), format!("'{name}' is not supported")]
        .iter()
        .any(|needle| body.contains(needle.as_str()))
}

fn bearer(key: &Secret) -> Result<HeaderValue, LlmError> {
    let mut value = HeaderValue::from_str(&format!("Bearer {}", key.expose().trim()))
        .map_err(|_| LlmError::Config("the API key cannot be sent in an HTTP header".into()))?;
    value.set_sensitive(true);
    Ok(value)
}

/// The delay before the next attempt: `Retry-After` (capped) when the server gave one, else
/// `backoff_base * 2^(attempt-1)`, capped.
fn backoff(config: &OpenAiConfig, attempt: u32, retry_after: Option<Duration>) -> Duration {
    if let Some(d) = retry_after {
        return d.min(config.backoff_max);
    }
    let factor = 2u32.saturating_pow(attempt.saturating_sub(1));
    config.backoff_base.saturating_mul(factor).min(config.backoff_max)
}

/// `Retry-After` in seconds (a whole or decimal number). An HTTP date is ignored: the
/// exponential backoff applies instead.
fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let text = headers.get(RETRY_AFTER)?.to_str().ok()?.trim();
    let seconds: f64 = text.parse().ok()?;
    (seconds.is_finite() && seconds >= 0.0).then(|| Duration::from_secs_f64(seconds.min(86_400.0)))
}

enum ReadError {
    Http(reqwest::Error),
    TooLarge,
}

async fn read_bounded(mut response: reqwest::Response, limit: usize) -> Result<Vec<u8>, ReadError> {
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(ReadError::Http)? {
        if body.len() + chunk.len() > limit {
            return Err(ReadError::TooLarge);
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// The start of an error body, as text. A body that cannot be read is reported as such.
async fn read_excerpt(mut response: reqwest::Response) -> String {
    let mut body = Vec::new();
    let mut truncated = false;
    loop {
        match response.chunk().await {
            Ok(Some(chunk)) => {
                let room = ERROR_BODY_EXCERPT.saturating_sub(body.len());
                body.extend_from_slice(&chunk[..chunk.len().min(room)]);
                if chunk.len() > room {
                    truncated = true;
                    break;
                }
            }
            Ok(None) => break,
            Err(e) => return format!("(the body could not be read: {})", describe(&e)),
        }
    }
    let text = String::from_utf8_lossy(&body);
    let text = excerpt(text.trim(), ERROR_BODY_EXCERPT);
    if truncated { format!("{text}…") } else { text }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_key_never_shows() {
        let mut config = OpenAiConfig::new("http://127.0.0.1:1/v1", "m");
        config.api_key = Some(Secret::new("sk-secret-123"));
        let client = OpenAiClient::new(config.clone()).unwrap();
        for shown in [format!("{config:?}"), format!("{client:?}"), format!("{:?}", config.api_key)] {
            assert!(!shown.contains("sk-secret") && shown.contains("redacted"), "{shown}");
        }
    }

    #[test]
    fn endpoint_from_base_url() {
        let endpoint = |base: &str| OpenAiConfig::new(base, "m").endpoint().map(|u| u.to_string());
        assert_eq!(endpoint("http://127.0.0.1:8000/v1").unwrap(), "http://127.0.0.1:8000/v1/chat/completions");
        assert_eq!(endpoint("http://127.0.0.1:8000/v1/").unwrap(), "http://127.0.0.1:8000/v1/chat/completions");
        assert_eq!(endpoint("http://h/v1/chat/completions").unwrap(), "http://h/v1/chat/completions");
        assert!(endpoint("ftp://h/v1").unwrap_err().to_string().contains("\"ftp\""));
        let err = endpoint("not a url with user:pw@").unwrap_err().to_string();
        assert!(err.contains("invalid base URL"), "{err}");
        let err = endpoint("http://user:pw@[bad/v1?key=sk-x").unwrap_err().to_string();
        assert!(!err.contains("pw") && !err.contains("sk-x"), "{err}");
        assert!(OpenAiClient::new(OpenAiConfig::new("http://h/v1", " ")).is_err());
        let mut config = OpenAiConfig::new("http://h/v1", "m");
        config.api_key = Some(Secret::new("bad\nkey"));
        let err = OpenAiClient::new(config).unwrap_err().to_string();
        assert!(err.contains("header") && !err.contains("bad\nkey"), "{err}");
    }

    #[test]
    fn config_from_lookup() {
        let vars = |pairs: &'static [(&'static str, &'static str)]| {
            move |name: &str| pairs.iter().find(|(k, _)| *k == name).map(|(_, v)| v.to_string())
        };
        let c = OpenAiConfig::from_lookup(vars(&[
            ("OPENAI_MODEL", "llama3"),
            ("OPENAI_BASE_URL", "http://127.0.0.1:11434/v1"),
            ("OPENAI_API_KEY", "k"),
        ]))
        .unwrap();
        assert_eq!((c.model.as_str(), c.base_url.as_str()), ("llama3", "http://127.0.0.1:11434/v1"));
        assert_eq!(c.api_key.as_ref().map(Secret::expose), Some("k"));
        let c = OpenAiConfig::from_lookup(vars(&[("OPENAI_MODEL", "m"), ("OPENAI_API_KEY", " ")])).unwrap();
        assert_eq!((c.base_url.as_str(), c.api_key.is_none()), (OpenAiConfig::DEFAULT_BASE_URL, true));
        let err = OpenAiConfig::from_lookup(vars(&[])).unwrap_err();
        assert!(err.to_string().contains("OPENAI_MODEL"), "{err}");
        assert_eq!(c.token_parameter, TokenParameter::Auto, "auto unless set");
        let c = OpenAiConfig::from_lookup(vars(&[("OPENAI_MODEL", "m"), ("OPENAI_TOKEN_PARAMETER", " Max_Tokens ")]))
            .unwrap();
        assert_eq!(c.token_parameter, TokenParameter::MaxTokens);
        let err = OpenAiConfig::from_lookup(vars(&[("OPENAI_MODEL", "m"), ("OPENAI_TOKEN_PARAMETER", "max")]))
            .unwrap_err()
            .to_string();
        assert!(err.contains("OPENAI_TOKEN_PARAMETER") && err.contains("\"max\" is not auto"), "{err}");
    }

    #[test]
    fn an_unsupported_parameter_is_recognised_in_the_error_body() {
        let openai = r#"{"error":{"message":"Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.","type":"invalid_request_error","param":"max_tokens","code":"unsupported_parameter"}}"#;
        assert!(refuses(openai, TokenLimitField::MaxTokens));
        assert!(!refuses(openai, TokenLimitField::MaxCompletionTokens), "it names the other parameter");
        let cut = "{\"error\":{\"message\":\"Unsupported parameter: 'max_completion_tokens' is not supp";
        assert!(refuses(cut, TokenLimitField::MaxCompletionTokens), "a body cut short");
        for other in [r#"{"error":{"message":"Invalid value for 'tool_choice'","param":"tool_choice"}}"#, "bad request"]
        {
            assert!(!refuses(other, TokenLimitField::MaxTokens), "{other}");
        }
    }

    #[test]
    fn backoff_doubles_is_capped_and_honours_retry_after() {
        let mut config = OpenAiConfig::new("http://h", "m");
        config.backoff_base = Duration::from_millis(100);
        config.backoff_max = Duration::from_millis(350);
        let delays: Vec<_> = (1..=4).map(|a| backoff(&config, a, None).as_millis()).collect();
        assert_eq!(delays, [100, 200, 350, 350]);
        assert_eq!(backoff(&config, 1, Some(Duration::from_millis(50))), Duration::from_millis(50));
        assert_eq!(backoff(&config, 1, Some(Duration::from_secs(60))), Duration::from_millis(350));
        assert_eq!(backoff(&config, 40, None), Duration::from_millis(350), "no overflow");
        let mut headers = HeaderMap::new();
        for (value, expected) in [("2", Some(2000)), ("0.25", Some(250)), ("-1", None), ("Wed, 21 Oct 2015", None)] {
            headers.insert(RETRY_AFTER, HeaderValue::from_static(value));
            assert_eq!(retry_after(&headers).map(|d| d.as_millis()), expected, "{value}");
        }
    }

    #[test]
    fn media_acceptance_follows_the_config() {
        let mut config = OpenAiConfig::new("http://h/v1", "m");
        config.audio_types = vec!["audio/wav".into(), "audio/ogg".into()];
        let client = OpenAiClient::new(config).unwrap();
        assert!(client.accepts_image("image/png") && client.accepts_image("IMAGE/JPEG"));
        assert!(!client.accepts_image("image/svg+xml"));
        assert!(client.accepts_audio("audio/wav"));
        assert!(!client.accepts_audio("audio/ogg"), "ogg cannot be sent as input_audio");
        assert!(!client.accepts_audio("audio/mpeg"));
        assert_eq!(client.default_model(), "m");
    }
}
