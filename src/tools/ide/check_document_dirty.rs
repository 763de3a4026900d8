//! `checkDocumentDirty`.

use serde::Deserialize;
use serde_json::{json, Value};

use crate::actors::extension::ExtError;
use crate::protocol::mcp::CallToolResult;
use crate::tools::editor::call_editor;
use crate::tools::{EditorUse, Tool, ToolContext};

/// The tool.
pub struct CheckDocumentDirty;

/// Arguments.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Args {
    file_path: String,
}

impl Tool for CheckDocumentDirty {
    type Args = Args;
    const NAME: &'static str = "checkDocumentDirty";
    const EDITOR: EditorUse = EditorUse::Optional;
    const DESCRIPTION: &'static str = "Whether an open document has unsaved changes.";

    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": { "filePath": { "type": "string" } },
            "required": ["filePath"]
        })
    }

    async fn call(ctx: ToolContext, args: Args) -> CallToolResult {
        if let Ok(path) = super::resolve(&ctx, &args.file_path) {
            match call_editor(&ctx, "isDirty", json!({ "file": path })).await {
                Ok(Value::Bool(dirty)) => {
                    return CallToolResult::json(&json!({
                        "success": true,
                        "filePath": path.display().to_string(),
                        "isDirty": dirty,
                        "isUntitled": false,
                    }))
                }
                Err(ExtError::NotConnected) => {}
                _ => return super::not_open(&args.file_path),
            }
        }
        match super::opened_document(&ctx, &args.file_path).await {
            // Without an editor the document is the file on disk: never dirty.
            Ok(path) => CallToolResult::json(&json!({
                "success": true,
                "filePath": path.display().to_string(),
                "isDirty": false,
                "isUntitled": false,
            })),
            Err(not_open) => not_open,
        }
    }
}
