//! The JSON-RPC 2.0 rules a decoded envelope must keep, and [`DecodeError`], why bytes did not
//! become a message (the framing's limits in [`crate::codec`] and these rules).

use serde::{Deserialize, Deserializer};
use serde_json::Value;
use serde_json::value::RawValue;

use super::{ErrorObject, Message, Notification, RawJson, Request, RequestId, Response, ResponsePayload, Version};
use crate::wellformed::Member;

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

/// The `jsonrpc` member as read: the version this crate speaks, or another value (named in the
/// error).
pub(crate) enum VersionMember {
    Wire,
    Other(Value),
}

impl<'de> Deserialize<'de> for VersionMember {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(match Value::deserialize(d)? {
            Value::String(s) if s == Version::WIRE => VersionMember::Wire,
            other => VersionMember::Other(other),
        })
    }
}

/// The `id` member as read: `null`, an id, or a value that is no id (named in the error).
pub(crate) enum IdMember {
    Null,
    Id(RequestId),
    Invalid(Value),
}

impl IdMember {
    fn of(value: Value) -> Self {
        match value {
            Value::Null => IdMember::Null,
            value => RequestId::deserialize(&value).map_or(IdMember::Invalid(value), IdMember::Id),
        }
    }

    fn id(self) -> Result<RequestId, DecodeError> {
        match self {
            IdMember::Id(id) => Ok(id),
            IdMember::Null => Err(DecodeError::InvalidIdType("null".into())),
            IdMember::Invalid(value) => Err(DecodeError::InvalidIdType(describe(&value))),
        }
    }
}

impl<'de> Deserialize<'de> for IdMember {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Value::deserialize(d).map(IdMember::of)
    }
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

/// A payload as an envelope holds it before it is the message's: its JSON text.
pub(crate) trait Payload {
    fn text(&self) -> &str;

    /// Whether a line break may lie in the text (between its tokens: see
    /// [`without_line_breaks`]).
    fn may_break_lines(&self) -> bool {
        true
    }
}

/// Borrowed from a line serde_json parsed.
impl Payload for &RawValue {
    fn text(&self) -> &str {
        self.get()
    }
}

/// Parsed by serde_json from a reader.
impl Payload for Box<RawValue> {
    fn text(&self) -> &str {
        self.get()
    }
}

/// A payload borrowed from a line the codec found to be JSON ([`crate::wellformed`]).
#[derive(Clone, Copy)]
pub(crate) struct Unparsed<'a> {
    pub(crate) text: &'a str,
    /// Whether the line has a line break between its tokens.
    line_breaks: bool,
}

impl Payload for Unparsed<'_> {
    fn text(&self) -> &str {
        self.text
    }

    fn may_break_lines(&self) -> bool {
        self.line_breaks
    }
}

/// The message's own payload made by `own` from `payload`, without line breaks.
fn owned<P: Payload>(payload: P, own: impl FnOnce(P) -> RawJson) -> RawJson {
    match payload.may_break_lines() {
        true => without_line_breaks(own(payload)),
        false => own(payload),
    }
}

/// Turn a raw envelope into a message, applying the JSON-RPC 2.0 rules. `own` makes the owned
/// payload (`params` or `result`) of the message from the one read: a copy of text borrowed from
/// the line, or the payload itself.
pub(crate) fn classify_envelope<P: Payload>(
    raw: RawEnvelope<P>,
    own: impl FnOnce(P) -> RawJson,
) -> Result<Message, DecodeError> {
    let Some(version) = raw.jsonrpc else {
        return Err(DecodeError::NotJsonRpc("no \"jsonrpc\" member".into()));
    };
    if let VersionMember::Other(version) = version {
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
            match p.text().trim_start().as_bytes().first() {
                Some(b'{' | b'[') | Some(b'n') => {}
                _ => return Err(DecodeError::InvalidParams(p.text().chars().take(60).collect())),
            }
        }
        let id = match raw.id {
            None => None,
            Some(IdMember::Null) => return Err(DecodeError::NullRequestId { method }),
            Some(id) => Some(id.id()?),
        };
        let params = raw.params.map(|p| owned(p, own));
        return Ok(match id {
            None => Message::Notification(Notification { method, params }),
            Some(id) => Message::Request(Request { id, method, params }),
        });
    }
    match (raw.result, raw.error) {
        (Some(_), Some(_)) => Err(DecodeError::ResultAndError),
        (Some(result), None) => match raw.id {
            None | Some(IdMember::Null) => Err(DecodeError::MissingResponseId),
            Some(id) => Ok(Message::Response(Response::result(id.id()?, owned(result, own)))),
        },
        (None, Some(error)) => {
            let error: ErrorObject =
                serde_json::from_str(error.text()).map_err(|e| DecodeError::InvalidErrorObject(e.to_string()))?;
            let (id, absent) = match raw.id {
                None => (None, true),
                Some(IdMember::Null) => (None, false),
                Some(id) => (Some(id.id()?), false),
            };
            Ok(Message::Response(Response::from_parts(id, ResponsePayload::Error(Box::new(error)), absent)))
        }
        (None, None) => Err(DecodeError::MissingMethod),
    }
}

/// The envelope as read from the wire, before it is classified. Small members are read as
/// values; payloads stay raw: owned (`Box<RawValue>`) when serde_json reads them from a reader,
/// or borrowed from the line: `&RawValue` when serde_json parses the line, [`Unparsed`] when the
/// codec found it to be JSON ([`RawEnvelope::of_members`]).
#[derive(Deserialize)]
#[serde(bound(deserialize = "P: Deserialize<'de>"))]
pub(crate) struct RawEnvelope<P> {
    #[serde(default, deserialize_with = "super::present")]
    pub(crate) jsonrpc: Option<VersionMember>,
    #[serde(default, deserialize_with = "super::present")]
    pub(crate) id: Option<IdMember>,
    #[serde(default, deserialize_with = "super::present")]
    pub(crate) method: Option<Value>,
    #[serde(default, deserialize_with = "super::present")]
    pub(crate) params: Option<P>,
    #[serde(default, deserialize_with = "super::present")]
    pub(crate) result: Option<P>,
    #[serde(default, deserialize_with = "super::present")]
    pub(crate) error: Option<P>,
}

impl<'a> RawEnvelope<Unparsed<'a>> {
    /// The envelope of the object whose members are `members`, in `text` that the codec found
    /// to be JSON (with a line break between its tokens when `line_breaks`): small members
    /// parsed, payloads borrowed as they lie, unknown members left alone. `None` when it cannot be read that way with certainty (a member name written with
    /// an escape, a member given twice): the object is then decoded by serde, whose error or
    /// reading is the one that counts.
    pub(crate) fn of_members(text: &'a str, members: &[Member], line_breaks: bool) -> Option<Self> {
        let mut raw = RawEnvelope { jsonrpc: None, id: None, method: None, params: None, result: None, error: None };
        for member in members {
            if member.name.escaped {
                return None;
            }
            let name = text.get(member.name.span.0..member.name.span.1)?;
            let value = text.get(member.value.0..member.value.1)?;
            let fresh = match name {
                "jsonrpc" => raw.jsonrpc.replace(version_of(value)?).is_none(),
                "id" => raw.id.replace(id_of(value)?).is_none(),
                "method" => raw.method.replace(serde_json::from_str(value).ok()?).is_none(),
                "params" => raw.params.replace(Unparsed { text: value, line_breaks }).is_none(),
                "result" => raw.result.replace(Unparsed { text: value, line_breaks }).is_none(),
                "error" => raw.error.replace(Unparsed { text: value, line_breaks }).is_none(),
                _ => true,
            };
            if !fresh {
                return None;
            }
        }
        Some(raw)
    }
}

/// The `jsonrpc` member of JSON text, without an allocation for the usual one.
fn version_of(value: &str) -> Option<VersionMember> {
    match value {
        "\"2.0\"" => Some(VersionMember::Wire),
        _ => serde_json::from_str(value).ok(),
    }
}

/// The `id` member of JSON text: a short integer or a string without escapes read as it is,
/// anything else by serde_json.
fn id_of(value: &str) -> Option<IdMember> {
    let bytes = value.as_bytes();
    if (1..=18).contains(&bytes.len()) && bytes.iter().all(u8::is_ascii_digit) {
        // JSON text without a leading zero: eighteen digits fit an i64.
        return value.parse().ok().map(|n| IdMember::Id(RequestId::Number(n)));
    }
    if let Some(text) = value.strip_prefix('"').and_then(|v| v.strip_suffix('"'))
        && !text.contains('\\')
    {
        return Some(IdMember::Id(RequestId::String(text.to_owned())));
    }
    serde_json::from_str(value).ok()
}

impl<'de> Deserialize<'de> for Message {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let raw = RawEnvelope::<Box<RawValue>>::deserialize(d)?;
        classify_envelope(raw, RawJson::from).map_err(|e: DecodeError| serde::de::Error::custom(e))
    }
}
