//! `watchActivityLog`: long-poll for new timeline entries.

use std::time::Duration;

use serde::Deserialize;
use serde_json::{json, Value};

use crate::actors::activity_log::{self, Watch, WatchStart, MAX_WATCHERS};
use crate::actors::supervise::ActorFault;
use crate::protocol::mcp::CallToolResult;
use crate::tools::{Tool, ToolContext, ToolTimeout};

/// Longest wait a caller may ask for (below the default tool timeout).
pub const MAX_WAIT_MS: u64 = 55_000;

/// The tool.
pub struct WatchActivityLog;

/// Arguments.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Args {
    after_id: Option<u64>,
    session_id: Option<String>,
    tool: Option<String>,
    timeout_ms: Option<u64>,
}

impl Tool for WatchActivityLog {
    type Args = Args;
    const NAME: &'static str = "watchActivityLog";
    const DESCRIPTION: &'static str =
        "Wait for new activity entries after afterId (default: now), up to timeoutMs (max 55 s). \
         Returns as soon as one arrives, or an empty list on timeout.";
    const TIMEOUT: ToolTimeout = ToolTimeout::Fixed(Duration::from_millis(MAX_WAIT_MS + 5_000));

    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "afterId": { "type": "integer", "minimum": 0 },
                "sessionId": { "type": "string" },
                "tool": { "type": "string" },
                "timeoutMs": { "type": "integer", "minimum": 0, "maximum": MAX_WAIT_MS, "default": 30000 }
            },
            "additionalProperties": false
        })
    }

    async fn call(ctx: ToolContext, args: Args) -> CallToolResult {
        let wait = Duration::from_millis(args.timeout_ms.unwrap_or(30_000));
        let watch = Watch {
            after_id: args.after_id,
            session_id: args.session_id,
            tool: args.tool,
        };
        let start = match ctx.services.activity.send(watch).await {
            Ok(Ok(start)) => start,
            Ok(Err(fault)) => return CallToolResult::error(fault.to_string()),
            Err(e) => {
                return CallToolResult::error(
                    ActorFault::mailbox(activity_log::NAME, e).to_string(),
                )
            }
        };
        let entries = match start {
            WatchStart::Ready(entries) => entries,
            WatchStart::Busy => {
                return CallToolResult::error(format!(
                    "Too many activity watchers ({MAX_WATCHERS}); retry shortly"
                ))
            }
            WatchStart::Waiting(rx) => match tokio::time::timeout(wait, rx).await {
                Ok(Ok(entries)) => entries,
                Ok(Err(_)) => {
                    return CallToolResult::error(format!(
                        "the {} actor restarted while watching; call again",
                        activity_log::NAME
                    ))
                }
                Err(_) => Vec::new(),
            },
        };
        let next = entries.last().map(|e| e.id);
        CallToolResult::json(
            &json!({ "entries": entries, "lastId": next, "timedOut": next.is_none() }),
        )
    }
}
