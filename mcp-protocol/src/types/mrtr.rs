//! Multi round-trip requests (2026-07-28): a server answers `tools/call`, `prompts/get` or
//! `resources/read` with an `InputRequiredResult`; the client answers its input requests and
//! retries with `inputResponses` and the exact `requestState`.

use std::collections::BTreeMap;

use serde::de::{DeserializeOwned, IgnoredAny};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use super::common::{RequestParams, ResultType};
use super::elicitation::{ElicitParams, ElicitResult};
use super::meta::{JsonObject, Meta};
use super::roots::ListRootsResult;
use super::sampling::{CreateMessageParams, CreateMessageResult};
use super::tasks::CreateTaskResult;

/// One request the server needs the client to fulfil before it can complete: `{method, params}`.
///
/// The schema allows other members; some servers write the JSON-RPC envelope (`"jsonrpc":
/// "2.0"`, even an `id`) into each input request. Such members are ignored when decoding: the
/// request is typed from `method` and `params` alone, and encodes back without them (a client
/// never sends an input request back, it answers it by key).
// Transient values, a handful per result: boxing the large variants buys nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq)]
pub enum InputRequest {
    /// `sampling/createMessage`.
    CreateMessage(CreateMessageParams),
    /// `roots/list`; params are optional on the wire and absent ones stay absent.
    ListRoots(Option<RequestParams>),
    /// `elicitation/create`.
    Elicit(ElicitParams),
    /// A method this crate does not know, or a known method whose params do not decode; kept
    /// as it arrived.
    Unknown(Value),
}

impl InputRequest {
    /// The wire method name.
    pub fn method(&self) -> &str {
        match self {
            InputRequest::CreateMessage(_) => "sampling/createMessage",
            InputRequest::ListRoots(_) => "roots/list",
            InputRequest::Elicit(_) => "elicitation/create",
            InputRequest::Unknown(v) => v.get("method").and_then(Value::as_str).unwrap_or("unknown"),
        }
    }
}

#[derive(Serialize)]
struct WireRequest<'a, P> {
    method: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    params: Option<&'a P>,
}

impl Serialize for InputRequest {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            InputRequest::CreateMessage(p) => {
                WireRequest { method: "sampling/createMessage", params: Some(p) }.serialize(s)
            }
            InputRequest::ListRoots(p) => WireRequest { method: "roots/list", params: p.as_ref() }.serialize(s),
            InputRequest::Elicit(p) => WireRequest { method: "elicitation/create", params: Some(p) }.serialize(s),
            InputRequest::Unknown(v) => v.serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for InputRequest {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        let value = Value::deserialize(d)?;
        let Value::Object(map) = &value else {
            return Err(D::Error::custom("input request must be an object"));
        };
        if !matches!(map.get("method"), Some(Value::String(_))) {
            return Err(D::Error::custom("input request has no string \"method\""));
        }
        Ok(InputRequest::typed(&value).unwrap_or(InputRequest::Unknown(value)))
    }
}

impl InputRequest {
    /// The typed form of a known request with well-formed `params`; members besides `method`
    /// and `params` are ignored. A malformed request is not an error here: it stays
    /// [`InputRequest::Unknown`], so one bad input request does not make the whole result
    /// undecodable and the caller can still report it by key.
    fn typed(value: &Value) -> Option<InputRequest> {
        let map = value.as_object()?;
        let params = map.get("params");
        fn parse<T: DeserializeOwned>(params: Option<&Value>) -> Option<T> {
            T::deserialize(params?).ok()
        }
        Some(match map.get("method")?.as_str()? {
            "sampling/createMessage" => InputRequest::CreateMessage(parse(params)?),
            "elicitation/create" => InputRequest::Elicit(parse(params)?),
            "roots/list" => match params {
                None => InputRequest::ListRoots(None),
                p => InputRequest::ListRoots(Some(parse(p)?)),
            },
            _ => return None,
        })
    }
}

/// The server's input requests, keyed by an id the server chose.
pub type InputRequests = BTreeMap<String, InputRequest>;

/// The client's answer to one input request.
///
/// Decoding tries the shapes in order (a sampling result needs `role`, `content` and `model`, a
/// roots result `roots`, an elicitation result `action`); anything else is kept as a value.
// Transient values, a handful per retry: boxing the large variants buys nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum InputResponse {
    /// Answer to `sampling/createMessage`.
    CreateMessage(CreateMessageResult),
    /// Answer to `roots/list`.
    ListRoots(ListRootsResult),
    /// Answer to `elicitation/create`.
    Elicit(ElicitResult),
    /// Any other answer.
    Other(Value),
}

impl From<CreateMessageResult> for InputResponse {
    fn from(r: CreateMessageResult) -> Self {
        InputResponse::CreateMessage(r)
    }
}

impl From<ListRootsResult> for InputResponse {
    fn from(r: ListRootsResult) -> Self {
        InputResponse::ListRoots(r)
    }
}

impl From<ElicitResult> for InputResponse {
    fn from(r: ElicitResult) -> Self {
        InputResponse::Elicit(r)
    }
}

/// The client's answers, keyed by the ids of the input requests they answer.
pub type InputResponses = BTreeMap<String, InputResponse>;

/// The members a 2026-07-28 retry adds to the original request's params.
///
/// `tools/call`, `prompts/get` and `resources/read` params carry these members themselves; this
/// type is for requests that have no params type of their own.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InputResponseRequestParams {
    /// Answers to the input requests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_responses: Option<InputResponses>,
    /// The `requestState` of the input-required result, unchanged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_state: Option<String>,
    /// `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Members this crate does not model.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// A result that asks the client for input before the request can complete.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InputRequiredResult {
    /// Always `input_required` on the wire.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_type: Option<ResultType>,
    /// What the server needs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_requests: Option<InputRequests>,
    /// Opaque state to send back unchanged with the retry.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_state: Option<String>,
    /// `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Members this crate does not model.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// The answer to a request that may need input (2026-07-28) or run as a task (2025-11-25).
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome<T> {
    /// The request completed.
    Complete(T),
    /// The server needs input first. Boxed, as the task variants: these are the rare answers,
    /// and inline they would nearly double the size of every outcome (and of every future that
    /// holds one).
    InputRequired(Box<InputRequiredResult>),
    /// The server accepted the request as a task (2025-11-25).
    Task(Box<CreateTaskResult>),
    /// The server answered with a task handle of the tasks extension (2026-07-28,
    /// `resultType: "task"`).
    TaskHandle(Box<super::tasks_ext::DetailedTask>),
}

impl<T> Outcome<T> {
    /// The completed result, if the request completed.
    pub fn complete(self) -> Option<T> {
        match self {
            Outcome::Complete(t) => Some(t),
            _ => None,
        }
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Peek<'a> {
    /// Borrowed from the input unless it has escapes: no allocation on every result.
    #[serde(default, borrow)]
    result_type: Option<std::borrow::Cow<'a, str>>,
    #[serde(default)]
    task: Option<IgnoredAny>,
    #[serde(default)]
    content: Option<IgnoredAny>,
}

enum Shape {
    Complete,
    InputRequired,
    Task,
    TaskHandle,
}

/// The shape of a result; a `resultType` outside `complete | input_required` is an error.
fn shape_of(peek: &Peek<'_>) -> Result<Shape, String> {
    match peek.result_type.as_deref() {
        Some("input_required") => Ok(Shape::InputRequired),
        Some("task") => Ok(Shape::TaskHandle),
        Some("complete") | None if peek.task.is_some() && peek.content.is_none() => Ok(Shape::Task),
        Some("complete") | None => Ok(Shape::Complete),
        Some(other) => {
            Err(format!("unknown resultType {other:?} (expected \"complete\", \"input_required\" or \"task\")"))
        }
    }
}

/// A result that may come back as an [`Outcome`]: it says whether it declared itself complete.
pub trait OutcomeResult: DeserializeOwned {
    /// Whether the decoded result is complete: `resultType` absent or `complete`.
    fn declares_complete(&self) -> bool;
}

/// Results with a `result_type` member.
macro_rules! outcome_result_with_type {
    ($($t:ty),*) => {$(
        impl OutcomeResult for $t {
            fn declares_complete(&self) -> bool {
                matches!(self.result_type, None | Some(ResultType::Complete))
            }
        }
    )*};
}
outcome_result_with_type!(
    super::tools::CallToolResult,
    super::prompts::GetPromptResult,
    super::resources::ReadResourceResult
);

/// Results without a `result_type` member keep one in `extra`.
macro_rules! outcome_result_in_extra {
    ($($t:ty),*) => {$(
        impl OutcomeResult for $t {
            fn declares_complete(&self) -> bool {
                self.extra.get("resultType").is_none_or(|t| t == "complete")
            }
        }
    )*};
}
outcome_result_in_extra!(ElicitResult, CreateMessageResult);

impl<T: OutcomeResult> Outcome<T> {
    /// Decode from raw JSON in one pass when the result is a complete `T` (the common case).
    /// Anything else (a result that does not decode as `T`, or declares another `resultType`)
    /// is sorted by a cheap first pass over the members that decide the shape, then decoded
    /// into that shape, so its error names what is wrong with it.
    ///
    /// Each `T` has a member that an input-required or task result lacks (`content`,
    /// `messages`, `contents`, `action`, `role`), so a complete `T` is never one of those.
    pub fn decode(raw: &crate::RawJson) -> Result<Self, serde_json::Error> {
        if let Ok(t) = serde_json::from_str::<T>(raw.get())
            && t.declares_complete()
        {
            return Ok(Outcome::Complete(t));
        }
        let peek: Peek<'_> = serde_json::from_str(raw.get())?;
        Ok(match shape_of(&peek).map_err(serde::de::Error::custom)? {
            Shape::Complete => Outcome::Complete(serde_json::from_str(raw.get())?),
            Shape::InputRequired => Outcome::InputRequired(serde_json::from_str(raw.get())?),
            Shape::Task => Outcome::Task(serde_json::from_str(raw.get())?),
            Shape::TaskHandle => Outcome::TaskHandle(serde_json::from_str(raw.get())?),
        })
    }
}

impl<T: Serialize> Serialize for Outcome<T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Outcome::Complete(t) => t.serialize(s),
            Outcome::InputRequired(r) => r.serialize(s),
            Outcome::Task(t) => t.serialize(s),
            Outcome::TaskHandle(t) => t.serialize(s),
        }
    }
}

impl<'de, T: DeserializeOwned> Deserialize<'de> for Outcome<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        let value = Value::deserialize(d)?;
        let peek = Peek::deserialize(&value).map_err(D::Error::custom)?;
        let r = match shape_of(&peek).map_err(D::Error::custom)? {
            Shape::Complete => T::deserialize(value).map(Outcome::Complete),
            Shape::InputRequired => Box::<InputRequiredResult>::deserialize(value).map(Outcome::InputRequired),
            Shape::Task => Box::<CreateTaskResult>::deserialize(value).map(Outcome::Task),
            Shape::TaskHandle => Box::<super::tasks_ext::DetailedTask>::deserialize(value).map(Outcome::TaskHandle),
        };
        r.map_err(D::Error::custom)
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn an_unknown_result_type_is_an_error() {
        use crate::types::tools::CallToolResult;
        let raw = crate::jsonrpc::to_raw(&serde_json::json!({"content": [], "resultType": "later"})).unwrap();
        let err = Outcome::<CallToolResult>::decode(&raw).unwrap_err();
        assert!(err.to_string().contains("unknown resultType \"later\""), "{err}");
        let err = serde_json::from_str::<Outcome<CallToolResult>>(raw.get()).unwrap_err();
        assert!(err.to_string().contains("unknown resultType"), "{err}");
        let ok = crate::jsonrpc::to_raw(&serde_json::json!({"content": [], "resultType": "complete"})).unwrap();
        assert!(matches!(Outcome::<CallToolResult>::decode(&ok).unwrap(), Outcome::Complete(_)));
    }

    use super::*;
    use crate::method::RequestMethod;
    use crate::types::elicitation::ElicitAction;
    use crate::types::tools::{CallTool, CallToolParams, CallToolResult};
    use serde_json::json;

    fn input_required() -> Value {
        json!({
            "inputRequests": {
                "__main__:_sample": {"method": "sampling/createMessage", "params": {"maxTokens": 24,
                    "messages": [{"content": {"text": "Summarize MCP in five words.", "type": "text"}, "role": "user"}],
                    "systemPrompt": "You are terse.", "temperature": 0.2}},
                "__main__:_roots": {"method": "roots/list"},
                "__main__:_ask_name": {"method": "elicitation/create", "params": {"message": "What is your name?",
                    "mode": "form", "requestedSchema": {"properties": {"name": {"title": "Name", "type": "string"}},
                    "required": ["name"], "type": "object"}}},
                "vendor": {"method": "vendor/thing", "params": {"x": 1}}
            },
            "requestState": "v1.R0u3sxR0pdM7",
            "resultType": "input_required",
            "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "mcpserver-extras", "version": ""}}
        })
    }

    #[test]
    fn input_required_result_decodes_typed_requests() {
        let v = input_required();
        let raw = crate::jsonrpc::to_raw(&v).unwrap();
        let Outcome::InputRequired(r) = CallTool::decode_result(&raw).unwrap() else { panic!() };
        let requests = r.input_requests.as_ref().unwrap();
        let InputRequest::CreateMessage(p) = &requests["__main__:_sample"] else { panic!() };
        assert_eq!(p.max_tokens, 24);
        assert!(matches!(requests["__main__:_roots"], InputRequest::ListRoots(None)));
        assert!(matches!(&requests["__main__:_ask_name"], InputRequest::Elicit(ElicitParams::Form(_))));
        assert_eq!(requests["vendor"].method(), "vendor/thing");
        assert!(matches!(requests["vendor"], InputRequest::Unknown(_)));
        assert_eq!(r.request_state.as_deref(), Some("v1.R0u3sxR0pdM7"));
        assert_eq!(serde_json::to_value(Outcome::<CallToolResult>::InputRequired(r)).unwrap(), v);
    }

    #[test]
    fn input_request_edge_cases() {
        let with_params = json!({"method": "roots/list", "params": {"_meta": {"a": 1}}});
        let r: InputRequest = serde_json::from_value(with_params.clone()).unwrap();
        assert!(matches!(&r, InputRequest::ListRoots(Some(p)) if p.meta.is_some()));
        assert_eq!(serde_json::to_value(&r).unwrap(), with_params);
        // Envelope members (the schema allows them; some servers write them) are ignored: the
        // request is typed, and encodes as `{method, params}`.
        let extra = json!({"method": "roots/list", "id": 3, "jsonrpc": "2.0"});
        let r: InputRequest = serde_json::from_value(extra).unwrap();
        assert!(matches!(r, InputRequest::ListRoots(None)), "{r:?}");
        assert_eq!(serde_json::to_value(&r).unwrap(), json!({"method": "roots/list"}));
        let elicit = json!({"jsonrpc": "2.0", "method": "elicitation/create", "params": {"message": "name?",
            "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}}}});
        let r: InputRequest = serde_json::from_value(elicit.clone()).unwrap();
        assert!(matches!(&r, InputRequest::Elicit(ElicitParams::Form(f)) if f.message == "name?"), "{r:?}");
        let mut without = elicit;
        without.as_object_mut().unwrap().remove("jsonrpc");
        assert_eq!(serde_json::to_value(&r).unwrap(), without);
        let sample = json!({"jsonrpc": "2.0", "method": "sampling/createMessage", "params": {"maxTokens": 5,
            "messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}]}});
        let r: InputRequest = serde_json::from_value(sample).unwrap();
        assert!(matches!(&r, InputRequest::CreateMessage(p) if p.max_tokens == 5), "{r:?}");
        // A known method with broken params is kept whole rather than failing the whole result.
        let broken = json!({"method": "sampling/createMessage", "params": {}});
        let r: InputRequest = serde_json::from_value(broken.clone()).unwrap();
        assert!(matches!(r, InputRequest::Unknown(_)));
        assert_eq!(r.method(), "sampling/createMessage");
        assert_eq!(serde_json::to_value(&r).unwrap(), broken);
        assert!(serde_json::from_value::<InputRequest>(json!({"params": {}})).is_err());
    }

    #[test]
    fn retry_params_carry_typed_responses() {
        let v = json!({
            "name": "summarize", "arguments": {},
            "inputResponses": {
                "__main__:_sample": {"role": "assistant", "content": {"type": "text", "text": "Sampled reply"},
                    "model": "py-host-a", "stopReason": "endTurn"},
                "__main__:_roots": {"roots": [{"uri": "file:///data/mcpfs", "name": "mcpfs"}]},
                "__main__:_ask_name": {"action": "accept", "content": {"name": "Linus"}},
                "odd": [1, 2]
            },
            "requestState": "v1.abc",
            "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}
        });
        let p: CallToolParams = serde_json::from_value(v.clone()).unwrap();
        let responses = p.input_responses.as_ref().unwrap();
        assert!(matches!(&responses["__main__:_sample"], InputResponse::CreateMessage(r) if r.model == "py-host-a"));
        assert!(matches!(&responses["__main__:_roots"], InputResponse::ListRoots(r) if r.roots.len() == 1));
        assert!(
            matches!(&responses["__main__:_ask_name"], InputResponse::Elicit(r) if r.action == ElicitAction::Accept)
        );
        assert!(matches!(&responses["odd"], InputResponse::Other(_)));
        assert_eq!(serde_json::to_value(&p).unwrap(), v);

        let generic = json!({"inputResponses": {"k": {"action": "decline"}}, "requestState": "s", "extra": 1});
        let g: InputResponseRequestParams = serde_json::from_value(generic.clone()).unwrap();
        assert_eq!(serde_json::to_value(&g).unwrap(), generic);
        let built: InputResponse = ElicitResult::decline().into();
        assert_eq!(serde_json::to_value(&built).unwrap(), json!({"action": "decline"}));
    }
}
