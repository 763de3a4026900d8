//! `cancelClaudeTask`: cancels a pending or running task (its whole process group).

use serde_json::Value;

use super::{ask_orchestrator, task_id_schema, TaskIdArgs};
use crate::actors::orchestrator::CancelTask;
use crate::protocol::mcp::CallToolResult;
use crate::tools::{Tool, ToolContext};

/// The tool.
pub struct CancelClaudeTask;

impl Tool for CancelClaudeTask {
    type Args = TaskIdArgs;
    const NAME: &'static str = "cancelClaudeTask";
    const DESCRIPTION: &'static str =
        "Cancel one of this session's pending or running Claude tasks.";

    fn schema() -> Value {
        task_id_schema()
    }

    async fn call(ctx: ToolContext, args: TaskIdArgs) -> CallToolResult {
        let ask = CancelTask {
            task_id: args.task_id,
            session: Some(ctx.session_id.to_string()),
        };
        ask_orchestrator(&ctx.services.orchestrator, ask).await
    }
}
