//! `getActivityLog`: the timeline, filtered.

use serde::Deserialize;
use serde_json::{json, Value};

use crate::actors::activity_log::{self, CallStatus, Query};
use crate::actors::supervise::ActorFault;
use crate::protocol::mcp::CallToolResult;
use crate::tools::{Tool, ToolContext};

/// The tool.
pub struct GetActivityLog;

/// Arguments.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Args {
    session_id: Option<String>,
    tool: Option<String>,
    status: Option<CallStatus>,
    since: Option<u64>,
    after_id: Option<u64>,
    limit: Option<usize>,
    #[serde(default = "yes")]
    include_lifecycle: bool,
}

fn yes() -> bool {
    true
}

impl Tool for GetActivityLog {
    type Args = Args;
    const NAME: &'static str = "getActivityLog";
    const DESCRIPTION: &'static str =
        "What every agent did: tool calls (tool, session, status, duration, argument summary) and \
         lifecycle events, oldest first, filtered by session, tool, status, time (since, Unix ms) or id.";

    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "sessionId": { "type": "string" },
                "tool": { "type": "string" },
                "status": { "enum": ["success", "error", "timeout", "cancelled", "rejected"] },
                "since": { "type": "integer", "minimum": 0, "description": "Unix milliseconds" },
                "afterId": { "type": "integer", "minimum": 0 },
                "limit": { "type": "integer", "minimum": 1, "maximum": 500, "default": 50 },
                "includeLifecycle": { "type": "boolean", "default": true }
            },
            "additionalProperties": false
        })
    }

    async fn call(ctx: ToolContext, args: Args) -> CallToolResult {
        let query = Query {
            session_id: args.session_id,
            tool: args.tool,
            status: args.status,
            since_ms: args.since,
            after_id: args.after_id,
            include_lifecycle: args.include_lifecycle && args.status.is_none(),
            limit: args.limit.unwrap_or(50),
        };
        match ctx.services.activity.send(query).await {
            Ok(Ok(entries)) => CallToolResult::json(&json!({ "entries": entries })),
            Ok(Err(fault)) => CallToolResult::error(fault.to_string()),
            Err(e) => CallToolResult::error(ActorFault::mailbox(activity_log::NAME, e).to_string()),
        }
    }
}
