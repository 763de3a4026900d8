//! `getOpenEditors`: the files this session opened, newest active.

use serde::Deserialize;
use serde_json::{json, Value};

use crate::protocol::mcp::CallToolResult;
use crate::tools::{EditorUse, Tool, ToolContext};
use crate::workspace::{file_url, language_id};

/// The tool.
pub struct GetOpenEditors;

/// No arguments.
#[derive(Deserialize)]
pub struct Args {}

impl Tool for GetOpenEditors {
    type Args = Args;
    const NAME: &'static str = "getOpenEditors";
    const EDITOR: EditorUse = EditorUse::Optional;
    const DESCRIPTION: &'static str =
        "Open editor tabs (without an editor: the files this session opened).";

    fn schema() -> Value {
        json!({ "type": "object", "properties": {} })
    }

    async fn call(ctx: ToolContext, _args: Args) -> CallToolResult {
        let files = ctx.opened_files().await;
        let last = files.len().saturating_sub(1);
        let tabs: Vec<Value> = files
            .iter()
            .enumerate()
            .map(|(i, path)| {
                json!({
                    "uri": file_url(path),
                    "isActive": i == last,
                    "label": path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default(),
                    "languageId": language_id(path),
                    "isDirty": false,
                    "isUntitled": false,
                    "fileName": path.display().to_string(),
                })
            })
            .collect();
        CallToolResult::json(&json!({ "tabs": tabs }))
    }
}
