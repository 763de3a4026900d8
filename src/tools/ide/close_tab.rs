//! `close_tab`: always `TAB_CLOSED`.

use serde::Deserialize;
use serde_json::{json, Value};

use crate::protocol::mcp::CallToolResult;
use crate::tools::{EditorUse, Tool, ToolContext};

/// The tool.
pub struct CloseTab;

/// Arguments.
#[derive(Deserialize)]
pub struct Args {
    #[allow(dead_code)]
    tab_name: String,
}

impl Tool for CloseTab {
    type Args = Args;
    const NAME: &'static str = "close_tab";
    const EDITOR: EditorUse = EditorUse::Optional;
    const DESCRIPTION: &'static str =
        "Close an editor tab by name (a pending diff in it is rejected).";

    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": { "tab_name": { "type": "string" } },
            "required": ["tab_name"]
        })
    }

    async fn call(_ctx: ToolContext, _args: Args) -> CallToolResult {
        CallToolResult::text("TAB_CLOSED")
    }
}
