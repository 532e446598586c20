//! The typed method table: each request type knows its method name, its params and its result.
//!
//! A session offers `request::<CallTool>(params)` returning `CallToolResult` (or its multi
//! round-trip outcome) instead of stringly-typed calls.

use crate::RawJson;
use serde::Serialize;
use serde::de::DeserializeOwned;

/// A request method: its wire name, parameter type and result type.
pub trait RequestMethod: 'static {
    /// The wire method name, e.g. `tools/call`.
    const METHOD: &'static str;
    /// The `params` member.
    type Params: Serialize + DeserializeOwned + Clone + std::fmt::Debug + Send + Sync + 'static;
    /// The `result` member of the response.
    type Result: Serialize + DeserializeOwned + Clone + std::fmt::Debug + Send + Sync + 'static;

    /// Decode a raw result. Methods whose result has several shapes override this with a cheaper
    /// path than buffering the whole result.
    fn decode_result(raw: &RawJson) -> Result<Self::Result, serde_json::Error> {
        serde_json::from_str(raw.get())
    }

    /// Decode a raw result the caller gives up. Methods whose result may be one large text
    /// override this to decode the text where it lies instead of copying it.
    fn decode_owned(raw: RawJson) -> Result<Self::Result, serde_json::Error> {
        Self::decode_result(&raw)
    }
}

/// The member of a request's `params` that names the one thing the request acts on: the tool
/// or prompt (`name`), the resource (`uri`), the task of the tasks extension (`taskId`).
/// Streamable HTTP in the modern era mirrors it in the `Mcp-Name` header, so that a gateway can
/// route the request without reading its body. `None` for every other method.
pub fn target_member(method: &str) -> Option<&'static str> {
    match method {
        "tools/call" | "prompts/get" => Some("name"),
        "resources/read" | "resources/subscribe" | "resources/unsubscribe" => Some("uri"),
        "tasks/get" | "tasks/update" | "tasks/cancel" => Some("taskId"),
        _ => None,
    }
}

/// A notification method: its wire name and parameter type.
pub trait NotificationMethod: 'static {
    /// The wire method name, e.g. `notifications/progress`.
    const METHOD: &'static str;
    /// The `params` member.
    type Params: Serialize + DeserializeOwned + Clone + std::fmt::Debug + Send + Sync + 'static;
}

/// Declare marker types for request methods.
///
/// `request_methods! { /// docs
///     CallTool = "tools/call", CallToolParams => CallToolOutcome; }`
#[macro_export]
#[doc(hidden)]
macro_rules! request_methods {
    ($( $(#[$doc:meta])* $name:ident = $method:literal, $params:ty => $result:ty; )*) => {
        $(
            $(#[$doc])*
            #[derive(Debug, Clone, Copy, PartialEq, Eq)]
            pub struct $name;
            impl $crate::method::RequestMethod for $name {
                const METHOD: &'static str = $method;
                type Params = $params;
                type Result = $result;
            }
        )*
    };
}

/// Declare marker types for notification methods.
#[macro_export]
#[doc(hidden)]
macro_rules! notification_methods {
    ($( $(#[$doc:meta])* $name:ident = $method:literal, $params:ty; )*) => {
        $(
            $(#[$doc])*
            #[derive(Debug, Clone, Copy, PartialEq, Eq)]
            pub struct $name;
            impl $crate::method::NotificationMethod for $name {
                const METHOD: &'static str = $method;
                type Params = $params;
            }
        )*
    };
}
