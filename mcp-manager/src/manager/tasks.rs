//! The manager's task operations: `tasks/get`, `tasks/cancel`, `tasks/list` and waiting for a
//! known task's result, on the server named, and the task id in a host result's metadata.

use mcp_protocol::types::meta::Cursor;
use mcp_protocol::types::tasks::{ListTasksResult, Task};
use mcp_protocol::types::tools::CallToolResult;
use tool_system::ToolExecutionResult;

use super::{ManagerError, McpManager};
use crate::connection::{ConnectionError, TaskOptions};
use crate::session::RequestOptions;

/// The metadata key of a result that came from a task.
pub const TASK_ID_METADATA: &str = "task_id";

/// `result` with its task's id in the metadata, when it came from a task.
pub(super) fn with_task_id(result: ToolExecutionResult, task_id: Option<&str>) -> ToolExecutionResult {
    match task_id {
        Some(id) => result.with_metadata(TASK_ID_METADATA, id.into()),
        None => result,
    }
}

/// The id of the task a failed call was about.
pub(super) fn error_task_id(error: &ManagerError) -> Option<String> {
    match error {
        ManagerError::Connection(ConnectionError::Task(e)) if !e.task_id().is_empty() => Some(e.task_id().to_owned()),
        _ => None,
    }
}

impl McpManager {
    // The manager's one error type, made once per call.
    #[allow(clippy::result_large_err)]
    fn connection_of(&self, server: &str) -> Result<std::sync::Arc<super::ManagedServer>, ManagerError> {
        self.shared.server(server).ok_or_else(|| ManagerError::UnknownServer(server.into()))
    }

    /// `tasks/get` on `server`: the task's state (in the 2025-11-25 shape in both eras).
    pub async fn get_task(&self, server: &str, task_id: &str) -> Result<Task, ManagerError> {
        Ok(self.connection_of(server)?.conn.get_task(task_id).await?)
    }

    /// `tasks/cancel` on `server`; the task's new state where the era's answer has it.
    pub async fn cancel_task(&self, server: &str, task_id: &str) -> Result<Option<Task>, ManagerError> {
        Ok(self.connection_of(server)?.conn.cancel_task(task_id).await?)
    }

    /// `tasks/list` on `server`, one page (2025-11-25 only).
    pub async fn list_tasks(&self, server: &str, cursor: Option<Cursor>) -> Result<ListTasksResult, ManagerError> {
        Ok(self.connection_of(server)?.conn.list_tasks(cursor).await?)
    }

    /// Wait for the result of task `task_id` on `server` (started earlier by this host), within
    /// `options.timeout`, answering the input it asks for.
    pub async fn resume_task(
        &self,
        server: &str,
        task_id: &str,
        options: RequestOptions,
        task: TaskOptions,
    ) -> Result<CallToolResult, ManagerError> {
        let server = self.connection_of(server)?;
        let _in_flight = server.in_flight.enter().await;
        Ok(server.conn.resume_task(task_id, options, task).await?)
    }
}
