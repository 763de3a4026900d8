//! `getActivityLog`: the timeline, filtered.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::actors::activity_log::{self, CallStatus, Entry, Query};
use crate::protocol::mcp::CallToolResult;
use crate::tools::{ask, output, Tool, ToolContext, ToolResult};

pub struct GetActivityLog;

#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Args {
    session_id: Option<String>,
    tool: Option<String>,
    status: Option<CallStatus>,
    /// Unix milliseconds
    since: Option<u64>,
    after_id: Option<u64>,
    #[serde(default = "default_limit")]
    #[schemars(range(min = 1, max = 500))]
    limit: usize,
    #[serde(default = "yes")]
    include_lifecycle: bool,
}

/// The entries, oldest first.
#[derive(Serialize, JsonSchema)]
pub struct Answer {
    entries: Vec<Entry>,
}

fn default_limit() -> usize {
    50
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
    const OUTPUT: Option<fn() -> serde_json::Value> = Some(output::<Answer>);

    async fn call(ctx: ToolContext, args: Args) -> ToolResult {
        let query = Query {
            session_id: args.session_id,
            tool: args.tool,
            status: args.status,
            since_ms: args.since,
            after_id: args.after_id,
            include_lifecycle: args.include_lifecycle && args.status.is_none(),
            limit: args.limit,
        };
        let entries = ask(&ctx.services.activity, activity_log::NAME, query).await?;
        Ok(CallToolResult::structured(&Answer { entries }))
    }
}
