//! `openDiff`: needs an editor to show the diff; without one it fails at once so the
//! CLI falls back to its terminal prompt.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use crate::actors::extension::{DiffOutcome, ExtError, OpenDiff as ExtOpenDiff};
use crate::protocol::mcp::CallToolResult;
use crate::tools::{EditorUse, Tool, ToolContext, ToolError, ToolResult, ToolTimeout};

pub struct OpenDiff;

/// The paths only label the diff (the editor writes nothing; the agent does), so they
/// are passed on as given.
#[derive(Deserialize, JsonSchema)]
pub struct Args {
    /// Path of the file before the change
    old_file_path: String,
    /// Path of the file after the change
    new_file_path: String,
    /// Full proposed contents
    new_file_contents: String,
    /// Name of the diff tab
    tab_name: String,
}

impl Tool for OpenDiff {
    type Args = Args;
    const NAME: &'static str = "openDiff";
    const EDITOR: EditorUse = EditorUse::Required;
    const DESCRIPTION: &'static str =
        "Show a proposed change as a diff in the editor and block until the user accepts \
         (FILE_SAVED + final text) or rejects it (DIFF_REJECTED + tab name).";
    const TIMEOUT: ToolTimeout = ToolTimeout::Unbounded;

    async fn call(ctx: ToolContext, args: Args) -> ToolResult {
        let params = json!({
            "oldFilePath": args.old_file_path,
            "newFilePath": args.new_file_path,
            "newFileContents": args.new_file_contents,
            "tabName": args.tab_name,
        });
        let shown = ctx
            .services
            .extension
            .send(ExtOpenDiff {
                session_id: ctx.session_id.clone(),
                tab_name: args.tab_name.clone(),
                params,
            })
            .await;
        match shown.map_err(|e| ToolError::refused(e.to_string()))? {
            Ok(DiffOutcome::Saved(text)) => {
                Ok(CallToolResult::texts(["FILE_SAVED".to_string(), text]))
            }
            Ok(DiffOutcome::Rejected) => Ok(CallToolResult::texts([
                "DIFF_REJECTED".to_string(),
                args.tab_name,
            ])),
            Err(ExtError::NotConnected) => Ok(CallToolResult::declined(format!(
                "No editor is connected to ide-bridge, so the diff \"{}\" cannot be shown. \
                 Ask the user to approve the change in the terminal instead.",
                args.tab_name
            ))),
            Err(e) => Err(e.into()),
        }
    }
}
