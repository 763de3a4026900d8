//! `createFile`: a file with content, or a directory.

use serde::Deserialize;
use serde_json::{json, Value};

use super::write;
use crate::actors::writer::WriteOp;
use crate::protocol::mcp::CallToolResult;
use crate::tools::editor::try_editor;
use crate::tools::{resolve, EditorUse, Tool, ToolContext};

/// The tool.
pub struct CreateFile;

/// Arguments.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Args {
    file_path: String,
    #[serde(default)]
    content: String,
    #[serde(default)]
    is_directory: bool,
    #[serde(default)]
    overwrite: bool,
}

impl Tool for CreateFile {
    type Args = Args;
    const NAME: &'static str = "createFile";
    const EDITOR: EditorUse = EditorUse::Optional;
    const DESCRIPTION: &'static str =
        "Create a file (with content) or a directory in the workspace. Fails if it exists unless overwrite is true.";

    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "filePath": { "type": "string" },
                "content": { "type": "string" },
                "isDirectory": { "type": "boolean" },
                "overwrite": { "type": "boolean" },
                "openAfterCreate": { "type": "boolean" }
            },
            "required": ["filePath"]
        })
    }

    async fn call(ctx: ToolContext, args: Args) -> CallToolResult {
        let request = json!({"filePath": args.file_path, "content": args.content, "isDirectory": args.is_directory, "overwrite": args.overwrite});
        if let Some(done) = try_editor(&ctx, "createFile", request).await {
            return done;
        }
        let path = match resolve(&ctx, &args.file_path) {
            Ok(p) => p,
            Err(e) => return e,
        };
        let op = WriteOp::Create {
            content: args.content,
            directory: args.is_directory,
            overwrite: args.overwrite,
        };
        match write(&ctx, path.clone(), op).await {
            Ok(w) => CallToolResult::json(&json!({
                "success": true,
                "filePath": path.display().to_string(),
                "created": true,
                "detail": w.detail,
                "source": "workspace",
            })),
            Err(e) => e,
        }
    }
}
