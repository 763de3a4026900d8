//! `watchActivityLog`: long-poll for new timeline entries.

use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::get_activity_log::GetActivityLog;
use crate::actors::activity_log::{self, Entry, Query, Quiet, Watch, WatchStart, MAX_WATCHERS};
use crate::protocol::id::SessionId;
use crate::protocol::mcp::CallToolResult;
use crate::protocol::mcp::Effect;
use crate::tools::{ask, output, Tool, ToolContext, ToolError, ToolResult, ToolTimeout};

/// Longest wait a caller may ask for (below the default tool timeout).
pub const MAX_WAIT_MS: u64 = 55_000;

pub struct WatchActivityLog;

#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Args {
    after_id: Option<u64>,
    session_id: Option<SessionId>,
    tool: Option<String>,
    #[serde(default = "default_wait_ms")]
    #[schemars(range(max = MAX_WAIT_MS))]
    timeout_ms: u64,
}

fn default_wait_ms() -> u64 {
    30_000
}

/// The new entries, or none when the wait ran out.
#[derive(Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Answer {
    entries: Vec<Entry>,
    /// The next call's `afterId`: the newest entry's id, or on a timeout the position
    /// this call waited after (nothing is lost between two calls).
    last_id: u64,
    /// No entry came before `timeoutMs`.
    timed_out: bool,
}

impl Tool for WatchActivityLog {
    type Args = Args;
    const NAME: &'static str = "watchActivityLog";
    const EFFECT: Effect = Effect::Reads;
    const DESCRIPTION: &'static str =
        "Wait for new activity entries after afterId (default: now), up to timeoutMs (max 55 s). \
         Returns as soon as one arrives, or an empty list on timeout. Reads of the log \
         (getActivityLog, watchActivityLog) do not count as activity unless tool names one.";
    const OUTPUT: Option<fn() -> serde_json::Value> = Some(output::<Answer>);
    const TIMEOUT: ToolTimeout = ToolTimeout::Fixed(Duration::from_millis(MAX_WAIT_MS + 5_000));

    async fn call(ctx: ToolContext, args: Args) -> ToolResult {
        let wait = Duration::from_millis(args.timeout_ms);
        // "Now" is the newest entry's id, fixed here so that a timeout can say where to
        // go on from.
        let after_id = match args.after_id {
            Some(id) => id,
            None => {
                let newest = Query {
                    include_lifecycle: true,
                    limit: 1,
                    ..Query::default()
                };
                ask(&ctx.services.activity, activity_log::NAME, newest)
                    .await?
                    .last()
                    .map_or(0, |e| e.id)
            }
        };
        // Reads of the timeline (the poll before this one, another agent's watch) are
        // no news, unless they are what the caller watches for: a loop of watches
        // would never wait.
        const READS: &[&str] = &[WatchActivityLog::NAME, GetActivityLog::NAME];
        let quiet = (!args.tool.as_deref().is_some_and(|t| READS.contains(&t)))
            .then_some(Quiet { tools: READS });
        let watch = Watch {
            after_id: Some(after_id),
            session_id: args.session_id,
            tool: args.tool,
            quiet,
        };
        let start = ask(&ctx.services.activity, activity_log::NAME, watch).await?;
        let entries = match start {
            WatchStart::Ready(entries) => entries,
            WatchStart::Busy => {
                return Err(ToolError::refused(format!(
                    "Too many activity watchers ({MAX_WATCHERS}); retry shortly"
                )))
            }
            WatchStart::Waiting(rx) => match tokio::time::timeout(wait, rx).await {
                Ok(Ok(entries)) => entries,
                Ok(Err(_)) => {
                    return Err(ToolError::refused(format!(
                        "the {} actor restarted while watching; call again",
                        activity_log::NAME
                    )))
                }
                Err(_) => Vec::new(),
            },
        };
        let timed_out = entries.is_empty();
        Ok(CallToolResult::structured(&Answer {
            last_id: entries.last().map_or(after_id, |e| e.id),
            entries,
            timed_out,
        }))
    }
}
