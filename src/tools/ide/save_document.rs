//! `saveDocument`.

use serde::Deserialize;
use serde_json::{json, Value};

use crate::actors::extension::ExtError;
use crate::protocol::mcp::CallToolResult;
use crate::tools::editor::call_editor;
use crate::tools::{EditorUse, Tool, ToolContext};

/// The tool.
pub struct SaveDocument;

/// Arguments.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Args {
    file_path: String,
}

impl Tool for SaveDocument {
    type Args = Args;
    const NAME: &'static str = "saveDocument";
    const EDITOR: EditorUse = EditorUse::Optional;
    const DESCRIPTION: &'static str = "Save an open document.";

    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": { "filePath": { "type": "string" } },
            "required": ["filePath"]
        })
    }

    async fn call(ctx: ToolContext, args: Args) -> CallToolResult {
        if let Ok(path) = super::resolve(&ctx, &args.file_path) {
            match call_editor(&ctx, "saveFile", json!({ "file": path })).await {
                Ok(Value::Bool(true)) => {
                    return CallToolResult::json(&json!({
                        "success": true,
                        "filePath": path.display().to_string(),
                        "saved": true,
                        "message": "Document saved",
                    }))
                }
                Err(ExtError::NotConnected) => {}
                Ok(Value::Object(o)) if o.get("success") == Some(&json!(false)) => {
                    return CallToolResult::json(&json!({
                        "success": false,
                        "message": o.get("error").and_then(Value::as_str).unwrap_or("save failed"),
                    }))
                }
                _ => return super::not_open(&args.file_path),
            }
        }
        match super::opened_document(&ctx, &args.file_path).await {
            Ok(path) => CallToolResult::json(&json!({
                "success": true,
                "filePath": path.display().to_string(),
                "saved": true,
                "message": "Document saved (without an editor the file on disk is the document)",
            })),
            Err(not_open) => not_open,
        }
    }
}
