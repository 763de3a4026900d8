//! `cancelClaudeTask`: cancels a pending or running task (its whole process group).

use super::{ask_orchestrator, TaskIdArgs, TaskView};
use crate::actors::orchestrator::CancelTask;
use crate::protocol::mcp::Effect;
use crate::tools::{output, Tool, ToolContext, ToolResult};

pub struct CancelClaudeTask;

impl Tool for CancelClaudeTask {
    type Args = TaskIdArgs;
    const NAME: &'static str = "cancelClaudeTask";
    const EFFECT: Effect = Effect::Changes;
    const DESCRIPTION: &'static str =
        "Cancel one of this session's pending or running Claude tasks.";
    const OUTPUT: Option<fn() -> serde_json::Value> = Some(output::<TaskView>);

    async fn call(ctx: ToolContext, args: TaskIdArgs) -> ToolResult {
        let ask = CancelTask {
            task_id: args.task_id.into(),
            session: Some(ctx.session_id.clone()),
        };
        ask_orchestrator(&ctx.services.orchestrator, ask).await
    }
}
