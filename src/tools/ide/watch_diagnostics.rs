//! `watchDiagnostics`: long-poll for the next diagnostics the editor pushes.

use std::time::Duration;

use schemars::JsonSchema;
use serde::Deserialize;

use crate::actors::extension::{self, WatchDiagnostics as Watch};
use crate::protocol::mcp::CallToolResult;
use crate::tools::{ask, EditorUse, Tool, ToolContext, ToolError, ToolResult, ToolTimeout};

/// Longest wait a caller may ask for.
pub const MAX_WAIT_MS: u64 = 55_000;

pub struct WatchDiagnostics;

#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Args {
    #[serde(default = "default_wait_ms")]
    #[schemars(range(max = MAX_WAIT_MS))]
    timeout_ms: u64,
}

fn default_wait_ms() -> u64 {
    30_000
}

impl Tool for WatchDiagnostics {
    type Args = Args;
    const NAME: &'static str = "watchDiagnostics";
    const EDITOR: EditorUse = EditorUse::Required;
    const TIMEOUT: ToolTimeout = ToolTimeout::Fixed(Duration::from_millis(MAX_WAIT_MS + 5_000));
    const DESCRIPTION: &'static str =
        "Wait (up to timeoutMs, max 55 s) for the editor's next diagnostics change and return it \
         in getDiagnostics' shape; an empty list on timeout.";

    async fn call(ctx: ToolContext, args: Args) -> ToolResult {
        let rx = ask(&ctx.services.extension, extension::NAME, Watch).await?;
        let wait = Duration::from_millis(args.timeout_ms);
        match tokio::time::timeout(wait, rx).await {
            Ok(Ok(files)) => Ok(CallToolResult::json(&files)),
            Ok(Err(_)) => Err(ToolError::refused(
                "The editor disconnected while watching diagnostics",
            )),
            Err(_) => Ok(CallToolResult::text("[]")),
        }
    }
}
