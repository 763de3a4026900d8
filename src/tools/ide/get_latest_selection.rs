//! `getLatestSelection`: the most recent selection in any editor.

use serde::Deserialize;
use serde_json::{json, Value};

use crate::protocol::mcp::CallToolResult;
use crate::tools::{EditorUse, Tool, ToolContext};

/// The tool.
pub struct GetLatestSelection;

/// No arguments.
#[derive(Deserialize)]
pub struct Args {}

impl Tool for GetLatestSelection {
    type Args = Args;
    const NAME: &'static str = "getLatestSelection";
    const EDITOR: EditorUse = EditorUse::Optional;
    const DESCRIPTION: &'static str =
        "The most recent selection made in the editor (0-based positions).";

    fn schema() -> Value {
        json!({ "type": "object", "properties": {} })
    }

    async fn call(_ctx: ToolContext, _args: Args) -> CallToolResult {
        CallToolResult::json(&json!({ "success": false, "message": "No selection available" }))
    }
}
