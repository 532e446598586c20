//! Tasks (2025-11-25): task-augmented requests and the `tasks/*` methods.

use serde::{Deserialize, Serialize};

use super::meta::{JsonObject, Meta};

/// Asks for a request to run as a task.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct TaskMetadata {
    /// Requested lifetime in milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttl: Option<u64>,
    /// Members this crate does not model.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// The answer to a task-augmented request: the task that was created.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct CreateTaskResult {
    /// The task (typed in full by the tasks module).
    pub task: JsonObject,
    /// `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Members this crate does not model.
    #[serde(flatten)]
    pub extra: JsonObject,
}
