//! Schema conformance: for each revision's official `schema.json`, every member of the unions
//! `ClientRequest`, `ServerRequest`, `ClientNotification`, `ServerNotification`, `ClientResult` and
//! `ServerResult` (and, in 2026-07-28, `InputRequest` and `InputResponse`) has a Rust type, and a
//! minimal and a maximal instance serialised by that type validate against the member's
//! definition, the union, and the JSON-RPC envelope definitions.
//!
//! Beyond validity, the schema is walked with each instance: a minimal instance must fill no
//! optional field, a maximal one every optional field our type has in that revision, and neither
//! may carry a member an object schema does not declare (the schemas leave most objects open, so
//! a misspelt field would otherwise validate). Known gaps are listed below with their reason.

mod schema;

use std::collections::{BTreeMap, BTreeSet};

use mcp_protocol::jsonrpc::{Message, Request, RequestId, Response, to_raw};
use mcp_protocol::messages::{
    ClientNotification, ClientRequest, ClientResult, ServerNotification, ServerRequest, ServerResult,
};
use mcp_protocol::types::mrtr::{InputRequest, InputResponse};
use serde_json::{Value, json};

use schema::Rev;
use schema::spec::{Spec, Union};
use schema::table::{Built, Entry, Kind, extra_definitions, table};

/// The unions, with the kind of their members.
const UNIONS: [(&str, Kind); 8] = [
    ("ClientRequest", Kind::Request),
    ("ServerRequest", Kind::Request),
    ("ClientNotification", Kind::Notification),
    ("ServerNotification", Kind::Notification),
    ("ClientResult", Kind::Result),
    ("ServerResult", Kind::Result),
    // 2026-07-28: server-to-client requests became input requests inside an InputRequiredResult,
    // answered by input responses inside the retried request's params.
    ("InputRequest", Kind::Request),
    ("InputResponse", Kind::Result),
];

/// How each union is spelt where it is not a plain `anyOf`. Every case is checked, so a fixed
/// schema (or a new quirk) shows up here.
fn expected_shape(rev: Rev, union: &str) -> Option<Union> {
    let modern = rev.is_modern();
    match union {
        // The legacy era has no input requests.
        "InputRequest" | "InputResponse" if !modern => Some(Union::Absent),
        // 2026-07-28 dropped server requests: sampling, roots and elicitation are input requests
        // (covered through `InputRequest`), ping and tasks are gone.
        "ServerRequest" if modern => Some(Union::Absent),
        // The spec's TypeScript says `ClientNotification = CancelledNotification`; the generator
        // inlined the one member instead of writing an `anyOf`.
        "ClientNotification" if modern => Some(Union::Inlined("CancelledNotification".to_owned())),
        // Clients answer no request in 2026-07-28; `ClientResult = Result` became a lone `$ref`.
        "ClientResult" if modern => Some(Union::Ref("Result".to_owned())),
        _ => None,
    }
}

/// Optional fields the maximal instances leave out on purpose: `(revision or "*", field, why)`.
/// Fields are keyed `Definition.path.field` as [`schema::spec::Fields`] names them.
const MAXIMAL_GAPS: &[(&str, &str, &str)] = &[];

/// Optional fields the minimal instances fill on purpose.
const MINIMAL_EXTRAS: &[(&str, &str, &str)] = &[(
    "2026-07-28",
    "InputRequiredResult.requestState",
    "the schema requires only resultType, its description inputRequests or requestState",
)];

/// Members the instances carry that an object schema does not declare, on purpose.
const UNDECLARED: &[(&str, &str, &str)] = &[
    ("2026-07-28", "Tool.inputSchema.properties", JSON_SCHEMA),
    ("2026-07-28", "Tool.inputSchema.required", JSON_SCHEMA),
    ("2026-07-28", "Tool.outputSchema.type", JSON_SCHEMA),
    ("2026-07-28", "Tool.outputSchema.properties", JSON_SCHEMA),
    ("2026-07-28", "Tool.outputSchema.required", JSON_SCHEMA),
    ("2025-11-25", "GetTaskPayloadResult.content", TASK_PAYLOAD),
    ("2025-11-25", "GetTaskPayloadResult.isError", TASK_PAYLOAD),
];
const JSON_SCHEMA: &str = "a JSON Schema: the schema declares $schema (and type) and leaves the other keywords open";
const TASK_PAYLOAD: &str = "the payload is the underlying request's result (a CallToolResult here), open in the schema";

fn by_member() -> BTreeMap<&'static str, Entry> {
    let mut entries = BTreeMap::new();
    for entry in table() {
        let member = entry.member;
        assert!(entries.insert(member, entry).is_none(), "the table lists {member} twice");
    }
    entries
}

/// The checks can fail: a request without its required `name`, and a result member the schema
/// does not declare, are reported with their paths.
#[test]
fn the_checks_catch_broken_instances() {
    for rev in Rev::ALL {
        let spec = Spec::load(rev);
        let message = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"arguments": {}}});
        let errors = spec.validate(&spec.def_ref("CallToolRequest"), &message);
        assert!(errors.iter().any(|e| e.contains("/params") && e.contains("name")), "[{rev}] {errors:?}");
        assert!(!spec.validate(&spec.def_ref("ClientRequest"), &message).is_empty(), "[{rev}]");
        let result = json!({"content": [{"type": "text", "text": "x", "annotation": {}}], "iserror": true});
        let fields = spec.fields(&spec.def_ref("CallToolResult"), &result);
        assert_eq!(fields.undeclared, ["CallToolResult.iserror", "TextContent.annotation"], "[{rev}]");
        assert!(fields.missing.contains(&"CallToolResult.isError".to_owned()), "[{rev}] {:?}", fields.missing);
    }
}

#[test]
fn every_enum_value_is_one_the_schema_lists() {
    let mut problems = Vec::new();
    for rev in Rev::ALL {
        let (found, checked) = schema::enums::check(&Spec::load(rev));
        assert!(checked >= 2, "[{rev}] only {checked} enums found");
        problems.extend(found);
    }
    assert!(problems.is_empty(), "{} enum problems:\n  {}", problems.len(), problems.join("\n  "));
}

#[test]
fn error_responses_validate() {
    let mut problems = Vec::new();
    for rev in Rev::ALL {
        let (found, checked) = schema::errors::check(&Spec::load(rev));
        assert!(checked >= 2, "[{rev}] only {checked} error responses checked");
        problems.extend(found);
    }
    assert!(problems.is_empty(), "{} error response problems:\n{}", problems.len(), problems.join("\n"));
}

#[test]
fn unions_are_spelt_as_expected() {
    for rev in Rev::ALL {
        let spec = Spec::load(rev);
        for (union, _) in UNIONS {
            let shape = spec.union(union);
            match expected_shape(rev, union) {
                Some(expected) => assert_eq!(shape, expected, "[{rev}] {union}"),
                None => assert!(matches!(shape, Union::AnyOf(_)), "[{rev}] {union} is no anyOf: {shape:?}"),
            }
        }
    }
}

#[test]
fn every_union_member_has_a_rust_type() {
    let entries = by_member();
    let mut problems = Vec::new();
    let mut used = BTreeSet::new();
    let request_methods: BTreeSet<&str> =
        entries.values().filter(|e| e.kind == Kind::Request).map(|e| e.method).collect();
    for rev in Rev::ALL {
        let spec = Spec::load(rev);
        for (union, kind) in UNIONS {
            for member in spec.union(union).members() {
                let Some(entry) = entries.get(member.as_str()) else {
                    problems.push(format!("[{rev}] {union}: {member} has no entry in the table (no Rust type)"));
                    continue;
                };
                used.insert(entry.member);
                if entry.kind != kind {
                    problems
                        .push(format!("[{rev}] {union}: {member} is a {kind:?} but the table says {:?}", entry.kind));
                }
                let schema_method = spec.method_const(&member);
                match (kind, schema_method) {
                    (Kind::Result, None) => {}
                    (Kind::Result, Some(m)) => {
                        problems.push(format!("[{rev}] {union}: result {member} has a method {m}"))
                    }
                    (_, None) => problems.push(format!("[{rev}] {union}: {member} has no method const")),
                    (_, Some(m)) if m != entry.method => problems.push(format!(
                        "[{rev}] {union}: {member} has method {m:?} in the schema but {:?} in our marker ({})",
                        entry.method, entry.rust_type
                    )),
                    _ => {}
                }
            }
        }
    }
    for entry in entries.values() {
        if !used.contains(entry.member) {
            problems.push(format!("stale table entry: {} is a member of no union of any revision", entry.member));
        }
        if entry.kind == Kind::Result && !request_methods.contains(entry.method) {
            problems.push(format!("result {} answers {}, which no request entry has", entry.member, entry.method));
        }
    }
    for entry in extra_definitions() {
        if entries.contains_key(entry.member) {
            problems.push(format!("{} is both a union member and an extra definition", entry.member));
        }
        if !Rev::ALL.iter().any(|rev| Spec::load(*rev).has(entry.member)) {
            problems.push(format!("stale extra definition: no revision defines {}", entry.member));
        }
    }
    assert!(problems.is_empty(), "{} coverage problems:\n  {}", problems.len(), problems.join("\n  "));
}

/// Where an instance goes wrong, and which listed exemptions it uses.
struct Report<'a> {
    rev: Rev,
    union: &'a str,
    member: &'a str,
    label: &'a str,
    problems: &'a mut Vec<String>,
    exempted: &'a mut BTreeSet<&'static str>,
}

type Exemptions = [(&'static str, &'static str, &'static str)];

impl Report<'_> {
    /// Whether `field` is listed for this revision; records the use.
    fn exempt(&mut self, list: &'static Exemptions, field: &str) -> bool {
        let rev = self.rev.as_str();
        let found = list.iter().find(|(r, f, _)| (*r == "*" || *r == rev) && *f == field);
        found.inspect(|(_, f, _)| _ = self.exempted.insert(f)).is_some()
    }

    fn fail(&mut self, problem: impl std::fmt::Display) {
        self.problems.push(format!("[{}] {}/{} ({}): {problem}", self.rev, self.union, self.member, self.label));
    }

    /// Validate against the member definition first: when it fails, the other definitions (the
    /// union, the envelope) only get a one-line note, their errors repeat the member's.
    fn validate(&mut self, spec: &Spec, definitions: &[&str], instance: &Value) {
        let mut member_failed = false;
        for definition in definitions {
            let pointer = spec.def_ref(definition);
            let errors = spec.validate(&pointer, instance);
            if errors.is_empty() {
                continue;
            }
            if member_failed {
                self.fail(format!("also invalid against {pointer} ({} errors)", errors.len()));
            } else {
                self.fail(format!(
                    "invalid against {pointer}:\n    {}\n    instance: {instance}",
                    errors.join("\n    ")
                ));
                member_failed = true;
            }
        }
    }
}

fn raw(value: &Value) -> mcp_protocol::RawJson {
    to_raw(value).expect("a JSON value is raw JSON")
}

/// The JSON-RPC message of a request, encoded through our typed union of `union`.
fn request_message(union: &str, method: &str, params: Option<&mcp_protocol::RawJson>) -> Result<Value, String> {
    let id = RequestId::from(1);
    let request = match union {
        "ClientRequest" => match ClientRequest::decode(method, params).map_err(|e| e.to_string())? {
            ClientRequest::Other { .. } => return Err(format!("ClientRequest does not type {method}")),
            typed => typed.into_request(id),
        },
        _ => match ServerRequest::decode(method, params).map_err(|e| e.to_string())? {
            ServerRequest::Other { .. } => return Err(format!("ServerRequest does not type {method}")),
            typed => typed.into_request(id),
        },
    };
    let request: Request = request.map_err(|e| e.to_string())?;
    serde_json::to_value(Message::Request(request)).map_err(|e| e.to_string())
}

/// The JSON-RPC message of a notification, encoded through our typed union of `union`.
fn notification_message(union: &str, method: &str, params: Option<&mcp_protocol::RawJson>) -> Result<Value, String> {
    let notification = match union {
        "ClientNotification" => match ClientNotification::decode(method, params).map_err(|e| e.to_string())? {
            ClientNotification::Other { .. } => return Err(format!("ClientNotification does not type {method}")),
            typed => typed.into_notification(),
        },
        _ => match ServerNotification::decode(method, params).map_err(|e| e.to_string())? {
            ServerNotification::Other { .. } => return Err(format!("ServerNotification does not type {method}")),
            typed => typed.into_notification(),
        },
    };
    serde_json::to_value(Message::Notification(notification.map_err(|e| e.to_string())?)).map_err(|e| e.to_string())
}

/// The result, encoded through our typed union of `union` (by the method it answers).
fn result_payload(union: &str, method: &str, result: &mcp_protocol::RawJson) -> Result<Value, String> {
    let raw = match union {
        "ClientResult" => match ClientResult::decode(method, result).map_err(|e| e.to_string())? {
            ClientResult::Other(_) => return Err(format!("ClientResult does not type the result of {method}")),
            typed => typed.to_raw(),
        },
        _ => match ServerResult::decode(method, result).map_err(|e| e.to_string())? {
            ServerResult::Other(_) => return Err(format!("ServerResult does not type the result of {method}")),
            typed => typed.to_raw(),
        },
    };
    serde_json::from_str(raw.map_err(|e| e.to_string())?.get()).map_err(|e| e.to_string())
}

/// The schema's `<Method>ResultResponse` definition (2026-07-28) of the request `method`.
fn response_definition(spec: &Spec, entries: &BTreeMap<&str, Entry>, method: &str) -> Option<String> {
    let request = entries.values().find(|e| e.kind == Kind::Request && e.method == method)?.member;
    let name = format!("{}ResultResponse", request.trim_end_matches("Request"));
    spec.has(&name).then_some(name)
}

/// Check one instance of `entry` as a member of `union`.
fn check(
    spec: &Spec,
    entries: &BTreeMap<&str, Entry>,
    union: &str,
    entry: &Entry,
    built: &Built,
    report: &mut Report<'_>,
) {
    if let Err(e) = &built.round_trip {
        report.fail(format!("{} does not round-trip: {e}", entry.rust_type));
    }
    let member = entry.member;
    let payload = built.payload.as_ref().map(raw);
    // The instance walked for fields: the full message, the input request, or the result.
    let instance = match (entry.kind, union) {
        (Kind::Request, "InputRequest") => {
            let mut wire = json!({"method": entry.method});
            if let Some(p) = &built.payload {
                wire["params"] = p.clone();
            }
            match serde_json::from_value::<InputRequest>(wire) {
                Ok(InputRequest::Unknown(v)) => return report.fail(format!("InputRequest does not type {v}")),
                Ok(typed) => {
                    let instance = serde_json::to_value(&typed).expect("input requests serialise");
                    report.validate(spec, &[member, "InputRequest"], &instance);
                    report.validate(spec, &["InputRequests"], &json!({"key-1": instance}));
                    instance
                }
                Err(e) => return report.fail(format!("InputRequest does not decode: {e}")),
            }
        }
        (Kind::Request | Kind::Notification, _) => {
            let (message, envelope) = if entry.kind == Kind::Request {
                (request_message(union, entry.method, payload.as_ref()), "JSONRPCRequest")
            } else {
                (notification_message(union, entry.method, payload.as_ref()), "JSONRPCNotification")
            };
            let message = match message {
                Ok(message) => message,
                Err(e) => return report.fail(e),
            };
            if message.get("params") != built.payload.as_ref() {
                report.fail(format!("the {union} union re-encodes the params: {message}"));
            }
            report.validate(spec, &[member, union, envelope, "JSONRPCMessage"], &message);
            message
        }
        (Kind::Result, "InputResponse") => {
            let result = built.payload.clone().unwrap_or(Value::Null);
            match serde_json::from_value::<InputResponse>(result) {
                Ok(InputResponse::Other(v)) => return report.fail(format!("InputResponse does not type {v}")),
                Ok(typed) => {
                    let instance = serde_json::to_value(&typed).expect("input responses serialise");
                    report.validate(spec, &[member, "InputResponse"], &instance);
                    report.validate(spec, &["InputResponses"], &json!({"key-1": instance}));
                    instance
                }
                Err(e) => return report.fail(format!("InputResponse does not decode: {e}")),
            }
        }
        (Kind::Result, _) => {
            let Some(result) = payload.as_ref() else { return report.fail("a result without a value") };
            let typed = match result_payload(union, entry.method, result) {
                Ok(typed) => typed,
                Err(e) => return report.fail(e),
            };
            if Some(&typed) != built.payload.as_ref() {
                report.fail(format!("the {union} union re-encodes the result as {typed}"));
            }
            let message = serde_json::to_value(Message::Response(Response::result(RequestId::from(1), raw(&typed))))
                .expect("responses serialise");
            report.validate(spec, &[member, union], &typed);
            let response = response_definition(spec, entries, entry.method);
            let mut envelopes = vec!["JSONRPCResponse", "JSONRPCMessage"];
            envelopes.extend(response.as_deref());
            report.validate(spec, &envelopes, &message);
            typed
        }
    };
    check_fields(spec, member, built, &instance, report);
}

/// The fields policy: a minimal instance fills no optional field, a maximal one every optional
/// field, and no instance carries a member its object schema does not declare.
fn check_fields(spec: &Spec, member: &str, built: &Built, instance: &Value, report: &mut Report<'_>) {
    let fields = spec.fields(&spec.def_ref(member), instance);
    // The legacy schemas model a request's members without the JSON-RPC envelope.
    let envelope = [format!("{member}.jsonrpc"), format!("{member}.id")];
    let undeclared: Vec<&String> =
        fields.undeclared.iter().filter(|f| !envelope.contains(f) && !report.exempt(UNDECLARED, f)).collect();
    if !undeclared.is_empty() {
        report.fail(format!("members the schema does not declare: {undeclared:?}"));
    }
    if built.maximal {
        let missing: Vec<&String> = fields.missing.iter().filter(|f| !report.exempt(MAXIMAL_GAPS, f)).collect();
        if !missing.is_empty() {
            report.fail(format!("optional fields left out of a maximal instance: {missing:?}"));
        }
    } else {
        let extra: Vec<&String> =
            fields.optional_present.iter().filter(|f| !report.exempt(MINIMAL_EXTRAS, f)).collect();
        if !extra.is_empty() {
            report.fail(format!("optional fields in a minimal instance: {extra:?}"));
        }
    }
}

/// Check every instance of every union member of `rev`, and the extra definitions it has.
fn conformance(rev: Rev) {
    let spec = Spec::load(rev);
    let entries = by_member();
    let mut problems = Vec::new();
    let mut exempted = BTreeSet::new();
    let mut checked = 0;
    for (union, _) in UNIONS {
        for member in spec.union(union).members() {
            let Some(entry) = entries.get(member.as_str()) else {
                problems.push(format!("[{rev}] {union}/{member}: no entry in the table"));
                continue;
            };
            for built in entry.instances(rev) {
                let (label, problems, exempted) = (built.label, &mut problems, &mut exempted);
                let mut report = Report { rev, union, member: &member, label, problems, exempted };
                check(&spec, &entries, union, entry, &built, &mut report);
                checked += 1;
            }
        }
    }
    for entry in extra_definitions().iter().filter(|e| spec.has(e.member)) {
        for built in entry.instances(rev) {
            let (label, problems, exempted) = (built.label, &mut problems, &mut exempted);
            let mut report = Report { rev, union: "ServerResult", member: entry.member, label, problems, exempted };
            check(&spec, &entries, "ServerResult", entry, &built, &mut report);
            checked += 1;
        }
    }
    // An exemption of this revision that no instance needs is stale.
    for (r, field, _) in MAXIMAL_GAPS.iter().chain(MINIMAL_EXTRAS).chain(UNDECLARED) {
        if *r == rev.as_str() && !exempted.contains(field) {
            problems.push(format!("[{rev}] stale exemption: {field} is listed but no instance needs it"));
        }
    }
    assert!(checked > 0, "[{rev}] no instance checked");
    assert!(problems.is_empty(), "{} of {checked} instances fail:\n{}", problems.len(), problems.join("\n"));
}

#[test]
fn conformance_2024_11_05() {
    conformance(Rev::V2024_11_05);
}

#[test]
fn conformance_2025_03_26() {
    conformance(Rev::V2025_03_26);
}

#[test]
fn conformance_2025_06_18() {
    conformance(Rev::V2025_06_18);
}

#[test]
fn conformance_2025_11_25() {
    conformance(Rev::V2025_11_25);
}

#[test]
fn conformance_2026_07_28() {
    conformance(Rev::V2026_07_28);
}
