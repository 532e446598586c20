//! Elicitation: a server asks the user for input, through a form or a URL.
//!
//! The host implements [`AskUser`] (its UI); [`HostElicitation`] wraps it into the manager's
//! `ElicitationHandler` and does the protocol's part:
//!
//! - form mode: the form is pre-filled with the schema's defaults (SEP-1034); fields the answer
//!   leaves out get their default too, as a pre-filled form would have sent them; the answer is
//!   validated against the requested schema (formats included) before it is sent, a key that is
//!   not a field of the form is refused, and an invalid answer is shown again with its problems
//!   (at most [`ElicitationOptions::max_attempts`] times, then the request is cancelled). The
//!   requested schema is compiled as tool schemas are ([`SchemaCheck::compile_with`]): screened
//!   first (one with a `$ref` cycle, or too deep or too large, fails the request with an
//!   invalid-params error naming the server and the problem, and the user is not asked), a
//!   `$schema` naming an unknown dialect checked as the MCP default (2020-12), nothing fetched,
//!   and `pattern`s under the same backtracking budget;
//! - URL mode: the user sees the full URL and its domain and decides; nothing here ever opens
//!   it. Only `http` and `https` URLs are shown. In the legacy era the server later sends
//!   `notifications/elicitation/complete`, which [`HostElicitation::on_complete`] matches to an
//!   accepted URL (unknown ids are ignored, as the spec requires).
//!
//! For unattended hosts, [`ElicitationPolicy`] declines everything or accepts the defaults;
//! [`ScriptedElicitation`] answers from a script (tests).

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use futures::future::BoxFuture;
use mcp_manager::callbacks::ElicitationHandler;
use mcp_manager::config::ElicitationSettings;
use mcp_manager::manager::convert::{SchemaCheck, SchemaError, SchemaOptions};
use mcp_protocol::types::elicitation::RequestedSchema;
use mcp_protocol::types::elicitation::{ElicitAction, ElicitFormParams, ElicitParams, ElicitResult, ElicitUrlParams};
use mcp_protocol::types::meta::JsonObject;
use mcp_protocol::{ErrorCode, ErrorObject};
use serde_json::Value;

/// A form to show the user.
#[derive(Debug, Clone, PartialEq)]
pub struct FormRequest {
    /// The server that asks.
    pub server: String,
    /// What the server says to the user.
    pub message: String,
    /// What to collect: a flat object of primitive members.
    pub schema: RequestedSchema,
    /// The values to pre-fill: the schema's defaults at first, the user's previous answer when
    /// it is asked again.
    pub prefilled: JsonObject,
    /// Why the previous answer was refused (empty the first time).
    pub problems: Vec<String>,
}

/// The user's answer to a form.
#[derive(Debug, Clone, PartialEq)]
pub enum FormAnswer {
    /// Submitted with these values.
    Accept(JsonObject),
    /// Refused.
    Decline,
    /// Dismissed without choosing.
    Cancel,
}

/// A URL the server wants the user to open (2025-11-25+).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UrlRequest {
    /// The server that asks.
    pub server: String,
    /// Why the user should open it.
    pub message: String,
    /// The full URL: show all of it.
    pub url: String,
    /// Its host, to show prominently.
    pub domain: String,
    /// The legacy era's id of this elicitation (its completion notification names it).
    pub elicitation_id: Option<String>,
}

/// The user's answer to a URL request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UrlAnswer {
    /// The user agreed to open the URL (the host opens it, never this crate).
    Accept,
    /// Refused.
    Decline,
    /// Dismissed without choosing.
    Cancel,
}

/// The host's UI for elicitation.
pub trait AskUser: Send + Sync + 'static {
    /// Show a form and wait for the answer.
    fn ask_form(&self, request: FormRequest) -> BoxFuture<'static, FormAnswer>;

    /// Show a URL and ask whether to open it (default: decline).
    fn ask_url(&self, request: UrlRequest) -> BoxFuture<'static, UrlAnswer> {
        let _ = request;
        Box::pin(async { UrlAnswer::Decline })
    }

    /// Whether this UI handles URL mode (declares `elicitation.url`; default false).
    fn supports_url(&self) -> bool {
        false
    }

    /// The server says an accepted URL elicitation finished (legacy era).
    fn url_completed(&self, server: &str, elicitation_id: &str) {
        let _ = (server, elicitation_id);
    }
}

/// How [`HostElicitation`] treats answers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ElicitationOptions {
    /// Fill fields the answer leaves out with their schema default (default true).
    pub apply_defaults: bool,
    /// How many times a form is shown before an invalid answer cancels it (default 3).
    pub max_attempts: u32,
    /// Offer URL mode when the UI supports it (default true; false never offers it).
    pub allow_url: bool,
}

impl Default for ElicitationOptions {
    fn default() -> Self {
        ElicitationOptions { apply_defaults: true, max_attempts: 3, allow_url: true }
    }
}

/// The `[mcp.client.elicitation]` settings of a config file as options: `url_mode` becomes
/// [`ElicitationOptions::allow_url`]; the rest keep their defaults. `enabled` is not an option
/// of the handler but whether there is one at all: [`HostBridgeBuilder::client_config`] applies
/// it.
///
/// [`HostBridgeBuilder::client_config`]: crate::HostBridgeBuilder::client_config
impl From<&ElicitationSettings> for ElicitationOptions {
    fn from(settings: &ElicitationSettings) -> Self {
        ElicitationOptions { allow_url: settings.url_mode, ..ElicitationOptions::default() }
    }
}

/// How many accepted URL elicitations wait for their completion notification at most; the
/// oldest is forgotten first.
const MAX_PENDING_URLS: usize = 64;

/// Most validation problems shown to the user at once.
const MAX_PROBLEMS: usize = 10;

/// The manager's `ElicitationHandler` around the host's [`AskUser`]. Cheap to clone.
#[derive(Clone)]
pub struct HostElicitation {
    inner: Arc<Inner>,
}

struct Inner {
    ask: Arc<dyn AskUser>,
    options: ElicitationOptions,
    /// Accepted URL elicitations (server, id) waiting for their completion notification.
    pending_urls: Mutex<VecDeque<(String, String)>>,
}

impl std::fmt::Debug for HostElicitation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HostElicitation")
            .field("options", &self.inner.options)
            .field("supports_url", &HostElicitation::supports_url(self))
            .finish()
    }
}

fn invalid(message: impl Into<String>) -> ErrorObject {
    ErrorObject::new(ErrorCode::INVALID_PARAMS, message)
}

impl HostElicitation {
    /// Elicitation through `ask` with the default options.
    pub fn new(ask: Arc<dyn AskUser>) -> Self {
        HostElicitation::with_options(ask, ElicitationOptions::default())
    }

    /// Elicitation through `ask` with `options`.
    pub fn with_options(ask: Arc<dyn AskUser>, options: ElicitationOptions) -> Self {
        HostElicitation { inner: Arc::new(Inner { ask, options, pending_urls: Mutex::new(VecDeque::new()) }) }
    }

    /// Answer one `elicitation/create` of `server`. Cancel-safe.
    pub async fn answer(&self, server: &str, params: ElicitParams) -> Result<ElicitResult, ErrorObject> {
        match params {
            ElicitParams::Form(form) => self.form(server, form).await,
            ElicitParams::Url(url) => self.url(server, url).await,
            ElicitParams::Unknown(v) => {
                let mode = v.get("mode").and_then(Value::as_str).unwrap_or("unknown");
                tracing::debug!(server, mode, "declining an elicitation of an unknown mode");
                Ok(ElicitResult::decline())
            }
        }
    }

    async fn form(&self, server: &str, form: ElicitFormParams) -> Result<ElicitResult, ErrorObject> {
        let schema = form.requested_schema;
        if schema.schema_type != "object" {
            return Err(invalid(format!("requestedSchema.type is {:?}, not \"object\"", schema.schema_type)));
        }
        let schema_json = serde_json::to_value(&schema)
            .map_err(|e| ErrorObject::new(ErrorCode::INTERNAL_ERROR, format!("cannot encode the schema: {e}")))?;
        let Value::Object(schema_members) = schema_json else {
            return Err(ErrorObject::new(ErrorCode::INTERNAL_ERROR, "the schema did not encode as an object"));
        };
        // The schema is peer input, compiled as tool schemas are: screened first (a `$ref`
        // cycle, hostile depth or size fails the request without asking the user), an unknown
        // `$schema` dialect checked as the MCP default, nothing fetched, `pattern`s under the
        // same budget; `format`s are checked, as a form's fields are typed by them.
        let validator =
            SchemaCheck::compile_with(&schema_members, SchemaOptions { check_formats: true }).map_err(|e| match e {
                SchemaError::Refused(reason) => {
                    let message =
                        format!("server `{server}`: the requestedSchema of its elicitation is refused: {reason}");
                    tracing::warn!(server, "{message}");
                    invalid(message)
                }
                SchemaError::Invalid(problem) => {
                    invalid(format!("requestedSchema is not a valid JSON Schema: {problem}"))
                }
            })?;
        let defaults = schema.defaults();
        let mut request = FormRequest {
            server: server.to_owned(),
            message: form.message,
            schema,
            prefilled: defaults.clone(),
            problems: Vec::new(),
        };
        let options = &self.inner.options;
        for attempt in 1..=options.max_attempts.max(1) {
            let mut content = match self.inner.ask.ask_form(request.clone()).await {
                FormAnswer::Accept(content) => content,
                FormAnswer::Decline => return Ok(ElicitResult::decline()),
                FormAnswer::Cancel => return Ok(ElicitResult::cancel()),
            };
            if options.apply_defaults {
                for (name, value) in &defaults {
                    content.entry(name.clone()).or_insert_with(|| value.clone());
                }
            }
            // A key the form does not have is never sent: the server asked for these fields only.
            let mut problems: Vec<String> = content
                .keys()
                .filter(|key| request.schema.properties.get(key).is_none())
                .take(MAX_PROBLEMS)
                .map(|key| format!("/{}: `{key}` is not a field of this form", pointer_token(key)))
                .collect();
            let instance = Value::Object(content);
            problems.extend(validator.problems(&instance, MAX_PROBLEMS - problems.len()));
            let Value::Object(content) = instance else { unreachable!("built as an object above") };
            if problems.is_empty() {
                return Ok(ElicitResult::accept(content));
            }
            tracing::debug!(server, attempt, ?problems, "the elicitation answer does not match the schema");
            request.prefilled = content;
            request.problems = problems;
        }
        tracing::warn!(
            server,
            problems = ?request.problems,
            "the elicitation answer never matched the requested schema; cancelling"
        );
        Ok(ElicitResult::cancel())
    }

    /// Whether URL mode is offered: allowed by the options and supported by the UI.
    pub fn supports_url(&self) -> bool {
        self.inner.options.allow_url && self.inner.ask.supports_url()
    }

    async fn url(&self, server: &str, params: ElicitUrlParams) -> Result<ElicitResult, ErrorObject> {
        if !HostElicitation::supports_url(self) {
            return Err(invalid("this host does not support URL-mode elicitation"));
        }
        let parsed = reqwest::Url::parse(&params.url).map_err(|e| invalid(format!("invalid elicitation URL: {e}")))?;
        if !matches!(parsed.scheme(), "http" | "https") {
            return Err(invalid(format!("refusing an elicitation URL with the scheme {:?}", parsed.scheme())));
        }
        let domain = parsed.host_str().unwrap_or_default().to_owned();
        let request = UrlRequest {
            server: server.to_owned(),
            message: params.message,
            url: params.url,
            domain,
            elicitation_id: params.elicitation_id.clone(),
        };
        Ok(match self.inner.ask.ask_url(request).await {
            UrlAnswer::Accept => {
                if let Some(id) = params.elicitation_id {
                    let mut pending = self.inner.pending_urls.lock().unwrap_or_else(|p| p.into_inner());
                    if pending.len() == MAX_PENDING_URLS {
                        pending.pop_front();
                    }
                    pending.push_back((server.to_owned(), id));
                }
                ElicitResult { action: ElicitAction::Accept, ..Default::default() }
            }
            UrlAnswer::Decline => ElicitResult::decline(),
            UrlAnswer::Cancel => ElicitResult::cancel(),
        })
    }

    /// `notifications/elicitation/complete` from `server`: tell the UI when it names a URL
    /// elicitation the user accepted. Returns whether it did; unknown or already completed ids
    /// are ignored.
    pub fn on_complete(&self, server: &str, elicitation_id: &str) -> bool {
        let found = {
            let mut pending = self.inner.pending_urls.lock().unwrap_or_else(|p| p.into_inner());
            let at = pending.iter().position(|(s, id)| s == server && id == elicitation_id);
            at.and_then(|i| pending.remove(i)).is_some()
        };
        if found {
            self.inner.ask.url_completed(server, elicitation_id);
        } else {
            tracing::debug!(server, elicitation_id, "ignoring the completion of an unknown URL elicitation");
        }
        found
    }
}

/// `key` as one JSON pointer token (`~` and `/` escaped).
fn pointer_token(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

impl ElicitationHandler for HostElicitation {
    fn elicit(&self, server: &str, params: ElicitParams) -> BoxFuture<'static, Result<ElicitResult, ErrorObject>> {
        let this = self.clone();
        let server = server.to_owned();
        Box::pin(async move { this.answer(&server, params).await })
    }

    fn supports_url(&self) -> bool {
        HostElicitation::supports_url(self)
    }
}

/// Answers for hosts with nobody to ask.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ElicitationPolicy {
    /// Decline every request.
    DeclineAll,
    /// Accept a form with its defaults when every required field has one; decline otherwise.
    /// URLs are always declined.
    AcceptDefaults,
}

impl AskUser for ElicitationPolicy {
    fn ask_form(&self, request: FormRequest) -> BoxFuture<'static, FormAnswer> {
        let answer = match self {
            ElicitationPolicy::AcceptDefaults
                if request.problems.is_empty()
                    && request.schema.required.iter().flatten().all(|r| request.prefilled.contains_key(r)) =>
            {
                FormAnswer::Accept(request.prefilled)
            }
            _ => FormAnswer::Decline,
        };
        Box::pin(async move { answer })
    }
}

/// What a [`ScriptedElicitation`] was asked.
#[derive(Debug, Clone, PartialEq)]
pub enum Asked {
    /// A form.
    Form(FormRequest),
    /// A URL.
    Url(UrlRequest),
}

/// Answers from a script, in order, and records what it was asked (tests, demos). When the
/// script is used up it declines. Cheap to clone; clones share the script and the record.
#[derive(Clone, Default)]
pub struct ScriptedElicitation {
    state: Arc<Mutex<Script>>,
    url: bool,
}

#[derive(Default)]
struct Script {
    forms: VecDeque<FormAnswer>,
    urls: VecDeque<UrlAnswer>,
    asked: Vec<Asked>,
    completed: Vec<(String, String)>,
}

impl std::fmt::Debug for ScriptedElicitation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let s = self.lock();
        f.debug_struct("ScriptedElicitation")
            .field("forms", &s.forms.len())
            .field("urls", &s.urls.len())
            .field("asked", &s.asked.len())
            .finish()
    }
}

impl ScriptedElicitation {
    /// An empty script, without URL support.
    pub fn new() -> Self {
        ScriptedElicitation::default()
    }

    /// An empty script that supports URL mode.
    pub fn with_url() -> Self {
        ScriptedElicitation { url: true, ..Default::default() }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Script> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Add the answer to a coming form.
    pub fn answer_form(&self, answer: FormAnswer) -> &Self {
        self.lock().forms.push_back(answer);
        self
    }

    /// Add the answer to a coming URL request.
    pub fn answer_url(&self, answer: UrlAnswer) -> &Self {
        self.lock().urls.push_back(answer);
        self
    }

    /// Everything asked so far, in order.
    pub fn asked(&self) -> Vec<Asked> {
        self.lock().asked.clone()
    }

    /// The URL elicitations reported complete, as (server, elicitation id).
    pub fn completed(&self) -> Vec<(String, String)> {
        self.lock().completed.clone()
    }
}

impl AskUser for ScriptedElicitation {
    fn ask_form(&self, request: FormRequest) -> BoxFuture<'static, FormAnswer> {
        let mut s = self.lock();
        s.asked.push(Asked::Form(request));
        let answer = s.forms.pop_front().unwrap_or(FormAnswer::Decline);
        Box::pin(async move { answer })
    }

    fn ask_url(&self, request: UrlRequest) -> BoxFuture<'static, UrlAnswer> {
        let mut s = self.lock();
        s.asked.push(Asked::Url(request));
        let answer = s.urls.pop_front().unwrap_or(UrlAnswer::Decline);
        Box::pin(async move { answer })
    }

    fn supports_url(&self) -> bool {
        self.url
    }

    fn url_completed(&self, server: &str, elicitation_id: &str) {
        self.lock().completed.push((server.to_owned(), elicitation_id.to_owned()));
    }
}

#[cfg(test)]
#[path = "elicitation_tests.rs"]
mod tests;
