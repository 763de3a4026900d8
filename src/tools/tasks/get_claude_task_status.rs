//! `getClaudeTaskStatus`.

use serde_json::Value;

use super::{ask_orchestrator, task_id_schema, TaskIdArgs};
use crate::actors::orchestrator::GetTask;
use crate::protocol::mcp::CallToolResult;
use crate::tools::{Tool, ToolContext};

/// The tool.
pub struct GetClaudeTaskStatus;

impl Tool for GetClaudeTaskStatus {
    type Args = TaskIdArgs;
    const NAME: &'static str = "getClaudeTaskStatus";
    const DESCRIPTION: &'static str =
        "Status, output and error of one of this session's Claude tasks.";

    fn schema() -> Value {
        task_id_schema()
    }

    async fn call(ctx: ToolContext, args: TaskIdArgs) -> CallToolResult {
        let ask = GetTask {
            task_id: args.task_id,
            session: Some(ctx.session_id.to_string()),
        };
        ask_orchestrator(&ctx.services.orchestrator, ask).await
    }
}
