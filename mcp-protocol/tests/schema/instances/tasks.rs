//! Tasks (2025-11-25): task metadata, the `tasks/*` requests and results, the status
//! notification, and the answer to a task-augmented request.

use mcp_protocol::types::meta::Meta;
use mcp_protocol::types::tasks::{
    CreateTaskResult, GetTaskParams, GetTaskPayloadResult, GetTaskResult, ListTasksResult, RelatedTaskMetadata, Task,
    TaskMetadata, TaskState, TaskStatusParams,
};
use serde_json::json;

use super::{Rev, Variant, object, vendor_meta};

/// Asks for a request to run as a task.
pub fn task_metadata() -> TaskMetadata {
    TaskMetadata { ttl: Some(60_000), ..Default::default() }
}

/// A task: the required members (an unlimited, `null` lifetime) or every member.
pub fn task(full: bool) -> Task {
    let mut task = Task::new("task-1", TaskState::Working, "2025-11-25T10:00:00Z");
    if full {
        task.status = TaskState::InputRequired;
        task.status_message = Some("Waiting for the user".to_owned());
        task.last_updated_at = "2025-11-25T10:00:05Z".to_owned();
        task.ttl = Some(Some(300_000));
        task.poll_interval = Some(1_000);
    }
    task
}

fn related_task_meta() -> Meta {
    let related = RelatedTaskMetadata { task_id: "task-1".to_owned(), ..Default::default() };
    Meta::new().with(Meta::RELATED_TASK, related)
}

/// `tasks/get`, `tasks/result` and `tasks/cancel` params: the task id.
pub fn get_task_params(_rev: Rev) -> Vec<Variant<Option<GetTaskParams>>> {
    vec![Variant::min(Some(GetTaskParams::new("task-1"))), Variant::max(Some(GetTaskParams::new("task-1")))]
}

/// `tasks/get` and `tasks/cancel` result: the task's members at the top level.
pub fn get_task_result(_rev: Rev) -> Vec<Variant<GetTaskResult>> {
    vec![
        Variant::min(GetTaskResult { task: task(false), meta: None }),
        Variant::max(GetTaskResult { task: task(true), meta: Some(related_task_meta()) }),
    ]
}

/// `tasks/result` result: the underlying request's result, here a tool result.
pub fn get_task_payload_result(_rev: Rev) -> Vec<Variant<GetTaskPayloadResult>> {
    let payload = object(json!({"content": [{"type": "text", "text": "# Report"}], "isError": false}));
    vec![
        Variant::min(GetTaskPayloadResult::default()),
        Variant::max(GetTaskPayloadResult { meta: Some(related_task_meta()), extra: payload }),
    ]
}

/// `tasks/list` result.
pub fn list_tasks_result(_rev: Rev) -> Vec<Variant<ListTasksResult>> {
    vec![
        Variant::min(ListTasksResult { tasks: vec![task(false)], ..Default::default() }),
        Variant::max(ListTasksResult {
            tasks: vec![task(true)],
            next_cursor: Some("page-2".to_owned()),
            meta: Some(vendor_meta()),
            ..Default::default()
        }),
    ]
}

/// `notifications/tasks/status` params: the task's members at the top level.
pub fn task_status_params(_rev: Rev) -> Vec<Variant<Option<TaskStatusParams>>> {
    vec![
        Variant::min(Some(TaskStatusParams { task: task(false), meta: None })),
        Variant::max(Some(TaskStatusParams { task: task(true), meta: Some(related_task_meta()) })),
    ]
}

/// The answer to a task-augmented request.
pub fn create_task_result(_rev: Rev) -> Vec<Variant<CreateTaskResult>> {
    vec![
        Variant::min(CreateTaskResult { task: task(false), ..Default::default() }),
        Variant::max(CreateTaskResult { task: task(true), meta: Some(related_task_meta()), ..Default::default() }),
    ]
}
