//! `getLatestSelection`: the most recent selection in any editor.

use serde::Deserialize;
use serde_json::{json, Value};

use crate::actors::extension::{Cached, Read};
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

    async fn call(ctx: ToolContext, _args: Args) -> CallToolResult {
        match ctx.services.extension.send(Read::Selection).await {
            Ok(Cached::Selection(Some(Value::Object(mut sel)))) => {
                sel.insert("success".into(), json!(true));
                CallToolResult::json(&sel)
            }
            _ => CallToolResult::json(
                &json!({ "success": false, "message": "No selection available" }),
            ),
        }
    }
}
