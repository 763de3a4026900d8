//! `cancelClaudeTask`: cancels a pending or running task (its whole process group).

use serde::Deserialize;
use serde_json::{json, Value};

use super::view;
use crate::actors::orchestrator::CancelTask;
use crate::protocol::mcp::CallToolResult;
use crate::tools::{Tool, ToolContext};

/// The tool.
pub struct CancelClaudeTask;

/// Arguments.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Args {
    task_id: String,
}

impl Tool for CancelClaudeTask {
    type Args = Args;
    const NAME: &'static str = "cancelClaudeTask";
    const DESCRIPTION: &'static str =
        "Cancel one of this session's pending or running Claude tasks.";

    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": { "taskId": { "type": "string", "minLength": 1 } },
            "required": ["taskId"],
            "additionalProperties": false
        })
    }

    async fn call(ctx: ToolContext, args: Args) -> CallToolResult {
        let ask = CancelTask {
            task_id: args.task_id,
            session: Some(ctx.session_id.to_string()),
        };
        match ctx.services.orchestrator.send(ask).await {
            Ok(Ok(t)) => CallToolResult::json(&view(&t)),
            Ok(Err(e)) => CallToolResult::error(e),
            Err(e) => CallToolResult::error(format!("the orchestrator is unavailable: {e}")),
        }
    }
}
