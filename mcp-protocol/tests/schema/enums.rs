//! The closed enums of the schemas against ours: every value we write is one the schema lists,
//! and every value the schema lists decodes to a known variant (not the open `Unknown`).

use mcp_protocol::types::common::{CacheScope, Role};
use mcp_protocol::types::elicitation::{ElicitAction, NumberType, StringFormat};
use mcp_protocol::types::logging::LoggingLevel;
use mcp_protocol::types::sampling::{IncludeContext, ToolChoiceMode};
use mcp_protocol::types::tasks::TaskState;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::spec::Spec;

/// One enum: where the schemas keep it (the first path that exists, under the definitions), the
/// values our type writes, and whether a wire value decodes to a known variant.
struct Case {
    rust: &'static str,
    paths: &'static [&'static str],
    ours: Vec<Value>,
    known: fn(&Value) -> bool,
}

fn values<T: Serialize>(variants: &[T]) -> Vec<Value> {
    variants.iter().map(|v| serde_json::to_value(v).expect("enums serialise")).collect()
}

fn decodes<T: DeserializeOwned>(value: &Value, unknown: fn(&T) -> bool) -> bool {
    serde_json::from_value::<T>(value.clone()).is_ok_and(|v| !unknown(&v))
}

fn cases() -> Vec<Case> {
    use LoggingLevel as L;
    vec![
        Case {
            rust: "LoggingLevel",
            paths: &["LoggingLevel"],
            ours: values(&[L::Debug, L::Info, L::Notice, L::Warning, L::Error, L::Critical, L::Alert, L::Emergency]),
            known: |v| decodes::<LoggingLevel>(v, |l| matches!(l, L::Unknown(_))),
        },
        Case {
            rust: "Role",
            paths: &["Role"],
            ours: values(&[Role::User, Role::Assistant]),
            known: |v| decodes::<Role>(v, |_| false),
        },
        Case {
            rust: "IncludeContext",
            paths: &[
                "CreateMessageRequestParams/properties/includeContext",
                "CreateMessageRequest/properties/params/properties/includeContext",
            ],
            ours: values(&[IncludeContext::None, IncludeContext::ThisServer, IncludeContext::AllServers]),
            known: |v| decodes::<IncludeContext>(v, |c| matches!(c, IncludeContext::Unknown(_))),
        },
        Case {
            rust: "ElicitAction",
            paths: &["ElicitResult/properties/action"],
            ours: values(&[ElicitAction::Accept, ElicitAction::Decline, ElicitAction::Cancel]),
            known: |v| decodes::<ElicitAction>(v, |a| matches!(a, ElicitAction::Unknown(_))),
        },
        Case {
            rust: "NumberType",
            paths: &["NumberSchema/properties/type"],
            ours: values(&[NumberType::Number, NumberType::Integer]),
            known: |v| decodes::<NumberType>(v, |_| false),
        },
        Case {
            rust: "StringFormat",
            paths: &["StringSchema/properties/format"],
            ours: values(&[StringFormat::Date, StringFormat::DateTime, StringFormat::Email, StringFormat::Uri]),
            known: |v| decodes::<StringFormat>(v, |f| matches!(f, StringFormat::Unknown(_))),
        },
        Case {
            rust: "TaskState",
            paths: &["TaskStatus"],
            ours: values(&[
                TaskState::Working,
                TaskState::InputRequired,
                TaskState::Completed,
                TaskState::Failed,
                TaskState::Cancelled,
            ]),
            known: |v| decodes::<TaskState>(v, |s| matches!(s, TaskState::Unknown(_))),
        },
        Case {
            rust: "ToolChoiceMode",
            paths: &["ToolChoice/properties/mode"],
            ours: values(&[ToolChoiceMode::Auto, ToolChoiceMode::Required, ToolChoiceMode::None]),
            known: |v| decodes::<ToolChoiceMode>(v, |m| matches!(m, ToolChoiceMode::Unknown(_))),
        },
        Case {
            rust: "CacheScope",
            paths: &["CacheableResult/properties/cacheScope"],
            ours: values(&[CacheScope::Private, CacheScope::Public]),
            known: |v| decodes::<CacheScope>(v, |s| matches!(s, CacheScope::Unknown(_))),
        },
    ]
}

/// Check every enum the revision has; returns the problems, and how many enums it checked.
pub fn check(spec: &Spec) -> (Vec<String>, usize) {
    let rev = spec.rev;
    let mut problems = Vec::new();
    let mut checked = 0;
    for case in cases() {
        let found = case.paths.iter().map(|p| spec.def_ref(p)).find_map(|p| Some((spec.at(&p)?.get("enum")?, p)));
        let Some((listed, pointer)) = found else { continue };
        let listed = listed.as_array().expect("enum is an array");
        checked += 1;
        for ours in &case.ours {
            if !listed.contains(ours) {
                problems.push(format!("[{rev}] {}: we write {ours}, {pointer} lists {listed:?}", case.rust));
            }
        }
        for value in listed {
            if !(case.known)(value) {
                problems.push(format!("[{rev}] {}: {pointer} lists {value}, which we decode as unknown", case.rust));
            }
        }
    }
    (problems, checked)
}
