//! Builders for what scripted servers send: replies, notifications, requests, and the results
//! of the handshake of each era.

use mcp_protocol::{ErrorCode, ErrorObject, Message, Notification, Request, RequestId, Response};
use serde_json::{Value, json};

/// A scripted answer: a result or an error.
pub type Reply = Result<Value, ErrorObject>;

/// The revision a legacy-era [`initialize_result`] answers with.
pub const LEGACY_REVISION: &str = "2025-11-25";

/// The revision a modern-era [`discover_result`] offers.
pub const MODERN_REVISION: &str = "2026-07-28";

/// The response to request `id`: its result, or its error.
pub fn response(id: &RequestId, reply: Reply) -> Message {
    match reply {
        Ok(result) => Message::Response(Response::result(id.clone(), raw(&result))),
        Err(error) => Message::Response(Response::error(Some(id.clone()), error)),
    }
}

/// A notification of `method` with `params` (`Value::Null`: without params).
pub fn notification(method: &str, params: Value) -> Message {
    let params = (!params.is_null()).then(|| raw(&params));
    Message::Notification(Notification { method: method.to_owned(), params })
}

/// A request of `method` with `params` (`Value::Null`: without params).
pub fn request(id: RequestId, method: &str, params: Value) -> Message {
    let params = (!params.is_null()).then(|| raw(&params));
    Message::Request(Request { id, method: method.to_owned(), params })
}

/// The params of `request`, decoded (`Value::Null` when it has none or they are not JSON).
pub fn params_of(request: &Request) -> Value {
    request.params.as_ref().and_then(|p| serde_json::from_str(p.get()).ok()).unwrap_or(Value::Null)
}

/// The result of a legacy `initialize`: revision [`LEGACY_REVISION`], the server `name` and
/// `capabilities`.
pub fn initialize_result(name: &str, capabilities: Value) -> Value {
    json!({"protocolVersion": LEGACY_REVISION, "capabilities": capabilities,
        "serverInfo": {"name": name, "version": "1"}})
}

/// The result of a modern `server/discover`: revision [`MODERN_REVISION`], `capabilities`, and
/// the server `name` in `_meta`.
pub fn discover_result(name: &str, capabilities: Value) -> Value {
    json!({"supportedVersions": [MODERN_REVISION], "capabilities": capabilities, "resultType": "complete",
        "_meta": {"io.modelcontextprotocol/serverInfo": {"name": name, "version": "1"}}})
}

/// A complete `tools/call` result of one text block.
pub fn text_result(text: &str) -> Value {
    json!({"content": [{"type": "text", "text": text}], "resultType": "complete"})
}

/// The error of a method the server does not have (-32601), naming it.
pub fn method_not_found(method: &str) -> ErrorObject {
    ErrorObject::new(ErrorCode::METHOD_NOT_FOUND, format!("no {method}"))
}

fn raw(value: &Value) -> mcp_protocol::RawJson {
    // A `Value` always serialises.
    mcp_protocol::to_raw(value).expect("a JSON value serialises")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replies_and_notifications_are_well_formed() {
        let id = RequestId::Number(7);
        let ok = mcp_protocol::codec::encode_line(&response(&id, Ok(json!({"x": 1}))));
        assert_eq!(String::from_utf8(ok).unwrap(), "{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{\"x\":1}}\n");
        let Message::Response(err) = response(&id, Err(method_not_found("nope"))) else { panic!() };
        let err = err.into_result().unwrap_err();
        assert_eq!((err.code, err.message.as_str()), (ErrorCode::METHOD_NOT_FOUND, "no nope"));
        let Message::Notification(n) = notification("notifications/x", Value::Null) else { panic!() };
        assert!(n.params.is_none(), "null params are left out");
        let Message::Request(r) = request(RequestId::from(3), "ping", json!({"a": [1]})) else { panic!() };
        assert_eq!(params_of(&r), json!({"a": [1]}));
        assert_eq!(params_of(&Request { params: None, ..r }), Value::Null);
    }

    #[test]
    fn handshake_results_decode_as_their_types() {
        use mcp_protocol::types::discover::DiscoverResult;
        use mcp_protocol::types::lifecycle::InitializeResult;
        let init: InitializeResult = serde_json::from_value(initialize_result("s", json!({"tools": {}}))).unwrap();
        assert_eq!((init.protocol_version.as_str(), init.server_info.name.as_str()), (LEGACY_REVISION, "s"));
        let discover: DiscoverResult = serde_json::from_value(discover_result("m", json!({}))).unwrap();
        assert_eq!(discover.server_info().unwrap().name, "m");
        assert_eq!(discover.supported_versions, [MODERN_REVISION]);
    }
}
