//! `getCurrentSelection`: the active editor's selection.

use serde::Deserialize;
use serde_json::{json, Value};

use crate::protocol::mcp::CallToolResult;
use crate::tools::{EditorUse, Tool, ToolContext};

/// The tool.
pub struct GetCurrentSelection;

/// No arguments.
#[derive(Deserialize)]
pub struct Args {}

impl Tool for GetCurrentSelection {
    type Args = Args;
    const NAME: &'static str = "getCurrentSelection";
    const EDITOR: EditorUse = EditorUse::Optional;
    const DESCRIPTION: &'static str = "The selection in the active editor (0-based positions).";

    fn schema() -> Value {
        json!({ "type": "object", "properties": {} })
    }

    async fn call(_ctx: ToolContext, _args: Args) -> CallToolResult {
        CallToolResult::json(&json!({ "success": false, "message": "No active editor found" }))
    }
}
