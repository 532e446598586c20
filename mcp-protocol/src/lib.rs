//! JSON-RPC 2.0 and every MCP message type, without I/O.
//!
//! - [`jsonrpc`]: the hand-written envelope — [`Message`] (a [`Request`], [`Notification`] or
//!   [`Response`]), [`RequestId`], [`ErrorObject`] and the open [`ErrorCode`]; payloads are
//!   [`RawJson`], JSON text typed later by its method.
//! - [`codec`]: framing, one message per line under [`DecodeLimits`], with a [`DecodeError`] that
//!   keeps noise ([`DecodeError::is_noise`]) apart from broken JSON-RPC; batches decode too. A
//!   line is checked to be JSON by the codec's own pass (`wellformed`), so that its payload is
//!   parsed once, by its method's decoder.
//! - [`scan`]: a look at one member of an object's text without decoding the rest (a page's
//!   `nextCursor`, read early so that the next page is asked for while this one decodes).
//! - [`revision`]: [`ProtocolVersion`] and its [`Era`], with predicates for what each revision has.
//! - [`method`]: the typed method table, [`RequestMethod`] and [`NotificationMethod`].
//! - [`types`]: the MCP messages by domain (tools, prompts, resources, content, sampling, ...).
//!
//! ```
//! use mcp_protocol::{codec, DecodeLimits, Message};
//!
//! let line = br#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#;
//! let decoded = codec::decode_line(line, &DecodeLimits::default()).unwrap();
//! let codec::Decoded::Single(Message::Request(req)) = decoded else { panic!() };
//! assert_eq!(req.method, "tools/list");
//! assert!(req.params.is_none());
//! ```

pub mod codec;
pub mod jsonrpc;
pub mod messages;
pub mod method;
pub mod revision;
pub mod scan;
pub mod types;
mod wellformed;

pub use codec::{DecodeError, DecodeLimits, Decoded, decode_line, encode_line};
pub use jsonrpc::{
    ErrorCode, ErrorObject, Message, Notification, RawJson, Request, RequestId, Response, ResponsePayload, to_raw,
};
pub use method::{NotificationMethod, RequestMethod};
pub use revision::{Era, ProtocolVersion};
