//! The JSON-RPC 2.0 rules a decoded envelope must keep, and [`DecodeError`], why bytes did not
//! become a message (the framing's limits in [`crate::codec`] and these rules).

use std::ops::Deref;

use serde::{Deserialize, Deserializer};
use serde_json::Value;
use serde_json::value::RawValue;

use super::{ErrorObject, Message, Notification, RawJson, Request, RequestId, Response, ResponsePayload, Version};

/// Why a line did not decode into JSON-RPC messages.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DecodeError {
    /// The line is longer than the limit.
    #[error("message of {len} bytes exceeds the limit of {max} bytes")]
    TooLong {
        /// Length of the line.
        len: usize,
        /// The limit.
        max: usize,
    },
    /// The line is not valid UTF-8.
    #[error("message is not valid UTF-8 (first bad byte at offset {offset})")]
    InvalidUtf8 {
        /// Offset of the first invalid byte.
        offset: usize,
    },
    /// Arrays and objects nest deeper than the limit.
    #[error("message nests deeper than {max} levels")]
    TooDeep {
        /// The limit.
        max: usize,
    },
    /// The line is not JSON.
    #[error("not JSON: {0}")]
    NotJson(String),
    /// The line is JSON, but not a JSON-RPC message (no `jsonrpc` member, or not an object).
    #[error("JSON but not JSON-RPC: {0}")]
    NotJsonRpc(String),
    /// The `jsonrpc` member is not `"2.0"`.
    #[error("wrong JSON-RPC version {0}, expected \"2.0\"")]
    WrongVersion(String),
    /// A request carries `"id": null`.
    #[error("request {method:?} has a null id")]
    NullRequestId {
        /// The request's method.
        method: String,
    },
    /// An id that is neither an integer nor a string.
    #[error("invalid id {0}: ids are integers or strings")]
    InvalidIdType(String),
    /// A message with neither a method nor a result or error.
    #[error("message has no method, result or error")]
    MissingMethod,
    /// The method member is not a string.
    #[error("method must be a string, found {0}")]
    InvalidMethod(String),
    /// A response carries both `result` and `error`.
    #[error("response carries both result and error")]
    ResultAndError,
    /// A message mixes request and response members.
    #[error("message has a method and a {0} member")]
    MethodAndResponse(&'static str),
    /// A successful response without an id, or with a null id.
    #[error("result response without an id")]
    MissingResponseId,
    /// `params` is neither an object, an array nor null.
    #[error("params must be an object or array, found {0}")]
    InvalidParams(String),
    /// The `error` member is not a JSON-RPC error object.
    #[error("invalid error object: {0}")]
    InvalidErrorObject(String),
    /// A member appears twice in the envelope (two `id`s, say): which one to trust is unknown.
    #[error("duplicate member in the envelope: {0}")]
    DuplicateMember(String),
    /// A batch array with no element.
    #[error("empty batch")]
    EmptyBatch,
}

impl DecodeError {
    /// True when the line was not a JSON-RPC message at all (not JSON, or JSON of another kind):
    /// the noise a stdio server may print, which a transport skips with a warning.
    pub fn is_noise(&self) -> bool {
        matches!(self, DecodeError::NotJson(_) | DecodeError::NotJsonRpc(_))
    }
}

fn describe(v: &Value) -> String {
    let s = v.to_string();
    if s.chars().count() > 60 { format!("{}…", s.chars().take(60).collect::<String>()) } else { s }
}

fn parse_id(v: Value) -> Result<RequestId, DecodeError> {
    serde_json::from_value(v.clone()).map_err(|_| DecodeError::InvalidIdType(describe(&v)))
}

/// A decoded raw payload as [`encode_line_into`] writes it: each line break in its whitespace
/// (the only place a valid payload holds a CR or LF byte) becomes a space. Without this, a
/// payload that arrived with line breaks (a pretty-printed HTTP body, or a line whose minus sign
/// became a line feed) would encode to a line that decodes to a different message.
fn without_line_breaks(raw: RawJson) -> RawJson {
    if memchr::memchr2(b'\n', b'\r', raw.get().as_bytes()).is_none() {
        return raw;
    }
    // The text is JSON, whose strings hold no line break: spaces stand where whitespace stood.
    RawJson::from_checked(raw.get().replace(['\n', '\r'], " "))
}

/// Turn a raw envelope into a message, applying the JSON-RPC 2.0 rules. `own` makes the owned
/// payload (`params` or `result`) of the message from the one read: a copy of text borrowed from
/// the line, or the payload itself.
pub(crate) fn classify_envelope<P: Deref<Target = RawValue>>(
    raw: RawEnvelope<P>,
    own: impl FnOnce(P) -> RawJson,
) -> Result<Message, DecodeError> {
    let Some(version) = raw.jsonrpc else {
        return Err(DecodeError::NotJsonRpc("no \"jsonrpc\" member".into()));
    };
    if version.as_str() != Some(Version::WIRE) {
        return Err(DecodeError::WrongVersion(describe(&version)));
    }
    if let Some(method) = raw.method {
        let Value::String(method) = method else {
            return Err(DecodeError::InvalidMethod(describe(&method)));
        };
        if raw.result.is_some() {
            return Err(DecodeError::MethodAndResponse("result"));
        }
        if raw.error.is_some() {
            return Err(DecodeError::MethodAndResponse("error"));
        }
        if let Some(p) = &raw.params {
            match p.get().trim_start().as_bytes().first() {
                Some(b'{' | b'[') | Some(b'n') => {}
                _ => return Err(DecodeError::InvalidParams(p.get().chars().take(60).collect())),
            }
        }
        let id = match raw.id {
            None => None,
            Some(Value::Null) => return Err(DecodeError::NullRequestId { method }),
            Some(id) => Some(parse_id(id)?),
        };
        let params = raw.params.map(|p| without_line_breaks(own(p)));
        return Ok(match id {
            None => Message::Notification(Notification { method, params }),
            Some(id) => Message::Request(Request { id, method, params }),
        });
    }
    match (raw.result, raw.error) {
        (Some(_), Some(_)) => Err(DecodeError::ResultAndError),
        (Some(result), None) => match raw.id {
            None | Some(Value::Null) => Err(DecodeError::MissingResponseId),
            Some(id) => Ok(Message::Response(Response::result(parse_id(id)?, without_line_breaks(own(result))))),
        },
        (None, Some(error)) => {
            let error: ErrorObject =
                serde_json::from_str(error.get()).map_err(|e| DecodeError::InvalidErrorObject(e.to_string()))?;
            let (id, absent) = match raw.id {
                None => (None, true),
                Some(Value::Null) => (None, false),
                Some(id) => (Some(parse_id(id)?), false),
            };
            Ok(Message::Response(Response::from_parts(id, ResponsePayload::Error(Box::new(error)), absent)))
        }
        (None, None) => Err(DecodeError::MissingMethod),
    }
}

/// The envelope as read from the wire, before it is classified. Small members are read as
/// values; payloads stay raw: owned (`Box<RawValue>`), or borrowed from the line
/// (`&RawValue`) when the decoder reads from text.
#[derive(Deserialize)]
#[serde(bound(deserialize = "P: Deserialize<'de>"))]
pub(crate) struct RawEnvelope<P> {
    #[serde(default, deserialize_with = "super::present")]
    pub(crate) jsonrpc: Option<Value>,
    #[serde(default, deserialize_with = "super::present")]
    pub(crate) id: Option<Value>,
    #[serde(default, deserialize_with = "super::present")]
    pub(crate) method: Option<Value>,
    #[serde(default, deserialize_with = "super::present")]
    pub(crate) params: Option<P>,
    #[serde(default, deserialize_with = "super::present")]
    pub(crate) result: Option<P>,
    #[serde(default, deserialize_with = "super::present")]
    pub(crate) error: Option<P>,
}

impl<'de> Deserialize<'de> for Message {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let raw = RawEnvelope::<Box<RawValue>>::deserialize(d)?;
        classify_envelope(raw, RawJson::from).map_err(|e: DecodeError| serde::de::Error::custom(e))
    }
}
