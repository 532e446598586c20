//! Server notifications delivered to the host: log messages (`notifications/message`) and
//! progress go to `tracing` (target [`TRACING_TARGET`]) with the server's name, at a mapped
//! level, and every notification to an optional host callback. URL-elicitation completions are
//! handed to [`HostElicitation`].
//!
//! [`LogLevels`] holds the level to request from each server; the host puts
//! [`LogLevels::level_for`] into the connection options (`ConnectionOptions::log_level`).

use std::collections::BTreeMap;
use std::sync::Arc;

use mcp_manager::callbacks::NotificationSink;
use mcp_protocol::messages::ServerNotification;
use mcp_protocol::types::logging::{LoggingLevel, LoggingMessageParams};
use mcp_protocol::types::progress::ProgressParams;
use serde_json::Value;
use tracing::Level;

use crate::elicitation::HostElicitation;
use crate::llm::excerpt;

/// The `tracing` target of server logs and progress.
pub const TRACING_TARGET: &str = "mcp_server";

/// The most characters of a log message's data written to `tracing`.
const MAX_LOG_DATA: usize = 8 * 1024;

/// A host callback for every server notification: the server's name and the notification.
pub type NotificationCallback = Arc<dyn Fn(&str, &ServerNotification) + Send + Sync>;

/// The log level to request from each server.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct LogLevels {
    /// For servers without their own entry (`None`: request nothing; the server decides).
    pub default: Option<LoggingLevel>,
    /// Per server name.
    pub per_server: BTreeMap<String, LoggingLevel>,
}

impl LogLevels {
    /// `level` for every server.
    pub fn all(level: LoggingLevel) -> Self {
        LogLevels { default: Some(level), per_server: BTreeMap::new() }
    }

    /// The same, with `server` at `level`.
    pub fn with_server(mut self, server: impl Into<String>, level: LoggingLevel) -> Self {
        self.per_server.insert(server.into(), level);
        self
    }

    /// The level to request from `server`.
    pub fn level_for(&self, server: &str) -> Option<LoggingLevel> {
        self.per_server.get(server).or(self.default.as_ref()).cloned()
    }
}

/// The `tracing` level of an MCP log level: debug to DEBUG, info and notice to INFO, warning to
/// WARN, error and above to ERROR; an unknown level to INFO.
pub fn tracing_level(level: &LoggingLevel) -> Level {
    match level {
        LoggingLevel::Debug => Level::DEBUG,
        LoggingLevel::Info | LoggingLevel::Notice | LoggingLevel::Unknown(_) => Level::INFO,
        LoggingLevel::Warning => Level::WARN,
        LoggingLevel::Error | LoggingLevel::Critical | LoggingLevel::Alert | LoggingLevel::Emergency => Level::ERROR,
    }
}

/// The manager's `NotificationSink` of the host: `tracing`, the host's callback, and URL
/// elicitation completions.
#[derive(Clone, Default)]
pub struct HostNotificationSink {
    callback: Option<NotificationCallback>,
    elicitation: Option<HostElicitation>,
}

impl std::fmt::Debug for HostNotificationSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HostNotificationSink")
            .field("callback", &self.callback.is_some())
            .field("elicitation", &self.elicitation.is_some())
            .finish()
    }
}

impl HostNotificationSink {
    /// A sink that writes to `tracing` only.
    pub fn new() -> Self {
        HostNotificationSink::default()
    }

    /// Also call `callback` for every notification.
    pub fn with_callback(mut self, callback: NotificationCallback) -> Self {
        self.callback = Some(callback);
        self
    }

    /// Hand `notifications/elicitation/complete` to `elicitation`.
    pub fn with_elicitation(mut self, elicitation: HostElicitation) -> Self {
        self.elicitation = Some(elicitation);
        self
    }
}

/// A log message's data as text: a string as is, anything else as JSON; bounded.
fn data_text(data: &Value) -> String {
    match data {
        Value::String(s) => excerpt(s, MAX_LOG_DATA),
        other => excerpt(&other.to_string(), MAX_LOG_DATA),
    }
}

fn log(server: &str, message: &LoggingMessageParams) {
    let data = data_text(&message.data);
    let logger = message.logger.as_deref().unwrap_or_default();
    let level = message.level.as_str();
    macro_rules! at {
        ($macro:ident) => {
            tracing::$macro!(target: TRACING_TARGET, server, level, logger, data = %data, "server log")
        };
    }
    match tracing_level(&message.level) {
        Level::ERROR => at!(error),
        Level::WARN => at!(warn),
        Level::INFO => at!(info),
        Level::DEBUG => at!(debug),
        _ => at!(trace),
    }
}

fn progress(server: &str, p: &ProgressParams) {
    tracing::debug!(
        target: TRACING_TARGET,
        server,
        token = %p.progress_token,
        progress = p.progress_f64(),
        total = p.total_f64(),
        message = p.message.as_deref().map(|m| excerpt(m, MAX_LOG_DATA)),
        "server progress"
    );
}

impl NotificationSink for HostNotificationSink {
    fn on_notification(&self, server: &str, notification: &ServerNotification) {
        match notification {
            ServerNotification::LoggingMessage(Some(message)) => log(server, message),
            ServerNotification::Progress(Some(p)) => progress(server, p),
            ServerNotification::ElicitationComplete(Some(done)) => match &self.elicitation {
                Some(elicitation) => {
                    elicitation.on_complete(server, &done.elicitation_id);
                }
                None => tracing::debug!(server, "an elicitation completion without an elicitation handler"),
            },
            other => tracing::trace!(target: TRACING_TARGET, server, method = other.method(), "server notification"),
        }
        if let Some(callback) = &self.callback {
            callback(server, notification);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use serde_json::json;

    use super::*;
    use crate::elicitation::{AskUser, ElicitationPolicy};

    #[test]
    fn levels_map_to_tracing() {
        let cases = [
            ("debug", Level::DEBUG),
            ("info", Level::INFO),
            ("notice", Level::INFO),
            ("warning", Level::WARN),
            ("error", Level::ERROR),
            ("critical", Level::ERROR),
            ("alert", Level::ERROR),
            ("emergency", Level::ERROR),
            ("trace", Level::INFO),
        ];
        for (name, expected) in cases {
            let level: LoggingLevel = serde_json::from_value(json!(name)).unwrap();
            assert_eq!(tracing_level(&level), expected, "{name}");
        }
    }

    #[test]
    fn log_levels_per_server() {
        let levels = LogLevels::all(LoggingLevel::Warning).with_server("chatty", LoggingLevel::Debug);
        assert_eq!(levels.level_for("chatty"), Some(LoggingLevel::Debug));
        assert_eq!(levels.level_for("other"), Some(LoggingLevel::Warning));
        assert_eq!(LogLevels::default().level_for("any"), None);
    }

    #[test]
    fn data_is_bounded() {
        assert_eq!(data_text(&json!("plain")), "plain");
        assert_eq!(data_text(&json!({"a": 1})), r#"{"a":1}"#);
        let huge = data_text(&json!("x".repeat(100_000)));
        assert!(huge.len() < MAX_LOG_DATA + 100 && huge.ends_with("(100000 bytes in all)"), "{}", huge.len());
    }

    fn notification(method: &str, params: Value) -> ServerNotification {
        let raw = mcp_protocol::to_raw(&params).unwrap();
        ServerNotification::decode(method, Some(&raw)).unwrap()
    }

    #[test]
    fn every_notification_reaches_the_callback_and_completions_the_elicitation() {
        let seen: Arc<Mutex<Vec<String>>> = Arc::default();
        let record = seen.clone();
        let callback: NotificationCallback =
            Arc::new(move |server, n| record.lock().unwrap().push(format!("{server} {}", n.method())));
        let ask: Arc<dyn AskUser> = Arc::new(ElicitationPolicy::DeclineAll);
        let sink = HostNotificationSink::new().with_callback(callback).with_elicitation(HostElicitation::new(ask));
        sink.on_notification("a", &notification("notifications/message", json!({"level": "error", "data": {"x": 1}})));
        sink.on_notification("a", &notification("notifications/progress", json!({"progressToken": 1, "progress": 2})));
        sink.on_notification("b", &notification("notifications/elicitation/complete", json!({"elicitationId": "e"})));
        sink.on_notification("b", &notification("notifications/tools/list_changed", json!({})));
        assert_eq!(
            seen.lock().unwrap().clone(),
            [
                "a notifications/message",
                "a notifications/progress",
                "b notifications/elicitation/complete",
                "b notifications/tools/list_changed"
            ]
        );
    }
}
