//! `getActivityLog`: the timeline, filtered.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::actors::activity_log::{self, CallStatus, Entry, Query};
use crate::protocol::id::SessionId;
use crate::protocol::mcp::CallToolResult;
use crate::protocol::mcp::Effect;
use crate::tools::{ask, output, Tool, ToolContext, ToolResult};

pub struct GetActivityLog;

#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Args {
    session_id: Option<SessionId>,
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
    /// More entries after these match (ask again with `afterId` the last id here).
    more: bool,
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
    const EFFECT: Effect = Effect::Reads;
    const DESCRIPTION: &'static str =
        "What every agent did: tool calls (tool, session, status, duration, argument summary) and \
         lifecycle events, oldest first, filtered by session, tool, status, time (since, Unix ms) or id: \
         the newest `limit` entries, or after a cursor (since, afterId) the first `limit` after it, with \
         `more` when there are others (ask again with afterId the last id).";
    const OUTPUT: Option<fn() -> serde_json::Value> = Some(output::<Answer>);

    async fn call(ctx: ToolContext, args: Args) -> ToolResult {
        let query = Query {
            session_id: args.session_id,
            tool: args.tool,
            status: args.status,
            since_ms: args.since,
            after_id: args.after_id,
            include_lifecycle: args.include_lifecycle && args.status.is_none(),
            // One more than asked for, to know whether there are more.
            limit: args.limit + 1,
        };
        let paged = query.after_id.is_some() || query.since_ms.is_some();
        let mut entries = ask(&ctx.services.activity, activity_log::NAME, query).await?;
        let more = entries.len() > args.limit;
        if more && paged {
            entries.truncate(args.limit);
        } else if more {
            entries.remove(0);
        }
        Ok(CallToolResult::structured(&Answer {
            entries,
            more: more && paged,
        }))
    }
}
