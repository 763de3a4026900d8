//! `getClaudeTaskStatus`.

use super::{ask_orchestrator, TaskIdArgs, TaskView};
use crate::actors::orchestrator::GetTask;
use crate::protocol::mcp::Effect;
use crate::tools::{output, Tool, ToolContext, ToolResult};

pub struct GetClaudeTaskStatus;

impl Tool for GetClaudeTaskStatus {
    type Args = TaskIdArgs;
    const NAME: &'static str = "getClaudeTaskStatus";
    const EFFECT: Effect = Effect::Reads;
    const DESCRIPTION: &'static str =
        "Status, output and error of one of this session's Claude tasks.";
    const OUTPUT: Option<fn() -> serde_json::Value> = Some(output::<TaskView>);

    async fn call(ctx: ToolContext, args: TaskIdArgs) -> ToolResult {
        let ask = GetTask {
            task_id: args.task_id.into(),
            session: Some(ctx.session_id.clone()),
        };
        ask_orchestrator(&ctx.services.orchestrator, ask).await
    }
}
