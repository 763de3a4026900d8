//! `getWorkspaceFolders`.

use serde::Deserialize;
use serde_json::{json, Value};

use crate::protocol::mcp::CallToolResult;
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
        let ws = &ctx.services.workspace;
        let root = ws.root().display().to_string();
        CallToolResult::json(&json!({
            "success": true,
            "folders": [{ "name": ws.name(), "uri": file_url(ws.root()), "path": root }],
            "rootPath": root,
        }))
    }
}
