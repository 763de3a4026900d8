//! `renameFile`: move a file or directory inside the workspace.

use serde::Deserialize;
use serde_json::{json, Value};

use super::write;
use crate::actors::writer::WriteOp;
use crate::protocol::mcp::CallToolResult;
use crate::tools::editor::try_editor;
use crate::tools::{resolve, EditorUse, Tool, ToolContext};

/// The tool.
pub struct RenameFile;

/// Arguments.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Args {
    old_path: String,
    new_path: String,
    #[serde(default)]
    overwrite: bool,
}

impl Tool for RenameFile {
    type Args = Args;
    const NAME: &'static str = "renameFile";
    const EDITOR: EditorUse = EditorUse::Optional;
    const DESCRIPTION: &'static str =
        "Rename or move a file or directory inside the workspace (fails if the target exists unless overwrite is true).";

    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "oldPath": { "type": "string" },
                "newPath": { "type": "string" },
                "overwrite": { "type": "boolean" }
            },
            "required": ["oldPath", "newPath"]
        })
    }

    async fn call(ctx: ToolContext, args: Args) -> CallToolResult {
        let request = json!({"oldPath": args.old_path, "newPath": args.new_path, "overwrite": args.overwrite});
        if let Some(done) = try_editor(&ctx, "renameFile", request).await {
            return done;
        }
        let (from, to) = match (resolve(&ctx, &args.old_path), resolve(&ctx, &args.new_path)) {
            (Ok(f), Ok(t)) => (f, t),
            (Err(e), _) | (_, Err(e)) => return e,
        };
        let op = WriteOp::Rename {
            to: to.clone(),
            overwrite: args.overwrite,
        };
        match write(&ctx, from.clone(), op).await {
            Ok(_) => {
                ctx.record_version(from.clone(), None);
                CallToolResult::json(&json!({
                    "success": true,
                    "oldPath": from.display().to_string(),
                    "newPath": to.display().to_string(),
                    "renamed": true,
                    "source": "workspace",
                }))
            }
            Err(e) => e,
        }
    }
}
