//! `listClaudeTasks`.

use serde::Deserialize;
use serde_json::{json, Value};

use super::view;
use crate::actors::orchestrator::ListTasks;
use crate::orchestrator::TaskStatus;
use crate::protocol::mcp::CallToolResult;
use crate::tools::{Tool, ToolContext};

/// The tool.
pub struct ListClaudeTasks;

/// Arguments.
#[derive(Deserialize)]
pub struct Args {
    status: Option<TaskStatus>,
}

impl Tool for ListClaudeTasks {
    type Args = Args;
    const NAME: &'static str = "listClaudeTasks";
    const DESCRIPTION: &'static str =
        "This session's Claude tasks, oldest first, optionally by status.";

    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": { "status": { "enum": ["pending", "running", "done", "error", "cancelled", "interrupted"] } },
            "additionalProperties": false
        })
    }

    async fn call(ctx: ToolContext, args: Args) -> CallToolResult {
        let ask = ListTasks {
            session: Some(ctx.session_id.to_string()),
        };
        match ctx.services.orchestrator.send(ask).await {
            Ok(tasks) => {
                let tasks: Vec<Value> = tasks
                    .iter()
                    .filter(|t| args.status.is_none_or(|s| s == t.status))
                    .map(view)
                    .collect();
                CallToolResult::json(&json!({ "tasks": tasks }))
            }
            Err(e) => CallToolResult::error(format!("the orchestrator is unavailable: {e}")),
        }
    }
}
