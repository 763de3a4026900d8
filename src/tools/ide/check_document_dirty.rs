//! `checkDocumentDirty`: from the editor, or (without one) never dirty for a document
//! this session opened.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};

use crate::actors::extension::ExtError;
use crate::protocol::editor::Method;
use crate::protocol::mcp::CallToolResult;
use crate::protocol::mcp::Effect;
use crate::tools::editor::call_editor;
use crate::tools::{EditorUse, Tool, ToolContext, ToolResult, WorkspacePath};

pub struct CheckDocumentDirty;

#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Args {
    file_path: WorkspacePath,
}

impl Tool for CheckDocumentDirty {
    type Args = Args;
    const NAME: &'static str = "checkDocumentDirty";
    const EFFECT: Effect = Effect::Reads;
    const EDITOR: EditorUse = EditorUse::Optional;
    const DESCRIPTION: &'static str = "Whether an open document has unsaved changes.";

    async fn call(ctx: ToolContext, args: Args) -> ToolResult {
        if let Ok(path) = args.file_path.resolve(&ctx) {
            match call_editor(&ctx, Method::IsDirty, json!({ "file": path })).await {
                Ok(Value::Bool(dirty)) => {
                    return Ok(CallToolResult::json(&json!({
                        "success": true,
                        "filePath": path.display().to_string(),
                        "isDirty": dirty,
                        "isUntitled": false,
                    })))
                }
                Err(ExtError::NotConnected) => {}
                _ => return Ok(super::not_open(&args.file_path)),
            }
        }
        Ok(match super::opened_document(&ctx, &args.file_path).await {
            // Without an editor the document is the file on disk: never dirty.
            Ok(path) => CallToolResult::json(&json!({
                "success": true,
                "filePath": path.display().to_string(),
                "isDirty": false,
                "isUntitled": false,
            })),
            Err(not_open) => not_open,
        })
    }
}
