//! `listClaudeTasks`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::TaskView;
use crate::actors::orchestrator::ListTasks;
use crate::orchestrator::TaskStatus;
use crate::protocol::mcp::CallToolResult;
use crate::protocol::mcp::Effect;
use crate::tools::{output, Tool, ToolContext, ToolError, ToolResult};

pub struct ListClaudeTasks;

/// The tasks, oldest first.
#[derive(Serialize, JsonSchema)]
pub struct Answer {
    tasks: Vec<TaskView>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    status: Option<TaskStatus>,
}

impl Tool for ListClaudeTasks {
    type Args = Args;
    const NAME: &'static str = "listClaudeTasks";
    const EFFECT: Effect = Effect::Reads;
    const DESCRIPTION: &'static str =
        "This session's Claude tasks, oldest first, optionally by status.";
    const OUTPUT: Option<fn() -> serde_json::Value> = Some(output::<Answer>);

    async fn call(ctx: ToolContext, args: Args) -> ToolResult {
        let ask = ListTasks {
            session: Some(ctx.session_id.clone()),
        };
        let tasks = ctx
            .services
            .orchestrator
            .send(ask)
            .await
            .map_err(ToolError::OrchestratorUnavailable)?;
        let tasks = tasks
            .iter()
            .filter(|t| args.status.is_none_or(|s| s == t.status))
            .map(TaskView::of)
            .collect();
        Ok(CallToolResult::structured(&Answer { tasks }))
    }
}
