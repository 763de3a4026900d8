//! `editText`: up to 1000 line/column edits applied atomically.

use serde::Deserialize;
use serde_json::{json, Value};

use super::write;
use crate::actors::writer::WriteOp;
use crate::protocol::mcp::CallToolResult;
use crate::tools::editor::try_editor;
use crate::tools::{resolve, EditorUse, Tool, ToolContext};

use crate::workspace::edit::{LineEdit, MAX_EDITS};

/// The tool.
pub struct EditText;

/// Arguments.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Args {
    file_path: String,
    edits: Vec<LineEdit>,
}

impl Tool for EditText {
    type Args = Args;
    const NAME: &'static str = "editText";
    const EDITOR: EditorUse = EditorUse::Optional;
    const DESCRIPTION: &'static str =
        "Apply line/column edits (1-based; insert, delete, replace) to a file, all or none. \
         Fails with 'File was modified concurrently' if the file changed since this session read it.";

    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "filePath": { "type": "string" },
                "edits": {
                    "type": "array",
                    "minItems": 1,
                    "maxItems": MAX_EDITS,
                    "items": {
                        "type": "object",
                        "properties": {
                            "type": { "enum": ["insert", "delete", "replace"] },
                            "line": { "type": "integer", "minimum": 1 },
                            "column": { "type": "integer", "minimum": 1 },
                            "endLine": { "type": "integer", "minimum": 1 },
                            "endColumn": { "type": "integer", "minimum": 1 },
                            "text": { "type": "string" }
                        },
                        "required": ["type", "line", "column"]
                    }
                },
                "save": { "type": "boolean" }
            },
            "required": ["filePath", "edits"]
        })
    }

    async fn call(ctx: ToolContext, args: Args) -> CallToolResult {
        let request = json!({"filePath": args.file_path, "edits": args.edits, "save": true});
        if let Some(done) = try_editor(&ctx, "editText", request).await {
            return done;
        }
        let path = match resolve(&ctx, &args.file_path) {
            Ok(p) => p,
            Err(e) => return e,
        };
        let count = args.edits.len();
        match write(&ctx, path, WriteOp::Edit { edits: args.edits }).await {
            Ok(_) => CallToolResult::json(&json!({
                "success": true,
                "editCount": count,
                "saved": true,
                "source": "workspace",
            })),
            Err(e) => e,
        }
    }
}
