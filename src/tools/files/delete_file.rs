//! `deleteFile`: a file, or a directory (non-empty only with `recursive`).

use serde::Deserialize;
use serde_json::{json, Value};

use super::write;
use crate::actors::writer::WriteOp;
use crate::protocol::mcp::CallToolResult;
use crate::tools::editor::try_editor;
use crate::tools::{resolve, EditorUse, Tool, ToolContext};

/// The tool.
pub struct DeleteFile;

/// Arguments.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Args {
    file_path: String,
    #[serde(default)]
    recursive: bool,
}

impl Tool for DeleteFile {
    type Args = Args;
    const NAME: &'static str = "deleteFile";
    const EDITOR: EditorUse = EditorUse::Optional;
    const DESCRIPTION: &'static str =
        "Delete a file or directory in the workspace (a non-empty directory needs recursive: true).";

    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "filePath": { "type": "string" },
                "recursive": { "type": "boolean" },
                "useTrash": { "type": "boolean" }
            },
            "required": ["filePath"]
        })
    }

    async fn call(ctx: ToolContext, args: Args) -> CallToolResult {
        let request = json!({"filePath": args.file_path, "recursive": args.recursive});
        if let Some(done) = try_editor(&ctx, "deleteFile", request).await {
            return done;
        }
        let path = match resolve(&ctx, &args.file_path) {
            Ok(p) => p,
            Err(e) => return e,
        };
        match write(
            &ctx,
            path.clone(),
            WriteOp::Delete {
                recursive: args.recursive,
            },
        )
        .await
        {
            Ok(_) => CallToolResult::json(&json!({
                "success": true,
                "filePath": path.display().to_string(),
                "deleted": true,
                "source": "workspace",
            })),
            Err(e) => e,
        }
    }
}
