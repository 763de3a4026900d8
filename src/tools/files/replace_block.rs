//! `replaceBlock`: replace the single exact occurrence of a block.

use serde::Deserialize;
use serde_json::{json, Value};

use super::write;
use crate::actors::writer::WriteOp;
use crate::protocol::mcp::CallToolResult;
use crate::tools::editor::try_editor;
use crate::tools::{resolve, EditorUse, Tool, ToolContext};

/// The tool.
pub struct ReplaceBlock;

/// Arguments.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Args {
    file_path: String,
    old_content: String,
    new_content: String,
}

impl Tool for ReplaceBlock {
    type Args = Args;
    const NAME: &'static str = "replaceBlock";
    const EDITOR: EditorUse = EditorUse::Optional;
    const DESCRIPTION: &'static str =
        "Replace the one exact occurrence of oldContent with newContent in a file. \
         Fails if oldContent is absent or occurs more than once, or if the file changed since this session read it.";

    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "filePath": { "type": "string" },
                "oldContent": { "type": "string", "minLength": 1 },
                "newContent": { "type": "string" },
                "save": { "type": "boolean" }
            },
            "required": ["filePath", "oldContent", "newContent"]
        })
    }

    async fn call(ctx: ToolContext, args: Args) -> CallToolResult {
        let request = json!({"filePath": args.file_path, "oldContent": args.old_content, "newContent": args.new_content, "save": true});
        if let Some(done) = try_editor(&ctx, "replaceBlock", request).await {
            return done;
        }
        let path = match resolve(&ctx, &args.file_path) {
            Ok(p) => p,
            Err(e) => return e,
        };
        let op = WriteOp::Replace {
            old: args.old_content,
            new: args.new_content,
        };
        match write(&ctx, path, op).await {
            Ok(_) => CallToolResult::json(&json!({
                "success": true,
                "saved": true,
                "source": "workspace",
            })),
            Err(e) => e,
        }
    }
}
