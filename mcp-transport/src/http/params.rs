//! Custom headers from tool parameters (2026-07-28, SEP-2243): a top-level property of a tool's
//! input schema annotated `"x-mcp-header": "Region"` is mirrored into an `Mcp-Param-Region`
//! header on that tool's `tools/call`, so that gateways can route on it without reading bodies.
//!
//! - [`tool_param_headers`] reads and checks a tool's annotations. A tool whose annotations are
//!   invalid must not be used at all; the connection drops it from the tool list.
//! - `ToolHeaders` is what the transport learnt from the `tools/list` results it carried, and
//!   gives the headers of a `tools/call`.
//! - Values: strings as they are when they are visible ASCII without surrounding whitespace,
//!   otherwise `=?base64?<UTF-8, Base64>?=`; integers in their JSON form; booleans `true` or
//!   `false`. A null or absent argument sends no header.

use std::borrow::Cow;
use std::collections::{HashMap, VecDeque};

use http::header::{HeaderName, HeaderValue};
use mcp_protocol::{Message, RequestId, ResponsePayload};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

/// The annotation's name in a property schema.
pub const ANNOTATION: &str = "x-mcp-header";

/// The prefix of the mirrored headers.
pub const HEADER_PREFIX: &str = "Mcp-Param-";

/// Most `tools/list` requests awaited at once, and most tools remembered (bounds on peer input).
const MAX_PENDING_LISTS: usize = 64;
const MAX_TOOLS: usize = 10_000;

/// One annotated property: the argument `property` goes into `Mcp-Param-<header>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParamHeader {
    /// The property (argument) name.
    pub property: String,
    /// The annotation's value: the header name without its `Mcp-Param-` prefix.
    pub header: String,
}

/// The `x-mcp-header` annotations of a tool's input schema, in property order. `Err` says why
/// they are invalid: an annotation that is not a non-empty token (RFC 9110 `tchar`s only), one on
/// a property that is not a string, integer or boolean, or two with the same name
/// (case-insensitively).
pub fn tool_param_headers(input_schema: &Map<String, Value>) -> Result<Vec<ParamHeader>, String> {
    let Some(properties) = member(input_schema, "properties").and_then(Value::as_object) else {
        return Ok(Vec::new());
    };
    let mut found: Vec<ParamHeader> = Vec::new();
    for (property, schema) in properties {
        let Some(annotation) = schema.as_object().and_then(|s| member(s, ANNOTATION)) else { continue };
        let Some(header) = annotation.as_str() else {
            return Err(format!("{ANNOTATION} of property {property:?} is not a string: {annotation}"));
        };
        if header.is_empty() {
            return Err(format!("{ANNOTATION} of property {property:?} is empty"));
        }
        if let Some(bad) = header.chars().find(|c| !is_token_char(*c)) {
            return Err(format!(
                "{ANNOTATION} {header:?} of property {property:?} holds {bad:?}, not allowed in a header name"
            ));
        }
        if !is_primitive(schema) {
            return Err(format!(
                "{ANNOTATION} {header:?} is on property {property:?}, which is not a primitive type (string, integer, boolean)"
            ));
        }
        if let Some(other) = found.iter().find(|f| f.header.eq_ignore_ascii_case(header)) {
            return Err(format!("{ANNOTATION} {header:?} is on both {:?} and {property:?}", other.property));
        }
        found.push(ParamHeader { property: property.clone(), header: header.to_owned() });
    }
    Ok(found)
}

/// The member `key` of a schema object. Schema objects hold a handful of members: comparing
/// names (their lengths first) is cheaper than hashing the key, and every listed tool of the
/// modern era goes through here.
fn member<'a>(object: &'a Map<String, Value>, key: &str) -> Option<&'a Value> {
    const SCAN: usize = 16;
    if object.len() > SCAN {
        return object.get(key);
    }
    object.iter().find(|(name, _)| name.as_str() == key).map(|(_, value)| value)
}

/// RFC 9110 `tchar`.
fn is_token_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c)
}

/// Whether a property schema is of a type that may be mirrored: string, integer or boolean (not
/// `number`: a float's text form is not stable across implementations). A schema without `type`
/// cannot be judged and is accepted; only primitive values are ever mirrored.
fn is_primitive(schema: &Value) -> bool {
    const PRIMITIVE: [&str; 3] = ["string", "integer", "boolean"];
    match schema.get("type") {
        None => true,
        Some(Value::String(t)) => PRIMITIVE.contains(&t.as_str()),
        Some(Value::Array(types)) => {
            let named: Vec<&str> = types.iter().filter_map(Value::as_str).filter(|t| *t != "null").collect();
            !named.is_empty() && named.len() + 1 >= types.len() && named.iter().all(|t| PRIMITIVE.contains(t))
        }
        Some(_) => false,
    }
}

/// The header value of an argument; `None` for null and for values that are not primitive.
pub fn encode_param_value(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => {
            let plain = s.bytes().all(|b| (0x20..=0x7e).contains(&b)) && s.trim() == s;
            Some(if plain { s.clone() } else { format!("=?base64?{}?=", base64(s.as_bytes())) })
        }
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        Value::Null | Value::Array(_) | Value::Object(_) => None,
    }
}

/// Standard Base64 with padding.
fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let n = chunk.iter().enumerate().fold(0u32, |n, (i, b)| n | (u32::from(*b) << (16 - 8 * i)));
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(char::from(ALPHABET[(n >> (18 - 6 * i)) as usize & 63]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// The annotations of the tools the server listed, learnt from the `tools/list` results this
/// transport carried.
#[derive(Default)]
pub(crate) struct ToolHeaders {
    /// `tools/list` requests awaiting their answer, oldest first.
    pending: VecDeque<RequestId>,
    /// Valid annotations by tool name (tools without any are not kept).
    tools: HashMap<String, Vec<ParamHeader>>,
}

impl ToolHeaders {
    /// Note an outgoing message: a `tools/list` request's answer will be read.
    pub(crate) fn sent(&mut self, message: &Message) {
        if let Message::Request(request) = message
            && request.method == "tools/list"
        {
            if self.pending.len() == MAX_PENDING_LISTS {
                self.pending.pop_front();
            }
            self.pending.push_back(request.id.clone());
        }
    }

    /// Learn from an incoming message, if it answers a `tools/list`.
    ///
    /// Only what can hold an annotation is parsed: a page whose text has neither the annotation's
    /// name nor an escape (behind which it could hide) has no annotated tool, and neither has a
    /// tool whose own text has neither; of those, only the names are read, and only when some
    /// tool is remembered as annotated (a tool listed again without its annotations loses them).
    pub(crate) fn received(&mut self, message: &Message) {
        let Message::Response(response) = message else { return };
        let Some(position) = self.pending.iter().position(|id| response.id.as_ref() == Some(id)) else { return };
        self.pending.remove(position);
        let ResponsePayload::Result(raw) = &response.payload else { return };
        // memchr's searchers (SIMD), a page being tens of kilobytes.
        let annotation = memchr::memmem::Finder::new(ANNOTATION);
        let may_annotate =
            |text: &str| memchr::memchr(b'\\', text.as_bytes()).is_some() || annotation.find(text.as_bytes()).is_some();
        if self.tools.is_empty() && !may_annotate(raw.get()) {
            return;
        }
        #[derive(serde::Deserialize)]
        struct Page<'a> {
            #[serde(default, borrow)]
            tools: Vec<&'a RawValue>,
        }
        #[derive(serde::Deserialize)]
        struct Named<'a> {
            #[serde(borrow)]
            name: Cow<'a, str>,
        }
        #[derive(serde::Deserialize)]
        struct Listed {
            name: String,
            #[serde(rename = "inputSchema")]
            input_schema: Map<String, Value>,
        }
        let Ok(page) = serde_json::from_str::<Page<'_>>(raw.get()) else { return };
        for tool in page.tools {
            if !may_annotate(tool.get()) {
                if !self.tools.is_empty()
                    && let Ok(named) = serde_json::from_str::<Named<'_>>(tool.get())
                {
                    self.tools.remove(named.name.as_ref());
                }
                continue;
            }
            let Ok(tool) = serde_json::from_str::<Listed>(tool.get()) else { continue };
            match tool_param_headers(&tool.input_schema) {
                Ok(headers) if !headers.is_empty() => {
                    if self.tools.len() < MAX_TOOLS || self.tools.contains_key(&tool.name) {
                        self.tools.insert(tool.name, headers);
                    }
                }
                _ => {
                    self.tools.remove(&tool.name);
                }
            }
        }
    }

    /// Whether the tool `name` annotates parameters (its calls may get `Mcp-Param-*` headers).
    pub(crate) fn annotates(&self, name: &str) -> bool {
        self.tools.contains_key(name)
    }

    /// The `Mcp-Param-*` headers of a `tools/call` with these params (`name`, `arguments`).
    pub(crate) fn for_call(
        &self,
        name: &str,
        arguments: Option<&Map<String, Value>>,
    ) -> Vec<(HeaderName, HeaderValue)> {
        let (Some(headers), Some(arguments)) = (self.tools.get(name), arguments) else { return Vec::new() };
        headers
            .iter()
            .filter_map(|h| {
                let value = encode_param_value(arguments.get(&h.property)?)?;
                let name = HeaderName::from_bytes(format!("{HEADER_PREFIX}{}", h.header).as_bytes()).ok()?;
                Some((name, HeaderValue::from_str(&value).ok()?))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema(value: Value) -> Map<String, Value> {
        let Value::Object(map) = value else { panic!("not an object") };
        map
    }

    #[test]
    fn annotations_are_read_and_checked() {
        let valid = schema(json!({"type": "object", "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "n": {"type": ["integer", "null"], "x-mcp-header": "N"},
            "plain": {"type": "object"}
        }}));
        let headers = tool_param_headers(&valid).unwrap();
        assert_eq!(
            headers.iter().map(|h| (h.property.as_str(), h.header.as_str())).collect::<Vec<_>>(),
            [("region", "Region"), ("n", "N")]
        );
        for (invalid, why) in [
            (json!({"v": {"type": "string", "x-mcp-header": ""}}), "empty"),
            (json!({"v": {"type": "object", "x-mcp-header": "Data"}}), "not a primitive"),
            (json!({"v": {"type": "array", "x-mcp-header": "Items"}}), "not a primitive"),
            (json!({"v": {"type": "null", "x-mcp-header": "Nil"}}), "not a primitive"),
            (json!({"v": {"type": "number", "x-mcp-header": "Score"}}), "not a primitive"),
            (json!({"v": {"type": "string", "x-mcp-header": 7}}), "not a string"),
            (json!({"v": {"type": "string", "x-mcp-header": "My Region"}}), "not allowed"),
            (json!({"v": {"type": "string", "x-mcp-header": "Region:Primary"}}), "not allowed"),
            (json!({"v": {"type": "string", "x-mcp-header": "Région"}}), "not allowed"),
            (json!({"v": {"type": "string", "x-mcp-header": "Region\t1"}}), "not allowed"),
            (
                json!({"a": {"type": "string", "x-mcp-header": "MyField"}, "b": {"type": "string", "x-mcp-header": "myfield"}}),
                "on both",
            ),
        ] {
            let error = tool_param_headers(&schema(json!({"type": "object", "properties": invalid}))).unwrap_err();
            assert!(error.contains(why), "{error}");
        }
    }

    #[test]
    fn values_are_encoded() {
        assert_eq!(encode_param_value(&json!("us-west1")).unwrap(), "us-west1");
        assert_eq!(encode_param_value(&json!("us west 1")).unwrap(), "us west 1");
        assert_eq!(encode_param_value(&json!("")).unwrap(), "");
        assert_eq!(encode_param_value(&json!(" padded ")).unwrap(), "=?base64?IHBhZGRlZCA=?=");
        assert_eq!(encode_param_value(&json!("Hello, 世界")).unwrap(), "=?base64?SGVsbG8sIOS4lueVjA==?=");
        assert_eq!(encode_param_value(&json!("line1\nline2")).unwrap(), "=?base64?bGluZTEKbGluZTI=?=");
        assert_eq!(encode_param_value(&json!(42)).unwrap(), "42");
        assert_eq!(encode_param_value(&json!(2.5)).unwrap(), "2.5");
        assert_eq!(encode_param_value(&json!(false)).unwrap(), "false");
        assert_eq!(encode_param_value(&Value::Null), None);
        assert_eq!(encode_param_value(&json!({"a": 1})), None);
    }

    #[test]
    fn headers_come_from_the_listed_tools() {
        let mut tools = ToolHeaders::default();
        let list = Message::request(RequestId::Number(1), "tools/list", Some(&json!({}))).unwrap();
        tools.sent(&list);
        let listed = json!({"tools": [
            {"name": "t", "inputSchema": {"type": "object", "properties": {
                "region": {"type": "string", "x-mcp-header": "Region"},
                "verbose": {"type": "boolean", "x-mcp-header": "Verbose"},
                "query": {"type": "string"}
            }}},
            {"name": "bad", "inputSchema": {"type": "object", "properties": {"v": {"type": "object", "x-mcp-header": "V"}}}}
        ]});
        tools.received(&Message::response(RequestId::Number(2), &listed).unwrap());
        assert!(tools.tools.is_empty(), "an answer to another request is not read");
        tools.received(&Message::response(RequestId::Number(1), &listed).unwrap());
        let arguments = schema(json!({"region": "eu", "verbose": null, "query": "q"}));
        let headers = tools.for_call("t", Some(&arguments));
        assert_eq!(headers.len(), 1);
        assert_eq!(headers[0].0, "mcp-param-region");
        assert_eq!(headers[0].1, "eu");
        assert!(tools.for_call("bad", Some(&arguments)).is_empty());
        assert!(tools.for_call("unknown", Some(&arguments)).is_empty());
    }

    #[test]
    fn a_tool_listed_again_without_annotations_loses_them_and_unlisted_tools_keep_theirs() {
        let mut tools = ToolHeaders::default();
        let mut id = 0;
        // The page as text, so that escapes reach the transport as a server wrote them.
        let mut list = |tools: &mut ToolHeaders, page: String| {
            id += 1;
            tools.sent(&Message::request(RequestId::Number(id), "tools/list", Some(&json!({}))).unwrap());
            let page = mcp_protocol::RawJson::from_string(page).unwrap();
            tools.received(&Message::Response(mcp_protocol::Response::result(RequestId::Number(id), page)));
        };
        let annotated = |name: &str| {
            json!({"name": name, "inputSchema": {"type": "object", "properties": {
                "region": {"type": "string", "x-mcp-header": "Region"}
            }}})
        };
        let plain = |name: &str| json!({"name": name, "inputSchema": {"type": "object"}});
        list(&mut tools, json!({"tools": [annotated("a"), annotated("b")]}).to_string());
        assert!(tools.annotates("a") && tools.annotates("b"));
        // A page with no annotation anywhere: only the tools on it lose theirs.
        list(&mut tools, json!({"tools": [plain("a"), plain("c")]}).to_string());
        assert!(!tools.annotates("a") && tools.annotates("b") && !tools.annotates("c"));
        // An escaped name (`x\u002dmcp-header`) is still the annotation, and an escaped tool name
        // is still that tool's.
        let escaped = r#"{"tools": [{"name": "d", "inputSchema": {"type": "object", "properties":
            {"r": {"type": "string", "x\u002dmcp-header": "R"}}}}, {"name": "\u0062", "inputSchema": {}}]}"#;
        assert!(!escaped.contains(ANNOTATION));
        list(&mut tools, escaped.to_owned());
        assert!(tools.annotates("d"), "escaped annotation read");
        assert!(!tools.annotates("b"), "`b` listed again (its name escaped) without annotations");
    }
}
