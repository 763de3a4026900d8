//! Claude tasks: `runClaudeTask`, `getClaudeTaskStatus`, `listClaudeTasks`,
//! `cancelClaudeTask`. A session sees only its own tasks.

pub mod cancel_claude_task;
pub mod get_claude_task_status;
pub mod list_claude_tasks;
pub mod run_claude_task;

use serde_json::{json, Value};

use crate::orchestrator::Task;

/// A task as agents see it.
pub(crate) fn view(task: &Task) -> Value {
    json!({
        "taskId": task.id,
        "status": task.status,
        "createdAt": task.created_at,
        "startedAt": task.started_at,
        "finishedAt": task.finished_at,
        "timeoutMs": task.timeout_ms,
        "output": task.output,
        "error": task.error,
    })
}
