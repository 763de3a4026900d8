//! `watchDiagnostics`: long-poll for the next diagnostics the editor pushes.

use std::time::Duration;

use serde::Deserialize;
use serde_json::{json, Value};

use crate::actors::extension::{self, WatchDiagnostics as Watch};
use crate::actors::supervise::ActorFault;
use crate::protocol::mcp::CallToolResult;
use crate::tools::{EditorUse, Tool, ToolContext, ToolTimeout};

/// Longest wait a caller may ask for.
pub const MAX_WAIT_MS: u64 = 55_000;

/// The tool.
pub struct WatchDiagnostics;

/// Arguments.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Args {
    timeout_ms: Option<u64>,
}

impl Tool for WatchDiagnostics {
    type Args = Args;
    const NAME: &'static str = "watchDiagnostics";
    const EDITOR: EditorUse = EditorUse::Required;
    const TIMEOUT: ToolTimeout = ToolTimeout::Fixed(Duration::from_millis(MAX_WAIT_MS + 5_000));
    const DESCRIPTION: &'static str =
        "Wait (up to timeoutMs, max 55 s) for the editor's next diagnostics change and return it \
         in getDiagnostics' shape; an empty list on timeout.";

    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": { "timeoutMs": { "type": "integer", "minimum": 0, "maximum": MAX_WAIT_MS, "default": 30000 } },
            "additionalProperties": false
        })
    }

    async fn call(ctx: ToolContext, args: Args) -> CallToolResult {
        let rx = match ctx.services.extension.send(Watch).await {
            Ok(Ok(rx)) => rx,
            Ok(Err(e)) => return CallToolResult::error(e.to_string()),
            Err(e) => {
                return CallToolResult::error(ActorFault::mailbox(extension::NAME, e).to_string())
            }
        };
        let wait = Duration::from_millis(args.timeout_ms.unwrap_or(30_000));
        match tokio::time::timeout(wait, rx).await {
            Ok(Ok(files)) => CallToolResult::json(&files),
            Ok(Err(_)) => {
                CallToolResult::error("The editor disconnected while watching diagnostics")
            }
            Err(_) => CallToolResult::text("[]"),
        }
    }
}
