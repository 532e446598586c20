//! Error responses built with our `ErrorObject` and the typed error `data` of 2025-11-25 and
//! 2026-07-28, against the schema's error definitions.

use mcp_protocol::jsonrpc::{ErrorCode, ErrorObject, Message, RequestId};
use mcp_protocol::types::discover::{
    HeaderMismatchData, MissingRequiredClientCapabilityData, UnsupportedProtocolVersionData,
};
use mcp_protocol::types::elicitation::{ElicitParams, UrlElicitationRequiredData};
use serde::Serialize;
use serde_json::{Value, json};

use super::instances::{elicitation, lifecycle};
use super::spec::Spec;

fn data<T: Serialize>(value: &T) -> Value {
    serde_json::to_value(value).expect("error data serialises")
}

fn response(error: ErrorObject) -> Value {
    serde_json::to_value(Message::error_response(Some(RequestId::from(1)), error)).expect("responses serialise")
}

/// The error responses of `spec`'s revision: `(definition, instance)`; the standard errors of
/// 2026-07-28 are definitions of the `error` member alone.
fn cases(spec: &Spec) -> Vec<(&'static str, Value)> {
    let rev = spec.rev;
    let plain = response(ErrorObject::new(ErrorCode::METHOD_NOT_FOUND, "Method not found"));
    let with_data = response(ErrorObject::new(ErrorCode::INTERNAL_ERROR, "boom").with_data(json!({"detail": "x"})));
    let mut cases = vec![
        ("JSONRPCMessage", plain.clone()),
        ("JSONRPCError", plain.clone()),
        ("JSONRPCErrorResponse", plain),
        ("JSONRPCError", with_data.clone()),
        ("JSONRPCErrorResponse", with_data),
    ];
    for (definition, code) in [
        ("ParseError", ErrorCode::PARSE_ERROR),
        ("InvalidRequestError", ErrorCode::INVALID_REQUEST),
        ("MethodNotFoundError", ErrorCode::METHOD_NOT_FOUND),
        ("InvalidParamsError", ErrorCode::INVALID_PARAMS),
        ("InternalError", ErrorCode::INTERNAL_ERROR),
    ] {
        cases.push((definition, data(&ErrorObject::new(code, definition).with_data(json!({"detail": "x"})))));
    }
    let unsupported = UnsupportedProtocolVersionData {
        supported: vec![rev.as_str().to_owned()],
        requested: Some("2099-01-01".to_owned()),
        ..Default::default()
    };
    let missing = MissingRequiredClientCapabilityData {
        required_capabilities: lifecycle::client_capabilities(rev, true),
        ..Default::default()
    };
    let header = HeaderMismatchData { extra: json!({"header": "Mcp-Method"}).as_object().cloned().unwrap_or_default() };
    let urls = elicitation::elicit_params(rev).into_iter().filter_map(|v| match v.value {
        Some(ElicitParams::Url(url)) => Some(url),
        _ => None,
    });
    let elicitations = UrlElicitationRequiredData { elicitations: urls.collect(), ..Default::default() };
    let typed = [
        ("UnsupportedProtocolVersionError", ErrorCode::UNSUPPORTED_PROTOCOL_VERSION, data(&unsupported)),
        ("MissingRequiredClientCapabilityError", ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY, data(&missing)),
        ("HeaderMismatchError", ErrorCode::HEADER_MISMATCH, data(&header)),
        ("URLElicitationRequiredError", ErrorCode::URL_ELICITATION_REQUIRED, data(&elicitations)),
    ];
    for (definition, code, data) in typed {
        cases.push((definition, response(ErrorObject::new(code, definition).with_data(data))));
    }
    cases.retain(|(definition, _)| spec.has(definition));
    cases
}

/// Validate every error response the revision defines; returns the problems, and how many
/// instances it checked.
pub fn check(spec: &Spec) -> (Vec<String>, usize) {
    let cases = cases(spec);
    let mut problems = Vec::new();
    for (definition, instance) in &cases {
        let pointer = spec.def_ref(definition);
        let errors = spec.validate(&pointer, instance);
        if !errors.is_empty() {
            problems.push(format!(
                "[{}] {definition}: invalid against {pointer}:\n    {}\n    instance: {instance}",
                spec.rev,
                errors.join("\n    ")
            ));
        }
        let undeclared = spec.fields(&pointer, instance).undeclared;
        if !undeclared.is_empty() {
            problems.push(format!("[{}] {definition}: members the schema does not declare: {undeclared:?}", spec.rev));
        }
    }
    (problems, cases.len())
}
