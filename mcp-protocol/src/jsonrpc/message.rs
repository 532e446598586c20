//! The JSON-RPC 2.0 envelope: requests, notifications and responses, written by hand.
//!
//! Payloads (`params`, `result`) stay raw JSON ([`RawJson`]) in the envelope: the envelope is
//! decoded once, and the payload is typed later by the method it belongs to. That keeps at most one
//! copy of a large payload alive besides its typed form.

use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use super::{ErrorObject, RawJson, RequestId, to_raw};

/// The only JSON-RPC version this crate speaks, serialised as `"2.0"`; anything else is rejected.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Version;

impl Version {
    /// The wire string.
    pub const WIRE: &'static str = "2.0";
}

impl Serialize for Version {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(Self::WIRE)
    }
}

impl<'de> Deserialize<'de> for Version {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        /// Compares the string where it is (serde's `Cow<str>` would copy it into a `String`,
        /// an allocation every message).
        struct VersionVisitor;
        impl serde::de::Visitor<'_> for VersionVisitor {
            type Value = Version;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("the string \"2.0\"")
            }
            fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<Version, E> {
                if s == Version::WIRE {
                    Ok(Version)
                } else {
                    Err(E::custom(format!("unsupported JSON-RPC version {s:?}, expected \"2.0\"")))
                }
            }
        }
        d.deserialize_str(VersionVisitor)
    }
}

/// A request: a method call that expects a response with the same id.
#[derive(Debug, Clone)]
pub struct Request {
    /// The id the response will carry.
    pub id: RequestId,
    /// The method name.
    pub method: String,
    /// The parameters. `None` means the member was absent; a JSON `null` is kept as raw `null`.
    pub params: Option<RawJson>,
}

/// A notification: a method call without an id, which gets no response.
#[derive(Debug, Clone)]
pub struct Notification {
    /// The method name.
    pub method: String,
    /// The parameters. `None` means the member was absent; a JSON `null` is kept as raw `null`.
    pub params: Option<RawJson>,
}

/// What a response carries: a result or an error, never both.
#[derive(Debug, Clone)]
pub enum ResponsePayload {
    /// The `result` member.
    Result(RawJson),
    /// The `error` member, boxed: error responses are rare, and every message is moved through
    /// the reader's layers by value (inline only up to 128 bytes; an error object is 104).
    Error(Box<ErrorObject>),
}

/// A response to a request.
#[derive(Debug, Clone)]
pub struct Response {
    /// The id of the request answered. `None` only on an error response that could not be tied to
    /// a request (the peer sent `"id": null` or no id at all).
    pub id: Option<RequestId>,
    /// The result or the error.
    pub payload: ResponsePayload,
    /// Whether a `None` id was absent on the wire rather than `null` (kept for faithful re-encoding).
    pub(super) id_absent: bool,
}

impl Response {
    /// A successful response.
    pub fn result(id: RequestId, result: RawJson) -> Self {
        Response { id: Some(id), payload: ResponsePayload::Result(result), id_absent: false }
    }

    /// An error response. `id` is `None` when the request could not be identified; it is sent as
    /// `"id": null`.
    pub fn error(id: Option<RequestId>, error: ErrorObject) -> Self {
        Response { id, payload: ResponsePayload::Error(Box::new(error)), id_absent: false }
    }

    pub(crate) fn from_parts(id: Option<RequestId>, payload: ResponsePayload, id_absent: bool) -> Self {
        let id_absent = id.is_none() && id_absent;
        Response { id, payload, id_absent }
    }

    /// The result, or the peer's error object.
    pub fn into_result(self) -> Result<RawJson, ErrorObject> {
        match self.payload {
            ResponsePayload::Result(r) => Ok(r),
            ResponsePayload::Error(e) => Err(*e),
        }
    }
}

/// Any JSON-RPC 2.0 message.
#[derive(Debug, Clone)]
pub enum Message {
    /// A request.
    Request(Request),
    /// A notification.
    Notification(Notification),
    /// A response (result or error).
    Response(Response),
}

impl Message {
    /// The method name of a request or notification.
    pub fn method(&self) -> Option<&str> {
        match self {
            Message::Request(r) => Some(&r.method),
            Message::Notification(n) => Some(&n.method),
            Message::Response(_) => None,
        }
    }

    /// The id of a request or response.
    pub fn id(&self) -> Option<&RequestId> {
        match self {
            Message::Request(r) => Some(&r.id),
            Message::Notification(_) => None,
            Message::Response(r) => r.id.as_ref(),
        }
    }

    /// A request with typed parameters (serialised now).
    pub fn request<P: Serialize>(
        id: RequestId,
        method: impl Into<String>,
        params: Option<&P>,
    ) -> Result<Self, serde_json::Error> {
        Ok(Message::Request(Request { id, method: method.into(), params: params.map(to_raw).transpose()? }))
    }

    /// A notification with typed parameters (serialised now).
    pub fn notification<P: Serialize>(
        method: impl Into<String>,
        params: Option<&P>,
    ) -> Result<Self, serde_json::Error> {
        Ok(Message::Notification(Notification { method: method.into(), params: params.map(to_raw).transpose()? }))
    }

    /// A successful response with a typed result (serialised now).
    pub fn response<R: Serialize>(id: RequestId, result: &R) -> Result<Self, serde_json::Error> {
        Ok(Message::Response(Response::result(id, to_raw(result)?)))
    }

    /// An error response.
    pub fn error_response(id: Option<RequestId>, error: ErrorObject) -> Self {
        Message::Response(Response::error(id, error))
    }
}

impl From<Request> for Message {
    fn from(r: Request) -> Self {
        Message::Request(r)
    }
}

impl From<Notification> for Message {
    fn from(n: Notification) -> Self {
        Message::Notification(n)
    }
}

impl From<Response> for Message {
    fn from(r: Response) -> Self {
        Message::Response(r)
    }
}

impl Serialize for Message {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(None)?;
        map.serialize_entry("jsonrpc", &Version)?;
        match self {
            Message::Request(r) => {
                map.serialize_entry("id", &r.id)?;
                map.serialize_entry("method", &r.method)?;
                if let Some(p) = &r.params {
                    map.serialize_entry("params", p)?;
                }
            }
            Message::Notification(n) => {
                map.serialize_entry("method", &n.method)?;
                if let Some(p) = &n.params {
                    map.serialize_entry("params", p)?;
                }
            }
            Message::Response(r) => {
                match &r.id {
                    Some(id) => map.serialize_entry("id", id)?,
                    None if r.id_absent => {}
                    None => map.serialize_entry("id", &Value::Null)?,
                }
                match &r.payload {
                    ResponsePayload::Result(v) => map.serialize_entry("result", v)?,
                    ResponsePayload::Error(e) => map.serialize_entry("error", e)?,
                }
            }
        }
        map.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every message is moved through the reader's layers by value (decoded, routed, queued,
    /// handed to its request): a move of more than 128 bytes is a `memcpy` call, one of 128 or
    /// less a few inline moves. An error object inline made every message 136 bytes.
    #[test]
    fn a_message_is_moved_inline() {
        let sizes = [("Message", size_of::<Message>(), 128), ("Response", size_of::<Response>(), 128)];
        println!("{sizes:?}");
        crate::types::extra::assert_sizes_at_most(&sizes);
    }
}
