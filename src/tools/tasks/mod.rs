//! Claude tasks: `runClaudeTask`, `getClaudeTaskStatus`, `listClaudeTasks`,
//! `cancelClaudeTask`. A session sees only its own tasks.

pub mod cancel_claude_task;
pub mod get_claude_task_status;
pub mod list_claude_tasks;
pub mod run_claude_task;

use std::fmt::Display;

use actix::{Handler, Message};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{ToolError, ToolResult};
use crate::actors::orchestrator::Orchestrator;
use crate::orchestrator::{Task, TaskStatus};
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
    Ok(CallToolResult::structured(&TaskView::of(&task)))
}

/// A task as agents see it: the answer of `runClaudeTask`, `getClaudeTaskStatus` and
/// `cancelClaudeTask`.
#[derive(Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TaskView {
    /// 12 hex digits.
    pub task_id: String,
    pub status: TaskStatus,
    /// Unix ms.
    pub created_at: u64,
    /// Unix ms; null while pending.
    pub started_at: Option<u64>,
    /// Unix ms; null until it ends.
    pub finished_at: Option<u64>,
    pub timeout_ms: u64,
    /// The assistant's text and the final result (capped).
    pub output: String,
    /// What went wrong; null when nothing did.
    pub error: Option<String>,
}

impl TaskView {
    /// How agents see `task`.
    pub fn of(task: &Task) -> Self {
        Self {
            task_id: task.id.to_string(),
            status: task.status,
            created_at: task.created_at,
            started_at: task.started_at,
            finished_at: task.finished_at,
            timeout_ms: task.timeout_ms,
            output: task.output.clone(),
            error: task.error.clone(),
        }
    }
}
