//! Tasks (2025-11-25): task-augmented requests and the `tasks/*` methods.
//!
//! A request with `task` params may be answered with a [`CreateTaskResult`] instead of its
//! result; the requester then polls `tasks/get`, fetches the payload with `tasks/result`, and may
//! `tasks/cancel` it. The receiver may push `notifications/tasks/status`.

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::common::PaginatedParams;
use super::extra::Extra;
use super::meta::{Cursor, JsonObject, Meta};

/// Asks for a request to run as a task.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct TaskMetadata {
    /// Requested lifetime in milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttl: Option<u64>,
    /// Members this crate does not model (a box only when there are some: every call's params
    /// hold room for a task's metadata).
    #[serde(flatten)]
    pub extra: Extra,
}

/// The value of `_meta["io.modelcontextprotocol/related-task"]`: the task a message belongs to.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RelatedTaskMetadata {
    /// The task id.
    pub task_id: String,
    /// Members this crate does not model.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// The `status` of a task. The schema calls it `TaskStatus`; here that name is the marker of
/// `notifications/tasks/status`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskState {
    /// The request is being processed.
    #[default]
    Working,
    /// The receiver needs input from the requester (answer its requests, then poll again).
    InputRequired,
    /// Finished; the result is available from `tasks/result`.
    Completed,
    /// Finished with an error.
    Failed,
    /// Cancelled before it finished.
    Cancelled,
    /// A value this crate does not know.
    #[serde(untagged)]
    Unknown(String),
}

impl TaskState {
    /// The state as on the wire: `working`, `input_required`, `completed`, `failed`,
    /// `cancelled`, or the unknown value as the peer sent it.
    pub fn as_str(&self) -> &str {
        match self {
            TaskState::Working => "working",
            TaskState::InputRequired => "input_required",
            TaskState::Completed => "completed",
            TaskState::Failed => "failed",
            TaskState::Cancelled => "cancelled",
            TaskState::Unknown(other) => other,
        }
    }

    /// Whether the task has reached a final state (`completed`, `failed` or `cancelled`).
    pub fn is_terminal(&self) -> bool {
        matches!(self, TaskState::Completed | TaskState::Failed | TaskState::Cancelled)
    }
}

/// A task and its state.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Task {
    /// The id the receiver gave the task.
    pub task_id: String,
    /// Current state.
    pub status: TaskState,
    /// Human-readable description of the state.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status_message: Option<String>,
    /// ISO 8601 creation time.
    pub created_at: String,
    /// ISO 8601 time of the last status change.
    pub last_updated_at: String,
    /// Lifetime in milliseconds from creation. Required on the wire and may be `null`
    /// (unlimited): `Some(None)` is an explicit `null`, `None` an absent member, so both re-encode
    /// as they arrived. Read it with [`Task::ttl_ms`].
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "crate::jsonrpc::present")]
    pub ttl: Option<Option<u64>>,
    /// Suggested polling interval in milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub poll_interval: Option<u64>,
    /// Members this crate does not model.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl Task {
    /// A task with the given state and an unlimited (`null`) lifetime.
    pub fn new(task_id: impl Into<String>, status: TaskState, created_at: impl Into<String>) -> Self {
        let created_at = created_at.into();
        Task {
            task_id: task_id.into(),
            status,
            status_message: None,
            last_updated_at: created_at.clone(),
            created_at,
            ttl: Some(None),
            poll_interval: None,
            extra: JsonObject::new(),
        }
    }

    /// The lifetime in milliseconds; `None` when unlimited or absent.
    pub fn ttl_ms(&self) -> Option<u64> {
        self.ttl.flatten()
    }
}

/// The answer to a task-augmented request: the task that was created.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct CreateTaskResult {
    /// The task.
    pub task: Task,
    /// `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Members this crate does not model.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// Params of `tasks/get`, `tasks/result` and `tasks/cancel`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GetTaskParams {
    /// The task id.
    pub task_id: String,
    /// `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Members this crate does not model.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl GetTaskParams {
    /// Params naming a task.
    pub fn new(task_id: impl Into<String>) -> Self {
        GetTaskParams { task_id: task_id.into(), ..Default::default() }
    }
}

/// Params of `tasks/result`.
pub type GetTaskPayloadParams = GetTaskParams;
/// Params of `tasks/cancel`.
pub type CancelTaskParams = GetTaskParams;

/// Result of `tasks/get`: the task's fields at the top level, plus `_meta`.
///
/// Members this crate does not model are kept in `task.extra`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct GetTaskResult {
    /// The task.
    #[serde(flatten)]
    pub task: Task,
    /// `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// Result of `tasks/cancel`: the task in its new state.
pub type CancelTaskResult = GetTaskResult;

/// Result of `tasks/result`: the result of the underlying request (for instance a
/// `CallToolResult`), kept open; decode it with [`GetTaskPayloadResult::decode`].
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct GetTaskPayloadResult {
    /// `_meta`; normally carries `io.modelcontextprotocol/related-task`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// The payload's members.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl GetTaskPayloadResult {
    /// Decode the payload as the result type of the underlying request.
    pub fn decode<T: DeserializeOwned>(&self) -> Result<T, serde_json::Error> {
        let mut object = self.extra.clone();
        if let Some(meta) = &self.meta {
            object.insert("_meta".to_owned(), Value::Object(meta.0.clone()));
        }
        serde_json::from_value(Value::Object(object))
    }

    /// The task this payload belongs to, from `_meta`.
    pub fn related_task(&self) -> Option<RelatedTaskMetadata> {
        self.meta.as_ref()?.get(Meta::RELATED_TASK)
    }
}

/// Params of `tasks/list`.
pub type ListTasksParams = PaginatedParams;

/// Result of `tasks/list`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListTasksResult {
    /// The tasks of this page.
    pub tasks: Vec<Task>,
    /// Cursor of the next page, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<Cursor>,
    /// `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Members this crate does not model.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// Params of `notifications/tasks/status`: the task's fields at the top level, plus `_meta`.
///
/// Members this crate does not model are kept in `task.extra`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct TaskStatusParams {
    /// The task.
    #[serde(flatten)]
    pub task: Task,
    /// `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

crate::request_methods! {
    /// `tasks/get` (2025-11-25).
    GetTask = "tasks/get", GetTaskParams => GetTaskResult;
    /// `tasks/result` (2025-11-25): blocks until the task is terminal, then returns its payload.
    GetTaskPayload = "tasks/result", GetTaskPayloadParams => GetTaskPayloadResult;
    /// `tasks/cancel` (2025-11-25).
    CancelTask = "tasks/cancel", CancelTaskParams => CancelTaskResult;
    /// `tasks/list` (2025-11-25).
    ListTasks = "tasks/list", ListTasksParams => ListTasksResult;
}

crate::notification_methods! {
    /// `notifications/tasks/status` (2025-11-25). The wire `status` enum is [`TaskState`].
    TaskStatus = "notifications/tasks/status", TaskStatusParams;
}

/// The related task a 2025-11-25 message carries in `_meta`.
impl Meta {
    /// The task a 2025-11-25 message belongs to.
    pub fn related_task(&self) -> Option<RelatedTaskMetadata> {
        self.get(Self::RELATED_TASK)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::method::{NotificationMethod, RequestMethod};
    use crate::types::mrtr::Outcome;
    use crate::types::tools::{CallTool, CallToolResult};
    use serde_json::json;

    fn task_json() -> Value {
        json!({
            "taskId": "f0c6c49ccd9e369e7bf16c4992f54010", "status": "working", "ttl": 300000,
            "createdAt": "2026-11-30T08:06:44.870Z", "lastUpdatedAt": "2026-11-30T08:06:45.874Z",
            "pollInterval": 1000, "statusMessage": "Analyzing content..."
        })
    }

    #[test]
    fn a_state_names_itself_as_on_the_wire() {
        for wire in ["working", "input_required", "completed", "failed", "cancelled", "paused"] {
            let state: TaskState = serde_json::from_value(json!(wire)).unwrap();
            assert_eq!(state.as_str(), wire);
        }
    }

    #[test]
    fn ttl_null_absent_and_number_round_trip() {
        let mut v = task_json();
        let t: Task = serde_json::from_value(v.clone()).unwrap();
        assert_eq!(t.ttl_ms(), Some(300000));
        assert_eq!(serde_json::to_value(&t).unwrap(), v);

        v["ttl"] = Value::Null;
        let t: Task = serde_json::from_value(v.clone()).unwrap();
        assert_eq!(t.ttl, Some(None));
        assert_eq!(t.ttl_ms(), None);
        assert_eq!(serde_json::to_value(&t).unwrap(), v);

        v.as_object_mut().unwrap().remove("ttl");
        let t: Task = serde_json::from_value(v.clone()).unwrap();
        assert_eq!(t.ttl, None);
        assert_eq!(serde_json::to_value(&t).unwrap(), v);

        let fresh = Task::new("t", TaskState::Working, "2025-11-25T00:00:00Z");
        assert_eq!(serde_json::to_value(&fresh).unwrap()["ttl"], Value::Null);
    }

    #[test]
    fn status_is_open() {
        let mut v = task_json();
        v["status"] = json!("input_required");
        let t: Task = serde_json::from_value(v.clone()).unwrap();
        assert_eq!(t.status, TaskState::InputRequired);
        assert!(!t.status.is_terminal());
        v["status"] = json!("paused");
        let t: Task = serde_json::from_value(v.clone()).unwrap();
        assert_eq!(t.status, TaskState::Unknown("paused".into()));
        assert_eq!(serde_json::to_value(&t).unwrap(), v);
        assert!(TaskState::Cancelled.is_terminal());
    }

    #[test]
    fn get_task_result_keeps_meta_and_unknown_members() {
        let mut v = task_json();
        v["_meta"] = json!({});
        v["vendor"] = json!({"x": 1});
        let r: GetTaskResult = serde_json::from_value(v.clone()).unwrap();
        assert_eq!(r.task.status, TaskState::Working);
        assert!(r.meta.as_ref().unwrap().is_empty());
        assert_eq!(r.task.extra["vendor"], json!({"x": 1}));
        assert_eq!(serde_json::to_value(&r).unwrap(), v);
    }

    #[test]
    fn status_notification_and_list_round_trip() {
        let v = task_json();
        let n: TaskStatusParams = serde_json::from_value(v.clone()).unwrap();
        assert_eq!(n.task.poll_interval, Some(1000));
        assert_eq!(serde_json::to_value(&n).unwrap(), v);
        let list = json!({"tasks": [task_json()], "nextCursor": "c2", "_meta": {}});
        let l: ListTasksResult = serde_json::from_value(list.clone()).unwrap();
        assert_eq!(l.tasks.len(), 1);
        assert_eq!(serde_json::to_value(&l).unwrap(), list);
        assert_eq!(TaskStatus::METHOD, "notifications/tasks/status");
        assert_eq!(GetTaskPayload::METHOD, "tasks/result");
    }

    #[test]
    fn payload_decodes_as_the_underlying_result() {
        let v = json!({
            "content": [{"type": "text", "text": "# Report"}],
            "_meta": {"io.modelcontextprotocol/related-task": {"taskId": "f0c6"}}
        });
        let p: GetTaskPayloadResult = serde_json::from_value(v.clone()).unwrap();
        assert_eq!(p.related_task().unwrap().task_id, "f0c6");
        let r: CallToolResult = p.decode().unwrap();
        assert_eq!(r.content[0].as_text(), Some("# Report"));
        assert!(r.meta.is_some());
        assert_eq!(serde_json::to_value(&p).unwrap(), v);
    }

    #[test]
    fn tool_call_answered_with_a_task() {
        let v = json!({"task": task_json()});
        let raw = crate::jsonrpc::to_raw(&v).unwrap();
        let Outcome::Task(created) = CallTool::decode_result(&raw).unwrap() else { panic!() };
        assert_eq!(created.task.task_id, "f0c6c49ccd9e369e7bf16c4992f54010");
        assert_eq!(created.task.ttl_ms(), Some(300000));
        assert_eq!(serde_json::to_value(Outcome::<CallToolResult>::Task(created)).unwrap(), v);
        // A completed result that happens to have a `task` member is still a completed result.
        let v = json!({"content": [], "task": "not a task"});
        let raw = crate::jsonrpc::to_raw(&v).unwrap();
        assert!(matches!(CallTool::decode_result(&raw).unwrap(), Outcome::Complete(_)));
    }

    #[test]
    fn params_keep_unknown_members() {
        // TS SDK 1.32.2 sends `task` on tasks/get; it must survive.
        let v = json!({"taskId": "abc", "task": {"ttl": 60000}});
        let p: GetTaskParams = serde_json::from_value(v.clone()).unwrap();
        assert_eq!(p.task_id, "abc");
        assert_eq!(serde_json::to_value(&p).unwrap(), v);
        assert_eq!(serde_json::to_value(GetTaskParams::new("x")).unwrap(), json!({"taskId": "x"}));
    }
}
