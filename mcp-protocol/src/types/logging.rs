//! Logging: the syslog severity levels, `logging/setLevel` (legacy era; 2026-07-28 asks per
//! request with the `io.modelcontextprotocol/logLevel` `_meta` key) and log message
//! notifications.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::common::EmptyResult;
use super::meta::{JsonObject, Meta};
use super::open_enum::open_enum;

open_enum! {
    /// A log severity, as in syslog (RFC 5424).
    pub enum LoggingLevel {
        /// Debugging detail.
        Debug = "debug",
        /// Informational.
        Info = "info",
        /// Normal but significant.
        Notice = "notice",
        /// Warning.
        Warning = "warning",
        /// Error.
        Error = "error",
        /// Critical condition.
        Critical = "critical",
        /// Action must be taken immediately.
        Alert = "alert",
        /// The system is unusable.
        Emergency = "emergency",
    }
}

impl LoggingLevel {
    /// Severity from 0 (`debug`) to 7 (`emergency`); `None` for an unknown level.
    pub fn severity(&self) -> Option<u8> {
        Some(match self {
            LoggingLevel::Debug => 0,
            LoggingLevel::Info => 1,
            LoggingLevel::Notice => 2,
            LoggingLevel::Warning => 3,
            LoggingLevel::Error => 4,
            LoggingLevel::Critical => 5,
            LoggingLevel::Alert => 6,
            LoggingLevel::Emergency => 7,
            LoggingLevel::Unknown(_) => return None,
        })
    }
}

/// Params of `logging/setLevel`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SetLevelParams {
    /// The lowest level the server should send.
    pub level: LoggingLevel,
    /// `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Members this crate does not model.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// Params of `notifications/message`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LoggingMessageParams {
    /// Severity of the message.
    pub level: LoggingLevel,
    /// Name of the logger that issued the message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logger: Option<String>,
    /// The data to log: any JSON value, `null` included.
    pub data: Value,
    /// `_meta` (2025-11-25+).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Members this crate does not model.
    #[serde(flatten)]
    pub extra: JsonObject,
}

crate::request_methods! {
    /// `logging/setLevel` (legacy era).
    SetLevel = "logging/setLevel", SetLevelParams => EmptyResult;
}

crate::notification_methods! {
    /// `notifications/message`.
    LoggingMessage = "notifications/message", LoggingMessageParams;
}

/// The log level a 2026-07-28 request carries in `_meta`.
impl Meta {
    /// The log level a 2026-07-28 request opts in to.
    pub fn log_level(&self) -> Option<LoggingLevel> {
        self.get(Self::LOG_LEVEL)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::method::{NotificationMethod, RequestMethod};
    use serde_json::json;

    #[test]
    fn levels_decode_and_unknown_is_kept() {
        let l: LoggingLevel = serde_json::from_value(json!("warning")).unwrap();
        assert_eq!(l, LoggingLevel::Warning);
        assert_eq!(l.severity(), Some(3));
        let u: LoggingLevel = serde_json::from_value(json!("trace")).unwrap();
        assert_eq!(u, LoggingLevel::Unknown("trace".into()));
        assert_eq!(u.severity(), None);
        assert_eq!(serde_json::to_value(&u).unwrap(), json!("trace"));
        assert_eq!(serde_json::to_value(LoggingLevel::Emergency).unwrap(), json!("emergency"));
        assert_eq!(LoggingLevel::Emergency.as_str(), "emergency");
    }

    #[test]
    fn message_round_trips_any_data_including_null() {
        for data in [json!("text"), json!({"a": [1, 2]}), json!(null)] {
            let v = json!({"level": "error", "logger": "db", "data": data, "_meta": {"s": 1}, "seq": 9});
            let p: LoggingMessageParams = serde_json::from_value(v.clone()).unwrap();
            assert_eq!(p.level, LoggingLevel::Error);
            assert_eq!(p.extra["seq"], 9);
            assert_eq!(serde_json::to_value(&p).unwrap(), v);
        }
        assert!(serde_json::from_value::<LoggingMessageParams>(json!({"level": "info"})).is_err());
    }

    #[test]
    fn set_level() {
        let v = json!({"level": "debug"});
        let p: SetLevelParams = serde_json::from_value(v.clone()).unwrap();
        assert_eq!(serde_json::to_value(&p).unwrap(), v);
        assert_eq!(SetLevel::METHOD, "logging/setLevel");
        assert_eq!(LoggingMessage::METHOD, "notifications/message");
    }
}
