//! Headers of the modern era (2026-07-28): a stateless request names its revision in
//! `params._meta["io.modelcontextprotocol/protocolVersion"]`, and the transport mirrors it in
//! `MCP-Protocol-Version`, with `Mcp-Method` and, for calls on one named thing, `Mcp-Name`
//! (the tool or prompt name, or the resource URI), as the official SDKs do, and the
//! `Mcp-Param-*` headers of annotated tool parameters.

use std::borrow::Cow;

use http::header::{HeaderName, HeaderValue};
use mcp_protocol::method::target_member;
use mcp_protocol::types::meta::{JsonObject, Meta};
use mcp_protocol::{Message, ProtocolVersion};
use serde_json::value::RawValue;

use super::params::ToolHeaders;
use crate::SendHints;

/// The `_meta` key of a message's revision.
const META_VERSION_KEY: &str = Meta::PROTOCOL_VERSION;
#[cfg(test)]
const META_VERSION: &str = META_VERSION_KEY;
const METHOD: HeaderName = HeaderName::from_static("mcp-method");
const NAME: HeaderName = HeaderName::from_static("mcp-name");

/// The modern-era headers of a message: its revision, for `MCP-Protocol-Version`, and the
/// headers beside it (`Mcp-Method`, `Mcp-Name`, `Mcp-Param-*`).
pub(crate) type Modern = (ProtocolVersion, Vec<(HeaderName, HeaderValue)>);

/// The modern-era headers of `message`, read from its params: the revision for
/// `MCP-Protocol-Version`, and the `Mcp-Method` and `Mcp-Name` headers, plus the `Mcp-Param-*`
/// headers of a `tools/call` whose tool annotates parameters (see [`super::params`]). `None` for
/// a legacy-era message (no revision in `_meta`). A value that cannot be a header value is left
/// out. A sender that knows these facts gives them instead ([`hinted`]).
pub(crate) fn headers(message: &Message, tools: &ToolHeaders) -> Option<Modern> {
    let (method, params) = match message {
        Message::Request(r) => (r.method.as_str(), r.params.as_ref()?),
        Message::Notification(n) => (n.method.as_str(), n.params.as_ref()?),
        Message::Response(_) => return None,
    };
    // Only the members needed are parsed, and nothing is copied that is not used: `_meta` gives
    // only its version, and the tool arguments stay raw unless the tool annotates parameters.
    #[derive(serde::Deserialize)]
    struct MetaVersion<'a> {
        #[serde(rename = "io.modelcontextprotocol/protocolVersion", borrow)]
        version: Option<Cow<'a, str>>,
    }
    #[derive(serde::Deserialize)]
    struct Params<'a> {
        #[serde(rename = "_meta", borrow)]
        meta: Option<MetaVersion<'a>>,
        #[serde(borrow)]
        name: Option<&'a RawValue>,
        #[serde(borrow)]
        uri: Option<&'a RawValue>,
        #[serde(rename = "taskId", borrow)]
        task_id: Option<&'a RawValue>,
        #[serde(borrow)]
        arguments: Option<&'a RawValue>,
    }
    // A legacy-era message does not name a revision: one whose text holds neither the key nor
    // an escape (which could spell it otherwise) is told by a substring search, not a parse.
    // The searcher is built once: building it costs more than a search.
    static KEY: std::sync::LazyLock<memchr::memmem::Finder<'static>> =
        std::sync::LazyLock::new(|| memchr::memmem::Finder::new(META_VERSION_KEY));
    let text = params.get().as_bytes();
    if KEY.find(text).is_none() && memchr::memchr(b'\\', text).is_none() {
        return None;
    }
    let params: Params<'_> = serde_json::from_str(params.get()).ok()?;
    let version = ProtocolVersion::parse(&params.meta?.version?);
    let name = match target_member(method) {
        Some("name") => params.name,
        Some("uri") => params.uri,
        Some("taskId") => params.task_id,
        _ => None,
    };
    // A member of another type (a number for `name`) names nothing: no header, and the server
    // judges the request.
    let name = name.and_then(string);
    let arguments = || params.arguments.and_then(|a| serde_json::from_str(a.get()).ok());
    Some((version, extra(method, name.as_deref(), arguments, tools)))
}

/// The modern-era headers of `message` from what its sender knows of it ([`SendHints`]): the
/// message is read only for the arguments of a call whose tool annotates parameters.
pub(crate) fn hinted(message: &Message, hints: SendHints, tools: &ToolHeaders) -> Option<Modern> {
    let version = hints.revision?;
    let (method, params) = match message {
        Message::Request(r) => (r.method.as_str(), r.params.as_ref()),
        Message::Notification(n) => (n.method.as_str(), n.params.as_ref()),
        Message::Response(_) => return None,
    };
    let arguments = || {
        #[derive(serde::Deserialize)]
        struct Arguments {
            arguments: Option<JsonObject>,
        }
        serde_json::from_str::<Arguments>(params?.get()).ok()?.arguments
    };
    Some((version, extra(method, hints.target.as_deref(), arguments, tools)))
}

/// `Mcp-Method`, `Mcp-Name` (when the request names what it acts on) and the `Mcp-Param-*`
/// headers of a call whose tool annotates parameters (`arguments` gives the call's arguments).
fn extra(
    method: &str,
    name: Option<&str>,
    arguments: impl FnOnce() -> Option<JsonObject>,
    tools: &ToolHeaders,
) -> Vec<(HeaderName, HeaderValue)> {
    let mut extra = Vec::with_capacity(2);
    if let Some(v) = method_value(method) {
        extra.push((METHOD, v));
    }
    if let Some(v) = name.and_then(|n| HeaderValue::from_str(n).ok()) {
        extra.push((NAME, v));
    }
    if method == "tools/call"
        && let Some(tool) = name
        && tools.annotates(tool)
    {
        extra.extend(tools.for_call(tool, arguments().as_ref()));
    }
    extra
}

/// The methods whose `Mcp-Method` value is static rather than copied for each request.
const COMMON_METHODS: [&str; 8] = [
    "tools/call",
    "tools/list",
    "resources/read",
    "resources/list",
    "prompts/get",
    "prompts/list",
    "tasks/get",
    "notifications/cancelled",
];

/// The `Mcp-Method` value of `method`; `None` when it cannot be a header value.
fn method_value(method: &str) -> Option<HeaderValue> {
    match COMMON_METHODS.iter().find(|common| **common == method) {
        Some(common) => Some(HeaderValue::from_static(common)),
        None => HeaderValue::from_str(method).ok(),
    }
}

/// The string `raw` holds, borrowed unless it has escapes; `None` for any other JSON value.
fn string(raw: &RawValue) -> Option<Cow<'_, str>> {
    match serde_json::from_str::<&str>(raw.get()) {
        Ok(s) => Some(Cow::Borrowed(s)),
        Err(_) => serde_json::from_str::<String>(raw.get()).ok().map(Cow::Owned),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcp_protocol::RequestId;
    use serde_json::json;

    #[test]
    fn modern_requests_get_method_and_name_headers() {
        let meta = json!({META_VERSION: "2026-07-28"});
        let call =
            Message::request(RequestId::Number(1), "tools/call", Some(&json!({"name": "add", "_meta": meta}))).unwrap();
        let (version, extra) = headers(&call, &ToolHeaders::default()).unwrap();
        assert_eq!(version, ProtocolVersion::V2026_07_28);
        assert_eq!(extra, [(METHOD, HeaderValue::from_static("tools/call")), (NAME, HeaderValue::from_static("add"))]);
        let read = Message::request(
            RequestId::Number(2),
            "resources/read",
            Some(&json!({"uri": "demo://hello", "_meta": meta})),
        )
        .unwrap();
        assert_eq!(headers(&read, &ToolHeaders::default()).unwrap().1[1].1, "demo://hello");
        let legacy = Message::request(RequestId::Number(3), "tools/call", Some(&json!({"name": "add"}))).unwrap();
        assert!(headers(&legacy, &ToolHeaders::default()).is_none());
    }

    #[test]
    fn legacy_messages_have_none_even_when_they_mention_the_key() {
        let tools = ToolHeaders::default();
        let plain = Message::request(RequestId::Number(1), "tools/call", Some(&json!({"name": "echo"}))).unwrap();
        assert_eq!(headers(&plain, &tools), None);
        let text = format!("{META_VERSION} is the key, \\/ an escape");
        let args = json!({"name": "echo", "arguments": {"text": text, "_meta": {META_VERSION: "2026-07-28"}}});
        let mentions = Message::request(RequestId::Number(2), "tools/call", Some(&args)).unwrap();
        assert_eq!(headers(&mentions, &tools), None, "the revision of the arguments' own _meta is not the message's");
        // The key spelt with an escaped slash names the revision all the same.
        let escaped = mcp_protocol::RawJson::from_string(
            r#"{"_meta":{"io.modelcontextprotocol\/protocolVersion":"2026-07-28"},"name":"echo"}"#.into(),
        )
        .unwrap();
        let modern = Message::Request(mcp_protocol::Request {
            id: RequestId::Number(3),
            method: "tools/call".into(),
            params: Some(escaped),
        });
        let (version, extra) = headers(&modern, &tools).expect("a modern message");
        assert_eq!(version, ProtocolVersion::V2026_07_28);
        assert!(extra.iter().any(|(name, value)| *name == NAME && value == "echo"), "{extra:?}");
    }

    #[test]
    fn common_methods_have_static_values_and_others_are_copied() {
        let first = method_value("tools/call").unwrap();
        assert_eq!(first, "tools/call");
        assert_eq!(first.as_bytes().as_ptr(), method_value("tools/call").unwrap().as_bytes().as_ptr(), "shared");
        assert_eq!(method_value("x-vendor/thing").unwrap(), "x-vendor/thing");
        assert_eq!(method_value("bad\rmethod"), None);
    }

    #[test]
    fn names_with_escapes_are_decoded_and_other_types_name_nothing() {
        let meta = json!({META_VERSION: "2026-07-28"});
        let escaped = mcp_protocol::RawJson::from_string(
            r#"{"name":"a\u0064d","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}"#.into(),
        )
        .unwrap();
        let call = Message::Request(mcp_protocol::Request {
            id: RequestId::Number(1),
            method: "tools/call".into(),
            params: Some(escaped),
        });
        assert_eq!(headers(&call, &ToolHeaders::default()).unwrap().1[1], (NAME, HeaderValue::from_static("add")));
        let numbered =
            Message::request(RequestId::Number(2), "tools/call", Some(&json!({"name": 7, "_meta": meta}))).unwrap();
        let (version, extra) = headers(&numbered, &ToolHeaders::default()).unwrap();
        assert_eq!((version.as_str(), extra.len()), ("2026-07-28", 1), "only Mcp-Method: {extra:?}");
    }

    #[test]
    fn hints_give_the_headers_a_parse_gives() {
        let mut tools = ToolHeaders::default();
        let list = Message::request(RequestId::Number(1), "tools/list", Some(&json!({}))).unwrap();
        tools.sent(&list);
        let listed = json!({"tools": [{"name": "t", "inputSchema": {"type": "object", "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"}}}}]});
        tools.received(&Message::response(RequestId::Number(1), &listed).unwrap());
        let meta = json!({META_VERSION: "2026-07-28", "clientInfo": {"name": "c", "version": "1"}});
        let cases = [
            ("tools/call", json!({"name": "t", "arguments": {"region": "eu"}, "_meta": meta}), Some("t")),
            ("tools/call", json!({"name": "echo", "arguments": {"region": "eu"}, "_meta": meta}), Some("echo")),
            ("resources/read", json!({"uri": "demo://a", "_meta": meta}), Some("demo://a")),
            ("tasks/get", json!({"taskId": "786512e2", "_meta": meta}), Some("786512e2")),
            ("tools/list", json!({"_meta": meta}), None),
        ];
        for (id, (method, params, target)) in (10..).zip(cases) {
            let message = Message::request(RequestId::Number(id), method, Some(&params)).unwrap();
            let hints = SendHints { revision: Some(ProtocolVersion::V2026_07_28), target: target.map(str::to_owned) };
            let parsed = headers(&message, &tools).expect("modern");
            assert_eq!(hinted(&message, hints, &tools), Some(parsed.clone()), "{method}");
            let names: Vec<_> = parsed.1.iter().map(|(name, _)| name.as_str()).collect();
            let expected: &[&str] = match (method, target) {
                (_, Some("t")) => &["mcp-method", "mcp-name", "mcp-param-region"],
                (_, Some(_)) => &["mcp-method", "mcp-name"],
                _ => &["mcp-method"],
            };
            assert_eq!(names, expected, "{method}");
        }
        // A message its sender says names no revision is of the legacy era: no headers, even if
        // its text (here an argument) mentions the key.
        let args = json!({"name": "t", "arguments": {"region": "eu", "_meta": {META_VERSION: "2026-07-28"}}});
        let legacy = Message::request(RequestId::Number(1), "tools/call", Some(&args)).unwrap();
        assert_eq!(hinted(&legacy, SendHints { revision: None, target: Some("t".into()) }, &tools), None);
    }
}
