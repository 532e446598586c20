//! The tasks extension of 2026-07-28 (`io.modelcontextprotocol/tasks`, SEP-2663).
//!
//! A client declares the extension in its per-request capabilities
//! (`_meta["io.modelcontextprotocol/clientCapabilities"].extensions`); the server then may answer
//! `tools/call` with a task handle (`resultType: "task"`, the [`DetailedTask`] members at the top
//! level) instead of a `CallToolResult`. The client polls `tasks/get`, whose answer inlines the
//! final `result` or `error` and the outstanding `inputRequests`; it answers those with
//! `tasks/update` and may `tasks/cancel` the task. There is no `tasks/list` and no
//! `tasks/result`. Status pushes are `notifications/tasks`, asked for on `subscriptions/listen`
//! with a `taskIds` filter member.
//!
//! The wire differs from the 2025-11-25 design (module [`super::tasks`]): `ttlMs` and
//! `pollIntervalMs` instead of `ttl` and `pollInterval`, and no `task` wrapper.

use serde::{Deserialize, Serialize};

use super::common::{EmptyResult, ResultType};
use super::meta::{JsonObject, Meta};
use super::mrtr::{InputRequests, InputResponses};
use super::tasks::{GetTaskParams, Task, TaskState};
use crate::ErrorObject;

/// The extension's identifier, the key under `capabilities.extensions`.
pub const TASKS_EXTENSION: &str = "io.modelcontextprotocol/tasks";

/// A task as the extension sends it: the created task (`resultType: "task"`), the answer of
/// `tasks/get`, and the params of `notifications/tasks`. The members of each status are inlined:
/// `inputRequests` (`input_required`), `result` (`completed`), `error` (`failed`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DetailedTask {
    /// The id the server gave the task.
    pub task_id: String,
    /// Current state.
    pub status: TaskState,
    /// Human-readable description of the state.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status_message: Option<String>,
    /// ISO 8601 creation time (required on the wire; empty when a server omits it).
    #[serde(default)]
    pub created_at: String,
    /// ISO 8601 time of the last change (required on the wire; empty when a server omits it).
    #[serde(default)]
    pub last_updated_at: String,
    /// Lifetime in milliseconds from creation: `Some(None)` is an explicit `null` (unlimited),
    /// `None` an absent member.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "crate::jsonrpc::present")]
    pub ttl_ms: Option<Option<u64>>,
    /// Suggested polling interval in milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub poll_interval_ms: Option<u64>,
    /// What the server needs from the client (`input_required`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_requests: Option<InputRequests>,
    /// The final result of the underlying request (`completed`), for instance a `CallToolResult`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<JsonObject>,
    /// The JSON-RPC error the underlying request ended with (`failed`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<JsonObject>,
    /// `resultType`: `task` on a created task, `complete` on `tasks/get`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_type: Option<ResultType>,
    /// `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Members this crate does not model.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl DetailedTask {
    /// The state in the shape of a 2025-11-25 [`Task`], so that hosts see one type in both eras
    /// (`ttlMs` becomes `ttl`, `pollIntervalMs` becomes `pollInterval`; the inlined payloads are
    /// left out).
    pub fn to_task(&self) -> Task {
        Task {
            task_id: self.task_id.clone(),
            status: self.status.clone(),
            status_message: self.status_message.clone(),
            created_at: self.created_at.clone(),
            last_updated_at: self.last_updated_at.clone(),
            ttl: self.ttl_ms,
            poll_interval: self.poll_interval_ms,
            extra: JsonObject::new(),
        }
    }

    /// The JSON-RPC error of a failed task, when it decodes as one.
    pub fn rpc_error(&self) -> Option<ErrorObject> {
        serde_json::from_value(serde_json::Value::Object(self.error.clone()?)).ok()
    }
}

/// Params of `tasks/update`: answers to the task's outstanding input requests.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UpdateTaskParams {
    /// The task id.
    pub task_id: String,
    /// The answers, keyed as the server keyed its input requests.
    pub input_responses: InputResponses,
    /// `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Members this crate does not model.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// The `subscriptions/listen` filter member that asks for `notifications/tasks` of these tasks.
pub const TASK_IDS_FILTER: &str = "taskIds";

crate::request_methods! {
    /// `tasks/get` of the extension: the task with its status payload inlined.
    ExtGetTask = "tasks/get", GetTaskParams => DetailedTask;
    /// `tasks/update` of the extension: answers to input requests (an empty acknowledgement).
    ExtUpdateTask = "tasks/update", UpdateTaskParams => EmptyResult;
    /// `tasks/cancel` of the extension (an empty acknowledgement; cancellation is cooperative).
    ExtCancelTask = "tasks/cancel", GetTaskParams => EmptyResult;
}

crate::notification_methods! {
    /// `notifications/tasks` of the extension: the whole task, as `tasks/get` would answer.
    ExtTaskStatus = "notifications/tasks", DetailedTask;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::method::RequestMethod;
    use crate::types::mrtr::Outcome;
    use crate::types::tools::CallTool;
    use serde_json::{Value, json};

    fn created() -> Value {
        json!({
            "resultType": "task", "taskId": "786512e2", "status": "working",
            "statusMessage": "The operation is now in progress.",
            "createdAt": "2025-11-25T10:30:00Z", "lastUpdatedAt": "2025-11-25T10:40:00Z",
            "ttlMs": 60000, "pollIntervalMs": 5000
        })
    }

    #[test]
    fn a_tool_call_answered_with_a_task_handle() {
        let raw = crate::jsonrpc::to_raw(&created()).unwrap();
        let Outcome::TaskHandle(task) = CallTool::decode_result(&raw).unwrap() else { panic!() };
        assert_eq!(task.task_id, "786512e2");
        assert_eq!(task.poll_interval_ms, Some(5000));
        assert_eq!(task.to_task().poll_interval, Some(5000));
        assert_eq!(task.to_task().ttl_ms(), Some(60000));
        assert_eq!(
            serde_json::to_value(Outcome::<crate::types::tools::CallToolResult>::TaskHandle(task)).unwrap(),
            created()
        );
    }

    #[test]
    fn detailed_tasks_inline_their_payloads() {
        let mut v = created();
        v["resultType"] = json!("complete");
        v["status"] = json!("input_required");
        v["inputRequests"] = json!({"name": {"method": "elicitation/create", "params": {
            "mode": "form", "message": "Name?", "requestedSchema": {"type": "object", "properties": {}}}}});
        let t: DetailedTask = serde_json::from_value(v.clone()).unwrap();
        assert_eq!(t.status, TaskState::InputRequired);
        assert_eq!(t.input_requests.as_ref().unwrap().len(), 1);
        assert_eq!(serde_json::to_value(&t).unwrap(), v);

        let failed = json!({"taskId": "t", "status": "failed", "createdAt": "", "lastUpdatedAt": "", "ttlMs": null,
            "error": {"code": -32603, "message": "API rate limit exceeded"}});
        let t: DetailedTask = serde_json::from_value(failed.clone()).unwrap();
        assert_eq!(t.ttl_ms, Some(None));
        assert_eq!(t.rpc_error().unwrap().message, "API rate limit exceeded");
        assert_eq!(serde_json::to_value(&t).unwrap(), failed);
        assert_eq!(ExtUpdateTask::METHOD, "tasks/update");
    }

    #[test]
    fn update_params_encode_as_the_spec_shows() {
        let p = UpdateTaskParams {
            task_id: "t".into(),
            input_responses: serde_json::from_value(json!({"name": {"action": "accept", "content": {"n": "L"}}}))
                .unwrap(),
            ..Default::default()
        };
        assert_eq!(
            serde_json::to_value(&p).unwrap(),
            json!({"taskId": "t", "inputResponses": {"name": {"action": "accept", "content": {"n": "L"}}}})
        );
    }
}
