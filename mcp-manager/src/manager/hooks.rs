//! Observers of the manager's life cycle: [`Hooks`] delivers each [`ManagerEvent`] to every
//! [`ManagerObserver`]. An observer that fails or panics is logged and never breaks the manager.
//!
//! The events, by [name](ManagerEvent::name):
//!
//! | name | payload |
//! |------|---------|
//! | `mcp.server_connected` | [`ServerConnected`] |
//! | `mcp.server_disconnected` | [`ServerDisconnected`] |
//! | `mcp.tool_executed` | [`ToolExecuted`] (arguments [redacted](redact)) |
//!
//! Every event carries the time it happened (`at`) and serialises to JSON with its name under
//! `event` and that time as `timestamp_ms` (milliseconds since the Unix epoch), for hosts that
//! log them.
//!
//! An observer is any `Fn(&ManagerEvent) -> Result<(), String>`, or a plain closure on one typed
//! event, without annotations:
//!
//! ```
//! use mcp_manager::manager::Hooks;
//!
//! let hooks = Hooks::new()
//!     .on_tool_executed(|e| println!("{} on {}: {} ms, ok: {}", e.tool_name, e.server_name, e.duration_ms, e.success))
//!     .on_server_disconnected(|e| eprintln!("{} lost: {}", e.server_name, e.reason))
//!     .on_event(|e| println!("{} at {:?}", e.name(), e.at()));
//! assert_eq!(hooks.len(), 3);
//! ```
//!
//! Observers only watch; to veto a call or rewrite its result, see
//! [`interceptors`](super::interceptors).

use std::fmt;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Serialize, Serializer};
use serde_json::{Map, Value};
use tool_system::{ToolExecutionContext, ToolExecutionResult};

/// `at` as milliseconds since the Unix epoch (0 for a time before it).
pub(crate) fn unix_ms<S: Serializer>(at: &SystemTime, s: S) -> Result<S::Ok, S::Error> {
    let ms = at.duration_since(UNIX_EPOCH).map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX)).unwrap_or(0);
    s.serialize_u64(ms)
}

/// Who a call is made for, as the host's [`ToolExecutionContext`] says: empty strings mean
/// unknown (a call made through [`McpManager::execute_tool`](super::McpManager::execute_tool)
/// has no caller).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Caller {
    /// The user the call acts for.
    pub user_id: String,
    /// The host session.
    pub session_id: String,
    /// The chat stream (conversation, channel) the call comes from.
    pub chat_stream_id: String,
    /// The platform the user is on.
    pub platform: String,
    /// Anything else the host passed along in the context.
    #[serde(skip_serializing_if = "Map::is_empty")]
    pub extra: Map<String, Value>,
}

impl Caller {
    /// Whether nothing is known of the caller.
    pub fn is_unknown(&self) -> bool {
        self.user_id.is_empty()
            && self.session_id.is_empty()
            && self.chat_stream_id.is_empty()
            && self.platform.is_empty()
            && self.extra.is_empty()
    }
}

impl From<&ToolExecutionContext> for Caller {
    fn from(ctx: &ToolExecutionContext) -> Self {
        Caller {
            user_id: ctx.user_id.clone(),
            session_id: ctx.session_id.clone(),
            chat_stream_id: ctx.chat_stream_id.clone(),
            platform: ctx.platform.clone(),
            extra: ctx.extra.clone(),
        }
    }
}

/// A server finished its handshake and discovery.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ServerConnected {
    /// The server's configured name.
    pub server_name: String,
    /// The transport that carries the connection, such as `stdio` or `streamable_http`.
    pub transport: String,
    /// The negotiated protocol revision.
    pub protocol_version: String,
    /// How many tools the server offers.
    pub tool_count: usize,
    /// How many prompts.
    pub prompt_count: usize,
    /// How many resources.
    pub resource_count: usize,
    /// How many resource templates.
    pub resource_template_count: usize,
    /// When it happened.
    #[serde(rename = "timestamp_ms", serialize_with = "unix_ms")]
    pub at: SystemTime,
}

/// A server's connection ended (closed on purpose, lost, or failed).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ServerDisconnected {
    /// The server's configured name.
    pub server_name: String,
    /// The transport that carried the connection.
    pub transport: String,
    /// Why the connection ended.
    pub reason: String,
    /// Whether the connection had a protocol session (legacy streamable HTTP).
    pub had_session: bool,
    /// The protocol revision it spoke, if the handshake got that far.
    pub protocol_version: Option<String>,
    /// The session id, if it had one.
    pub session_id: Option<String>,
    /// When it happened.
    #[serde(rename = "timestamp_ms", serialize_with = "unix_ms")]
    pub at: SystemTime,
}

/// A tool call finished (successfully or not).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolExecuted {
    /// The server's configured name.
    pub server_name: String,
    /// The tool's name on that server.
    pub tool_name: String,
    /// The call's arguments, with secret-looking values [redacted](redact).
    pub arguments: Value,
    /// Whether the call succeeded.
    pub success: bool,
    /// How long the call took, in milliseconds.
    pub duration_ms: u64,
    /// The length in bytes of the result's history text.
    pub content_length: usize,
    /// Why the call failed, if it did.
    pub error_message: Option<String>,
    /// The result's metadata (server, tool, protocol version, `_meta`), redacted like the
    /// arguments.
    pub metadata: Map<String, Value>,
    /// Who the call was made for (empty parts when the host did not say).
    pub caller: Caller,
    /// When the call finished.
    #[serde(rename = "timestamp_ms", serialize_with = "unix_ms")]
    pub at: SystemTime,
}

impl ToolExecuted {
    /// The event for a call of `tool_name` on `server_name` with `arguments` (redacted here)
    /// that gave `result` after `duration`.
    pub fn new(
        server_name: &str,
        tool_name: &str,
        arguments: &Value,
        result: &ToolExecutionResult,
        duration: Duration,
    ) -> Self {
        let metadata = match redact(&Value::Object(result.metadata.clone().into_map())) {
            Value::Object(map) => map,
            _ => Map::new(),
        };
        ToolExecuted {
            server_name: server_name.to_owned(),
            tool_name: tool_name.to_owned(),
            arguments: redact(arguments),
            success: result.success,
            duration_ms: u64::try_from(duration.as_millis()).unwrap_or(u64::MAX),
            content_length: result.history_text().len(),
            error_message: result.error_message.clone(),
            metadata,
            caller: Caller::default(),
            at: SystemTime::now(),
        }
    }

    /// The same event, made for `caller`.
    pub fn with_caller(mut self, caller: Caller) -> Self {
        self.caller = caller;
        self
    }
}

/// One life-cycle event of the manager.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "event")]
// Made once per call or connection and handed to observers by reference: boxing the larger
// variant would cost an allocation per event and change how hosts match on it.
#[allow(clippy::large_enum_variant)]
pub enum ManagerEvent {
    /// `mcp.server_connected`.
    #[serde(rename = "mcp.server_connected")]
    ServerConnected(ServerConnected),
    /// `mcp.server_disconnected`.
    #[serde(rename = "mcp.server_disconnected")]
    ServerDisconnected(ServerDisconnected),
    /// `mcp.tool_executed`.
    #[serde(rename = "mcp.tool_executed")]
    ToolExecuted(ToolExecuted),
}

impl ManagerEvent {
    /// The event's name: `mcp.server_connected`, `mcp.server_disconnected` or
    /// `mcp.tool_executed`.
    pub fn name(&self) -> &'static str {
        match self {
            ManagerEvent::ServerConnected(_) => "mcp.server_connected",
            ManagerEvent::ServerDisconnected(_) => "mcp.server_disconnected",
            ManagerEvent::ToolExecuted(_) => "mcp.tool_executed",
        }
    }

    /// The name of the server the event is about.
    pub fn server_name(&self) -> &str {
        match self {
            ManagerEvent::ServerConnected(e) => &e.server_name,
            ManagerEvent::ServerDisconnected(e) => &e.server_name,
            ManagerEvent::ToolExecuted(e) => &e.server_name,
        }
    }

    /// When it happened.
    pub fn at(&self) -> SystemTime {
        match self {
            ManagerEvent::ServerConnected(e) => e.at,
            ManagerEvent::ServerDisconnected(e) => e.at,
            ManagerEvent::ToolExecuted(e) => e.at,
        }
    }
}

impl From<ServerConnected> for ManagerEvent {
    fn from(event: ServerConnected) -> Self {
        ManagerEvent::ServerConnected(event)
    }
}

impl From<ServerDisconnected> for ManagerEvent {
    fn from(event: ServerDisconnected) -> Self {
        ManagerEvent::ServerDisconnected(event)
    }
}

impl From<ToolExecuted> for ManagerEvent {
    fn from(event: ToolExecuted) -> Self {
        ManagerEvent::ToolExecuted(event)
    }
}

/// Something that watches the manager's life cycle.
///
/// `on_event` runs on the manager's task, synchronously: keep it short (hand slow work to a
/// channel). An `Err` or a panic is logged and ignored. Any
/// `Fn(&ManagerEvent) -> Result<(), String>` closure that is `Send + Sync + 'static` is an
/// observer.
pub trait ManagerObserver: Send + Sync + 'static {
    /// Called once per event.
    fn on_event(&self, event: &ManagerEvent) -> Result<(), String>;
}

impl<F> ManagerObserver for F
where
    F: Fn(&ManagerEvent) -> Result<(), String> + Send + Sync + 'static,
{
    fn on_event(&self, event: &ManagerEvent) -> Result<(), String> {
        self(event)
    }
}

/// The observers of one manager, called in the order they were added.
#[derive(Clone, Default)]
pub struct Hooks {
    observers: Vec<Arc<dyn ManagerObserver>>,
}

impl fmt::Debug for Hooks {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Hooks").field("observers", &self.observers.len()).finish()
    }
}

impl Hooks {
    /// No observers.
    pub fn new() -> Self {
        Hooks::default()
    }

    /// Adds an observer.
    pub fn add(&mut self, observer: impl ManagerObserver) -> &mut Self {
        self.observers.push(Arc::new(observer));
        self
    }

    /// Adds a shared observer.
    pub fn add_shared(&mut self, observer: Arc<dyn ManagerObserver>) -> &mut Self {
        self.observers.push(observer);
        self
    }

    /// Builder form of [`Hooks::add`].
    pub fn with(mut self, observer: impl ManagerObserver) -> Self {
        self.add(observer);
        self
    }

    /// Adds `f` as an observer of every event (a plain closure: it cannot fail, a panic is
    /// caught).
    pub fn on_event(self, f: impl Fn(&ManagerEvent) + Send + Sync + 'static) -> Self {
        self.with(Typed(move |event: &ManagerEvent| f(event)))
    }

    /// Adds `f` as an observer of `mcp.server_connected` only.
    pub fn on_server_connected(self, f: impl Fn(&ServerConnected) + Send + Sync + 'static) -> Self {
        self.with(Typed(move |event: &ManagerEvent| {
            if let ManagerEvent::ServerConnected(e) = event {
                f(e);
            }
        }))
    }

    /// Adds `f` as an observer of `mcp.server_disconnected` only.
    pub fn on_server_disconnected(self, f: impl Fn(&ServerDisconnected) + Send + Sync + 'static) -> Self {
        self.with(Typed(move |event: &ManagerEvent| {
            if let ManagerEvent::ServerDisconnected(e) = event {
                f(e);
            }
        }))
    }

    /// Adds `f` as an observer of `mcp.tool_executed` only (after the
    /// [after-call interceptors](super::interceptors): it sees the result the host gets).
    pub fn on_tool_executed(self, f: impl Fn(&ToolExecuted) + Send + Sync + 'static) -> Self {
        self.with(Typed(move |event: &ManagerEvent| {
            if let ManagerEvent::ToolExecuted(e) = event {
                f(e);
            }
        }))
    }

    /// Whether there is no observer (then [`emit`](Hooks::emit) does nothing, and callers can
    /// skip building events: see [`emit_with`](Hooks::emit_with)).
    pub fn is_empty(&self) -> bool {
        self.observers.is_empty()
    }

    /// How many observers there are.
    pub fn len(&self) -> usize {
        self.observers.len()
    }

    /// Delivers `event` to every observer. An observer's `Err` or panic is logged (with the
    /// event's name) and does not stop the others; nothing reaches the caller.
    pub fn emit(&self, event: ManagerEvent) {
        if self.observers.is_empty() {
            return;
        }
        for (index, observer) in self.observers.iter().enumerate() {
            match catch_unwind(AssertUnwindSafe(|| observer.on_event(&event))) {
                Ok(Ok(())) => {}
                Ok(Err(error)) => {
                    tracing::warn!(event = event.name(), observer = index, %error, "a manager observer failed");
                }
                Err(panic) => {
                    let message = panic_message(panic.as_ref());
                    tracing::warn!(event = event.name(), observer = index, panic = %message, "a manager observer panicked");
                }
            }
        }
    }

    /// Like [`emit`](Hooks::emit), but builds the event only when there is an observer: use it
    /// where building the event costs (cloning or redacting arguments).
    pub fn emit_with(&self, make: impl FnOnce() -> ManagerEvent) {
        if !self.observers.is_empty() {
            self.emit(make());
        }
    }
}

/// An observer made of a closure that cannot fail.
struct Typed<F>(F);

impl<F: Fn(&ManagerEvent) + Send + Sync + 'static> ManagerObserver for Typed<F> {
    fn on_event(&self, event: &ManagerEvent) -> Result<(), String> {
        (self.0)(event);
        Ok(())
    }
}

/// The message of a caught panic.
pub(crate) fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    if let Some(text) = panic.downcast_ref::<&str>() {
        (*text).to_owned()
    } else if let Some(text) = panic.downcast_ref::<String>() {
        text.clone()
    } else {
        "a non-text panic payload".to_owned()
    }
}

/// What a redacted value becomes.
pub const REDACTED: &str = "<redacted>";

/// How deep [`redact`] goes; anything deeper becomes [`REDACTED`] too.
const MAX_REDACT_DEPTH: usize = 64;

/// A copy of `value` safe to log: the value of every object member whose key
/// [looks secret](is_secret_key) becomes `"<redacted>"`, as does any string that is an
/// authorization header value (`Bearer <token>` or `Basic <credentials>`), at any depth of
/// objects and arrays.
/// Levels deeper than 64 are redacted whole.
pub fn redact(value: &Value) -> Value {
    redact_at(value, 0)
}

fn redact_at(value: &Value, depth: usize) -> Value {
    if depth >= MAX_REDACT_DEPTH {
        return Value::String(REDACTED.into());
    }
    match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(key, value)| {
                    let value =
                        if is_secret_key(key) { Value::String(REDACTED.into()) } else { redact_at(value, depth + 1) };
                    (key.clone(), value)
                })
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(|item| redact_at(item, depth + 1)).collect()),
        Value::String(text) if is_credential_value(text) => Value::String(REDACTED.into()),
        other => other.clone(),
    }
}

fn is_credential_value(text: &str) -> bool {
    let Some((scheme, credential)) = text.trim().split_once(' ') else {
        return false;
    };
    (scheme.eq_ignore_ascii_case("bearer") || scheme.eq_ignore_ascii_case("basic"))
        && !credential.is_empty()
        && !credential.contains(char::is_whitespace)
}

/// Words that are secret wherever they end a word of a key (`password`, `userPassword`,
/// `accesstoken`, `client_secret`).
const SECRET_SUFFIXES: &[&str] = &[
    "password",
    "passwd",
    "passphrase",
    "secret",
    "secrets",
    "token",
    "credential",
    "credentials",
    "cookie",
    "cookies",
    "apikey",
    "privatekey",
    "sessionid",
];

/// Words that are secret only as whole words of a key (`auth` but not `author`, `key` but not
/// `keyword`).
const SECRET_WORDS: &[&str] =
    &["auth", "authorization", "authentication", "session", "key", "pwd", "pass", "bearer", "jwt", "otp", "signature"];

/// Whether an object key names a secret. The key is split into words at `_`, `-`, `.`,
/// spaces and lower-to-upper case changes (`apiKey` is `api` + `key`); it is secret when a word
/// is one of `auth`, `authorization`, `authentication`, `session`, `key`, `pwd`, `pass`,
/// `bearer`, `jwt`, `otp`, `signature`, or ends with `password`, `passwd`, `passphrase`,
/// `secret`, `token`, `credential`, `cookie`, `apikey`, `privatekey` or `sessionid` (plurals
/// included, except `tokens`, which LLM tools use for counts such as `max_tokens`).
///
/// This is stricter about whole words than the config's
/// [`looks_secret`](crate::config::looks_secret), which matches substrings of header and
/// variable names: tool arguments such as `author`, `keyword` or `max_tokens` stay readable,
/// while every name that rule is meant for (`password`, `api_key`, `Authorization`,
/// `private_key`, `session_id`, `X-Auth-Token`, ...) is still caught.
pub fn is_secret_key(key: &str) -> bool {
    words(key).any(|word| {
        SECRET_WORDS.contains(&word.as_str()) || SECRET_SUFFIXES.iter().any(|suffix| word.ends_with(suffix))
    })
}

/// The lowercase words of a key.
fn words(key: &str) -> impl Iterator<Item = String> + '_ {
    let mut words = Vec::new();
    let mut current = String::new();
    let mut previous_lower = false;
    for c in key.chars() {
        if !c.is_alphanumeric() {
            if !current.is_empty() {
                words.push(std::mem::take(&mut current));
            }
            previous_lower = false;
            continue;
        }
        if c.is_uppercase() && previous_lower && !current.is_empty() {
            words.push(std::mem::take(&mut current));
        }
        previous_lower = c.is_lowercase() || c.is_ascii_digit();
        current.extend(c.to_lowercase());
    }
    if !current.is_empty() {
        words.push(current);
    }
    words.into_iter()
}

#[cfg(test)]
mod tests;
