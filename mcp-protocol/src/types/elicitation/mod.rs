//! Elicitation (2025-06-18+): a server asks the user for input, through a form the client renders
//! from a restricted JSON Schema, or (2025-11-25+) through a URL the user opens out of band.

use crate::types::open_enum::open_enum;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use super::meta::{JsonObject, Meta};
use super::mrtr::Outcome;
use super::tasks::TaskMetadata;
use crate::jsonrpc::{ErrorCode, ErrorObject};

mod schema;

pub use schema::*;

/// Declares a unit type that is always one string on the wire (`mode: "form"`, `type: "string"`).
macro_rules! const_str {
    ($(#[$doc:meta])* $name:ident = $value:literal) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
        pub struct $name;

        impl $name {
            /// The wire string.
            pub const VALUE: &'static str = $value;
        }

        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str($value)
            }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let s = std::borrow::Cow::<'de, str>::deserialize(d)?;
                if s == $value {
                    Ok($name)
                } else {
                    Err(serde::de::Error::invalid_value(serde::de::Unexpected::Str(&s), &$value))
                }
            }
        }
    };
}

const_str! {
    /// `mode: "form"`.
    FormMode = "form"
}
const_str! {
    /// `mode: "url"`.
    UrlMode = "url"
}

/// Params of `elicitation/create`, dispatched on `mode`: absent or `form` is a form, `url` a URL.
#[derive(Debug, Clone, PartialEq)]
pub enum ElicitParams {
    /// Collect structured data through a form.
    Form(ElicitFormParams),
    /// Send the user to a URL (2025-11-25+).
    Url(ElicitUrlParams),
    /// A mode this crate does not know, kept as it arrived; a client declines it.
    Unknown(Value),
}

impl ElicitParams {
    /// The wire `mode`: `form` (also when absent), `url`, or the unknown value.
    pub fn mode(&self) -> &str {
        match self {
            ElicitParams::Form(_) => FormMode::VALUE,
            ElicitParams::Url(_) => UrlMode::VALUE,
            ElicitParams::Unknown(v) => v.get("mode").and_then(Value::as_str).unwrap_or("unknown"),
        }
    }

    /// The message to show the user.
    pub fn message(&self) -> Option<&str> {
        match self {
            ElicitParams::Form(f) => Some(&f.message),
            ElicitParams::Url(u) => Some(&u.message),
            ElicitParams::Unknown(v) => v.get("message").and_then(Value::as_str),
        }
    }
}

impl Default for ElicitParams {
    fn default() -> Self {
        ElicitParams::Form(ElicitFormParams::default())
    }
}

impl Serialize for ElicitParams {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            ElicitParams::Form(f) => f.serialize(s),
            ElicitParams::Url(u) => u.serialize(s),
            ElicitParams::Unknown(v) => v.serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for ElicitParams {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        let value = Value::deserialize(d)?;
        let Value::Object(map) = &value else {
            return Err(D::Error::custom("elicitation params must be an object"));
        };
        fn typed<T: DeserializeOwned, E: Error>(value: Value, mode: &str) -> Result<T, E> {
            serde_json::from_value(value).map_err(|e| E::custom(format!("invalid {mode} elicitation: {e}")))
        }
        match map.get("mode") {
            None => typed(value, "form").map(ElicitParams::Form),
            Some(Value::String(m)) if m == FormMode::VALUE => typed(value, "form").map(ElicitParams::Form),
            Some(Value::String(m)) if m == UrlMode::VALUE => typed(value, "url").map(ElicitParams::Url),
            Some(_) => Ok(ElicitParams::Unknown(value)),
        }
    }
}

/// Form-mode elicitation params.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ElicitFormParams {
    /// `form`, or absent (2025-06-18 has no mode).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<FormMode>,
    /// The message to show the user.
    pub message: String,
    /// What to collect: a flat object schema of primitive members.
    pub requested_schema: RequestedSchema,
    /// Run as a task (2025-11-25).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task: Option<TaskMetadata>,
    /// `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Members this crate does not model.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// URL-mode elicitation params (2025-11-25+).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ElicitUrlParams {
    /// Always `url`.
    pub mode: UrlMode,
    /// Why the user should open the URL.
    pub message: String,
    /// The URL to open.
    pub url: String,
    /// Id that `notifications/elicitation/complete` refers to (2025-11-25; absent in 2026-07-28).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub elicitation_id: Option<String>,
    /// Run as a task (2025-11-25).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task: Option<TaskMetadata>,
    /// `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Members this crate does not model.
    #[serde(flatten)]
    pub extra: JsonObject,
}

open_enum! {
    /// The user's answer.
    #[derive(Default)]
    pub enum ElicitAction {
        /// The user submitted the form (or, in URL mode, agreed to open the URL).
        Accept = "accept",
        /// The user declined.
        #[default]
        Decline = "decline",
        /// The user dismissed the request without choosing.
        Cancel = "cancel",
    }
}

/// Result of `elicitation/create`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ElicitResult {
    /// What the user did.
    pub action: ElicitAction,
    /// The submitted values (form mode, `accept` only): strings, numbers, booleans or arrays of
    /// strings, keyed by member name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<JsonObject>,
    /// `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Members this crate does not model.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl ElicitResult {
    /// An `accept` with content.
    pub fn accept(content: JsonObject) -> Self {
        ElicitResult { action: ElicitAction::Accept, content: Some(content), ..Default::default() }
    }

    /// A `decline`.
    pub fn decline() -> Self {
        ElicitResult { action: ElicitAction::Decline, ..Default::default() }
    }

    /// A `cancel`.
    pub fn cancel() -> Self {
        ElicitResult { action: ElicitAction::Cancel, ..Default::default() }
    }
}

/// What `elicitation/create` may answer: the user's answer, or (2025-11-25) a task.
pub type ElicitOutcome = Outcome<ElicitResult>;

/// Params of `notifications/elicitation/complete` (2025-11-25): a URL elicitation finished.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ElicitationCompleteParams {
    /// The `elicitationId` of the URL elicitation.
    pub elicitation_id: String,
    /// `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Members this crate does not model.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// `data` of the URL-elicitation-required error (-32042, 2025-11-25): URL elicitations the user
/// must complete before the request is retried.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UrlElicitationRequiredData {
    /// The URL elicitations.
    pub elicitations: Vec<ElicitUrlParams>,
    /// Members this crate does not model.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl UrlElicitationRequiredData {
    /// The typed data of an error with code -32042; `None` for another code or another shape.
    pub fn from_error(error: &ErrorObject) -> Option<Self> {
        if error.code != ErrorCode::URL_ELICITATION_REQUIRED {
            return None;
        }
        Self::deserialize(error.data.as_ref()?).ok()
    }
}

/// `elicitation/create`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Elicit;
impl crate::method::RequestMethod for Elicit {
    const METHOD: &'static str = "elicitation/create";
    type Params = ElicitParams;
    type Result = ElicitOutcome;
    fn decode_result(raw: &crate::RawJson) -> Result<Self::Result, serde_json::Error> {
        Outcome::decode(raw)
    }
}

crate::notification_methods! {
    /// `notifications/elicitation/complete` (2025-11-25).
    ElicitationComplete = "notifications/elicitation/complete", ElicitationCompleteParams;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::method::{NotificationMethod, RequestMethod};
    use serde_json::json;

    #[test]
    fn mode_dispatch() {
        let form = json!({"mode": "form", "message": "Name?", "requestedSchema": {"type": "object",
            "properties": {"name": {"type": "string"}}}, "_meta": {"progressToken": 3}});
        let p: ElicitParams = serde_json::from_value(form.clone()).unwrap();
        assert!(matches!(&p, ElicitParams::Form(f) if f.mode == Some(FormMode)));
        assert_eq!(serde_json::to_value(&p).unwrap(), form);

        let url = json!({"mode": "url", "url": "https://example.com/authorize", "message": "Authorize the demo",
            "elicitationId": "407cb832", "future": 1});
        let p: ElicitParams = serde_json::from_value(url.clone()).unwrap();
        let ElicitParams::Url(u) = &p else { panic!() };
        assert_eq!(u.elicitation_id.as_deref(), Some("407cb832"));
        assert_eq!(p.mode(), "url");
        assert_eq!(p.message(), Some("Authorize the demo"));
        assert_eq!(serde_json::to_value(&p).unwrap(), url);

        let other = json!({"mode": "oauth", "message": "Sign in", "issuer": "x"});
        let p: ElicitParams = serde_json::from_value(other.clone()).unwrap();
        assert!(matches!(p, ElicitParams::Unknown(_)));
        assert_eq!(p.mode(), "oauth");
        assert_eq!(serde_json::to_value(&p).unwrap(), other);

        let broken = json!({"mode": "url", "message": "no url"});
        let err = serde_json::from_value::<ElicitParams>(broken).unwrap_err();
        assert!(err.to_string().contains("invalid url elicitation"), "{err}");
        assert!(serde_json::from_value::<ElicitParams>(json!({"message": "no schema"})).is_err());
    }

    #[test]
    fn result_actions_and_content() {
        let v = json!({"action": "accept", "content": {"name": "Ada", "check": true, "integer": 42,
            "number": 2.5, "multi": ["Guitar"]}});
        let r: ElicitResult = serde_json::from_value(v.clone()).unwrap();
        assert_eq!(r.action, ElicitAction::Accept);
        assert_eq!(serde_json::to_value(&r).unwrap(), v);
        for (action, expected) in [("decline", ElicitAction::Decline), ("cancel", ElicitAction::Cancel)] {
            let r: ElicitResult = serde_json::from_value(json!({"action": action})).unwrap();
            assert_eq!(r.action, expected);
        }
        let r: ElicitResult = serde_json::from_value(json!({"action": "defer"})).unwrap();
        assert_eq!(r.action, ElicitAction::Unknown("defer".into()));
        assert_eq!(serde_json::to_value(ElicitResult::cancel()).unwrap(), json!({"action": "cancel"}));
        let raw = crate::jsonrpc::to_raw(&json!({"action": "decline"})).unwrap();
        assert!(
            matches!(Elicit::decode_result(&raw).unwrap(), Outcome::Complete(r) if r.action == ElicitAction::Decline)
        );
    }

    #[test]
    fn url_elicitation_required_error_data() {
        let data = json!({"elicitations": [{"mode": "url", "url": "https://modelcontextprotocol.io",
            "message": "Open this link", "elicitationId": "c1f3"}]});
        let err = ErrorObject::new(ErrorCode::URL_ELICITATION_REQUIRED, "needs auth").with_data(data.clone());
        let d = UrlElicitationRequiredData::from_error(&err).unwrap();
        assert_eq!(d.elicitations[0].url, "https://modelcontextprotocol.io");
        assert_eq!(serde_json::to_value(&d).unwrap(), data);
        let other = ErrorObject::new(ErrorCode::INTERNAL_ERROR, "x").with_data(data);
        assert!(UrlElicitationRequiredData::from_error(&other).is_none());
    }

    #[test]
    fn complete_notification() {
        let v = json!({"elicitationId": "link-42"});
        let p: ElicitationCompleteParams = serde_json::from_value(v.clone()).unwrap();
        assert_eq!(p.elicitation_id, "link-42");
        assert_eq!(serde_json::to_value(&p).unwrap(), v);
        assert_eq!(ElicitationComplete::METHOD, "notifications/elicitation/complete");
        assert_eq!(Elicit::METHOD, "elicitation/create");
    }
}
