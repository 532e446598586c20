//! How `mcp call` shows a tool call that runs as a task: one status line on stderr, replaced at
//! each change (`task 786512e2 working: Analyzing content...`), on a terminal only, through
//! [`crate::output::terminal`] (which sanitizes what the server wrote). With `--json` the final
//! document carries the task's id (`taskId`).

use std::sync::Arc;

use mcp_manager::connection::{TaskObserver, TaskUpdate};
use mcp_protocol::types::tasks::TaskState;

use crate::output::terminal;

/// Most characters of a task id shown on the status line.
const SHOWN_ID_CHARS: usize = 12;

/// The status line of `update`: `task ID STATUS: MESSAGE` (the id cut to a few characters).
pub fn status_text(update: &TaskUpdate) -> String {
    let id = &update.task.task_id;
    let shown: String = id.chars().take(SHOWN_ID_CHARS).collect();
    let shown = if shown.len() < id.len() { format!("{shown}…") } else { shown };
    let status = match &update.task.status {
        TaskState::Working => "working",
        TaskState::InputRequired => "needs input",
        TaskState::Completed => "completed",
        TaskState::Failed => "failed",
        TaskState::Cancelled => "cancelled",
        TaskState::Unknown(other) => other.as_str(),
    };
    match update.task.status_message.as_deref().filter(|m| !m.trim().is_empty()) {
        Some(message) => format!("task {shown} {status}: {message}"),
        None => format!("task {shown} {status}"),
    }
}

/// The observer that shows each change on stderr, on a terminal only (`None` elsewhere: piped
/// output stays clean).
pub fn observer() -> Option<TaskObserver> {
    if !terminal::stderr_is_terminal() {
        return None;
    }
    Some(Arc::new(|update: &TaskUpdate| {
        if update.task.status.is_terminal() {
            terminal::clear_status_line();
        } else {
            terminal::status_line(&status_text(update));
        }
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcp_protocol::types::tasks::Task;

    fn update(id: &str, status: TaskState, message: Option<&str>) -> TaskUpdate {
        let mut task = Task::new(id, status, "2025-11-25T00:00:00Z");
        task.status_message = message.map(str::to_owned);
        TaskUpdate { server: Arc::from("s"), task, first: false }
    }

    #[test]
    fn status_lines_name_the_task_its_state_and_message() {
        let u = update("786512e2-9e0d-44bd-8f29", TaskState::Working, Some("Analyzing content..."));
        assert_eq!(status_text(&u), "task 786512e2-9e0… working: Analyzing content...");
        assert_eq!(status_text(&update("t1", TaskState::InputRequired, Some("  "))), "task t1 needs input");
        assert_eq!(status_text(&update("t1", TaskState::Unknown("paused".into()), None)), "task t1 paused");
    }

    #[test]
    fn server_text_on_the_status_line_is_sanitized() {
        let u = update("t1", TaskState::Working, Some("evil\x1b[2J\nline"));
        let line = terminal::status_line_text(&status_text(&u));
        assert!(!line.contains("\x1b[2J") && !line.contains('\n'), "{line:?}");
    }
}
