//! JSON-RPC 2.0, written by hand: ids, the envelope and its rules, the error object and its open
//! codes.

mod envelope;
mod error_object;
mod id;
mod message;
mod raw;
mod write;

pub use envelope::DecodeError;
pub(crate) use envelope::{RawEnvelope, Unparsed, classify_envelope};
pub use error_object::{ErrorCode, ErrorObject};
pub use id::RequestId;
pub use message::{Message, Notification, Request, Response, ResponsePayload, Version};
pub use raw::{RawJson, to_raw};
pub(crate) use write::write_message;

use serde::{Deserialize, Deserializer};

/// Deserialise a member that is present, keeping an explicit `null` as `Some(Value::Null)`;
/// with `#[serde(default)]`, an absent member stays `None`.
pub(crate) fn present<'de, D, T>(d: D) -> Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    T::deserialize(d).map(Some)
}
