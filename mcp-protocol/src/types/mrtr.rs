//! Multi round-trip requests (2026-07-28): a server answers `tools/call`, `prompts/get` or
//! `resources/read` with an `InputRequiredResult`; the client answers its input requests and
//! retries with `inputResponses` and the exact `requestState`.

use serde::de::{DeserializeOwned, IgnoredAny};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;
use serde_json::value::RawValue;

use super::common::ResultType;
use super::meta::{JsonObject, Meta};
use super::tasks::CreateTaskResult;

/// The server's input requests, keyed by an id the server chose.
pub type InputRequests = serde_json::Map<String, Value>;

/// The client's answers, keyed by the ids of the input requests they answer.
pub type InputResponses = serde_json::Map<String, Value>;

/// A result that asks the client for input before the request can complete.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InputRequiredResult {
    /// Always `input_required` on the wire.
    pub result_type: Option<ResultType>,
    /// What the server needs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_requests: Option<InputRequests>,
    /// Opaque state to send back unchanged with the retry.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_state: Option<String>,
    /// `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Members this crate does not model.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// The answer to a request that may need input (2026-07-28) or run as a task (2025-11-25).
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome<T> {
    /// The request completed.
    Complete(T),
    /// The server needs input first.
    InputRequired(InputRequiredResult),
    /// The server accepted the request as a task.
    Task(CreateTaskResult),
}

impl<T> Outcome<T> {
    /// The completed result, if the request completed.
    pub fn complete(self) -> Option<T> {
        match self {
            Outcome::Complete(t) => Some(t),
            _ => None,
        }
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Peek {
    #[serde(default)]
    result_type: Option<String>,
    #[serde(default)]
    task: Option<IgnoredAny>,
    #[serde(default)]
    content: Option<IgnoredAny>,
}

enum Shape {
    Complete,
    InputRequired,
    Task,
}

fn shape_of(peek: &Peek) -> Shape {
    match peek.result_type.as_deref() {
        Some("input_required") => Shape::InputRequired,
        _ if peek.task.is_some() && peek.content.is_none() => Shape::Task,
        _ => Shape::Complete,
    }
}

impl<T: DeserializeOwned> Outcome<T> {
    /// Decode from raw JSON: a cheap first pass reads only the members that decide the shape,
    /// then the result is decoded once into that shape.
    pub fn decode(raw: &RawValue) -> Result<Self, serde_json::Error> {
        let peek: Peek = serde_json::from_str(raw.get())?;
        Ok(match shape_of(&peek) {
            Shape::Complete => Outcome::Complete(serde_json::from_str(raw.get())?),
            Shape::InputRequired => Outcome::InputRequired(serde_json::from_str(raw.get())?),
            Shape::Task => Outcome::Task(serde_json::from_str(raw.get())?),
        })
    }
}

impl<T: Serialize> Serialize for Outcome<T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Outcome::Complete(t) => t.serialize(s),
            Outcome::InputRequired(r) => r.serialize(s),
            Outcome::Task(t) => t.serialize(s),
        }
    }
}

impl<'de, T: DeserializeOwned> Deserialize<'de> for Outcome<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        let value = Value::deserialize(d)?;
        let peek: Peek = Peek::deserialize(&value).map_err(D::Error::custom)?;
        let r = match shape_of(&peek) {
            Shape::Complete => T::deserialize(value).map(Outcome::Complete),
            Shape::InputRequired => InputRequiredResult::deserialize(value).map(Outcome::InputRequired),
            Shape::Task => CreateTaskResult::deserialize(value).map(Outcome::Task),
        };
        r.map_err(D::Error::custom)
    }
}
