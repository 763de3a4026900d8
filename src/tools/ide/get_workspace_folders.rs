//! `getWorkspaceFolders`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::protocol::editor::Method;
use crate::protocol::mcp::CallToolResult;
use crate::protocol::mcp::Effect;
use crate::tools::editor::call_editor;
use crate::tools::{EditorUse, Tool, ToolContext, ToolResult};

pub struct GetWorkspaceFolders;

#[derive(Deserialize, JsonSchema)]
pub struct Args {}

/// The answer without an editor: serialised straight to text (a `json!` value would be
/// a hashed map built and dropped on every call).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Folders<'a> {
    success: bool,
    folders: [Folder<'a>; 1],
    root_path: &'a str,
}

#[derive(Serialize)]
struct Folder<'a> {
    name: &'a str,
    uri: &'a str,
    path: &'a str,
}

impl Tool for GetWorkspaceFolders {
    type Args = Args;
    const NAME: &'static str = "getWorkspaceFolders";
    const EFFECT: Effect = Effect::Reads;
    const EDITOR: EditorUse = EditorUse::Optional;
    const DESCRIPTION: &'static str = "The workspace folders the bridge serves.";

    async fn call(ctx: ToolContext, _args: Args) -> ToolResult {
        if let Ok(answer) = call_editor(&ctx, Method::GetWorkspaceFolders, json!({})).await {
            let folders: Vec<Value> = answer
                .get("folders")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .map(|f| json!({ "name": f.get("name"), "uri": f.get("uri"), "path": f.get("path") }))
                .collect();
            if let Some(first) = folders.first().cloned() {
                return Ok(CallToolResult::json(&json!({
                    "success": true,
                    "folders": folders,
                    "rootPath": first["path"],
                })));
            }
        }
        let ws = &ctx.services.workspace;
        Ok(CallToolResult::json(&Folders {
            success: true,
            folders: [Folder {
                name: ws.name(),
                uri: ws.root_url(),
                path: ws.root_text(),
            }],
            root_path: ws.root_text(),
        }))
    }
}
