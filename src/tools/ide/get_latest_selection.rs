//! `getLatestSelection`: the most recent selection in any editor.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};

use crate::actors::extension::{Cached, Read};
use crate::protocol::mcp::CallToolResult;
use crate::protocol::mcp::Effect;
use crate::tools::{EditorUse, Tool, ToolContext, ToolResult};

pub struct GetLatestSelection;

#[derive(Deserialize, JsonSchema)]
pub struct Args {}

impl Tool for GetLatestSelection {
    type Args = Args;
    const NAME: &'static str = "getLatestSelection";
    const EFFECT: Effect = Effect::Reads;
    const EDITOR: EditorUse = EditorUse::Optional;
    const DESCRIPTION: &'static str =
        "The most recent selection made in the editor (0-based positions).";

    async fn call(ctx: ToolContext, _args: Args) -> ToolResult {
        Ok(match ctx.services.extension.send(Read::Selection).await {
            Ok(Cached::Selection(Some(Value::Object(mut sel)))) => {
                sel.insert("success".into(), json!(true));
                CallToolResult::json(&sel)
            }
            _ => CallToolResult::json(
                &json!({ "success": false, "message": "No selection available" }),
            ),
        })
    }
}
