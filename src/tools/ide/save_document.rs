//! `saveDocument`: through the editor, or (without one) a no-op for a document this
//! session opened, since the file on disk is the document.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};

use crate::actors::extension::ExtError;
use crate::protocol::editor::Method;
use crate::protocol::mcp::CallToolResult;
use crate::protocol::mcp::Effect;
use crate::tools::editor::call_editor;
use crate::tools::{EditorUse, Tool, ToolContext, ToolResult, WorkspacePath};

pub struct SaveDocument;

#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Args {
    file_path: WorkspacePath,
}

impl Tool for SaveDocument {
    type Args = Args;
    const NAME: &'static str = "saveDocument";
    const EFFECT: Effect = Effect::Changes;
    const EDITOR: EditorUse = EditorUse::Optional;
    const DESCRIPTION: &'static str = "Save an open document.";

    async fn call(ctx: ToolContext, args: Args) -> ToolResult {
        if let Ok(path) = args.file_path.resolve(&ctx) {
            match call_editor(&ctx, Method::SaveFile, json!({ "file": path })).await {
                Ok(Value::Bool(true)) => {
                    return Ok(CallToolResult::json(&json!({
                        "success": true,
                        "filePath": path.display().to_string(),
                        "saved": true,
                        "message": "Document saved",
                    })))
                }
                Err(ExtError::NotConnected) => {}
                Ok(Value::Object(o)) if o.get("success") == Some(&json!(false)) => {
                    return Ok(CallToolResult::json(&json!({
                        "success": false,
                        "message": o.get("error").and_then(Value::as_str).unwrap_or("save failed"),
                    })))
                }
                _ => return Ok(super::not_open(&args.file_path)),
            }
        }
        Ok(match super::opened_document(&ctx, &args.file_path).await {
            Ok(path) => CallToolResult::json(&json!({
                "success": true,
                "filePath": path.display().to_string(),
                "saved": true,
                "message": "Document saved (without an editor the file on disk is the document)",
            })),
            Err(not_open) => not_open,
        })
    }
}
