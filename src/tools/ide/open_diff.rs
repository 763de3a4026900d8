//! `openDiff`: needs an editor to show the diff; without one it fails at once so the
//! CLI falls back to its terminal prompt.

use serde::Deserialize;
use serde_json::{json, Value};

use crate::actors::extension::{DiffOutcome, ExtError, OpenDiff as ExtOpenDiff};
use crate::protocol::mcp::CallToolResult;
use crate::tools::{EditorUse, Tool, ToolContext, ToolTimeout};

/// The tool.
pub struct OpenDiff;

/// Arguments (all required).
#[derive(Deserialize)]
pub struct Args {
    old_file_path: String,
    new_file_path: String,
    new_file_contents: String,
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

    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "old_file_path": { "type": "string", "description": "Path of the file before the change" },
                "new_file_path": { "type": "string", "description": "Path of the file after the change" },
                "new_file_contents": { "type": "string", "description": "Full proposed contents" },
                "tab_name": { "type": "string", "description": "Name of the diff tab" }
            },
            "required": ["old_file_path", "new_file_path", "new_file_contents", "tab_name"]
        })
    }

    async fn call(ctx: ToolContext, args: Args) -> CallToolResult {
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
        match shown {
            Ok(Ok(DiffOutcome::Saved(text))) => {
                CallToolResult::texts(["FILE_SAVED".to_string(), text])
            }
            Ok(Ok(DiffOutcome::Rejected)) => {
                CallToolResult::texts(["DIFF_REJECTED".to_string(), args.tab_name])
            }
            Ok(Err(ExtError::NotConnected)) => CallToolResult::declined(format!(
                "No editor is connected to ide-bridge, so the diff \"{}\" cannot be shown. \
                 Ask the user to approve the change in the terminal instead.",
                args.tab_name
            )),
            Ok(Err(e)) => CallToolResult::error(e.to_string()),
            Err(e) => CallToolResult::error(e.to_string()),
        }
    }
}
