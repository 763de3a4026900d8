//! Claude tasks: `runClaudeTask`, `getClaudeTaskStatus`, `listClaudeTasks`,
//! `cancelClaudeTask`. A session sees only its own tasks.

pub mod cancel_claude_task;
pub mod get_claude_task_status;
pub mod list_claude_tasks;
pub mod run_claude_task;

use std::fmt::Display;

use actix::{Handler, Message};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};

use super::{ToolError, ToolResult};
use crate::actors::orchestrator::Orchestrator;
use crate::orchestrator::Task;
use crate::protocol::mcp::CallToolResult;

/// Arguments of the tools that name one task.
#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TaskIdArgs {
    #[schemars(length(min = 1))]
    task_id: String,
}

/// Sends `msg` to the orchestrator and shows the task it answers with; its refusal
/// (unknown task, another session's) is the tool error.
pub(crate) async fn ask_orchestrator<M, E>(
    orchestrator: &actix::Addr<Orchestrator>,
    msg: M,
) -> ToolResult
where
    M: Message<Result = Result<Task, E>> + Send + 'static,
    E: Display + Send + 'static,
    Orchestrator: Handler<M>,
{
    let task = orchestrator
        .send(msg)
        .await
        .map_err(ToolError::OrchestratorUnavailable)?
        .map_err(|e| ToolError::refused(e.to_string()))?;
    Ok(CallToolResult::json(&view(&task)))
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
