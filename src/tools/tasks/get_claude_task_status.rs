//! `getClaudeTaskStatus`.

use serde::Deserialize;
use serde_json::{json, Value};

use super::view;
use crate::actors::orchestrator::GetTask;
use crate::protocol::mcp::CallToolResult;
use crate::tools::{Tool, ToolContext};

/// The tool.
pub struct GetClaudeTaskStatus;

/// Arguments.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Args {
    task_id: String,
}

impl Tool for GetClaudeTaskStatus {
    type Args = Args;
    const NAME: &'static str = "getClaudeTaskStatus";
    const DESCRIPTION: &'static str =
        "Status, output and error of one of this session's Claude tasks.";

    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": { "taskId": { "type": "string", "minLength": 1 } },
            "required": ["taskId"],
            "additionalProperties": false
        })
    }

    async fn call(ctx: ToolContext, args: Args) -> CallToolResult {
        let ask = GetTask {
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
