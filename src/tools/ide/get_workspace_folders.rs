//! `getWorkspaceFolders`.

use serde::Deserialize;
use serde_json::{json, Value};

use crate::protocol::mcp::CallToolResult;
use crate::tools::editor::call_editor;
use crate::tools::{EditorUse, Tool, ToolContext};
use crate::workspace::file_url;

/// The tool.
pub struct GetWorkspaceFolders;

/// No arguments.
#[derive(Deserialize)]
pub struct Args {}

impl Tool for GetWorkspaceFolders {
    type Args = Args;
    const NAME: &'static str = "getWorkspaceFolders";
    const EDITOR: EditorUse = EditorUse::Optional;
    const DESCRIPTION: &'static str = "The workspace folders the bridge serves.";

    fn schema() -> Value {
        json!({ "type": "object", "properties": {} })
    }

    async fn call(ctx: ToolContext, _args: Args) -> CallToolResult {
        if let Ok(answer) = call_editor(&ctx, "getWorkspaceFolders", json!({})).await {
            let folders: Vec<Value> = answer
                .get("folders")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .map(|f| json!({ "name": f.get("name"), "uri": f.get("uri"), "path": f.get("path") }))
                .collect();
            if let Some(first) = folders.first().cloned() {
                return CallToolResult::json(&json!({
                    "success": true,
                    "folders": folders,
                    "rootPath": first["path"],
                }));
            }
        }
        let ws = &ctx.services.workspace;
        let root = ws.root().display().to_string();
        CallToolResult::json(&json!({
            "success": true,
            "folders": [{ "name": ws.name(), "uri": file_url(ws.root()), "path": root }],
            "rootPath": root,
        }))
    }
}
