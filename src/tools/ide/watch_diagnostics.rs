//! `watchDiagnostics`: long-poll for the next diagnostics change: the editor's next
//! push, or without an editor the next linter run (re-run as files change) that
//! changes some file's diagnostics.

use std::time::Duration;

use schemars::JsonSchema;
use serde::Deserialize;

use crate::actors::diagnostics::{self, WatchWorkspace};
use crate::actors::extension::{self, GetStatus, WatchDiagnostics as Watch};
use crate::diagnostics::FileDiagnostics;
use crate::protocol::mcp::CallToolResult;
use crate::protocol::mcp::Effect;
use crate::tools::{ask, EditorUse, Tool, ToolContext, ToolError, ToolResult, ToolTimeout};
use crate::workspace::file_url;

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
    const EFFECT: Effect = Effect::Reads;
    const EDITOR: EditorUse = EditorUse::Optional;
    const TIMEOUT: ToolTimeout = ToolTimeout::Fixed(Duration::from_millis(MAX_WAIT_MS + 5_000));
    const DESCRIPTION: &'static str =
        "Wait (up to timeoutMs, max 55 s) for the next diagnostics change and return the changed \
         files in getDiagnostics' shape (a file whose diagnostics cleared has an empty list); an \
         empty list on timeout. Without an editor the workspace's linters re-run as files change.";

    async fn call(ctx: ToolContext, args: Args) -> ToolResult {
        let wait = Duration::from_millis(args.timeout_ms);
        let editor = ctx.services.extension.send(GetStatus).await;
        if !editor.is_ok_and(|s| s.connected) {
            let rx = ask(&ctx.services.diagnostics, diagnostics::NAME, WatchWorkspace).await?;
            return match tokio::time::timeout(wait, rx).await {
                Ok(Ok(files)) => {
                    let files: Vec<FileDiagnostics> = files
                        .into_iter()
                        .map(|(path, diagnostics)| FileDiagnostics {
                            uri: file_url(&path),
                            diagnostics,
                        })
                        .collect();
                    Ok(CallToolResult::json(&files))
                }
                Ok(Err(_)) => Err(ToolError::refused(
                    "The diagnostics actor restarted while watching; call again",
                )),
                Err(_) => Ok(CallToolResult::text("[]")),
            };
        }
        let rx = ask(&ctx.services.extension, extension::NAME, Watch).await?;
        match tokio::time::timeout(wait, rx).await {
            Ok(Ok(files)) => Ok(CallToolResult::json(&files)),
            Ok(Err(_)) => Err(ToolError::refused(
                "The editor disconnected while watching diagnostics",
            )),
            Err(_) => Ok(CallToolResult::text("[]")),
        }
    }
}
