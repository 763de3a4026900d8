//! Claude tasks: `runClaudeTask`, `getClaudeTaskStatus`, `listClaudeTasks`,
//! `cancelClaudeTask`. A session sees only its own tasks.

pub mod cancel_claude_task;
pub mod get_claude_task_status;
pub mod list_claude_tasks;
pub mod run_claude_task;

use actix::{Handler, Message};
use serde::Deserialize;
use serde_json::{json, Value};

use crate::actors::orchestrator::{Orchestrator, TaskError};
use crate::orchestrator::Task;
use crate::protocol::mcp::CallToolResult;

/// Arguments of the tools that name one task.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskIdArgs {
    task_id: String,
}

/// Schema of [`TaskIdArgs`].
pub(crate) fn task_id_schema() -> Value {
    json!({
        "type": "object",
        "properties": { "taskId": { "type": "string", "minLength": 1 } },
        "required": ["taskId"],
        "additionalProperties": false
    })
}

/// Sends `msg` to the orchestrator and shows the task it answers with.
pub(crate) async fn ask_orchestrator<M>(
    orchestrator: &actix::Addr<Orchestrator>,
    msg: M,
) -> CallToolResult
where
    M: Message<Result = Result<Task, TaskError>> + Send + 'static,
    Orchestrator: Handler<M>,
{
    match orchestrator.send(msg).await {
        Ok(Ok(t)) => CallToolResult::json(&view(&t)),
        Ok(Err(e)) => CallToolResult::error(e.to_string()),
        Err(e) => CallToolResult::error(format!("the orchestrator is unavailable: {e}")),
    }
}

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
